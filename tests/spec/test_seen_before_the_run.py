"""What validation can see is refused before the run (docs/runs.md), each in one line
naming the algorithm, the dataset and the column, exit 2, nothing written: settings that
passed validation and then failed every cell, and values no result file can hold."""

import math

import numpy as np
import pytest
from conftest import refused_by_cli

from knnx.datasets import load_bundled
from knnx.errors import DataError
from knnx.experiment.runner import run_spec
from knnx.neighbors.search import check_power_scale
from knnx.results import read_results

HEAD = "name: t\nprotocol: {kind: kfold, folds: 2}\n"


def _spec(tmp_path, datasets, params):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"{HEAD}datasets: {datasets}\nalgorithms: [{{name: knn, params: {params}}}]\n")
    return spec


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_a_non_finite_value_inside_metric_params_is_refused(tmp_path, value):
    """``p: .inf`` passed the metric's own check (p = inf runs chebyshev in Python) and
    ended validation and the run in a traceback writing its params as JSON."""
    spec = _spec(tmp_path, "[iris]", f"{{metric: minkowski, metric_params: {{p: {value}}}}}")
    shown = {".inf": "inf", "-.inf": "-inf", ".nan": "nan"}[value]
    hint = "; minkowski with p = inf is metric: chebyshev" if value == ".inf" else ""
    message = (
        f"algorithms[0].params.metric_params: {{'p': {shown}}} holds {shown}, not a finite number; parameters "
        f"are written to results as JSON, which has no {shown}{hint}"
    )
    refused_by_cli(tmp_path, spec, message)


def test_a_minkowski_power_that_overflows_the_data_is_refused(tmp_path):
    """p = 1e300 on iris: |x - y|^p overflows on every training part (each cell failed
    with the kernels' DataError); the line is theirs, on the first training part."""
    spec = _spec(tmp_path, "[iris]", "{metric: minkowski, metric_params: [{p: 3}, {p: 1.0e+300}]}")
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (knn) on 'iris': metric minkowski, p = 1e+300: X: values too far apart "
        "for float64 sums of |x - y|^1e+300 (max |x - mean| = 3.13 over 4 features); rescale the data",
    )


def test_the_power_check_is_the_kernels_own_on_each_part():
    """Oracle: the rule written by hand, p log10(2 max|x - mean|) + log10(d) < 300, on
    iris's rows: the check refuses exactly the powers the rule refuses (here p = 600 and
    1e300 of 3, 100, 300, 600, 1e300)."""
    X = load_bundled("iris").X
    spread = np.abs(X - X.mean(0)).max()
    refused = []
    for p in (3.0, 100.0, 300.0, 600.0, 1e300):
        fits = p * math.log10(2 * spread) + math.log10(X.shape[1]) < 300
        refused += [] if fits else [p]
        if fits:
            check_power_scale(X, None, p)
        else:
            with pytest.raises(DataError, match=r"^X: values too far apart for float64 sums"):
                check_power_scale(X, None, p)
    assert refused == [600.0, 1e300]


def test_a_small_power_runs_and_equals_the_cells_it_did_before(tmp_path):
    """The check adds no refusal where cells ran: p = 3 on iris still runs every cell."""
    spec = _spec(tmp_path, "[iris]", "{metric: minkowski, metric_params: {p: 3}}")
    summary = run_spec(spec, out=tmp_path / "o", figures=False)
    frame = read_results(tmp_path / "o" / "results.csv")
    assert summary.n_run == 2 and frame["value"].notna().all()


@pytest.mark.parametrize(
    "dataset,nominal,message",
    [
        (
            "heart",
            "[[0, 99]]",
            "datasets[0]: algorithms[0] (knn) on 'heart': nominal: column index 99 is not one of the dataset's "
            "13 columns (0 to 12)",
        ),
        (
            "iris",
            "[[0]]",
            "datasets[0]: algorithms[0] (knn) on 'iris': nominal: column 0 ('sepal_length') holds 5.1 at row 0, "
            "not a category code 0, 1, 2, ...; nominal names the columns that hold codes",
        ),
    ],
)
def test_nominal_columns_the_dataset_cannot_give_are_refused(tmp_path, dataset, nominal, message):
    """Both passed validation and failed every cell (the index at fit, the codes in the
    metric)."""
    refused_by_cli(
        tmp_path, _spec(tmp_path, f"[{dataset}]", f"{{metric: hvdm, nominal: {nominal}}}"), message
    )


