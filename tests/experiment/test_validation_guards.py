"""Validation asks an estimator class from outside knnx what it needs (an instance made
with its defaults, their ``get_params``, their scikit-learn tags, its hooks and
constraint tables) once, each call guarded: a call that raises or exits (``sys.exit``,
``os._exit``) is a one-line refusal naming the entry and the method, exit 2, nothing
written. A loader Dataset's ``classes`` follow the label rule of ``y``: two spellings of
one number are refused, naming both.

The os._exit cases run the command line in a process of its own, as a user would."""

import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _harness import forked_knnx
from conftest import fresh_package
from pandas import read_csv
from typer.testing import CliRunner

from knnx.cli import app
from knnx.datasets import Dataset
from knnx.datasets.checks import as_dataset
from knnx.errors import DataError

LAB = """\
import os
import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

CALLS = {}


def misbehave(key, kind, nth):
    \"\"\"Count a call of ``key``; from the ``nth`` call on, fail as ``kind`` says.\"\"\"
    CALLS[key] = CALLS.get(key, 0) + 1
    if CALLS[key] < nth:
        return
    if kind == "OsExit":
        os._exit(0)
    if kind == "SysExit":
        sys.exit(5)
    raise ValueError(f"{key} broken")


class Base(ClassifierMixin, BaseEstimator):
    def __init__(self, a=0):
        self.a = a

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def _make(method, kind, nth):
    name = f"{method}{kind}{nth}"
    if method == "Init":

        def __init__(self, a=0):
            misbehave(name, kind, nth)
            self.a = a

        return type(name, (Base,), {"__init__": __init__})
    if method == "GetParams":

        def get_params(self, deep=True):
            misbehave(name, kind, nth)
            return Base.get_params(self, deep)

        return type(name, (Base,), {"get_params": get_params})

    def __sklearn_tags__(self):
        misbehave(name, kind, nth)
        return Base.__sklearn_tags__(self)

    return type(name, (Base,), {"__sklearn_tags__": __sklearn_tags__})


for _method in ("Init", "GetParams", "Tags"):
    for _kind in ("OsExit", "SysExit", "Value"):
        for _nth in (1, 2, 3):
            _cls = _make(_method, _kind, _nth)
            globals()[_cls.__name__] = _cls


class Counted(Base):
    \"\"\"Counts what validation asks of it.\"\"\"

    def __init__(self, a=0, b="x"):
        CALLS["init"] = CALLS.get("init", 0) + 1
        self.a = a
        self.b = b

    def get_params(self, deep=True):
        CALLS["get_params"] = CALLS.get("get_params", 0) + 1
        return Base.get_params(self, deep)

    def __sklearn_tags__(self):
        CALLS["tags"] = CALLS.get("tags", 0) + 1
        return Base.__sklearn_tags__(self)


class ExitsInStr(Exception):
    def __str__(self):
        os._exit(9)


class UnprintableExit(Base):
    def get_params(self, deep=True):
        raise ExitsInStr()


class SettingHookExits(Base):
    @classmethod
    def _setting_problems(cls, setting):
        os._exit(0)


class DataHookExits(Base):
    @classmethod
    def _data_problems(cls, setting, n_train, n_features, n_classes):
        sys.exit(4)


class ExitingCheck:
    def check(self, value):
        os._exit(0)


class ConstraintExits(Base):
    _parameter_constraints = {"a": ExitingCheck()}


class HintsExit(Base):
    class _Hints(dict):
        def __iter__(self):
            os._exit(0)

        def keys(self):
            os._exit(0)

    _parameter_hints = _Hints(c="a hint")


class HintsGetExits(Base):
    class _Hints(dict):
        def get(self, key, default=None):
            os._exit(0)

    _parameter_hints = _Hints(c="a hint")


class CountsExit(type(Base)):
    \"\"\"A metaclass whose class attribute _neighbor_counts exits from its nth reading on.\"\"\"

    nth = 1

    def __getattr__(cls, name):
        if name == "_neighbor_counts":
            misbehave(cls.__name__, "OsExit", cls.nth)
            return ("a",)
        raise AttributeError(name)


class NeighborCountsExit(Base, metaclass=CountsExit):
    pass


class NeighborCountsExit2(Base, metaclass=type("CountsExit2", (CountsExit,), {"nth": 2})):
    pass


class ModuleNumber(Base):
    pass


ModuleNumber.__module__ = 42


class NoTags:
    \"\"\"A duck-typed classifier without scikit-learn's tags: judged by its fit.\"\"\"

    def __init__(self, a=0):
        self.a = a

    def get_params(self, deep=True):
        return {"a": self.a}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])
"""

