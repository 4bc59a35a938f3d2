"""Experiment specs: schema, validation and grid expansion.

A spec (YAML or a dict) names datasets, a preprocessing step, an evaluation
protocol, algorithms with parameter grids, and metrics::

    name: ripley
    seed: 0
    datasets: [ripley]
    preprocess: {standardize: false}
    protocol: {kind: predefined}
    algorithms:
      - name: knn
        params: {k: [1, 3, 5], weights: uniform}   # a list expands to a grid
    metrics: [error, f1_macro]
    record_curves: false    # true: write estimators' training curves (curve_) to curves.csv
    curve_points: 200       # at most this many evenly spaced iterations per curve
    share_graphs: true      # false: every cell searches its own neighbours (timings)

An ``algorithms`` entry names a registered algorithm (``name``; see
:mod:`knnx.estimators.registry` for aliases, registration and plugins) or any
scikit-learn-compatible classifier by import path (``estimator:
"package.module:Class"``), and may add ``id`` (its name in results), ``params_for``
(dataset id -> parameters replacing those of ``params`` there) and ``tune`` (nested
tuning on inner folds, one cell per split). A dataset entry whose options are lists
stands for one dataset per combination (:func:`knnx.datasets.expand_entry`).
``python_path`` lists folders searched for import paths. :func:`apply_overrides`
applies ``--set PATH=VALUE`` changes before validation.

A spec with ``kind: active`` is an active-learning experiment instead (LpO
query-by-committee, :class:`ActiveSpec`): datasets, a start set and pool, the loop's
settings and strategies, run by the same runner (``knnx run``), one cell per
(dataset, strategy, repeat). A spec without ``kind`` is the form above.

Metrics (``knnx.evaluation.metrics.METRICS``) take predicted labels (``error``, ``accuracy``,
``f1_macro``, ``recall_macro``, ``precision_macro``), predicted probabilities
(``log_loss``, ``brier``, ``f_measure_auc``, ``rejection_auc``) or the true
posterior of a synthetic dataset beside the predicted probabilities (``sym_kl``,
``js``); ``knnx.evaluation.metrics.METRIC_INPUT`` says which.

:func:`validate_spec` checks everything before any computation: the schema, the
registry names, every grid value against the algorithm's constraint table, that
each dataset loads, that the protocol applies to it, that no training part has a
single class, that ``k`` fits in every training part, that every algorithm has
``predict_proba`` when a probability or posterior metric is asked, and that every
dataset has a true posterior when a posterior metric is asked. Every problem
becomes one line ``SOURCE: PATH: message`` and all are raised together as one
SpecError.

Hostile input is refused before it can cost time or memory (each with one line):
a spec file larger than :data:`MAX_SPEC_BYTES`; YAML nested deeper than
:data:`MAX_YAML_DEPTH`, holding a string longer than :data:`MAX_YAML_STRING`, or
holding more than :data:`MAX_YAML_VALUES` values once its aliases are expanded
(anchors and aliases, ``<<`` merges included, are fine below that; a "billion
laughs" alias bomb is refused from the composed node graph, without expanding it);
duplicate or non-string mapping keys; and a grid of more than :data:`MAX_CELLS`
cells, counted from the list lengths and the protocol before any grid is expanded
or any dataset loaded.
"""

import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from knnx._text import describe_control, find_control
from knnx.datasets import dataset_label, expand_entry, load_dataset
from knnx.errors import KnnxError, SpecError
from knnx.estimators.registry import LPO_RISK, resolve_algorithm
from knnx.evaluation.metrics import METRIC_INPUT, METRICS
from knnx.evaluation.protocols import make_splits
from knnx.limits import check_memory, graph_bytes, lpo_bytes, memory_problem
from knnx.neighbors.search import check_scale
from knnx.plugins import add_import_dirs


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Predefined(_Strict):
    kind: Literal["predefined"]


class Holdout(_Strict):
    kind: Literal["holdout"]
    test_size: Annotated[float, Field(gt=0, lt=1)] = 0.3
    repeats: Annotated[int, Field(ge=1)] = 1
    stratified: bool = True


class KFold(_Strict):
    kind: Literal["kfold"]
    folds: Annotated[int, Field(ge=2)] = 5
    repeats: Annotated[int, Field(ge=1)] = 1
    stratified: bool = True


class FiveByTwo(_Strict):
    kind: Literal["5x2"]


class Subsample(_Strict):
    kind: Literal["subsample"]
    train_per_class: Annotated[int, Field(ge=1)] = 30
    repeats: Annotated[int, Field(ge=1)] = 10


class LeavePOut(_Strict):
    """Exact leave-p-out estimate on all rows (algorithms with a closed form only)."""

    kind: Literal["lpo"]
    p: Annotated[int, Field(ge=1)] = 10


Protocol = Annotated[
    Predefined | Holdout | KFold | FiveByTwo | Subsample | LeavePOut, Field(discriminator="kind")
]


class Preprocess(_Strict):
    standardize: bool = False


def _not_only_dots(name):
    # "." or ".." would make the default output folder results/ itself or its parent.
    if set(name) == {"."}:
        raise ValueError("a name made of dots only is not allowed (it names the results folder)")
    return name


Name = Annotated[
    str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$"), AfterValidator(_not_only_dots)
]
"""An experiment's name: the default output folder results/<name> (letters, digits, ``_.-``;
not dots only, so never results/ itself or its parent). Algorithm ids follow the same rule."""


class Tune(_Strict):
    """Nested tuning: each training part's own stratified inner folds choose the setting."""

    cv: Annotated[int, Field(ge=2, le=1000)] = 5
    metric: str = "error"


class AlgorithmEntry(_Strict):
    """One algorithm of a spec: a registered ``name`` or an ``estimator`` import path,
    an optional ``id`` (its name in results), and its parameter grid."""

    name: str | None = None
    estimator: str | None = None
    id: Name | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    # dataset id -> parameters that replace those of ``params`` on that dataset
    params_for: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # choose among the grid on inner folds of each training part (one cell per split)
    tune: Tune | None = None

    @model_validator(mode="after")
    def _one_form(self):
        if (self.name is None) == (self.estimator is None):
            raise ValueError(
                "give either 'name' (a knnx algorithm) or 'estimator' ('package.module:Class'), not "
                + ("both" if self.name is not None else "neither")
            )
        return self


