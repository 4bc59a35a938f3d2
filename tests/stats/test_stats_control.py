"""knnx.stats.control against published numbers (Demšar 2006), hand arithmetic, brute
force by definition, and baycomp (the Bayesian signed-rank test's reference
implementation by its authors)."""

import math

import numpy as np
import pandas as pd
import pytest
from conftest import RTOL

from knnx.errors import ResultsError
from knnx.stats import control
from knnx.stats.control import (
    bayesian_signed_rank,
    bonferroni_dunn_cd,
    control_tests,
    five_by_two_f,
    five_by_two_t,
)

# Demšar (2006), Table 6: AUC of four C4.5 variants on 14 datasets (higher is better).
DEMSAR_NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR_AUC = np.array(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.975, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ]
)
# The paper's average ranks, as printed (Table 6).
DEMSAR_RANKS = pd.Series([3.143, 2.000, 2.893, 1.964], index=DEMSAR_NAMES)


# --- against a control after Friedman --------------------------------------------------


# Demšar (2006), Table 5(b): two-tailed Bonferroni-Dunn critical values, k = 2..10.
TABLE_5B = {
    0.05: [1.960, 2.241, 2.394, 2.498, 2.576, 2.638, 2.690, 2.724, 2.773],
    0.10: [1.645, 1.960, 2.128, 2.241, 2.326, 2.394, 2.450, 2.498, 2.539],
}


@pytest.mark.parametrize("alpha", [0.05, 0.10])
@pytest.mark.parametrize("k", range(2, 11))
def test_bonferroni_dunn_critical_values_are_demsar_table_5b(alpha, k):
    # With N = k (k + 1) / 6 the square root is 1 and the CD is q_alpha itself.
    q = bonferroni_dunn_cd(k, 1, alpha) / math.sqrt(k * (k + 1) / 6)
    expected = TABLE_5B[alpha][k - 2]
    if (alpha, k) == (0.05, 9):
        # The table prints 2.724, Φ⁻¹(1 − 0.05/16) is 2.7344: a misprint (the other
        # entries are Φ⁻¹(1 − alpha/(2(k − 1))) to 3 decimals; neighbours 2.690, 2.773).
        assert round(q, 3) == 2.734
    else:
        assert round(q, 3) == expected


def test_bonferroni_dunn_cd_of_demsar_example():
    # Sec. 3.2.2: CD = 2.394 √(4·5 / (6·14)) with SE printed as 0.488; the paper prints
    # 1.16 (truncated: 2.394 · 0.48795 = 1.1682). C4.5+m (1.143) is below it, C4.5+m+cf
    # (1.179) above it.
    cd = bonferroni_dunn_cd(4, 14, 0.05)
    assert cd == pytest.approx(2.394 * math.sqrt(20 / 84), abs=1e-3)
    assert math.floor(cd * 100) / 100 == 1.16
    assert 3.143 - 2.000 < cd < 3.143 - 1.964
    # alpha = 0.10: q = 2.128, CD = 1.04.
    assert round(bonferroni_dunn_cd(4, 14, 0.10), 2) == 1.04


def test_demsar_table_6_gives_the_printed_mean_ranks():
    from scipy.stats import rankdata

    ranks = rankdata(-DEMSAR_AUC, axis=1, method="average")
    # voting (row 12): the printed AUCs of C4.5+cf and C4.5+m+cf are both 0.975, the
    # paper ranks them 2 and 3 (the unrounded AUCs differ); ranked from the printed
    # numbers they share 2.5, moving both mean ranks by 0.5/14.
    np.testing.assert_array_equal(ranks[12], [4, 1, 2.5, 2.5])
    ranks[12] = [4, 1, 2, 3]
    np.testing.assert_allclose(ranks.mean(axis=0), DEMSAR_RANKS.to_numpy(), atol=5e-4)


