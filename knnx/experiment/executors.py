"""Executors: where a run's cells run. This process (``jobs`` = 1), a pool of ``jobs``
spawned processes (each numba kernel single-threaded there), or a Dask distributed
cluster. Results are identical whatever the executor; only timings differ. A pool
worker dies with its run, even a killed one; fit progress comes back through a queue."""

import logging
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.context import SpawnContext, SpawnProcess
from multiprocessing.util import Finalize

from knnx.errors import CellError, KnnxError, note_unraisable
from knnx.experiment.context import PROCESS
from knnx.experiment.worker import run_cell, run_contained, stop_joblib_workers


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
        try:
            for task in tasks:
                yield task, run_contained(run_cell, task, relay, ctx)
        finally:
            stop_joblib_workers()  # the cells' joblib workers must not outlive the run
        return
    yield from _execute_pool(tasks, jobs, fit_progress)


# A worker that dies (the out-of-memory killer, a signal, a crash below Python) breaks
# the pool: every cell it was running then comes back broken, not only the cell that
# killed it. The pool is rebuilt and those cells rerun one at a time, so that a cell
# that kills its worker when alone is the one that failed ("worker died"); the others
# give their results as before (a cell's result does not depend on its worker).


class _QuietProcess(SpawnProcess):
    """A spawned worker that ignores Ctrl-C's SIGINT from its start: the terminal sends it
    to the whole process group, and a worker still importing printed a KeyboardInterrupt
    traceback; the run handles Ctrl-C, and its workers die with it."""

    def start(self):
        if threading.current_thread() is not threading.main_thread():
            return super().start()  # signal handlers are the main thread's to set
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited through exec
        try:
            return super().start()
        finally:
            signal.signal(signal.SIGINT, previous)


class _QuietSpawn(SpawnContext):
    Process = _QuietProcess


def _execute_pool(tasks, jobs, fit_progress):
    """Cells on a pool of ``jobs`` spawned processes, at most ``jobs`` submitted at once;
    a dead worker fails the cell it ran and the pool is replaced (see above)."""
    mp = _QuietSpawn()  # spawn: fork is unsafe once numba's thread pool has started
    queued, suspects = deque(tasks), deque()
    while queued or suspects:
        # A fresh queue per pool: a worker killed while putting a report holds its lock.
        reports = mp.SimpleQueue() if fit_progress is not None else None
        with _single_threaded_children():
            pool = ProcessPoolExecutor(
                max_workers=jobs, mp_context=mp, initializer=_start_worker, initargs=(os.getpid(), reports)
            )
        try:
            broken = yield from _drain(pool, queued, suspects, jobs, reports, fit_progress)
        except BaseException:
            # Interrupted or a fatal error: drop queued cells instead of waiting for them.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        _shutdown(pool)
        if len(broken) == 1:  # alone in the pool, or the only cell running: it killed its worker
            task, cause = broken[0]
            yield task, CellError(f"cell {task.describe()} failed: its worker process died ({cause})")
        else:
            suspects.extend(task for task, _ in broken)


def _drain(pool, queued, suspects, jobs, reports, fit_progress):
    """Run cells on ``pool`` until done or broken: suspects one at a time, alone, then
    the queued cells ``jobs`` at a time. Yields ``(task, outcome)``; returns the cells
    that were running when a worker died, as ``[(task, cause)]`` (empty when all ran)."""
    relay = _queued_fit_progress if reports is not None else None
    running, processes = {}, {}
    while queued or suspects or running:
        while suspects and not running or not suspects and queued and len(running) < jobs:
            source = suspects if suspects else queued
            task = source.popleft()
            try:
                running[pool.submit(run_contained, run_cell, task, relay)] = task
            except BrokenProcessPool:  # a worker died since the last look: this cell did not start
                source.appendleft(task)
                return (yield from _broken(running, processes))
            processes.update(getattr(pool, "_processes", None) or {})  # to read a dead one's exit code
        finished, _ = wait(running, timeout=FIT_PROGRESS_INTERVAL, return_when=FIRST_COMPLETED)
        while reports is not None and not reports.empty():
            fit_progress(*reports.get())
        if any(isinstance(fut.exception(), BrokenProcessPool) for fut in finished):
            return (yield from _broken(running, processes))
        for fut in finished:
            yield running.pop(fut), fut.result()
    return []


