"""Contestants as pipelines: ``steps:`` before the classifier, fitted as imbalanced-learn's
Pipeline fits them, shared across grids, and refused in one line where they cannot run."""

import sys
import textwrap

import numpy as np
import pytest
import yaml
from conftest import refused_by_cli

from knnx.errors import CellError
from knnx.estimators.knn import KNNClassifier
from knnx.experiment.context import PROCESS
from knnx.experiment.runner import run_spec
from knnx.plugins import import_object
from knnx.results import read_results
from knnx.spec import tune_seed, validate_spec
from knnx.steps import Chain, StepFits
from knnx.steps.builtin import Encode, Scale

imblearn = pytest.importorskip("imblearn")

KEEL_SETS = ["keel.iris", "keel.wine", "keel.glass", "keel.pima", "keel.ecoli"]


@pytest.fixture(autouse=True)
def _fresh_steps(monkeypatch):
    """Each test starts from an empty store of step fits and forgets the modules it
    wrote beside its specs."""
    monkeypatch.setattr(PROCESS, "step_fits", StepFits())
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in [m for m in sys.modules if m.startswith("steplab")]:
        del sys.modules[name]


def _by_fold(frame, algorithm, metric="error", params=None):
    rows = frame[(frame.algorithm == algorithm) & (frame.metric == metric)]
    if params is not None:
        rows = rows[rows.params.str.contains(params, regex=False)]
    return rows


# --- equivalence with imbalanced-learn's Pipeline ------------------------------------------


def test_scale_pca_enn_knn_equals_imblearn_pipeline_on_keel_partitions(tmp_path):
    """Fold by fold on KEEL's 10-fold partitions of 5 sets: the test errors of
    scale > pca > ENN > kNN equal those of imbalanced-learn's make_pipeline of
    StandardScaler, PCA, EditedNearestNeighbours and scikit-learn's brute kNN (the same
    predictions: kNN's tie rule 'lowest' is scikit-learn's), and the rows kept by ENN
    (n_fit, retained) are imbalanced-learn's."""
    from imblearn.pipeline import make_pipeline
    from imblearn.under_sampling import EditedNearestNeighbours
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import StandardScaler

    spec = {
        "name": "pipe",
        "datasets": KEEL_SETS,
        "protocol": {"kind": "partitions"},
        "algorithms": [
            {
                "name": "knn",
                "params": {"k": 3, "tie": "lowest"},
                "steps": [
                    "scale",
                    {"name": "pca", "params": {"n_components": [2, 3]}},
                    {"estimator": "imblearn.under_sampling:EditedNearestNeighbours"},
                ],
            }
        ],
    }
    run_spec(spec, out=tmp_path, report=False, figures=False)
    frame = read_results(tmp_path / "results.csv")
    vspec = validate_spec(spec)
    algorithm = "scale>pca>editednearestneighbours>knn"
    assert set(frame.algorithm) == {algorithm}
    compared = 0
    for d, ds in enumerate(vspec.datasets):
        for n in (2, 3):
            ours = _by_fold(frame[frame.dataset == ds.name], algorithm, params=f'"pca__n_components":{n},')
            kept = _by_fold(frame[frame.dataset == ds.name], algorithm, "n_fit", f'"pca__n_components":{n},')
            for s in vspec.splits[d]:
                pipe = make_pipeline(
                    StandardScaler(),
                    PCA(n),
                    EditedNearestNeighbours(),
                    KNeighborsClassifier(3, algorithm="brute"),
                ).fit(ds.X[s.train], ds.y[s.train])
                error = float(np.mean(pipe.predict(ds.X[s.test]) != ds.y[s.test]))
                assert ours[ours.fold == s.fold]["value"].item() == error
                n_fit = len(pipe[:3].fit_resample(ds.X[s.train], ds.y[s.train])[1])
                assert kept[kept.fold == s.fold]["value"].item() == n_fit
                compared += 1
    assert compared == 2 * sum(len(s) for s in vspec.splits) == 100
    retained = frame[frame.metric == "retained"].set_index(["dataset", "params", "fold"])["value"]
    n_fit = frame[frame.metric == "n_fit"].set_index(["dataset", "params", "fold"])["value"]
    n_train = frame[frame.metric == "n_fit"].set_index(["dataset", "params", "fold"])["n_train"]
    np.testing.assert_array_equal(retained.to_numpy(), (n_fit / n_train).to_numpy())


