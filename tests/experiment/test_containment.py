"""User code that misbehaves is contained: an exception that cannot be printed, a
worker process that dies, sys.exit and os._exit, threads left running, reported
quantities that shadow metrics, and the cell keys covering the user code a cell runs.

Each test runs the command line in a process of its own, as a user would; the
expected rows are those of a run without the misbehaving settings."""

import os
import py_compile
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from _harness import forked_knnx

from knnx.errors import describe
from knnx.evaluation.scoring import check_predictions
from knnx.results import read_results

LAB = """\
import os
import signal
import sys
import threading
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("this exception cannot be printed")


class Base(ClassifierMixin, BaseEstimator):
    \"\"\"Predicts the majority class of its training part; misbehaves when k == 3.\"\"\"

    def __init__(self, k=1):
        self.k = k

    def fit(self, X, y):
        values, counts = np.unique(y, return_counts=True)
        self.classes_ = values
        self.major_ = values[np.argmax(counts)]
        if self.k == 3:
            self.misbehave()
        return self

    def misbehave(self):
        pass

    def predict(self, X):
        return np.full(len(X), self.major_)


class BadStr(Base):
    def misbehave(self):
        raise Unprintable()


class Exits(Base):
    def misbehave(self):
        raise SystemExit("bye")


class Underscore(Base):
    def misbehave(self):
        os._exit(7)


class Killed(Base):
    def misbehave(self):
        os.kill(os.getpid(), signal.SIGKILL)


class Lingers(Base):
    def misbehave(self):
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()


class Shadow(Base):
    def misbehave(self):
        self.reported_ = {"error": 0.0}


class Reserved(Base):
    def misbehave(self):
        self.reported_ = {"tune_failed_settings": 7.0}


class Newline(Base):
    def misbehave(self):
        self.reported_ = {"a\\nb": 0.5}


class LongName(Base):
    def misbehave(self):
        self.reported_ = {"x" * 300: 0.5}


class Bools(Base):
    def predict(self, X):
        if self.k == 3:
            return np.full(len(X), True)
        return super().predict(X)


class ParamsFail(Base):
    \"\"\"Takes nominal attributes (through its metric), as knnx's neighbour estimators do.\"\"\"

    def __init__(self, k=1, metric="hvdm", nominal=None):
        self.k = k
        self.metric = metric
        self.nominal = nominal

    def get_params(self, deep=True):
        if self.k == 3:
            raise RuntimeError("no parameters today")
        return super().get_params(deep)


class Ignores(Base):
    def __init__(self, k=1):
        self.k = 1 if k == 3 else k


class Chdir(Base):
    def misbehave(self):
        os.chdir("/")


class FitSeconds(Base):
    def misbehave(self):
        self.reported_ = {"fit_seconds": 1.0}


class MyInterrupt(KeyboardInterrupt):
    pass


class Interrupts(Base):
    def misbehave(self):
        raise MyInterrupt("mine")


class DelExits(Base):
    def __del__(self):
        if self.k == 3:
            sys.exit("in del")


class SwapsStderr(Base):
    def misbehave(self):
        import io

        sys.stderr = io.StringIO()
        sys.stdout = io.StringIO()
        raise RuntimeError("swapped the streams")


class RmCwd(Base):
    def misbehave(self):
        try:
            os.rmdir(os.getcwd())
        except FileNotFoundError:  # --jobs 2: the other worker's cell removed it meanwhile
            pass


class GlobalRng(Base):
    def predict(self, X):
        import random

        codes = np.random.randint(0, len(self.classes_), len(X)) + random.randrange(2)
        return self.classes_[codes % len(self.classes_)]


class ChangesK(Base):
    def misbehave(self):
        self.k = 15


class TwoFaced(Base):
    \"\"\"Predicts through an object whose ``__array__`` gives the codes once, then 99s.\"\"\"

    def predict(self, X):
        codes = super().predict(X)

        class Faces:
            calls = 0

            def __array__(self, dtype=None, copy=None):
                Faces.calls += 1
                return codes if Faces.calls == 1 else np.full(len(codes), 99)

        return Faces()


class SharedBuffer(Base):
    \"\"\"Hands out its own buffer from predict and writes 99s into it in predict_proba.\"\"\"

    def predict(self, X):
        self.buffer_ = super().predict(X)
        return self.buffer_

    def predict_proba(self, X):
        self.buffer_[:] = 99
        proba = np.zeros((len(X), len(self.classes_)))
        proba[:, list(self.classes_).index(self.major_)] = 1.0
        return proba


class SharedDefault(Base):
    \"\"\"Draws its predictions from a RandomState given as a default: one object shared by
    every instance unless each cell gets a copy of its own.\"\"\"

    def __init__(self, k=1, random_state=np.random.RandomState(0)):
        self.k = k
        self.random_state = random_state

    def predict(self, X):
        return self.classes_[self.random_state.randint(0, len(self.classes_), len(X))]


class Sleeps(Base):
    def fit(self, X, y):
        time.sleep(1.5)
        return super().fit(X, y)


class InitExits(Base):
    def __init__(self, k=1):
        if k == 3:
            sys.exit(4)
        self.k = k

    def predict_proba(self, X):
        return np.ones((len(X), len(self.classes_))) / len(self.classes_)
"""

SPEC = """\
name: t
seed: 5
datasets: [iris]
protocol: {{kind: kfold, folds: 3}}
algorithms: [{{estimator: "mylab.odd:{cls}", params: {{k: [1, 3]}}}}, {{name: knn, params: {{k: 5}}}}]
"""


def _lab(tmp_path, cls):
    (tmp_path / "mylab").mkdir(exist_ok=True)
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "odd.py").write_text(LAB)
    spec = tmp_path / f"{cls}.yaml"
    spec.write_text(SPEC.format(cls=cls))
    return spec


def _no_figures(args):
    """``knnx run`` without figures: no test here looks at them (they are most of a
    small run's time)."""
    return ("run", "--no-figures", *args[1:]) if args[:1] == ("run",) else args


def _knnx(*args, timeout=240, cwd=None):
    """``knnx ARGS`` in a fork of this process (tests/_harness.py): exit code and streams
    as a shell sees them; test_a_new_interpreter_... checks that a new one says the same."""
    return forked_knnx(*_no_figures(args), timeout=timeout, cwd=cwd)


