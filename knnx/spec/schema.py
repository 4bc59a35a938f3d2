"""The schema of a run spec: its pydantic models, and the table of protocol kinds.

Unknown keys are refused (``extra = forbid``) and values are not coerced (``strict``):
``k: "3"`` is a string, not a number. ``protocol`` is one of the models of
:data:`Protocol`, chosen by its ``kind``; :data:`PROTOCOL_MODELS` (kind -> model) is
derived from that union, and each model says what its protocol does: how many splits
it draws from each dataset (``n_splits()``), how many rows each of its training parts
lacks beside its split (``held_out``: ``p`` for lpo), and its splits of a dataset
(``make_splits``).
"""

import typing
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from knnx.evaluation.protocols import make_splits

# At most this many cells (dataset x split x setting) in one spec, counted from the list
# lengths and the protocol before any grid is expanded or any dataset loaded.
MAX_CELLS = 1_000_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _ProtocolModel(_Strict):
    """What every protocol model answers (the defaults: one split, nothing held out)."""

    def n_splits(self):
        """How many splits the protocol draws from each dataset (it does not depend on the data)."""
        return 1

    @property
    def held_out(self):
        """Rows a training part lacks beside those its split gives it (0; lpo: ``p``)."""
        return 0

    def options(self):
        """The protocol's parameters (every key but ``kind``)."""
        return self.model_dump(exclude={"kind"})

    def make_splits(self, dataset, seedseq):
        """The splits of ``dataset`` drawn from ``seedseq`` (see knnx.evaluation.protocols)."""
        return make_splits(dataset, seedseq, self.kind, **self.options())


class Predefined(_ProtocolModel):
    kind: Literal["predefined"]


class Partitions(_ProtocolModel):
    kind: Literal["partitions"]
    scheme: Annotated[str, Field(pattern=r"^[1-9][0-9]*-fold$")] = "10-fold"

    def n_splits(self):
        return int(self.scheme.split("-")[0])


class Holdout(_ProtocolModel):
    kind: Literal["holdout"]
    test_size: Annotated[float, Field(gt=0, lt=1)] = 0.3
    repeats: Annotated[int, Field(ge=1)] = 1
    stratified: bool = True

    def n_splits(self):
        return self.repeats


class KFold(_ProtocolModel):
    kind: Literal["kfold"]
    folds: Annotated[int, Field(ge=2)] = 5
    repeats: Annotated[int, Field(ge=1)] = 1
    stratified: bool = True

    def n_splits(self):
        return self.folds * self.repeats


class FiveByTwo(_ProtocolModel):
    kind: Literal["5x2"]

    def n_splits(self):
        return 10


class Subsample(_ProtocolModel):
    kind: Literal["subsample"]
    train_per_class: Annotated[int, Field(ge=1)] = 30
    repeats: Annotated[int, Field(ge=1)] = 10

    def n_splits(self):
        return self.repeats


class LeavePOut(_ProtocolModel):
    """Exact leave-p-out estimate on all rows (algorithms with a closed form only)."""

    kind: Literal["lpo"]
    p: Annotated[int, Field(ge=1)] = 10

    @property
    def held_out(self):
        """Each held-out split trains on n - p rows."""
        return self.p


Protocol = Annotated[
    Predefined | Partitions | Holdout | KFold | FiveByTwo | Subsample | LeavePOut, Field(discriminator="kind")
]

# kind -> model, in the order of the Protocol union: the one list of protocol kinds.
PROTOCOL_MODELS = {
    typing.get_args(model.model_fields["kind"].annotation)[0]: model
    for model in typing.get_args(typing.get_args(Protocol)[0])
}


class Preprocess(_Strict):
    standardize: bool | Literal["numeric"] = Field(
        False,
        description="true: every feature to mean 0, sd 1 on the training part (never the columns of "
        "nominal codes of categorical: keep, nor a precomputed distance matrix; missing values left out); "
        "numeric: only the features of numeric attributes (a nominal attribute's one-hot or ordinal "
        "columns stay as they are); false: none.",
    )


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


class StepEntry(_Strict):
    """One step before an algorithm's classifier (see knnx.steps): a built-in
    ``name`` or an ``estimator`` import path (a transformer or a sampler), an optional
    ``id`` (its parameters are ``<id>__<name>`` in results), and its parameter grid."""

    name: str | None = None
    estimator: str | None = None
    id: Annotated[str, Field(min_length=1, max_length=60)] | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_form(self):
        if (self.name is None) == (self.estimator is None):
            raise ValueError(
                "give either 'name' (a built-in step) or 'estimator' ('package.module:Class'), not "
                + ("both" if self.name is not None else "neither")
            )
        return self


class AlgorithmEntry(_Strict):
    """One algorithm of a spec: a registered ``name`` or an ``estimator`` import path,
    an optional ``id`` (its name in results), the ``steps`` before it, and its
    parameter grid."""

    name: str | None = None
    estimator: str | None = None
    id: Name | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    # dataset id -> parameters that replace those of ``params`` on that dataset
    params_for: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # choose among the grid on inner folds of each training part (one cell per split)
    tune: Tune | None = None
    # the steps before the classifier, in order (a built-in name, or a StepEntry)
    steps: list[str | StepEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_form(self):
        if (self.name is None) == (self.estimator is None):
            raise ValueError(
                "give either 'name' (a knnx algorithm) or 'estimator' ('package.module:Class'), not "
                + ("both" if self.name is not None else "neither")
            )
        return self


class Report(_Strict):
    """How report.html compares (``knnx report`` reads it from the run's spec.yaml; its
    options override): the primary ``metric`` (a metric of the spec; default its
    first), the ``control`` every other contestant is tested against (an algorithm id or
    a contestant's label), the contestants (``select``: all or best-test) and the
    level ``alpha``."""

    metric: str | None = None
    control: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    select: Literal["all", "best-test"] = "all"
    alpha: Annotated[float, Field(gt=0, lt=1)] = 0.05


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
    # Quantities the estimators report about their fit (loo_error, epochs, ...) drawn as
    # figures at the end of the run; the scores and the tuned choices are drawn always.
    figures: list[Name] = Field(default_factory=list)
    report: Report = Field(default_factory=Report)