def test_chain_predictions_equal_imblearn_pipeline_with_nca():
    """A Chain of scale and NCA before kNN predicts exactly as make_pipeline(StandardScaler(),
    NeighborhoodComponentsAnalysis(random_state=0), KNeighborsClassifier(k)) on every
    10-fold partition of keel.wine and keel.iris, and its probabilities are equal too."""
    from imblearn.pipeline import make_pipeline
    from sklearn.neighbors import KNeighborsClassifier, NeighborhoodComponentsAnalysis
    from sklearn.preprocessing import StandardScaler

    from knnx import KNNClassifier
    from knnx.steps.builtin import Scale

    vspec = validate_spec(
        {
            "name": "p",
            "datasets": ["keel.wine", "keel.iris"],
            "protocol": {"kind": "partitions"},
            "algorithms": [{"name": "knn"}],
        }
    )
    for d, ds in enumerate(vspec.datasets):
        for s in vspec.splits[d]:
            X, y, Q = ds.X[s.train], ds.y[s.train], ds.X[s.test]
            ours = Chain(
                [("scale", Scale()), ("nca", NeighborhoodComponentsAnalysis(random_state=0))],
                KNNClassifier(k=5, tie="lowest"),
            ).fit(X, y)
            theirs = make_pipeline(
                StandardScaler(),
                NeighborhoodComponentsAnalysis(random_state=0),
                KNeighborsClassifier(5, algorithm="brute"),
            ).fit(X, y)
            np.testing.assert_array_equal(ours.predict(Q), theirs.predict(Q))
            np.testing.assert_allclose(ours.predict_proba(Q), theirs.predict_proba(Q), rtol=0, atol=1e-15)


def test_a_tuned_step_parameter_equals_grid_search_over_the_imblearn_pipeline(tmp_path):
    """tune: over pca's n_components and k chooses, on every training part, what
    GridSearchCV over the imbalanced-learn pipeline chooses on the same inner folds
    (StratifiedKFold(3, shuffle=True, random_state=tune_seed(...))), and the refit's
    test error is the search's."""
    from imblearn.pipeline import Pipeline
    from sklearn.decomposition import PCA
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import StandardScaler

    spec = {
        "name": "tuned",
        "seed": 7,
        "datasets": ["keel.wine", "keel.glass"],
        "protocol": {"kind": "partitions"},
        "algorithms": [
            {
                "name": "knn",
                "params": {"k": [1, 3, 5, 7], "tie": "lowest"},
                "steps": ["scale", {"name": "pca", "params": {"n_components": [2, 4, 6]}}],
                "tune": {"cv": 3},
            }
        ],
    }
    run_spec(spec, out=tmp_path, report=False, figures=False)
    frame = read_results(tmp_path / "results.csv")
    vspec = validate_spec(spec)
    for d, ds in enumerate(vspec.datasets):
        rows = frame[frame.dataset == ds.name]
        for s in vspec.splits[d]:
            # the classifier's key sorts before pca's in both grids: one order, one tie rule
            pipe = Pipeline(
                [
                    ("scale", StandardScaler()),
                    ("pca", PCA()),
                    ("clf", KNeighborsClassifier(algorithm="brute")),
                ]
            )
            cv = StratifiedKFold(3, shuffle=True, random_state=tune_seed(7, ds.name, s.repeat, s.fold))
            search = GridSearchCV(
                pipe, {"clf__n_neighbors": [1, 3, 5, 7], "pca__n_components": [2, 4, 6]}, cv=cv
            )
            search.fit(ds.X[s.train], ds.y[s.train])
            here = rows[rows.fold == s.fold].set_index("metric")["value"]
            assert here["chosen_k"] == search.best_params_["clf__n_neighbors"]
            assert here["chosen_pca__n_components"] == search.best_params_["pca__n_components"]
            assert here["error"] == float(np.mean(search.predict(ds.X[s.test]) != ds.y[s.test]))


# --- what each step sees --------------------------------------------------------------------

SPY = '''
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

LOG = []


class Spy(TransformerMixin, BaseEstimator):
    """Records the rows it is fitted on and those it transforms."""

    def __init__(self, tag=0):
        self.tag = tag

    def fit(self, X, y=None):
        LOG.append(("fit", np.array(X, copy=True)))
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        LOG.append(("transform", np.array(X, copy=True)))
        return X
'''


def _rows(X):
    """The rows of X as a sorted list of tuples (a multiset)."""
    return sorted(map(tuple, np.asarray(X).tolist()))


def _write_spy(tmp_path):
    (tmp_path / "steplab").mkdir()
    (tmp_path / "steplab" / "__init__.py").write_text(SPY)


