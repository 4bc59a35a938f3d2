"""Command-line interface: a thin typer layer over the library.

Every command calls one public function and renders its result. Domain errors
(:class:`knnx.errors.KnnxError`) print as one line per problem on stderr with exit
code 2, never a traceback.
"""

import math
import sys
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from knnx._text import escape_control
from knnx.errors import CellError, KnnxError, ResultsError, WriteError

err_console = Console(stderr=True, highlight=False, soft_wrap=True)
console = Console(highlight=False, soft_wrap=True)

try:  # typer >= 0.20 carries its own copy of click
    from typer import _click as click
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - older typer uses click itself
    import click
    from click import get_current_context


class _OneLineErrors(typer.core.TyperGroup):
    """The command group with command-line misuse (an unknown option, a bad or missing
    value) reported as one ``error:`` line and exit code 2, like every other input
    error, instead of click's usage box."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) else 0
        except getattr(click.exceptions, "NoArgsIsHelpError", ()) as exc:
            exc.show()  # "knnx" alone prints the help
            code = exc.exit_code
        except click.exceptions.ClickException as exc:
            where = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "knnx"
            err_console.print(
                f"error: {where}: {escape_control(exc.format_message())} (see {where} --help)", markup=False
            )
            code = exc.exit_code
        except typer.Abort:
            code = EXIT_INTERRUPTED
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=_OneLineErrors,
    help="knnx: nearest-neighbour classification experiments (exact kNN, boosting, learned metrics, exact LpO).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class TableFormat(StrEnum):
    md = "md"
    csv = "csv"
    latex = "latex"


class ListFormat(StrEnum):
    table = "table"
    csv = "csv"


class RiskFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


class Weights(StrEnum):
    uniform = "uniform"
    distance = "distance"


# Exit codes: 0 done; 1 some cells failed (the spec was fine); 2 bad input or arguments,
# nothing written; 3 the system refused a write or memory while working (what was
# finished is saved, a rerun resumes); 130 interrupted.
EXIT_CELLS, EXIT_INPUT, EXIT_FAULT, EXIT_INTERRUPTED = 1, 2, 3, 130


def command_flags():
    """{parameter: flag} of the command running: each option by its long flag (``fmt``:
    ``--format``), each argument by its name (``out``: ``OUT``). The library names a
    parameter by the name it has in the call (:class:`knnx.errors.KnnxError`'s
    ``param``); each command calls the library with its options of the same names, so
    this maps the library's names to the flags a user typed. Empty outside a command."""
    ctx = get_current_context(silent=True)
    if ctx is None:
        return {}
    flags = {}
    for param in ctx.command.params:
        longs = [o for o in param.opts if o.startswith("--")]
        flags[param.name] = longs[0] if longs else (getattr(param, "metavar", None) or param.name.upper())
    return flags


def _fail(exc, code=EXIT_INPUT):
    """Print each problem of ``exc`` (a KnnxError or a message) as one ``error:`` line,
    parameters named by the command's flags (:func:`command_flags`), control characters
    escaped, and exit with ``code``."""
    for line in exc.lines(command_flags()) if isinstance(exc, KnnxError) else [str(exc)]:
        err_console.print(f"error: {escape_control(line)}", markup=False)
    raise typer.Exit(code)


@contextmanager
def _reported(interrupted=None):
    """Every error of a command as one line per problem on stderr and its exit code
    (see EXIT_*), never a traceback. ``interrupted``: what to say on Ctrl-C."""
    try:
        yield
    except CellError as exc:
        _fail(exc, EXIT_CELLS)
    except WriteError as exc:
        _fail(exc, EXIT_FAULT)
    except KnnxError as exc:
        _fail(exc, EXIT_INPUT)
    except OSError as exc:  # a system error no layer below named: its path and reason
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or type(exc).__name__}", EXIT_FAULT)
    except MemoryError:
        _fail("out of memory (an estimate did not foresee this; set KNNX_MEMORY_LIMIT lower)", EXIT_FAULT)
    except KeyboardInterrupt:
        if interrupted is None:
            raise
        err_console.print(interrupted)
        raise typer.Exit(EXIT_INTERRUPTED) from None


