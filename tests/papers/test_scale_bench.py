"""benchmarks/scale.py (issue 7): the growth-exponent fit and a tiny end-to-end run."""

import math

import numpy as np
import pytest
from conftest import load_script


@pytest.fixture(scope="module")
def scale():
    return load_script("benchmarks", "scale")


@pytest.mark.parametrize("b", [-0.5, 0.0, 1.0, 1.37, 2.0, 3.0])
@pytest.mark.parametrize("a", [1e-6, 0.25, 40.0])
def test_fit_exponent_recovers_exact_power_laws(scale, a, b):
    for ns in (scale.QUICK_SIZES, scale.SIZES, (10, 20), (3, 7, 100, 2500)):
        values = [a * n**b for n in ns]
        assert scale.fit_exponent(ns, values) == pytest.approx(b, abs=1e-9)


def test_fit_exponent_drops_missing_values_and_needs_two_sizes(scale):
    ns = (1000, 3000, 10_000)
    assert scale.fit_exponent(ns, [1.0, 9.0, None]) == pytest.approx(2.0)
    assert scale.fit_exponent(ns, [float("nan"), 3.0, 10.0]) == pytest.approx(1.0)
    assert scale.fit_exponent(ns, [0.0, 3.0, 10.0]) == pytest.approx(1.0)  # zero: log undefined, dropped
    assert math.isnan(scale.fit_exponent(ns, [None, None, 2.0]))
    assert math.isnan(scale.fit_exponent((500, 500), [1.0, 2.0]))


def test_fit_exponent_is_least_squares_on_logs(scale):
    ns = np.array([1e4, 3e4, 1e5])
    values = np.array([2.0, 15.0, 190.0])
    slope = np.polyfit(np.log(ns), np.log(values), 1)[0]
    assert scale.fit_exponent(ns, values) == pytest.approx(slope, rel=1e-12)


def test_tiny_run_times_the_exact_graph(scale, tmp_path):
    sizes = [500, 1000, 2000]
    k, d = scale.K, 16
    rows, exps, raw = scale.main(
        ["--sizes", ",".join(map(str, sizes)), "--d", str(d), "--repeats", "1", "--methods", "knnx",
         "--no-baseline", "--save-graphs", str(tmp_path), "--csv", str(tmp_path / "scale.csv")]
    )  # fmt: skip
    assert [r["n"] for r in rows] == sizes and {r["method"] for r in rows} == {"knnx"}
    assert all(r["seconds"] > 0 and r["runs"] == 1 and r["vs_knnx"] == 1.0 for r in rows)
    assert len(exps) == 1 and math.isfinite(exps[0]["seconds_exponent"])
    assert (tmp_path / "scale.csv").exists() and (tmp_path / "scale_exponents.csv").exists()

    # The graph timed by the benchmark is the exact leave-one-out graph (NumPy brute force).
    n = sizes[0]
    X, _ = scale.make_data(n, d)
    assert X.shape == (n, d)
    ind = np.load(tmp_path / f"knnx_{n}.npy")
    dist = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(dist, np.inf)
    expected = np.argsort(dist, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(ind, expected)
    assert scale.check_rows(X, ind, range(0, n, 25))
    bad = ind.copy()
    bad[0, [0, 1]] = bad[0, [1, 0]]
    assert not scale.check_rows(X, bad, [0])
