"""The plan of a validated spec: its datasets, their splits, and its cells.

:class:`ValidatedSpec` is what :func:`knnx.spec.validate_spec` returns and the runner
reads; :class:`Cell` is one unit of work. Seeds: one ``seed`` per spec, child seeds per
(dataset, purpose) from :func:`knnx.spec.seeds.dataset_seedseq`, per tuned training part
from :func:`knnx.spec.seeds.tune_seed`.
"""

import hashlib
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from knnx._text import canonical_json, name_problem, quoted
from knnx.datasets import dataset_label, load_dataset
from knnx.errors import SpecError
from knnx.limits import check_memory
from knnx.spec.seeds import SEED_DATA, SEED_SPLITS, dataset_seedseq
from knnx.spec.views import cell_view


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

    @cached_property
    def params_json(self):
        return canonical_json(self.params)  # once per cell: its key is asked for often

    def key(self):
        return (self.dataset, self.algorithm, self.params_json, self.repeat, self.fold)


@dataclass(frozen=True, eq=False)
class ValidatedSpec:
    """A spec that passed every check, with its datasets loaded and splits drawn."""

    spec: object  # knnx.spec.schema.Spec, or knnx.spec.active.ActiveSpec
    source: str
    base_dir: Path
    datasets: list
    splits: list
    cells: list
    algorithms: list = ()  # knnx.estimators.registry.ResolvedAlgorithm per entry of spec.algorithms
    entries: tuple = ()  # the dataset entries once list-valued options are expanded (one per dataset)
    views: tuple = ()  # per dataset, {view: dataset}: its other views that contestants take

    def cell_view(self, cell):
        """The view of its dataset ``cell`` reads (:mod:`knnx.spec.views`): ``keep`` or
        ``onehot``, or ``""`` for the entry as loaded."""
        views = self.views[cell.dataset_index] if self.views else {}
        if not views:
            return ""
        return cell_view(views, self.algorithms[cell.algorithm_index], cell.params)

    def dataset_of(self, cell):
        """The dataset ``cell`` reads: its entry's, in the cell's view."""
        view = self.cell_view(cell)
        return self.views[cell.dataset_index][view] if view else self.datasets[cell.dataset_index]

    @property
    def kind(self):
        """ "run" (protocol x algorithms) or "active" (:class:`knnx.spec.active.ActiveSpec`)."""
        return getattr(self.spec, "kind", "run")

    @property
    def protocol(self):
        """The protocol, parsed: a model of :data:`knnx.spec.schema.PROTOCOL_MODELS`, or
        for an active spec its :class:`knnx.spec.active.ActiveProtocol` (start set and pool)."""
        return self.spec.protocol

    @property
    def protocol_json(self):
        return canonical_json(self.protocol.model_dump())

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
            # a list or tuple default is one value: written as a grid of one ([[100]]), since a
            # list in params is a grid ((1, 2) written [1, 2] would rerun as two settings)
            defaults = _written_defaults(ref.estimator_setting(ref.defaults()), ref.fixed)
            entry["params"] = {**defaults, **entry["params"]}
            if entry["steps"]:  # each step as a mapping, its defaults in its own params
                steps = []
                for given, step in zip(entry["steps"], ref.steps, strict=True):
                    given = (
                        {"name": given}
                        if isinstance(given, str)
                        else {k: v for k, v in given.items() if v is not None}
                    )
                    if "estimator" in given:
                        imports.append(given["estimator"].split(".")[0].split(":")[0])
                    given["params"] = {**_written_defaults(step.defaults(), {}), **given.get("params", {})}
                    steps.append(given)
                entry["steps"] = steps
            else:
                del entry["steps"]
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


def _written_defaults(defaults, fixed):
    """Defaults as a spec writes them: a list or tuple as a grid of one value."""
    return {k: [list(v)] if isinstance(v, list | tuple) else v for k, v in defaults.items() if k not in fixed}


def load_entry(entry, where, labels_seen, seed, base_dir):
    """``(label, dataset)`` of one dataset entry of a spec (plain or active), its data drawn
    from the spec's seed and the label; SpecError if another entry (``labels_seen``:
    label -> where it was given, updated here) has the same label, or one that Unicode
    normalisation (NFC) makes the same ('é' as one code point or as e + accent), as
    tables and figures show them alike."""
    label = dataset_label(entry)
    problem = name_problem(label)
    if problem is not None:  # an id of its own is checked as the entry is; this one is made
        raise SpecError(f"the dataset's name {quoted(label, 60)} {problem}; give the entry an 'id'")
    if label in labels_seen:
        raise SpecError(f"same name as {labels_seen[label]} ('{label}'); give one an 'id'")
    alike = _written_alike(label, labels_seen)
    if alike is not None:
        raise SpecError(
            f"same name as {labels_seen[alike]} once Unicode-normalised (NFC: {ascii(label)} and {ascii(alike)} "
            "are written alike); give one another 'id'"
        )
    labels_seen[label] = where
    return label, load_dataset(entry, seed=dataset_seedseq(seed, label, SEED_DATA), base_dir=base_dir)


def _written_alike(label, labels_seen):
    """A label of ``labels_seen`` other than ``label`` with the same NFC form, if any
    (only labels beyond ASCII can differ so)."""
    if label.isascii():
        return None
    key = unicodedata.normalize("NFC", label)
    return next(
        (seen for seen in labels_seen if not seen.isascii() and unicodedata.normalize("NFC", seen) == key),
        None,
    )


@dataclass
class PlannedDataset:
    """One dataset of a run spec once loaded and split (``ds`` None if that failed).

    where : how messages name its entry (``datasets[0]``, ``datasets[0] (id)`` for one
        of the datasets a list-valued option makes).
    label : its id in results.
    grids : per algorithm, the settings of its cells on this dataset (params_for applied).
    """

    where: str
    label: str | None = None
    ds: object = None
    splits: list = field(default_factory=list)
    grids: list = field(default_factory=list)
    views: dict = field(default_factory=dict)  # {view: dataset}: knnx.spec.views.plan_views


def entry_place(spec, d0, entry):
    """How messages name an (expanded) entry of ``spec.datasets[d0]``: ``datasets[0]``, or
    ``datasets[0] (id)`` for one of the datasets a list-valued option or a suite makes."""
    where = f"datasets[{d0}]"
    if entry is not spec.datasets[d0]:
        where += f" ({entry['id'] if 'id' in entry else entry['name']})"
    return where


def plan_dataset(spec, where, entry, labels_seen, base_dir):
    """A :class:`PlannedDataset`: the dataset of ``entry`` loaded, and the protocol's
    splits of it drawn (refused beforehand if their index arrays would not fit in
    memory). Raises KnnxError with one line (without ``where``) if either fails."""
    label, ds = load_entry(entry, where, labels_seen, spec.seed, base_dir)
    n_splits = spec.protocol.n_splits()  # each holds every row's index once
    check_memory(
        16 * n_splits * ds.n_samples,
        f"protocol {spec.protocol.kind}: {n_splits} splits of {ds.n_samples} rows",
    )
    splits = spec.protocol.make_splits(ds, dataset_seedseq(spec.seed, label, SEED_SPLITS))
    return PlannedDataset(where, label, ds, splits)


def build_cells(planned, resolved):
    """The cells of a run spec, in the runner's order: dataset, algorithm, setting, split."""
    cells = []
    for d, item in enumerate(planned):
        for a, ref in enumerate(resolved):
            for params in item.grids[a]:
                for s in item.splits:
                    cells.append(Cell(len(cells), d, item.ds.name, ref.id, params, s.repeat, s.fold, a))
    return cells
