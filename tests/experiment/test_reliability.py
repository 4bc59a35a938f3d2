"""Reliability: result files that read back exactly, class codes independent of the process,
control characters refused or escaped, and one-line errors for data and OS faults."""

import re

import numpy as np
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import ResultsError
from knnx.results import (
    CURVE_COLUMNS,
    LEDGER_COLUMNS,
    read_curves,
    read_ledger,
    read_results,
    rows_to_csv,
)

# Round trips through files: also run under each pandas of make test-pandas.
pytestmark = pytest.mark.pandas_io

runner = CliRunner()


# --- floats read back exactly, whatever the pandas version -------------------------------


def _hard_floats(n=2000, seed=0):
    """Floats whose shortest repr has 16-17 significant digits (where pandas' parser before
    3.1 rounds to a neighbour), plus the extremes of float64."""
    rng = np.random.default_rng(seed)
    values = list(rng.random(n)) + list(rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n))
    values += [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3]
    values += [0.07832422586520947, float("inf"), float("-inf")]
    return [float(v) for v in values]


def _row(i, value):
    return {
        "experiment": "e",
        "dataset": "NA",
        "algorithm": "knn",
        "params": '{"k":1}',
        "protocol": '{"kind":"predefined"}',
        "repeat": i,
        "fold": 0,
        "seed": 2**63 - 1,
        "metric": "error",
        "value": value,
        "n_train": 3,
        "n_test": 4,
        "fit_seconds": 0.25,
        "predict_seconds": 1e-7,
    }


def test_results_floats_read_back_bit_for_bit(tmp_path):
    values = _hard_floats()
    finite = [v if np.isfinite(v) else 0.5 for v in values]  # no metric is infinite: a value may not be
    seconds = [abs(v) for v in finite]  # a time is a finite number >= 0 (-0.0 included)
    path = tmp_path / "results.csv"
    path.write_text(
        rows_to_csv(
            [
                {
                    **_row(i, v),
                    "metric": "objective",
                    "value": f,
                    "fit_seconds": s,
                }  # any float: a reported quantity
                for i, (v, f, s) in enumerate(zip(values, finite, seconds, strict=True))
            ],
            header=True,
        )
    )
    frame = read_results(path)
    got = frame["value"].to_numpy()
    assert got.dtype == np.float64
    assert got.view(np.int64).tolist() == np.array(finite).view(np.int64).tolist()  # -0.0 included
    assert (
        frame["fit_seconds"].to_numpy().view(np.int64).tolist() == np.array(seconds).view(np.int64).tolist()
    )
    assert frame["seed"].tolist() == [2**63 - 1] * len(values)
    assert frame["repeat"].tolist() == list(range(len(values)))
    assert frame["dataset"].tolist() == ["NA"] * len(values)  # a name, not a missing value


def test_nan_values_read_back_as_nan(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(rows_to_csv([_row(0, float("nan"))], header=True))
    assert np.isnan(read_results(path)["value"].iloc[0])


def test_curves_and_ledger_read_back_exactly(tmp_path):
    values = [v if np.isfinite(v) else 0.5 for v in _hard_floats(300)]  # a curve is finite (or NaN)
    base = {"experiment": "e", "dataset": "d", "algorithm": "unn", "params": "{}", "repeat": 0, "fold": 1}
    rows = [{**base, "iteration": i, "series": "train_error", "value": v} for i, v in enumerate(values)]
    (tmp_path / "curves.csv").write_text(rows_to_csv(rows, header=True, columns=CURVE_COLUMNS))
    got = read_curves(tmp_path / "curves.csv")["value"].to_numpy()
    assert got.view(np.int64).tolist() == np.array(values).view(np.int64).tolist()
    ledger = [
        {"cell_key": "ab" * 32, "dataset": "d", "algorithm": "knn", "params": "{}", "repeat": 2, "fold": 3}
    ]
    (tmp_path / "cells.csv").write_text(rows_to_csv(ledger, header=True, columns=LEDGER_COLUMNS))
    assert read_ledger(tmp_path / "cells.csv") == {("d", "knn", "{}", 2, 3): "ab" * 32}


@pytest.mark.parametrize(
    ("column", "text", "expected"),
    [
        ("value", "abc", "column 'value' line 3: 'abc' is not a number"),
        ("value", "", "column 'value' line 3: '' is not a number"),
        ("repeat", "1.5", "column 'repeat' line 3: '1.5' is not an integer"),
        ("fold", "x", "column 'fold' line 3: 'x' is not an integer"),
        ("seed", str(2**64), f"column 'seed' line 3: '{2**64}' is not an integer"),
    ],
)
def test_a_non_numeric_cell_in_a_numeric_column_is_one_line(tmp_path, column, text, expected):
    rows = [_row(0, 0.5), {**_row(1, 0.25), column: text}]
    path = tmp_path / "results.csv"
    path.write_text(rows_to_csv(rows, header=True))
    with pytest.raises(ResultsError) as err:
        read_results(path)
    assert str(err.value) == f"{path}: {expected}"
    result = runner.invoke(app, ["table", str(path)])
    assert result.exit_code == 2
    assert result.output == f"error: {path}: {expected}\n"


def test_the_pandas_under_test_is_the_one_asked_for():
    """`make test-pandas` runs these tests under older pandas releases (PYTHONPATH); this
    proves the shadowing took effect."""
    import os

    import pandas

    expected = os.environ.get("KNNX_EXPECT_PANDAS")
    if not expected:
        pytest.skip("only under make test-pandas")
    assert pandas.__version__ == expected


def test_csv_data_loads_to_the_same_bits_whatever_the_pandas(tmp_path):
    """Feature values are parsed with Python's float (correctly rounded): pandas' parser
    before 3.1 puts about a third of these 17-digit values on a neighbouring float."""
    from knnx.datasets import load_dataset

    values = _hard_floats(500)
    values = [v for v in values if np.isfinite(v) and abs(v) < 1e100]
    lines = ["a,label"] + [f"{v!r},{'xy'[i % 2]}" for i, v in enumerate(values)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    X = load_dataset({"csv": "d.csv"}, base_dir=tmp_path).X[:, 0]
    assert X.view(np.int64).tolist() == np.array(values).view(np.int64).tolist()


@pytest.mark.parametrize("cell", ["1_0", "\u0661", "0x10", "nan(1)", "1e", "--1"])
def test_only_ascii_decimal_numbers_are_numbers(tmp_path, cell):
    """Python's float() reads "1_0" and Arabic-Indic digits; a CSV cell must be a plain
    decimal number (as pandas reads it) or it is text."""
    from knnx.datasets import load_dataset
    from knnx.errors import DataError

    (tmp_path / "d.csv").write_text(f"a,label\n1,x\n{cell},y\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"column 'a' line 3: .* is not a number"):
        load_dataset({"csv": "d.csv"}, base_dir=tmp_path)


# --- class codes depend on the labels only -----------------------------------------------


def _classes_in_a_fresh_process(tmp_path, hash_seed, text):
    import os
    import subprocess
    import sys

    (tmp_path / "d.csv").write_text(text)
    code = (
        "from knnx.datasets import load_dataset\n"
        "from knnx.errors import DataError\n"
        "try:\n"
        "    print(list(load_dataset({'csv': 'd.csv'}).classes))\n"
        "except DataError as exc:\n"
        "    print('DataError:', exc)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_one_number_spelt_two_ways_is_refused_in_every_process(tmp_path):
    text = "a,label\n1,1\n2,01\n3,1.0\n4,1\n5,01\n6,1.0\n"
    seen = {_classes_in_a_fresh_process(tmp_path, seed, text) for seed in (1, 2, 3)}
    assert seen == {
        "DataError: d.csv: class labels '01' and '1' are the same number written two ways; write each "
        "class one way (or give the classes names that are not numbers)"
    }


def test_class_order_is_the_same_in_every_process(tmp_path):
    # numbers in numeric order, then the other labels in text order; ' x' and 'x' are two classes
    text = "a,label\n1,x\n2, x\n3,10\n4,9\n5,-2.5\n6,B\n7,b\n8,x\n9,\u00e9\n"
    seen = {_classes_in_a_fresh_process(tmp_path, seed, text) for seed in (1, 2, 3, 4)}
    assert seen == {"['-2.5', '9', '10', ' x', 'B', 'b', 'x', '\u00e9']"}


@pytest.mark.parametrize(("a", "b"), [("1", " 1"), ("2", "2.0"), ("0", "-0"), ("100", "1e2"), ("7", "+7")])
def test_every_second_spelling_of_a_number_is_refused(a, b):
    from knnx.datasets import encode_labels
    from knnx.errors import DataError

    first, second = sorted((a, b))
    with pytest.raises(
        DataError, match=re.escape(f"class labels {first!r} and {second!r} are the same number")
    ):
        encode_labels([a, b, a], "f.csv")


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ([1, "1", 2], "y[0] = 1 (a number) and y[1] = '1' (a text) are written alike"),
        ([True, False, "True"], "y[0] = True (a boolean) and y[2] = 'True' (a text) are written alike"),
        ([np.int64(2), 1, "2"], "y[0] = 2 (a number) and y[2] = '2' (a text) are written alike"),
    ],
)
def test_labels_of_two_kinds_written_alike_are_refused(labels, message):
    """A loader's ``[1, "1", ...]`` became one class silently (both read as "1")."""
    from knnx.datasets import encode_labels
    from knnx.errors import DataError

    with pytest.raises(DataError) as err:
        encode_labels(labels, "mylab.data:load")
    assert (
        str(err.value) == f"mylab.data:load: {message}, so they would be one class; give every label one type"
    )


def test_labels_of_one_kind_written_alike_are_one_class():
    from knnx.datasets import encode_labels

    y, classes = encode_labels([1, np.int64(1), np.int32(2), 2], "L")  # numbers of any width
    assert y.tolist() == [0, 0, 1, 1] and classes.tolist() == ["1", "2"]


def test_codes_follow_the_documented_order():
    from knnx.datasets import encode_labels

    y, classes = encode_labels(["b", "10", "a", "9", "b", "1e-3"], "f")
    assert classes.tolist() == ["1e-3", "9", "10", "a", "b"]
    assert y.tolist() == [4, 2, 3, 1, 4, 0]


# --- control characters never reach a CSV field or a path ---------------------------------

SPEC = """\
name: t
seed: 0
datasets: [{DATASET}]
protocol: {kind: kfold, folds: 2}
algorithms: [{name: knn, params: {k: 1}}]
"""


def _spec(tmp_path, dataset):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC.replace("{DATASET}", dataset))
    return path


def _refused(args, tmp_path, message):
    """exit 2, one line naming ``message``, and nothing written in TMP."""
    before = sorted(p.name for p in tmp_path.iterdir())
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert message in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    return lines[0]


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        (
            '{name: iris, id: "a\\rb"}',
            "line 3, column 29: invalid YAML ('a\\rb' holds a control character U+000D",
        ),
        (
            '{name: iris, id: "a\\nb"}',
            "holds a control character U+000A at position 2; spec values hold none",
        ),
        ('{csv: "d\\r.csv"}', "holds a control character U+000D at position 2"),
        ('"iris\\x1b[31m"', "holds a control character U+001B at position 5"),
        ('{name: iris, id: "a\\u2028b"}', "holds a control character U+2028 at position 2"),
        ('{name: iris, id: "a\\x85b"}', "holds a control character U+0085"),
    ],
)
def test_a_control_character_in_a_spec_string_is_refused(tmp_path, dataset, message):
    (tmp_path / "d\r.csv").write_text("a,label\n1,x\n2,y\n3,x\n4,y\n")
    spec = _spec(tmp_path, dataset)
    _refused(["validate", str(spec)], tmp_path, message)
    _refused(["run", str(spec), "--out", str(tmp_path / "out"), "--quiet"], tmp_path, message)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"name": "iris", "id": "a\rb"},
            "datasets[0]: id: 'a\\rb' holds a control character U+000D at position 2",
        ),
        ({"csv": "d\r.csv"}, "datasets[0]: csv: 'd\\r.csv' holds a control character U+000D at position 2"),
        ("ir\tis", "datasets[0]: dataset entry: 'ir\\tis' holds a control character U+0009 at position 3"),
        ({"name": "letter", "missing": "error\x00"}, "datasets[0]: missing: 'error\\x00' holds a control"),
    ],
)
def test_a_control_character_in_a_dataset_entry_given_as_a_dict_is_refused(tmp_path, entry, message):
    from knnx.errors import SpecError
    from knnx.spec import validate_spec

    spec = {"name": "t", "datasets": [entry], "protocol": {"kind": "kfold"}, "algorithms": [{"name": "knn"}]}
    with pytest.raises(SpecError) as err:
        validate_spec(spec)
    assert message in str(err.value)