def test_nominal_columns_that_hold_codes_run(tmp_path):
    """heart's columns 1 and 2 hold codes: the setting runs, each cell under hvdm."""
    spec = _spec(tmp_path, "[heart]", "{metric: hvdm, nominal: [[1, 2]]}")
    assert run_spec(spec, out=tmp_path / "o", figures=False).n_run == 2


@pytest.mark.parametrize("value,what", [("''", "empty"), ("'  '", "blank (it has no visible character)")])
def test_an_empty_or_blank_dataset_id_is_refused(tmp_path, value, what):
    """``id: ''`` was ok to validation; the run wrote its folder and failed reading its
    own results file (an empty dataset name)."""
    (tmp_path / "d.csv").write_text("a,label\n" + "".join(f"{i},{i % 2}\n" for i in range(10)))
    spec = tmp_path / "s.yaml"
    spec.write_text(f"{HEAD}datasets: [{{csv: d.csv, id: {value}}}]\nalgorithms: [{{name: knn}}]\n")
    shown = value.strip("'")
    refused_by_cli(
        tmp_path,
        spec,
        f"datasets[0]: id: {shown!r} is {what}; a dataset id names its rows in every result file",
    )


def test_cosine_on_an_all_zero_row_is_refused_naming_the_row(tmp_path):
    """Validation said ok, then every cell failed: 'X: row 210 is all zeros' (keel.led7digit,
    whose row 267 is). Standardised, the row is no longer zeros, and the spec runs; the
    kernel's own refusal agrees."""
    rows = [[0.0, 0.0, 0]] + [[float(i % 3 + 1), float(i % 5 + 1), i % 2] for i in range(1, 12)]
    (tmp_path / "z.csv").write_text("a,b,label\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    spec = _spec(tmp_path, "[{csv: z.csv}]", "{k: 1, metric: cosine}")
    message = "datasets[0]: algorithms[0] (knn) on 'z': metric cosine: row 0 is all zeros; the cosine distance needs a non-zero row"
    refused_by_cli(tmp_path, spec, message)
    with pytest.raises(DataError, match="row 0 is all zeros; the cosine distance needs a non-zero row"):
        from knnx.estimators.knn import KNNClassifier

        KNNClassifier(k=1, metric="cosine").fit(np.array(rows)[:, :2], np.array(rows)[:, 2]).predict(
            [[0.0, 0.0]]
        )
    spec.write_text(spec.read_text().replace(HEAD, HEAD + "preprocess: {standardize: true}\n"))
    assert run_spec(spec, out=tmp_path / "o", figures=False).n_run == 2


def test_a_column_missing_everywhere_is_validated_without_a_warning(tmp_path):
    """validate printed numpy's 'RuntimeWarning: Mean of empty slice' on stderr (warnings
    are recorded, not printed)."""
    import warnings

    from knnx.spec import validate_spec

    (tmp_path / "m.csv").write_text("x,y,label\n" + "".join(f"{i},,{'ab'[i % 2]}\n" for i in range(1, 7)))
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"{HEAD}datasets: [{{csv: m.csv, label: label, missing: keep}}]\n"
        "algorithms: [{name: knn, params: {k: 1, metric: heom}}]\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(validate_spec(spec).cells) == 2


def test_codes_taken_for_a_first_step_are_named_as_its_view(tmp_path):
    """The entry says no categorical; its codes are the view cnn under hvdm takes. The
    refusal said '(categorical: keep)' and advised leaving categorical out of the entry."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"{HEAD}datasets: [keel.crx]\nalgorithms:\n"
        "  - {id: rf, estimator: 'sklearn.ensemble:RandomForestClassifier', params: {n_estimators: 5}, "
        "steps: [{name: cnn, params: {metric: hvdm}}]}\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (rf) on 'keel.crx': column 'A1' holds nominal category codes (the view step "
        "cnn takes under metric hvdm), which rf would read as numbers (it has no metric that takes nominal "
        "attributes); put an encode step after cnn, or give cnn a numeric metric",
    )
