"""Numeric extremes (issue 7): every estimator gives finite outputs or a one-line ValueError.

Situations: pure reciprocal neighbourhoods (well-separated classes), identical and
conflicting duplicated rows, k = n - 1 and k = n, one feature, 10^5 sparse features,
feature scales of 1e150 and 1e-150, a class of one example, and string labels. Every
output (predict_proba, decision_function, curves, reported values, LpO risks) must be
finite; predictions are checked exactly where they are obvious.
"""

import numpy as np
import pytest

from knnx import GNNBClassifier, KNNClassifier, UNNClassifier
from knnx.errors import DataError
from knnx.estimators.gnnb import normalize_rows
from knnx.estimators.knn import KNNLpoClassifier
from knnx.estimators.unn import UNNCVClassifier
from knnx.estimators.weighted import WeightedMetricNN
from knnx.lpo.risk import lpo_risk, select_k

LOSSES = ["exp", "squared", "logistic", "binary_logistic", "matsushita", "amari"]
PHIS = ["squared", "logistic", "binary_logistic", "matsushita"]
SCHEMES = ["l2", "cdm", "cw", "pw", "cpw"]


def _estimators():
    """(id, factory(k)) for every estimator setting under test."""
    out = [(f"knn-{w}", lambda k, w=w: KNNClassifier(k=k, weights=w)) for w in ("uniform", "distance")]
    out.append(("knn_lpo", lambda k: KNNLpoClassifier(p=2, k_max=k)))
    for loss in LOSSES:
        for chooser in ("boosting", "lazy"):
            out.append(
                (
                    f"unn-{loss}-{chooser}",
                    lambda k, loss=loss, ch=chooser: UNNClassifier(k=k, loss=loss, chooser=ch),
                )
            )
    out.append(
        ("unn-exp-normalized-exact", lambda k: UNNClassifier(k=k, smoothing="normalized", step="exact"))
    )
    out.append(("unn-logistic-fast", lambda k: UNNClassifier(k=k, loss="logistic", step="fast")))
    out.append(("unn_cv", lambda k: UNNCVClassifier(k=k, n_thetas=3)))
    for phi in PHIS:
        for chooser in ("lazy", "largest_delta"):
            for s in (1, 2):
                out.append(
                    (
                        f"gnnb-{phi}-{chooser}-s{s}",
                        lambda k, phi=phi, ch=chooser, s=s: GNNBClassifier(
                            k=k, phi=phi, chooser=ch, n_splits=s
                        ),
                    )
                )
    for scheme in SCHEMES:
        out.append((f"wm-{scheme}", lambda k, sc=scheme: WeightedMetricNN(scheme=sc, k=k, max_epochs=5)))
    for scheme in ("l2", "cdm", "pw"):
        out.append(
            (
                f"wm-{scheme}-l1",
                lambda k, sc=scheme: WeightedMetricNN(scheme=sc, k=k, base="l1", max_epochs=5),
            )
        )
    return out


ESTIMATORS = _estimators()
IDS = [name for name, _ in ESTIMATORS]


