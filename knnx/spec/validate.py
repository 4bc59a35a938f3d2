""":func:`validate_spec`: a spec checked completely, step by step, before any computation.

The steps, each a function of one job: read the file (:mod:`knnx.spec.read`), apply
the ``--set`` overrides (:mod:`knnx.spec.overrides`), choose the form of spec by its
``kind`` (:data:`SPEC_KINDS`; none: a run spec), the schema (:mod:`knnx.spec.schema`,
pydantic's errors as one line each by :mod:`knnx.spec.messages`), the spec's folders,
datasets entries and grid size, the metrics, algorithm entries, ids and what the
protocol asks of them, the grids (:mod:`knnx.spec.grids`), then each dataset loaded
and split (:mod:`knnx.spec.plan`) with the checks that need its data
(:mod:`knnx.spec.checks`), and last the cells. ``knnx validate`` and ``knnx run`` run
the same steps.
"""

from pydantic import ValidationError

from knnx.errors import DataError, KnnxError, SpecError
from knnx.spec.active import ActiveSpec, validate_active
from knnx.spec.checks import (
    cell_count_problem,
    check_size,
    dataset_problems,
    duplicate_problems,
    expand_datasets,
    id_problems,
    metric_problems,
    params_for_problems,
    posterior_problems,
    protocol_problems,
    report_problems,
    resolve_algorithms,
    use_python_path,
)
from knnx.spec.grids import algorithm_grids
from knnx.spec.messages import pydantic_problems, short_repr
from knnx.spec.named import named_selections
from knnx.spec.overrides import apply_overrides, blame_overrides
from knnx.spec.plan import PlannedDataset, ValidatedSpec, build_cells, entry_place, plan_dataset
from knnx.spec.read import read_spec
from knnx.spec.schema import Spec
from knnx.spec.views import plan_views
from knnx.steps.objects import object_entries

# Forms of spec other than a run spec: ``kind`` -> its validation (data, label, base_dir).
SPEC_KINDS = {"active": validate_active}


def validate_spec(source, overrides=()):
    """Validate a spec (path or dict) completely; return a :class:`ValidatedSpec`.

    ``overrides``: strings ``"PATH=VALUE"`` applied first (see :func:`apply_overrides`),
    so the spec is checked exactly as if they were written in it; a problem at or
    below an override's path names that override (``SOURCE: --set 'TEXT': PATH: ...``). A spec with ``kind:
    active`` is checked as an :class:`ActiveSpec` (see :func:`validate_active`).

    Raises
    ------
    SpecError
        One line per problem, each ``SOURCE: PATH: message``.
    """
    from knnx.limits import memory_limit

    try:
        memory_limit()  # a KNNX_MEMORY_LIMIT that is no size: one line of its own, not a dataset's
    except DataError as exc:
        raise SpecError(str(exc)) from None
    data, label, base_dir = read_spec(source)
    data, problems = object_entries(data)  # estimator objects given through the API, as entries
    if problems:
        raise SpecError.from_lines([f"{label}: {p}" for p in problems])
    data = apply_overrides(data, overrides)
    try:
        return _validate(data, label, base_dir)
    except SpecError as exc:
        raise blame_overrides(exc, label, overrides) from None


def _validate(data, label, base_dir):
    validate_kind = _kind_validation(data, label)
    if validate_kind is not None:
        return validate_kind(data, label, base_dir)
    spec, named = named_selections(parse_spec(data, label))
    use_python_path(spec, label, base_dir)
    entries = expand_datasets(spec, label)
    check_size(spec, label, len(entries))
    resolved, grids, problems = _check_algorithms(spec, base_dir)
    problems = named + problems
    planned, labels_seen, found = _plan_datasets(spec, entries, resolved, grids, base_dir)
    problems += found
    problems += posterior_problems(spec, planned)
    problems += params_for_problems(spec, labels_seen)
    problems += duplicate_problems(planned, resolved)
    problems += cell_count_problem(planned)
    if problems:
        raise SpecError.from_lines([f"{label}: {p}" for p in problems])
    cells = build_cells(planned, resolved)
    datasets, splits = [item.ds for item in planned], [item.splits for item in planned]
    views = tuple(item.views for item in planned)
    return ValidatedSpec(
        spec, label, base_dir, datasets, splits, cells, resolved, tuple(e for _, e in entries), views
    )


def _kind_validation(data, label):
    """The validation of the spec's ``kind`` (:data:`SPEC_KINDS`), None for a run spec
    (no ``kind``); SpecError for an unknown kind."""
    if not (isinstance(data, dict) and "kind" in data):
        return None
    kind = data["kind"]
    validation = SPEC_KINDS.get(kind) if isinstance(kind, str) else None
    if validation is None:
        raise SpecError(
            f"{label}: kind: unknown experiment kind {short_repr(kind)}; known: {', '.join(SPEC_KINDS)} "
            "(a spec without 'kind' runs its protocol and algorithms)"
        )
    return validation


def parse_spec(data, label):
    """The :class:`Spec` of a run spec's mapping; SpecError with one line per problem
    (and one line only for an active spec that lacks its ``kind``)."""
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        own = [k for k in ActiveSpec.model_fields if k not in Spec.model_fields]
        found = [k for k in own if isinstance(data, dict) and k in data]
        if found and not {"protocol", "algorithms"} & set(data):  # an active spec without its kind
            raise SpecError(
                f"{label}: kind: required key is missing; a spec with {', '.join(found)} is an active-learning "
                "spec: add 'kind: active'"
            ) from None
        raise SpecError.from_lines([f"{label}: {p}" for p in pydantic_problems(exc, data)]) from None


def _check_algorithms(spec, base_dir):
    """The steps before any dataset is loaded: metrics, algorithm entries, ids, what the
    protocol asks of them, and the grids. Returns (resolved, grids, problems)."""
    problems = metric_problems(spec)
    resolved, found = resolve_algorithms(spec, base_dir)
    problems += found
    problems += id_problems(spec, resolved)
    problems += protocol_problems(spec, resolved)
    problems += report_problems(spec, resolved)
    grids, found = algorithm_grids(spec, resolved)
    return resolved, grids, problems + found


def _plan_datasets(spec, entries, resolved, grids, base_dir):
    """Each dataset loaded and split, then checked against the settings of the algorithms
    on it. Returns (planned datasets, labels seen: id -> where, problems)."""
    planned, labels_seen, problems = [], {}, []
    for d0, entry in entries:
        where = entry_place(spec, d0, entry)
        try:
            item = plan_dataset(spec, where, entry, labels_seen, base_dir)
        except KnnxError as exc:
            problems.append(f"{where}: {exc}")
            planned.append(PlannedDataset(where, grids=grids.none()))
            continue
        item.grids = grids.on(item.label)
        item.views, found = plan_views(spec, entry, item, resolved, base_dir)
        problems += found
        problems += dataset_problems(spec, resolved, grids, item)
        planned.append(item)
    return planned, labels_seen, problems