def test_control_tests_reproduce_demsar_worked_example():
    out = control_tests(DEMSAR_RANKS, 14, "C4.5")
    assert list(out.columns) == [
        "configuration",
        "mean_rank",
        "rank_difference",
        "z",
        "p",
        "p_holm",
        "p_bonferroni_dunn",
        "significant_holm",
        "significant_bonferroni_dunn",
        "worse_than_control",
    ]
    assert list(out["configuration"]) == ["C4.5+m", "C4.5+cf", "C4.5+m+cf"]
    row = out.set_index("configuration")
    # The paper's table in Sec. 3.2.2: z = (R_0 − R_i)/SE (control minus other; knnx
    # reports R_i − R_0, so the sign flips) and p, both to 3 decimals. The paper's p
    # of C4.5+cf, 0.607, is 0.6084 from its own z = 0.512 (2 (1 − Φ(0.512)) = 0.6087).
    for name, z, p in (("C4.5+m+cf", 2.416, 0.016), ("C4.5+m", 2.342, 0.019), ("C4.5+cf", 0.512, 0.607)):
        assert -row.loc[name, "z"] == pytest.approx(z, abs=1e-3)
        assert row.loc[name, "p"] == pytest.approx(p, abs=2e-3)
    # Holm rejects the first two (p below alpha/3 and alpha/2) and retains C4.5+cf;
    # Bonferroni-Dunn finds only C4.5+m+cf ("found C4.5 and C4.5+m too similar").
    assert list(row["significant_holm"]) == [True, False, True]
    assert list(row["significant_bonferroni_dunn"]) == [False, False, True]
    assert not row["worse_than_control"].any()  # all three rank better than C4.5
    np.testing.assert_allclose(row["rank_difference"], [-1.143, -0.250, -1.179], rtol=RTOL)


def test_control_tests_by_hand_with_erfc():
    # Independent arithmetic: SE = √(k(k+1)/(6N)), p = erfc(|z|/√2), Bonferroni-Dunn
    # min(1, 3p), Holm: the sorted p times 3, 2, 1 with a running maximum.
    se = math.sqrt(4 * 5 / (6 * 14))
    z = [(2.000 - 3.143) / se, (2.893 - 3.143) / se, (1.964 - 3.143) / se]
    p = [math.erfc(abs(v) / math.sqrt(2)) for v in z]
    # order by p: C4.5+m+cf (index 2), C4.5+m (0), C4.5+cf (1)
    h2 = 3 * p[2]
    h0 = max(h2, 2 * p[0])
    h1 = max(h0, 1 * p[1])
    out = control_tests(DEMSAR_RANKS, 14, "C4.5")
    np.testing.assert_allclose(out["z"], z, rtol=RTOL)
    np.testing.assert_allclose(out["p"], p, rtol=RTOL)
    np.testing.assert_allclose(out["p_holm"], [h0, h1, h2], rtol=RTOL)
    np.testing.assert_allclose(out["p_bonferroni_dunn"], [min(1, 3 * v) for v in p], rtol=RTOL)
    # numbers, to 4 decimals
    np.testing.assert_allclose(out["p"], [0.0192, 0.6084, 0.0157], atol=1e-4)
    np.testing.assert_allclose(out["p_holm"], [0.0470, 0.6084, 0.0470], atol=1e-4)
    np.testing.assert_allclose(out["p_bonferroni_dunn"], [0.0575, 1.0, 0.0470], atol=1e-4)


def _holm_by_definition(p, alpha):
    """Holm (1979) by its definition: test the sorted p_(1) <= ... <= p_(m) against
    alpha/m, alpha/(m − 1), ..., stop at the first retained; adjusted p_(i) =
    min(1, max over j <= i of (m − j + 1) p_(j))."""
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    rejected, adjusted = [False] * m, [0.0] * m
    for step, i in enumerate(order):
        if p[i] < alpha / (m - step) and (step == 0 or rejected[order[step - 1]]):
            rejected[i] = True
        adjusted[i] = min(1.0, max((m - j) * p[order[j]] for j in range(step + 1)))
    return rejected, adjusted


@pytest.mark.parametrize("case", range(40))
def test_control_tests_against_brute_force_holm_and_bonferroni_dunn(case):
    rng = np.random.default_rng(case)
    k = int(rng.integers(2, 12))
    n = int(rng.integers(2, 60))
    ranks = np.array([rankdata_row(rng, k) for _ in range(n)]).mean(axis=0)
    names = [f"c{i}" for i in range(k)]
    control_name = names[int(rng.integers(k))]
    alpha = float(rng.choice([0.01, 0.05, 0.10]))
    out = control_tests(pd.Series(ranks, index=names), n, control_name, alpha)
    p = list(out["p"])
    rejected, adjusted = _holm_by_definition(p, alpha)
    assert list(out["significant_holm"]) == rejected
    np.testing.assert_allclose(out["p_holm"], adjusted, rtol=RTOL)
    # Bonferroni-Dunn: the adjusted p below alpha exactly when |R_i − R_c| > CD.
    cd = bonferroni_dunn_cd(k, n, alpha)
    beyond = [abs(d) > cd for d in out["rank_difference"]]
    assert list(out["significant_bonferroni_dunn"]) == beyond
    assert list(out["worse_than_control"]) == [d > 0 for d in out["rank_difference"]]
    assert len(out) == k - 1 and control_name not in set(out["configuration"])


