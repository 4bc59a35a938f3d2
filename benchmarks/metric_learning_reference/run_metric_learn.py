"""metric-learn 0.7.0's side, in the isolated environment /tmp/mlref: LMNN(n_neighbors=3,
random_state=0), ITML_Supervised(random_state=fold), LFDA(k=7) (embedding_type "weighted"), every
other parameter at its default, on the folds folds.py made (see common.py). Writes
/tmp/metric_learning_reference/metric_learn.csv and the components_.

LMNN on digits runs each fold in a child process (``python run_metric_learn.py lmnn digits FOLD``)
killed after LIMIT seconds of wall time (the child's start-up included); such a fold is recorded
as "did not finish in 900 s".

Each row's note gives what metric-learn chose itself: LMNN's init for init="auto" and the k
LFDA used (it lowers k to d - 1 when k >= d, with a warning).
"""

import subprocess
import sys
import warnings

import metric_learn
from common import DATASETS, N_FOLDS, SCRATCH, append, fold_rows, record, warm_up
from metric_learn._util import _auto_select_init

# a renamed keyword's notice at every call into scikit-learn 1.7's validation (kept out of the log)
warnings.filterwarnings("ignore", message="'force_all_finite' was renamed")

LIMIT = 900  # seconds per metric-learn LMNN digits fold
LEARNERS = {
    "lmnn": lambda fold: metric_learn.LMNN(n_neighbors=3, random_state=0),
    "itml": lambda fold: metric_learn.ITML_Supervised(random_state=fold),
    "lfda": lambda fold: metric_learn.LFDA(k=7),
}


def chosen(method, dataset):
    """The setting metric-learn picks itself on this dataset, as its code picks it."""
    X_train, y_train, _, _ = fold_rows(dataset, 0)
    n, d = X_train.shape
    if method == "lmnn":
        return f"init auto -> {_auto_select_init(True, d, n, d, len(set(y_train)))}"
    if method == "lfda":
        return f"k used {d - 1 if 7 >= d else 7}"
    return ""


def run(method, dataset, fold):
    """One fold in this process."""
    return record("metric_learn", method, dataset, fold, LEARNERS[method](fold), chosen(method, dataset))


def run_limited(method, dataset, fold):
    """One fold in a child process, stopped after LIMIT seconds."""
    try:
        subprocess.run([sys.executable, __file__, method, dataset, str(fold)], check=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        row = {"side": "metric_learn", "method": method, "dataset": dataset, "fold": fold}
        append(SCRATCH / "metric_learn.csv", row | {"note": f"did not finish in {LIMIT} s"})
        print(f"metric_learn {method} {dataset} fold {fold}: did not finish in {LIMIT} s", flush=True)


def main():
    (SCRATCH / "metric_learn.csv").unlink(missing_ok=True)
    for method, make in LEARNERS.items():
        warm_up(make(0))
        for dataset in DATASETS:
            for fold in range(N_FOLDS):
                if (method, dataset) == ("lmnn", "digits"):
                    run_limited(method, dataset, fold)
                else:
                    run(method, dataset, fold)


if __name__ == "__main__":
    if len(sys.argv) == 4:
        run(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    else:
        main()
