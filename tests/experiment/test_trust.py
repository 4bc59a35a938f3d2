"""Cache and resume you can trust: kill -9 in the middle of a run, two runs on one folder,
failed cells with a process pool."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import CellError, KnnxError
from knnx.experiment import executors
from knnx.experiment.context import PROCESS
from knnx.experiment.runner import run_spec
from knnx.experiment.worker import run_cell
from knnx.results import output_lock, read_results

# 5 folds x 200 repeats x 5 settings = 5,000 small cells: a few seconds, long enough to
# be killed in the middle (the ledger is written in groups, every COMMIT_SECONDS: the
# first group holds hundreds of cells, and rows past the last group are on disk).
N_MANY = 5000
MANY = {
    "name": "many",
    "seed": 3,
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 5, "repeats": 200},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7, 9]}}],
    "metrics": ["error", "f1_macro"],
}
TIMING = ["fit_seconds", "predict_seconds"]


def values(frame):
    return frame.drop(columns=TIMING).reset_index(drop=True)


def ledger_rows(out):
    path = out / "cells.csv"
    return max(0, path.read_text().count("\n") - 1) if path.exists() else 0


def cli_run(spec_path, out):
    """The command line of ``knnx run SPEC --out OUT --quiet`` in a process of its own."""
    code = "from knnx.cli import app; app()"
    return [sys.executable, "-c", code, "run", str(spec_path), "--out", str(out), "--quiet"]


def start_many(tmp_path, out):
    """Write MANY to TMP/many.yaml and start ``knnx run`` on it in the background."""
    spec_path = tmp_path / "many.yaml"
    spec_path.write_text(yaml.safe_dump(MANY))
    proc = subprocess.Popen(cli_run(spec_path, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return spec_path, proc


def wait_for_cells(proc, out, n, timeout=120):
    """Wait until the run ``proc`` has recorded ``n`` finished cells in OUT/cells.csv."""
    deadline = time.monotonic() + timeout
    while ledger_rows(out) < n:
        assert proc.poll() is None, f"the run ended before {n} cells were recorded"
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.01)


@pytest.mark.pandas_io
def test_kill_9_in_the_middle_then_rerun_equals_an_uninterrupted_run(tmp_path):
    out = tmp_path / "killed"
    _, proc = start_many(tmp_path, out)
    try:
        wait_for_cells(proc, out, 40)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert 40 <= ledger_rows(out) < N_MANY  # killed in the middle
    summary = run_spec(MANY, out=out, figures=False)
    assert summary.n_skipped >= 40 and summary.n_run + summary.n_skipped == N_MANY
    resumed = read_results(out / "results.csv")
    assert not resumed.duplicated(subset=["dataset", "algorithm", "params", "repeat", "fold", "metric"]).any()
    fresh = read_results(run_spec(MANY, out=tmp_path / "fresh", figures=False).out / "results.csv")
    pd.testing.assert_frame_equal(values(resumed), values(fresh))
    assert ledger_rows(out) == N_MANY


def test_a_second_run_on_a_locked_folder_is_refused_and_writes_nothing(tmp_path):
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(yaml.safe_dump({**MANY, "protocol": {"kind": "kfold", "folds": 2}}))
    out = tmp_path / "out"
    out.mkdir()
    with output_lock(out):  # another run holds the folder
        result = CliRunner().invoke(app, ["run", str(spec_path), "--out", str(out), "--quiet"])
        assert result.exit_code == 2
        assert result.stderr.strip() == (
            f"error: {out}: another knnx run (pid {os.getpid()}) is writing to this folder; "
            "wait for it to end or use --out"
        )
        assert sorted(p.name for p in out.iterdir()) == [".knnx.lock"]
    # released: the same command now runs
    result = CliRunner().invoke(app, ["run", str(spec_path), "--out", str(out), "--quiet"])
    assert result.exit_code == 0 and len(read_results(out / "results.csv")) == 2 * 5 * 2


def test_two_runs_at_once_on_one_folder_the_second_refuses_and_nothing_is_corrupted(tmp_path):
    """Two real processes: the first is frozen (SIGSTOP) in the middle of writing, so the
    second certainly starts while the first holds the folder; the second is refused with
    one line and exit 2, and the first, resumed, ends with exactly an uninterrupted run's
    rows."""
    out = tmp_path / "shared"
    spec_path, first = start_many(tmp_path, out)
    try:
        wait_for_cells(first, out, 20)
        os.kill(first.pid, signal.SIGSTOP)
        frozen = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
        second = subprocess.run(cli_run(spec_path, out), capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        assert second.stdout == ""
        assert second.stderr == (
            f"error: {out}: another knnx run (pid {first.pid}) is writing to this folder; "
            "wait for it to end or use --out\n"
        )
        assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == frozen  # untouched
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert first.wait(timeout=300) == 0
    shared = read_results(out / "results.csv")
    fresh = read_results(run_spec(MANY, out=tmp_path / "fresh", figures=False).out / "results.csv")
    pd.testing.assert_frame_equal(values(shared), values(fresh))
    assert ledger_rows(out) == N_MANY and not (out / "failures.csv").exists()


def test_failed_cells_with_a_process_pool_are_recorded_and_the_rest_saved(tmp_path, monkeypatch):
    """With jobs = 2 a failing algorithm does not stop the others; its cells are listed."""
    spec = {**MANY, "protocol": {"kind": "kfold", "folds": 2}}
    spec["algorithms"] = [{"name": "knn", "params": {"k": [1, 3]}}, {"name": "unn", "params": {"k": 5}}]
    monkeypatch.setattr(executors, "run_cell", _fail_for_unn)
    with pytest.raises(CellError, match=r"^2 of 6 cells failed and were not saved"):
        run_spec(spec, out=tmp_path / "o", jobs=2, figures=False)
    done = read_results(tmp_path / "o" / "results.csv")
    assert set(done.algorithm) == {"knn"} and len(done) == 4 * 2
    failures = pd.read_csv(tmp_path / "o" / "failures.csv")
    assert list(failures.fold) == [0, 1] and set(failures.algorithm) == {"unn"}
    assert failures.error.str.contains("RuntimeError: no unn today").all()


def _fail_for_unn(task, *args):
    if task.cell.algorithm == "unn":
        raise RuntimeError("no unn today")
    return run_cell(task, *args)


@pytest.mark.xdist_group("dask")
def test_dask_local_cluster_gives_the_results_of_jobs_1(tmp_path):
    """A real distributed.LocalCluster on loopback (2 single-threaded worker processes):
    the same rows as an in-process run, a failed cell recorded the same way."""
    pytest.importorskip("distributed")
    spec = {
        **MANY,
        "datasets": ["iris", {"synthetic": "paredes2006", "n_per_class": 30}],
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [{"name": "knn", "params": {"k": [1, 5]}}, {"name": "gnnb", "params": {"k": 5}}],
    }
    local = read_results(run_spec(spec, out=tmp_path / "local", figures=False).out / "results.csv")
    summary = run_spec(spec, out=tmp_path / "dask", executor="dask", jobs=2, figures=False)
    assert summary.n_run == 2 * 3 * 3
    remote = read_results(tmp_path / "dask" / "results.csv")
    pd.testing.assert_frame_equal(values(remote), values(local))


def _dataset_loads():
    """On a Dask worker: how many datasets this worker process has loaded (cache misses)."""
    return PROCESS.loads


@pytest.mark.xdist_group("dask")
def test_dask_scheduler_address_and_each_worker_loads_a_dataset_once(tmp_path):
    """An external LocalCluster reached by its tcp:// address, as --scheduler does: same
    rows as jobs = 1, and no worker loads a dataset more than once (tasks carry the
    dataset's spec entry and row indices, never the data)."""
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    spec = {
        **MANY,
        "datasets": ["iris", "wine"],
        "protocol": {"kind": "kfold", "folds": 4},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5]}}],
    }
    local = read_results(run_spec(spec, out=tmp_path / "local", figures=False).out / "results.csv")
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # as knnx's own cluster: no dashboard, HTTP on a free port (None means :8787)
            dashboard_address=executors.LOOPBACK_ANY_PORT,
            scheduler_kwargs={"dashboard": False},
        ) as cluster,
        Client(cluster) as client,
    ):
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        summary = run_spec(
            spec, out=tmp_path / "dask", executor="dask", scheduler=cluster.scheduler_address, figures=False
        )
        loads = client.run(_dataset_loads)
    assert summary.n_run == 2 * 4 * 3
    assert len(loads) == 2 and all(n <= 2 for n in loads.values())  # 24 cells, at most 2 loads a worker
    assert sum(loads.values()) >= 2  # both datasets were loaded somewhere
    remote = read_results(tmp_path / "dask" / "results.csv")
    pd.testing.assert_frame_equal(values(remote), values(local))