def rankdata_row(rng, k):
    """Ranks 1..k of one dataset, sometimes with ties (average ranks)."""
    from scipy.stats import rankdata

    return rankdata(rng.integers(0, k, size=k), method="average")


def test_control_tests_equal_mean_ranks_up_to_rounding():
    ranks = pd.Series({"a": 0.1 + 0.2 + 2.7, "b": 3.0, "c": 1.0})  # 3.0000000000000004 and 3.0
    out = control_tests(ranks, 10, "b").set_index("configuration")
    assert out.loc["a", "rank_difference"] == 0.0
    assert out.loc["a", "z"] == 0.0 and out.loc["a", "p"] == 1.0
    assert not out.loc["a", "worse_than_control"]
    assert out.loc["c", "rank_difference"] == -2.0


def test_control_tests_bad_input():
    with pytest.raises(ResultsError) as err:
        control_tests(DEMSAR_RANKS, 14, "C5.0")
    assert err.value.param == "control"
    assert (
        str(err.value) == "control: 'C5.0' is not one of the configurations: C4.5, C4.5+m, C4.5+cf, C4.5+m+cf"
    )
    with pytest.raises(ResultsError, match="n_datasets"):
        control_tests(DEMSAR_RANKS, 0, "C4.5")
    with pytest.raises(ResultsError, match="alpha"):
        control_tests(DEMSAR_RANKS, 14, "C4.5", alpha=1.5)
    with pytest.raises(ResultsError, match="at least two"):
        control_tests(pd.Series({"a": 1.0}), 14, "a")
    with pytest.raises(ResultsError, match="more than once"):
        control_tests(pd.Series([1.0, 2.0], index=["a", "a"]), 14, "a")
    with pytest.raises(ResultsError, match="mean_ranks"):
        control_tests({"a": 1.0, "b": 2.0}, 14, "a")
    with pytest.raises(ResultsError, match="finite"):
        control_tests(pd.Series({"a": 1.0, "b": np.nan}), 14, "a")
    with pytest.raises(ResultsError, match="k"):
        bonferroni_dunn_cd(1, 14)


# --- Bayesian signed-rank test ---------------------------------------------------------


def _baycomp_cases():
    x = np.random.default_rng(20170077).uniform(0.6, 0.95, 25)

    def shifted(mean, std, seed):
        return x + np.random.default_rng(seed).normal(mean, std, 25)

    return [
        # C4.5+m+cf against C4.5 on Demšar's Table 6, rope 0.01 AUC; mostly left
        ("demsar", DEMSAR_AUC[:, 3], DEMSAR_AUC[:, 0], 0.01),
        # small differences, most inside the rope: the rope dominates
        ("rope", x, shifted(0.005, 0.01, 99), 0.01),
        # y greater by a little less than the rope: rope and right share the mass
        ("mixed", x, shifted(0.007, 0.01, 99), 0.01),
        # no rope: only left and right
        ("no-rope", x, shifted(0.003, 0.02, 20170077), 0.0),
    ]


@pytest.mark.parametrize("case", _baycomp_cases(), ids=lambda c: c[0])
def test_bayesian_signed_rank_agrees_with_baycomp(case):
    # Different generators (baycomp: RandomState), so equal within Monte Carlo error:
    # about 0.002 per probability at 50,000 samples. On Demšar's data one Walsh average,
    # (−0.030 + 0.050) / 2, lies on the rope's edge: knnx counts it half in the rope
    # (the tie rule), baycomp by its rounded float; that moves p_rope by about 0.004.
    baycomp = pytest.importorskip("baycomp")
    _, x, y, rope = case
    ours = bayesian_signed_rank(x, y, rope, n_samples=50000, seed=0)
    theirs = baycomp.SignedRankTest.probs(x, y, rope, nsamples=50000, random_state=1)
    if rope == 0:  # baycomp returns (p_left, p_right) without a rope
        theirs = (theirs[0], 0.0, theirs[1])
    got = (ours.p_left, ours.p_rope, ours.p_right)
    np.testing.assert_allclose(got, theirs, atol=0.01)
    assert sum(got) == pytest.approx(1.0, abs=1e-12)


