"""Hostile result folders, overrides, tolerances and paper roots (issue 33, items 10, 16-19):
one depth limit for spec files, ``--set`` values, spec dicts and the params JSON of result
files; damaged files of a run folder and of ``knnx reproduce`` named in one line; one rule
for every tolerance. Each refusal: one ``error:`` line, exit 2, nothing written."""

import csv
import json
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import KnnxError, ResultsError, SpecError
from knnx.results import read_results
from knnx.spec import apply_overrides, parse_override, validate_spec
from knnx.spec.overrides import Override
from knnx.spec.read import load_yaml

runner = CliRunner()

SPEC = "name: t\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn, params: {k: [1, 3]}}]\n"
SPEC_DICT = {
    "name": "t",
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 2},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}],
}
MAX_DEPTH = 32  # knnx.limits.MAX_DEPTH, the one limit (issue 33 item 10)
DEEP = f"nested more than {MAX_DEPTH} levels deep"


def _refused(args, message, folder=None):
    """exit 2, exactly one line ``error: MESSAGE``, and ``folder`` (if given) unchanged."""
    before = _snapshot(folder)
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.output.splitlines() == [f"error: {message}"], result.output
    assert _snapshot(folder) == before
    return result


def _snapshot(folder):
    if folder is None:
        return None
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _nested_mapping(levels, leaf=1):
    """``{"a": {"a": ... leaf}}`` of ``levels`` levels, the leaf counted (levels >= 1)."""
    value = leaf
    for _ in range(levels - 1):
        value = {"a": value}
    return value


# --- item 10: one depth limit for spec files, --set values and spec dicts ------------------


@pytest.mark.parametrize(("levels", "refused"), [(MAX_DEPTH, False), (MAX_DEPTH + 1, True)])
def test_a_file_and_a_set_override_share_one_depth_limit(levels, refused):
    """The same structure, ``a: {a: ... 1}`` of LEVELS levels counted from the spec's top
    mapping: written in a YAML document or built by a --set path with a YAML value, it is
    refused at 33 levels and accepted at 32, with the same words."""
    text = "a: " + "{a: " * (levels - 2) + "1" + "}" * (levels - 2)  # levels - 1 mappings, 1
    path = ".".join(["a"] * 3)  # three levels of the path, the rest in the value
    value = "{a: " * (levels - 4) + "1" + "}" * (levels - 4)  # from level 4 on
    override = f"{path}={value}"
    if refused:
        with pytest.raises(yaml.YAMLError) as file_error:
            load_yaml(text)
        assert file_error.value.problem == DEEP
        with pytest.raises(SpecError) as set_error:
            apply_overrides({}, [override])
        assert str(set_error.value) == f"--set {override!r}: {DEEP}"
    else:
        expected = _nested_mapping(levels)
        assert load_yaml(text) == expected
        assert apply_overrides({}, [override]) == expected


def test_set_path_plus_value_deeper_than_a_file_may_be_is_refused_by_validate(tmp_path):
    """Issue 33 item 10: the value [[...[1]...]] of 31 lists at algorithms[0].params.k
    lies 4 + 32 levels down; the same spec in a file is refused, so is the override."""
    (tmp_path / "s.yaml").write_text(SPEC)
    value = "[" * 31 + "1" + "]" * 31
    _refused(
        ["validate", tmp_path / "s.yaml", "--set", f"algorithms[0].params.k={value}"],
        f"--set 'algorithms[0].params.k={value}': {DEEP}",
    )
    deep = tmp_path / "deep.yaml"
    deep.write_text(SPEC.replace("k: [1, 3]", f"k: {value}"))
    _refused(["validate", deep], f"{deep}: line 4, column 66: invalid YAML ({DEEP})")