CONVENTION = {
    "GetParams": "scikit-learn's convention: __init__ stores each parameter, unchanged, as an attribute of the "
    "same name",
    "Tags": "scikit-learn's convention: __sklearn_tags__ returns the Tags of super().__sklearn_tags__(), "
    "changed where the class differs",
}
CAUSE = {
    "OsExit": "ProcessExit: os._exit(0) called",
    "SysExit": "SystemExit: sys.exit(5) called",
}


@pytest.fixture(autouse=True)
def _fresh_lab(monkeypatch):
    """Each test writes its own ``lab`` package beside its spec (another file writes a
    ``lab`` module): forget the last one."""
    yield from fresh_package(monkeypatch, "lab")


def _lab(tmp_path):
    (tmp_path / "lab").mkdir(exist_ok=True)
    (tmp_path / "lab" / "__init__.py").write_text("")
    (tmp_path / "lab" / "est.py").write_text(LAB)


def _spec(tmp_path, algorithms, metrics=""):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\ndatasets: [iris]\nprotocol: {{kind: holdout}}\n{metrics}algorithms: {algorithms}\n"
    )
    return spec


def _knnx(*args):
    """``knnx ARGS`` in a fork of this process (see tests/_harness.py); one test runs a
    new interpreter, and the two agree."""
    return forked_knnx(*args)


def _real_knnx(*args):
    return subprocess.run(
        [sys.executable, "-m", "knnx.cli", *map(str, args)], capture_output=True, text=True, timeout=240
    )


def _expected(cls):
    method, kind = next((m, cls[len(m) :]) for m in ("Init", "GetParams", "Tags") if cls.startswith(m))
    cause = CAUSE.get(kind[:-1], f"ValueError: {cls} broken")
    if method == "Init":
        return f"cannot be made with its defaults ({cause}); every parameter needs a default"
    called = "get_params()" if method == "GetParams" else "__sklearn_tags__()"
    return f"{called} fails ({cause}); {CONVENTION[method]}"


def _refused_in_a_process(tmp_path, spec, line):
    """``knnx validate`` and ``knnx run`` in processes of their own: exit 2, the one line
    ``error: SPEC: line`` on stderr, nothing on stdout, no output folder."""
    out = tmp_path / "out"
    for args in (["validate", spec], ["run", spec, "--out", out, "--quiet"]):
        done = _knnx(*args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {spec}: {line}\n")
    assert not out.exists()


FIRST_CALL = [f"{m}{k}1" for m in ("Init", "GetParams", "Tags") for k in ("OsExit", "SysExit", "Value")]


@pytest.mark.parametrize("cls", FIRST_CALL)
def test_a_class_that_fails_when_first_asked_is_refused_in_one_line(tmp_path, cls):
    _lab(tmp_path)
    spec = _spec(tmp_path, f'[{{estimator: "lab.est:{cls}"}}]')
    _refused_in_a_process(tmp_path, spec, f"algorithms[0].estimator: 'lab.est:{cls}' {_expected(cls)}")


def test_the_refusal_wording_of_each_method(tmp_path):
    """The lines of the parametrized test, written out once for a reader."""
    assert _expected("GetParamsOsExit1") == (
        "get_params() fails (ProcessExit: os._exit(0) called); scikit-learn's convention: __init__ stores each "
        "parameter, unchanged, as an attribute of the same name"
    )
    assert _expected("InitSysExit1") == (
        "cannot be made with its defaults (SystemExit: sys.exit(5) called); every parameter needs a default"
    )
    assert _expected("TagsValue1") == (
        "__sklearn_tags__() fails (ValueError: TagsValue1 broken); scikit-learn's convention: __sklearn_tags__ "
        "returns the Tags of super().__sklearn_tags__(), changed where the class differs"
    )


def test_validation_asks_the_class_once_whatever_the_grid(tmp_path, monkeypatch):
    """One instance made with the defaults, one get_params, one reading of its tags:
    the values listed, params_for and the datasets do not ask again."""
    from knnx.spec import validate_spec

    _lab(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: t\ndatasets: [iris, wine]\nprotocol: {kind: kfold, folds: 2}\n"
        "algorithms: [{estimator: 'lab.est:Counted', params: {a: [0, 1, 2], b: [x, y]}, "
        "params_for: {wine: {a: 5}}}]\n"
    )
    from lab import est

    est.CALLS.clear()
    vspec = validate_spec(spec)
    assert est.CALLS == {"init": 1, "get_params": 1, "tags": 1}
    assert len(vspec.cells) == 2 * 6 + 2 * 2
    assert vspec.algorithms[0].defaults() == {"a": 0, "b": "x"}
    assert est.CALLS == {"init": 1, "get_params": 1, "tags": 1}


LATER_CALL = [
    f"{m}{k}{n}"
    for m in ("Init", "GetParams", "Tags")
    for k in ("OsExit", "SysExit", "Value")
    for n in (2, 3)
]


@pytest.mark.parametrize("cls", LATER_CALL)
def test_a_class_that_fails_when_asked_again_is_not_asked_again_by_validation(tmp_path, cls):
    """What succeeds when validation asks it once passes validation (validation, and the
    run writing its spec with the defaults validation read, never ask again). A cell
    makes its own instance and reads its parameters back (twice): a failure there,
    os._exit included, is that cell's, listed in failures.csv, exit 1; the tags are not
    read again."""
    _lab(tmp_path)
    spec = _spec(tmp_path, f'[{{estimator: "lab.est:{cls}"}}]')
    done = _knnx("validate", spec)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{spec}: ok, 1 cells over 1 dataset(s)\n", "")
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet", "--jobs", "1", "--no-figures", "--no-report")
    assert "  params:\n    a: 0\n" in (out / "spec.yaml").read_text()
    fails_in_the_cell = cls.startswith("GetParams") or cls.startswith("Init") and cls.endswith("2")
    if not fails_in_the_cell:
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert not (out / "failures.csv").exists()
        return
    kind = cls[len("Init") :] if cls.startswith("Init") else cls[len("GetParams") :]
    cause = CAUSE.get(kind[:-1], f"ValueError: {cls} broken")
    error = f'cell iris {cls} {{"a":0}} repeat 0 fold 0 failed: {cause}'
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: 1 of 1 cells failed and were not saved (listed in {out}/failures.csv; a rerun retries them); "
        f"first: {error}\n"
    )
    assert read_csv(out / "failures.csv")["error"].tolist() == [error]


