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
"""

import os
import threading

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"

PARALLEL_LOCK = threading.Lock()
