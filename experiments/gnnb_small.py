"""Sec. 6.3-6.5 of Nock et al. (2014): GNNB against 18 contenders on small domains, beside
the paper (make gnnb-small).

    python experiments/gnnb_small.py RESULTS OUT

RESULTS is the folder of ``knnx run experiments/gnnb_small.yaml``. Writes in OUT:

* ``fig3.md``, ``fig3.png``: per metric (accuracy, macro F-measure, macro recall), the
  mean over domains of each algorithm's five-fold CV mean, ± the standard deviation over
  domains, algorithms by decreasing mean (the paper's Fig. 3);
* ``fig4.md``, ``fig4.png``: per metric, how many domains rank each algorithm 1st, 2nd,
  ... (rank 1 = best; tied values share the best rank), grouped in three tiers like the
  paper's Fig. 4: ranks 1-7, 8-14 and 15-22 (with fewer algorithms the last tier is what
  is left); the ranks come from ``knnx compare`` (:func:`knnx.compare.rank_counts`);
* ``fig5.md``, ``fig5.png``: per metric, for each algorithm the number of (domain, other
  algorithm) pairs where the paired t-test over the five folds of ``knnx compare``
  (paired.csv, two-sided) gives p < 0.1 with the algorithm better / worse (the paper's
  Fig. 5), beside the same counts under Nadeau and Bengio's corrected resampled t-test;
  where the t statistic is undefined, a constant nonzero difference over the folds
  counts as significant and identical values as not (:func:`knnx.compare.paired_tests`);
* ``times.md``, ``times.png``: training and testing time ratios SVM_RBF / GNNB and
  ADABOOST_c3 (CART depth 3 for C4.5) / GNNB, per domain and k (medians over the folds of
  the runner's ``fit_seconds`` / ``predict_seconds``), averaged over domains and regressed on
  1/k (rho = a/k + b, least squares over the four k, r^2) beside the paper's
  851/k + 49 and 9547/k + 398 (Sec. 6.5.4);
* ``paper.md``: the paper's qualitative claims, each marked reproduced or not from these
  numbers, and the domains missing.

Every number printed comes from RESULTS/results.csv and
experiments/paper_values/gnnb_small.csv. Without gnnb rows (a stand-in run), UNN(log)
takes GNNB's place in the time ratios and the GNNB claims are marked "not checkable".

Run time of the full job measured when it was set up (``--jobs 2`` on a 2-core machine
shared with other jobs): 19 min (1147 s) for the 880 cells. Fit seconds summed over the
cells: AdaBoost 1917 s (CART trees with T = m rounds dominate: about 90 s per fit on
Satimage, 5148 training rows, and 60-75 s on Optdigits), SVM_RBF 284 s (grid search),
UNN 16 s, GNNB 8 s, SGD, linear SVM and NN a few seconds; by domain Satimage 1049 s,
Optdigits 778 s, Segment 134 s, Cardio 122 s, Letter 114 s, the other three < 20 s each.
No AdaBoost cap was needed.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from knnx.compare import compare, rank_counts
from knnx.report import configuration_labels
from knnx.results import read_results

PAPER = Path(__file__).resolve().parent / "paper_values" / "gnnb_small.csv"


def _md(frame):
    """A DataFrame as a Markdown table (numbers to 4 significant digits)."""

    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, "|" + "---|" * len(frame.columns), *body])


METRICS = {"accuracy": "accuracy", "f1_macro": "F-measure", "recall_macro": "recall"}
KS = (5, 10, 20, 50)
# The paper's small domains (Table 2) and the names of their bundled copies.
PAPER_DOMAINS = {
    "Liver": "liver",
    "Ionosphere": "ionosphere",
    "Pima": "diabetes",
    "Satimage": "satimage",
    "Segment": "segment",
    "Optdigits": "optdigits",
    "Cardio": "ctg",
    "Letter": "letter",
    "Scene": "scene",
}
TIERS = ((1, 7), (8, 14), (15, None))
P_VALUE = 0.1
SGD_NAMES = {"T": "SGD_1", "Tk/m": "SGD_2", "2m": "SGD_3", "3m": "SGD_4"}
ADA_NAMES = {"cart2": "ADA_c2", "cart3": "ADA_c3", "random3": "ADA_r3", "random_full": "ADA_ru"}


def label(algorithm, params):
    """The paper's name of one algorithm setting (NN_5, GNNB_10, SVM_RBF, SGD_2, ADA_c3, ...)."""
    if algorithm in ("knn", "unn", "gnnb"):
        return f"{ {'knn': 'NN', 'unn': 'UNN', 'gnnb': 'GNNB'}[algorithm] }_{params['k']}".replace(" ", "")
    if algorithm == "svm_rbf":
        return "SVM_RBF"
    if algorithm == "svm_linear":
        return "SVM_L"
    if algorithm == "sgd":
        return SGD_NAMES[params["budget"]]
    if algorithm == "adaboost":
        return ADA_NAMES[params["base"]]
    return f"{algorithm}{json.dumps(params, sort_keys=True)}"


