"""A fitted estimator's predictions checked and scored on a test part.

An estimator outside knnx may return anything: :func:`check_predictions` and
:func:`proba_on_codes` turn what it returns into class codes 0..C-1 and a probability
matrix over them, or raise ValueError (the cell fails) saying what was wrong.
"""

import re

import numpy as np

from knnx.evaluation.metrics import METRIC_INPUT, METRICS


def check_predictions(y_pred, n, n_classes):
    """``y_pred`` as a new int64 array of ``n`` class codes, or ValueError (the cell fails):
    an estimator outside knnx may return anything, and a label that is no class would be
    scored as an error silently. What is scored is the copy checked: an estimator may
    hand out its own buffer and write into it later (in ``predict_proba``), or an object
    whose ``__array__`` gives other values at each call."""
    y_pred = np.array(_unmasked(y_pred, "predict"), copy=True)
    if y_pred.shape != (n,):
        raise ValueError(f"predict returned shape {y_pred.shape}, expected ({n},)")
    if y_pred.dtype.kind == "b":
        raise ValueError("predict returned booleans (dtype bool), not class codes (the classes of fit's y)")
    if y_pred.dtype.kind in "mMV":  # durations and dates (whose tolist() gives integers), records
        raise ValueError(f"predict returned dtype {y_pred.dtype}, not class codes (the classes of fit's y)")
    if y_pred.dtype.kind not in "iu":
        values = y_pred.tolist()
        bad = next((i for i, v in enumerate(values) if not _is_code(v)), None)
        if bad is not None:
            raise ValueError(f"predict returned {values[bad]!r}, not a class code (the classes of fit's y)")
    codes = y_pred.astype(np.int64)
    if len(codes) and (codes.min() < 0 or codes.max() >= n_classes):
        bad = int(codes[(codes < 0) | (codes >= n_classes)][0])
        raise ValueError(f"predict returned {bad}, not a class code (the classes of fit's y)")
    return codes


def _shown(value, limit=80):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unmasked(values, call):
    """``values`` as an array; ValueError when it is a masked array with values masked
    (``numpy.asarray`` would read the data hidden under the mask)."""
    if np.ma.isMaskedArray(values) and np.ma.getmaskarray(values).any():
        count = int(np.ma.getmaskarray(values).sum())
        raise ValueError(f"{call} returned a masked array with {count} values masked; every value is needed")
    return np.asarray(values)


