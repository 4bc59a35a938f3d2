"""The pieces of knnx.spec: parsed overrides, the protocol table, typed protocols."""

import re
import typing
from pathlib import Path

import pytest

from knnx.errors import SpecError
from knnx.evaluation.protocols import PROTOCOLS
from knnx.spec import (
    PROTOCOL_MODELS,
    ActiveProtocol,
    FiveByTwo,
    Holdout,
    KFold,
    LeavePOut,
    Override,
    Predefined,
    Protocol,
    Subsample,
    apply_overrides,
    parse_override,
    validate_spec,
)

SPEC_DIR = Path(__file__).resolve().parents[2] / "knnx" / "spec"


@pytest.mark.parametrize(
    ("text", "path", "value"),
    [
        ("protocol.folds=10", ("protocol", "folds"), 10),
        ("algorithms[0].params.k=[1, 3, 5]", ("algorithms", 0, "params", "k"), [1, 3, 5]),
        ("algorithms.0.params.k=3", ("algorithms", 0, "params", "k"), 3),
        ("protocol={kind: 5x2}", ("protocol",), {"kind": "5x2"}),
        ("algorithms[1].name=cpw", ("algorithms", 1, "name"), "cpw"),
        (" seed =7", ("seed",), 7),  # spaces around PATH are dropped
        ("pool=", ("pool",), None),  # an empty value is null
        ("pool=null", ("pool",), None),
        ("name=a=b", ("name",), "a=b"),  # the first = ends the path
        ("datasets[0].id=x-1", ("datasets", 0, "id"), "x-1"),
        ("a_b-c.d=1.5", ("a_b-c", "d"), 1.5),
    ],
)
def test_parse_override_reads_the_path_and_the_value(text, path, value):
    override = parse_override(text)
    assert override == Override(path, value, text)
    assert override.where == f"--set {text!r}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("protocol.folds", "--set 'protocol.folds': expected PATH=VALUE, e.g. protocol.folds=10"),
        (3, "--set 3: expected PATH=VALUE, e.g. protocol.folds=10"),
        (
            "algorithms[x].k=1",
            "--set 'algorithms[x].k=1': 'algorithms[x].k' is not a path; expected keys joined by dots and "
            "list indices, e.g. algorithms[0].params.k",
        ),
        (
            "=1",
            "--set '=1': '' is not a path; expected keys joined by dots and list indices, e.g. algorithms[0].params.k",
        ),
        (
            "seed=[1",
            "--set 'seed=[1': the value is not valid YAML (expected ',' or ']', but got '<stream end>')",
        ),
        (
            "seed={a: 1, a: 2}",
            "--set 'seed={a: 1, a: 2}': the value is not valid YAML (duplicate key 'a'; a key appears once per mapping)",
        ),
    ],
)
def test_parse_override_refuses_with_one_line(text, message):
    with pytest.raises(SpecError) as info:
        parse_override(text)
    assert str(info.value) == message


def test_apply_overrides_takes_texts_and_parsed_overrides_alike():
    data = {"name": "a", "algorithms": [{"name": "knn", "params": {"k": 1}}], "protocol": {"kind": "kfold"}}
    texts = ["algorithms[0].params.k=[1, 3]", "protocol.folds=3", "preprocess.standardize=true"]
    from_texts = apply_overrides(data, texts)
    assert from_texts == apply_overrides(data, [parse_override(t) for t in texts])
    assert from_texts == {
        "name": "a",
        "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}],
        "protocol": {"kind": "kfold", "folds": 3},
        "preprocess": {"standardize": True},  # a missing mapping is created
    }
    assert data["algorithms"][0]["params"] == {"k": 1}  # the input is not changed
    assert apply_overrides(data, []) is data


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["algorithms[2].name=x"],
            "--set 'algorithms[2].name=x': algorithms[2]: no such item; the list has 1",
        ),
        (["name[0]=x"], "--set 'name[0]=x': name is not a list"),
        (["name.x=1"], "--set 'name.x=1': name is not a mapping"),
        (["algorithms.0.x.0=1"], "--set 'algorithms.0.x.0=1': algorithms[0].x is not a list"),
        # applied in order: the first problem in order is the one reported
        (
            ["algorithms[2].name=x", "seed"],
            "--set 'algorithms[2].name=x': algorithms[2]: no such item; the list has 1",
        ),
        (["seed", "algorithms[2].name=x"], "--set 'seed': expected PATH=VALUE, e.g. protocol.folds=10"),
    ],
)
def test_apply_overrides_refuses_with_one_line(overrides, message):
    with pytest.raises(SpecError) as info:
        apply_overrides({"name": "a", "algorithms": [{"name": "knn"}]}, overrides)
    assert str(info.value) == message