def test_a_set_path_of_3000_levels_is_one_line_not_a_recursion_error(tmp_path):
    (tmp_path / "s.yaml").write_text(SPEC)
    text = "algorithms[0].params." + ".".join(["a"] * 3000) + "=1"
    _refused(["validate", tmp_path / "s.yaml", "--set", text], f"--set {text!r}: {DEEP}")
    _refused(
        ["run", tmp_path / "s.yaml", "--out", tmp_path / "out", "--quiet", "--set", text],
        f"--set {text!r}: {DEEP}",
        tmp_path,
    )
    assert not (tmp_path / "out").exists()


def test_an_override_made_in_python_obeys_the_limit_too():
    deep = Override(("algorithms", 0, "params", "k"), [[[[1]]]], "made in Python")
    assert apply_overrides({"algorithms": [{}]}, [deep]) == {"algorithms": [{"params": {"k": [[[[1]]]]}}]}
    too = Override(tuple(["a"] * 31), [1], "too deep")
    with pytest.raises(SpecError, match=rf"^--set 'too deep': {DEEP}$"):
        apply_overrides({}, [too])
    assert parse_override("a.b=[1]").path == ("a", "b")


def _deep_in_params(levels):
    return {**SPEC_DICT, "algorithms": [{"name": "knn", "params": {"k": [1], "metric_params": levels}}]}


@pytest.mark.parametrize("call", ["validate_spec", "run_spec"])
def test_a_deep_spec_dict_is_refused_by_the_python_api(tmp_path, call):
    """validate_spec and run_spec of a dict nested 3000 levels (and of one that holds
    itself): one SpecError naming the top-level key, before any recursion."""
    from knnx.experiment.runner import run_spec

    function = (
        validate_spec if call == "validate_spec" else lambda s: run_spec(s, out=tmp_path / "o", figures=False)
    )
    with pytest.raises(SpecError) as error:
        function(_deep_in_params(_nested_mapping(3000)))
    assert str(error.value) == f"<spec>: algorithms: {DEEP}"
    looped = {**SPEC_DICT, "protocol": {"kind": "kfold", "folds": 2}}
    looped["protocol"]["again"] = looped
    with pytest.raises(SpecError) as error:
        function(looped)
    assert str(error.value) == f"<spec>: protocol: {DEEP}"
    assert not (tmp_path / "o").exists()


def test_too_deep_counts_levels_as_the_yaml_loader_does():
    from knnx.limits import too_deep

    assert too_deep(_nested_mapping(MAX_DEPTH)) is None
    assert too_deep(_nested_mapping(MAX_DEPTH + 1)) == ("a",) * MAX_DEPTH
    assert too_deep([[]], levels=MAX_DEPTH - 2) is None  # the inner list at level 32
    assert too_deep([[]], levels=MAX_DEPTH - 1) == (0,)
    assert too_deep({"x": 1, "y": [[2]]}, levels=MAX_DEPTH - 3) == ("y", 0, 0)  # the first in order
    shared = [1]
    for _ in range(60):  # 100^60 paths, 60 distinct lists: walked once per level
        shared = [shared] * 100
    assert too_deep(shared) == (0,) * MAX_DEPTH


