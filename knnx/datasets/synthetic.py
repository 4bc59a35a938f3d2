"""Seeded synthetic generators. Each returns a Dataset whose ``posterior`` is the true
class probability function, so estimated posteriors can be scored (KL, JS).

With ``n_test`` set, an independent test sample is drawn from the same distribution
and the Dataset gets a predefined split (train rows first).
"""

import numpy as np

from knnx.datasets._base import make_dataset
from knnx.errors import DataError
from knnx.limits import MAX_CLASSES, check_memory


def _streams(seed):
    """Independent generators for the training and the test sample of one seed.

    Drawing the test sample from its own stream means that asking for ``n_test``
    (or changing it) leaves the training sample unchanged.
    """
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return [
        np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, i)))
        for i in (0, 1)
    ]


def _gaussian_log_densities(X, means, covs):
    from scipy.stats import multivariate_normal  # scipy.stats: ~1 s to import, here when used

    return np.column_stack(
        [
            multivariate_normal(mean=m, cov=c, allow_singular=False).logpdf(X)
            for m, c in zip(means, covs, strict=True)
        ]
    ).reshape(len(X), len(means))


class GaussianPosterior:
    """True posterior of a Gaussian class-conditional model (a picklable callable)."""

    def __init__(self, means, covs, priors):
        self.means, self.covs, self.priors = means, covs, np.asarray(priors, dtype=float)

    def __call__(self, X):
        from scipy.special import logsumexp

        logp = _gaussian_log_densities(np.atleast_2d(X), self.means, self.covs) + np.log(self.priors)
        return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))

    def bayes_error(self):
        """``(value, bound)``: the Bayes error of a 2-D model by :func:`bayes_error_2d`."""
        return bayes_error_2d(self.means, self.covs, self.priors)


def _line_mass(x1, means, covs, priors):
    """integral over x2 of max_c pi_c f_c(x1, x2), exact for fixed x1.

    Along the line x1 = const, pi_c f_c(x1, .) = exp(a_c) N(x2; m_c, s_c^2) with a_c the log
    of pi_c times the x1-marginal density; the classes' log-densities differ by a quadratic
    in x2, whose real roots are the only places where the maximising class can change.
    """
    from scipy.special import ndtr

    a, m, s2 = [], [], []
    for mu, S, p in zip(means, covs, priors, strict=True):
        a.append(np.log(p) - 0.5 * np.log(2 * np.pi * S[0, 0]) - (x1 - mu[0]) ** 2 / (2 * S[0, 0]))
        m.append(mu[1] + S[0, 1] / S[0, 0] * (x1 - mu[0]))
        s2.append(S[1, 1] - S[0, 1] ** 2 / S[0, 0])
    a, m, s2 = np.array(a), np.array(m), np.array(s2)
    # log g_c(x2) = q2 x2^2 + q1 x2 + q0
    q2 = -0.5 / s2
    q1 = m / s2
    q0 = a - 0.5 * np.log(2 * np.pi * s2) - 0.5 * m**2 / s2
    cuts = []
    C = len(priors)
    for i in range(C):
        for j in range(i + 1, C):
            A, B, c0 = q2[i] - q2[j], q1[i] - q1[j], q0[i] - q0[j]
            if abs(A) <= 1e-12 * (abs(q2[i]) + abs(q2[j])):
                if B != 0.0:
                    cuts.append(-c0 / B)
            else:
                disc = B * B - 4 * A * c0
                if disc >= 0.0:
                    r = np.sqrt(disc)
                    cuts += [(-B - r) / (2 * A), (-B + r) / (2 * A)]
    edges = np.concatenate([[-np.inf], np.sort(cuts), [np.inf]])
    sd = np.sqrt(s2)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if lo == hi:
            continue
        if np.isfinite(lo) and np.isfinite(hi):
            t = (lo + hi) / 2
        elif np.isfinite(hi):
            t = hi - 1.0
        elif np.isfinite(lo):
            t = lo + 1.0
        else:
            t = 0.0
        c = int(np.argmax(q2 * t * t + q1 * t + q0))
        total += np.exp(a[c]) * (ndtr((hi - m[c]) / sd[c]) - ndtr((lo - m[c]) / sd[c]))
    return total


