"""What every command shares: the consoles, the app and its one-line errors, the
option formats, the exit codes, the mapping of a library error's parameters to the
command's flags, and the progress bar."""

import errno
import os
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

from knnx._paths import path_problem
from knnx._text import escape_control
from knnx.errors import CellError, KnnxError, ResultsError, WriteError

# emoji=False: user text such as a column named ':fire:' is printed as written


class _Console(Console):
    """rich's Console, whose answer to a closed pipe (``knnx validate ... | head``) is
    exit 0: the reader read what it wanted (rich exits 1, which reads as failed cells)."""

    def on_broken_pipe(self):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(0)


err_console = _Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
console = _Console(highlight=False, soft_wrap=True, emoji=False)

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
        except SystemExit:
            if not isinstance(sys.stdout, click.utils.PacifyFlushWrapper):
                raise
            code = 0  # typer's exit 1 on a closed pipe (| head): the reader read what it wanted
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


class CompareFormat(StrEnum):
    md = "md"
    csv = "csv"
    latex = "latex"
    html = "html"


class SignificanceTest(StrEnum):
    corrected_t = "corrected-t"
    t = "t"
    five_by_two_f = "5x2cv-f"


class ListFormat(StrEnum):
    table = "table"
    csv = "csv"
    md = "md"


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


def fail(exc, code=EXIT_INPUT):
    """Print each problem of ``exc`` (a KnnxError or a message) as one ``error:`` line,
    parameters named by the command's flags (:func:`command_flags`), control characters
    escaped, and exit with ``code``."""
    for line in exc.lines(command_flags()) if isinstance(exc, KnnxError) else [str(exc)]:
        err_console.print(f"error: {escape_control(line)}", markup=False)
    raise typer.Exit(code)


@contextmanager
def reported(interrupted=None):
    """Every error of a command as one line per problem on stderr and its exit code
    (see EXIT_*), never a traceback. ``interrupted``: what to say on Ctrl-C."""
    try:
        yield
    except CellError as exc:
        fail(exc, EXIT_CELLS)
    except WriteError as exc:
        fail(exc, EXIT_FAULT)
    except KnnxError as exc:
        fail(exc, EXIT_INPUT)
    except OSError as exc:  # a system error no layer below named: its path and reason
        where = f"{exc.filename}: " if exc.filename else ""
        if exc.errno == errno.ENAMETOOLONG:  # the name given is the fault, not the system: a bad argument
            fail(f"{where}file name too long (a name is at most 255 bytes, a path 4096)", EXIT_INPUT)
        fail(f"{where}{exc.strerror or type(exc).__name__}", EXIT_FAULT)
    except MemoryError:
        fail("out of memory (an estimate did not foresee this; set KNNX_MEMORY_LIMIT lower)", EXIT_FAULT)
    except KeyboardInterrupt:
        if interrupted is None:
            raise
        err_console.print(interrupted)
        raise typer.Exit(EXIT_INTERRUPTED) from None


@contextmanager
def progress_bar(name, unit):
    """A rich progress bar on stderr; yields the ``progress(done, total, text, eta_seconds=...)``
    callback.

    ETA: ``eta_seconds`` as the caller estimates it (``knnx run``: from the times of the
    finished cells, see :func:`knnx.experiment.progress.eta_seconds`), counted down between reports;
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
        TextColumn("{task.fields[cell]}", style="dim", markup=False),  # dataset ids as written: [b]x[/b]
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


def note_last_round(last):
    """One line on stderr when the results are an active run's: only its last round is used."""
    if last is not None:
        sys.stderr.write(f"note: active-learning results: round {last} (the last) only\n")


def dataset_dependent_notes(frame):
    """One line per parameter set per dataset (``params_for``), which the configuration
    labels leave out (see knnx.stats.configurations), for stderr after the table."""
    from knnx.stats.configurations import dataset_dependent_lines

    return [
        f"note: set per dataset (params_for), not in the labels: {line}"
        for line in dataset_dependent_lines(frame)
    ]


def dataset_dependent_sentences(frame):
    """The sentence per parameter set per dataset (``params_for``) that a comparison
    table prints under it (in LaTeX, in its caption)."""
    from knnx.stats.configurations import dataset_dependent_lines

    return [
        f"Set per dataset (params_for), not in the contestants' names: {line}."
        for line in dataset_dependent_lines(frame)
    ]


def print_notes(lines):
    """``lines`` on stderr, after what went to stdout (a table's footnotes)."""
    sys.stdout.flush()
    for line in lines:
        sys.stderr.write(line + "\n")


def require_file(path, what):
    """ResultsError unless ``path`` is a regular file, saying what it is instead
    (:func:`knnx._paths.path_problem`; a folder: a run's folder given for its results.csv)."""
    problem = path_problem(path)
    if problem == "a folder":
        raise ResultsError(
            f"{what}: {path} is a folder; expected a results file (such as {Path(path) / 'results.csv'})"
        )
    if problem is not None:
        raise ResultsError(f"{what}: {problem}: {path}")
