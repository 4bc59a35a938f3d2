"""The distances knnx searches under: their definitions, what they learn from the
training part, and the data they accept.

A metric is named by a string (:data:`METRIC_NAMES`) and *fitted* on the training part
(:func:`fit_metric`): ranges, standard deviations, variances, a covariance or VDM's
class-conditional frequencies come from the rows it is given, never from the rows it
is later asked about. The fitted :class:`Metric` is what :func:`knnx.kneighbors`
searches with; its ``checksum`` covers the name and every fitted statistic, so that a
:class:`knnx.GraphStore` shares a graph only between searches under the same distance.

Every search ranks a *reduced distance* (a monotone function of the distance, exact in
float64) and orders ties by reference index; ``Metric.distance`` turns reduced
distances into distances.

============  ==============================================  ==========================
metric        reduced distance (``q``, ``r``: two rows)         distance
============  ==============================================  ==========================
euclidean     sum (q - r)^2, feature order                      sqrt
seuclidean    euclidean's, between the rows divided by sigma    sqrt
mahalanobis   euclidean's, between the rows times L (L L' = VI) sqrt
cosine        euclidean's, between the rows divided by |row|    reduced / 2 (= 1 - cos)
manhattan     sum |q - r|                                       the same
chebyshev     max |q - r|                                       the same
minkowski     sum |q - r|^p (p = 1: manhattan, p = 2: euclidean) reduced^(1/p)
hamming       number of attributes with q != r                  reduced / d
heom          sum d_a^2 (Wilson & Martinez 1997)                sqrt
hvdm          sum d_a^2 (Wilson & Martinez 1997)                sqrt
vdm           hvdm with every attribute nominal                 sqrt
gower         sum delta_a d_a / sum delta_a (Gower 1971)         the same
precomputed   the given value                                   the same
============  ==============================================  ==========================

The statistics, fitted on the training rows: ``seuclidean``'s variances (ddof 1,
``metric_params={"V": ...}`` to give them; a zero variance counts as 1);
``mahalanobis``'s inverse covariance (ddof 1, or ``{"VI": ...}``; a singular covariance
is refused); the numeric attributes' ranges (max - min, heom and gower) and standard
deviations (ddof 0; hvdm divides by 4 sigma), a range or a 4 sigma of 0 counting as 1
(a column constant in the training rows: hvdm's divisor is then 1, not 4); hvdm's
and vdm's tables ``sum_c (P(c|x) - P(c|y))^2`` (the squared normalized_vdm, P counted on
the training rows; a value absent from them has P(c|x) = 0 for every class; codes
below :data:`MAX_CATEGORIES`). Numeric
differences are not clipped: a query outside the training range can have d_a > 1.

Missing values (NaN) are allowed by heom, hvdm and vdm (an attribute missing in either
row has d_a = 1) and gower (the attribute is left out of both sums; a pair without a
common attribute has distance 1); every other metric refuses them. Nominal attributes
(``nominal``: their column indices, values the category codes 0, 1, ...) are allowed by
heom, hvdm, gower (overlap: 0 if equal, else 1; hvdm: its table), vdm (every attribute
is nominal) and hamming; the numeric metrics refuse them unless
``metric_params={"onehot": True}`` asks them to see each nominal attribute as its
one-hot indicators, one per category seen in the training part (a category it lacks
has every indicator 0) -- the encoding ``categorical: onehot`` gives, fitted on the
training part, so that one dataset can be compared under numeric and mixed metrics.
"""

import hashlib
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from knnx._kernels import lazy
from knnx._kernels import metric_codes as codes
from knnx.errors import DataError

K = lazy("knnx._kernels.metrics")
_TERMS = lazy("knnx._kernels.metric_terms")

__all__ = ["METRIC_NAMES", "MetricInfo", "METRICS", "Metric", "fit_metric", "data_problem"]


@dataclass(frozen=True)
class MetricInfo:
    """What a metric accepts: nominal attributes, missing values, and whether its
    statistics use the class labels (hvdm, vdm)."""

    nominal: bool = False
    missing: bool = False
    uses_labels: bool = False
    params: tuple = ()  # the keys of metric_params it takes


