"""make reproduce: run every paper target in turn, time it, and assemble results/REPORT.md.

    python experiments/reproduce.py                      # run all targets (about 41 minutes), then assemble
    python experiments/reproduce.py --only unn-ripley    # run some targets, assemble everything
    python experiments/reproduce.py --assemble-only      # no run: assemble from existing results
    python experiments/reproduce.py --var CPW_RUNS=10    # a Makefile variable, passed to make

Each target is ``make TARGET`` (its output is logged to ``results/reproduce-logs/TARGET.log``);
its wall time and exit status go to ``results/reproduce-times.json``, so ``--assemble-only``
reports the times of the last real run. REPORT.md does not recompute any table: every target
already writes its own side-by-side markdown (ours, paper, difference, and whether the paper's
number lies in our confidence interval where the target computes one). REPORT.md has a summary
table (target, wall time, status, headline agreement read from those files), then one section
per paper with each target's report included (headings demoted), links to its other files and
its figures (relative links).

Where a target's own tables set ours and the paper's numbers in two columns without their
difference or a confidence interval (lpo-select's Table 2, lpo-active, unn-posteriors' Table 3),
the target lists those columns as :class:`Pair` s and REPORT.md adds one derived table: ours,
paper, ours - paper (to the nearest end of a paper range), and whether the paper's number lies
in the two-sided 95 % Student-t interval of our mean, computed from a cell's "± std (n=N)";
"-" where the cell gives no spread (medians, means pooled over settings).
"""

import argparse
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"

# Makefile variables that name output folders, with the Makefile's defaults.
DEFAULT_VARS = {
    "ACTIVE_REPEATS": "10",
    "UNN_SIMS": "10",
    "CPW_RUNS": "100",
    "CPW_BETA_REPEATS": "10",
    "CPW_UCI_REPEATS": "5",
}


@dataclass
class Pair:
    """Two columns of a target's own markdown table, ours and the paper's, that REPORT.md sets
    side by side with their difference and whether the paper's number lies in our 95 % CI
    (see :func:`side_by_side`); ``keys`` are the columns that name a row."""

    heading: str  # regular expression searched in the heading above the table
    ours: str
    paper: str
    keys: tuple
    quantity: str


@dataclass
class Target:
    """A paper target of the Makefile and where its outputs land (paths relative to results/,
    with ``{VAR}`` placeholders for Makefile variables)."""

    name: str
    paper: str
    title: str
    include: list  # side-by-side markdown files, included in REPORT.md
    links: list = field(default_factory=list)  # other outputs, linked
    figures: list = field(default_factory=list)  # PNG files (globs allowed)
    headline: str = "none"  # how to read the agreement count (see HEADLINES)
    pairs: list = field(default_factory=list)  # Pair: ours beside the paper, derived in REPORT.md


PAPERS = {
    "ripley": "Main job: kNN on Ripley's data",
    "celisse": "Celisse & Mary-Huard (2011): exact leave-p-out",
    "unn": "Piro et al. (2012); D'Ambrosio et al. (2012): UNN",
    "gnnb": "Nock et al. (2014): GNNB",
    "cpw": "Paredes & Vidal (2006): CW, PW, CPW",
}

