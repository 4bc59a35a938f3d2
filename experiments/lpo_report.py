"""Side-by-side reports of the Celisse & Mary-Huard (2011) targets against the paper.

    python experiments/lpo_report.py select RESULTS_P RESULTS_N OUT   # make lpo-select
    python experiments/lpo_report.py active RESULTS OUT               # make lpo-active

Reads knnx result folders only (results.csv) and the paper's numbers in
experiments/paper_values/; writes OUT/paper.md and figures. Every number printed
comes from those files.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from knnx.results import read_results

PAPER = Path(__file__).resolve().parent / "paper_values"


def _md(frame):
    """A DataFrame as a Markdown table (numbers to 4 significant digits)."""

    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _chosen_and_oracle(frame):
    """Per dataset: chosen k of every knn_lpo setting, and the test-optimal k of knn."""
    frame = frame.assign(value=frame["value"].astype(float))
    params = frame["params"].map(json.loads)
    lpo = frame[(frame.algorithm == "knn_lpo") & (frame.metric == "chosen_k")]
    chosen = pd.DataFrame(
        {
            "dataset": lpo["dataset"],
            "p": [params[i]["p"] for i in lpo.index],
            "k_p": lpo["value"].astype(int),
        }
    )
    knn = frame[(frame.algorithm == "knn") & (frame.metric == "error")]
    knn = knn.assign(k=[params[i]["k"] for i in knn.index])
    oracle = {}
    test_err = {}
    for ds, part in knn.groupby("dataset"):
        part = part.sort_values("k")
        best = part["value"].min()
        oracle[ds] = int(part[part["value"] <= best + 1e-12]["k"].iloc[0])  # smallest k of minimal error
        test_err[ds] = dict(zip(part["k"], part["value"], strict=True))
    chosen["test_k"] = chosen["dataset"].map(oracle)
    chosen["test_error_at_k_p"] = [
        test_err[d][k] for d, k in zip(chosen["dataset"], chosen["k_p"], strict=True)
    ]
    chosen["test_error_best"] = [min(test_err[d].values()) for d in chosen["dataset"]]
    return chosen


def report_select(results_p, results_n, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    by_p = _chosen_and_oracle(read_results(Path(results_p) / "results.csv"))
    by_n = _chosen_and_oracle(read_results(Path(results_n) / "results.csv"))
    by_n["n"] = by_n["dataset"].str.extract(r"-n(\d+)-")[0].astype(int)
    table_p = (
        by_p.groupby("p")
        .agg(
            k_p_median=("k_p", "median"),
            k_p_mean=("k_p", "mean"),
            k_p_min=("k_p", "min"),
            k_p_max=("k_p", "max"),
            test_error_at_k_p=("test_error_at_k_p", "mean"),
            samples=("k_p", "size"),
        )
        .reset_index()
    )
    oracle = by_p.drop_duplicates("dataset")[["test_k", "test_error_best"]]
    paper = pd.read_csv(PAPER / "lpo_table2.csv", dtype=str, keep_default_na=False)
    lines = [
        "# Choosing k by exact leave-p-out (Celisse & Mary-Huard 2011, Sec. 3)\n",
        "Simulated data of Sec. 4.3, ten samples per setting, 10 000 test points each. knnx numbers are",
        "medians (and ranges) over the samples; the paper's are single values read from Table 2.\n",
        "## Table 2: q = 0.3, n = 200 (n is not stated in the paper)\n",
        "| p range (paper) | paper k | knnx p | knnx k_p median | knnx k_p range | knnx test error at k_p |",
        "|---|---|---|---|---|---|",
    ]
    for row in paper.itertuples():
        if row.p_range == "test":
            continue
        lo = int(row.p_low)
        hi = int(row.p_high) if row.p_high else 10**9
        for r in table_p[(table_p.p >= lo) & (table_p.p <= hi)].itertuples():
            lines.append(
                f"| {row.p_range} | {row.paper_k} | {r.p} | {r.k_p_median:g} | {r.k_p_min}-{r.k_p_max} | "
                f"{r.test_error_at_k_p:.4f} |"
            )
    paper_test = paper[paper.p_range == "test"].paper_k.item()
    lines.append(
        f"| test sample | {paper_test} | - | {oracle.test_k.median():g} | {oracle.test_k.min()}-{oracle.test_k.max()} | "
        f"{oracle.test_error_best.mean():.4f} |"
    )
    lines.append("\nEvery p that knnx ran, including those outside the paper's ranges:\n")
    lines.append(_md(table_p))
    table_n = (
        by_n.groupby("n")
        .agg(k_p_median=("k_p", "median"), test_k_median=("test_k", "median"), samples=("k_p", "size"))
        .reset_index()
    )
    lines.append("\n## Fig. 2 (left): q = 0.2, p = 10, k_p and the test-optimal k against n\n")
    lines.append(_md(table_n))
    (out / "paper.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    fig = Figure(figsize=(10, 3.8), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(table_n["n"], table_n["k_p_median"], "ko-", label="k_p (p = 10), median")
    ax1.plot(table_n["n"], table_n["test_k_median"], "rs--", label="test-optimal k, median")
    ax1.set_xscale("log")
    ax1.set_xlabel("n")
    ax1.set_ylabel("k")
    ax1.set_title("q = 0.2 (Fig. 2 left)")
    ax1.legend(fontsize=8)
    ax2.plot(table_p["p"], table_p["k_p_median"], "ko-", label="k_p, median")
    ax2.axhline(oracle.test_k.median(), color="r", ls="--", label="test-optimal k, median")
    ax2.set_xscale("log")
    ax2.set_xlabel("p")
    ax2.set_ylabel("k")
    ax2.set_title("q = 0.3, n = 200 (Table 2)")
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.savefig(out / "lpo_select.png", dpi=110)
    print((out / "paper.md").read_text(encoding="utf-8"))


def report_active(results, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = read_results(Path(results) / "results.csv")
    frame = frame.assign(value=frame["value"].astype(float))
    last = frame[(frame.metric == "error") & (frame["round"] == frame["round"].max())]
    ours = last.groupby(["dataset", "algorithm"])["value"].agg(["mean", "std", "size"]).reset_index()
    n_final = int(last["n_train"].astype(int).iloc[0])
    paper = pd.read_csv(PAPER / "lpo_active.csv")
    lines = [
        "# LpO query-by-committee against passive LpO-tuned kNN (Celisse & Mary-Huard 2011, Sec. 4.3)\n",
        f"Error on the remaining pool after the last round (training set of {n_final}); knnx: mean ± std",
        "over repetitions. Paired: both strategies of a repetition share the start set and pool.\n",
        "| dataset | knnx lpo_qbc | knnx passive_lpo | qbc - passive (paired mean) | paper lpo_qbc | paper passive |",
        "|---|---|---|---|---|---|",
    ]
    for ds in dict.fromkeys(ours["dataset"]):
        sub = ours[ours.dataset == ds].set_index("algorithm")
        pair = last[last.dataset == ds].pivot_table(index="repeat", columns="algorithm", values="value")
        diff = (
            (pair["lpo_qbc"] - pair["passive_lpo"]).mean()
            if {"lpo_qbc", "passive_lpo"} <= set(pair)
            else np.nan
        )
        key = "spambase" if ds.startswith("spambase") else "simulated"
        pv = paper[paper.dataset == key].set_index("strategy")["paper_error"]

        def cell(algo, sub=sub):
            if algo not in sub.index:
                return "-"
            r = sub.loc[algo]
            return f"{r['mean']:.4f} ± {0.0 if np.isnan(r['std']) else r['std']:.4f} (n={int(r['size'])})"

        lines.append(
            f"| {ds} | {cell('lpo_qbc')} | {cell('passive_lpo')} | {diff:+.4f} | "
            f"{pv.get('lpo_qbc', np.nan):.3f} | {pv.get('passive_lpo', np.nan):.3f} |"
        )
    keys = {"spambase" if ds.startswith("spambase") else "simulated" for ds in ours["dataset"]}
    notes = paper[paper.dataset.isin(keys)]["note"].dropna().astype(str)
    lines.append("\nPaper: " + " ".join(notes))
    (out / "paper.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    curves = frame[frame.metric == "error"].groupby(["dataset", "algorithm", "n_train"])["value"].mean()
    datasets = list(dict.fromkeys(ours["dataset"]))
    fig = Figure(figsize=(4.2 * len(datasets), 3.6), layout="constrained")
    for ax, ds in zip(fig.subplots(1, len(datasets), squeeze=False)[0], datasets, strict=True):
        key = "spambase" if ds.startswith("spambase") else "simulated"
        for algo, marker, color in (("lpo_qbc", "o", "C0"), ("passive_lpo", "+", "C1")):
            if (ds, algo) in curves.index.droplevel(2):
                c = curves.loc[(ds, algo)]
                ax.plot(
                    c.index.astype(int), c.to_numpy(), marker=marker, ms=3, color=color, label=f"knnx {algo}"
                )
            pv = paper[(paper.dataset == key) & (paper.strategy == algo)]
            if len(pv):
                ax.plot(pv.n_train, pv.paper_error, "*", ms=12, color=color, mec="k", label=f"paper {algo}")
        ax.set_title(ds, fontsize=9)
        ax.set_xlabel("training set size")
        ax.set_ylabel("error on the pool")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.savefig(out / "paper.png", dpi=110)
    print((out / "paper.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "select" and len(sys.argv) == 5:
        report_select(*sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "active" and len(sys.argv) == 4:
        report_active(*sys.argv[2:])
    else:
        sys.exit(__doc__)
