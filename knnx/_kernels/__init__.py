"""Private numba kernels. Modules here import nothing from knnx (see STYLE: data flows one way).

Threading layer: on import, knnx selects numba's own ``workqueue`` layer unless the
user chose one (``NUMBA_THREADING_LAYER``). Parallel (``prange``) kernels run between
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
"""

import os
import threading

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"

PARALLEL_LOCK = threading.Lock()


def launch(parallel_kernel, serial_kernel, work, min_work, *args):
    """Run ``parallel_kernel(*args)`` (under PARALLEL_LOCK) when ``work`` (element
    operations) reaches ``min_work`` and numba has more than one thread, else its serial
    twin: the same results, bit for bit (every output element is computed by one thread,
    in the same order)."""
    if work >= min_work and numba.get_num_threads() > 1:
        with PARALLEL_LOCK:
            parallel_kernel(*args)
    else:
        serial_kernel(*args)