def _real_knnx(*args, timeout=240, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "knnx.cli", *map(str, _no_figures(args))],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def _write_spec(tmp_path, datasets="[iris]", algorithms="[{name: knn}]", folds=2, head=""):
    """``tmp_path/s.yaml``: a spec of ``datasets`` and ``algorithms`` (YAML flow text)."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\n{head}datasets: {datasets}\nprotocol: {{kind: kfold, folds: {folds}}}\nalgorithms: {algorithms}\n"
    )
    return spec


def _rows(out):
    """The rows of results.csv that do not depend on timing, sorted."""
    frame = read_results(out / "results.csv")
    keep = ["dataset", "algorithm", "params", "repeat", "fold", "metric", "value"]
    return sorted(map(tuple, frame[keep].astype(str).values.tolist()))


@pytest.fixture(scope="module")
def good_rows(tmp_path_factory):
    """The rows of a run of the spec whose Base class behaves: k = 1 and knn."""
    tmp = tmp_path_factory.mktemp("good")
    spec = _lab(tmp, "Base")
    done = _knnx("run", spec, "--out", tmp / "out", "--quiet")
    assert done.returncode == 0, done.stderr
    return [r for r in _rows(tmp / "out") if '"k":3' not in r[2]]


@pytest.mark.parametrize(
    ("cls", "args", "cause"),
    [
        ("BadStr", ["--jobs", "1"], "Unprintable: (its message cannot be printed)"),
        ("BadStr", ["--jobs", "2"], "Unprintable: (its message cannot be printed)"),
        ("Exits", ["--jobs", "1"], "SystemExit: sys.exit('bye') called"),
        ("Underscore", ["--jobs", "1"], "ProcessExit: os._exit(7) called"),
        ("Underscore", ["--jobs", "2"], "ProcessExit: os._exit(7) called"),
        (
            "Killed",
            ["--jobs", "2"],
            "its worker process died (killed by SIGKILL; the out-of-memory killer sends it)",
        ),
        ("Shadow", ["--jobs", "1"], "ValueError: reported_ names 'error', which is a metric's name"),
        (
            "Reserved",
            ["--jobs", "1"],
            "ValueError: reported_ names 'tune_failed_settings', which is another row's",
        ),
        (
            "Newline",
            ["--jobs", "1"],
            "ValueError: reported_ has the name 'a\\nb'; names are letters, digits,",
        ),
        ("LongName", ["--jobs", "1"], "ValueError: reported_ has the name 'xxxxxxxxxx"),
        ("Interrupts", ["--jobs", "1"], "MyInterrupt: mine"),
        (
            "FitSeconds",
            ["--jobs", "1"],
            "ValueError: reported_ names 'fit_seconds', which is a column of results.csv: a reported quantity",
        ),
        (
            "Ignores",
            ["--jobs", "1"],
            "ValueError: Ignores(k=3).get_params() gives k=1: __init__ must store each parameter as given",
        ),
        ("Bools", ["--jobs", "1"], "ValueError: predict returned booleans (dtype bool), not class codes"),
        ("SwapsStderr", ["--jobs", "1"], "RuntimeError: swapped the streams"),
        (
            "ChangesK",
            ["--jobs", "1"],
            "ValueError: fit changed its parameter k (k: 3 -> 15): fit must leave the parameters as set",
        ),
        ("SwapsStderr", ["--jobs", "2"], "RuntimeError: swapped the streams"),
        ("Interrupts", ["--jobs", "2"], "MyInterrupt: mine"),
    ],
)
def test_a_misbehaving_cell_fails_alone_and_the_others_are_those_of_a_clean_run(
    tmp_path, good_rows, cls, args, cause
):
    spec = _lab(tmp_path, cls)
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet", *args)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: 3 of 9 cells failed")
    failed = (out / "failures.csv").read_text().splitlines()[1:]
    assert len(failed) == 3
    for fold, line in enumerate(sorted(failed, key=lambda line: line.split(",")[4])):
        assert line.startswith(f'iris,{cls},"{{""k"":3}}",0,{fold},')
        assert f'cell iris {cls} {{""k"":3}} repeat 0 fold {fold} failed: {cause}' in line
    expected = [(d, cls if a == "Base" else a, *rest) for d, a, *rest in good_rows]
    assert _rows(out) == sorted(expected)


@pytest.mark.parametrize("cls", ["TwoFaced", "SharedBuffer"])
def test_what_is_scored_is_the_copy_of_the_predictions_that_was_checked(tmp_path, good_rows, cls):
    """Predictions were checked on one reading and scored on another: an ``__array__``
    giving 99s at its second call, or a buffer predict_proba overwrote, scored error 1.0
    with no failure. The copy checked is scored: the rows of a clean run."""
    spec = _lab(tmp_path, cls)
    if cls == "SharedBuffer":  # brier asks for predict_proba after predict
        spec.write_text(spec.read_text() + "metrics: [error, brier]\n")
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    errors = [row for row in _rows(out) if row[5] == "error"]
    k3 = [(d, a, p.replace('"k":1', '"k":3'), *rest) for d, a, p, *rest in good_rows if a == "Base"]
    expected = [(d, cls if a == "Base" else a, *rest) for d, a, *rest in good_rows + k3]  # k does not matter
    assert errors == sorted(expected)


def test_a_default_random_state_gives_every_cell_the_same_start_whatever_the_jobs(tmp_path):
    """A ``RandomState`` given as a default is one object shared by every instance: each
    cell drew where the previous cell in its process had left it, so results depended on
    ``--jobs`` and on resuming. Each cell gets a copy of its own, as ``clone`` gives."""
    spec = _lab(tmp_path, "SharedDefault")
    spec.write_text(spec.read_text().replace("{k: [1, 3]}", "{k: [1, 2, 3]}"))
    runs = []
    for args in (["--jobs", "1"], ["--jobs", "2"]):
        out = tmp_path / f"out{args[1]}"
        done = _knnx("run", spec, "--out", out, "--quiet", "--no-report", *args)
        assert done.returncode == 0, done.stderr
        runs.append(_rows(out))
    assert runs[0] == runs[1]
    by_fold = {}
    for _, algorithm, _, _, fold, metric, value in runs[0]:
        if algorithm == "SharedDefault" and metric == "error":
            by_fold.setdefault(fold, set()).add(value)
    assert len(by_fold) == 3 and all(len(v) == 1 for v in by_fold.values())  # k=1, 2, 3 draw alike


POISON = """\
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Poison(ClassifierMixin, BaseEstimator):
    \"\"\"Adds well-formed but wrong graphs (rows 0..k-1 at distance 0) to the store it is given.\"\"\"

    def __init__(self, graphs=None):
        self.graphs = graphs

    def fit(self, X, y):
        self.classes_, self.X_ = np.unique(y), X
        n, k = len(X), min(60, len(X) - 1)
        ind = np.array([[j for j in range(k + 1) if j != i][:k] for i in range(n)])
        self.graphs.add(X, np.zeros((n, k)), ind)
        return self

    def predict(self, X):
        k = min(60, len(self.X_))
        self.graphs.add(self.X_, np.zeros((len(X), k)), np.tile(np.arange(k), (len(X), 1)), queries=X)
        return np.zeros(len(X), dtype=int)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_graphs_an_estimator_outside_knnx_adds_never_reach_other_cells(tmp_path, jobs):
    """An estimator outside knnx with a ``graphs`` parameter was handed the run's own
    store: the wrong graphs it added made every knn row 0.6667 (and were then cached).
    It gets an overlay of the store: it reads knnx's graphs, its own stay with it."""
    (tmp_path / "poison.py").write_text(POISON)
    knn = "{name: knn, params: {k: [1, 3]}}"
    rows = []
    for name, algorithms in (
        ("with", f'[{{id: p, estimator: "poison:Poison"}}, {knn}]'),
        ("alone", f"[{knn}]"),
    ):
        spec = _write_spec(tmp_path, algorithms=algorithms, head="metrics: [error]\n")
        spec = spec.rename(tmp_path / f"{name}.yaml")
        done = _knnx("run", spec, "--out", tmp_path / name, "--quiet", "--no-report", "--jobs", jobs)
        assert done.returncode == 0, done.stderr
        rows.append([row for row in _rows(tmp_path / name) if row[1] == "knn"])
    assert rows[0] == rows[1] and len(rows[0]) == 4
    assert {row[-1] for row in rows[0]} != {"0.6666666666666667"}


def test_an_overlay_reads_its_base_and_keeps_its_own_graphs():
    from knnx.neighbors.graphs import GraphStore

    X = np.arange(12.0).reshape(6, 2)
    base = GraphStore()
    base.add(X, np.tile([2.0, 8.0], (6, 1)), np.array([[1, 2], [0, 2], [1, 3], [2, 4], [3, 5], [4, 3]]))
    key = base.key(X, None)
    over = base.overlay()
    assert over.get(key, 2)[1].tolist() == base.get(key, 2)[1].tolist()  # reads the base
    wrong = np.array([[4, 5], [4, 5], [4, 5], [4, 5], [2, 3], [2, 3]])
    over.add(X, np.zeros((6, 2)), wrong)
    assert over.get(key, 2)[1].tolist() == wrong.tolist()  # its own first
    assert base.get(key, 2)[1][0].tolist() == [1, 2] and len(base) == 1  # the base is untouched
    assert (
        over.with_k_max(9).get(key, 1)[1].tolist() == wrong[:, :1].tolist() and over.with_k_max(9).k_max == 9
    )


def test_a_cell_that_changes_the_process_has_it_put_back():
    """With ``--jobs 1`` the cells share knnx's process: a cell ignoring Ctrl-C, lowering
    the recursion limit (every later cell failed, then the run ended in a RecursionError
    traceback), hiding a module (``sys.modules['csv'] = None``: a traceback) or setting
    the umask to 0o777 (files written unreadable) changed it for the rest of the run."""
    import csv
    import signal

    from knnx.experiment.worker import run_contained

    class Task:
        def describe(self):
            return "iris odd"

    def misbehave(task):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.setrecursionlimit(60)
        sys.modules["csv"] = None
        os.umask(0o777)
        raise RuntimeError("changed the process")

    handler, limit, mask = signal.getsignal(signal.SIGINT), sys.getrecursionlimit(), os.umask(0o022)
    os.umask(mask)
    outcome = run_contained(misbehave, Task())
    assert str(outcome) == "cell iris odd failed: RuntimeError: changed the process"
    assert signal.getsignal(signal.SIGINT) is handler and sys.getrecursionlimit() == limit
    assert sys.modules["csv"] is csv
    assert os.umask(mask) == mask


