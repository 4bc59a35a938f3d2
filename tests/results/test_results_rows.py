"""The rows of a results file as every reader takes them (``knnx.results.read_results``:
knnx table, compare, check, plot and report): a cell's metric given twice, ``params``
cells that are not a JSON object of parameters, integers below 0, empty names and a
repeated column are refused in one line naming the file, the line and the column; and
``knnx table --by`` refuses groupings that name no column or one column twice."""

import csv
import json
import shutil
import statistics

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import ResultsError
from knnx.results import (
    ROUND,
    read_results,
    recover,
    results_columns,
    rows_to_csv,
)

runner = CliRunner()

SPEC = {
    "name": "t",
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 3},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}],
}
# The params of the run's k=1 rows (lines 2-4: folds 0, 1, 2), then k=3 (lines 5-7).
K1 = '{"k":1,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}'
K1_SHOWN = K1[:40] + "..."
ONCE = "a results file holds each cell's metric once"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    from knnx.experiment.runner import run_spec

    out = tmp_path_factory.mktemp("run") / "out"
    run_spec(SPEC, out=out, report=False, figures=False)
    return out


@pytest.fixture
def folder(run_folder, tmp_path):
    """A fresh copy of the run's folder, to damage."""
    copy = tmp_path / "out"
    shutil.copytree(run_folder, copy)
    return copy


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def _set(path, line, column, text):
    """Write ``text`` in ``column`` of the file's line ``line`` (2: the first data row)."""
    rows = _rows(path)
    rows[line - 1][rows[0].index(column)] = text
    _write(path, rows)


def _append_copy(path, line, **changes):
    """Append a copy of the file's line ``line``, with ``changes`` ({column: text})."""
    rows = _rows(path)
    copy = list(rows[line - 1])
    for column, text in changes.items():
        copy[rows[0].index(column)] = text
    _write(path, [*rows, copy])


def _refused(args, message, folder):
    """exit 2, exactly one line ``error: MESSAGE``, and ``folder`` unchanged."""
    before = _snapshot(folder)
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.output.splitlines() == [f"error: {message}"], result.output
    assert _snapshot(folder) == before


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _commands(folder):
    path = folder / "results.csv"
    return {
        "table": ["table", path],
        "compare": ["compare", path, "--select", "all"],
        "plot": ["plot", path],
        "check": ["check", path, "--reference", path],
        "report": ["report", folder],
    }


# --- A: a cell's metric given twice ---------------------------------------------------------


def test_a_row_given_twice_is_refused_naming_both_lines(folder):
    """A copy of line 4 (k=1, fold 2) appended as line 8: knnx table showed n = 4 under a
    3-fold protocol."""
    path = folder / "results.csv"
    _append_copy(path, 4)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f"{path}: line 8 repeats line 4 (dataset iris, algorithm knn, params {K1_SHOWN}, repeat 0, fold 2, "
        f"metric error): {ONCE}"
    )


def test_a_copy_with_another_value_is_refused_too(folder):
    """The copy's value changed to 0.9 moved the mean, and its timing changed too: the
    key is the cell and its metric, not the whole row."""
    path = folder / "results.csv"
    _append_copy(path, 2, value="0.9", fit_seconds="7.0", n_test="3")
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f"{path}: line 8 repeats line 2 (dataset iris, algorithm knn, params {K1_SHOWN}, repeat 0, fold 0, "
        f"metric error): {ONCE}"
    )


def test_the_first_line_given_again_is_named_with_its_first_copy(folder):
    """Three copies of one row: the first repeat (line 8) and the line it repeats (3)."""
    path = folder / "results.csv"
    _append_copy(path, 3)
    _append_copy(path, 3)
    with pytest.raises(ResultsError, match=r": line 8 repeats line 3 \("):
        read_results(path)


def test_a_copy_with_its_params_reformatted_repeats_too(folder):
    """``{"k": 1, ...}`` (spaces, keys in another order) is the setting of ``{"k":1,...}``:
    knnx table labelled both ``knn k=1`` and counted n = 4."""
    path = folder / "results.csv"
    params = json.loads(K1)
    reformatted = json.dumps(dict(reversed(params.items())))
    _append_copy(path, 3, params=reformatted, value="0.9")
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f"{path}: line 8 repeats line 3 (dataset iris, algorithm knn, params {reformatted[:40]}..., repeat 0, "
        f"fold 1, metric error): {ONCE}"
    )


