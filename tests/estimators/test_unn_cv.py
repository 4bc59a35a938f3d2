"""theta by inner cross-validation (UNNCVClassifier) and the papers' baselines."""

import numpy as np
import pytest

from knnx import KNNClassifier, UNNClassifier
from knnx.estimators.baselines import ITMLKNN, LinearSVMPlatt, SubsampledKNN
from knnx.estimators.unn import UNNCVClassifier, stratified_folds


def _data(seed=0, m=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    y = (X[:, 0] + 0.6 * rng.normal(size=m) > 0).astype(int) + (X[:, 1] > 1).astype(int)
    return X, y


def test_stratified_folds_balance_each_class():
    y = np.array([0] * 7 + [1] * 4 + [2] * 1)
    fold = stratified_folds(y, 2, seed=3)
    for cls in (0, 1):
        counts = np.bincount(fold[y == cls], minlength=2)
        assert abs(counts[0] - counts[1]) <= 1
    np.testing.assert_array_equal(fold, stratified_folds(y, 2, seed=3))


def test_theta_path_equals_separate_fits():
    """cv_error_ from one run per fold read at several T equals fitting each theta anew."""
    X, y = _data()
    model = UNNCVClassifier(k=4, n_thetas=5, cv=2, seed=1).fit(X, y)
    fold = stratified_folds(y, 2, 1)
    expected = np.zeros(5)
    for f in range(2):
        tr, te = fold != f, fold == f
        for s, theta in enumerate(np.arange(1, 6) / 5):
            unn = UNNClassifier(k=4, n_iter=max(1, round(theta * tr.sum())), seed=1).fit(X[tr], y[tr])
            expected[s] += np.mean(unn.predict(X[te]) != y[te]) / 2
    np.testing.assert_allclose(model.cv_error_, expected, rtol=0, atol=1e-15)
    best = (np.argmin(expected) + 1) / 5
    assert model.theta_ == best and model.reported_["chosen_theta"] == best
    refit = UNNClassifier(k=4, theta=best, seed=1).fit(X, y)
    np.testing.assert_array_equal(model.alpha_, refit.alpha_)
    np.testing.assert_array_equal(model.predict(X), refit.predict(X))


def test_subsampled_knn_is_knn_on_its_sample():
    X, y = _data(2)
    model = SubsampledKNN(k=3, fraction=0.4, seed=5).fit(X, y)
    assert len(model.sample_) == 36 and len(np.unique(model.sample_)) == 36
    knn = KNNClassifier(k=3).fit(X[model.sample_], y[model.sample_])
    Q = np.random.default_rng(1).normal(size=(40, 2))
    np.testing.assert_array_equal(model.predict(Q), knn.predict(Q))
    assert model.reported_["prototype_fraction"] == pytest.approx(0.4)


def test_linear_svm_platt_matches_scikit_learn():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.svm import LinearSVC

    X, y = _data(3)
    ours = LinearSVMPlatt(C=0.5).fit(X, y).predict_proba(X)
    ref = CalibratedClassifierCV(LinearSVC(C=0.5, random_state=0), method="sigmoid", cv=5, ensemble=False)
    np.testing.assert_allclose(ours, ref.fit(X, y).predict_proba(X), rtol=1e-12)
    np.testing.assert_allclose(ours.sum(axis=1), 1.0)


def test_itml_knn_is_knn_after_the_learned_map():
    """ITMLKNN(k, seed) is knnx's ITML(random_state=seed), then kNN on the mapped rows."""
    from knnx.metric_learning import ITML

    X, y = _data(4, m=60)
    model = ITMLKNN(k=3, seed=2).fit(X, y)
    itml = ITML(random_state=2).fit(X, y)
    knn = KNNClassifier(k=3).fit(itml.transform(X), y)
    np.testing.assert_array_equal(model.predict(X), knn.predict(itml.transform(X)))
    np.testing.assert_array_equal(model.predict_proba(X), knn.predict_proba(itml.transform(X)))