def test_get_params_failing_at_run_time_fails_its_cell(tmp_path):
    """knnx reads a setting's parameters to hand it a kept nominal dataset's columns: a
    get_params that raises there fails the cell, as fit raising would (it was taken as
    "no such parameter" and the cell succeeded)."""
    spec = _lab(tmp_path, "ParamsFail")
    text = spec.read_text().replace(
        "datasets: [iris]", "datasets: [{name: german, categorical: keep, id: g}]"
    )
    spec.write_text(text.replace("{k: 5}", "{k: 5, metric: hvdm}"))
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet")
    setting = '{"k":3,"metric":"hvdm","nominal":null}'
    assert (done.returncode, done.stderr) == (
        1,
        f"error: 3 of 9 cells failed and were not saved (listed in {out / 'failures.csv'}; a rerun retries them); "
        f"first: cell g ParamsFail {setting} repeat 0 fold 0 failed: RuntimeError: no parameters today\n",
    )
    failed = sorted((out / "failures.csv").read_text().splitlines()[1:], key=lambda line: line.split(",")[-3])
    assert len(failed) == 3
    quoted = setting.replace('"', '""')
    for fold, line in enumerate(failed):
        assert (
            f"cell g ParamsFail {quoted} repeat 0 fold {fold} failed: RuntimeError: no parameters today"
            in line
        )
    frame = read_results(out / "results.csv")
    assert sorted(set(frame.params))[0] == '{"k":1,"metric":"hvdm","nominal":null}'
    assert sorted(set(frame.params))[1].startswith('{"k":5,"metric":"hvdm",')
    assert len(frame[frame.metric == "error"]) == 6


@pytest.mark.xdist_group("dask")
def test_a_killed_worker_under_dask_fails_its_cell_and_the_run_goes_on(tmp_path, good_rows):
    pytest.importorskip("distributed")
    spec = _lab(tmp_path, "Killed")
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet", "--jobs", "2", "--executor", "dask", timeout=400)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    failed = (out / "failures.csv").read_text().splitlines()[1:]
    assert len(failed) == 3 and all("its worker process died (dask KilledWorker)" in line for line in failed)
    expected = [(d, "Killed" if a == "Base" else a, *rest) for d, a, *rest in good_rows]
    assert _rows(out) == sorted(expected)


@pytest.mark.parametrize("args", [["--jobs", "1"], ["--jobs", "2"]])
def test_a_run_ends_when_its_work_is_done_whatever_threads_user_code_left(tmp_path, good_rows, args):
    spec = _lab(tmp_path, "Lingers")
    out = tmp_path / "out"
    start = time.monotonic()
    done = _knnx("run", spec, "--out", out, "--quiet", *args, timeout=120)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - start < 60
    assert len(_rows(out)) == len(good_rows) + 3  # every cell, k = 3 included
    assert not (out / ".knnx-lock").exists() or (out / ".knnx-lock").read_text() == ""


@pytest.mark.parametrize(
    "args",
    [
        ["--jobs", "1"],
        ["--jobs", "2"],
        pytest.param(["--jobs", "2", "--executor", "dask"], marks=pytest.mark.xdist_group("dask")),
    ],
)
def test_joblib_workers_cells_start_do_not_outlive_the_run(tmp_path, args):
    """An estimator with ``n_jobs=2`` starts joblib's (loky's) worker processes, which
    would hold the run's stdout and stderr for loky's 300 s idle timeout after knnx
    exits (``knnx run ... | cat`` waited for them) and then print resource warnings;
    they are shut down once the process has run its cells, so the pipes close when
    the run does."""
    spec = _write_spec(
        tmp_path,
        algorithms='[{id: cal, estimator: "sklearn.calibration:CalibratedClassifierCV", params: {n_jobs: 2}}]',
        head="metrics: [error]\n",
    )
    out = tmp_path / "out"
    start = time.monotonic()
    done = _real_knnx("run", spec, "--out", out, "--quiet", "--no-report", *args, timeout=120)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - start < 60  # the pipes closed: loky's workers ended with the run
    assert done.stderr == ""  # no "leaked semlock objects" warning from loky's resource tracker
    errors = read_results(out / "results.csv").query("metric == 'error'")["value"]
    assert len(errors) == 2 and errors.between(0, 0.2).all()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("import sys\nsys.exit(0)\n", "importing 'mylab.bad' failed: SystemExit: sys.exit(0) called"),
        ("raise SystemExit('bye')\n", "importing 'mylab.bad' failed: SystemExit: sys.exit('bye') called"),
        (
            "class E(Exception):\n    def __str__(self):\n        raise ValueError\nraise E()\n",
            "importing 'mylab.bad' failed: E: (its message cannot be printed)",
        ),
        ("raise GeneratorExit('g')\n", "importing 'mylab.bad' failed: GeneratorExit: g"),
        ("import os\nos._exit(4)\n", "importing 'mylab.bad' failed: ProcessExit: os._exit(4) called"),
    ],
)
def test_a_module_that_exits_at_import_is_refused_in_one_line(tmp_path, body, message):
    (tmp_path / "mylab").mkdir()
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "bad.py").write_text(body)
    spec = _write_spec(tmp_path, algorithms="[{estimator: 'mylab.bad:X'}]")
    for args in (["validate", spec], ["run", spec, "--out", tmp_path / "out", "--quiet"]):
        done = _knnx(*args)
        assert done.returncode == 2
        assert done.stderr == f"error: {spec}: algorithms[0].estimator: {message}\n"
    assert not (tmp_path / "out").exists()


def test_describe_renders_any_exception_in_one_line():
    class Loud(Exception):
        def __str__(self):
            raise RuntimeError("no")

    class Weird(Exception):
        def __str__(self):
            return 42

    assert describe(ValueError("first\nsecond")) == "ValueError: first"
    assert describe(ValueError("a\x1bb")) == "ValueError: a\\x1bb"
    assert describe(KeyError()) == "KeyError"
    assert describe(Loud()) == "Loud: (its message cannot be printed)"
    assert describe(Weird()) == "Weird: (its message cannot be printed)"
    assert describe(SystemExit(3)) == "SystemExit: sys.exit(3) called"
    assert describe(ValueError("x" * 500), limit=10) == "ValueError: xxxxxxxxxx"


# --- cell keys cover the user code a cell runs -------------------------------------------

METHOD = """\
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

import helper


class H(ClassifierMixin, BaseEstimator):
    def __init__(self, k=1):
        self.k = k

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[helper.CLASS])
"""


def _errors(out):
    frame = read_results(out / "results.csv")
    return frame.sort_values("fold")["value"].tolist()


def _constant_errors(code):
    """Test errors of predicting class ``code`` on every fold of the specs below (iris,
    stratified 3-fold, the default seed), from the splits themselves."""
    from knnx.spec import validate_spec

    vspec = validate_spec(
        {
            "name": "t",
            "datasets": ["iris"],
            "protocol": {"kind": "kfold", "folds": 3},
            "algorithms": [{"name": "knn"}],
        }
    )
    y = vspec.datasets[0].y
    return [
        float(sum(y[s.test] != code)) / len(s.test) for s in sorted(vspec.splits[0], key=lambda s: s.fold)
    ]


def test_editing_a_helper_module_the_estimator_imports_reruns_its_cells(tmp_path):
    (tmp_path / "mylab").mkdir()
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "m.py").write_text(METHOD)
    (tmp_path / "helper.py").write_text("CLASS = 0\n")
    spec = _write_spec(tmp_path, algorithms="[{estimator: 'mylab.m:H'}]", folds=3)
    out = tmp_path / "out"
    assert _knnx("run", spec, "--out", out, "--quiet").returncode == 0
    assert _errors(out) == _constant_errors(0)
    (tmp_path / "helper.py").write_text("CLASS = 1\n")
    done = _knnx("run", spec, "--out", out)
    assert "3 cells run, 0 already done" in done.stdout
    assert _errors(out) == _constant_errors(1) != _constant_errors(0)
    done = _knnx("run", spec, "--out", out)  # unchanged now: nothing to do
    assert "0 cells run, 3 already done" in done.stdout


