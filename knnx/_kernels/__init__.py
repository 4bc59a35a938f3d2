"""Private numba kernels. Modules here import nothing from knnx (see STYLE: data flows one way).

Threading layer: on import, knnx selects numba's own ``workqueue`` layer unless the
user chose one (``NUMBA_THREADING_LAYER``; set for numba's import when numba is not
imported yet: the rest of knnx imports kernel modules through :func:`lazy`). Parallel (``prange``) kernels run between
BLAS products; with the OpenMP layer the idle OpenMP threads spin and starve
OpenBLAS on a small machine (measured here, 2 cores, when screening was a prange
kernel: 7.5 ms vs 0.35 ms per block). ``workqueue`` threads do not spin.

``workqueue`` aborts the process when two Python threads launch parallel kernels at
the same time, so every launch of a ``parallel=True`` kernel holds
:data:`PARALLEL_LOCK`: knnx may be called from several threads (a threading
backend of joblib, a web server). The serial kernels release the GIL and need no
lock.

A parallel kernel with a serial twin (the same row body, ``range`` for ``prange``) is
started by :func:`launch`, which takes the twin for small inputs: launching a parallel
kernel costs 0.2-0.5 ms on 2 cores, more than a small search or vote takes.

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

PARALLEL_LOCK = threading.Lock()


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


def launch(parallel_kernel, serial_kernel, work, min_work, *args):
    """Run ``parallel_kernel(*args)`` (under PARALLEL_LOCK) when ``work`` (element
    operations) reaches ``min_work`` and numba has more than one thread, else its serial
    twin: the same results, bit for bit (every output element is computed by one thread,
    in the same order)."""
    import numba

    if work >= min_work and numba.get_num_threads() > 1:
        with PARALLEL_LOCK:
            parallel_kernel(*args)
    else:
        serial_kernel(*args)