class Spec(_Strict):
    name: Name
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 0
    datasets: Annotated[list[str | dict[str, Any]], Field(min_length=1)]
    preprocess: Preprocess = Field(default_factory=Preprocess)
    protocol: Protocol
    algorithms: Annotated[list[AlgorithmEntry], Field(min_length=1)]
    metrics: Annotated[list[str], Field(min_length=1)] = Field(default_factory=lambda: ["error"])
    record_curves: bool = False
    curve_points: Annotated[int, Field(ge=2)] = 200
    # Cells of one dataset and split share their exact neighbour graphs (knnx.neighbors.graphs):
    # results are the same either way; false makes each estimator's fit and predict
    # times include its own neighbour search, as when it runs alone (timing studies).
    share_graphs: bool = True
    # Folders (absolute, or relative to the spec's folder) searched for the import paths
    # of estimator and loader entries, after the installed packages.
    python_path: list[str] = Field(default_factory=list)


class ActiveSpec(_Strict):
    """An active-learning experiment (``kind: active``): LpO query-by-committee against
    passive LpO-tuned kNN, Celisse & Mary-Huard (2011), Sec. 4.3 (the loop is
    :func:`knnx.lpo.active.active_learning`). Run by ``knnx run`` like any spec::

        kind: active
        name: lpo-active
        datasets:                   # as in run specs
          - {synthetic: celisse2011, n: 10050, q: 0.2, id: celisse2011-q0.2}
        start: 50
        pool: null
        m: 5
        rounds: 60
        strategies: [qbc, passive]
        repeats: 10                 # --set repeats=2 changes it for one run

    It has no ``protocol``, ``algorithms`` or ``metrics``: the start set and pool are its
    protocol, the query strategies its algorithms (``lpo_qbc``, ``passive_lpo`` in
    results), and each round gives the metrics ``error`` (on the remaining pool) and
    ``chosen_k``. A cell is one (dataset, strategy, repeat): the whole loop, one results
    row per (round, metric), with columns ``round`` (0 = the start set) and ``n_train``
    (the labelled points at that round; ``n_test`` the pool points left, ``fold`` 0: one
    start/pool split per repeat). Repeat r draws its data (synthetic entries: a fresh
    sample) and its start set from child seeds of (seed, dataset id, r); the strategies
    of a repeat share start set and pool, so their comparison is paired.
    """

    kind: Literal["active"] = Field(description="'active': this form of spec (a run spec has no kind).")
    name: Name = Field(description="Experiment name; the default output folder is results/<name>.")
    seed: Annotated[int, Field(ge=0, lt=2**63)] = Field(0, description="Root of every child seed.")
    datasets: Annotated[list[str | dict[str, Any]], Field(min_length=1)] = Field(
        description="Bundled names, csv, loader or synthetic entries, as in a run spec."
    )
    start: Annotated[int, Field(ge=2)] = Field(50, description="Size of the labelled start set E^0.")
    pool: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Pool size (points a strategy may query); null: every row not in the start set."
    )
    m: Annotated[int, Field(ge=1)] = Field(5, description="Points queried per round.")
    rounds: Annotated[int, Field(ge=0)] = Field(60, description="Rounds after round 0 (the start set).")
    p_select: Annotated[int, Field(ge=1)] = Field(
        10, description="p of the leave-p-out committee choosing the queries (qbc only; capped at n - k)."
    )
    p_tune: Annotated[int, Field(ge=1)] = Field(10, description="p of the exact leave-p-out risk tuning k.")
    k_max: Annotated[int, Field(ge=1)] = Field(50, description="Largest k tuned.")
    k_fixed: Annotated[int, Field(ge=1)] | None = Field(
        None, description="An integer fixes k instead of tuning it (the paper's Sec. 4.4)."
    )
    strategies: Annotated[list[Literal["qbc", "passive"]], Field(min_length=1)] = Field(
        default_factory=lambda: ["qbc", "passive"],
        description="qbc: the m pool points of lowest committee agreement; passive: m at random.",
    )
    repeats: Annotated[int, Field(ge=1)] = Field(
        10, description="Repetitions (data and start set drawn anew)."
    )
    standardize: bool = Field(
        False, description="Standardise with the mean and std of the start set and pool features (no labels)."
    )
    python_path: list[str] = Field(
        default_factory=list, description="Folders searched for the import paths of loader entries."
    )

    # What the runner reads of every spec: an active run's metrics, and no curves.
    metrics: ClassVar[tuple] = ("error", "chosen_k")
    record_curves: ClassVar[bool] = False
    curve_points: ClassVar[int] = 0


# Guards against hostile or accidental explosions (see the module docstring).
MAX_CELLS = 1_000_000
MAX_SPEC_BYTES = 1_000_000
MAX_YAML_DEPTH = 32
MAX_YAML_STRING = 4096
MAX_YAML_VALUES = 10_000


@dataclass(frozen=True)
class Cell:
    """One unit of work: an algorithm with fixed parameters on one split of one dataset."""

    index: int
    dataset_index: int
    dataset: str
    algorithm: str  # the algorithm entry's id
    params: dict
    repeat: int
    fold: int
    algorithm_index: int = 0  # which entry of the spec's algorithms (ValidatedSpec.algorithms)

    @property
    def params_json(self):
        return canonical_json(self.params)

    def key(self):
        return (self.dataset, self.algorithm, self.params_json, self.repeat, self.fold)