def test_executor_options_are_checked(tmp_path, monkeypatch):
    # the library names its parameters, the command line its flags
    with pytest.raises(KnnxError, match=r"^scheduler: only with executor='dask'$"):
        run_spec(MANY, out=tmp_path, scheduler="tcp://127.0.0.1:1", figures=False)
    with pytest.raises(KnnxError, match=r"^jobs: expected an integer >= 1, got 0$"):
        run_spec(MANY, out=tmp_path, jobs=0, figures=False)
    result = CliRunner().invoke(app, ["run", "x.yaml", "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2 and "--scheduler: only with --executor dask" in result.stderr
    result = CliRunner().invoke(app, ["run", "x.yaml", "--executor", "spark"])
    assert (
        result.exit_code == 2 and "--executor: 'spark' is not an executor; use local or dask" in result.stderr
    )
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "DASK_CONNECT_TIMEOUT", 1)
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(yaml.safe_dump({**MANY, "protocol": {"kind": "kfold", "folds": 2}}))
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(spec_path),
            "--out",
            str(tmp_path / "o"),
            "--executor",
            "dask",
            "--scheduler",
            "tcp://127.0.0.1:9",
            "--quiet",
        ],
    )
    assert result.exit_code == 2 and result.stderr.startswith(
        "error: --scheduler tcp://127.0.0.1:9: cannot connect"
    )
    assert result.stderr.count("\n") == 1


