"""Run every cell of a spec and write tidy results, cell by cell.

``run_spec`` is the library call behind ``knnx run``. Output folder layout::

    OUT/results.csv      tidy rows (see knnx.results), sorted in cell order at the end
    OUT/curves.csv       with ``record_curves: true`` only: training curves, tidy rows
                         experiment, dataset, algorithm, params, repeat, fold,
                         iteration, series, value (sorted in cell order at the end)
    OUT/spec.yaml        the normalised spec (every default filled in)
    OUT/datasets.csv     per dataset: n, d, classes, nominal attributes, missing values
    OUT/environment.json per run: knnx version, git commit, Python/numpy/numba versions,
                         CPU, seconds of warm-up (kernel compilation); a rerun with
                         nothing to do (every cell cached, the outputs made from the
                         same files: OUT/.knnx-outputs.json) writes nothing at all
    OUT/summary.csv      mean, std, n per (dataset, algorithm, configuration, metric)
    OUT/summary.md       the same as Markdown tables, one per metric, best marked
    OUT/<metric>.png     every configuration of the run, one panel per dataset
    OUT/<metric>-<p>.png the metric against each numeric parameter p that varies
    OUT/report.html      one self-contained page: tables, comparison, figures, timings

Cells: a run's cells are of one kind (:mod:`knnx.experiment.cells`): fit-and-predict,
exact LpO (protocol lpo), or an active-learning loop (a spec with ``kind: active``,
:class:`knnx.spec.ActiveSpec`), which runs through the same validation, cache, resume,
lock, executors, failures file, progress, environment.json and report. An active
cell is one loop of :func:`knnx.lpo.active.active_learning` (a dataset, a strategy, a
repeat; :func:`knnx.experiment.parts.active_repeat_data` draws its start set and pool);
its rows carry a ``round`` column; summary.csv gives mean, std and n per round and its
figures are ``active.png`` and ``active_k.png``
(:func:`knnx.reporting.figures.active_figures`); report.html tabulates the last round.

The engine's parts: :mod:`~knnx.experiment.cells` (the cell kinds and their tasks),
:mod:`~knnx.experiment.worker` (what a process does with a task),
:mod:`~knnx.experiment.executors` (this process, a pool, Dask),
:mod:`~knnx.experiment.warmup`, :mod:`~knnx.experiment.progress`,
:mod:`~knnx.experiment.provenance` (environment.json, cell hashes),
:mod:`~knnx.experiment.context` (the one per-process state) and
:mod:`~knnx.experiment.outputs` (the end of a run).

Metrics: label metrics score ``predict``; ``predict_proba`` is called only when a
probability or posterior metric is asked, and its columns (in the estimator's
``classes_`` order) are placed on the dataset's class codes 0..C-1, a class missing
from the training part getting probability 0. Posterior metrics compare with the
dataset's true posterior at the raw test features (before standardisation).
``predict_seconds`` times ``predict`` alone.

Curves: with ``record_curves: true`` each fitted estimator that exposes ``curve_``
(a dict of equal-length 1-D arrays: ``iteration``, integers, and numeric series
such as ``surrogate_risk`` or ``train_error``) gives one row per (series,
iteration), at most ``curve_points`` evenly spaced iterations per curve, first and
last kept (see :func:`knnx.results.curve_rows`). Protocol lpo fits no estimator and
records none.

Cache and resume: every finished cell is recorded in ``OUT/cells.csv`` with a
content hash (:func:`knnx.experiment.provenance.cell_keys`) of everything that produced its rows: the cell's
normalised spec (experiment name, seed, dataset entry, algorithm, parameters,
protocol, repeat, fold, preprocessing, metrics, curve settings), a checksum of the
dataset's arrays and of the split's row indices, the knnx version, a checksum of
knnx's source files and the versions of the numeric libraries (numpy, scipy, numba,
llvmlite, scikit-learn, metric-learn: an upgrade can move a baseline's last digits,
so cells cached under another version are rerun, not mixed in). A rerun keeps
exactly the cells whose recorded hash equals the current one and runs the others,
so editing the spec (a new algorithm, another grid value), the data or the code
reruns what changed and nothing else; rows of cells no longer in the spec are
dropped. A cell's curve rows are appended first, then its results rows; its ledger
row follows in a group commit (every :data:`COMMIT_SECONDS`, at the end and on an
interruption: the files are ``fsync``-ed, then the group's ledger rows written). A cell
counts as done only once all three are on disk, so a run killed at any point (even
``kill -9``, or a machine crash) resumes with no duplicate or partial cell, having lost
at most the last group's cells. ``resume=False`` deletes every output first.

Failures: a cell whose algorithm raises is recorded in ``OUT/failures.csv`` (cell,
hash, the error's first line) and the run goes on; at the end, after the summaries
of the finished cells, a CellError says how many failed. Failed cells are never
cached: the next run retries them.

Lock: a run holds an exclusive lock on ``OUT/.knnx.lock`` (``fcntl.flock``) from
before its first write to the end; a second run on the same folder is refused with
a ResultsError naming the holder's pid, and writes nothing. The lock dies with its
process, so a killed run never leaves the folder locked.

With ``jobs > 1`` cells run in a pool of processes (each numba kernel
single-threaded there); results are identical to ``jobs=1``, only timings differ.

Warm-up: numba compiles a kernel (or loads it from its cache) at its first call, which
would otherwise land in the first timed cell of each setting (seconds, on a first run).
So every process that runs cells (this one, each pool or Dask worker) first fits and
predicts each setting it meets of a class with numba kernels
(:func:`knnx.experiment.warmup.warms_up`) on a tiny synthetic problem shaped like the cell's
(:func:`knnx.experiment.warmup.warm_up`); the progress says ``compiling kernels (first run only):
<algorithm>`` meanwhile. Results are identical with or without it (``PROCESS.warm_up``); the
seconds it took, per algorithm and summed over the processes, are added to this run's
entry of environment.json as ``warmup_seconds`` at the end of the run, and are no
part of any cell's times.
"""

