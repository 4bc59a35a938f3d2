"""Probability and posterior metrics against scikit-learn, SciPy and hand-worked values."""

import numpy as np
import pytest
from conftest import RTOL
from numpy.testing import assert_allclose
from scipy.spatial.distance import jensenshannon
from scipy.special import rel_entr
from sklearn import metrics as skm

from knnx.evaluation.metrics import (
    KAPPAS,
    LOWER_IS_BETTER,
    METRIC_INPUT,
    METRICS,
    brier,
    f_measure_auc,
    js,
    log_loss,
    rejection_auc,
    sym_kl,
    threshold_curves,
)


def random_proba(rng, n, n_classes, zeros=0.0):
    """Dirichlet rows; with ``zeros`` > 0 that fraction of entries is set to 0 (rows renormalised)."""
    proba = rng.dirichlet(np.ones(n_classes), size=n)
    if zeros:
        proba[rng.random(proba.shape) < zeros] = 0.0
        proba[proba.sum(1) == 0, 0] = 1.0
        proba /= proba.sum(1, keepdims=True)
    return proba


# -- registry ---------------------------------------------------------------------------


def test_every_metric_has_an_input_kind():
    assert set(METRIC_INPUT) == set(METRICS)
    assert set(METRIC_INPUT.values()) == {"label", "proba", "posterior"}
    assert {n for n, k in METRIC_INPUT.items() if k == "proba"} == {
        "log_loss",
        "brier",
        "f_measure_auc",
        "rejection_auc",
        "auc",
    }
    assert {n for n, k in METRIC_INPUT.items() if k == "posterior"} == {"sym_kl", "js"}
    for name in ("error", "log_loss", "brier", "sym_kl", "js", "rejection_auc"):
        assert LOWER_IS_BETTER[name]
    assert not LOWER_IS_BETTER.get("f_measure_auc", False)


# -- log loss and Brier score -----------------------------------------------------------


def test_log_loss_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    y_true, proba = rng.integers(0, 3, 300), random_proba(rng, 300, 4)  # class 3 never true
    assert_allclose(log_loss(y_true, proba), skm.log_loss(y_true, proba, labels=np.arange(4)), rtol=RTOL)


def test_log_loss_clips_at_1e_15():
    # The second point gives its true class probability 0: -ln(1e-15) = 15 ln 10.
    y_true, proba = np.array([0, 1]), np.array([[1.0, 0.0], [1.0, 0.0]])
    assert_allclose(log_loss(y_true, proba), 15 * np.log(10) / 2, rtol=RTOL)
    assert_allclose(log_loss([0, 1], [[0.5, 0.5], [0.2, 0.8]]), -(np.log(0.5) + np.log(0.8)) / 2, rtol=RTOL)


def test_brier_equals_sklearn_multiclass(seed):
    rng = np.random.default_rng(seed)
    y_true, proba = rng.integers(0, 4, 300), random_proba(rng, 300, 4)
    expected = skm.brier_score_loss(y_true, proba, labels=np.arange(4), scale_by_half=False)
    assert_allclose(brier(y_true, proba), expected, rtol=RTOL)


def test_brier_is_twice_sklearns_binary_score(seed):
    rng = np.random.default_rng(seed)
    y_true, proba = rng.integers(0, 2, 300), random_proba(rng, 300, 2)
    assert_allclose(brier(y_true, proba), 2 * skm.brier_score_loss(y_true, proba[:, 1]), rtol=RTOL)


def test_brier_hand_example():
    # (0.2² + 0.2²) for the first point, (0.4² + 0.4²) for the second: mean 0.2.
    assert_allclose(brier([0, 1], [[0.8, 0.2], [0.4, 0.6]]), 0.2, rtol=RTOL)


@pytest.mark.parametrize(
    "y_true, proba, message",
    [
        ([0, 1], [[0.5, 0.6], [0.5, 0.5]], "rows must sum to 1"),
        ([0, 1], [[1.5, -0.5], [0.5, 0.5]], "finite non-negative"),
        ([0, 2], [[0.5, 0.5], [0.5, 0.5]], r"class codes 0\.\.1"),
        ([0, 1, 1], [[0.5, 0.5], [0.5, 0.5]], r"shape \(3, n_classes\)"),
    ],
)
def test_probability_input_is_checked(y_true, proba, message):
    with pytest.raises(ValueError, match=message):
        log_loss(y_true, proba)


# -- thresholded F-measure and rejection rate (D'Ambrosio et al. 2012, Sec. 5.2) ---------


def test_threshold_grid_is_fifty_midpoints_of_half_to_one():
    assert len(KAPPAS) == 50
    assert_allclose(KAPPAS[[0, 1, -1]], [0.505, 0.515, 0.995], rtol=RTOL)
    assert_allclose(np.diff(KAPPAS), 0.01, rtol=1e-9)


