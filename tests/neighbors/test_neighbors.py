"""kneighbors and reciprocal_neighbors against a brute-force NumPy oracle."""

import numba
import numpy as np
import pytest
from conftest import RTOL, brute_kneighbors
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.neighbors import NearestNeighbors

from knnx import DataError, kneighbors, reciprocal_neighbors
from knnx.neighbors import screen
from knnx.neighbors import search as nb_module


@pytest.fixture(params=["brute", "screened", "select"])
def path(request, monkeypatch):
    """Run each test through the brute-force kernel, the screened fast path and selection."""
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 10**12 if request.param == "select" else 0)
    if request.param == "screened":
        monkeypatch.setattr(nb_module, "_BRUTE_WORK", 0)
    else:
        monkeypatch.setattr(nb_module, "_BRUTE_WORK", 10**12)
    return request.param


@pytest.mark.parametrize("n,d,k", [(200, 2, 1), (500, 3, 7), (400, 40, 15), (300, 1, 5)])
def test_loo_matches_brute_force(path, seed, n, d, k):
    X = np.random.default_rng(seed).standard_normal((n, d))
    dist, ind = kneighbors(X, k)
    ref_dist, ref_ind = brute_kneighbors(X, k)
    assert_array_equal(ind, ref_ind)
    assert_allclose(dist, ref_dist, rtol=RTOL, atol=1e-12)
    assert not (ind == np.arange(n)[:, None]).any()  # self excluded


def test_queries_match_brute_force(path, seed):
    rng = np.random.default_rng(seed)
    X, Q = rng.standard_normal((600, 5)), rng.standard_normal((250, 5))
    dist, ind = kneighbors(X, 9, Q)
    ref_dist, ref_ind = brute_kneighbors(X, 9, Q)
    assert_array_equal(ind, ref_ind)
    assert_allclose(dist, ref_dist, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("k", [1, 10, 40])
def test_ties_are_ordered_by_index(path, seed, k):
    # Integer coordinates: every distance is exact in float64, ties abound.
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(700, 3)).astype(float)
    dist, ind = kneighbors(X, k)
    ref_dist, ref_ind = brute_kneighbors(X, k)
    assert_array_equal(ind, ref_ind)
    assert_array_equal(dist, ref_dist)


def test_duplicates_stay_neighbours_in_loo(path):
    # Points 0, 1, 2 coincide; in the leave-one-out graph each sees the other two first.
    X = np.array([[0.0, 0.0]] * 3 + [[1.0, 0.0], [0.0, 2.0]] + [[5.0, 5.0]] * 300)
    dist, ind = kneighbors(X, 3)
    assert_array_equal(ind[0], [1, 2, 3])
    assert_array_equal(ind[1], [0, 2, 3])
    assert_array_equal(dist[2], [0.0, 0.0, 1.0])


def test_all_points_identical_uses_overflow_path(path):
    # Every distance ties: the candidate buffer overflows and rows fall back to brute force.
    X = np.ones((3000, 4))
    dist, ind = kneighbors(X, 5)
    assert_array_equal(dist, 0.0)
    expected = np.array([[j for j in range(6) if j != i][:5] for i in range(6)])
    assert_array_equal(ind[:6], expected)
    assert_array_equal(ind[10], [0, 1, 2, 3, 4])


