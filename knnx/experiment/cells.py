"""Cell kinds: what one cell of a run is, how it travels, runs and is hashed.

A validated spec runs as cells of one kind, chosen from :data:`CELL_KINDS` (the first
whose :meth:`CellKind.applies` to the spec):

- :class:`FitPredict`: an algorithm with one setting (or a tuned grid) fitted on the
  training part of one split and scored on its test part;
- :class:`ExactLpo`: protocol lpo, the exact leave-p-out risk of one setting on all rows
  of a dataset, in closed form;
- :class:`ActiveLoop`: a ``kind: active`` spec, one active-learning loop of a
  (dataset, strategy, repeat).

A kind owns its task (:class:`CellTask`, the frozen description a worker receives), its
run, the material of its content hash (what makes a cached cell valid, see
:func:`knnx.experiment.provenance.cell_keys`), its warm-up and how its rows are
summarised (``rounds``). Adding a kind is a class here and a line in CELL_KINDS.
"""

import inspect
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from knnx import datasets
from knnx.estimators.registry import lpo_risk_of, split_setting
from knnx.evaluation.metrics import METRIC_INPUT
from knnx.evaluation.scoring import check_predictions, needs_proba, proba_on_codes, reported_scores, score
from knnx.evaluation.tuning import TuneTask, tune
from knnx.experiment.context import DataRef
from knnx.experiment.parts import (
    active_repeat_data,
    contestant,
    fit_checked,
    split_parts,
    with_graphs,
)
from knnx.experiment.provenance import array_checksum, code_material, data_checksum, data_material
from knnx.experiment.warmup import rows_needed
from knnx.lpo.active import active_learning
from knnx.plugins import add_import_dirs, import_object
from knnx.results import COLUMNS, ROUND, CellId, curve_rows
from knnx.spec import (
    ActiveSpec,
    LeavePOut,
    canonical_json,
    tune_seed,
    tuned_settings,
)


@dataclass(frozen=True, kw_only=True)
class CellTask:
    """One cell as a worker receives it: no data, only how to find it (``data``)."""

    kind: type  # the CellKind that runs it
    index: int
    cell: CellId
    experiment: str
    seed: int
    data: DataRef
    params: dict
    protocol: str  # canonical JSON: the rows' protocol column
    warm_up: bool = False
    graph_k: int = 0  # width of the graphs the process's store keeps (0: no sharing)

    def base_row(self, n_train, n_test, fit_seconds, predict_seconds, tune_seconds=0.0):
        """The columns every results row of this cell shares (timings: see :mod:`knnx.results`)."""
        return {
            "experiment": self.experiment,
            "dataset": self.cell.dataset,
            "algorithm": self.cell.algorithm,
            "params": self.cell.params,
            "protocol": self.protocol,
            "repeat": self.cell.repeat,
            "fold": self.cell.fold,
            "seed": self.seed,
            "n_train": n_train,
            "n_test": n_test,
            "fit_seconds": fit_seconds,
            "predict_seconds": predict_seconds,
            "tune_seconds": tune_seconds,
        }

    def describe(self):
        """The cell in words, for a failure's one line."""
        c = self.cell
        return f"{c.dataset} {c.algorithm} {c.params} repeat {c.repeat} fold {c.fold}"


@dataclass(frozen=True, kw_only=True)
class SplitTask(CellTask):
    """A cell on one split of a dataset: FitPredict and ExactLpo."""

    estimator: object  # the class (pickled by reference) or its import path
    train: np.ndarray
    test: np.ndarray
    standardize: bool | str
    metrics: tuple
    record_curves: bool = False
    curve_points: int = 0
    tune: TuneTask | None = None
    held_out: int = 0  # protocol lpo's p
    steps: tuple = ()  # the steps before the classifier: (step id, import path) in order

    def estimator_class(self):
        """The class a cell fits: carried in the task, or imported from its path."""
        add_import_dirs(self.data.import_dirs)
        if isinstance(self.estimator, str):
            return import_object(self.estimator, self.data.base_dir)
        return self.estimator

    def step_classes(self):
        """``[(step id, class)]`` of the steps, imported from their paths."""
        if not self.steps:
            return []
        add_import_dirs(self.data.import_dirs)
        return [(sid, import_object(path, self.data.base_dir)) for sid, path in self.steps]

    def parts(self, ds):
        """``(X_train, y_train, X_test, y_test)``, standardised with the training part's
        mean and std if the spec asks (``numeric``: the numeric attributes' columns only;
        ``true``: every column but those of nominal codes, ``ds.nominal``). A missing
        value (NaN) is left out of the statistics and stays NaN. A precomputed distance
        matrix (``ds.precomputed``) is sliced on both axes, ``X[train][:, train]`` and
        ``X[test][:, train]``, and never standardised."""
        return split_parts(ds, self.train, self.test, self.standardize)