@dataclass(frozen=True, eq=False)
class ValidatedSpec:
    """A spec that passed every check, with its datasets loaded and splits drawn."""

    spec: Spec
    source: str
    base_dir: Path
    datasets: list
    splits: list
    cells: list
    algorithms: list = ()  # knnx.estimators.registry.ResolvedAlgorithm per entry of spec.algorithms
    entries: tuple = ()  # the dataset entries once list-valued options are expanded (one per dataset)

    @property
    def kind(self):
        """ "run" (protocol x algorithms) or "active" (:class:`ActiveSpec`)."""
        return getattr(self.spec, "kind", "run")

    @property
    def protocol_json(self):
        if self.kind == "active":
            spec = self.spec
            return canonical_json(
                {
                    "kind": "active",
                    "start": spec.start,
                    "pool": spec.pool,
                    "rounds": spec.rounds,
                    "standardize": spec.standardize,
                }
            )
        return canonical_json(self.spec.protocol.model_dump())

    @property
    def import_dirs(self):
        """The spec's ``python_path`` as absolute folders."""
        return tuple(str((self.base_dir / p).resolve()) for p in self.spec.python_path)

    def normalized(self):
        """The spec as a plain dict with every default filled in, the algorithms' own
        included, and its files found from anywhere: CSV paths absolute, and the spec's
        folder in ``python_path`` when an entry imports code (written beside results,
        ``knnx run OUT/spec.yaml`` reruns it from any folder)."""
        data = self.spec.model_dump(mode="json")
        imports = []  # top-level modules that estimator and loader entries import
        for entry, ref in zip(data.get("algorithms", ()), self.algorithms, strict=True):
            for key in ("name", "estimator", "id", "tune"):
                if entry[key] is None:
                    del entry[key]
            if not entry["params_for"]:
                del entry["params_for"]
            if "estimator" in entry:
                imports.append(entry["estimator"].split(".")[0].split(":")[0])
            defaults = {k: v for k, v in ref.defaults().items() if k not in ref.fixed}
            entry["params"] = {**defaults, **entry["params"]}
        for entry in data["datasets"]:
            if isinstance(entry, dict) and isinstance(entry.get("csv"), str):
                entry["csv"] = str((self.base_dir / entry["csv"]).resolve())
            if isinstance(entry, dict) and isinstance(entry.get("loader"), str):
                imports.append(entry["loader"].split(".")[0].split(":")[0])
        folders = list(self.import_dirs)
        here = self.base_dir.resolve()
        beside = any((here / top).is_dir() or (here / f"{top}.py").is_file() for top in imports)
        if beside and str(here) not in folders:  # a module beside the spec: found from anywhere
            folders.append(str(here))
        data["python_path"] = folders
        return data

    def digest(self):
        return hashlib.sha256(canonical_json(self.normalized()).encode()).hexdigest()[:16]


def canonical_json(value):
    """JSON with sorted keys and no spaces: the form params take in results. Standard JSON
    only: NaN and infinities raise ValueError (parameter tables refuse them before)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default, allow_nan=False)


def _json_default(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"not JSON serialisable: {value!r}")


def _loc_to_path(loc):
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in ("str", "dict[str,any]", "predefined", "holdout", "kfold", "5x2", "subsample", "lpo"):
            continue  # union branch names add nothing for the reader
        else:
            path += f".{part}" if path else str(part)
    return path or "(top level)"


# Pydantic's wording that names its own classes rather than the spec's keys.
_PYDANTIC_NOISE = re.compile(r" or (instance of \w+|object to extract fields from)")


def _short_repr(value, limit=80):
    """``repr(value)`` cut to ``limit`` characters, so that one message stays one short line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _pydantic_problems(exc, data, model_at=None):
    """One message per location; ``model_at(loc, data)`` finds the model whose keys an
    unknown key is listed against (default: the run spec's)."""
    problems = {}
    for err in exc.errors():
        loc = err["loc"]
        path = _loc_to_path(loc)
        if err["type"] == "extra_forbidden":
            model = (model_at or _model_at)(loc[:-1], data)
            known = ", ".join(model.model_fields) if model else ""
            msg = f"unknown key; known: {known}" if known else "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        elif err["type"] == "union_tag_invalid":
            given = err["input"].get("kind") if isinstance(err["input"], dict) else err["input"]
            msg = f"unknown protocol kind {given!r}; known: predefined, holdout, kfold, 5x2, subsample, lpo"
        elif err["type"] == "union_tag_not_found":
            msg = "needs a 'kind': predefined, holdout, kfold, 5x2, subsample or lpo"
        elif err["type"] == "too_short":
            msg = "empty list; give at least one item"
        else:
            text = _PYDANTIC_NOISE.sub("", err["msg"]).removeprefix("Value error, ")
            msg = text[0].lower() + text[1:]
            if not (err["type"] == "value_error" and isinstance(err.get("input"), dict)):
                # (a rule on a whole entry: the entry is at its path, its repr would be noise)
                msg += f" (got {_short_repr(err.get('input'))})"
        # The str | dict union reports one error per branch for datasets: keep the first.
        problems.setdefault(path, msg)
    return [f"{path}: {msg}" for path, msg in problems.items()]


_MODELS_AT = {"": Spec, "protocol": None, "preprocess": Preprocess, "algorithms": AlgorithmEntry}


def _model_at(loc, data):
    """The pydantic model a location refers to (for listing known keys)."""
    names = [p for p in loc if isinstance(p, str)]
    if not names:
        return Spec
    if names[0] == "protocol":
        kind = data.get("protocol", {}).get("kind") if isinstance(data.get("protocol"), dict) else None
        return {
            "predefined": Predefined,
            "holdout": Holdout,
            "kfold": KFold,
            "5x2": FiveByTwo,
            "subsample": Subsample,
            "lpo": LeavePOut,
        }.get(kind)
    if names[0] == "algorithms" and "tune" in names:
        return Tune
    return _MODELS_AT.get(names[0])