def test_neighbour_graphs_are_computed_once_per_split_and_shared(tmp_path, monkeypatch, graph_calls):
    """kNN over six k, UNN and GNNB on Ripley's split: each (reference set, query set)
    graph is computed once, at the largest k of the spec, and the results equal a run
    that recomputes every graph."""
    calls = graph_calls
    spec = {
        "name": "share",
        "seed": 0,
        "datasets": ["ripley"],
        "protocol": {"kind": "predefined"},
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3, 5, 7, 9, 15]}},
            {"name": "unn", "params": {"k": 5}},
            {"name": "gnnb", "params": {"k": 5}},
        ],
        "metrics": ["error", "f1_macro"],
    }
    shared = read_results(run_spec(spec, out=tmp_path / "shared", figures=False).out / "results.csv")
    pairs = [c[:2] for c in calls]
    assert len(pairs) == len(set(pairs))  # no graph computed twice
    loo_graph = [c for c in calls if c[1] == "loo"]  # the training rows' own graph (UNN, GNNB)
    assert len(loo_graph) == 1 and loo_graph[0][2] == 15  # at the widest k of the spec
    train = loo_graph[0][0]
    test_graph = [c for c in calls if c[0] == train and c[1] != "loo"]  # test rows against all training rows
    assert len(test_graph) == 1 and test_graph[0][2] == 15  # shared by the six kNN cells
    # the rest: UNN's test rows against its prototypes (GNNB searches every training
    # row, eq. 16, so it shares the kNN test graph)
    assert len(calls) == 3
    n_shared = len(calls)
    calls.clear()
    # share_graphs: false (a timing study): every cell searches its own neighbours: the six
    # kNN cells a test graph each at their own k, UNN and GNNB a LOO graph and a test graph
    alone = read_results(
        run_spec({**spec, "share_graphs": False}, out=tmp_path / "alone", figures=False).out / "results.csv"
    )
    assert sorted(c[2] for c in calls if c[0] == train and c[1] != "loo") == [1, 3, 5, 5, 7, 9, 15]
    assert sorted(c[2] for c in calls if c[1] == "loo") == [5, 5]
    assert len(calls) == n_shared + 7
    pd.testing.assert_frame_equal(values(shared), values(alone))
    calls.clear()
    monkeypatch.setattr(PROCESS, "reuse_graphs", False)  # the process switch does the same
    run_spec(spec, out=tmp_path / "switch", figures=False)
    assert len(calls) == n_shared + 7
