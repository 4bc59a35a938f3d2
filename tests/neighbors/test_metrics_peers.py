"""knnx's heom, hvdm and gower beside two other implementations: distython 0.0.3
(HEOM, HVDM as Python callables) and gower 0.1.2 (gower_matrix). Each agreement is
asserted on the data where the definitions coincide; each disagreement is asserted
as it is (one test per difference, with the smallest input showing it), so that a
new release that changes one shows here. Skipped when the package is not installed."""

import warnings

import numpy as np
import pytest
from metric_oracles import mixed_data
from numpy.testing import assert_allclose, assert_array_equal

from knnx import kneighbors


def _knnx_matrix(X, Q, metric, **kw):
    """knnx's full matrix of reduced distances (every reference: k = n_samples), or of
    the leave-one-out graph (Q None; the diagonal 0)."""
    n = X.shape[0]
    red, ind = kneighbors(X, n if Q is not None else n - 1, Q, metric=metric, **kw)
    out = np.zeros((n if Q is None else Q.shape[0], n))
    np.put_along_axis(out, ind, red, 1)
    return out


def _pairwise(fn, Q, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.array([[fn(q, r) for r in X] for q in Q])


def _heom_data(seed):
    """mixed_data without its constant column (a zero range; see the test for it):
    numeric columns 0, 2, 4 (4 never present in training), nominal 1, 3, 5; NaNs;
    queries outside the training ranges and with unseen codes; many zeros."""
    X, y, Q, _ = mixed_data(seed, 60, 15)
    keep = [0, 1, 2, 3, 5, 6]
    return X[:, keep], y, Q[:, keep], [1, 3, 5]


# --- distython: HEOM ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_distython_heom_agrees_without_zero_as_missing(seed):
    distython = pytest.importorskip("distython")
    X, _, Q, nominal = _heom_data(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmax of the all-missing column
        theirs = distython.HEOM(X, nominal, nan_equivalents=[np.nan])
    # distython returns sum d_a^2 (no square root): knnx's reduced distance
    assert_allclose(_pairwise(theirs.heom, Q, X), _knnx_matrix(X, Q, "heom", nominal=nominal), rtol=1e-12)
    loo = _pairwise(theirs.heom, X, X)
    np.fill_diagonal(loo, 0.0)  # a row with a missing value is at distance > 0 from itself
    assert_allclose(loo, _knnx_matrix(X, None, "heom", nominal=nominal), rtol=1e-12)


def test_distython_heom_default_counts_zero_as_missing():
    distython = pytest.importorskip("distython")
    X = np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 0.0]])  # column 1 nominal
    q = np.array([[0.0, 0.0]])
    theirs = distython.HEOM(X, [1])  # nan_equivalents=[np.nan, 0] by default
    # knnx: |0 - 2| / 4 = 0.5 and codes 0 != 1: 0.25 + 1; distython: both values 0 are "missing"
    assert _knnx_matrix(X, q, "heom", nominal=[1])[0, 1] == 1.25
    assert theirs.heom(q[0], X[1]) == 2.0
    # even a row and itself: two zeros are two missing values
    assert theirs.heom(q[0], q[0]) == 2.0


def test_distython_needs_a_nominal_column():
    distython = pytest.importorskip("distython")
    X = np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 5.0]])
    with pytest.raises(IndexError, match="arrays used as indices must be of integer"):
        distython.HEOM(X, [], nan_equivalents=[np.nan]).heom(X[0], X[1])
    with pytest.raises(IndexError, match="arrays used as indices must be of integer"):
        distython.HVDM(np.c_[X, [0, 1, 1]], [2], [], nan_equivalents=[np.nan]).hvdm(X[0], X[1])


def test_distython_heom_zero_range_divides_by_zero():
    distython = pytest.importorskip("distython")
    X = np.array([[1.0, 5.0, 1.0], [2.0, 5.0, 1.0], [3.0, 5.0, 1.0]])  # column 1 constant; 2 nominal
    theirs = distython.HEOM(X, [2], nan_equivalents=[np.nan])
    q = np.array([[1.0, 7.0, 1.0]])
    # knnx: range 0 counts as 1: 0 + (7 - 5)^2 = 4 to row 0; 0.25 + 0 between rows 0 and 1
    assert _knnx_matrix(X, q, "heom", nominal=[2])[0, 0] == 4.0
    assert _knnx_matrix(X, None, "heom", nominal=[2])[0, 1] == 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(theirs.heom(X[0], X[1]))  # 0 / 0
        assert theirs.heom(q[0], X[0]) == np.inf  # 2 / 0