class _SpecLoader(yaml.SafeLoader):
    """SafeLoader with the limits of a hand-written spec (see the module docstring).

    Refuses, with a mark pointing at the place: a key given twice in one mapping
    (plain YAML keeps the last), a key that is not a string (``3:``, ``null:``,
    ``yes:``, ``[a, b]:``), nesting deeper than MAX_YAML_DEPTH (checked while
    composing, before Python's recursion limit is near), a scalar longer than
    MAX_YAML_STRING, and more than MAX_YAML_VALUES values once aliases are
    expanded (counted on the composed node graph, where an alias is a shared node,
    so a billion-laughs document is measured in time linear in its size).
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._values = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_YAML_STRING:
            raise _limit_error(f"a value of {len(event.value)} characters; at most {MAX_YAML_STRING}", event)
        if not isinstance(event, yaml.AliasEvent):
            self._values += 1
            if self._values > MAX_YAML_VALUES:  # stop reading early; aliases are counted after composing
                raise _limit_error(f"more than {MAX_YAML_VALUES} values; a spec must stay small", event)
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _limit_error(f"nested more than {MAX_YAML_DEPTH} levels deep", event)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<: *defaults" merges, its keys may be overridden
            key = self.construct_object(key_node, deep=deep)
            mark = key_node.start_mark
            if not isinstance(key, str):
                if isinstance(key_node, yaml.ScalarNode):
                    kind = "null" if key is None else "a boolean" if isinstance(key, bool) else "a number"
                    problem = (
                        f"key {_short_repr(key_node.value, 40)} is read as {kind}; keys are names (quote it)"
                    )
                else:
                    problem = "a key is a list or a mapping; keys are names"
                raise yaml.constructor.ConstructorError(None, None, problem, mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}; a key appears once per mapping", mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_scalar(self, node):
        value = super().construct_scalar(node)
        if isinstance(value, str) and find_control(value) is not None:
            # YAML escapes ("a\rb") get past the reader's rule on raw control characters;
            # a spec string becomes a CSV field or a path, where they break lines.
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{_short_repr(value, 40)} holds a {describe_control(value)}; spec values hold none",
                node.start_mark,
            )
        return value

    def _refuse_tag(self, node):
        what = _REFUSED_TAGS[node.tag.rsplit(":", 1)[1]]
        if isinstance(node, yaml.ScalarNode):
            problem = f"{_short_repr(node.value, 40)} is read as {what}; quote it to make it a string"
        else:
            problem = f"a YAML !!{node.tag.rsplit(':', 1)[1]} is not a spec value; use a list or a mapping"
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


# YAML types with no JSON counterpart: a spec holds strings, numbers, booleans, null, lists and mappings.
_REFUSED_TAGS = {
    "timestamp": "a date",
    "binary": "binary data",
    "set": "a set",
    "omap": "an ordered map",
    "pairs": "pairs",
}
for _tag in _REFUSED_TAGS:
    _SpecLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _SpecLoader._refuse_tag)


def _limit_error(problem, event):
    return yaml.composer.ComposerError(None, None, problem, event.start_mark)


def _expanded_size(node, memo):
    """Number of values ``node`` stands for with every alias expanded (memoised per node)."""
    size = memo.get(id(node))
    if size is None:
        if isinstance(node, yaml.SequenceNode):
            size = 1 + sum(_expanded_size(child, memo) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        else:
            size = 1
        if size > MAX_YAML_VALUES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"more than {MAX_YAML_VALUES} values once aliases are expanded (an alias bomb?); a spec "
                "must stay small",
                node.start_mark,
            )
        memo[id(node)] = size
    return size


def _load_yaml(text):
    loader = _SpecLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {})
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_spec(source):
    """Read a spec from a YAML path or a dict. Returns (data, source label, base folder)."""
    if isinstance(source, dict):
        return source, "<spec>", Path.cwd()
    path = Path(source)
    if path.is_dir():
        raise SpecError(f"{path}: is a folder; expected a spec file (YAML)")
    if not path.exists():
        raise SpecError(f"{path}: spec file not found")
    if not path.is_file():
        raise SpecError(f"{path}: not a regular file; expected a spec file (YAML)")
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(f"{path}: {size} bytes, more than the limit of {MAX_SPEC_BYTES} for a spec file")
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = _load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if isinstance(exc, yaml.reader.ReaderError):  # a control character: no mark, a position
            line = text.count("\n", 0, exc.position) + 1
            column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
            where = f"line {line}, column {column}: "
            problem = f"control character #x{exc.character:04x} is not allowed"
        raise SpecError(f"{path}: {where}invalid YAML ({problem})") from None
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {_YAML_KIND.get(type(data), type(data).__name__)}"
        raise SpecError(
            f"{path}: expected a mapping of spec keys (name, datasets, protocol, algorithms, ...), "
            f"but the file is {what}"
        )
    return data, str(path), path.parent


_YAML_KIND = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


# PATH of an override: keys joined by dots, list indices in brackets (or as a dotted number).
_OVERRIDE_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\[\d+\]|\.[A-Za-z_][\w-]*|\.\d+)*", re.ASCII)
_PATH_PART = re.compile(r"\[(\d+)\]|\.?([A-Za-z_][\w-]*|\d+)", re.ASCII)


def apply_overrides(data, overrides):
    """A copy of the spec mapping ``data`` with each ``"PATH=VALUE"`` of ``overrides``
    applied in order: PATH is dotted keys with list indices (``protocol.folds``,
    ``algorithms[0].params.k`` or ``algorithms.0.params.k``), VALUE is read as YAML
    (``10``, ``[1, 3, 5]``, ``{kind: 5x2}``, ``cpw``) under the same limits as a spec
    file. Missing mapping keys are created; a list index must exist. SpecError, one
    line naming the override, otherwise."""
    import copy

    if not overrides:
        return data
    data = copy.deepcopy(data)
    for text in overrides:
        where = f"--set {text!r}"
        if not isinstance(text, str) or "=" not in text:
            raise SpecError(f"{where}: expected PATH=VALUE, e.g. protocol.folds=10")
        path, raw = text.split("=", 1)
        path = path.strip()
        if not _OVERRIDE_PATH.fullmatch(path):
            raise SpecError(
                f"{where}: '{path}' is not a path; expected keys joined by dots and list indices, e.g. "
                "algorithms[0].params.k"
            )
        try:
            value = _load_yaml(raw) if raw.strip() else None
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise SpecError(f"{where}: the value is not valid YAML ({problem})") from None
        parts = [int(i) if i else int(k) if k.isdigit() else k for i, k in _PATH_PART.findall(path)]
        node = data
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            shown = _path_text(parts[: depth + 1])
            if isinstance(part, int):
                if not isinstance(node, list):
                    raise SpecError(f"{where}: {_path_text(parts[:depth]) or 'the spec'} is not a list")
                if part >= len(node):
                    raise SpecError(f"{where}: {shown}: no such item; the list has {len(node)}")
            elif not isinstance(node, dict):
                raise SpecError(f"{where}: {_path_text(parts[:depth])} is not a mapping")
            if last:
                node[part] = value
            else:
                if isinstance(node, dict) and part not in node:
                    node[part] = {}
                node = node[part]
    return data


def _path_text(parts):
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def expand_grid(params):
    """Cartesian product of list-valued parameters, in the spec's key order."""
    keys = list(params)
    values = [v if isinstance(v, list) else [v] for v in params.values()]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


# Purposes of the child seeds of one dataset.
SEED_DATA, SEED_SPLITS, SEED_TUNE = 0, 1, 2


def tune_seed(seed, label, repeat, fold):
    """The ``random_state`` of the inner folds that tune an algorithm on one training part
    (repeat, fold) of dataset ``label``: an int from the spec's seed, independent of the
    data and split streams."""
    word = int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")
    return int(np.random.SeedSequence(seed, spawn_key=(word, SEED_TUNE, repeat, fold)).generate_state(1)[0])


def tuned_settings(grid):
    """The settings a tuned entry searches, in scikit-learn's ParameterGrid order
    (names sorted, the last varying fastest): GridSearchCV's order, hence its tie rule
    (the first setting with the best mean inner score)."""
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid({k: v if isinstance(v, list) else [v] for k, v in grid.items()}))


