"""Run every cell of a spec and write tidy results, cell by cell.

``run_spec`` is the library call behind ``knnx run``. Output folder layout::

    OUT/results.csv      tidy rows (see knnx.results), sorted in cell order at the end
    OUT/curves.csv       with ``record_curves: true`` only: training curves, tidy rows
                         experiment, dataset, algorithm, params, repeat, fold,
                         iteration, series, value (sorted in cell order at the end)
    OUT/spec.yaml        the normalised spec (every default filled in)
    OUT/environment.json knnx version, git commit, Python/numpy/numba versions, CPU
    OUT/summary.csv      mean, std, n per (dataset, algorithm, params, metric)
    OUT/summary.md       the same as Markdown tables, one per metric, best marked
    OUT/<metric>.png     metric against the first numeric parameter that varies (if any)

Metrics: label metrics score ``predict``; ``predict_proba`` is called only when a
probability or posterior metric is asked, and its columns (in the estimator's
``classes_`` order) are placed on the dataset's class codes 0..C-1, a class missing
from the training part getting probability 0. Posterior metrics compare with the
dataset's true posterior at the raw test features (before standardisation).
``predict_seconds`` times ``predict`` alone.

Curves: with ``record_curves: true`` each fitted estimator that exposes ``curve_``
(a dict of equal-length 1-D arrays: ``iteration``, integers, and numeric series
such as ``surrogate_risk`` or ``train_error``) gives one row per (series,
iteration), at most ``curve_points`` evenly spaced iterations per curve, first and
last kept (see :func:`knnx.results.curve_rows`). Protocol lpo fits no estimator and
records none.

Resume: a rerun of the same spec skips cells already complete in results.csv; a
different spec in the same folder is refused (use ``resume=False`` or another
folder). A cell's curve rows are appended before its results rows, and a resumed
run keeps the curve rows of complete cells only, so curves.csv never holds a cell
twice nor one missing from results.csv. ``resume=False`` deletes both files. With
``jobs > 1`` cells run in a pool of processes (each numba kernel single-threaded
there); results are identical to ``jobs=1``, only timings differ.
"""

import json
import os
import platform
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import yaml

from knnx._version import __version__
from knnx.algorithms import ALGORITHMS, LPO_RISK
from knnx.datasets import load_dataset
from knnx.errors import CellError, KnnxError, ResultsError
from knnx.metrics import METRIC_INPUT, METRICS
from knnx.report import format_table, mark_best, summarize
from knnx.results import (
    COLUMNS,
    CURVE_COLUMNS,
    ResultsWriter,
    atomic_write_text,
    curve_rows,
    read_curves,
    read_results,
    recover,
    recover_curves,
    rows_to_csv,
)
from knnx.spec import SEED_DATA, canonical_json, dataset_seedseq, validate_spec


@dataclass(frozen=True)
class RunSummary:
    out: Path
    n_cells: int
    n_run: int
    n_skipped: int
    seconds: float


def _standardize(X_train, X_test):
    """Fit mean and std on the training part only; zero-variance features keep scale 1."""
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std[std == 0] = 1.0
    return (X_train - mean) / std, (X_test - mean) / std


def _cell_payload(vspec, cell, splits):
    split = splits[(cell.dataset_index, cell.repeat, cell.fold)]
    return {
        "experiment": vspec.spec.name,
        "entry": vspec.spec.datasets[cell.dataset_index],
        "dataset": cell.dataset,
        "seed": vspec.spec.seed,
        "base_dir": str(vspec.base_dir),
        "algorithm": cell.algorithm,
        "params": cell.params,
        "protocol": vspec.protocol_json,
        "repeat": cell.repeat,
        "fold": cell.fold,
        "train": split.train,
        "test": split.test,
        "standardize": vspec.spec.preprocess.standardize,
        "metrics": list(vspec.spec.metrics),
        "record_curves": vspec.spec.record_curves,
        "curve_points": vspec.spec.curve_points,
        "index": cell.index,
    }


@lru_cache(maxsize=8)
def _load_cached(entry_json, label, seed, base_dir):
    return load_dataset(
        json.loads(entry_json), seed=dataset_seedseq(seed, label, SEED_DATA), base_dir=base_dir
    )