@pytest.mark.parametrize(
    ("cls", "metrics", "line"),
    [
        (
            "UnprintableExit",
            "",
            "algorithms[0].estimator: 'lab.est:UnprintableExit' get_params() fails (ExitsInStr: (its message "
            f"cannot be printed)); {CONVENTION['GetParams']}",
        ),
        (
            "SettingHookExits",
            "",
            "algorithms[0]: _setting_problems() fails (ProcessExit: os._exit(0) called)",
        ),
        (
            "DataHookExits",
            "",
            "datasets[0]: algorithms[0] on 'iris' (105 training rows): _data_problems() fails (SystemExit: "
            "sys.exit(4) called)",
        ),
        (
            "ModuleNumber",
            "",
            "algorithms[0].estimator: 'lab.est:ModuleNumber' has a __module__ of type int, not the name of the "
            "module defining it",
        ),
        (
            "ConstraintExits",
            "",
            "algorithms[0].params.a: _parameter_constraints['a'].check() fails (ProcessExit: os._exit(0) called)",
        ),
    ],
)
def test_each_call_into_the_class_is_guarded(tmp_path, cls, metrics, line):
    _lab(tmp_path)
    spec = _spec(tmp_path, f'[{{estimator: "lab.est:{cls}", params: {{a: 1}}}}]', metrics)
    _refused_in_a_process(tmp_path, spec, line)


def test_a_parameter_hint_table_that_exits_is_refused_in_one_line(tmp_path):
    _lab(tmp_path)
    spec = _spec(tmp_path, '[{estimator: "lab.est:HintsExit", params: {c: 1}}]')
    _refused_in_a_process(
        tmp_path,
        spec,
        "algorithms[0].estimator: 'lab.est:HintsExit' reading _parameter_hints fails (ProcessExit: os._exit(0) "
        "called)",
    )


def test_the_tables_read_are_copies_the_class_code_does_not_run_on(tmp_path):
    """A hint table whose ``get`` exits: knnx reads a plain copy of it."""
    _lab(tmp_path)
    spec = _spec(tmp_path, '[{estimator: "lab.est:HintsGetExits", params: {c: 1}}]')
    _refused_in_a_process(
        tmp_path, spec, "algorithms[0].params.c: unknown parameter for HintsGetExits; known: a (a hint)"
    )


