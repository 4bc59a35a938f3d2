"""Reruns that explain themselves: a cell's key covers the user code its estimator and
loader import (transitively, within their folder), as Python compiles it; an analysis
script beside the spec or an edit of comments reruns nothing; an edited imported
module reruns its cells, and the run says why in one line per reason."""

import sys
import textwrap

import pytest

from knnx.experiment import reasons
from knnx.experiment.runner import run_spec

METHOD = textwrap.dedent(
    """\
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin

    from {pkg} import helper


    class Majority(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[helper.CLASS])
    """
)


def _loader(pkg):
    return textwrap.dedent(
        f"""\
        import numpy as np
        from {pkg} import helper


        def load(n=60, seed=0):
            rng = np.random.default_rng(seed)
            X = rng.normal(size=(n, 2))
            return X, (X[:, 0] > helper.SHIFT).astype(int)
        """
    )


@pytest.fixture
def lab(tmp_path, request):
    """A package of one's own beside the spec: methods.py and data.py import helper.py."""
    pkg = f"lab_{request.node.name[-20:].replace('[', '_').replace(']', '_').replace('-', '_')}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "helper.py").write_text("CLASS = 0\nSHIFT = 0.0\n")
    (tmp_path / pkg / "methods.py").write_text(METHOD.format(pkg=pkg))
    (tmp_path / pkg / "data.py").write_text(_loader(pkg))
    spec = {
        "name": "reasons",
        "seed": 0,
        "python_path": [str(tmp_path)],
        "datasets": ["iris", {"loader": f"{pkg}.data:load", "id": "mine"}],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"estimator": f"{pkg}.methods:Majority", "id": "majority"}, {"name": "knn"}],
    }
    yield tmp_path, pkg, spec
    for name in [m for m in sys.modules if m == pkg or m.startswith(pkg + ".")]:
        del sys.modules[name]


def test_an_unrelated_script_or_a_comment_reruns_nothing(lab):
    folder, pkg, spec = lab
    first = run_spec(spec, out=folder / "out", figures=False)
    assert first.n_run == 8 and first.reruns == ()
    (folder / "spotcheck.py").write_text("import pandas\nprint('an analysis nothing imports')\n")
    (folder / pkg / "spotcheck.py").write_text("X = 1\n")
    (folder / pkg / "helper.py").write_text("# the class predicted\nCLASS  =  0\nSHIFT = 0.0  # the cut\n")
    again = run_spec(spec, out=folder / "out", figures=False)
    assert (again.n_run, again.n_skipped, again.reruns) == (0, 8, ())


def test_an_edited_imported_module_reruns_its_cells_and_says_why(lab):
    folder, pkg, spec = lab
    run_spec(spec, out=folder / "out", figures=False)
    (folder / pkg / "helper.py").write_text("CLASS = 1\nSHIFT = 0.0\n")
    again = run_spec(spec, out=folder / "out", figures=False)
    # every majority cell (its module imports helper) and every cell on the loader's data
    # (the loader imports helper too); knn on iris alone is kept
    assert (again.n_run, again.n_skipped) == (6, 2)
    said = (
        f"2 cells run again: {pkg}/helper.py changed",  # majority on iris
        f"2 cells run again: the loader's {pkg}/helper.py changed",  # knn on mine
        f"2 cells run again: {pkg}/helper.py changed; the loader's {pkg}/helper.py changed",
    )
    assert sorted(again.reruns) == sorted(said)
    # knnx run prints them after its summary line
    import yaml
    from typer.testing import CliRunner

    from knnx.cli import app

    (folder / pkg / "helper.py").write_text("CLASS = 0\nSHIFT = 0.0\n")  # back: run 2 had CLASS = 1
    (folder / "s.yaml").write_text(yaml.safe_dump(spec))
    done = CliRunner().invoke(
        app, ["run", str(folder / "s.yaml"), "--out", str(folder / "out"), "--no-report"]
    )
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("6 cells run, 2 already done"))
    assert sorted(lines[at + 1 : at + 4]) == sorted(said)


def test_the_reasons_name_knnx_the_data_and_the_settings():
    old = {
        "code": {"knnx": "1", "code": "a", "libraries": {"numpy": "2.0"}},
        "algorithms": {"m": {"version": "sha256:1", "files": {"lab/m.py": "x"}}},
        "datasets": {"d": {"data": "c1", "files": {}}},
    }
    same = reasons.cell_reason(old, old, "m", "d")
    assert same.startswith("its settings in the spec changed")
    knnx = {**old, "code": {**old["code"], "code": "b"}}
    assert reasons.cell_reason(old, knnx, "m", "d") == "knnx's code changed"
    libraries = {**old, "code": {**old["code"], "libraries": {"numpy": "2.1"}}}
    assert reasons.cell_reason(old, libraries, "m", "d") == "the numeric libraries changed (numpy)"
    data = {**old, "datasets": {"d": {"data": "c2", "files": {}}}}
    assert reasons.cell_reason(old, data, "m", "d") == "the data of d changed"
    files = {
        **old,
        "algorithms": {"m": {"version": "sha256:2", "files": {"lab/m.py": "y", "lab/new.py": "z"}}},
    }
    assert reasons.cell_reason(old, files, "m", "d") == "lab/m.py, lab/new.py changed"
    assert reasons.cell_reason(None, old, "m", "d").startswith("no record of the earlier run's code")
    cells = [("d", "m", "{}", 0, f) for f in range(3)] + [("e", "m", "{}", 0, 0)]
    new = {**files, "datasets": {**files["datasets"], "e": {"data": "c3", "files": {}}}}
    old_e = {**old, "datasets": {**old["datasets"], "e": {"data": "c4", "files": {}}}}
    assert reasons.rerun_reasons(cells, old_e, new) == [
        "3 cells run again: lab/m.py, lab/new.py changed",
        "1 cell run again: lab/m.py, lab/new.py changed; the data of e changed",
    ]
