"""A contestant's steps and classifier fitted as one estimator, and the store that shares
step fits between the cells of a process.

:class:`Chain` follows imbalanced-learn's ``Pipeline``: at ``fit`` each step is fitted
on what the steps before it gave, in order — a transformer (``fit`` then ``transform``)
maps the rows, a sampler or selection (``fit_resample``) replaces them — and the
classifier is fitted on the result; at ``predict`` the transformers map the queries and
the samplers do nothing. Every step is fitted on the training rows only (the runner
fits a chain on a training part, or on the inner training folds under ``tune:``).

:class:`StepFits` keeps fitted steps for reuse: a step with the same parameters, after
the same upstream steps, fitted on the same rows (compared by a BLAKE2b digest of their
bytes) is fitted once and its output reused, so a grid over the classifier's ``k``
behind NCA fits NCA once per training part. Only the steps of knnx, scikit-learn and
imbalanced-learn are shared (their fits are functions of their parameters and rows: the
spec's seed is their ``random_state``); a step class of one's own is fitted anew in
every chain, since its code may keep state between calls. A reused fit costs nothing
in the chain's own time; ``shared_seconds_`` is what those fits took when they were
made, so that a cell can record its fit time as if alone.
"""

import inspect
import json
import time
from collections import OrderedDict

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if

from knnx.neighbors.graphs import fingerprint

# The packages whose step fits are shared between chains (see the module docstring).
SHARED_PACKAGES = ("knnx", "sklearn", "imblearn")

# Per-class retention is reported for at most this many classes (a cell reports at most
# knnx.evaluation.scoring.MAX_REPORTED quantities).
MAX_CLASS_ROWS = 50


class StepFits:
    """Fitted steps kept for reuse within ``max_bytes`` (their outputs' bytes), least
    recently used dropped first (the last one stored is always kept).

    Attributes
    ----------
    hits, misses : int
        Step fits answered from the store, and made.
    reused_seconds : float
        What the fits answered from the store took when they were made, added up (a
        cell reads it before and after its fits: its own time as if alone).
    """

    def __init__(self, max_bytes=256 * 2**20):
        self.max_bytes = max_bytes
        self._fits = OrderedDict()
        self._nbytes = 0
        self.hits = 0
        self.misses = 0
        self.reused_seconds = 0.0

    def __len__(self):
        return len(self._fits)

    def get(self, key):
        """``(fitted step, X out, y out, seconds)`` stored under ``key``, or None."""
        found = self._fits.get(key)
        if found is None:
            self.misses += 1
            return None
        self._fits.move_to_end(key)
        self.hits += 1
        self.reused_seconds += found[3]
        return found

    def put(self, key, value):
        X, y = value[1], value[2]
        self._fits[key] = value
        self._nbytes += X.nbytes + y.nbytes
        while self._nbytes > self.max_bytes and len(self._fits) > 1:
            _, (_, X_old, y_old, _) = self._fits.popitem(last=False)
            self._nbytes -= X_old.nbytes + y_old.nbytes

    def clear(self):
        self._fits.clear()
        self._nbytes = 0


def _shared(step):
    return type(step).__module__.partition(".")[0] in SHARED_PACKAGES


def _identity(step):
    """A step's class and parameters as text: two steps of one identity fitted on the
    same rows give the same fit (a parameter without a JSON form, such as an object,
    is written with its repr, which differs between objects)."""
    params = step.get_params(deep=False)
    text = json.dumps(params, sort_keys=True, default=repr)
    return f"{type(step).__module__}:{type(step).__qualname__}{text}"


def as_rows(X, name, method, n_rows=None):
    """``X`` as a C-contiguous float64 array of 2 dimensions; ValueError naming the step
    and the method that returned it otherwise (a sparse matrix, another shape, an
    infinity; ``n_rows``: the rows it must have)."""
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        raise ValueError(f"step {name}: {method} returned a sparse matrix; the classifier takes dense rows")
    try:
        X = np.ascontiguousarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"step {name}: {method} returned values that are not numbers ({exc})") from None
    if X.ndim != 2:
        raise ValueError(f"step {name}: {method} returned an array of shape {X.shape}, not rows of features")
    if n_rows is not None and X.shape[0] != n_rows:
        raise ValueError(
            f"step {name}: {method} returned {X.shape[0]} rows for {n_rows}; a transformer keeps every row (a "
            "step that removes or adds rows is a sampler, with fit_resample)"
        )
    if np.isinf(X).any():
        raise ValueError(f"step {name}: {method} returned an infinite value")
    return X


def _fit_step(name, step, X, y):
    """``(X out, y out)`` of one step fitted on ``(X, y)``."""
    if callable(getattr(step, "fit_resample", None)):
        out = step.fit_resample(X, y)
        if not isinstance(out, tuple) or len(out) != 2:
            raise ValueError(f"step {name}: fit_resample returned {type(out).__name__}, not (X, y)")
        X_out = as_rows(out[0], name, "fit_resample")
        y_out = np.asarray(out[1])
        if y_out.shape != (X_out.shape[0],):
            raise ValueError(
                f"step {name}: fit_resample returned {X_out.shape[0]} rows and labels of shape {y_out.shape}"
            )
        if X_out.shape[0] == 0:
            raise ValueError(f"step {name}: fit_resample kept no rows")
        if X_out.shape[1] != X.shape[1]:
            raise ValueError(
                f"step {name}: fit_resample returned {X_out.shape[1]} features for {X.shape[1]}; a sampler keeps "
                "the features"
            )
        known = np.unique(y)
        if not np.isin(y_out, known).all():
            raise ValueError(
                f"step {name}: fit_resample returned labels that are not among those it was given"
            )
        return X_out, y_out.astype(y.dtype, copy=False)
    step.fit(X, y)  # what fit returns is ignored, as scikit-learn's Pipeline ignores it
    return as_rows(step.transform(X), name, "transform", X.shape[0]), y


