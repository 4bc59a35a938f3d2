"""Tidy result files: one row per (cell, metric), written cell by cell.

Schema (fixed column order)::

    experiment, dataset, algorithm, params, protocol, repeat, fold, seed,
    metric, value, n_train, n_test, fit_seconds, predict_seconds, tune_seconds

Timings (wall seconds, ``time.perf_counter``, in the cell's process): ``fit_seconds``
is the whole fit, for a tuned cell (``tune:``) the inner search plus the refit;
``tune_seconds`` the inner search alone (0 untuned); ``predict_seconds`` the test
part's ``predict``. Compilation is in none of them (the warm-up, see
:mod:`knnx.experiment.runner`). A file older than ``tune_seconds`` reads NaN there.

``params`` and ``protocol`` are canonical JSON (sorted keys). ``seed`` is the spec's
seed. A cell is identified by (dataset, algorithm, params, repeat, fold).
An active-learning run (``kind: active``) adds the column ``round`` after these: a
cell (one loop) has one row per (round, metric). Reading refuses, in one line naming
the file, line and column, what knnx never writes (:mod:`knnx.results_checks`): a
``params`` cell that is not a JSON object of parameters, a count below 0, an empty
name, a column named twice, and (:func:`read_results`) a cell's metric given twice.

Crash safety: each finished cell is appended with a single write. The runner
``fsync``-s the files in groups (:meth:`ResultsWriter.sync`) and only then records the
group's cells as done in its ledger (``cells.csv``; see :mod:`knnx.experiment.runner`).
On resume, a trailing partial line and the rows of any cell missing some of its
metrics or its ledger row are discarded (the file is rewritten atomically: a temporary
file then ``os.replace``), so an interrupted run loses at most the cells of its last
group (:data:`knnx.experiment.runner.COMMIT_SECONDS` of work) and the cell in flight.

Training curves (optional, ``record_curves`` in a spec) go to a second tidy file::

    experiment, dataset, algorithm, params, repeat, fold, iteration, series, value

one row per (cell, series, iteration), from an estimator's ``curve_`` dict (see
:func:`curve_rows`). The runner appends a cell's curve rows (one write)
*before* its results rows, and on resume :func:`recover_curves` keeps the curve rows
of the cells complete in the results file only; so curve rows exist exactly for the
cells whose results are complete, each once.
"""

import csv
import io
import json
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from knnx._text import describe_control, find_control
from knnx.errors import ResultsError
from knnx.limits import depth_problem, json_too_deep
from knnx.results_checks import (  # noqa: F401 (MAX_PARAM_NAMES, parse_params_text: re-exported)
    MAX_PARAM_NAMES,
    check_counts,
    check_finite,
    check_header,
    check_names,
    check_params,
    check_protocol,
    check_repeats,
    check_timings,
    parse_numbers,
    parse_params_text,
    settings,
    short_rows_named,
)
from knnx.writing import (  # noqa: F401 (re-exported)
    OUTPUT_FILES,
    _replacing,
    atomic_write_text,
    output_lock,
    save_figure,
    write_error,
)

COLUMNS = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "protocol",
    "repeat",
    "fold",
    "seed",
    "metric",
    "value",
    "n_train",
    "n_test",
    "fit_seconds",
    "predict_seconds",
    "tune_seconds",
]
# Timing columns, one value per cell (repeated on each of its rows): ``knnx table
# --metric`` tabulates them as it does metrics.
TIMINGS = ("fit_seconds", "predict_seconds", "tune_seconds")
# Columns a file of an older knnx may lack: read as NaN (not recorded); a row built
# without them is written with their default.
OPTIONAL_COLUMNS = {"tune_seconds": 0.0}
CELL_COLUMNS = ["dataset", "algorithm", "params", "repeat", "fold"]


class CellId(NamedTuple):
    """A cell's identity, the columns CELL_COLUMNS of every per-cell file: results rows,
    the ledger, failures and warnings. A plain tuple of the same values is equal to it
    (and hashes the same), so sets and dicts keyed by either agree."""

    dataset: str
    algorithm: str
    params: str  # the setting as canonical JSON (see knnx.spec.canonical_json)
    repeat: int
    fold: int

    @classmethod
    def of(cls, record):
        """The cell of a row: a namedtuple from ``DataFrame.itertuples`` or any object
        with the CELL_COLUMNS as attributes."""
        return cls(record.dataset, record.algorithm, record.params, int(record.repeat), int(record.fold))

    @classmethod
    def of_frame(cls, frame):
        """The cell of each row of a frame with the CELL_COLUMNS, in row order."""
        return [cls.of(r) for r in frame[CELL_COLUMNS].itertuples(index=False)]