TARGETS = [
    Target(
        "ripley",
        "ripley",
        "kNN over k and UNN / kNN-sample on Ripley's split (the main job)",
        include=["ripley/summary.md"],
        links=["ripley/results.csv", "reference/ripley.csv"],
        figures=["ripley/error.png", "ripley/error-k.png", "ripley/error-theta.png"],
        headline="reference",
    ),
    Target(
        "lpo-select",
        "celisse",
        "Sec. 3: k chosen by LpO against p and n (Table 2, Fig. 2)",
        include=["lpo-select/paper.md"],
        links=["lpo-select-p/summary.md", "lpo-select-n/summary.md"],
        figures=["lpo-select/*.png", "lpo-select-p/chosen_k.png"],
        pairs=[
            Pair(
                "^Table 2",
                "knnx k_p median",
                "paper k",
                ("p range (paper)", "knnx p"),
                "median k chosen by LpO",
            )
        ],
    ),
    Target(
        "lpo-active",
        "celisse",
        "Sec. 4.3: LpO query-by-committee against passive LpO kNN",
        include=["lpo-active-sim-r{ACTIVE_REPEATS}/paper.md", "lpo-active-spam-r{ACTIVE_REPEATS}/paper.md"],
        links=[
            "lpo-active-sim-r{ACTIVE_REPEATS}/summary.csv",
            "lpo-active-spam-r{ACTIVE_REPEATS}/summary.csv",
        ],
        figures=["lpo-active-sim-r{ACTIVE_REPEATS}/*.png", "lpo-active-spam-r{ACTIVE_REPEATS}/*.png"],
        headline="qbc",
        pairs=[
            Pair("", "knnx lpo_qbc", "paper lpo_qbc", ("dataset",), "final error, LpO-QbC"),
            Pair("", "knnx passive_lpo", "paper passive", ("dataset",), "final error, passive"),
        ],
    ),
    Target(
        "lpo-timing",
        "celisse",
        "Fig. 1 and Table 1: exact LpO timings beside the paper's seconds",
        include=[],
        links=["lpo-timing/fig1.csv", "lpo-timing/table1.csv"],
        figures=["lpo-timing/*.png"],
        headline="timing",
    ),
    Target(
        "unn-ripley",
        "unn",
        "Piro et al. Fig. 2-3: UNN against kNN on a random theta-sample, Ripley",
        include=["unn-ripley/paper.md"],
        links=["unn-ripley/fig2.csv"],
        figures=["unn-ripley/*.png"],
        headline="verdict",
    ),
    Target(
        "unn-uci",
        "unn",
        "Piro et al. Table 2: UNN, ITML + kNN, kNN on UCI data (5x2 CV)",
        include=["unn-uci-table2/table2.md"],
        links=["unn-uci/summary.md", "unn-uci-table2/table2.csv"],
        figures=["unn-uci-table2/*.png"],
        headline="ci",
    ),
    Target(
        "unn-posteriors",
        "unn",
        "D'Ambrosio et al. Sec. 5.3: posteriors of UNN(exp/log/Mat) against SVM + Platt (Table 3, Fig. 2-3)",
        include=["unn-posteriors/paper.md"],
        links=["unn-posteriors/table3.md", "unn-posteriors/table3.csv", "unn-posteriors/by_sigma.csv"],
        figures=["unn-posteriors/*.png"],
        headline="claims",
        pairs=[
            Pair("^Table 3$", f"{a} knnx", f"{a} paper", ("metric", "k"), a)
            for a in ("UNN(exp)", "UNN(log)", "UNN(Mat)", "SVM")
        ],
    ),
    Target(
        "gnnb-small",
        "gnnb",
        "Sec. 6.3-6.5: GNNB against NN, UNN, SVM, SGD, AdaBoost on 8 small domains",
        include=["gnnb-small-report/paper.md"],
        links=[
            "gnnb-small-report/fig3.md",
            "gnnb-small-report/fig4.md",
            "gnnb-small-report/fig5.md",
            "gnnb-small-report/times.md",
        ],
        figures=["gnnb-small-report/*.png"],
        headline="verdict",
    ),
    Target(
        "gnnb-large",
        "gnnb",
        "Table 3, Sec. 6.4/6.6 on a synthetic stand-in for Caltech/SUN (shape only)",
        include=["gnnb-large/table3.md"],
        links=["gnnb-large/iterations.md", "gnnb-large/results.csv"],
        figures=["gnnb-large/*.png"],
        headline="shape",
    ),
    Target(
        "cpw-synthetic",
        "cpw",
        "Sec. 5.1, Fig. 2: L2, CW, PW, CPW against training size on synthetic data",
        include=["cpw-synthetic/report.md"],
        links=["cpw-synthetic/table.md", "cpw-synthetic/claims.md"],
        figures=["cpw-synthetic/*.png"],
        headline="verdict",
    ),
    Target(
        "cpw-beta",
        "cpw",
        "Table 2 / Fig. 3: CW error against beta on 12 small UCI sets",
        include=["cpw-beta-report/table2.md"],
        links=["cpw-beta-report/table2.csv", "cpw-beta-r{CPW_BETA_REPEATS}/summary.md"],
        figures=["cpw-beta-report/*.png"],
        headline="stars",
    ),
    Target(
        "cpw-uci",
        "cpw",
        "Table 3: L2, CDM, CW, PW, CPW (beta 8) on 15 UCI sets",
        include=["cpw-uci-report/table3.md"],
        links=["cpw-uci-report/table3.csv", "cpw-uci-report/convergence.csv"],
        figures=["cpw-uci-report/*.png"],
        headline="ci",
    ),
]
TARGET_NAMES = [t.name for t in TARGETS]


