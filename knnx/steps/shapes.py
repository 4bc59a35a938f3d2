"""What each step of a contestant is given when its chain is fitted on a training part,
worked out without fitting anything, and what its setting asks of that (the spec's
validation checks every step of every setting against every training part: a step's
``n_components``, its ``_data_problems`` hook, the rows of each class it needs, its
neighbour count).

The first step is given the training part as the dataset is loaded (its columns, once
encoded as the dataset entry says). After it:

* rows: a transformer keeps them (the chain refuses one that does not); a selection
  or a generation of knnx (``keeps_columns``) keeps at most the rows it is given (a
  selection: some of them, holding the dataset's columns); another sampler may add
  rows (unknown after it);
* columns: a sampler keeps them (the chain refuses one that does not); ``scale``
  keeps them; ``encode`` turns each nominal column (the dataset's, which the runner
  gives it when it reads the dataset's columns, or its ``nominal``) into one indicator
  per category present in the training part; ``impute`` drops the columns without a
  value in the training part (unless ``keep_empty_features``) and, with
  ``add_indicator``, adds one per column with a missing value; ``pca`` gives
  ``n_components`` (None: min(rows, columns)); the metric learners (knnx's and NCA)
  ``n_components``, else the columns; any other transformer: unknown.

Where a count is not known exactly it is bounded (at most) or unknown; a step is
refused only where it would fail whatever the rows: ``n_components`` above a bound, a
hook asked with exact columns, a class's rows counted where no sampler came before.
"""

import json
import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from knnx.estimators.classes import EstimatorFault, ask

# The steps whose output's columns are known, by class (its own or a base's, in knnx or
# scikit-learn): what they do to the columns.
_KINDS = {
    "knnx.steps.builtin.Scale": "scale",
    "knnx.steps.builtin.Encode": "encode",
    "sklearn.impute._base.SimpleImputer": "impute",
    "sklearn.decomposition._pca.PCA": "pca",
    "knnx.metric_learning.base.LinearMetric": "learner",
    "sklearn.neighbors._nca.NeighborhoodComponentsAnalysis": "learner",
    "knnx.reduction.base.Selection": "selection",
}


def _kind(cls):
    if cls.__module__.partition(".")[0] not in ("knnx", "sklearn"):
        return None  # a class of one's own, even a subclass of these, may do otherwise
    return next(
        (_KINDS[k] for k in (f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__) if k in _KINDS), None
    )


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


class TrainingPart:
    """The training rows of one split (``train``: indices into ``ds.X``), with what the
    steps' rules read of them, computed once when first asked; ``what`` names it in a
    message (``a training part``, or a tuned entry's ``an inner training fold``)."""

    def __init__(self, ds, train, what="a training part"):
        self.ds, self.train, self.rows, self.what = ds, train, len(train), what
        self._codes = {}

    def codes(self, j):
        """Categories present in column ``j`` (missing values left out)."""
        if j not in self._codes:
            column = self.ds.X[self.train, j]
            self._codes[j] = len(np.unique(column[~np.isnan(column)]))
        return self._codes[j]

    @cached_property
    def missing(self):
        """``(columns without a value, columns with a missing value)``."""
        absent = np.isnan(self.ds.X[self.train])
        return int(absent.all(axis=0).sum()), int(absent.any(axis=0).sum())

    @cached_property
    def class_rows(self):
        """``(labels, rows of each)`` of the classes present."""
        return np.unique(self.ds.y[self.train], return_counts=True)


class TrainingParts(list):
    """The :class:`TrainingPart` of each split of a dataset, and the answers of
    :func:`steps_problem` so far (by the steps' settings: a grid over the classifier's
    parameters asks once)."""

    def __init__(self, parts):
        super().__init__(parts)
        self.answers = {}


def training_parts(ds, splits):
    """The :class:`TrainingParts` of the splits of ``ds``."""
    return TrainingParts(TrainingPart(ds, s.train) for s in splits)


def inner_training_parts(ds, splits, cv, seeds):
    """The :class:`TrainingParts` of the inner training folds on which ``tune:`` fits a
    tuned entry's chain (:func:`knnx.evaluation.tuning.tune`: ``cv`` stratified folds
    of each training part, shuffled with ``seeds(split)``), or None where scikit-learn
    cannot make them (a class with fewer than ``cv`` rows, refused on its own)."""
    import warnings

    from sklearn.model_selection import StratifiedKFold

    what = f"an inner training fold (tune: cv = {cv})"
    parts = []
    for s in splits:
        y = ds.y[s.train]
        try:
            with warnings.catch_warnings():  # a class with fewer than cv rows: said on its own
                warnings.simplefilter("ignore")
                folds = list(
                    StratifiedKFold(cv, shuffle=True, random_state=seeds(s)).split(np.zeros(len(y)), y)
                )
        except ValueError:
            return None
        parts += [TrainingPart(ds, s.train[inner], what) for inner, _ in folds]
    return TrainingParts(parts)


