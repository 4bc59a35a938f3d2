"""Shared fixtures and oracles for the knnx test suite."""

import subprocess
import sys

import numpy as np
import pytest

# One tolerance for float64 comparisons (STYLE: labels and indices compare exactly).
RTOL = 1e-7


def pytest_configure(config):
    """Before pytest-xdist starts its workers (``make test``: ``-n auto``), fill numba's
    cache with every kernel family once, two processes at a time
    (:mod:`knnx.experiment.precompile`): otherwise each worker compiles the kernels its
    first tests meet, the same ones at the same time. A few seconds when the cache is
    full; the tests of a cold cache use caches of their own (tests/experiment/test_warmup.py)."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        import time

        from knnx.experiment.precompile import precompile

        start = time.perf_counter()
        done = precompile(jobs=2)
        print(
            f"numba's cache: {len(done)} kernel families in {time.perf_counter() - start:.1f} s", flush=True
        )


def fresh_package(monkeypatch, top):
    """Forget the package ``top`` (and ``sys.path``'s changes) for one test, before and
    after: tests write packages of one name beside their specs, each its own."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        del sys.modules[name]


@pytest.fixture(scope="session")
def _shared_runs(tmp_path_factory):
    """The runs :func:`shared_run` made in this session (this xdist worker): {key: folder}."""
    return {}, tmp_path_factory.mktemp("shared-runs")


@pytest.fixture
def shared_run(_shared_runs, tmp_path):
    """``shared_run(spec, **options)``: the output folder of ``run_spec(spec, **options)``
    (``spec`` a dict), made once per session and copied for each test that asks
    (``tmp_path/shared-N``, the test's own to change). For tests whose subject is what a
    finished run wrote, not the run itself: a test that compares two runs makes the
    second one fresh."""
    import json
    import shutil

    from knnx.experiment.runner import run_spec

    made, root = _shared_runs
    copies = []

    def copy(spec, **options):
        key = json.dumps([spec, options], sort_keys=True)
        if key not in made:
            made[key] = root / f"run-{len(made)}"
            run_spec(spec, out=made[key], **options)
        copies.append(tmp_path / f"shared-{len(copies)}")
        shutil.copytree(made[key], copies[-1], symlinks=True)
        return copies[-1]

    return copy


@pytest.fixture(params=[0, 1, 2])
def seed(request):
    return request.param


def brute_kneighbors(X, k, queries=None):
    """Naive NumPy oracle: all distances, order by (distance, index), self excluded in LOO.

    Distances are summed with NumPy's own order, so on non-integer data they may
    differ from knnx's float64 sequential sum in the last bit; use integer-valued
    data when ties must be compared exactly.
    """
    loo = queries is None
    Q = X if loo else queries
    D = ((Q[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    if loo:
        np.fill_diagonal(D, np.inf)
    ind = np.broadcast_to(np.arange(X.shape[0]), D.shape)
    order = np.lexsort((ind, D), axis=1)[:, :k]
    return np.take_along_axis(D, order, 1), order


def sk_g_mean(y_true, y_pred):
    """Oracle of ``g_mean``: imbalanced-learn's ``geometric_mean_score(y_true, y_pred,
    labels=np.unique(y_true), average="multiclass")``, the geometric mean of scikit-learn's
    recalls of the classes of ``y_true``, 0 when one of them is 0."""
    from sklearn.metrics import recall_score

    recall = recall_score(y_true, y_pred, labels=np.unique(y_true), average=None, zero_division=0)
    return 0.0 if (recall == 0).any() else float(np.prod(recall) ** (1 / len(recall)))


def load_script(folder, name):
    """The script <folder>/<name>.py of the repository imported as a module (experiments/ and
    benchmarks/ are folders of scripts, not packages). The folder goes on sys.path first, as
    when the script is run, so that it finds its sibling modules (benchmarks/_timing.py)."""
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / folder
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_experiment(name):
    """The script experiments/<name>.py imported as a module."""
    return load_script("experiments", name)


@pytest.fixture
def graph_calls(monkeypatch):
    """Every exact neighbour-graph computation, as (reference fingerprint, "loo" or query
    fingerprint, k), in order; the process's graph store starts empty."""
    from knnx.experiment.context import PROCESS
    from knnx.neighbors import graphs
    from knnx.neighbors import search as N

    calls = []
    real = N._exact

    def counting(R, Q, loo, k):
        calls.append((graphs.fingerprint(R), "loo" if loo else graphs.fingerprint(Q), k))
        return real(R, Q, loo, k)

    monkeypatch.setattr(N, "_exact", counting)
    monkeypatch.setattr(PROCESS, "graphs", graphs.GraphStore())
    return calls


def refused_by_cli(tmp_path, spec, message):
    """``knnx validate`` and ``knnx run`` on the spec file ``spec`` (in ``tmp_path``): exit
    2, the one line ``error: SPEC: message``, nothing written."""
    from typer.testing import CliRunner

    from knnx.cli import app

    runner = CliRunner()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    for args in (["validate", str(spec)], ["run", str(spec), "--quiet", "--out", str(tmp_path / "out")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.output == f"error: {spec}: {message}\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def pdflatex(body, folder, twocolumn=False):
    """pdflatex of ``body`` in an article with booktabs, graphicx and rotating (two
    columns if asked): it compiles, with no missing character; the log's text."""
    options = "[twocolumn]" if twocolumn else ""
    doc = (
        f"\\documentclass{options}{{article}}\n\\usepackage{{booktabs,graphicx,rotating}}\n"
        f"\\begin{{document}}\nText.\n{body}\\end{{document}}\n"
    )
    (folder / "t.tex").write_text(doc, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "t.log").read_text(errors="replace")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Missing character" not in log, log[-2000:]
    return log