# --- distython: HVDM ----------------------------------------------------------------------


def _distython_hvdm(distython, X, y, nominal):
    """distython's HVDM takes the labels as a column of X; rows passed to hvdm() carry
    that column too, set to the same value in both so that it adds 0 (see the test of
    the label column). Without a nominal column distython fails (see that test): a
    constant nominal column (code 1, its vdm 0) is added then."""
    d = X.shape[1]
    pad = [] if len(nominal) else [1.0]  # column d when there
    cols = np.c_[X, np.ones((X.shape[0], len(pad))), y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # it casts a NaN code to int
        h = distython.HVDM(cols, [d + len(pad)], list(nominal) or [d], nan_equivalents=[np.nan])

    def fn(a, b):
        return h.hvdm(np.r_[a, pad, 1.0], np.r_[b, pad, 1.0])

    return fn


def test_distython_hvdm_agrees_on_numeric_attributes_with_unit_sigma():
    distython = pytest.importorskip("distython")
    rng = np.random.default_rng(3)
    # each column: half c - 1, half c + 1 (mean c, population sigma exactly 1), NaNs after
    X = np.where(np.arange(40)[:, None] % 2 == 0, -1.0, 1.0) + np.array([0.0, 5.0, -2.0])
    X = np.take_along_axis(X, rng.permuted(np.tile(np.arange(40)[:, None], 3), axis=0), 0)
    # missing values in pairs that keep each column's present values balanced
    X = np.vstack(
        [X, [[np.nan, 4.0, -1.0], [np.nan, 6.0, -3.0], [-1.0, np.nan, np.nan], [1.0, np.nan, np.nan]]]
    )
    assert_allclose(np.nanstd(X, axis=0), 1.0, rtol=0, atol=0)
    y = rng.integers(0, 2, 44)
    Q = rng.integers(-3, 8, (10, 3)).astype(float)
    Q[rng.random(Q.shape) < 0.2] = np.nan
    fn = _distython_hvdm(distython, X, y, [])
    assert_allclose(_pairwise(fn, Q, X), _knnx_matrix(X, Q, "hvdm", y=y), rtol=1e-12)
    loo = _pairwise(fn, X, X)
    np.fill_diagonal(loo, 0.0)
    assert_allclose(loo, _knnx_matrix(X, None, "hvdm", y=y), rtol=1e-12)


def test_distython_hvdm_numeric_divisor_is_four_variances():
    distython = pytest.importorskip("distython")
    X = np.array([[0.0], [2.0], [4.0], [6.0]])  # sigma = sqrt(5), variance 5
    y = np.array([0, 1, 0, 1])
    fn = _distython_hvdm(distython, X, y, [])
    q = np.array([[1.0]])
    ours = _knnx_matrix(X, q, "hvdm", y=y)[0, 0]
    assert ours == pytest.approx((1 / (4 * np.sqrt(5))) ** 2, rel=1e-15)  # Wilson & Martinez: 4 sigma
    assert fn(q[0], X[0]) == pytest.approx((1 / (4 * 5)) ** 2, rel=1e-15)  # distython: 4 * np.nanvar
    assert fn(q[0], X[0]) == pytest.approx(ours / 5, rel=1e-12)


def test_hvdm_divides_a_constant_columns_difference_by_one():
    """A column constant in the training rows (sigma 0): its 4 sigma counts as 1, so the
    term is (q - r)^2 (the docs had read as if sigma counted as 1, a divisor of 4).
    Hand-worked: column 0 all 1.0, column 1 sigma = sqrt(5) as above."""
    X = np.array([[1.0, 0.0], [1.0, 2.0], [1.0, 4.0], [1.0, 6.0]])
    y = np.array([0, 1, 0, 1])
    Q = np.array([[1.5, 1.0], [100.0, 0.0]])
    expected = np.array(
        [
            [(0.5**2 + (abs(1.0 - r) / (4 * np.sqrt(5))) ** 2) for r in X[:, 1]],
            [(99.0**2 + (abs(0.0 - r) / (4 * np.sqrt(5))) ** 2) for r in X[:, 1]],
        ]
    )
    assert_allclose(_knnx_matrix(X, Q, "hvdm", y=y), expected, rtol=1e-14)


@pytest.mark.parametrize("seed", [0, 1])
def test_distython_hvdm_nominal_term_two_classes(seed):
    # distython's nominal term is (sum_c |P_axc - P_ayc|)^2 (normalized_diff, Wilson &
    # Martinez's N1, squared), knnx's sum_c (P_axc - P_ayc)^2 (N2 squared, the paper's
    # HVDM). With two classes the differences are +-t: N1^2 = 4 t^2 = 2 * N2^2. A missing
    # value adds 1 in both. So distython = 2 * knnx - (number of missing attributes).
    distython = pytest.importorskip("distython")
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (50, 3)).astype(float)
    X[rng.random(X.shape) < 0.15] = np.nan  # NaNs in training too: counted alike
    Q = rng.integers(0, 3, (12, 3)).astype(float)  # only codes seen in training (see below)
    Q[rng.random(Q.shape) < 0.15] = np.nan
    y = rng.integers(0, 2, 50)
    ours = _knnx_matrix(X, Q, "vdm", y=y)
    missing = (np.isnan(Q)[:, None, :] | np.isnan(X)[None, :, :]).sum(-1)
    theirs = _pairwise(_distython_hvdm(distython, X, y, [0, 1, 2]), Q, X)
    assert_allclose(theirs, 2 * ours - missing, rtol=1e-12, atol=1e-15)
    assert (np.abs(theirs - ours) > 1e-3).any()