def test_metadata_left_in_a_source_tree_does_not_stand_for_the_code(tmp_path):
    """``src/mylab.egg-info`` (left by ``pip install -e`` or ``setup.py egg_info``) beside
    the package on ``python_path``: it named ``mylab==0.1`` and the key held no code."""
    (tmp_path / "src" / "mylab").mkdir(parents=True)
    (tmp_path / "src" / "mylab" / "__init__.py").write_text("")
    (tmp_path / "src" / "mylab" / "m.py").write_text(
        METHOD.replace("import helper\n", "").replace("helper.CLASS", "0")
    )
    info = tmp_path / "src" / "mylab.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: mylab\nVersion: 0.1\n")
    (info / "top_level.txt").write_text("mylab\n")
    spec = _write_spec(
        tmp_path, algorithms="[{estimator: 'mylab.m:H'}]", folds=3, head="python_path: [src]\n"
    )
    out = tmp_path / "out"
    assert _knnx("run", spec, "--out", out, "--quiet").returncode == 0
    assert _errors(out) == _constant_errors(0)
    (tmp_path / "src" / "mylab" / "m.py").write_text(
        METHOD.replace("import helper\n", "").replace("helper.CLASS", "1")
    )
    done = _knnx("run", spec, "--out", out)
    assert "3 cells run, 0 already done" in done.stdout, done.stdout
    assert _errors(out) == _constant_errors(1)


def test_replacing_a_sourceless_module_reruns_its_cells(tmp_path):
    (tmp_path / "code").mkdir()
    source = tmp_path / "src.py"
    spec = _write_spec(tmp_path, algorithms="[{estimator: 'sm:H'}]", folds=3, head="python_path: [code]\n")
    out = tmp_path / "out"
    results = []
    for cls in (0, 2):
        source.write_text(METHOD.replace("import helper\n", "").replace("helper.CLASS", str(cls)))
        py_compile.compile(str(source), cfile=str(tmp_path / "code" / "sm.pyc"), doraise=True)
        done = _knnx("run", spec, "--out", out)
        assert done.returncode == 0, done.stderr
        assert "3 cells run, 0 already done" in done.stdout
        results.append(_errors(out))
    assert results == [_constant_errors(0), _constant_errors(2)]
    assert not (tmp_path / "code" / "sm.py").exists()


def _metric_values(out, metric):
    frame = read_results(out / "results.csv")
    return frame[frame.metric == metric].sort_values("fold")["value"].tolist()


def test_renaming_a_column_that_standardize_numeric_reads_reruns_the_cells(tmp_path):
    """``standardize: numeric`` scales the columns not named ``attribute=category``: a
    renamed column changes the results while X and y keep their bytes."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 120), rng.normal(0, 100, 120)
    label = (a + b / 100 + rng.normal(0, 0.5, 120) > 0).astype(int)
    data = "".join(f"{float(x)!r},{float(z)!r},{c}\n" for x, z, c in zip(a, b, label, strict=True))
    (tmp_path / "d.csv").write_text("a,b,class\n" + data)
    spec = _write_spec(
        tmp_path,
        datasets="[{csv: d.csv, label: class, id: d}]",
        algorithms="[{name: knn, params: {k: 5}}]",
        folds=3,
        head="preprocess: {standardize: numeric}\n",
    )
    out = tmp_path / "out"
    assert _knnx("run", spec, "--out", out, "--quiet").returncode == 0
    before = _errors(out)
    (tmp_path / "d.csv").write_text("a,b=x,class\n" + data)  # b: now read as a one-hot column
    done = _knnx("run", spec, "--out", out)
    assert "3 cells run, 0 already done" in done.stdout, done.stdout
    fresh = tmp_path / "fresh"
    assert _knnx("run", spec, "--out", fresh, "--quiet").returncode == 0
    assert _errors(out) == _errors(fresh) != before


def test_editing_a_loaders_posterior_reruns_the_cells(tmp_path):
    """The loader's code is in the key: its posterior (read by ``js``) is no array."""
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "__init__.py").write_text("")
    loader = textwrap.dedent(
        """\
        import numpy as np
        from knnx.datasets import make_dataset
        from dataclasses import replace

        P = 0.7


        def load():
            rng = np.random.default_rng(1)
            X = rng.normal(size=(60, 2))
            y = (X[:, 0] > 0).astype(int)
            ds = make_dataset("L", X, y, ["a", "b"], ["f0", "f1"])
            return replace(ds, posterior=lambda Z: np.column_stack([np.full(len(Z), P), np.full(len(Z), 1 - P)]))
        """
    )
    (tmp_path / "lab" / "data.py").write_text(loader)
    spec = _write_spec(
        tmp_path,
        datasets="[{loader: 'lab.data:load', id: L}]",
        algorithms="[{name: knn, params: {k: 5}}]",
        head="metrics: [error, js]\n",
    )
    out = tmp_path / "out"
    assert _knnx("run", spec, "--out", out, "--quiet").returncode == 0
    before = _metric_values(out, "js")
    (tmp_path / "lab" / "data.py").write_text(loader.replace("P = 0.7", "P = 0.2"))
    done = _knnx("run", spec, "--out", out)
    assert "2 cells run, 0 already done" in done.stdout, done.stdout
    fresh = tmp_path / "fresh"
    assert _knnx("run", spec, "--out", fresh, "--quiet").returncode == 0
    assert _metric_values(out, "js") == _metric_values(fresh, "js") != before


def test_a_loader_that_gives_other_data_in_a_worker_fails_its_cells(tmp_path):
    (tmp_path / "mylab").mkdir()
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "data.py").write_text(
        textwrap.dedent(
            """\
            import os
            import numpy as np

            def load():
                rng = np.random.default_rng(os.getpid())  # other data in every process
                return rng.normal(size=(60, 2)), np.arange(60) % 2
            """
        )
    )
    spec = _write_spec(tmp_path, datasets="[{loader: 'mylab.data:load'}]", folds=3)
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet", "--jobs", "2")
    assert done.returncode == 1
    failed = (out / "failures.csv").read_text().splitlines()[1:]
    assert len(failed) == 3
    assert all(
        "DataError: dataset load: loaded again in this worker process, it holds other data than when the run "
        "was validated" in line
        for line in failed
    )
    assert _knnx("run", spec, "--out", tmp_path / "one", "--quiet").returncode == 0  # in-process: lent data


def test_the_exit_guard_lets_a_forked_child_end(tmp_path):
    from knnx.errors import ProcessExit, exit_guard

    with exit_guard():
        pid = os.fork()
        if pid == 0:
            os._exit(5)  # the child: really ends
        _, status = os.waitpid(pid, 0)
        with pytest.raises(ProcessExit) as info:
            os._exit(6)
    assert os.waitstatus_to_exitcode(status) == 5
    assert info.value.code == 6
    assert not getattr(os._exit, "_knnx_guard", False)