import json
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from knnx.datasets import entry_files
from knnx.errors import CellError, DataError, KnnxError, ResultsError, SpecError, WriteError
from knnx.estimators.registry import BUILTIN
from knnx.experiment.cells import kind_of
from knnx.experiment.context import PROCESS
from knnx.experiment.executors import dask_client, execute, workers
from knnx.experiment.outputs import finish_outputs, report_control_problem, written_param_names
from knnx.experiment.parts import graph_widths
from knnx.experiment.progress import Progress
from knnx.experiment.provenance import cell_keys, code_material, record_environment, record_warmup
from knnx.experiment.reasons import read_material, record_material, rerun_reasons, run_material
from knnx.experiment.rerun import (  # noqa: F401 (RunSummary re-exported)
    STAMP,
    RunSummary,
    file_digest,
    inputs_record,
    library_versions,
    outputs_current,
    read_stamp,
    record_outputs,
    unchanged_run,
)
from knnx.experiment.worker import back_to, working_folder
from knnx.limits import WORKER_BYTES, format_bytes, memory_problem
from knnx.reporting.characteristics import DATASET_COLUMNS, ENCODED_COLUMN, VIEWS_COLUMN, dataset_row
from knnx.results import (
    CURVE_COLUMNS,
    FAILURE_COLUMNS,
    LEDGER_COLUMNS,
    OUTPUT_FILES,
    WARNING_COLUMNS,
    CellId,
    ResultsWriter,
    atomic_write_text,
    output_lock,
    prepare_output_folder,
    read_ledger,
    recover,
    recover_curves,
    results_columns,
    rows_to_csv,
    with_param_columns,
)
from knnx.spec import validate_spec
from knnx.spec.read import dump_spec
from knnx.spec.views import views_said

