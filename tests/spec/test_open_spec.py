"""The open experiment language: any classifier by import path, ids and aliases,
plugins by entry point or registration."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import refused_by_cli
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import SpecError
from knnx.experiment.runner import run_spec
from knnx.results import read_results
from knnx.spec import validate_spec

runner = CliRunner()

BASE = {"name": "o", "seed": 3, "protocol": {"kind": "kfold", "folds": 3}}


@pytest.fixture(autouse=True)
def _fresh_mylab(monkeypatch):
    """Each test writes its own ``mylab`` package beside its spec: forget the last one
    (a module imported once stays in sys.modules) and the folders knnx put on sys.path."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m == "mylab" or m.startswith("mylab.")]:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [m for m in sys.modules if m == "mylab" or m.startswith("mylab.")]:
        del sys.modules[name]


def _refused(tmp_path, text, message):
    """``knnx validate`` and ``knnx run`` on the YAML ``text``: exit 2, the one line
    ``error: SPEC: message``, nothing written."""
    spec = tmp_path / "s.yaml"
    spec.write_text(textwrap.dedent(text))
    refused_by_cli(tmp_path, spec, message)


def _direct_errors(vspec, d, make):
    """Test error of ``make()`` fitted by hand on every split of dataset ``d``."""
    ds = vspec.datasets[d]
    out = []
    for s in vspec.splits[d]:
        clf = make().fit(ds.X[s.train], ds.y[s.train])
        out.append(float(np.mean(clf.predict(ds.X[s.test]) != ds.y[s.test])))
    return out


# --- any scikit-learn classifier by import path ------------------------------------------


def test_scikit_learn_classifiers_by_import_path_equal_direct_calls(tmp_path):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.svm import SVC

    spec = {
        **BASE,
        "datasets": ["iris", "wine"],
        "algorithms": [
            {
                "id": "rf",
                "estimator": "sklearn.ensemble:RandomForestClassifier",
                "params": {"n_estimators": [5, 20], "random_state": 0},
            },
            {"estimator": "sklearn.svm:SVC", "params": {"C": [1.0, 10.0]}},
            {"name": "knn", "params": {"k": [1, 5]}},
        ],
    }
    run_spec(spec, out=tmp_path, figures=False)
    frame = read_results(tmp_path / "results.csv")
    vspec = validate_spec(spec)
    assert sorted(frame["algorithm"].unique()) == ["SVC", "knn", "rf"]
    for d, name in enumerate(["iris", "wine"]):
        for n in (5, 20):
            rows = frame[(frame.dataset == name) & (frame.algorithm == "rf")]
            rows = rows[rows.params.str.contains(f'"n_estimators":{n},')].sort_values("fold")
            expected = _direct_errors(
                vspec, d, lambda n=n: RandomForestClassifier(n_estimators=n, random_state=0)
            )
            assert rows["value"].tolist() == expected
        for C in (1.0, 10.0):
            rows = frame[(frame.dataset == name) & (frame.algorithm == "SVC")]
            rows = rows[rows.params.str.contains(f'"C":{C},')].sort_values("fold")
            assert rows["value"].tolist() == _direct_errors(vspec, d, lambda C=C: SVC(C=C))
    # every JSON-writable default of the class is in params
    params = frame[frame.algorithm == "rf"]["params"].iloc[0]
    assert '"criterion":"gini"' in params and '"max_features":"sqrt"' in params


def test_an_upgrade_of_the_estimator_package_reruns_its_cells(tmp_path, monkeypatch):
    from knnx import plugins
    from knnx.experiment.cells import kind_of
    from knnx.experiment.provenance import cell_keys

    def keys(spec):
        vspec = validate_spec(spec)
        return cell_keys(vspec, kind_of(vspec))

    spec = {
        **BASE,
        "datasets": ["iris"],
        "algorithms": [
            {"estimator": "sklearn.tree:DecisionTreeClassifier", "params": {"random_state": 0}},
            {"name": "knn"},
        ],
    }
    before = keys(spec)
    real = plugins.metadata.version
    monkeypatch.setattr(plugins.metadata, "version", lambda d: "99.0" if d == "scikit-learn" else real(d))
    after = keys(spec)
    changed = {key[1] for key in before if before[key] != after[key]}
    assert changed == {"DecisionTreeClassifier"}


MODULE = """\
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class NearestMean(ClassifierMixin, BaseEstimator):
    \"\"\"Nearest class mean, shrunk towards the overall mean by ``shrink``.\"\"\"

    def __init__(self, shrink=0.0):
        self.shrink = shrink

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        centre = X.mean(axis=0)
        self.means_ = np.array([(1 - self.shrink) * X[y == c].mean(axis=0) + self.shrink * centre
                                for c in self.classes_])
        return self

    def predict(self, X):
        d = ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
        return self.classes_[d.argmin(axis=1)]


def not_a_class():
    return 1
"""


def _write_lab(tmp_path, body=MODULE):
    (tmp_path / "mylab").mkdir(exist_ok=True)
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "methods.py").write_text(body)


