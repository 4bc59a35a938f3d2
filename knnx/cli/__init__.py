"""Command-line interface: a thin typer layer over the library.

Every command calls one public function and renders its result. Domain errors
(:class:`knnx.errors.KnnxError`) print as one line per problem on stderr with exit
code 2, never a traceback; a library error's parameter is named by the command's
flag (:func:`knnx.cli.core.command_flags`).

The commands live in modules by theme (:mod:`knnx.cli.running`, :mod:`knnx.cli.results`,
:mod:`knnx.cli.data`); this table registers them on :data:`app`, in the order
``knnx --help`` lists them.
"""

import os
import sys
import threading

from knnx.cli import data, results, running
from knnx.cli.core import app
from knnx.errors import note_unraisable

COMMANDS = [
    ("run", running.run),
    ("validate", running.validate),
    ("datasets", data.datasets),
    ("table", results.table_cmd),
    ("compare", results.compare),
    ("report", results.report),
    ("gate", running.gate),
    ("reproduce", running.reproduce),
    ("check", results.check),
    ("plot", results.plot),
    ("select-k", data.select_k_cmd),
]
for _name, _command in COMMANDS:
    app.command(_name)(_command)


def main(args=None):
    """The ``knnx`` command: :data:`app`, then the process ends with the command's exit
    code even when user code (an estimator, a loader, a module named by import path)
    left a thread running that is not a daemon, which Python would wait for forever.
    The command's work is done by then: its files are written and its lock released."""
    note_unraisable()
    try:
        os.getcwd()
    except FileNotFoundError:  # every relative path would fail, some after files were written
        sys.stderr.write(
            "error: the current folder no longer exists (it was removed); change to a folder and rerun\n"
        )
        raise SystemExit(2) from None
    stdout_before = _stdout_identity()
    try:
        app(args)
        sys.stdout.flush()  # here, where a closed pipe can be told from a failure
        code = 0
    except SystemExit as exc:
        code = exc.code
        if code and _stdout_identity() not in (stdout_before, None) and _stdout_identity() == _devnull():
            code = 0  # a console (typer's own, for --help) met a closed pipe and pointed stdout at /dev/null
    except BrokenPipeError:  # the reader closed the pipe (| head): it has read what it wanted
        _quiet_stdout()
        code = 0
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        _release_semaphores()
        os._exit(code if isinstance(code, int) else (0 if code is None else 1))
    raise SystemExit(code)


def _stdout_identity():
    """The file standard output is, as (device, inode); None when it is closed."""
    try:
        found = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return (found.st_dev, found.st_ino)


def _devnull():
    found = os.stat(os.devnull)
    return (found.st_dev, found.st_ino)


def _quiet_stdout():
    """Point standard output at /dev/null, so that the interpreter's last flush of what
    is left in its buffer finds no closed pipe (Python's own advice for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _release_semaphores():
    """Run multiprocessing's exit finalizers of priority >= 0 (what a normal exit runs
    first), which unlink the semaphores of the run's worker pool: ``os._exit`` skips
    them, and the resource tracker then warned of "leaked semaphore objects" on stderr
    (a run interrupted under --jobs 2, whose pool's manager thread is still alive)."""
    util = sys.modules.get("multiprocessing.util")
    if util is None:
        return
    try:
        util._run_finalizers(0)
    except Exception:  # noqa: BLE001, S110 - exiting all the same
        pass


__all__ = ["app", "main"]