def test_a_class_attribute_that_exits_is_refused_in_one_line(tmp_path):
    _lab(tmp_path)
    spec = _spec(tmp_path, '[{estimator: "lab.est:NeighborCountsExit"}]')
    _refused_in_a_process(
        tmp_path,
        spec,
        "algorithms[0].estimator: 'lab.est:NeighborCountsExit' reading _neighbor_counts fails (ProcessExit: "
        "os._exit(0) called)",
    )


def test_a_class_attribute_read_again_at_run_time_does_not_end_the_run(tmp_path):
    """The run reads _neighbor_counts again (the width of the shared neighbour graphs):
    a class whose code exits there asks no neighbours, and the run gives its results."""
    _lab(tmp_path)
    spec = _spec(tmp_path, '[{estimator: "lab.est:NeighborCountsExit2", params: {a: 3}}]')
    out = tmp_path / "out"
    done = _knnx("run", spec, "--out", out, "--quiet", "--jobs", "1", "--no-figures", "--no-report")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    rows = read_csv(out / "results.csv")
    # the first class for every row of a stratified holdout of iris: 30 of its 45 test rows wrong
    assert rows[["params", "metric", "value"]].values.tolist() == [['{"a":3}', "error", 30 / 45]]


def test_a_class_without_tags_is_still_judged_by_its_fit(tmp_path):
    _lab(tmp_path)
    spec = _spec(tmp_path, '[{estimator: "lab.est:NoTags"}]')
    done = _knnx("validate", spec)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{spec}: ok, 1 cells over 1 dataset(s)\n", "")


def test_register_algorithm_refuses_a_class_that_exits(tmp_path, monkeypatch):
    from knnx.estimators.registry import ALGORITHMS, register_algorithm

    _lab(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    from lab import est

    with pytest.raises(ValueError) as err:
        register_algorithm("gp_exit", est.GetParamsOsExit1)
    assert str(err.value) == (
        "register_algorithm('gp_exit', GetParamsOsExit1): get_params() fails (ProcessExit: os._exit(0) called); "
        f"{CONVENTION['GetParams']}"
    )
    assert "gp_exit" not in ALGORITHMS


# --- a loader's result is the loader's code too -------------------------------------------

RESULTS = """\
import os
import sys

import numpy as np

from knnx.datasets import Dataset

X = np.arange(40, dtype=float).reshape(20, 2)
Y = np.arange(20) % 2


class ExitsInStr:
    def __str__(self):
        os._exit(0)

    __repr__ = __str__


class ExitsInArray:
    def __array__(self, dtype=None, copy=None):
        sys.exit(6)


def class_name_exits():
    return Dataset("d", X, Y, np.array([ExitsInStr(), "b"], dtype=object), ("f0", "f1"))


def label_exits():
    return X, np.array([ExitsInStr(), "b"] * 10, dtype=object)


def array_exits():
    return Dataset("d", ExitsInArray(), Y, np.array(["a", "b"], dtype=object), ("f0", "f1"))


def names_exit():
    def names():
        yield "f0"
        sys.exit(7)

    return Dataset("d", X, Y, np.array(["a", "b"], dtype=object), names())


def names_raise():
    def names():
        yield "f0"
        raise KeyError("f1")

    return Dataset("d", X, Y, np.array(["a", "b"], dtype=object), names())
"""


@pytest.mark.parametrize(
    ("loader", "cause"),
    [
        ("class_name_exits", "ProcessExit: os._exit(0) called"),
        ("label_exits", "ProcessExit: os._exit(0) called"),
        ("array_exits", "SystemExit: sys.exit(6) called"),
        ("names_exit", "SystemExit: sys.exit(7) called"),
        ("names_raise", "KeyError: 'f1'"),
    ],
)
def test_a_loader_result_whose_code_fails_when_read_is_refused_in_one_line(tmp_path, loader, cause):
    (tmp_path / "mylab").mkdir()
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "results.py").write_text(RESULTS)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\ndatasets: [{{loader: 'mylab.results:{loader}'}}]\nprotocol: {{kind: kfold, folds: 2}}\n"
        "algorithms: [{name: knn}]\n"
    )
    _refused_in_a_process(
        tmp_path,
        spec,
        f"datasets[0]: loader mylab.results:{loader}: reading the loader's result failed: {cause}",
    )


# --- B: a loader Dataset's classes, two spellings of one number -----------------------------

