"""The metric kernel (knnx._kernels.metrics) against a brute-force NumPy oracle.

The oracle computes every reduced distance in float64 the way the module docstring
of knnx.neighbors.metrics defines it, term by term in feature order (so the values
are the kernel's bit for bit; the libm power through math.pow, as numba calls it),
and orders each row by (reduced distance, index) with a stable argsort, the row's
own index left out in leave-one-out. Every path of the kernel is reached: reference
tiles of 8 and 64 and the default, the sampled first threshold and none (k at least
the sample), compactions with ties at the threshold (integer data of few values),
minkowski's screen by integer powers (p = 3) and by floor/ceil powers (p = 2.5) and
its early abandoning (p = 40), missing values and nominal codes (heom, hvdm, vdm,
gower, and codes unseen in training), precomputed distances; queries and
leave-one-out. SciPy's cdist checks
the definitions of the numeric metrics (distances, to rounding).
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import cdist

from knnx import kneighbors
from knnx._kernels import metrics as K
from knnx.neighbors.metrics import fit_metric

_POW = np.frompyfunc(math.pow, 2, 1)


def _reduced(M, R, Q):
    """Reduced distances (m, n) from the prepared queries Q to the prepared references R."""
    if M.code == K.PRECOMPUTED:
        return Q.copy()
    m, n, d = Q.shape[0], R.shape[0], R.shape[1]
    if M.code <= K.HAMMING:
        D = np.zeros((m, n))
        for t in range(d):
            diff = np.abs(Q[:, t, None] - R[None, :, t])
            if M.code == K.HAMMING:
                term = (Q[:, t, None] != R[None, :, t]).astype(float)
            elif M.code == K.MINKOWSKI:
                term = _POW(diff, M.power).astype(float)
            else:
                term = diff
            D = np.maximum(D, term) if M.code == K.CHEBYSHEV else D + term
        return D
    D = np.zeros((m, n))
    W = np.zeros((m, n))
    for t in range(d):
        q, r = Q[:, t, None], R[None, :, t]
        missing = np.isnan(q) | np.isnan(r)
        nominal = M.kinds[t] == K.NOMINAL
        with np.errstate(invalid="ignore"):
            if nominal and M.code == K.HVDM:
                nv = M.n_vals[t]
                a = np.minimum(np.nan_to_num(q, nan=0).astype(np.intp), nv - 1)
                b = np.minimum(np.nan_to_num(r, nan=0).astype(np.intp), nv - 1)
                term = M.vd[M.vd_off[t] + a * nv + b]
            elif nominal:
                term = (q != r).astype(float)
            else:
                term = np.abs(q - r) / M.scale[t]
                if M.code != K.GOWER:
                    term = term * term
        if M.code == K.GOWER:
            D = D + np.where(missing, 0.0, term)
            W = W + np.where(missing, 0.0, 1.0)
        else:
            D = D + np.where(missing, 1.0, term)
    if M.code == K.GOWER:
        with np.errstate(invalid="ignore", divide="ignore"):
            D = np.where(W > 0, D / W, 1.0)
    return D


def _oracle(M, R, Q, k, loo, rows=None):
    """The k nearest of the rows Q[rows] (all rows if None); leave-one-out when ``loo``
    (Q is R, each row's own index left out)."""
    rows = np.arange(Q.shape[0]) if rows is None else rows
    D = _reduced(M, R, Q[rows])
    if loo:
        D[np.arange(len(rows)), rows] = np.inf
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, order, 1), order


def _kernel(M, R, Q, k, loo, tile):
    m, n = Q.shape[0], R.shape[0]
    dist, ind = np.empty((m, k)), np.empty((m, k), dtype=np.intp)
    if M.code == K.PRECOMPUTED:
        R, RT = np.empty((n, 0)), np.empty((0, n))
    else:
        RT = np.ascontiguousarray(R.T)
    K.metric_select_rows(
        M.code, Q, R, RT, np.arange(m), loo, M.power, M.kinds, M.scale, M.vd, M.vd_off, M.n_vals,
        tile, dist, ind,
    )  # fmt: skip
    return dist, ind


def _assert_same(got, want):
    assert_array_equal(got[1], want[1])
    assert_array_equal(got[0].view(np.int64), want[0].view(np.int64))  # bit for bit


def _data(metric, kind, n, m, d, rng):
    """(X, queries, y, nominal, metric_params) for one case."""
    y = rng.integers(0, 3, n)
    if kind == "coarse":  # few distinct values: ties everywhere, also at the threshold
        X, Qx = rng.integers(0, 2, (n, d)).astype(float), rng.integers(0, 2, (m, d)).astype(float)
    elif kind == "integer" or metric in ("hamming", "vdm"):
        X, Qx = rng.integers(0, 4, (n, d)).astype(float), rng.integers(0, 5, (m, d)).astype(float)
    else:
        X, Qx = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    nominal, params = None, None
    if metric in ("heom", "hvdm", "gower"):
        nominal = list(range(0, d, 2))
        X[:, nominal] = rng.integers(0, 3, (n, len(nominal)))
        Qx[:, nominal] = rng.integers(0, 4, (m, len(nominal)))  # code 3: unseen in training
    if metric in ("heom", "hvdm", "gower", "vdm"):
        X[rng.random(X.shape) < 0.15] = np.nan
        Qx[rng.random(Qx.shape) < 0.15] = np.nan
        if metric == "gower":
            X[0, :] = np.nan  # a row without any attribute in common: distance 1
    if metric == "minkowski3":
        params = {"p": 3}
    elif metric == "minkowski25":
        params = {"p": 2.5}
    elif metric == "minkowski40":  # above the screen's powers: early abandoning
        params = {"p": 40}
    if metric == "precomputed":
        A = rng.integers(0, 4, (n, d)).astype(float)
        B = rng.integers(0, 4, (m, d)).astype(float)
        X, Qx = cdist(A, A, "cityblock"), cdist(B, A, "cityblock")
    return X, Qx, y, nominal, params


