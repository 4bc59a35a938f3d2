"""The steps' limits, refused at validation in one line: iteration and size counts capped
in :mod:`knnx.limits`, and what a step is given of each training part (its rows and
features after the steps before it, :mod:`knnx.steps.shapes`) against its
``n_components`` and the hooks of its class."""

from numbers import Integral

import numpy as np
import pytest
from conftest import refused_by_cli

from knnx import limits
from knnx.datasets import load_dataset
from knnx.errors import SpecError
from knnx.estimators.knn import KNNClassifier
from knnx.experiment.parts import contestant
from knnx.spec import validate_spec
from knnx.steps import STEPS, resolve_steps
from knnx.steps.shapes import TrainingPart, seen_by_steps

# (step, parameter, lowest value, limit, other parameters, "or None" in the wording)
CAPS = [
    ("rmhc", "n_iter", 0, limits.MAX_SEARCH, {}, False),
    ("ssma", "max_evaluations", 1, limits.MAX_SEARCH, {}, False),
    ("ssma", "population", 4, limits.MAX_POPULATION, {}, False),
    ("lvq", "n_iter", 1, limits.MAX_UPDATES, {}, True),
    ("multiedit", "patience", 1, limits.MAX_PATIENCE, {}, False),
    ("lmnn", "max_iter", 1, limits.MAX_LEARNER_ITERATIONS, {"k": 1}, False),
    ("nca", "max_iter", 1, limits.MAX_LEARNER_ITERATIONS, {}, False),
    ("itml", "max_iter", 1, limits.MAX_LEARNER_ITERATIONS, {}, False),
    ("itml", "n_constraints", 1, limits.MAX_CONSTRAINTS, {}, True),
    ("pca", "iterated_power", 0, limits.MAX_RANDOMIZED, {"svd_solver": "randomized"}, False),
    ("pca", "n_oversamples", 1, limits.MAX_RANDOMIZED, {"svd_solver": "randomized"}, False),
]


def _spec(steps, datasets=("iris",)):
    return {
        "name": "limits",
        "datasets": list(datasets),
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [{"name": "knn", "params": {"k": 1}, "steps": steps}],
    }


def _expected(pname, low, high, value, knnx_table, or_none):
    if knnx_table:  # knnx's own tables (the selections)
        return f"must be an integer in [{low}, {high}]{' or None' if or_none else ''}, got {value}"
    if pname == "iterated_power":  # scikit-learn's tables (PCA and the metric learners)
        return f"must be a str among {{'auto'}} or an int in the range [{low}, {high}]. Got {value} instead."
    return f"must be an int in the range [{low}, {high}]{' or None' if or_none else ''}. Got {value} instead."


@pytest.mark.parametrize(
    ("step", "pname", "low", "high", "others", "or_none"), CAPS, ids=[f"{c[0]}-{c[1]}" for c in CAPS]
)
def test_a_capped_count_is_refused_above_its_limit_and_accepted_at_it(
    step, pname, low, high, others, or_none
):
    """Above the limit (and at 10^20, beyond 64-bit integers) validation refuses the
    setting in one line naming the entry, the step, the parameter and its range; at the
    limit it is accepted (no cell is run: at the limit a cell takes seconds)."""
    knnx_table = STEPS[step].startswith("knnx.reduction")
    for value in (high + 1, 10**20):
        with pytest.raises(SpecError) as refused:
            validate_spec(_spec([{"name": step, "params": {**others, pname: value}}]))
        expected = _expected(pname, low, high, value, knnx_table, or_none)
        if value == 10**20 and not knnx_table:  # no scikit-learn table sees it
            expected = f"{value} is beyond 64-bit integers; no estimator can use it"
        assert str(refused.value) == f"<spec>: algorithms[0].steps[0].params.{pname}: {expected}"
    validated = validate_spec(_spec([{"name": step, "params": {**others, pname: high}}]))
    assert len(validated.cells) == 3