def test_an_editable_install_enters_the_key_by_its_files_and_an_installed_one_by_its_version(
    tmp_path, monkeypatch
):
    import json

    from knnx import plugins

    (tmp_path / "edpkg").mkdir()
    (tmp_path / "edpkg" / "__init__.py").write_text("from . import helper\n\nclass C:\n    pass\n")
    (tmp_path / "edpkg" / "helper.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "edpkg", raising=False)
    import edpkg

    editable = {"value": True}

    class Dist:
        def read_text(self, name):
            if name == "RECORD":
                return None  # not listed: the folder says where it lies
            assert name == "direct_url.json"
            return json.dumps({"url": f"file://{tmp_path}", "dir_info": {"editable": editable["value"]}})

        def locate_file(self, path):  # its metadata where an installer puts it
            return tmp_path / "venv" / "lib" / "site-packages" / path

    monkeypatch.setattr(plugins, "_packages", lambda: {"edpkg": ["edpkg"]})
    monkeypatch.setattr(plugins.metadata, "version", lambda name: "1.0")
    monkeypatch.setattr(plugins.metadata, "distribution", lambda name: Dist())
    before = plugins.object_version(edpkg.C, "edpkg:C")
    (tmp_path / "edpkg" / "helper.py").write_text("X = 2\n")  # a module the package imports
    after = plugins.object_version(edpkg.C, "edpkg:C")
    assert before.startswith("edpkg==1.0 sha256:") and after.startswith("edpkg==1.0 sha256:")
    assert before != after
    (tmp_path / "edpkg" / "__pycache__").mkdir()
    (tmp_path / "edpkg" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"cache")
    (tmp_path / "notes.txt").write_text("not code")
    (tmp_path / "edpkg" / "spotcheck.py").write_text("print('an analysis script nothing imports')\n")
    (tmp_path / "edpkg" / "helper.py").write_text("# a comment, and the same code laid out anew\nX  =  2\n")
    # caches, other files, a module nothing imports, comments and layout: not the code
    assert plugins.object_version(edpkg.C, "edpkg:C") == after
    assert list(plugins.user_code_files("edpkg")) == ["edpkg/__init__.py", "edpkg/helper.py"]
    editable["value"] = False
    assert plugins.object_version(edpkg.C, "edpkg:C") == "edpkg==1.0"
    monkeypatch.delitem(sys.modules, "edpkg")


def test_a_folder_with_too_many_python_files_is_refused_in_one_line(tmp_path, monkeypatch):
    from knnx import plugins
    from knnx.errors import SpecError

    monkeypatch.setattr(plugins, "MAX_CODE_FILES", 3)
    for i in range(4):  # m0 imports m1, which imports m2, ...: four files
        (tmp_path / f"m{i}.py").write_text(f"import m{i + 1}\n" if i < 3 else "X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "m0", raising=False)
    import m0

    with pytest.raises(SpecError) as info:
        plugins.user_code_digest("m0")
    folder = os.path.dirname(os.path.abspath(m0.__file__))
    assert (
        str(info.value)
        == f"the code of 'm0' cannot be fingerprinted: it imports more than 3 files of {folder}"
    )
    for i in range(4):
        monkeypatch.delitem(sys.modules, f"m{i}", raising=False)


@pytest.mark.parametrize("odd", ["fifo", "device", "large"])
def test_a_code_file_that_is_no_regular_file_or_too_large_is_refused_in_one_line(tmp_path, monkeypatch, odd):
    """A pipe named ``stuck.py`` that the estimator's module imports hung validation forever,
    and a ``zero.py`` link to /dev/zero grew to 5 GB: the fingerprint read every ``*.py``."""
    from knnx import plugins
    from knnx.errors import SpecError

    (tmp_path / "m1.py").write_text("if 0:\n    import odd\n")  # read by the fingerprint, never run
    odd_file = tmp_path / "odd.py"
    if odd == "fifo":
        os.mkfifo(odd_file)
    elif odd == "device":
        odd_file.symlink_to("/dev/zero")
    else:
        monkeypatch.setattr(plugins, "MAX_CODE_BYTES", 30)
        odd_file.write_text("X = 12345678901234567890123456789\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "m1", raising=False)
    import m1  # noqa: F401

    with pytest.raises(SpecError) as info:
        plugins.user_code_digest("m1")
    what = "34 bytes" if odd == "large" else "not a regular file"
    limit = 30 if odd == "large" else 50_000_000
    assert str(info.value) == (
        f"the code of 'm1' cannot be fingerprinted: {tmp_path.resolve() / 'odd.py'} is {what}; a code file is a "
        f"regular file of at most {limit} bytes (reading a pipe or a device would not end)"
    )
    monkeypatch.delitem(sys.modules, "m1")


def test_code_imported_from_a_zip_archive_enters_the_key_by_the_archive(tmp_path, monkeypatch):
    """A class imported from ``code.zip`` on PYTHONPATH: its folder is the archive, a file,
    so no code entered the key and an edited archive served the old cells."""
    import zipfile

    from knnx import plugins

    archive = tmp_path / "code.zip"
    monkeypatch.syspath_prepend(str(archive))
    digests = []
    for body in ("X = 1\n", "X = 2\n"):
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("zmod.py", body)
        monkeypatch.delitem(sys.modules, "zmod", raising=False)
        import importlib

        importlib.invalidate_caches()
        import zmod  # noqa: F401

        digests.append(plugins.user_code_digest("zmod"))
    assert digests[0] != digests[1]
    assert plugins._archive_of(archive) == archive and plugins._archive_of(tmp_path) is None
    monkeypatch.delitem(sys.modules, "zmod")


def test_a_zip_archive_in_python_path_is_imported_and_its_edits_rerun_the_cells(tmp_path):
    """``python_path: [code.zip]`` was refused as "no such folder", though Python imports
    from an archive on its path; it is taken, and an edited archive reruns its cells with
    the new code. A file that is no archive is refused in one line."""
    import zipfile

    spec = _write_spec(
        tmp_path, algorithms='[{id: z, estimator: "zmod:Z"}]', head="python_path: [code.zip]\n"
    )
    out = tmp_path / "out"
    runs = []
    for k in (1, 15):
        with zipfile.ZipFile(tmp_path / "code.zip", "w") as zf:
            zf.writestr(
                "zmod.py",
                "from sklearn.neighbors import KNeighborsClassifier\n\n\n"
                f"class Z(KNeighborsClassifier):\n    def __init__(self, n_neighbors={k}):\n"
                "        super().__init__(n_neighbors=n_neighbors)\n",
            )
        done = _knnx("run", spec, "--out", out, "--no-report")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("2 cells run, 0 already done")
        runs.append(_rows(out))
    assert runs[0] != runs[1] and all('"n_neighbors":15' in row[2] for row in runs[1])
    (tmp_path / "code.zip").write_text("not an archive")
    done = _knnx("validate", spec)
    assert (done.returncode, done.stderr) == (
        2,
        f"error: {spec}: python_path[0]: {tmp_path / 'code.zip'}: not a folder or a zip archive\n",
    )


def test_a_python_path_folder_in_a_loop_of_links_is_refused_in_one_line(tmp_path):
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "a").symlink_to("b")
    (tmp_path / "loop" / "b").symlink_to("a")
    spec = _write_spec(tmp_path, head="python_path: [loop/a]\n")
    for args in (["validate", spec], ["run", spec, "--out", tmp_path / "out", "--quiet"]):
        done = _knnx(*args)
        assert (done.returncode, done.stderr) == (
            2,
            f"error: {spec}: python_path[0]: {tmp_path}/loop/a: a loop of symbolic links\n",
        )
    assert not (tmp_path / "out").exists()


def test_a_loader_that_calls_os_exit_is_refused_in_one_line(tmp_path):
    (tmp_path / "mylab").mkdir()
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "data.py").write_text("import os\n\n\ndef load():\n    os._exit(9)\n")
    spec = _write_spec(tmp_path, datasets="[{loader: 'mylab.data:load'}]")
    done = _knnx("validate", spec)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {spec}: datasets[0]: loader mylab.data:load: the loader raised ProcessExit: os._exit(9) called\n"
    )


PICKY = """\
from sklearn.neighbors import KNeighborsClassifier


class Picky(KNeighborsClassifier):
    def fit(self, X, y):
        if self.n_neighbors in (3, 4):
            raise ValueError(f"no fit for {self.n_neighbors}")
        return super().fit(X, y)
"""


def test_a_tuned_cell_counts_its_failed_settings_in_a_row_and_fails_only_when_all_fail(tmp_path):
    (tmp_path / "tunelab").mkdir()
    (tmp_path / "tunelab" / "__init__.py").write_text("")
    (tmp_path / "tunelab" / "m.py").write_text(PICKY)
    entry = "{{estimator: 'tunelab.m:Picky', params: {{n_neighbors: {grid}}}, tune: {{cv: 3}}}}"
    spec = _write_spec(tmp_path, algorithms=f"[{entry.format(grid='[1, 3, 5]')}]", folds=3)
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    frame = read_results(out / "results.csv")
    counts = frame[frame.metric == "tune_failed_settings"].sort_values("fold")["value"].tolist()
    assert counts == [1.0, 1.0, 1.0]
    assert set(frame[frame.metric == "chosen_n_neighbors"]["value"]) <= {1.0, 5.0}
    warned = (out / "warnings.csv").read_text()
    assert warned.count("FitFailedWarning") == 3 and "ValueError: no fit for 3" in warned
    spec = _write_spec(tmp_path, algorithms=f"[{entry.format(grid='[3, 4]')}]", folds=3)
    done = _knnx("run", spec, "--out", tmp_path / "all", "--quiet")
    assert done.returncode == 1
    failed = (tmp_path / "all" / "failures.csv").read_text().splitlines()[1:]
    assert len(failed) == 3
    assert all(
        "ValueError: tune: every setting failed on the inner folds (2 of 2); first (n_neighbors=3): "
        "ValueError: no fit for 3" in line
        for line in failed
    )


RETURNS = """\
from sklearn.neighbors import KNeighborsClassifier


class Plain(KNeighborsClassifier):
    pass


class ReturnsNone(KNeighborsClassifier):
    def fit(self, X, y):
        super().fit(X, y)


class ReturnsOther(KNeighborsClassifier):
    def fit(self, X, y):
        super().fit(X, y)
        return KNeighborsClassifier(n_neighbors=1).fit(X[:3], y[:3])
"""


