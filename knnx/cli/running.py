"""Commands that run work: ``knnx run``, ``validate``, ``gate`` and ``reproduce``."""

import time
from dataclasses import replace
from pathlib import Path

import typer

from knnx.cli.core import SET_HELP, console, err_console, progress_bar, reported
from knnx.errors import KnnxError


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
    no_figures: bool = typer.Option(
        False, "--no-figures", help="Draw no figures at the end (knnx plot draws them later)."
    ),
):
    """Run every cell of SPEC; write results.csv, summary tables, figures and report.html."""
    from knnx.experiment.rerun import unchanged_run

    def run_spec(spec, **options):  # a rerun with nothing to do answers before the heavy imports
        start = time.perf_counter()
        summary = unchanged_run(spec, **options)
        if summary is not None:
            return replace(summary, seconds=time.perf_counter() - start)
        from knnx.experiment.runner import run_spec_past_the_rerun_check

        return run_spec_past_the_rerun_check(
            spec, start=start, progress=options.pop("progress", None), **options
        )

    options = {
        "report": not no_report,
        "figures": not no_figures,
        "overrides": overrides or (),
        "out": out,
        "jobs": jobs,
        "resume": not no_resume,
        "executor": executor,
        "scheduler": scheduler,
    }
    with reported("interrupted: finished cells are saved; rerun the same command to resume"):
        if quiet:
            summary = run_spec(spec, **options)
        else:
            with progress_bar(spec.stem, "cells") as progress:
                summary = run_spec(spec, progress=progress, **options)
    if not quiet:
        console.print(
            f"{summary.n_run} cells run, {summary.n_skipped} already done, in {summary.seconds:.1f} s; "
            f"results in {summary.out}/results.csv, tables in {summary.out}/summary.md"
            + ("" if no_report else f", report in {summary.out}/report.html")
        )
        for line in summary.reruns:
            console.print(line, markup=False, highlight=False)
        for note in summary.notes:
            console.print(note, markup=False, highlight=False)
        if summary.n_warned:
            console.print(f"{summary.n_warned} of them raised warnings, listed in {summary.out}/warnings.csv")
        for line in summary.advice:
            console.print(f"note: {line}", markup=False, highlight=False)


def validate(
    spec: Path = typer.Argument(..., help="Experiment spec (YAML)."),
    overrides: list[str] = typer.Option(None, "--set", help=SET_HELP),
):
    """Check SPEC completely (schema, names, data, protocol, grids) without computing anything."""
    from knnx.errors import SpecError
    from knnx.experiment.outputs import report_control_problem
    from knnx.spec import validate_spec

    with reported():
        vspec = validate_spec(spec, overrides or ())
        problem = report_control_problem(vspec)  # the run's own check, before its cells
        if problem is not None:
            raise SpecError(f"{vspec.source}: {problem}")
    console.print(f"{spec}: ok, {len(vspec.cells)} cells over {len(vspec.datasets)} dataset(s)")


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
    atol: float = typer.Option(
        0.0, "--atol", help="Tolerance of knnx's own algorithms (a finite number >= 0)."
    ),
):
    """The regression gate: run every regress_*.yaml of --specs from scratch and check it against its reference."""
    import time

    from knnx.limits import check_tolerance
    from knnx.papers.gate import find_specs
    from knnx.papers.gate import gate as run_gate

    with reported():
        atol = check_tolerance(atol, "atol")  # the rule of every tolerance, before anything runs
        if specs.is_file():
            raise KnnxError(f"--specs: {specs} is a file; expected a folder of regress_*.yaml specs")
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

    with reported("interrupted: finished cells are saved; rerun the same command to resume"):
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
    names = targets or target_names()
    for name in names:
        status = times.get(name, {}).get("status", "not run")
        counts = headline(rows[rows["target"] == name])
        console.print(f"{name}: {status}; {headline_text(counts)}")
    console.print(f"wrote {root / 'results' / 'comparison.csv'} and {root / 'results' / 'REPORT.md'}")
    failed = [
        n for n in names if times.get(n, {}).get("status", "").startswith("failed") and not assemble_only
    ]
    if failed:  # as a run whose cells failed: the others are written, the exit code says so
        err_console.print(
            f"error: {len(failed)} of {len(names)} targets failed: {', '.join(failed)}", markup=False
        )
        raise typer.Exit(1)