def test_the_reported_iteration_counts_are_refused_by_the_command_line(tmp_path):
    """The finding's spec: rmhc with n_iter 10^9 (a 25-minute cell) is refused by
    ``knnx validate`` and ``knnx run``, exit 2, nothing written."""
    rows = "".join(f"{np.sin(i):.3f},{np.cos(3 * i):.3f},{i % 2}\n" for i in range(30))
    (tmp_path / "small.csv").write_text("a,b,label\n" + rows)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\ndatasets: [{csv: small.csv, label: label}]\nprotocol: {kind: kfold, folds: 3}\n"
        "algorithms:\n  - {name: knn, params: {k: 1}, steps: [{name: rmhc, params: {n_iter: 1000000000}}]}\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "algorithms[0].steps[0].params.n_iter: must be an integer in [0, 100000], got 1000000000",
    )


def _open_integers(name):
    """The integer parameters of a built-in step without an upper bound in the table
    validation checks its values against (its class's, with knnx's limits)."""
    from sklearn.utils._param_validation import Interval as SkInterval

    from knnx.estimators.params import AnyOf, Interval

    (step,), _ = resolve_steps([name])
    table, found = step.facts.constraints, set()
    for pname, constraint in table.items():
        parts = constraint if isinstance(constraint, list) else [constraint]
        parts = [c for p in parts for c in (p.constraints if isinstance(p, AnyOf) else [p])]
        for c in parts:
            if isinstance(c, Interval) and c.integer and c.high is None:
                found.add(pname)
            if isinstance(c, SkInterval) and c.type is Integral and c.right is None:
                found.add(pname)
    return found


def test_every_open_integer_of_a_step_is_bounded_by_the_data_or_harmless():
    """A step's integer parameter without a fixed upper limit is a count the data
    bound (k, n_components: checked against each training part as the step sees it),
    or one whose largest value costs nothing: renn's max_iter (every application
    removes a row), multiedit's n_blocks (more blocks than rows: no round), lmnn's
    recompute (steps between two searches of the active set) and min_iter (max_iter,
    capped, stops the descent: a min_iter above it is the idiom for "never stop on
    tol")."""
    open_ = {(name, p) for name in STEPS for p in _open_integers(name)}
    data_bounded = {
        (name, "k") for name in ("cnn", "fcnn", "enn", "renn", "allknn", "ncr", "drop3", "icf", "rmhc")
    }
    data_bounded |= {("lmnn", "k"), ("lfda", "k"), ("lmnn", "n_components"), ("lfda", "n_components")}
    data_bounded |= {("nca", "n_components"), ("pca", "n_components")}
    harmless = {("renn", "max_iter"), ("multiedit", "n_blocks"), ("lmnn", "recompute"), ("lmnn", "min_iter")}
    assert open_ == data_bounded | harmless


def test_the_harmless_open_integers_run_at_10_to_the_18():
    from knnx.metric_learning import LFDA, LMNN
    from knnx.reduction import RENN, Multiedit

    ds = load_dataset("iris")
    rows = np.random.default_rng(0).permutation(150)[:60]
    X, y = ds.X[rows], ds.y[rows]
    for step in (
        RENN(max_iter=10**18),
        Multiedit(n_blocks=10**18),
        LMNN(recompute=10**18, min_iter=10**18, max_iter=20),
        LFDA(k=10**18),
    ):
        out = step.fit_resample(X, y)[0] if hasattr(step, "fit_resample") else step.fit(X, y).transform(X)
        assert len(out) and np.isfinite(out).all()


def test_itml_default_constraints_are_refused_beyond_the_limit():
    """ITML's n_constraints=None draws 20 C^2 pairs: above the limit for more than 70
    classes, so a dataset of 71 classes needs n_constraints set."""
    from knnx.metric_learning import ITML

    assert ITML._data_problems({"n_constraints": None}, 100, 4, 70) == []
    assert ITML._data_problems({"n_constraints": None}, 100, 4, 71) == [
        "n_constraints=None draws 20 C^2 = 100820 pairs of each kind for the 71 classes, more than the limit of "
        "100000; set n_constraints"
    ]
    assert ITML._data_problems({"n_constraints": 1000}, 100, 4, 71) == []


