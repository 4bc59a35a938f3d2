"""Algorithm registry: spec name -> estimator class.

Each class carries ``_parameter_constraints``; spec validation checks every grid
value against it, and ``NEIGHBOR_PARAMS`` names the parameter (if any) that may not
exceed the size of the training part (less a slack).
"""

from knnx.knn import KNNClassifier, KNNLpoClassifier

ALGORITHMS = {
    "knn": KNNClassifier,
    "knn_lpo": KNNLpoClassifier,
}

# Parameter that counts training points, checked against each training part:
# (name, slack) requires value <= n_train - slack.
NEIGHBOR_PARAMS = {"knn": ("k", 0), "knn_lpo": ("p", 1)}
