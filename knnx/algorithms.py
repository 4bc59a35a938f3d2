"""Algorithm registry: spec name -> estimator class.

Each class carries ``_parameter_constraints``; spec validation checks every grid
value against it, and ``NEIGHBOR_PARAMS`` names the parameter (if any) that may not
exceed the size of the training part (less a slack). ``LPO_RISK`` maps the
algorithms whose leave-p-out risk has a closed form to the function computing it
(used by ``protocol: {kind: lpo, p: P}``).
"""

from knnx.baselines import ITMLKNN, SVMRBF, AdaBoostTrees, LinearSVMPlatt, SGDBudget, SubsampledKNN, SVMLinear
from knnx.gnnb import GNNBClassifier
from knnx.knn import KNNClassifier, KNNLpoClassifier
from knnx.lpo import lpo_risk
from knnx.unn import UNNClassifier, UNNCVClassifier
from knnx.weighted import WeightedMetricNN

ALGORITHMS = {
    "knn": KNNClassifier,
    "knn_lpo": KNNLpoClassifier,
    "unn": UNNClassifier,
    "unn_cv": UNNCVClassifier,
    "gnnb": GNNBClassifier,
    "weighted_metric": WeightedMetricNN,
    # Baselines of the papers (knnx.baselines).
    "knn_sample": SubsampledKNN,
    "svm_platt": LinearSVMPlatt,
    "itml_knn": ITMLKNN,
    "svm_rbf": SVMRBF,
    "svm_linear": SVMLinear,
    "sgd": SGDBudget,
    "adaboost": AdaBoostTrees,
}

# Parameter that counts training points, checked against each training part:
# (name, slack) requires value <= n_train - slack.
NEIGHBOR_PARAMS = {
    "knn": ("k", 0),
    "knn_lpo": ("p", 1),
    "unn": ("k", 1),
    "unn_cv": ("k", 1),
    "gnnb": ("k", 1),
    "weighted_metric": ("k", 0),
    "knn_sample": ("k", 0),
    "itml_knn": ("k", 0),
}


def _knn_lpo_risk(params, X, y, p):
    """Exact R_LpO of KNNClassifier(**params): Celisse & Mary-Huard's closed form."""
    return float(lpo_risk(X, y, p, params["k"], params["weights"])[-1])


# Algorithms with an exact leave-p-out risk: name -> f(params, X, y, p) -> risk.
LPO_RISK = {"knn": _knn_lpo_risk}