@pytest.mark.parametrize(
    ("given", "line"),
    [
        (
            {"bounds": [0.5, 8.0]},
            "algorithms[0].steps[0].params.bounds: must be an array-like or None. Got 0.5 instead; a list "
            "is a grid of values (here 2 of them): one array is written as a grid of one value, "
            "bounds: [[0.5, 8.0]]",
        ),
        (
            {"prior": np.eye(4).astype(int).tolist()},
            "datasets[0]: algorithms[0] (itml>knn) on 'iris': step itml: prior must be a symmetric 4 x 4 "
            "matrix, got shape (4,); a list is a grid of values (here 4 of them): one array is written as a "
            "grid of one value, prior: [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]]",
        ),
        (  # one matrix of the wrong size: no grid to speak of
            {"prior": [[[1, 0], [0, 1]]]},
            "datasets[0]: algorithms[0] (itml>knn) on 'iris': step itml: prior must be a symmetric 4 x 4 "
            "matrix, got shape (2, 2)",
        ),
    ],
)
def test_an_array_written_as_a_plain_list_is_refused_with_how_to_write_it(given, line):
    """In a spec a list is a grid axis: ITML's bounds [0.5, 8.0] were read as the grid
    0.5, 8.0, and a 4 x 4 prior as four priors of shape (4,); the refusal said so only
    in scikit-learn's words. It now says how one array is written, and that form runs."""
    spec = _spec([{"name": "itml", "params": given}])
    with pytest.raises(SpecError) as refused:
        validate_spec(spec)
    assert str(refused.value) == f"<spec>: {line}"
    if "bounds" in given or len(given["prior"]) == 4:
        wrapped = {name: [value] for name, value in given.items()}
        cells = validate_spec(_spec([{"name": "itml", "params": wrapped}])).cells
        assert len(cells) == 3  # one setting, 3 folds: the array as given
        assert all(cell.params[f"itml__{name}"] == value for cell in cells for name, value in given.items())


# --- n_components against what the step is given ---------------------------------------


def _refused(spec, line):
    with pytest.raises(SpecError) as refused:
        validate_spec(spec)
    assert str(refused.value) == f"<spec>: datasets[0]: {line}"


@pytest.mark.parametrize("r", [0, 5, 10])
def test_pca_n_components_outside_1_to_min_rows_features_is_refused(r):
    """The finding's spec: pca with n_components 0 or above iris's 4 columns failed every
    cell and was accepted."""
    _refused(
        _spec([{"name": "pca", "params": {"n_components": r}}]),
        f"algorithms[0] (pca>knn) on 'iris': step pca: n_components={r} must be between 1 and 4 = "
        "min(n_samples, n_features) of a training part as the step sees it (100 rows, 4 features)",
    )
    validate_spec(_spec([{"name": "pca", "params": {"n_components": 4}}]))


def test_pca_is_checked_after_the_steps_before_it_and_under_arpack():
    _refused(
        _spec(
            [
                "scale",
                {"name": "lmnn", "params": {"n_components": 2}},
                {"name": "pca", "params": {"n_components": 3}},
            ]
        ),
        "algorithms[0] (scale>lmnn>pca>knn) on 'iris': step pca: n_components=3 must be between 1 and 2 = "
        "min(n_samples, n_features) of a training part as the step sees it (100 rows, 2 features)",
    )
    _refused(
        _spec(["enn", {"name": "pca", "params": {"n_components": 4, "svd_solver": "arpack"}}]),
        "algorithms[0] (enn>pca>knn) on 'iris': step pca: n_components=4 must be between 1 and 3 = "
        "min(n_samples, n_features) - 1 (svd_solver 'arpack') of a training part as the step sees it (at most "
        "100 rows, 4 features)",
    )
    validate_spec(_spec(["enn", {"name": "pca", "params": {"n_components": 3, "svd_solver": "arpack"}}]))


