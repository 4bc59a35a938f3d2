"""The built-in steps that knnx defines itself (the others are scikit-learn's classes,
named in :data:`knnx.steps.STEPS`)."""

from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

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
