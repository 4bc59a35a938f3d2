"""Learned weighted metrics on synthetic data (Paredes & Vidal 2006, Sec. 5.1, Fig. 2).

    python experiments/cpw_synthetic.py spec RUNS OUT.yaml [--sizes 8,16,...]  # write the spec
    python experiments/cpw_synthetic.py report RESULTS [RESULTS ...] OUT          # make cpw-synthetic
    python experiments/cpw_synthetic.py bayes                                     # the Bayes error

Setting (the paper's): three equiprobable 2-D Gaussian classes (generator paredes2006),
8, 16, 32, 64, 128, 256 training prototypes per class, 1-NN with the Euclidean (L2), CW, PW
and CPW dissimilarities (knnx.WeightedMetricNN, spec name ``weighted_metric``), weights w and
v initialised to 1 (init euclidean), mu = 0.001, rho = 0.01, beta = 10. The paper repeats each
size 100 times; RUNS is a parameter (Makefile variable CPW_RUNS, default 100 as the paper:
about one minute on 2 cores). Run r of size n is the dataset entry with id ``n{n}-r{r}``, whose sample
follows from the spec's seed and that id alone, so it is the same data whatever RUNS is.

Choices where the paper is silent or knnx cannot follow it:

* **Test set.** The paper evaluates every run on one fixed test set of 5000 vectors. A knnx
  spec cannot share a test set between dataset entries (a synthetic entry draws its test
  sample from its own seed, CSV entries have no predefined split), so each run draws its own
  independent 5000-point test sample (``n_test: 5000``, class counts multinomial with equal
  priors). The four methods of one run share its training and test sample, so method
  differences are paired within a run. The mean error estimates the same quantity (the
  expected error of the rule at that training size); the spread over runs adds the
  test-sampling noise, about sqrt(e (1 - e) / 5000) = 0.005 at e = 0.15, to the training-set
  variation the paper's fixed set shows alone.
* **Stopping.** Fig. 1 stops when J_T changes by at most epsilon; knnx uses tol = 1e-6 and
  at most 100 epochs (``PAPER_PARAMS``; WeightedMetricNN's own default is a 10 000-epoch
  safety cap) and returns the weights with the lowest LOO error seen.
* **Bayes error.** Computed numerically by :func:`bayes_error`: 1 - integral of
  max_c pi_c f_c(x), the inner integral along x2 exact (normal CDFs between the points where
  the maximising class changes), the outer integral over x1 by adaptive quadrature.

The report writes OUT/table.md and OUT/table.csv (mean, standard deviation and a 95 %
t-interval of the test error per size and method, beside the Bayes error), OUT/fig2.png
(error against training size, log2 axis, Bayes line), OUT/claims.md and OUT/claims.csv (the
paper's qualitative claims checked against the numbers) and OUT/report.md (all of it).
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from matplotlib.figure import Figure
from scipy import integrate, stats
from scipy.special import ndtr

from knnx.datasets.synthetic import paredes2006
from knnx.results import read_results

SIZES = (8, 16, 32, 64, 128, 256)
N_TEST = 5000
METHODS = {"l2": "L2", "cw": "CW", "pw": "PW", "cpw": "CPW"}
PAPER_PARAMS = {"beta": 10.0, "mu": 0.001, "rho": 0.01, "init": "euclidean", "max_epochs": 100, "k": 1}
SMALL_TOL = 0.005  # "as good as": CW may be worse than L2 by at most half a percentage point
ID_PATTERN = r"^n(\d+)-r(\d+)$"


# --------------------------------------------------------------------------- Bayes error


def _paredes_model():
    post = paredes2006(1, seed=0).posterior
    return (
        np.asarray(post.means, float),
        [np.asarray(c, float) for c in post.covs],
        np.asarray(post.priors, float),
    )


def _line_mass(x1, means, covs, priors):
    """integral over x2 of max_c pi_c f_c(x1, x2), exact for fixed x1.

    Along the line x1 = const, pi_c f_c(x1, .) = exp(a_c) N(x2; m_c, s_c^2) with a_c the log
    of pi_c times the x1-marginal density; the classes' log-densities differ by a quadratic
    in x2, whose real roots are the only places where the maximising class can change.
    """
    a, m, s2 = [], [], []
    for mu, S, p in zip(means, covs, priors, strict=True):
        a.append(np.log(p) - 0.5 * np.log(2 * np.pi * S[0, 0]) - (x1 - mu[0]) ** 2 / (2 * S[0, 0]))
        m.append(mu[1] + S[0, 1] / S[0, 0] * (x1 - mu[0]))
        s2.append(S[1, 1] - S[0, 1] ** 2 / S[0, 0])
    a, m, s2 = np.array(a), np.array(m), np.array(s2)
    # log g_c(x2) = q2 x2^2 + q1 x2 + q0
    q2 = -0.5 / s2
    q1 = m / s2
    q0 = a - 0.5 * np.log(2 * np.pi * s2) - 0.5 * m**2 / s2
    cuts = []
    C = len(priors)
    for i in range(C):
        for j in range(i + 1, C):
            A, B, c0 = q2[i] - q2[j], q1[i] - q1[j], q0[i] - q0[j]
            if abs(A) <= 1e-12 * (abs(q2[i]) + abs(q2[j])):
                if B != 0.0:
                    cuts.append(-c0 / B)
            else:
                disc = B * B - 4 * A * c0
                if disc >= 0.0:
                    r = np.sqrt(disc)
                    cuts += [(-B - r) / (2 * A), (-B + r) / (2 * A)]
    edges = np.concatenate([[-np.inf], np.sort(cuts), [np.inf]])
    sd = np.sqrt(s2)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if lo == hi:
            continue
        if np.isfinite(lo) and np.isfinite(hi):
            t = (lo + hi) / 2
        elif np.isfinite(hi):
            t = hi - 1.0
        elif np.isfinite(lo):
            t = lo + 1.0
        else:
            t = 0.0
        c = int(np.argmax(q2 * t * t + q1 * t + q0))
        total += np.exp(a[c]) * (ndtr((hi - m[c]) / sd[c]) - ndtr((lo - m[c]) / sd[c]))
    return total


def bayes_error(means=None, covs=None, priors=None, *, radius=12.0):
    """Bayes error 1 - integral max_c pi_c f_c(x) dx of 2-D Gaussian classes, by quadrature.

    Defaults to the paredes2006 distribution. The inner integral (along x2) is exact; the
    outer one runs over x1 in [min_c mu_c1 - radius sd_c1, max_c mu_c1 + radius sd_c1] by
    scipy.integrate.quad. Returns (value, bound): the mass left outside that interval is
    below sum_c pi_c P(|Z| > radius), and bound adds quad's error estimate to it.
    """
    if means is None:
        means, covs, priors = _paredes_model()
    means = np.asarray(means, float)
    covs = [np.asarray(c, float) for c in covs]
    priors = np.asarray(priors, float)
    sd1 = np.array([np.sqrt(S[0, 0]) for S in covs])
    lo, hi = float(np.min(means[:, 0] - radius * sd1)), float(np.max(means[:, 0] + radius * sd1))
    inside, err = integrate.quad(
        _line_mass, lo, hi, args=(means, covs, priors), epsabs=1e-13, epsrel=1e-12, limit=1000
    )
    outside = float(np.sum(priors) * 2 * stats.norm.sf(radius))
    return 1.0 - inside, err + outside


# --------------------------------------------------------------------------- spec


def spec_dict(runs, sizes=SIZES, first=0, seed=0):
    """The experiment as a dict: one dataset entry per (size, run), the four schemes."""
    runs, first = int(runs), int(first)
    if runs < 1 or first < 0:
        raise ValueError("RUNS must be a positive integer and FIRST a non-negative one")
    datasets = [
        {"synthetic": "paredes2006", "n_per_class": int(n), "n_test": N_TEST, "id": f"n{int(n)}-r{r}"}
        for n in sizes
        for r in range(first, first + runs)
    ]
    return {
        "name": "cpw-synthetic",
        "seed": seed,
        "datasets": datasets,
        "preprocess": {"standardize": False},
        "protocol": {"kind": "predefined"},
        "algorithms": [{"name": "weighted_metric", "params": {"scheme": list(METHODS), **PAPER_PARAMS}}],
        "metrics": ["error"],
    }


def write_spec(runs, out, sizes=SIZES, first=0):
    spec = spec_dict(runs, sizes, first)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# Generated by experiments/cpw_synthetic.py spec {runs} (runs {first}..{first + int(runs) - 1} per size,\n"
        f"# sizes {', '.join(map(str, sizes))} per class; the paper: 100 runs). Paredes & Vidal (2006), Sec. 5.1.\n"
    )
    out.write_text(
        header + yaml.safe_dump(spec, sort_keys=False, default_flow_style=None, width=120), encoding="utf-8"
    )
    return out


# --------------------------------------------------------------------------- report


def load(results):
    """Tidy frame of test errors and training LOO errors: size, run, method, metric, value."""
    frame = pd.concat([read_results(Path(r) / "results.csv") for r in results], ignore_index=True)
    if frame.duplicated(["dataset", "algorithm", "params", "metric"]).any():
        sys.exit("the result folders share cells (the same run twice)")
    frame = frame[(frame.algorithm == "weighted_metric") & frame.metric.isin(["error", "loo_error"])].copy()
    ids = frame["dataset"].str.extract(ID_PATTERN)
    if ids.isna().any().any():
        sys.exit("dataset ids must read n{size}-r{run} (specs written by this script)")
    frame["size"] = ids[0].astype(int)
    frame["run"] = ids[1].astype(int)
    frame["method"] = frame["params"].map(lambda p: METHODS[json.loads(p)["scheme"]])
    frame["value"] = frame["value"].astype(float)
    return frame[["size", "run", "method", "metric", "value"]]


def _ci(values):
    v = np.asarray(values, float)
    n = len(v)
    mean = v.mean()
    sd = v.std(ddof=1) if n > 1 else np.nan
    half = stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n) if n > 1 else np.nan
    return mean, sd, mean - half, mean + half


def summary(frame, metric="error"):
    """Mean, std and 95 % t-interval over runs per (size, method)."""
    rows = []
    part = frame[frame.metric == metric]
    for (size, method), g in part.groupby(["size", "method"]):
        mean, sd, lo, hi = _ci(g["value"])
        rows.append(
            {
                "size": size,
                "method": method,
                "runs": len(g),
                "mean": mean,
                "std": sd,
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    out = pd.DataFrame(rows)
    out["method"] = pd.Categorical(out["method"], list(METHODS.values()), ordered=True)
    return out.sort_values(["size", "method"]).reset_index(drop=True)


def paired(frame, method, against="L2"):
    """Per size: mean and 95 % t-interval of error(method) - error(against), paired by run."""
    err = frame[frame.metric == "error"].pivot_table(index=["size", "run"], columns="method", values="value")
    diff = (err[method] - err[against]).dropna()
    rows = []
    for size, g in diff.groupby(level="size"):
        mean, sd, lo, hi = _ci(g)
        rows.append({"size": size, "runs": len(g), "mean": mean, "std": sd, "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows).set_index("size")


def _pp(x):
    return f"{100 * x:+.2f}"


def _ivl(row):
    return f"{_pp(row['mean'])} pp [{_pp(row['ci_low'])}, {_pp(row['ci_high'])}]"


def claims(frame):
    """One row per claim of Sec. 5.1: statement, what decides it, knnx's numbers, verdict."""
    rows = []
    cw = paired(frame, "CW")
    small, large = cw.index.min(), cw.index.max()
    d = cw.loc[small]
    verdict = (
        "reproduced"
        if d["ci_low"] > 0
        else ("direction only (CI includes 0)" if d["mean"] > 0 else "not reproduced")
    )
    rows.append(
        {
            "claim": "CW is slightly worse than Euclidean for very small training sets",
            "test": f"CW - L2 at n = {small} per class (paired over runs, 95 % CI) > 0",
            "knnx": f"n = {small}: {_ivl(d)}; per size: "
            + ", ".join(f"{s}: {_pp(v)}" for s, v in cw["mean"].items()),
            "verdict": verdict,
        }
    )
    d = cw.loc[large]
    rows.append(
        {
            "claim": "As the training set grows, CW becomes as good as Euclidean",
            "test": f"CW - L2 at n = {large}: upper 95 % bound <= {100 * SMALL_TOL:.1f} pp",
            "knnx": f"n = {large}: {_ivl(d)}",
            "verdict": "reproduced" if d["ci_high"] <= SMALL_TOL else "not reproduced",
        }
    )
    for method in ("PW", "CPW"):
        diff = paired(frame, method)
        better = diff.index[diff["ci_high"] < 0].tolist()
        verdict = (
            "reproduced"
            if len(better) == len(diff)
            else (
                "partly reproduced"
                if better
                else ("direction only" if (diff["mean"] < 0).all() else "not reproduced")
            )
        )
        rows.append(
            {
                "claim": f"{method} is better than Euclidean, even for small training sets",
                "test": f"{method} - L2 < 0 (95 % CI below 0) at every size, n = {small} included",
                "knnx": f"n = {small}: {_ivl(diff.loc[small])}; significant at n in {better or 'none'}; means: "
                + ", ".join(f"{s}: {_pp(v)}" for s, v in diff["mean"].items()),
                "verdict": verdict,
            }
        )
    for method in ("PW", "CPW"):
        diff = paired(frame, method)
        gain = -diff["mean"]  # improvement over L2
        se = diff["std"] / np.sqrt(diff["runs"])
        delta = gain.loc[large] - gain.loc[small]
        half = 1.96 * np.sqrt(se.loc[large] ** 2 + se.loc[small] ** 2)
        rho = stats.spearmanr(gain.index, gain.to_numpy()).statistic if len(gain) > 2 else np.nan
        verdict = (
            "reproduced"
            if delta - half > 0
            else ("direction only (CI includes 0)" if delta > 0 else "not reproduced")
        )
        rows.append(
            {
                "claim": f"The improvement of {method} over Euclidean increases with the training size",
                "test": f"gain(n = {large}) - gain(n = {small}) > 0 (95 % CI), gain = error(L2) - error({method})",
                "knnx": f"gain {small}: {100 * gain.loc[small]:.2f} pp, {large}: {100 * gain.loc[large]:.2f} pp; "
                f"difference {_pp(delta)} pp [{_pp(delta - half)}, {_pp(delta + half)}]; "
                f"Spearman(size, gain) = {rho:.2f}",
                "verdict": verdict,
            }
        )
    return pd.DataFrame(rows)


