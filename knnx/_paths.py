"""Where knnx's bundled data lives, and reading a file only if it is a regular one
(imported by the quick rerun check, so it imports nothing heavy)."""

import errno
import os
import stat
from pathlib import Path

from knnx.errors import DataError


def data_dir():
    """The folder holding the bundled CSV files.

    ``KNNX_DATA`` if set; else the copy inside an installed wheel
    (``knnx/_bundled_data``); else the repository's ``datasets/`` (editable install).
    """
    env = os.environ.get("KNNX_DATA")
    here = Path(__file__).resolve()
    candidates = [Path(env)] if env else []
    candidates += [here.parents[0] / "_bundled_data", here.parents[1] / "datasets"]
    for folder in candidates:
        if (folder / "MANIFEST.csv").is_file():
            return folder
    raise DataError(
        f"bundled datasets not found (looked in {', '.join(map(str, candidates))}); set KNNX_DATA"
    )


def read_regular(path, limit=None):
    """The bytes of ``path`` if it is a regular file (links followed) of at most
    ``limit`` bytes, else None: missing, unreadable, a link loop, a folder, a device or
    a FIFO (whose reading would wait for a writer forever). The file is opened without
    blocking and checked before anything is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def path_problem(path):
    """Why ``path`` is no regular file to read, in words, or None for one (links
    followed): ``file not found``, ``a link to nothing``, ``a symbolic link loop``, ``a
    folder``, ``not a regular file (a device or a pipe)``, ``cannot be read (REASON)``.
    Every command asks it before reading a path it was given (a FIFO would make it wait
    forever)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "a link to nothing" if os.path.islink(path) else "file not found"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        return f"cannot be read ({exc.strerror or exc})"
    except ValueError:  # a NUL in the name
        return "file not found"
    if stat.S_ISDIR(info.st_mode):
        return "a folder"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a device or a pipe)"
    return None
