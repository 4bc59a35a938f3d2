"""The checks of reading a knnx CSV file (:func:`knnx.results.read_results` and the other
readers of :mod:`knnx.results`): what a file knnx wrote always holds, so that a cell
edited by hand, or a file another tool wrote, is refused in one line naming the file,
the column and the line (line 2: the first row under the header) instead of being
counted, shown or pooled as if knnx had written it.

- a column named twice in the header (pandas would read the second as ``value.1``);
- numbers: integers as digits, floats as Python's repr (see :func:`parse_numbers`);
  the counts of a results file (``repeat``, ``fold``, ``seed``, ``n_train``,
  ``n_test``, ``round``) >= 0;
- names (``experiment``, ``dataset``, ``algorithm``, ``metric``) neither empty nor blank;
- ``params``: a JSON object of parameters (:meth:`knnx.params.Params.parse`, the one
  parser: standard JSON, no key given twice, finite numbers, nested at most
  :data:`knnx.limits.MAX_DEPTH` levels), at most :data:`MAX_PARAM_NAMES` names over the file;
- each cell's metric once (:func:`check_repeats`).

Each check costs one pass over a column, and one parse per distinct text: a results file
has millions of rows and few distinct ``params``."""

import csv
import json
import re
import unicodedata
from contextlib import contextmanager

import numpy as np
import pandas as pd

from knnx._text import canonical_json, name_problem, quoted, shown
from knnx.errors import ResultsError
from knnx.limits import json_too_deep
from knnx.params import Refused, parse_params_text, refuse_constant

# Distinct parameter names a results file may hold (each becomes a column): knnx's
# estimators have at most 15, a scikit-learn estimator dozens.
MAX_PARAM_NAMES = 500


def _first_line(codes, code):
    """The line of the first row whose code (of :func:`pandas.factorize`) is ``code``."""
    return int(np.argmax(codes == code)) + 2


# --- the header ---------------------------------------------------------------------------

_RENAMED = re.compile(r"(.*)\.[0-9]+")  # how pandas names a column's second occurrence


def check_header(columns, source, path):
    """ResultsError ``PATH: the column 'NAME' is given twice`` when the header of
    ``source`` (a path, or a text buffer read from its start) names a column twice.
    ``columns``: the names pandas gave; the header is read again only when one of them
    looks like pandas' name for a repeat (``value.1`` beside ``value``)."""
    names = set(columns)
    if not any((m := _RENAMED.fullmatch(c)) and m.group(1) in names for c in columns):
        return
    if hasattr(source, "seek"):
        source.seek(0)
    header = pd.read_csv(source, header=None, nrows=1, dtype=str, keep_default_na=False).iloc[0].tolist()
    repeated = next((c for i, c in enumerate(header) if c in header[:i]), None)
    if repeated is not None:
        raise ResultsError(f"{path}: the column '{shown(repeated)}' is given twice")


# --- numbers ------------------------------------------------------------------------------

# What knnx writes: integers as digits, floats as Python's repr (nan, inf and -inf
# included). Python's int() and float() also read "1_0", " 3 " and non-ASCII digits,
# which no knnx file holds: such a cell is refused as not a number.
_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan|[+-]?inf")


def parse_numbers(texts, kind, column, path):
    """``texts`` (strings) as an int64 (``kind="integer"``) or float64 array, each distinct
    text parsed once; a ResultsError names the first cell that is not one."""
    integer = kind == "integer"
    parse = int if integer else float
    grammar = _INTEGER if integer else _FLOAT
    codes, uniques = pd.factorize(np.asarray(texts, dtype=object))
    values = np.empty(len(uniques), dtype=np.int64 if integer else np.float64)
    for i, text in enumerate(uniques):
        try:
            if not grammar.fullmatch(text):
                raise ValueError(text)
            values[i] = parse(text)
        except (ValueError, OverflowError):
            raise ResultsError(
                f"{path}: column '{column}' line {_first_line(codes, i)}: '{shown(text)}' is not "
                f"{'an integer' if integer else 'a number'}"
            ) from None
    return values[codes]


def check_counts(frame, columns, path):
    """ResultsError naming the first value below 0 of the integer ``columns`` of ``frame``
    (a repeat, a fold, a seed, a number of rows, a round)."""
    for column in columns:
        values = frame[column].to_numpy()
        below = np.flatnonzero(values < 0)
        if below.size:
            row = int(below[0])
            raise ResultsError(
                f"{path}: column '{column}' line {row + 2}: {values[row]} is not an integer >= 0"
            )