def test_f_measure_and_rejection_hand_example():
    y_true = np.array([0, 0, 1, 1])
    proba = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.55, 0.45]])
    # κ in (.50, .55), 5 grid points: assigned 0, 0, 1, 0.   class 0: P=2/3 R=1 F=.8;
    #   class 1: P=1 R=1/2 F=2/3; macro 11/15; rejection 0.
    # κ in (.55, .60), 5 points: point 4 rejected. F = (1 + 2/3)/2 = 5/6; rejection 1/4.
    # κ in (.60, .70), 10 points: points 2, 4 rejected. F = (2/3 + 2/3)/2; rejection 1/2.
    # κ in (.70, .90), 20 points: only point 1 assigned. F = (2/3 + 0)/2; rejection 3/4.
    # κ in (.90, 1), 10 points: all rejected, F = 0 for both classes; rejection 1.
    f_curve, r_curve = threshold_curves(y_true, proba)
    expected_f = np.repeat([11 / 15, 5 / 6, 2 / 3, 1 / 3, 0.0], [5, 5, 10, 20, 10])
    expected_r = np.repeat([0.0, 0.25, 0.5, 0.75, 1.0], [5, 5, 10, 20, 10])
    assert_allclose(f_curve, expected_f, rtol=RTOL, atol=0)
    assert_allclose(r_curve, expected_r, rtol=RTOL, atol=0)
    assert_allclose(f_measure_auc(y_true, proba), 127 / 300, rtol=RTOL)
    assert_allclose(rejection_auc(y_true, proba), 0.625, rtol=RTOL)


def test_threshold_curves_equal_sklearn_with_a_reject_label(seed):
    rng = np.random.default_rng(seed)
    # Peaked rows so that many points pass the thresholds; class 3 is never true.
    y_true, proba = rng.integers(0, 3, 400), rng.dirichlet(np.full(4, 0.3), size=400)
    f_curve, r_curve = threshold_curves(y_true, proba)
    for kappa, f, r in zip(KAPPAS, f_curve, r_curve, strict=True):
        y_pred = np.where(proba.max(1) > kappa, proba.argmax(1), -1)  # -1: rejected
        labels = np.union1d(y_true, y_pred[y_pred >= 0])
        expected = skm.f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)
        assert_allclose(f, expected, rtol=RTOL, atol=1e-15)
        assert r == np.mean(y_pred == -1)


# -- divergences from the true posterior (D'Ambrosio et al. 2012, eqs. 28-30) ------------


def naive_sym_kl(p, q):
    def floor(a):
        a = np.clip(a, 1e-15, None)
        return a / a.sum(1, keepdims=True)

    return np.mean(0.5 * (rel_entr(p, floor(q)).sum(1) + rel_entr(q, floor(p)).sum(1)))


@pytest.mark.parametrize("zeros", [0.0, 0.3])
def test_sym_kl_and_js_equal_scipy(seed, zeros):
    rng = np.random.default_rng(seed)
    p, q = random_proba(rng, 500, 3, zeros), random_proba(rng, 500, 3, zeros)
    assert_allclose(sym_kl(p, q), naive_sym_kl(p, q), rtol=RTOL)
    # scipy's jensenshannon is the square root of the divergence (natural log by default).
    assert_allclose(js(p, q), np.mean(jensenshannon(p, q, axis=1) ** 2), rtol=RTOL)


def test_sym_kl_hand_example():
    p = np.array([[0.5, 0.5], [1.0, 0.0]])
    q = np.array([[0.25, 0.75], [0.5, 0.5]])
    # Point 1: KL(p||q) = ½ ln 2 + ½ ln(2/3) = ½ ln(4/3); KL(q||p) = ¼ ln ½ + ¾ ln(3/2) = ¾ ln 3 - ln 2.
    point1 = 0.5 * (0.5 * np.log(4 / 3) + 0.75 * np.log(3) - np.log(2))
    # Point 2: KL(p||q) = ln 2. In KL(q||p) the true (1, 0) becomes (1, 1e-15)/(1 + 1e-15):
    # ½ ln(½ (1 + 1e-15)) + ½ ln(½ (1 + 1e-15) / 1e-15) = -ln 2 + 7.5 ln 10 (+ 1e-15).
    point2 = 0.5 * (np.log(2) - np.log(2) + 7.5 * np.log(10))
    assert_allclose(sym_kl(p, q), (point1 + point2) / 2, rtol=1e-12)


def test_js_hand_example():
    p = np.array([[1.0, 0.0], [0.5, 0.5]])
    q = np.array([[0.0, 1.0], [1.0, 0.0]])
    # Point 1: disjoint supports, m = (½, ½): ln 2, the maximum.
    # Point 2: m = (¾, ¼); KL(p||m) = ½ ln(2/3) + ½ ln 2 = ½ ln(4/3); KL(q||m) = ln(4/3):
    # JS = ½ (½ + 1) ln(4/3) = ¾ ln(4/3).
    assert_allclose(js(p, q), (np.log(2) + 0.75 * np.log(4 / 3)) / 2, rtol=RTOL)
    assert js(p[:1], q[:1]) == np.log(2)


def test_divergences_are_symmetric_bounded_and_zero_on_equality():
    for s in range(20):
        rng = np.random.default_rng(s)
        C = 2 + s % 4
        p, q = random_proba(rng, 50, C, zeros=0.4), random_proba(rng, 50, C, zeros=0.4)
        value = js(p, q)
        assert 0.0 <= value <= np.log(2)
        assert_allclose(js(q, p), value, rtol=RTOL)
        assert_allclose(sym_kl(q, p), sym_kl(p, q), rtol=RTOL)
        assert js(p, p) == 0.0
        # Zeros of p are floored at 1e-15 in the denominator: sym_kl(p, p) is 0 up to C·1e-15.
        assert 0.0 <= sym_kl(p, p) <= C * 1e-15
    one_hot = np.eye(3)[[0, 1, 2, 0]]
    assert js(one_hot, one_hot[::-1]) <= np.log(2)


def test_posterior_shapes_must_agree():
    with pytest.raises(ValueError, match=r"proba has shape \(2, 3\) but posterior \(2, 2\)"):
        sym_kl([[0.5, 0.5], [0.5, 0.5]], [[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]])
