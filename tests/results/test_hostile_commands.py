"""Commands on hand-edited results and odd arguments, and spec entries that share an
algorithm's name (issue 33, the findings of its first hostile corpus that part 1 left):
each refusal is one ``error:`` line, exit 2, nothing written."""

import csv

import numpy as np
import pytest
import yaml
from test_hostile_results import _refused, _snapshot
from typer.testing import CliRunner

from knnx.cli import app

runner = CliRunner()

SPEC = {
    "name": "t",
    "seed": 1,
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 2},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5]}}],
}


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    from knnx.experiment.runner import run_spec

    out = tmp_path_factory.mktemp("run") / "out"
    run_spec(SPEC, out=out, report=False)
    return out


def _edit_params(path, line, edit):
    """Replace the params cell of ``path``'s line ``line`` (2: the first row) by ``edit(cell)``."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[line - 1][3] = edit(rows[line - 1][3])
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


# --- plot and report on a row that lacks the parameter drawn --------------------------------


def test_plot_on_a_row_lacking_the_parameter_drawn_is_one_line(run_folder, tmp_path):
    path = tmp_path / "results.csv"
    path.write_bytes((run_folder / "results.csv").read_bytes())
    _edit_params(path, 4, lambda cell: cell.replace('"k":3,', ""))
    _refused(
        ["plot", path, "--x", "k"],
        "column 'params' line 4: no 'k' in this row of knn on iris, while its other rows there have one: it has no "
        "place on the 'k' axis (a run writes every row of an algorithm with the same parameters)",
        tmp_path,
    )
    # and the default axis is the same k
    _refused(
        ["plot", path],
        "column 'params' line 4: no 'k' in this row of knn on iris, while its other rows "
        "there have one: it has no place on the 'k' axis (a run writes every row of an algorithm with the "
        "same parameters)",
        tmp_path,
    )


def test_report_on_a_row_lacking_the_parameter_gives_its_tables_and_says_why_a_figure_is_missing(
    run_folder, tmp_path
):
    import shutil

    folder = tmp_path / "out"
    shutil.copytree(run_folder, folder)
    _edit_params(folder / "results.csv", 2, lambda cell: cell.replace('"k":1,', ""))
    result = runner.invoke(app, ["report", str(folder)])
    assert result.exit_code == 0, result.output
    html = (folder / "report.html").read_text()
    assert (
        "no figure of error against k: column &#x27;params&#x27; line 2: no &#x27;k&#x27; in this row of knn on "
        "iris" in html
    )
    assert html.count("<figure") == 1  # the configurations' figure alone


# --- check: --atol-for and its closing line, a folder given for a file ----------------------


def test_check_atol_for_an_algorithm_not_in_the_reference_is_one_line(run_folder):
    path = run_folder / "results.csv"
    _refused(
        ["check", path, "--reference", path, "--atol-for", "knn=0.1", "--atol-for", "cw=0.2"],
        f"--atol-for: no algorithm 'cw' in {path} (its algorithms: knn)",
        run_folder,
    )


def test_check_atol_for_given_twice_for_one_algorithm_is_one_line(run_folder):
    path = run_folder / "results.csv"
    _refused(
        ["check", path, "--reference", path, "--atol-for", "knn=0.1", "--atol-for", "knn=0.2"],
        "--atol-for: 'knn' given twice (0.1 and 0.2); give each algorithm one tolerance",
        run_folder,
    )


def test_check_against_a_reference_without_rows_is_one_line(run_folder, tmp_path):
    """A header-only reference: check said 'all groups ... within 0.01' and exit 0, having
    checked nothing (table and compare refuse the file)."""
    path = run_folder / "results.csv"
    empty = tmp_path / "empty.csv"
    empty.write_text(path.read_text().splitlines()[0] + "\n")
    _refused(
        ["check", path, "--reference", empty],
        f"--reference: {empty}: no rows; a reference holds the results to check against",
        tmp_path,
    )


def test_check_says_the_tolerances_it_used(run_folder, tmp_path):
    path = run_folder / "results.csv"
    moved = tmp_path / "moved.csv"
    moved.write_bytes(path.read_bytes())
    with open(moved, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    value = rows[0].index("value")
    rows[1][value] = str(float(rows[1][value]) + 0.2)  # k=1 fold 0: the k=1 mean moves by 0.1
    with open(moved, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    held = runner.invoke(app, ["check", str(path), "--reference", str(path), "--atol-for", "knn=0"])
    assert (held.exit_code, held.output) == (0, f"all groups of {path} within 0.01 (knn: 0)\n")
    held = runner.invoke(app, ["check", str(moved), "--reference", str(path), "--atol", "0.5"])
    assert (held.exit_code, held.output) == (0, f"all groups of {path} within 0.5\n")
    result = runner.invoke(app, ["check", str(moved), "--reference", str(path), "--atol-for", "knn=0.05"])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "1 group(s) outside tolerance 0.01 (knn: 0.05)"
    assert result.output.splitlines()[0].startswith("moved: iris knn ")
    assert result.output.splitlines()[0].endswith("(|diff| 0.1 > 0.05)")


@pytest.mark.parametrize("command", ["check", "plot", "table", "compare"])
def test_a_folder_given_for_a_results_file_is_named_as_a_folder(run_folder, command):
    args = {
        "check": ["check", run_folder / "results.csv", "--reference", run_folder],
        "plot": ["plot", run_folder],
        "table": ["table", run_folder],
        "compare": ["compare", run_folder],
    }[command]
    flag = "--reference" if command == "check" else "RESULTS"
    _refused(
        args,
        f"{flag}: {run_folder} is a folder; expected a results file (such as {run_folder / 'results.csv'})",
        run_folder,
    )


def test_a_missing_results_file_is_still_named_missing(tmp_path):
    _refused(["table", tmp_path / "nope.csv"], f"RESULTS: file not found: {tmp_path / 'nope.csv'}", tmp_path)
    assert _snapshot(tmp_path) == {}


# --- params_for entries share no id ----------------------------------------------------------


@pytest.mark.parametrize(
    ("algorithms", "message"),
    [
        (
            "[{name: knn, params: {k: 1}}, {name: knn, params_for: {iris: {k: 3}, wine: {k: 5}}}]",
            "algorithms[1]: 'knn' is also the id of algorithms[0], and an entry with params_for is one contestant "
            "whose parameters depend on the dataset: give algorithms[1] an id of its own (id: knn_2)",
        ),
        (
            "[{name: knn, params_for: {iris: {k: 3}}}, {name: knn, params: {k: [7, 9]}}]",
            "algorithms[1]: 'knn' is also the id of algorithms[0], and an entry with params_for is one contestant "
            "whose parameters depend on the dataset: give algorithms[0] an id of its own (id: knn_2)",
        ),
    ],
)
def test_a_params_for_entry_sharing_its_algorithm_id_is_refused(tmp_path, algorithms, message):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\ndatasets: [iris, wine]\nprotocol: {{kind: kfold, folds: 2}}\nalgorithms: {algorithms}\n"
    )
    _refused(["validate", spec], f"{spec}: {message}", tmp_path)


def test_params_for_entries_with_ids_of_their_own_are_one_contestant_each(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: t\nseed: 1\ndatasets: [iris, wine]\nprotocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn, "
        "params: {k: 1}}, {name: knn, id: knn_pf, params_for: {iris: {k: 1}, wine: {k: 5}}}]\n"
    )
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", str(spec), "--out", str(out), "--quiet", "--no-report"]).exit_code == 0
    result = runner.invoke(app, ["compare", str(out / "results.csv"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    from knnx.results import read_results

    frame = read_results(out / "results.csv")
    errors = frame[frame.metric == "error"].groupby(["dataset", "algorithm"])["value"].mean()
    # iris: both have k = 1 (equal errors), kept apart by id; wine: k = 1 against k = 5
    assert errors[("iris", "knn")] == errors[("iris", "knn_pf")]
    assert errors[("wine", "knn")] != errors[("wine", "knn_pf")]
    assert "knn_pf" in result.output and "left out" not in result.output


@pytest.mark.parametrize(
    ("name", "said"),
    [("fig", "{out} has no image suffix"), ("fig.xyz", "unsupported image format '.xyz'")],
)
def test_plot_out_without_an_image_suffix_says_so(run_folder, tmp_path, name, said):
    out = tmp_path / name
    result = runner.invoke(app, ["plot", str(run_folder / "results.csv"), "--out", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: --out: {said.format(out=out)}; use one of ")
    assert ".png" in result.output.split("; use one of ")[1].split(", ")
    assert not out.exists()


# --- resuming from a folder holding headers alone, or a damaged ledger ------------------------


def _header_only(path):
    path.write_text(path.read_text().splitlines()[0] + "\n")


def test_a_rerun_over_files_holding_their_headers_alone_runs_every_cell(run_folder, tmp_path):
    """What a run whose every cell failed, or one interrupted before its first cell,
    leaves: the rerun ran into ``KeyError: 'metric'`` (a list of no cells picked no
    column)."""
    import shutil

    from knnx.results import read_results

    folder = tmp_path / "out"
    shutil.copytree(run_folder, folder)
    _header_only(folder / "results.csv")
    _header_only(folder / "cells.csv")
    shutil.copy(folder / "spec.yaml", tmp_path / "s.yaml")
    result = runner.invoke(
        app, ["run", str(tmp_path / "s.yaml"), "--out", str(folder), "--quiet", "--no-report"]
    )
    assert result.exit_code == 0, result.output
    keep = ["dataset", "algorithm", "params", "repeat", "fold", "metric", "value"]
    ours, theirs = (read_results(p / "results.csv")[keep] for p in (folder, run_folder))
    assert (
        ours.sort_values(keep[:6])
        .reset_index(drop=True)
        .equals(theirs.sort_values(keep[:6]).reset_index(drop=True))
    )


def test_a_ledger_that_is_not_utf8_is_one_line(run_folder, tmp_path):
    import shutil

    folder = tmp_path / "out"
    shutil.copytree(run_folder, folder)
    with open(folder / "cells.csv", "ab") as fh:
        fh.write(b"garbage\xff,,\n")
    size = (folder / "cells.csv").stat().st_size
    shutil.copy(folder / "spec.yaml", tmp_path / "s.yaml")
    before = _snapshot(folder)
    result = runner.invoke(app, ["run", str(tmp_path / "s.yaml"), "--out", str(folder), "--quiet"])
    assert (result.exit_code, result.output) == (
        2,
        f"error: {folder / 'cells.csv'}: not UTF-8 (byte {size - 4}); not a knnx cell ledger\n",
    )
    assert _snapshot(folder) == before


def test_user_text_that_reads_like_an_emoji_code_is_printed_as_written(tmp_path):
    """rich turned ``:fire:`` into 🔥 in an error line: the column could not be found."""
    (tmp_path / "d.csv").write_text(":fire:,class\n1,a\noops,b\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: t\ndatasets: [{csv: d.csv, label: class}]\nprotocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn}]\n"
    )
    result = runner.invoke(app, ["validate", str(spec)])
    assert result.exit_code == 2
    assert result.output.startswith(
        f"error: {spec}: datasets[0]: {tmp_path / 'd.csv'}: column ':fire:' line 3: 'oops' is not a number"
    ), result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("010", "'010' is read as 8 (YAML 1.1: a leading 0 makes it octal); write 8, or quote it"),
        ("-00", "'-00' is read as 0 (YAML 1.1: a leading 0 makes it octal); write 0, or quote it"),
        ("1_000", "'1_000' is read as 1000 (YAML 1.1: '_' is dropped); write 1000, or quote it"),
        ("1:30", "'1:30' is read as 90 (YAML 1.1: ':' makes it base 60); write 90, or quote it"),
        ("2_5.0", "'2_5.0' is read as 25.0 (YAML 1.1: '_' is dropped); write 25.0, or quote it"),
        (
            "1e3",
            "'1e3' is read as text, not a number (YAML 1.1: a float needs a dot and a signed exponent); "
            "write 1.0e+3, or quote it",
        ),  # fmt: skip
        (
            "1.5E3",
            "'1.5E3' is read as text, not a number (YAML 1.1: a float needs a dot and a signed "
            "exponent); write 1.5e+3, or quote it",
        ),  # fmt: skip
        (".5e2", "write .5e+2, or quote it"),
        (
            "08",
            "'08' is read as text, not a number (a leading 0 means octal, and 8 or 9 is no octal digit); "
            "write 8, or quote it",
        ),  # fmt: skip
        ("0o10", "'0o10' is read as text, not a number (YAML 1.1 writes octal as 010); write 8, or quote it"),
        ("0x_1F", "'0x_1F' is read as 31 (YAML 1.1: '_' is dropped); write 31, or quote it"),
    ],
)
def test_a_number_yaml_11_reads_otherwise_is_refused_with_its_spelling(tmp_path, text, message):
    """``--set seed=010`` ran with seed 8, and ``1e3`` reached an estimator as the text
    "1e3": in a file as in ``--set``, such numbers are refused, naming what to write."""
    import yaml

    from knnx.spec.read import load_yaml

    with pytest.raises(yaml.YAMLError) as err:
        load_yaml(f"seed: [1, {text}]")
    assert message in str(err.value)
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    done = runner.invoke(app, ["validate", str(spec), "--set", f"algorithms[0].params.k={text}"])
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.startswith(
        f"error: --set 'algorithms[0].params.k={text}': the value is not valid YAML ("
    )
    assert message in done.stderr and done.stderr.count("\n") == 1


def test_numbers_both_yamls_read_alike_and_quoted_texts_are_kept():
    from knnx.spec.read import dump_spec, load_yaml

    assert load_yaml("[0, -0, +3, 10, 0.5, 007.5, 1.0e+3, 1.5E-3, .5e-1, 0x10, 0b11, '010', '1e3', \"1_000\"]") == [
        0, 0, 3, 10, 0.5, 7.5, 1000.0, 0.0015, 0.05, 16, 3, "010", "1e3", "1_000",
    ]  # fmt: skip
    value = {
        "datasets": ["1e3", "010", "08", "0o10", {"id": "1.5E+3"}],
        "k": [1, 2.5, 1e-05, 1e300],
        "s": "1:30",
    }
    assert load_yaml(dump_spec(value)) == value  # spec.yaml beside the results reads back


def test_report_waits_for_the_run_that_holds_its_folder(run_folder, tmp_path):
    """``knnx report OUT`` wrote report.html into a folder a run held (and would write
    again at its end); it is refused in one line naming the run, as a second run is."""
    import os
    import shutil

    from knnx.writing import output_lock

    out = tmp_path / "out"
    shutil.copytree(run_folder, out)
    with output_lock(out):
        done = runner.invoke(app, ["report", str(out)])
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: {out}: another knnx run (pid {os.getpid()}) is writing to this folder; wait for it to end or use OUT\n"
    )
    assert not (out / "report.html").exists()
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0 and (out / "report.html").exists()


def test_report_refuses_a_control_that_names_no_configuration_without_a_comparison(run_folder, tmp_path):
    """On one dataset (no comparison to make) ``knnx report --control nope`` exited 0
    and ignored it; on two datasets it was refused. The control names a configuration
    either way."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(run_folder, out)
    done = runner.invoke(app, ["report", str(out), "--control", "nope"])
    assert (done.exit_code, done.stderr) == (
        2,
        "error: --control: 'nope' is not a contestant; contestants: knn k=1, knn k=3, knn k=5\n",
    )
    assert not (out / "report.html").exists()
    assert runner.invoke(app, ["report", str(out), "--control", "knn k=3"]).exit_code == 0


