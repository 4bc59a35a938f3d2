"""Defects of the metric search found by the exactness suite, each shown by the smallest
input; each was a defect of the first version, fixed since.
Inputs that make the kernels read or write outside their arrays run in a child
process (one, forking per input), so that a crash fails the test instead of ending
the run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from knnx import kneighbors
from knnx.errors import DataError

ROOT = Path(__file__).resolve().parents[2]

# Inputs that make the kernels read or write outside their arrays, each a snippet that
# writes what it got to ``out`` (np, knnx, DataError and fit_metric in scope).
UNSAFE = {
    # heom/hvdm: (|q - r| / s)^2 overflows to inf for a query at 1e300 (range 1); with
    # every distance inf the k nearest are the first k rows (ties by index)
    "overflow": r"""
for n, m in [(10, 2), (300, 2), (300, 8)]:
    X = np.linspace(0.0, 1.0, n)[:, None]
    for metric in ("heom", "hvdm"):
        try:
            d, i = knnx.kneighbors(X, 2, np.full((m, 1), 1e300), metric=metric, y=np.arange(n) % 2)
        except DataError as e:
            out.write(f"refused {e}\n")
        else:
            out.write(f"{metric} {i.tolist() == [[0, 1]] * m}\n")
""",
    "inf": r"""
X = np.array([[0.0], [1.0], [2.0], [3.0]])
for metric in ("heom", "hvdm", "gower"):
    try:
        knnx.kneighbors(X, 4, np.array([[np.inf], [-np.inf]]), metric=metric, y=[0, 1, 0, 1])
        out.write(f"{metric} accepted\n")
    except DataError as e:
        out.write(f"{metric} refused: {e}\n")
""",
    "precomputed": r"""
M = fit_metric("precomputed", np.zeros((4, 4)))
try:
    out.write(repr(knnx.kneighbors(np.ones((6, 2)), 5, np.ones((2, 2)), metric=M)))
except DataError as e:
    out.write(f"refused: {e}")
""",
    "huge code": r"""
X = np.array([[0.0], [0.0], [1.0], [1.0], [2.0]])
for code in (5.0, 2.0**63, 1e300):  # all unseen: P(c | code) = 0 for every class
    d, i = knnx.kneighbors(X, 5, np.array([[code]]), metric="vdm", y=[0, 1, 1, 1, 0])
    out.write(f"{d.round(12).tolist()} {i.tolist()}\n")
""",
}

# One child process imports knnx once (seconds), then forks one grandchild per snippet
# before any numba thread exists: a crash ends only that grandchild.
_HARNESS = """
import json, os, sys
import numpy as np
import knnx
from knnx.errors import DataError
from knnx.neighbors.metrics import fit_metric
results = {}
for name, code in json.loads(sys.stdin.read()).items():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = os.fdopen(w, "w")
        try:
            exec(code, {"np": np, "knnx": knnx, "DataError": DataError, "fit_metric": fit_metric, "out": out})
        except Exception as e:
            out.write(f"raised {type(e).__name__}: {e}")
        out.flush()
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    signal = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    results[name] = {"signal": signal, "output": text}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def unsafe():
    """{snippet name: {"signal": the signal that ended it (0: none), "output": text}}."""
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["NUMBA_NUM_THREADS"] = "2"
    run = subprocess.run(
        [sys.executable, "-c", _HARNESS],
        input=json.dumps(UNSAFE),
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-600:]
    return json.loads(run.stdout.splitlines()[-1])


def test_overflowing_heom_distances_do_not_corrupt_memory(unsafe):
    got = unsafe["overflow"]
    assert got["signal"] == 0, got
    assert all(line.startswith("refused") or line.endswith("True") for line in got["output"].splitlines())
    assert len(got["output"].splitlines()) == 6


def test_infinite_values_are_refused_by_mixed_metrics(unsafe):
    got = unsafe["inf"]
    assert got["signal"] == 0, got
    lines = got["output"].splitlines()
    assert len(lines) == 3 and all(" refused: " in line and "inf" in line for line in lines), lines