def test_an_output_folder_with_a_control_character_is_refused(tmp_path):
    spec = _spec(tmp_path, "iris")
    line = _refused(["run", str(spec), "--out", str(tmp_path / "o\rut"), "--quiet"], tmp_path, "--out: ")
    assert line.endswith(
        f"holds a control character U+000D at position {len(str(tmp_path)) + 3}; name the folder without one"
    )


def test_the_csv_writer_never_writes_a_bare_carriage_return():
    row = {**_row(0, 0.5), "dataset": "a\rb"}
    with pytest.raises(ResultsError, match="refusing to write a CSV field with a control character U\\+000D"):
        rows_to_csv([row])


def test_a_cell_error_with_control_characters_is_escaped_in_failures_csv(tmp_path, monkeypatch):
    from knnx.errors import CellError
    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS
    from knnx.experiment.runner import run_spec

    class Noisy(KNNClassifier):
        def fit(self, X, y):
            raise ValueError("bad \x1b[31mred\x1b[0m value\rsecond line")

    monkeypatch.setitem(ALGORITHMS, "noisy", Noisy)
    spec = {
        "name": "t",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"name": "noisy", "params": {"k": 1}}],
    }
    with pytest.raises(CellError) as err:
        run_spec(spec, out=tmp_path, figures=False)
    assert "ValueError: bad \\x1b[31mred\\x1b[0m value; " in str(err.value) or str(err.value).endswith(
        "ValueError: bad \\x1b[31mred\\x1b[0m value"
    )
    text = (tmp_path / "failures.csv").read_text()
    assert "\x1b" not in text and "\r" not in text
    assert text.count("\n") == 3  # header and the two folds


# --- names never put output outside results/ ---------------------------------------------