# (p_left, p_rope, p_right) of the cases above with baycomp 1.0.3, 50,000 samples,
# random_state=1: numbers a change of sampler, regions or sides would move.
BAYCOMP_REFERENCE = {
    "demsar": (0.96714, 0.03254, 0.00032),
    "rope": (0.0, 0.97810, 0.02190),
    "mixed": (0.0, 0.79146, 0.20854),
    "no-rope": (0.02632, 0.0, 0.97368),
}


@pytest.mark.parametrize("case", _baycomp_cases(), ids=lambda c: c[0])
def test_bayesian_signed_rank_baycomp_reference_numbers(case):
    name, x, y, rope = case
    res = bayesian_signed_rank(x, y, rope)
    np.testing.assert_allclose((res.p_left, res.p_rope, res.p_right), BAYCOMP_REFERENCE[name], atol=0.01)


def test_bayesian_signed_rank_one_dataset_closed_form():
    # One dataset, x − y = 1 far beyond the rope: the Walsh sums are 0 (the
    # pseudo-observation with itself: in the rope, weight w0²) and 1 or 2 (greater x,
    # weight 1 − w0²), with w0 ~ Beta(prior, 1). Left wins when w0² < 1/2:
    # P = P(w0 < 2^-1/2) = (2^-1/2)^prior = 2^-1/4 = 0.8409 for prior 1/2.
    res = bayesian_signed_rank([1.0], [0.0], rope=0.1, n_samples=200000, seed=3)
    assert res.p_left == pytest.approx(2**-0.25, abs=0.005)
    assert res.p_rope == pytest.approx(1 - 2**-0.25, abs=0.005)
    assert res.p_right == 0.0


def test_bayesian_signed_rank_far_beyond_the_rope():
    # n = 10 datasets, every difference far beyond the rope on one side: as above, the
    # rope gets w0² with w0 ~ Beta(0.5, 10), left wins unless w0 > 2^-1/2:
    # P(left) = Beta(0.5, 10).cdf(2^-1/2) = 1 − 1e-6.
    from scipy.stats import beta

    x = np.linspace(0.8, 0.9, 10)
    assert beta.cdf(2**-0.5, 0.5, 10) > 0.99999
    res = bayesian_signed_rank(x, x - 0.2, rope=0.01)
    assert res.p_left == 1.0 and res.p_rope == 0.0 and res.p_right == 0.0
    res = bayesian_signed_rank(x, x + 0.2, rope=0.01)
    assert (res.p_left, res.p_rope, res.p_right) == (0.0, 0.0, 1.0)


def test_bayesian_signed_rank_identical_x_and_y():
    x = np.array([0.9, 0.8, 0.85, 0.7])
    res = bayesian_signed_rank(x, x.copy(), rope=0.01)
    assert (res.p_left, res.p_rope, res.p_right) == (0.0, 1.0, 0.0)
    # rope 0: every Walsh average is 0, half left and half right in every sample; the
    # tie between the two regions is shared (baycomp gives it all to left: (1, 0)).
    res = bayesian_signed_rank(x, x.copy(), rope=0.0)
    assert (res.p_left, res.p_rope, res.p_right) == (0.5, 0.0, 0.5)


def test_bayesian_signed_rank_boundary_ties_up_to_rounding():
    # 0.85 − 0.80 = 0.04999999999999993: on the rope's edge up to rounding, half in
    # the rope and half "x greater", exactly as the difference 0.05 itself.
    a = bayesian_signed_rank([0.85, 0.75], [0.80, 0.70], rope=0.05, n_samples=5000)
    b = bayesian_signed_rank([0.05, 0.05], [0.0, 0.0], rope=0.05, n_samples=5000)
    assert a == b


def test_bayesian_signed_rank_is_deterministic_and_symmetric():
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 0.9, 30)
    y = x + rng.normal(0.0, 0.02, 30)
    first = bayesian_signed_rank(x, y, 0.01, n_samples=20000, seed=11)
    again = bayesian_signed_rank(x, y, 0.01, n_samples=20000, seed=11)
    assert first == again
    other = bayesian_signed_rank(x, y, 0.01, n_samples=20000, seed=12)
    assert other != first
    swapped = bayesian_signed_rank(y, x, 0.01, n_samples=20000, seed=11)
    assert (swapped.p_left, swapped.p_rope, swapped.p_right) == (first.p_right, first.p_rope, first.p_left)