def run_cell(payload):
    """Fit and evaluate one cell; return ``(index, rows, curve_rows)``.

    ``rows``: one per metric of the spec, then one per entry of the fitted
    estimator's ``reported_`` dict, if any (``metric`` = the entry's name, e.g.
    ``chosen_k``). ``curve_rows``: the estimator's ``curve_`` as tidy rows when the
    spec sets ``record_curves`` and the estimator has one, else empty.
    """
    ds = _load_cached(
        canonical_json(payload["entry"]), payload["dataset"], payload["seed"], payload["base_dir"]
    )
    tr, te = payload["train"], payload["test"]
    X_train, X_test = ds.X[tr], ds.X[te]
    if payload["standardize"]:
        X_train, X_test = _standardize(X_train, X_test)
    protocol = json.loads(payload["protocol"])
    if protocol["kind"] == "lpo":
        return payload["index"], _lpo_rows(payload, X_train, ds.y[tr], protocol["p"]), []
    estimator = ALGORITHMS[payload["algorithm"]](**payload["params"])
    t0 = time.perf_counter()
    estimator.fit(X_train, ds.y[tr])
    t1 = time.perf_counter()
    y_pred = estimator.predict(X_test)
    t2 = time.perf_counter()
    base = _base_row(payload, len(tr), len(te), t1 - t0, t2 - t1)
    kinds = {METRIC_INPUT[m] for m in payload["metrics"]}
    proba = posterior = None
    if kinds & {"proba", "posterior"}:
        proba = _proba_on_codes(estimator, X_test, ds.n_classes)
    if "posterior" in kinds:
        posterior = ds.posterior(ds.X[te])  # raw features: the model's own coordinates
    inputs = {
        "label": (ds.y[te], np.asarray(y_pred)),
        "proba": (ds.y[te], proba),
        "posterior": (posterior, proba),
    }
    rows = [
        {**base, "metric": m, "value": float(METRICS[m](*inputs[METRIC_INPUT[m]]))}
        for m in payload["metrics"]
    ]
    # Quantities the estimator reports about its fit (e.g. the k chosen by LpO).
    reported = getattr(estimator, "reported_", {})
    rows += [{**base, "metric": name, "value": float(value)} for name, value in reported.items()]
    curves = []
    if payload["record_curves"] and getattr(estimator, "curve_", None) is not None:
        cell = {c: base[c] for c in ("experiment", "dataset", "algorithm", "params", "repeat", "fold")}
        curves = curve_rows(estimator.curve_, cell, payload["curve_points"])
    return payload["index"], rows, curves


def _proba_on_codes(estimator, X, n_classes):
    """``predict_proba(X)`` with column c the probability of class code c (0..n_classes-1).

    The estimator's columns follow its ``classes_`` (the codes seen in training); a
    class absent from the training part gets probability 0.
    """
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    classes = np.asarray(estimator.classes_)
    if proba.shape != (X.shape[0], len(classes)):
        raise ValueError(f"predict_proba returned shape {proba.shape}, expected {(X.shape[0], len(classes))}")
    codes = classes.astype(np.intp)
    if (
        not np.array_equal(codes, classes)
        or len(np.unique(codes)) != len(codes)
        or (codes < 0).any()
        or (codes >= n_classes).any()
    ):
        raise ValueError(
            f"classes_ must be distinct class codes in 0..{n_classes - 1}, got {classes.tolist()}"
        )
    full = np.zeros((X.shape[0], n_classes))
    full[:, codes] = proba
    return full


def _base_row(payload, n_train, n_test, fit_seconds, predict_seconds):
    return {
        "experiment": payload["experiment"],
        "dataset": payload["dataset"],
        "algorithm": payload["algorithm"],
        "params": canonical_json(payload["params"]),
        "protocol": payload["protocol"],
        "repeat": payload["repeat"],
        "fold": payload["fold"],
        "seed": payload["seed"],
        "n_train": n_train,
        "n_test": n_test,
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
    }


def _lpo_rows(payload, X, y, p):
    """Protocol lpo: one ``error`` row, the exact leave-p-out estimate on all n rows
    (n_train = n - p, n_test = p, fit_seconds = time of the closed form)."""
    t0 = time.perf_counter()
    risk = LPO_RISK[payload["algorithm"]](payload["params"], X, y, p)
    base = _base_row(payload, len(y) - p, p, time.perf_counter() - t0, 0.0)
    return [{**base, "metric": "error", "value": risk}]