@pytest.mark.parametrize("name", ["..", ".", "..."])
def test_an_active_spec_named_with_dots_only_is_refused_and_writes_nothing(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.csv").write_text("a user's own file\n")
    spec = tmp_path / "a.yaml"
    spec.write_text(f"kind: active\nname: '{name}'\ndatasets: [iris]\nrepeats: 1\nrounds: 2\nstart: 20\n")
    _refused(["run", str(spec), "--quiet", "--no-resume"], tmp_path, "name: a name made of dots only")
    assert (tmp_path / "results.csv").read_text() == "a user's own file\n"


def test_active_runs_are_bounded(tmp_path):
    spec = tmp_path / "a.yaml"
    spec.write_text("kind: active\nname: a\ndatasets: [iris]\nrepeats: 1\nrounds: 2\nstart: 20\n")
    _refused(
        ["run", str(spec), "--quiet", "--set", "repeats=1000000000"],
        tmp_path,
        f"error: {spec}: --set 'repeats=1000000000': repeats: 1 dataset(s) x 2 strategies x 1000000000 repeats = 2000000000 cells, more "
        "than the limit of 1000000",
    )
    spec.write_text("kind: active\nname: a\ndatasets: [iris]\nrepeats: 600000\nrounds: 2\nstart: 20\n")
    _refused(["run", str(spec), "--quiet"], tmp_path, "repeats: 1 dataset(s) x 2 strategies x 600000 repeats")


# --- validate refuses what would make cells fail; data errors while running fail a cell ---

BASE = {"name": "v", "seed": 0, "protocol": {"kind": "kfold", "folds": 2}}


def _validate_problems(spec, tmp_path):
    """The lines of knnx validate and of knnx run on ``spec`` (both exit 2, nothing written)."""
    import yaml

    path = tmp_path / "v.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    before = sorted(p.name for p in tmp_path.iterdir())
    outputs = []
    for args in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        outputs.append(result.output)
    assert outputs[0] == outputs[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    return [line.removeprefix(f"error: {path}: ") for line in outputs[0].splitlines()]


@pytest.mark.parametrize(
    ("algorithm", "expected"),
    [
        (
            {"name": "unn", "params": {"theta": float("inf")}},
            "algorithms[0].params.theta: must be a finite number > 0, got inf",
        ),
        (
            {"name": "unn", "params": {"theta": float("nan")}},
            "algorithms[0].params.theta: must be a finite number > 0, got nan",
        ),
        (
            {"name": "unn", "params": {"theta": 1e300}},
            "datasets[0]: algorithms[0] on 'iris' (75 training rows): theta=1e+300 gives T = theta x 75 training rows "
            "= 7.5e+301 iterations per class, more than the limit of 1000000",
        ),
        (
            {"name": "unn", "params": {"theta": 1e308}},
            "datasets[0]: algorithms[0] on 'iris' (75 training rows): theta=1e+308 gives T = theta x 75 training rows "
            "= inf iterations per class, more than the limit of 1000000",
        ),
        (
            {"name": "unn", "params": {"n_iter": 10**30}},
            "algorithms[0].params.n_iter: must be an integer in [1, 1000000] or None, got 10" + "0" * 29,
        ),
        (
            {"name": "gnnb", "params": {"n_iter": 10**30}},
            "algorithms[0].params.n_iter: must be an integer in [1, 1000000] or None",
        ),
        (
            {"name": "adaboost", "params": {"n_rounds": 10**24}},
            "algorithms[0].params.n_rounds: must be an integer in [1, 100000] or None",
        ),
        (
            {"name": "svm_linear", "params": {"C": float("inf")}},
            "algorithms[0].params.C: must be a number in [1e-12, 1000000000000.0], got inf",
        ),
        (
            {"name": "svm_platt", "params": {"C": 1e-200}},
            "algorithms[0].params.C: must be a number in [1e-12, 1000000000000.0], got 1e-200",
        ),
        (
            {"name": "gnnb", "params": {"seed": 2**40}},
            "algorithms[0].params.seed: must be an integer in [0, 4294967295] or None, got 1099511627776",
        ),
        (
            {"name": "unn_cv", "params": {"n_thetas": 10**9}},
            "algorithms[0].params.n_thetas: must be an integer in [1, 1000], got 1000000000",
        ),
        (
            {"name": "weighted_metric", "params": {"max_epochs": 10**12}},
            "algorithms[0].params.max_epochs: must be an integer in [0, 100000]",
        ),
        (
            {"name": "weighted_metric", "params": {"scheme": "cpw", "base": "l1"}},
            "algorithms[0]: base='l1' is allowed with scheme 'pw', 'l2' or 'cdm'; the class-weight updates of scheme "
            "'cpw' need base='euclidean'",
        ),
        (
            {"name": "weighted_metric", "params": {"scheme": "cw", "step_grid": "paper"}},
            "algorithms[0]: step_grid applies to scheme 'cpw' only",
        ),
        (
            {"name": "knn_lpo", "params": {"p": 2, "weights": "distance"}},
            "datasets[0]: algorithms[0] on 'iris' (75 training rows): weights='distance' selects k by exact LpO for two "
            "classes only, the data has 3",
        ),
        (
            {"name": "gnnb", "params": {"n_splits": 5}},
            "datasets[0]: algorithms[0] on 'iris' (75 training rows): n_splits=5 exceeds the number of features (4)",
        ),
    ],
)
def test_validate_refuses_parameters_that_would_fail_every_cell(tmp_path, algorithm, expected):
    problems = _validate_problems({**BASE, "datasets": ["iris"], "algorithms": [algorithm]}, tmp_path)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_validate_refuses_distance_weighted_lpo_protocol_on_three_classes(tmp_path):
    spec = {
        **BASE,
        "protocol": {"kind": "lpo", "p": 2},
        "datasets": ["iris"],
        "algorithms": [{"name": "knn", "params": {"k": 3, "weights": ["uniform", "distance"]}}],
    }
    assert _validate_problems(spec, tmp_path) == [
        "datasets[0]: algorithms[0]: protocol lpo with weights='distance' is exact for two classes only; 'iris' has 3"
    ]


def test_validate_applies_the_range_rule_to_every_dataset(tmp_path):
    """The issue's spec: the middle dataset's values are too far apart for float64 squared
    distances. validate says so; run refuses before any cell (it stopped half-way)."""
    (tmp_path / "f.csv").write_text("a,b,label\n1,,x\n2,3,y\n3,4,x\n4,5,y\n")
    spec = {
        **BASE,
        "datasets": [
            "iris",
            {"synthetic": "blobs", "n": 60, "spread": 1.0e300},
            "wine",
            {"csv": "f.csv", "missing": "fill", "fill_value": 1e308},
        ],
        "algorithms": [{"name": "knn", "params": {"k": 1}}],
    }
    problems = _validate_problems(spec, tmp_path)
    assert problems == [
        "datasets[1]: 'blobs(n=60,spread=1e+300)': X: values too far apart for float64 squared distances "
        "(max |x - mean| = 6.33e+299 over 2 features; needs max |x - mean| * sqrt(d) <= 1e+150); rescale the data",
        "datasets[3]: 'f': X: values too far apart for float64 squared distances (max |x - mean| = 7.5e+307 over "
        "2 features; needs max |x - mean| * sqrt(d) <= 1e+150); rescale the data",
    ]
    # standardised, the same data is in range: validate accepts it
    from knnx.spec import validate_spec

    spec["preprocess"] = {"standardize": True}
    spec["datasets"] = spec["datasets"][:3]
    assert len(validate_spec(spec).cells) == 6


def test_a_data_error_while_running_fails_its_cell_and_the_run_goes_on(tmp_path, monkeypatch):
    from knnx.errors import CellError, DataError
    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS
    from knnx.experiment.runner import run_spec

    class Picky(KNNClassifier):
        def fit(self, X, y):
            if X.shape[1] == 13:  # wine
                raise DataError("X: a data error found while running")
            return super().fit(X, y)

    monkeypatch.setitem(ALGORITHMS, "picky", Picky)
    spec = {
        **BASE,
        "datasets": ["iris", "wine", "ripley"],
        "algorithms": [{"name": "picky", "params": {"k": 1}}],
    }
    with pytest.raises(CellError, match=r"^2 of 6 cells failed and were not saved"):
        run_spec(spec, out=tmp_path, figures=False)
    frame = read_results(tmp_path / "results.csv")
    assert sorted(set(frame["dataset"])) == ["iris", "ripley"]  # datasets after the failure ran
    failures = (tmp_path / "failures.csv").read_text().splitlines()
    assert len(failures) == 3 and all(
        "DataError: X: a data error found while running" in f for f in failures[1:]
    )
    assert (tmp_path / "summary.md").exists()


def test_params_json_is_standard_json():
    from knnx.spec import canonical_json

    assert canonical_json({"b": 1.5, "a": [1, None]}) == '{"a":[1,null],"b":1.5}'
    with pytest.raises(ValueError):
        canonical_json({"theta": float("inf")})


def _bounds_cases():
    """(algorithm, parameter, value) at both ends of every numeric range in the registry;
    1e300 stands for "no upper bound" of a real, 10^18 for an integer."""
    from knnx.estimators.params import AnyOf, Interval
    from knnx.estimators.registry import ALGORITHMS

    cases = []
    for name, cls in ALGORITHMS.items():
        for pname, constraint in cls._parameter_constraints.items():
            parts = constraint.constraints if isinstance(constraint, AnyOf) else [constraint]
            for iv in (c for c in parts if isinstance(c, Interval)):
                step = 1 if iv.integer else 1e-9
                low = iv.low + step if iv.low_open else iv.low
                high = iv.high if iv.high is not None else (10**18 if iv.integer else 1e300)
                high = high - step if iv.high_open else high
                for value in (low, high):
                    slow = (name, pname, value) == ("weighted_metric", "max_epochs", 100_000)
                    marks = [pytest.mark.slow] if slow or name == "itml_knn" else []
                    cases.append(
                        pytest.param(name, pname, value, marks=marks, id=f"{name}-{pname}-{value:g}")
                    )
    return cases


@pytest.mark.parametrize(("name", "pname", "value"), _bounds_cases())
def test_every_value_validation_accepts_runs(name, pname, value):
    """At both ends of each parameter's range, fit and predict give finite outputs on 60
    rows of iris, or the parameter's data check (what validate runs) refuses the setting
    (here: k, p or n_splits beyond the training data; the class's _neighbor_param covers k and p)."""
    import warnings

    from knnx.datasets import load_dataset
    from knnx.estimators.registry import ALGORITHMS

    ds = load_dataset("iris")
    rows = np.random.default_rng(0).permutation(150)
    X, y, Xq = ds.X[rows[:60]], ds.y[rows[:60]], ds.X[rows[60:90]]
    cls = ALGORITHMS[name]
    params = cls(**{pname: value}).get_params()
    refused = cls._setting_problems(params) + cls._data_problems(params, 60, 4, 3)
    neighbour_param, slack = cls._neighbor_param or (None, 0)
    if pname == neighbour_param and value > 60 - slack:
        refused.append("validate: beyond the training part")
    if refused:
        with pytest.raises(ValueError):
            cls(**params).fit(X, y)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. liblinear's convergence warning at C = 1e12
        model = cls(**params).fit(X, y)
        assert set(model.predict(Xq)) <= set(y)
        if hasattr(model, "predict_proba"):
            proba = model.predict_proba(Xq)
            assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)


def test_every_real_parameter_refuses_nan_and_infinities():
    from knnx.estimators.params import AnyOf, Interval
    from knnx.estimators.registry import ALGORITHMS

    unbounded = set()
    for name, cls in ALGORITHMS.items():
        for pname, constraint in cls._parameter_constraints.items():
            for bad in (float("nan"), float("inf"), float("-inf")):
                assert constraint.check(bad) is not None, (name, pname, bad)
            parts = constraint.constraints if isinstance(constraint, AnyOf) else [constraint]
            if any(isinstance(c, Interval) and c.integer and c.high is None for c in parts):
                unbounded.add(pname)
    # integers without a fixed upper bound are bounded by the data (checked by validate)
    assert unbounded == {"k", "p", "k_max", "n_splits", "max_rounds"}


# --- standardisation of huge or tiny values; drop_rows that drops everything -------------


def test_standardising_huge_and_tiny_columns_gives_unit_spread_without_warnings(tmp_path):
    import warnings

    from knnx.evaluation.preprocess import standardize

    X = np.array(
        [
            [1e308, 1e308, 1e-200, 1.0, 5.0],
            [-1e308, 1e308, 3e-200, 2.0, 5.0],
            [1e308, 1e308, 2e-200, 4.0, 5.0],
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning escapes (they printed under --quiet)
        Z, Zt = standardize(X, X[:1])
    expected = np.column_stack(
        [
            (np.array([1, -1, 1]) - 1 / 3) / np.std([1, -1, 1]),  # divided by 1e308 first
            np.zeros(3),  # constant: stays constant
            np.array([-1, 1, 0]) / np.std([-1, 1, 0]),  # divided by 3e-200 first
            (X[:, 3] - X[:, 3].mean()) / X[:, 3].std(),  # ordinary: NumPy's formula to the bit
            np.zeros(3),
        ]
    )
    np.testing.assert_allclose(Z, expected, rtol=1e-15, atol=1e-15)
    assert (Z[:, 3] == (X[:, 3] - X[:, 3].mean()) / X[:, 3].std()).all()
    assert (Zt == Z[:1]).all()


def test_standardising_ordinary_data_is_numpys_formula_to_the_bit():
    from knnx.evaluation.preprocess import standardize

    rng = np.random.default_rng(5)
    X, T = rng.standard_normal((40, 6)) * 10.0 ** rng.integers(-100, 100, 6), rng.standard_normal((7, 6))
    Z, Zt = standardize(X, T)
    mean, std = X.mean(axis=0), X.std(axis=0)
    assert (Z == (X - mean) / std).all() and (Zt == (T - mean) / std).all()


def test_test_rows_that_overflow_when_standardised_fail_their_cell_with_one_line():
    from knnx.errors import DataError
    from knnx.evaluation.preprocess import standardize

    with pytest.raises(DataError, match="^test rows: standardised values of feature 1 overflow float64"):
        standardize(np.array([[0.0, 0.0], [1.0, 1e-300]]), np.array([[0.0, 1e300]]))


def test_a_huge_column_standardised_in_a_run_is_not_zeroed(tmp_path):
    """A +-1e308 column used to be zeroed silently (exit 0) and an all-1e308 one made
    every cell fail with NaN; standardised, both keep their information."""
    from knnx.experiment.runner import run_spec

    rng = np.random.default_rng(0)
    y = np.tile(["a", "b"], 20)
    big = [1e308 if c == "a" else -1e308 for c in y]  # the only informative column
    lines = ["x,const,noise,label"] + [
        f"{b!r},1e308,{rng.random()!r},{c}" for b, c in zip(big, y, strict=True)
    ]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    spec = {
        "name": "big",
        "datasets": [{"csv": str(tmp_path / "d.csv")}],
        "preprocess": {"standardize": True},
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"name": "knn", "params": {"k": 1}}],
    }
    run_spec(spec, out=tmp_path / "o", figures=False)
    frame = read_results(tmp_path / "o" / "results.csv")
    assert frame["value"].tolist() == [0.0, 0.0]  # the sign of x separates the classes


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a,b,label\n1,,x\n,2,y\n", "missing: drop_rows removes every row (each has a missing value)"),
        ("a,label\n,x\n,y\n", "missing: drop_rows removes every row (each has a missing value)"),
    ],
)
def test_drop_rows_that_removes_every_row_is_one_line(tmp_path, text, message):
    (tmp_path / "d.csv").write_text(text)
    spec = _spec(tmp_path, "{csv: d.csv, missing: drop_rows}")
    _refused(["validate", str(spec)], tmp_path, f"datasets[0]: {tmp_path / 'd.csv'}: {message}")