PROTOCOLS = {
    "kfold": ({"kind": "kfold", "folds": 4}, ["iris"]),
    "partitions": ({"kind": "partitions"}, ["keel.iris"]),
    "holdout": ({"kind": "holdout", "test_size": 0.3, "repeats": 2}, ["wine"]),
    "5x2": ({"kind": "5x2"}, ["iris"]),
    "subsample": ({"kind": "subsample", "train_per_class": 10, "repeats": 3}, ["wine"]),
}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("tuned", [False, True], ids=["fixed", "tuned"])
def test_a_spy_step_sees_the_training_rows_at_fit_and_the_test_rows_at_predict(tmp_path, protocol, tuned):
    """Every fit of a step gets exactly the rows of a training part (under tune: of an
    inner training fold, those of StratifiedKFold on the training part, then the whole
    part for the refit), never a test row; transform gets the rows just fitted, then
    the held-out or test rows. Checked call by call, in cell order, for every protocol,
    after validation's probe (the first 20 rows of the first training part)."""
    from sklearn.model_selection import StratifiedKFold

    _write_spy(tmp_path)
    kind, datasets = PROTOCOLS[protocol]
    grid = {"k": [1, 3]}
    spec = {
        "name": "spy",
        "seed": 5,
        "datasets": datasets,
        "protocol": kind,
        "python_path": [str(tmp_path)],
        "algorithms": [{"name": "knn", "params": grid, "steps": [{"estimator": "steplab:Spy"}]}],
    }
    if tuned:
        spec["algorithms"][0]["tune"] = {"cv": 2}
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    log = list(sys.modules["steplab"].LOG)
    vspec = validate_spec(spec)
    ds = vspec.datasets[0]
    probed = ds.X[vspec.splits[0][0].train[:20]]  # validation's probe of a transformer of one's own
    expected = [("fit", probed), ("transform", probed)]  # (method, rows) in the order of the calls
    for cell in vspec.cells:
        s = next(s for s in vspec.splits[0] if (s.repeat, s.fold) == (cell.repeat, cell.fold))
        X_train, X_test = ds.X[s.train], ds.X[s.test]
        if tuned:
            folds = StratifiedKFold(2, shuffle=True, random_state=tune_seed(5, ds.name, s.repeat, s.fold))
            for _ in range(2):  # the two settings, each on every inner fold
                for inner, held in folds.split(X_train, ds.y[s.train]):
                    expected += [
                        ("fit", X_train[inner]),
                        ("transform", X_train[inner]),
                        ("transform", X_train[held]),
                    ]
        expected += [("fit", X_train), ("transform", X_train), ("transform", X_test)]
    assert len(log) == len(expected)
    for (method, rows), (want, want_rows) in zip(log, expected, strict=True):
        assert method == want
        assert _rows(rows) == _rows(want_rows)
    # no fit ever saw a row of its cell's test part (rows compared by value)
    assert len(vspec.cells) == (1 if tuned else 2) * len(vspec.splits[0])


# --- step fits shared across grids -----------------------------------------------------------


@pytest.fixture
def nca_fits(monkeypatch):
    """Every NCA fit made, counted (the class stays scikit-learn's: its fits are shared)."""
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    calls = []
    original = NeighborhoodComponentsAnalysis.fit

    def counted(self, X, y):
        calls.append(len(y))
        return original(self, X, y)

    monkeypatch.setattr(NeighborhoodComponentsAnalysis, "fit", counted)
    return calls


def test_nca_is_fitted_once_per_training_part_for_a_grid_over_k(tmp_path, nca_fits):
    """A grid of 5 values of k behind NCA on 3 folds fits NCA 3 times (once per training
    part), not 15; the results equal those of a run that shares nothing."""
    spec = {
        "name": "shared",
        "datasets": ["wine"],
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7, 9]}, "steps": ["scale", "nca"]}],
    }
    run_spec(spec, out=tmp_path / "a", report=False, figures=False)
    assert len(nca_fits) == 3
    assert PROCESS.step_fits.hits >= 12  # scale and nca of every cell after the first of its fold
    shared = read_results(tmp_path / "a" / "results.csv")
    PROCESS.step_fits = None  # no store: every chain fits its own steps
    run_spec(spec, out=tmp_path / "b", report=False, figures=False)
    assert len(nca_fits) == 3 + 15
    alone = read_results(tmp_path / "b" / "results.csv")
    np.testing.assert_array_equal(shared["value"].to_numpy(), alone["value"].to_numpy())


def test_a_tuned_grid_fits_nca_once_per_inner_fold_and_once_for_the_refit(tmp_path, nca_fits):
    spec = {
        "name": "tuned-shared",
        "datasets": ["wine"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7]}, "steps": ["nca"], "tune": {"cv": 3}}],
    }
    run_spec(spec, out=tmp_path, report=False, figures=False)
    assert len(nca_fits) == 2 * (3 + 1)


SLOW = '''
import time

from sklearn.preprocessing import StandardScaler


class SlowScaler(StandardScaler):
    """StandardScaler that takes 0.3 s to fit, shared as scikit-learn's classes are."""

    def fit(self, X, y=None, sample_weight=None):
        time.sleep(0.3)
        return super().fit(X, y, sample_weight)


SlowScaler.__module__ = "sklearn.preprocessing"
'''


def test_a_reused_step_fit_counts_in_fit_seconds_as_if_alone(tmp_path):
    """Cells that reuse a 0.3 s step fit record at least 0.3 s of fit_seconds, as the
    cell that made it does (a cell's time is as if it ran alone)."""
    (tmp_path / "steplab").mkdir()
    (tmp_path / "steplab" / "__init__.py").write_text(SLOW)
    spec = {
        "name": "slow",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "python_path": [str(tmp_path)],
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3, 5]}, "steps": [{"estimator": "steplab:SlowScaler"}]}
        ],
    }
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    frame = read_results(tmp_path / "out" / "results.csv")
    assert PROCESS.step_fits.hits == 4  # k=3 and k=5 of each fold
    assert (frame["fit_seconds"] >= 0.3).all()


def test_step_fits_are_dropped_least_recently_used_beyond_max_bytes():
    fits = StepFits(max_bytes=3 * 800)
    for i in range(5):
        fits.put(("k", i), (None, np.zeros((10, 10)), np.zeros(0), 1.0))
    assert len(fits) == 3
    assert fits.get(("k", 0)) is None and fits.get(("k", 4)) is not None
    assert fits.reused_seconds == 1.0 and (fits.hits, fits.misses) == (1, 1)


