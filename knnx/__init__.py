"""knnx: nearest-neighbour classification research toolkit.

Public API: estimators (``KNNClassifier``, ``UNNClassifier``, ``GNNBClassifier``,
``WeightedMetricNN``), the exact kernel (``kneighbors``,
``reciprocal_neighbors``) and the store that hands its graphs over (``GraphStore``), exact leave-p-out (``lpo_risk``, ``select_k``), the
runner (``run_spec``, ``validate_spec``), the registries ``DATASETS``,
``GENERATORS``, ``PROTOCOLS``, ``ALGORITHMS``, ``METRICS``, and
``register_algorithm`` / ``register_dataset`` for classes and data of one's own.
"""

import importlib

from knnx._version import __version__
from knnx.errors import DataError, KnnxError, ResultsError, SpecError

# Every other public name is imported on first use (PEP 562): ``import knnx`` (and the
# command line's start-up: ``knnx --help``) loads no numba kernel, no scikit-learn
# estimator and no plotting library until a name that needs one is used.
_LAZY = {
    "DATASETS": "knnx.datasets",
    "GENERATORS": "knnx.datasets",
    "load_dataset": "knnx.datasets",
    "register_dataset": "knnx.datasets",
    "GNNBClassifier": "knnx.estimators.gnnb",
    "KNNClassifier": "knnx.estimators.knn",
    "ALGORITHMS": "knnx.estimators.registry",
    "register_algorithm": "knnx.estimators.registry",
    "UNNClassifier": "knnx.estimators.unn",
    "WeightedMetricNN": "knnx.estimators.weighted",
    "METRICS": "knnx.evaluation.metrics",
    "PROTOCOLS": "knnx.evaluation.protocols",
    "run_spec": "knnx.experiment.runner",
    "lpo_risk": "knnx.lpo.risk",
    "select_k": "knnx.lpo.risk",
    "GraphStore": "knnx.neighbors.graphs",
    "kneighbors": "knnx.neighbors.search",
    "reciprocal_neighbors": "knnx.neighbors.search",
    "validate_spec": "knnx.spec",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'knnx' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    "KNNClassifier",
    "UNNClassifier",
    "GNNBClassifier",
    "WeightedMetricNN",
    "kneighbors",
    "lpo_risk",
    "select_k",
    "reciprocal_neighbors",
    "GraphStore",
    "run_spec",
    "validate_spec",
    "load_dataset",
    "ALGORITHMS",
    "register_algorithm",
    "register_dataset",
    "DATASETS",
    "GENERATORS",
    "METRICS",
    "PROTOCOLS",
    "KnnxError",
    "SpecError",
    "DataError",
    "ResultsError",
]