DATA = """\
import numpy as np

from knnx.datasets import Dataset

CLASSES = {
    "int_float_text": [1, "1.0"],
    "zero_padded": ["1", "01"],
    "space": ["1", " 1"],
    "int_float": [1, 1.0],
    "plus": ["+1", "1"],
    "exponent": ["b", "1e3", "1000"],
    "words": ["a", "b"],
    "numbers": [1, 2],
}


def load(which):
    classes = CLASSES[which]
    y = np.arange(20) % len(classes)
    X = np.arange(40, dtype=float).reshape(20, 2)
    return Dataset("d", X, y, np.array(classes, dtype=object), ("f0", "f1"))
"""

runner = CliRunner()


def _loader_spec(tmp_path, which):
    (tmp_path / "mylab").mkdir(exist_ok=True)
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "data.py").write_text(DATA)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        textwrap.dedent(f"""\
        name: t
        datasets: [{{loader: 'mylab.data:load', params: {{which: {which}}}}}]
        protocol: {{kind: kfold, folds: 2}}
        algorithms: [{{name: knn}}]
        """)
    )
    return spec


SPELLINGS = [
    ("int_float_text", "classes[0] ('1') and classes[1] ('1.0')"),
    ("zero_padded", "classes[0] ('1') and classes[1] ('01')"),
    ("space", "classes[0] ('1') and classes[1] (' 1')"),
    ("int_float", "classes[0] ('1') and classes[1] ('1.0')"),
    ("plus", "classes[0] ('+1') and classes[1] ('1')"),
    ("exponent", "classes[1] ('1e3') and classes[2] ('1000')"),
]


@pytest.mark.parametrize(("which", "named"), SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_a_loader_datasets_classes_may_not_spell_one_number_twice(tmp_path, which, named):
    spec = _loader_spec(tmp_path, which)
    before = sorted(p.name for p in tmp_path.rglob("*") if "__pycache__" not in p.parts)
    for args in (["validate", str(spec)], ["run", str(spec), "--quiet", "--out", str(tmp_path / "out")]):
        result = runner.invoke(app, args)
        assert (result.exit_code, result.output) == (
            2,
            f"error: {spec}: datasets[0]: loader mylab.data:load: {named} are the same number written two "
            "ways; write each class one way (or give the classes names that are not numbers)\n",
        )
    assert sorted(p.name for p in tmp_path.rglob("*") if "__pycache__" not in p.parts) == before


@pytest.mark.parametrize("which", ["words", "numbers"])
def test_a_loader_datasets_distinct_classes_pass(tmp_path, which):
    spec = _loader_spec(tmp_path, which)
    result = runner.invoke(app, ["validate", str(spec)])
    assert (result.exit_code, result.output) == (0, f"{spec}: ok, 2 cells over 1 dataset(s)\n")


def test_the_rule_is_the_one_of_y(tmp_path):
    """The same two spellings in a loader's y and in a Dataset's classes: both refused."""
    X = np.zeros((4, 1))
    with pytest.raises(DataError) as err:
        as_dataset((X, np.array([1, "1.0", 1, "1.0"], dtype=object)), "d", "here")
    assert str(err.value) == (
        "here: class labels '1' and '1.0' are the same number written two ways; write each class one way (or "
        "give the classes names that are not numbers)"
    )
    ds = Dataset("d", X, np.array([0, 1, 0, 1]), np.array([1, "1.0"], dtype=object), ("f",))
    with pytest.raises(DataError) as err:
        as_dataset(ds, "d", "here")
    assert str(err.value) == (
        "here: classes[0] ('1') and classes[1] ('1.0') are the same number written two ways; write each class one "
        "way (or give the classes names that are not numbers)"
    )


@pytest.mark.parametrize("cls", ["InitOsExit2", "TagsSysExit2"])
def test_a_new_interpreter_says_what_the_forked_command_line_says(tmp_path, cls):
    """The exit code and streams of ``python -m knnx.cli`` in a process of its own are
    those of the forked command line the other tests use: validate refuses in one line
    (exit 2), or run records the failed cell (exit 1)."""
    _lab(tmp_path)
    spec = _spec(tmp_path, f'[{{estimator: "lab.est:{cls}"}}]')
    for args in (
        ("validate", spec),
        ("run", spec, "--out", tmp_path / "out", "--quiet", "--jobs", "1", "--no-figures", "--no-report"),
    ):
        real = _real_knnx(*args)
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        forked = _knnx(*args)
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            real.returncode,
            real.stdout,
            real.stderr,
        )
        assert real.returncode in (0, 1, 2)