def check_finite(frame, column, path):
    """ResultsError naming the first infinite value of ``column`` (NaN reads as not
    defined): no metric knnx scores, nor a reported quantity, is infinite, and an
    infinity would tie with any finite value under the tie rule and be marked best."""
    values = frame[column].to_numpy(dtype=np.float64)
    infinite = np.flatnonzero(np.isinf(values))
    if infinite.size:
        row = int(infinite[0])
        raise ResultsError(
            f"{path}: column '{column}' line {row + 2}: {values[row]} is not a finite number (NaN: not defined)"
        )


def check_ranges(frame, ranges, slack, path):
    """ResultsError naming the first ``value`` outside the range its metric takes
    (``ranges``: {metric: (low, high)}, ``slack`` either side), NaN aside."""
    metrics = frame["metric"].to_numpy(dtype=object)
    values = frame["value"].to_numpy(dtype=np.float64)
    for metric, (low, high) in ranges.items():
        rows = np.flatnonzero(metrics == metric)
        if not rows.size:
            continue
        taken = values[rows]
        outside = np.flatnonzero((taken < low - slack) | (taken > high + slack))
        if outside.size:
            row = int(rows[outside[0]])
            raise ResultsError(
                f"{path}: column 'value' line {row + 2}: {float(values[row])!r} is no value of {metric}, which lies in "
                f"[{low:g}, {high:g}]"
            )


def check_timings(frame, columns, path, unrecorded=()):
    """ResultsError naming the first time of ``columns`` that is no duration: a wall time
    knnx measures is a finite number of seconds >= 0; NaN (an empty cell) only in the
    ``unrecorded`` columns, those an older knnx did not write."""
    for column in columns:
        values = frame[column].to_numpy(dtype=np.float64)
        bad = ~(values >= 0) & ~np.isnan(values) if column in unrecorded else ~(values >= 0)
        bad |= np.isinf(values)
        wrong = np.flatnonzero(bad)
        if wrong.size:
            row = int(wrong[0])
            raise ResultsError(
                f"{path}: column '{column}' line {row + 2}: {values[row]} is not a number of seconds >= 0"
            )


def check_names(frame, columns, path):
    """ResultsError naming the first cell of the text ``columns`` that is no name by the
    rule every name follows where it enters (:func:`knnx._text.name_problem`): empty,
    blank, with blanks or invisible characters around it (``' error'`` would be another
    metric than ``error``, shown alike), a control character, too long."""
    for column in columns:
        codes, uniques = pd.factorize(frame[column].to_numpy(dtype=object))
        for i, text in enumerate(uniques):  # in order of first appearance: the first bad line
            problem = name_problem(text)
            if problem is None:
                continue
            cell = "an empty cell" if text == "" else f"{quoted(str(text))} {problem}"
            raise ResultsError(
                f"{path}: column '{column}' line {_first_line(codes, i)}: {cell}; a name is expected"
            )
        seen = {}  # NFC form -> the first unique of it: 'é' and e + accent print alike
        for i, text in enumerate(uniques):
            if text.isascii():
                continue
            key = unicodedata.normalize("NFC", text)
            if key in seen:
                raise ResultsError(
                    f"{path}: column '{column}' line {_first_line(codes, i)}: {quoted(text)} is "
                    f"{quoted(uniques[seen[key]])} of line {_first_line(codes, seen[key])} once Unicode-normalised "
                    "(NFC), and would print alike; a name is one text"
                )
            seen[key] = i


# --- params ------------------------------------------------------------------------------


def check_params(texts, path):
    """``(codes, parameters, names)`` of a ``params`` column: row i's parameters are
    ``parameters[codes[i]]`` (one :class:`knnx.params.Params` per distinct text, parsed once), ``names`` the
    sorted parameter names of the file. ResultsError naming the first line whose cell is
    not a JSON object of parameters (:func:`parse_params_text`), or a file whose cells
    name more than :data:`MAX_PARAM_NAMES` parameters (one column each)."""
    codes, uniques = pd.factorize(np.asarray(texts, dtype=object))
    parameters = []
    for i, text in enumerate(uniques):  # in order of first appearance: the first bad line
        value, problem = parse_params_text(text)
        if problem is not None:
            raise ResultsError(f"{path}: column 'params' line {_first_line(codes, i)}: {problem}")
        parameters.append(value)
    names = sorted(set().union(*parameters)) if parameters else []
    if len(names) > MAX_PARAM_NAMES:
        raise ResultsError(
            f"{path}: column 'params' holds {len(names)} parameter names; at most {MAX_PARAM_NAMES}"
        )
    return codes, parameters, names