def fill(path, variables):
    return path.format(**variables)


# --- reading the targets' markdown -------------------------------------------------------


def md_tables(text):
    """Markdown tables of ``text``: a list of (heading above, header cells, rows of cells)."""
    tables, heading, lines = [], "", text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|\s*:?-{3,}", lines[i + 1].strip()):
            header = split_row(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(split_row(lines[i].strip()))
                i += 1
            tables.append((heading, header, rows))
            continue
        i += 1
    return tables


def split_row(line):
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip() for c in cells]


def plain(cell):
    return cell.replace("*", "").strip().lower()


def count_column(tables, column, good, bad):
    """(good, total) over the cells of every table column named ``column``."""
    n_good = n_total = 0
    for _, header, rows in tables:
        cols = [j for j, h in enumerate(header) if plain(h) == column]
        for row in rows:
            for j in cols:
                if j < len(row):
                    value = plain(row[j])
                    if good(value):
                        n_good += 1
                        n_total += 1
                    elif bad(value):
                        n_total += 1
    return n_good, n_total


def headline_ci(texts):
    g, n = count_column(md_tables("\n".join(texts)), "paper in ci", lambda v: v == "yes", lambda v: v == "no")
    return f"paper in our 95 % CI: {g}/{n}" if n else None


def headline_verdict(texts):
    g, n = count_column(
        md_tables("\n".join(texts)),
        "verdict",
        lambda v: v.startswith("reproduced"),
        lambda v: v.startswith(("not reproduced", "partly", "partially")),
    )
    return f"claims reproduced: {g}/{n}" if n else None


def headline_claims(texts):
    """Numbered claims whose text says 'reproduces' / 'does not reproduce' (unn-posteriors)."""
    text = "\n".join(texts)
    bad = len(re.findall(r"does not reproduce", text, flags=re.I))
    good = len(re.findall(r"(?<!not )\breproduces\b", text, flags=re.I))
    claims = len(re.findall(r"^\d+\. \*\*", text, flags=re.M))
    if not good + bad:
        return None
    return f"claims reproduced: {good}/{good + bad} with a verdict" + (f" (of {claims})" if claims else "")


def headline_stars(texts):
    """cpw-beta: difference cells, '*' = the paper's number is outside our 95 % CI."""
    good = total = 0
    for heading, header, rows in md_tables("\n".join(texts)):
        if "*" not in heading:
            continue
        cols = [j for j, h in enumerate(header) if h.startswith("beta")]
        for row in rows:
            if plain(row[0]) == "average":
                continue  # the Average row is not a dataset
            for j in cols:
                if j < len(row) and re.match(r"^[+-]?\d", row[j]):
                    total += 1
                    good += not row[j].endswith("*")
    return f"paper in our 95 % CI: {good}/{total}" if total else None


def headline_qbc(texts):
    good = total = 0
    for _, header, rows in md_tables("\n".join(texts)):
        cols = [j for j, h in enumerate(header) if h.startswith("qbc - passive")]
        for row in rows:
            for j in cols:
                try:
                    value = float(row[j].replace("−", "-"))
                except (ValueError, IndexError):
                    continue
                total += 1
                good += value < 0
    return f"QbC below passive: {good}/{total} settings" if total else None


def headline_shape(texts):
    text = "\n".join(texts)
    found = re.findall(r"non-decreasing in [st][^:]*: (True|False)", text)
    return f"ours non-decreasing (paper's shape): {found.count('True')}/{len(found)}" if found else None


NUMBER = r"[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def parse_ours(cell):
    """(mean, std, n) from a cell "m", "m ± s" or "m ± s (n=N)"; None if not a number."""
    m = re.match(
        rf"^\s*({NUMBER})\s*%?\s*(?:±\s*({NUMBER}))?\s*(?:\(n\s*=\s*(\d+)\))?", cell.replace("*", "")
    )
    if not m:
        return None
    value = lambda t: float(t.replace("−", "-"))  # noqa: E731
    return (
        value(m.group(1)),
        (value(m.group(2)) if m.group(2) else None),
        (int(m.group(3)) if m.group(3) else None),
    )


