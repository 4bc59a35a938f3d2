"""The certified candidate lists of the weighted descent (knnx.estimators.weighted_search):
the list kernel against NumPy brute force with ties, and the certified descent against the
full-search descent epoch by epoch (neighbours, dissimilarities, J_T, gradients, weights,
bit for bit) for CW, PW and CPW on both bases, with the fallbacks forced."""

import warnings

import numpy as np
import pytest
from test_weighted import brute_dissimilarities, brute_same_diff

import knnx.estimators.weighted as weighted
import knnx.estimators.weighted_search as search_module
from knnx import WeightedMetricNN
from knnx.estimators.weighted_search import CertifiedSearch, FullSearch, Prototypes


@pytest.fixture(autouse=True)
def lists_at_any_size(monkeypatch):
    """The descent uses the lists only above a work threshold; these small problems use them."""
    monkeypatch.setattr(search_module, "LISTS_MIN_WORK", 0)


def tied_problem(seed, n=240, m=4, C=3, levels=4):
    """Integer features on a few levels: many exact ties and duplicate rows."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, m)).astype(float)
    y = rng.integers(0, C, size=n)
    return X, y


def brute_lists(X, y, W, v, rows, size, l1):
    """Per row, the ``size`` nearest same- and different-class prototypes by (D, index),
    padded with -1 / inf, and the nearest D per class (inf for the row's own class)."""
    D = brute_dissimilarities(X, X, y, W, v, l1)
    n_classes = W.shape[0]
    out = {k: [] for k in ("ind_s", "dist_s", "ind_d", "dist_d", "class_min")}
    for i in rows:
        for kind, mask in (("s", y == y[i]), ("d", y != y[i])):
            mask = mask.copy()
            mask[i] = False
            cand = np.flatnonzero(mask)
            cand = cand[np.lexsort((cand, D[i, cand]))][:size]
            out["ind_" + kind].append(np.r_[cand, np.full(size - len(cand), -1)])
            out["dist_" + kind].append(np.r_[D[i, cand], np.full(size - len(cand), np.inf)])
        out["class_min"].append(
            [np.inf if c == y[i] or not (y == c).any() else D[i, y == c].min() for c in range(n_classes)]
        )
    return {k: np.array(val) for k, val in out.items()}


# --------------------------------------------------------------------------- the list kernel
@pytest.mark.parametrize("l1", [False, True])
@pytest.mark.parametrize("size", [1, 3, 17])
def test_lists_match_brute_force_with_ties(size, l1):
    X, y = tied_problem(0, n=150)
    rng = np.random.default_rng(1)
    W = rng.choice([0.5, 1.0, 2.0], size=(3, X.shape[1]))
    v = rng.choice([1.0, 2.0], size=len(X))
    rows = np.sort(rng.choice(len(X), size=70, replace=False)).astype(np.intp)
    protos = Prototypes(X, y.astype(np.intp), 3).prepare(W, v)
    ind_s, dist_s, ind_d, dist_d, class_min, finite = protos.lists(l1, rows, size)
    want = brute_lists(X, y, W, v, rows, size, l1)
    assert finite
    np.testing.assert_array_equal(ind_s, want["ind_s"])
    np.testing.assert_array_equal(dist_s, want["dist_s"])
    np.testing.assert_array_equal(ind_d, want["ind_d"])
    np.testing.assert_array_equal(dist_d, want["dist_d"])
    np.testing.assert_array_equal(class_min, want["class_min"])
    # the first entries are the full search's neighbours
    same, diff, _ = brute_same_diff(X, y, W, v, l1)
    np.testing.assert_array_equal(ind_s[:, 0], same[rows])
    np.testing.assert_array_equal(ind_d[:, 0], diff[rows])


# --------------------------------------------------------------------------- one evaluation
def _same(a, b):
    for u, w in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, w)


