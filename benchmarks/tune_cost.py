"""Benchmark: a tuned cell's recorded seconds against a direct GridSearchCV fit.

What it measures
----------------
A tuned cell (an algorithm entry with ``tune: {cv: 3}``) records ``tune_seconds``
(the inner search: every setting fitted on every inner fold of the training part and
scored) and ``fit_seconds`` (the inner search and the refit of the chosen setting on
the whole training part, what ``GridSearchCV(..., refit=True).fit`` takes). This
script runs real ``knnx run`` processes (``python -m knnx.cli run SPEC --jobs 1``:
5-fold stratified CV, ``tune: {cv: 3}``, the spec's default preprocess unless
``--standardize`` says otherwise) and, for every cell of results.csv, times
``GridSearchCV(estimator, grid, cv=StratifiedKFold(3, shuffle=True,
random_state=tune_seed(...)), refit=True, n_jobs=1).fit(X_train, y_train)`` on the same
training part, standardised as the run standardises it
(``knnx.experiment.parts.split_parts`` with the spec's ``preprocess.standardize``), so
both do the same work on the same inner folds. The cases:

* ``svc``: scikit-learn's ``SVC`` with C in [0.1, 1, 10, 100] x gamma in ['scale',
  0.01, 0.1, 1] (16 settings);
* ``knn``: knnx's ``knn`` with k in [1, 3, ..., 21] (11 settings) in a run with
  ``share_graphs: false``, so that each inner fit searches its own neighbours as
  ``GridSearchCV(KNNClassifier(), ...)`` does: the same work;
* ``knn shared``: the same in a run with the default ``share_graphs: true`` (one
  neighbour graph per inner fold read by every k): less work than GridSearchCV's,
  printed for what a default run costs, not for the 20 % goal. Its direct fits are
  ``knn``'s (the same training parts and inner folds), not timed twice.

Each on ``german`` (1000 x 61) and ``liver`` (345 x 6). The goal: a tuned cell's
recorded ``fit_seconds`` within 20 % of the direct GridSearchCV fit (ratio in [0.8,
1.2]) for the cases that do the same work.

Timing: ``--rounds`` rounds (default 3), each one knnx run per spec (a fresh process
and output folder: nothing cached, its kernel warm-up excluded from the recorded
seconds, as in any run) and one direct GridSearchCV per cell, in a fresh spawned
process too, warmed up on one cell per estimator (a process's own speed on this
machine varies by 10-20 %: one long-lived process would carry its luck into every
round). knnx goes first in even rounds, GridSearchCV in odd ones, so both meet the
same load. Per cell: the median over rounds; per case: the median over its cells (5 folds), and ratio =
knnx median / GridSearchCV median (``cells``: the range of the per-cell ratios).
``search`` is GridSearchCV's time without its ``refit_time_``, beside knnx's
``tune_seconds``. ``loop`` times the same fits and scores as a plain Python loop
(clone, fit, ``accuracy_score`` of predict, the first best refitted) right after each
GridSearchCV fit: ``GSCV/loop`` is GridSearchCV's own bookkeeping (clone, dispatch,
scorer, cv_results_; about 1 ms per fit), which weighs on small problems, and
``knnx/loop`` says whether the recorded seconds are those of the work itself.

Chosen settings: a cell's rows ``chosen_<param>`` (a number as itself, another value by
its position in the spec's list) against GridSearchCV's ``best_params_`` encoded the
same way; they should agree on every cell (same folds, accuracy, first of ties).

How to run
----------
    python benchmarks/tune_cost.py [--rounds 3] [--standardize false] [--csv PATH]

``--csv PATH`` writes the table rows to PATH and the per-(cell, round) timings and
choices to PATH's stem + ``-cells.csv``. About 3.5 minutes with the defaults on a
2-core machine. Run nothing else heavy meanwhile: the figures are medians of a few
seconds each.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import pandas as pd
import yaml

DATASETS = ["german", "liver"]
FOLDS, INNER_CV, SEED = 5, 3, 0
SVC_GRID = {"C": [0.1, 1, 10, 100], "gamma": ["scale", 0.01, 0.1, 1]}
KNN_GRID = {"k": list(range(1, 22, 2))}
GOAL = 0.20


@dataclass(frozen=True)
class Case:
    """One (estimator, grid) and the spec whose run records it."""

    name: str
    spec: str  # which spec of specs() runs it
    algorithm: str  # the entry's id in results
    same_work: bool  # whether GridSearchCV does the knnx cell's work (the 20 % goal)

    def estimator(self):
        if self.algorithm == "svc":
            from sklearn.svm import SVC

            return SVC()
        from knnx import KNNClassifier

        return KNNClassifier()

    def grid(self):
        return SVC_GRID if self.algorithm == "svc" else KNN_GRID


CASES = [
    Case("svc", "separate", "svc", True),
    Case("knn", "separate", "knn", True),
    Case("knn shared", "shared", "knn", False),
]


def specs(standardize):
    """{name: spec dict}: ``separate`` (share_graphs false: SVC and kNN) and ``shared``
    (the default share_graphs true: kNN)."""
    tune = {"cv": INNER_CV}
    base = {
        "seed": SEED,
        "datasets": DATASETS,
        "protocol": {"kind": "kfold", "folds": FOLDS},
        "metrics": ["error"],
    }
    if standardize is not None:
        base["preprocess"] = {"standardize": standardize}
    svc = {"estimator": "sklearn.svm:SVC", "id": "svc", "params": SVC_GRID, "tune": tune}
    knn = {"name": "knn", "id": "knn", "params": KNN_GRID, "tune": tune}
    return {
        "separate": {"name": "tune_cost_separate", **base, "share_graphs": False, "algorithms": [svc, knn]},
        "shared": {"name": "tune_cost_shared", **base, "algorithms": [knn]},
    }


def knnx_run(spec_path, out):
    """Run ``knnx run`` in a process of its own; its results.csv as a frame."""
    cmd = [sys.executable, "-m", "knnx.cli", "run", str(spec_path), "--out", str(out)]
    cmd += ["--jobs", "1", "--no-resume", "--quiet", "--no-report"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return pd.read_csv(out / "results.csv")


def cell_records(frame):
    """{(algorithm, dataset, repeat, fold): {fit, tune, predict, chosen: {param: value}}}."""
    out = {}
    for (alg, data, repeat, fold), rows in frame.groupby(["algorithm", "dataset", "repeat", "fold"]):
        first = rows.iloc[0]
        chosen = {
            m[len("chosen_") :]: v
            for m, v in zip(rows["metric"], rows["value"], strict=True)
            if m.startswith("chosen_")
        }
        out[(alg, data, int(repeat), int(fold))] = {
            "fit": float(first["fit_seconds"]),
            "tune": float(first["tune_seconds"]),
            "predict": float(first["predict_seconds"]),
            "n_train": int(first["n_train"]),
            "chosen": chosen,
        }
    return out


def encode(best, grid):
    """GridSearchCV's ``best_params_`` as knnx records its choice: the parameters that
    vary, a number as itself, another value by its position in the grid's list."""
    out = {}
    for name, values in grid.items():
        if len(values) > 1:
            value = best[name]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            out[name] = float(value) if number else float(values.index(value))
    return out


