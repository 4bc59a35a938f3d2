"""Active-learning specs (``kind: active``): their schema (:class:`ActiveSpec`), checks
and cells (:func:`validate_active`, reached through :func:`knnx.spec.validate_spec`)."""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationError

from knnx.datasets import dataset_label
from knnx.errors import KnnxError, SpecError
from knnx.limits import graph_bytes, lpo_bytes, memory_problem
from knnx.spec.checks import use_python_path
from knnx.spec.datatypes import euclidean_only_problem
from knnx.spec.messages import pydantic_problems
from knnx.spec.plan import Cell, ValidatedSpec, load_entry
from knnx.spec.schema import MAX_CELLS, Name, _Strict

# Algorithm names of the active strategies in results.
ACTIVE_ALGORITHMS = {"qbc": "lpo_qbc", "passive": "passive_lpo"}


class ActiveProtocol(_Strict):
    """The protocol of an active spec: its start set and pool (``protocol`` in results)."""

    kind: Literal["active"] = "active"
    start: int
    pool: int | None
    rounds: int
    standardize: bool


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
        default_factory=list,
        description="Folders (or zip archives) searched for the import paths of loader entries.",
    )

    # What the runner reads of every spec: an active run's metrics, and no curves.
    metrics: ClassVar[tuple] = ("error", "chosen_k")
    record_curves: ClassVar[bool] = False
    curve_points: ClassVar[int] = 0

    @property
    def protocol(self):
        """The start set and pool, as an :class:`ActiveProtocol`."""
        return ActiveProtocol(
            start=self.start, pool=self.pool, rounds=self.rounds, standardize=self.standardize
        )


def active_params(spec, strategy):
    """The parameters of a strategy's cells (``params`` in results)."""
    params = {"m": spec.m, "p_tune": spec.p_tune, "k_max": spec.k_max, "k_fixed": spec.k_fixed}
    if strategy == "qbc":
        params["p_select"] = spec.p_select
    return params


def validate_active(data, label, base_dir):
    """validate_spec for ``kind: active`` (see :class:`ActiveSpec`): the schema, the cell
    count, that each dataset loads and has rows for the start set and every query, and
    the memory of the tuning and selection steps at the last round."""
    try:
        spec = ActiveSpec.model_validate(data)
    except ValidationError as exc:
        problems = pydantic_problems(exc, data, model_at=lambda loc, data: ActiveSpec if not loc else None)
        raise SpecError.from_lines([f"{label}: {p}" for p in problems]) from None
    use_python_path(spec, label, base_dir)
    problem = _active_runs_problem(spec)
    if problem is not None:  # before any dataset is loaded
        raise SpecError(f"{label}: {problem}")
    problems = _setting_problems(spec)
    datasets, found = _load_datasets(spec, base_dir)
    problems += found
    if problems:
        raise SpecError.from_lines([f"{label}: {p}" for p in problems])
    return ValidatedSpec(
        spec, label, base_dir, datasets, [[] for _ in datasets], _cells(spec), (), tuple(spec.datasets)
    )


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


def _setting_problems(spec):
    """What makes the loop's settings impossible whatever the data."""
    problems = []
    if len(set(spec.strategies)) != len(spec.strategies):
        problems.append("strategies: each strategy once")
    if spec.start <= spec.p_tune:
        problems.append(f"p_tune: {spec.p_tune} must be below start ({spec.start})")
    if spec.k_fixed is not None and spec.k_fixed > spec.start - 1:
        problems.append(f"k_fixed: {spec.k_fixed} must be below start ({spec.start})")
    if spec.pool is not None and spec.pool < spec.rounds * spec.m:
        problems.append(f"pool: {spec.pool} is smaller than rounds x m = {spec.rounds * spec.m}")
    return problems


def _load_datasets(spec, base_dir):
    """The datasets (those that load) and the problems: entries that do not load, or have
    too few rows, or whose last round would not fit in memory."""
    labels, datasets, problems = {}, [], []
    for d, entry in enumerate(spec.datasets):
        try:
            lab, ds = load_entry(entry, f"datasets[{d}]", labels, spec.seed, base_dir)
        except KnnxError as exc:
            problems.append(f"datasets[{d}]: {exc}")
            continue
        datasets.append(ds)
        problems += [f"datasets[{d}]: {p}" for p in _dataset_problems(spec, lab, ds)]
    return datasets, problems


def _dataset_problems(spec, lab, ds):
    """Column types the loop cannot take (it searches Euclidean distances between
    features), rows for the start set and every query, then the memory of exact LpO
    tuning and of the committee's neighbours at the last round."""
    typed = euclidean_only_problem(ds, "active learning")
    if typed is not None:
        return [typed]
    need = spec.start + (spec.pool if spec.pool is not None else spec.rounds * spec.m)
    if ds.n_samples < need or ds.n_samples - spec.start < spec.rounds * spec.m:
        # (the sizes below would be of rows the data does not have)
        return [
            f"'{lab}' has {ds.n_samples} rows; start {spec.start} + a pool of at least "
            f"{max(need - spec.start, spec.rounds * spec.m)} are needed"
        ]
    n_train = spec.start + spec.rounds * spec.m  # the training set of the last round
    n_pool = spec.pool if spec.pool is not None else ds.n_samples - spec.start
    k_max = spec.k_fixed or spec.k_max
    found = (
        memory_problem(
            lpo_bytes(n_train, ds.n_features, spec.p_tune, min(k_max, max(1, n_train - spec.p_tune))),
            f"'{lab}': exact leave-{spec.p_tune}-out on {n_train} rows (p_tune)",
        ),
        memory_problem(
            graph_bytes(n_pool, min(k_max + spec.p_select, n_train), n_train, ds.n_features),
            f"'{lab}': the committee's neighbours of {n_pool} pool rows (p_select)",
        ),
    )
    return [p for p in found if p]


def _cells(spec):
    """The cells, in the order of the former active runner: dataset, repeat, strategy."""
    cells = []
    for d, entry in enumerate(spec.datasets):
        for r in range(spec.repeats):
            for a, strategy in enumerate(spec.strategies):
                algorithm, params = ACTIVE_ALGORITHMS[strategy], active_params(spec, strategy)
                cells.append(Cell(len(cells), d, dataset_label(entry), algorithm, params, r, 0, a))
    return cells
