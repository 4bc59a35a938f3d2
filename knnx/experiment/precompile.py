"""Fill numba's on-disk cache ahead of use: every kernel family compiled once, on tiny
problems, so that no later process (a run, a worker, a test) waits for it.

knnx's kernels are compiled on first use and kept in numba's cache (beside knnx's
sources, or under ``NUMBA_CACHE_DIR``); a run compiles what its cells need during its
warm-up (:mod:`knnx.experiment.warmup`). :func:`precompile` compiles the families of
:data:`FAMILIES` (or some of them) by running each on a tiny problem through the code a
run takes: every search path, kNN under every distance (uniform and distance weights,
probabilities), knnx's estimators with their defaults, the exact leave-p-out risks, the
prototype selections and the metric learners. It changes no result: what it compiles is
what a first use would compile, and a kernel already in the cache is loaded, not
compiled again.

``python -m knnx.experiment.precompile [FAMILY ...] [--jobs N]`` runs it (``--jobs``:
families spread over N processes, each compiling its own); the test suite runs it once
before its workers start (tests/conftest.py).
"""

import argparse
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

# kNN under these distances: the mixed ones read columns 4 and 5 as category codes.
DISTANCES = ("euclidean", "manhattan", "chebyshev", "minkowski", "seuclidean", "mahalanobis", "cosine")
MIXED = ("hamming", "heom", "hvdm", "vdm", "gower")


def _problem(n=120, seed=0):
    """``(X, y)``: ``n`` rows of 4 numeric and 2 nominal (0-2) columns, 3 classes."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.normal(size=(n, 4)), rng.integers(0, 3, size=(n, 2)).astype(np.float64)])
    y = (X[:, 0] + X[:, 4] + rng.normal(scale=0.5, size=n) > 1).astype(np.int64) + (X[:, 1] > 1)
    return X, y


def _search():
    from knnx.neighbors.search import warm_up_path

    for path in ("metric", "select", "brute", "screen", "seed", "symmetric"):
        warm_up_path(path)


def _knn():
    from knnx.estimators.knn import KNNClassifier

    X, y = _problem()
    for metric in DISTANCES + MIXED:
        # hamming and vdm compare category codes only; heom, hvdm and gower read columns 4, 5 so
        data, nominal = (
            (X[:, 4:], {})
            if metric in ("hamming", "vdm")
            else (X, {"nominal": [4, 5]} if metric in MIXED else {})
        )
        for weights in ("uniform", "distance"):
            for k in (1, 5):
                est = KNNClassifier(k=k, metric=metric, weights=weights, **nominal).fit(data, y)
                est.predict(data[:30])
                est.predict_proba(data[:30])


def _estimators():
    from knnx.estimators.registry import ALGORITHMS

    X, y = _problem()
    for name in ("knn", "knn_lpo", "unn", "unn_cv", "gnnb", "weighted_metric"):
        est = ALGORITHMS[name]().fit(X[:, :4], y)
        est.predict(X[:30, :4])
        if hasattr(est, "predict_proba"):
            est.predict_proba(X[:30, :4])


def _lpo():
    from knnx.lpo.risk import lpo_risk, select_k

    X, y = _problem(60)
    y = (y > 0).astype(np.int64)  # two classes: the weighted risk's condition
    for weights in ("uniform", "distance"):
        lpo_risk(X[:, :4], y, 2, 5, weights)
        select_k(X[:, :4], y, 2, 5, weights)
        lpo_risk(X, y, 2, 5, weights, metric="hvdm", nominal=[4, 5])


def _reduction():
    import knnx.reduction as R

    X, y = _problem()
    for name in ("CNN", "FCNN", "OSS", "RNN", "ENN", "NCR", "RENN", "AllKNN", "Multiedit", "TomekLinks"):
        getattr(R, name)().fit_resample(X[:, :4], y)
    for name in ("LVQ", "DROP3", "HMNEI", "IB3", "ICF", "RMHC", "SSMA"):
        getattr(R, name)().fit_resample(X[:, :4], y)


def _metric_learning():
    import knnx.metric_learning as M

    X, y = _problem()
    for name in ("NCA", "LMNN", "ITML", "LFDA"):
        getattr(M, name)().fit(X[:, :4], y).transform(X[:30, :4])


# name -> what it compiles; in the order a newcomer meets them.
FAMILIES = {
    "search": _search,
    "knn": _knn,
    "estimators": _estimators,
    "lpo": _lpo,
    "reduction": _reduction,
    "metric-learning": _metric_learning,
}


def _compile_family(name):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem's convergence or size warnings
        FAMILIES[name]()
    return name, time.perf_counter() - start


def precompile(families=None, jobs=1, progress=None):
    """Compile (or load from numba's cache) the kernels of ``families`` (names of
    :data:`FAMILIES`; default every one) in ``jobs`` processes; ``progress(name,
    seconds)`` is told each family as it is done. Returns {family: seconds}."""
    names = list(FAMILIES) if families is None else list(families)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise ValueError(f"{', '.join(unknown)}: not a kernel family; known: {', '.join(FAMILIES)}")
    done = {}
    if jobs <= 1:
        outcomes = map(_compile_family, names)
    else:
        pool = ProcessPoolExecutor(min(jobs, len(names)))
        outcomes = pool.map(_compile_family, names)
    for name, seconds in outcomes:
        done[name] = seconds
        if progress is not None:
            progress(name, seconds)
    if jobs > 1:
        pool.shutdown()
    return done


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m knnx.experiment.precompile", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "families", nargs="*", help=f"kernel families (default: all of {', '.join(FAMILIES)})"
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes (families spread over them)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    precompile(args.families or None, args.jobs, lambda n, s: print(f"{n}: {s:.1f} s", flush=True))
    print(f"numba's cache filled in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