LAB_SPEC = """\
name: lab
seed: 1
datasets: [iris, wine]
protocol: {kind: kfold, folds: 3}
algorithms:
  - {id: mean, estimator: "mylab.methods:NearestMean", params: {shrink: [0.0, 0.5]}}
  - {name: cpw, params: {max_epochs: 3}}
  - {name: knn, params: {k: 3}}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_class_in_a_package_beside_the_spec_runs_in_workers_too(tmp_path, jobs):
    _write_lab(tmp_path)
    spec = tmp_path / "lab.yaml"
    spec.write_text(LAB_SPEC)
    out = tmp_path / f"out{jobs}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "knnx.cli",
            "run",
            str(spec),
            "--out",
            str(out),
            "--jobs",
            str(jobs),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    frame = read_results(out / "results.csv")
    assert sorted(frame["algorithm"].unique()) == ["cpw", "knn", "mean"]
    sys.path.insert(0, str(tmp_path))
    try:
        from mylab.methods import NearestMean

        vspec = validate_spec(spec)
        for d, name in enumerate(["iris", "wine"]):
            rows = frame[(frame.dataset == name) & (frame.algorithm == "mean")]
            rows = rows[rows.params == '{"shrink":0.5}'].sort_values("fold")
            assert rows["value"].tolist() == _direct_errors(vspec, d, lambda: NearestMean(shrink=0.5))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "mylab" or m.startswith("mylab.")]:
            del sys.modules[name]


def test_editing_a_module_beside_the_spec_reruns_its_cells_only(tmp_path):
    _write_lab(tmp_path)
    spec = tmp_path / "lab.yaml"
    spec.write_text(LAB_SPEC)
    cmd = [sys.executable, "-m", "knnx.cli", "run", str(spec), "--out", str(tmp_path / "o"), "--quiet"]
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    _write_lab(tmp_path, MODULE + "\n# a comment: what Python compiles is unchanged\n")
    done = subprocess.run(cmd[:-1], capture_output=True, text=True)
    assert done.returncode == 0 and "0 cells run, 24 already done" in done.stdout, done.stderr
    _write_lab(tmp_path, MODULE + "\nEDITED = True\n")
    done = subprocess.run(cmd[:-1], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "12 cells run, 12 already done" in done.stdout  # mean: 2 settings x 2 datasets x 3 folds
    assert "12 cells run again: mylab/methods.py changed" in done.stdout.splitlines()


def test_aliases_of_weighted_metric_equal_the_scheme_they_fix(tmp_path):
    spec = {
        **BASE,
        "datasets": ["wine"],
        "algorithms": [
            {"name": "pw", "params": {"max_epochs": 4}},
            {"name": "weighted_metric", "params": {"scheme": "pw", "max_epochs": 4}},
        ],
    }
    run_spec(spec, out=tmp_path, figures=False)
    frame = read_results(tmp_path / "results.csv")
    by = {a: g.sort_values("fold")["value"].tolist() for a, g in frame.groupby("algorithm")}
    assert by["pw"] == by["weighted_metric"]
    assert frame[frame.algorithm == "pw"]["params"].str.contains('"scheme":"pw"').all()


# --- one line for each bad input --------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            '{estimator: "nosuchpkg.mod:X"}',
            "algorithms[0].estimator: cannot import 'nosuchpkg.mod': no module named 'nosuchpkg' on the Python "
            "path nor in {TMP}",
        ),
        (
            '{estimator: "sklearn.ensemble:RandomForest"}',
            "algorithms[0].estimator: module 'sklearn.ensemble' has no 'RandomForest'; did you mean "
            "RandomForestClassifier, RandomForestRegressor?",
        ),
        (
            '{estimator: "sklearn.ensemble.RandomForestClassifier"}',
            "algorithms[0].estimator: 'sklearn.ensemble.RandomForestClassifier' is not an import path; "
            "expected 'package.module:Name'",
        ),
        (
            '{estimator: "sklearn.linear_model:LinearRegression"}',
            "algorithms[0].estimator: 'sklearn.linear_model:LinearRegression' is a regressor, not a classifier",
        ),
        (
            '{estimator: "sklearn.cluster:KMeans"}',
            "algorithms[0].estimator: 'sklearn.cluster:KMeans' is a clusterer, not a classifier",
        ),
        (
            '{estimator: "sklearn.preprocessing:StandardScaler"}',
            "algorithms[0].estimator: 'sklearn.preprocessing:StandardScaler' is not a scikit-learn-compatible "
            "classifier (no predict)",
        ),
        (
            '{estimator: "mylab.methods:not_a_class"}',
            "algorithms[0].estimator: 'mylab.methods:not_a_class' is a function, not a class",
        ),
        (
            '{estimator: "mylab.broken:X"}',
            "algorithms[0].estimator: importing 'mylab.broken' failed: ZeroDivisionError: division by zero",
        ),
        (
            '{estimator: "sklearn.svm:SVC", params: {gama: 1.0}}',
            "algorithms[0].params.gama: unknown parameter for SVC; known: C, break_ties, cache_size, "
            "class_weight, coef0, decision_function_shape, degree, gamma, kernel, max_iter, probability, "
            "random_state, shrinking, tol, verbose",
        ),
        (
            '{estimator: "sklearn.ensemble:RandomForestClassifier", params: {n_estimators: [10, 0]}}',
            "algorithms[0].params.n_estimators: must be an int in the range [1, inf). Got 0 instead.",
        ),
        (
            '{estimator: "sklearn.svm:SVC", params: {kernel: rbff}}',
            "algorithms[0].params.kernel: must be a str among {'linear', 'poly', 'precomputed', 'rbf', "
            "'sigmoid'} or a callable. Got 'rbff' instead.",
        ),
        (
            '{name: knn, estimator: "sklearn.svm:SVC"}',
            "algorithms[0]: give either 'name' (a knnx algorithm) or 'estimator' ('package.module:Class'), "
            "not both",
        ),
        (
            "{params: {k: 1}}",
            "algorithms[0]: give either 'name' (a knnx algorithm) or 'estimator' ('package.module:Class'), "
            "not neither",
        ),
        (
            "{name: cpw, params: {scheme: pw}}",
            "algorithms[0].params.scheme: fixed to 'cpw' by the name 'cpw'; use name: weighted_metric to vary it",
        ),
        (
            "{name: knnn}",
            "algorithms[0].name: unknown algorithm 'knnn'; known: adaboost, allknn, cdm, cnn, cpw, cw, drop3, enn, "
            "fcnn, gnnb, hmnei, ib3, icf, itml_knn, knn, knn_lpo, knn_sample, l2, lvq, multiedit, ncr, oss, pw, renn, "
            "rmhc, rnn, sgd, ssma, svm_linear, svm_platt, svm_rbf, tomek_links, unn, unn_cv, weighted_metric",
        ),
        (
            '{id: "a b", name: knn}',
            "algorithms[0].id: string should match pattern '^[A-Za-z0-9_.-]+$' (got 'a b')",
        ),
    ],
)
def test_each_bad_algorithm_entry_is_one_line(tmp_path, entry, message):
    _write_lab(tmp_path)
    (tmp_path / "mylab" / "broken.py").write_text("X = 1 / 0\n")
    text = f"name: t\ndatasets: [iris]\nprotocol: {{kind: kfold, folds: 2}}\nalgorithms: [{entry}]\n"
    _refused(tmp_path, text, message.replace("{TMP}", str(tmp_path)))


def test_a_probability_metric_needs_predict_proba_in_every_setting(tmp_path):
    _refused(
        tmp_path,
        """\
        name: t
        datasets: [iris]
        protocol: {kind: kfold, folds: 2}
        metrics: [error, log_loss]
        algorithms: [{estimator: "sklearn.svm:SVC", params: {probability: [true, false]}}]
        """,
        "metrics[1]: log_loss needs predicted probabilities; algorithms[0] (SVC) with {'probability': False} "
        "has no predict_proba",
    )


@pytest.mark.parametrize(
    ("algorithms", "message"),
    [
        (
            "[{id: a, name: knn}, {id: a, name: unn}]",
            "algorithms[1].id: 'a' is already the id of algorithms[0]; give each a distinct id",
        ),
        (
            "[{name: knn}, {id: knn, name: unn}]",
            "algorithms[1].id: 'knn' is already the id of algorithms[0]; give each a distinct id",
        ),
        (
            "[{id: knn, name: knn, params: {k: 1}}, {name: knn, params: {k: 3}}]",
            "algorithms[1].id: 'knn' is already the id of algorithms[0]; give each a distinct id",
        ),
    ],
)
def test_ids_are_unique(tmp_path, algorithms, message):
    text = f"name: t\ndatasets: [iris]\nprotocol: {{kind: kfold, folds: 2}}\nalgorithms: {algorithms}\n"
    _refused(tmp_path, text, message)


def test_two_grids_of_one_algorithm_share_its_name(tmp_path):
    spec = {
        **BASE,
        "datasets": ["iris"],
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3]}},
            {"name": "knn", "params": {"k": 5, "weights": "distance"}},
        ],
    }
    assert {c.algorithm for c in validate_spec(spec).cells} == {"knn"}


# --- plugins: registration and entry points ----------------------------------------------


def test_register_algorithm_names_a_class_for_specs(tmp_path, monkeypatch):
    from sklearn.neighbors import NearestCentroid

    from knnx import ALGORITHMS, register_algorithm

    monkeypatch.setattr("knnx.estimators.registry.ALGORITHMS", dict(ALGORITHMS))
    from knnx.estimators import registry as algorithms

    algorithms.register_algorithm("centroid", NearestCentroid)
    algorithms.register_algorithm("centroid", NearestCentroid)  # the same class again: fine
    with pytest.raises(ValueError, match="algorithm name 'knn' is taken; choose another"):
        algorithms.register_algorithm("knn", NearestCentroid)
    with pytest.raises(ValueError, match="algorithm name 'cpw' is taken"):
        algorithms.register_algorithm("cpw", NearestCentroid)
    from sklearn.linear_model import LinearRegression

    with pytest.raises(ValueError, match=r"register_algorithm\('lr', LinearRegression\): is a regressor"):
        algorithms.register_algorithm("lr", LinearRegression)
    spec = {**BASE, "datasets": ["iris"], "algorithms": [{"name": "centroid"}]}
    run_spec(spec, out=tmp_path, figures=False)
    vspec = validate_spec(spec)
    rows = read_results(tmp_path / "results.csv").sort_values("fold")
    assert rows["value"].tolist() == _direct_errors(vspec, 0, NearestCentroid)
    assert register_algorithm is algorithms.register_algorithm


PLUGIN = """\
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class OneRule(ClassifierMixin, BaseEstimator):
    \"\"\"Threshold on one feature at the midpoint of the two class means.\"\"\"

    def __init__(self, feature=0):
        self.feature = feature

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        a, b = (X[y == c, self.feature].mean() for c in self.classes_[:2])
        self.cut_, self.low_ = (a + b) / 2, self.classes_[0] if a < b else self.classes_[1]
        return self

    def predict(self, X):
        high = self.classes_[1] if self.low_ == self.classes_[0] else self.classes_[0]
        return np.where(X[:, self.feature] <= self.cut_, self.low_, high)