def _searches(seed, n, m=4, levels=4, l1=False, list_length=16):
    """A certified and a full search over the same tied problem (3 classes)."""
    X, y = tied_problem(seed, n=n, m=m, levels=levels)
    protos = Prototypes(X, y.astype(np.intp), 3)
    return CertifiedSearch(protos, l1, list_length=list_length), FullSearch(protos, l1)


def test_certified_equals_full_on_random_steps_and_uses_the_lists():
    """Small random steps from the reference: the same results as the full search, with
    most rows certified; a few rows failing are searched again, not all."""
    certified, full = _searches(3, 300, m=5, levels=6, list_length=8)
    rng = np.random.default_rng(0)
    W, v = rng.uniform(0.5, 2.0, size=(3, 5)), rng.uniform(0.5, 2.0, size=300)
    fractions = []
    for _ in range(40):
        _same(certified.same_diff(W, v), full.same_diff(W, v))
        fractions.append(certified.last_fraction)
        W = W * (1 + 0.02 * rng.standard_normal(W.shape))
        v = v * (1 + 0.02 * rng.standard_normal(v.shape))
    assert fractions[0] == 1.0  # the first call builds the lists
    assert np.mean(fractions[1:]) < 0.2
    assert any(0 < f < search_module.REFRESH_FRACTION for f in fractions[1:])  # partial searches happened


@pytest.mark.parametrize("l1", [False, True])
def test_a_far_step_searches_every_row_in_full(l1):
    certified, full = _searches(4, 200, l1=l1)
    W, v = np.ones((3, 4)), np.ones(200)
    certified.same_diff(W, v)
    rng = np.random.default_rng(5)
    W2, v2 = W * rng.uniform(0.05, 20.0, size=W.shape), v * rng.uniform(0.05, 20.0, size=v.shape)
    refreshes = []
    original = certified._refresh
    certified._refresh = lambda W, v: refreshes.append(len(v)) or original(W, v)
    _same(certified.same_diff(W2, v2), full.same_diff(W2, v2))
    assert refreshes == [200] and certified.last_fraction == 1.0
    assert certified.refs and len([r for r in certified.refs if r is not None]) == 1


def test_unchanged_weights_certify_every_row_without_ties_at_the_threshold():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 3))
    y = (np.arange(200) % 2).astype(np.intp)
    protos = Prototypes(X, y, 2)
    certified = CertifiedSearch(protos, False)
    W, v = np.ones((2, 3)), np.ones(200)
    first = certified.same_diff(W, v)
    second = certified.same_diff(W.copy(), v.copy())
    _same(first, second)
    assert certified.last_fraction == 0.0


def test_non_finite_values_fall_back_to_the_full_search():
    certified, full = _searches(7, 60)
    W, v = np.ones((3, 4)), np.ones(60)
    certified.same_diff(W, v)
    W_huge = W.copy()
    W_huge[1, 2] = 1e200  # squared dissimilarities to class 1 overflow to inf
    _same(certified.same_diff(W_huge, v), full.same_diff(W_huge, v))
    assert certified.last_fraction == 1.0


def test_a_given_up_reference_carries_its_rows_bounds_over(monkeypatch):
    """With room for two references, a new one takes the place of the one with the fewest
    rows; those rows keep their lists, their bounds carried over to the new weights, and
    the results stay those of the full search."""
    monkeypatch.setattr(search_module, "MAX_REFERENCES", 2)
    certified, full = _searches(8, 300, m=5, levels=6, list_length=4)
    given_up = []
    original = certified._new_slot

    def spy():
        slot, rows = original()
        given_up.append(len(rows))
        return slot, rows

    certified._new_slot = spy
    rng = np.random.default_rng(9)
    W, v = rng.uniform(0.5, 2.0, size=(3, 5)), np.ones(300)
    for _ in range(30):
        _same(certified.same_diff(W, v), full.same_diff(W, v))
        assert len(certified.refs) <= 2
        W = W * (1 + 0.03 * rng.standard_normal(W.shape))
    assert sum(r > 0 for r in given_up) >= 3


# --------------------------------------------------------------------------- whole descents
class FullDescent(WeightedMetricNN):
    _certified = False


