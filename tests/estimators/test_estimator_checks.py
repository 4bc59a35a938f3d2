"""scikit-learn's estimator checks, once, over every estimator knnx ships and every
variant whose code differs (a metric, a tie rule, a chooser, a loss): one test per
(estimator, check), so the checks spread over the test workers.

An expected failure is named with its reason; each is a documented difference from
scikit-learn's conventions, shown by its own test (test_knn's
``test_predict_differs_from_argmax_proba_only_on_vote_ties`` for the vote ties).
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import knnx.reduction as R
from knnx import ALGORITHMS, GNNBClassifier, KNNClassifier, UNNClassifier
from knnx.estimators.baselines import SGD_BUDGETS, SVMRBF, AdaBoostTrees, SGDBudget, SubsampledKNN, SVMLinear
from knnx.estimators.knn import KNNLpoClassifier
from knnx.estimators.unn import UNNCVClassifier
from knnx.metric_learning import ITML, LFDA, LMNN
from knnx.steps.builtin import Encode, Scale

# knnx's vote tie rule (the nearest neighbour's class among the tied ones) differs from
# scikit-learn's convention that predict equals argmax(predict_proba) (the smallest
# tied class): check_classifiers_train meets vote ties whenever k can be even or the
# classes exceed two.
TIE_RULE = "vote ties: predict takes the nearest tied class, argmax(predict_proba) the first"
TIES = {"check_classifiers_train": TIE_RULE}
NOT_PAIRWISE = "check_decision_proba_consistency gives a pairwise (precomputed) estimator feature rows"
RANDOM_BY_POSITION = "tie='random' draws by query row position: a tied row's class follows its position"
RANDOM_TIES = {
    "check_classifiers_train": TIE_RULE,
    "check_methods_sample_order_invariance": RANDOM_BY_POSITION,
    "check_methods_subset_invariance": RANDOM_BY_POSITION,
}
# SGD_2 makes k single-example updates: with k = 5 it cannot reach scikit-learn's accuracy
# threshold on the training data, by design (the paper's "equivalent" budget).
FEW_UPDATES = {"check_classifiers_train": "Tk/m: k updates are too few to fit the training data"}

# (estimator, its expected failures): the registered algorithms with their defaults,
# then the variants. An expected failure that passes fails the test (strict), so the
# list cannot go stale.
REGISTERED = {"knn_lpo": TIES, "knn_sample": TIES}
CASES = [(ALGORITHMS[name](), REGISTERED.get(name, {})) for name in sorted(ALGORITHMS)]
CASES += [
    # kNN: weights, tie rules, metrics
    (KNNClassifier(k=3, weights="distance"), {}),
    (KNNClassifier(k=2, tie="random", seed=1), RANDOM_TIES),
    (KNNClassifier(k=2, tie="lowest"), {}),
    (KNNLpoClassifier(tie="lowest"), {}),
    (KNNClassifier(k=3, metric="manhattan"), TIES),
    (KNNClassifier(k=3, weights="distance", metric="hvdm"), {}),
    (KNNClassifier(k=3, metric="heom"), TIES),
    (KNNClassifier(k=3, metric="minkowski", metric_params={"p": 3}), TIES),
    (KNNClassifier(k=3, metric="precomputed"), TIES),
    (KNNLpoClassifier(metric="chebyshev"), TIES),
    (KNNLpoClassifier(metric="gower", tie="lowest"), {}),
    # UNN and GNNB: choosers, losses, permissible functions, metrics
    (UNNClassifier(loss="matsushita", chooser="lazy"), {}),
    (UNNClassifier(loss="logistic", smoothing="normalized"), {}),
    (UNNClassifier(metric="manhattan"), {}),
    (UNNClassifier(metric="hvdm"), {}),
    (UNNClassifier(metric="precomputed"), {"check_decision_proba_consistency": NOT_PAIRWISE}),
    (UNNCVClassifier(metric="chebyshev"), {}),
    (GNNBClassifier(chooser="largest_delta"), {}),
    (GNNBClassifier(phi="squared"), {}),
    (GNNBClassifier(phi="matsushita", seed=1), {}),
    (GNNBClassifier(metric="manhattan"), {}),
    (GNNBClassifier(metric="gower"), {}),
    (
        GNNBClassifier(metric="precomputed", prototypes="leveraged"),
        {"check_decision_proba_consistency": NOT_PAIRWISE},
    ),
    (SubsampledKNN(metric="manhattan"), TIES),
    (SubsampledKNN(metric="precomputed", fraction=0.7), {}),
    # the baselines of the GNNB paper
    *[(SGDBudget(budget=b), FEW_UPDATES if b == "Tk/m" else {}) for b in SGD_BUDGETS],
    *[(AdaBoostTrees(base=b, max_rounds=50), {}) for b in ("cart2", "cart3", "random3", "random_full")],
    (SVMRBF(), {}),
    (SVMLinear(), {}),
    # metric learners, prototype selections and generations, pipeline steps
    (LMNN(k=1, max_iter=20, min_iter=2), {}),
    (ITML(max_iter=20), {}),
    (LFDA(), {}),
    *[
        (getattr(R, name)(), {})
        for name in ("ENN", "RENN", "AllKNN", "TomekLinks", "NCR", "Multiedit", "CNN")
    ],
    *[
        (getattr(R, name)(), {})
        for name in ("RNN", "FCNN", "OSS", "DROP3", "ICF", "RMHC", "IB3", "HMNEI", "LVQ")
    ],
    (R.SSMA(max_evaluations=200), {}),
    (Scale(), {}),
    (Scale(method="minmax"), {}),
    (Encode(), {}),
]


def _unique(cases):
    """The cases without a repeat (the same class and parameters: the same repr)."""
    seen = {}
    for est, expected in cases:
        seen.setdefault(repr(est), (est, expected))
    return list(seen.values())


UNIQUE = _unique(CASES)
EXPECTED = {id(est): expected for est, expected in UNIQUE}


def test_no_case_is_checked_twice():
    assert len({repr(e) for e, _ in UNIQUE}) == len(UNIQUE)
    # every registered algorithm is among them, with its defaults
    assert {repr(ALGORITHMS[n]()) for n in ALGORITHMS} <= {repr(e) for e, _ in UNIQUE}


@pytest.mark.filterwarnings("ignore")  # convergence and size warnings of the checks' tiny data
@parametrize_with_checks([est for est, _ in UNIQUE], expected_failed_checks=lambda est: EXPECTED[id(est)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