def test_tuning_ignores_what_fit_returns_as_grid_search_does(tmp_path):
    """The inner search scored the object ``fit`` returned: a ``fit`` without ``return
    self`` failed every setting (counted in tune_failed_settings) and one returning
    another model was scored through it; GridSearchCV, like the refit, ignores it."""
    (tmp_path / "retlab").mkdir()
    (tmp_path / "retlab" / "__init__.py").write_text("")
    (tmp_path / "retlab" / "m.py").write_text(RETURNS)
    chosen = {}
    for cls in ("Plain", "ReturnsNone", "ReturnsOther"):
        entry = (
            f"{{estimator: 'retlab.m:{cls}', id: knn, params: {{n_neighbors: [1, 5, 15]}}, tune: {{cv: 3}}}}"
        )
        spec = _write_spec(tmp_path, datasets="[wine]", algorithms=f"[{entry}]", folds=3)
        done = _knnx("run", spec, "--out", tmp_path / cls, "--quiet")
        assert (done.returncode, done.stderr) == (0, "")
        chosen[cls] = _rows(tmp_path / cls)
    assert {r[5] for r in chosen["Plain"]} == {"error", "chosen_n_neighbors"}
    assert chosen["ReturnsNone"] == chosen["ReturnsOther"] == chosen["Plain"]


def test_a_class_that_exits_when_made_with_a_setting_fails_those_cells_only(tmp_path, good_rows):
    spec = _lab(tmp_path, "InitExits")
    spec.write_text(spec.read_text().replace("name: t\n", "name: t\nmetrics: [error, log_loss]\n"))
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    failed = (out / "failures.csv").read_text().splitlines()[1:]
    assert len(failed) == 3 and all("SystemExit: sys.exit(4) called" in line for line in failed)


def test_a_yaml_alias_inside_the_value_it_names_is_one_line(tmp_path):
    spec = _write_spec(tmp_path, algorithms="[{name: knn, params: {k: &a [*a]}}]")
    done = _knnx("validate", spec)
    assert (done.returncode, done.stderr) == (
        2,
        f"error: {spec}: line 4, column 38: invalid YAML (an alias inside the value it names (a value that "
        "holds itself))\n",
    )


@pytest.mark.parametrize("linked", ["package", "subpackage"])
def test_code_reached_through_a_link_is_in_the_key(tmp_path, linked):
    """The package (or a subpackage) is a link to a folder elsewhere; a helper it imports
    is edited: the cells rerun."""
    real = tmp_path / "elsewhere"
    (real / "mylab").mkdir(parents=True)
    (real / "mylab" / "__init__.py").write_text("")
    (real / "mylab" / "sub").mkdir()
    (real / "mylab" / "sub" / "__init__.py").write_text("")
    (real / "mylab" / "sub" / "helper.py").write_text("CLASS = 0\n")
    (real / "mylab" / "m.py").write_text(METHOD.replace("import helper", "from mylab.sub import helper"))
    project = tmp_path / "project"
    project.mkdir()
    if linked == "package":
        (project / "mylab").symlink_to(real / "mylab")
    else:
        (project / "mylab").mkdir()
        for name in ("__init__.py", "m.py"):
            (project / "mylab" / name).write_text((real / "mylab" / name).read_text())
        (project / "mylab" / "sub").symlink_to(real / "mylab" / "sub")
    spec = _write_spec(project, algorithms="[{estimator: 'mylab.m:H'}]", folds=3)
    out = project / "out"
    assert _knnx("run", spec, "--out", out, "--quiet").returncode == 0
    assert _errors(out) == _constant_errors(0)
    (real / "mylab" / "sub" / "helper.py").write_text("CLASS = 1\n")
    done = _knnx("run", spec, "--out", out)
    assert "3 cells run, 0 already done" in done.stdout
    assert _errors(out) == _constant_errors(1)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            '{""k"":""\\ud800""}',
            "column 'params' line 2: a \\u escape that is no character (a lone surrogate)",
        ),
        (
            "{" + ",".join(f'""p{i}"":1' for i in range(501)) + "}",
            "column 'params' holds 508 parameter names; at most 500",  # and knn's 7 on the other rows
        ),
    ],
    ids=["surrogate", "names"],
)
def test_a_hand_edited_params_cell_is_one_line_in_every_reader(tmp_path, params, message):
    spec = _write_spec(tmp_path, algorithms="[{name: knn, params: {k: [1, 3]}}]")
    out = tmp_path / "out"
    assert _knnx("run", spec, "--out", out, "--quiet").returncode == 0
    lines = (out / "results.csv").read_text().splitlines()
    first = lines[1].split(",")
    start = lines[1].index('"{')
    end = lines[1].index('}"', start) + 2
    lines[1] = lines[1][:start] + f'"{params}"' + lines[1][end:]
    assert first[0] == "t"
    (out / "results.csv").write_text("\n".join(lines) + "\n")
    for command in ("table", "compare", "plot"):
        done = _knnx(command, out / "results.csv")
        assert (done.returncode, done.stderr) == (2, f"error: {out / 'results.csv'}: {message}\n"), command


@pytest.mark.parametrize(
    ("y_pred", "message"),
    [
        (np.array([True, False, True]), "predict returned booleans (dtype bool), not class codes"),
        (np.array([1, True, 0], dtype=object), "predict returned True, not a class code"),
        (np.array([None, None, None], dtype=object), "predict returned None, not a class code"),
        (np.array(["0", "1", "1"]), "predict returned '0', not a class code"),
        (np.array([1.0, 2.5, 0.0]), "predict returned 2.5, not a class code"),
        (np.array([1 + 0j, 0j, 0j]), "predict returned (1+0j), not a class code"),
        (np.array([0, 3, 1]), "predict returned 3, not a class code"),
        (np.array([0, -1, 1]), "predict returned -1, not a class code"),
        (np.array([[0, 1, 1]]), "predict returned shape (1, 3), expected (3,)"),
        # a duration's tolist() gives integers, and a masked array reads the values it hides
        (
            np.array([0, 1, 1], dtype="timedelta64[ns]"),
            "predict returned dtype timedelta64[ns], not class codes",
        ),
        (np.array([0, 1, 1], dtype="datetime64[s]"), "predict returned dtype datetime64[s], not class codes"),
        (np.ma.masked_array([0, 1, 1], mask=True), "predict returned a masked array with 3 values masked"),
    ],
)
def test_predictions_that_are_not_class_codes_fail_the_cell_naming_the_first(y_pred, message):
    with pytest.raises(ValueError) as err:
        check_predictions(y_pred, 3, 3)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    "y_pred", [np.array([0, 2, 1]), np.array([0.0, 2.0, 1.0]), np.array([0, 2, 1], dtype=object)]
)
def test_class_codes_of_any_numeric_type_pass(y_pred):
    codes = check_predictions(y_pred, 3, 3)
    assert codes.dtype == np.int64 and codes.tolist() == [0, 2, 1]
    assert not np.shares_memory(codes, y_pred)  # a copy of its own: what is scored is what was checked


class _Proba:
    classes_ = np.array([0, 1])

    def __init__(self, proba):
        self.proba = proba

    def predict_proba(self, X):
        return self.proba


