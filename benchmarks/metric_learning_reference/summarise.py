"""Merge both sides' rows into results.csv and write summary.md (run in the knnx environment,
after run_knnx.py and run_metric_learn.py).

summary.md gives, per method x dataset, over the folds each side finished: the mean accuracy of
each side, knnx's minus metric-learn's in points, the median fit seconds of each side and their
ratio (metric-learn / knnx), the median n_iter of each; the folds a side did not finish;
a check that the accuracies recomputed here from the saved components_ (``X @ L.T``, this
environment's scikit-learn) equal those recorded; for LFDA, the absolute cosine between row i
of knnx's components_ and row i of metric-learn's (both ordered by eigenvalue), per dataset.
"""

import csv
from pathlib import Path

import numpy as np
from common import DATASETS, METHODS, N_FOLDS, SCRATCH, fold_rows
from sklearn.neighbors import KNeighborsClassifier

HERE = Path(__file__).parent
SIDES = ("knnx", "metric_learn")


def load_rows():
    """Both sides' rows, ordered by method, dataset, side and fold."""
    rows = []
    for side in SIDES:
        with open(SCRATCH / f"{side}.csv", newline="") as f:
            rows += list(csv.DictReader(f))
    order = {m: i for i, m in enumerate(METHODS)} | {d: i for i, d in enumerate(DATASETS)}
    rows.sort(key=lambda r: (order[r["method"]], order[r["dataset"]], r["side"], int(r["fold"])))
    return rows


def number(value):
    """A CSV field as a float (NaN if empty)."""
    return float(value) if value not in ("", None) else np.nan


def stat(cell, side, field, how):
    """``how`` of ``field`` over the folds ``side`` finished in one cell (NaN if none)."""
    values = [number(r[field]) for (s, _), r in cell.items() if s == side and r["accuracy"] != ""]
    return how(values) if values else np.nan


def fmt(value, spec):
    return "—" if np.isnan(value) else format(value, spec)


def main_table(rows):
    """The table's lines, and the folds a side did not finish (with the reason)."""
    head = (
        "| method | dataset | folds knnx / ml | acc knnx % | acc metric-learn % | diff (points) | fit s knnx "
        "| fit s metric-learn | ratio ml/knnx | n_iter knnx | n_iter metric-learn |"
    )
    lines, unfinished = [head, "|" + "---|" * 11], {}
    for method in METHODS:
        for dataset in DATASETS:
            cell = {
                (r["side"], int(r["fold"])): r
                for r in rows
                if (r["method"], r["dataset"]) == (method, dataset)
            }
            for (side, fold), r in cell.items():
                if r["accuracy"] == "":
                    reason = f"{method} {dataset}, {side}: {r['note'].split('; ')[-1]}"
                    unfinished.setdefault(reason, []).append(fold)
            done = {s: sum(r["accuracy"] != "" for (t, _), r in cell.items() if t == s) for s in SIDES}
            acc = {s: 100 * stat(cell, s, "accuracy", np.mean) for s in SIDES}
            fit = {s: stat(cell, s, "fit_seconds", np.median) for s in SIDES}
            it = {s: stat(cell, s, "n_iter", np.median) for s in SIDES}
            diff = acc["knnx"] - acc["metric_learn"] if done["knnx"] == done["metric_learn"] else np.nan
            lines.append(
                f"| {method} | {dataset} | {done['knnx']} / {done['metric_learn']} | {fmt(acc['knnx'], '.2f')} | "
                f"{fmt(acc['metric_learn'], '.2f')} | {fmt(diff, '+.2f')} | {fmt(fit['knnx'], '.3g')} | "
                f"{fmt(fit['metric_learn'], '.3g')} | {fmt(fit['metric_learn'] / fit['knnx'], '.3g')} | "
                f"{fmt(it['knnx'], 'g')} | {fmt(it['metric_learn'], 'g')} |"
            )
    return lines, [f"{reason} (folds {', '.join(map(str, folds))})" for reason, folds in unfinished.items()]