# --- the steps in results -------------------------------------------------------------------


def test_steps_are_in_the_params_the_id_and_the_param_columns(tmp_path):
    spec = {
        "name": "cols",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {
                "name": "knn",
                "params": {"k": 3, "tie": "lowest"},
                "steps": [{"name": "scale", "params": {"method": ["minmax", "robust"]}}],
            },
            {"name": "knn", "id": "plain", "params": {"k": 3}},
        ],
        "metrics": ["error"],
    }
    run_spec(spec, out=tmp_path, report=False, figures=False)
    frame = read_results(tmp_path / "results.csv")
    assert sorted(set(frame.algorithm)) == ["plain", "scale>knn"]
    assert sorted(set(frame[frame.algorithm == "scale>knn"]["param_scale__method"])) == ["minmax", "robust"]
    assert '"scale__method":"minmax"' in frame[frame.algorithm == "scale>knn"]["params"].iloc[0]
    # minmax scaling then kNN, by hand on the same folds
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import MinMaxScaler, RobustScaler

    vspec = validate_spec(spec)
    ds = vspec.datasets[0]
    for method, scaler in (("minmax", MinMaxScaler), ("robust", RobustScaler)):
        rows = _by_fold(frame, "scale>knn", params=f'"scale__method":"{method}"')
        for s in vspec.splits[0]:
            sc = scaler().fit(ds.X[s.train])
            knn = KNeighborsClassifier(3, algorithm="brute").fit(sc.transform(ds.X[s.train]), ds.y[s.train])
            error = float(np.mean(knn.predict(sc.transform(ds.X[s.test])) != ds.y[s.test]))
            assert rows[rows.fold == s.fold]["value"].item() == error


def test_params_for_and_set_reach_a_step_parameter(tmp_path):
    spec = {
        "name": "reach",
        "datasets": ["iris", "wine"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {
                "name": "knn",
                "steps": [{"name": "pca", "params": {"n_components": 2}}],
                "params_for": {"wine": {"pca__n_components": 5}},
            }
        ],
    }
    run_spec(spec, out=tmp_path / "a", overrides=["algorithms[0].params.k=3"], report=False, figures=False)
    frame = read_results(tmp_path / "a" / "results.csv")
    got = frame.astype({"param_pca__n_components": int}).groupby("dataset")["param_pca__n_components"]
    assert {k: sorted(set(v)) for k, v in got} == {"iris": [2], "wine": [5]}
    assert set(frame["param_k"].astype(int)) == {3}
    run_spec(
        spec,
        out=tmp_path / "b",
        overrides=["algorithms[0].steps[0].params.n_components=3"],
        report=False,
        figures=False,
    )
    frame = read_results(tmp_path / "b" / "results.csv")
    assert set(frame[frame.dataset == "iris"]["param_pca__n_components"].astype(int)) == {3}


def test_the_written_spec_reruns_with_nothing_to_do(tmp_path):
    """OUT/spec.yaml holds the steps with their defaults in their own params: a rerun of
    it finds every cell done."""
    spec = {
        "name": "again",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {
                "name": "knn",
                "params": {"k": [1, 3]},
                "steps": ["scale", {"name": "pca", "params": {"n_components": 2}}],
            }
        ],
    }
    first = run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    (tmp_path / "copy.yaml").write_bytes((tmp_path / "out" / "spec.yaml").read_bytes())
    again = run_spec(tmp_path / "copy.yaml", out=tmp_path / "out", report=False, figures=False)
    assert first.n_run == 4 and again.n_run == 0


# --- refused in one line ----------------------------------------------------------------------


def _refused(tmp_path, text, message):
    """``knnx validate`` and ``knnx run``: exit 2, the one line ``error: SPEC: message``,
    nothing written."""
    spec = tmp_path / "s.yaml"
    spec.write_text(textwrap.dedent(text))
    refused_by_cli(tmp_path, spec, message)


HEAD = """\
name: bad
datasets: [iris]
protocol: {kind: kfold, folds: 3}
"""