METRICS = {
    "euclidean": MetricInfo(params=("onehot",)),
    "seuclidean": MetricInfo(params=("V", "onehot")),
    "mahalanobis": MetricInfo(params=("VI", "onehot")),
    "cosine": MetricInfo(params=("onehot",)),
    "manhattan": MetricInfo(params=("onehot",)),
    "cityblock": MetricInfo(params=("onehot",)),
    "chebyshev": MetricInfo(params=("onehot",)),
    "minkowski": MetricInfo(params=("p", "onehot")),
    "hamming": MetricInfo(nominal=True),
    "heom": MetricInfo(nominal=True, missing=True),
    "hvdm": MetricInfo(nominal=True, missing=True, uses_labels=True),
    "vdm": MetricInfo(nominal=True, missing=True, uses_labels=True),
    "gower": MetricInfo(nominal=True, missing=True),
    "precomputed": MetricInfo(),
}
METRIC_NAMES = tuple(METRICS)
# hvdm and vdm keep a (categories + 1)^2 table per nominal attribute: codes below this
# (8 MiB a table at most).
MAX_CATEGORIES = 1024
# The metrics whose numeric attributes may hold missing values / nominal codes.
MIXED = ("heom", "hvdm", "gower")


@dataclass(frozen=True, eq=False)
class Metric:
    """A metric fitted on a training part; see the module docstring.

    ``code``: 0 for the Euclidean search path (euclidean and the metrics reduced to it
    by a map of the rows), else a :mod:`knnx._kernels.metrics` code. The map: rows
    divided by ``divisor`` (seuclidean), times ``L`` (mahalanobis), divided by their
    norm (cosine). ``kinds``, ``scale``, ``vd``, ``vd_off``, ``n_vals``: the kernel's
    per-attribute arrays.
    """

    name: str
    code: int
    n_features: int
    nominal: tuple = ()
    power: float = 2.0
    divisor: np.ndarray | None = None
    L: np.ndarray | None = None
    kinds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    vd: np.ndarray = field(default_factory=lambda: np.zeros(0))
    vd_off: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    n_vals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    onehot: tuple = ()  # (column, categories seen in training) of the nominal columns a numeric metric encodes

    @property
    def info(self):
        return METRICS[self.name]

    @property
    def euclidean_path(self):
        """Whether the search runs the (screened) squared-Euclidean path on mapped rows."""
        return self.code == 0

    @property
    def checksum(self):
        """A digest of the name, the parameters and every fitted statistic."""
        h = hashlib.blake2b(digest_size=16)
        h.update(
            f"{self.name}|{self.code}|{self.n_features}|{self.nominal}|{self.power!r}|{self.onehot}".encode()
        )
        for a in (self.divisor, self.L, self.kinds, self.scale, self.vd, self.vd_off, self.n_vals):
            if a is not None:
                a = np.ascontiguousarray(a)
                h.update(f"{a.dtype.str}{a.shape}".encode())
                h.update(a.data)
        return h.hexdigest()

    def prepare(self, X, what="X"):
        """The rows the search kernels take: ``X`` checked against the metric (missing
        values, nominal codes) and mapped (seuclidean, mahalanobis, cosine); C-contiguous
        float64."""
        X = float_2d(X, what)
        if self.name == "precomputed":
            return _check_finite(X, what, self.name)
        if X.shape[1] != self.n_features:
            raise DataError(f"{what}: has {X.shape[1]} features, the metric was fitted on {self.n_features}")
        if not self.info.missing:
            _check_finite(X, what, self.name)
        else:
            _check_no_inf(X, what)
        if self.nominal:
            _check_codes(X, self.nominal, what)
        if self.onehot:
            X = _encode_onehot(X, self.onehot)
        if self.name == "cosine":
            check_squares(X, (), what, norms=True)  # the norms square the raw values
            return np.ascontiguousarray(X / check_nonzero_rows(X, what)[:, None])
        if self.divisor is not None:
            return np.ascontiguousarray(X / self.divisor)
        if self.L is not None:
            return np.ascontiguousarray(X @ self.L)
        return X

    def distance(self, reduced):
        """Distances from reduced distances (a new array)."""
        reduced = np.asarray(reduced, dtype=np.float64)
        if self.code == 0:
            return reduced / 2.0 if self.name == "cosine" else np.sqrt(reduced)
        if self.code in (codes.HEOM, codes.HVDM):
            return np.sqrt(reduced)
        if self.code == codes.MINKOWSKI:
            return reduced ** (1.0 / self.power)
        if self.code == codes.HAMMING:
            return reduced / self.n_features
        return reduced.copy()

    def __repr__(self):
        return f"Metric({self.name!r}, n_features={self.n_features}, nominal={list(self.nominal)})"


