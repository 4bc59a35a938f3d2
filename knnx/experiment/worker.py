"""What a process does with one cell's task: :func:`run_cell`, wrapped by :func:`run_contained`
so that any failure of user code comes back as a value naming the cell."""

import hashlib
import os
import random
import signal
import sys
import threading
import time
import warnings
from collections import Counter

import numpy as np

from knnx._kernels._cache import tolerate_damaged_cache
from knnx._text import escape_control
from knnx.errors import CellError, describe, exit_guard, unraisable_to, user_fault
from knnx.experiment.context import PROCESS
from knnx.experiment.warmup import warm_up


def run_cell(task, fit_progress=None, ctx=None):
    """Fit and evaluate one cell; return ``(index, rows, curve_rows, warnings, timing)``.

    ``ctx``: the process's context (default :data:`knnx.experiment.context.PROCESS`):
    with ``task.graph_k`` > 0 the cell's estimators search through its graph store with
    that width (see :mod:`knnx.neighbors.graphs`). ``fit_progress(index, done, total,
    text=None)`` relays the progress of an estimator whose ``fit`` takes a ``progress``
    callback, and (``text``) says when this process compiles kernels first.
    ``warnings``: what Python warnings the cell raised, and the errors Python could not
    raise (a ``__del__`` that raised: :func:`knnx.errors.unraisable_text`), as
    ``(category, message, count)`` in the order first seen (recorded, not printed). ``timing``: ``{"seconds":
    the cell's wall time, warm-up excluded, "warmup": {algorithm: seconds of warm-up}}``
    (empty when this process had warmed up this cell's settings before, or when the
    cell's class has no kernels to warm up: :func:`knnx.experiment.warmup.warms_up`).
    Before the cell, if ``task.warm_up``, the process warms up the kernels of the cell's
    settings (:func:`knnx.experiment.warmup.warm_up`); an exception of the cell carries
    that warm-up as its ``warmup_seconds`` attribute."""
    ctx = PROCESS if ctx is None else ctx
    tolerate_damaged_cache()  # kernels imported directly (not through knnx._kernels.lazy) too
    start = time.perf_counter()
    spent = {}
    try:
        ds = ctx.dataset(task.data) if task.kind.loads_dataset else None
        warm = warm_up(task, ds, ctx, fit_progress) if task.warm_up else 0.0
        spent = {task.cell.algorithm: warm} if warm > 0 else {}
        unraised = []
        with warnings.catch_warnings(record=True) as caught, unraisable_to(lambda *u: unraised.append(u)):
            warnings.simplefilter("always")
            store = ctx.graphs.with_k_max(task.graph_k) if task.graph_k > 0 else None
            seed_global_generators(task)
            rows, curves = task.kind.run(task, ds, store, fit_progress, fits=ctx.step_fits)
    except BaseException as exc:
        try:  # the warm-up was spent all the same: checked passes it on with the CellError
            exc.warmup_seconds = spent
        except AttributeError:
            pass
        raise
    counts = Counter(
        (w.category.__name__, escape_control((str(w.message).strip().splitlines() or [""])[0])[:300])
        for w in caught
    )
    counts.update((category, message[:300]) for category, message in unraised)
    timing = {"seconds": time.perf_counter() - start - sum(spent.values()), "warmup": spent}
    return (
        task.index,
        rows,
        curves,
        [(category, message, n) for (category, message), n in counts.items()],
        timing,
    )


def seed_global_generators(task):
    """Seed NumPy's and Python's global generators (``np.random.seed``, ``random.seed``)
    from the spec's seed and the cell, so that code drawing from them (an estimator
    without ``random_state``) gives the same results whatever ran before in the process
    (other cells, other workers, ``--jobs``)."""
    text = f"{task.seed}|{task.describe()}".encode()
    seed = int.from_bytes(hashlib.sha256(text).digest()[:4], "little")
    np.random.seed(seed)  # noqa: NPY002 - the legacy global generator is what such code draws from
    random.seed(seed)