BAD = {
    "unknown step": (
        "algorithms: [{name: knn, steps: [scale, whiten]}]",
        "algorithms[0].steps[1].name: unknown step 'whiten'; known: allknn, cnn, drop3, encode, enn, fcnn, hmnei, ib3, icf, impute, itml, lfda, lmnn, lvq, multiedit, nca, ncr, oss, pca, renn, rmhc, rnn, scale, ssma, tomek_links (or estimator: "
        "'package.module:Class')",
    ),
    "unknown step parameter": (
        "algorithms: [{name: knn, steps: [{name: pca, params: {n_comp: 2}}]}]",
        "algorithms[0].steps[0].params.n_comp: unknown parameter for pca; known: copy, iterated_power, "
        "n_components, n_oversamples, power_iteration_normalizer, random_state, svd_solver, tol, whiten",
    ),
    "bad step value": (
        "algorithms: [{name: knn, steps: [{name: scale, params: {method: [standard, l2]}}]}]",
        "algorithms[0].steps[0].params.method: must be a str among {'minmax', 'robust', 'standard'}. Got 'l2' instead.",
    ),
    "a classifier as a step": (
        "algorithms: [{name: knn, steps: [{estimator: 'sklearn.svm:SVC'}]}]",
        "algorithms[0].steps[0].estimator: 'sklearn.svm:SVC' is a classifier; the classifier comes last, as the "
        "entry's name or estimator, not among its steps",
    ),
    "a sampler as the classifier": (
        "algorithms: [{estimator: 'imblearn.under_sampling:EditedNearestNeighbours', steps: [scale]}]",
        "algorithms[0].estimator: 'imblearn.under_sampling:EditedNearestNeighbours' is a sampler (fit_resample), "
        "not a classifier; a sampler goes among the entry's steps",
    ),
    "not a step": (
        "algorithms: [{name: knn, steps: [{estimator: 'sklearn.cluster:DBSCAN'}]}]",
        "algorithms[0].steps[0].estimator: 'sklearn.cluster:DBSCAN' is neither a transformer (fit and transform) "
        "nor a sampler (fit_resample)",
    ),
    "a step named twice": (
        "algorithms: [{name: knn, steps: [scale, scale]}]",
        "algorithms[0].steps[1]: 'scale' is already the id of steps[0]; give one an 'id'",
    ),
    "a parameter given twice": (
        "algorithms: [{name: knn, params: {pca__n_components: 2}, steps: [{name: pca, params: {n_components: 3}}]}]",
        "algorithms[0]: params.pca__n_components: also given as steps[0].params.n_components; give it once",
    ),
    "a step parameter of no step": (
        "algorithms: [{name: knn, params: {nca__max_iter: 2}, steps: [pca]}]",
        "algorithms[0].params.nca__max_iter: names no step of pca>knn before '__'; its steps: pca",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_steps_are_one_line(tmp_path, case):
    algorithms, message = BAD[case]
    _refused(tmp_path, HEAD + algorithms + "\n", message)


def test_steps_under_exact_lpo_are_refused(tmp_path):
    _refused(
        tmp_path,
        "name: bad\ndatasets: [iris]\nprotocol: {kind: lpo, p: 2}\nalgorithms: [{name: knn, steps: [scale]}]\n",
        "algorithms[0].steps: protocol lpo's exact closed form holds for a fixed distance on all rows; steps are "
        "fitted on each training part (use protocol kfold or partitions)",
    )


def test_nominal_codes_before_a_step_are_refused(tmp_path):
    _refused(
        tmp_path,
        "name: bad\ndatasets: [{name: keel.breast, categorical: keep, missing: drop_rows}]\nprotocol: {kind: "
        "partitions}\nalgorithms: [{name: knn, steps: [scale]}]\n",
        "datasets[0]: algorithms[0] (scale>knn) on 'keel.breast(categorical='keep',missing='drop_rows')': column "
        "'A1' holds nominal "
        "category codes (categorical: keep), which step scale would read as numbers; put an encode step first, or "
        "leave categorical out of the dataset entry to give it one-hot indicators",
    )


def test_a_transformer_that_drops_rows_is_refused_in_one_line(tmp_path):
    """A transformer of one's own whose transform returns fewer rows than it was given is
    probed at validation (on the first 20 rows of the first training part): one line."""
    (tmp_path / "steplab").mkdir()
    (tmp_path / "steplab" / "__init__.py").write_text(
        SPY.replace("        return X\n", "        return X[1:]\n")
    )
    _refused(
        tmp_path,
        f"""\
        name: drops
        datasets: [iris]
        protocol: {{kind: kfold, folds: 2}}
        python_path: [{tmp_path}]
        algorithms: [{{name: knn, steps: [{{estimator: "steplab:Spy"}}]}}]
        """,
        "datasets[0]: algorithms[0] (spy>knn) on 'iris': step spy: transform returned 19 rows for 20 (probed on 20 "
        "training rows); a transformer keeps every row (a step that removes or adds rows is a sampler, with "
        "fit_resample)",
    )


@pytest.mark.parametrize(
    ("estimator", "params", "dense"),
    [
        ("sklearn.preprocessing:OneHotEncoder", {"handle_unknown": "ignore"}, {"sparse_output": False}),
        ("sklearn.preprocessing:KBinsDiscretizer", {"n_bins": 3}, {"encode": "onehot-dense"}),
    ],
)
def test_a_transformer_returning_a_sparse_matrix_is_refused_at_validation(tmp_path, estimator, params, dense):
    """scikit-learn's OneHotEncoder and KBinsDiscretizer give sparse matrices by default:
    validation said ok, then every cell failed ("transform returned a sparse matrix").
    The probe sees it: one line, no warning of the probe's 20 rows on stderr; the dense
    option runs, and its cells equal the transformer applied by hand (the oracle)."""
    name = estimator.rpartition(":")[2].lower()
    spec = {
        "name": "sparse",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {"name": "knn", "params": {"k": 1}, "steps": [{"estimator": estimator, "params": params}]}
        ],
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec))
    refused_by_cli(
        tmp_path,
        path,
        f"datasets[0]: algorithms[0] ({name}>knn) on 'iris': step {name}: transform returned a sparse matrix "
        "(probed on 20 training rows); the classifier takes dense rows: set the step's dense output "
        "(OneHotEncoder: sparse_output: false; KBinsDiscretizer: encode: onehot-dense)",
    )
    spec["algorithms"][0]["steps"][0]["params"] = {**params, **dense}
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    errors = read_results(tmp_path / "out" / "results.csv").query("metric == 'error'")["value"].tolist()
    vspec = validate_spec(spec)
    ds = vspec.datasets[0]
    expected = []
    for split in vspec.splits[0]:
        step = import_object(estimator)(**params, **dense).fit(ds.X[split.train], ds.y[split.train])
        knn = KNNClassifier(k=1).fit(step.transform(ds.X[split.train]), ds.y[split.train])
        expected.append(float(np.mean(knn.predict(step.transform(ds.X[split.test])) != ds.y[split.test])))
    assert errors == pytest.approx(expected, abs=0)


