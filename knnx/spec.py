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

Metrics (``knnx.metrics.METRICS``) take predicted labels (``error``, ``accuracy``,
``f1_macro``, ``recall_macro``, ``precision_macro``), predicted probabilities
(``log_loss``, ``brier``, ``f_measure_auc``, ``rejection_auc``) or the true
posterior of a synthetic dataset beside the predicted probabilities (``sym_kl``,
``js``); ``knnx.metrics.METRIC_INPUT`` says which.

:func:`validate_spec` checks everything before any computation: the schema, the
registry names, every grid value against the algorithm's constraint table, that
each dataset loads, that the protocol applies to it, that no training part has a
single class, that ``k`` fits in every training part, that every algorithm has
``predict_proba`` when a probability or posterior metric is asked, and that every
dataset has a true posterior when a posterior metric is asked. Every problem
becomes one line ``SOURCE: PATH: message`` and all are raised together as one
SpecError.
"""

import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knnx._params import check_params
from knnx.algorithms import ALGORITHMS, LPO_RISK, NEIGHBOR_PARAMS
from knnx.datasets import dataset_label, load_dataset
from knnx.errors import KnnxError, SpecError
from knnx.metrics import METRIC_INPUT, METRICS
from knnx.protocols import make_splits


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


class AlgorithmEntry(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class Spec(_Strict):
    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]
    seed: Annotated[int, Field(ge=0)] = 0
    datasets: Annotated[list[str | dict[str, Any]], Field(min_length=1)]
    preprocess: Preprocess = Field(default_factory=Preprocess)
    protocol: Protocol
    algorithms: Annotated[list[AlgorithmEntry], Field(min_length=1)]
    metrics: Annotated[list[str], Field(min_length=1)] = Field(default_factory=lambda: ["error"])
    record_curves: bool = False
    curve_points: Annotated[int, Field(ge=2)] = 200


# Guard against accidental combinatorial explosions in a grid.
MAX_CELLS = 1_000_000


@dataclass(frozen=True)
class Cell:
    """One unit of work: an algorithm with fixed parameters on one split of one dataset."""

    index: int
    dataset_index: int
    dataset: str
    algorithm: str
    params: dict
    repeat: int
    fold: int

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

    @property
    def protocol_json(self):
        return canonical_json(self.spec.protocol.model_dump())

    def normalized(self):
        """The spec as a plain dict with every default filled in (written beside results)."""
        return self.spec.model_dump(mode="json")

    def digest(self):
        return hashlib.sha256(canonical_json(self.normalized()).encode()).hexdigest()[:16]


def canonical_json(value):
    """JSON with sorted keys and no spaces: the form params take in results."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


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
        else:
            msg = err["msg"][0].lower() + err["msg"][1:] + f" (got {err.get('input')!r})"
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
    return _MODELS_AT.get(names[0])


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (YAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str | int | float | bool) and key in seen:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (line {mark.line + 1}, column {mark.column + 1})",
                    mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_spec(source):
    """Read a spec from a YAML path or a dict. Returns (data, source label, base folder)."""
    if isinstance(source, dict):
        return source, "<spec>", Path.cwd()
    path = Path(source)
    if not path.is_file():
        raise SpecError(f"{path}: spec file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"{path}: {where}invalid YAML ({problem})") from None
    if not isinstance(data, dict):
        raise SpecError(
            f"{path}: expected a mapping of spec keys (name, datasets, protocol, algorithms, ...)"
        )
    return data, str(path), path.parent


def expand_grid(params):
    """Cartesian product of list-valued parameters, in the spec's key order."""
    keys = list(params)
    values = [v if isinstance(v, list) else [v] for v in params.values()]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


# Purposes of the child seeds of one dataset.
SEED_DATA, SEED_SPLITS = 0, 1


def dataset_seedseq(seed, label, purpose):
    """Child seed of the spec's ``seed`` for one dataset and one purpose.

    ``spawn_key = (word, purpose)`` where ``word`` is a stable 32-bit hash of the
    dataset's label, so seeds do not depend on the order of datasets in the spec,
    and generating data (SEED_DATA) and drawing splits (SEED_SPLITS) use
    independent streams. Repeat r of a protocol draws from the r-th child of the
    splits stream (see knnx.protocols).
    """
    word = int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")
    return np.random.SeedSequence(seed, spawn_key=(word, purpose))


def validate_spec(source):
    """Validate a spec (path or dict) completely; return a :class:`ValidatedSpec`.

    Raises
    ------
    SpecError
        One line per problem, each ``SOURCE: PATH: message``.
    """
    data, label, base_dir = read_spec(source)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError("\n".join(f"{label}: {p}" for p in _pydantic_problems(exc, data))) from None

    problems = []
    for i, metric in enumerate(spec.metrics):
        if metric not in METRICS:
            problems.append(f"metrics[{i}]: unknown metric '{metric}'; known: {', '.join(METRICS)}")
        elif metric in spec.metrics[:i]:
            problems.append(f"metrics[{i}]: '{metric}' is listed twice")
    for i, metric in enumerate(spec.metrics):
        if METRIC_INPUT.get(metric) not in ("proba", "posterior") or metric in spec.metrics[:i]:
            continue
        for a, algo in enumerate(spec.algorithms):
            if algo.name in ALGORITHMS and not hasattr(ALGORITHMS[algo.name], "predict_proba"):
                problems.append(
                    f"metrics[{i}]: {metric} needs predicted probabilities; algorithms[{a}] ({algo.name}) "
                    "has no predict_proba"
                )
    if spec.protocol.kind == "lpo":
        # The exact LpO estimate is an error rate, for algorithms with a closed form.
        if list(spec.metrics) != ["error"]:
            problems.append("metrics: protocol lpo gives the exact leave-p-out estimate of 'error' only")
        for a, algo in enumerate(spec.algorithms):
            if algo.name in ALGORITHMS and algo.name not in LPO_RISK:
                problems.append(
                    f"algorithms[{a}]: {algo.name} has no closed-form leave-p-out risk; protocol lpo "
                    f"supports: {', '.join(LPO_RISK)}"
                )
    grids = []
    for a, algo in enumerate(spec.algorithms):
        if algo.name not in ALGORITHMS:
            problems.append(
                f"algorithms[{a}].name: unknown algorithm '{algo.name}'; known: {', '.join(ALGORITHMS)}"
            )
            grids.append([])
            continue
        constraints = ALGORITHMS[algo.name]._parameter_constraints
        ok = True
        for pname, pvalue in algo.params.items():
            values = pvalue if isinstance(pvalue, list) else [pvalue]
            if isinstance(pvalue, list) and not pvalue:
                problems.append(f"algorithms[{a}].params.{pname}: empty list of values")
                ok = False
                continue
            dup = next((v for i, v in enumerate(values) if v in values[:i]), None)
            if len(values) != len({canonical_json(v) for v in values}):
                problems.append(f"algorithms[{a}].params.{pname}: value {dup!r} is listed twice")
                ok = False
                continue
            for v in values:
                try:
                    check_params(algo.name, constraints, {pname: v})
                except SpecError as exc:
                    msg = str(exc).removeprefix(f"{algo.name}: ")
                    if msg.startswith("unknown parameter"):
                        msg = f"unknown parameter for {algo.name}; known: {', '.join(sorted(constraints))}"
                    else:
                        msg = msg.removeprefix(f"{pname} ")
                    problems.append(f"algorithms[{a}].params.{pname}: {msg}")
                    ok = False
                    break
        # Every parameter appears in results, defaults included, so that {"k": 3} and
        # {"k": 3, "weights": "uniform"} are one setting.
        defaults = ALGORITHMS[algo.name]().get_params()
        grids.append([{**defaults, **g} for g in expand_grid(algo.params)] if ok else [])

    datasets, splits = [], []
    protocol = spec.protocol.model_dump()
    kind = protocol.pop("kind")
    labels_seen = {}
    no_posterior = []  # datasets without a true posterior, as "datasets[d] ('name')"
    for d, entry in enumerate(spec.datasets):
        try:
            ds_label = dataset_label(entry)
            if ds_label in labels_seen:
                raise SpecError(
                    f"same name as datasets[{labels_seen[ds_label]}] ('{ds_label}'); give one an 'id'"
                )
            labels_seen[ds_label] = d
            ds = load_dataset(entry, seed=dataset_seedseq(spec.seed, ds_label, SEED_DATA), base_dir=base_dir)
            ds_splits = make_splits(ds, dataset_seedseq(spec.seed, ds_label, SEED_SPLITS), kind, **protocol)
        except KnnxError as exc:
            problems.append(f"datasets[{d}]: {exc}")
            datasets.append(None)
            splits.append([])
            continue
        for s in ds_splits:
            present = np.unique(ds.y[s.train])
            if len(present) < 2:
                problems.append(
                    f"datasets[{d}]: training part of repeat {s.repeat} fold {s.fold} of '{ds.name}' has a single "
                    f"class ('{ds.classes[present[0]]}'); a classifier needs at least two"
                )
                break
        n_train_min = min(len(s.train) for s in ds_splits)
        if kind == "lpo":
            n_train_min -= protocol["p"]  # each held-out split trains on n - p rows
        for a, algo in enumerate(spec.algorithms):
            if algo.name not in NEIGHBOR_PARAMS or not grids[a]:
                continue
            pname, slack = NEIGHBOR_PARAMS[algo.name]
            k_max = (
                max(int(g[pname]) for g in grids[a] if pname in g) if any(pname in g for g in grids[a]) else 1
            )
            if k_max > n_train_min - slack:
                limit = "exceeds the" if slack == 0 else "must be below the"
                problems.append(
                    f"algorithms[{a}].params.{pname}: {pname}={k_max} {limit} {n_train_min} training samples "
                    f"of dataset '{ds.name}' under protocol {kind}"
                )
        if ds.posterior is None:
            no_posterior.append(f"datasets[{d}] ('{ds.name}')")
        datasets.append(ds)
        splits.append(ds_splits)
    for i, metric in enumerate(spec.metrics):
        if METRIC_INPUT.get(metric) == "posterior" and no_posterior and metric not in spec.metrics[:i]:
            which = ", ".join(no_posterior)
            problems.append(
                f"metrics[{i}]: {metric} compares with the true posterior, and {which} "
                f"{'has' if len(no_posterior) == 1 else 'have'} none (only synthetic datasets have one)"
            )

    seen_cells = {}
    for a, grid in enumerate(grids):
        for g in grid:
            key = (spec.algorithms[a].name, canonical_json(g))
            if key in seen_cells and seen_cells[key] != a:
                problems.append(
                    f"algorithms[{a}]: {key[0]} {key[1]} is also in algorithms[{seen_cells[key]}]; each setting once"
                )
                break
            seen_cells.setdefault(key, a)
    n_cells = sum(len(s) for s in splits) * sum(len(g) for g in grids)
    if n_cells > MAX_CELLS:
        problems.append(
            f"algorithms: the grid expands to {n_cells} cells, more than the limit of {MAX_CELLS}"
        )
    if problems:
        raise SpecError("\n".join(f"{label}: {p}" for p in problems))

    cells = []
    for d, ds in enumerate(datasets):
        for a, algo in enumerate(spec.algorithms):
            for params in grids[a]:
                for s in splits[d]:
                    cells.append(Cell(len(cells), d, ds.name, algo.name, params, s.repeat, s.fold))
    return ValidatedSpec(spec, label, base_dir, datasets, splits, cells)
