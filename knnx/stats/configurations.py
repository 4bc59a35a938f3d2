"""Configurations: what a comparison's contestants, a summary's rows and a figure's lines
are (an algorithm and the parameters that vary among its settings, seeds pooled)."""

import pandas as pd

from knnx.results import PARAM_PREFIX

# Parameters whose values are replicates, not settings: a configuration's summary pools
# them (knn_sample's seeds, a scikit-learn estimator's random_state), as it pools
# repeats and folds.
SEED_PARAMS = ("seed", "random_state")


def configuration_labels(frame):
    """A short label per row: the algorithm (its id) followed by the parameters that take
    more than one value among that algorithm's rows of one dataset, seed-like parameters
    (:data:`SEED_PARAMS`) left out, e.g. ``knn k=3`` or ``unn k=5, theta=0.1``; the
    algorithm alone when nothing varies. The JSON of every default is never shown.

    A parameter that takes one value per dataset but differs between datasets (an
    algorithm entry's ``params_for``: UNN with k=5 on iris and k=7 elsewhere) is part
    of the dataset, not of the configuration: the entry is one contestant, labelled by
    its id, whose parameters depend on the dataset."""
    columns = [c for c in frame.columns if c.startswith(PARAM_PREFIX)]
    varying = {
        alg: [c for c in columns if c.removeprefix(PARAM_PREFIX) not in SEED_PARAMS and (counts[c] > 1).any()]
        for alg, counts in _values_per_dataset(frame, columns)
    }
    labels = []
    for row in frame[["algorithm", *columns]].itertuples(index=False, name=None):
        alg, values = row[0], dict(zip(columns, row[1:], strict=True))
        shown = [f"{c.removeprefix(PARAM_PREFIX)}={values[c]}" for c in varying[alg] if values[c] != ""]
        labels.append(f"{alg} {', '.join(shown)}" if shown else str(alg))
    return pd.Series(labels, index=frame.index, dtype=object)


def _values_per_dataset(frame, columns):
    """(algorithm, DataFrame datasets x ``columns``: how many values each parameter takes
    on that algorithm's rows of the dataset), per algorithm in order of appearance."""
    for alg, sub in frame.groupby("algorithm", sort=False):
        yield alg, sub.groupby("dataset", sort=False)[columns].nunique()


def dataset_dependent(frame):
    """{algorithm: [``param_`` columns]}: the parameters that take one value per dataset
    but differ between datasets (``params_for``), which :func:`configuration_labels`
    leaves out of the labels."""
    columns = [c for c in frame.columns if c.startswith(PARAM_PREFIX)]
    out = {}
    for alg, counts in _values_per_dataset(frame, columns):
        sub = frame[frame["algorithm"] == alg]
        out[alg] = [c for c in columns if (counts[c] <= 1).all() and sub[c].nunique() > 1]
    return out