@contextmanager
def _progress_bar(name, unit):
    """A rich progress bar on stderr; yields the ``progress(done, total, text, eta_seconds=...)``
    callback.

    ETA: ``eta_seconds`` as the caller estimates it (``knnx run``: from the times of the
    finished cells, see :func:`knnx.experiment.runner.eta_seconds`), counted down between reports;
    None shows ``-:--:--``. A caller that gives none gets the mean time
    of the units finished since its first report times the units left."""
    from rich.text import Text

    class CellEta(TimeRemainingColumn):
        """The ETA of the latest report (``task.fields["eta"]``: seconds, when given),
        less the time since."""

        def render(self, task):
            eta, at = task.fields["eta"]
            if eta is None:
                return Text("-:--:--", style="progress.remaining")
            minutes, seconds = divmod(int(max(0.0, eta - (task.get_time() - at))), 60)
            hours, minutes = divmod(minutes, 60)
            return Text(f"{hours:d}:{minutes:02d}:{seconds:02d}", style="progress.remaining")

    columns = (
        TextColumn("[bold]{task.fields[name]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        CellEta(),
        TextColumn("{task.fields[cell]}", style="dim"),
    )
    # Shown from the first report on, so that a spec error prints alone.
    bar = Progress(*columns, console=err_console, transient=False, auto_refresh=True)
    task = bar.add_task("run", total=None, name=name, cell="", eta=(None, 0.0))
    own = object()  # eta_seconds not given: the bar estimates it itself
    first = []  # (time, done) of the first report

    def progress(done, total, description, eta_seconds=own):
        now = bar.get_time()
        if not first:
            first.append((now, done))
        if eta_seconds is own:
            t0, done0 = first[0]
            eta_seconds = (now - t0) / (done - done0) * (total - done) if done > done0 else None
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total, cell=description[:60], eta=(eta_seconds, now))

    try:
        yield progress
    finally:
        if bar.live.is_started:  # stopping a bar never shown prints an empty line
            bar.stop()


SET_HELP = (
    "PATH=VALUE: change the spec before it is checked, as if written in it (repeatable); PATH is dotted "
    "keys and list indices, VALUE is YAML: --set protocol.folds=10 --set 'algorithms[0].params.k=[1,3,5]'."
)


