"""Hostile specs (issue 7): each is refused by `knnx validate` and `knnx run` with one line
``error: FILE: ...`` naming the place and what is expected, exit code 2, no traceback, nothing written.

Complements tests/spec/test_spec_cli.py (which holds the first malformed-spec cases); the limits are
documented in knnx/spec/read.py and docs/runs.md "Input checks".
"""

import os
import tracemalloc

import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.spec import MAX_CELLS, MAX_SPEC_BYTES, MAX_YAML_DEPTH, MAX_YAML_STRING, MAX_YAML_VALUES

runner = CliRunner()

GOOD = """\
name: t
seed: 0
datasets: [ripley]
protocol: {kind: predefined}
algorithms:
  - name: knn
    params: {k: [1, 3], weights: uniform}
metrics: [error]
"""
ALGOS = "algorithms:\n  - name: knn\n    params: {k: [1, 3], weights: uniform}"


def sub(old, new):
    assert old in GOOD or old == ALGOS
    return GOOD.replace(old, new)


def laughs(levels=9, width=9):
    """A "billion laughs" document: level i is a list of ``width`` aliases of level i - 1."""
    text = "  - &l0 [" + ", ".join(["lol"] * width) + "]\n"
    for i in range(1, levels + 1):
        text += f"  - &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]\n"
    return text