def test_a_memory_limit_that_is_no_size_names_itself_not_a_dataset(tmp_path, monkeypatch):
    """It read ``datasets[0]: KNNX_MEMORY_LIMIT: ...``: the variable is no dataset's."""
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "lots")
    done = runner.invoke(app, ["validate", str(spec)])
    assert (done.exit_code, done.stderr) == (
        2,
        "error: KNNX_MEMORY_LIMIT: expected a size such as 512M, 8G or 1.5GiB, got 'lots'\n",
    )


def test_gate_given_a_file_for_its_folder_says_so(tmp_path):
    spec = tmp_path / "regress_tiny.yaml"
    spec.write_text("name: t\n")
    done = runner.invoke(app, ["gate", "--specs", str(spec)])
    assert (done.exit_code, done.stderr) == (
        2,
        f"error: --specs: {spec} is a file; expected a folder of regress_*.yaml specs\n",
    )


@pytest.mark.parametrize(
    ("first", "second", "shown"),
    [
        ("seed=1", "seed=2", "seed"),
        ("algorithms[0].params.k=1", "algorithms.0.params.k=3", "algorithms[0].params.k"),
    ],
)
def test_a_path_set_twice_is_refused(tmp_path, first, second, shown):
    """``--set seed=1 --set seed=2`` kept the last silently (``--atol-for`` refuses its
    repeats): one of the two is a mistake."""
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    done = runner.invoke(app, ["validate", str(spec), "--set", first, "--set", second])
    assert (done.exit_code, done.stderr) == (
        2,
        f"error: --set '{second}': {shown} is set twice (also by --set '{first}'); set each path once\n",
    )