def _naive_signed_rank(x, y, rope, prior, n_samples, seed):
    """Every posterior sample at once, the weight of each region by a double loop over
    the Walsh averages (the regions of the module docstring)."""
    d = [0.0] + [float(a - b) for a, b in zip(x, y, strict=True)]
    m = len(d)
    alpha = np.ones(m)
    alpha[0] = prior
    w = np.random.default_rng(seed).dirichlet(alpha, size=n_samples)
    wins = np.zeros(3)
    for ws in w:
        theta = np.zeros(3)
        for i in range(m):
            for j in range(m):
                avg = (d[i] + d[j]) / 2
                region = 0 if avg > rope else 2 if avg < -rope else 1
                theta[region] += ws[i] * ws[j]
        top = theta == theta.max()
        wins += top / top.sum()
    return wins / n_samples


def test_bayesian_signed_rank_blocks_match_a_naive_loop(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 0.9, 8)
    y = x + rng.normal(0.005, 0.02, 8)
    expected = _naive_signed_rank(x, y, 0.01, 0.5, 600, seed=5)
    monkeypatch.setattr(control, "_BLOCK_ELEMENTS", 9 * 7)  # blocks of 7 samples
    res = bayesian_signed_rank(x, y, 0.01, n_samples=600, seed=5)
    np.testing.assert_allclose((res.p_left, res.p_rope, res.p_right), expected, atol=1e-12)


def test_bayesian_signed_rank_150_datasets():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 0.9, 150)
    res = bayesian_signed_rank(x, x + rng.normal(0.01, 0.01, 150), 0.001, n_samples=50000)
    assert res.p_right > 0.99


def test_bayesian_signed_rank_bad_input():
    with pytest.raises(ResultsError, match="^y: x has 3 values and y 2"):
        bayesian_signed_rank([1, 2, 3], [1, 2], 0.1)
    with pytest.raises(ResultsError, match="^x: "):
        bayesian_signed_rank([[1, 2]], [[1, 2]], 0.1)
    with pytest.raises(ResultsError, match="^y: expected finite"):
        bayesian_signed_rank([1.0], [np.nan], 0.1)
    with pytest.raises(ResultsError, match="^rope: "):
        bayesian_signed_rank([1.0], [0.0], -0.1)
    with pytest.raises(ResultsError, match="^prior: "):
        bayesian_signed_rank([1.0], [0.0], 0.1, prior=0)
    with pytest.raises(ResultsError, match="^n_samples: "):
        bayesian_signed_rank([1.0], [0.0], 0.1, n_samples=0)


# --- 5×2cv tests -----------------------------------------------------------------------

# b: accuracies of one configuration; a = b + the differences D (repeats x folds).
FIVE_B = np.array([[0.80, 0.82], [0.79, 0.81], [0.83, 0.80], [0.78, 0.80], [0.81, 0.81]])
FIVE_D = np.array([[0.02, 0.00], [0.01, 0.03], [0.00, 0.02], [0.04, 0.02], [0.01, 0.01]])


def _betainc_integer_b(x, a, b):
    """I_x(a, b) for a whole b: x^a Σ_{j<b} (a)_j / j! (1 − x)^j ((a)_j the rising factorial)."""
    total, term = 0.0, 1.0
    for j in range(b):
        total += term * (1 - x) ** j
        term *= (a + j) / (j + 1)
    return x**a * total


def test_five_by_two_f_by_hand():
    # p̄ = .01 .02 .01 .03 .01; s² = .0002 .0002 .0002 .0002 0 (sum .0008);
    # Σ p² = .0004 + .0010 + .0004 + .0020 + .0002 = .0040; f = .004 / (2 · .0008) = 2.5.
    # P(F(10, 5) > f) = I_{5/(5 + 10 f)}(5/2, 10/2) = I_{1/6}(2.5, 5).
    p_hand = _betainc_integer_b(1 / 6, 2.5, 5)
    res = five_by_two_f(FIVE_B + FIVE_D, FIVE_B)
    assert res.f == pytest.approx(2.5, rel=1e-9)
    assert res.p == pytest.approx(p_hand, rel=1e-9)
    assert res.p == pytest.approx(0.16183, abs=1e-5)
    assert five_by_two_f(FIVE_B, FIVE_B + FIVE_D) == res  # squares: symmetric in a, b