def test_translation_and_scale_do_not_change_ranking(path, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(-4, 5, size=(800, 3)).astype(float)
    _, ind = kneighbors(X, 6)
    _, ind_shift = kneighbors(X * 2.0**-10 + 1024.0, 6)  # exact in float64
    assert_array_equal(ind, ind_shift)


def test_agrees_with_sklearn_distances(path):
    X = np.random.default_rng(7).standard_normal((1500, 8))
    dist, ind = kneighbors(X, 12, squared=False)
    sk_dist, sk_ind = NearestNeighbors(n_neighbors=12, algorithm="brute").fit(X).kneighbors()
    assert_array_equal(ind, sk_ind)
    assert_allclose(dist, sk_dist, rtol=1e-9)


def test_k_equals_n_minus_one(path):
    X = np.random.default_rng(3).standard_normal((50, 2))
    _, ind = kneighbors(X, 49)
    assert_array_equal(np.sort(ind, axis=1), [np.delete(np.arange(50), i) for i in range(50)])


@pytest.mark.parametrize(
    "X,k,queries,message",
    [
        (np.zeros((5, 2)), 5, None, "n_neighbors: must be between 1 and n_samples - 1"),
        (np.zeros((5, 2)), 0, None, "n_neighbors: must be between 1"),
        (np.zeros((5, 2)), 6, np.zeros((1, 2)), "n_neighbors: must be between 1 and n_samples = 5"),
        (
            np.array([[0.0, np.nan]]),
            1,
            np.zeros((1, 2)),
            "X: non-finite value nan at row 0, column 1",
        ),
        (np.zeros((5, 2)), 1, np.zeros((1, 3)), "queries: has 3 features, X has 2"),
        (np.zeros(5), 1, None, "X: expected a 2-D array"),
    ],
)
def test_bad_input_messages(X, k, queries, message):
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kneighbors(X, k, queries)


def test_reciprocal_neighbors_against_naive(seed):
    X = np.random.default_rng(seed).standard_normal((300, 3))
    _, ind = kneighbors(X, 4)
    indptr, indices = reciprocal_neighbors(ind, 300)
    for j in range(300):
        expected = np.flatnonzero((ind == j).any(axis=1))
        assert_array_equal(indices[indptr[j] : indptr[j + 1]], expected)
    assert indptr[-1] == 300 * 4


def test_reciprocal_neighbors_hand_example():
    ind = np.array([[1, 2], [0, 2], [1, 0]])
    indptr, indices = reciprocal_neighbors(ind, 4)
    assert_array_equal(indptr, [0, 2, 4, 6, 6])
    assert_array_equal(indices, [1, 2, 0, 2, 0, 1])


def _brute_rows(X, rows, k):
    """Oracle for selected rows of the leave-one-out graph (no n x n matrix)."""
    D = ((X[rows, None, :] - X[None, :, :]) ** 2).sum(-1)
    D[np.arange(len(rows)), rows] = np.inf
    order = np.lexsort((np.broadcast_to(np.arange(len(X)), D.shape), D), axis=1)[:, :k]
    return np.take_along_axis(D, order, 1), order


@pytest.mark.parametrize("kind", ["normal", "grid"])
def test_seeded_large_reference_set(monkeypatch, kind):
    # n >= 8192 engages the seeded threshold; compare a spread of rows with the oracle.
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 0)
    rng = np.random.default_rng(11)
    if kind == "normal":
        X = rng.standard_normal((9000, 6))
    else:
        X = rng.integers(0, 5, size=(9000, 3)).astype(float)  # massive ties
    dist, ind = kneighbors(X, 50)
    rows = np.arange(0, 9000, 37)
    ref_dist, ref_ind = _brute_rows(X, rows, 50)
    assert_array_equal(ind[rows], ref_ind)
    assert_allclose(dist[rows], ref_dist, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("select", [False, True])
def test_seed_guess_too_low_falls_back_exactly(monkeypatch, select):
    # The strided sample (every 9th point of 9216) sits in a tight cluster: the guessed
    # threshold (about the 10th closest sample point) is below the true 50th-neighbour
    # distance, so those rows must take the exact fallback and still be right. The
    # same holds for selection's sampled threshold (every 72nd point, all in the cluster).
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 10**12 if select else 0)
    rng = np.random.default_rng(5)
    n = 9216
    X = rng.uniform(50, 100, size=(n, 2))
    sample = np.arange(1024) * (n // 1024)
    X[sample] = rng.normal(0, 1e-3, size=(1024, 2))
    dist, ind = kneighbors(X, 50)
    rows = sample[:64]
    ref_dist, ref_ind = _brute_rows(X, rows, 50)
    assert_array_equal(ind[rows], ref_ind)
    assert_allclose(dist[rows], ref_dist, rtol=RTOL, atol=1e-15)


def test_seeded_queries_mode(monkeypatch):
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 0)
    rng = np.random.default_rng(2)
    X, Q = rng.standard_normal((10000, 4)), rng.standard_normal((300, 4))
    dist, ind = kneighbors(X, 20, Q)
    ref_dist, ref_ind = brute_kneighbors(X, 20, Q)
    assert_array_equal(ind, ref_ind)
    assert_allclose(dist, ref_dist, rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("n,d,k", [(3000, 130, 9), (9000, 140, 50)])
def test_symmetric_leave_one_out_path(monkeypatch, n, d, k):
    # d >= 128 takes the symmetric driver (one product per block pair, column-wise
    # kernel for the transposed direction, pairs in round-robin order); duplicates sit
    # in other blocks than their originals; 9000 rows also engage the seeded
    # thresholds. Compare a spread of rows.
    monkeypatch.setattr(nb_module, "_BRUTE_WORK", 0)
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 0)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((n, d))
    X[n // 2 :: 7] = X[n // 2 - 100 : n // 2 - 100 + len(X[n // 2 :: 7])]  # duplicates across blocks
    dist, ind = kneighbors(X, k)
    rows = np.arange(0, n, 23)
    ref_dist, ref_ind = _brute_rows(X, rows, k)
    assert_array_equal(ind[rows], ref_ind)
    assert_allclose(dist[rows], ref_dist, rtol=RTOL, atol=1e-12)


def test_symmetric_path_with_integer_ties(monkeypatch):
    monkeypatch.setattr(nb_module, "_BRUTE_WORK", 0)
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 0)
    X = np.random.default_rng(8).integers(0, 2, size=(2500, 128)).astype(float)
    dist, ind = kneighbors(X, 30)
    rows = np.arange(0, 2500, 11)
    ref_dist, ref_ind = _brute_rows(X, rows, 30)
    assert_array_equal(ind[rows], ref_ind)
    assert_array_equal(dist[rows], ref_dist)


