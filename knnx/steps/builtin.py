"""The built-in steps that knnx defines itself (the others are scikit-learn's classes,
named in :data:`knnx.steps.STEPS`)."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

# method -> the scikit-learn scaler that computes it (import path: imported when fitted)
_SCALERS = {
    "standard": ("sklearn.preprocessing", "StandardScaler"),
    "minmax": ("sklearn.preprocessing", "MinMaxScaler"),
    "robust": ("sklearn.preprocessing", "RobustScaler"),
}


class Scale(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scaling of every column, fitted on the training rows.

    Parameters
    ----------
    method : {"standard", "minmax", "robust"}, default "standard"
        ``standard``: mean 0 and standard deviation 1 (ddof 0), scikit-learn's
        ``StandardScaler``; ``minmax``: the training range to [0, 1] (KEEL's
        normalisation), ``MinMaxScaler``; ``robust``: median 0 and interquartile range 1,
        ``RobustScaler``. The results are those classes' own, bit for bit. A column
        without spread keeps scale 1. Missing values (NaN) are left out of the statistics
        and stay NaN.

    Attributes
    ----------
    scaler_ : the fitted scikit-learn scaler.
    """

    _parameter_constraints = {"method": [StrOptions(set(_SCALERS))]}

    def __init__(self, method="standard"):
        self.method = method

    def fit(self, X, y=None):
        self._validate_params()
        import importlib

        module, name = _SCALERS[self.method]
        self.scaler_ = getattr(importlib.import_module(module), name)().fit(X)
        self.n_features_in_ = self.scaler_.n_features_in_
        return self

    def transform(self, X):
        check_is_fitted(self, "scaler_")
        return self.scaler_.transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class Encode(TransformerMixin, BaseEstimator):
    """One-hot indicators of the nominal columns, fitted on the training rows; the other
    columns kept as they are, in place.

    Column j of X becomes, if nominal, one indicator column per category present in
    column j of the training rows (sorted codes), 1.0 where the row holds that code and
    0.0 elsewhere (a code absent from the training rows, or a missing value, gives 0 in
    every indicator: scikit-learn's ``OneHotEncoder(handle_unknown="ignore")``); else
    the column itself (missing values stay NaN).

    Parameters
    ----------
    nominal : list of int or None, default None
        The columns of X holding category codes (0, 1, ...). The experiment runner sets it
        to the dataset's nominal columns (``categorical: keep``) when the step comes
        first and it is left at None; None or empty: every column is kept.

    Attributes
    ----------
    categories_ : dict of int to ndarray
        The codes seen in the training rows, per nominal column.
    n_features_in_ : int
    """

    _parameter_constraints = {"nominal": [list, None]}

    def __init__(self, nominal=None):
        self.nominal = nominal

    def fit(self, X, y=None):
        self._validate_params()
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=np.float64)
        columns = sorted({int(j) for j in self.nominal or []})
        if columns and not (0 <= columns[0] and columns[-1] < X.shape[1]):
            raise ValueError(f"nominal: columns must be in 0..{X.shape[1] - 1}, got {self.nominal!r}")
        self.categories_ = {j: np.unique(X[~np.isnan(X[:, j]), j]) for j in columns}
        return self

    def transform(self, X):
        check_is_fitted(self, "categories_")
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=np.float64, reset=False)
        parts = []
        for j in range(X.shape[1]):
            codes = self.categories_.get(j)
            parts.append(X[:, [j]] if codes is None else (X[:, [j]] == codes[None, :]).astype(np.float64))
        return np.hstack(parts) if parts else X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
