"""Benchmark: a tuned NCA -> kNN contestant, knnx's shared step fits against GridSearchCV.

What it measures
----------------
The contestant ``steps: [scale, nca]`` before kNN, with k in 1..21 (21 values) chosen by
5-fold stratified inner CV on each training part, then refitted, on KEEL's 10-fold
partitions. knnx runs it as a spec (``knnx.run_spec``, in this process, ``tune: {cv:
5}``): scaling and NCA are fitted once per inner training fold and once for the refit
(6 NCA fits per outer fold), and every k reads them. The peer is scikit-learn's
``GridSearchCV`` over ``Pipeline([StandardScaler(), NeighborhoodComponentsAnalysis(),
KNeighborsClassifier(algorithm="brute")])`` on the same inner folds
(``StratifiedKFold(5, shuffle=True, random_state=knnx.spec.tune_seed(...))``), which
refits the pipeline, NCA included, for every (k, inner fold): 106 NCA fits per outer
fold, the way a grid over a pipeline's last step is searched there. Both use tie rule
"lowest" (scikit-learn's), so the chosen k must be the same in every outer fold, and
so must the test errors; the benchmark prints how many folds agree.

Printed: per dataset, knnx's wall seconds (the whole run: validation, cells, writing),
the peer's (its fits and predictions only), their ratio, and the folds with the same
chosen k and the same test error. One run each: the peer takes minutes.

How to run
----------
    make bench
    python benchmarks/pipelines.py [--sets keel.wine keel.glass ...]
"""

import argparse
import tempfile
import time

import numpy as np

from knnx.experiment.context import PROCESS
from knnx.experiment.runner import run_spec
from knnx.results import read_results
from knnx.spec import tune_seed, validate_spec
from knnx.steps import StepFits

KS = list(range(1, 22))
CV, SEED = 5, 0


def spec_of(name):
    return {
        "name": "nca-bench",
        "seed": SEED,
        "datasets": [name],
        "protocol": {"kind": "partitions"},
        "algorithms": [
            {
                "name": "knn",
                "params": {"k": KS, "tie": "lowest"},
                "steps": ["scale", "nca"],
                "tune": {"cv": CV},
            }
        ],
    }


def knnx_run(name):
    """(seconds, {fold: chosen k}, {fold: error}, NCA fits made)."""
    PROCESS.step_fits = StepFits()
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        run_spec(spec_of(name), out=out, report=False)
        seconds = time.perf_counter() - t
        frame = read_results(f"{out}/results.csv")
    by_fold = frame.pivot_table(index="fold", columns="metric", values="value")
    misses = PROCESS.step_fits.misses
    return seconds, by_fold["chosen_k"].to_dict(), by_fold["error"].to_dict(), misses // 2  # scale and nca


def sklearn_run(name):
    """(seconds, {fold: chosen k}, {fold: error}) of GridSearchCV per outer fold."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier, NeighborhoodComponentsAnalysis
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    vspec = validate_spec(spec_of(name))
    ds = vspec.datasets[0]
    chosen, errors, seconds = {}, {}, 0.0
    for s in vspec.splits[0]:
        pipe = Pipeline(
            [
                ("scale", StandardScaler()),
                ("nca", NeighborhoodComponentsAnalysis(random_state=SEED)),
                ("clf", KNeighborsClassifier(algorithm="brute")),
            ]
        )
        inner = StratifiedKFold(CV, shuffle=True, random_state=tune_seed(SEED, ds.name, s.repeat, s.fold))
        t = time.perf_counter()
        search = GridSearchCV(pipe, {"clf__n_neighbors": KS}, cv=inner, n_jobs=1).fit(
            ds.X[s.train], ds.y[s.train]
        )
        y_pred = search.predict(ds.X[s.test])
        seconds += time.perf_counter() - t
        chosen[s.fold] = float(search.best_params_["clf__n_neighbors"])
        errors[s.fold] = float(np.mean(y_pred != ds.y[s.test]))
    return seconds, chosen, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["keel.wine", "keel.glass", "keel.heart"])
    args = parser.parse_args()
    print(
        f"scale > NCA > kNN, k in {KS[0]}..{KS[-1]} tuned by {CV}-fold inner CV, on KEEL's 10-fold partitions"
    )
    print(
        f"  {'data':<14s} {'knnx s':>8s} {'sklearn s':>9s} {'ratio':>6s} {'NCA fits':>8s} {'same k':>7s} {'same err':>8s}"
    )
    knnx_run("keel.iris")  # warm-up (numba kernels of kNN)
    for name in args.sets:
        ours, k_ours, e_ours, fits = knnx_run(name)
        peer, k_peer, e_peer = sklearn_run(name)
        same_k = sum(k_ours[f] == k_peer[f] for f in k_peer)
        same_e = sum(e_ours[f] == e_peer[f] for f in e_peer)
        print(
            f"  {name:<14s} {ours:8.2f} {peer:9.2f} {peer / ours:5.1f}x {fits:8d} "
            f"{same_k:>3d}/{len(k_peer):<3d} {same_e:>4d}/{len(e_peer):<3d}"
        )


if __name__ == "__main__":
    main()
