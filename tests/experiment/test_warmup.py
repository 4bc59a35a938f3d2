"""Warm-up: kernels compile before the first timed cell, results never change, the ETA."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from knnx.cli import core
from knnx.experiment import warmup
from knnx.experiment.context import PROCESS
from knnx.experiment.progress import eta_seconds
from knnx.experiment.runner import run_spec
from knnx.experiment.warmup import WARMUP_TEXT
from knnx.neighbors import graphs
from knnx.neighbors.search import search_paths
from knnx.results import read_results

RIPLEY_K = {
    "name": "wk",
    "seed": 0,
    "datasets": ["ripley"],
    "protocol": {"kind": "predefined"},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7, 9, 15]}}],
    "metrics": ["error"],
}
# Every kind of setting the warm-up meets: several vote rules, boosting, learned weights,
# LpO selection, a tuned grid, and a class outside knnx that draws from NumPy's global
# random state (random_state=None), which the warm-up must leave as it found it (the tests
# make it warm up: SGDClassifier has no kernels, see warms_up).
MIXED = {
    "name": "wm",
    "seed": 3,
    "datasets": ["iris", "ripley"],
    "preprocess": {"standardize": True},
    "protocol": {"kind": "kfold", "folds": 2},
    "algorithms": [
        {"name": "knn", "params": {"k": [1, 4], "weights": ["uniform", "distance"]}},
        {"name": "unn", "params": {"k": 5}},
        {"name": "gnnb", "params": {"k": 3}},
        {"name": "cpw", "params": {"max_epochs": 3}},
        {"name": "knn_lpo", "params": {"p": 2, "k_max": 10}},
        {"name": "knn", "id": "tuned", "params": {"k": [1, 3, 5]}, "tune": {"cv": 3}},
        {"estimator": "sklearn.linear_model:SGDClassifier", "id": "sgd_global", "params": {"max_iter": 5}},
    ],
    "metrics": ["error", "f1_macro"],
}


def values(frame):
    """The rows without their timings."""
    timings = [c for c in ("fit_seconds", "predict_seconds", "tune_seconds") if c in frame]
    return frame.drop(columns=timings).reset_index(drop=True)


def last_warmup(out):
    return json.loads((out / "environment.json").read_text())["runs"][-1]["warmup_seconds"]


# --- a first run: compilation leaves the cells' times ----------------------------------------


def _cli_run(spec, out, tmp_path, warm_up=True):
    """``knnx run SPEC`` in a fresh process whose numba cache is an empty folder (a first
    run); ``warm_up=False`` runs it with the warm-up switched off."""
    cache = tmp_path / f"numba-cache-{out.name}"
    cache.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    code = f"from knnx.experiment.context import PROCESS; PROCESS.warm_up = {warm_up}; from knnx.cli import app; app()"
    done = subprocess.run(
        [sys.executable, "-c", code, "run", str(spec), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    frame = read_results(out / "results.csv")
    seconds = (frame.fit_seconds + frame.predict_seconds).to_numpy()
    return seconds, last_warmup(out)


def test_a_first_run_compiles_before_the_first_cell_not_inside_it(tmp_path):
    """On an empty numba cache, without the warm-up the first kNN cell carries seconds of
    compilation (about 6 s here, the others 0.5 ms); with it the first cell is timed like
    the others and environment.json records the compilation as warm-up seconds."""
    spec = tmp_path / "wk.yaml"
    spec.write_text(json.dumps(RIPLEY_K))
    cold, cold_warmup = _cli_run(spec, tmp_path / "cold", tmp_path, warm_up=False)
    assert cold_warmup == {}
    assert cold[0] > 0.5 and cold[0] > 100 * np.median(cold[1:])  # what the warm-up is for

    seconds, warmup = _cli_run(spec, tmp_path / "warm", tmp_path)
    assert len(seconds) == 6
    assert seconds[0] <= max(20 * np.median(seconds[1:]), 0.05), seconds
    assert set(warmup) == {"knn"} and warmup["knn"] > 0.5  # measured: 6.1 s on 2 cores


# --- warm-up changes no result ---------------------------------------------------------------


def _run(spec, out, monkeypatch, warm_up, jobs=1):
    monkeypatch.setattr(PROCESS, "warm_up", warm_up)
    monkeypatch.setattr(PROCESS, "warmed", set())  # this process has warmed nothing up yet
    monkeypatch.setattr(PROCESS, "graphs", graphs.GraphStore())
    np.random.seed(12345)  # noqa: NPY002 - the state SGDClassifier(random_state=None) draws from
    run_spec(spec, out=out, jobs=jobs, figures=False)
    stored = set(PROCESS.graphs._shelf.graphs)
    return read_results(out / "results.csv"), stored


def test_results_are_identical_with_and_without_warm_up_in_process(tmp_path, monkeypatch, graph_calls):
    """Same rows, same neighbour graphs computed (in the same order) and stored, and the
    same global random state at each cell: the warm-up's graphs, warnings and draws stay
    its own."""
    from sklearn.linear_model import SGDClassifier

    monkeypatch.setattr(SGDClassifier, "_warm_up", True, raising=False)  # warmed up as if it compiled
    warm, warm_store = _run(MIXED, tmp_path / "warm", monkeypatch, True)
    warm_calls = list(graph_calls)
    graph_calls.clear()
    cold, cold_store = _run(MIXED, tmp_path / "cold", monkeypatch, False)
    pd.testing.assert_frame_equal(values(warm), values(cold))
    assert warm_calls == graph_calls and warm_store == cold_store
    assert set(last_warmup(tmp_path / "warm")) == set(warm.algorithm)  # every algorithm warmed up
    assert last_warmup(tmp_path / "cold") == {}
    # SGDClassifier's convergence warnings: the cells' own, none of the warm-up's
    assert (tmp_path / "warm" / "warnings.csv").read_text() == (
        tmp_path / "cold" / "warnings.csv"
    ).read_text()


def test_results_are_identical_with_and_without_warm_up_in_workers(tmp_path, monkeypatch):
    """jobs = 2: each worker warms up (the switch travels with the cell's payload)."""
    spec = {**MIXED, "algorithms": MIXED["algorithms"][:-1]}  # a worker's global state is its own
    warm, _ = _run(spec, tmp_path / "warm", monkeypatch, True, jobs=2)
    cold, _ = _run(spec, tmp_path / "cold", monkeypatch, False, jobs=2)
    pd.testing.assert_frame_equal(values(warm), values(cold))
    assert set(last_warmup(tmp_path / "warm")) == set(warm.algorithm)
    assert last_warmup(tmp_path / "cold") == {}
    local, _ = _run(spec, tmp_path / "local", monkeypatch, True)
    pd.testing.assert_frame_equal(values(warm), values(local))


PICKY = '''
import warnings

from sklearn.neighbors import KNeighborsClassifier


class Picky(KNeighborsClassifier):
    """Refuses fewer than 100 training rows (every tiny warm-up problem), with a warning."""

    _warm_up = True  # as a class with numba kernels says

    def fit(self, X, y):
        if len(X) < 100:
            warnings.warn("too few rows")
            raise RuntimeError("too few rows")
        return super().fit(X, y)
'''


def test_a_failing_warm_up_is_skipped_and_changes_nothing(tmp_path, monkeypatch):
    """An estimator whose fit fails on the warm-up's tiny problem: its cells run as
    without warm-up, no warning of the warm-up is recorded, and the time is counted."""
    (tmp_path / "knnx_warmup_picky.py").write_text(PICKY)
    spec = {
        **RIPLEY_K,
        "python_path": [str(tmp_path)],
        "algorithms": [{"estimator": "knnx_warmup_picky:Picky", "id": "picky", "params": {"n_neighbors": 3}}],
    }
    try:
        warm, _ = _run(spec, tmp_path / "warm", monkeypatch, True)
        cold, _ = _run(spec, tmp_path / "cold", monkeypatch, False)
    finally:
        sys.modules.pop("knnx_warmup_picky", None)
    pd.testing.assert_frame_equal(values(warm), values(cold))
    assert not (tmp_path / "warm" / "failures.csv").exists()
    assert not (tmp_path / "warm" / "warnings.csv").exists()
    assert set(last_warmup(tmp_path / "warm")) == {"picky"}


def test_estimators_without_kernels_are_not_warmed_up_nor_listed(tmp_path, monkeypatch):
    """A scikit-learn estimator named by its import path compiles nothing: no tiny fit,
    no 'compiling kernels' text, no warmup_seconds entry (a random forest's grid had 7.9 s
    listed as compilation); knnx's knn warms up and is listed as before."""
    monkeypatch.setattr(PROCESS, "warmed", set())
    spec = {
        **RIPLEY_K,
        "algorithms": [
            {
                "estimator": "sklearn.neighbors:KNeighborsClassifier",
                "id": "sk_knn",
                "params": {"n_neighbors": 3},
            },
            {
                "estimator": "sklearn.ensemble:RandomForestClassifier",
                "id": "forest",
                "params": {"n_estimators": 5},
            },
            {"name": "knn", "params": {"k": 3}},
        ],
    }
    seen = []
    run_spec(spec, out=tmp_path, progress=lambda done, total, text: seen.append(text), figures=False)
    assert [t for t in seen if t.startswith("compiling")] == [WARMUP_TEXT.format("knn")]
    assert set(last_warmup(tmp_path)) == {"knn"} and last_warmup(tmp_path)["knn"] > 0
    assert set(read_results(tmp_path / "results.csv").algorithm) == {"sk_knn", "forest", "knn"}


def test_which_classes_warm_up():
    """knnx's classes and those derived from them, classes that take knnx's graph store,
    and classes that say so (``_warm_up``, which also leaves a class out)."""
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier

    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS

    class MyKNN(KNNClassifier):
        pass

    class Quiet(KNNClassifier):
        _warm_up = False

    class Sharing(ClassifierMixin, BaseEstimator):
        def __init__(self, k=1, graphs=None):
            self.k, self.graphs = k, graphs

    class Jitted(KNeighborsClassifier):
        _warm_up = True

    kernels = ("knn", "knn_lpo", "unn", "unn_cv", "gnnb", "weighted_metric", "knn_sample", "itml_knn")
    assert all(warmup.warms_up(ALGORITHMS[name]) for name in kernels)
    assert warmup.warms_up(MyKNN) and warmup.warms_up(Sharing) and warmup.warms_up(Jitted)
    assert not warmup.warms_up(Quiet)
    assert not warmup.warms_up(KNeighborsClassifier) and not warmup.warms_up(RandomForestClassifier)


def test_tiny_problems_fit_the_settings_they_warm_up():
    """Enough rows for every neighbour count and held-out point, the cell's features and
    classes, class codes 0..C-1, and NumPy's global state untouched."""
    assert warmup.rows_needed({"k": 15, "weights": "uniform"}) == 16
    assert warmup.rows_needed({"p": 10, "k_max": 50}) == 61  # knn_lpo: k_max + p + 1
    assert warmup.rows_needed({"k": 9}, held_out=20) == 30  # protocol lpo: k + p + 1
    assert warmup.rows_needed({"n_neighbors": 7, "seed": 10**6, "flag": True}) == 8
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    X, y, X_test = warmup.tiny_problem(3, 5, warmup.rows_needed({"p": 10, "k_max": 50}))
    assert (np.random.get_state()[1] == before).all()  # noqa: NPY002
    assert X.shape == (3 * 21, 5) and X_test.shape == (3 * 2, 5)  # ceil(61 / 3) = 21 rows a class
    assert np.bincount(y).tolist() == [21, 21, 21]
    X, y, X_test = warmup.tiny_problem(2, 1, 1)
    assert X.shape == (24, 1) and X_test.shape == (4, 1) and set(y) == {0, 1}  # 24 rows at least


def test_search_paths_follow_the_sizes():
    """The kernel paths of a search (knnx.neighbors.search.search_paths, which the search itself
    follows, see test_graphs.py): select when k is large against n d, brute force for small work,
    screening beyond, with seeding and the symmetric leave-one-out at large sizes."""
    assert search_paths(1000, 250, 2, 1, False) == ["select"]  # 1000 k >= 500
    assert search_paths(100, 500, 13, 1, True) == ["brute"]
    assert search_paths(5000, 5000, 16, 1, False) == ["screen", "brute"]
    assert search_paths(20000, 20000, 16, 1, True) == ["screen", "brute", "seed"]
    assert search_paths(3000, 3000, 180, 3, True) == ["screen", "brute", "symmetric"]


# --- the ETA ---------------------------------------------------------------------------------


def test_eta_is_the_mean_time_of_like_cells_shared_by_the_workers():
    finished = [("a", "knn", 1.0), ("a", "knn", 3.0), ("a", "unn", 10.0), ("b", "knn", 5.0)]
    remaining = [("a", "knn"), ("b", "knn"), ("b", "unn"), ("c", "svm")]
    # (a, knn): mean 2; (b, knn): 5; (b, unn): none on b, unn's mean 10; (c, svm): the
    # mean of all finished cells, 19 / 4 = 4.75. Sum 21.75 over 2 workers.
    assert eta_seconds(finished, remaining, workers=2) == pytest.approx(10.875)
    assert eta_seconds(finished, remaining, workers=1) == pytest.approx(21.75)
    assert eta_seconds(finished, remaining, workers=8) == pytest.approx(21.75 / 4)  # 4 cells, 4 busy
    assert eta_seconds(finished, [], workers=2) == 0.0
    assert eta_seconds([], remaining) is None  # nothing measured yet


def test_the_runs_incremental_eta_equals_eta_seconds_at_every_cell():
    """Progress keeps running sums (O(pairs) per cell, not O(cells)); after every finished
    or failed cell its estimate is eta_seconds of the same finished and remaining cells."""
    from types import SimpleNamespace

    from knnx.experiment.progress import Progress

    rng = np.random.default_rng(0)
    todo = [
        SimpleNamespace(dataset=str(rng.choice(["a", "b", "c"])), algorithm=str(rng.choice(["knn", "unn"])))
        for _ in range(60)
    ]
    for workers in (1, 2, 8):
        p = Progress(None, todo, workers)
        finished, order = [], rng.permutation(len(todo))
        for n, i in enumerate(order):
            cell = todo[i]
            seconds = None if n % 7 == 3 else float(rng.exponential())  # some cells fail
            p.cell_done(cell, seconds)
            if seconds is not None:
                finished.append((cell.dataset, cell.algorithm, seconds))
            left = [(todo[j].dataset, todo[j].algorithm) for j in order[n + 1 :]]
            expected = eta_seconds(finished, left, workers)
            if expected is None:
                assert p.estimate is None
            else:
                assert p.estimate[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert p.estimate[0] == 0.0 and not p.remaining


def test_the_runner_passes_an_eta_to_a_callback_that_takes_one(tmp_path, monkeypatch):
    """None until a cell finished, then a number, 0 at the end; the warm-up's seconds are
    not cell time (the first ETA is of the order of a cell, not of a compilation)."""
    monkeypatch.setattr(PROCESS, "warmed", set())
    seen = []

    def progress(done, total, text, eta_seconds=None):
        seen.append((done, text, eta_seconds))

    run_spec(RIPLEY_K, out=tmp_path, progress=progress, figures=False)
    assert all(eta is None for done, _, eta in seen if done == 0)
    after = [eta for done, text, eta in seen if done > 0 and not text.startswith("compiling")]
    assert len(after) == 6 and all(e is not None and e >= 0 for e in after) and after[-1] == 0.0
    assert after[0] < 0.5  # five cells of about a millisecond left


# --- what the display says -------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_progress_says_when_kernels_compile(tmp_path, monkeypatch, jobs):
    """In process a plain ``progress(done, total, text)`` call before the first cell of
    each algorithm; from pool workers through the fit-progress queue."""
    monkeypatch.setattr(PROCESS, "warmed", set())
    seen = []
    spec = {**RIPLEY_K, "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}, {"name": "unn"}]}
    run_spec(
        spec,
        out=tmp_path,
        jobs=jobs,
        progress=lambda done, total, text: seen.append((done, text)),
        figures=False,
    )
    texts = [text for _, text in seen]
    assert WARMUP_TEXT.format("knn") == "compiling kernels (first run only): knn"
    assert WARMUP_TEXT.format("knn") in texts and WARMUP_TEXT.format("unn") in texts
    if jobs == 1:
        compiling = [(done, text) for done, text in seen if text.startswith("compiling")]
        # each setting's first cell: knn k=1, knn k=3 (compiled by then: milliseconds), unn
        assert compiling == [
            (0, WARMUP_TEXT.format("knn")),
            (1, WARMUP_TEXT.format("knn")),
            (2, WARMUP_TEXT.format("unn")),
        ]


def _bar_output(monkeypatch, calls):
    out = io.StringIO()
    console = core.Console(file=out, width=200, force_terminal=False, highlight=False)
    monkeypatch.setattr(core, "err_console", console)
    with core.progress_bar("spec", "cells") as progress:
        for args, kwargs in calls:
            progress(*args, **kwargs)
    return out.getvalue()


def test_the_bar_shows_the_runners_eta_and_waits_for_a_first_cell(monkeypatch):
    shown = _bar_output(
        monkeypatch, [((0, 3, ""), {"eta_seconds": None}), ((1, 3, "a"), {"eta_seconds": 3725.0})]
    )
    assert "1/3 cells" in shown and "ETA 1:02:0" in shown  # 3725 s, counted down since the report
    shown = _bar_output(
        monkeypatch, [((0, 3, ""), {"eta_seconds": None}), ((0, 3, "x"), {"eta_seconds": None})]
    )
    assert "ETA -:--:--" in shown
    shown = _bar_output(monkeypatch, [((0, 4, ""), {}), ((0, 4, "x"), {})])  # a caller that gives no ETA
    assert "ETA -:--:--" in shown


def test_each_search_path_is_warmed_at_sizes_that_take_it():
    """The warm-up's sizes come from the search module's own thresholds: at them the
    screened search seeds its threshold ("seed") or runs by block pairs ("symmetric"),
    and "screen" has more references than its candidate buffer (so it screens), as a
    cell's own sizes would make it do."""
    from knnx.neighbors import screen
    from knnx.neighbors.search import search_paths, search_plan, warm_sizes

    n_ref, m, d, loo = warm_sizes("seed")
    assert screen._seeded(n_ref, 1) and not loo
    n_ref, m, d, loo = warm_sizes("symmetric")
    assert loo and screen._symmetric(n_ref, d, 1, loo) and n_ref > screen._SYMMETRIC_BLOCK
    n_ref, m, d, loo = warm_sizes("screen")
    assert n_ref > 4 * screen._candidate_capacity(1)
    for path in ("select", "brute"):
        n_ref, m, d, loo = warm_sizes(path)
        assert search_paths(m, n_ref, d, 1, loo)[0] == path or path == "brute"
    # the plan of a cell: its recorded searches at its own sizes, widened to the store's k_max
    assert search_plan([(True, 5), (False, 5)], 20000, 5000, 8, 30) == search_paths(
        20000, 20000, 8, 30, True
    ) + [
        p for p in search_paths(5000, 20000, 8, 30, False) if p not in search_paths(20000, 20000, 8, 30, True)
    ]
    assert search_plan([(True, 5)], 1, 0, 8, 30) == []  # one row: no leave-one-out neighbour


def test_warming_a_path_runs_its_kernels(monkeypatch):
    """warm_up_path goes through the search's own dispatch (_run_path) and the screened
    search for the screening paths."""
    from knnx.neighbors import search

    seen = []
    real = search._screened_search

    def spy(*args):
        seen.append(args[1].shape[0])
        return real(*args)

    monkeypatch.setattr(search, "_screened_search", spy)
    for path in ("screen", "seed", "symmetric"):
        search.warm_up_path(path)
    assert seen == [search.warm_sizes(p)[0] for p in ("screen", "seed", "symmetric")]


@pytest.mark.parametrize("damaged", ["nbc", "nbi"])
def test_a_damaged_numba_cache_is_compiled_again_not_a_failure_of_every_cell(tmp_path, damaged):
    """numba's cache files (an index ``.nbi`` and compiled code ``.nbc``, both pickles)
    overwritten with garbage made every kNN cell fail with ``UnpicklingError: pickle data
    was truncated``; an unreadable entry is now a cache miss: the kernel is compiled
    again, its cache rewritten, and the results are those of a run on an intact cache."""
    spec = tmp_path / "wk.yaml"
    spec.write_text(json.dumps(RIPLEY_K))
    cache = tmp_path / "cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}

    def run(out):
        done = subprocess.run(
            [sys.executable, "-m", "knnx.cli", "run", str(spec), "--out", str(out), "--quiet", "--no-report"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        return values(read_results(out / "results.csv"))

    intact = run(tmp_path / "intact")
    files = sorted(cache.rglob(f"*.{damaged}"))
    assert files
    for path in files:
        path.write_bytes(b"garbage")
    pd.testing.assert_frame_equal(run(tmp_path / "damaged"), intact)
    assert all(path.read_bytes() != b"garbage" for path in cache.rglob("*.nb?") if path.stat().st_size)
    pd.testing.assert_frame_equal(run(tmp_path / "rewritten"), intact)


# --- precompile: numba's cache filled ahead of use ------------------------------------------

COUNT_COMPILES = """
import json
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
from knnx.experiment.precompile import _problem
from knnx.metric_learning import LMNN
X, y = _problem()
Z = LMNN().fit(X[:, :4], y).transform(X[:30, :4])
print(json.dumps({"compiled": compiled, "Z": Z.tolist()}))
"""


def test_precompile_fills_the_cache_so_that_a_new_process_compiles_nothing(tmp_path):
    """After ``python -m knnx.experiment.precompile metric-learning`` on an empty cache
    (the smallest family: NCA, LMNN, ITML and LFDA on a tiny problem), a new process
    fitting LMNN compiles no kernel (numba's compile events fire on cache misses only)
    and gets the map this process gets."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "knnx.experiment.precompile", "metric-learning"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("metric-learning: ") and "numba's cache filled in" in done.stdout
    warm = subprocess.run([sys.executable, "-c", COUNT_COMPILES], capture_output=True, text=True, env=env)
    assert warm.returncode == 0, warm.stderr
    from knnx.experiment.precompile import _problem
    from knnx.metric_learning import LMNN

    X, y = _problem()
    Z = LMNN().fit(X[:, :4], y).transform(X[:30, :4])
    assert json.loads(warm.stdout) == {"compiled": [], "Z": Z.tolist()}


def test_an_unknown_kernel_family_is_refused_naming_the_known_ones():
    from knnx.experiment.precompile import FAMILIES, precompile

    with pytest.raises(ValueError, match="^nope: not a kernel family; known: search, knn, estimators, lpo, "):
        precompile(["nope"])
    assert list(FAMILIES) == ["search", "knn", "estimators", "lpo", "reduction", "metric-learning"]