# --- sizes: estimated before anything is allocated ---------------------------------------

MIB = "KNNX_MEMORY_LIMIT sets another"


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        (
            "{synthetic: blobs, n: 3000000000}",
            "datasets[0]: synthetic blobs: 3000000003 rows x 2 features needs about 178.8 GiB, more than the memory limit",
        ),
        (
            "{synthetic: celisse2011, n: 100, n_test: 10000000000}",
            "datasets[0]: synthetic celisse2011: 10000000100 rows x 2 features needs about 596.0 GiB",
        ),
        (
            "{synthetic: gaussians, means: [[0, 0], [1, 1]], covs: 1.0, n_per_class: 2000000000}",
            "datasets[0]: synthetic gaussians: 4000000000 rows x 2 features needs about 238.4 GiB",
        ),
    ],
)
def test_a_synthetic_sample_too_large_for_memory_is_refused_before_drawing(
    tmp_path, monkeypatch, dataset, message
):
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "16GiB")  # this machine's default limit, give or take
    line = _refused(["validate", str(_spec(tmp_path, dataset))], tmp_path, message)
    assert line.endswith("more than the memory limit of 16.0 GiB (KNNX_MEMORY_LIMIT)")


def test_the_default_memory_limit_is_80_percent_of_the_machine(monkeypatch):
    from knnx.limits import memory_limit, memory_problem, physical_memory

    monkeypatch.delenv("KNNX_MEMORY_LIMIT", raising=False)
    assert memory_limit() == int(0.8 * physical_memory())
    assert memory_problem(memory_limit(), "x") is None
    assert memory_problem(memory_limit() + 1, "x").endswith(f"(80 % of this machine's memory; {MIB})")


def test_the_memory_limit_can_be_set_and_is_checked(tmp_path, monkeypatch):
    spec = _spec(tmp_path, "{synthetic: blobs, n: 100000}")
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "1M")
    line = _refused(
        ["validate", str(spec)], tmp_path, "synthetic blobs: 100003 rows x 2 features needs about 6.1 MiB"
    )
    assert line.endswith("more than the memory limit of 976.6 KiB (KNNX_MEMORY_LIMIT)")
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "lots")
    _refused(
        ["validate", str(spec)],
        tmp_path,
        "KNNX_MEMORY_LIMIT: expected a size such as 512M, 8G or 1.5GiB, got 'lots'",
    )
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "1.5GiB")
    assert runner.invoke(app, ["validate", str(spec)]).exit_code == 0


def test_select_k_with_a_huge_p_is_refused_before_the_graph(tmp_path, monkeypatch):
    """The issue's case: --p 50000 on 10^5 rows wants a graph of 50049 neighbours a row."""
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "16GiB")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 2)).tolist()
    lines = ["a,b,label"] + [f"{a!r},{b!r},{int(a > 0)}" for a, b in X]
    (tmp_path / "e5.csv").write_text("\n".join(lines) + "\n")
    _refused(
        ["select-k", "--p", "50000", "--csv", str(tmp_path / "e5.csv")],
        tmp_path,
        "error: exact leave-50000-out for k up to 50 on 100000 rows needs about 93.2 GiB, more than the memory limit",
    )


def test_a_neighbour_graph_and_a_csv_file_too_large_for_memory_are_refused(tmp_path, monkeypatch):
    from knnx import kneighbors
    from knnx.datasets import load_dataset
    from knnx.errors import DataError

    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "100K")
    X = np.random.default_rng(0).standard_normal((2000, 3))
    with pytest.raises(
        DataError, match=r"^a neighbour graph of 2000 queries x 10 neighbours among 2000 rows needs"
    ):
        kneighbors(X, 10)
    (tmp_path / "d.csv").write_text("a,label\n" + "1.5,x\n2.5,y\n" * 1000)
    with pytest.raises(DataError, match=r"d.csv: a CSV file of 12008 bytes needs about 187.6 KiB, more than"):
        load_dataset({"csv": "d.csv"}, base_dir=tmp_path)