@pytest.mark.parametrize(
    ("first", "second", "shown"),
    [
        ("protocol.folds=3", "protocol={kind: kfold, folds: 10}", "protocol"),
        ("algorithms[0].params.k=7", "algorithms=[{name: knn, params: {k: 3}}]", "algorithms"),
    ],
)
def test_an_override_holding_an_earlier_ones_path_is_refused(tmp_path, first, second, shown):
    """``--set protocol.folds=3 --set 'protocol={kind: kfold, folds: 10}'`` said ok
    and ran 10 folds: the first override was dropped without a word. The other order
    refines the whole value, and is kept (the run's spec.yaml holds both)."""
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    done = runner.invoke(app, ["validate", str(spec), "--set", first, "--set", second])
    assert (done.exit_code, done.stderr) == (
        2,
        f"error: --set '{second}': sets {shown} whole, which would drop --set '{first}' given before it; set "
        f"{shown} first, then the paths inside it\n",
    )
    from knnx.spec import validate_spec
    from knnx.spec.overrides import apply_overrides

    refined = apply_overrides(SPEC, [second, first])
    assert (
        (refined["protocol"]["folds"] == 3)
        if shown == "protocol"
        else (refined["algorithms"][0]["params"]["k"] == 7)
    )
    assert validate_spec(refined).cells


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("iris,99,4,3,0,0", "line 3 repeats the dataset 'iris' of line 2"),
        ("wine,-7,13,3,0,0", "column 'n' line 3: '-7' is not an integer >= 0"),
        ("wine,178,abc,3,0,0", "column 'd' line 3: 'abc' is not an integer >= 0"),
    ],
)
def test_a_damaged_datasets_file_is_one_line_in_compare_and_report(run_folder, tmp_path, line, message):
    """A dataset given twice in datasets.csv ended compare and report in a traceback
    (cannot reindex on an axis with duplicate labels); a negative n was printed."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(run_folder, out)
    path = out / "datasets.csv"
    path.write_text(path.read_text() + line + "\n")
    from knnx.errors import ResultsError
    from knnx.reporting.characteristics import read_datasets

    with pytest.raises(ResultsError) as err:  # what compare reads beside the results
        read_datasets(path)
    assert str(err.value) == f"{path}: {message}"
    done = runner.invoke(app, ["report", str(out)])
    assert (done.exit_code, done.stderr) == (2, f"error: {path}: {message}\n")


def test_a_device_given_as_a_csv_is_named_so():
    """``select-k --csv /dev/null`` said "file not found" of a device that exists."""
    done = runner.invoke(app, ["select-k", "--csv", "/dev/null", "--p", "2"])
    assert (done.exit_code, done.stderr) == (2, "error: /dev/null: not a regular file (a device or a pipe)\n")


@pytest.mark.parametrize(
    ("by", "message"),
    [
        ("value", "--by: 'value' is a measured column, what the table summarises (--metric), not a group: "),
        ("dataset,fit_seconds", "--by: 'fit_seconds' is a measured column, what the table summarises"),
    ],
)
def test_table_by_a_measured_column_is_one_line(run_folder, by, message):
    """``--by value`` made one group per measured value (each of n = 1), exit 0."""
    result = runner.invoke(app, ["table", str(run_folder / "results.csv"), "--by", by])
    assert result.exit_code == 2, result.output
    assert len(result.output.splitlines()) == 1 and result.output.startswith(f"error: {message}")
    grouped = runner.invoke(app, ["table", str(run_folder / "results.csv"), "--by", "dataset,k"])
    assert grouped.exit_code == 0
    assert grouped.output.splitlines()[2:5] == [  # one row per k, each over 2 folds
        "| iris | 1 | **0.0267 ± 0.0000** | 2 |",
        "| iris | 3 | 0.0400 ± 0.0377 | 2 |",
        "| iris | 5 | 0.0400 ± 0.0377 | 2 |",
    ]


def test_plot_datasets_naming_one_twice_is_one_line(run_folder, tmp_path):
    """``--datasets iris,iris`` drew one panel, the second name dropped silently."""
    _refused(
        ["plot", run_folder / "results.csv", "--datasets", "iris,iris", "--out", tmp_path / "p.png"],
        "--datasets: 'iris' is named twice",
        tmp_path,
    )


def test_select_k_beyond_the_rows_names_the_k_max_option_and_its_default(tmp_path):
    """``select-k`` on 5 rows said ``k_max: must be between 1 and 4 ..., got 50``, naming
    neither the option nor that 50 is its default."""
    data = tmp_path / "tiny.csv"
    data.write_text("a,b,label\n1,2,0\n2,3,1\n3,1,0\n4,4,1\n5,2,0\n")
    _refused(
        ["select-k", "--csv", data, "--p", "1"],
        "--k-max 50: at most n - p = 4 on these 5 rows with --p 1 (the default is 50); give --k-max 4 or less",
        tmp_path,
    )
    done = runner.invoke(app, ["select-k", "--csv", str(data), "--p", "1", "--k-max", "4", "--format", "csv"])
    assert (
        done.exit_code == 0
        and done.output.splitlines()[0] == "k,lpo_risk"
        and len(done.output.splitlines()) == 5
    )


def test_compare_says_when_the_contestants_folds_differ(run_folder, tmp_path):
    """With k=1's fold 1 missing, compare's table gave k=1's mean over one fold beside the
    others' over two, and ranked them, without a word."""
    with open(run_folder / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, at = rows[0], rows[0].index("dataset")
    rows += [[*r[:at], "iris_b", *r[at + 1 :]] for r in rows[1:]]  # a second dataset, for compare
    whole = tmp_path / "whole.csv"
    with open(whole, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    gone = next(
        i
        for i, r in enumerate(rows)
        if r[header.index("fold")] == "1" and '"k":1,' in r[header.index("params")]
    )
    with open(tmp_path / "results.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows[:gone] + rows[gone + 1 :])
    done = runner.invoke(app, ["compare", str(tmp_path / "results.csv"), "--select", "all"])
    assert done.exit_code == 0, done.output
    uneven = [line for line in done.output.splitlines() if line.startswith("Uneven")]
    assert uneven == [
        "Uneven folds on iris: knn k=1 (1 of 2); each mean is over its contestant's own folds, "
        "the paired tests over the folds shared."
    ]
    done = runner.invoke(app, ["compare", str(whole), "--select", "all"])
    assert done.exit_code == 0 and "Uneven" not in done.output


def _odd_path(tmp_path, kind):
    """A path of ``kind`` in ``tmp_path``: a FIFO, a link loop, a link to nothing, a
    folder, or nothing at all."""
    import os

    path = tmp_path / "odd.csv"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "dangling":
        path.symlink_to(tmp_path / "nowhere.csv")
    elif kind == "folder":
        path.mkdir()
    return path


KINDS = {
    "fifo": "not a regular file (a device or a pipe)",
    "loop": "a symbolic link loop",
    "dangling": "a link to nothing",
    "missing": "file not found",
}


@pytest.mark.parametrize("kind", [*KINDS, "folder"])
@pytest.mark.parametrize("command", [["table"], ["compare"], ["plot"], ["check", "--reference", "{ref}"]])
def test_every_command_names_the_kind_of_a_path_it_cannot_read(tmp_path, run_folder, command, kind):
    """A FIFO was called "file not found" (and a link loop too); each kind is named, in one
    line, before anything reads the path."""
    path = _odd_path(tmp_path, kind)
    args = [a.replace("{ref}", str(run_folder / "results.csv")) for a in command]
    before = sorted(p.name for p in tmp_path.iterdir())
    result = runner.invoke(app, [args[0], str(path), *args[1:]])
    assert result.exit_code == 2
    if kind == "folder":
        expected = (
            f"error: RESULTS: {path} is a folder; expected a results file (such as {path / 'results.csv'})\n"
        )
    else:
        expected = f"error: RESULTS: {KINDS[kind]}: {path}\n"
    assert result.output == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_spec_or_a_data_file_that_is_no_regular_file_is_named_so(tmp_path, kind):
    """The spec itself, and a CSV entry of a spec, through validate and run alike."""
    from conftest import refused_by_cli

    path = _odd_path(tmp_path, kind)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: t\ndatasets: [{{csv: {path.name}}}]\nprotocol: {{kind: kfold}}\nalgorithms: [{{name: knn}}]\n"
    )
    refused_by_cli(tmp_path, spec, f"datasets[0]: {path}: {KINDS[kind]}")
    if kind in ("loop", "dangling"):
        result = runner.invoke(app, ["validate", str(path)])
        assert (result.exit_code, result.output) == (
            2,
            f"error: {path}: {KINDS[kind]}; expected a spec file (YAML)\n",
        )


@pytest.mark.parametrize("timing", ["fit_seconds", "predict_seconds"])
def test_knnx_plot_draws_a_timing_as_knnx_table_tabulates_it(run_folder, tmp_path, timing):
    """``knnx plot --metric fit_seconds`` was refused ("no rows for metric") while
    ``knnx table`` took timings: both now read one row per cell, its time. Oracle: the
    means pandas gives per k, against the line drawn."""
    from knnx.reporting.figures import plot_metric
    from knnx.reporting.summaries import timing_rows
    from knnx.results import read_results

    out = tmp_path / "t.png"
    result = runner.invoke(
        app, ["plot", str(run_folder / "results.csv"), "--metric", timing, "--out", str(out)]
    )
    assert result.exit_code == 0 and out.stat().st_size > 1000
    frame = read_results(run_folder / "results.csv")
    cells = frame.drop_duplicates(["dataset", "algorithm", "params", "repeat", "fold"])
    expected = cells.groupby(cells["param_k"].astype(int))[timing].mean()
    fig = plot_metric(timing_rows(frame, timing), timing, x="k")
    (line,) = [c.lines[0] for c in fig.axes[0].containers]
    assert list(line.get_xdata()) == [1, 3, 5]
    np.testing.assert_allclose(line.get_ydata(), expected.to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("command", ["datasets", "validate", "help", "run-help"])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path, command):
    """``knnx datasets ... | head -2`` exited 1 (typer's exit on a broken pipe), and
    ``knnx validate SPEC | true`` too (rich's), and ``knnx --help | true`` (typer's own
    console for the help), without a word: 1 reads as failed cells. A real process, as
    the pipe is what is tested; its read end is closed before it writes."""
    import subprocess
    import sys

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    args = {
        "datasets": ["datasets", "--suite", "keel-imbalanced", "--format", "csv"],
        "validate": ["validate", str(spec)],
        "help": ["--help"],
        "run-help": ["run", "--help"],
    }[command]
    child = subprocess.Popen(
        [sys.executable, "-m", "knnx.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    child.stdout.close()
    _, err = child.communicate(timeout=120)
    assert (child.returncode, err) == (0, b"")


def test_names_that_name_nothing_in_the_comparison_are_said(run_folder, tmp_path):
    """A misspelt 'irsi' in a --names file left iris as it was, without a word; a file
    shared by several comparisons may name others, so it is a note."""
    lines = (run_folder / "results.csv").read_text().splitlines()
    both = tmp_path / "results.csv"  # the run's rows, and the same again as a second dataset
    both.write_text("\n".join([*lines, *(line.replace(",iris,", ",iris2,") for line in lines[1:])]) + "\n")
    names = tmp_path / "names.yaml"
    names.write_text("irsi: Iris\niris: The iris\n")
    result = runner.invoke(app, ["compare", str(both), "--select", "all", "--names", str(names)])
    assert result.exit_code == 0, result.output
    assert (
        f"--names: {names}: 'irsi' name no dataset or contestant of this comparison; printed as they are"
        in (result.output)
    )
    assert "| The iris |" in result.output


def test_plot_says_which_algorithms_it_does_not_draw_against_x(run_folder, tmp_path):
    """An algorithm with one k (here 'man', the k = 3 rows again) had no panel against k,
    no legend entry and no note."""
    lines = (run_folder / "results.csv").read_text().splitlines()
    extra = [line.replace(",knn,", ",man,", 1) for line in lines[1:] if '""k"":3,' in line]
    both = tmp_path / "results.csv"
    both.write_text("\n".join([*lines, *extra]) + "\n")
    result = runner.invoke(app, ["plot", str(both), "--x", "k", "--out", str(tmp_path / "k.png")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "not drawn against k (one value of it on every dataset): man"
    assert (tmp_path / "k.png").read_bytes()[:4] == b"\x89PNG"


def test_a_figure_that_leaves_an_algorithm_out_says_so_on_itself(run_folder, tmp_path):
    """knnx run's own error-k.png left out an algorithm with one k without a word (only
    knnx plot said it): the figure now carries the line under its panels."""
    from knnx.reporting.figures import automatic_figures, plot_metric
    from knnx.results import read_results

    lines = (run_folder / "results.csv").read_text().splitlines()
    extra = [line.replace(",knn,", ",man,", 1) for line in lines[1:] if '""k"":3,' in line]
    both = tmp_path / "results.csv"
    both.write_text("\n".join([*lines, *extra]) + "\n")
    frame = read_results(both)
    label = plot_metric(frame, "error", x="k")._supxlabel
    assert label.get_text() == "Not drawn against k (one value of it on every dataset): man"
    assert plot_metric(read_results(run_folder / "results.csv"), "error", x="k")._supxlabel is None
    run_figures = {name: fig for name, _, fig in automatic_figures(frame)}  # as knnx run draws them
    assert sorted(run_figures) == ["error-k.png", "error.png"]
    assert run_figures["error-k.png"]._supxlabel.get_text() == label.get_text()


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            "iris: A\niris: B\n",
            "line 2, column 1: invalid YAML (duplicate key 'iris'; a key appears once per mapping)",
        ),
        ('iris2: "average rank"\n', "dataset printed as 'average rank', a heading of the table's own"),
        ('"knn k=1": n\n', "contestant printed as 'n', a heading of the table's own"),
    ],
)
def test_a_names_file_that_prints_a_row_or_column_twice_is_one_line(run_folder, tmp_path, names, message):
    """A key given twice took the last; a contestant printed as 'n' or a dataset as
    'average rank' gave the table two columns n or two rows 'average rank'."""
    lines = (run_folder / "results.csv").read_text().splitlines()
    both = tmp_path / "results.csv"
    both.write_text("\n".join([*lines, *(line.replace(",iris,", ",iris2,") for line in lines[1:])]) + "\n")
    path = tmp_path / "names.yaml"
    path.write_text(names)
    where = f"{path}: " if "duplicate" in message else ""
    _refused(["compare", both, "--select", "all", "--names", path], f"--names: {where}{message}", tmp_path)


def test_refusals_name_the_protocol_kind_and_the_folder_in_full(tmp_path, monkeypatch):
    """Under kind 5x2 a class of one row was blamed on 'protocol.folds', a key 5x2 does
    not have; an import path missing from a spec in the current folder said 'nor in .'."""
    (tmp_path / "one.csv").write_text("a,label\n" + "".join(f"{i},{1 if i else 2}\n" for i in range(9)))
    spec = tmp_path / "o.yaml"
    spec.write_text(
        "name: o\ndatasets: [{csv: one.csv, id: one}]\nprotocol: {kind: 5x2}\nalgorithms: [{name: knn}]\n"
    )
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["validate", "o.yaml"])
    assert (done.exit_code, done.stderr) == (
        2,
        "error: o.yaml: datasets[0]: protocol.kind 5x2: 2 stratified folds need at least 2 rows per class; class "
        "'2' of dataset 'one' has 1\n",
    )
    (tmp_path / "p.yaml").write_text(
        'name: p\ndatasets: [iris]\nprotocol: {kind: kfold}\nalgorithms: [{estimator: "nosuchpkg.m:C"}]\n'
    )
    done = runner.invoke(app, ["validate", "p.yaml"])
    assert (done.exit_code, done.stderr) == (
        2,
        "error: p.yaml: algorithms[0].estimator: cannot import 'nosuchpkg.m': no module named 'nosuchpkg' on the "
        f"Python path nor in {tmp_path.resolve()}\n",
    )