def test_a_transformer_that_drops_rows_only_later_fails_its_cell_naming_the_step(tmp_path):
    """One that passes the probe and drops rows on larger inputs fails its cells with one
    line naming the step; the other cells run."""
    (tmp_path / "steplab").mkdir()
    (tmp_path / "steplab" / "__init__.py").write_text(
        SPY.replace("        return X\n", "        return X if len(X) <= 20 else X[1:]\n")
    )
    spec = {
        "name": "drops",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "python_path": [str(tmp_path)],
        "algorithms": [
            {"name": "knn", "params": {"k": 1}, "steps": [{"estimator": "steplab:Spy"}]},
            {"name": "knn", "id": "plain", "params": {"k": 1}},
        ],
    }
    with pytest.raises(CellError, match="2 of 4 cells failed") as failed:
        run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    assert (
        "failed: ValueError: step spy: transform returned 74 rows for 75; a transformer keeps every row (a step "
        "that removes or adds rows is a sampler, with fit_resample)" in str(failed.value)
    )
    frame = read_results(tmp_path / "out" / "results.csv")
    assert set(frame.algorithm) == {"plain"}


# --- estimator objects through the Python API -------------------------------------------------


def test_an_imblearn_pipeline_object_runs_as_the_entry_it_stands_for(tmp_path):
    """run_spec given make_pipeline(StandardScaler(), PCA(2), EditedNearestNeighbours(),
    KNeighborsClassifier(3, algorithm="brute")) writes it as steps and a classifier by
    import path (spec.yaml), and its errors are those of the pipeline fitted by hand on
    every partition, a grid over a step's parameter included."""
    from imblearn.pipeline import make_pipeline
    from imblearn.under_sampling import EditedNearestNeighbours
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import StandardScaler

    def pipeline(n=2):
        return make_pipeline(
            StandardScaler(), PCA(n), EditedNearestNeighbours(), KNeighborsClassifier(3, algorithm="brute")
        )

    spec = {
        "name": "api",
        "datasets": ["keel.wine"],
        "protocol": {"kind": "partitions"},
        "algorithms": [{"estimator": pipeline(), "params": {"pca__n_components": [2, 3]}}],
    }
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    frame = read_results(tmp_path / "out" / "results.csv")
    algorithm = "standardscaler>pca>editednearestneighbours>KNeighborsClassifier"
    assert set(frame.algorithm) == {algorithm}
    written = (tmp_path / "out" / "spec.yaml").read_text()
    assert "estimator: sklearn.neighbors:KNeighborsClassifier" in written
    assert "estimator: imblearn.under_sampling:EditedNearestNeighbours" in written
    vspec = validate_spec(spec)
    ds = vspec.datasets[0]
    for n in (2, 3):
        rows = _by_fold(frame, algorithm, params=f'"pca__n_components":{n},')
        for s in vspec.splits[0]:
            fitted = pipeline(n).fit(ds.X[s.train], ds.y[s.train])
            error = float(np.mean(fitted.predict(ds.X[s.test]) != ds.y[s.test]))
            assert rows[rows.fold == s.fold]["value"].item() == error


def _api_refused(estimator, message):
    from knnx.errors import SpecError

    spec = {
        "name": "api",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold"},
        "algorithms": [{"estimator": estimator}],
    }
    with pytest.raises(SpecError) as refused:
        validate_spec(spec)
    assert str(refused.value) == f"<spec>: algorithms[0].estimator: {message}"


def test_api_objects_a_spec_cannot_hold_are_one_line():
    from imblearn.pipeline import make_pipeline
    from imblearn.under_sampling import EditedNearestNeighbours
    from sklearn.ensemble import BaggingClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import StandardScaler

    _api_refused(
        make_pipeline(StandardScaler(), KNeighborsClassifier(), EditedNearestNeighbours()),
        "is a Pipeline with the classifier 'kneighborsclassifier' before its last step; the classifier comes last",
    )
    _api_refused(
        make_pipeline(StandardScaler(), EditedNearestNeighbours()),
        "is a Pipeline that ends with the sampler 'editednearestneighbours'; its last step is the classifier",
    )
    _api_refused(
        BaggingClassifier(KNeighborsClassifier()),
        "the estimator has estimator=KNeighborsClassifier(), which a spec cannot hold (numbers, texts, booleans, "
        "null, lists and mappings of them); give its import path and parameters in the spec instead",
    )
    _api_refused(
        KNeighborsClassifier,
        "is the class KNeighborsClassifier; give an instance made with its parameters, or its import path "
        "'package.module:Class'",
    )