def test_jobs_beyond_memory_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "16GiB")
    spec = _spec(tmp_path, "iris")
    _refused(
        ["run", str(spec), "--jobs", "1000", "--quiet", "--out", str(tmp_path / "o")],
        tmp_path,
        "--jobs 1000: 1000 worker processes, each loading datasets of up to 4.7 KiB needs about 250.0 GiB",
    )


# --- operating-system errors: one line naming the path and the reason --------------------

FAULT_SPEC = {
    "name": "fault",
    "seed": 1,
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 5, "repeats": 4},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5]}}],
    "metrics": ["error", "accuracy"],
}


def _values(path):
    return read_results(path).drop(columns=["fit_seconds", "predict_seconds"])


def _complete_lines(path):
    text = path.read_text()
    assert text.endswith("\n")  # no torn last line
    return text.count("\n")


def test_a_full_disk_mid_run_is_one_line_exit_3_and_a_rerun_resumes(tmp_path, monkeypatch):
    import errno
    import os

    import yaml

    from knnx.results import write as results_module

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(FAULT_SPEC))
    clean = tmp_path / "clean"
    assert runner.invoke(app, ["run", str(spec), "--out", str(clean), "--quiet"]).exit_code == 0

    real_write, calls = os.write, []

    def failing_write(fd, data):
        calls.append(fd)
        if len(calls) == 40:  # partway through the run: a short write, then no space
            real_write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(results_module.os, "write", failing_write)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(spec), "--out", str(out), "--quiet"])
    assert result.exit_code == 3, result.output
    path = "results.csv" if "results.csv" in result.output else "cells.csv"
    assert result.output == (
        f"error: {out / path}: cannot write (No space left on device); the cells finished before are saved: "
        "rerun the same command to resume\n"
    )
    _complete_lines(out / "results.csv")
    _complete_lines(out / "cells.csv")
    monkeypatch.setattr(results_module.os, "write", real_write)
    result = runner.invoke(app, ["run", str(spec), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "already done" in result.output and not result.output.startswith("0 cells run")
    assert _values(out / "results.csv").equals(_values(clean / "results.csv"))


def test_a_file_size_limit_mid_run_leaves_no_torn_line(tmp_path):
    """A real EFBIG: the run's process may not write files beyond 12 kB."""
    import resource
    import subprocess
    import sys

    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(FAULT_SPEC))
    out = tmp_path / "out"
    code = "from knnx.cli import app; app()"
    limit = 12_000

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-c", code, "run", str(spec), "--out", str(out), "--quiet"],
        preexec_fn=cap,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"error: {out / 'results.csv'}: cannot write (File too large); the cells")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert (out / "results.csv").stat().st_size <= limit
    n_lines = _complete_lines(out / "results.csv")
    assert n_lines > 10  # cells before the limit are kept, whole
    rerun = runner.invoke(app, ["run", str(spec), "--out", str(out), "--quiet"])
    assert rerun.exit_code == 0
    clean = tmp_path / "clean"
    runner.invoke(app, ["run", str(spec), "--out", str(clean), "--quiet"])
    assert _values(out / "results.csv").equals(_values(clean / "results.csv"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["plot", "{REF}", "--out", "/proc/nodir/x.png"],
            "error: --out: /proc/nodir/x.png: cannot create the folder /proc/nodir",
        ),
        (
            ["run", "{SPEC}", "--out", "/proc/knnx-out", "--quiet"],
            "error: --out: /proc/knnx-out: cannot create the folder",
        ),
        (
            ["run", "{ACTIVE}", "--out", "/proc/knnx-out", "--quiet"],
            "error: --out: /proc/knnx-out: cannot create the",
        ),
    ],
)
def test_an_output_place_the_system_refuses_is_exit_2(tmp_path, monkeypatch, args, message):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(
        "kind: active\nname: a\ndatasets: [iris]\nrepeats: 1\nrounds: 2\nstart: 20\n"
    )
    ref = str(Path(__file__).resolve().parents[2] / "results" / "reference" / "ripley.csv")
    args = [a.replace("{REF}", ref).replace("{SPEC}", str(_spec(tmp_path, "iris"))) for a in args]
    args = [a.replace("{ACTIVE}", str(tmp_path / "a.yaml")) for a in args]
    _refused(args, tmp_path, message)


def test_an_unforeseen_os_error_is_one_line_exit_3(tmp_path, monkeypatch):
    from knnx.reporting import summaries as report

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "somewhere/results.csv")

    monkeypatch.setattr(report, "read_results", refuse)
    path = tmp_path / "r.csv"
    path.write_text("x\n")
    result = runner.invoke(app, ["table", str(path)])
    assert result.exit_code == 3
    assert result.output == "error: somewhere/results.csv: Permission denied\n"


# --- a killed run leaves no process behind ------------------------------------------------


def _children(pid):
    """Pids of the processes whose parent is ``pid`` (from /proc)."""
    from pathlib import Path

    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid):
    from pathlib import Path

    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited


@pytest.mark.processes
@pytest.mark.parametrize("executor", ["local", pytest.param("dask", marks=pytest.mark.xdist_group("dask"))])
def test_workers_die_with_a_killed_parent(tmp_path, executor):
    import signal
    import subprocess
    import sys
    import time

    import yaml

    if executor == "dask":
        pytest.importorskip("distributed")
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**FAULT_SPEC, "protocol": {"kind": "kfold", "folds": 5, "repeats": 400}}))
    out = tmp_path / "out"
    code = "from knnx.cli import app; app()"
    args = [sys.executable, "-c", code, "run", str(spec), "--out", str(out), "--quiet", "--jobs", "2"]
    proc = subprocess.Popen([*args, "--executor", executor], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (out / "cells.csv").exists() or (out / "cells.csv").read_text().count("\n") < 20:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    children = _children(proc.pid)
    assert len(children) >= 2  # the workers (and the resource tracker)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [c for c in children if _alive(c)], "workers outlived the killed run"


# --- long fits report progress ------------------------------------------------------------


def test_weighted_metric_fit_reports_each_evaluation_and_learns_the_same():
    from knnx import WeightedMetricNN
    from knnx.datasets import load_dataset

    ds = load_dataset("wine")
    calls = []
    model = WeightedMetricNN(max_epochs=7, tol=0.0).fit(
        ds.X, ds.y, progress=lambda d, t: calls.append((d, t))
    )
    plain = WeightedMetricNN(max_epochs=7, tol=0.0).fit(ds.X, ds.y)
    assert (model.class_weights_ == plain.class_weights_).all()
    assert (model.prototype_weights_ == plain.prototype_weights_).all()
    total = 2 + 7 + 1  # init "auto" compares two starts, then epochs 0..7
    assert model._n_evaluations() == total
    assert calls == [(i, total) for i in range(1, total + 1)] + [(total, total)]
    calls.clear()
    grid = WeightedMetricNN(max_epochs=3, step_grid="paper", probe_epochs=2)
    grid.fit(ds.X, ds.y, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (grid._n_evaluations(),) * 2
    assert len(calls) - 1 <= grid._n_evaluations()  # an upper bound: the descent may stop early
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_runner_shows_the_progress_of_a_long_fit(tmp_path, monkeypatch, jobs):
    from knnx.experiment import executors
    from knnx.experiment.runner import run_spec

    monkeypatch.setattr(executors, "FIT_PROGRESS_INTERVAL", 0.0)  # every report (in this process)
    spec = {
        "name": "p",
        "datasets": ["wine"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {"name": "weighted_metric", "params": {"max_epochs": 20, "tol": 0.0}},
            {"name": "knn"},
        ],
    }
    seen = []
    run_spec(
        spec, out=tmp_path, jobs=jobs, progress=lambda done, total, text: seen.append((done, total, text))
    )
    fits = [text for _, _, text in seen if text.startswith("fit ")]
    assert fits, seen
    # the cell named by its dataset and configuration (nothing varies: the algorithm alone)
    assert all(t.endswith(" wine weighted_metric") for t in fits), fits
    assert {t.split()[1].split("/")[1] for t in fits} == {"23"}  # 2 + 20 + 1 evaluations at most
    if jobs == 1:
        # both folds to the end: the last evaluation is 23/23 and the end of fit says it again
        assert sum(t.startswith("fit 23/23 ") for t in fits) == 4


# --- cases found by a second, independent hostile corpus ----------------------------------


def _results_file(tmp_path, **changes):
    rows = [{**_row(i, 0.5 + i / 10), "params": f'{{"k":{2 * i + 1}}}'} for i in range(3)]
    rows = [{**r, **changes} for r in rows]
    path = tmp_path / "r.csv"
    path.write_text(rows_to_csv(rows, header=True))
    return path


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("not json", "column 'params' line 2: 'not json' is not a JSON object of parameters"),
        ("[1, 2]", "column 'params' line 2: '[1, 2]' is not a JSON object of parameters"),
    ],
)
def test_plot_on_params_that_are_not_a_json_object_is_one_line(tmp_path, params, message):
    path = _results_file(tmp_path, params=params)
    line = _refused(["plot", str(path), "--out", str(tmp_path / "x.png")], tmp_path, message)
    assert line == f"error: {path}: {message}"  # read_results refuses it, naming the file