def dataset_seedseq(seed, label, purpose):
    """Child seed of the spec's ``seed`` for one dataset and one purpose.

    ``spawn_key = (word, purpose)`` where ``word`` is a stable 32-bit hash of the
    dataset's label, so seeds do not depend on the order of datasets in the spec,
    and generating data (SEED_DATA) and drawing splits (SEED_SPLITS) use
    independent streams. Repeat r of a protocol draws from the r-th child of the
    splits stream (see knnx.evaluation.protocols).
    """
    word = int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")
    return np.random.SeedSequence(seed, spawn_key=(word, purpose))


def _splits_per_dataset(protocol):
    """How many splits a protocol draws from each dataset (it does not depend on the data)."""
    return {
        "holdout": lambda p: p.repeats,
        "kfold": lambda p: p.folds * p.repeats,
        "5x2": lambda p: 10,
        "subsample": lambda p: p.repeats,
    }.get(protocol.kind, lambda p: 1)(protocol)


def _check_size(spec, label, n_datasets=None):
    """Refuse a spec of more than MAX_CELLS cells, counted before any grid is expanded
    (``n_datasets``: the datasets once list-valued options are expanded)."""
    n_datasets = len(spec.datasets) if n_datasets is None else n_datasets

    def count(params):
        return math.prod(len(v) if isinstance(v, list) else 1 for v in params.values())

    settings = sum(
        max([count(algo.params)] + [count({**algo.params, **p}) for p in algo.params_for.values()])
        for algo in spec.algorithms
    )
    n_splits = _splits_per_dataset(spec.protocol)
    n_cells = n_datasets * n_splits * settings
    if n_cells > MAX_CELLS:
        raise SpecError(
            f"{label}: algorithms: the grid expands to {n_cells} cells ({n_datasets} dataset(s) x "
            f"{n_splits} split(s) x {settings} parameter setting(s)), more than the limit of {MAX_CELLS}"
        )


def _grid_key(value):
    """What makes two grid values one setting: equal numbers are one (``1`` and ``1.0``
    would run the same fit under two params strings); booleans are not numbers."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return ("number", float(value))
        except OverflowError:
            return ("number", value)
    return ("json", json.dumps(value, sort_keys=True, default=str))


def _grid(ref, params, checked, where, proba_metrics):
    """The settings of one algorithm entry's ``params`` (every default filled in) and the
    problems found: each value of the parameters in ``checked`` against the class's
    table, values listed twice, combinations no single value shows, and
    ``predict_proba`` for the probability metrics ``proba_metrics`` ((index, name)).
    ``where`` starts each problem line (``algorithms[0]`` or
    ``algorithms[0].params_for.glass``)."""
    problems = []
    ok = True
    prefix = where if ".params_for." in where else f"{where}.params"
    for pname, pvalue in checked.items():
        values = pvalue if isinstance(pvalue, list) else [pvalue]
        if isinstance(pvalue, list) and not pvalue:
            problems.append(f"{prefix}.{pname}: empty list of values")
            ok = False
            continue
        grid_keys = [_grid_key(v) for v in values]
        dup = next((v for i, v in enumerate(values) if grid_keys[i] in grid_keys[:i]), None)
        if len(set(grid_keys)) != len(values):
            problems.append(f"{prefix}.{pname}: value {dup!r} is listed twice")
            ok = False
            continue
        for v in values:
            problem = ref.parameter_problem(pname, v)
            if problem is not None:
                problems.append(f"{prefix}.{pname}: {problem}")
                ok = False
                break
    if not ok or len(checked) != len(checked.keys() & params.keys()):
        return [], problems
    # Every parameter appears in results, defaults included, so that {"k": 3} and
    # {"k": 3, "weights": "uniform"} are one setting.
    defaults = ref.defaults()
    grid = [{**defaults, **g} for g in expand_grid(params)]
    for g in grid:  # combinations that no single value shows (e.g. base l1 with scheme cpw)
        setting_problems = _hook(ref.cls, "_setting_problems")(g)
        if setting_problems:
            return [], [*problems, f"{where}: {setting_problems[0]}"]
    for i, metric in proba_metrics:
        lacking = next((g for g in grid if not _has_proba(ref.cls, g)), None)
        if lacking is not None:
            setting = "" if len(grid) == 1 else f" with {_short_repr(_varying(params, lacking), 60)}"
            problems.append(
                f"metrics[{i}]: {metric} needs predicted probabilities; {where} ({ref.id}){setting} "
                "has no predict_proba"
            )
    return grid, problems


def _settings(spec, grids):
    """Per algorithm, the settings its cells fit: a tuned entry's cell fits each setting
    of its grid (on inner folds), the others one each."""
    return [
        tuned_settings(grid[0]) if grid and spec.algorithms[a].tune is not None else grid
        for a, grid in enumerate(grids)
    ]


def _tune_problems(a, algo, ref, spec):
    """What makes a ``tune:`` entry impossible whatever the data."""
    problems = []
    metric = algo.tune.metric
    if metric not in METRICS or METRIC_INPUT.get(metric) == "posterior":
        known = ", ".join(m for m in METRICS if METRIC_INPUT.get(m) != "posterior")
        problems.append(
            f"algorithms[{a}].tune.metric: '{metric}' cannot choose a setting; use one of {known}"
        )
    elif METRIC_INPUT[metric] == "proba":
        settings = [{**ref.defaults(), **s} for s in tuned_settings(algo.params)]
        if not all(_has_proba(ref.cls, s) for s in settings):
            problems.append(f"algorithms[{a}].tune.metric: {metric} needs predict_proba in every setting")
    if spec.protocol.kind == "lpo":
        problems.append(f"algorithms[{a}].tune: protocol lpo has no training parts to tune on")
    return problems


def _inner_rows(y_train, cv):
    """The fewest training rows an inner fold of stratified ``cv``-fold CV keeps."""
    counts = np.bincount(y_train)
    return len(y_train) - int(sum(math.ceil(c / cv) for c in counts if c))


def _has_proba(cls, params):
    """Whether an estimator with these parameters offers ``predict_proba`` (scikit-learn's
    SVC has it only with ``probability=True``)."""
    try:
        return hasattr(cls(**params), "predict_proba")
    except Exception:
        return hasattr(cls, "predict_proba")


def _varying(params, setting):
    """The grid parameters' values in one setting (what tells it from the others)."""
    return {k: setting[k] for k, v in params.items() if isinstance(v, list)}