@dataclass(frozen=True, kw_only=True)
class ActiveTask(CellTask):
    """One active-learning loop (see :class:`knnx.spec.ActiveSpec`)."""

    start: int
    pool: int | None
    standardize: bool
    loop: dict = field(default_factory=dict)  # active_learning's keyword arguments


class CellKind(ABC):
    """The base of the cell kinds (see the module docstring). Class methods only: a
    kind holds no state. A kind defines the four abstract methods (a kind of
    CELL_KINDS that misses one is abstract, which tests/test_architecture.py refuses)."""

    name: ClassVar[str]
    rounds: ClassVar[bool] = False  # rows per round (a ``round`` column), summarised per round
    loads_dataset: ClassVar[bool] = True  # run() is given the validated dataset (else None)

    @classmethod
    @abstractmethod
    def applies(cls, vspec):
        """Whether a validated spec's cells are of this kind."""

    @classmethod
    @abstractmethod
    def tasks(cls, vspec, cells, graph_k, warm_up):
        """The tasks of ``cells`` (cells of ``vspec``); ``graph_k``: {dataset index: width
        of its shared graphs}, empty for none."""

    @classmethod
    @abstractmethod
    def hash_material(cls, vspec):
        """``(common, per_cell)``: what every cell's hash covers, and a function of a cell
        giving what its own covers besides (see provenance.cell_keys)."""

    @classmethod
    @abstractmethod
    def run(cls, task, ds, store, fit_progress=None, fits=None):
        """Run one task on its dataset ``ds``; return ``(rows, curve_rows)``. ``store``:
        the GraphStore its searches go through, or None; ``fits``: the StepFits its
        steps' fits are shared through, or None."""

    @classmethod
    def warm_runs(cls, task, ds):
        """``[(key, rows needed, run)]``: the settings a warm-up fits on a tiny problem
        (:func:`knnx.experiment.warmup.rows_needed` training rows), ``run(X, y, X_test,
        store)`` (see knnx.experiment.warmup)."""
        return []

    @classmethod
    def warm_key(cls, task, ds):
        """A key of what ``task``'s warm-up depends on, so that a later task with the same
        key skips planning it (see knnx.experiment.warmup); None: always plan."""
        return None

    @classmethod
    def labels(cls, cells):
        """{cell index: the progress's label of the cell} (see progress.progress_labels)."""
        from knnx.experiment.progress import progress_labels

        return progress_labels(cells)


def data_ref(vspec, cell):
    """How a worker finds the dataset of ``cell``, a cell of a validated spec."""
    entry = vspec.entries[cell.dataset_index]
    name = entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, dict) else None
    registered = datasets.REGISTERED  # looked up now: tests and pages may replace it
    loaders = ((name, registered[name]),) if name in registered else ()
    return DataRef(
        entry=entry,
        label=cell.dataset,
        seed=vspec.spec.seed,
        base_dir=str(vspec.base_dir),
        loaders=loaders,
        import_dirs=vspec.import_dirs,
        checksum=data_checksum(vspec.dataset_of(cell)),
        view=vspec.cell_view(cell),
    )


def _common_material(vspec):
    return {**code_material(), "experiment": vspec.spec.name, "seed": vspec.spec.seed}


