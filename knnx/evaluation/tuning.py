"""Nested tuning: a setting chosen on stratified inner folds of one training part."""

from dataclasses import dataclass

import numpy as np

from knnx.evaluation.metrics import LOWER_IS_BETTER, METRIC_INPUT, METRICS
from knnx.evaluation.scoring import proba_on_codes


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
    random_state=seed))``: each setting (``make(setting)`` builds its unfitted
    estimator) is fitted on every inner training fold and scored on the held-out fold
    (``error`` and ``accuracy`` by accuracy, any other metric by its value, negated when
    lower is better); the setting with the highest mean score wins, the first in
    ParameterGrid order on a tie. A metric undefined (NaN) on an inner fold (``auc`` on
    a held-out part of a single class: NaN for every setting alike) raises ValueError,
    the cell fails, rather than choose among settings that all score NaN. Returns the
    setting and ``{name: chosen value}`` for the parameters of ``grid`` that vary (a
    number as itself, another value by its position in the spec's list)."""
    from sklearn.metrics import accuracy_score
    from sklearn.model_selection import StratifiedKFold

    metric = task.metric
    folds = list(StratifiedKFold(task.cv, shuffle=True, random_state=task.seed).split(X, y))
    scores = np.empty((len(task.settings), len(folds)))
    for i, setting in enumerate(task.settings):
        for j, (inner, held) in enumerate(folds):
            est = make(setting).fit(X[inner], y[inner])
            if metric in ("error", "accuracy"):
                scores[i, j] = accuracy_score(y[held], est.predict(X[held]))
                continue
            if METRIC_INPUT[metric] == "proba":
                value = METRICS[metric](y[held], proba_on_codes(est, X[held], n_classes))
            else:
                value = METRICS[metric](y[held], np.asarray(est.predict(X[held])))
            scores[i, j] = -value if LOWER_IS_BETTER.get(metric, False) else value
    undefined = np.isnan(scores).any(axis=0)
    if undefined.any():
        raise ValueError(
            f"tune.metric {metric} is undefined on inner fold {int(np.argmax(undefined))}: its held-out "
            "part has a single class; use more rows per class or fewer inner folds (tune.cv)"
        )
    means = np.average(scores, axis=1)
    best = task.settings[int(np.argmax(means))]  # argmax: the first of the best
    chosen = {}
    for name, values in grid.items():
        if isinstance(values, list) and len(values) > 1:
            value = best[name]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            chosen[name] = float(value) if number else float(values.index(value))
    return best, chosen
