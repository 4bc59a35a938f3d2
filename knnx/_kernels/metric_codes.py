"""The codes of the metric kernels (:mod:`knnx._kernels.metrics`), in a module of their own
without numba: validation fits metrics (their codes) without loading a kernel."""

MANHATTAN = 1
CHEBYSHEV = 2
MINKOWSKI = 3
HAMMING = 4
HEOM = 5
HVDM = 6
GOWER = 7
PRECOMPUTED = 8

# Attribute kinds (the ``kinds`` argument).
NUMERIC = 0
NOMINAL = 1