def test_precomputed_fitted_metric_refuses_non_square_matrix(unsafe):
    got = unsafe["precomputed"]
    assert got["signal"] == 0 and got["output"].startswith("refused: "), got


def test_hvdm_huge_unseen_code_reads_the_unseen_row(unsafe):
    got = unsafe["huge code"]
    assert got["signal"] == 0, got
    lines = got["output"].splitlines()
    assert len(lines) == 3 and lines[0] == lines[1] == lines[2], lines


def test_hvdm_labels_minus_one_plus_one():
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    y01 = np.array([0, 0, 1, 1, 1, 1])
    ref = kneighbors(X, 5, metric="vdm", y=y01)
    assert ref[0].max() > 0  # the two values differ in their class frequencies
    try:
        got = kneighbors(X, 5, metric="vdm", y=2 * y01 - 1)  # the same classes, named -1 and +1
    except DataError:
        return  # refusing labels that are not codes 0..C-1 is fine too
    assert_array_equal(got[0], ref[0])
    assert_array_equal(got[1], ref[1])


def test_nominal_code_message_prints_the_value():
    X = np.array([[0.0], [1.5], [1.0]])
    with pytest.raises(DataError) as err:
        kneighbors(X, 1, metric="heom", nominal=[0])
    assert str(err.value).startswith("X: nominal column 0 holds 1.5 at row 1;")


def test_onehot_absent_category_below_the_maximum_has_zero_indicators():
    X = np.array([[0.0], [2.0], [2.0]])  # codes 0 and 2; 1 absent
    params = {"onehot": True}
    gap = kneighbors(X, 3, np.array([[1.0]]), nominal=[0], metric_params=params)
    beyond = kneighbors(X, 3, np.array([[7.0]]), nominal=[0], metric_params=params)
    # both absent from training: every indicator 0, squared distance 1 to each row
    assert_array_equal(beyond[0], [[1.0, 1.0, 1.0]])
    assert_array_equal(gap[0], beyond[0])


@pytest.mark.parametrize("metric", ["hvdm", "cosine", "seuclidean", "mahalanobis"])
def test_metrics_that_square_raw_values_keep_the_range_rule(metric):
    """hvdm's sigma, seuclidean's variances, mahalanobis's covariance and cosine's norms
    square the raw values: at x 1e160 every distance was inf (or a covariance called
    singular) and at x 1e-200 every distance 0, the neighbours in index order, exit 0.
    Within the rule the neighbours are those of the unscaled data (each metric is
    invariant to scaling the data: the oracle); beyond it, one line asking to rescale."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(np.int64)
    kw = {"y": y} if metric == "hvdm" else {}
    _, plain = kneighbors(X, 4, metric=metric, **kw)
    for s in (1e100, 1e-100):
        _, scaled = kneighbors(X * s, 4, metric=metric, **kw)
        assert_array_equal(scaled, plain)
    with pytest.raises(
        DataError, match=r"^X: values too large for float64 squares \(max \|x\| = .*; rescale the data$"
    ):
        kneighbors(X * 1e160, 4, metric=metric, **kw)
    with pytest.raises(
        DataError, match=r"^X: .*too (close together|small) for float64 square.*; rescale the data$"
    ):
        kneighbors(X * 1e-200, 4, metric=metric, **kw)


def test_cosine_queries_keep_the_range_rule():
    """A query of 1e160 got cosine distance 1 from rows of its own direction (its norm
    overflowed); one of 1e-150 was called all zeros."""
    X = np.array([[0.0], [1.0], [3.0], [4.0]]) + 1.0
    reduced, _ = kneighbors(X, 1, np.array([[1e100]]), metric="cosine")
    assert reduced[0, 0] == 0.0
    with pytest.raises(DataError, match=r"^queries: values too large for float64 squares"):
        kneighbors(X, 1, np.array([[1e160]]), metric="cosine")
    with pytest.raises(DataError, match=r"^queries: row 0's values are too small for float64 squares"):
        kneighbors(X, 1, np.array([[1e-150]]), metric="cosine")
