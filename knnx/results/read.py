"""Reading result files back (see :mod:`knnx.results`): every check of
:mod:`knnx.results_checks` on a results, curves, ledger or warnings file, each problem
one line naming the file, line and column; and knnx's JSON files (:func:`read_json`)."""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.limits import depth_problem, json_too_deep
from knnx.results.schema import (
    COLUMNS,
    CURVE_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    LEDGER_COLUMNS,
    NAME_COLUMNS,
    OPTIONAL_COLUMNS,
    PARAM_PREFIX,
    RANGE_SLACK,
    REPEAT_KEY,
    ROUND,
    TIMINGS,
    VALUE_RANGES,
    WARNING_COLUMNS,
    CellId,
)
from knnx.results_checks import (
    check_counts,
    check_finite,
    check_header,
    check_names,
    check_params,
    check_protocol,
    check_ranges,
    check_repeats,
    check_timings,
    parse_numbers,
    settings,
    short_rows_named,
)


def read_table(source, path, columns, what):
    """Read a knnx CSV file (results, curves or ledger): text columns verbatim ("NA" and
    "null" are names, not missing values), the numeric ones parsed exactly (see above); a
    column named twice in the header is refused (:func:`knnx.results_checks.check_header`)."""
    try:
        frame = pd.read_csv(source, dtype=str, keep_default_na=False, na_filter=False)
        check_header(frame.columns, source, path)
    except UnicodeDecodeError:
        raise ResultsError(_not_utf8(source, path)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
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


def _not_utf8(source, path):
    """``PATH: line L: byte 0xe9 is not UTF-8 ...`` for a file pandas could not decode
    (its own message counts bytes from the start of a buffer, not of the file)."""
    try:
        raw = source.read_bytes() if isinstance(source, Path) else Path(source).read_bytes()
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return (
            f"{path}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 (knnx writes its files in UTF-8)"
        )
    except (OSError, TypeError):
        pass
    return f"{path}: not UTF-8 text (knnx writes its files in UTF-8)"


def parse_results(source, path, repeats=True):
    """The frame of a results file (see :func:`read_results`); ``repeats``: refuse a row
    that repeats another's REPEAT_KEY (:func:`recover` keeps the last instead)."""
    frame = read_table(source, path, [c for c in COLUMNS if c not in OPTIONAL_COLUMNS], "results")
    for col in OPTIONAL_COLUMNS:
        if col in frame.columns:  # an empty cell: not recorded; a NaN written there is no time
            texts = frame[col].tolist()
            frame[col] = parse_numbers([t or "nan" for t in texts], "number", col, path)
            _refuse_written_nan(frame[col].to_numpy(dtype=np.float64), texts, col, path)
        else:  # a file of an older knnx: not recorded
            frame[col] = np.nan
    rounds = [ROUND] if ROUND in frame.columns else []  # an active-learning run's
    if rounds:
        frame[ROUND] = parse_numbers(frame[ROUND], "integer", ROUND, path)
    frame = frame[[*COLUMNS, *rounds]]  # parameter columns are derived from params, never trusted
    check_counts(frame, rounds, path)  # the others' as every file's (read_table)
    check_finite(frame, "value", path)
    check_ranges(frame, VALUE_RANGES, RANGE_SLACK, path)
    check_timings(frame, TIMINGS, path, unrecorded=OPTIONAL_COLUMNS)
    check_names(frame, NAME_COLUMNS, path)
    codes, parameters, names = check_params(frame["params"], path)
    check_protocol(frame["protocol"], path)
    if repeats:
        check_repeats(frame, [c for c in REPEAT_KEY if c in frame.columns], path, settings(codes, parameters))
    extra = {}
    for n in names:  # each distinct params text's cell, then one per row
        cells = np.array([p.value_text(n) for p in parameters], dtype=object)
        extra[PARAM_PREFIX + n] = cells[codes]
    return (
        pd.concat([frame, pd.DataFrame(extra, index=frame.index, dtype=object)], axis=1) if names else frame
    )


def _refuse_written_nan(values, texts, column, path):
    """ResultsError naming the first cell of an optional timing ``column`` that holds a
    NaN as text (``nan``): only an empty cell says a time was not recorded."""
    written = np.flatnonzero(np.isnan(values) & np.array([t != "" for t in texts], dtype=bool))
    if written.size:
        row = int(written[0])
        raise ResultsError(
            f"{path}: column '{column}' line {row + 2}: {texts[row]} is not a number of seconds >= 0 "
            "(a time not recorded is an empty cell)"
        )


def read_results(path):
    """Read a results file as a DataFrame (text columns kept as text, numbers exact), with
    one ``param_<name>`` column per parameter (see :data:`PARAM_PREFIX`). ResultsError,
    one line naming the file, the line and the column, for what knnx never writes (see
    :mod:`knnx.results_checks`), a row repeating another's cell and metric included
    (:data:`REPEAT_KEY`)."""
    return parse_results(path, path)


def read_text(path, what):
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
    text = read_text(path, "cell ledger")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    if not text.strip():
        return {}
    frame = read_table(io.StringIO(text), path, LEDGER_COLUMNS, "cell ledger")
    if list(frame.columns) != LEDGER_COLUMNS:
        raise ResultsError(f"{path}: not a knnx cell ledger (columns {', '.join(LEDGER_COLUMNS)} expected)")
    return {cell: key for cell, key in zip(CellId.of_frame(frame), frame["cell_key"], strict=True)}


def read_curves(path):
    """Read a curves file as a DataFrame (text columns kept as text, numbers exact)."""
    return _parse_curves(path, path)


def _parse_curves(source, path):
    frame = read_table(source, path, CURVE_COLUMNS, "curves")
    check_finite(frame, "value", path)  # a curve is finite, or NaN where not defined
    return frame


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
    return read_table(path, path, WARNING_COLUMNS, "warnings")
