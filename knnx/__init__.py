"""knnx: nearest-neighbour classification research toolkit.

Public API: estimators (``KNNClassifier``, ``UNNClassifier``, ``GNNBClassifier``,
``WeightedMetricNN``), the exact kernel (``kneighbors``,
``reciprocal_neighbors``) and the store that hands its graphs over (``GraphStore``), exact leave-p-out (``lpo_risk``, ``select_k``), the
runner (``run_spec``, ``validate_spec``), the registries ``DATASETS``,
``GENERATORS``, ``PROTOCOLS``, ``ALGORITHMS``, ``METRICS``, and
``register_algorithm`` / ``register_dataset`` for classes and data of one's own.
"""

from knnx._version import __version__
from knnx.datasets import DATASETS, GENERATORS, load_dataset, register_dataset
from knnx.errors import DataError, KnnxError, ResultsError, SpecError
from knnx.estimators.gnnb import GNNBClassifier
from knnx.estimators.knn import KNNClassifier
from knnx.estimators.registry import ALGORITHMS, register_algorithm
from knnx.estimators.unn import UNNClassifier
from knnx.estimators.weighted import WeightedMetricNN
from knnx.evaluation.metrics import METRICS
from knnx.evaluation.protocols import PROTOCOLS
from knnx.experiment.runner import run_spec
from knnx.lpo.risk import lpo_risk, select_k
from knnx.neighbors.graphs import GraphStore
from knnx.neighbors.search import kneighbors, reciprocal_neighbors
from knnx.spec import validate_spec

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