# The cell ledger (OUT/cells.csv): one row per finished cell, appended after its results
# rows; ``cell_key`` is the content hash of what produced them (see knnx.experiment.provenance.cell_keys).
LEDGER_COLUMNS = ["cell_key", *CELL_COLUMNS]
# Failed cells of the last run (OUT/failures.csv): never cached, retried by the next run.
FAILURE_COLUMNS = [*CELL_COLUMNS, "cell_key", "error"]
# Warnings raised while a cell ran (OUT/warnings.csv): one row per (cell, category,
# message), with how many times it was raised; kept with the cell's results.
WARNING_COLUMNS = [*CELL_COLUMNS, "category", "message", "count"]
CURVE_COLUMNS = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "repeat",
    "fold",
    "iteration",
    "series",
    "value",
]


# After COLUMNS, a results file has one column per parameter name of its cells,
# ``param_<name>`` (sorted by name): the value as written in ``params`` (strings bare,
# other values as JSON), empty where a cell's algorithm lacks that parameter. They are
# derived from ``params``: read_results recomputes them (a file without them, written
# by an older knnx, reads the same).
PARAM_PREFIX = "param_"


def param_text(value):
    """A parameter value as its ``param_<name>`` cell shows it: strings bare, the rest JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def _params_of(text, cache):
    if text not in cache:
        try:
            value = None if json_too_deep(text) else json.loads(text)  # see _check_params
        except ValueError:
            value = None
        cache[text] = value if isinstance(value, dict) else {}  # hand-edited: no parameter columns
    return cache[text]


def param_names(params_texts):
    """Sorted parameter names of the ``params`` JSON strings given."""
    cache, names = {}, set()
    for text in set(params_texts):
        names |= _params_of(text, cache).keys()
    return sorted(names)


# An active-learning run (``kind: active``, see knnx.spec.ActiveSpec) gives one row per
# (cell, round, metric): its results files have the column ``round`` after COLUMNS (0 =
# the start set), and its cells are identified by CELL_COLUMNS as any other.
ROUND = "round"


def last_round(frame):
    """``(rows, round)``: an active run's rows of its last round (the largest ``round``),
    which knnx run's summary, report, ``knnx table``, ``knnx compare`` and ``knnx plot``
    use to compare strategies; any other results frame as it is, round None."""
    if ROUND not in frame.columns or not len(frame):
        return frame, None
    last = int(frame[ROUND].max())
    return frame[frame[ROUND] == last], last


def results_columns(names, rounds=False):
    """The columns of a results file whose cells have parameters ``names`` (and, with
    ``rounds``, one row per round: the column ``round``)."""
    return COLUMNS + ([ROUND] if rounds else []) + [PARAM_PREFIX + n for n in names]


def with_param_columns(rows, names):
    """``rows`` (dicts with ``params``) with their ``param_<name>`` cells added."""
    cache = {}
    out = []
    for row in rows:
        params = _params_of(row["params"], cache)
        cols = {PARAM_PREFIX + n: (param_text(params[n]) if n in params else "") for n in names}
        out.append({**row, **cols})
    return out


def rows_to_csv(rows, header=False, columns=COLUMNS):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    if header:
        writer.writeheader()
    for row in rows:
        writer.writerow({c: _fmt(row[c] if c in row else OPTIONAL_COLUMNS[c]) for c in columns})
    return buf.getvalue()


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


# Numeric columns of the result files. Every column is read as text first; these are
# then parsed with Python's int() and float(), which read back exactly what
# ``rows_to_csv`` wrote (the shortest repr of each float) whatever the pandas version:
# pandas' own C parser rounds some 17-digit decimals to a neighbouring float before
# pandas 3.1 (float_precision="high"), and that option is deprecated from 3.1 on.
INT_COLUMNS = frozenset({"repeat", "fold", "seed", "n_train", "n_test", "iteration", "count", "round"})
FLOAT_COLUMNS = frozenset({"value", "fit_seconds", "predict_seconds", "tune_seconds"})


def _read_table(source, path, columns, what):
    """Read a knnx CSV file (results, curves or ledger): text columns verbatim ("NA" and
    "null" are names, not missing values), the numeric ones parsed exactly (see above); a
    column named twice in the header is refused (:func:`knnx.results_checks.check_header`)."""
    try:
        frame = pd.read_csv(source, dtype=str, keep_default_na=False, na_filter=False)
        check_header(frame.columns, source, path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable knnx {what} file ({str(exc).splitlines()[0]})") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read ({exc.strerror or exc})") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ResultsError(f"{path}: not a knnx {what} file (missing columns: {', '.join(missing)})")
    with short_rows_named(source, path, len(frame.columns)):  # a row cut short reads as empty values
        for col in columns:
            if col in INT_COLUMNS:
                frame[col] = parse_numbers(frame[col], "integer", col, path)
            elif col in FLOAT_COLUMNS:
                frame[col] = parse_numbers(frame[col], "number", col, path)
        check_counts(frame, [c for c in columns if c in INT_COLUMNS], path)  # every file's: >= 0
    return frame


# A results file's checks beyond its numbers (see knnx.results_checks): counts >= 0,
# names not empty, params a JSON object of parameters; read_results also
# refuses a row that repeats another's REPEAT_KEY (recover, the runner's repair of its
# own file, keeps the last instead). The key is the runner's (the cell, CELL_COLUMNS; an
# active run's round; the metric) with what a run holds constant and a reader can group
# by (experiment, protocol, seed: another seed draws other splits), so a file pooling runs
# holds their cells side by side; params compare as the settings they parse to (every
# reader labels configurations so), so a copy with its JSON reformatted repeats too.
NAME_COLUMNS = ("experiment", "dataset", "algorithm", "metric")
REPEAT_KEY = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "protocol",
    "seed",
    "repeat",
    "fold",
    ROUND,
    "metric",
]


def _parse(source, path, repeats=True):
    """The frame of a results file (see :func:`read_results`); ``repeats``: refuse a row
    that repeats another's REPEAT_KEY (:func:`recover` keeps the last instead)."""
    frame = _read_table(source, path, [c for c in COLUMNS if c not in OPTIONAL_COLUMNS], "results")
    for col in OPTIONAL_COLUMNS:
        if col in frame.columns:  # an empty cell: not recorded
            frame[col] = parse_numbers([t or "nan" for t in frame[col].tolist()], "number", col, path)
        else:  # a file of an older knnx: not recorded
            frame[col] = np.nan
    rounds = [ROUND] if ROUND in frame.columns else []  # an active-learning run's
    if rounds:
        frame[ROUND] = parse_numbers(frame[ROUND], "integer", ROUND, path)
    frame = frame[[*COLUMNS, *rounds]]  # parameter columns are derived from params, never trusted
    check_counts(frame, rounds, path)  # the others' as every file's (_read_table)
    check_finite(frame, "value", path)
    check_timings(frame, TIMINGS, path, unrecorded=OPTIONAL_COLUMNS)
    check_names(frame, NAME_COLUMNS, path)
    codes, parameters, names = check_params(frame["params"], path)
    check_protocol(frame["protocol"], path)
    if repeats:
        check_repeats(frame, [c for c in REPEAT_KEY if c in frame.columns], path, settings(codes, parameters))
    extra = {}
    for n in names:  # each distinct params text's cell, then one per row
        cells = np.array([param_text(p[n]) if n in p else "" for p in parameters], dtype=object)
        extra[PARAM_PREFIX + n] = cells[codes]
    return (
        pd.concat([frame, pd.DataFrame(extra, index=frame.index, dtype=object)], axis=1) if names else frame
    )