def test_names_with_dollar_signs_are_drawn_as_written(tmp_path):
    """matplotlib read '$x^$' as mathtext and every run with such a dataset id crashed
    while plotting, and so did every resume."""
    from knnx.experiment.runner import run_spec
    from knnx.reporting.figures import plot_metric

    spec = {
        "name": "dollar",
        "datasets": [{"name": "iris", "id": "$x^$"}],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}],
    }
    run_spec(spec, out=tmp_path)
    assert (tmp_path / "error.png").stat().st_size > 0
    fig = plot_metric(tmp_path / "results.csv")
    assert [ax.get_title() for ax in fig.axes] == ["$x^$"]


def test_active_plots_with_dollar_signs(tmp_path):
    from knnx.experiment.runner import run_spec

    spec = {
        "kind": "active",
        "name": "a",
        "datasets": [{"name": "iris", "id": "$x^$"}],
        "repeats": 1,
        "rounds": 1,
        "start": 20,
    }
    run_spec(spec, out=tmp_path)
    assert (tmp_path / "active.png").stat().st_size > 0


def test_plot_default_file_name_from_a_metric_with_a_slash(tmp_path):
    path = _results_file(tmp_path, metric="a/b")
    result = runner.invoke(app, ["plot", str(path), "--metric", "a/b"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "a_b-k.png").exists()  # against k, named as the run names its figures


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("{TMP}", "is a folder; give an image file name"),
        ("/proc/knnx-e.png", "error: --out: /proc/knnx-e.png: cannot write ("),
    ],
)
def test_plot_onto_a_place_that_cannot_take_it_is_exit_2(tmp_path, target, message):
    path = _results_file(tmp_path)
    _refused(["plot", str(path), "--out", target.replace("{TMP}", str(tmp_path))], tmp_path, message)


def test_table_by_a_column_twice_is_one_line(tmp_path):
    path = _results_file(tmp_path)
    _refused(
        ["table", str(path), "--by", "dataset,dataset"],
        tmp_path,
        "error: --by: column 'dataset' is given twice",
    )


def test_numeric_labels_are_compared_exactly_not_as_floats():
    from knnx.datasets import encode_labels

    # one float64, two different numbers: two classes, in numeric order
    y, classes = encode_labels(["9007199254740993", "9007199254740992", "1e400"], "f")
    assert classes.tolist() == ["9007199254740992", "9007199254740993", "1e400"]
    assert y.tolist() == [1, 0, 2]


def test_a_user_text_with_a_line_break_stays_on_one_error_line(tmp_path):
    (tmp_path / "d.csv").write_text('a,"b\x1b[31m\nc",label\n1,x,u\n2,3,v\n', encoding="utf-8")
    folder = tmp_path / "x\ry"
    folder.mkdir()
    spec = folder / "s.yaml"
    spec.write_text(SPEC.replace("{DATASET}", "{csv: ../d.csv}"))
    line = _refused(["validate", str(spec)], tmp_path, "error: ")
    assert (
        "x\\ry" in line and "column 'b\\x1b[31m\\nc' line 3: 'x' is not a number" in line
    )  # escaped, in the one line


@pytest.mark.parametrize(
    "values",
    [
        ["1e308", "-1e308", "0", "1", "2", "3", "4", "5", "1e308", "-1e308"],  # a pairwise-summed mean of NaN
        ["1e308"] * 4 + ["-1e308"] * 4,
    ],
)
def test_values_whose_mean_overflows_are_refused_by_the_range_rule(tmp_path, values):
    from knnx.datasets import load_dataset
    from knnx.errors import DataError
    from knnx.neighbors.search import check_scale

    (tmp_path / "d.csv").write_text(
        "a,label\n" + "".join(f"{v},{'xy'[i % 2]}\n" for i, v in enumerate(values))
    )
    X = load_dataset({"csv": "d.csv"}, base_dir=tmp_path).X
    with pytest.raises(DataError, match="their mean or their differences overflow float64|= 1e\\+308"):
        check_scale(X)
    spec = _spec(tmp_path, "{csv: d.csv}")
    _refused(["validate", str(spec)], tmp_path, "values too far apart for float64 squared distances")
    _refused(
        ["select-k", "--p", "2", "--k-max", "3", "--csv", str(tmp_path / "d.csv")], tmp_path, "too far apart"
    )


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        (
            "{synthetic: blobs, n: 60, spread: 1.0e+308}",
            "synthetic blobs: a parameter is too large or too small",
        ),
        (
            "{synthetic: dambrosio2012, n: 60, sigma: 1.0e+200}",
            "synthetic dambrosio2012: a parameter is too large",
        ),
        (
            "{synthetic: dambrosio2012, n: 100, n_classes: 10000000}",
            "n_classes = 10000000, more than the limit of 10000",
        ),
        (
            "{synthetic: blobs, n: 100, n_classes: 1000000000}",
            "n_classes = 1000000000, more than the limit of 10000",
        ),
    ],
)
def test_synthetic_parameters_beyond_float64_or_the_class_limit_are_one_line(tmp_path, dataset, message):
    _refused(["validate", str(_spec(tmp_path, dataset))], tmp_path, message)


def test_sgd_updates_are_bounded(tmp_path):
    problems = _validate_problems(
        {
            **BASE,
            "datasets": ["iris"],
            "algorithms": [{"name": "sgd", "params": {"budget": "Tk/m", "k": 10**12}}],
        },
        tmp_path,
    )
    assert problems == ["algorithms[0].params.k: must be an integer in [1, 1000000], got 1000000000000"]


def test_the_splits_of_a_huge_protocol_are_estimated_before_they_are_drawn(tmp_path, monkeypatch):
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "1GiB")
    spec = {
        **BASE,
        "protocol": {"kind": "holdout", "repeats": 10**6},
        "datasets": ["ripley"],
        "algorithms": [{"name": "knn"}],
    }
    assert _validate_problems(spec, tmp_path) == [
        "datasets[0]: protocol holdout: 1000000 splits of 1250 rows needs about 18.6 GiB, more than the memory "
        "limit of 1.0 GiB (KNNX_MEMORY_LIMIT)"
    ]


def test_an_active_spec_whose_lpo_graph_exceeds_memory_is_refused_before_writing(tmp_path, monkeypatch):
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "2G")
    spec = tmp_path / "a.yaml"
    spec.write_text(
        "kind: active\nname: a\ndatasets: [{synthetic: blobs, n: 40000}]\nrepeats: 1\nrounds: 1\nm: 5\n"
        "start: 30000\np_tune: 29000\n"
    )
    _refused(
        ["run", str(spec), "--quiet", "--out", str(tmp_path / "out")],
        tmp_path,
        "datasets[0]: 'blobs(n=40000)': exact leave-29000-out on 30005 rows (p_tune) needs about",
    )


def test_the_memory_limit_follows_an_address_space_cap(tmp_path):
    import resource
    import subprocess
    import sys

    cap = 6 * 2**30

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    code = "from knnx.limits import memory_limit, memory_problem; print(memory_limit()); print(memory_problem(2**40, 'x'))"
    done = subprocess.run([sys.executable, "-c", code], preexec_fn=limit, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    value, problem = done.stdout.splitlines()
    assert int(value) == int(0.8 * cap)
    assert problem.endswith("(80 % of this process's memory cap; KNNX_MEMORY_LIMIT sets another)")


def test_a_planted_link_in_the_output_folder_is_never_written_through(tmp_path):
    from knnx.errors import ResultsError
    from knnx.results import atomic_write_text, output_lock

    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".knnx.lock").symlink_to(outside)
    with pytest.raises(ResultsError, match="is a symbolic link; remove it"), output_lock(out):
        pass
    (out / ".knnx.lock").unlink()
    (out / ".spec.yaml.tmp").symlink_to(outside)  # the temporary file of an atomic write
    atomic_write_text(out / "spec.yaml", "name: x\n")
    assert outside.read_text() == "keep me\n" and (out / "spec.yaml").read_text() == "name: x\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "{SPEC}", "--jobs", "0"], " run: Invalid value for '--jobs'"),
        (["table", "{SPEC}", "--format", "bogus"], " table: Invalid value for '--format'"),
        (["run"], " run: Missing argument 'spec'. (see "),
        (["run", "{SPEC}", "--bogus"], " run: No such option: --bogus"),
        (["select-k", "--p", "2", "--k-max", "abc"], " select-k: Invalid value for '--k-max'"),
        (
            ["check", "{SPEC}", "--reference", "{SPEC}", "--atol", "inf"],
            "error: --atol: expected a finite number >= 0",
        ),
    ],
)
def test_command_line_misuse_is_one_line_exit_2(tmp_path, args, message):
    spec = str(_spec(tmp_path, "iris"))
    _refused([a.replace("{SPEC}", spec) for a in args], tmp_path, message)