def _descents(monkeypatch, X, y, **params):
    """Fit with the certified and the full search, recording every evaluation of the
    weights (its inputs and outputs)."""
    original = weighted._evaluate
    runs = []
    for cls in (WeightedMetricNN, FullDescent):
        calls = []

        def spy(search, W, v, *args, calls=calls):
            state = original(search, W, v, *args)
            calls.append((W.copy(), v.copy(), state))
            return state

        monkeypatch.setattr(weighted, "_evaluate", spy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(**params).fit(X, y)
        runs.append((model, calls))
    return runs


CASES = [
    {"scheme": "cw"},
    {"scheme": "pw"},
    {"scheme": "cpw"},
    {"scheme": "pw", "base": "l1"},
    {"scheme": "cpw", "step_grid": "paper", "max_epochs": 150},
    {"scheme": "cw", "init": "cdm", "max_epochs": 300},
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("params", CASES, ids=lambda p: "-".join(map(str, p.values())))
def test_certified_descent_equals_the_full_search_epoch_by_epoch(monkeypatch, params, seed):
    X, y = tied_problem(seed, n=240, m=4, levels=4)
    (fast, fast_calls), (slow, slow_calls) = _descents(monkeypatch, X, y, **params)
    assert len(fast_calls) == len(slow_calls) > 3
    for (W1, v1, s1), (W2, v2, s2) in zip(fast_calls, slow_calls, strict=True):
        np.testing.assert_array_equal(W1, W2)
        np.testing.assert_array_equal(v1, v2)
        for key in ("same", "diff", "d_same", "d_diff", "grad_w", "grad_v"):
            np.testing.assert_array_equal(s1[key], s2[key])
        assert s1["J"] == s2["J"] and s1["loo_error"] == s2["loo_error"]
    np.testing.assert_array_equal(fast.curve_["J"], slow.curve_["J"])
    np.testing.assert_array_equal(fast.class_weights_, slow.class_weights_)
    np.testing.assert_array_equal(fast.prototype_weights_, slow.prototype_weights_)
    assert (fast.n_epochs_, fast.best_epoch_, fast.stopped_by_) == (
        slow.n_epochs_,
        slow.best_epoch_,
        slow.stopped_by_,
    )
    # the full search searched every row every epoch; the lists spared most of that work
    assert (slow.curve_["searched"] == 1.0).all()
    assert fast.curve_["searched"].mean() < 0.5


def test_knapsack_bound_by_hand():
    """T = 5 over ratios a = (4, 0.25, 1) with caps (10, 2, 2) (x = 0, ranges [-sqrt(cap), 0],
    w_r = 1, max v_r = 1): take 2 at 0.25, 2 at 1, the last 1 at 4: 0.5 + 2 + 4 = 6.5."""
    from knnx._kernels.weighted_lists import _knapsack

    X = np.zeros((1, 3))
    a = np.array([4.0, 0.25, 1.0])
    order = np.argsort(a).astype(np.intp)
    lo, hi = -np.sqrt(np.array([10.0, 2.0, 2.0])), np.zeros(3)
    got = _knapsack(5.0, X, 0, a[order], order, np.ones(3), lo, hi, 1.0)
    assert got == pytest.approx(6.5, rel=1e-8)
    assert got <= 6.5  # the caps are inflated by 1e-9: the bound errs low


def test_small_problems_use_the_full_search_large_ones_the_lists(monkeypatch):
    monkeypatch.setattr(search_module, "LISTS_MIN_WORK", 240 * 240 * 4)
    X, y = tied_problem(0, n=240, m=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        large = WeightedMetricNN(scheme="cw", max_epochs=50).fit(X, y)
        small = WeightedMetricNN(scheme="cw", max_epochs=50).fit(X[:239], y[:239])
    assert (small.curve_["searched"] == 1.0).all()
    assert large.curve_["searched"][0] < 1.0 and large.curve_["searched"].mean() < 0.5