def _id_problems(spec, resolved):
    """Entries sharing an id: allowed only when neither gives ``id`` and both name the
    same algorithm (two grids of one algorithm); an ``id`` given is unique."""
    problems = []
    first = {}
    for a, (algo, ref) in enumerate(zip(spec.algorithms, resolved, strict=True)):
        if ref is None:
            continue
        if ref.id in first:
            b = first[ref.id]
            other, other_ref = spec.algorithms[b], resolved[b]
            same = (
                algo.id is None
                and other.id is None
                and (ref.cls, ref.fixed) == (other_ref.cls, other_ref.fixed)
            )
            if not same:
                problems.append(
                    f"algorithms[{a}].id: '{ref.id}' is already the id of algorithms[{b}]; give each a distinct id"
                )
            continue
        first[ref.id] = a
    return problems


def _hook(cls, name):
    """An estimator class's problem hook (see knnx.estimators.base.NeighborsClassifierBase), or one
    that finds nothing for a class without it."""
    return getattr(cls, name, None) or (lambda *args: [])


def _dataset_problems(spec, resolved, grids, ds, ds_splits, kind, protocol):
    """What validation can see of a dataset that would fail cells at run time: the range
    rule of the kernels (without standardisation), each setting against the largest
    training part (iteration counts, memory, feature splits, classes), exact LpO's own
    limits, and the memory of the neighbour graphs the run shares. One line each."""
    problems = []
    if not spec.preprocess.standardize:
        try:
            check_scale(ds.X)  # each training part and its queries are rows of X
        except KnnxError as exc:
            problems.append(f"'{ds.name}': {exc}")
    n_train = max(len(s.train) for s in ds_splits)
    n_test = max(len(s.test) for s in ds_splits)
    if kind == "lpo":
        n_train -= protocol["p"]
    for a, grid in enumerate(grids):
        for g in grid:
            hook = _hook(resolved[a].cls, "_data_problems")
            found = hook(g, n_train, ds.n_features, ds.n_classes)
            if found:
                problems.append(f"algorithms[{a}] on '{ds.name}' ({n_train} training rows): {found[0]}")
                break
    graph_k = 0
    for a, grid in enumerate(grids):
        for g in grid:
            if kind == "lpo" and resolved[a].lpo_risk is not None:
                if g.get("weights") == "distance" and ds.n_classes > 2:
                    problems.append(
                        f"algorithms[{a}]: protocol lpo with weights='distance' is exact for two classes only; "
                        f"'{ds.name}' has {ds.n_classes}"
                    )
                    break
                what = f"algorithms[{a}]: exact leave-{protocol['p']}-out of k up to {g['k']} on '{ds.name}'"
                problem = memory_problem(lpo_bytes(ds.n_samples, ds.n_features, protocol["p"], g["k"]), what)
                if problem:
                    problems.append(problem)
                    break
            elif resolved[a].neighbor_param is not None:
                graph_k = max([graph_k, *resolved[a].neighbor_counts(g)])
    if graph_k:
        k = min(graph_k, n_train)
        need = ds.X.nbytes + graph_bytes(n_train, k, n_train, ds.n_features) + 16 * n_test * k
        problem = memory_problem(
            need, f"the neighbour graphs of '{ds.name}' ({n_train} training rows, k = {k})"
        )
        if problem:
            problems.append(problem)
    return problems


