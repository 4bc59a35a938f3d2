"""Algorithm registry: spec name -> estimator class.

Each class carries ``_parameter_constraints``; spec validation checks every grid
value against it, and ``max_k_param`` (if any) names the parameter that may not
exceed the size of the training part.
"""

from knnx.knn import KNNClassifier

ALGORITHMS = {
    "knn": KNNClassifier,
}

# Parameter that counts training neighbours, checked against each training part.
NEIGHBOR_PARAMS = {"knn": "k"}