class FitPredict(CellKind):
    """Fit on the training part of a split, score on its test part."""

    name = "fit"

    @classmethod
    def applies(cls, vspec):
        return True

    @classmethod
    def tasks(cls, vspec, cells, graph_k, warm_up):
        splits = {(d, s.repeat, s.fold): s for d, ds_splits in enumerate(vspec.splits) for s in ds_splits}
        refs = {}
        out = []
        for cell in cells:
            at = (cell.dataset_index, vspec.cell_view(cell))
            if at not in refs:
                refs[at] = data_ref(vspec, cell)
            out.append(cls._task(vspec, cell, splits, refs[at], graph_k, warm_up))
        return out

    @classmethod
    def _task(cls, vspec, cell, splits, ref, graph_k, warm_up):
        spec = vspec.spec
        split = splits[(cell.dataset_index, cell.repeat, cell.fold)]
        algorithm = vspec.algorithms[cell.algorithm_index]
        tuning = spec.algorithms[cell.algorithm_index].tune
        if tuning is not None:
            seed = tune_seed(spec.seed, cell.dataset, cell.repeat, cell.fold)
            tuning = TuneTask(tuning.cv, tuning.metric, tuple(tuned_settings(cell.params)), seed)
        return SplitTask(
            kind=cls,
            index=cell.index,
            cell=CellId(*cell.key()),
            experiment=spec.name,
            seed=spec.seed,
            data=ref,
            params=cell.params,
            protocol=vspec.protocol_json,
            warm_up=warm_up,
            graph_k=graph_k.get(cell.dataset_index, 0),
            estimator=algorithm.path if algorithm.path is not None else algorithm.cls,
            train=split.train,
            test=split.test,
            standardize=spec.preprocess.standardize,
            metrics=tuple(spec.metrics),
            record_curves=spec.record_curves,
            curve_points=spec.curve_points,
            tune=tuning,
            held_out=spec.protocol.p if isinstance(spec.protocol, LeavePOut) else 0,
            steps=tuple((step.id, step.path) for step in algorithm.steps),
        )

    @classmethod
    def hash_material(cls, vspec):
        spec = vspec.spec
        common = {
            **_common_material(vspec),
            "preprocess": vspec.normalized().get("preprocess"),
            "protocol": vspec.protocol_json,
            "metrics": list(spec.metrics),
            "record_curves": spec.record_curves,
            "share_graphs": spec.share_graphs,  # the timings differ
            "curve_points": spec.curve_points,
        }
        data = data_material(vspec)
        splits = {
            (d, s.repeat, s.fold): array_checksum(s.train, s.test)
            for d, ds_splits in enumerate(vspec.splits)
            for s in ds_splits
        }
        view_sums = {}  # (dataset, view) -> its checksum

        def per_cell(c):
            ref = vspec.algorithms[c.algorithm_index]
            # a class outside knnx: how the spec named it and what identifies its code
            outside = {"estimator": ref.source(), "version": ref.version} if ref.version is not None else {}
            tuning = spec.algorithms[c.algorithm_index].tune
            if tuning is not None:  # how the setting is chosen is part of what produced the cell
                outside["tune"] = tuning.model_dump()
            if ref.steps:  # the steps' classes: how the spec named each, and its code's identity
                outside["steps"] = [[step.id, step.path, step.version] for step in ref.steps]
            view = vspec.cell_view(c)  # another view of the entry: its own data
            if view:
                at = (c.dataset_index, view)
                if at not in view_sums:
                    view_sums[at] = data_checksum(vspec.dataset_of(c))
                outside["view"] = [view, view_sums[at]]
            return {
                **outside,  # a class outside knnx: its path and its package's version (or file's hash)
                "entry": vspec.entries[c.dataset_index],
                **data[c.dataset_index],
                "split": splits[(c.dataset_index, c.repeat, c.fold)],
            }

        return common, per_cell

    @classmethod
    def run(cls, task, ds, store, fit_progress=None, fits=None):
        X_train, y_train, X_test, y_test = task.parts(ds)
        estimator_cls = task.estimator_class()
        steps = task.step_classes()

        def make(s):
            return contestant(estimator_cls, steps, s, store, ds, task.seed, fits)

        # A step fit reused from an earlier cell or setting counts in this cell's time as if
        # the cell had made it (StepFits.reused_seconds: what the reused fits took).
        reused = fits.reused_seconds if fits is not None else 0.0
        chosen, failed = {}, 0
        setting = task.params
        tune_seconds = 0.0
        if task.tune is not None:
            t = time.perf_counter()
            setting, chosen, failed = tune(make, task.tune, task.params, X_train, y_train, ds.n_classes)
            tune_seconds = time.perf_counter() - t + _reused_since(fits, reused)
        estimator = make(setting)
        fit_kwargs = _fit_kwargs(estimator, task.index, fit_progress)
        reused = fits.reused_seconds if fits is not None else 0.0
        t0 = time.perf_counter()
        fit_checked(estimator, X_train, y_train, **fit_kwargs)
        t1 = time.perf_counter()
        y_pred = estimator.predict(X_test)
        t2 = time.perf_counter()
        y_pred = check_predictions(y_pred, len(task.test), ds.n_classes)  # our copy, as checked
        # fit_seconds: the inner search (if tuned) and the refit, as GridSearchCV.fit takes
        refit = t1 - t0 + _reused_since(fits, reused)
        base = task.base_row(len(task.train), len(task.test), tune_seconds + refit, t2 - t1, tune_seconds)
        proba = posterior = None
        if needs_proba(task.metrics):
            proba = proba_on_codes(estimator, X_test, ds.n_classes)
        if any(METRIC_INPUT[m] == "posterior" for m in task.metrics):
            posterior = ds.posterior(ds.X[task.test])  # raw features: the model's own coordinates
        scores = score(task.metrics, y_test, y_pred, proba, posterior)
        # Quantities the estimator reports about its fit (e.g. the k chosen by LpO).
        tuned = [(f"chosen_{name}", value) for name, value in chosen.items()]
        if failed:  # GridSearchCV's error_score: settings that failed were not chosen
            tuned.append(("tune_failed_settings", float(failed)))
        taken = {m for m, _ in scores} | {m for m, _ in tuned}
        scores += reported_scores(estimator, taken, columns=(*COLUMNS, ROUND)) + tuned
        rows = [{**base, "metric": m, "value": v} for m, v in scores]
        curves = []
        if task.record_curves and getattr(estimator, "curve_", None) is not None:
            cell = {c: base[c] for c in ("experiment", "dataset", "algorithm", "params", "repeat", "fold")}
            curves = curve_rows(estimator.curve_, cell, task.curve_points)
        return rows, curves

    @classmethod
    def warm_key(cls, task, ds):
        """An untuned fit-and-predict cell's class, setting and sizes."""
        if task.tune is not None:
            return None
        sizes = (ds.n_classes, ds.X.shape[1], len(task.train), len(task.test), task.graph_k, ds.precomputed)
        return ("cell", task.estimator, task.cell.params, *sizes)

    @classmethod
    def warm_runs(cls, task, ds):
        if ds.precomputed:  # a tiny problem of features is no distance matrix
            return []
        estimator_cls = task.estimator_class()
        metrics = list(task.metrics) + ([task.tune.metric] if task.tune is not None else [])
        proba = needs_proba([m for m in metrics if m in METRIC_INPUT])
        settings = task.tune.settings if task.tune is not None else [task.params]
        if task.steps:  # the classifier's kernels: its own parameters (the steps compile none)
            settings = [split_setting([sid for sid, _ in task.steps], s)[1] for s in settings]
            settings = list({canonical_json(s): s for s in settings}.values())
        return [
            (
                ("fit", _name(estimator_cls), canonical_json(s), ds.n_classes),
                rows_needed(s, 0, estimator_cls),
                _TinyFit(estimator_cls, s, proba),
            )
            for s in settings
        ]