def bayes_error_2d(means, covs, priors, *, radius=12.0):
    """Bayes error 1 - integral max_c pi_c f_c(x) dx of 2-D Gaussian classes, by quadrature.

    The inner integral (along x2) is exact; the
    outer one runs over x1 in [min_c mu_c1 - radius sd_c1, max_c mu_c1 + radius sd_c1] by
    scipy.integrate.quad. Returns (value, bound): the mass left outside that interval is
    below sum_c pi_c P(|Z| > radius), and bound adds quad's error estimate to it.
    """
    from scipy import integrate, stats

    means = np.asarray(means, float)
    covs = [np.asarray(c, float) for c in covs]
    priors = np.asarray(priors, float)
    sd1 = np.array([np.sqrt(S[0, 0]) for S in covs])
    lo, hi = float(np.min(means[:, 0] - radius * sd1)), float(np.max(means[:, 0] + radius * sd1))
    inside, err = integrate.quad(
        _line_mass, lo, hi, args=(means, covs, priors), epsabs=1e-13, epsrel=1e-12, limit=1000
    )
    outside = float(np.sum(priors) * 2 * stats.norm.sf(radius))
    return 1.0 - inside, err + outside


def _check_positive_int(value, name, where):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise DataError(f"{where}: {name} must be a positive integer, got {value!r}")
    return int(value)


def _check_classes(value, where, name="n_classes"):
    C = _check_positive_int(value, name, where)
    if C > MAX_CLASSES:
        raise DataError(f"{where}: {name} = {C}, more than the limit of {MAX_CLASSES} classes")
    return C


def _check_rows(where, n_rows, d):
    """DataError before anything is drawn if ``n_rows`` rows of ``d`` features would exceed
    the memory limit (knnx.limits): the sample, its parts and the stacked copy, 8 bytes a
    value, and the labels."""
    check_memory(24 * n_rows * d + 16 * n_rows, f"synthetic {where}: {n_rows} rows x {d} features")


def _draw_counts(rng, n, n_per_class, priors, where):
    C = len(priors)
    if (n is None) == (n_per_class is None):
        raise DataError(f"{where}: give exactly one of n or n_per_class")
    if n_per_class is not None:
        return np.full(C, _check_positive_int(n_per_class, "n_per_class", where))
    return rng.multinomial(_check_positive_int(n, "n", where), priors)


def gaussians(means, covs, priors=None, *, n=None, n_per_class=None, n_test=None, seed=0, name="gaussians"):
    """Classes with Gaussian class-conditional densities N(means[c], covs[c]).

    Parameters
    ----------
    means : array-like of shape (n_classes, n_features)
    covs : array-like of shape (n_classes, n_features, n_features), or scalars (sigma^2 I)
    priors : array-like of shape (n_classes,), default uniform
    n : int, optional
        Sample size; class counts are drawn from Multinomial(n, priors).
    n_per_class : int, optional
        Exact count per class (use either n or n_per_class).
    n_test : int, optional
        Size of an independent test sample (counts drawn from the priors).
    seed : int or SeedSequence
    """
    where = name
    means = np.atleast_2d(np.asarray(means, dtype=float))
    C, d = means.shape
    _check_classes(C, where, "the number of means")
    covs_in = list(covs) if np.ndim(covs) else [covs] * C
    if len(covs_in) != C:
        raise DataError(f"{where}: {C} means but {len(covs_in)} covariances")
    covs = [np.eye(d) * float(c) if np.ndim(c) == 0 else np.asarray(c, dtype=float) for c in covs_in]
    for c in covs:
        if c.shape != (d, d) or not np.allclose(c, c.T) or np.linalg.eigvalsh(c).min() <= 0:
            raise DataError(f"{where}: every covariance must be a symmetric positive definite {d}x{d} matrix")
    priors = np.full(C, 1.0 / C) if priors is None else np.asarray(priors, dtype=float)
    if priors.shape != (C,) or (priors < 0).any() or not np.isclose(priors.sum(), 1.0):
        raise DataError(f"{where}: priors must be {C} non-negative numbers summing to 1")
    rows = sum(_check_positive_int(v, k, where) for v, k in ((n, "n"), (n_test, "n_test")) if v is not None)
    if n_per_class is not None:
        rows += _check_positive_int(n_per_class, "n_per_class", where) * C
    _check_rows(where, rows, d)
    streams = _streams(seed)
    sizes = [_draw_counts(streams[0], n, n_per_class, priors, where)]
    if n_test is not None:
        sizes.append(streams[1].multinomial(_check_positive_int(n_test, "n_test", where), priors))
    Xs, ys = [], []
    for counts, rng in zip(sizes, streams, strict=False):
        for c in range(C):
            Xs.append(rng.multivariate_normal(means[c], covs[c], size=counts[c]))
            ys.append(np.full(counts[c], c))
    X, y = np.vstack(Xs), np.concatenate(ys)
    n_train = int(sizes[0].sum())
    split = (np.arange(n_train), np.arange(n_train, len(y))) if n_test is not None else None
    posterior = GaussianPosterior(means, covs, priors)
    return make_dataset(
        name,
        X,
        y,
        np.arange(C).astype(str),
        [f"x{j}" for j in range(d)],
        split=split,
        posterior=posterior,
        metadata={"source": "synthetic", "citation": "", "notes": f"{C} Gaussian classes in {d}-D"},
    )


