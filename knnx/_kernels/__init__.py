"""Private numba kernels. Modules here import nothing from knnx (see STYLE: data flows one way).

Threading layer: on import, knnx selects numba's own ``workqueue`` layer unless the
user chose one (``NUMBA_THREADING_LAYER``). The neighbour search alternates BLAS
products (OpenBLAS threads) with ``prange`` kernels; with the OpenMP layer the idle
OpenMP threads spin and starve OpenBLAS on a small machine (measured here, 2 cores:
screening 7.5 ms vs 0.35 ms per block). ``workqueue`` threads do not spin.
"""

import os

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"
