from knnx._version import __version__
from knnx.errors import DataError, KnnxError, ResultsError, SpecError
from knnx.knn import KNNClassifier
from knnx.neighbors import kneighbors, reciprocal_neighbors

__all__ = [
    "KNNClassifier",
    "__version__",
    "kneighbors",
    "reciprocal_neighbors",
    "KnnxError",
    "SpecError",
    "DataError",
    "ResultsError",
]