class Chain(BaseEstimator):
    """Steps then a classifier, fitted and applied as imbalanced-learn's ``Pipeline``
    (see the module docstring).

    Parameters
    ----------
    steps : sequence of (str, object)
        The steps in order, each ``(id, step)``: a transformer (``fit``, ``transform``) or
        a sampler (``fit_resample``).
    estimator : object
        The classifier, fitted on the rows the steps give.
    fits : StepFits or None
        Where step fits are shared (None: each chain fits its own).

    Attributes
    ----------
    steps_ : list of (str, object, bool)
        The fitted steps (shared ones included) and whether each is a sampler.
    n_train_ : int
        The rows ``fit`` was given.
    n_fit_ : int
        The rows the classifier was fitted on (after the samplers).
    class_retained_ : ndarray of float or None
        Per class of the training rows (their sorted labels: class code c), the share of
        its rows the classifier was fitted on; None when a sampler made rows of a class
        the training rows do not have.
    shared_seconds_ : float
        The seconds the reused step fits took when they were made.
    step_seconds_ : dict of str to float
        Each step's fit seconds (a reused fit's when it was made).
    """

    def __init__(self, steps=(), estimator=None, fits=None):
        self.steps = steps
        self.estimator = estimator
        self.fits = fits

    def components(self):
        """The objects a cell made: each step, then the classifier."""
        return [step for _, step in self.steps] + [self.estimator]

    def fit(self, X, y, progress=None):
        X, y = np.asarray(X), np.asarray(y)
        n_train = len(y)
        labels, train_counts = np.unique(y, return_counts=True)
        key = (fingerprint(X), fingerprint(y)) if self.fits is not None else None
        fitted, shared, step_seconds = [], 0.0, {}
        for name, step in self.steps:
            sampler = callable(getattr(step, "fit_resample", None))
            key = (key, _identity(step)) if key is not None and _shared(step) else None
            found = self.fits.get(key) if key is not None else None
            if found is None:
                t = time.perf_counter()
                X_out, y_out = _fit_step(name, step, X, y)
                seconds = time.perf_counter() - t
                if key is not None:
                    self.fits.put(key, (step, X_out, y_out, seconds))
                    X, y = X_out.copy(), y_out.copy()  # the stored output is never handed on
                else:
                    X, y = X_out, y_out
                fitted.append((name, step, sampler))
            else:
                step_fitted, X_out, y_out, seconds = found
                shared += seconds
                X, y = X_out.copy(), y_out.copy()
                fitted.append((name, step_fitted, sampler))
            step_seconds[name] = seconds
        self.steps_ = fitted
        self.step_seconds_ = step_seconds  # each step's fit (a shared one's when made)
        self.n_train_, self.n_fit_ = n_train, len(y)
        kept = np.searchsorted(labels, y) if len(y) and np.isin(y, labels).all() else None
        self.class_retained_ = (
            None if kept is None else np.bincount(kept, minlength=len(labels)) / train_counts
        )
        self.shared_seconds_ = shared
        kwargs = {}
        if progress is not None and "progress" in inspect.signature(self.estimator.fit).parameters:
            kwargs["progress"] = progress
        self.estimator.fit(X, y, **kwargs)
        return self

    def transform(self, X):
        """``X`` through the fitted transformers (the samplers act at fit only)."""
        for name, step, sampler in self.steps_:
            if not sampler:
                X = as_rows(step.transform(X), name, "transform", np.shape(X)[0])
        return X

    def predict(self, X):
        return self.estimator.predict(self.transform(X))

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X):
        return self.estimator.predict_proba(self.transform(X))

    @property
    def classes_(self):
        return self.estimator.classes_

    @property
    def curve_(self):
        return getattr(self.estimator, "curve_", None)

    def _learned(self):
        """``<step id>.objective`` and ``<step id>.n_iter`` of each step that reports an
        objective (a metric learner: :mod:`knnx.metric_learning`). Its fit time is in the
        cell's ``fit_seconds`` (a shared fit counted as it took when made), not among the
        values, which a rerun reproduces bit for bit."""
        out = {}
        for name, step, _ in getattr(self, "steps_", ()):
            objective = getattr(step, "objective_", None)
            if isinstance(objective, float | int) and not isinstance(objective, bool):
                out[f"{name}.objective"] = float(objective)
                out[f"{name}.n_iter"] = float(getattr(step, "n_iter_", np.nan))
        return out

    @property
    def reported_(self):
        """The classifier's ``reported_``, the quantities of the metric learners among the
        steps (:meth:`_learned`), and, when a step is a sampler or a selection,
        ``n_fit`` (the rows the classifier was fitted on), ``retained`` (n_fit /
        n_train) and, for at most :data:`MAX_CLASS_ROWS` classes, ``retained.<c>``: the
        share of class c's training rows (c: the class's code, its rank among the
        sorted labels of the training rows) the classifier was fitted on."""
        own = getattr(self.estimator, "reported_", None)
        if own is not None and not isinstance(own, dict):
            return own  # the cell refuses it as it refuses it of the classifier alone
        learned = self._learned()
        if not learned and not any(sampler for _, _, sampler in getattr(self, "steps_", ())):
            return own
        out = {**(own or {}), **learned}
        if not any(sampler for _, _, sampler in self.steps_):
            return out
        out["n_fit"] = float(self.n_fit_)
        out["retained"] = self.n_fit_ / self.n_train_
        if self.class_retained_ is not None and len(self.class_retained_) <= MAX_CLASS_ROWS:
            out.update({f"retained.{c}": float(r) for c, r in enumerate(self.class_retained_)})
        return out