def run_contained(func, task, *args):
    """Run a cell; return its result, or for any failure one CellError (returned, not
    raised, so that pool and Dask workers pass it back as a value) naming the cell.

    Any exception but Ctrl-C's KeyboardInterrupt is a failure of the cell: SystemExit (user code
    calling ``sys.exit``), GeneratorExit, and ``os._exit`` (see :func:`knnx.errors.exit_guard`); its
    message is rendered safely (:func:`knnx.errors.describe`: an exception whose
    ``__str__`` raises is named by its type). A cell that changes the working folder
    (``os.chdir``) or replaces ``sys.stdout`` or ``sys.stderr`` has them changed back,
    failed or not; when the working folder is removed while a cell runs, it is made
    again (empty) for the run's relative paths and the cell's warnings say so. So are the
    rest of what the next cells in the process depend on (:func:`process_state`): the
    recursion limit, the umask, the handlers of SIGINT and SIGTERM, and the modules
    imported before the cell.

    Data errors found while running (a training part whose scale the kernels refuse,
    a count too large for exact LpO) fail their cell like any other error: the run
    goes on and lists it in failures.csv. What validation can see is refused before
    the run instead (see :func:`knnx.spec.validate_spec`).
    """
    cwd, streams, limit = working_folder(), (sys.stdout, sys.stderr), sys.getrecursionlimit()
    state = process_state()
    try:
        with exit_guard():
            result = func(task, *args)
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported per cell
        sys.setrecursionlimit(limit)  # first: a cell may have set it below the depth knnx runs at
        if not user_fault(exc):
            raise
        result = CellError(f"cell {task.describe()} failed: {describe(exc, 300)}")
        result.warmup_seconds = getattr(
            exc, "warmup_seconds", {}
        )  # the warm-up before the failure (run_cell)
    finally:  # user code that changed the working folder or swapped the streams: knnx's keep theirs
        sys.setrecursionlimit(limit)
        removed = back_to(cwd)
        sys.stdout, sys.stderr = streams
        restore_process_state(state)
    if removed and isinstance(
        result, tuple
    ):  # whose code removed it is not known (--jobs N: another worker's)
        index, rows, curves, cell_warnings, timing = result
        note = (
            "RuntimeWarning",
            f"the working folder {cwd} was removed while the cell ran; knnx made it again, empty",
        )
        result = (index, rows, curves, [*cell_warnings, (*note, 1)], timing)
    return result


def stop_joblib_workers():
    """Shut down joblib's reusable (loky) worker processes, if cells of this process
    started them (an estimator with ``n_jobs``). Called once this process has run its
    cells (:func:`knnx.experiment.executors.execute`): left running, they would hold the
    run's stdout and stderr open for loky's idle timeout (300 s) after knnx exits. Not
    after each cell: starting them again costs seconds per cell (3.6 s against 0.08 s
    for a ``CalibratedClassifierCV(n_jobs=2)`` fit on iris, medians here)."""
    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(module, "_executor", None)
    if executor is None:
        return
    try:
        executor.shutdown(wait=True, kill_workers=True)
    except Exception:  # noqa: BLE001, S110 - a pool already broken by user code: nothing left to stop
        pass


# Signals whose handlers a cell may not keep changed: Ctrl-C and a polite kill end a run.
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def process_state():
    """What a cell may change in its process that the next cells and knnx depend on,
    besides the working folder and the streams: the signal handlers of
    :data:`HANDLED_SIGNALS` (main thread only: others cannot set them), the umask, and
    the modules imported (a cell setting ``sys.modules["csv"] = None`` broke every cell
    after it, and the run). The recursion limit is put back by :func:`run_contained` itself."""
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        handlers = {sig: signal.getsignal(sig) for sig in HANDLED_SIGNALS}
    mask = os.umask(0o022)
    os.umask(mask)
    return handlers, mask, dict(sys.modules)


def restore_process_state(state):
    """Put back what :func:`process_state` recorded (modules imported since are kept)."""
    handlers, mask, modules = state
    for sig, handler in handlers.items():
        if signal.getsignal(sig) is not handler and handler is not None:
            signal.signal(sig, handler)
    os.umask(mask)
    try:
        same = modules.items() <= sys.modules.items()  # one C pass: the common case
    except Exception:  # noqa: BLE001 - an object in sys.modules whose == raises
        same = False
    if not same:
        for name, module in modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module


def working_folder():
    """The current folder, or None when it no longer exists. A folder removed since
    the last cell started (under --jobs N, by another worker's cell, which made it
    again) is entered again, made again if need be: else every later cell of this
    process would run in a removed folder."""
    try:
        cwd = os.getcwd()
    except OSError:  # removed since: enter the folder of that name again
        if PROCESS.folder is None:
            return None
        cwd = PROCESS.folder
        try:
            os.makedirs(cwd, exist_ok=True)
            os.chdir(cwd)
        except OSError:
            return None
    PROCESS.folder = cwd
    return cwd


def back_to(cwd):
    """Go back to ``cwd``; True when a cell removed it (made again, empty, so that the
    run's relative paths and the cells that follow find a folder there)."""
    if cwd is None:
        return False
    try:
        if os.getcwd() == cwd:
            return False
        os.chdir(cwd)
        return False
    except FileNotFoundError:  # ours is gone (the current one, or the one to go back to)
        try:
            os.makedirs(cwd, exist_ok=True)
            os.chdir(cwd)
        except OSError:
            pass
        return True
    except OSError:  # not ours to enter any more: knnx's writes will say so
        return False