def _clusters(n_per_class=12, d=4, seed=0, spread=0.01):
    """Two tight clusters at -10 and +10 on every axis: every reciprocal neighbourhood is pure."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-10.0, spread, (n_per_class, d)), rng.normal(10.0, spread, (n_per_class, d))])
    y = np.repeat([0, 1], n_per_class)
    return X, y


def _perfect_setting(name, est):
    """GNNB with the squared phi (Table 1 row A) on one block: its weights turn negative
    and some examples get an alpha against their own class, so eq. (16) over all
    training rows (the default) misses 2 of these 48 points; voting among the
    leveraged rows (alpha != 0) classifies them perfectly, as this test asks."""
    if name.startswith("gnnb-squared") and name.endswith("-s1"):
        est.set_params(prototypes="leveraged")
    return est


def _assert_finite(est, X):
    """Every numeric output of a fitted estimator is finite; returns predict(X)."""
    pred = est.predict(X)
    assert pred.shape == (len(X),)
    assert set(np.unique(pred)) <= set(est.classes_)
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), len(est.classes_))
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert (proba >= 0).all() and (proba <= 1).all()
    if hasattr(est, "decision_function"):
        assert np.isfinite(est.decision_function(X)).all()
    for name in ("alpha_", "weights_", "class_weights_", "prototype_weights_", "lpo_risk_", "cv_error_"):
        value = getattr(est, name, None)
        if value is not None and name != "cv_error_":
            assert np.isfinite(value).all(), name
    for name in ("curve_", "reported_"):
        for key, value in getattr(est, name, {}).items():
            assert np.isfinite(np.asarray(value, dtype=float)).all(), f"{name}[{key}]"
    return pred


def _one_line_error(excinfo, *parts):
    msg = str(excinfo.value)
    assert "\n" not in msg
    for part in parts:
        assert part in msg, (part, msg)


# --------------------------------------------------------------------------------------
# Pure reciprocal neighbourhoods: well-separated classes are classified perfectly.


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_pure_neighbourhoods_classified_perfectly(name, make):
    X, y = _clusters()
    Q, yq = _clusters(seed=1)
    est = _perfect_setting(name, make(3)).fit(X, y)
    assert_pred = _assert_finite(est, np.vstack([X, Q]))
    np.testing.assert_array_equal(assert_pred, np.r_[y, yq])


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("step", ["closed_form", "fast", "exact"])
@pytest.mark.parametrize("smoothing", [True, "normalized", False])
def test_unn_pure_every_step_and_smoothing(loss, step, smoothing):
    X, y = _clusters()
    est = UNNClassifier(k=3, loss=loss, step=step, smoothing=smoothing).fit(X, y)
    pred = _assert_finite(est, X)
    if smoothing is False and loss != "squared":
        # every step infinite and skipped, whatever the step rule: the constant rule
        assert est.n_infinite_ > 0 and not est.alpha_.any()
        np.testing.assert_array_equal(pred, 0)  # equal counts: the smallest class
        np.testing.assert_allclose(est.predict_proba(X), 0.5)
    elif not (loss == "squared" and step == "fast"):  # eq. (26) on squared: no descent (docs, Piro)
        np.testing.assert_array_equal(pred, y)
        assert est.n_infinite_ == 0


def test_unn_exact_step_without_smoothing_reports_infinite_roots():
    """The exact root of a pure neighbourhood is infinite: skipped, never the point where
    the weights underflow to 0."""
    X, y = _clusters()
    params = dict(k=3, smoothing=False, chooser="lazy")
    # examples in nobody's neighbourhood (n_j = 0) take delta = 0; every other step is infinite
    n_infinite = UNNClassifier(step="closed_form", **params).fit(X, y).n_infinite_
    assert n_infinite > len(X) // 2
    for loss in ("exp", "logistic", "matsushita", "amari"):
        est = UNNClassifier(loss=loss, step="exact", **params).fit(X, y)
        assert est.n_infinite_ == n_infinite and not est.alpha_.any()


# --------------------------------------------------------------------------------------
# Identical points and conflicting duplicates.


def _identical():
    return np.ones((12, 3)), np.repeat([0, 1], 6)


def _conflicting():
    rng = np.random.default_rng(2)
    X0 = rng.normal(size=(8, 2))
    y0 = rng.integers(0, 2, 8)
    return np.vstack([X0, X0, X0]), np.r_[y0, 1 - y0, y0]


@pytest.mark.parametrize("data", [_identical, _conflicting], ids=["identical", "conflicting"])
@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_identical_and_conflicting_rows(data, name, make):
    X, y = data()
    est = make(3).fit(X, y)
    pred = _assert_finite(est, X)
    if data is _identical and name.startswith("knn-"):
        # every neighbour at distance 0, ordered by index: the first three are class 0
        np.testing.assert_array_equal(pred, 0)


def test_lpo_identical_and_conflicting_rows():
    for X, y in (_identical(), _conflicting()):
        for weights in ("uniform", "distance"):
            risk = lpo_risk(X, y, 2, 5, weights=weights)
            assert np.isfinite(risk).all() and (risk >= 0).all() and (risk <= 1).all()


def test_lpo_identical_rows_value():
    # All neighbours tie at distance 0 and are taken by index; the risk must still lie
    # in [0, 1] and k = 1 on two balanced classes of identical points is a coin flip
    # on average over the splits.
    X, y = _identical()
    k, risk = select_k(X, y, 1, 5)
    assert 1 <= k <= 5 and np.isfinite(risk).all()


# --------------------------------------------------------------------------------------
# k = n - 1 (allowed) and k = n (refused where the training neighbourhoods are leave-one-out).


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_k_n_minus_one(name, make):
    X, y = _clusters(n_per_class=5)
    n = len(X)
    if name == "knn_lpo":
        est = KNNLpoClassifier(p=1, k_max=n - 1).fit(X, y)
        assert est.k_max_ == n - 1
    else:
        est = make(n - 1).fit(X, y)
    _assert_finite(est, X)


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_k_n(name, make):
    X, y = _clusters(n_per_class=5)
    n = len(X)
    if name.startswith(("unn", "gnnb")):
        with pytest.raises(ValueError) as excinfo:
            make(n).fit(X, y)
        _one_line_error(excinfo, f"k={n} must be below the training set size (n_samples = {n})")
        return
    if name == "knn_lpo":  # k_max is capped at n - p
        assert KNNLpoClassifier(p=2, k_max=n).fit(X, y).k_max_ == n - 2
        return
    est = make(n).fit(X, y)  # kNN and CW/PW/CPW: every training point votes
    pred = _assert_finite(est, X)
    if not name.endswith("distance"):
        np.testing.assert_allclose(est.predict_proba(X), 0.5)  # 5 votes each
    np.testing.assert_array_equal(pred, y)  # the tie goes to the nearest neighbour's class
    with pytest.raises(ValueError) as excinfo:
        make(n + 1).fit(X, y)
    _one_line_error(excinfo, f"k={n + 1} exceeds the training set size (n_samples = {n})")


def test_lpo_k_and_p_at_the_limits():
    X, y = _clusters(n_per_class=5)
    n = len(X)
    for weights in ("uniform", "distance"):
        assert np.isfinite(lpo_risk(X, y, 1, n - 1, weights=weights)).all()
        assert np.isfinite(lpo_risk(X, y, n - 1, 1, weights=weights)).all()
    with pytest.raises(ValueError) as excinfo:
        lpo_risk(X, y, 1, n)
    _one_line_error(excinfo, "k_max: must be between 1 and", f"got {n}")
    with pytest.raises(ValueError) as excinfo:
        lpo_risk(X, y, n, 1)
    _one_line_error(excinfo, "p: must be between 1 and", f"got {n}")


# --------------------------------------------------------------------------------------
# One feature; 10^5 sparse features.


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_one_feature(name, make):
    X, y = _clusters(d=1)
    est = make(3)
    if name.endswith("-s2"):
        with pytest.raises(ValueError) as excinfo:
            est.fit(X, y)
        _one_line_error(excinfo, "n_splits=2 exceeds the number of features (1)")
        return
    pred = _assert_finite(est.fit(X, y), X)
    np.testing.assert_array_equal(pred, y)


def _sparse_wide(n=60, d=100_000, seed=3):
    """Mostly zeros: a class marker column and two random ones in the class's block."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = np.zeros((n, d))
    for i in range(n):
        X[i, y[i]] = 1.0
        X[i, 2 + 50 * y[i] + rng.choice(50, 2, replace=False)] = 1.0
    return X, y