def _is_code(value):
    """Whether one predicted value reads as a class code: an integral number, not a bool
    (True is no class of a multi-class problem, and reads as 1 only by accident)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        return False
    return float(value).is_integer()


# Rows a cell may write besides its metrics whatever the estimator: a reported quantity
# may not take their names (nor a metric's), and its names become column headings and
# figure file names: short, without control characters, a bounded number of them.
RESERVED_ROWS = ("tune_failed_settings",)
MAX_REPORTED = 100
MAX_REPORTED_NAME = 100
_REPORTED_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*", re.ASCII)


def reported_scores(estimator, taken=(), columns=()):
    """``[(name, value)]`` of the quantities a fitted estimator reports about its fit
    (its ``reported_`` mapping, e.g. ``{"chosen_k": 5.0}``), written as rows beside the
    metrics; ValueError (the cell fails) when they could be mistaken for them: a name
    that is not a non-empty text, that is the name of a metric (any of knnx's, whether
    or not this spec asks for it) or of a row the cell writes already (``taken``), or a
    value that is not a real number (a bool counts as 0 or 1; NaN is kept, an infinity
    refused); a name that is not letters, digits, ``_`` and ``.`` starting with a letter
    (two names must not make one figure file), longer than :data:`MAX_REPORTED_NAME`,
    or equal, case aside, to a metric, a row or a column of results.csv; more than
    :data:`MAX_REPORTED` of them. :data:`RESERVED_ROWS` are taken in every cell;
    ``columns``: those of the file the rows are written to."""
    reported = getattr(estimator, "reported_", None)
    if reported is None:
        return []
    if not isinstance(reported, dict):
        raise ValueError(f"reported_ is a {type(reported).__name__}, not a dict of names to numbers")
    if len(reported) > MAX_REPORTED:
        raise ValueError(f"reported_ holds {len(reported)} quantities; at most {MAX_REPORTED}")
    out = []
    for name, value in reported.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"reported_ has the name {name!r}; names are non-empty texts")
        if len(name) > MAX_REPORTED_NAME or not _REPORTED_NAME.fullmatch(name):
            raise ValueError(
                f"reported_ has the name {name[:40]!r}{'...' if len(name) > 40 else ''}; names are letters, digits, "
                f"'_' and '.', starting with a letter, at most {MAX_REPORTED_NAME} characters (each names a row, a "
                "column and a figure file)"
            )
        shadowed = _shadowed(name, taken, columns)
        if shadowed is not None:
            raise ValueError(
                f"reported_ names {name!r}, which is {shadowed}: a reported quantity would be read as it; "
                "name it otherwise"
            )
        if not isinstance(value, int | float | np.integer | np.floating | np.bool_):
            raise ValueError(f"reported_[{name!r}] is {type(value).__name__}, not a number")
        if np.isinf(float(value)):
            raise ValueError(
                f"reported_[{name!r}] is {float(value)}; values are finite numbers or NaN (not defined)"
            )
        out.append((name, float(value)))
    return out


def _shadowed(name, taken, columns):
    """What ``name`` would be mistaken for, compared without regard to case (``ERROR``
    reads as ``error`` to a reader): a metric, another row of the cell, a column of
    results.csv (``fit_seconds``, ``value``); None when nothing."""
    folded = name.casefold()
    if folded in {m.casefold() for m in METRICS}:
        return "a metric's name"
    if folded in {t.casefold() for t in (*taken, *RESERVED_ROWS)}:
        return "another row's name"
    if folded in {c.casefold() for c in columns} or folded.startswith("param_"):
        return "a column of results.csv"  # param_<name>: a parameter's column
    return None


def proba_on_codes(estimator, X, n_classes):
    """``predict_proba(X)`` with column c the probability of class code c (0..n_classes-1).

    The estimator's columns follow its ``classes_`` (the codes seen in training); a
    class absent from the training part gets probability 0.
    """
    raw = estimator.predict_proba(X)
    classes = np.asarray(estimator.classes_)
    _check_columns(raw, classes)
    proba = _unmasked(raw, "predict_proba")
    if proba.dtype.kind not in "iufO":  # booleans, complex numbers (their imaginary part dropped), texts
        raise ValueError(f"predict_proba returned dtype {proba.dtype}, not probabilities (real numbers)")
    if proba.dtype == np.float16:  # 3 significant digits: its rows miss 1 by up to 1e-3
        raise ValueError(
            "predict_proba returned float16, too coarse for rows to sum to 1 within 1e-6; return float32 or float64"
        )
    proba = np.asarray(proba, dtype=np.float64)
    if proba.shape != (X.shape[0], len(classes)):
        raise ValueError(f"predict_proba returned shape {proba.shape}, expected {(X.shape[0], len(classes))}")
    try:
        codes = classes.astype(np.intp)
    except (ValueError, TypeError, OverflowError):  # texts, objects: no codes at all
        codes = None
    if (
        codes is None
        or not np.array_equal(codes, classes)
        or len(np.unique(codes)) != len(codes)
        or (codes < 0).any()
        or (codes >= n_classes).any()
    ):
        raise ValueError(
            f"classes_ must be distinct class codes in 0..{n_classes - 1}, got {_shown(classes.tolist())}"
        )
    full = np.zeros((X.shape[0], n_classes))
    full[:, codes] = proba
    return full


def _check_columns(table, classes):
    """ValueError when ``table`` (a pandas DataFrame, or anything with ``columns``) labels
    its columns otherwise than ``classes`` in order: it would be read by position, each
    class taking another's probability. Unlabelled columns (a default RangeIndex, what
    ``DataFrame(array)`` gives) are positions, as an array's."""
    columns = getattr(table, "columns", None)
    if columns is None or type(columns).__name__ == "RangeIndex" and columns.start == 0 and columns.step == 1:
        return
    labels = list(columns)
    same = len(labels) == len(classes) and all(
        type(a) is not bool and a == b for a, b in zip(labels, classes.tolist(), strict=True)
    )
    if not same:
        raise ValueError(
            f"predict_proba returned a table whose columns {_shown(labels)} are not classes_ "
            f"{_shown(classes.tolist())} in order"
        )


def needs_proba(metrics):
    """Whether any of ``metrics`` scores predicted probabilities (or compares them with a
    true posterior): then ``predict_proba`` is called, else never."""
    return bool({METRIC_INPUT[m] for m in metrics} & {"proba", "posterior"})


def score(metrics, y_true, y_pred, proba=None, posterior=None):
    """``[(metric, value)]`` for each of ``metrics``, in order: label metrics on
    ``y_pred``, probability metrics on ``proba`` (columns = class codes), posterior
    metrics comparing the true ``posterior`` with ``proba``."""
    inputs = {
        "label": (y_true, np.asarray(y_pred)),
        "proba": (y_true, proba),
        "posterior": (posterior, proba),
    }
    return [(m, float(METRICS[m](*inputs[METRIC_INPUT[m]]))) for m in metrics]
