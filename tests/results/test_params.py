"""knnx.params: one value type for a cell's parameters, one parser, one canonical text,
and every reader of ``params`` going through them."""

import ast
import json
import pickle
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knnx._text import canonical_json
from knnx.params import Params, value_key, value_text
from knnx.reporting.parameters import parse_params
from knnx.results import COLUMNS, read_results, rows_to_csv
from knnx.stats.configurations import configuration_labels

PACKAGE = Path(__file__).resolve().parents[2] / "knnx"

names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**18), 10**18)
    | st.floats(allow_nan=False, allow_infinity=False)
    | names
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(names, values, max_size=5), st.sampled_from([None, 0, 2]), st.booleans(), st.booleans()
)
def test_any_layout_of_a_setting_parses_to_one_value(params, indent, sort_keys, ascii_only):
    """Oracle: json.dumps in any layout (indent, key order, \\u escapes) parses to the
    Params whose text is canonical_json of the dict, equal and hashing alike."""
    text = json.dumps(params, indent=indent, sort_keys=sort_keys, ensure_ascii=ascii_only)
    value, problem = Params.parse(text)
    assert problem is None
    assert value.text == canonical_json(params) == Params(params).text
    assert value == Params(params) and hash(value) == hash(Params(params))
    assert dict(value) == params
    assert pickle.loads(pickle.dumps(value)) == value and type(pickle.loads(pickle.dumps(value))) is Params


def test_settings_compare_as_written():
    one, _ = Params.parse('{"k": 1, "weights": "uniform"}')
    same, _ = Params.parse('{"weights":"uniform","k":1}')
    other, _ = Params.parse('{"k": 1.0, "weights": "uniform"}')
    assert one == same and len({one, same, other}) == 2
    assert (
        one != other
        and one.text == '{"k":1,"weights":"uniform"}'
        and other.text == '{"k":1.0,"weights":"uniform"}'
    )
    assert one == {"k": 1, "weights": "uniform"}  # beside a plain dict, a dict
    assert json.dumps(one, sort_keys=True, separators=(",", ":")) == one.text
    assert (one.value_text("weights"), one.value_text("k"), one.value_text("p")) == ("uniform", "1", "")
    assert (value_text([1, "a"]), value_text(None), value_key("a")) == ('[1,"a"]', "null", '"a"')


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.__setitem__("k", 2),
        lambda p: p.__delitem__("k"),
        lambda p: p.update(k=2),
        lambda p: p.setdefault("m", 1),
        lambda p: p.pop("k"),
        lambda p: p.popitem(),
        lambda p: p.clear(),
    ],
)
def test_a_params_value_is_read_only(change):
    value, _ = Params.parse('{"k": 1}')
    with pytest.raises(TypeError, match="^Params are read-only"):
        change(value)
    assert value == Params({"k": 1}) and value.text == '{"k":1}'


@pytest.mark.parametrize(
    "text,problem",
    [
        ('{"k": NaN}', "NaN is not a finite JSON number"),
        ('{"k": -Infinity}', "-Infinity is not a finite JSON number"),
        ('{"k": 1e999}', "1e999 is not a finite JSON number"),
        ('{"k": 1, "k": 2}', "the key 'k' is given twice"),
        ('{"": 1}', "a parameter without a name (the key '')"),
        ('{"k": "\\ud800"}', "a \\u escape that is no character (a lone surrogate)"),
        ("[1, 2]", "'[1, 2]' is not a JSON object of parameters"),
        ("k=1", "'k=1' is not a JSON object of parameters"),
        ('{"k": ' + "9" * 5000 + "}", "an integer of 5000 digits (at most 4300)"),
    ],
)
def test_the_one_parser_refuses_what_knnx_never_writes(text, problem):
    assert Params.parse(text) == (None, problem)


def test_every_reader_of_a_results_file_gets_the_same_params(tmp_path):
    """Two layouts of one setting in a file: read_results, the reporting parser and the
    configurations of the statistics all see one setting (one Params, one label)."""
    base = dict.fromkeys(COLUMNS, "x")
    rows = []
    for fold, text in enumerate(['{"k": 1}', '{"k":1}', '{"k": 3}']):
        rows.append({**base, "params": text, "protocol": '{"kind":"kfold"}', "repeat": 0, "fold": fold})
        rows[-1].update(seed=0, n_train=4, n_test=2, metric="error", value=0.5, experiment="e")
        rows[-1].update(dataset="d", algorithm="knn", fit_seconds=0.0, predict_seconds=0.0, tune_seconds=0.0)
    (tmp_path / "r.csv").write_text(rows_to_csv(rows, header=True))
    frame = read_results(tmp_path / "r.csv")
    assert frame["param_k"].tolist() == ["1", "1", "3"]
    parsed = parse_params(frame["params"])
    assert all(type(p) is Params for p in parsed)
    assert parsed[0] == parsed[1] != parsed[2] and len(set(parsed)) == 2
    labels = configuration_labels(frame)
    assert labels.iloc[0] == labels.iloc[1] != labels.iloc[2]


def test_params_text_is_parsed_in_one_place():
    """No module but knnx/params.py turns a ``params`` text into a value: a json.loads
    whose argument names params is the parser written twice."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "params.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "loads"
                and "params" in ast.unparse(node.args[0] if node.args else node).lower()
            ):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert found == []


def test_a_frame_of_params_built_in_python_is_checked_by_row():
    frame = pd.Series(['{"k": 1}', '{"k": NaN}'], index=["a", "b"])
    with pytest.raises(
        Exception, match=r"^column 'params' row 'b' of the frame: NaN is not a finite JSON number$"
    ):
        parse_params(frame)