def _md(frame):
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = [
        "| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


def wide_table(table, bayes):
    """Markdown: one row per size, 'mean ± std [95 % CI]' per method (in %), then the Bayes error."""
    out = []
    for size, g in table.groupby("size"):
        row = {"n per class": size, "runs": int(g["runs"].min())}
        for r in g.itertuples():
            row[r.method] = (
                f"{100 * r.mean:.2f} ± {100 * r.std:.2f} [{100 * r.ci_low:.2f}, {100 * r.ci_high:.2f}]"
            )
        row["Bayes"] = f"{100 * bayes:.2f}"
        out.append(row)
    return _md(pd.DataFrame(out))


def fig2(table, bayes, out):
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    markers = {"L2": "o", "CW": "s", "PW": "^", "CPW": "D"}
    for method in METHODS.values():
        c = table[table.method == method].sort_values("size")
        ax.errorbar(
            c["size"], 100 * c["mean"], yerr=100 * (c["ci_high"] - c["mean"]), marker=markers[method], ms=4,
            capsize=2, label="Euclidean (L2)" if method == "L2" else method,
        )  # fmt: skip
    ax.axhline(100 * bayes, color="k", ls="--", lw=1, label=f"Bayes risk ({100 * bayes:.2f} %)")
    ax.set_xscale("log", base=2)
    sizes = sorted(table["size"].unique())
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set_xlabel("training prototypes per class")
    ax.set_ylabel("test error (%)")
    runs = int(table["runs"].min())
    ax.set_title(
        f"Fig. 2 (Paredes & Vidal 2006): 1-NN error, mean of {runs} runs (bars: 95 % CI)", fontsize=9
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.savefig(out, dpi=110)


def report(results, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = load(results)
    bayes, bound = bayes_error()
    table = summary(frame)
    table.assign(bayes_error=bayes).to_csv(out / "table.csv", index=False, float_format="%.10g")
    runs = table["runs"]
    setting = (
        f"Paredes & Vidal (2006), Sec. 5.1: three equiprobable 2-D Gaussians (paredes2006), 1-NN, "
        f"w = v = 1 initially, mu = {PAPER_PARAMS['mu']}, rho = {PAPER_PARAMS['rho']}, beta = {PAPER_PARAMS['beta']:g}; "
        f"{runs.min()}{'' if runs.min() == runs.max() else f'-{runs.max()}'} runs per size (paper: 100), "
        f"each with its own {N_TEST}-point test sample (paper: one fixed test set; see the script docstring). "
        f"Test error in %, mean ± standard deviation over runs [95 % t-interval of the mean]. "
        f"Bayes error {100 * bayes:.4f} % (numerical quadrature, error bound {bound:.1e})."
    )
    table_md = (
        "# Fig. 2 of Paredes & Vidal (2006) as a table: knnx\n\n"
        + setting
        + "\n\n"
        + wide_table(table, bayes)
    )
    (out / "table.md").write_text(table_md + "\n", encoding="utf-8")
    fig2(table, bayes, out / "fig2.png")
    verdicts = claims(frame)
    verdicts.to_csv(out / "claims.csv", index=False)
    claims_md = "# The paper's claims (Sec. 5.1), checked\n\n" + _md(verdicts)
    (out / "claims.md").write_text(claims_md + "\n", encoding="utf-8")

    loo = summary(frame, "loo_error")
    both = table.merge(loo, on=["size", "method"], suffixes=("_test", "_loo"))
    optimism = both.assign(
        **{"test error %": 100 * both["mean_test"], "training LOO error %": 100 * both["mean_loo"]},
        **{"test - LOO (pp)": 100 * (both["mean_test"] - both["mean_loo"])},
    )[["size", "method", "test error %", "training LOO error %", "test - LOO (pp)"]]
    lines = [
        "# Learned weighted metrics on synthetic data (Paredes & Vidal 2006, Sec. 5.1, Fig. 2)\n",
        setting,
        "\n## Test error per training size (Fig. 2)\n",
        wide_table(table, bayes),
        "\n## The paper's claims\n",
        "The paper gives no numbers for Fig. 2, only these statements. Differences are paired by run "
        "(the four methods share each run's training and test sample); pp = percentage points.\n",
        _md(verdicts),
        "\n## Optimism of the training LOO error (returned weights)\n",
        "The paper attributes CW's small-sample loss to 'the biased LOO error estimation': the weights "
        "are chosen to minimise the training LOO error, which then underestimates the test error.\n",
        _md(optimism),
        "\nFigure: fig2.png. Numbers: table.csv, claims.csv.",
    ]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print((out / "report.md").read_text(encoding="utf-8"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("spec", help="write the spec")
    p.add_argument("runs", type=int)
    p.add_argument("out")
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated sizes per class")
    p.add_argument("--first", type=int, default=0, help="first run index")
    p = sub.add_parser("report", help="tables, figure and claims from result folders")
    p.add_argument("paths", nargs="+", metavar="RESULTS ... OUT")
    sub.add_parser("bayes", help="print the Bayes error of paredes2006")
    args = parser.parse_args(argv)
    if args.command == "spec":
        try:
            write_spec(args.runs, args.out, tuple(int(s) for s in args.sizes.split(",")), args.first)
        except ValueError as exc:
            parser.error(str(exc))
    elif args.command == "report":
        if len(args.paths) < 2:
            parser.error("report needs at least one RESULTS folder and OUT")
        report(args.paths[:-1], args.paths[-1])
    else:
        value, bound = bayes_error()
        print(f"Bayes error of paredes2006: {value:.10f} (error bound {bound:.1e})")


if __name__ == "__main__":
    main()