def test_a_learners_n_components_and_hooks_are_checked_after_other_steps():
    """lmnn, nca and lfda after a step that changes the features (the check held for the
    first step only), itml's prior against the features it is given, lmnn's class rows
    after scale, a selection's k after scale."""
    for learner in ("lmnn", "nca", "lfda"):
        _refused(
            _spec(
                [
                    {"name": "pca", "params": {"n_components": 2}},
                    {"name": learner, "params": {"n_components": 3}},
                ]
            ),
            f"algorithms[0] (pca>{learner}>knn) on 'iris': step {learner}: n_components=3 exceeds the 2 features the "
            "step is given",
        )
    eye = np.eye(4).tolist()
    _refused(
        _spec([{"name": "pca", "params": {"n_components": 2}}, {"name": "itml", "params": {"prior": [eye]}}]),
        "algorithms[0] (pca>itml>knn) on 'iris': step itml: prior must be a symmetric 2 x 2 matrix, got shape (4, 4)",
    )
    _refused(
        _spec(["scale", {"name": "lmnn", "params": {"k": 40}}]),
        "algorithms[0] (scale>lmnn>knn) on 'iris': step lmnn: class 'setosa' has 33 rows in a training part; the "
        "step needs 41 of each class (k = 40 target neighbours and the row itself)",
    )
    _refused(
        _spec(["scale", {"name": "cnn", "params": {"k": 10**9}}]),
        "algorithms[0] (scale>cnn>knn) on 'iris': step cnn: k=1000000000 must be below the 100 rows the step is given",
    )


@pytest.mark.parametrize("selection", ["cnn", "tomek_links", "enn"])
def test_lmnn_after_a_selection_is_held_to_the_rows_the_classes_have_at_most(selection):
    """A selection only removes rows: a class too small for LMNN before it is too small
    after it. Validation checked the class rows after scale only, and every cell failed."""
    _refused(
        _spec([selection, {"name": "lmnn", "params": {"k": 40}}]),
        f"algorithms[0] ({selection}>lmnn>knn) on 'iris': step lmnn: class 'setosa' has at most 33 rows in a "
        "training part after the selections before it; the step needs 41 of each class (k = 40 target neighbours "
        "and the row itself)",
    )
    validate_spec(_spec([selection, {"name": "lmnn", "params": {"k": 3}}]))


@pytest.mark.parametrize(("small", "accepted"), [(16, True), (12, False), (8, False)])
def test_a_tuned_entrys_steps_are_held_to_its_inner_training_folds(tmp_path, small, accepted):
    """Under tune: LMNN is fitted on the inner training folds: with 8 rows of a class,
    2-fold CV leaves 4 in each training part (k + 1 for k = 3: validation said ok) and 2
    in each inner fold, where every cell failed. Validation now checks the inner folds
    tune: makes (its seeds). Oracle: the run itself: what validation accepts runs every
    cell, and 16 rows (4 in an inner fold) is accepted."""
    from knnx.experiment.runner import run_spec
    from knnx.results import read_results

    rng = np.random.default_rng(0)
    y = np.array(["big"] * 40 + ["small"] * small)
    X = rng.normal(size=(len(y), 3)) + (y == "small")[:, None]
    lines = ["a,b,c,label", *(f"{r[0]},{r[1]},{r[2]},{c}" for r, c in zip(X, y, strict=True))]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    spec = {
        "name": "inner",
        "seed": 2,
        "datasets": [{"csv": str(tmp_path / "d.csv"), "id": "S"}],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3]}, "steps": ["lmnn"], "tune": {"cv": 2}}],
    }
    if not accepted:
        inner = small // 2 - small // 4
        with pytest.raises(SpecError) as refused:
            validate_spec(spec)
        assert str(refused.value) == (
            f"<spec>: datasets[0]: algorithms[0] (lmnn>knn) on 'S': step lmnn: class 'small' has {inner} rows in an "
            "inner training fold (tune: cv = 2); the step needs 4 of each class (k = 3 target neighbours and the "
            "row itself)"
        )
        spec["algorithms"][0].pop("tune")  # the outer training parts alone: 4 rows and more, accepted
        validate_spec(spec)
        return
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    frame = read_results(tmp_path / "out" / "results.csv")
    assert sorted(frame.loc[frame["metric"] == "error", "fold"]) == [0, 1]


