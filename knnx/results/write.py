"""Writing result files cell by cell (see :mod:`knnx.results`): rows as CSV text
(:func:`rows_to_csv`, floats as their shortest repr), the output folder
(:func:`prepare_output_folder`), the appending :class:`ResultsWriter` and a cell's
training-curve rows (:func:`curve_rows`)."""

import csv
import io
import os
from pathlib import Path

import numpy as np

from knnx._text import describe_control, find_control
from knnx.errors import ResultsError
from knnx.results.schema import COLUMNS, OPTIONAL_COLUMNS
from knnx.writing import (
    OUTPUT_FILES,
    atomic_write_text,
    write_error,
)


def rows_to_csv(rows, header=False, columns=COLUMNS):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    if header:
        writer.writeheader()
    for row in rows:
        writer.writerow({c: _cell(row, c) for c in columns})
    return buf.getvalue()


def _cell(row, column):
    """A row's cell as written: an optional column (a timing an older knnx did not
    record) is empty where the row lacks it or holds NaN, which the reader takes as not
    recorded (a ``nan`` written there is refused)."""
    if column in OPTIONAL_COLUMNS:
        value = row.get(column, OPTIONAL_COLUMNS[column])
        if isinstance(value, float | np.floating) and np.isnan(value):
            return ""
        return _fmt(value)
    return _fmt(row[column])


def _fmt(value):
    if isinstance(value, float | np.floating):
        return repr(float(value))  # shortest repr that round-trips exactly
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, str) and find_control(value) is not None:
        # Names and paths with control characters are refused where they enter (spec,
        # dataset entry, command line), and free text is escaped before it gets here;
        # a bare carriage return would end a CSV line early, so never write one.
        raise ResultsError(f"refusing to write a CSV field with a {describe_control(value)}: {value!r}")
    return value


def prepare_output_folder(out, option="--out", source=None):
    """Create the output folder ``out`` (with its parents) and return it as a Path.

    ResultsError (one line naming ``option``, the folder and the reason; nothing
    written) if its name holds a control character, it is a file, the system refuses
    to create it (a read-only place, ``/proc``, a missing permission), one of the files
    knnx writes there is a link, a folder or a pipe (a FIFO named results.csv made a
    resume wait forever), or its spec.yaml is the spec file ``source`` being run
    (knnx would overwrite it with the normalised copy).
    """
    out = Path(out)
    if find_control(str(out)) is not None:
        raise ResultsError(
            f"{option}: {str(out)!r} holds a {describe_control(str(out))}; name the folder without one"
        )
    if out.exists() and not out.is_dir():
        raise ResultsError(f"{option}: {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultsError(f"{option}: {out}: cannot create the folder ({exc.strerror or exc})") from None
    for name in OUTPUT_FILES:
        path = out / name
        if path.is_symlink():
            raise ResultsError(
                f"{option}: {path} is a symbolic link; remove it (knnx writes no file through a link)"
            )
        if path.exists() and not path.is_file():
            raise ResultsError(
                f"{option}: {path} is not a regular file; remove it or choose another {option}"
            )
    spec_copy = out / "spec.yaml"
    if source is not None and spec_copy.exists() and os.path.samefile(spec_copy, source):
        raise ResultsError(
            f"{option}: {out} would overwrite the spec being run ({source}) with its normalised copy; "
            f"choose another {option}"
        )
    return out


class ResultsWriter:
    """Appends finished cells to a results (or, with ``columns=CURVE_COLUMNS``, a curves)
    file; see the module docstring."""

    def __init__(self, path, columns=COLUMNS):
        self.path = Path(path)
        self.columns = columns
        if not self.path.exists():
            atomic_write_text(self.path, rows_to_csv([], header=True, columns=columns))

    def append(self, rows, sync=True):
        """Append one cell's rows with a single write() on an O_APPEND descriptor,
        then ``fsync`` it (``sync=False``: leave that to :meth:`sync`).

        A killed process cannot interrupt one write() to a regular file part-way,
        so the file holds whole cells only; ``recover`` still handles a machine
        crash (a torn last line) on the next run. If the system refuses part of the
        write (a full disk, a file-size limit), the file is cut back to its size
        before the call and a WriteError names the path and the reason.
        """
        data = rows_to_csv(rows, columns=self.columns).encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        except OSError as exc:
            raise write_error(self.path, exc) from None
        try:
            size = os.fstat(fd).st_size  # the run holds the folder's lock: no other writer
            try:
                written = os.write(fd, data)
                while written < len(data):  # a short write: only on a full disk or a size limit
                    written += os.write(fd, data[written:])
                if sync:
                    os.fsync(fd)
            except OSError as exc:
                try:
                    os.ftruncate(fd, size)  # no torn line: the cell is not written at all
                except OSError:
                    pass  # recover() drops a torn last line on the next run
                raise write_error(self.path, exc) from None
        finally:
            os.close(fd)

    def sync(self):
        """``fsync`` the file: what was appended is on disk (a machine crash keeps it)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise write_error(self.path, exc) from None
        try:
            os.fsync(fd)
        except OSError as exc:
            raise write_error(self.path, exc) from None
        finally:
            os.close(fd)


def thin_indices(length, max_points):
    """At most ``max_points`` (>= 2) evenly spaced indices of ``range(length)``, first and
    last included: all of them when ``length <= max_points``, else the rounded points
    of ``linspace(0, length - 1, max_points)`` (distinct, since their spacing exceeds 1)."""
    if length <= max_points:
        return np.arange(length)
    return np.rint(np.linspace(0, length - 1, max_points)).astype(np.intp)


def curve_rows(curve, base, max_points):
    """Tidy curve rows of one cell from an estimator's ``curve_`` dict.

    ``curve`` maps ``"iteration"`` (integers) and one or more series names to 1-D
    arrays of one common length; ``base`` holds the cell's columns (experiment,
    dataset, algorithm, params, repeat, fold). Iterations are thinned with
    :func:`thin_indices`. Rows come series by series (in the dict's order), each in
    iteration order. Raises ValueError for a malformed ``curve``.
    """
    if not isinstance(curve, dict) or "iteration" not in curve:
        raise ValueError("curve_ must be a dict with an 'iteration' entry")
    iteration = np.asarray(curve["iteration"])
    if iteration.ndim != 1 or not (np.issubdtype(iteration.dtype, np.integer) or iteration.size == 0):
        raise ValueError("curve_['iteration'] must be a 1-D array of integers")
    series = {}
    for name, values in curve.items():
        if name == "iteration":
            continue
        try:
            values = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"curve_[{name!r}] must be numeric") from None
        if values.shape != iteration.shape:
            raise ValueError(
                f"curve_[{name!r}] has shape {values.shape}; curve_['iteration'] has {iteration.shape}"
            )
        series[str(name)] = values
    keep = thin_indices(len(iteration), max_points)
    return [
        {**base, "iteration": int(it), "series": name, "value": float(v)}
        for name, values in series.items()
        for it, v in zip(iteration[keep], values[keep], strict=True)
    ]