METRICS = [
    "manhattan",
    "chebyshev",
    "minkowski3",
    "minkowski25",
    "minkowski40",
    "hamming",
    "heom",
    "hvdm",
    "vdm",
    "gower",
    "precomputed",
]


def _fit(metric, X, y, nominal, params):
    name = "minkowski" if metric.startswith("minkowski") else metric
    return fit_metric(name, X, y, nominal=nominal, metric_params=params)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("kind", ["coarse", "integer", "normal"])
def test_kernel_paths_match_the_oracle(metric, kind):
    # n = 700: with k = 1 and 5 the first threshold comes from the sample of 128
    # references (coarse data: many references tie with it, so the candidates
    # overflow and are compacted); with k = 150 there is no sample, the first tile
    # fills the candidates and compactions set the threshold.
    rng = np.random.default_rng(METRICS.index(metric) * 10 + len(kind))
    X, Qx, y, nominal, params = _data(metric, kind, 700, 40, 5, rng)
    M = _fit(metric, X, y, nominal, params)
    R, Q = M.prepare(X), M.prepare(Qx)
    rows = rng.choice(700, 60, replace=False)
    for loo in (True, False):
        for k in (1, 5, 150):
            if loo:
                want = _oracle(M, R, R, k, True, rows)
            else:
                want = _oracle(M, R, Q, k, False)
            for tile in (8, 64, 0):
                if loo:
                    got = _kernel(M, R, R, k, True, tile)
                    got = (got[0][rows], got[1][rows])
                else:
                    got = _kernel(M, R, Q, k, False, tile)
                _assert_same(got, want)


@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors_public_path(metric):
    # Through kneighbors (fit, prepare, _metric_exact): leave-one-out and queries,
    # reduced distances and distances.
    rng = np.random.default_rng(7)
    X, Qx, y, nominal, params = _data(metric, "integer", 300, 30, 4, rng)
    name = "minkowski" if metric.startswith("minkowski") else metric
    M = _fit(metric, X, y, nominal, params)
    R = M.prepare(X)
    for queries, loo in ((None, True), (Qx, False)):
        Q = R if loo else M.prepare(Qx)
        want = _oracle(M, R, Q, 7, loo)
        kw = {"metric": name, "metric_params": params, "nominal": nominal, "y": y}
        got = kneighbors(X, 7, queries, **kw)
        _assert_same(got, want)
        dist, ind = kneighbors(X, 7, queries, squared=False, **kw)
        assert_array_equal(ind, want[1])
        assert_array_equal(dist, M.distance(want[0]))


@pytest.mark.parametrize(
    "metric,scipy_metric,kwargs",
    [("manhattan", "cityblock", {}), ("chebyshev", "chebyshev", {}), ("minkowski", "minkowski", {"p": 3}),
     ("minkowski", "minkowski", {"p": 2.5}), ("hamming", "hamming", {})],
)  # fmt: skip
def test_numeric_definitions_agree_with_scipy(metric, scipy_metric, kwargs):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, (200, 6)).astype(float) if metric == "hamming" else rng.standard_normal((200, 6))
    Qx = X[:20] + (0 if metric == "hamming" else 0.25)
    params = {"p": kwargs["p"]} if metric == "minkowski" else None
    dist, ind = kneighbors(X, 200, Qx, metric=metric, metric_params=params, squared=False)
    want = cdist(Qx, X, scipy_metric, **kwargs)
    assert_allclose(dist, np.take_along_axis(want, ind, 1), rtol=1e-12)
    # Every row lists every reference once, in non-decreasing distance.
    assert (np.sort(ind, 1) == np.arange(200)).all()
    assert (np.diff(dist, axis=1) >= 0).all()


def test_minkowski_screen_near_ties_and_tiny_differences():
    # The screen's bound must hold where |q - r| ** p is subnormal or rounds in the
    # last bit: references a few ulps apart and differences around 1e-110.
    rng = np.random.default_rng(11)
    base = rng.standard_normal((1, 3))
    X = np.vstack(
        [base + rng.integers(-3, 4, (400, 3)) * np.spacing(1.0), base + 1e-110 * rng.random((400, 3))]
    )
    X = np.vstack([X, rng.standard_normal((200, 3))])
    for p in (3, 2.5, 7):
        M = fit_metric("minkowski", X, metric_params={"p": p})
        rows = np.r_[0:1000:7, 1000:1000]
        want = _oracle(M, X, X, 12, True, rows)
        for tile in (8, 0):
            got = _kernel(M, X, X, 12, True, tile)
            _assert_same((got[0][rows], got[1][rows]), want)