def paredes2006(n_per_class=64, *, n_test=None, seed=0):
    """Three 2-D Gaussian classes of Paredes & Vidal (2006), Sec. 5.1, equal priors.

    A: mean (2, 0.5), identity covariance; B: mean (0, 2), covariance [[1, .5], [.5, 1]];
    C: mean (0, -1), covariance [[1, -.5], [-.5, 1]]. The paper uses 8..256 training
    prototypes per class and a fixed test set of 5000.
    """
    means = [[2.0, 0.5], [0.0, 2.0], [0.0, -1.0]]
    covs = [np.eye(2), [[1.0, 0.5], [0.5, 1.0]], [[1.0, -0.5], [-0.5, 1.0]]]
    ds = gaussians(means, covs, n_per_class=n_per_class, n_test=n_test, seed=seed, name="paredes2006")
    ds.metadata.update(
        citation="Paredes, R. and Vidal, E. (2006). Learning weighted metrics to minimize nearest-neighbor "
        "classification error. IEEE TPAMI 28(7), Sec. 5.1.",
        notes="classes A, B, C coded 0, 1, 2",
    )
    return ds


def dambrosio2012(n=1500, *, n_classes=3, sigma=0.5, n_test=None, seed=0):
    """C equiprobable 2-D Gaussian classes N(mu_c, sigma^2 I) (D'Ambrosio et al. 2012, Sec. 5.3).

    The paper does not give the means. knnx places them evenly on the unit circle,
    ``mu_c = (cos(2 pi c / C), sin(2 pi c / C))``, so that sigma in [0.1, 1.1] spans
    well-separated to heavily overlapping classes as the paper describes. The paper
    uses 1500 training and 4500 test examples per simulation.
    """
    C = _check_classes(n_classes, "dambrosio2012")
    if not sigma > 0:
        raise DataError(f"dambrosio2012: sigma must be positive, got {sigma!r}")
    angles = 2 * np.pi * np.arange(C) / C
    means = np.column_stack([np.cos(angles), np.sin(angles)])
    ds = gaussians(means, [sigma**2] * C, n=n, n_test=n_test, seed=seed, name="dambrosio2012")
    ds.metadata.update(
        citation="D'Ambrosio, R. et al. (2012). Boosting nearest neighbors for the efficient estimation of "
        "posteriors. ECML-PKDD, Sec. 5.3.",
        notes="means on the unit circle (knnx's choice; the paper gives none)",
    )
    return ds


def _celisse_corner(X):
    return ((X[:, 0] < 0.2) & (X[:, 1] < 0.2)) | ((X[:, 0] > 0.8) & (X[:, 1] > 0.8))


class CelissePosterior:
    """P(Y = 1 | x) = q in the two corner squares, 1 - q elsewhere."""

    def __init__(self, q):
        self.q = q

    def __call__(self, X):
        X = np.atleast_2d(X)
        p1 = np.where(_celisse_corner(X), self.q, 1.0 - self.q)
        return np.column_stack([1.0 - p1, p1])