def load_stripes(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 4, (n, 2))
    return X, np.floor(X[:, 0]).astype(int) % 2
"""


def _install_plugin(site, body=PLUGIN, value="knnx_demo_plugin:OneRule"):
    """A tiny installed distribution (as ``pip install --target SITE`` leaves it): a
    package and its dist-info with entry points and the RECORD of installed files."""
    (site / "knnx_demo_plugin").mkdir(parents=True)
    (site / "knnx_demo_plugin" / "__init__.py").write_text(body)
    info = site / "knnx_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: knnx-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[knnx.algorithms]\none_rule = {value}\n\n[knnx.datasets]\nstripes = knnx_demo_plugin:load_stripes\n"
    )
    (info / "top_level.txt").write_text("knnx_demo_plugin\n")
    (info / "RECORD").write_text(
        "knnx_demo_plugin/__init__.py,,\n"
    )  # what pip lists: an installed distribution


def test_an_installed_plugin_is_named_like_a_built_in(tmp_path):
    site = tmp_path / "site"
    _install_plugin(site)
    spec = tmp_path / "p.yaml"
    spec.write_text(
        "name: p\nseed: 0\ndatasets: [ripley, {name: stripes, n: 50}]\nprotocol: {kind: kfold, folds: 2}\n"
        "algorithms: [{name: one_rule, params: {feature: [0, 1]}}, {name: knn}]\n"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    code = (
        "import sys, json; from knnx.spec import validate_spec; from knnx.experiment.provenance import cell_keys;"
        "from knnx.plugins import object_version; v = validate_spec(sys.argv[1]);"
        "print(json.dumps([v.algorithms[0].version, sorted({c.algorithm for c in v.cells})]))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(spec)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '["knnx-demo-plugin==0.1", ["knn", "one_rule"]]'
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "knnx.cli", "run", str(spec), "--out", str(out), "--quiet", "--jobs", "2"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    frame = read_results(out / "results.csv")
    assert len(frame[frame.algorithm == "one_rule"]) == 2 * 2 * 2  # datasets x settings x folds
    assert set(frame[frame.dataset == "stripes(n=50)"]["n_train"]) == {25}
    sys.path.insert(0, str(site))
    try:
        from knnx_demo_plugin import OneRule

        vspec = validate_spec(
            {
                **BASE,
                "seed": 0,
                "protocol": {"kind": "kfold", "folds": 2},
                "datasets": ["ripley"],
                "algorithms": [{"name": "knn"}],
            }
        )
        rows = frame[(frame.algorithm == "one_rule") & (frame.params == '{"feature":1}')]
        rows = rows[rows.dataset == "ripley"].sort_values("fold")
        assert rows["value"].tolist() == _direct_errors(vspec, 0, lambda: OneRule(feature=1))
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("knnx_demo_plugin", None)


def test_a_broken_plugin_is_one_line_and_only_when_named(tmp_path):
    site = tmp_path / "site"
    _install_plugin(site, body="raise RuntimeError('plugin bug')\n")
    spec = tmp_path / "p.yaml"
    spec.write_text(
        "name: p\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn}]\n"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "knnx.cli", "validate", str(spec)]
    assert subprocess.run(cmd, capture_output=True, text=True, env=env).returncode == 0
    spec.write_text(spec.read_text().replace("{name: knn}", "{name: one_rule}"))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {spec}: algorithms[0].name: 'one_rule' from knnx-demo-plugin 0.1 (entry point "
        "knnx_demo_plugin:OneRule) failed to load: RuntimeError: plugin bug\n"
    )


def test_a_plugin_offering_a_built_in_name_is_refused_where_the_name_is_used(tmp_path, monkeypatch):
    """A package offering 'knn' and 'iris' in the entry-point groups was shadowed by
    knnx's own without a word: the spec ran knnx's kNN on the bundled iris. A spec that
    names them is now refused in one line (as a name offered twice is); one that does
    not runs as before. In-process: the entry points are read from sys.path."""
    site = tmp_path / "site"
    _install_plugin(site)
    info = site / "knnx_demo_plugin-0.1.dist-info" / "entry_points.txt"
    info.write_text(
        "[knnx.algorithms]\nknn = knnx_demo_plugin:OneRule\none_rule = knnx_demo_plugin:OneRule\n\n"
        "[knnx.datasets]\niris = knnx_demo_plugin:load_stripes\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "knnx_demo_plugin", raising=False)
    spec = {
        **BASE,
        "protocol": {"kind": "kfold", "folds": 2},
        "datasets": ["ripley"],
        "algorithms": [{"name": "knn"}],
    }
    with pytest.raises(SpecError) as refused:
        validate_spec(spec)
    assert str(refused.value) == (
        "<spec>: algorithms[0].name: 'knn' is a built-in name, and knnx-demo-plugin 0.1 offers it too in entry-point "
        "group knnx.algorithms (entry point knnx_demo_plugin:OneRule), which would never run; the package must offer "
        "it under another name"
    )
    with pytest.raises(SpecError) as refused:
        validate_spec({**spec, "datasets": ["iris"], "algorithms": [{"name": "one_rule"}]})
    assert "datasets[0]: 'iris' is a built-in name, and knnx-demo-plugin 0.1 offers it too" in str(
        refused.value
    )
    from knnx.estimators.registry import ALGORITHMS

    try:
        cells = validate_spec({**spec, "algorithms": [{"name": "one_rule"}]}).cells
        assert {c.algorithm for c in cells} == {"one_rule"}
    finally:  # resolving an entry point registers it for the process: not for the other tests
        ALGORITHMS.pop("one_rule", None)
        sys.modules.pop("knnx_demo_plugin", None)


# --- your own datasets: loaders, registration, plugins, grids over options ---------------

DATA = """\
import numpy as np


