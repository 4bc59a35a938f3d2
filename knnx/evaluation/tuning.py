"""Nested tuning: a setting chosen on stratified inner folds of one training part."""

import warnings
from dataclasses import dataclass

import numpy as np

from knnx.errors import describe, user_fault
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRIC_INPUT, METRICS
from knnx.evaluation.scoring import check_predictions, proba_on_codes


@dataclass(frozen=True)
class TuneTask:
    """How a tuned cell chooses its setting: ``cv`` stratified inner folds shuffled with
    ``seed``, scored by ``metric``, over ``settings`` (in scikit-learn's ParameterGrid
    order, see :func:`knnx.spec.tuned_settings`)."""

    cv: int
    metric: str
    settings: tuple
    seed: int


def tune(make, task, grid, X, y, n_classes):
    """Choose a setting of a tuned cell on stratified inner folds of its training part.

    As scikit-learn's ``GridSearchCV(cls(), grid, cv=StratifiedKFold(cv, shuffle=True,
    random_state=seed), error_score=np.nan)``: each setting (``make(setting)`` builds
    its unfitted estimator) is fitted on every inner training fold and scored on the
    held-out fold (``error`` and ``accuracy`` by accuracy, any other metric by its
    value, negated when lower is better); the setting with the highest mean score wins,
    the first in ParameterGrid order on a tie.

    A setting whose construction, fit, predict or scoring raises on an inner fold (any
    exception, ``sys.exit`` included) failed: it scores NaN and is not chosen (a
    FitFailedWarning names it and its error), as GridSearchCV's ``error_score=np.nan``;
    when every setting fails, ValueError, the cell fails, naming how many and the first
    error (:func:`knnx.errors.describe`). A MemoryError or Ctrl-C is no setting's
    failure: it propagates. A metric undefined (NaN) on an inner fold for a setting that
    did not fail (``auc`` on a held-out part of a single class: NaN for every setting
    alike) raises ValueError, the cell fails, rather than choose among settings that
    all score NaN.

    Returns ``(best, chosen, failed)``: the setting, ``{name: chosen value}`` for the
    parameters of ``grid`` that vary (by value when every value of its list is a number,
    else by its position in the spec's list: ``[1, None]`` would read 1 for either),
    and the number of settings that failed."""
    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(task.cv, shuffle=True, random_state=task.seed).split(X, y))
    varying = [name for name, values in grid.items() if isinstance(values, list) and len(values) > 1]
    scores = np.full((len(task.settings), len(folds)), np.nan)
    ok = np.ones(len(task.settings), dtype=bool)
    first = None  # the first failure: (setting, exception)
    for i, setting in enumerate(task.settings):
        try:
            for j, (inner, held) in enumerate(folds):
                est = make(setting)
                est.fit(X[inner], y[inner])  # its return value is ignored, as GridSearchCV ignores it
                scores[i, j] = _score(est, task.metric, X[held], y[held], n_classes)
        except BaseException as exc:  # noqa: BLE001 - any failure of user code fails the setting alone
            if isinstance(exc, MemoryError) or not user_fault(exc):
                raise
            ok[i] = False
            scores[i] = np.nan
            first = first or (setting, exc)
            _warn_failed(setting, varying, exc)
    failed = int((~ok).sum())
    if not ok.any():
        setting, exc = first
        raise ValueError(
            f"tune: every setting failed on the inner folds ({failed} of {len(ok)}); "
            f"first{_named(setting, varying)}: {describe(exc)}"
        )
    undefined = np.isnan(scores[ok]).any(axis=0)
    if undefined.any():
        raise ValueError(
            f"tune.metric {task.metric} is undefined on inner fold {int(np.argmax(undefined))}: its held-out "
            "part has a single class; use more rows per class or fewer inner folds (tune.cv)"
        )
    means = np.full(len(ok), -np.inf)
    means[ok] = np.average(scores[ok], axis=1)
    best = task.settings[int(np.argmax(means))]  # argmax: the first of the best
    chosen = {}
    for name in varying:  # all numbers: by value; else (1 beside None) every choice by position
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in grid[name])
        chosen[name] = float(best[name]) if numbers else float(grid[name].index(best[name]))
    return best, chosen, failed


def _score(est, metric, X_held, y_held, n_classes):
    """The inner score of a fitted estimator on a held-out fold (higher is better).
    Accuracy is the share of equal codes, as ``sklearn.metrics.accuracy_score`` gives
    it bit for bit (a count over the length), without its input checks: the codes
    are checked here."""
    if METRIC_INPUT[metric] == "proba":
        value = METRICS[metric](y_held, proba_on_codes(est, X_held, n_classes))
    else:  # checked as the cell's own predictions are: codes that are no class fail the setting
        y_pred = check_predictions(est.predict(X_held), len(y_held), n_classes)
        if metric in ("error", "accuracy"):
            return float(np.count_nonzero(y_held == y_pred) / len(y_held))
        value = METRICS[metric](y_held, y_pred)
    return -value if LOWER_IS_BETTER.get(metric, False) else value


def _named(setting, varying):
    """`` (k=3, weights='distance')``: the varying parameters of a setting, or nothing."""
    shown = ", ".join(f"{name}={setting[name]!r}" for name in varying)
    return f" ({shown})" if shown else ""


def _warn_failed(setting, varying, exc):
    from sklearn.exceptions import FitFailedWarning

    warnings.warn(
        f"tune: setting{_named(setting, varying)} failed on an inner fold and scores NaN: {describe(exc)}",
        FitFailedWarning,
        stacklevel=3,
    )
