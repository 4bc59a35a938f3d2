"""The runner's cost per cell, made small without changing a result: the group commit
of the ledger, the no-op rerun, the fast path of input validation, the serial vote,
lazy imports at start-up, and what a cell no longer repeats (import caches, warm-up
planning)."""

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _harness import numba_threads

from knnx import KNNClassifier
from knnx._kernels import launch
from knnx._kernels.vote import TIE_LOWEST, TIE_NEAREST, TIE_RANDOM, vote
from knnx.experiment import runner, warmup
from knnx.experiment.runner import run_spec
from knnx.plugins import add_import_dirs
from knnx.results import ResultsWriter, read_results

SPEC = {
    "name": "cost",
    "seed": 0,
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 5, "repeats": 2},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5]}}],
    "metrics": ["error"],
}


def test_the_ledger_records_a_cell_only_after_its_rows_are_synced(tmp_path, monkeypatch):
    """Every ledger append follows an fsync of results.csv made after the results rows
    of the cells it records were appended; with COMMIT_SECONDS = 0 each cell is its own
    group, with a large value the whole run is one group written at the end."""
    events = []
    real_append, real_sync = ResultsWriter.append, ResultsWriter.sync

    def append(self, rows, sync=True):
        events.append(("append", self.path.name, len(rows), sync))
        return real_append(self, rows, sync)

    def sync(self):
        events.append(("sync", self.path.name))
        return real_sync(self)

    monkeypatch.setattr(ResultsWriter, "append", append)
    monkeypatch.setattr(ResultsWriter, "sync", sync)
    for seconds, groups in ((0.0, 30), (1e9, 1)):
        monkeypatch.setattr(runner, "COMMIT_SECONDS", seconds)
        events.clear()
        run_spec(SPEC, out=tmp_path / str(groups), figures=False)
        ledger = [e for e in events if e[:2] == ("append", "cells.csv")]
        assert len(ledger) == groups and sum(e[2] for e in ledger) == 30
        rows_appended = synced = 0
        for event in events:
            if event[:2] == ("append", "results.csv"):
                assert event[3] is False  # no fsync per cell
                rows_appended += 1
            elif event == ("sync", "results.csv"):
                synced = rows_appended
            elif event[:2] == ("append", "cells.csv"):
                assert synced == rows_appended  # every row written so far is on disk
        assert rows_appended == 30


def test_an_interrupted_run_commits_the_cells_it_finished(tmp_path, monkeypatch):
    """Ctrl-C after 7 cells (inside the 8th): the 7 are in the ledger and resumed."""
    from knnx.experiment import cells

    monkeypatch.setattr(runner, "COMMIT_SECONDS", 1e9)  # nothing committed before the end
    real, calls = cells.FitPredict.run.__func__, []

    def interrupted(cls, *args, **kwargs):
        calls.append(1)
        if len(calls) == 8:
            raise KeyboardInterrupt
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(cells.FitPredict, "run", classmethod(interrupted))
    with pytest.raises(KeyboardInterrupt):
        run_spec(SPEC, out=tmp_path, figures=False)
    monkeypatch.undo()
    summary = run_spec(SPEC, out=tmp_path, figures=False)
    assert (summary.n_run, summary.n_skipped) == (23, 7)
    fresh = read_results(run_spec(SPEC, out=tmp_path / "fresh", figures=False).out / "results.csv")
    times = ["fit_seconds", "predict_seconds"]
    pd.testing.assert_frame_equal(
        read_results(tmp_path / "results.csv").drop(columns=times), fresh.drop(columns=times)
    )