CASES = [
    # wrong types at every level
    ("name-int", sub("name: t", "name: 3"), "name: input should be a valid string (got 3)"),
    ("seed-str", sub("seed: 0", 'seed: "x"'), "seed: input should be a valid integer (got 'x')"),
    ("seed-float", sub("seed: 0", "seed: 1.5"), "seed: input should be a valid integer (got 1.5)"),
    ("seed-bool", sub("seed: 0", "seed: true"), "seed: input should be a valid integer (got True)"),
    (
        "seed-huge",
        sub("seed: 0", "seed: 99999999999999999999999"),
        "seed: input should be less than 9223372036854775808",
    ),
    (
        "datasets-map",
        sub("datasets: [ripley]", "datasets: {}"),
        "datasets: input should be a valid list (got {})",
    ),
    ("datasets-str", sub("datasets: [ripley]", "datasets: ripley"), "datasets: input should be a valid list"),
    (
        "dataset-int",
        sub("datasets: [ripley]", "datasets: [3]"),
        "datasets[0]: input should be a valid string (got 3)",
    ),
    (
        "dataset-null",
        sub("datasets: [ripley]", "datasets: [null]"),
        "datasets[0]: input should be a valid string",
    ),
    (
        "protocol-str",
        sub("{kind: predefined}", "predefined"),
        "protocol: input should be a valid dictionary (got",
    ),
    (
        "protocol-kind-int",
        sub("{kind: predefined}", "{kind: 5}"),
        "protocol: unknown protocol kind 5; known:",
    ),
    (
        "folds-str",
        sub("{kind: predefined}", "{kind: kfold, folds: two}"),
        "protocol.folds: input should be a valid",
    ),
    ("algorithms-map", sub(ALGOS, "algorithms: {name: knn}"), "algorithms: input should be a valid list"),
    (
        "algorithm-str",
        sub(ALGOS, "algorithms: [knn]"),
        "algorithms[0]: input should be a valid dictionary (got 'knn')",
    ),
    (
        "algorithm-name-int",
        sub("name: knn", "name: 5"),
        "algorithms[0].name: input should be a valid string (got 5)",
    ),
    (
        "params-list",
        sub("{k: [1, 3], weights: uniform}", "[1, 3]"),
        "algorithms[0].params: input should be a valid",
    ),
    (
        "params-null",
        sub("{k: [1, 3], weights: uniform}", "null"),
        "algorithms[0].params: input should be a valid",
    ),
    ("k-str", sub("k: [1, 3]", "k: three"), "algorithms[0].params.k: must be an integer >= 1, got 'three'"),
    ("k-float", sub("k: [1, 3]", "k: 1.5"), "algorithms[0].params.k: must be an integer >= 1, got 1.5"),
    ("k-bool", sub("k: [1, 3]", "k: true"), "algorithms[0].params.k: must be an integer >= 1, got True"),
    ("k-nan", sub("k: [1, 3]", "k: .nan"), "algorithms[0].params.k: must be an integer >= 1, got nan"),
    ("k-map", sub("k: [1, 3]", "k: {a: 1}"), "algorithms[0].params.k: must be an integer >= 1, got {'a': 1}"),
    (
        "k-nested",
        sub("k: [1, 3]", "k: [[1, 3]]"),
        "algorithms[0].params.k: must be an integer >= 1, got [1, 3]",
    ),
    (
        "weights-int",
        sub("weights: uniform", "weights: 3"),
        "params.weights: must be one of 'uniform', 'distance'",
    ),
    ("metrics-int", sub("metrics: [error]", "metrics: 5"), "metrics: input should be a valid list (got 5)"),
    (
        "metric-int",
        sub("metrics: [error]", "metrics: [5]"),
        "metrics[0]: input should be a valid string (got 5)",
    ),
    (
        "preprocess-bool",
        GOOD + "preprocess: yes\n",
        "preprocess: input should be a valid dictionary (got True)",
    ),
    (
        "date-value",
        sub("name: t", "name: 2024-01-01"),
        "invalid YAML ('2024-01-01' is read as a date; quote it",
    ),
    ("set-value", sub("k: [1, 3]", "k: !!set {1, 3}"), "invalid YAML (a YAML !!set is not a spec value"),
    (
        "binary-value",
        sub("name: t", "name: !!binary aGVsbG8="),
        "invalid YAML ('aGVsbG8=' is read as binary data",
    ),
    (
        "python-tag",
        sub("name: t", "name: !!python/object/apply:os.system [ls]"),
        "could not determine a constructor",
    ),
    # unknown keys at every level
    ("unknown-top", GOOD + "colour: red\n", "colour: unknown key; known: name, seed, datasets"),
    (
        "unknown-algorithm",
        sub("    params:", "    colour: red\n    params:"),
        "algorithms[0].colour: unknown key",
    ),
    (
        "unknown-preprocess",
        GOOD + "preprocess: {scale: true}\n",
        "preprocess.scale: unknown key; known: standardize",
    ),
    (
        "unknown-protocol",
        sub("{kind: predefined}", "{kind: holdout, folds: 3}"),
        "protocol.folds: unknown key",
    ),
    (
        "unknown-param",
        sub("weights: uniform", "colour: red"),
        "algorithms[0].params.colour: unknown parameter for knn",
    ),
    (
        "unknown-dataset-option",
        sub("datasets: [ripley]", "datasets: [{name: ripley, colour: red}]"),
        "datasets[0]: ripley: unknown option 'colour'",
    ),
    (
        "unknown-csv-option",
        sub("datasets: [ripley]", "datasets: [{csv: d.csv, colour: red}]"),
        "datasets[0]: csv dataset: unknown option 'colour'; known: csv, label",
    ),
    # empty lists
    ("algorithms-empty", sub(ALGOS, "algorithms: []"), "algorithms: empty list; give at least one item"),
    ("metrics-empty", sub("metrics: [error]", "metrics: []"), "metrics: empty list; give at least one item"),
    (
        "grid-empty",
        sub("weights: uniform", "weights: []"),
        "algorithms[0].params.weights: empty list of values",
    ),
    # keys
    (
        "duplicate-top",
        GOOD + "seed: 1\n",
        "line 9, column 1: invalid YAML (duplicate key 'seed'; a key appears once",
    ),
    (
        "duplicate-nested",
        sub("weights: uniform", "k: 5"),
        "line 7, column 25: invalid YAML (duplicate key 'k'",
    ),
    (
        "key-int",
        GOOD + "3: x\n",
        "line 9, column 1: invalid YAML (key '3' is read as a number; keys are names",
    ),
    ("key-null", GOOD + "null: x\n", "invalid YAML (key 'null' is read as null; keys are names (quote it))"),
    (
        "key-bool",
        GOOD + "yes: x\n",
        "invalid YAML (key 'yes' is read as a boolean; keys are names (quote it))",
    ),
    ("key-list", GOOD + "? [a, b]\n: x\n", "invalid YAML (a key is a list or a mapping; keys are names)"),
    # syntax and document shape
    (
        "syntax",
        "name: [unclosed\n",
        "line 2, column 1: invalid YAML (expected ',' or ']', but got '<stream end>')",
    ),
    (
        "bad-indent",
        "name: t\n  seed: 0\n",
        "line 2, column 7: invalid YAML (mapping values are not allowed here)",
    ),
    (
        "tab-indent",
        sub("  - name: knn", "\t- name: knn"),
        "line 6, column 1: invalid YAML (found character '\\t'",
    ),
    ("two-documents", GOOD + "---\n" + GOOD, "line 9, column 1: invalid YAML (but found another document)"),
    (
        "empty-file",
        "",
        "expected a mapping of spec keys (name, datasets, protocol, algorithms, ...), but the file is empty",
    ),
    ("only-comment", "# nothing\n", "but the file is empty"),
    ("top-list", "- ripley\n- knn\n", "but the file is a list"),
    ("top-scalar", "hello\n", "but the file is a string"),
    ("top-number", "3\n", "but the file is a number"),
    (
        "control-char",
        sub("name: t", "name: t\x07"),
        "line 1, column 8: invalid YAML (control character #x0007 is not",
    ),
    ("nul-byte", GOOD + "\x00", "line 9, column 1: invalid YAML (control character #x0000 is not allowed)"),
    # sizes
    (
        "deep-nesting",
        sub("metrics: [error]", "metrics: " + "[" * 5000 + "]" * 5000),
        f"invalid YAML (nested more than {MAX_YAML_DEPTH} levels deep)",
    ),
    (
        "deep-mapping",
        sub("metrics: [error]", "metrics: " + "{a: " * 5000 + "1" + "}" * 5000),
        f"invalid YAML (nested more than {MAX_YAML_DEPTH} levels deep)",
    ),
    (
        "long-string",
        sub("datasets: [ripley]", f"datasets: [{'r' * 100_000}]"),
        f"line 3, column 12: invalid YAML (a value of 100000 characters; at most {MAX_YAML_STRING})",
    ),
    (
        "long-name",
        sub("name: t", "name: " + "a" * 500),
        "name: string should have at most 100 characters (got 'aaaa",
    ),
    ("dots-name", sub("name: t", "name: '..'"), "name: a name made of dots only is not allowed"),
    (
        "many-values",
        sub("k: [1, 3]", "k: [" + ",".join(["1"] * (MAX_YAML_VALUES + 1)) + "]"),
        f"invalid YAML (more than {MAX_YAML_VALUES} values; a spec must stay small)",
    ),
    (
        "huge-file",
        sub("k: [1, 3]", "k: [" + ", ".join(str(i) for i in range(1, 10**6 + 1)) + "]"),
        f"bytes, more than the limit of {MAX_SPEC_BYTES} for a spec file",
    ),
    (
        "huge-grid",
        sub("k: [1, 3]", "k: [" + ", ".join(str(i) for i in range(1, 1001)) + "]")
        .replace("weights: uniform", "weights: [uniform, distance]")
        .replace("{kind: predefined}", "{kind: kfold, folds: 10, repeats: 100}"),
        f"algorithms: the grid expands to 2000000 cells (1 dataset(s) x 1000 split(s) x 2000 parameter setting(s)), "
        f"more than the limit of {MAX_CELLS}",
    ),
    (
        "huge-repeats",
        sub("{kind: predefined}", "{kind: holdout, repeats: 1000000000}"),
        "the grid expands to 2000000000 cells",
    ),
    (
        "billion-laughs",
        GOOD + "x:\n" + laughs(),
        f"invalid YAML (more than {MAX_YAML_VALUES} values once aliases are expanded (an alias bomb?)",
    ),
    (
        "laughs-in-grid",
        sub("protocol: {kind: predefined}\n", "protocol: {kind: predefined}\nx:\n" + laughs(5)).replace(
            "k: [1, 3]", "k: *l5"
        ),
        f"invalid YAML (more than {MAX_YAML_VALUES} values once aliases are expanded",
    ),
]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_refused(tmp_path, path, message):
    """`validate` and `run` give one line with ``message``, exit 2, no traceback, nothing written."""
    before = sorted(p.name for p in tmp_path.iterdir())
    for args in (["validate", path], ["run", path, "--out", tmp_path / "out", "--quiet"], ["run", path]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output, result.exception)
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr[:2000]
        assert lines[0].startswith(f"error: {path}: "), lines[0][:300]
        assert message in lines[0], lines[0][:300]
        assert len(lines[0]) < 400
        assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no out/, no results/