@pytest.mark.parametrize(
    ("proba", "message"),
    [
        (
            np.array([[1 + 1j, 0j], [0.5 + 0j, 0.5 + 0j]]),
            "predict_proba returned dtype complex128, not probabilities",
        ),
        (np.array([[True, False], [False, True]]), "predict_proba returned dtype bool, not probabilities"),
        (np.array([["1", "0"], ["0", "1"]]), "predict_proba returned dtype <U1, not probabilities"),
        (
            np.array([[1 / 3, 2 / 3], [0.1, 0.9]], dtype=np.float16),
            "predict_proba returned float16, too coarse for rows to sum to 1 within 1e-6",
        ),
        (
            np.ma.masked_array([[1.0, 0.0], [0.0, 1.0]], mask=[[0, 0], [1, 1]]),
            "predict_proba returned a masked array with 2 values masked",
        ),
    ],
)
def test_probabilities_that_are_no_real_numbers_fail_the_cell(proba, message):
    """A complex ``predict_proba`` was scored on its real part, booleans as 0 and 1."""
    from knnx.evaluation.scoring import proba_on_codes

    with pytest.raises(ValueError) as err:
        proba_on_codes(_Proba(proba), np.zeros((2, 1)), 2)
    assert str(err.value).startswith(message)
    kept = proba_on_codes(_Proba(np.array([[1, 0], [0, 1]])), np.zeros((2, 1)), 3)  # integers are numbers
    assert kept.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_a_table_of_probabilities_is_read_by_its_column_labels_not_their_order():
    """A ``predict_proba`` returning a pandas DataFrame whose columns are the classes in
    another order than ``classes_`` was read by position: each class got another's
    probability. Labelled columns must be ``classes_`` in order; unlabelled ones (a
    default RangeIndex) are positions, as an array's."""
    import pandas as pd

    from knnx.evaluation.scoring import proba_on_codes

    class Labelled(_Proba):
        classes_ = np.array([0, 2])

    X = np.zeros((2, 1))
    swapped = pd.DataFrame({2: [0.9, 0.2], 0: [0.1, 0.8]})
    with pytest.raises(ValueError) as err:
        proba_on_codes(Labelled(swapped), X, 3)
    assert (
        str(err.value)
        == "predict_proba returned a table whose columns [2, 0] are not classes_ [0, 2] in order"
    )
    named = pd.DataFrame({"a": [0.1, 0.8], "b": [0.9, 0.2]})
    with pytest.raises(ValueError, match=r"columns \['a', 'b'\] are not classes_ \[0, 2\] in order$"):
        proba_on_codes(Labelled(named), X, 3)
    ordered = proba_on_codes(Labelled(swapped[[0, 2]]), X, 3)
    assert ordered.tolist() == [[0.1, 0.0, 0.9], [0.8, 0.0, 0.2]]
    positional = proba_on_codes(Labelled(pd.DataFrame([[0.1, 0.9], [0.8, 0.2]])), X, 3)
    assert positional.tolist() == ordered.tolist()


class _Reports:
    def __init__(self, reported):
        self.reported_ = reported


@pytest.mark.parametrize(
    ("reported", "message"),
    [
        (
            {"ERROR": 0.0},
            "reported_ names 'ERROR', which is a metric's name: a reported quantity would be read as it",
        ),
        ({"Fit_Seconds": 1.0}, "reported_ names 'Fit_Seconds', which is a column of results.csv"),
        ({"value": 1.0}, "reported_ names 'value', which is a column of results.csv"),
        ({"round": 1.0}, "reported_ names 'round', which is a column of results.csv"),
        ({"param_k": 1.0}, "reported_ names 'param_k', which is a column of results.csv"),
        ({"Chosen_K": 1.0}, "reported_ names 'Chosen_K', which is another row's name"),
        (
            {" error": 0.0},
            "reported_ has the name ' error'; names are letters, digits, '_' and '.', starting with",
        ),
        ({"sub/dir": 0.5}, "reported_ has the name 'sub/dir'; names are letters"),
        ({"a-b": 0.5}, "reported_ has the name 'a-b'; names are letters"),
        ({"_x": 0.5}, "reported_ has the name '_x'; names are letters"),
        ({"q": float("inf")}, "reported_['q'] is inf; values are finite numbers or NaN (not defined)"),
        ({"q": -np.inf}, "reported_['q'] is -inf; values are finite numbers or NaN"),
    ],
)
def test_reported_names_that_could_be_read_as_another_thing_fail_the_cell(reported, message):
    from knnx.evaluation.scoring import reported_scores

    with pytest.raises(ValueError) as err:
        reported_scores(_Reports(reported), {"chosen_k"}, columns=("fit_seconds", "value", "round"))
    assert str(err.value).startswith(message)


def test_reported_names_and_values_that_are_kept():
    from knnx.evaluation.scoring import reported_scores

    kept = reported_scores(
        _Reports({"loo_error": 0.25, "k.final": 3, "p2": np.nan, "b": True}), columns=("fit_seconds",)
    )
    assert kept[:2] == [("loo_error", 0.25), ("k.final", 3.0)]
    assert kept[2][0] == "p2" and np.isnan(kept[2][1]) and kept[3] == ("b", 1.0)


@pytest.mark.parametrize(
    ("setting", "stored", "held"),
    [
        ({"a": [1, 2]}, "as_given", True),
        ({"a": np.arange(3)}, "as_given", True),
        ({"a": [1, 2]}, "copy", True),  # an equal value: nothing the results would misstate
        ({"a": [1, 2]}, "tuple", False),
        ({"a": 3}, "float", False),
        ({"a": np.arange(3)}, "reversed", False),
        ({"a": "x"}, "dropped", False),
    ],
)
def test_made_checks_that_init_stores_each_parameter_as_given(setting, stored, held):
    from sklearn.base import BaseEstimator

    from knnx.experiment.parts import construct

    class Odd(BaseEstimator):
        def __init__(self, a=None):
            change = {
                "as_given": lambda v: v,
                "copy": lambda v: list(v),
                "tuple": tuple,
                "float": float,
                "reversed": lambda v: v[::-1],
                "dropped": lambda v: None,
            }[stored]
            self.a = change(a)

    if held:
        assert construct(Odd, setting).a is not None
    else:
        with pytest.raises(ValueError, match=r"^Odd\(a=.*\)\.get_params\(\) gives a=.*: __init__ must store"):
            construct(Odd, setting)