def test_five_by_two_t_by_hand():
    # t = p_11 / √(Σ s² / 5) = .02 / √(.0008 / 5) = .02 / √.00016 = 5 / √10 = 1.5811;
    # t(5) with odd degrees of freedom has a closed form: θ = atan(t/√5),
    # P(|T| < t) = (2/π) (θ + sin θ cos θ (1 + (2/3) cos² θ)).
    theta = math.atan(5 / math.sqrt(10) / math.sqrt(5))
    p_hand = 1 - 2 / math.pi * (
        theta + math.sin(theta) * math.cos(theta) * (1 + 2 / 3 * math.cos(theta) ** 2)
    )
    res = five_by_two_t(FIVE_B + FIVE_D, FIVE_B)
    assert res.t == pytest.approx(5 / math.sqrt(10), rel=1e-9)
    assert res.p == pytest.approx(p_hand, rel=1e-9)
    assert res.p == pytest.approx(0.17469, abs=1e-5)
    flipped = five_by_two_t(FIVE_B, FIVE_B + FIVE_D)
    assert flipped.t == pytest.approx(-5 / math.sqrt(10), rel=1e-9) and flipped.p == pytest.approx(
        res.p, rel=1e-12
    )


def _naive_five_by_two(a, b):
    """Both statistics by loops over the repeats, as mlxtend 0.25.0's
    combined_ftest_5x2cv and paired_ttest_5x2cv compute them from the fold scores:
    differences estimator 1 − estimator 2, F.sf(f, 10, 5), 2 t.sf(|t|, 5)."""
    from scipy.stats import f as fisher
    from scipy.stats import t as student

    squares, variances, first = [], [], None
    for i in range(5):
        d1, d2 = a[i][0] - b[i][0], a[i][1] - b[i][1]
        mean = (d1 + d2) / 2
        variances.append((d1 - mean) ** 2 + (d2 - mean) ** 2)
        squares += [d1**2, d2**2]
        if first is None:
            first = d1
    f = sum(squares) / (2 * sum(variances))
    t = first / math.sqrt(sum(variances) / 5)
    return f, fisher.sf(f, 10, 5), t, 2 * student.sf(abs(t), 5)


def test_five_by_two_against_a_naive_loop(seed):
    rng = np.random.default_rng(seed)
    for _ in range(20):
        b = rng.uniform(0.6, 0.9, (5, 2))
        a = b + rng.normal(0.01, 0.02, (5, 2))
        f, p_f, t, p_t = _naive_five_by_two(a.tolist(), b.tolist())
        res_f, res_t = five_by_two_f(a, b), five_by_two_t(a, b)
        assert res_f.f == pytest.approx(f, rel=RTOL) and res_f.p == pytest.approx(p_f, rel=RTOL)
        assert res_t.t == pytest.approx(t, rel=RTOL) and res_t.p == pytest.approx(p_t, rel=RTOL)


def test_five_by_two_undefined_cases():
    b = FIVE_B
    # all differences zero (up to rounding): nan, p = 1
    res = five_by_two_f(b + 1e-14, b)
    assert math.isnan(res.f) and res.p == 1.0
    res = five_by_two_t(b, b.copy())
    assert math.isnan(res.t) and res.p == 1.0
    # a constant nonzero difference: no variance, f = inf, t = ±inf, p = 0
    assert five_by_two_f(b + 0.01, b) == control.FiveByTwoF(f=math.inf, p=0.0)
    assert five_by_two_t(b - 0.01, b) == control.FiveByTwoT(t=-math.inf, p=0.0)
    # each repeat constant, repeats differing, the first repeat zero: t = 0/0, f = inf
    d = np.array([[0.0, 0.0], [0.01, 0.01], [0.02, 0.02], [0.0, 0.0], [0.03, 0.03]])
    assert five_by_two_f(b + d, b) == control.FiveByTwoF(f=math.inf, p=0.0)
    res = five_by_two_t(b + d, b)
    assert math.isnan(res.t) and res.p == 1.0


def test_five_by_two_bad_shapes():
    with pytest.raises(ResultsError, match=r"^a: expected shape \(5, 2\)"):
        five_by_two_f(np.zeros((2, 5)), np.zeros((5, 2)))
    with pytest.raises(ResultsError, match=r"^b: expected shape \(5, 2\)"):
        five_by_two_t(np.zeros((5, 2)), np.zeros(10))
    with pytest.raises(ResultsError, match="^a: expected finite"):
        five_by_two_f(np.full((5, 2), np.nan), np.zeros((5, 2)))
