"""Oracles of the metric tests (not a test module): the k nearest by a stable sort of a
full distance matrix, and the mixed-type distances written from their papers.

HEOM and HVDM follow Wilson & Martinez, "Improved heterogeneous distance functions",
JAIR 6 (1997): d_a = 1 if either value is missing; HEOM: overlap (0 if equal, else 1)
for a nominal attribute, |x - y| / range_a for a numeric one; HVDM: normalized_vdm_a
= sqrt(sum_c (P_axc - P_ayc)^2) (their N2, P_axc = N_axc / N_ax) for a nominal
attribute, |x - y| / (4 sigma_a) for a numeric one; distance sqrt(sum_a d_a^2). VDM is
HVDM with every attribute nominal. Gower, "A general coefficient of similarity",
Biometrics 27 (1971): sum_a delta_a d_a / sum_a delta_a, delta_a = 0 when either value
is missing (d_a as HEOM's, not squared). knnx's conventions where the papers are
silent (its module docstring): statistics from the training rows only, a range or
sigma of 0 (or of a column without values) gives divisor 1, a value absent from the
training rows has P_axc = 0 for every class, a Gower pair without a common attribute
has distance 1.

Sums run attribute by attribute from 0.0 and class by class, the order the
definitions are written in, so that the oracle's float64 values (and hence its ties)
are those of the formulas; hvdm's nominal term d_a^2 is summed as sum_c (...)^2, the
square of normalized_vdm without a square root taken and undone.
"""

import numpy as np


def stable_knn(D, k, loo):
    """The k smallest entries of each row of ``D`` ordered by (value, column): a stable
    argsort; ``loo``: the diagonal is left out (a row is not its own neighbour)."""
    D = np.array(D, dtype=np.float64)
    if loo:
        np.fill_diagonal(D, np.inf)
    ind = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, ind, 1), ind


def ranges(R, nominal):
    """max - min of each numeric column's present values in the training rows R; 1
    where that is 0 or the column has none (and for nominal columns, unused)."""
    out = np.ones(R.shape[1])
    for a in range(R.shape[1]):
        v = R[~np.isnan(R[:, a]), a]
        if a not in nominal and v.size and v.max() - v.min() > 0:
            out[a] = v.max() - v.min()
    return out


def four_sigmas(R, nominal):
    """4 * the population standard deviation (ddof 0) of each numeric column's present
    values in R; 1 where sigma is 0 or undefined."""
    out = np.ones(R.shape[1])
    for a in range(R.shape[1]):
        v = R[~np.isnan(R[:, a]), a]
        if a not in nominal and v.size and v.std() > 0:
            out[a] = 4.0 * v.std()
    return out


def class_probabilities(codes, y, n_classes):
    """{value: [P(c | value) for c]} over the training rows whose value is present."""
    probs = {}
    for v in np.unique(codes[~np.isnan(codes)]):
        rows = codes == v
        probs[float(v)] = [
            np.count_nonzero(rows & (y == c)) / np.count_nonzero(rows) for c in range(n_classes)
        ]
    return probs


def vdm_squared(p, q):
    """normalized_vdm squared: sum_c (p_c - q_c)^2, class by class from 0.0."""
    acc = 0.0
    for pc, qc in zip(p, q, strict=True):
        diff = pc - qc
        acc += diff * diff
    return acc


def mixed_reduced(metric, R, Q, nominal=(), y=None):
    """Matrix of reduced distances (HEOM, HVDM, VDM: sum_a d_a^2; Gower: the distance)
    from each row of Q to each row of R, statistics fitted on R (and y)."""
    R, Q = np.asarray(R, dtype=np.float64), np.asarray(Q, dtype=np.float64)
    d = R.shape[1]
    nominal = tuple(range(d)) if metric == "vdm" else tuple(nominal)
    if metric in ("hvdm", "vdm"):
        scale = four_sigmas(R, nominal)
        y = np.asarray(y)
        n_classes = int(y.max()) + 1
    else:
        scale = ranges(R, nominal)
    num = np.zeros((Q.shape[0], R.shape[0]))
    den = np.zeros_like(num)
    for a in range(d):
        q, r = Q[:, a][:, None], R[:, a][None, :]
        missing = np.isnan(q) | np.isnan(r)
        if a in nominal and metric in ("hvdm", "vdm"):
            probs = class_probabilities(R[:, a], y, n_classes)
            unseen = [0.0] * n_classes
            table = {}
            values = sorted(set(np.unique(q[~np.isnan(q)]).tolist()) | set(probs))
            for u in values:
                for v in values:
                    table[u, v] = vdm_squared(probs.get(u, unseen), probs.get(v, unseen))
            term = np.array(
                [[1.0 if np.isnan(qi) or np.isnan(ri) else table[qi, ri] for ri in R[:, a]] for qi in Q[:, a]]
            )
        else:
            with np.errstate(invalid="ignore"):
                if a in nominal:
                    da = np.where(q != r, 1.0, 0.0)
                else:
                    da = np.abs(q - r) / scale[a]
            if metric == "gower":
                num += np.where(missing, 0.0, da)
                den += np.where(missing, 0.0, 1.0)
                continue
            term = np.where(missing, 1.0, da * da)
        num += term
    if metric == "gower":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / den, 1.0)
    return num


def mixed_distance(metric, reduced):
    """Distances from reduced distances: sqrt for HEOM, HVDM and VDM, Gower's as is."""
    return reduced if metric == "gower" else np.sqrt(reduced)


def mixed_data(seed, n, m, n_classes=3, missing=0.1):
    """(X, y, queries, nominal): training rows and queries of mixed type with ties.

    Columns: 0, 2, 4 numeric with small integer values (column 4 constant in the
    training rows), 1, 3 nominal codes 0..3 (code 2 of column 3 never in training),
    5 numeric and 6 nominal with no value in the training rows; about ``missing`` of
    the other entries NaN. The queries reach outside the training ranges (numeric
    values -2 and 6), hold nominal codes never seen in training (5 in column 1, 2
    and 7 in column 3), values in the all-missing columns, and rows 0-2 are
    special: row 0 entirely missing, row 1 present only where training row 0 is
    missing, row 2 a copy of training row 3 (a distance-0 match).
    """
    rng = np.random.default_rng(seed)
    d = 7
    nominal = (1, 3, 6)

    def draw(rows, lo, hi):
        A = np.empty((rows, d))
        A[:, 0] = rng.integers(lo, hi, rows)
        A[:, 1] = rng.integers(0, 4, rows)
        A[:, 2] = rng.integers(lo, hi, rows) * 0.5
        A[:, 3] = rng.choice([0, 1, 3], rows)
        A[:, 4] = 2.0
        A[:, 5] = rng.integers(0, 3, rows)
        A[:, 6] = rng.integers(0, 2, rows)
        A[rng.random(A.shape) < missing] = np.nan
        return A

    X = draw(n, 0, 4)
    X[:, 5] = np.nan
    X[:, 6] = np.nan
    X[1] = X[0]  # an exact duplicate (NaNs included)
    y = rng.integers(0, n_classes, n)
    Q = draw(m, -2, 7)
    Q[rng.random(m) < 0.2, 1] = 5.0
    Q[rng.random(m) < 0.3, 3] = rng.choice([2.0, 7.0])
    Q[rng.random(m) < 0.3, 4] = 3.0  # differs from the constant training column
    Q[0] = np.nan
    Q[1] = np.where(np.isnan(X[0]), 1.0, np.nan)
    Q[2] = X[3]
    return X, y, Q, nominal