def load_rings(n=100, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    r = np.r_[np.ones(n // 2), 2 * np.ones(n - n // 2)] + noise * rng.standard_normal(n)
    t = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[r * np.cos(t), r * np.sin(t)]
    y = np.where(np.arange(n) < n // 2, "inner", "outer")
    return X, y


def with_nan():
    X = np.ones((4, 2))
    X[2, 1] = np.nan
    return X, [0, 1, 0, 1]


def one_class():
    return np.arange(8.0).reshape(4, 2), ["a"] * 4


def wrong_length():
    return np.zeros((4, 2)), [0, 1, 0]


def not_a_pair():
    return {"X": 1}


def raises(n=3):
    raise KeyError("no such file")
"""


def _write_data(tmp_path):
    (tmp_path / "mylab").mkdir(exist_ok=True)
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "data.py").write_text(DATA)


def test_a_loader_beside_the_spec_gives_its_data_and_receives_a_seed(tmp_path):
    _write_data(tmp_path)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nseed: 4\nprotocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn}]\n"
        "datasets:\n  - {loader: 'mylab.data:load_rings', params: {n: 60}, id: rings}\n"
        "  - {loader: 'mylab.data:load_rings', params: {n: 60, seed: 7}}\n"
    )
    vspec = validate_spec(spec)
    rings, fixed = vspec.datasets
    assert (rings.name, fixed.name) == ("rings", "load_rings(n=60,seed=7)")
    assert rings.classes.tolist() == ["inner", "outer"] and rings.X.shape == (60, 2)
    sys.path.insert(0, str(tmp_path))
    try:
        from mylab.data import load_rings

        from knnx.spec import SEED_DATA, dataset_seedseq

        X7, _ = load_rings(n=60, seed=7)
        assert np.array_equal(fixed.X, X7)
        drawn = int(dataset_seedseq(4, "rings", SEED_DATA).generate_state(1)[0])
        assert np.array_equal(rings.X, load_rings(n=60, seed=drawn)[0])
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "mylab" or m.startswith("mylab.")]:
            del sys.modules[name]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "{loader: 'mylab.data:with_nan'}",
            "datasets[0]: loader mylab.data:with_nan: X row 2 column 1 is nan; values must be finite numbers",
        ),
        (
            "{loader: 'mylab.data:one_class'}",
            "datasets[0]: loader mylab.data:one_class: a single class ('a'); a classifier needs at least two",
        ),
        (
            "{loader: 'mylab.data:wrong_length'}",
            "datasets[0]: loader mylab.data:wrong_length: y must hold one label per row of X (4), got shape (3,)",
        ),
        (
            "{loader: 'mylab.data:not_a_pair'}",
            "datasets[0]: loader mylab.data:not_a_pair: a loader returns (X, y) or a knnx Dataset, got dict",
        ),
        (
            "{loader: 'mylab.data:raises'}",
            "datasets[0]: loader mylab.data:raises: the loader raised KeyError: 'no such file'",
        ),
        (
            "{loader: 'mylab.data:load_rings', params: {radius: 2}}",
            "datasets[0]: loader mylab.data:load_rings: unknown parameter 'radius'; known: n, noise, seed",
        ),
        ("{loader: 'mylab.data:nothing'}", "datasets[0]: module 'mylab.data' has no 'nothing'"),
        (
            "{loader: 'mylab.data:load_rings', n: 3}",
            "datasets[0]: loader dataset: unknown key 'n'; known: loader, params, categorical, missing, fill_value, id",
        ),
        ("{synthetic: blobs, n: 60, spread: []}", "datasets[0]: spread: empty list of values"),
        ("{synthetic: blobs, n: 60, spread: [1, 2, 1]}", "datasets[0]: spread: value 1 is listed twice"),
        ("rings", "datasets[0]: unknown dataset 'rings'; known: "),
    ],
)
def test_each_bad_dataset_loader_is_one_line(tmp_path, entry, message):
    _write_data(tmp_path)
    text = f"name: t\ndatasets: [{entry}]\nprotocol: {{kind: kfold, folds: 2}}\nalgorithms: [{{name: knn}}]\n"
    if message.endswith("known: "):
        spec = tmp_path / "s.yaml"
        spec.write_text(text)
        result = runner.invoke(app, ["validate", str(spec)])
        assert result.exit_code == 2 and result.output.startswith(
            f"error: {spec}: {message}australian, balance, cancer"
        )
        return
    _refused(tmp_path, text, message)


def test_list_valued_dataset_options_make_one_dataset_each(tmp_path):
    spec = {
        **BASE,
        "algorithms": [{"name": "knn"}],
        "datasets": [
            {"synthetic": "dambrosio2012", "n": 60, "sigma": [0.1, 0.5, 1.0]},
            {"synthetic": "blobs", "n": 40, "spread": [1.0, 2.0], "n_classes": [2, 3], "id": "b"},
            "iris",
        ],
    }
    vspec = validate_spec(spec)
    names = [ds.name for ds in vspec.datasets]
    assert names == [
        "dambrosio2012(n=60)[sigma=0.1]",
        "dambrosio2012(n=60)[sigma=0.5]",
        "dambrosio2012(n=60)[sigma=1.0]",
        "b[spread=1.0,n_classes=2]",
        "b[spread=1.0,n_classes=3]",
        "b[spread=2.0,n_classes=2]",
        "b[spread=2.0,n_classes=3]",
        "iris",
    ]
    # each is the dataset its single-valued entry gives, under that id
    from knnx.spec import SEED_DATA, dataset_seedseq

    one = {"synthetic": "dambrosio2012", "n": 60, "sigma": 0.5, "id": "dambrosio2012(n=60)[sigma=0.5]"}
    single = validate_spec({**spec, "datasets": [one]}).datasets[0]
    assert np.array_equal(single.X, vspec.datasets[1].X) and np.array_equal(single.y, vspec.datasets[1].y)
    assert dataset_seedseq(0, names[0], SEED_DATA).entropy == 0
    assert vspec.datasets[6].n_classes == 3 and len(vspec.cells) == 8 * 3
    # a problem in one of them names the entry and the expanded id
    bad = {**spec, "datasets": [{"synthetic": "blobs", "n": 40, "spread": [1.0, 1.0e300]}]}
    with pytest.raises(Exception, match=r"datasets\[0\] \(blobs\(n=40\)\[spread=1e\+300\]\): "):
        validate_spec(bad)


def test_register_dataset_names_a_loader_for_specs(tmp_path, monkeypatch):
    import knnx
    from knnx import datasets

    monkeypatch.setattr(datasets, "REGISTERED", {})

    def xor(n=40, seed=0):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-1, 1, (n, 2))
        return X, (X[:, 0] * X[:, 1] > 0).astype(int)

    knnx.register_dataset("xor", xor)
    with pytest.raises(ValueError, match="dataset name 'iris' is taken"):
        knnx.register_dataset("iris", xor)
    spec = {**BASE, "datasets": ["xor", {"name": "xor", "n": [30, 50]}], "algorithms": [{"name": "knn"}]}
    vspec = validate_spec(spec)
    assert [ds.name for ds in vspec.datasets] == ["xor", "xor[n=30]", "xor[n=50]"]
    assert vspec.datasets[0].classes.tolist() == ["0", "1"] and vspec.datasets[2].n_samples == 50
    run_spec(spec, out=tmp_path, figures=False)
    assert len(read_results(tmp_path / "results.csv")) == 3 * 3


# --- per-dataset parameters ----------------------------------------------------------------


def test_params_for_replaces_the_grid_on_the_datasets_it_names(tmp_path):
    spec = {
        **BASE,
        "datasets": ["iris", "wine", "glass"],
        "algorithms": [
            {
                "name": "knn",
                "params": {"k": [1, 3, 5], "weights": "distance"},
                "params_for": {"glass": {"k": [1]}, "iris": {"k": [3, 7], "weights": "uniform"}},
            },
            {"name": "unn", "params": {"k": 3}},
        ],
    }
    vspec = validate_spec(spec)
    settings = {}
    for c in vspec.cells:
        if c.algorithm == "knn":
            settings.setdefault(c.dataset, set()).add((c.params["k"], c.params["weights"]))
    assert settings == {
        "iris": {(3, "uniform"), (7, "uniform")},
        "wine": {(1, "distance"), (3, "distance"), (5, "distance")},
        "glass": {(1, "distance")},
    }
    assert len(vspec.cells) == 3 * (2 + 3 + 1) + 3 * 3
    # the rows equal those of a spec giving each dataset its own grid
    run_spec(spec, out=tmp_path / "a", figures=False)
    alone = {
        **spec,
        "datasets": ["glass"],
        "algorithms": [{"name": "knn", "params": {"k": 1, "weights": "distance"}}],
    }
    run_spec(alone, out=tmp_path / "b", figures=False)
    a = read_results(tmp_path / "a" / "results.csv")
    b = read_results(tmp_path / "b" / "results.csv")
    a = a[(a.dataset == "glass") & (a.algorithm == "knn")].sort_values("fold")
    assert a["value"].tolist() == b.sort_values("fold")["value"].tolist()


@pytest.mark.parametrize(
    ("params_for", "message"),
    [
        ("{glas: {k: 1}}", "algorithms[0].params_for.glas: no dataset has this id; ids: iris, glass"),
        ("{glass: {k: 0}}", "algorithms[0].params_for.glass.k: must be an integer >= 1, got 0"),
        (
            "{glass: {kk: 1}}",
            "algorithms[0].params_for.glass.kk: unknown parameter for knn; known: k, metric, metric_params, nominal, seed, tie, weights",
        ),
        ("{glass: {k: [1, 1]}}", "algorithms[0].params_for.glass.k: value 1 is listed twice"),
        (
            "{glass: {k: 400}}",
            "algorithms[0].params_for.glass.k: k=400 exceeds the 107 training samples of dataset 'glass' under protocol kfold",
        ),
        ("{glass: 3}", "algorithms[0].params_for.glass: input should be a valid dictionary (got 3)"),
    ],
)
def test_each_bad_params_for_is_one_line(tmp_path, params_for, message):
    text = (
        "name: t\ndatasets: [iris, glass]\nprotocol: {kind: kfold, folds: 2}\n"
        f"algorithms: [{{name: knn, params: {{k: [1, 3]}}, params_for: {params_for}}}]\n"
    )
    _refused(tmp_path, text, message)


# --- command-line overrides ------------------------------------------------------------------

OVERRIDDEN = """\
name: ov
seed: 0
datasets: [iris]
protocol: {kind: kfold, folds: 2}
algorithms:
  - {name: knn, params: {k: 1}}
  - {name: unn}
"""


def test_set_overrides_equal_the_same_spec_written_out(tmp_path):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(OVERRIDDEN)
    sets = ["protocol.folds=3", "algorithms[0].params.k=[1, 3, 5]", "seed=3", "algorithms.1.params.theta=0.5"]
    result = runner.invoke(app, ["validate", str(spec), *[a for s in sets for a in ("--set", s)]])
    assert result.exit_code == 0, result.output
    assert result.output == f"{spec}: ok, 12 cells over 1 dataset(s)\n"
    out = tmp_path / "out"
    args = ["run", str(spec), "--out", str(out), "--quiet", *[a for s in sets for a in ("--set", s)]]
    assert runner.invoke(app, args).exit_code == 0
    written = yaml.safe_load(OVERRIDDEN)
    written.update(seed=3, protocol={"kind": "kfold", "folds": 3})
    written["algorithms"][0]["params"]["k"] = [1, 3, 5]
    written["algorithms"][1]["params"] = {"theta": 0.5}
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(written))
    run_spec(tmp_path / "w.yaml", out=tmp_path / "w", figures=False)
    ours, theirs = (read_results(p / "results.csv") for p in (out, tmp_path / "w"))
    cols = ["dataset", "algorithm", "params", "repeat", "fold", "metric", "value"]
    assert ours[cols].equals(theirs[cols])
    saved = yaml.safe_load((out / "spec.yaml").read_text())
    assert saved["seed"] == 3 and saved["protocol"]["folds"] == 3
    assert saved["algorithms"][0]["params"] == {
        "k": [1, 3, 5],
        "metric": "euclidean",
        "metric_params": None,
        "nominal": None,
        "seed": None,
        "tie": "nearest",
        "weights": "uniform",
    }
    # a rerun with the same overrides resumes; without them the folder holds another spec
    result = runner.invoke(
        app, ["run", str(spec), "--out", str(out), *[a for s in sets for a in ("--set", s)]]
    )
    assert result.exit_code == 0 and "0 cells run, 12 already done" in result.output


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("protocol.folds", "--set 'protocol.folds': expected PATH=VALUE, e.g. protocol.folds=10"),
        (
            "protocol..folds=3",
            "--set 'protocol..folds=3': 'protocol..folds' is not a path; expected keys joined "
            "by dots and list indices, e.g. algorithms[0].params.k",
        ),
        (
            "algorithms[5].params.k=3",
            "--set 'algorithms[5].params.k=3': algorithms[5]: no such item; the list has 2",
        ),
        ("name.x=3", "--set 'name.x=3': name is not a mapping"),
        ("protocol[0]=3", "--set 'protocol[0]=3': protocol is not a list"),
        (
            "seed=[1, 2",
            "--set 'seed=[1, 2': the value is not valid YAML (expected ',' or ']', but got '<stream end>')",
        ),
        (
            "protocol.folds=1",
            "SPEC: --set 'protocol.folds=1': protocol.folds: input should be greater than or equal to 2 (got 1)",
        ),
        (
            "algorithms[0].params.k=0",
            "SPEC: --set 'algorithms[0].params.k=0': algorithms[0].params.k: must be an integer >= 1, got 0",
        ),
        (
            "algorithms[0].name=knnn",
            "SPEC: --set 'algorithms[0].name=knnn': algorithms[0].name: unknown algorithm 'knnn'; known: adaboost",
        ),
        # a key the spec lacks is created along the path, as in the file; the checks then
        # refuse one that is no field, naming the override that brought it
        (
            "protocol.foldz=10",
            "SPEC: --set 'protocol.foldz=10': protocol.foldz: unknown key; known: kind, folds, repeats, stratified",
        ),
        (
            "algorithms.0.parms.k=5",
            "SPEC: --set 'algorithms.0.parms.k=5': algorithms[0].parms: unknown key; known: name, estimator, id, "
            "params, params_for, tune",
        ),
        (
            "algorithms[1].params.thetta=0.5",
            "SPEC: --set 'algorithms[1].params.thetta=0.5': algorithms[1].params.thetta: unknown parameter for unn;",
        ),
        ("nothere.a.b=5", "SPEC: --set 'nothere.a.b=5': nothere: unknown key; known: name, seed, datasets,"),
    ],
)
def test_each_bad_override_is_one_line(tmp_path, override, message):
    spec = tmp_path / "s.yaml"
    spec.write_text(OVERRIDDEN)
    for command in (["validate", str(spec)], ["run", str(spec), "--quiet", "--out", str(tmp_path / "o")]):
        result = runner.invoke(app, [*command, "--set", override])
        assert result.exit_code == 2, result.output
        assert len(result.output.splitlines()) == 1
        assert result.output.startswith("error: " + message.replace("SPEC", str(spec))), result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_only_the_problems_an_override_touches_name_it():
    from knnx.errors import SpecError
    from knnx.spec.overrides import blame_overrides

    exc = SpecError.from_lines(
        [
            "s.yaml: protocol.folds: input should be greater than or equal to 2 (got 1)",
            "s.yaml: algorithms[0].params.k: must be an integer >= 1, got 0",
            "s.yaml: algorithms[1]: give either 'name' or 'estimator', not both",
            "s.yaml: algorithms[10].params: unknown key",
            "other.yaml: protocol.folds: not this spec's",
        ]
    )
    sets = [
        "protocol.folds=1",
        "algorithms[1].params.k=2",
        "algorithms.1.estimator=a:B",
        "algorithms[1]={name: x}",
    ]
    assert blame_overrides(exc, "s.yaml", sets).lines() == [
        "s.yaml: --set 'protocol.folds=1': protocol.folds: input should be greater than or equal to 2 (got 1)",
        "s.yaml: algorithms[0].params.k: must be an integer >= 1, got 0",
        "s.yaml: --set 'algorithms[1]={name: x}': algorithms[1]: give either 'name' or 'estimator', not both",
        "s.yaml: algorithms[10].params: unknown key",
        "other.yaml: protocol.folds: not this spec's",
    ]
    assert blame_overrides(exc, "s.yaml", []) is exc


# --- the saved spec reruns anywhere ------------------------------------------------------


def test_the_saved_spec_has_every_default_and_reruns_from_any_folder(tmp_path):
    import yaml

    exp = tmp_path / "exp"
    exp.mkdir()
    _write_lab(exp)
    _write_data(exp)
    (exp / "data").mkdir()
    rng = np.random.default_rng(0)
    rows = "".join(f"{a:.3f},{b:.3f},{'xy'[int(a + b > 0)]}\n" for a, b in rng.standard_normal((40, 2)))
    (exp / "data" / "mine.csv").write_text("a,b,label\n" + rows)
    spec = exp / "s.yaml"
    spec.write_text(
        "name: s\nseed: 2\nprotocol: {kind: kfold, folds: 2}\n"
        "datasets: [{csv: data/mine.csv}, {loader: 'mylab.data:load_rings', params: {n: [40, 60]}}]\n"
        "algorithms:\n  - {id: mean, estimator: 'mylab.methods:NearestMean', params: {shrink: [0.0, 0.5]}}\n"
        "  - {name: cpw, params: {max_epochs: 2}}\n  - {name: knn, params: {k: [1, 3]}}\n"
    )
    first = tmp_path / "first"
    done = subprocess.run(
        [sys.executable, "-m", "knnx.cli", "run", str(spec), "--out", str(first), "--quiet"],
        capture_output=True,
        text=True,
        cwd=exp,
    )
    assert done.returncode == 0, done.stderr
    saved = yaml.safe_load((first / "spec.yaml").read_text())
    assert saved["datasets"][0] == {"csv": str(exp / "data" / "mine.csv")}
    assert saved["python_path"] == [str(exp)]
    assert saved["algorithms"][2] == {
        "name": "knn",
        "params": {
            "k": [1, 3],
            "metric": "euclidean",
            "metric_params": None,
            "nominal": None,
            "seed": None,
            "tie": "nearest",
            "weights": "uniform",
        },
    }
    cpw = saved["algorithms"][1]["params"]
    assert "scheme" not in cpw and cpw["max_epochs"] == 2 and cpw["beta"] == 8.0 and cpw["init"] == "auto"
    assert saved["algorithms"][0]["params"] == {"shrink": [0.0, 0.5]}
    # from another folder, with no access to the spec's folder but through spec.yaml
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    second = tmp_path / "second"
    done = subprocess.run(
        [sys.executable, "-m", "knnx.cli", "run", str(first / "spec.yaml"), "--out", str(second), "--quiet"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
    )
    assert done.returncode == 0, done.stderr
    from knnx.results import COLUMNS

    cols = [
        c
        for c in COLUMNS
        if c not in ("experiment", "protocol", "fit_seconds", "predict_seconds", "tune_seconds")
    ]
    a, b = (read_results(p / "results.csv")[cols] for p in (first, second))
    assert (a.metric == "error").sum() == 3 * 2 * (2 + 1 + 2) and a.equals(b)  # datasets x folds x settings
    assert (second / "spec.yaml").read_text() == (first / "spec.yaml").read_text()


def test_a_list_or_tuple_default_is_written_as_one_value_and_reruns_as_one_setting(tmp_path):
    """``spec.yaml`` wrote ``MLPClassifier``'s default ``hidden_layer_sizes=(100,)`` as
    ``[100]`` and a class's ``c=(1, 2)`` as ``[1, 2]``: grids, so rerunning spec.yaml ran
    other settings (100 instead of [100]; c=1 and c=2). They are written as grids of one
    value (``[[100]]``) and the rerun gives the same cells and rows."""
    (tmp_path / "pair.py").write_text(
        "from sklearn.neighbors import KNeighborsClassifier\n\n\n"
        "class Pair(KNeighborsClassifier):\n"
        "    def __init__(self, n_neighbors=1, pair=(1, 2)):\n"
        "        super().__init__(n_neighbors=n_neighbors)\n        self.pair = pair\n"
    )
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: t\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 2}\nmetrics: [error]\nalgorithms:\n"
        "  - {id: p, estimator: 'pair:Pair'}\n"
        "  - {id: mlp, estimator: 'sklearn.neural_network:MLPClassifier', params: {max_iter: 5}}\n"
    )
    first, second = tmp_path / "first", tmp_path / "second"
    done = subprocess.run(
        [sys.executable, "-m", "knnx.cli", "run", str(spec), "--out", str(first), "--quiet", "--no-report"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    import yaml

    saved = yaml.safe_load((first / "spec.yaml").read_text())
    assert saved["algorithms"][0]["params"]["pair"] == [[1, 2]]
    assert saved["algorithms"][1]["params"]["hidden_layer_sizes"] == [[100]]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "knnx.cli",
            "run",
            str(first / "spec.yaml"),
            "--out",
            str(second),
            "--no-report",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout.startswith("4 cells run, 0 already done"), done.stdout
    keep = ["dataset", "algorithm", "params", "repeat", "fold", "metric", "value"]
    a, b = (read_results(p / "results.csv")[keep] for p in (first, second))
    assert len(a) == 4 and a.equals(b)


# --- parameters as columns; configurations; seeds pooled ------------------------------------


def test_each_parameter_has_its_column_and_tables_group_by_it(tmp_path):
    spec = {
        **BASE,
        "datasets": ["iris"],
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3]}},
            {"name": "knn_sample", "params": {"seed": [0, 1, 2], "fraction": [0.5, 0.9]}},
        ],
    }
    run_spec(spec, out=tmp_path, figures=False)
    header = (tmp_path / "results.csv").read_text().splitlines()[0].split(",")
    # the file: the parameters the spec sets (they vary here); reading derives every one
    assert header[-3:] == ["param_fraction", "param_k", "param_seed"] and header[-4] == "tune_seconds"
    frame = read_results(tmp_path / "results.csv")
    assert [c for c in frame.columns if c.startswith("param_")] == [
        "param_fraction",
        "param_k",
        "param_metric",
        "param_metric_params",
        "param_nominal",
        "param_seed",
        "param_tie",
        "param_weights",
    ]
    knn = frame[frame.algorithm == "knn"]
    assert set(knn["param_k"]) == {"1", "3"} and set(knn["param_fraction"]) == {""}
    assert set(knn["param_weights"]) == {"uniform"}
    # knnx table: by a bare parameter name; seeds are pooled, as repeats and folds are
    result = runner.invoke(
        app, ["table", str(tmp_path / "results.csv"), "--by", "algorithm,fraction", "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    import io

    import pandas as pd

    table = pd.read_csv(io.StringIO(result.output), dtype={"param_fraction": str}, keep_default_na=False)
    sample = frame[(frame.algorithm == "knn_sample") & (frame.metric == "error")]
    for fraction, group in sample.groupby("param_fraction"):
        row = table[(table.algorithm == "knn_sample") & (table.param_fraction == fraction)]
        assert int(row["n"].iloc[0]) == 3 * 3  # folds x seeds
        assert float(row["mean"].iloc[0]) == pytest.approx(group["value"].mean(), abs=1e-15)
    # the default table: one row per configuration, labelled by id and what varies
    result = runner.invoke(app, ["table", str(tmp_path / "results.csv")])
    lines = result.output.splitlines()
    assert lines[-1].startswith("Bold: the lowest mean per dataset") and lines[-2] == ""
    assert [line.split(" | ")[1] for line in lines[2:-2]] == [
        "knn k=1",
        "knn k=3",
        "knn_sample fraction=0.5",
        "knn_sample fraction=0.9",
    ]
    result = runner.invoke(app, ["table", str(tmp_path / "results.csv"), "--by", "dataset,kk"])
    assert result.exit_code == 2
    assert result.output.startswith("error: --by: unknown column 'kk'; known: experiment, dataset")
    assert result.output.rstrip().endswith(
        "parameters: fraction, k, metric, metric_params, nominal, seed, tie, weights"
    )


def test_a_results_file_without_parameter_columns_reads_the_same(tmp_path):
    from knnx.results import COLUMNS, rows_to_csv

    spec = {**BASE, "datasets": ["iris"], "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}]}
    run_spec(spec, out=tmp_path / "a", figures=False)
    new = read_results(tmp_path / "a" / "results.csv")
    old = tmp_path / "old.csv"
    old.write_text(rows_to_csv(new[COLUMNS].to_dict("records"), header=True))  # as an older knnx wrote it
    assert read_results(old).equals(new)


def test_a_resume_that_adds_parameters_rewrites_the_header_and_keeps_the_rows(tmp_path):
    spec = {**BASE, "datasets": ["iris"], "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}]}
    run_spec(spec, out=tmp_path, figures=False)
    before = read_results(tmp_path / "results.csv")
    spec["algorithms"].append({"name": "unn", "params": {"theta": [0.5]}})
    summary = run_spec(spec, out=tmp_path, figures=False)
    assert (summary.n_run, summary.n_skipped) == (3, 6)
    after = read_results(tmp_path / "results.csv")
    assert "param_theta" in (tmp_path / "results.csv").read_text().splitlines()[0]
    kept = after[after.algorithm == "knn"].reset_index(drop=True)
    assert kept["value"].tolist() == before["value"].tolist()
    assert set(kept["param_theta"]) == {""}


# --- nested tuning -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("algorithm", "make", "grid"),
    [
        (
            {"name": "knn", "params": {"k": [1, 3, 5, 9, 15], "weights": ["uniform", "distance"]}},
            lambda: __import__("knnx").KNNClassifier(),
            {"k": [1, 3, 5, 9, 15], "weights": ["uniform", "distance"]},
        ),
        (
            {"estimator": "sklearn.svm:SVC", "params": {"C": [0.1, 1.0, 10.0], "gamma": [0.1, 1.0]}},
            lambda: __import__("sklearn.svm").svm.SVC(),
            {"C": [0.1, 1.0, 10.0], "gamma": [0.1, 1.0]},
        ),
    ],
)
def test_tune_equals_grid_search_cv_on_the_same_inner_folds(tmp_path, algorithm, make, grid):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from knnx.spec import tune_seed

    spec = {**BASE, "datasets": ["wine", "glass"], "algorithms": [{**algorithm, "tune": {"cv": 4}}]}
    run_spec(spec, out=tmp_path, figures=False)
    frame = read_results(tmp_path / "results.csv")
    vspec = validate_spec(spec)
    assert len(vspec.cells) == 2 * 3  # one cell per split, not per setting
    checked = 0
    for d, ds in enumerate(vspec.datasets):
        for s in vspec.splits[d]:
            inner = StratifiedKFold(4, shuffle=True, random_state=tune_seed(3, ds.name, s.repeat, s.fold))
            search = GridSearchCV(make(), grid, cv=inner).fit(ds.X[s.train], ds.y[s.train])
            rows = frame[(frame.dataset == ds.name) & (frame.fold == s.fold)].set_index("metric")["value"]
            error = float(np.mean(search.predict(ds.X[s.test]) != ds.y[s.test]))
            assert rows["error"] == error
            for name, values in grid.items():
                best = search.best_params_[name]
                expected = float(best) if not isinstance(best, str) else float(values.index(best))
                assert rows[f"chosen_{name}"] == expected
            checked += 1
    assert checked == 6


def test_tuned_inner_folds_share_neighbour_graphs(tmp_path, graph_calls):
    """One graph per inner fold (at the grid's largest k) serves every k of the grid."""
    calls = graph_calls
    spec = {
        **BASE,
        "protocol": {"kind": "kfold", "folds": 2},
        "datasets": ["wine"],
        "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7]}, "tune": {"cv": 3}}],
    }
    run_spec(spec, out=tmp_path, figures=False)
    pairs = [c[:2] for c in calls]
    assert len(pairs) == len(set(pairs)) == 2 * (3 + 1)  # per outer fold: 3 inner folds + the test graph
    assert {c[2] for c in calls} == {7}


@pytest.mark.parametrize(
    ("tune", "message"),
    [
        ("{cv: 1}", "algorithms[0].tune.cv: input should be greater than or equal to 2 (got 1)"),
        (
            "{cv: 3, metric: sym_kl}",
            "algorithms[0].tune.metric: 'sym_kl' cannot choose a setting; use one of error, accuracy",
        ),
        (
            "{cv: 40}",
            "algorithms[0].tune.cv: 40 stratified inner folds need 40 rows of each class in every training part; "
            "the training part of repeat 0 fold 0 of 'iris' has 25 of class 'setosa'",
        ),
        (
            "{cv: 3, metric: log_loss}",
            "algorithms[0].tune.metric: log_loss needs predict_proba in every setting",
        ),
    ],
)
def test_each_bad_tune_is_one_line(tmp_path, tune, message):
    estimator = '{estimator: "sklearn.svm:SVC", ' if "log_loss" in tune else "{name: knn, "
    text = (
        "name: t\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 2}\n"
        f"algorithms: [{estimator}params: {{}}, tune: {tune}}}]\n"
    )
    if "sym_kl" in message:
        spec = tmp_path / "s.yaml"
        spec.write_text(text)
        result = runner.invoke(app, ["validate", str(spec)])
        assert result.exit_code == 2 and result.output.startswith(f"error: {spec}: {message}")
        return
    _refused(tmp_path, text, message)


def test_the_readme_lists_every_built_in_algorithm_name():
    import re
    from pathlib import Path

    from knnx.estimators.registry import ALIASES, BUILTIN

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    line = re.search(r"The built-in names, all of them: (.*?)\. Every", text, re.S).group(1)
    assert re.findall(r"`([a-z0-9_]+)`", line) == sorted(set(BUILTIN) | set(ALIASES))


# --- the whole language at once: every executor, a kill -9, direct calls -------------------

MIXED = """\
name: mixed
seed: 5
datasets:
  - iris
  - {loader: "mylab.data:load_rings", params: {n: [60, 90]}, id: rings}
protocol: {kind: kfold, folds: 3}
algorithms:
  - {name: knn, params: {k: [1, 5]}, params_for: {iris: {k: [3]}}}
  - {name: cpw, params: {max_epochs: 2}}
  - {id: rf, estimator: "sklearn.ensemble:RandomForestClassifier", params: {n_estimators: [5, 10], random_state: 0}}
  - {estimator: "sklearn.svm:SVC", params: {C: [1.0, 10.0]}, tune: {cv: 3}}
  - {id: mean, estimator: "mylab.methods:NearestMean", params: {shrink: [0.0, 0.5]}}
"""


def _cli(spec, out, *extra):
    return [sys.executable, "-m", "knnx.cli", "run", str(spec), "--out", str(out), "--quiet", *extra]


def _values(out):
    frame = read_results(out / "results.csv")
    return frame.drop(columns=["fit_seconds", "predict_seconds", "tune_seconds"]).reset_index(drop=True)


@pytest.mark.xdist_group("dask")
def test_one_spec_mixing_every_kind_of_entry_runs_on_every_executor_and_resumes(tmp_path):
    import os
    import signal
    import time

    _write_lab(tmp_path)
    _write_data(tmp_path)
    spec = tmp_path / "mixed.yaml"
    spec.write_text(MIXED)
    runs = {"jobs2": ["--jobs", "2"]}
    try:
        import distributed  # noqa: F401

        runs["dask"] = ["--executor", "dask", "--jobs", "2"]
    except ImportError:
        pass
    for name, extra in runs.items():
        done = subprocess.run(_cli(spec, tmp_path / name, *extra), capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)
    # one process, killed with -9 once cells are on disk, then the same command again
    out = tmp_path / "killed"
    proc = subprocess.Popen(_cli(spec, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    ledger = out / "cells.csv"
    while not ledger.exists() or ledger.read_text().count("\n") < 6:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = subprocess.run(_cli(spec, out), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    reference = _values(tmp_path / "jobs2")
    for name in [*runs, "killed"]:
        pd_equal = _values(tmp_path / name).equals(reference)
        assert pd_equal, name
    # the scikit-learn rows are direct scikit-learn calls on the same splits
    from sklearn.ensemble import RandomForestClassifier

    vspec = validate_spec(spec)
    assert [ds.name for ds in vspec.datasets] == ["iris", "rings[n=60]", "rings[n=90]"]
    for d, ds in enumerate(vspec.datasets):
        rows = reference[
            (reference.dataset == ds.name) & (reference.algorithm == "rf") & (reference.metric == "error")
        ]
        rows = rows[rows.param_n_estimators == "10"].sort_values("fold")
        expected = _direct_errors(vspec, d, lambda: RandomForestClassifier(n_estimators=10, random_state=0))
        assert rows["value"].tolist() == expected
    iris_knn = reference[(reference.dataset == "iris") & (reference.algorithm == "knn")]
    assert set(iris_knn["param_k"]) == {"3"}
    assert {"chosen_C", "error"} <= set(reference[reference.algorithm == "SVC"]["metric"])


def test_the_readme_example_of_your_own_method_runs(tmp_path):
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```yaml\n(name: mine\n.*?)```", text, re.S).group(1)
    assert len(block.splitlines()) <= 10
    _write_data(tmp_path)
    (tmp_path / "mylab" / "methods.py").write_text(
        MODULE.replace("class NearestMean", "class MyNN")
        .replace("shrink=0.0", "k=1, shrink=0.0")
        .replace("self.shrink = shrink", "self.k, self.shrink = k, shrink")
    )
    spec = tmp_path / "mine.yaml"
    spec.write_text(block.replace("folds: 5", "folds: 2").replace("n_estimators: 200", "n_estimators: 5"))
    out = tmp_path / "out"
    done = subprocess.run(_cli(spec, out), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    frame = read_results(out / "results.csv")
    assert sorted(frame["algorithm"].unique()) == ["knn", "mine", "rf", "unn"]
    assert sorted(frame["dataset"].unique()) == ["iris", "rings", "wine"]


# --- found by a hostile review of the language -----------------------------------------------

ODD = """\
import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class BadGetParams(ClassifierMixin, BaseEstimator):
    def __init__(self, k=1):
        self.k = k

    def get_params(self, deep=True):
        raise RuntimeError("gp broken")

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class SetsNothing(ClassifierMixin, BaseEstimator):
    def __init__(self, k=1):
        pass

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class Exits(ClassifierMixin, BaseEstimator):
    def __init__(self, k=1):
        self.k = k

    def fit(self, X, y):
        if self.k == 3:
            sys.exit(3)
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


class Banana(ClassifierMixin, BaseEstimator):
    def __init__(self, k=1):
        self.k = k

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.array(["banana"] * len(X)) if self.k == 1 else np.zeros(len(X) + 1, dtype=int)
"""


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            '{estimator: "mylab.odd:BadGetParams", params: {k: [1, 3]}}',
            "algorithms[0].estimator: 'mylab.odd:BadGetParams' get_params() fails (RuntimeError: gp broken); "
            "scikit-learn's convention: __init__ stores each parameter, unchanged, as an attribute of the same name",
        ),
        (
            '{estimator: "mylab.odd:SetsNothing", params: {k: [1, 3]}}',
            "algorithms[0].estimator: 'mylab.odd:SetsNothing' get_params() fails (AttributeError: 'SetsNothing' "
            "object has no attribute 'k'); scikit-learn's convention: __init__ stores each parameter, unchanged, as an "
            "attribute of the same name",
        ),
        (
            '{estimator: "sklearn.ensemble:RandomForestClassifier", params: {n_estimators: 100000000000000000000000}}',
            "algorithms[0].params.n_estimators: 100000000000000000000000 is beyond 64-bit integers; no estimator can "
            "use it",
        ),
        ("{name: knn, tune: {cv: 2, foo: 1}}", "algorithms[0].tune.foo: unknown key; known: cv, metric"),
        # a parameter knnx's tables do not know is finite all the same (a traceback from the JSON of the
        # settings, exit 1, before)
        (
            '{estimator: "mylab.odd:Banana", params: {k: .inf}}',
            "algorithms[0].params.k: inf is not a finite number; parameters are finite (NaN and ±inf are refused)",
        ),
        (
            '{estimator: "mylab.odd:Banana", params: {k: [0.5, -.inf]}}',
            "algorithms[0].params.k: -inf is not a finite number; parameters are finite (NaN and ±inf are refused)",
        ),
        (
            '{estimator: "mylab.odd:Banana", params: {k: {a: [.nan]}}}',
            "algorithms[0].params.k: nan is not a finite number; parameters are finite (NaN and ±inf are refused)",
        ),
        (
            '{estimator: "mylab.odd:Banana", params_for: {iris: {k: .nan}}}',
            "algorithms[0].params_for.iris.k: nan is not a finite number; parameters are finite (NaN and ±inf are "
            "refused)",
        ),
    ],
)
def test_hostile_estimators_are_one_line(tmp_path, entry, message):
    _write_lab(tmp_path)
    (tmp_path / "mylab" / "odd.py").write_text(ODD)
    text = f"name: t\ndatasets: [iris]\nprotocol: {{kind: kfold, folds: 2}}\nalgorithms: [{entry}]\n"
    _refused(tmp_path, text, message)


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (
            '{estimator: "mylab.odd:Exits", params: {k: [1, 3]}}',
            "SystemExit: sys.exit(3) called",
        ),
        ('{estimator: "mylab.odd:Banana", params: {k: [1, 3]}}', "ValueError: predict returned "),
    ],
)
def test_estimators_that_exit_or_predict_no_class_fail_their_cells_only(tmp_path, entry, error):
    _write_lab(tmp_path)
    (tmp_path / "mylab" / "odd.py").write_text(ODD)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\ndatasets: [iris]\nprotocol: {{kind: kfold, folds: 2}}\nalgorithms: [{entry}, {{name: knn}}]\n"
    )
    out = tmp_path / "out"
    done = subprocess.run(_cli(spec, out), capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    failures = (out / "failures.csv").read_text().splitlines()[1:]
    frame = read_results(out / "results.csv")
    if "Exits" in entry:
        assert len(failures) == 2 and all(error in line for line in failures)  # the k=3 cells
        assert sorted(set(frame.algorithm)) == ["Exits", "knn"] and set(frame.param_k) == {"1"}
    else:
        assert len(failures) == 4 and "predict returned 'banana', not a class code" in failures[0]
        assert "predict returned shape (76,), expected (75,)" in "".join(failures)
        assert set(frame.algorithm) == {"knn"}


def test_a_loader_returning_text_is_refused(tmp_path):
    _write_data(tmp_path)
    (tmp_path / "mylab" / "data.py").write_text(
        DATA + "\n\ndef as_text():\n    X, y = load_rings(40)\n    return X.astype(str), y\n"
    )
    text = "name: t\ndatasets: [{loader: 'mylab.data:as_text'}]\nprotocol: {kind: kfold, folds: 2}\n"
    text += "algorithms: [{name: knn}]\n"
    _refused(
        tmp_path,
        text,
        "datasets[0]: loader mylab.data:as_text: X must hold numbers (int, float or bool), got values of dtype <U32",
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "scipy.sparse.csr_matrix(X)",
            "X must be a dense array of numbers, got a sparse csr_matrix; return X.toarray()",
        ),
        (
            "[list(row) for row in X[:-1]] + [[1.0]]",
            "X must be a 2-D array of numbers (int, float or bool), got a list that numpy cannot read as one "
            "array (rows of different lengths?: ValueError)",
        ),
    ],
)
def test_a_loader_returning_a_sparse_or_ragged_x_is_named_so(tmp_path, body, message):
    """A sparse matrix was refused as "values of dtype object", ragged rows as "dtype ?"."""
    _write_data(tmp_path)
    (tmp_path / "mylab" / "data.py").write_text(
        DATA + f"\n\ndef odd():\n    import scipy.sparse\n\n    X, y = load_rings(40)\n    return {body}, y\n"
    )
    text = "name: t\ndatasets: [{loader: 'mylab.data:odd'}]\nprotocol: {kind: kfold, folds: 2}\n"
    text += "algorithms: [{name: knn}]\n"
    _refused(tmp_path, text, f"datasets[0]: loader mylab.data:odd: {message}")


def test_a_loader_taking_its_seed_positionally_only_is_given_it():
    """``def load(seed, /)`` was called with ``seed=`` and failed with the loader blamed
    for knnx's call (``got some positional-only arguments passed as keyword``)."""
    from knnx.datasets import _call_loader

    def load(seed, /, n=4):
        return np.full((n, 1), float(seed)), np.arange(n) % 2

    X, _ = _call_loader(load, {"n": 6}, 7, "datasets[0]: loader x")
    assert X.shape == (6, 1) and X[0, 0] == 7.0

    def two(a, b, /):
        return a, b

    assert _call_loader(two, {"a": 1, "b": 2}, 0, "w") == (1, 2)
    with pytest.raises(
        Exception, match=r"^w: 'b' is positional-only and comes after 'a', which is not given"
    ):
        _call_loader(two, {"b": 2}, 0, "w")


def test_a_tuned_grid_beside_an_untuned_one_plots_and_resumes(tmp_path):
    spec = {
        **BASE,
        "datasets": ["iris"],
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3]}},
            {"name": "knn", "id": "tuned", "params": {"k": [1, 3]}, "tune": {"cv": 2}},
        ],
    }
    run_spec(spec, out=tmp_path)
    assert (tmp_path / "error.png").exists()
    assert run_spec(spec, out=tmp_path).n_run == 0
