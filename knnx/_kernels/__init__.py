"""Private numba kernels. Modules here import nothing from knnx (see STYLE: data flows one way).

Threading layer: on import, knnx selects numba's own ``workqueue`` layer unless the
user chose one (``NUMBA_THREADING_LAYER``; set for numba's import when numba is not
imported yet: the rest of knnx imports kernel modules through :func:`lazy`). Parallel (``prange``) kernels run between
BLAS products; with the OpenMP layer the idle OpenMP threads spin and starve
OpenBLAS on a small machine (measured here, 2 cores, when screening was a prange
kernel: 7.5 ms vs 0.35 ms per block). ``workqueue`` threads do not spin.

Parallel work runs on Python threads: a kernel whose units (rows, query blocks,
classes) are independent takes a range of them first, ``kernel(lo, hi, ...)``, releases
the GIL, and :func:`launch` splits the units over ``numba.get_num_threads()`` threads
(on the calling thread for small inputs, where starting threads costs more than the
work). One body serves both cases: no serial twin, and no ``parallel=True`` kernel to
compile (numba's parallel lowering took 8 s of the metric search's 25 s of compiling,
20 s of exact LpO's 24 s; measured on an empty cache). :func:`run_blocks` is the loop
underneath, for callers that make their own blocks.

The metric learners' kernels (:mod:`knnx._kernels.metric_learning`) are still
``prange`` kernels. ``workqueue`` aborts the process when two Python threads launch
parallel kernels at the same time; :data:`PARALLEL_LOCK` serialises such launches:
the metric learners reach their kernels through :func:`locked`, whose every call
holds it.

A damaged numba cache file is a cache miss, compiled again and rewritten
(:mod:`knnx._kernels._cache`), in every process that imports a kernel through
:func:`lazy` and in every process that runs cells.
"""

import importlib
import os
import sys
import threading
from collections.abc import Mapping

from knnx._kernels._cache import tolerate_damaged_cache

if "NUMBA_THREADING_LAYER" not in os.environ:
    if "numba" in sys.modules:  # imported before knnx: its configuration is read already
        sys.modules["numba"].config.THREADING_LAYER = "workqueue"
    else:  # read when numba is imported (by the first kernel module a run uses)
        os.environ["NUMBA_THREADING_LAYER"] = "workqueue"

PARALLEL_LOCK = threading.RLock()  # re-entrant: a locked call may reach another

# Searches (queries x references x features) below this many element operations run
# on the calling thread (:func:`launch`).
SEARCH_MIN_WORK = 3_000_000


class _Lazy:
    """The module named, imported at the first use of one of its attributes (see :func:`lazy`)."""

    __slots__ = ("_name", "_module")

    def __init__(self, name):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def _load(self):
        module = self._module
        if module is None:  # import_module holds the module's import lock: safe across threads
            module = importlib.import_module(self._name)
            tolerate_damaged_cache()  # numba is imported now; kernels compile at first call
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attr):
        return getattr(self._load(), attr)

    def __setattr__(self, attr, value):  # e.g. a test's monkeypatch: the module's attribute
        setattr(self._load(), attr, value)

    def __delattr__(self, attr):
        delattr(self._load(), attr)

    def __repr__(self):
        return f"<lazy module {self._name!r}>"


def lazy(name):
    """The kernel module ``name`` (``"knnx._kernels.vote"``), imported (numba with it,
    its functions defined) when one of its attributes is first used: a command that
    uses no kernel (``knnx --help``, ``knnx validate``, a rerun with nothing to do)
    imports no numba. Every attribute is the module's own (read at each use)."""
    return _Lazy(name)


class _Locked:
    """A :func:`lazy` module whose functions, when called, hold :data:`PARALLEL_LOCK`."""

    __slots__ = ("_module",)

    def __init__(self, module):
        object.__setattr__(self, "_module", module)

    def __getattr__(self, attr):
        value = getattr(self._module, attr)
        if not callable(value):
            return value

        def call(*args, **kwargs):
            with PARALLEL_LOCK:
                return value(*args, **kwargs)

        return call

    def __setattr__(self, attr, value):  # a test's monkeypatch: the module's attribute
        setattr(self._module, attr, value)

    def __delattr__(self, attr):
        delattr(self._module, attr)


def locked(name):
    """:func:`lazy` for a module of ``parallel=True`` kernels: each call of one of its
    functions holds :data:`PARALLEL_LOCK` (numba's ``workqueue`` layer aborts the process
    when two threads launch parallel kernels at once)."""
    return _Locked(lazy(name))


class Codes(Mapping):
    """{option: the kernel constant named} read from ``module`` (a :func:`lazy` one) when
    a value is first asked for: the options can be listed (parameter constraints) without
    executing the kernel module."""

    def __init__(self, module, **names):
        self.module, self.names = module, names

    def __getitem__(self, key):
        return getattr(self.module, self.names[key])

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)


def launch(kernel, n_units, work, min_work, *args):
    """Run ``kernel(lo, hi, *args)`` over the units [0, ``n_units``) (rows, or blocks of
    rows: the kernel's own): in one call on the calling thread when ``work`` (element
    operations) is below ``min_work`` or numba has one thread (starting threads costs
    0.1-0.5 ms, more than a small search or vote takes), else in about four ranges per
    thread on numba's thread count of Python threads (:func:`run_blocks`). The kernel
    releases the GIL and each unit writes only its own outputs, so the result is the
    same, bit for bit, however the units are split."""
    import numba

    n_threads = numba.get_num_threads()
    if work < min_work or n_threads <= 1 or n_units <= 1:
        kernel(0, n_units, *args)
        return
    step = max(1, -(-n_units // (4 * n_threads)))

    def part(lo):
        kernel(lo, min(lo + step, n_units), *args)

    run_blocks(part, range(0, n_units, step))


def run_blocks(func, starts):
    """Call ``func(start)`` for every start, on ``numba.get_num_threads()`` Python
    threads (``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` apply; one thread: in
    turn, here). ``func`` runs a ``nogil`` kernel on the block that begins at ``start``
    and writes its own rows of the outputs, so the result does not depend on the thread
    count. The first exception raised by a block is raised here."""
    import numba

    n_threads = min(numba.get_num_threads(), len(starts))
    if n_threads <= 1:
        for start in starts:
            func(start)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(n_threads) as pool:
        for _ in pool.map(func, starts):
            pass