def load(results):
    """Tidy frame of the metric rows: dataset, name, fold, metric, value, fit/predict seconds."""
    frame = read_results(Path(results) / "results.csv")
    frame = frame[frame["metric"].isin(METRICS)].copy()
    frame["name"] = [
        label(a, json.loads(p)) for a, p in zip(frame["algorithm"], frame["params"], strict=True)
    ]
    for col in ("value", "fit_seconds", "predict_seconds"):
        frame[col] = frame[col].astype(float)
    frame["fold"] = frame["repeat"].astype(int) * 1000 + frame["fold"].astype(int)
    return frame[["dataset", "name", "fold", "metric", "value", "fit_seconds", "predict_seconds"]]


def _order(names):
    """Names in the paper's order of families (NN, UNN, GNNB by k, then the rest)."""
    fam = ("NN_", "UNN_", "GNNB_", "SVM_RBF", "SVM_L", "SGD_", "ADA_")

    def key(n):
        f = next((i for i, p in enumerate(fam) if n.startswith(p)), len(fam))
        tail = n.split("_")[-1]
        return (f, int(tail) if tail.isdigit() else 0, n)

    return sorted(names, key=key)


def comparisons(results):
    """metric -> the result of :func:`knnx.compare.compare` (every setting a contestant),
    its configurations renamed to the paper's names."""
    raw = read_results(Path(results) / "results.csv")
    raw = raw[raw["metric"].isin(METRICS)]
    configs = configuration_labels(raw)
    names = {
        c: label(a, json.loads(p)) for c, a, p in zip(configs, raw["algorithm"], raw["params"], strict=True)
    }
    out = {}
    for m in METRICS:
        result = compare(raw, metric=m, select="all")
        for key in ("means", "ranks", "folds"):
            result[key] = result[key].rename(columns=names)
        for key, cols in (("paired", ("a", "b")), ("per_dataset", ("configuration",))):
            result[key] = result[key].replace({c: names for c in cols})
        out[m] = result
    return out


def fig3(comparison):
    """metric -> DataFrame name, mean, std over domains, by decreasing mean."""
    out = {}
    for m, result in comparison.items():
        table = result["means"]
        t = pd.DataFrame(
            {"algorithm": table.columns, "mean": table.mean().values, "std": table.std(ddof=1).values}
        )
        out[m] = t.sort_values(["mean", "algorithm"], ascending=[False, True]).reset_index(drop=True)
    return out