def float_2d(X, what):
    """``X`` as a C-contiguous 2-D float64 array with at least one column: the one
    conversion of knnx's searches, metrics and exact LpO (:class:`DataError` naming
    ``what`` otherwise). Values are not checked here: each metric has its rule."""
    try:
        A = np.ascontiguousarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what}: expected a numeric 2-D array ({exc})") from None
    if A.ndim != 2:
        raise DataError(f"{what}: expected a 2-D array (n_samples, n_features), got {A.ndim}-D")
    if A.shape[1] == 0:
        raise DataError(f"{what}: has no feature columns")
    return A


def _check_finite(X, what, name):
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        if np.isnan(X[r, c]):
            raise DataError(
                f"{what}: missing value (NaN) at row {r}, column {c}; metric '{name}' has no missing-value "
                f"rule (use heom, hvdm or gower, or drop or fill the missing values)"
            )
        raise DataError(f"{what}: non-finite value {X[r, c]} at row {r}, column {c}")
    return X


def _encode_onehot(X, onehot):
    """X with each nominal column (``onehot``: (column, categories seen in training)
    pairs) replaced by its indicators, one per category, in place; a code absent from
    the categories has every indicator 0."""
    blocks, start = [], 0
    for col, cats in onehot:
        blocks.append(X[:, start:col])
        blocks.append((X[:, col, None] == np.asarray(cats, dtype=np.float64)).astype(np.float64))
        start = col + 1
    blocks.append(X[:, start:])
    return np.ascontiguousarray(np.hstack(blocks))


def check_distances(D, what):
    """DataError naming the first negative entry of the precomputed distances ``D``
    (rows, then columns): a negative one would rank first. A dataset of distances is
    refused alike (:mod:`knnx.datasets.checks`)."""
    negative = np.argwhere(D < 0)
    if negative.size:
        r, c = (int(v) for v in negative[0])
        raise DataError(
            f"{what}: precomputed: Negative values in data: row {r} column {c} is {D[r, c]}; distances are >= 0"
        )


