"""knnx's side, in /work/main/.venv: LMNN(k=3), ITML(random_state=fold), LFDA(k=7,
embedding="weighted"), every other parameter at its default, on every fold of every dataset
(see common.py). Writes /tmp/metric_learning_reference/knnx.csv and the components_."""

from common import DATASETS, N_FOLDS, SCRATCH, record, warm_up

from knnx.metric_learning import ITML, LFDA, LMNN

LEARNERS = {
    "lmnn": lambda fold: LMNN(k=3),
    "itml": lambda fold: ITML(random_state=fold),
    "lfda": lambda fold: LFDA(k=7, embedding="weighted"),
}


def main():
    (SCRATCH / "knnx.csv").unlink(missing_ok=True)
    for method, make in LEARNERS.items():
        warm_up(make(0))
        for dataset in DATASETS:
            for fold in range(N_FOLDS):
                record("knnx", method, dataset, fold, make(fold))


if __name__ == "__main__":
    main()
