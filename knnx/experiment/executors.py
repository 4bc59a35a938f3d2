"""Executors: where a run's cells run. This process (``jobs`` = 1), a pool of ``jobs``
spawned processes (each numba kernel single-threaded there), or a Dask distributed
cluster. Results are identical whatever the executor; only timings differ. A pool
worker dies with its run, even a killed one; fit progress comes back through a queue."""

import logging
import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing import get_context

from knnx.errors import KnnxError
from knnx.experiment.context import PROCESS
from knnx.experiment.worker import checked, run_cell


@contextmanager
def _single_threaded_children():
    """Environment for spawned workers: one process per core, each single-threaded.

    Set before the pool starts, because OpenBLAS and numba read it at import.
    """
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
    saved = {n: os.environ.get(n) for n in names}
    os.environ.update({n: "1" for n in names})
    try:
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def workers(jobs, client):
    """Processes running cells at once: ``jobs`` in a pool; a Dask cluster's threads."""
    if client is None:
        return jobs
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - only the ETA depends on it
        return max(1, jobs)


# Seconds to wait for a Dask scheduler given with --scheduler.
DASK_CONNECT_TIMEOUT = 10

# Where a LocalCluster's scheduler serves HTTP: loopback, a free port the system picks.
LOOPBACK_ANY_PORT = "127.0.0.1:0"


# At most one fit-progress report per cell this often (seconds): the display needs no more.
FIT_PROGRESS_INTERVAL = 0.5


class _Throttled:
    """``fit_progress(index, done, total)`` passed on at most every FIT_PROGRESS_INTERVAL
    seconds per cell (the first and the last report of a cell always); a report with a
    ``text`` (the warm-up's, see :func:`run_cell`) always, as ``(index, done, total, text)``."""

    def __init__(self, report):
        self.report, self.last = report, {}

    def __call__(self, index, done, total, text=None):
        if text is not None:
            self.report(index, done, total, text)
            return
        now = time.monotonic()
        if done >= total or now - self.last.get(index, -1e9) >= FIT_PROGRESS_INTERVAL:
            self.last[index] = now
            self.report(index, done, total)


def execute(tasks, jobs, client, fit_progress=None, ctx=None):
    """Run the tasks; yield ``(task, outcome)`` as each finishes, outcome being
    ``run_cell``'s result or the CellError of a failed cell. Other errors propagate.
    ``client``: a Dask Client (executor "dask"), else None (this process or a pool).

    ``fit_progress(index, done, total)``, if given, receives the progress of long fits
    (throttled; from pool workers through a queue; none from Dask workers), and
    ``fit_progress(index, 0, 0, text)`` the warm-up's text (see :func:`run_cell`).
    ``ctx``: the context of this process's cells (default ``PROCESS``); pool and Dask
    workers use their own."""
    if client is not None:
        yield from _execute_dask(tasks, client)
        return
    relay = _Throttled(fit_progress) if fit_progress is not None else None
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield task, checked(run_cell, task, relay, ctx)
        return
    mp = get_context("spawn")  # fork is unsafe once numba's thread pool has started
    reports = mp.SimpleQueue() if fit_progress is not None else None
    with _single_threaded_children():
        pool = ProcessPoolExecutor(
            max_workers=jobs, mp_context=mp, initializer=_start_worker, initargs=(os.getpid(), reports)
        )
    relay = _queued_fit_progress if reports is not None else None
    try:
        futures = {pool.submit(checked, run_cell, task, relay): task for task in tasks}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=FIT_PROGRESS_INTERVAL, return_when=FIRST_COMPLETED)
            while reports is not None and not reports.empty():
                fit_progress(*reports.get())
            for fut in finished:
                yield futures[fut], fut.result()
    except BaseException:
        # Interrupted or a fatal error: drop queued cells instead of waiting for them.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _start_worker(parent_pid, reports):
    """Pool worker initializer: die with the run (:func:`_die_with_parent`) and send fit
    progress to ``reports`` (a queue the run reads), if any."""
    _die_with_parent(parent_pid)
    if reports is not None:
        PROCESS.reports = _Throttled(lambda *report: reports.put(report))


def _queued_fit_progress(index, done, total, text=None):
    if PROCESS.reports is not None:
        PROCESS.reports(index, done, total, text)


def _die_with_parent(parent_pid):
    """In a pool worker: end this worker as soon as the run that started it ends,
    even when the run is killed with SIGKILL (a pool's workers otherwise wait for work
    forever, keeping multiprocessing's resource tracker alive with them).

    Linux: the kernel sends SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG);
    elsewhere, and as a fallback, a daemon thread checks every second that the parent
    is still ours. A parent that died before this ran is noticed at once.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="knnx-parent-watch", daemon=True).start()


@contextmanager
def dask_client(jobs, scheduler):
    """A Dask distributed Client for ``--executor dask`` (see :func:`run_spec`): to the
    scheduler at ``scheduler``, else to a LocalCluster of ``jobs`` single-threaded worker
    processes on loopback, with no dashboard and its HTTP server on a free port (not
    distributed's default 8787, which may be taken). Made before the output folder is
    touched, so that a scheduler that cannot be reached is one line with nothing written."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise KnnxError(
            "{executor=dask} needs dask and distributed: pip install 'knnx[dask]'",
            mentions=[("executor", "dask")],
        ) from None
    cluster = None
    try:
        if scheduler is None:
            with _single_threaded_children():  # the nannies spawn workers with this environment
                cluster = LocalCluster(
                    n_workers=max(1, jobs),
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    # dashboard_address=None only drops the dashboard: the scheduler's HTTP
                    # server (health, metrics) stays on the default :8787 and warns on stderr
                    # when that port is taken. Port 0: a free port, whatever else runs.
                    dashboard_address=LOOPBACK_ANY_PORT,
                    scheduler_kwargs={"dashboard": False},
                    # knnx reports every failure itself (failed cells as values, a lost worker
                    # as the error of fut.result()); distributed's own warnings and errors on
                    # a loaded machine (unresponsive event loop, a heartbeat missed while the
                    # cluster closes, with its traceback) are not the user's to read
                    silence_logs=logging.CRITICAL,
                )
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise KnnxError(
                    f"{{scheduler={scheduler}}}: cannot connect ({first})",
                    mentions=[("scheduler", scheduler)],
                ) from None
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _execute_dask(tasks, client):
    """Cells as tasks on a Dask distributed cluster (see :func:`run_spec`).

    A task carries the dataset's spec entry and the split's row indices, never the
    data: each worker process loads a dataset once (its ProcessContext) and reuses it for
    every cell of that dataset it runs. Bundled datasets come with the package; CSV
    files must be readable by the workers at the same path. A failed cell comes back as
    its CellError (a value, not an exception, so the workers log nothing).
    """
    from distributed import as_completed as dask_completed

    # No progress relay: a Dask worker warms up (run_cell) without a word to the display;
    # its warm-up seconds come back with the cell's result all the same.

    run_id = os.urandom(4).hex()  # task keys unique across runs sharing a scheduler
    futures = {}
    try:
        for task in tasks:
            key = f"knnx-{run_id}-cell-{task.index}"
            futures[client.submit(checked, run_cell, task, pure=False, key=key)] = task
        for fut in dask_completed(futures):
            yield futures[fut], fut.result()
    except BaseException:
        client.cancel(list(futures))  # interrupted or a fatal error: drop queued cells
        raise
