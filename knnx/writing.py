"""Safe writes: a file replaced atomically (its old or its new content, never a part),
flushed to disk, and the exclusive lock of an output folder. Every file knnx writes in
a run's folder goes through here or through :class:`knnx.results.ResultsWriter`."""

import fcntl
import os
import warnings
from contextlib import contextmanager
from pathlib import Path

from knnx.errors import ResultsError, WriteError

# The files knnx writes in an output folder (figures aside).
OUTPUT_FILES = (
    ".knnx.lock",
    "results.csv",
    "curves.csv",
    "cells.csv",
    "failures.csv",
    "warnings.csv",
    "summary.csv",
    "summary.md",
    "spec.yaml",
    "datasets.csv",  # knnx.reporting.characteristics
    "environment.json",
    "report.html",
    ".knnx-outputs.json",  # knnx.experiment.rerun: what the last end of a run was made from
)


def write_error(path, exc):
    """WriteError naming ``path`` and the operating system's reason (``exc``: an OSError)."""
    return WriteError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})")


@contextmanager
def _replacing(path, tmp_name):
    """Yield a temporary path ``tmp_name`` beside ``path``, which replaces ``path``
    (``os.replace``) once the block ends: ``path`` holds its old or its new content,
    never a part. WriteError naming ``path`` if the system refuses."""
    path = Path(path)
    tmp = path.with_name(tmp_name)
    try:
        tmp.unlink(missing_ok=True)  # a leftover, or a planted link: never written through
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise write_error(path, exc) from None


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` atomically (see :func:`_replacing`), flushed to disk."""
    with (
        _replacing(path, f".{Path(path).name}.tmp") as tmp,
        open(tmp, "w", encoding="utf-8", newline="") as fh,
    ):
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


@contextmanager
def output_lock(out, option="--out"):
    """Exclusive lock on ``OUT/.knnx.lock`` (``fcntl.flock``) while a run writes to ``out``.

    A second holder is refused with a ResultsError naming the first one's pid, and a
    folder the system will not let us write in with one naming the reason; either way
    before anything is written. The lock dies with its process (a killed run never
    leaves the folder locked).
    """
    path = Path(out) / ".knnx.lock"
    if path.is_symlink():
        raise ResultsError(
            f"{option}: {path} is a symbolic link; remove it (knnx writes no file through a link)"
        )
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise ResultsError(f"{option}: {out}: cannot write in this folder ({exc.strerror or exc})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise ResultsError(
                f"{out}: another knnx run (pid {holder}) is writing to this folder; wait for it to end or use {option}"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except OSError as exc:
            raise ResultsError(
                f"{option}: {out}: cannot write in this folder ({exc.strerror or exc})"
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock


def save_figure(fig, path, dpi, metadata=None):
    """Save a matplotlib Figure to ``path`` atomically (the format from the suffix), with
    ``metadata`` (matplotlib's: e.g. {"Software": ...} in a PNG's text chunks)."""
    path = Path(path)
    with _replacing(path, f".{path.stem}.tmp{path.suffix}") as tmp:
        draw_figure(fig, tmp, dpi=dpi, metadata=metadata)


@contextmanager
def quiet_arithmetic():
    """NumPy's and pandas' RuntimeWarnings (overflow, invalid value) silenced while tables
    and figures are made (also usable as a decorator): finite values such as 1e308 are
    shown as they are, or their figure is left out with a note
    (:func:`draw_figure`), and the warnings would name library files on stderr."""
    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def draw_figure(fig, target, **options):
    """``fig.savefig(target, **options)`` without matplotlib's notes while drawing (a
    glyph the font lacks, a layout it could not fit), which name its own source files on
    stderr: the figure is drawn all the same. ResultsError when matplotlib cannot draw it
    (finite values such as 1e308, whose axis ticks overflow)."""
    import numpy as np  # matplotlib's own import: none of knnx's no-op reruns comes here

    with warnings.catch_warnings(), np.errstate(all="ignore"):  # overflows of axes of extreme values
        warnings.simplefilter("ignore", UserWarning)
        try:
            fig.savefig(target, **options)
        except (ValueError, OverflowError, ZeroDivisionError) as exc:  # axes of extreme values
            fig.clear()
            first = (str(exc).strip().splitlines() or [""])[0][:120]
            raise ResultsError(
                f"matplotlib cannot draw values this large or this close ({type(exc).__name__}: {first})"
            ) from None