def fig4(comparison):
    """metric -> (tier counts, rank counts) per algorithm: how many domains rank it 1st,
    2nd, ... (:func:`knnx.compare.rank_counts`, ties sharing the best rank)."""
    out = {}
    for m, result in comparison.items():
        counts = rank_counts(result["means"], m, method="min")
        counts = counts.loc[_order(counts.index)]
        n_alg = counts.shape[1]
        tiers = pd.DataFrame(index=counts.index)
        for i, (lo, hi) in enumerate(TIERS, 1):
            hi = n_alg if hi is None else min(hi, n_alg)
            tiers[f"tier {i} ({lo}-{hi})"] = counts.loc[:, lo:hi].sum(axis=1) if lo <= n_alg else 0
        out[m] = (tiers, counts)
    return out


def fig5(comparison, column="p"):
    """metric -> DataFrame algorithm, better, worse: (domain, other algorithm) pairs whose
    paired test over the folds (knnx compare's paired.csv; ``column`` "p": the paired
    t-test, as the paper; "p_corrected": Nadeau and Bengio's corrected resampled t-test)
    gives p < P_VALUE, counted for the algorithm with the higher mean."""
    out = {}
    for m, result in comparison.items():
        names = _order(result["means"].columns)
        better = dict.fromkeys(names, 0)
        worse = dict.fromkeys(names, 0)
        for row in result["paired"].itertuples():
            if getattr(row, column) < P_VALUE and row.mean_difference != 0:
                winner, loser = (row.a, row.b) if row.mean_difference > 0 else (row.b, row.a)
                better[winner] += 1
                worse[loser] += 1
        out[m] = pd.DataFrame(
            {"algorithm": names, "better": [better[n] for n in names], "worse": [worse[n] for n in names]}
        )
    return out


def time_ratios(frame):
    """Per (ratio, phase): DataFrame domain x k of the time ratios, and the reference name.

    Ratio of the contender's median time over folds to that of GNNB (UNN(log) if no gnnb
    rows): the median, so that a one-off cost in one fold (numba compiling a kernel in a
    fresh worker) does not weigh on a domain's ratio."""
    times = (
        frame[frame.metric == "accuracy"]
        .groupby(["dataset", "name"])[["fit_seconds", "predict_seconds"]]
        .median()
    )
    names = set(times.index.get_level_values("name"))
    ref = "GNNB" if any(n.startswith("GNNB_") for n in names) else "UNN"
    out = {}
    for other in ("SVM_RBF", "ADA_c3"):
        if other not in names:
            continue
        for phase, col in (("training", "fit_seconds"), ("testing", "predict_seconds")):
            table = {}
            for k in KS:
                if f"{ref}_{k}" not in names:
                    continue
                num = times.xs(other, level="name")[col]
                den = times.xs(f"{ref}_{k}", level="name")[col]
                table[k] = num / den
            out[(other, phase)] = pd.DataFrame(table)
    return out, ref


def regress(ks, rho):
    """Least squares rho = a/k + b; returns a, b, r^2."""
    x = 1.0 / np.asarray(ks, dtype=float)
    rho = np.asarray(rho, dtype=float)
    if len(x) < 2:
        return np.nan, np.nan, np.nan
    a, b = np.polyfit(x, rho, 1)
    resid = rho - (a * x + b)
    ss = ((rho - rho.mean()) ** 2).sum()
    r2 = 1 - (resid**2).sum() / ss if ss > 0 else np.nan
    return float(a), float(b), float(r2)


def paper_values():
    table = pd.read_csv(PAPER)
    return dict(zip(table["quantity"], table["value"].astype(float), strict=True))


def _mean(f3, metric, name):
    t = f3[metric]
    row = t[t.algorithm == name]
    return float(row["mean"].iloc[0]) if len(row) else np.nan


def _verdict(ok):
    if ok is None:
        return "not checkable (rows missing)"
    return "reproduced" if ok else "not reproduced"