def test_distython_hvdm_nominal_term_three_classes():
    distython = pytest.importorskip("distython")
    X = np.array([[0.0], [1.0], [1.0]])
    y = np.array([0, 1, 2])  # P(.|0) = (1, 0, 0), P(.|1) = (0, 1/2, 1/2)
    fn = _distython_hvdm(distython, X, y, [0])
    assert _knnx_matrix(X, None, "vdm", y=y)[0, 1] == 1.5  # 1 + 1/4 + 1/4
    assert fn(X[0], X[1]) == 4.0  # (1 + 1/2 + 1/2)^2


def test_distython_hvdm_unseen_nominal_value_raises():
    distython = pytest.importorskip("distython")
    X = np.array([[0.0], [1.0], [1.0]])
    y = np.array([0, 1, 1])
    fn = _distython_hvdm(distython, X, y, [0])
    # knnx: P(c | 2) = 0 for every class: 1^2 to value 0, 1^2 to value 1
    assert_array_equal(_knnx_matrix(X, np.array([[2.0]]), "vdm", y=y), [[1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="truth value of an empty array"):
        fn(np.array([2.0]), X[0])


def test_distython_hvdm_label_column_is_an_attribute():
    # distython reads the class from a column of X and computes hvdm() over every column
    # of the rows it is given, the label column included (as a numeric attribute).
    distython = pytest.importorskip("distython")
    X = np.array([[0.0], [1.0], [1.0], [0.0]])
    y = np.array([0, 1, 1, 1])
    h = distython.HVDM(np.c_[X, y], [1], [0], nan_equivalents=[np.nan])
    same = h.hvdm(np.r_[X[0], 1.0], np.r_[X[3], 1.0])
    assert same == 0.0 == _knnx_matrix(X, None, "vdm", y=y)[0, 3]
    assert h.hvdm(np.r_[X[0], 0.0], np.r_[X[3], 1.0]) > 0.0  # the rows' labels differ


def test_distython_hvdm_zero_variance_divides_by_zero():
    distython = pytest.importorskip("distython")
    X = np.array([[3.0], [3.0], [3.0]])
    y = np.array([0, 1, 0])
    fn = _distython_hvdm(distython, X, y, [])
    assert _knnx_matrix(X, np.array([[5.0]]), "hvdm", y=y)[0, 0] == 4.0  # divisor 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert fn(np.array([5.0]), X[0]) == np.inf
        assert np.isnan(fn(X[0], X[1]))


# --- gower ---------------------------------------------------------------------------------


def _gower_data(seed, n=60, m=15):
    """Positive numeric columns (0, 2), nominal 1; queries inside the training ranges."""
    rng = np.random.default_rng(seed)

    def draw(rows):
        return np.c_[
            rng.integers(1, 6, rows), rng.integers(0, 3, rows), rng.integers(2, 9, rows) * 0.5
        ].astype(float)

    X, Q = draw(n), draw(m)
    X[0], X[1] = [1, 0, 1.0], [5, 2, 4.0]  # the ranges' ends in the training rows
    return X, Q, np.array([False, True, False])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gower_package_agrees_without_missing_values(seed):
    gower = pytest.importorskip("gower")
    X, Q, cat = _gower_data(seed)
    ours = _knnx_matrix(X, Q, "gower", nominal=[1])
    theirs = gower.gower_matrix(Q, X, cat_features=cat)
    assert theirs.dtype == np.float32  # float32 arithmetic: agreement to float32's precision
    assert_allclose(theirs, ours, rtol=1e-6, atol=1e-7)
    theirs = gower.gower_matrix(X, cat_features=cat)
    assert_allclose(theirs, _knnx_matrix(X, None, "gower", nominal=[1]), rtol=1e-6, atol=1e-7)


def test_gower_package_missing_values_are_not_left_out():
    gower = pytest.importorskip("gower")
    X = np.array([[1.0, 0.0], [3.0, 1.0], [5.0, 1.0]])  # column 1 nominal
    cat = np.array([False, True])
    q = np.array([[np.nan, 1.0], [2.0, np.nan]])
    ours = _knnx_matrix(X, q, "gower", nominal=[1])
    # knnx: the missing attribute is left out of both sums
    assert_array_equal(ours, [[1.0, 0.0, 0.0], [0.25, 0.25, 0.75]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        theirs = gower.gower_matrix(q, X, cat_features=cat)
    assert np.isnan(theirs[0]).all()  # a missing numeric value: NaN distances
    # a missing nominal value counts as a mismatch, over all attributes
    assert_allclose(theirs[1], [(0.25 + 1) / 2, (0.25 + 1) / 2, (0.75 + 1) / 2], rtol=1e-6)


def test_gower_package_ranges_include_the_queries():
    gower = pytest.importorskip("gower")
    X, Q, cat = _gower_data(0)
    Q = Q.copy()
    Q[0, 0] = 9.0  # outside the training range 1..5
    ours = _knnx_matrix(X, Q, "gower", nominal=[1])
    theirs = gower.gower_matrix(Q, X, cat_features=cat)
    # knnx: range 4 (training rows); gower: range 8 (training rows and queries), so
    # every numeric term of column 0 is halved, for every query
    expected = ours.copy()
    col0 = np.abs(Q[:, :1] - X[:, 0][None, :]) / 4
    expected -= col0 / 3 - col0 / 2 / 3
    assert_allclose(theirs, expected, rtol=1e-6, atol=1e-7)
    assert not np.allclose(theirs[1:], ours[1:], rtol=1e-3)  # the other queries move too


def test_gower_package_column_with_max_zero_adds_nothing():
    gower = pytest.importorskip("gower")
    X = np.array([[-3.0, 1.0], [-1.0, 2.0], [0.0, 3.0]])  # column 0's maximum is 0
    cat = np.array([False, False])
    ours = _knnx_matrix(X, None, "gower")
    # knnx: |-3 - 0| / 3 = 1 and |1 - 3| / 2 = 1: distance 1 between rows 0 and 2
    assert ours[0, 2] == 1.0
    theirs = gower.gower_matrix(X, cat_features=cat)  # it scales by the maximum, 0 here
    assert theirs[0, 2] == pytest.approx(0.5, rel=1e-6)


def test_gower_package_equal_row_counts_take_a_symmetric_shortcut():
    gower = pytest.importorskip("gower")
    X, Q, cat = _gower_data(1, n=15, m=15)
    theirs = gower.gower_matrix(Q, X, cat_features=cat)
    # the same rows with one query repeated (16 != 15 rows; the ranges are unchanged)
    full = gower.gower_matrix(np.vstack([Q, Q[:1]]), X, cat_features=cat)[:15]
    ours = _knnx_matrix(X, Q, "gower", nominal=[1])
    assert_allclose(full, ours, rtol=1e-6, atol=1e-7)
    upper = np.triu_indices(15)
    assert_allclose(theirs[upper], ours[upper], rtol=1e-6, atol=1e-7)
    # below the diagonal it returns d(Q[j], X[i]) for entry (i, j)
    lower = np.tril_indices(15, -1)
    assert_allclose(theirs[lower], ours.T[lower], rtol=1e-6, atol=1e-7)
    assert not np.allclose(theirs[lower], ours[lower], rtol=1e-3)