def _name(cls):
    return f"{cls.__module__}:{cls.__qualname__}"


@dataclass(frozen=True)
class _TinyFit:
    """A warm-up's tiny fit of one setting: fit, predict, and predict_proba if asked."""

    cls: type
    setting: dict
    proba: bool

    def __call__(self, X, y, X_test, store):
        estimator = with_graphs(self.cls(**self.setting), store)
        estimator.fit(X, y)  # what fit returns is not the estimator (scikit-learn ignores it too)
        estimator.predict(X_test)
        if self.proba:
            estimator.predict_proba(X_test)


@dataclass(frozen=True)
class _TinyLpo:
    """A warm-up's tiny exact LpO risk of one setting."""

    risk: object
    setting: dict
    held_out: int

    def __call__(self, X, y, X_test, store):
        self.risk(self.setting, X, y, self.held_out, graphs=store)


class ExactLpo(FitPredict):
    """Protocol lpo: one ``error`` row, the exact leave-p-out estimate on all n rows
    (n_train = n - p, n_test = p, fit_seconds = time of the closed form)."""

    name = "lpo"

    @classmethod
    def applies(cls, vspec):
        return isinstance(getattr(vspec.spec, "protocol", None), LeavePOut)

    @classmethod
    def run(cls, task, ds, store, fit_progress=None, fits=None):
        X, y, _, _ = task.parts(ds)
        p = task.held_out
        estimator_cls = task.estimator_class()
        params = task.params
        if ds.nominal and params.get("nominal", False) is None:  # the class's nominal, left unset
            params = {**params, "nominal": list(ds.nominal)}
        t0 = time.perf_counter()
        risk = lpo_risk_of(estimator_cls)(params, X, y, p, graphs=store)
        base = task.base_row(len(y) - p, p, time.perf_counter() - t0, 0.0)
        return [{**base, "metric": "error", "value": risk}], []

    @classmethod
    def warm_key(cls, task, ds):
        return None  # a held-out count besides the setting: planned every time

    @classmethod
    def warm_runs(cls, task, ds):
        if ds.precomputed:
            return []
        settings = task.tune.settings if task.tune is not None else [task.params]
        estimator_cls = task.estimator_class()
        risk = lpo_risk_of(estimator_cls)
        return [
            (
                ("lpo", _name(estimator_cls), canonical_json(s), ds.n_classes),
                rows_needed(s, task.held_out, estimator_cls),
                _TinyLpo(risk, s, task.held_out),
            )
            for s in settings
        ]