def test_json_too_deep_scans_tokens_and_skips_brackets_in_strings():
    from knnx.limits import json_too_deep

    assert json_too_deep(json.dumps(_nested_mapping(MAX_DEPTH))) is False
    assert json_too_deep(json.dumps(_nested_mapping(MAX_DEPTH + 1))) is True
    assert json_too_deep("[" * MAX_DEPTH + "]" * MAX_DEPTH) is False  # empty: no leaf below
    assert json_too_deep("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)) is True
    assert json_too_deep('{"k": "' + "[" * 5000 + '"}') is False  # text, not nesting
    assert json_too_deep("[" * (MAX_DEPTH - 1) + '"a\\"[["' + "]" * (MAX_DEPTH - 1)) is False
    assert json_too_deep("[" * 5000) is True  # not JSON, measured by its brackets


# --- a run folder to damage ------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    from knnx.experiment.runner import run_spec

    out = tmp_path_factory.mktemp("run") / "out"
    run_spec(SPEC_DICT, out=out, report=False)
    return out


@pytest.fixture
def folder(run_folder, tmp_path):
    """A fresh copy of the run's folder, to damage."""
    copy = tmp_path / "out"
    shutil.copytree(run_folder, copy)
    return copy


def _set_params(path, line, text):
    """Write ``text`` as the params cell of the results file's line ``line`` (2: first row)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[line - 1][3] = text
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


# --- item 16: params JSON nested too deep in a results file ------------------------------------


def test_read_results_refuses_params_nested_3000_levels(folder):
    path = folder / "results.csv"
    _set_params(path, 3, '{"a":' * 3000 + "1" + "}" * 3000)
    with pytest.raises(ResultsError) as error:
        read_results(path)
    assert str(error.value) == f"{path}: column 'params' line 3: {DEEP}"


def test_params_at_the_depth_limit_read_as_parameters(folder):
    """``{"k": [[...[1]...]]}``: the object, k, 30 lists and the 1 are 32 levels: read,
    with its param_k column; one list more is refused. Brackets in a string are text."""
    path = folder / "results.csv"
    inner = "[" * 29 + "1" + "]" * 29
    _set_params(path, 2, '{"k":[' + inner + "]}")
    _set_params(path, 3, '{"k":"' + "[" * 40 + '"}')
    frame = read_results(path)
    assert frame["param_k"].iloc[0] == "[" + inner + "]"
    assert frame["param_k"].iloc[1] == "[" * 40
    _set_params(path, 2, '{"k":[[' + inner + "]]}")
    with pytest.raises(ResultsError, match=rf"column 'params' line 2: {DEEP}$"):
        read_results(path)


@pytest.mark.parametrize("command", ["table", "compare", "plot", "check", "report"])
def test_commands_on_deep_params_give_one_line(folder, command):
    path = folder / "results.csv"
    _set_params(path, 2, "[" * 3000 + "]" * 3000)
    args = {
        "table": ["table", path],
        "compare": ["compare", path],
        "plot": ["plot", path],
        "check": ["check", path, "--reference", path],
        "report": ["report", folder],
    }[command]
    _refused(args, f"{path}: column 'params' line 2: {DEEP}", folder)


# --- item 17: every file knnx report reads from a run folder --------------------------------


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("spec.yaml", b"name: \xff\xfe\n", "not UTF-8 text (byte 6)"),
        ("environment.json", b'{"runs": [\xff]}', "not a knnx environment file (not UTF-8 text at byte 10)"),
        (
            "environment.json",
            b'{"runs": [',
            "not a knnx environment file (not JSON: Expecting value at line 1, column 11)",
        ),
        ("environment.json", b"[1, 2]", "not a knnx environment file (expected a JSON object, got a list)"),
        ("environment.json", b"[" * 5000 + b"]" * 5000, f"not a knnx environment file ({DEEP})"),
        (
            "environment.json",
            b'{"runs": [{"warmup_seconds": [1, 2]}]}',
            "not a knnx environment file (runs[0].warmup_seconds: expected {algorithm: seconds}, got [1, 2])",
        ),
        (
            "environment.json",
            b'{"runs": [{}, {"warmup_seconds": {"knn": "x"}}]}',
            "not a knnx environment file (runs[1].warmup_seconds: expected {algorithm: seconds}, got {'knn': 'x'})",
        ),
        (  # a time knnx measures is finite and >= 0
            "environment.json",
            b'{"runs": [{"warmup_seconds": {"knn": -5}}]}',
            "not a knnx environment file (runs[0].warmup_seconds: expected {algorithm: seconds}, got {'knn': -5})",
        ),
        (
            "environment.json",
            b'{"runs": [{"warmup_seconds": {"knn": NaN}}]}',
            "not a knnx environment file (runs[0].warmup_seconds: expected {algorithm: seconds}, got {'knn': nan})",
        ),
        (
            "environment.json",
            b'{"runs": [{"warmup_seconds": {"knn": 1e999}}]}',
            "not a knnx environment file (runs[0].warmup_seconds: expected {algorithm: seconds}, got {'knn': inf})",
        ),
        (
            "environment.json",
            b'{"runs": [{}, 1]}',
            "not a knnx environment file (runs[1]: expected an object, got 1)",
        ),
        (
            "environment.json",
            b'{"runs": {"warmup_seconds": 1}}',
            "not a knnx environment file (runs: expected a list of invocations, got an object)",
        ),
    ],
)
def test_report_on_a_damaged_file_names_it(folder, name, content, problem):
    (folder / name).write_bytes(content)
    _refused(["report", folder], f"{folder / name}: {problem}", folder)


def test_report_on_a_sound_environment_with_odd_values_and_no_environment(folder):
    """Zero seconds and entries without warm-up are an environment as written; no file at
    all is a run of an older knnx: the page is written."""
    (folder / "environment.json").write_text('{"runs": [{"x": 1}, {"warmup_seconds": {"knn": 0}}]}')
    result = runner.invoke(app, ["report", str(folder)])
    assert result.exit_code == 0 and result.output == f"wrote {folder / 'report.html'}\n", result.output
    (folder / "environment.json").unlink()
    result = runner.invoke(app, ["report", str(folder)])
    assert result.exit_code == 0, result.output


def test_report_of_a_run_that_only_failed_with_a_deep_spec_copy_uses_the_folder_name(folder):
    """Every cell failed: the page takes the experiment's name from spec.yaml; nested 5000
    levels, that file gives none (no RecursionError) and the folder's name stands."""
    from knnx.results import COLUMNS, FAILURE_COLUMNS, rows_to_csv

    (folder / "results.csv").write_text(rows_to_csv([], header=True, columns=COLUMNS))
    failure = {"dataset": "iris", "algorithm": "knn", "params": "{}", "repeat": 0, "fold": 0}
    failure |= {"cell_key": "k", "error": "ValueError: no"}
    (folder / "failures.csv").write_text(rows_to_csv([failure], header=True, columns=FAILURE_COLUMNS))
    (folder / "spec.yaml").write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    result = runner.invoke(app, ["report", str(folder)])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "<title>knnx report: out</title>" in (folder / "report.html").read_text()
    (folder / "spec.yaml").write_text("name: failing-run\nmore: [" + "[" * 40 + "]" * 40 + "]\n")
    assert runner.invoke(app, ["report", str(folder)]).exit_code == 0
    assert "<title>knnx report: out</title>" in (folder / "report.html").read_text()
    (folder / "spec.yaml").write_text("name: failing-run\n")
    assert runner.invoke(app, ["report", str(folder)]).exit_code == 0
    assert "<title>knnx report: failing-run</title>" in (folder / "report.html").read_text()


# --- item 18: knnx reproduce's timing file and root -----------------------------------------


@pytest.fixture
def project(tmp_path):
    """A project root with an empty experiments/ and a results/ folder."""
    (tmp_path / "experiments").mkdir()
    (tmp_path / "results").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{nope", "not JSON: Expecting property name enclosed in double quotes at line 1, column 2"),
        (b"[1, 2]", "expected a JSON object {target: {seconds, status}}, got a list"),
        (b"null", "expected a JSON object {target: {seconds, status}}, got null"),
        (b'{"ripley": [1]}', "ripley: expected {seconds, status}, got [1]"),
        (b'{"ripley": {"seconds": "x", "status": "ok"}}', "ripley: seconds: expected a number >= 0, got 'x'"),
        (b'{"ripley": {"seconds": -5, "status": "ok"}}', "ripley: seconds: expected a number >= 0, got -5"),
        (b'{"ripley": {"seconds": 1, "status": 3}}', "ripley: status: expected a string, got 3"),
        (b"[" * 5000 + b"]" * 5000, DEEP),
        (b'{"ripley": \xff}', "not UTF-8 text at byte 11"),
    ],
)
def test_reproduce_on_a_damaged_timing_file_names_it(project, content, problem):
    path = project / "results" / "reproduce-times.json"
    path.write_bytes(content)
    message = f"{path}: not a knnx timing file ({problem}); remove it to start the record again"
    _refused(["reproduce", "--assemble-only", "--root", project], message, project)
    if problem != DEEP:  # (the Python API: the same error)
        from knnx.papers import assemble

        with pytest.raises(ResultsError) as error:
            assemble(root=project)
        assert str(error.value) == message