def test_an_estimator_left_at_random_state_none_gets_the_spec_seed(tmp_path):
    """The same spec and seed give the same results, in one process or in workers, for a
    scikit-learn estimator drawing from ``random_state``: left at None it gets the spec's
    seed, as if written ``random_state: SEED``."""

    def run(name, params, args=()):
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(
            "name: t\nseed: 7\ndatasets: [wine]\nprotocol: {kind: kfold, folds: 3}\n"
            f"algorithms: [{{id: rf, estimator: 'sklearn.ensemble:RandomForestClassifier', params: {params}}}]\n"
        )
        done = _knnx("run", spec, "--out", tmp_path / name, "--quiet", *args)
        assert done.returncode == 0, done.stderr
        frame = read_results(tmp_path / name / "results.csv")
        return frame[frame.metric == "error"].sort_values("fold")["value"].tolist(), frame.params.iloc[0]

    left, params = run("a", "{n_estimators: 5, max_features: 1}")
    assert '"random_state":null' in params  # what the spec said
    assert run("b", "{n_estimators: 5, max_features: 1}", ["--jobs", "2"])[0] == left
    written, _ = run("c", "{n_estimators: 5, max_features: 1, random_state: 7}")
    assert written == left
    assert run("d", "{n_estimators: 5, max_features: 1, random_state: 8}")[0] != left


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cell_that_changes_the_working_folder_changes_nothing_else(tmp_path, good_rows, jobs):
    """``os.chdir`` in a cell's fit, with a relative --out: the run wrote its results
    relative to the new folder (exit 3, no cell saved) under --jobs 1."""
    spec = _lab(tmp_path, "Chdir")
    done = subprocess.run(
        [sys.executable, "-m", "knnx.cli", "run", spec.name, "--out", "out", "--quiet", "--jobs", jobs],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    expected = [(d, "Chdir" if a == "Base" else a, *rest) for d, a, *rest in good_rows]
    assert [r for r in _rows(tmp_path / "out") if '"k":3' not in r[2]] == sorted(expected)
    assert len(_rows(tmp_path / "out")) == len(good_rows) + 3


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_finaliser_that_raises_is_a_warning_of_its_cell(tmp_path, good_rows, jobs):
    """A ``__del__`` calling sys.exit printed Python's "Exception ignored in" with a
    traceback on stderr: an error Python cannot raise (a finaliser's) while a cell runs
    is recorded as a warning of that cell in warnings.csv; the cell's rows stand."""
    spec = _lab(tmp_path, "DelExits")
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet", "--jobs", jobs)
    assert (done.returncode, done.stderr) == (0, "")
    expected = [(d, "DelExits" if a == "Base" else a, *rest) for d, a, *rest in good_rows]
    assert [r for r in _rows(out) if '"k":3' not in r[2]] == sorted(expected)
    warned = (out / "warnings.csv").read_text().splitlines()
    assert warned[0] == "dataset,algorithm,params,repeat,fold,category,message,count"
    assert sorted(warned[1:]) == [
        f'iris,DelExits,"{{""k"":3}}",0,{fold},SystemExit,'
        f"\"sys.exit('in del') called in DelExits.__del__, ignored\",1"
        for fold in range(3)
    ]


def test_a_finaliser_that_raises_outside_a_cell_is_one_line():
    """Outside a cell (a cycle collected later), the knnx command prints one line per
    distinct error, never Python's traceback."""
    code = textwrap.dedent(
        """
        import gc, sys
        from knnx.cli import main

        class Cycle:
            def __del__(self):
                raise ValueError("late")

        def later():
            a = Cycle(); a.me = a; b = Cycle(); b.me = b

        import knnx.cli as cli
        import typer
        cli.app = typer.Typer()

        @cli.app.command()
        def go():
            gc.disable()
            later()
            gc.collect()
            gc.collect()

        main([])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (
        0,
        "warning: ValueError: late in Cycle.__del__, ignored\n",
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cell_that_removes_the_working_folder_takes_nothing_down(tmp_path, good_rows, jobs):
    """A fit that removed the (empty) working folder ended the run with "error: No such
    file or directory", exit 3, most rows unsaved: the folder is made again and the cell
    that ran meanwhile (or, under --jobs 2, any cell then running) has a warning."""
    spec = _lab(tmp_path, "RmCwd")
    (tmp_path / "wd").mkdir()
    done = _knnx("run", spec, "--out", tmp_path / "out", "--quiet", "--jobs", jobs, cwd=tmp_path / "wd")
    assert (done.returncode, done.stderr) == (0, "")
    expected = [(d, "RmCwd" if a == "Base" else a, *rest) for d, a, *rest in good_rows]
    assert [r for r in _rows(tmp_path / "out") if '"k":3' not in r[2]] == sorted(expected)
    warned = (tmp_path / "out" / "warnings.csv").read_text()
    assert warned.count(f"the working folder {tmp_path / 'wd'} was removed while the cell ran") >= 3
    assert (tmp_path / "wd").is_dir()


def test_a_worker_enters_its_working_folder_again_once_another_removed_it(tmp_path, monkeypatch):
    """Under --jobs 2 one worker's cell removed the folder and made it again: the other
    worker's process stayed in the removed one, and each of its later cells failed on
    os.getcwd(). Before each cell the folder is entered again (made again if need be)."""
    from knnx.experiment import worker
    from knnx.experiment.context import PROCESS

    monkeypatch.setattr(PROCESS, "folder", None)
    wd = tmp_path / "wd"
    wd.mkdir()
    monkeypatch.chdir(wd)
    assert worker.working_folder() == str(wd)
    wd.rmdir()
    wd.mkdir()  # made again by the other worker: this process is still in the removed one
    with pytest.raises(FileNotFoundError):
        os.getcwd()
    assert worker.working_folder() == str(wd) and os.getcwd() == str(wd)
    wd.rmdir()  # removed and not made again yet
    assert worker.working_folder() == str(wd) and os.getcwd() == str(wd) and wd.is_dir()


def test_a_command_started_in_a_removed_folder_is_one_line(tmp_path):
    spec = _write_spec(tmp_path)
    (tmp_path / "gone").mkdir()
    done = subprocess.run(
        [
            "sh",
            "-c",
            f'cd "{tmp_path}/gone" && rmdir "{tmp_path}/gone" && exec "{sys.executable}" -m knnx.cli run '
            f'"{spec}" --out "{tmp_path}/out"',
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert (done.returncode, done.stderr) == (
        2,
        "error: the current folder no longer exists (it was removed); change to a folder and rerun\n",
    )
    assert not (tmp_path / "out").exists()


def test_code_drawing_from_the_global_generators_gives_the_same_results_whatever_the_jobs(tmp_path):
    """An estimator drawing from ``np.random`` and ``random`` (no random_state) gave other
    errors on every run and under --jobs 2: each cell seeds both from the spec's seed and
    the cell."""
    spec = _lab(tmp_path, "GlobalRng")
    runs = []
    for name, jobs in (("a", "1"), ("b", "1"), ("c", "2")):
        done = _knnx("run", spec, "--out", tmp_path / name, "--quiet", "--jobs", jobs)
        assert (done.returncode, done.stderr) == (0, "")
        runs.append(_rows(tmp_path / name))
    assert runs[0] == runs[1] == runs[2]
    errors = {r[6] for r in runs[0] if r[1] == "GlobalRng"}
    assert len(errors) > 1  # the draws are random within a run, not constant


def test_classes_that_are_texts_fail_the_cell_naming_them():
    """``classes_ = ['a0', 'a1']`` failed the cell with "invalid literal for int()"."""
    from knnx.evaluation.scoring import proba_on_codes

    odd = _Proba(np.array([[1.0, 0.0], [0.0, 1.0]]))
    odd.classes_ = np.array(["a0", "a1"])
    with pytest.raises(ValueError) as err:
        proba_on_codes(odd, np.zeros((2, 1)), 2)
    assert str(err.value) == "classes_ must be distinct class codes in 0..1, got ['a0', 'a1']"


def test_the_installed_packages_are_read_once_for_many_entries(tmp_path, monkeypatch):
    """Validating 100 ``estimator:`` entries took 26 s: each read every installed
    distribution's metadata again (packages_distributions, 0.3 s a time). Each folder
    of the path is read once (and again only when it changes), and the mapping is the one
    packages_distributions gives."""
    from importlib import metadata

    from knnx import plugins
    from knnx.spec import validate_spec

    calls = []
    real = plugins._folder_packages
    monkeypatch.setattr(plugins, "_PACKAGES", {})
    monkeypatch.setattr(plugins, "_folder_packages", lambda folder: calls.append(folder) or real(folder))
    entries = ", ".join(
        f"{{id: lr{i}, estimator: 'sklearn.linear_model:LogisticRegression', params: {{C: {i + 1}.0}}}}"
        for i in range(5)
    )
    vspec = validate_spec(_write_spec(tmp_path, algorithms=f"[{entries}]"))
    assert len(calls) == len(set(calls)) and len(vspec.cells) == 10
    found = plugins._packages()
    assert len(calls) == len(set(calls))
    expected = metadata.packages_distributions()
    assert {k: sorted(v) for k, v in found.items()} == {k: sorted(v) for k, v in expected.items()}
    import sklearn
    from sklearn.linear_model import LogisticRegression

    read = len(calls)
    assert plugins.object_version(LogisticRegression) == f"scikit-learn=={sklearn.__version__}"
    assert len(calls) == read  # the same path: nothing read again


def _report_sigint(queue):
    import signal

    queue.put(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)


def test_pool_workers_ignore_ctrl_c_from_their_start():
    """Ctrl-C reaches the whole process group: workers still importing printed
    KeyboardInterrupt tracebacks beside the run's one line. A worker ignores SIGINT from
    before Python starts in it; the run handles Ctrl-C, and its workers die with it."""
    import signal

    from knnx.experiment.executors import _QuietSpawn

    context = _QuietSpawn()
    queue = context.SimpleQueue()
    worker = context.Process(target=_report_sigint, args=(queue,))
    worker.start()
    assert queue.get() is True
    worker.join(60)
    assert worker.exitcode == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # ours is untouched


def test_ctrl_c_under_jobs_2_prints_one_line_and_leaks_no_semaphore(tmp_path):
    """Ctrl-C under ``--jobs 2`` ended with the run's line, then multiprocessing's
    resource tracker warned of "5 leaked semaphore objects" (the pool's, which the exit
    that does not wait for the pool's threads skipped)."""
    import signal

    spec = _lab(tmp_path, "Sleeps")
    args = ["run", spec, "--out", tmp_path / "out", "--quiet", "--jobs", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "knnx.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Ctrl-C once a worker has finished a sleeping cell: the pool is up (on a loaded
    # machine its workers may take seconds to start), and four such cells are left.
    results = tmp_path / "out" / "results.csv"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and "Sleeps" in results.read_text()):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err == "interrupted: finished cells are saved; rerun the same command to resume\n"


@pytest.mark.parametrize(("cls", "args"), [("Exits", ["--jobs", "1"])])
def test_a_new_interpreter_says_what_the_forked_command_line_says(tmp_path, cls, args):
    """The other tests run the command line in a fork of the test process (imports
    shared); ``python -m knnx.cli`` in a process of its own gives the same exit code, the
    same stderr line and the same files for the contract of failed cells (exit 1, one
    line): cells whose code ends its process."""
    spec = _lab(tmp_path, cls)
    outcomes = []
    for name, runner in (("real", _real_knnx), ("forked", _knnx)):
        done = runner("run", spec, "--out", tmp_path / name, "--quiet", "--no-figures", "--no-report", *args)
        stderr = done.stderr.replace(str(tmp_path / name), "OUT")
        outcomes.append((done.returncode, done.stdout, stderr, _rows(tmp_path / name)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == 1 and outcomes[0][2].startswith("error: 3 of 9 cells failed")