# --- the built-in steps ------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["standard", "minmax", "robust"])
def test_scale_is_scikit_learns_scaler_bit_for_bit(method):
    """Scale(method) gives the bits of StandardScaler, MinMaxScaler and RobustScaler,
    missing values (NaN) left out of the statistics and kept."""
    from sklearn.preprocessing import MinMaxScaler, RobustScaler, StandardScaler

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4)) * [1, 10, 1e-3, 5] + [0, 3, 7, -2]
    X[rng.random(X.shape) < 0.1] = np.nan
    Q = rng.normal(size=(9, 4))
    peer = {"standard": StandardScaler, "minmax": MinMaxScaler, "robust": RobustScaler}[method]().fit(X)
    ours = Scale(method=method).fit(X)
    np.testing.assert_array_equal(ours.transform(X), peer.transform(X))
    np.testing.assert_array_equal(ours.transform(Q), peer.transform(Q))


def test_the_pipelines_benchmark_compares_like_with_like(monkeypatch):
    """benchmarks/pipelines.py on keel.iris with a small grid: knnx's tuned NCA -> kNN and
    GridSearchCV over the scikit-learn pipeline choose the same k and make the same
    errors on every partition, and knnx fits NCA (cv + 1) times per partition."""
    from conftest import load_script

    bench = load_script("benchmarks", "pipelines")
    monkeypatch.setattr(bench, "KS", [1, 3, 5])
    monkeypatch.setattr(bench, "CV", 2)
    _, k_ours, e_ours, fits = bench.knnx_run("keel.iris")
    _, k_peer, e_peer = bench.sklearn_run("keel.iris")
    assert k_ours == k_peer and e_ours == e_peer and len(k_peer) == 10
    assert fits == 10 * (2 + 1)


def test_two_entries_whose_steps_differ_need_ids_of_their_own(tmp_path):
    """Two entries named alike are two grids of one contestant only when their steps are
    of the same classes: a step of another class under the same id is refused."""
    (tmp_path / "steplab").mkdir()
    (tmp_path / "steplab" / "__init__.py").write_text(SPY)
    (tmp_path / "steplab" / "other.py").write_text(SPY)
    _refused(
        tmp_path,
        f"""\
        name: twins
        datasets: [iris]
        protocol: {{kind: kfold, folds: 2}}
        python_path: [{tmp_path}]
        algorithms:
          - {{name: knn, steps: [{{estimator: "steplab:Spy"}}]}}
          - {{name: knn, params: {{k: 3}}, steps: [{{estimator: "steplab.other:Spy"}}]}}
        """,
        "algorithms[1].id: 'spy>knn' is already the id of algorithms[0]; give each a distinct id",
    )


HOSTILE = '''
import os

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class BadLabels(BaseEstimator):
    """A sampler that returns labels it was not given."""

    def fit_resample(self, X, y):
        return X, np.asarray(y) + 100

    def fit(self, X, y):
        return self


class Infinite(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        self.n_ = len(X)
        return self

    def transform(self, X):
        X = np.array(X, dtype=float)
        if len(X) != 20:  # validation's probe passes
            X[0, 0] = np.inf
        return X


class Raises(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        raise ValueError("boom in fit")

    def transform(self, X):
        return X


class Exits(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        os._exit(3)

    def transform(self, X):
        return X
'''


def test_steps_that_misbehave_fail_their_cells_and_the_run_goes_on(tmp_path):
    """A sampler returning labels it was not given, a transformer returning an infinity,
    one whose fit raises and one whose fit calls os._exit: each fails its cells with one
    line naming the step or its error; the other contestant's rows are written."""
    import csv

    (tmp_path / "steplab").mkdir()
    (tmp_path / "steplab" / "__init__.py").write_text(HOSTILE)
    bad = ["BadLabels", "Infinite", "Raises", "Exits"]
    spec = {
        "name": "hostile",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "python_path": [str(tmp_path)],
        "algorithms": [{"name": "knn", "id": "plain", "params": {"k": 1}}]
        + [
            {"name": "knn", "id": name, "params": {"k": 1}, "steps": [{"estimator": f"steplab:{name}"}]}
            for name in bad
        ],
    }
    with pytest.raises(CellError, match="8 of 10 cells failed"):
        run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    assert set(read_results(tmp_path / "out" / "results.csv").algorithm) == {"plain"}
    with open(tmp_path / "out" / "failures.csv", newline="") as f:
        errors = {}
        for row in csv.DictReader(f):
            errors.setdefault(row["algorithm"], set()).add(row["error"].split(" failed: ", 1)[1])
    assert errors == {
        "BadLabels": {
            "ValueError: step badlabels: fit_resample returned labels that are not among those it was given"
        },
        "Infinite": {"ValueError: step infinite: transform returned an infinite value"},
        "Raises": {"ValueError: boom in fit"},
        "Exits": {"ProcessExit: os._exit(3) called"},
    }