def celisse2011(n=50, *, q=0.2, n_test=None, seed=0):
    """Celisse & Mary-Huard (2011), Sec. 4.3: 2-D mixture of three Gaussians, label noise q.

    X ~ 0.2 N((.25,.25), I) + 0.2 N((.5,.75), I) + 0.6 N((.75,.75), I) (the common
    covariance I_2 is kept as printed, although it is wide for means in [0,1]^2).
    P(Y=1|X) = q if (X1 < .2 and X2 < .2) or (X1 > .8 and X2 > .8), else 1 - q.
    Classes are coded 0 and 1. The paper starts from 50 training and 10 000 pool points.
    """
    where = "celisse2011"
    if not 0.0 <= q <= 1.0:
        raise DataError(f"{where}: q must lie in [0, 1], got {q!r}")
    streams = _streams(seed)
    means = np.array([[0.25, 0.25], [0.5, 0.75], [0.75, 0.75]])
    props = np.array([0.2, 0.2, 0.6])
    sizes = [_check_positive_int(n, "n", where)]
    if n_test is not None:
        sizes.append(_check_positive_int(n_test, "n_test", where))
    _check_rows(where, sum(sizes), 2)
    Xs, ys = [], []
    for size, rng in zip(sizes, streams, strict=False):
        comp = rng.choice(3, size=size, p=props)
        Xp = means[comp] + rng.standard_normal((size, 2))
        p1 = np.where(_celisse_corner(Xp), q, 1.0 - q)
        Xs.append(Xp)
        ys.append((rng.random(size) < p1).astype(int))
    X, y = np.vstack(Xs), np.concatenate(ys)
    split = (np.arange(sizes[0]), np.arange(sizes[0], len(y))) if n_test is not None else None
    return make_dataset(
        "celisse2011",
        X,
        y,
        np.array(["0", "1"]),
        ["x0", "x1"],
        split=split,
        posterior=CelissePosterior(q),
        metadata={
            "source": "synthetic",
            "citation": "Celisse, A. and Mary-Huard, T. (2011). Exact cross-validation for kNN. JSFdS 152(3), Sec. 4.3.",
            "notes": f"label noise q={q}",
        },
    )


def blobs(n=1000, *, n_features=2, n_classes=3, spread=10.0, n_test=None, seed=0):
    """Scalable isotropic Gaussian blobs: C equiprobable classes N(mu_c, I) in d dimensions.

    The means are drawn uniformly in [-spread, spread]^d from the same seed. Meant for
    large-domain and timing runs (n, d, C as large as memory allows); exposes the
    true posterior like every generator here.
    """
    where = "blobs"
    d = _check_positive_int(n_features, "n_features", where)
    C = _check_classes(n_classes, where)
    sizes = [_check_positive_int(n, "n", where)]
    if n_test is not None:
        sizes.append(_check_positive_int(n_test, "n_test", where))
    _check_rows(where, sum(sizes) + C, d)  # the means: C rows more
    streams = _streams(seed)
    means = streams[0].uniform(-spread, spread, size=(C, d))
    Xs, ys = [], []
    for size, rng in zip(sizes, streams, strict=False):
        yp = rng.integers(0, C, size=size)
        Xs.append(means[yp] + rng.standard_normal((size, d)))
        ys.append(yp)
    X, y = np.vstack(Xs), np.concatenate(ys)
    split = (np.arange(sizes[0]), np.arange(sizes[0], len(y))) if n_test is not None else None
    return make_dataset(
        "blobs",
        X,
        y,
        np.arange(C).astype(str),
        [f"x{j}" for j in range(d)],
        split=split,
        posterior=GaussianPosterior(means, [np.eye(d)] * C, np.full(C, 1.0 / C)),
        metadata={
            "source": "synthetic",
            "citation": "",
            "notes": f"{C} unit-variance blobs in {d}-D",
        },
    )


GENERATORS = {
    "celisse2011": celisse2011,
    "paredes2006": paredes2006,
    "dambrosio2012": dambrosio2012,
    "gaussians": gaussians,
    "blobs": blobs,
}