def parse_paper(cell):
    """(low, high) from a paper cell "v" or a range "a-b" (either order); None if not a number."""
    text = cell.replace("*", "").replace("−", "-").strip()
    m = re.match(rf"^({NUMBER})\s*(?:-\s*({NUMBER}))?\s*%?$", text)
    if not m:
        return None
    a = float(m.group(1))
    b = float(m.group(2)) if m.group(2) else a
    return min(a, b), max(a, b)


def ci95(mean, std, n):
    """Two-sided 95 % Student-t interval of a mean from its std over n runs; None if n < 2."""
    if std is None or n is None or n < 2:
        return None
    from scipy.stats import t

    half = t.ppf(0.975, n - 1) * std / n**0.5
    return mean - half, mean + half


def side_by_side(texts, pairs):
    """Markdown rows ``| quantity | row | ours | paper | ours - paper | paper in our 95 % CI |``
    for every row of the tables that ``pairs`` name, and (in CI, with a CI) counts.

    The difference is taken to the nearest end of a paper range ("17-15"), 0 inside it. The CI
    is computed from the ours cell's "± std (n=N)"; a cell without a spread gets "-" (no CI)."""
    rows, inside, with_ci = [], 0, 0
    tables = md_tables("\n".join(texts))
    for pair in pairs:
        for heading, header, cells in tables:
            if not re.search(pair.heading, heading) or pair.ours not in header or pair.paper not in header:
                continue
            jo, jp = header.index(pair.ours), header.index(pair.paper)
            jk = [header.index(k) for k in pair.keys if k in header]
            for row in cells:
                if max(jo, jp, *jk) >= len(row):
                    continue
                ours, paper = parse_ours(row[jo]), parse_paper(row[jp])
                if ours is None or paper is None:
                    continue
                mean, std, n = ours
                low, high = paper
                diff = mean - high if mean > high else mean - low if mean < low else 0.0
                ci = ci95(mean, std, n)
                verdict = "-"
                if ci is not None:
                    hit = low <= ci[1] and high >= ci[0]
                    inside += hit
                    with_ci += 1
                    verdict = f"{'yes' if hit else 'no'} [{ci[0]:.4g}, {ci[1]:.4g}]"
                label = ", ".join(f"{header[j]} {row[j]}" for j in jk)
                rows.append(
                    f"| {pair.quantity} | {label} | {row[jo]} | {row[jp]} | {diff:+.4g} | {verdict} |"
                )
    return rows, inside, with_ci


def side_by_side_section(texts, pairs):
    """The markdown block for REPORT.md (empty if no row), and its headline part."""
    rows, inside, with_ci = side_by_side(texts, pairs)
    if not rows:
        return "", None
    block = [
        "Ours beside the paper (derived here from the tables below; difference to the nearest end of a "
        'paper range; the CI is Student\'s t over the runs of an "± std (n=N)" cell, "-" where the cell '
        "gives no spread):",
        "",
        "| quantity | row | ours | paper | ours - paper | paper in our 95 % CI |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    headline = (
        f"paper in our 95 % CI: {inside}/{with_ci}" if with_ci else f"{len(rows)} values beside the paper"
    )
    return "\n".join(block), headline


HEADLINES = {
    "ci": headline_ci,
    "verdict": headline_verdict,
    "claims": headline_claims,
    "stars": headline_stars,
    "qbc": headline_qbc,
    "shape": headline_shape,
}