def test_reproduce_reads_a_sound_timing_file(project):
    """A sound file (seconds null for a target not timed) gets past the timing check: the
    next problem is the empty experiments/ folder."""
    from knnx.papers import load_target, target_names

    (project / "results" / "reproduce-times.json").write_text(
        '{"ripley": {"seconds": null, "status": "not run"}, "unn-uci": {"seconds": 3.5, "status": "ok"}}'
    )
    first = load_target(target_names()[0])
    table = first.tables[0]
    _refused(
        ["reproduce", "--assemble-only", "--root", project],
        f"--root: {project} has no file {table.paper_values} (the paper values of {first.target}, table "
        f"{table.id}); give the project folder, holding experiments/ and results/",
        project,
    )


@pytest.mark.parametrize("run", [False, True])
@pytest.mark.parametrize("kind", ["missing", "file", "empty"])
def test_reproduce_with_a_root_that_is_not_a_project_is_a_bad_argument(tmp_path, kind, run):
    """Exit 2, not 3 (an OS fault): --root names a folder without the project's files;
    checked before any target runs (nothing written, no timing record either)."""
    from knnx.papers import load_target, target_names

    root = tmp_path / "root"
    if kind == "file":
        root.write_text("x")
    elif kind == "empty":
        root.mkdir()
    if kind == "empty":
        first = load_target(target_names()[0])
        table = first.tables[0]
        message = (
            f"--root: {root} has no file {table.paper_values} (the paper values of {first.target}, table "
            f"{table.id}); give the project folder, holding experiments/ and results/"
        )
    else:
        message = (
            f"--root: {root} is not a folder; give the project folder, holding experiments/ and results/"
        )
    args = (
        ["reproduce", "ripley", "--root", root] if run else ["reproduce", "--assemble-only", "--root", root]
    )
    _refused(args, message, tmp_path)