def test_a_rerun_with_nothing_to_do_writes_nothing_but_a_changed_input_is_redone(tmp_path):
    run_spec(SPEC, out=tmp_path)
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != ".knnx.lock"}
    assert run_spec(SPEC, out=tmp_path).n_run == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != ".knnx.lock"} == files
    # a changed output, a missing figure, another report option: the end of the run is redone
    (tmp_path / "summary.md").write_text("edited")
    run_spec(SPEC, out=tmp_path)
    assert (tmp_path / "summary.md").read_bytes() == files["summary.md"]
    (tmp_path / "error.png").unlink()
    run_spec(SPEC, out=tmp_path)
    assert (tmp_path / "error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    runs = len(json.loads((tmp_path / "environment.json").read_text())["runs"])
    run_spec(SPEC, out=tmp_path, report=False)
    assert len(json.loads((tmp_path / "environment.json").read_text())["runs"]) == runs + 1
    run_spec(SPEC, out=tmp_path, report=False)  # the same options again: nothing
    assert len(json.loads((tmp_path / "environment.json").read_text())["runs"]) == runs + 1


def _fitted_state(model):
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


@pytest.mark.parametrize("k", [1, 4])
def test_the_validation_fast_path_fits_and_predicts_as_the_full_validation(k):
    """A C-ordered float64 array takes the fast path; the same data as a list, as
    Fortran-ordered or as float32-exact integers take scikit-learn's validate_data: the
    fitted attributes and outputs are the same."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (40, 3)).astype(np.float64)  # ties everywhere
    y = rng.integers(0, 3, 40)
    Q = rng.integers(0, 3, (9, 3)).astype(np.float64)
    fast = KNNClassifier(k=k).fit(X, y)
    for slow_X, slow_y in (
        (X.tolist(), y.tolist()),
        (np.asfortranarray(X), y),
        (X.astype(np.int64), y.astype(float)),
    ):
        slow = KNNClassifier(k=k).fit(slow_X, slow_y)
        assert slow.n_features_in_ == fast.n_features_in_ == 3
        np.testing.assert_array_equal(slow.classes_.astype(np.int64), fast.classes_)
        np.testing.assert_array_equal(slow.predict(Q.tolist()).astype(np.int64), fast.predict(Q))
        np.testing.assert_array_equal(slow.predict_proba(np.asfortranarray(Q)), fast.predict_proba(Q))


def test_the_fast_path_forgets_feature_names_and_checks_widths_as_scikit_learn():
    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
    y = np.array([0, 0, 1, 1])
    model = KNNClassifier(k=1).fit(X, y)
    assert list(model.feature_names_in_) == ["a", "b"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(X.to_numpy())  # fitted with names: the full validation warns
    model.fit(X.to_numpy(), y)  # the fast path
    assert not hasattr(model, "feature_names_in_")
    with pytest.raises(ValueError, match="X has 3 features, but KNNClassifier is expecting 2 features"):
        model.predict(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        model.predict(np.array([[np.nan, 0.0]]))


@pytest.mark.parametrize("tie", [TIE_NEAREST, TIE_LOWEST, TIE_RANDOM])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_vote_does_not_depend_on_how_the_rows_are_split(tie, weighted):
    rng = np.random.default_rng(1)
    m, k, n_classes = 300, 6, 4
    ind = rng.integers(0, 50, (m, k))
    dist = np.sort(rng.integers(0, 3, (m, k)).astype(float), axis=1)  # zeros and ties
    y = rng.integers(0, n_classes, 50)
    draws = rng.random(m)
    outs = []
    # one call on this thread; launch's ranges on 2 threads; uneven ranges by hand
    for split in ("one", "threads", "ranges"):
        pred, proba = np.empty(m, dtype=np.intp), np.empty((m, n_classes))
        args = (ind, dist, y, n_classes, weighted, tie, draws, pred, proba)
        if split == "one":
            vote(0, m, *args)
        elif split == "threads":
            with numba_threads(2):
                launch(vote, m, 1, 0, *args)
        else:
            for lo, hi in ((0, 7), (7, 8), (8, 150), (150, m)):
                vote(lo, hi, *args)
        outs.append((pred, proba))
    for pred, proba in outs[1:]:
        np.testing.assert_array_equal(outs[0][0], pred)
        np.testing.assert_array_equal(outs[0][1], proba)
    # one row by hand: plurality with the nearest rule
    if not weighted and tie == TIE_NEAREST:
        votes = np.bincount(y[ind[0]], minlength=n_classes)
        tied = set(np.flatnonzero(votes == votes.max()))
        assert outs[0][0][0] == next(y[j] for j in ind[0] if y[j] in tied)


def test_import_dirs_clear_the_import_caches_only_when_a_folder_is_added(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(importlib, "invalidate_caches", lambda: calls.append(1))
    monkeypatch.setattr(sys, "path", list(sys.path))
    add_import_dirs([str(tmp_path)])
    add_import_dirs([str(tmp_path)])
    assert len(calls) == 1 and sys.path.count(str(tmp_path)) == 1
    add_import_dirs([str(tmp_path)], refresh=True)  # validation: files may be new
    assert len(calls) == 2


def test_a_cell_like_one_warmed_up_before_skips_planning(tmp_path, monkeypatch):
    from knnx.experiment.context import PROCESS

    monkeypatch.setattr(PROCESS, "warmed", set())  # this process has warmed nothing yet
    planned = []
    real = warmup._plan
    monkeypatch.setattr(warmup, "_plan", lambda *a: planned.append(1) or real(*a))
    run_spec(SPEC, out=tmp_path, figures=False)
    # 3 settings, one size (5-fold on 150 rows: 120 training, 30 test rows): 3 plans
    assert len(planned) == 3


@pytest.mark.parametrize(
    "code",
    [
        "import knnx",
        "import knnx.cli; knnx.cli.app(['--help'], standalone_mode=False)",
    ],
)
def test_start_up_imports_no_kernel_estimator_or_plotting_library(code):
    """``import knnx`` and ``knnx --help`` load neither numba, scikit-learn, scipy.stats,
    matplotlib nor pandas; the public names still resolve (PEP 562)."""
    probe = (
        f"{code}\nimport sys\n"
        "print([m for m in ('numba', 'sklearn', 'scipy.stats', 'matplotlib', 'pandas') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    import knnx

    for name in knnx.__all__:
        assert getattr(knnx, name) is not None
    assert knnx.KNNClassifier is KNNClassifier
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        knnx.nothing  # noqa: B018


@pytest.mark.parametrize(
    "spec",
    [
        "ripley.yaml",
        "cpw_beta.yaml",
        "unn_uci.yaml",
        "gnnb_small.yaml",
        "lpo_select_p.yaml",
        "lpo_active_sim.yaml",
    ],
)
def test_validate_loads_no_kernel_and_no_plotting(spec):
    """``knnx validate`` of the paper specs imports no numba (kernel modules are
    imported lazily: knnx._kernels.lazy), no matplotlib and none of scikit-learn's
    estimator modules; the cells are those of a validation with the kernels loaded."""
    path = Path(__file__).resolve().parents[2] / "experiments" / spec
    probe = (
        "import sys\nfrom knnx.cli import app\n"
        f"app(['validate', {str(path)!r}], standalone_mode=False)\n"
        "heavy = ('numba', 'matplotlib', 'sklearn.neighbors', 'sklearn.svm', 'sklearn.ensemble')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "[]"
    from knnx.spec import validate_spec

    assert f"ok, {len(validate_spec(path).cells)} cells" in " ".join(done.stdout.split())


def test_lazy_kernel_modules_are_the_modules_themselves():
    """A lazily imported kernel module gives the module's own attributes (numba
    dispatchers), and a change to one (a test's monkeypatch) is the module's."""
    import knnx._kernels.vote as direct
    from knnx._kernels import Codes, lazy

    module = lazy("knnx._kernels.vote")
    assert module.vote is direct.vote and hasattr(module.vote, "py_func")
    module.VOTE_PARALLEL_MIN_WORK = 7
    try:
        assert direct.VOTE_PARALLEL_MIN_WORK == 7
    finally:
        module.VOTE_PARALLEL_MIN_WORK = 50_000
    assert direct.VOTE_PARALLEL_MIN_WORK == 50_000
    codes = Codes(module, lowest="TIE_LOWEST")
    assert list(codes) == ["lowest"] and codes["lowest"] == direct.TIE_LOWEST