# The ledger is written in groups: a cell's rows are appended as it finishes, and every
# COMMIT_SECONDS the files are fsync-ed and the finished cells recorded as done (then
# at the end of the run, and when it is interrupted). An fsync costs 2-4 ms on this
# project's test machine, about three times a small cell's fit and predict: two per
# cell made 2,000 iris cells spend 8-12 s in fsync. A crash loses at most this much work.
COMMIT_SECONDS = 0.5


def run_spec(
    spec,
    *,
    out=None,
    jobs=1,
    resume=True,
    progress=None,
    executor="local",
    scheduler=None,
    overrides=(),
    report=True,
    figures=True,
):
    """Validate and run an experiment spec; write results beside a copy of the spec.

    Parameters
    ----------
    spec : path or dict
        YAML file or an equivalent dict (see :mod:`knnx.spec`).
    out : path, optional
        Output folder; default ``results/<spec name>``.
    jobs : int
        Worker processes (1 runs in this process).
    resume : bool
        Skip cells already complete in ``out/results.csv``.
    progress : callable, optional
        Called as ``progress(done, total, description)`` after each cell and once at
        the start, and with the description of a long fit's progress or of a warm-up
        (``"compiling kernels (first run only): <algorithm>"``); the library is
        otherwise silent. A callback with an ``eta_seconds`` parameter (or
        ``**kwargs``) is also given ``eta_seconds=``: the seconds the run expects to
        take still (see :func:`knnx.experiment.progress.eta_seconds`), or None until a
        cell has finished.
    executor : {"local", "dask"}
        "local": this process (``jobs`` = 1) or a pool of ``jobs`` processes. "dask":
        a Dask distributed cluster (``pip install 'knnx[dask]'``): the one at
        ``scheduler`` (e.g. "tcp://host:8786"), else a LocalCluster of ``jobs``
        single-threaded worker processes on loopback. Results are identical to
        ``jobs=1`` whatever the executor.
    scheduler : str, optional
        Address of a running Dask scheduler (executor "dask" only).
    overrides : sequence of str
        ``"PATH=VALUE"`` changes applied to the spec before validation (see
        :func:`knnx.spec.apply_overrides`); the spec.yaml written to ``out`` shows them.
    report : bool
        Write ``out/report.html`` at the end (:func:`knnx.reporting.html.write_report`).
    figures : bool
        Draw the run's figures at the end (the PNG files; ``False`` draws none and
        removes an earlier run's, for a run whose figures nobody looks at: they are most
        of a small run's time). A rerun with the other setting makes the outputs again.

    Returns
    -------
    RunSummary
    """
    start = time.perf_counter()
    _check_options(jobs, executor, scheduler)
    options = {"out": out, "jobs": jobs, "resume": resume, "executor": executor, "scheduler": scheduler}
    options |= {"overrides": overrides, "report": report, "figures": figures, "progress": progress}
    quick = unchanged_run(spec, **options)
    if quick is not None:  # nothing to do nor to write, known from the files alone
        return replace(quick, seconds=time.perf_counter() - start)
    return run_spec_past_the_rerun_check(spec, start=start, **options)


def run_spec_past_the_rerun_check(
    spec, *, out, jobs, resume, progress, executor, scheduler, overrides, report, start, figures=True
):
    """:func:`run_spec` once :func:`knnx.experiment.rerun.unchanged_run` has said the run
    has something to do (``knnx run`` asks it before importing this module): validate,
    then run the cells. ``start``: the perf_counter the run's seconds count from."""
    _check_options(jobs, executor, scheduler)
    spec_digest = None if isinstance(spec, dict) else file_digest(spec)  # the bytes validation reads
    vspec = validate_spec(spec, overrides)
    problem = report_control_problem(vspec)
    if problem is not None:
        raise SpecError(f"{vspec.source}: {problem}")
    if scheduler is None and jobs > 1:
        _check_memory(vspec, jobs)
    source = None if isinstance(spec, dict) else (Path(spec), tuple(overrides or ()), spec_digest)
    with dask_client(jobs, scheduler) if executor == "dask" else nullcontext() as client:
        out = prepare_output_folder(
            out if out is not None else Path("results") / vspec.spec.name,
            source=None if isinstance(spec, dict) else spec,
        )
        with output_lock(out):
            try:
                run = _ActiveRun(vspec, out, progress, PROCESS)
                run.source = source
                return run.run(jobs, client, resume, start, html_report=report, plots=figures)
            except WriteError as exc:
                raise WriteError(
                    f"{exc}; the cells finished before are saved: rerun the same command to resume"
                ) from None