@pytest.mark.parametrize("text,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_spec_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)  # `knnx run` without --out would write results/ here
    path = tmp_path / "x.yaml"
    path.write_text(text)
    assert_refused(tmp_path, path, message)


@pytest.mark.parametrize(
    "content,message",
    [
        (b"name: caf\xe9\n", "not UTF-8 text (byte 9)"),
        ("name: t\n".encode("utf-16"), "not UTF-8 text (byte 0)"),
        (bytes(range(256)) * 8, "not UTF-8 text (byte 128)"),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(100), "line 1, column 1: invalid YAML (control character #x007f"),
    ],
    ids=["latin-1", "utf-16", "binary", "elf"],
)
def test_undecodable_or_binary_spec(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "x.yaml"
    path.write_bytes(content)
    assert_refused(tmp_path, path, message)


def test_folder_missing_file_and_device_as_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    assert_refused(tmp_path, tmp_path / "d", "is a folder; expected a spec file (YAML)")
    assert_refused(tmp_path, tmp_path / "nope.yaml", "spec file not found")
    if os.path.exists("/dev/zero"):  # would never end if read
        result = invoke("validate", "/dev/zero")
        assert result.exit_code == 2
        assert result.stderr.strip() == "error: /dev/zero: not a regular file; expected a spec file (YAML)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "x.yaml"
    path.write_text(GOOD)
    path.chmod(0)
    assert_refused(tmp_path, path, "cannot read (Permission denied)")


def test_billion_laughs_is_refused_without_expanding(tmp_path):
    """9 levels of 9 aliases stand for 9**10 (3.5e9) strings: refused from the node graph, never expanded."""
    path = tmp_path / "x.yaml"
    path.write_text(GOOD + "x:\n" + laughs(9, 9))
    tracemalloc.start()
    result = invoke("validate", path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.exit_code == 2 and "aliases are expanded" in result.stderr
    # Expanded, the strings alone would take over 100 GB; the refusal costs a few MiB.
    assert peak < 20 * 2**20


def test_anchors_merges_and_empty_params_below_the_limits_are_accepted(tmp_path):
    """Aliases are fine while small; `params: {}` means the defaults; a UTF-8 BOM is ignored."""
    text = "\ufeff" + sub(
        ALGOS,
        "algorithms:\n  - &base {name: knn, params: {k: 2}}\n  - <<: *base\n    params: {k: 3, weights: distance}\n"
        "  - {name: knn, params: {}}",
    ).replace("datasets: [ripley]", "datasets: &d [ripley]")
    path = tmp_path / "x.yaml"
    path.write_text(text)
    result = invoke("validate", path)
    assert result.exit_code == 0, result.output
    assert "ok, 3 cells over 1 dataset(s)" in result.stdout
    # A duplicate key beside a merge is still a duplicate.
    path.write_text(text.replace("weights: distance}", "weights: distance}\n    params: {k: 5}"))
    result = invoke("validate", path)
    assert result.exit_code == 2 and "duplicate key 'params'" in result.stderr