@pytest.mark.parametrize("n_blocks", range(1, 10))
def test_round_robin_covers_every_pair_once_in_disjoint_rounds(n_blocks):
    rounds = screen._round_robin(n_blocks)
    pairs = [p for r in rounds for p in r]
    expected = [(i, j) for i in range(n_blocks) for j in range(i, n_blocks)]
    assert sorted(pairs) == expected
    for r in rounds:
        blocks = [b for p in r for b in set(p)]
        assert len(blocks) == len(set(blocks))


@pytest.mark.parametrize(
    "loo,d,select", [(True, 3, False), (False, 3, False), (True, 130, False), (True, 3, True)]
)
def test_result_does_not_depend_on_thread_count(monkeypatch, loo, d, select):
    # Query blocks run on numba.get_num_threads() worker threads; each row's result
    # depends on that row alone. Small blocks give many blocks per thread.
    monkeypatch.setattr(nb_module, "_BRUTE_WORK", 0)
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 10**12 if select else 0)
    monkeypatch.setattr(screen, "_QUERY_BLOCK", 32)
    monkeypatch.setattr(screen, "_SYMMETRIC_BLOCK", 64)
    rng = np.random.default_rng(12)
    X = rng.integers(0, 4 if d < 10 else 2, size=(1500, d)).astype(float)  # ties: some rows overflow
    Q = None if loo else X[::3] + 0.5
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = kneighbors(X, 40, Q)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = kneighbors(X, 40, Q)
    finally:
        numba.set_num_threads(before)
    ref_dist, ref_ind = brute_kneighbors(X, 40, Q)
    assert_array_equal(one[1], ref_ind)
    assert_array_equal(many[1], ref_ind)
    assert_array_equal(one[0], many[0])


def test_extreme_magnitudes_are_exact(path):
    # Coordinates beyond float32's range (and tiny ones) must not overflow the screening.
    rng = np.random.default_rng(9)
    base = rng.integers(-3, 4, size=(600, 3)).astype(float)
    for factor in (2.0**200, 2.0**-200):
        dist, ind = kneighbors(base * factor, 8)
        ref_dist, ref_ind = brute_kneighbors(base, 8)
        assert_array_equal(ind, ref_ind)
        assert_array_equal(dist, ref_dist * factor**2)


# Regression tests from the kernel review: float32 underflow and float64 range.


def test_float32_underflow_of_products_is_covered(path):
    # Products near 2^-160 underflow in float32; the exact duplicate (rows 2, 3) must be found.
    a = 2.0**-80
    X = np.array([[1, 0], [-1, 0], [0, a], [0, a], [0, -a / 2], [0, -3 * a / 2]], float)
    dist, ind = kneighbors(X, 1)
    assert_array_equal(ind[:, 0], [2, 2, 3, 2, 5, 4])
    assert dist[2, 0] == dist[3, 0] == 0.0


def test_one_far_query_does_not_spoil_the_others():
    rng = np.random.default_rng(0)
    X, Q = rng.standard_normal((2000, 3)), rng.standard_normal((1500, 3))
    Q[0] = 1e30
    dist, ind = kneighbors(X, 5, Q)
    ref_dist, ref_ind = brute_kneighbors(X, 5, Q[1:])
    assert_array_equal(ind[1:], ref_ind)
    assert_allclose(dist[1:], ref_dist, rtol=RTOL, atol=1e-12)


def test_bulk_near_the_centre_with_far_points():
    # Half the rows carry a +-2^100 flag; the other half sit near the centre.
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4500, 3))
    X[3000:, 0] = np.where(np.arange(1500) % 2, 2.0**100, -(2.0**100))
    dist, ind = kneighbors(X, 5)
    rows = np.arange(0, 3000, 17)
    ref_dist, ref_ind = _brute_rows(X, rows, 5)
    assert_array_equal(ind[rows], ref_ind)


@pytest.mark.parametrize(
    "factor,message",
    [(1e160, "values too far apart for float64 squared distances"), (1e-170, "values too close together")],
)
def test_degenerate_float64_range_is_refused(factor, message):
    X = np.arange(1, 21, dtype=float).reshape(10, 2) * factor
    with pytest.raises(DataError, match=message):
        kneighbors(X, 3)
    assert kneighbors(np.ones((10, 2)) * factor, 3)[0].max() == 0.0  # identical points are fine