def test_the_protocol_table_covers_every_model_of_the_union():
    union = typing.get_args(typing.get_args(Protocol)[0])
    assert list(PROTOCOL_MODELS.values()) == list(union)
    assert list(PROTOCOL_MODELS) == [
        "predefined",
        "partitions",
        "holdout",
        "kfold",
        "5x2",
        "subsample",
        "lpo",
    ]
    assert set(PROTOCOL_MODELS) == set(PROTOCOLS)  # every kind has its splits
    for kind, model in PROTOCOL_MODELS.items():
        assert model(kind=kind).kind == kind


def test_protocol_models_say_their_splits_and_held_out_rows():
    assert Predefined(kind="predefined").n_splits() == 1
    assert PROTOCOL_MODELS["partitions"](kind="partitions").n_splits() == 10
    assert PROTOCOL_MODELS["partitions"](kind="partitions", scheme="5-fold").n_splits() == 5
    assert Holdout(kind="holdout", repeats=4).n_splits() == 4
    assert KFold(kind="kfold", folds=3, repeats=2).n_splits() == 6
    assert FiveByTwo(kind="5x2").n_splits() == 10
    assert Subsample(kind="subsample", repeats=7).n_splits() == 7
    assert LeavePOut(kind="lpo", p=4).n_splits() == 1
    assert [m(kind=k).held_out for k, m in PROTOCOL_MODELS.items()] == [0, 0, 0, 0, 0, 0, 10]
    assert KFold(kind="kfold", folds=3).options() == {"folds": 3, "repeats": 1, "stratified": True}


def test_a_validated_spec_has_its_protocol_parsed():
    spec = {
        "name": "t",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [{"name": "knn"}],
    }
    vspec = validate_spec(spec)
    assert vspec.protocol == KFold(kind="kfold", folds=3)
    assert vspec.protocol_json == '{"folds":3,"kind":"kfold","repeats":1,"stratified":true}'
    active = {
        "kind": "active",
        "name": "a",
        "datasets": ["spambase"],
        "start": 30,
        "rounds": 2,
        "m": 2,
        "repeats": 1,
    }
    vspec = validate_spec(active)
    assert vspec.protocol == ActiveProtocol(start=30, pool=None, rounds=2, standardize=False)
    assert vspec.protocol_json == '{"kind":"active","pool":null,"rounds":2,"standardize":false,"start":30}'
    assert vspec.kind == "active" and len(vspec.cells) == 2


def test_an_unknown_kind_of_any_type_is_one_line():
    for kind, shown in (("passive", "'passive'"), ([1], "[1]"), ({"a": 1}, "{'a': 1}")):
        with pytest.raises(SpecError) as info:
            validate_spec({"kind": kind, "name": "a"})
        assert str(info.value) == (
            f"<spec>: kind: unknown experiment kind {shown}; known: active (a spec without 'kind' runs its "
            "protocol and algorithms)"
        )


def test_no_string_branches_on_protocol_or_spec_kinds():
    pattern = re.compile(r"""[!=]= ?["'](active|lpo)["']""")
    found = [
        f"{p.name}: {line.strip()}"
        for p in SPEC_DIR.glob("*.py")
        for line in p.read_text().splitlines()
        if pattern.search(line)
    ]
    assert found == []