def read_results(path):
    """Read a results file as a DataFrame (text columns kept as text, numbers exact), with
    one ``param_<name>`` column per parameter (see :data:`PARAM_PREFIX`). ResultsError,
    one line naming the file, the line and the column, for what knnx never writes (see
    :mod:`knnx.results_checks`), a row repeating another's cell and metric included
    (:data:`REPEAT_KEY`)."""
    return _parse(path, path)


def _read_text(path, what):
    """The text of a file knnx wrote (UTF-8); ResultsError naming it when it is not."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 (byte {exc.start}); not a knnx {what}") from None


def read_ledger(path):
    """{cell: cell_key} from a cell ledger (a torn last line is ignored); {} if absent."""
    path = Path(path)
    if not path.exists():
        return {}
    text = _read_text(path, "cell ledger")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    if not text.strip():
        return {}
    frame = _read_table(io.StringIO(text), path, LEDGER_COLUMNS, "cell ledger")
    if list(frame.columns) != LEDGER_COLUMNS:
        raise ResultsError(f"{path}: not a knnx cell ledger (columns {', '.join(LEDGER_COLUMNS)} expected)")
    return {cell: key for cell, key in zip(CellId.of_frame(frame), frame["cell_key"], strict=True)}


def recover(path, metrics, allowed=None, columns=COLUMNS, rounds=None):
    """Keep only complete cells of an existing results file; return their keys.

    A cell is complete when it has one row for every metric in ``metrics`` (with
    ``rounds``, an active run's file: for every metric at each round 0..``rounds``); its
    other rows (quantities reported by the estimator) are kept with it. With ``allowed``
    (a set of cells), the rows of every other cell are dropped too (e.g. cells whose
    cached result no longer matches the spec, the code or the data). The file is
    rewritten with ``columns`` (the run's parameter columns, derived from ``params``).
    Of rows that repeat a cell's metric (which the runner never writes) the last is
    kept; what else :func:`read_results` refuses, this refuses too.
    """
    path = Path(path)
    text = _read_text(path, "results file")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # drop a partial last line
    if not text.strip():
        atomic_write_text(path, rows_to_csv([], header=True, columns=columns))
        return set()
    frame = _parse(io.StringIO(text), path, repeats=False)
    unit = CELL_COLUMNS + ([ROUND] if rounds is not None else [])
    if rounds is not None and ROUND not in frame.columns:
        frame = frame.iloc[:0].assign(**{ROUND: []})  # not an active run's rows: none kept
    frame = frame[COLUMNS + unit[len(CELL_COLUMNS) :]]
    frame = frame.drop_duplicates(subset=unit + ["metric"], keep="last")
    if allowed is not None:
        cells = list(zip(frame["dataset"], frame["algorithm"], frame["params"], frame["repeat"].astype(int), frame["fold"].astype(int), strict=True))  # fmt: skip
        frame = frame[
            np.array([c in allowed for c in cells], dtype=bool)
        ]  # a list of none would pick no column
    scored = frame[frame["metric"].isin(metrics)]
    per_cell = len(metrics)
    if rounds is not None:  # every metric at each round 0..rounds
        scored = scored[(scored[ROUND] >= 0) & (scored[ROUND] <= rounds)]
        per_cell *= rounds + 1
    counts = scored.groupby(CELL_COLUMNS, sort=False)["metric"].transform("size")
    complete = scored[counts == per_cell][CELL_COLUMNS].drop_duplicates()
    # Keep every row of a complete cell, reported extras (e.g. chosen_k) included.
    frame = frame.merge(complete, on=CELL_COLUMNS, how="inner")
    names = [c.removeprefix(PARAM_PREFIX) for c in columns if c.startswith(PARAM_PREFIX)]
    rows = with_param_columns(frame[COLUMNS + unit[len(CELL_COLUMNS) :]].to_dict("records"), names)
    atomic_write_text(path, rows_to_csv(rows, header=True, columns=columns))
    return set(CellId.of_frame(complete))


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


def read_curves(path):
    """Read a curves file as a DataFrame (text columns kept as text, numbers exact)."""
    return _parse_curves(path, path)


def _parse_curves(source, path):
    frame = _read_table(source, path, CURVE_COLUMNS, "curves")
    check_finite(frame, "value", path)  # a curve is finite, or NaN where not defined
    return frame


def recover_curves(path, complete, columns=CURVE_COLUMNS, what="curves"):
    """Keep only the rows of cells in ``complete`` (keys as returned by :func:`recover`:
    dataset, algorithm, params, repeat, fold) of a curves file (or, with ``columns`` and
    ``what``, of another per-cell file such as warnings.csv); rewrite atomically."""
    path = Path(path)
    text = _read_text(path, "results file")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # drop a partial last line
    if not text.strip():
        atomic_write_text(path, rows_to_csv([], header=True, columns=columns))
        return
    frame = _read_table(io.StringIO(text), path, columns, what)
    keep = [cell in complete for cell in CellId.of_frame(frame)]
    frame = frame[np.asarray(keep, dtype=bool)]
    atomic_write_text(path, rows_to_csv(frame[columns].to_dict("records"), header=True, columns=columns))


_JSON_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number"}


def json_kind(value):
    """What a JSON value is, for a message: ``an object``, ``a list``, ``null``, ..."""
    return "null" if value is None else _JSON_KINDS.get(type(value), "a number")


def read_json(path, what, check=None, hint=""):
    """The value of the JSON file ``path`` that knnx wrote (its ``what``: environment,
    timing). ResultsError ``PATH: not a knnx WHAT file (PROBLEM)HINT``, one line, when
    it is not UTF-8, not JSON, nested deeper than :data:`knnx.limits.MAX_DEPTH` levels
    (checked before parsing), or when ``check(value)`` returns a problem (a text)."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
        problem = depth_problem() if json_too_deep(text) else None
        value = None if problem else json.loads(text)
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 text at byte {exc.start}"
    except json.JSONDecodeError as exc:
        problem = f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    except ValueError as exc:  # an integer of more digits than Python converts
        problem = f"not JSON: {str(exc).splitlines()[0]}"
    if problem is None and check is not None:
        problem = check(value)
    if problem is not None:
        raise ResultsError(f"{path}: not a knnx {what} file ({problem}){hint}")
    return value


def read_warnings(path):
    """Read a warnings file (see :data:`WARNING_COLUMNS`) as a DataFrame."""
    return _read_table(path, path, WARNING_COLUMNS, "warnings")