def test_encode_counts_the_categories_of_each_training_part():
    """heart with its nominal codes kept: encode gives 24 features in its smallest
    training part (a category absent there), so pca's 25 would fail one cell."""
    spec = _spec(
        ["encode", {"name": "pca", "params": {"n_components": 25}}],
        [{"name": "heart", "categorical": "keep"}],
    )
    _refused(
        spec,
        "algorithms[0] (encode>pca>knn) on 'heart(categorical='keep')': step pca: n_components=25 must be between 1 "
        "and 24 = min(n_samples, n_features) of a training part as the step sees it (180 rows, 24 features)",
    )
    spec["algorithms"][0]["steps"][1]["params"]["n_components"] = 24
    validate_spec(spec)


def _missing_csv(tmp_path):
    """30 rows, 4 columns: 'c' has values in rows 0 and 1 only, 'd' misses every third."""
    rng = np.random.default_rng(1)
    lines = ["a,b,c,d,label"]
    for i in range(30):
        c = f"{rng.normal():.3f}" if i < 2 else ""
        d = "" if i % 3 == 0 else f"{rng.normal():.3f}"
        lines.append(f"{rng.normal():.3f},{rng.normal():.3f},{c},{d},{i % 2}")
    (tmp_path / "gaps.csv").write_text("\n".join(lines) + "\n")
    return load_dataset({"csv": "gaps.csv", "label": "label", "missing": "keep"}, base_dir=tmp_path)


CHAINS = [
    ("heart", ["encode", "pca", {"name": "lmnn", "params": {"n_components": 3}}]),
    (
        "heart",
        [
            {"name": "enn", "params": {"metric": "heom"}},
            "encode",
            "scale",
            {"name": "pca", "params": {"n_components": 0.9}},
            "nca",
        ],
    ),
    ("iris", [{"name": "lvq", "params": {"fraction": 0.5}}, "encode", "itml", "lfda"]),
    ("gaps", ["impute", "scale", "pca"]),
    ("gaps", [{"name": "impute", "params": {"add_indicator": True}}, "pca", "lmnn"]),
    ("gaps", [{"name": "impute", "params": {"keep_empty_features": True}}, "lfda"]),
]


@pytest.mark.filterwarnings("ignore:Skipping features without any observed values")
@pytest.mark.parametrize(
    ("data", "entries"),
    CHAINS,
    ids=[">".join(e if isinstance(e, str) else e["name"] for e in c[1]) for c in CHAINS],
)
def test_the_features_each_step_is_given_are_those_it_is_fitted_on(tmp_path, data, entries):
    """Oracle: each step of a chain fitted as a cell fits it (the runner's contestant) on
    training parts of the dataset is given as many features as seen_by_steps says
    (exactly, or at most where it says a bound), in a part where the column 'c' of
    gaps.csv has no value (impute drops it) and in one where it has."""
    if data == "gaps":
        ds = _missing_csv(tmp_path)
    else:
        ds = load_dataset({"name": "heart", "categorical": "keep"} if data == "heart" else data)
    steps, problems = resolve_steps(entries)
    assert problems == []
    settings = [
        {**s.facts.defaults, **(e.get("params", {}) if isinstance(e, dict) else {})}
        for s, e in zip(steps, entries, strict=True)
    ]
    setting = {
        "k": 1,
        **{f"{s.id}__{k}": v for s, own in zip(steps, settings, strict=True) for k, v in own.items()},
    }
    n = len(ds.y)
    for train in (np.arange(2, n), np.arange(n - 2)):
        chain = contestant(KNNClassifier, [(s.id, s.cls) for s in steps], setting, None, ds, 0)
        chain.fit(ds.X[train], ds.y[train])
        fitted = [step.n_features_in_ for _, step, _ in chain.steps_]
        seen = seen_by_steps(steps, settings, ds, TrainingPart(ds, train))
        for step, width, said in zip(steps, fitted, seen, strict=True):
            assert said.columns is not None, step.id
            assert width == said.columns if said.columns_exact else width <= said.columns, (
                step.id,
                width,
                said,
            )