def demote(text, levels=3):
    """Shift markdown headings down by ``levels`` (the report's own headings stay on top)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"^#{1,6} ", line):
            line = "#" * min(6, levels + len(line) - len(line.lstrip("#"))) + line.lstrip("#")
        out.append(line)
    return "\n".join(out)


def rebase_links(text, folder):
    """Rewrite relative links of a markdown file in ``folder`` (relative to results/)."""

    def fix(m):
        target = m.group(2)
        if re.match(r"^(https?:|/|#|mailto:)", target):
            return m.group(0)
        return f"{m.group(1)}({folder}/{target})"

    return re.sub(r"(!?\[[^\]]*\])\(([^)\s]+)\)", fix, text)


# --- special tables ----------------------------------------------------------------------


def lpo_timing_tables(results):
    """lpo-timing writes CSV only: render Fig. 1 and Table 1 beside the paper's seconds."""
    import pandas as pd

    lines = []
    fig1 = results / "lpo-timing" / "fig1.csv"
    paper_fig1 = ROOT / "experiments" / "paper_values" / "lpo_fig1.csv"
    ratios = []
    if fig1.exists():
        ours = pd.read_csv(fig1)
        lines += [
            "Fig. 1 (every k = 1..k_max at once, neighbour graph included; median seconds):\n",
            "| n | p | k_max | ours (s) | paper (s) | paper / ours |",
            "|---|---|---|---|---|---|",
        ]
        paper = (
            pd.read_csv(paper_fig1)
            if paper_fig1.exists()
            else pd.DataFrame(columns=["n", "p", "paper_seconds"])
        )
        for row in ours.itertuples(index=False):
            match = paper[(paper["n"] == row.n) & (paper["p"] == row.p)]
            if len(match):
                ps = float(match["paper_seconds"].iloc[0])
                ratios.append(ps / row.seconds_median)
                lines.append(
                    f"| {row.n} | {row.p} | {row.k_max} | {row.seconds_median:.4f} | {ps:g} | "
                    f"{ps / row.seconds_median:.0f}× |"
                )
            else:
                lines.append(f"| {row.n} | {row.p} | {row.k_max} | {row.seconds_median:.4f} | | |")
        lines.append("")
    table1 = results / "lpo-timing" / "table1.csv"
    if table1.exists():
        t1 = pd.read_csv(table1)
        lines += [
            "Table 1 (weighted exact LpO, n = 500, one k per cell; seconds, ours with unit and 1/distance weights):\n",
            "| q | k | p | paper (s) | ours, unit (s) | paper / ours | ours, 1/d (s) | paper / ours |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in t1.itertuples(index=False):
            lines.append(
                f"| {r.q:g} | {r.k} | {r.p} | {r.paper_seconds:g} | {r.unit_seconds:.4f} | {r.unit_ratio:.0f}× | "
                f"{r.distance_seconds:.4f} | {r.distance_ratio:.0f}× |"
            )
        ratios += list(t1["unit_ratio"]) + list(t1["distance_ratio"])
        lines.append("")
    headline = (
        f"smallest paper/ours speed ratio: {min(ratios):.0f}× over {len(ratios)} cells" if ratios else None
    )
    return "\n".join(lines), headline


def reference_check(results):
    """The main job against its committed reference (knnx check --atol 0)."""
    ours, ref = results / "ripley" / "results.csv", results / "reference" / "ripley.csv"
    if not (ours.exists() and ref.exists()):
        return None
    from knnx.report import check_against_reference

    problems = check_against_reference(ours, ref, atol=0.0)
    return "matches reference (atol 0)" if not problems else f"{len(problems)} group(s) differ from reference"


# --- running -----------------------------------------------------------------------------


def run_target(name, variables, log_dir):
    """``make NAME VAR=...``; (exit status, wall seconds). Output goes to log_dir/NAME.log."""
    log_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["make", "-C", str(ROOT), name, f"PYTHON={sys.executable}"]
    cmd += [f"{k}={v}" for k, v in variables.items() if DEFAULT_VARS.get(k) != v]
    start = time.perf_counter()
    with open(log_dir / f"{name}.log", "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
    return rc, time.perf_counter() - start


def load_times(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


# --- assembling --------------------------------------------------------------------------


def fmt_seconds(seconds):
    if seconds is None:
        return "-"
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def assemble(results=RESULTS, variables=None, times=None, out=None):
    """Write REPORT.md from the files under ``results``; returns its text."""
    results = Path(results)
    variables = {**DEFAULT_VARS, **(variables or {})}
    times = times if times is not None else load_times(results / "reproduce-times.json")
    summary, sections = [], {p: [] for p in PAPERS}
    for target in TARGETS:
        includes = [fill(p, variables) for p in target.include]
        links = [fill(p, variables) for p in target.links]
        present = [p for p in includes if (results / p).exists()]
        missing = [p for p in includes if not (results / p).exists()]
        texts = [(results / p).read_text(encoding="utf-8") for p in present]
        extra, headline = "", None
        if target.headline == "timing":
            extra, headline = lpo_timing_tables(results)
            if not extra:
                missing.append("lpo-timing/fig1.csv")
        elif target.headline == "reference":
            headline = reference_check(results)
        elif target.headline in HEADLINES:
            headline = HEADLINES[target.headline](texts)
        if target.pairs:
            derived, extra_headline = side_by_side_section(texts, target.pairs)
            extra = "\n\n".join(x for x in (extra, derived) if x)
            headline = "; ".join(h for h in (headline, extra_headline) if h) or None
        figures = sorted(
            {str(f.relative_to(results)) for g in target.figures for f in results.glob(fill(g, variables))}
        )
        run = times.get(target.name, {})
        if run.get("returncode") not in (None, 0):
            status = f"failed (exit {run['returncode']})"
        elif missing:
            status = "missing outputs"
        elif not present and not extra:
            status = "missing outputs"
        else:
            status = "ok" if run else "ok (existing results)"
        summary.append(
            f"| [`{target.name}`](#{target.name}) | {PAPERS[target.paper].split(':')[0]} | "
            f"{fmt_seconds(run.get('seconds'))} | {status} | {headline or '-'} |"
        )
        lines = [
            f'<a id="{target.name}"></a>',
            f"### `make {target.name}`: {target.title}",
            "",
            f"Wall time: {fmt_seconds(run.get('seconds'))}"
            + (f" (run {run['finished']})" if run.get("finished") else " (not run by make reproduce)")
            + f". Status: {status}."
            + (f" Headline: {headline}." if headline else ""),
            "",
        ]
        if run.get("log"):
            lines += [f"Log: [{run['log']}]({run['log']})", ""]
        for p in missing:
            lines += [f"**Missing:** `results/{p}` (run `make {target.name}`).", ""]
        if extra:
            lines += [extra, ""]
        for p, text in zip(present, texts, strict=True):
            folder = str(Path(p).parent)
            lines += [f"From [`{p}`]({p}):", "", demote(rebase_links(text.strip(), folder)), ""]
        existing_links = [p for p in links if (results / p).exists()]
        if existing_links:
            lines += ["Other outputs: " + ", ".join(f"[`{p}`]({p})" for p in existing_links) + ".", ""]
        if figures:
            lines += ["Figures:", ""] + [f"![{f}]({f})" for f in figures] + [""]
        sections[target.paper].append("\n".join(lines))
    total = sum(float(times[t]["seconds"]) for t in TARGET_NAMES if t in times and "seconds" in times[t])
    head = [
        "# knnx: reproduction report",
        "",
        "Assembled by `experiments/reproduce.py` (`make reproduce`) from the side-by-side reports that",
        "each paper target writes under `results/`; nothing here is recomputed. Wall times are those of",
        "the last `make reproduce` run recorded in `results/reproduce-times.json` (2 shared cores).",
        "Makefile variables: " + ", ".join(f"{k}={v}" for k, v in variables.items()) + ".",
        "",
        "## Summary",
        "",
        "| target | paper | wall time | status | headline agreement |",
        "|---|---|---|---|---|",
        *summary,
        "",
        f"Total wall time of the recorded runs: {fmt_seconds(total) if total else '-'}.",
        "",
    ]
    body = []
    for key, title in PAPERS.items():
        if sections[key]:
            body += [f"## {title}", "", *sections[key]]
    text = "\n".join(head + body).rstrip() + "\n"
    out = Path(out) if out is not None else results / "REPORT.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assemble-only", action="store_true", help="run nothing; assemble existing results")
    parser.add_argument(
        "--only", nargs="+", choices=TARGET_NAMES, metavar="TARGET", help="run only these targets"
    )
    parser.add_argument(
        "--var", action="append", default=[], metavar="NAME=VALUE", help="a Makefile variable"
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="results folder (default results/)")
    args = parser.parse_args(argv)
    variables = dict(DEFAULT_VARS)
    for item in args.var:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--var: expected NAME=VALUE, got '{item}'")
        variables[name] = value
    times_path = args.results / "reproduce-times.json"
    times = load_times(times_path)
    failed = []
    if not args.assemble_only:
        for name in args.only or TARGET_NAMES:
            print(f"make {name} ...", flush=True)
            rc, seconds = run_target(name, variables, args.results / "reproduce-logs")
            log = f"reproduce-logs/{name}.log"
            times[name] = {
                "seconds": round(seconds, 1),
                "returncode": rc,
                "finished": time.strftime("%Y-%m-%d %H:%M"),
                "log": log,
                "variables": variables,
            }
            args.results.mkdir(parents=True, exist_ok=True)
            times_path.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")
            print(
                f"  {'ok' if rc == 0 else f'FAILED (exit {rc}, see results/{log})'} in {fmt_seconds(seconds)}"
            )
            if rc != 0:
                failed.append(name)
    assemble(args.results, variables, times)
    print(f"wrote {args.results / 'REPORT.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