def test_editing_a_step_of_ones_own_reruns_its_cells_only(tmp_path):
    """The cell key holds each step's code: an edit of the step's module reruns the
    cells of the entry with that step, and only those; a comment alone reruns nothing
    (what Python compiles is the same)."""
    _write_spy(tmp_path)
    spec = {
        "name": "edit",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "python_path": [str(tmp_path)],
        "algorithms": [
            {"name": "knn", "id": "plain", "params": {"k": 1}},
            {"name": "knn", "params": {"k": 1}, "steps": [{"estimator": "steplab:Spy"}]},
        ],
    }
    assert run_spec(spec, out=tmp_path / "out", report=False, figures=False).n_run == 4
    assert run_spec(spec, out=tmp_path / "out", report=False, figures=False).n_run == 0
    (tmp_path / "steplab" / "__init__.py").write_text(SPY + "\n# a comment\n")
    del sys.modules["steplab"]
    assert run_spec(spec, out=tmp_path / "out", report=False, figures=False).n_run == 0
    (tmp_path / "steplab" / "__init__.py").write_text(SPY + "\nEDITED = True\n")
    del sys.modules["steplab"]
    again = run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    assert (again.n_run, again.n_skipped) == (2, 2)
    assert again.reruns == ("2 cells run again: steplab/__init__.py changed",)


# --- encode: one dataset entry, kept nominal codes for hvdm and one-hot for the others ----------


def _one_hot_by_hand(X_train, X, nominal):
    """Each column of X in order: scikit-learn's OneHotEncoder(handle_unknown="ignore")
    fitted on the training rows for a nominal one, the column itself otherwise."""
    from sklearn.preprocessing import OneHotEncoder

    parts = []
    for j in range(X.shape[1]):
        if j in nominal:
            encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X_train[:, [j]])
            parts.append(encoder.transform(X[:, [j]]))
        else:
            parts.append(X[:, [j]])
    return np.hstack(parts)


def test_encode_lets_a_random_forest_run_beside_hvdm_on_one_kept_entry(tmp_path):
    """One dataset entry with categorical: keep (one id): kNN under hvdm reads the nominal
    codes, a random forest behind encode reads one-hot indicators fitted on each training
    part. The forest's errors equal scikit-learn's RandomForestClassifier on columns
    encoded by OneHotEncoder(handle_unknown="ignore") per nominal column, fold by fold on
    KEEL's partitions of german; hvdm's equal those of knn run alone on the entry."""
    from sklearn.ensemble import RandomForestClassifier

    entry = {"name": "keel.german", "categorical": "keep"}
    spec = {
        "name": "mixed",
        "datasets": [entry],
        "protocol": {"kind": "partitions"},
        "algorithms": [
            {"name": "knn", "id": "knn_hvdm", "params": {"k": 5, "metric": "hvdm"}},
            {
                "estimator": "sklearn.ensemble:RandomForestClassifier",
                "id": "rf",
                "params": {"n_estimators": 25, "random_state": 0},
                "steps": ["encode"],
            },
        ],
    }
    run_spec(spec, out=tmp_path / "both", report=False, figures=False)
    frame = read_results(tmp_path / "both" / "results.csv")
    assert len(set(frame.dataset)) == 1
    vspec = validate_spec(spec)
    ds = vspec.datasets[0]
    assert ds.nominal  # german keeps its nominal attributes as codes
    rf = _by_fold(frame, "rf")
    for s in vspec.splits[0]:
        X_train = _one_hot_by_hand(ds.X[s.train], ds.X[s.train], set(ds.nominal))
        X_test = _one_hot_by_hand(ds.X[s.train], ds.X[s.test], set(ds.nominal))
        forest = RandomForestClassifier(n_estimators=25, random_state=0).fit(X_train, ds.y[s.train])
        error = float(np.mean(forest.predict(X_test) != ds.y[s.test]))
        assert rf[rf.fold == s.fold]["value"].item() == error
    alone = {**spec, "name": "alone", "algorithms": spec["algorithms"][:1]}
    run_spec(alone, out=tmp_path / "alone", report=False, figures=False)
    hvdm_alone = read_results(tmp_path / "alone" / "results.csv")
    np.testing.assert_array_equal(
        _by_fold(frame, "knn_hvdm")["value"], _by_fold(hvdm_alone, "knn_hvdm")["value"]
    )


def test_encode_equals_the_by_hand_one_hot_with_unseen_codes_and_missing_values():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 50), rng.normal(size=50), rng.integers(0, 3, 50)]).astype(float)
    X[40, 0] = np.nan  # a missing code in a test row: 0 in every indicator of its column
    train, test = X[:30], X[30:]
    train = train[train[:, 2] != 2]  # code 2 of column 2 unseen in training
    assert 2 in test[:, 2]
    ours = Encode(nominal=[0, 2]).fit(train)
    np.testing.assert_array_equal(ours.transform(test), _one_hot_by_hand(train, test, {0, 2}))
    assert ours.transform(X[40:41])[0, :4].tolist() == [0.0, 0.0, 0.0, 0.0]