def test_tiny_reference_set_with_many_queries():
    rng = np.random.default_rng(0)
    X, Q = rng.standard_normal((3, 2)), rng.standard_normal((300_000, 2))
    dist, ind = kneighbors(X, 2, Q)
    ref_dist, ref_ind = brute_kneighbors(X, 2, Q[:2000])
    assert_array_equal(ind[:2000], ref_ind)


@pytest.mark.parametrize("k", [2.5, True, "2"])
def test_n_neighbors_must_be_an_integer(k):
    with pytest.raises(DataError, match="n_neighbors: expected an integer"):
        kneighbors(np.zeros((5, 2)), k)


def test_concurrent_calls_from_python_threads():
    # The searches and votes run on Python threads of their own (knnx._kernels.launch),
    # so threaded callers get correct results.
    from concurrent.futures import ThreadPoolExecutor

    from knnx import KNNClassifier

    rng = np.random.default_rng(13)
    X = rng.integers(0, 5, size=(600, 3)).astype(float)
    y = rng.integers(0, 3, size=600)
    ref_dist, ref_ind = brute_kneighbors(X, 9)
    ref_pred = KNNClassifier(k=9).fit(X, y).predict(X[:200])

    def work(seed):
        # small problems take the parallel brute-force kernel; 4000 x 4000 the screened path
        dist, ind = kneighbors(X, 9)
        big = np.random.default_rng(seed).standard_normal((4000, 4))
        kneighbors(big, 5)
        return ind, KNNClassifier(k=9).fit(X, y).predict(X[:200])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(8)))
    for ind, pred in results:
        assert_array_equal(ind, ref_ind)
        assert_array_equal(pred, ref_pred)


def test_trailing_zero_count_visits_mask_bits_in_order():
    # The screening kernels walk the flagged references of a 64-bit mask by counting
    # trailing zeros; check the intrinsic on single bits, the top bit and mixed masks.
    from knnx._kernels.neighbors import _cttz

    @numba.njit
    def bits(mask):
        out = []
        while mask != 0:
            out.append(_cttz(mask))
            mask &= mask - np.uint64(1)
        return out

    rng = np.random.default_rng(0)
    masks = [1, 2, 1 << 63, 0b1011000, (1 << 64) - 1, *rng.integers(1, 2**63, size=20, dtype=np.uint64)]
    for m in masks:
        expected = [t for t in range(64) if (int(m) >> t) & 1]
        assert list(bits(np.uint64(m))) == expected


def test_screening_with_neighbours_on_chunk_edges(monkeypatch):
    # Nearest references placed at the first and last positions of 64-wide chunks and
    # strips (bits 0 and 63 of the masks), in both screening directions.
    monkeypatch.setattr(nb_module, "_BRUTE_WORK", 0)
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 0)
    monkeypatch.setattr(screen, "_SYMMETRIC_BLOCK", 256)
    for d in (8, 130):
        rng = np.random.default_rng(d)
        X = rng.standard_normal((1100, d)) * 10.0
        edges = [0, 63, 64, 127, 255, 256, 319, 1023, 1099]
        X[edges] = X[5] + 1e-3 * rng.standard_normal((len(edges), d))
        dist, ind = kneighbors(X, 12)
        ref_dist, ref_ind = brute_kneighbors(X, 12)
        assert_array_equal(ind, ref_ind)
        assert_allclose(dist, ref_dist, rtol=RTOL, atol=1e-12)
        assert set(edges) <= set(ind[5])


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 5000])
def test_chunked_centring_and_float32_copy_equal_the_whole_array_expressions(n):
    """The screening's float32 copy is built in row chunks (no float64 copy of X); its bits
    and the spread equal those of the one-shot expressions they replace."""
    from knnx.neighbors.screen import _to_float32
    from knnx.neighbors.search import _centre

    rng = np.random.default_rng(n)
    R = rng.standard_normal((n, 13)) * 1e3 + 7.0
    Q = rng.standard_normal((5, 13)) * 2e3
    center = R.mean(axis=0)
    got_center, spread = _centre(R, Q, False)
    np.testing.assert_array_equal(got_center, center)
    assert spread == max(np.abs(R - center).max(), np.abs(Q - center).max())
    assert _centre(R, R, True)[1] == np.abs(R - center).max()
    for scale in (2.0 ** -np.ceil(np.log2(spread)), 0.37):
        expected = ((R - center) * scale).astype(np.float32)
        got = _to_float32(R, center, scale)
        assert got.dtype == np.float32 and got.flags.c_contiguous
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