WIDE = [
    ("knn-distance", lambda: KNNClassifier(k=3, weights="distance")),
    ("unn", lambda: UNNClassifier(k=3)),
    ("gnnb-s1", lambda: GNNBClassifier(k=3, chooser="largest_delta")),
    ("gnnb-s2", lambda: GNNBClassifier(k=3, n_splits=2)),
    ("wm-cpw", lambda: WeightedMetricNN(scheme="cpw", max_epochs=2)),
    ("wm-pw-l1", lambda: WeightedMetricNN(scheme="pw", base="l1", max_epochs=2)),
]


@pytest.mark.parametrize("name,make", WIDE, ids=[w[0] for w in WIDE])
def test_sparse_wide_data(name, make):
    X, y = _sparse_wide()
    pred = _assert_finite(make().fit(X, y), X)
    if name != "gnnb-s2":  # the second block holds no class marker
        np.testing.assert_array_equal(pred, y)


def test_lpo_sparse_wide_data():
    X, y = _sparse_wide()
    for weights in ("uniform", "distance"):
        risk = lpo_risk(X, y, 3, 5, weights=weights)
        assert np.isfinite(risk).all()
        assert risk[0] == 0.0  # the nearest neighbour always shares the class marker


# --------------------------------------------------------------------------------------
# Huge and tiny feature scales: refused in one line, or handled (GNNB's block norms).


@pytest.mark.parametrize("scale,words", [(1e150, "too far apart"), (1e-150, "too close together")])
@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_extreme_scales(scale, words, name, make):
    X, y = _clusters()
    if name.endswith("-s2"):  # each block L2-normalised: any finite scale is fine
        pred = _assert_finite(make(3).fit(X * scale, y), X * scale)
        np.testing.assert_array_equal(pred, y)
        return
    with pytest.raises(DataError) as excinfo:
        make(3).fit(X * scale, y)
    _one_line_error(excinfo, words, "rescale the data")
    assert isinstance(excinfo.value, ValueError)
    # fitted on ordinary data, queries at the extreme scale are refused too
    est = make(3).fit(X, y)
    for method in ("predict", "predict_proba"):
        with pytest.raises(DataError) as excinfo:
            getattr(est, method)(X * 1e160)
        _one_line_error(excinfo, "too far apart", "rescale the data")