def _broken(running, processes):
    """After a worker died: yield the running cells that finished all the same; return
    the others, ``[(task, cause)]`` in cell order."""
    wait(running)  # a broken pool sets every pending future at once
    broken = []
    for fut, task in running.items():
        if isinstance(fut.exception(), BrokenProcessPool):
            broken.append(task)
        else:
            yield task, fut.result()
    cause = _death(processes.values())
    return [(task, cause) for task in sorted(broken, key=lambda t: t.index)]


def _death(processes):
    """How a pool's worker died, from the exit codes of its processes: ``exit code 7``,
    ``killed by SIGKILL``, else ``no exit code``. The pool terminates its other
    workers with SIGTERM when one dies, so those are read last."""
    codes = []
    for proc in processes:
        code = _exit_code(proc)
        if code not in (None, 0):
            codes.append(code)
    codes.sort(key=lambda c: c == -signal.SIGTERM)
    if not codes:
        return "no exit code"
    code = codes[0]
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = "; the out-of-memory killer sends it" if code == -signal.SIGKILL else ""
        return f"killed by {name}{hint}"
    return f"exit code {code}"


def _exit_code(proc, seconds=1.0):
    """``proc``'s exit code, None if it has none within ``seconds``. The pool's manager
    thread joins its dead workers too: the thread whose ``waitpid`` loses that race
    reads None until the other has stored the code, so it is read again a while."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            code = proc.exitcode
        except (OSError, ValueError, AssertionError):
            code = None
        if code is not None or time.monotonic() >= deadline:
            return code
        time.sleep(0.02)


# Seconds a pool's workers have to end once every cell is done; a worker held up by a
# thread its user code left running is then killed (its cells are all recorded).
WORKER_EXIT_SECONDS = 2.0


def _shutdown(pool):
    """Shut ``pool`` down without waiting on threads user code left in its workers: a
    worker process joins its non-daemon threads on the way out, forever if one never
    ends."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False)
    deadline = time.monotonic() + WORKER_EXIT_SECONDS
    for proc in processes:
        try:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.exitcode is None:
                proc.kill()
                proc.join(timeout=1.0)
        except (OSError, ValueError, AssertionError):
            continue


def _start_worker(parent_pid, reports):
    """Pool worker initializer: die with the run (:func:`_die_with_parent`) and send fit
    progress to ``reports`` (a queue the run reads), if any."""
    _die_with_parent(parent_pid)
    note_unraisable()
    Finalize(None, stop_joblib_workers, exitpriority=10)  # on the worker's way out
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
                    # a cell whose worker dies is given up at once (KilledWorker), then run
                    # again alone (see _execute_dask): not three more deaths first
                    scheduler_kwargs={"dashboard": False, "allowed_failures": 0},
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
    its CellError (a value, not an exception, so the workers log nothing). A cell whose
    worker dies is run again on another as many times as the scheduler's
    ``allowed-failures`` (0 on the LocalCluster knnx makes; Dask's default, 3, on a
    scheduler given with ``--scheduler``). When the scheduler gives up
    (``KilledWorker``), the cell may only have
    been queued on the worker beside the one that killed it: once the other cells are
    done it runs again alone, and fails ("its worker process died") if it is killed
    again; the run goes on (the nannies restart the workers).
    """
    from distributed import as_completed as dask_completed
    from distributed.scheduler import KilledWorker

    # No progress relay: a Dask worker warms up (run_cell) without a word to the display;
    # its warm-up seconds come back with the cell's result all the same.

    run_id = os.urandom(4).hex()  # task keys unique across runs sharing a scheduler
    futures = {}
    try:
        for task in tasks:
            key = f"knnx-{run_id}-cell-{task.index}"
            futures[client.submit(run_contained, run_cell, task, pure=False, key=key)] = task
        suspects = []
        for fut in dask_completed(futures):
            try:
                outcome = fut.result()
            except KilledWorker:  # its workers died each time; it may have been queued beside the cause
                suspects.append(futures[fut])
                continue
            yield futures[fut], outcome
        for n, task in enumerate(sorted(suspects, key=lambda t: t.index)):  # alone on the cluster now
            fut = client.submit(run_contained, run_cell, task, pure=False, key=f"knnx-{run_id}-alone-{n}")
            futures[fut] = task
            try:
                outcome = fut.result()
            except KilledWorker:
                outcome = CellError(
                    f"cell {task.describe()} failed: its worker process died (dask KilledWorker)"
                )
            yield task, outcome
    except BaseException:
        client.cancel(list(futures))  # interrupted or a fatal error: drop queued cells
        raise