class ActiveLoop(CellKind):
    """One loop of :func:`knnx.lpo.active.active_learning`; its rows: per round (``round``
    0..rounds), ``error`` on the remaining pool then ``chosen_k``, with ``n_train`` the
    labelled points, ``n_test`` the pool points left, ``fit_seconds`` the round's wall
    time, ``fold`` 0."""

    name = "active"
    rounds = True
    loads_dataset = False  # each repeat loads its own sample (active_repeat_data)

    @classmethod
    def applies(cls, vspec):
        return isinstance(vspec.spec, ActiveSpec)

    @classmethod
    def tasks(cls, vspec, cells, graph_k, warm_up):
        spec = vspec.spec
        refs = {}
        out = []
        for cell in cells:
            if cell.dataset_index not in refs:
                refs[cell.dataset_index] = data_ref(vspec, cell)
            out.append(
                ActiveTask(
                    kind=cls,
                    index=cell.index,
                    cell=CellId(*cell.key()),
                    experiment=spec.name,
                    seed=spec.seed,
                    data=refs[cell.dataset_index],
                    params=cell.params,
                    protocol=vspec.protocol_json,
                    warm_up=False,  # the loop's kernels compile in its first round (no tiny problem)
                    graph_k=0,  # every round has a new training set: nothing to share
                    start=spec.start,
                    pool=spec.pool,
                    standardize=spec.standardize,
                    loop={
                        "strategy": spec.strategies[cell.algorithm_index],
                        "rounds": spec.rounds,
                        "m": spec.m,
                        "p_select": spec.p_select,
                        "p_tune": spec.p_tune,
                        "k_max": spec.k_max,
                        "k_fixed": spec.k_fixed,
                    },
                )
            )
        return out

    @classmethod
    def hash_material(cls, vspec):
        """The hash covers the knnx version and source, the numeric libraries, the
        experiment name and seed, the dataset entry and a checksum of its arrays, the
        start/pool protocol, the loop's settings and strategy, and the repeat (not the
        number of repeats: a rerun with more keeps the earlier ones)."""

        spec = vspec.spec
        common = {
            **_common_material(vspec),
            "protocol": vspec.protocol_json,
            "import_dirs": list(vspec.import_dirs),
            "p_select": spec.p_select,  # passed to every loop (the passive one ignores it)
        }
        data = data_material(vspec)

        def per_cell(c):
            return {
                "entry": vspec.entries[c.dataset_index],
                **data[c.dataset_index],
                "strategy": spec.strategies[c.algorithm_index],
            }

        return common, per_cell

    @classmethod
    def run(cls, task, ds, store, fit_progress=None, fits=None):
        task.data.prepare()
        X0, y0, Xp, yp, loop_seed = active_repeat_data(
            task.data.entry,
            task.cell.dataset,
            task.seed,
            task.cell.repeat,
            task.start,
            task.pool,
            task.standardize,
            task.data.base_dir,
        )
        records = active_learning(X0, y0, Xp, yp, seed=loop_seed, **task.loop)
        rows = []
        for rec in records:
            base = {**task.base_row(rec.n_train, rec.n_pool, rec.seconds, 0.0), ROUND: rec.round}
            rows.append({**base, "metric": "error", "value": rec.error})
            rows.append({**base, "metric": "chosen_k", "value": float(rec.k)})
        return rows, []

    @classmethod
    def labels(cls, cells):
        # an active cell is a strategy's loop of one repeat
        return {c.index: f"{c.algorithm} repeat {c.repeat}" for c in cells}


# The cell kinds, the first that applies to a spec running its cells.
CELL_KINDS = (ActiveLoop, ExactLpo, FitPredict)


def kind_of(vspec):
    """The cell kind of a validated spec (see :data:`CELL_KINDS`)."""
    return next(kind for kind in CELL_KINDS if kind.applies(vspec))


def _reused_since(fits, before):
    """The seconds of the step fits reused through ``fits`` since it counted ``before``."""
    return 0.0 if fits is None else fits.reused_seconds - before


def _fit_kwargs(estimator, index, fit_progress):
    """``{"progress": ...}`` for an estimator whose ``fit`` reports progress (e.g.
    WeightedMetricNN, quadratic in the training size), else {}."""
    if fit_progress is None or "progress" not in inspect.signature(estimator.fit).parameters:
        return {}
    return {"progress": lambda done, total: fit_progress(index, done, total)}