@contextmanager
def _single_threaded_children():
    """Environment for spawned workers: one process per core, each single-threaded.

    Set before the pool starts, because OpenBLAS and numba read it at import.
    """
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
    saved = {n: os.environ.get(n) for n in names}
    os.environ.update({n: "1" for n in names})
    try:
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def environment_info():
    """Versions, git commit and CPU of this run (written to environment.json)."""
    import numba
    import pandas
    import scipy
    import sklearn

    commit, dirty = None, None
    repo = Path(__file__).resolve().parents[1]

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()

    try:
        # Only if knnx itself is the checkout (an installed copy inside another repo is not).
        if Path(git("rev-parse", "--show-toplevel")).resolve() == repo:
            commit = git("rev-parse", "HEAD")
            dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "knnx": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
    }


def write_summaries(results_path, out):
    """summary.csv (all metrics) and summary.md (one table per metric) from results.csv."""
    frame = read_results(results_path)
    if frame.empty:
        return
    summary = summarize(frame, by=("dataset", "algorithm", "params", "metric"))
    summary["best"] = mark_best(summary)
    atomic_write_text(Path(out) / "summary.csv", summary.to_csv(index=False, lineterminator="\n"))
    parts = [f"# {frame['experiment'].iloc[0]}: mean ± std over repeats and folds\n"]
    for metric in dict.fromkeys(frame["metric"]):
        sub = summarize(frame, by=("dataset", "algorithm", "params"), metric=metric)
        parts.append(f"\n## {metric}\n\n" + format_table(sub, "md"))
    atomic_write_text(Path(out) / "summary.md", "".join(parts))
    write_plots(frame, out)


# Above this many datasets the automatic per-metric plots are skipped.
MAX_PLOT_PANELS = 12


def write_plots(frame, out):
    """``OUT/<metric>.png`` against the first numeric parameter that varies, if any
    (none when the results hold more than ``MAX_PLOT_PANELS`` datasets)."""
    from knnx.plots import plot_metric, varying_numeric_params

    if frame["dataset"].nunique() > MAX_PLOT_PANELS:
        return  # one panel per dataset would be unreadable; report scripts plot these
    for metric in dict.fromkeys(frame["metric"]):
        if not varying_numeric_params(frame[frame["metric"] == metric]):
            continue  # e.g. chosen_k of a single knn_lpo setting beside a knn grid over k
        path = Path(out) / f"{metric}.png"
        tmp = path.with_name(f".{path.name}.tmp.png")
        plot_metric(frame, metric, out=tmp)
        os.replace(tmp, path)