def validate_spec(source, overrides=()):
    """Validate a spec (path or dict) completely; return a :class:`ValidatedSpec`.

    ``overrides``: strings ``"PATH=VALUE"`` applied first (see :func:`apply_overrides`),
    so the spec is checked exactly as if they were written in it. A spec with ``kind:
    active`` is checked as an :class:`ActiveSpec` (see :func:`_validate_active`).

    Raises
    ------
    SpecError
        One line per problem, each ``SOURCE: PATH: message``.
    """
    data, label, base_dir = read_spec(source)
    data = apply_overrides(data, overrides)
    if isinstance(data, dict) and "kind" in data:
        if data["kind"] != "active":
            raise SpecError(
                f"{label}: kind: unknown experiment kind {_short_repr(data['kind'])}; known: active "
                "(a spec without 'kind' runs its protocol and algorithms)"
            )
        return _validate_active(data, label, base_dir)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        own = [k for k in ActiveSpec.model_fields if k not in Spec.model_fields]
        found = [k for k in own if isinstance(data, dict) and k in data]
        if found and not {"protocol", "algorithms"} & set(data):  # an active spec without its kind
            raise SpecError(
                f"{label}: kind: required key is missing; a spec with {', '.join(found)} is an active-learning "
                "spec: add 'kind: active'"
            ) from None
        raise SpecError.from_lines([f"{label}: {p}" for p in _pydantic_problems(exc, data)]) from None
    folders = [(base_dir / p).resolve() for p in spec.python_path]
    missing = [(i, f) for i, f in enumerate(folders) if not f.is_dir()]
    if missing:
        raise SpecError(f"{label}: python_path[{missing[0][0]}]: {missing[0][1]}: no such folder")
    add_import_dirs([str(f) for f in folders])

    entries, problems = [], []  # (index in spec.datasets, entry) once lists are expanded
    for d, entry in enumerate(spec.datasets):
        try:
            entries += [(d, e) for e in expand_entry(entry)]
        except KnnxError as exc:
            problems.append(f"{label}: datasets[{d}]: {exc}")
    if problems:
        raise SpecError.from_lines(problems)
    _check_size(spec, label, len(entries))

    problems = []
    for i, metric in enumerate(spec.metrics):
        if metric not in METRICS:
            problems.append(f"metrics[{i}]: unknown metric '{metric}'; known: {', '.join(METRICS)}")
        elif metric in spec.metrics[:i]:
            problems.append(f"metrics[{i}]: '{metric}' is listed twice")
    resolved = []
    for a, algo in enumerate(spec.algorithms):
        try:
            resolved.append(resolve_algorithm(algo.model_dump(), base_dir))
        except KnnxError as exc:
            field = "estimator" if algo.estimator is not None else "name"
            problems.append(f"algorithms[{a}].{field}: {exc}")
            resolved.append(None)
    problems += _id_problems(spec, resolved)
    if spec.protocol.kind == "lpo":
        # The exact LpO estimate is an error rate, for algorithms with a closed form.
        if list(spec.metrics) != ["error"]:
            problems.append("metrics: protocol lpo gives the exact leave-p-out estimate of 'error' only")
        for a, ref in enumerate(resolved):
            if ref is not None and ref.lpo_risk is None:
                problems.append(
                    f"algorithms[{a}]: {ref.id} has no closed-form leave-p-out risk; protocol lpo "
                    f"supports: {', '.join(LPO_RISK)}"
                )
    proba_metrics = [
        (i, m)
        for i, m in enumerate(spec.metrics)
        if METRIC_INPUT.get(m) in ("proba", "posterior") and m not in spec.metrics[:i]
    ]
    grids, grids_for = [], []  # per algorithm: its grid, and {dataset id: grid} of params_for
    for a, (algo, ref) in enumerate(zip(spec.algorithms, resolved, strict=True)):
        if ref is None:
            grids.append([])
            grids_for.append({})
            continue
        grid, found = _grid(ref, algo.params, algo.params, f"algorithms[{a}]", proba_metrics)
        problems += found
        if algo.tune is not None and grid:
            problems += _tune_problems(a, algo, ref, spec)
            grid = [{**ref.defaults(), **algo.params}]  # one cell per split: the grid itself
        grids.append(grid)
        per = {}
        for ds_id, replaced in algo.params_for.items():
            if not isinstance(replaced, dict):
                continue
            grid, found = _grid(
                ref,
                {**algo.params, **replaced},
                replaced,
                f"algorithms[{a}].params_for.{ds_id}",
                proba_metrics,
            )
            problems += found
            if algo.tune is not None and grid:
                grid = [{**ref.defaults(), **algo.params, **replaced}]
            per[ds_id] = grid
        grids_for.append(per)

    datasets, splits = [], []
    protocol = spec.protocol.model_dump()
    kind = protocol.pop("kind")
    labels_seen = {}
    no_posterior = []  # datasets without a true posterior, as "datasets[d] ('name')"
    ds_grids = []  # per dataset: the grid of each algorithm on it (params_for applied)
    for d0, entry in entries:
        where = f"datasets[{d0}]"
        if entry is not spec.datasets[d0]:  # one of the datasets a list-valued option makes
            where += f" ({entry['id']})"
        try:
            ds_label, ds = _load_entry(entry, where, labels_seen, spec.seed, base_dir)
            n_splits = _splits_per_dataset(spec.protocol)  # each holds every row's index once
            check_memory(
                16 * n_splits * ds.n_samples, f"protocol {kind}: {n_splits} splits of {ds.n_samples} rows"
            )
            ds_splits = make_splits(ds, dataset_seedseq(spec.seed, ds_label, SEED_SPLITS), kind, **protocol)
        except KnnxError as exc:
            problems.append(f"{where}: {exc}")
            datasets.append(None)
            splits.append([])
            ds_grids.append([[] for _ in grids])
            continue
        grids_here = [per.get(ds_label, grid) for grid, per in zip(grids, grids_for, strict=True)]
        ds_grids.append(grids_here)
        for s in ds_splits:
            present = np.unique(ds.y[s.train])
            if len(present) < 2:
                problems.append(
                    f"{where}: training part of repeat {s.repeat} fold {s.fold} of '{ds.name}' has a single "
                    f"class ('{ds.classes[present[0]]}'); a classifier needs at least two"
                )
                break
        n_train_min = min(len(s.train) for s in ds_splits)
        if kind == "lpo":
            n_train_min -= protocol["p"]  # each held-out split trains on n - p rows
        for a, ref in enumerate(resolved):
            grid = grids_here[a]
            if ref is None or not grid:
                continue
            tune = spec.algorithms[a].tune
            n_limit = n_train_min
            if tune is not None:
                part = min(ds_splits, key=lambda s: len(s.train))
                counts = np.bincount(ds.y[part.train], minlength=ds.n_classes)
                if counts[counts > 0].min() < tune.cv:
                    c = int(np.flatnonzero((counts > 0) & (counts < tune.cv))[0])
                    problems.append(
                        f"algorithms[{a}].tune.cv: {tune.cv} stratified inner folds need {tune.cv} rows of each "
                        f"class in every training part; one of '{ds.name}' has {counts[c]} of class "
                        f"'{ds.classes[c]}'"
                    )
                    continue
                n_limit = _inner_rows(ds.y[part.train], tune.cv)
                grid = [
                    {
                        k: max(v) if isinstance(v, list) and k == (ref.neighbor_param or ("",))[0] else v
                        for k, v in g.items()
                    }
                    for g in grid
                ]
            if ref.neighbor_param is None:
                continue
            pname, slack = ref.neighbor_param
            k_max = max(int(g[pname]) for g in grid if pname in g) if any(pname in g for g in grid) else 1
            if tune is not None and k_max > n_limit - slack:
                problems.append(
                    f"algorithms[{a}].params.{pname}: {pname}={k_max} exceeds the {n_limit - slack} rows an inner "
                    f"training fold of '{ds.name}' can offer (tune.cv = {tune.cv})"
                )
                continue
            if k_max > n_train_min - slack:
                limit = "exceeds the" if slack == 0 else "must be below the"
                at = f"params_for.{ds_label}" if ds_label in grids_for[a] else "params"
                problems.append(
                    f"algorithms[{a}].{at}.{pname}: {pname}={k_max} {limit} {n_train_min} training samples "
                    f"of dataset '{ds.name}' under protocol {kind}"
                )
        problems += [
            f"{where}: {p}"
            for p in _dataset_problems(
                spec, resolved, _settings(spec, grids_here), ds, ds_splits, kind, protocol
            )
        ]
        if ds.posterior is None:
            no_posterior.append(f"{where} ('{ds.name}')")
        datasets.append(ds)
        splits.append(ds_splits)
    for i, metric in enumerate(spec.metrics):
        if METRIC_INPUT.get(metric) == "posterior" and no_posterior and metric not in spec.metrics[:i]:
            which = ", ".join(no_posterior)
            problems.append(
                f"metrics[{i}]: {metric} compares with the true posterior, and {which} "
                f"{'has' if len(no_posterior) == 1 else 'have'} none (only synthetic datasets have one)"
            )

    for a, algo in enumerate(spec.algorithms):
        for ds_id in algo.params_for:
            if ds_id not in labels_seen:
                problems.append(
                    f"algorithms[{a}].params_for.{ds_id}: no dataset has this id; ids: {', '.join(labels_seen)}"
                )
    reported = set()
    for grids_here in ds_grids:
        seen_cells = {}
        for a, grid in enumerate(grids_here):
            for g in grid:
                key = (resolved[a].id, canonical_json(g))
                if key in seen_cells and seen_cells[key] != a and (a, key) not in reported:
                    reported.add((a, key))
                    problems.append(
                        f"algorithms[{a}]: {key[0]} {key[1]} is also in algorithms[{seen_cells[key]}]; each setting once"
                    )
                    break
                seen_cells.setdefault(key, a)
    n_cells = sum(len(s) * sum(len(g) for g in here) for s, here in zip(splits, ds_grids, strict=True))
    if n_cells > MAX_CELLS:
        problems.append(
            f"algorithms: the grid expands to {n_cells} cells, more than the limit of {MAX_CELLS}"
        )
    if problems:
        raise SpecError.from_lines([f"{label}: {p}" for p in problems])

    cells = []
    for d, ds in enumerate(datasets):
        for a, ref in enumerate(resolved):
            for params in ds_grids[d][a]:
                for s in splits[d]:
                    cells.append(Cell(len(cells), d, ds.name, ref.id, params, s.repeat, s.fold, a))
    return ValidatedSpec(
        spec, label, base_dir, datasets, splits, cells, resolved, tuple(e for _, e in entries)
    )