def claims(f3, f5, ratios, ref, paper):
    """The paper's claims as (claim, our numbers, verdict) rows."""
    rows = []
    has = {n for t in f3.values() for n in t.algorithm}
    gnnb = any(n.startswith("GNNB_") for n in has)

    def avg(name, metric):
        return _mean(f3, metric, name)

    def need(*names):
        return all(n in has for n in names)

    # 1. GNNB on par with SVM_RBF for k = 5, 10, 20 (we read "on par" as within 0.02 or better).
    if gnnb and need("SVM_RBF", "GNNB_5", "GNNB_10", "GNNB_20"):
        gaps = {(k, m): avg(f"GNNB_{k}", m) - avg("SVM_RBF", m) for k in (5, 10, 20) for m in METRICS}
        worst = min(gaps.values())
        rows.append(
            (
                "GNNB (k = 5, 10, 20) performs on par with SVM_RBF (average metrics; read: GNNB - SVM_RBF >= -0.02)",
                f"smallest GNNB - SVM_RBF over k, metrics: {worst:+.3f}",
                _verdict(worst >= -0.02),
            )
        )
    else:
        rows.append(("GNNB (k = 5, 10, 20) performs on par with SVM_RBF", "-", _verdict(None)))
    # 2. GNNB better than AdaBoost with random trees by > .2, regardless of k and metric.
    limit = paper["gnnb_minus_adaboost_random_min"]
    if gnnb and need("ADA_r3", "ADA_ru"):
        gaps = [
            avg(f"GNNB_{k}", m) - avg(r, m)
            for k in KS
            for m in METRICS
            for r in ("ADA_r3", "ADA_ru")
            if f"GNNB_{k}" in has
        ]
        rows.append(
            (
                f"GNNB beats ADA_r3 and ADA_ru by more than {limit:g} on average, for every k and metric",
                f"smallest gap {min(gaps):+.3f}, largest {max(gaps):+.3f}",
                _verdict(min(gaps) > limit),
            )
        )
    else:
        rows.append((f"GNNB beats ADA_r3 and ADA_ru by more than {limit:g}", "-", _verdict(None)))
    # 3. GNNB slightly better than AdaBoost + C4.5 for k = 5, 10, 20.
    if gnnb and need("ADA_c2", "ADA_c3"):
        gaps = [
            avg(f"GNNB_{k}", m) - avg(c, m)
            for k in (5, 10, 20)
            for m in METRICS
            for c in ("ADA_c2", "ADA_c3")
        ]
        rows.append(
            (
                "GNNB (k = 5, 10, 20) slightly better than ADA_c2 / ADA_c3 (CART for C4.5)",
                f"GNNB - ADA_c*: from {min(gaps):+.3f} to {max(gaps):+.3f}",
                _verdict(min(gaps) > 0),
            )
        )
    else:
        rows.append(("GNNB (k = 5, 10, 20) slightly better than AdaBoost + C4.5", "-", _verdict(None)))
    # 4. NN degrades as k grows.
    if need(*(f"NN_{k}" for k in KS)):
        series = {m: [avg(f"NN_{k}", m) for k in KS] for m in METRICS}
        mono = all(np.all(np.diff(v) <= 0) for v in series.values())
        txt = "; ".join(f"{METRICS[m]} " + " > ".join(f"{v:.3f}" for v in s) for m, s in series.items())
        rows.append(("NN's average metrics decrease as k grows (5 > 10 > 20 > 50)", txt, _verdict(mono)))
    # 5. Boosting dampens the degradation: the drop from k = 5 to 50 is smaller for UNN/GNNB than NN.
    drops = {}
    for fam in ("NN", "UNN", "GNNB"):
        if need(f"{fam}_5", f"{fam}_50"):
            drops[fam] = np.mean([avg(f"{fam}_5", m) - avg(f"{fam}_50", m) for m in METRICS])
    if "NN" in drops and len(drops) > 1:
        ok = all(drops[f] < drops["NN"] for f in drops if f != "NN")
        rows.append(
            (
                "Boosting (UNN, GNNB) dampens the degradation with k (drop from k = 5 to 50, mean over metrics, smaller than NN's)",
                ", ".join(f"{f} {d:+.3f}" for f, d in drops.items()),
                _verdict(ok),
            )
        )
    # 6. GNNB best of the NN family at every k.
    if gnnb:
        fails = [
            (k, m)
            for k in KS
            for m in METRICS
            if f"GNNB_{k}" in has and avg(f"GNNB_{k}", m) < max(avg(f"NN_{k}", m), avg(f"UNN_{k}", m))
        ]
        rows.append(
            (
                "GNNB_k beats NN_k and UNN_k on average for every k and metric",
                "fails at " + (", ".join(f"k={k} {METRICS[m]}" for k, m in fails) or "none"),
                _verdict(not fails),
            )
        )
    else:
        rows.append(("GNNB best of the NN family", "-", _verdict(None)))
    # 7. AdaBoost with random trees is the worst on average metrics.
    if need("ADA_r3", "ADA_ru"):
        bottom = {m: list(f3[m].algorithm[-2:]) for m in METRICS}
        ok = all(set(b) == {"ADA_r3", "ADA_ru"} for b in bottom.values())
        rows.append(
            (
                "AdaBoost with random trees: the two worst average metrics",
                "; ".join(f"{METRICS[m]}: last two {', '.join(b)}" for m, b in bottom.items()),
                _verdict(ok),
            )
        )
    # 8. SGD_1 the best SGD flavour.
    if need(*SGD_NAMES.values()):
        best = {m: max(SGD_NAMES.values(), key=lambda n, m=m: avg(n, m)) for m in METRICS}
        rows.append(
            (
                "SGD_1 performs the best of the four SGD budgets (average metrics)",
                "; ".join(f"{METRICS[m]}: {b}" for m, b in best.items()),
                _verdict(all(b == "SGD_1" for b in best.values())),
            )
        )
    # 9. t-tests: SGD_2, NN_50 and AdaBoost random trees (almost) never significantly outperform.
    names = [n for n in ("SGD_2", "NN_50", "ADA_r3", "ADA_ru") if n in has]
    if names:
        wins = {m: {n: int(f5[m].set_index("algorithm").loc[n, "better"]) for n in names} for m in METRICS}
        medians = {m: float(f5[m]["better"].median()) for m in METRICS}
        ok = all(w < medians[m] for m in METRICS for w in wins[m].values())
        txt = "; ".join(
            f"{METRICS[m]}: "
            + ", ".join(f"{n} {w}" for n, w in wins[m].items())
            + f" (median {medians[m]:g})"
            for m in METRICS
        )
        rows.append(
            (
                "SGD_2, NN_50 and AdaBoost + random trees rarely significantly outperform (read: fewer significant wins than the median algorithm)",
                txt,
                _verdict(ok),
            )
        )
    # 10. Time ratios.
    for other, key in (("SVM_RBF", "svm_rbf"), ("ADA_c3", "adaboost_c3")):
        for phase in ("training", "testing"):
            bound = paper[f"{'train' if phase == 'training' else 'test'}_ratio_{key}_min"]
            table = ratios.get((other, phase))
            if table is None or table.empty:
                rows.append((f"{phase} time {other} / GNNB >= {bound:g} for every k", "-", _verdict(None)))
                continue
            avg_k = table.mean()
            txt = ", ".join(f"k={k}: {v:.3g}" for k, v in avg_k.items()) + (
                "" if ref == "GNNB" else " (UNN(log) stands in for GNNB)"
            )
            rows.append(
                (
                    f"{phase} time {other} / GNNB >= {bound:g} for every k (mean over domains)",
                    txt,
                    _verdict(bool((avg_k >= bound).all())),
                )
            )
    return rows