def test_a_copy_with_its_protocol_reformatted_repeats_too(folder):
    path = folder / "results.csv"
    _append_copy(path, 5, protocol='{"stratified": true, "repeats": 1, "kind": "kfold", "folds": 3}')
    with pytest.raises(
        ResultsError, match=r": line 8 repeats line 5 \(dataset iris, algorithm knn, params \{\"k\":3,"
    ):
        read_results(path)


@pytest.mark.parametrize("command", ["table", "compare", "plot", "check", "report"])
def test_every_command_refuses_a_row_given_twice(folder, command):
    path = folder / "results.csv"
    _append_copy(path, 4, value="0.9")
    message = (
        f"{path}: line 8 repeats line 4 (dataset iris, algorithm knn, params {K1_SHOWN}, repeat 0, fold 2, "
        f"metric error): {ONCE}"
    )
    _refused(_commands(folder)[command], message, folder)


@pytest.mark.parametrize(
    ("column", "text"),
    [
        ("seed", "7"),  # another seed: other splits, another measurement
        ("protocol", '{"folds":3,"kind":"kfold","repeats":1,"stratified":false}'),
        ("experiment", "other"),  # another run's rows, pooled in one file
        ("metric", "balanced_error"),
        ("fold", "3"),
        ("repeat", "1"),
    ],
)
def test_a_row_that_differs_in_its_cell_is_no_repeat(folder, column, text):
    path = folder / "results.csv"
    _append_copy(path, 4, **{column: text})
    frame = read_results(path)
    assert len(frame) == 7
    assert frame[column].astype(str).iloc[6] == text


def _active_file(tmp_path, rounds):
    """An active run's results: one cell, metric error, at each of ``rounds``."""
    base = {
        "experiment": "a",
        "dataset": "iris",
        "algorithm": "random",
        "params": '{"k":1}',
        "protocol": '{"kind":"active"}',
        "repeat": 0,
        "fold": 0,
        "seed": 0,
        "metric": "error",
        "n_train": 10,
        "n_test": 140,
        "fit_seconds": 0.0,
        "predict_seconds": 0.0,
        "tune_seconds": 0.0,
    }
    rows = [{**base, ROUND: r, "value": 0.5 - i / 10, "param_k": "1"} for i, r in enumerate(rounds)]
    path = tmp_path / "active.csv"
    path.write_text(rows_to_csv(rows, header=True, columns=results_columns(["k"], rounds=True)))
    return path


def test_an_active_runs_rounds_are_distinct_cells_of_one_loop(tmp_path):
    frame = read_results(_active_file(tmp_path, [0, 1, 2]))
    assert frame[ROUND].tolist() == [0, 1, 2]
    assert frame["value"].tolist() == [0.5, 0.4, 0.3]


def test_an_active_runs_round_given_twice_is_refused(tmp_path):
    path = _active_file(tmp_path, [0, 1, 1])
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f'{path}: line 4 repeats line 3 (dataset iris, algorithm random, params {{"k":1}}, repeat 0, fold 0, '
        f"round 1, metric error): {ONCE}"
    )


def test_a_resumed_run_reads_its_own_file(run_folder, tmp_path):
    """The runner's resume path (recover) keeps the file it wrote as it was; a second run
    resumes every cell and the file reads as before."""
    from knnx.experiment.runner import run_spec

    out = tmp_path / "out"
    shutil.copytree(run_folder, out)
    before = (out / "results.csv").read_bytes()
    run_spec(SPEC, out=out, report=False, figures=False)
    assert (out / "results.csv").read_bytes() == before
    assert len(read_results(out / "results.csv")) == 6


def test_recover_still_keeps_the_last_copy_of_a_row(folder):
    """recover, the runner's repair of its own folder, keeps its rule: of rows given
    twice the last is kept (read_results refuses such a file)."""
    path = folder / "results.csv"
    _append_copy(path, 2, value="0.9")
    done = recover(path, ["error"], columns=_rows(path)[0])
    assert len(done) == 6
    frame = read_results(path)
    assert len(frame) == 6
    assert frame[frame["fold"] == 0]["value"].tolist() == [0.04, 0.9]  # k=3, then the copy of k=1