def recheck(rows):
    """Largest |accuracy recomputed from the saved components_ - accuracy recorded|, per side."""
    worst = dict.fromkeys(SIDES, 0.0)
    for r in rows:
        path = SCRATCH / f"components_{r['side']}_{r['method']}_{r['dataset']}_{r['fold']}.npy"
        if r["accuracy"] == "" or not path.exists():
            continue
        L = np.load(path)
        X_train, y_train, X_test, y_test = fold_rows(r["dataset"], int(r["fold"]))
        knn = KNeighborsClassifier(n_neighbors=3).fit(X_train @ L.T, y_train)
        worst[r["side"]] = max(worst[r["side"]], abs(knn.score(X_test @ L.T, y_test) - float(r["accuracy"])))
    return worst


def lfda_cosines():
    """The LFDA table's lines: |cosine| between corresponding rows of the two maps."""
    lines = [
        "| dataset | metric-learn's k | metric-learn's components_ | rows compared | min | median "
        "| min over the first C - 1 rows |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset in DATASETS:
        n_classes = len(np.unique(np.load(SCRATCH / f"folds_{dataset}.npz")["y"]))
        cosines, nan_rows, imag = [], 0, 0.0
        for fold in range(N_FOLDS):
            a, b = (np.load(SCRATCH / f"components_{s}_lfda_{dataset}_{fold}.npy") for s in SIDES)
            nan_rows += int(np.isnan(b).any(axis=1).sum())
            imag = max(imag, float(np.nanmax(np.abs(np.imag(b)))))
            norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                cosines.append(np.abs(np.sum(a * b, axis=1)) / norms)
        c = np.array(cosines)  # folds x rows; nan where a row is 0 or NaN on a side
        d = c.shape[1]
        kind = "real" if imag == 0 else f"complex (largest abs(imag) {imag:.3g})"
        kind += f", {nan_rows} rows with NaN" if nan_rows else ""
        lead = c[:, : n_classes - 1]
        lines.append(
            f"| {dataset} | {7 if d > 7 else d - 1} | {kind} | {np.isfinite(c).sum()} of {c.size} | "
            f"{np.nanmin(c):.4f} | {np.nanmedian(c):.4f} | {np.nanmin(lead):.4f} |"
        )
    return lines


def main():
    rows = load_rows()
    with open(HERE / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, rows[0].keys())
        writer.writeheader()
        writer.writerows(rows)
    table, unfinished = main_table(rows)
    worst = recheck(rows)
    text = [
        "# knnx vs metric-learn 0.7.0: metric learners, 3-NN accuracy and fit time",
        "",
        "5-fold stratified CV, StandardScaler fitted on the training rows, 3-NN on the learned map. "
        "Each side over the folds it finished (folds knnx / ml); diff = knnx - metric-learn in accuracy "
        "points (given when both finished the same folds); fit s = median seconds of the learner's fit; "
        "ratio = metric-learn's median / knnx's; n_iter = median of each library's own n_iter_.",
        "",
        *table,
        "",
        "Folds a side did not finish: " + ("; ".join(unfinished) if unfinished else "none") + ".",
        "",
        "Accuracy recomputed here from the saved components_ (X @ L.T, scikit-learn "
        f"{__import__('sklearn').__version__}), largest |difference| from the recorded one: "
        + ", ".join(f"{s} {w:.4f}" for s, w in worst.items())
        + ".",
        "",
        "## LFDA: |cosine| between row i of knnx's components_ and row i of metric-learn's",
        "",
        "Over all folds and rows (rows ordered by eigenvalue on both sides); a row that is 0 or "
        "holds a NaN on either side has no cosine (not counted). For complex rows, "
        "abs(sum(a * b)) / (norm(a) norm(b)).",
        "",
        *lfda_cosines(),
        "",
    ]
    (HERE / "summary.md").write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