def test_reproduce_on_damaged_paper_values_names_the_file(tmp_path):
    """The paper values under --root: not UTF-8, or without the columns a table names."""
    from pathlib import Path

    from knnx.papers import load_target, target_names

    root = tmp_path / "root"
    shutil.copytree(Path(__file__).resolve().parents[2] / "experiments", root / "experiments")
    first = load_target(target_names()[0])
    table = first.tables[0]
    csv_path = root / table.paper_values
    original = csv_path.read_bytes()
    csv_path.write_bytes(original + b"\xff\n")
    args = ["reproduce", "--assemble-only", "--root", root]
    _refused(args, f"{csv_path}: not UTF-8 text (byte {len(original)})", tmp_path)
    csv_path.write_text("a,b\n1,2\n")
    named = (table.columns[0].paper, *table.where)[0]  # the first column the table names
    _refused(
        args,
        f"{csv_path}: no column '{named}', which {first.target} table {table.id} names; it has a, b",
        tmp_path,
    )


def test_a_template_naming_a_column_the_paper_values_lack_is_one_line(tmp_path):
    """A row label "{name}" over a paper CSV without that column: a SpecError naming the
    CSV, the column and the table (was a KeyError)."""
    from knnx.papers import comparison_rows, load_target

    (tmp_path / "paper.csv").write_text("dataset,knn\niris,4.0\n")
    target = {
        "target": "tiny",
        "paper": "piro2012",
        "title": "t",
        "tables": [
            {
                "id": "t1",
                "title": "t",
                "results": ["results/tiny"],
                "paper_values": "paper.csv",
                "row": "{name}",
                "columns": [{"label": "kNN", "paper": "knn"}],
            }
        ],
    }
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(target))
    with pytest.raises(SpecError) as error:
        comparison_rows(load_target(tmp_path / "tiny.yaml"), tmp_path)
    assert str(error.value) == (
        f"{tmp_path / 'paper.csv'}: no column 'name', which tiny table t1 names; it has dataset, knn"
    )