@pytest.mark.processes
def test_an_unreachable_scheduler_writes_nothing(tmp_path):
    pytest.importorskip("distributed")
    spec = _spec(tmp_path, "iris")
    args = [
        "run",
        str(spec),
        "--executor",
        "dask",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--out",
        str(tmp_path / "o"),
    ]
    _refused(args, tmp_path, "error: --scheduler tcp://127.0.0.1:9: cannot connect (")


DASK_DEFAULT_PORT = 8787  # distributed's default HTTP (dashboard) port


@pytest.fixture
def busy_dashboard_port():
    """Port 8787 taken for the test, as another Dask cluster or notebook would take it:
    listening sockets on 0.0.0.0 and 127.0.0.1 where free (one already taken by someone
    else is as busy). Its tests are in the ``dask`` xdist group (``make test`` runs with
    ``--dist loadgroup``): one worker runs them one after the other, never two at once."""
    import socket

    held = []
    for host in ("0.0.0.0", "127.0.0.1"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((host, DASK_DEFAULT_PORT))
            sock.listen()
            held.append(sock)
        except OSError:
            sock.close()
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as tornado binds
    with probe, pytest.raises(OSError):
        probe.bind(("127.0.0.1", DASK_DEFAULT_PORT))
    yield
    for sock in held:
        sock.close()


def _dask_run(tmp_path, spec_text, jobs=2):
    """``knnx run --executor dask --quiet`` in a fresh process: the finished process."""
    import subprocess
    import sys

    (tmp_path / "s.yaml").write_text(spec_text)
    code = "from knnx.cli import app; app()"
    args = [sys.executable, "-c", code, "run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o")]
    args += ["--quiet", "--executor", "dask", "--jobs", str(jobs)]
    return subprocess.run(args, capture_output=True, text=True)


