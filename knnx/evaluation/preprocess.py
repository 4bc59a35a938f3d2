"""Preprocessing fitted on training rows only: standardisation.

``z = (x / divisor - mean) / scale`` per column, with ``mean`` and ``scale`` the mean
and standard deviation (ddof 0) of the training rows divided by ``divisor``:

* ``divisor`` is 1 for every column whose mean and standard deviation are finite in
  float64 and whose deviations from the mean are not all below 1e-150, so ``z`` is
  exactly NumPy's ``(x - mean) / std`` there (division by 1 is exact). A column whose
  statistics overflow (sums of squares beyond 1.8e308: values from about 1e154 on),
  or whose squared deviations underflow, is divided first by its largest absolute
  training value, so every finite column standardises to finite values of unit
  spread: ``[1e308, -1e308]`` gives ``[1, -1]``, ``[1e-200, 3e-200]`` gives
  ``[-1, 1]``, never zeros or NaN.
* A column without spread on the training rows (constant) keeps ``scale`` 1: it
  stays constant (0 after centring).
* Rows standardised with another part's statistics (the test rows) can overflow if
  they lie astronomically far from the training rows; that is a DataError naming the
  column, not a silent infinity.

Missing values (NaN, kept by the loaders' ``missing: keep``) are left out of a
column's statistics, computed on its other training values as above (a column with
none keeps mean 0 and scale 1), and stay NaN once standardised. Data without NaN take
exactly the computation above.

No floating-point warnings are printed: overflows are expected and handled here.
"""

import numpy as np

from knnx.errors import DataError

# Below this, squared deviations are subnormal or 0 in float64 and the standard deviation
# loses its digits: such a column is divided by its largest absolute value first.
_TINY = 1e-150


def fit_standardizer(X):
    """``(divisor, mean, scale)``, three arrays of shape (n_features,), from rows ``X``
    (a column's NaN left out of its statistics)."""
    X = np.asarray(X, dtype=np.float64)
    missing = np.isnan(X).any(axis=0)
    if missing.any():
        divisor, mean, scale = _fit_finite(X[:, ~missing])
        out = [np.ones(X.shape[1]), np.zeros(X.shape[1]), np.ones(X.shape[1])]
        for stat, part in zip(out, (divisor, mean, scale), strict=True):
            stat[~missing] = part
        for j in np.flatnonzero(missing):
            col = X[:, j]
            present = col[~np.isnan(col)]
            if present.size:
                for stat, part in zip(out, _fit_finite(present[:, None]), strict=True):
                    stat[j] = part[0]
        return tuple(out)
    return _fit_finite(X)


def _fit_finite(X):
    divisor = np.ones(X.shape[1])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        spread = np.abs(X - mean).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    # Statistics that overflow, or deviations so small that their squares underflow.
    wide = ~(np.isfinite(mean) & np.isfinite(scale)) | ((spread > 0) & (spread < _TINY))
    if wide.any():
        top = np.abs(X[:, wide]).max(axis=0)
        divisor[wide] = np.where(top > 0, top, 1.0)
        scaled = X[:, wide] / divisor[wide]
        mean[wide] = scaled.mean(axis=0)
        scale[wide] = scaled.std(axis=0)
    scale[scale == 0] = 1.0
    return divisor, mean, scale


def apply_standardizer(standardizer, X, what="X"):
    """Standardise rows ``X`` with a :func:`fit_standardizer` result; DataError if a value
    overflows float64 (``what`` names the rows in the message)."""
    divisor, mean, scale = standardizer
    with np.errstate(over="ignore", invalid="ignore"):
        Z = (np.asarray(X, dtype=np.float64) / divisor - mean) / scale
    bad = ~np.isfinite(Z)
    if bad.any():
        bad &= ~np.isnan(np.asarray(X, dtype=np.float64))  # a missing value stays missing
    if bad.any():
        column = int(np.flatnonzero(bad.any(axis=0))[0])
        raise DataError(
            f"{what}: standardised values of feature {column} overflow float64 (the rows lie too far from the "
            "training rows' mean for their spread); rescale the data"
        )
    return Z


def standardize(X_train, X_test):
    """``(Z_train, Z_test)``: both parts standardised with the training part's statistics."""
    standardizer = fit_standardizer(X_train)
    return apply_standardizer(standardizer, X_train, "training rows"), apply_standardizer(
        standardizer, X_test, "test rows"
    )


def split_parts(ds, train, test, how):
    """``(X_train, y_train, X_test, y_test)`` of rows ``train`` and ``test`` of ``ds``,
    standardised as ``how`` (the spec's ``preprocess.standardize``: True, ``"numeric"``
    or False) says with the training part's statistics: every column, the numeric
    columns only (``"numeric"``, or True on a dataset with nominal codes, which are
    never scaled); a distance matrix's parts are its blocks, never scaled."""
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
