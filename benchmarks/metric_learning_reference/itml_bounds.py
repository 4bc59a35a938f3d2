"""Why knnx's ITML and metric-learn's ITML_Supervised differ in accuracy: their bounds.

In the knnx environment, on the same folds as run_knnx.py (common.py), 3-NN accuracy of
knnx's ITML(random_state=fold) with its own bounds (the 5th and 95th percentiles of the
squared distances of the pairs it draws, as the authors' ComputeDistanceExtremes takes
squared Mahalanobis distances) and with metric-learn 0.7.0's convention (the 5th and 95th
percentiles of the unsquared Euclidean distances between the distinct rows of those pairs),
on the same pairs. Prints the mean accuracy (%) per dataset for each.

    ../../.venv/bin/python itml_bounds.py
"""

import numpy as np
from common import N_FOLDS, fold_rows
from sklearn.metrics import pairwise_distances
from sklearn.neighbors import KNeighborsClassifier

from knnx.metric_learning import ITML


def accuracy(model, X, y, X_test, y_test):
    knn = KNeighborsClassifier(n_neighbors=3).fit(model.transform(X), y)
    return knn.score(model.transform(X_test), y_test)


def main():
    for dataset in ("iris", "wine", "digits"):
        own, theirs = [], []
        for fold in range(N_FOLDS):
            X, y, X_test, y_test = fold_rows(dataset, fold)
            model = ITML(random_state=fold).fit(X, y)
            rows = np.unique(np.vstack([X[model.pairs_[:, 0]], X[model.pairs_[:, 1]]]), axis=0)
            bounds = np.percentile(pairwise_distances(rows), (5, 95))
            other = ITML(random_state=fold, bounds=[float(b) for b in bounds]).fit(X, y)
            own.append(accuracy(model, X, y, X_test, y_test))
            theirs.append(accuracy(other, X, y, X_test, y_test))
        print(
            f"{dataset}: knnx's bounds {100 * np.mean(own):.2f} %, metric-learn's convention {100 * np.mean(theirs):.2f} %"
        )


if __name__ == "__main__":
    main()