def direct_fit(case, X, y, seed):
    """Seconds of one GridSearchCV fit, its refit_time_, and its choice (encoded)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    inner = StratifiedKFold(INNER_CV, shuffle=True, random_state=seed)
    search = GridSearchCV(case.estimator(), case.grid(), cv=inner, refit=True, n_jobs=1)
    t0 = time.perf_counter()
    search.fit(X, y)
    seconds = time.perf_counter() - t0
    return seconds, search.refit_time_, encode(search.best_params_, case.grid())


def loop_fit(case, X, y, seed):
    """Seconds of the same fits and scores as a plain loop, without GridSearchCV's
    bookkeeping (clone, dispatch, scorer, cv_results_): every setting in ParameterGrid
    order fitted on every inner fold and scored by accuracy, the first best refitted."""
    from sklearn.base import clone
    from sklearn.metrics import accuracy_score
    from sklearn.model_selection import ParameterGrid, StratifiedKFold

    t0 = time.perf_counter()
    folds = list(StratifiedKFold(INNER_CV, shuffle=True, random_state=seed).split(X, y))
    settings = list(ParameterGrid(case.grid()))
    means = []
    for setting in settings:
        scores = []
        for inner, held in folds:
            est = clone(case.estimator()).set_params(**setting).fit(X[inner], y[inner])
            scores.append(accuracy_score(y[held], est.predict(X[held])))
        means.append(sum(scores) / len(scores))
    best = settings[means.index(max(means))]
    clone(case.estimator()).set_params(**best).fit(X, y)
    return time.perf_counter() - t0


def direct_round(spec_path):
    """One round of the direct side, run in a fresh process (as each knnx run is: a
    process's own speed on this machine varies by 10-20 %, which one long-lived process
    would carry into every round): after a warm-up on one cell per estimator (imports,
    KNNClassifier's kernels), ``{(algorithm, dataset, repeat, fold): (GridSearchCV
    seconds, its refit_time_, its choice, loop seconds)}`` for every training part.
    ``knn shared`` takes ``knn``'s: the same direct work."""
    parts = training_parts(spec_path)
    cases = {case.algorithm: case for case in CASES}
    for case in cases.values():
        X, y, seed = parts[(DATASETS[-1], 0, 0)]
        direct_fit(case, X, y, seed)
        loop_fit(case, X, y, seed)
    return {
        (alg, *key): (*direct_fit(case, X, y, seed), loop_fit(case, X, y, seed))
        for alg, case in cases.items()
        for key, (X, y, seed) in parts.items()
    }


