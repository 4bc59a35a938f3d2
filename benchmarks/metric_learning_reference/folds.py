"""Make the folds once, in the knnx environment, for both run scripts.

For iris, wine and digits (``sklearn.datasets``): ``StratifiedKFold(n_splits=5, shuffle=True,
random_state=0)``; saves the rows X, the labels y and each row's test fold (0-4) to
``/tmp/metric_learning_reference/folds_<dataset>.npz``.
"""

import numpy as np
from common import DATASETS, N_FOLDS, SCRATCH
from sklearn.model_selection import StratifiedKFold


def main():
    SCRATCH.mkdir(parents=True, exist_ok=True)
    for name, load in DATASETS.items():
        X, y = load(return_X_y=True)
        fold = np.full(len(y), -1)
        splitter = StratifiedKFold(n_splits=N_FOLDS, shuffle=True, random_state=0)
        for f, (_, test) in enumerate(splitter.split(X, y)):
            fold[test] = f
        np.savez(SCRATCH / f"folds_{name}.npz", X=X, y=y, fold=fold)
        print(name, X.shape, "test rows per fold:", np.bincount(fold).tolist())


if __name__ == "__main__":
    main()
