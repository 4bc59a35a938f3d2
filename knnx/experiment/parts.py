"""What a cell fits on: the training and test parts of a split of a dataset, and the
estimator given what the run supplies (its neighbour graphs, the dataset's column
types).

The parts (:func:`split_parts`) are rows of X, standardised with the training part's
statistics if the spec asks: ``preprocess: {standardize: numeric}`` scales the columns
of numeric attributes (:meth:`knnx.datasets.Dataset.numeric_columns`), ``true`` every
column but those of nominal category codes (``Dataset.nominal``, from ``categorical:
keep``); a missing value (``missing: keep``) is left out of the statistics and stays
NaN (:mod:`knnx.evaluation.preprocess`). A precomputed distance matrix
(``Dataset.precomputed``) is sliced on both axes, the training part ``X[train][:,
train]`` (distances between training rows) and the test part ``X[test][:, train]``
(from each test row to the training rows), as scikit-learn's ``metric="precomputed"``
takes them; it is never standardised.
"""

import numpy as np

from knnx.evaluation.preprocess import standardize


def split_parts(ds, train, test, how):
    """``(X_train, y_train, X_test, y_test)`` of rows ``train`` and ``test`` of ``ds``,
    standardised as ``how`` (the spec's ``preprocess.standardize``) says; see the module
    docstring."""
    if ds.precomputed:
        return ds.X[np.ix_(train, train)], ds.y[train], ds.X[np.ix_(test, train)], ds.y[test]
    X_train, X_test = ds.X[train], ds.X[test]
    if how == "numeric" or (how and ds.nominal):
        cols = ds.numeric_columns() if how == "numeric" else _not_nominal(ds)
        X_train, X_test = X_train.copy(), X_test.copy()
        X_train[:, cols], X_test[:, cols] = standardize(X_train[:, cols], X_test[:, cols])
    elif how:
        X_train, X_test = standardize(X_train, X_test)
    return X_train, ds.y[train], X_test, ds.y[test]


def _not_nominal(ds):
    """Boolean mask of the columns of X that do not hold nominal codes."""
    mask = np.ones(ds.X.shape[1], dtype=bool)
    mask[list(ds.nominal)] = False
    return mask


def data_checksum(ds):
    """The checksum of a dataset's arrays, and of its column types where it has any (a
    dataset without them hashes as before they existed)."""
    from knnx.experiment.provenance import array_checksum

    if not (ds.nominal or ds.precomputed):
        return array_checksum(ds.X, ds.y)
    return array_checksum(ds.X, ds.y, np.asarray(ds.nominal, dtype=np.intp), np.asarray([ds.precomputed]))


def with_types(estimator, ds):
    """``estimator``, given the dataset's nominal columns (``ds.nominal``, as a list of
    column indices of X: a cell's training and test parts have the dataset's columns)
    as its ``nominal`` parameter when it has one left at None and ``ds`` has nominal
    columns (``categorical: keep``); unchanged otherwise."""
    if ds.nominal:
        try:
            params = estimator.get_params(deep=False)
        except Exception:  # noqa: BLE001 - not ours to judge here: fit will say
            return estimator
        if "nominal" in params and params["nominal"] is None:
            estimator.set_params(nominal=[int(j) for j in ds.nominal])
    return estimator


def with_graphs(estimator, store):
    """``estimator``, given ``store`` as its ``graphs`` parameter when it has one left at
    None (knnx's neighbour estimators; any estimator may opt in the same way) and
    ``store`` is not None; unchanged otherwise."""
    if store is not None:
        try:
            params = estimator.get_params(deep=False)
        except Exception:  # noqa: BLE001 - not ours to judge here: fit will say
            return estimator
        if "graphs" in params and params["graphs"] is None:
            estimator.set_params(graphs=store)
    return estimator