def training_parts(spec_path):
    """{(dataset label, repeat, fold): (X_train, y_train, tune seed)} of a spec, the
    training part standardised as the run does it."""
    from knnx import validate_spec
    from knnx.experiment.parts import split_parts
    from knnx.spec import tune_seed

    vspec = validate_spec(spec_path)
    labels = {c.dataset_index: c.dataset for c in vspec.cells}
    how = vspec.spec.preprocess.standardize
    parts = {}
    for d, ds in enumerate(vspec.datasets):
        for s in vspec.splits[d]:
            X_train, y_train, _, _ = split_parts(ds, s.train, s.test, how)
            parts[(labels[d], s.repeat, s.fold)] = (
                X_train,
                y_train,
                tune_seed(vspec.spec.seed, labels[d], s.repeat, s.fold),
            )
    return parts


def median(values):
    return statistics.median(values)


def summarize(cells):
    """The table's rows: per (case, dataset), medians over its cells of the per-cell
    medians over rounds."""
    rows = []
    for case in CASES:
        for data in DATASETS:
            mine = [c for c in cells if c["case"] == case.name and c["dataset"] == data]
            per_cell = {}
            for c in mine:
                per_cell.setdefault((c["repeat"], c["fold"]), []).append(c)

            def med(key, per_cell=per_cell):
                return median([median([r[key] for r in rs]) for rs in per_cell.values()])

            fit, gs = med("knnx_fit"), med("gscv_fit")
            cell_ratios = [
                median([r["knnx_fit"] for r in rs]) / median([r["gscv_fit"] for r in rs])
                for rs in per_cell.values()
            ]
            tune, gs_search, loop = med("knnx_tune"), med("gscv_search"), med("loop_fit")
            agree = sum(all(r["same_choice"] for r in rs) for rs in per_cell.values())
            rows.append(
                {
                    "case": case.name,
                    "dataset": data,
                    "n_train": mine[0]["n_train"],
                    "cells": len(per_cell),
                    "rounds": len(mine) // len(per_cell),
                    "knnx_fit_s": round(fit, 4),
                    "knnx_tune_s": round(tune, 4),
                    "knnx_predict_s": round(med("knnx_predict"), 4),
                    "gscv_fit_s": round(gs, 4),
                    "gscv_search_s": round(gs_search, 4),
                    "loop_fit_s": round(loop, 4),
                    "fit_ratio": round(fit / gs, 3),
                    "search_ratio": round(tune / gs_search, 3),
                    "cell_ratio_min": round(min(cell_ratios), 3),
                    "cell_ratio_max": round(max(cell_ratios), 3),
                    "knnx_loop_ratio": round(fit / loop, 3),
                    "gscv_loop_ratio": round(gs / loop, 3),
                    "within_20pct": abs(fit / gs - 1) <= GOAL if case.same_work else None,
                    "same_choice": agree,
                }
            )
    return rows


def print_table(rows):
    head = (
        f"  {'case':<11s} {'data':<7s} {'n_train':>7s} {'knnx fit':>8s} {'tune':>6s} {'predict':>7s} "
        f"{'GSCV fit':>8s} {'search':>6s} {'loop':>6s} {'knnx/GSCV':>9s} {'cells':>9s} {'<=20%':>5s} "
        f"{'knnx/loop':>9s} {'GSCV/loop':>9s} {'same choice':>11s}"
    )
    print(head)
    for r in rows:
        within = "-" if r["within_20pct"] is None else ("yes" if r["within_20pct"] else "NO")
        print(
            f"  {r['case']:<11s} {r['dataset']:<7s} {r['n_train']:>7d} {r['knnx_fit_s']:8.3f} {r['knnx_tune_s']:6.3f} "
            f"{r['knnx_predict_s']:7.4f} {r['gscv_fit_s']:8.3f} {r['gscv_search_s']:6.3f} {r['loop_fit_s']:6.3f} "
            f"{r['fit_ratio']:9.2f} {r['cell_ratio_min']:4.2f}-{r['cell_ratio_max']:4.2f} {within:>5s} "
            f"{r['knnx_loop_ratio']:9.2f} {r['gscv_loop_ratio']:9.2f} {r['same_choice']:>6d}/{r['cells']:<4d}"
        )