@dataclass(frozen=True)
class Seen:
    """What a step is given: ``rows`` and ``columns`` (None: unknown), each exact or an
    upper bound, and whether the columns are the dataset's (the runner gives such a
    step the dataset's nominal columns)."""

    rows: int | None
    rows_exact: bool
    columns: int | None
    columns_exact: bool
    dataset_columns: bool

    def said(self):
        """``100 rows, 4 features`` (``at most`` where bounded; unknown counts left out)."""
        rows = None if self.rows is None else f"{'' if self.rows_exact else 'at most '}{self.rows} rows"
        columns = (
            None
            if self.columns is None
            else f"{'' if self.columns_exact else 'at most '}{self.columns} features"
        )
        return ", ".join(text for text in (rows, columns) if text)


def _given(step, setting, seen, part):
    """The :class:`Seen` of the step after ``step`` (made with ``setting``), given ``seen``."""
    cls = step.cls
    if callable(getattr(cls, "fit_resample", None)):  # a sampler: the columns stay
        kept = getattr(cls, "keeps_columns", False)
        rows = seen.rows if kept else None
        # a selection's rows are rows of the part; a generation's are new (LVQ takes no
        # nominal codes nor missing values: the runner's nominal columns are none)
        subset = seen.dataset_columns and _kind(cls) == "selection"
        return replace(seen, rows=rows, rows_exact=False, dataset_columns=subset)
    kind, columns, exact = _kind(cls), None, False
    if kind == "scale":
        columns, exact = seen.columns, seen.columns_exact
    elif kind == "encode":
        columns, exact = _encoded(setting, seen, part)
    elif kind == "impute":
        columns, exact = _imputed(setting, seen, part)
    elif kind in ("pca", "learner") and seen.columns is not None:
        r = setting.get("n_components")
        if _is_int(r):
            columns, exact = r, True
        elif kind == "learner":  # None: the columns given
            columns, exact = seen.columns, seen.columns_exact
        else:  # None: min(rows, columns); a share of the variance or "mle": at most that
            columns = seen.columns if seen.rows is None else min(seen.rows, seen.columns)
            exact = (
                r is None and seen.columns_exact and seen.rows_exact and setting.get("svd_solver") != "arpack"
            )
    return Seen(seen.rows, seen.rows_exact, columns, exact and columns is not None, False)


def _encoded(setting, seen, part):
    nominal = setting.get("nominal")
    if nominal is None and seen.dataset_columns:
        nominal = [int(j) for j in part.ds.nominal]
    if nominal is not None and not (isinstance(nominal, list | tuple) and all(map(_is_int, nominal))):
        return None, False  # Encode refuses it at fit
    columns = sorted(set(nominal or []))
    if not columns:
        return seen.columns, seen.columns_exact
    if not (seen.dataset_columns and seen.columns_exact and 0 <= columns[0] and columns[-1] < seen.columns):
        return None, False
    # after a selection, its rows may lack a category: at most that many
    return seen.columns - len(columns) + sum(part.codes(j) for j in columns), seen.rows_exact


def _imputed(setting, seen, part):
    nan = setting.get("missing_values", math.nan)
    indicators = bool(setting.get("add_indicator"))
    if seen.dataset_columns and seen.columns_exact and isinstance(nan, float) and math.isnan(nan):
        empty, some = part.missing
        dropped = 0 if setting.get("keep_empty_features") else empty
        # after a selection, its rows may lack more values: at most that many
        return seen.columns - dropped + (some if indicators else 0), seen.rows_exact
    return (None, False) if indicators else (seen.columns, False)


def _components_problem(step, setting, seen):
    """``n_components`` of ``pca`` (between 1 and min(rows, columns), below it under
    arpack) or of a metric learner (at most the columns) beyond what the step is given."""
    kind, r = _kind(step.cls), setting.get("n_components")
    if kind not in ("pca", "learner") or not _is_int(r):
        return None
    if kind == "learner":
        if seen.columns is None or r <= seen.columns:
            return None
        at_most = "" if seen.columns_exact else "at most "
        return f"n_components={r} exceeds the {at_most}{seen.columns} features the step is given"
    known = [n for n in (seen.rows, seen.columns) if n is not None]
    arpack = setting.get("svd_solver") == "arpack"
    limit = min(known) - arpack if known else None
    if r >= 1 and (limit is None or r <= limit):
        return None
    if limit is None:
        return f"n_components={r} must be at least 1 (the classifier after it needs a feature)"
    bound = "min(n_samples, n_features)" + (" - 1 (svd_solver 'arpack')" if arpack else "")
    return (
        f"n_components={r} must be between 1 and {limit} = {bound} of a training part as the step sees "
        f"it ({seen.said()})"
    )