@pytest.mark.parametrize("scale,words", [(1e150, "too far apart"), (1e-150, "too close together")])
def test_lpo_extreme_scales(scale, words):
    X, y = _clusters()
    for weights in ("uniform", "distance"):
        with pytest.raises(DataError) as excinfo:
            lpo_risk(X * scale, y, 2, 3, weights=weights)
        _one_line_error(excinfo, words, "rescale the data")
        with pytest.raises(DataError):
            select_k(X * scale, y, 2, 3, weights=weights)


def test_block_norms_at_the_float64_limits():
    X = np.array([[3e300, 4e300], [3e-310, 4e-310], [0.0, 0.0], [-1.0, 0.0]])
    np.testing.assert_allclose(normalize_rows(X, "l2"), [[0.6, 0.8], [0.6, 0.8], [0, 0], [-1, 0]], rtol=1e-12)
    np.testing.assert_allclose(
        normalize_rows(X, "l1"), [[3 / 7, 4 / 7], [3 / 7, 4 / 7], [0, 0], [-1, 0]], rtol=1e-12
    )


def test_cdm_weights_stay_finite_for_tiny_class_deviations():
    rng = np.random.default_rng(4)
    X, y = _clusters()
    # a feature that varies by 1e-200 within each class, and by 1e-155 overall
    tiny = np.r_[np.zeros(12), np.full(12, 1e-155)] + rng.integers(0, 2, 24) * 1e-200
    X = np.column_stack([X, tiny])
    for scheme in SCHEMES:
        est = WeightedMetricNN(scheme=scheme, init="cdm", max_epochs=5).fit(X, y)
        np.testing.assert_array_equal(_assert_finite(est, X), y)
        assert np.isfinite(est.mu_).all()


# --------------------------------------------------------------------------------------
# A class with a single example; string labels.


def _singleton_class():
    X, y = _clusters()
    return np.vstack([X, [[10.0, -10.0, 10.0, -10.0]]]), np.r_[y, 2]


def _singleton_binary():
    X, y = _clusters()
    return X[:13], y[:13]  # class 1 appears once


@pytest.mark.parametrize("data", [_singleton_class, _singleton_binary], ids=["three-classes", "two-classes"])
@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_class_with_a_single_example(data, name, make):
    X, y = data()
    est = make(3).fit(X, y)
    pred = _assert_finite(est, X)
    if name.startswith("knn-"):
        # k = 1: every training row is its own nearest neighbour
        np.testing.assert_array_equal(make(1).fit(X, y).predict(X), y)
    if name.startswith(("knn-", "wm-")):
        # k = 3: the rows of the 12-row cluster of class 0 vote among themselves. (UNN
        # and GNNB may leverage a neighbour of the singleton against its own class to
        # classify the singleton: no obvious prediction there.)
        np.testing.assert_array_equal(pred[:12], 0)


@pytest.mark.parametrize("data", [_singleton_class, _singleton_binary], ids=["three-classes", "two-classes"])
def test_lpo_class_with_a_single_example(data):
    X, y = data()
    assert np.isfinite(lpo_risk(X, y, 2, 5)).all()
    if len(np.unique(y)) == 2:
        assert np.isfinite(lpo_risk(X, y, 2, 5, weights="distance")).all()
    else:
        with pytest.raises(DataError) as excinfo:
            lpo_risk(X, y, 2, 5, weights="distance")
        _one_line_error(excinfo, "supports two classes, y has 3")


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=IDS)
def test_string_labels(name, make):
    X, y = _clusters()
    labels = np.array(["far", "near"])[y]
    est = _perfect_setting(name, make(3)).fit(X, labels)
    assert list(est.classes_) == ["far", "near"]
    np.testing.assert_array_equal(_assert_finite(est, X), labels)


def test_lpo_string_labels():
    X, y = _clusters()
    labels = np.array(["far", "near"])[y]
    for weights in ("uniform", "distance"):
        k, risk = select_k(X, labels, 2, 5, weights=weights)
        np.testing.assert_array_equal(risk, select_k(X, y, 2, 5, weights=weights)[1])
        assert k == 1 and risk[0] == 0.0