def run_spec(spec, *, out=None, jobs=1, resume=True, progress=None):
    """Validate and run an experiment spec; write results beside a copy of the spec.

    Parameters
    ----------
    spec : path or dict
        YAML file or an equivalent dict (see :mod:`knnx.spec`).
    out : path, optional
        Output folder; default ``results/<spec name>``.
    jobs : int
        Worker processes (1 runs in this process).
    resume : bool
        Skip cells already complete in ``out/results.csv``.
    progress : callable, optional
        Called as ``progress(done, total, description)`` after each cell and once at
        the start; the library is otherwise silent.

    Returns
    -------
    RunSummary
    """
    start = time.perf_counter()
    vspec = validate_spec(spec)
    out = Path(out) if out is not None else Path("results") / vspec.spec.name
    if out.exists() and not out.is_dir():
        raise ResultsError(f"--out: {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.csv"
    curves_path = out / "curves.csv"
    spec_path = out / "spec.yaml"
    normalized = yaml.safe_dump(vspec.normalized(), sort_keys=False)
    metrics = list(vspec.spec.metrics)

    done_keys = set()
    if resume and results_path.exists():
        if not spec_path.exists():
            raise ResultsError(
                f"{out}: has a results.csv but no spec.yaml, so its origin is unknown; rerun with --no-resume "
                "to start over, or use --out"
            )
        if spec_path.read_text(encoding="utf-8") != normalized:
            raise ResultsError(
                f"{out}: holds results of a different spec; rerun with --no-resume to start over, or use --out"
            )
        done_keys = recover(results_path, metrics)
    elif not resume:
        _clear_outputs(out)
    if curves_path.exists():
        recover_curves(curves_path, done_keys)  # curves of complete cells only
    atomic_write_text(spec_path, normalized)
    _record_environment(out / "environment.json", len(vspec.cells) - len(done_keys))

    writer = ResultsWriter(results_path)
    curves_writer = ResultsWriter(curves_path, CURVE_COLUMNS) if vspec.spec.record_curves else None
    todo = [
        c for c in vspec.cells if (c.dataset, c.algorithm, c.params_json, c.repeat, c.fold) not in done_keys
    ]
    total, done = len(vspec.cells), len(vspec.cells) - len(todo)
    splits = {(d, s.repeat, s.fold): s for d, ds_splits in enumerate(vspec.splits) for s in ds_splits}
    if progress:
        progress(done, total, "")

    def finished(rows, curves):
        nonlocal done
        if curves:
            curves_writer.append(curves)  # first: a cell's curves count once its results are complete
        writer.append(rows)
        done += 1
        if progress:
            r = rows[0]
            progress(done, total, f"{r['dataset']} {r['algorithm']} {r['params']}")

    if jobs <= 1 or len(todo) <= 1:
        for cell in todo:
            finished(*_checked(run_cell, _cell_payload(vspec, cell, splits))[1:])
    else:
        ctx = get_context("spawn")  # fork is unsafe once numba's thread pool has started
        with _single_threaded_children():
            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
        try:
            futures = [pool.submit(_checked, run_cell, _cell_payload(vspec, c, splits)) for c in todo]
            for fut in as_completed(futures):
                finished(*fut.result()[1:])
        except BaseException:
            # Interrupted or a cell failed: drop queued cells instead of waiting for them.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()

    _sort_results(results_path, vspec)
    if curves_writer is not None:
        _sort_curves(curves_path, vspec)
    write_summaries(results_path, out)
    return RunSummary(out, total, len(todo), total - len(todo), time.perf_counter() - start)


def _checked(func, payload):
    """Run a cell; turn any failure into one CellError line naming the cell."""
    try:
        return func(payload)
    except KnnxError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of an algorithm is reported per cell
        what = f"{payload['dataset']} {payload['algorithm']} {canonical_json(payload['params'])}"
        first = (str(exc).strip().splitlines() or [""])[0]
        raise CellError(
            f"cell {what} repeat {payload['repeat']} fold {payload['fold']} failed: {type(exc).__name__}: {first}"
        ) from None


def _clear_outputs(out):
    """Remove what an earlier run wrote in ``out`` (results, summaries, plots)."""
    names = ["results.csv", "curves.csv", "summary.csv", "summary.md", "environment.json"]
    names += [f"{m}.png" for m in METRICS]
    for name in names:
        (out / name).unlink(missing_ok=True)


def _record_environment(path, n_todo):
    """environment.json: one entry per invocation (a resumed run adds one), newest last."""
    runs = []
    if path.exists():
        try:
            runs = json.loads(path.read_text(encoding="utf-8")).get("runs", [])
        except (ValueError, AttributeError):
            runs = []
    entry = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cells_to_run": n_todo, **environment_info()}
    atomic_write_text(path, json.dumps({"runs": [*runs, entry]}, indent=2) + "\n")


def _sort_results(path, vspec):
    """Rewrite results.csv in cell order, metrics in spec order (atomic)."""
    frame = read_results(path)
    order = {c.key(): c.index for c in vspec.cells}
    metric_rank = {m: i for i, m in enumerate(vspec.spec.metrics)}
    frame["_cell"] = [
        order.get((r.dataset, r.algorithm, r.params, int(r.repeat), int(r.fold)), len(order))
        for r in frame.itertuples()
    ]
    frame["_metric"] = frame["metric"].map(metric_rank)
    frame = frame.sort_values(["_cell", "_metric"], kind="stable")
    rows = frame[COLUMNS].to_dict("records")
    atomic_write_text(path, rows_to_csv(rows, header=True))


def _sort_curves(path, vspec):
    """Rewrite curves.csv in cell order, each cell's rows as written (atomic)."""
    frame = read_curves(path)
    order = {c.key(): c.index for c in vspec.cells}
    frame["_cell"] = [
        order.get((r.dataset, r.algorithm, r.params, int(r.repeat), int(r.fold)), len(order))
        for r in frame.itertuples()
    ]
    frame = frame.sort_values("_cell", kind="stable")
    atomic_write_text(
        path, rows_to_csv(frame[CURVE_COLUMNS].to_dict("records"), header=True, columns=CURVE_COLUMNS)
    )