@pytest.mark.xdist_group("dask")
def test_a_dask_run_is_silent_when_port_8787_is_taken(tmp_path, busy_dashboard_port):
    """The LocalCluster's scheduler serves HTTP on a free port of its own: with
    dashboard_address=None it took distributed's default 8787 and, that port being taken,
    warned 'Port 8787 is already in use' on stderr."""
    pytest.importorskip("distributed")
    done = _dask_run(
        tmp_path, "name: p\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn}]\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert len(read_results(tmp_path / "o" / "results.csv")) == 2


@pytest.mark.processes
@pytest.mark.xdist_group("dask")
def test_failed_cells_on_dask_workers_print_only_the_summary_line(tmp_path, busy_dashboard_port):
    """Failed cells come back from the workers as values: distributed logged each as
    'Compute Failed' with its traceback on stderr. Port 8787 taken changes nothing."""
    pytest.importorskip("distributed")
    # the fold that tests the 1e300 row trains on tiny values: its test rows overflow
    # when standardised (a data error only the run can see); the other fold runs
    (tmp_path / "d.csv").write_text("a,label\n0,x\n1e-300,y\n0,x\n1e-300,y\n1e-300,x\n1e300,y\n")
    done = _dask_run(
        tmp_path,
        "name: f\ndatasets: [iris, {csv: d.csv, id: bad}]\npreprocess: {standardize: true}\n"
        "protocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn}]\n",
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [done.stderr.splitlines()[0]]
    assert done.stderr.startswith("error: 1 of 4 cells failed and were not saved")


def test_warnings_raised_in_cells_are_listed_not_printed(tmp_path, monkeypatch, capsys):
    import warnings

    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS
    from knnx.experiment.runner import run_spec
    from knnx.results import read_warnings

    class Noisy(KNNClassifier):
        def fit(self, X, y):
            if X.shape[1] == 13:  # wine only
                for _ in range(3):
                    warnings.warn("liblinear did not converge\nsecond line", UserWarning, stacklevel=1)
                np.float64(1e308) * np.float64(10.0)  # numpy's RuntimeWarning: overflow
            return super().fit(X, y)

    monkeypatch.setitem(ALGORITHMS, "noisy", Noisy)
    spec = {**BASE, "datasets": ["iris", "wine"], "algorithms": [{"name": "noisy", "params": {"k": 1}}]}
    summary = run_spec(spec, out=tmp_path, figures=False)
    assert summary.n_warned == 2  # the two wine folds
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
    frame = read_warnings(tmp_path / "warnings.csv")
    assert frame[["dataset", "fold", "category", "message", "count"]].values.tolist() == [
        ["wine", 0, "UserWarning", "liblinear did not converge", 3],
        ["wine", 0, "RuntimeWarning", "overflow encountered in scalar multiply", 1],
        ["wine", 1, "UserWarning", "liblinear did not converge", 3],
        ["wine", 1, "RuntimeWarning", "overflow encountered in scalar multiply", 1],
    ]
    # a resume keeps the warnings of the cells it keeps; --no-resume starts the list again
    assert run_spec(spec, out=tmp_path, figures=False).n_run == 0
    assert len(read_warnings(tmp_path / "warnings.csv")) == 4
    spec["datasets"] = ["iris"]
    run_spec(spec, out=tmp_path, resume=False, figures=False)
    assert not (tmp_path / "warnings.csv").exists()


# --- a second hostile corpus: what it found, pinned ---------------------------------------


def test_a_label_with_an_exponent_beyond_any_number_is_text():
    from knnx.datasets import encode_labels

    y, classes = encode_labels(["b", "1e99999999999999999999", "2", "1e99999999999999999999"], "f")
    assert classes.tolist() == ["2", "1e99999999999999999999", "b"]  # numbers, then text in text order
    assert y.tolist() == [2, 1, 0, 1]


@pytest.mark.parametrize("label", ["+nan", "-NaN", " nan"])
def test_every_spelling_of_nan_as_a_class_label_is_refused(tmp_path, label):
    (tmp_path / "d.csv").write_text(f"a,label\n1,x\n2,{label}\n3,y\n")
    _refused(
        ["validate", str(_spec(tmp_path, "{csv: d.csv}"))],
        tmp_path,
        f"column 'label' line 3: class label '{label}' reads as a missing label",
    )


def test_integers_beyond_float64_in_dataset_entries_are_one_line(tmp_path):
    from knnx.datasets import _is_number

    assert _is_number(2**64) and _is_number(2**1000) and not _is_number(10**400)
    _refused(
        ["validate", str(_spec(tmp_path, f"{{synthetic: blobs, n: 60, spread: {10**400}}}"))],
        tmp_path,
        "spread",
    )


def test_a_memory_limit_of_any_size_is_read_exactly(monkeypatch):
    from knnx.limits import memory_limit, parse_bytes

    assert parse_bytes("1" + "0" * 400) == 10**400
    assert parse_bytes("1.5GiB") == 3 * 2**29
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "9" * 30 + "GiB")
    assert memory_limit() == int("9" * 30) * 2**30


def test_a_parameter_too_large_to_plot_is_one_line(tmp_path):
    rows = [{**_row(i, 0.5), "params": f'{{"k":{v}}}'} for i, v in enumerate([1, 10**400])]
    path = tmp_path / "r.csv"
    path.write_text(rows_to_csv(rows, header=True))
    _refused(
        ["plot", str(path), "--x", "k", "--out", str(tmp_path / "p.png")],
        tmp_path,
        "column 'params' line 3: k = 10000000000000000000... is too large to plot",
    )


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_an_output_file_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    import os

    out = tmp_path / "out"
    out.mkdir()
    if kind == "fifo":
        os.mkfifo(out / "results.csv")  # a resume read it and waited forever
    else:
        (out / "summary.md").mkdir()
    spec = _spec(tmp_path, "iris")
    name = "results.csv" if kind == "fifo" else "summary.md"
    line = _refused(
        ["run", str(spec), "--out", str(out), "--quiet"], tmp_path, f"{out / name} is not a regular"
    )
    assert line.endswith("remove it or choose another --out")
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_an_output_folder_holding_the_spec_being_run_is_refused(tmp_path):
    folder = tmp_path / "exp"
    folder.mkdir()
    spec = folder / "spec.yaml"
    spec.write_text(SPEC.replace("{DATASET}", "iris"))
    _refused(
        ["run", str(spec), "--out", str(folder), "--quiet"],
        tmp_path,
        f"--out: {folder} would overwrite the spec being run ({spec})",
    )
    assert spec.read_text() == SPEC.replace("{DATASET}", "iris")
    active = folder / "spec.yaml"
    active.write_text("kind: active\nname: a\ndatasets: [iris]\nrepeats: 1\nrounds: 1\nstart: 20\n")
    _refused(["run", str(active), "--out", str(folder), "--quiet"], tmp_path, "would overwrite the spec")


def test_a_hand_edited_environment_record_is_started_again(tmp_path):
    import json

    from knnx.experiment.runner import run_spec

    spec = {**BASE, "datasets": ["iris"], "algorithms": [{"name": "knn", "params": {"k": 1}}]}
    (tmp_path / "environment.json").write_text('{"runs": 5}\n')
    run_spec(spec, out=tmp_path, figures=False)
    runs = json.loads((tmp_path / "environment.json").read_text())["runs"]
    assert [r["cells_to_run"] for r in runs] == [2]


def test_an_active_spec_copy_that_is_not_utf8_is_rewritten_and_the_cells_kept(tmp_path):
    # Cells are matched by their content hash (cells.csv), not by the spec copy: a spoilt
    # copy changes nothing computed, and the rerun writes the copy again.
    spec = tmp_path / "a.yaml"
    spec.write_text("kind: active\nname: a\ndatasets: [iris]\nrepeats: 1\nrounds: 1\nstart: 20\nm: 2\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(spec), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    copy, rows = (out / "spec.yaml").read_bytes(), (out / "results.csv").read_bytes()
    (out / "spec.yaml").write_bytes(b"name: \xff\xfe\n")
    result = runner.invoke(app, ["run", str(spec), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert (out / "spec.yaml").read_bytes() == copy and (out / "results.csv").read_bytes() == rows


def test_an_active_dataset_too_small_is_one_line(tmp_path):
    spec = tmp_path / "a.yaml"
    spec.write_text(
        "kind: active\nname: a\ndatasets: [iris]\nrepeats: 1\nrounds: 10000\nm: 10000\nstart: 20\n"
    )
    _refused(
        ["run", str(spec), "--quiet", "--out", str(tmp_path / "o")],
        tmp_path,
        "datasets[0]: 'iris' has 150 rows; start 20 + a pool of at least 100000000 are needed",
    )


@pytest.mark.parametrize(
    ("column", "text"),
    [("repeat", "1_0"), ("fold", " 1"), ("repeat", "١"), ("value", "1_0.5"), ("value", "Infinity")],
)
def test_result_numbers_follow_the_grammar_knnx_writes(tmp_path, column, text):
    rows = [_row(i, 0.5) for i in range(2)]
    text_csv = rows_to_csv(rows, header=True).splitlines()
    header = text_csv[0].split(",")
    cells = text_csv[2].split(",")
    cells[header.index(column)] = text
    text_csv[2] = ",".join(cells)
    path = tmp_path / "r.csv"
    path.write_text("\n".join(text_csv) + "\n", encoding="utf-8")
    kind = "an integer" if column in ("repeat", "fold") else "a number"
    with pytest.raises(ResultsError, match=re.escape(f"column '{column}' line 3: '{text}' is not {kind}")):
        read_results(path)


def test_check_treats_nan_on_both_sides_as_unchanged_and_on_one_side_as_moved(tmp_path):
    from knnx.reporting.summaries import check_against_reference

    def write(name, values):
        rows = [{**_row(i, v), "repeat": 0, "fold": i} for i, v in enumerate(values)]
        path = tmp_path / name
        path.write_text(rows_to_csv(rows, header=True))
        return path

    nan = float("nan")
    ref = write("ref.csv", [nan, nan])
    assert check_against_reference(write("a.csv", [nan, nan]), ref, atol=0) == []
    problems = check_against_reference(write("b.csv", [0.5, 0.5]), ref, atol=0)
    assert len(problems) == 1 and problems[0].endswith("error: 0.5 vs reference nan (NaN on one side)")
    problems = check_against_reference(write("c.csv", [nan, nan]), write("ref2.csv", [0.5, 0.5]), atol=0)
    assert len(problems) == 1 and problems[0].endswith("error: nan vs reference 0.5 (NaN on one side)")


def test_check_counts_each_groups_values(tmp_path):
    """A fold's row lost, or its value now NaN, left a mean of the rest close to the
    reference's: knnx check (and the gate) said every group held, even at atol 0 when
    the folds agree. A group whose number of values differs has moved."""
    from knnx.reporting.summaries import check_against_reference

    def write(name, values):
        rows = [{**_row(i, v), "repeat": 0, "fold": i} for i, v in enumerate(values) if v is not None]
        path = tmp_path / name
        path.write_text(rows_to_csv(rows, header=True))
        return path

    ref = write("ref.csv", [0.6, 0.6, 0.6, 0.6, 0.6])
    nan = float("nan")
    for name, values, n in (
        ("lost.csv", [0.6, 0.6, None, 0.6, 0.6], 4),
        ("nan.csv", [0.6, nan, 0.6, 0.6, 0.6], 4),
    ):
        (problem,) = check_against_reference(write(name, values), ref, atol=0)
        assert problem.endswith(
            f"error: {n} values vs 5 in the reference (a row lost or added, or a value NaN on one side)"
        )
    assert check_against_reference(write("same.csv", [0.6] * 5), ref, atol=0) == []


def test_paper_step_probes_are_bounded_in_total(tmp_path):
    algorithm = {
        "name": "weighted_metric",
        "params": {"scheme": "cpw", "step_grid": "paper", "probe_epochs": 20000},
    }
    problems = _validate_problems({**BASE, "datasets": ["iris"], "algorithms": [algorithm]}, tmp_path)
    assert problems == [  # eight (mu, rho) pairs of the paper's grid, 20000 epochs each
        "algorithms[0]: step_grid='paper' with probe_epochs=20000 makes up to 160000 probe epochs, "
        "more than the limit of 100000"
    ]


def test_one_number_twice_in_a_grid_is_refused_whatever_its_spelling(tmp_path):
    algorithm = {"name": "unn", "params": {"theta": [1, 1.0]}}
    problems = _validate_problems({**BASE, "datasets": ["iris"], "algorithms": [algorithm]}, tmp_path)
    assert problems == ["algorithms[0].params.theta: value 1.0 is listed twice"]


@pytest.mark.parametrize(
    ("param", "grid", "dup"),
    [
        ("hidden_layer_sizes", [[5, 2], [5.0, 2.0]], "[5.0, 2.0]"),
        ("class_weight", [{"0": 1, "1": 2}, {"1": 2.0, "0": 1}], "{'1': 2.0, '0': 1}"),
    ],
)
def test_one_nested_value_twice_in_a_grid_is_refused_whatever_its_spelling(tmp_path, param, grid, dup):
    """``[[5, 2], [5.0, 2.0]]`` and ``[{x: 1}, {x: 1.0}]`` were two settings of one fit
    (compared by their JSON text); numbers inside lists and mappings compare as numbers."""
    estimator = (
        "sklearn.neural_network:MLPClassifier"
        if param == "hidden_layer_sizes"
        else "sklearn.linear_model:LogisticRegression"
    )
    algorithm = {"id": "m", "estimator": estimator, "params": {param: grid}}
    problems = _validate_problems({**BASE, "datasets": ["iris"], "algorithms": [algorithm]}, tmp_path)
    assert problems == [f"algorithms[0].params.{param}: value {dup} is listed twice"]


def test_nested_grid_values_keep_booleans_apart_from_numbers():
    from knnx.spec.grids import _grid_key

    assert _grid_key([1, True]) != _grid_key([1, 1]) and _grid_key([1, True]) == _grid_key([1.0, True])
    assert _grid_key({"a": [1, {"b": 2}]}) == _grid_key({"a": [1.0, {"b": 2.0}]})
    assert _grid_key({"a": 1}) != _grid_key({"b": 1}) and _grid_key([1, 2]) != _grid_key([2, 1])


def test_two_integers_that_one_float_holds_are_two_settings():
    """``[2**53, 2**53 + 1]`` was refused as one value listed twice (compared as float64);
    numbers compare exactly, as Python compares an int with a float."""
    from knnx.spec.grids import _grid_key

    assert _grid_key(2**53) != _grid_key(2**53 + 1)
    assert _grid_key(12345678901234567) != _grid_key(12345678901234568)
    assert _grid_key(1) == _grid_key(1.0) and _grid_key(2**53) == _grid_key(float(2**53))
    assert _grid_key(True) != _grid_key(1)
    assert _grid_key(10**400) == _grid_key(10**400) != _grid_key(10**400 + 1)