def _check_no_inf(X, what):
    """Refuse +-inf (NaN, a missing value, is the metric's to handle)."""
    bad = np.isinf(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(f"{what}: non-finite value {X[r, c]} at row {r}, column {c}")


def _check_codes(X, nominal, what):
    cols = X[:, list(nominal)]
    present = ~np.isnan(cols)
    bad = present & ((cols < 0) | (cols != np.floor(cols)) | ~np.isfinite(cols))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(
            f"{what}: nominal column {nominal[c]} holds {float(cols[r, c])!r} at row {r}; "
            "expected a category code 0, 1, 2, ..."
        )


def _nominal_columns(nominal, d):
    """``nominal`` (None, column indices or a boolean mask of length d) as sorted indices."""
    if nominal is None:
        return ()
    arr = np.asarray(nominal)
    if arr.dtype == bool:
        if arr.shape != (d,):
            raise DataError(f"nominal: a boolean mask needs {d} entries (one per feature), got {arr.shape}")
        return tuple(int(i) for i in np.flatnonzero(arr))
    cols = []
    for v in np.ravel(arr).tolist():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v < d:
            raise DataError(f"nominal: expected column indices in [0, {d}), got {v!r}")
        cols.append(int(v))
    return tuple(sorted(set(cols)))


def data_problem(metric, nominal, has_missing, where="", metric_params=None):
    """Why metric ``metric`` cannot run on data with these nominal columns (names or
    indices) and missing values (the first column holding one, or None): one line, or
    None. For spec validation."""
    info = METRICS[metric]
    at = f"{where}: " if where else ""
    if nominal and not info.nominal and not (metric_params or {}).get("onehot"):
        return (
            f"{at}column {nominal[0]!r} is nominal; metric '{metric}' takes numeric attributes only "
            "(use heom, hvdm, gower or hamming, metric_params: {onehot: true}, or categorical: onehot)"
        )
    if has_missing and not info.missing:
        return (
            f"{at}column {has_missing!r} has missing values; metric '{metric}' has no missing-value rule "
            "(use heom, hvdm or gower, or missing: drop_rows)"
        )
    return None


def check_metric_params(metric, metric_params):
    """One-line DataError for an unknown metric, unknown or invalid metric_params."""
    if metric not in METRICS:
        raise DataError(f"metric: expected one of {', '.join(METRIC_NAMES)}, got {metric!r}")
    params = dict(metric_params or {})
    extra = sorted(set(params) - set(METRICS[metric].params))
    if extra:
        takes = ", ".join(METRICS[metric].params) or "none"
        raise DataError(f"metric_params: metric '{metric}' takes {takes}, got {extra[0]!r}")
    if not isinstance(params.get("onehot", False), bool):
        raise DataError(f"metric_params: onehot must be true or false, got {params['onehot']!r}")
    if metric == "minkowski":
        p = params.get("p", 2.0)
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not (p >= 1) or math.isnan(p):
            raise DataError(f"metric_params: minkowski's p must be a number >= 1 (or inf), got {p!r}")
    return params


def fit_metric(metric, X, y=None, *, nominal=None, metric_params=None):
    """Fit ``metric`` on the training rows ``X`` (labels ``y``, class codes 0..C-1, for
    hvdm and vdm). ``nominal``: the columns holding category codes (indices or a
    boolean mask; vdm: every column). Returns a :class:`Metric`; DataError (one line)
    for data the metric cannot take or a statistic it cannot fit."""
    if isinstance(metric, Metric):
        return metric
    params = check_metric_params(metric, metric_params)
    X = float_2d(X, "X")
    d = X.shape[1]
    if metric == "precomputed":
        if X.shape[0] != d:
            raise DataError(
                f"X: metric 'precomputed' needs the square training distance matrix, got {X.shape}"
            )
        _check_finite(X, "X", metric)
        check_distances(X, "X")
        return Metric(metric, codes.PRECOMPUTED, d)
    cols = tuple(range(d)) if metric == "vdm" else _nominal_columns(nominal, d)
    info = METRICS[metric]
    if cols and params.pop("onehot", False):
        return _fit_onehot(metric, X, y, cols, params)
    params.pop("onehot", None)
    if cols and not info.nominal:
        raise DataError(
            f"nominal: column {cols[0]} is nominal; metric '{metric}' takes numeric attributes only "
            "(use heom, hvdm, gower or hamming, or metric_params={'onehot': True})"
        )
    if not info.missing:
        _check_finite(X, "X", metric)
    else:
        _check_no_inf(X, "X")
    if cols:
        _check_codes(X, cols, "X")
    if info.uses_labels and y is None:
        raise DataError(f"y: metric '{metric}' fits its tables on the class labels; none given")
    if metric in _SQUARING:
        check_squares(X, cols, "X", fitted=True, norms=metric == "cosine")
    return _FITTERS.get(metric, _fit_plain)(metric, X, y, cols, params)


# The metrics whose statistics or map square the raw values (hvdm's sigma, seuclidean's
# variances, mahalanobis's covariance, cosine's norms): the range rule is checked on the
# raw values, before they overflow or underflow (a sigma of inf made every distance inf).
_SQUARING = ("hvdm", "seuclidean", "mahalanobis", "cosine")
_MAX_VALUE, _MIN_VALUE = 1e150, 1e-140  # knnx.neighbors.search's range rule


def check_squares(X, cols, what, fitted=False, norms=False):
    """DataError (one line, asking to rescale) for values whose float64 squares would
    overflow or underflow, on the numeric columns of ``X`` (``cols``: the nominal ones;
    NaN left out): every value (``max |x| sqrt(d) <= 1e150``); with ``norms`` (cosine's),
    a row whose largest value is below 1e-140 without being 0 (its norm would be 0);
    for the rows a metric is ``fitted`` on, their spread, as
    :func:`knnx.neighbors.search.check_scale`."""
    num = np.delete(X, list(cols), axis=1) if cols else X
    if num.size == 0:
        return
    with np.errstate(all="ignore"):
        size = np.nanmax(np.abs(num), axis=1, initial=0.0)
    d = num.shape[1]
    if size.max() * math.sqrt(d) > _MAX_VALUE:
        raise DataError(
            f"{what}: values too large for float64 squares (max |x| = {size.max():.3g} over {d} features; needs "
            f"max |x| * sqrt(d) <= {_MAX_VALUE:g}); rescale the data"
        )
    tiny = np.flatnonzero((size > 0) & (size < _MIN_VALUE)) if norms else ()
    if len(tiny):
        raise DataError(
            f"{what}: row {int(tiny[0])}'s values are too small for float64 squares (max |x| = "
            f"{size[tiny[0]]:.3g}; needs >= {_MIN_VALUE:g} or all zeros); rescale the data"
        )
    if fitted and num.shape[0]:
        with np.errstate(all="ignore"):
            spread = np.nanmax(np.abs(num - np.nanmean(num, axis=0, keepdims=True)), initial=0.0)
        if 0 < spread < _MIN_VALUE:
            raise DataError(
                f"{what}: values too close together for float64 squared distances (max |x - mean| = "
                f"{spread:.3g}; needs >= {_MIN_VALUE:g} or all equal); rescale the data"
            )


def _fit_onehot(metric, X, y, cols, params):
    """A numeric metric on X with its nominal columns one-hot encoded (categories seen
    in these rows); the statistics are fitted on the encoded rows."""
    _check_finite(X, "X", metric)
    _check_codes(X, cols, "X")
    onehot = tuple((c, tuple(np.unique(X[:, c]).tolist())) for c in cols)
    inner = fit_metric(metric, _encode_onehot(X, onehot), y, metric_params=params)
    fields = {f: getattr(inner, f) for f in ("name", "code", "power", "divisor", "L")}
    return Metric(n_features=X.shape[1], nominal=cols, onehot=onehot, **fields)


def _fit_plain(metric, X, y, cols, params):
    d = X.shape[1]
    if metric in ("euclidean", "cosine"):
        return Metric(metric, 0, d)
    name = "manhattan" if metric == "cityblock" else metric
    code = {"manhattan": codes.MANHATTAN, "chebyshev": codes.CHEBYSHEV, "hamming": codes.HAMMING}[name]
    return Metric(name, code, d, nominal=cols)


def _fit_minkowski(metric, X, y, cols, params):
    p = float(params.get("p", 2.0))
    d = X.shape[1]
    if p == 1.0:
        return Metric("manhattan", codes.MANHATTAN, d)
    if p == 2.0:
        return Metric("euclidean", 0, d)
    if math.isinf(p):
        return Metric("chebyshev", codes.CHEBYSHEV, d)
    return Metric("minkowski", codes.MINKOWSKI, d, power=p)


def _fit_seuclidean(metric, X, y, cols, params):
    d = X.shape[1]
    if "V" in params:
        V = np.asarray(params["V"], dtype=np.float64).ravel()
        if V.shape != (d,) or not (np.isfinite(V).all() and (V > 0).all()):
            raise DataError(
                f"metric_params: seuclidean's V must hold {d} positive variances, got {params['V']!r}"
            )
    else:
        V = np.var(X, axis=0, ddof=1) if X.shape[0] > 1 else np.ones(d)
        V = np.where(V > 0, V, 1.0)
    return Metric(metric, 0, d, divisor=np.sqrt(V))


def _fit_mahalanobis(metric, X, y, cols, params):
    d = X.shape[1]
    if "VI" in params:
        VI = np.asarray(params["VI"], dtype=np.float64)
        if VI.shape != (d, d) or not np.isfinite(VI).all() or not np.allclose(VI, VI.T):
            raise DataError(f"metric_params: mahalanobis's VI must be a symmetric {d} x {d} matrix")
    else:
        if X.shape[0] <= d:
            raise DataError(
                f"X: mahalanobis needs more training rows than features to fit a covariance "
                f"({X.shape[0]} rows, {d} features); give VI in metric_params"
            )
        cov = np.atleast_2d(np.cov(X, rowvar=False, ddof=1))
        rank = np.linalg.matrix_rank(cov)
        if rank < d:
            raise DataError(
                f"X: the training part's covariance is singular (rank {rank} < {d} features); mahalanobis "
                "needs it invertible (drop collinear or constant columns, or give VI in metric_params)"
            )
        VI = np.linalg.inv(cov)
        VI = (VI + VI.T) / 2.0
    try:
        L = np.linalg.cholesky(VI)
    except np.linalg.LinAlgError:
        raise DataError("metric_params: mahalanobis's VI must be positive definite") from None
    return Metric(metric, 0, d, L=np.ascontiguousarray(L))


def _scales(X, cols, how):
    """Per-attribute divisors of the numeric attributes (1 for nominal ones and where
    the statistic is 0 or undefined): the range (``range``) or 4 standard deviations."""
    d = X.shape[1]
    scale = np.ones(d)
    for t in range(d):
        if t in cols:
            continue
        v = X[:, t]
        v = v[~np.isnan(v)]
        if v.size == 0:
            continue
        s = float(v.max() - v.min()) if how == "range" else 4.0 * float(v.std())
        if s > 0 and np.isfinite(s):
            scale[t] = s
    return scale


def _fit_mixed(metric, X, y, cols, params):
    d = X.shape[1]
    kinds = np.zeros(d, dtype=np.int64)
    kinds[list(cols)] = codes.NOMINAL
    code = {"heom": codes.HEOM, "hvdm": codes.HVDM, "vdm": codes.HVDM, "gower": codes.GOWER}[metric]
    scale = _scales(X, cols, "std" if code == codes.HVDM else "range")
    vd, vd_off, n_vals = np.zeros(0), np.zeros(d, dtype=np.intp), np.zeros(d, dtype=np.intp)
    if code == codes.HVDM and cols:
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise DataError(f"y: expected {X.shape[0]} class codes, got shape {y.shape}")
        y = np.ascontiguousarray(np.unique(y, return_inverse=True)[1], dtype=np.intp)  # any labels
        n_classes = int(y.max()) + 1 if y.size else 1
        tables = []
        offset = 0
        for t in cols:
            col = np.ascontiguousarray(X[:, t])
            top = np.nanmax(col) if np.isfinite(col).any() else -1.0
            if top >= MAX_CATEGORIES:
                raise DataError(
                    f"X: nominal column {t} holds the code {top:g}; {metric}'s tables take codes below "
                    f"{MAX_CATEGORIES} (is it a numeric column? declare it numeric, or use heom or gower)"
                )
            nv = int(top) + 2  # the codes seen, and the unseen value
            tables.append(_TERMS.vdm_table(col, y, nv, n_classes).ravel())
            vd_off[t], n_vals[t] = offset, nv
            offset += nv * nv
        vd = np.concatenate(tables)
    return Metric(
        metric, code, d, nominal=cols, kinds=kinds, scale=scale, vd=vd, vd_off=vd_off, n_vals=n_vals
    )


_FITTERS = {
    "minkowski": _fit_minkowski,
    "seuclidean": _fit_seuclidean,
    "mahalanobis": _fit_mahalanobis,
    "heom": _fit_mixed,
    "hvdm": _fit_mixed,
    "vdm": _fit_mixed,
    "gower": _fit_mixed,
}


def check_nonzero_rows(X, what, raises=True):
    """The Euclidean norm of each row of ``X``; DataError naming ``what`` and the first
    row that is all zeros (the cosine distance divides by it), unless not ``raises``.
    Validation reads the norms of each split as the kernels would see it."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    if raises and X.shape[0] and not (norms > 0).all():
        row = int(np.flatnonzero(~(norms > 0))[0])
        raise DataError(f"{what}: row {row} is all zeros; the cosine distance needs a non-zero row")
    return norms