# --- item 19: one rule for every tolerance ---------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), [(float("inf"), "inf"), (float("nan"), "nan"), (-1.0, "-1.0")])
def test_check_tolerance_refuses_non_finite_and_negative(value, shown):
    from knnx.limits import check_tolerance

    with pytest.raises(KnnxError) as error:
        check_tolerance(value, "atol")
    assert str(error.value) == f"atol: expected a finite number >= 0, got {shown}"
    assert error.value.render({"atol": "--atol"}) == f"--atol: expected a finite number >= 0, got {shown}"


def test_check_tolerance_accepts_finite_numbers_at_least_zero():
    from knnx.limits import check_tolerance

    assert check_tolerance(0, "atol") == 0.0 and check_tolerance(1e-6, "atol") == 1e-6
    assert str(check_tolerance(-0.0, "atol")) == "0.0"  # not -0.0
    with pytest.raises(KnnxError):
        check_tolerance(True, "atol")


@pytest.fixture
def gate_folders(tmp_path):
    """A regress spec and its reference: the gate passes it with atol 0."""
    from knnx.experiment.runner import run_spec

    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "regress_t.yaml").write_text(SPEC)
    reference = tmp_path / "ref"
    run_spec(specs / "regress_t.yaml", out=tmp_path / "first", report=False)
    reference.mkdir()
    shutil.copyfile(tmp_path / "first" / "results.csv", reference / "regress_t.csv")
    return specs, reference


@pytest.mark.parametrize(
    ("text", "shown"), [("inf", "inf"), ("1e400", "inf"), ("nan", "nan"), ("-1", "-1.0")]
)
def test_gate_refuses_a_tolerance_that_is_not_finite_or_negative(tmp_path, gate_folders, text, shown):
    """Issue 33 item 19: knnx gate --atol inf ran every spec and passed them all."""
    specs, reference = gate_folders
    args = [
        "gate",
        "--specs",
        specs,
        "--reference-dir",
        reference,
        "--out",
        tmp_path / "runs",
        f"--atol={text}",
    ]
    _refused(args, f"--atol: expected a finite number >= 0, got {shown}")
    assert not (tmp_path / "runs").exists()


def test_the_gate_library_refuses_it_too(tmp_path, gate_folders):
    from knnx.papers.gate import check, gate

    specs, reference = gate_folders
    with pytest.raises(KnnxError, match=r"^atol: expected a finite number >= 0, got inf$"):
        gate(
            sorted(specs.glob("*.yaml")),
            out_dir=tmp_path / "runs",
            reference_dir=reference,
            atol=float("inf"),
        )
    assert not (tmp_path / "runs").exists()
    with pytest.raises(KnnxError, match=r"^atol_for: knn: expected a finite number >= 0, got nan$"):
        check(reference / "regress_t.csv", reference / "regress_t.csv", atol_for={"knn": float("nan")})


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--atol=inf", "--atol: expected a finite number >= 0, got inf"),
        ("--atol=nan", "--atol: expected a finite number >= 0, got nan"),
        ("--atol=-1", "--atol: expected a finite number >= 0, got -1.0"),
        ("--atol-for=knn=inf", "--atol-for: expected ALGORITHM=TOL with a finite TOL >= 0, got 'knn=inf'"),
        ("--atol-for=knn=-0.5", "--atol-for: expected ALGORITHM=TOL with a finite TOL >= 0, got 'knn=-0.5'"),
    ],
)
def test_check_applies_the_same_rule(run_folder, option, message):
    path = run_folder / "results.csv"
    _refused(["check", path, "--reference", path, option], message)