@app.command()
def run(
    spec: Path = typer.Argument(..., help="Experiment spec (YAML)."),
    out: Path = typer.Option(None, "--out", help="Output folder (default: results/<spec name>)."),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Worker processes; results are identical to --jobs 1."),
    no_resume: bool = typer.Option(
        False, "--no-resume", help="Start over instead of skipping finished cells."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar or summary."),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="local (this process or a pool of --jobs processes) or dask (needs knnx[dask]).",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        help="Dask scheduler address (tcp://HOST:PORT); default: a local cluster of --jobs workers.",
    ),
    overrides: list[str] = typer.Option(None, "--set", help=SET_HELP),
    no_report: bool = typer.Option(False, "--no-report", help="Do not write OUT/report.html at the end."),
):
    """Run every cell of SPEC; write results.csv, summary tables, figures and report.html."""
    from knnx.experiment.runner import run_spec

    options = {
        "report": not no_report,
        "overrides": overrides or (),
        "out": out,
        "jobs": jobs,
        "resume": not no_resume,
        "executor": executor,
        "scheduler": scheduler,
    }
    with _reported("interrupted: finished cells are saved; rerun the same command to resume"):
        if quiet:
            summary = run_spec(spec, **options)
        else:
            with _progress_bar(spec.stem, "cells") as progress:
                summary = run_spec(spec, progress=progress, **options)
    if not quiet:
        console.print(
            f"{summary.n_run} cells run, {summary.n_skipped} already done, in {summary.seconds:.1f} s; "
            f"results in {summary.out}/results.csv, tables in {summary.out}/summary.md"
            + ("" if no_report else f", report in {summary.out}/report.html")
        )
        for note in summary.notes:
            console.print(note, markup=False, highlight=False)
        if summary.n_warned:
            console.print(f"{summary.n_warned} of them raised warnings, listed in {summary.out}/warnings.csv")


@app.command()
def validate(
    spec: Path = typer.Argument(..., help="Experiment spec (YAML)."),
    overrides: list[str] = typer.Option(None, "--set", help=SET_HELP),
):
    """Check SPEC completely (schema, names, data, protocol, grids) without computing anything."""
    from knnx.spec import validate_spec

    with _reported():
        vspec = validate_spec(spec, overrides or ())
    console.print(f"{spec}: ok, {len(vspec.cells)} cells over {len(vspec.datasets)} dataset(s)")


@app.command()
def datasets(fmt: ListFormat = typer.Option(ListFormat.table, "--format", help="table or csv.")):
    """List the bundled datasets: name, n, d, classes, predefined split, size on file, source."""
    from knnx.datasets import describe_bundled

    with _reported():
        rows = describe_bundled()
    keys = ["name", "n", "d", "classes", "split", "files", "source"]
    if fmt is ListFormat.csv:
        keys = ["name", "n", "d", "classes", "class_counts", "split", "files", "source"]
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return
    table = Table(
        *keys,
        title="bundled datasets: n x d as loaded with the default treatments, 'files' as shipped "
        "(datasets/README.md explains each treatment; --format csv adds class counts)",
    )
    for row in rows:
        table.add_row(*(str(row[k]) for k in keys))
    console.print(table)


def _note_last_round(last):
    """One line on stderr when the results are an active run's: only its last round is used."""
    if last is not None:
        sys.stderr.write(f"note: active-learning results: round {last} (the last) only\n")


@app.command("table")
def table_cmd(
    results: Path = typer.Argument(..., help="A results.csv file."),
    by: str = typer.Option(
        "dataset,configuration",
        "--by",
        help="Comma-separated grouping columns; a parameter by name (k or param_k); configuration = the "
        "algorithm and the parameters that vary (seeds pooled).",
    ),
    metric: str = typer.Option("error", "--metric", help="Metric to tabulate."),
    fmt: TableFormat = typer.Option(TableFormat.md, "--format", help="md, csv or latex."),
):
    """Mean ± std of a metric per group over repeats and folds; the best per dataset is marked."""
    from knnx.reporting.summaries import read_results, results_table
    from knnx.results import last_round

    with _reported():
        _require_file(results, "RESULTS")
        frame = read_results(results)
        _note_last_round(last_round(frame)[1])
        text = results_table(
            frame, by=[c.strip() for c in by.split(",") if c.strip()], metric=metric, fmt=fmt.value
        )
    sys.stdout.write(text)


@app.command()
def compare(
    results: Path = typer.Argument(..., help="A results.csv file."),
    metric: str = typer.Option("error", "--metric", help="The metric compared."),
    select: str = typer.Option(
        None,
        "--select",
        help="all: every configuration a contestant; best-test: each algorithm's best configuration per dataset "
        "on the test folds (optimistic). Needed when an algorithm has several configurations.",
    ),
    alpha: float = typer.Option(
        0.05,
        "--alpha",
        help="Level of the critical difference and of the significance counts (significance.csv).",
    ),
    out: Path = typer.Option(None, "--out", help="Folder for ranks.csv, pairwise.csv, friedman.csv, ..."),
    fmt: TableFormat = typer.Option(TableFormat.md, "--format", help="md, csv or latex."),
):
    """Compare configurations across datasets: ranks, Friedman, Iman-Davenport, Nemenyi CD, Wilcoxon-Holm."""
    from knnx.reporting.comparison import comparison_table, friedman_sentence, write_comparison
    from knnx.results import last_round, prepare_output_folder, read_results
    from knnx.stats.compare import compare as run_compare

    with _reported():
        _require_file(results, "RESULTS")
        frame, last = last_round(read_results(results))
        _note_last_round(last)
        result = run_compare(frame, metric=metric, select=select, alpha=alpha)
        if out is not None:
            write_comparison(result, prepare_output_folder(out), fmt.value, metric=metric, alpha=alpha)
    sys.stdout.write(comparison_table(result, fmt.value))
    if fmt is TableFormat.md:
        sys.stdout.write(f"\n{friedman_sentence(result.friedman_row, alpha)}\n")


@app.command()
def report(
    out: Path = typer.Argument(..., help="The folder of a run (holding results.csv)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Level of the tests and the critical difference."),
):
    """Write OUT/report.html: one self-contained page (tables, comparison, figures, failures, timings)."""
    from knnx.reporting.html import write_report

    with _reported():
        if not out.is_dir():
            raise ResultsError(f"OUT: {out} is not a folder; give the folder of a run (holding results.csv)")
        if not 0 < alpha < 1:
            raise ResultsError(f"--alpha: expected a level in (0, 1), got {alpha}")
        try:
            path = write_report(out, alpha=alpha)
        except WriteError as exc:  # not a run: a folder the page cannot go to is a bad argument
            raise ResultsError(f"OUT: {exc}") from None
    console.print(f"wrote {path}")


@app.command()
def gate(
    words: list[str] = typer.Argument(None, help="Only the specs whose name contains one of these words."),
    update: bool = typer.Option(
        False, "--update", help="Rewrite the references from fresh runs (an intended change)."
    ),
    jobs: int = typer.Option(2, "--jobs", min=1, help="Worker processes of each run."),
    specs: Path = typer.Option(
        Path("experiments/regress"), "--specs", help="Folder of regress_*.yaml specs."
    ),
    reference_dir: Path = typer.Option(
        Path("results/reference"), "--reference-dir", help="Committed references."
    ),
    out: Path = typer.Option(Path("results/regress"), "--out", help="Results root (one folder per spec)."),
    atol: float = typer.Option(0.0, "--atol", min=0.0, help="Tolerance of knnx's own algorithms."),
):
    """The regression gate: run every regress_*.yaml of --specs from scratch and check it against its reference."""
    import time

    from knnx.papers.gate import find_specs
    from knnx.papers.gate import gate as run_gate

    with _reported():
        found = find_specs(specs, words or ())
        if not found:
            raise KnnxError(
                f"--specs: no regress_*.yaml spec in {specs}"
                + (f" matching {', '.join(words)}" if words else "")
            )
        start = time.perf_counter()
        rows = run_gate(
            found,
            out_dir=out,
            reference_dir=reference_dir,
            jobs=jobs,
            update=update,
            atol=atol,
            echo=lambda line: console.print(line, markup=False),
        )
    failed = [name for name, status, _, _ in rows if status == "FAIL"]
    total = time.perf_counter() - start
    if failed:
        console.print(
            f"regression gate: {len(failed)} of {len(rows)} spec(s) failed ({', '.join(failed)}) in {total:.1f} s"
        )
        raise typer.Exit(1)
    console.print(
        f"regression gate: {len(rows)} spec(s) {'updated' if update else 'passed'} in {total:.1f} s"
    )


@app.command()
def reproduce(
    targets: list[str] = typer.Argument(None, help="Paper targets (default: all); see --list."),
    var: list[str] = typer.Option(
        None, "--var", help="A target variable, NAME=VALUE (e.g. CPW_UCI_REPEATS=100)."
    ),
    assemble_only: bool = typer.Option(
        False, "--assemble-only", help="Run nothing: comparison.csv and REPORT.md from the results on disk."
    ),
    no_resume: bool = typer.Option(
        False, "--no-resume", help="Recompute every cell instead of reusing them."
    ),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Worker processes of each run."),
    list_targets: bool = typer.Option(False, "--list", help="List the targets and what they reproduce."),
    root: Path = typer.Option(
        Path("."), "--root", help="The project folder (holding experiments/ and results/)."
    ),
):
    """Run paper targets; write results/comparison.csv and results/REPORT.md (ours beside the papers)."""
    from knnx.papers import load_target, reproduce, target_names
    from knnx.papers.render import headline, headline_text

    with _reported("interrupted: finished cells are saved; rerun the same command to resume"):
        if list_targets:
            for name in target_names():
                console.print(f"{name}: {load_target(name).title}")
            return
        variables = {}
        for item in var or ():
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise KnnxError(f"--var: expected NAME=VALUE, got {item!r}")
            variables[name] = value
        rows, times = reproduce(
            targets or None,
            root=root,
            variables=variables,
            run=not assemble_only,
            resume=not no_resume,
            jobs=jobs,
            progress=lambda text: err_console.print(f"running {text}"),
        )
    for name in targets or target_names():
        status = times.get(name, {}).get("status", "not run")
        counts = headline(rows[rows["target"] == name])
        console.print(f"{name}: {status}; {headline_text(counts)}")
    console.print(f"wrote {root / 'results' / 'comparison.csv'} and {root / 'results' / 'REPORT.md'}")


def _parse_atol_for(items):
    """{algorithm: tolerance} from ``--atol-for ALGORITHM=TOL`` options (one-line errors)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            tol = float(value) if sep and name.strip() else None
        except ValueError:
            tol = None
        if tol is None or not tol >= 0 or tol == float("inf"):
            raise KnnxError(f"--atol-for: expected ALGORITHM=TOL with a finite TOL >= 0, got '{item}'")
        out[name.strip()] = tol
    return out


@app.command()
def check(
    results: Path = typer.Argument(..., help="A results.csv file."),
    reference: Path = typer.Option(..., "--reference", help="Committed reference results."),
    atol: float = typer.Option(0.01, "--atol", min=0.0, help="Largest allowed |mean - reference mean|."),
    atol_for: list[str] = typer.Option(
        None, "--atol-for", help="ALGORITHM=TOL: another tolerance for one algorithm's groups (repeatable)."
    ),
):
    """Compare per-group means with reference results; exit 1 listing every group that moved."""
    from knnx.reporting.summaries import check_against_reference, new_groups

    with _reported():
        if not math.isfinite(atol):
            raise KnnxError(f"--atol: expected a finite number >= 0, got {atol}")
        per_algorithm = _parse_atol_for(atol_for or [])
        _require_file(results, "RESULTS")
        _require_file(reference, "--reference")
        problems = check_against_reference(results, reference, atol=atol, atol_for=per_algorithm)
        fresh = new_groups(results, reference)
    for line in fresh:
        console.print(f"new (not in the reference, not checked): {line}", markup=False)
    if problems:
        for line in problems:
            console.print(f"moved: {line}", markup=False)
        console.print(f"{len(problems)} group(s) outside tolerance {atol}")
        raise typer.Exit(1)
    console.print(f"all groups of {reference} within {atol}")


@app.command()
def plot(
    results: Path = typer.Argument(..., help="A results.csv file."),
    metric: str = typer.Option("error", "--metric", help="Metric on the vertical axis."),
    x: str = typer.Option(
        None,
        "--x",
        help="Parameter on the horizontal axis, numeric or not, or 'configuration' for every configuration "
        "side by side (default: the first numeric parameter that varies, else the first that varies, else "
        "the configurations).",
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="Image file (default: METRIC-X.png, or METRIC.png for the configurations, beside RESULTS).",
    ),
):
    """Plot a metric (mean ± std over repeats and folds) against a parameter, one panel per dataset."""
    from knnx.reporting.figures import default_x, figure_name
    from knnx.reporting.figures import plot as plot_results
    from knnx.results import last_round, read_results

    # The default file is named as the run names its own figures (knnx.reporting.figures.figure_name:
    # anything but letters, digits and "_." replaced, so that a metric "a/b" names no folder).
    with _reported():
        _require_file(results, "RESULTS")
        frame, last = last_round(read_results(results))
        _note_last_round(last)
        if x is None:
            x = default_x(frame, metric) or "configuration"
        name = figure_name(metric, None if x == "configuration" else x)
        target = out if out is not None else Path(results).with_name(name)
        try:
            plot_results(frame, metric=metric, x=x, out=target)
        except WriteError as exc:  # not a run: a place the figure cannot go is a bad argument
            raise ResultsError(f"--out: {exc}") from None
    console.print(f"wrote {target}")


@app.command("select-k")
def select_k_cmd(
    p: int = typer.Option(..., "--p", help="Points held out per split (1 <= p < n)."),
    dataset: str = typer.Option(None, "--dataset", help="Bundled dataset name (default: ripley)."),
    csv_path: Path = typer.Option(None, "--csv", help="A CSV file instead of a bundled dataset."),
    label: str = typer.Option("label", "--label", help="Label column of --csv."),
    k_max: int = typer.Option(50, "--k-max", help="Largest k (k_max <= n - p)."),
    weights: Weights = typer.Option(Weights.uniform, "--weights", help="uniform or distance."),
    fmt: RiskFormat = typer.Option(RiskFormat.table, "--format", help="table, csv or json."),
):
    """Choose k by exact leave-p-out: R_LpO(k) for k = 1..K_MAX and the smallest k of minimal risk.

    Uses the training part of a dataset with a predefined split, else all of it.
    """
    from knnx.datasets import load_dataset
    from knnx.lpo.risk import select_k

    with _reported():
        if dataset is not None and csv_path is not None:
            raise KnnxError("--dataset and --csv: give one of them, not both")
        entry = (
            {"csv": str(csv_path), "label": label} if csv_path is not None else {"name": dataset or "ripley"}
        )
        ds = load_dataset(entry)
        part = "training part" if ds.split is not None else "all rows"
        idx = ds.split[0] if ds.split is not None else slice(None)
        X, y = ds.X[idx], ds.y[idx]
        k_p, risk = select_k(X, y, p, k_max, weights.value)
    if fmt is RiskFormat.csv:
        sys.stdout.write("k,lpo_risk\n" + "".join(f"{k},{r!r}\n" for k, r in enumerate(risk.tolist(), 1)))
        return
    if fmt is RiskFormat.json:
        import json

        doc = {
            "dataset": ds.name,
            "part": part,
            "n": int(X.shape[0]),
            "p": p,
            "k_max": k_max,
            "weights": weights.value,
            "selected_k": k_p,
            "lpo_risk": risk.tolist(),
        }
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    table = Table("k", "lpo_risk", title=f"exact leave-{p}-out risk, {ds.name} ({part}, n = {X.shape[0]})")
    for k, r in enumerate(risk.tolist(), 1):
        mark = " <- selected" if k == k_p else ""
        table.add_row(str(k), f"{r:.6f}{mark}")
    console.print(table)
    console.print(f"selected k = {k_p} (R_LpO = {risk[k_p - 1]:.6f}; smallest k of minimal risk)")


def _require_file(path, what):
    if not Path(path).is_file():
        raise ResultsError(f"{what}: file not found: {path}")


if __name__ == "__main__":
    app()
