"""The one piece of state a process that runs cells keeps: :class:`ProcessContext`.

Every process that runs cells (a run with ``jobs = 1``, each pool or Dask worker) has
one context, :data:`PROCESS`, passed explicitly to what needs it: the neighbour graphs
its cells share (:mod:`knnx.neighbors.graphs`), the settings and search paths it has
warmed up (:mod:`knnx.experiment.warmup`), the datasets it has loaded or been lent,
and, in a pool worker, the queue its fit progress goes to. No other module of knnx
keeps mutable state between calls (tests/test_architecture.py checks the module
globals). Results never depend on the context, only the time they take.
"""

from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field

from knnx import datasets
from knnx.errors import DataError
from knnx.experiment.provenance import data_checksum
from knnx.neighbors.graphs import GraphStore
from knnx.plugins import add_import_dirs
from knnx.spec import SEED_DATA, canonical_json, dataset_seedseq
from knnx.steps import StepFits

# Datasets a worker process keeps loaded (most recently used first).
LOADED_DATASETS = 8


@dataclass(frozen=True)
class DataRef:
    """How a worker finds a cell's dataset: the spec entry (never the data), its label,
    the spec's seed and folder, the loaders registered in the submitting process, and
    the folders searched for import paths."""

    entry: object
    label: str
    seed: int
    base_dir: str
    loaders: tuple = ()  # ((name, loader), ...): registered in the submitting process
    import_dirs: tuple = ()
    checksum: str = ""  # of the data validation loaded, which the cells' keys record
    view: str = ""  # the entry's view the cell reads (knnx.datasets.views), "" for as given

    def prepare(self):
        """Make this process able to load the entry: the spec's import folders on the
        path, the submitting process's loaders registered (never replacing one)."""
        add_import_dirs(self.import_dirs)
        for name, loader in self.loaders:
            datasets.REGISTERED.setdefault(name, loader)

    def key(self):

        return (canonical_json(self.entry), self.label, self.seed, self.base_dir, self.view)


@dataclass
class ProcessContext:
    """What one process keeps for the cells it runs (see the module docstring).

    ``graphs``: the store handed to every estimator with a ``graphs`` parameter and to
    the exact LpO risk; ``step_fits``: the fitted steps of contestants with steps
    (:class:`knnx.steps.StepFits`), shared by the cells of the process; ``warmed``: keys of the settings and search paths warmed up
    (:func:`knnx.experiment.warmup.warm_up`); ``reports``: a pool worker's fit-progress
    relay, else None; ``warm_up`` and ``reuse_graphs``: switches (results are identical
    either way, only timings differ); ``loads``: datasets loaded by this process;
    ``folder``: the working folder when a cell last started."""

    graphs: GraphStore = field(default_factory=GraphStore)
    step_fits: StepFits = field(default_factory=StepFits)
    warmed: set = field(default_factory=set)
    reports: object = None
    warm_up: bool = True
    reuse_graphs: bool = True
    loads: int = 0
    # The working folder when a cell last started (knnx.experiment.worker.working_folder).
    folder: str | None = None
    _lent: dict = field(default_factory=dict)
    _loaded: OrderedDict = field(default_factory=OrderedDict)

    def dataset(self, ref):
        """The dataset of ``ref``: lent by the run (:meth:`lend`), kept from an earlier
        cell of this process, or loaded now (seeded as validation loads it) and checked
        against the checksum of the data validation loaded (DataError, the cell fails,
        when a loader is not deterministic or a file changed during the run: the cells'
        keys record the data validation loaded)."""

        ref.prepare()
        key = ref.key()
        if key in self._lent:
            return self._lent[key]
        if key in self._loaded:
            self._loaded.move_to_end(key)
            return self._loaded[key]
        ds = datasets.load_dataset(
            ref.entry,
            seed=dataset_seedseq(ref.seed, ref.label, SEED_DATA),
            base_dir=ref.base_dir,
            view=ref.view or None,
        )
        self.loads += 1
        if ref.checksum and data_checksum(ds) != ref.checksum:
            raise DataError(
                f"dataset {ref.label}: loaded again in this worker process, it holds other data than when the "
                "run was validated (a loader must return the same data for the same seed; a file must not "
                "change during a run)"
            )
        self._loaded[key] = ds
        while len(self._loaded) > LOADED_DATASETS:
            self._loaded.popitem(last=False)
        return ds

    @contextmanager
    def lend(self, lent):
        """For the length of a run in this process: the datasets validation loaded
        (``{DataRef.key(): dataset}``), so that each is in memory once, not twice."""
        self._lent.update(lent)
        try:
            yield
        finally:
            for key in lent:
                self._lent.pop(key, None)


# This process's context (a pool or Dask worker has its own, made at import).
PROCESS = ProcessContext()