def _check_memory(vspec, jobs):
    """DataError if ``jobs`` worker processes would exceed the memory limit: each loads
    the datasets of its cells (about 4x their size at the peak)."""
    biggest = max(ds.X.nbytes for ds in vspec.datasets)
    held = sum(ds.X.nbytes for ds in vspec.datasets)
    problem = memory_problem(
        held + jobs * (WORKER_BYTES + 4 * biggest),
        f"{jobs} worker processes, each loading datasets of up to {format_bytes(biggest)}",
    )
    if problem is not None:
        raise DataError(f"{{jobs={jobs}}}: {problem}", mentions=[("jobs", jobs)])


def _check_options(jobs, executor, scheduler):
    if executor not in ("local", "dask"):
        raise KnnxError(f"{executor!r} is not an executor; use local or dask", param="executor")
    if scheduler is not None and executor != "dask":
        raise KnnxError("only with {executor=dask}", param="scheduler", mentions=[("executor", "dask")])
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise KnnxError(f"expected an integer >= 1, got {jobs!r}", param="jobs")


class _ActiveRun:
    """One run of a validated spec into the locked folder ``out``: what it has cached,
    the writers of its files, what it has done and what failed."""

    def __init__(self, vspec, out, progress, ctx):
        self.vspec, self.out, self.ctx = vspec, out, ctx
        self.cwd = working_folder()
        self.kind = kind_of(vspec)
        self.keys = cell_keys(vspec, self.kind)
        self.order = {c.key(): c.index for c in vspec.cells}
        self.names = written_param_names(vspec)  # the file's param_<name> columns
        self.labels = self.kind.labels(vspec.cells) if progress else {}
        self.progress = progress
        self.columns = results_columns(self.names, rounds=self.kind.rounds)
        self.rounds = vspec.spec.rounds if self.kind.rounds else None  # rows per round
        self.failures = []
        self.n_warned = 0
        self.warmup = Counter()  # {algorithm: seconds of warm-up}, summed over the processes
        self.reruns = []  # one line per reason cells of the ledger run again
        self.material = None  # what the cells' keys cover (knnx.experiment.reasons.run_material)

    def path(self, name):
        return self.out / name

    def run(self, jobs, client, resume, start, html_report=True, plots=True):
        """Resume (or clear), run the cells left, finish the outputs; the RunSummary."""
        self.start_inputs = self._inputs()  # what made the cells, as validation read it
        done_keys = self._resume(resume)
        atomic_write_text(self.path("spec.yaml"), dump_spec(self.vspec.normalized()))
        labels = {c.dataset_index: c.dataset for c in self.vspec.cells}
        rows = [
            {**dataset_row(labels[i], ds), VIEWS_COLUMN: views_said(self.vspec, i)}
            for i, ds in enumerate(self.vspec.datasets)
            if i in labels
        ]
        columns = [*DATASET_COLUMNS, ENCODED_COLUMN] + (
            [VIEWS_COLUMN] if any(r[VIEWS_COLUMN] for r in rows) else []
        )
        atomic_write_text(self.path("datasets.csv"), rows_to_csv(rows, header=True, columns=columns))
        cells = self.vspec.cells
        todo = [c for c in cells if c.key() not in done_keys]
        self.total, self.done = len(cells), len(cells) - len(todo)
        if not todo and outputs_current(self.out, self._finish_options(html_report, plots)):
            self._refresh_inputs()
            if self.progress is not None:
                self.progress(self.done, self.total, "")
            return self._summary(todo, start, ())  # nothing to run nor to write: the folder is as it was
        record_environment(self.path("environment.json"), len(cells) - len(done_keys))
        self._open_writers()
        self.by_index = {c.index: c for c in todo}
        in_process = client is None and (jobs <= 1 or len(todo) <= 1)
        self.report = Progress(self.progress, todo, 1 if in_process else workers(jobs, client))
        self.report(self.done, self.total, "")
        share = self.ctx.reuse_graphs and getattr(self.vspec.spec, "share_graphs", True)
        tasks = self.kind.tasks(self.vspec, todo, graph_widths(self.vspec) if share else {}, self.ctx.warm_up)
        relay = self._fit_progress if self.progress else None
        lent = {}  # in this process, the cells use the datasets validation loaded
        for task in tasks if in_process else ():
            lent.setdefault(task.data.key(), self.vspec.dataset_of(self.by_index[task.index]))
        with self.ctx.lend(lent):
            try:
                for task, outcome in execute(tasks, jobs, client, relay, self.ctx):
                    if isinstance(outcome, CellError):
                        self._failed(self.by_index[task.index], outcome)
                    else:
                        self._finished(*outcome)
            finally:
                self._commit()  # an interrupted run keeps the cells it finished
        record_warmup(self.path("environment.json"), self.warmup)
        return self._finish(todo, start, html_report, plots)

    def _resume(self, resume):
        """The cells cached in ``out`` (recorded in the ledger with the hash the current
        spec, data and code give them); anything else is dropped and recomputed. With
        ``resume`` false, every output of an earlier run is removed first."""
        results_path, ledger_path = self.path("results.csv"), self.path("cells.csv")
        done_keys = set()
        if not resume:
            _clear_outputs(self.out)
        elif results_path.exists():
            if not ledger_path.exists():
                raise ResultsError(
                    f"{self.out}: has a results.csv but no cells.csv ledger (an older knnx or another tool wrote "
                    "it), so its rows cannot be matched to cells; rerun with --no-resume to start over, or use --out"
                )
            recorded = read_ledger(ledger_path)
            valid = {cell for cell, key in recorded.items() if self.keys.get(cell) == key}
            changed = [cell for cell, key in recorded.items() if cell in self.keys and self.keys[cell] != key]
            if changed:  # cells run again: say why (knnx.experiment.reasons)
                self.reruns = rerun_reasons(changed, read_material(self.out), self._material())
            self.n_removed = sum(cell not in self.keys for cell in recorded)
            metrics = list(self.vspec.spec.metrics)
            done_keys = recover(
                results_path, metrics, allowed=valid, columns=self.columns, rounds=self.rounds
            )
        if self.path("curves.csv").exists():
            recover_curves(self.path("curves.csv"), done_keys)  # curves of complete cells only
        if self.path("warnings.csv").exists():
            recover_curves(self.path("warnings.csv"), done_keys, WARNING_COLUMNS, "warnings")
        ledger = [self._ledger_row(c) for c in sorted(done_keys, key=self.order.get)]
        atomic_write_text(ledger_path, rows_to_csv(ledger, header=True, columns=LEDGER_COLUMNS))
        if len(done_keys) < len(self.keys):  # cells to run: what their keys cover, for the next run's reasons
            record_material(self.out, self._material())
        return done_keys

    def _material(self):
        if self.material is None:
            self.material = run_material(self.vspec, code_material())
        return self.material

    def _ledger_row(self, key):
        return dict(zip(LEDGER_COLUMNS, (self.keys[key], *key), strict=True))

    def _open_writers(self):
        self.writer = ResultsWriter(self.path("results.csv"), self.columns)
        self.ledger = ResultsWriter(self.path("cells.csv"), LEDGER_COLUMNS)
        curves = self.vspec.spec.record_curves
        self.curves_writer = ResultsWriter(self.path("curves.csv"), CURVE_COLUMNS) if curves else None
        warned = self.path("warnings.csv").exists()
        self.warnings_writer = ResultsWriter(self.path("warnings.csv"), WARNING_COLUMNS) if warned else None
        self.pending, self.committed = [], time.perf_counter()

    def _commit(self):
        """The group commit: ``fsync`` the rows written since the last commit, then record
        their cells in the ledger (one write, ``fsync``-ed). A cell is done once its
        ledger row is on disk, and its rows are on disk before that."""
        if not self.pending:
            return
        for writer in (self.warnings_writer, self.curves_writer, self.writer):
            if writer is not None:
                writer.sync()
        self.ledger.append(self.pending)
        self.pending, self.committed = [], time.perf_counter()

    def _finished(self, index, rows, curves, cell_warnings, timing):
        """A cell's rows written: its warnings and curves first, then its results rows, then
        its ledger row (a cell counts as done once all are on disk)."""
        back_to(self.cwd)  # a worker's cell may have removed the folder this process works in
        cell = self.by_index[index]
        key = CellId(*cell.key())
        self.warmup.update(timing["warmup"])
        if cell_warnings:
            if self.warnings_writer is None:
                self.warnings_writer = ResultsWriter(self.path("warnings.csv"), WARNING_COLUMNS)
            base = key._asdict()
            self.warnings_writer.append(
                [{**base, "category": c, "message": m, "count": n} for c, m, n in cell_warnings], sync=False
            )
            self.n_warned += 1
        if curves:
            self.curves_writer.append(curves, sync=False)
        self.writer.append(with_param_columns(rows, self.names), sync=False)
        self.pending.append(self._ledger_row(key))
        if time.perf_counter() - self.committed >= COMMIT_SECONDS:
            self._commit()
        self.done += 1
        self.report.cell_done(cell, timing["seconds"])
        self.report(self.done, self.total, f"{cell.dataset} {self.labels.get(cell.index, cell.algorithm)}")

    def _failed(self, cell, exc):
        back_to(self.cwd)
        self.warmup.update(getattr(exc, "warmup_seconds", {}))
        self.report.cell_done(cell, None)
        row = (*cell.key(), self.keys[cell.key()], str(exc))
        self.failures.append((cell.index, dict(zip(FAILURE_COLUMNS, row, strict=True))))

    def _fit_progress(self, index, step, steps, text=None):
        cell = self.by_index[index]
        label = self.labels.get(cell.index, cell.algorithm)
        self.report(self.done, self.total, text or f"fit {step}/{steps} {cell.dataset} {label}")

    def _finish(self, todo, start, html_report, plots):
        """failures.csv, the sorted files, summaries, figures and report; CellError if a
        cell failed, else the RunSummary."""
        # side files as a fresh run leaves them: warnings.csv only with rows, curves.csv only
        # with record_curves (a resume whose cells no longer warn or record kept their headers)
        for name, kept in (("warnings.csv", True), ("curves.csv", self.vspec.spec.record_curves)):
            if not kept or _header_only(self.path(name)):
                self.path(name).unlink(missing_ok=True)
        failures = [row for _, row in sorted(self.failures, key=lambda f: f[0])]
        failures_path = self.path("failures.csv")
        if failures:
            atomic_write_text(failures_path, rows_to_csv(failures, header=True, columns=FAILURE_COLUMNS))
        else:
            failures_path.unlink(missing_ok=True)
        options = self._finish_options(html_report, plots)
        finished = finish_outputs(self.out, order=self.order, **options)
        notes = finished.notes
        if failures:
            raise CellError(
                f"{len(failures)} of {self.total} cells failed and were not saved (listed in {failures_path}; "
                f"a rerun retries them); first: {failures[0]['error']}"
            )
        if not notes:  # every output made: a rerun with nothing to do need not make them again
            record_outputs(self.out, options, self._stable_inputs())
        return self._summary(todo, start, notes, finished.advice)

    source = None  # (spec file, overrides, its digest before validation) of a run from a file
    n_removed = 0  # cells of the ledger that the spec no longer has (their rows dropped)
    start_inputs = None

    def _inputs(self):
        """The stamp's record of what made this run's cells (knnx.experiment.rerun), or
        None when code outside knnx and scikit-learn may make them."""
        if self.source is None or not self.vspec.cells or self.vspec.import_dirs:
            return None  # (python_path folders may hold code, and their targets may change)
        files = []
        for entry in self.vspec.entries:
            found = entry_files(entry, self.vspec.base_dir)
            if found is None:
                return None
            files += found
        sklearn = f"scikit-learn=={library_versions()['scikit-learn']}"
        for ref in [r for entry in self.vspec.algorithms for r in (entry, *entry.steps)]:  # steps too
            top = ref.cls.__module__.split(".")[0]
            by_name = ref.path is None and ref.name in BUILTIN
            named = (ref.path or "").split(":")[0].split(".")[0]  # a user module may re-export a class
            by_path = (
                named in ("knnx", "sklearn") and top in ("knnx", "sklearn") and ref.version in (None, sklearn)
            )
            if not (by_name or by_path):
                return None
        sizes = [ds.X.nbytes for ds in self.vspec.datasets]
        memory = [sum(sizes), max(sizes, default=0)]
        spec_path, overrides, _ = self.source
        return inputs_record(spec_path, overrides, files, self.out, len(self.vspec.cells), memory)

    def _stable_inputs(self):
        """:meth:`_inputs`, or None if the spec or a data file changed since validation
        read them (the cells were made from what was read, not from what is there)."""
        now = self._inputs()
        if now is None or self.start_inputs is None:
            return None
        before, after = dict(self.start_inputs["fingerprint"]), dict(now["fingerprint"])
        before.pop("ledger"), after.pop("ledger")  # the run writes it
        return now if before == after and after["spec"] == self.source[2] else None

    def _refresh_inputs(self):
        """A run with nothing to do: record its inputs if the stamp's are out of date."""
        recorded = read_stamp(self.out)
        inputs = self._stable_inputs()
        if recorded is not None and recorded.get("inputs") != inputs:
            atomic_write_text(
                self.path(STAMP), json.dumps({**recorded, "inputs": inputs}, sort_keys=True) + "\n"
            )

    def _finish_options(self, html_report, plots=True):
        """The end of the run's arguments besides the cell order (JSON-able)."""
        return dict(
            metrics=list(self.vspec.spec.metrics),
            names=list(self.names),
            rounds=bool(self.kind.rounds),
            curves=bool(self.vspec.spec.record_curves),
            html_report=bool(html_report),
            figures=list(getattr(self.vspec.spec, "figures", ())),
            report=_report_settings(self.vspec.spec),
            plots=bool(plots),
        )

    def _summary(self, todo, start, notes, advice=()):
        n_todo = len(todo)
        if self.n_removed:  # another spec into this folder, or one that lost cells: said, not silent
            notes = [
                f"{self.n_removed} cells of an earlier spec are not in this one: their rows left "
                f"{self.path('results.csv')} (run it with another --out to keep both)",
                *notes,
            ]
        return RunSummary(
            self.out,
            self.total,
            n_todo,
            self.total - n_todo,
            time.perf_counter() - start,
            self.n_warned,
            tuple(notes),
            tuple(advice),
            tuple(self.reruns),
        )


def _report_settings(spec):
    """The spec's ``report:`` settings as the report's options (an active spec has none)."""
    report = getattr(spec, "report", None)
    return {} if report is None else report.model_dump()


def _header_only(path):
    """Whether the file at ``path`` exists and holds no line beyond its header."""
    try:
        with open(path, "rb") as fh:
            fh.readline()
            return not fh.readline()
    except FileNotFoundError:
        return False


def _clear_outputs(out):
    """Remove what an earlier run wrote in ``out`` (results, summaries, plots)."""
    from knnx.reporting.figures import figure_files

    names = [
        name for name in OUTPUT_FILES if name not in (".knnx.lock", "spec.yaml", "datasets.csv")
    ]  # rewritten
    for name in names:
        (out / name).unlink(missing_ok=True)
    for path in figure_files(out):
        path.unlink(missing_ok=True)