def write_csv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def standardize_option(text):
    return {"false": False, "true": True, "numeric": "numeric"}[text]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="knnx runs and direct fits per cell (default 3)"
    )
    parser.add_argument(
        "--standardize",
        choices=["false", "true", "numeric"],
        default=None,
        help="the specs' preprocess.standardize (default: left out, the spec default false)",
    )
    parser.add_argument(
        "--csv", type=Path, metavar="PATH", help="also write the table rows (and PATH-cells.csv)"
    )
    args = parser.parse_args(argv)
    standardize = None if args.standardize is None else standardize_option(args.standardize)

    import numpy as np
    import sklearn

    import knnx

    print(
        f"knnx {knnx.__version__}, scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{FOLDS}-fold CV, tune: {{cv: {INNER_CV}}}, --jobs 1, preprocess.standardize: "
        f"{'false (default)' if standardize is None else args.standardize}; {args.rounds} rounds"
    )
    start = time.perf_counter()
    cells = []
    with tempfile.TemporaryDirectory(prefix="tune_cost-") as tmp:
        tmp = Path(tmp)
        paths = {}
        for name, spec in specs(standardize).items():
            paths[name] = tmp / f"{name}.yaml"
            paths[name].write_text(yaml.safe_dump(spec, sort_keys=False))
        parts = {name: training_parts(path) for name, path in paths.items()}
        # Both specs have the same seed, datasets, protocol and preprocess: the same parts.
        assert all(
            parts["shared"][key][2] == parts["separate"][key][2]
            and (parts["shared"][key][0] == parts["separate"][key][0]).all()
            for key in parts["separate"]
        )
        parts = parts["separate"]

        for r in range(args.rounds):

            def time_direct():
                with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
                    return pool.submit(direct_round, paths["separate"]).result()

            def time_knnx(r=r):
                return {
                    name: cell_records(knnx_run(path, tmp / f"round{r}-{name}"))
                    for name, path in paths.items()
                }

            if r % 2 == 0:
                recorded = time_knnx()
                direct = time_direct()
            else:
                direct = time_direct()
                recorded = time_knnx()
            for case in CASES:
                for key in parts:
                    rec = recorded[case.spec][(case.algorithm, *key)]
                    seconds, refit, choice, loop = direct[(case.algorithm, *key)]
                    cells.append(
                        {
                            "case": case.name,
                            "dataset": key[0],
                            "repeat": key[1],
                            "fold": key[2],
                            "round": r,
                            "n_train": rec["n_train"],
                            "knnx_fit": rec["fit"],
                            "knnx_tune": rec["tune"],
                            "knnx_predict": rec["predict"],
                            "gscv_fit": seconds,
                            "gscv_search": seconds - refit,
                            "loop_fit": loop,
                            "knnx_chosen": rec["chosen"],
                            "gscv_chosen": choice,
                            "same_choice": rec["chosen"] == choice,
                        }
                    )
            print(f"  round {r + 1}/{args.rounds} done ({time.perf_counter() - start:.0f} s)", flush=True)

    rows = summarize(cells)
    print(
        "\nmedian seconds (per cell over rounds, then over the cells); ratio = knnx / GridSearchCV "
        "(cells: the range of the per-cell fit ratios)"
    )
    print_table(rows)
    same = [r for r in rows if r["within_20pct"] is not None]
    print(
        f"\ngoal: recorded fit_seconds within {GOAL:.0%} of GridSearchCV.fit on the same work: "
        f"{sum(r['within_20pct'] for r in same)}/{len(same)} rows"
    )
    print(
        f"chosen settings equal to GridSearchCV's best_params_: "
        f"{sum(r['same_choice'] for r in rows)}/{sum(r['cells'] for r in rows)} cells"
    )
    for c in cells:
        if not c["same_choice"] and c["round"] == 0:
            print(
                f"  differ: {c['case']} {c['dataset']} fold {c['fold']}: knnx {c['knnx_chosen']}, GSCV {c['gscv_chosen']}"
            )
    print(f"total {time.perf_counter() - start:.0f} s, load average {os.getloadavg()[0]:.2f}")
    if args.csv:
        write_csv(args.csv, rows)
        cells_path = args.csv.with_name(f"{args.csv.stem}-cells.csv")
        write_csv(cells_path, cells)
        print(f"wrote {args.csv} and {cells_path}")


if __name__ == "__main__":
    main()