# --- B: params that are not a JSON object of parameters; numbers, names, columns --------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{k:1", "'{k:1' is not a JSON object of parameters"),
        ("[1]", "'[1]' is not a JSON object of parameters"),
        ("", "'' is not a JSON object of parameters"),
        ("null", "'null' is not a JSON object of parameters"),
        ('"k"', "'\"k\"' is not a JSON object of parameters"),
        ('{"k":1} x', "'{\"k\":1} x' is not a JSON object of parameters"),
        ('{"k":1,"k":5}', "the key 'k' is given twice"),
        ('{"k":1,"m":{"p":1,"p":2}}', "the key 'p' is given twice"),
        ('{"k":NaN}', "NaN is not a finite JSON number"),
        ('{"k":[1,Infinity]}', "Infinity is not a finite JSON number"),
        ('{"k":-Infinity}', "-Infinity is not a finite JSON number"),
        ('{"k":1e999}', "1e999 is not a finite JSON number"),
        pytest.param(
            '{"k":' + "9" * 5000 + "}", "an integer of 5000 digits (at most 4300)", id="5000-digits"
        ),
        ('{"":1}', "a parameter without a name (the key '')"),
    ],
)
def test_a_params_cell_that_is_not_parameters_is_refused(folder, text, problem):
    path = folder / "results.csv"
    _set(path, 2, "params", text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column 'params' line 2: {problem}"


def test_a_long_params_cell_is_shown_shortened(folder):
    path = folder / "results.csv"
    text = "{" + "k" * 60
    _set(path, 5, "params", text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert (
        str(error.value)
        == f"{path}: column 'params' line 5: '{text[:40]}...' is not a JSON object of parameters"
    )


def test_the_first_line_of_a_bad_params_text_is_named(folder):
    """Lines 3 and 6 hold one bad text, line 5 another: line 3 is named (the first)."""
    path = folder / "results.csv"
    _set(path, 6, "params", "[2]")
    _set(path, 5, "params", "[1]")
    _set(path, 3, "params", "[2]")
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column 'params' line 3: '[2]' is not a JSON object of parameters"


@pytest.mark.parametrize("command", ["table", "compare", "plot", "check", "report"])
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{k:1", "'{k:1' is not a JSON object of parameters"),
        ('{"k":1,"k":5}', "the key 'k' is given twice"),
    ],
)
def test_every_command_names_the_file_of_a_bad_params_cell(folder, command, text, problem):
    path = folder / "results.csv"
    _set(path, 2, "params", text)
    _refused(_commands(folder)[command], f"{path}: column 'params' line 2: {problem}", folder)


@pytest.mark.parametrize(
    ("column", "line", "text"),
    [
        ("fold", 2, "-1"),
        ("repeat", 3, "-1"),
        ("n_train", 4, "-100"),
        ("n_test", 2, "-5"),
        ("seed", 7, "-2"),
    ],
)
def test_an_integer_below_zero_is_refused(folder, column, line, text):
    path = folder / "results.csv"
    _set(path, line, column, text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column '{column}' line {line}: {text} is not an integer >= 0"


def test_an_active_runs_round_below_zero_is_refused(tmp_path):
    path = _active_file(tmp_path, [0, -1])
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column 'round' line 3: -1 is not an integer >= 0"


def test_zero_integers_and_a_timing_not_recorded_are_read(folder):
    path = folder / "results.csv"
    _set(path, 2, "n_train", "0")
    _set(path, 2, "tune_seconds", "")
    _set(path, 3, "fit_seconds", "-0.0")  # zero seconds, however signed
    frame = read_results(path)
    assert frame["n_train"].iloc[0] == 0
    assert pd.isna(frame["tune_seconds"].iloc[0]) and frame["fit_seconds"].iloc[1] == 0.0


@pytest.mark.parametrize(
    ("column", "text", "problem"),
    [
        ("metric", "", "an empty cell; a name is expected"),
        ("dataset", "", "an empty cell; a name is expected"),
        ("algorithm", "  ", "'  ' is blank (it has no visible character); a name is expected"),
        ("experiment", "", "an empty cell; a name is expected"),
        # what does not print is escaped, as validation escapes it (it was printed raw)
        (
            "algorithm",
            "\u200bknn",
            "'\\u200bknn' starts with an invisible character (U+200B); a name starts and ends with a visible "
            "character; a name is expected",
        ),
        (
            "dataset",
            "iris\ufeff",
            "'iris\\ufeff' ends with an invisible character (U+FEFF); a name starts and ends with a visible "
            "character; a name is expected",
        ),
    ],
)
def test_an_empty_name_is_refused(folder, column, text, problem):
    """Empty, blank and invisible-ended names, each one line naming its cell; the name
    is quoted with what does not print escaped, so the message is plain ASCII here."""
    path = folder / "results.csv"
    _set(path, 4, column, text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column '{column}' line 4: {problem}"
    assert problem.isascii()


@pytest.mark.parametrize("column", ["value", "params", "param_k"])
def test_a_column_given_twice_is_refused(folder, column):
    """pandas reads a second ``value`` as ``value.1``, and every reader took the first."""
    path = folder / "results.csv"
    rows = _rows(path)
    at = rows[0].index(column)
    _write(path, [row + [row[at]] for row in rows])
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: the column '{column}' is given twice"


def test_a_column_named_like_a_renamed_copy_is_read(folder):
    """``value.1`` beside ``value`` is a column of its own when the header says so."""
    path = folder / "results.csv"
    _write(path, [row + (["value.1"] if i == 0 else ["x"]) for i, row in enumerate(_rows(path))])
    assert len(read_results(path)) == 6


@pytest.mark.parametrize("command", ["table", "compare", "plot", "check", "report"])
def test_every_command_refuses_a_negative_fold_and_a_column_given_twice(folder, command):
    path = folder / "results.csv"
    _set(path, 2, "fold", "-1")
    _refused(_commands(folder)[command], f"{path}: column 'fold' line 2: -1 is not an integer >= 0", folder)
    rows = _rows(folder / "results.csv")
    _write(path, [row + [row[rows[0].index("value")]] for row in rows])
    _refused(_commands(folder)[command], f"{path}: the column 'value' is given twice", folder)


def test_a_sound_file_reads_its_parameters(run_folder):
    frame = read_results(run_folder / "results.csv")
    assert frame["param_k"].tolist() == ["1", "1", "1", "3", "3", "3"]
    assert frame["param_metric_params"].tolist() == ["null"] * 6
    assert frame["param_weights"].tolist() == ["uniform"] * 6
    assert json.loads(frame["params"].iloc[0]) == json.loads(K1)


def test_panels_name_the_row_of_a_frame_built_in_python():
    """read_results refuses such a cell in a file; a frame built in Python reaches the
    panels' parser, which says the same, naming the row by the frame's index."""
    from knnx.reporting.parameters import parse_params

    params = pd.Series(['{"k":1}', '{"k":1,"k":2}', "[1]"], index=["a", "b", "c"])
    with pytest.raises(ResultsError) as error:
        parse_params(params)
    assert str(error.value) == "column 'params' row 'b' of the frame: the key 'k' is given twice"
    with pytest.raises(ResultsError) as error:
        parse_params(params.iloc[[0, 2]])
    assert (
        str(error.value) == "column 'params' row 'c' of the frame: '[1]' is not a JSON object of parameters"
    )
    assert parse_params(params.iloc[[0, 0]]) == [{"k": 1}, {"k": 1}]


# --- C: knnx table --by --------------------------------------------------------------------


@pytest.mark.parametrize("by", ["", " ", ",", " , ,"])
def test_table_by_nothing_is_one_line(folder, by):
    _refused(
        ["table", folder / "results.csv", "--by", by], "--by: expected one column or more, got none", folder
    )


@pytest.mark.parametrize(
    ("by", "message"),
    [
        ("k,param_k", "--by: 'k' and 'param_k' name one column"),
        ("param_k,dataset,k", "--by: 'param_k' and 'k' name one column"),
        ("k,k", "--by: column 'k' is given twice"),
        ("configuration, configuration", "--by: column 'configuration' is given twice"),
    ],
)
def test_table_by_one_column_twice_is_one_line(folder, by, message):
    _refused(["table", folder / "results.csv", "--by", by], message, folder)


@pytest.mark.parametrize(
    ("by", "message"),
    [
        ([], "by: expected one column or more, got none"),
        ("", "by: expected one column or more, got ''"),
        (" , ", "by: expected one column or more, got ' , '"),
        (["k", "param_k"], "by: 'k' and 'param_k' name one column"),
        ([1], "by: expected column names (texts), got 1"),
        (None, "by: expected column names (texts), got None"),
    ],
)
def test_results_table_refuses_a_grouping_of_no_column_or_one_twice(run_folder, by, message):
    from knnx.reporting.summaries import results_table

    with pytest.raises(ResultsError) as error:
        results_table(run_folder / "results.csv", by=by)
    assert str(error.value) == message


def test_results_table_takes_comma_separated_names(run_folder):
    from knnx.reporting.summaries import results_table

    path = run_folder / "results.csv"
    assert results_table(path, by="dataset, k", fmt="csv") == results_table(
        path, by=["dataset", "k"], fmt="csv"
    )


def test_table_by_metric_alone_is_one_group(run_folder):
    """``--by metric`` (every configuration pooled) raised 'No group keys passed!'."""
    from knnx.reporting.summaries import results_table

    frame = read_results(run_folder / "results.csv")
    text = results_table(frame, by=["metric"], fmt="csv")
    mean = statistics.mean(frame["value"])  # all six folds of k=1 and k=3 pooled
    std = float(np.std(frame["value"].to_numpy(), ddof=1))
    assert text.splitlines() == [
        "metric,configurations,mean,std,n,best",
        f"error,2,{mean!r},{std!r},6,True",
    ]


@pytest.mark.parametrize("text", ["inf", "-inf", "1e999"])
def test_an_infinite_value_is_refused(folder, text):
    """``knnx table`` bolded an infinite mean beside the lowest (an infinity ties with any
    value under the tie rule); no metric knnx scores is infinite."""
    path = folder / "results.csv"
    _set(path, 3, "value", text)
    shown = "-inf" if text == "-inf" else "inf"
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert (
        str(error.value)
        == f"{path}: column 'value' line 3: {shown} is not a finite number (NaN: not defined)"
    )


@pytest.mark.parametrize(
    ("column", "text", "shown"),
    [
        ("fit_seconds", "-0.5", "-0.5"),
        ("fit_seconds", "inf", "inf"),
        ("predict_seconds", "-1e-9", "-1e-09"),
        ("predict_seconds", "nan", "nan"),
        ("tune_seconds", "-inf", "-inf"),
    ],
)
def test_a_timing_that_is_no_duration_is_refused(folder, column, text, shown):
    """A negative, infinite or (fit, predict) missing time was read, and the timing table
    summed it: a wall time knnx measures is a finite number of seconds >= 0."""
    path = folder / "results.csv"
    _set(path, 3, column, text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column '{column}' line 3: {shown} is not a number of seconds >= 0"


@pytest.mark.parametrize("text", ["nan"])
def test_a_nan_written_as_a_tune_time_is_refused_and_an_empty_cell_is_not_recorded(folder, text):
    """``tune_seconds`` = nan was read as "not recorded" (an empty cell's meaning), and
    ``knnx table --metric tune_seconds`` counted n = 2 of 3; the other timings refuse NaN."""
    path = folder / "results.csv"
    _set(path, 3, "tune_seconds", text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f"{path}: column 'tune_seconds' line 3: {text} is not a number of seconds >= 0 "
        "(a time not recorded is an empty cell)"
    )
    _set(path, 3, "tune_seconds", "")
    frame = read_results(path)
    assert (
        np.isnan(frame["tune_seconds"].iloc[1])
        and frame["tune_seconds"].drop(index=frame.index[1]).notna().all()
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [("kfold", "kfold"), ('["kfold"]', '["kfold"]'), ("", ""), ('{"kind": NaN}', '{"kind": NaN}')],
)
def test_a_protocol_that_is_no_json_object_is_refused(folder, text, shown):
    """A hand-edited ``protocol`` such as ``kfold`` was read, a protocol of its own to
    every reader (its rows no repeat of the others, its results another group)."""
    path = folder / "results.csv"
    _set(path, 3, "protocol", text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f"{path}: column 'protocol' line 3: '{shown}' is not a JSON object (the protocol as knnx writes it)"
    )


def test_side_files_refuse_negative_counts_and_infinite_curves(tmp_path):
    """warnings.csv ``count = -5`` and curves.csv ``iteration = -3`` or ``value = inf``
    were read as written (results.csv refused the like)."""
    from knnx.results import CURVE_COLUMNS, WARNING_COLUMNS, read_curves, read_warnings

    cell = {"dataset": "d", "algorithm": "unn", "params": "{}", "repeat": 0, "fold": 1}
    warned = tmp_path / "warnings.csv"
    warned.write_text(
        rows_to_csv(
            [{**cell, "category": "UserWarning", "message": "m", "count": -5}],
            header=True,
            columns=WARNING_COLUMNS,
        )
    )
    with pytest.raises(ResultsError) as err:
        read_warnings(warned)
    assert str(err.value) == f"{warned}: column 'count' line 2: -5 is not an integer >= 0"
    curve = {"experiment": "e", **cell, "series": "train_error"}
    for row, message in (
        ({**curve, "iteration": -3, "value": 0.5}, "column 'iteration' line 2: -3 is not an integer >= 0"),
        (
            {**curve, "iteration": 3, "value": float("inf")},
            "column 'value' line 2: inf is not a finite number",
        ),
    ):
        path = tmp_path / "curves.csv"
        path.write_text(rows_to_csv([row], header=True, columns=CURVE_COLUMNS))
        with pytest.raises(ResultsError) as err:
            read_curves(path)
        assert str(err.value).startswith(f"{path}: {message}")


def test_a_row_cut_short_is_named_as_such_not_as_a_bad_value(folder, tmp_path):
    """pandas reads a row cut short with its missing fields empty: results.csv's line 3
    cut after 6 fields was refused as "column 'fold' line 3: '' is not an integer", and
    warnings.csv's likewise; the line and its field count are named instead."""
    from knnx.results import WARNING_COLUMNS, read_warnings

    rows = _rows(folder / "results.csv")
    _write(folder / "results.csv", [*rows[:2], rows[2][:6], *rows[3:]])
    _refused(
        ["table", folder / "results.csv"],
        f"{folder / 'results.csv'}: line 3 has 6 fields, the header {len(rows[0])}: a row cut short or run together",
        folder,
    )
    cell = {"dataset": "d", "algorithm": "knn", "params": "{}", "repeat": 0, "fold": 1}
    warned = tmp_path / "warnings.csv"
    warned.write_text(
        rows_to_csv(
            [{**cell, "category": "UserWarning", "message": "m", "count": 2}],
            header=True,
            columns=WARNING_COLUMNS,
        )
        + "d,knn,{},0\n"
    )
    with pytest.raises(ResultsError) as err:
        read_warnings(warned)
    assert str(err.value) == f"{warned}: line 3 has 4 fields, the header 8: a row cut short or run together"
    _write(warned, _rows(warned)[:2])  # without the short row: read as written
    assert read_warnings(warned)["count"].tolist() == [2]


@pytest.mark.parametrize(("column", "text"), [("metric", " error"), ("algorithm", "knn ")])
def test_a_metric_or_algorithm_name_with_blanks_around_it_is_refused(folder, column, text):
    """``' error'`` was read as a metric other than ``error``, and ``table`` then said
    ``no rows for metric 'error'; present:  accuracy,  error`` (the blank unseen)."""
    _set(folder / "results.csv", 2, column, text)
    _refused(
        ["table", folder / "results.csv"],
        f"{folder / 'results.csv'}: column '{column}' line 2: '{text}' {'starts' if text[0] == ' ' else 'ends'} "
        "with a blank (U+0020); a name starts and ends with a visible character; a name is expected",
        folder,
    )


@pytest.mark.parametrize(
    ("metric", "text", "range_"),
    [
        ("error", "6.666666666666667e+305", "[0, 1]"),
        ("mcc", "-1.5", "[-1, 1]"),
        ("brier", "2.5", "[0, 2]"),
        ("js", "0.7", "[0, 0.693147]"),
        ("log_loss", "-0.1", "[0, inf]"),
    ],
)
def test_a_value_outside_its_metric_range_is_refused(folder, metric, text, range_):
    """An error of 6.7e305 was read; compare then overflowed its squares (numpy's warnings
    on stderr, a std of inf) where table printed 1e308 ± 0."""
    path = folder / "results.csv"
    _set(path, 3, "metric", metric)
    _set(path, 3, "value", text)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert (
        str(error.value)
        == f"{path}: column 'value' line 3: {float(text)!r} is no value of {metric}, which lies in {range_}"
    )
    _set(path, 3, "value", "nan")  # not defined: read
    read_results(path)


def test_every_metric_of_knnx_has_its_range():
    from knnx.evaluation.metrics import METRIC_INPUT
    from knnx.results.schema import VALUE_RANGES

    assert set(VALUE_RANGES) == set(METRIC_INPUT)


def test_a_byte_that_is_not_utf8_is_named_by_its_line(folder):
    """pandas' message counted the byte from the start of its buffer ('position 3'),
    naming no line."""
    path = folder / "results.csv"
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b"iris", b"iris\xe9", 1)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: line 4: byte 0xe9 is not UTF-8 (knnx writes its files in UTF-8)"


def test_two_names_written_alike_once_normalised_are_refused(folder):
    """'é' as one code point and as e + a combining accent were two datasets, printed alike
    (the spec refuses such ids; a file merged by hand could hold both)."""
    path = folder / "results.csv"
    _set(path, 2, "dataset", "\u00e9")
    _set(path, 3, "dataset", "e\u0301")
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == (
        f"{path}: column 'dataset' line 3: 'e\u0301' is '\u00e9' of line 2 once Unicode-normalised (NFC), and "
        "would print alike; a name is one text"
    )