def _plot_fig3(f3, path):
    fig = Figure(figsize=(15, 6))
    for i, (m, t) in enumerate(f3.items()):
        ax = fig.add_subplot(1, 3, i + 1)
        ax.barh(range(len(t)), t["mean"], xerr=t["std"], color="tab:blue", alpha=0.7)
        ax.set_yticks(range(len(t)), t["algorithm"], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"mean {METRICS[m]} over domains (± std)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_fig4(f4, path):
    fig = Figure(figsize=(15, 6))
    colors = ("tab:green", "tab:orange", "tab:red")
    for i, (m, (tiers, _)) in enumerate(f4.items()):
        ax = fig.add_subplot(1, 3, i + 1)
        left = np.zeros(len(tiers))
        for c, col in zip(colors, tiers.columns, strict=True):
            ax.barh(range(len(tiers)), tiers[col], left=left, color=c, label=col)
            left += tiers[col].to_numpy()
        ax.set_yticks(range(len(tiers)), tiers.index, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"domains ({METRICS[m]} rank)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_fig5(f5, path):
    fig = Figure(figsize=(15, 6))
    for i, (m, t) in enumerate(f5.items()):
        ax = fig.add_subplot(1, 3, i + 1)
        ax.barh(range(len(t)), t["better"], color="tab:green", label="significantly better")
        ax.barh(range(len(t)), -t["worse"], color="tab:red", label="significantly worse")
        ax.set_yticks(range(len(t)), t["algorithm"], fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="black", lw=0.5)
        ax.set_xlabel(f"(domain, algorithm) pairs, {METRICS[m]}, p < {P_VALUE}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_times(ratios, fits, ref, paper, path):
    fig = Figure(figsize=(10, 4))
    for i, phase in enumerate(("training", "testing")):
        ax = fig.add_subplot(1, 2, i + 1)
        for (other, ph), table in ratios.items():
            if ph != phase or table.empty:
                continue
            ks = np.array(table.columns, dtype=float)
            ax.plot(1 / ks, table.mean().to_numpy(), "o", label=f"{other}/{ref}")
            a, b, _ = fits[(other, phase)]
            xs = np.linspace(0, 0.21, 50)
            ax.plot(xs, a * xs + b, "-", lw=0.8)
            if phase == "training":
                key = "svm_rbf" if other == "SVM_RBF" else "adaboost_c3"
                pa, pb = paper[f"train_ratio_{key}_a"], paper[f"train_ratio_{key}_b"]
                ax.plot(xs, pa * xs + pb, "--", lw=0.8, label=f"paper {pa:g}/k + {pb:g}")
        ax.set_yscale("log")
        ax.set_xlabel("1/k")
        ax.set_ylabel(f"{phase} time ratio")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def report(results, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = load(results)
    paper = paper_values()
    datasets = sorted(set(frame["dataset"]))
    missing = [p for p, d in PAPER_DOMAINS.items() if d not in datasets]
    comparison = comparisons(results)
    f3, f4, f5 = fig3(comparison), fig4(comparison), fig5(comparison)
    f5_corrected = fig5(comparison, "p_corrected")
    ratios, ref = time_ratios(frame)
    fits = {key: regress(table.columns, table.mean()) for key, table in ratios.items() if not table.empty}
    names = _order({n for r in comparison.values() for n in r["means"].columns})
    note = [
        f"Domains ({len(datasets)}): {', '.join(datasets)}. Missing from the paper's list: {', '.join(missing) or 'none'}.",
        f"Algorithms ({len(names)}): {', '.join(names)}.",
    ]
    if ref != "GNNB":
        note.append(
            "**No gnnb rows: UNN(log) stands in for GNNB in the time ratios; GNNB claims not checkable.**"
        )
    lines = ["# Fig. 3: average metrics over domains (mean ± std over domains)", "", *note, ""]
    for m, t in f3.items():
        lines += [f"## {METRICS[m]}", "", _md(t.assign(mean=t["mean"].round(4), std=t["std"].round(4))), ""]
    (out / "fig3.md").write_text("\n".join(lines), encoding="utf-8")
    _plot_fig3(f3, out / "fig3.png")

    lines = ["# Fig. 4: rank counts over domains (rank 1 = best, ties share the best rank)", "", *note, ""]
    for m, (tiers, counts) in f4.items():
        table = pd.concat([tiers, counts.rename(columns=lambda r: f"#{r}")], axis=1).reset_index(
            names="algorithm"
        )
        lines += [f"## {METRICS[m]}", "", _md(table), ""]
    (out / "fig4.md").write_text("\n".join(lines), encoding="utf-8")
    _plot_fig4(f4, out / "fig4.png")

    lines = [
        f"# Fig. 5: paired t-tests over the folds, p < {P_VALUE}: (domain, other algorithm) pairs",
        "",
        *note,
        "",
        "From `knnx compare` (paired.csv): `better`/`worse` count the paired t-test over the five folds, as "
        "the paper; `better_nb`/`worse_nb` Nadeau and Bengio's corrected resampled t-test, which allows for "
        "the training rows the folds share (n_test/n_train = 1/4 here) and is more conservative.",
        "",
    ]
    for m, t in f5.items():
        both = t.assign(
            better_nb=f5_corrected[m]["better"].to_numpy(), worse_nb=f5_corrected[m]["worse"].to_numpy()
        )
        lines += [f"## {METRICS[m]}", "", _md(both), ""]
    (out / "fig5.md").write_text("\n".join(lines), encoding="utf-8")
    _plot_fig5(f5, out / "fig5.png")

    lines = [
        f"# Sec. 6.5.4: time ratios to {ref} (medians over folds; ADA_c3 = AdaBoost + CART depth 3 for C4.5)",
        "",
        *note,
        "",
    ]
    for (other, phase), table in ratios.items():
        a, b, r2 = fits.get((other, phase), (np.nan,) * 3)
        t = table.copy()
        t.loc["mean over domains"] = table.mean()
        t = t.reset_index(names="domain").rename(columns={k: f"k={k}" for k in table.columns})
        key = "svm_rbf" if other == "SVM_RBF" else "adaboost_c3"
        if phase == "training":
            pa, pb, pr = (paper[f"train_ratio_{key}_{s}"] for s in ("a", "b", "r2"))
            ref_txt = f"paper: {pa:g}/k + {pb:g} (r² = {pr:g})"
        else:
            ref_txt = f"paper: at least {paper[f'test_ratio_{key}_min']:g} for every k"
        lines += [
            f"## {phase}: {other} / {ref}",
            "",
            _md(t),
            "",
            f"Regression on 1/k: **{a:.4g}/k + {b:.4g} (r² = {r2:.3f})**; {ref_txt}.",
            "",
        ]
    (out / "times.md").write_text("\n".join(lines), encoding="utf-8")
    if ratios:
        _plot_times(ratios, fits, ref, paper, out / "times.png")

    rows = claims(f3, f5, ratios, ref, paper)
    lines = ["# Nock et al. (2014), Sec. 6.3-6.5: the paper's claims against this run", "", *note, ""]
    lines += [_md(pd.DataFrame(rows, columns=["paper's claim", "our numbers", "verdict"])), ""]
    lines += ["Regressions of the time ratios on 1/k (mean over domains):", ""]
    reg = []
    for (other, phase), (a, b, r2) in fits.items():
        key = "svm_rbf" if other == "SVM_RBF" else "adaboost_c3"
        paper_txt = (
            f"{paper[f'train_ratio_{key}_a']:g}/k + {paper[f'train_ratio_{key}_b']:g} (r² = {paper[f'train_ratio_{key}_r2']:g})"
            if phase == "training"
            else f">= {paper[f'test_ratio_{key}_min']:g}"
        )
        reg.append((f"{phase} {other}/{ref}", f"{a:.4g}/k + {b:.4g} (r² = {r2:.3f})", paper_txt))
    if reg:
        lines += [_md(pd.DataFrame(reg, columns=["ratio", "ours", "paper"])), ""]
    (out / "paper.md").write_text("\n".join(lines), encoding="utf-8")
    return f3, f4, f5, ratios, rows


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    report(sys.argv[1], sys.argv[2])