# Algorithm names of the active strategies in results.
ACTIVE_ALGORITHMS = {"qbc": "lpo_qbc", "passive": "passive_lpo"}


def active_params(spec, strategy):
    """The parameters of a strategy's cells (``params`` in results)."""
    params = {"m": spec.m, "p_tune": spec.p_tune, "k_max": spec.k_max, "k_fixed": spec.k_fixed}
    if strategy == "qbc":
        params["p_select"] = spec.p_select
    return params


def _active_runs_problem(spec):
    """A line if the spec asks for more than MAX_CELLS cells (datasets x strategies x repeats)."""
    runs = len(spec.datasets) * len(spec.strategies) * spec.repeats
    if runs > MAX_CELLS:
        return (
            f"repeats: {len(spec.datasets)} dataset(s) x {len(spec.strategies)} strateg"
            f"{'y' if len(spec.strategies) == 1 else 'ies'} x {spec.repeats} repeats = {runs} cells, more than "
            f"the limit of {MAX_CELLS}"
        )
    return None


def _load_entry(entry, where, labels_seen, seed, base_dir):
    """``(label, dataset)`` of one dataset entry of a spec (plain or active), its data drawn
    from the spec's seed and the label; SpecError if another entry (``labels_seen``:
    label -> where it was given, updated here) has the same label."""
    label = dataset_label(entry)
    if label in labels_seen:
        raise SpecError(f"same name as {labels_seen[label]} ('{label}'); give one an 'id'")
    labels_seen[label] = where
    return label, load_dataset(entry, seed=dataset_seedseq(seed, label, SEED_DATA), base_dir=base_dir)


def _validate_active(data, label, base_dir):
    """validate_spec for ``kind: active`` (see :class:`ActiveSpec`): the schema, the cell
    count, that each dataset loads and has rows for the start set and every query, and
    the memory of the tuning and selection steps at the last round."""
    try:
        spec = ActiveSpec.model_validate(data)
    except ValidationError as exc:
        problems = _pydantic_problems(exc, data, model_at=lambda loc, data: ActiveSpec if not loc else None)
        raise SpecError.from_lines([f"{label}: {p}" for p in problems]) from None
    folders = [(base_dir / p).resolve() for p in spec.python_path]
    missing = [(i, f) for i, f in enumerate(folders) if not f.is_dir()]
    if missing:
        raise SpecError(f"{label}: python_path[{missing[0][0]}]: {missing[0][1]}: no such folder")
    add_import_dirs([str(f) for f in folders])
    problem = _active_runs_problem(spec)
    if problem is not None:  # before any dataset is loaded
        raise SpecError(f"{label}: {problem}")
    problems = []
    if len(set(spec.strategies)) != len(spec.strategies):
        problems.append("strategies: each strategy once")
    if spec.start <= spec.p_tune:
        problems.append(f"p_tune: {spec.p_tune} must be below start ({spec.start})")
    if spec.k_fixed is not None and spec.k_fixed > spec.start - 1:
        problems.append(f"k_fixed: {spec.k_fixed} must be below start ({spec.start})")
    if spec.pool is not None and spec.pool < spec.rounds * spec.m:
        problems.append(f"pool: {spec.pool} is smaller than rounds x m = {spec.rounds * spec.m}")
    labels, datasets = {}, []
    for d, entry in enumerate(spec.datasets):
        try:
            lab, ds = _load_entry(entry, f"datasets[{d}]", labels, spec.seed, base_dir)
        except KnnxError as exc:
            problems.append(f"datasets[{d}]: {exc}")
            continue
        datasets.append(ds)
        need = spec.start + (spec.pool if spec.pool is not None else spec.rounds * spec.m)
        if ds.n_samples < need or ds.n_samples - spec.start < spec.rounds * spec.m:
            problems.append(
                f"datasets[{d}]: '{lab}' has {ds.n_samples} rows; start {spec.start} + a pool of at least "
                f"{max(need - spec.start, spec.rounds * spec.m)} are needed"
            )
            continue  # the sizes below would be of rows the data does not have
        n_train = spec.start + spec.rounds * spec.m  # the training set of the last round
        n_pool = spec.pool if spec.pool is not None else ds.n_samples - spec.start
        k_max = spec.k_fixed or spec.k_max
        for problem in (
            memory_problem(
                lpo_bytes(n_train, ds.n_features, spec.p_tune, min(k_max, max(1, n_train - spec.p_tune))),
                f"'{lab}': exact leave-{spec.p_tune}-out on {n_train} rows (p_tune)",
            ),
            memory_problem(
                graph_bytes(n_pool, min(k_max + spec.p_select, n_train), n_train, ds.n_features),
                f"'{lab}': the committee's neighbours of {n_pool} pool rows (p_select)",
            ),
        ):
            if problem:
                problems.append(f"datasets[{d}]: {problem}")
    if problems:
        raise SpecError.from_lines([f"{label}: {p}" for p in problems])
    cells = []  # in the order of the former active runner: dataset, repeat, strategy
    for d, entry in enumerate(spec.datasets):
        for r in range(spec.repeats):
            for a, strategy in enumerate(spec.strategies):
                algorithm, params = ACTIVE_ALGORITHMS[strategy], active_params(spec, strategy)
                cells.append(Cell(len(cells), d, dataset_label(entry), algorithm, params, r, 0, a))
    return ValidatedSpec(
        spec, label, base_dir, datasets, [[] for _ in datasets], cells, (), tuple(spec.datasets)
    )