def _data_problem(step, setting, seen, n_classes):
    """The first problem the step's ``_data_problems`` hook (if it has one) finds in what
    it is given, asked under :func:`~knnx.estimators.classes.ask` (a hook that fails is
    the problem, named), or None."""
    method = getattr(step.cls, "_data_problems", None)
    if method is None:
        return None
    try:
        found = ask("_data_problems()", lambda: method(setting, seen.rows, seen.columns, n_classes))
    except EstimatorFault as fault:
        return str(fault)
    return str(found[0]) if found else None


def _seen_problem(i, step, setting, seen, n_classes):
    """What the ``i``-th step with ``setting`` would fail on in what it is given
    (``seen``), whatever the rows: its ``n_components``, its hook (with exact columns),
    its neighbour count after the first step (the first's is checked against the
    training parts and a tuned entry's inner folds)."""
    found = _components_problem(step, setting, seen)
    if found is None and seen.columns_exact and seen.rows is not None:
        found = _data_problem(step, setting, seen, n_classes)
    pname, slack = step.neighbor_param or (None, 0)
    value = setting.get(pname)
    if found or i == 0 or not _is_int(value) or seen.rows is None or value <= seen.rows - slack:
        return found
    limit = "must be below" if slack else "exceeds"
    return f"{pname}={value} {limit} the {'' if seen.rows_exact else 'at most '}{seen.rows} rows the step is given"


def _class_rows_problem(step, setting, part, ds, bound=False):
    """A class of the training part with fewer rows than the step's ``_class_rows`` hook
    asks (LMNN: k + 1), or None; for a step given the training part's rows, or (``bound``)
    at most them, after selections that only remove rows."""
    method = getattr(step.cls, "_class_rows", None)
    if method is None:
        return None
    try:
        need = ask("_class_rows()", lambda: method(setting))
    except EstimatorFault:
        return None  # its fit will say why
    labels, counts = part.class_rows
    if not _is_int(need) or len(labels) < 2 or counts.min() >= need:
        return None
    c = int(np.argmin(counts))
    return (
        f"class {ds.classes[labels[c]]!r} has {'at most ' if bound else ''}{counts[c]} rows in {part.what}"
        f"{' after the selections before it' if bound else ''}; the step needs "
        f"{need} of each class (k = {need - 1} target neighbours and the row itself)"
    )


def steps_problem(ref, setting, ds, parts):
    """The first step of ``ref`` (an algorithm with steps) that ``setting`` would make
    fail on a training part of ``ds`` (``parts``: :func:`training_parts` of its
    splits), as ``step <id>: <problem>``, or None."""
    settings = [
        {**step.facts.defaults, **own}
        for step, own in zip(ref.steps, ref.step_settings(setting), strict=True)
    ]
    key = (
        tuple((step.id, step.cls) for step in ref.steps),
        json.dumps(settings, sort_keys=True, default=repr),
    )
    if key not in parts.answers:
        parts.answers[key] = _first_problem(ref.steps, settings, ds, parts)
    return parts.answers[key]


def seen_by_steps(steps, settings, ds, part):
    """Per step (``steps``: resolved steps; ``settings``: each one's parameters, its
    defaults filled in), the :class:`Seen` of what it is given when the chain is fitted
    on the training part ``part`` of ``ds``."""
    seen = [Seen(part.rows, True, ds.n_features, True, True)]
    for step, own in zip(steps[:-1], settings, strict=False):
        seen.append(_given(step, own, seen[-1], part))
    return seen


def _first_problem(steps, settings, ds, parts):
    asked = set()  # (step, what it is given): parts of one size give one answer
    for part in parts:
        for i, (step, own, seen) in enumerate(
            zip(steps, settings, seen_by_steps(steps, settings, ds, part), strict=True)
        ):
            found = None if (i, seen) in asked else _seen_problem(i, step, own, seen, ds.n_classes)
            asked.add((i, seen))
            # the part's classes, or at most them after selections alone (which only remove rows)
            if found is None and (seen.rows_exact or seen.dataset_columns):
                found = _class_rows_problem(step, own, part, ds, bound=not seen.rows_exact)
            if found:
                return f"step {step.id}: {found}"
    return None