def check_protocol(texts, path):
    """ResultsError naming the first ``protocol`` cell that is not a JSON object (knnx
    writes the spec's protocol so, ``{"kind":"kfold","folds":10,...}``): a hand-edited
    ``kfold`` would be a protocol of its own to every reader."""
    codes, uniques = pd.factorize(np.asarray(texts, dtype=object))
    for i, text in enumerate(uniques):
        try:
            value = None if json_too_deep(text) else json.loads(text, parse_constant=refuse_constant)
        except (ValueError, Refused):
            value = None
        if not isinstance(value, dict):
            raise ResultsError(
                f"{path}: column 'protocol' line {_first_line(codes, i)}: '{shown(text)}' is not a JSON object "
                "(the protocol as knnx writes it)"
            )


# --- each cell's metric once --------------------------------------------------------------


def settings(codes, parameters):
    """Per row, the code of its setting: rows whose ``params`` parse to equal parameters
    (``{"k": 1}`` and ``{"k":1}``) share one (``codes`` and ``parameters`` as
    :func:`check_params` gives them)."""
    canonical = [p.text for p in parameters]
    return pd.factorize(np.asarray(canonical, dtype=object))[0][codes] if parameters else codes


def _as_json(texts):
    """Per row, a code shared by the texts that are one JSON value (``{"a": 1}`` and
    ``{"a":1}``); a text that is not JSON is its own."""
    codes, uniques = pd.factorize(np.asarray(texts, dtype=object))
    canonical = []
    for text in uniques:
        try:
            value = None if json_too_deep(text) else json.loads(text)
        except ValueError:
            value = None
        canonical.append(text if value is None else canonical_json(value, allow_nan=True))
    return pd.factorize(np.asarray(canonical, dtype=object))[0][codes] if len(uniques) else codes


# What the message names of a repeated row's cell (the rest of the key is equal too).
_SHOWN = ("dataset", "algorithm", "params", "repeat", "fold", "round", "metric")


def check_repeats(frame, key, path, setting):
    """ResultsError ``PATH: line J repeats line I (dataset .., metric ..): ...`` for the
    first row whose ``key`` columns equal an earlier row's, ``params`` compared by
    ``setting`` (:func:`settings`) and ``protocol`` as the JSON value it holds: a cell's
    metric given twice (pooled into the mean, counted in n) instead of once."""
    keys = frame[key]
    if "params" in key:
        keys = keys.assign(params=setting)
    if "protocol" in key:  # one protocol written two ways is one protocol too
        keys = keys.assign(protocol=_as_json(frame["protocol"]))
    repeated = keys.duplicated().to_numpy()
    if not repeated.any():
        return
    later = int(np.argmax(repeated))
    same = np.ones(len(keys), dtype=bool)
    for column in key:
        same &= keys[column].to_numpy() == keys[column].iloc[later]
    first = int(np.argmax(same))
    cell = ", ".join(
        f"{c} {shown(str(frame[c].iloc[later]))}" for c in _SHOWN if c in key and c in frame.columns
    )
    raise ResultsError(
        f"{path}: line {later + 2} repeats line {first + 2} ({cell}): a results file holds each cell's metric once"
    )


@contextmanager
def short_rows_named(source, path, n_fields):
    """Around the checks of a file's values: a ResultsError they raise is replaced by one
    naming the first line with fewer or more fields than the header (``n_fields``), if
    ``source`` (a file path) has one. pandas reads a row cut short with its missing
    fields empty, which the checks would name as bad values; the file is read again
    only on such an error."""
    try:
        yield
    except ResultsError:
        line = _first_short_line(source, n_fields)
        if line is None:
            raise
        number, count = line
        raise ResultsError(
            f"{path}: line {number} has {count} fields, the header {n_fields}: a row cut short or run together"
        ) from None


def _first_short_line(source, n_fields):
    """(line number, fields) of the first row of ``source`` whose field count is not
    ``n_fields``; None when there is none or ``source`` is no file path."""
    if not isinstance(source, str | bytes) and not hasattr(source, "__fspath__"):
        return None
    try:
        with open(source, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            next(reader, None)
            for row in reader:
                if row and len(row) != n_fields:
                    return reader.line_num, len(row)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None
