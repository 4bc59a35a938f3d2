"""The protocol both run scripts share (numpy and scikit-learn only: it is imported in the knnx
environment and in the isolated metric-learn one).

A fold's rows come from ``sklearn.datasets`` and are checked against the copy ``folds.py`` saved
with the fold numbers; a StandardScaler is fitted on the training rows; the learner is fitted on
the scaled training rows (timed with ``time.perf_counter``); ``KNeighborsClassifier(n_neighbors=3)``
is fitted on the transformed training rows and scored on the transformed test rows. One CSV row
per (side, method, dataset, fold) is appended to ``SCRATCH / f"{side}.csv"`` and the learner's
``components_`` saved beside it.
"""

import csv
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

SCRATCH = Path("/tmp/metric_learning_reference")
DATASETS = {"iris": load_iris, "wine": load_wine, "digits": load_digits}
METHODS = ("lmnn", "itml", "lfda")
N_FOLDS = 5
FIELDS = ("side", "method", "dataset", "fold", "accuracy", "fit_seconds", "n_iter", "objective", "note")


def fold_rows(dataset, fold):
    """``(X_train, y_train, X_test, y_test)`` of one fold, scaled by a StandardScaler fitted on the
    training rows (a column constant on them stays 0 there: scikit-learn divides it by 1)."""
    saved = np.load(SCRATCH / f"folds_{dataset}.npz")
    X, y = DATASETS[dataset](return_X_y=True)
    if not (np.array_equal(X, saved["X"]) and np.array_equal(y, saved["y"])):
        raise RuntimeError(f"{dataset}: sklearn.datasets gives other rows than folds.py saved")
    test = saved["fold"] == fold
    scaler = StandardScaler().fit(X[~test])
    return scaler.transform(X[~test]), y[~test], scaler.transform(X[test]), y[test]


def record(side, method, dataset, fold, learner, note=""):
    """Run one fold with ``learner`` (unfitted), append its CSV row, save its components_ and
    return the row. An exception is recorded in ``note`` (accuracy left empty)."""
    row = dict.fromkeys(FIELDS, "") | {"side": side, "method": method, "dataset": dataset, "fold": fold}
    notes = [note] if note else []
    try:
        X_train, y_train, X_test, y_test = fold_rows(dataset, fold)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # metric-learn 0.7.0 under scikit-learn 1.7: a renamed keyword's notice at every call
            warnings.filterwarnings("ignore", message="'force_all_finite' was renamed")
            start = time.perf_counter()
            learner.fit(X_train, y_train)
            row["fit_seconds"] = time.perf_counter() - start
        notes += sorted({f"{w.category.__name__}: {w.message}" for w in caught})
        np.save(SCRATCH / f"components_{side}_{method}_{dataset}_{fold}.npy", learner.components_)
        knn = KNeighborsClassifier(n_neighbors=3).fit(learner.transform(X_train), y_train)
        row["accuracy"] = knn.score(learner.transform(X_test), y_test)
        row["n_iter"] = getattr(learner, "n_iter_", "")
        row["objective"] = getattr(learner, "objective_", "")
    except Exception as error:  # recorded, not raised: the other folds still run
        notes.append(f"error: {type(error).__name__}: {str(error).splitlines()[0]}")
        traceback.print_exc()
    row["note"] = "; ".join(notes)
    append(SCRATCH / f"{side}.csv", row)
    print(
        f"{side} {method} {dataset} fold {fold}: acc {row['accuracy']} fit {row['fit_seconds']} s "
        f"n_iter {row['n_iter']} {row['note']}",
        flush=True,
    )
    return row


def append(path, row):
    """Append ``row`` to the CSV at ``path`` (the header first if the file is new)."""
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


def warm_up(learner):
    """Fit ``learner`` once on iris fold 0, untimed (numba compilation or cache loading, first
    calls into BLAS), so that the timed fits measure the fit alone."""
    X_train, y_train, _, _ = fold_rows("iris", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner.fit(X_train, y_train)
