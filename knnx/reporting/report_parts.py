"""The parts of report.html that lead it (see :mod:`knnx.reporting.html`): the
comparison of the primary metric (the table a paper prints, the critical-difference
diagram, the tests against a control), the hyper-parameters the run chose, the
datasets' characteristics and the estimators' diagnostics. Each takes the run's
frame (labelled with configurations) and returns HTML text; nothing is read here."""

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS
from knnx.reporting._html import collapsed, html_table
from knnx.reporting._html import escape as _e
from knnx.reporting.characteristics import VIEWS_COLUMN


def primary_metric(frame, metric=None):
    """``metric`` if given (ResultsError unless the frame scores it), else the first
    metric of the frame (the spec's first): the one the report leads with."""
    present = [m for m in dict.fromkeys(frame["metric"]) if m in METRICS]
    if metric is not None:
        if metric not in present:
            raise ResultsError(
                f"no rows for metric '{metric}'; metrics: {', '.join(present) or 'none'}", param="metric"
            )
        return metric
    return present[0] if present else None


def run_comparison(frame, metric, select="all", alpha=0.05, control=None):
    """The :class:`knnx.stats.compare.CompareResult` the report shows for ``metric``,
    or the one-line reason there is none (a str)."""
    from knnx.stats.compare import compare

    try:
        return compare(frame, metric=metric, select=select, alpha=alpha, control=control)
    except ResultsError as exc:
        if exc.param in ("control", "select"):
            raise
        if control is not None:  # no comparison to make: the control must still name a configuration
            from knnx.stats.configurations import configuration_labels
            from knnx.stats.control import find_contestant

            rows = frame[frame["metric"] == metric]
            find_contestant(dict.fromkeys(configuration_labels(rows)) if len(rows) else [], control)
        return str(exc)


def left_out_html(result):
    """The contestants a comparison left out, each with its reason (none: empty text)."""
    if isinstance(result, str) or result.left_out.empty:
        return ""
    items = "".join(
        f"<li>{_e(r.contestant)}: {_e(r.reason)}</li>" for r in result.left_out.itertuples(index=False)
    )
    return (
        f"<p class='note'>Left out of the comparison of {_e(result.metric)}:</p><ul class='note'>{items}</ul>"
    )


def comparison_html(result, characteristics, figure_tag):
    """The first screen of one metric's comparison: the compact table (means, the
    standard deviations on hover or with a checkbox, marks, average ranks) beside the
    CD diagram, then the legend, Friedman's test and the tests against the control."""
    import re

    from knnx.reporting.comparison import cd_diagram, drawn, figures_lines, selection_note
    from knnx.reporting.wide import compact_legend, to_compact_html, wide_table

    if isinstance(result, str):
        return f"<p class='note'>No comparison: {_e(result)}.</p>"
    table = wide_table(result, characteristics)
    toggle = "sd-" + re.sub(r"[^A-Za-z0-9_-]", "_", result.metric)
    if drawn(result):
        side = figure_tag(cd_diagram(result), f"critical-difference diagram, {result.metric}")
    else:  # too many contestants for a diagram: the tables hold them all
        side = f"<p class='note'>{_e(figures_lines(result)[0])}</p>"
    parts = [
        f"<p class='note'>{_e(selection_note(result))}</p>",
        f"<input type='checkbox' id='{toggle}' class='sd-toggle'><label for='{toggle}' class='note'> show the "
        "standard deviations</label>",
        f"<div class='first'><div class='primary'>{to_compact_html(table, toggle)}</div>"
        f"<div class='side'>{side}</div></div>",
        f"<p class='note'>{_e(compact_legend(table))}</p>",
        *(f"<p class='note'>{_e(line)}</p>" for line in table.lines),
    ]
    if result.control_tests is not None:
        parts.append(control_html(result))
    return "".join(parts)


def summary_figures_html(result, figure_tag):
    """The figures across datasets of a comparison (:mod:`knnx.reporting.summary_figures`:
    rank per dataset, wins/ties/losses against the control or the best-ranked, mean
    ranks with the critical difference), which scale to 100+ datasets."""
    from knnx.reporting import summary_figures as sf
    from knnx.reporting.comparison import drawn

    if isinstance(result, str) or not drawn(result):  # comparison_html said why
        return ""
    against = result.control or "the best mean rank"
    return "".join(
        [
            figure_tag(sf.rank_heatmap(result), f"{result.metric}: rank per dataset"),
            figure_tag(sf.win_tie_loss(result), f"{result.metric}: wins, ties and losses against {against}"),
            figure_tag(sf.mean_ranks(result), f"{result.metric}: mean ranks with the critical difference"),
        ]
    )


def control_html(result):
    """The tests against the control: Holm and Bonferroni-Dunn after Friedman, and the
    Bayesian signed-rank test's three probabilities."""
    t = result.control_tests
    lower = LOWER_IS_BETTER.get(result.metric, False)
    shown = pd.DataFrame(
        {
            "configuration": t["configuration"],
            "mean rank": t["mean_rank"],
            "z": t["z"],
            "p (Holm)": t["p_holm"],
            "p (Bonferroni-Dunn)": t["p_bonferroni_dunn"],
            "P(control better)": t["p_control_better"],
            "P(equivalent)": t["p_rope"],
            "P(control worse)": t["p_control_worse"],
        }
    )
    cd = float(t["bonferroni_dunn_cd"].iloc[0])
    return (
        f"<h3>Against the control {_e(result.control)}</h3><p class='note'>After Friedman (Demšar 2006, Sec. 3.2.2): "
        f"z of the mean ranks, p adjusted by Holm and by Bonferroni-Dunn (CD = {cd:.3g}) over the "
        f"{len(t)} comparisons, alpha {result.alpha:g}. Bayesian signed-rank test (Benavoli et al. 2017) on the "
        f"per-dataset means, region of practical equivalence ±{result.rope:g} ({'lower' if lower else 'higher'} "
        "is better): the probability that the control is better, equivalent, or worse.</p>"
        + html_table(shown)
    )


def time_tables_html(frame, select="all", characteristics=None):
    """Seconds per dataset and contestant, as the comparison's table (``knnx compare
    --metric fit_seconds``): the mean fit time (a tuned cell's inner search included)
    and the mean predict time over the folds, fastest in bold, no significance marks
    (a time's noise is the machine's)."""
    from knnx.reporting.wide import render, wide_table
    from knnx.results import last_round

    parts = []
    last = last_round(frame)[0]
    for timing in ("fit_seconds", "predict_seconds"):
        result = run_comparison(last, timing, select)
        if isinstance(result, str):
            parts.append(f"<p class='note'>No table of {timing}: {_e(result)}.</p>")
            continue
        parts.append(
            f"<h3>{timing} per dataset and contestant</h3>"
            + render(wide_table(result, characteristics), "html")
        )
    return "".join(parts)


def tuning_html(frame):
    """What the tuned cells chose (rows ``chosen_<param>``, read back as the grid's values:
    counts per value over the folds, per algorithm and dataset), the choices at an edge
    of their grid (:func:`knnx.reporting.tuning.edge_lines`), and the parameters that
    depend on the dataset (``params_for``: their value per dataset)."""
    from knnx.reporting.tuning import choices, counts_text, edge_lines

    parts = []
    chosen = choices(frame)
    if len(chosen):
        rows = []
        for (alg, name), sub in chosen.groupby(["algorithm", "parameter"], sort=False):
            per = [f"{d}: {counts_text(part)}" for d, part in sub.groupby("dataset", sort=False)]
            rows.append(
                {
                    "algorithm": alg,
                    "parameter": name,
                    "chosen (value×folds)": counts_text(sub),
                    "per dataset": "; ".join(per),
                }
            )
        parts.append(
            "<p class='note'>Tuned on inner folds of each training part (tune:): the value each fold chose, "
            "counted, in the grid's order.</p>" + html_table(pd.DataFrame(rows))
        )
        parts += [f"<p class='warn'>{_e(line)}.</p>" for line in edge_lines(frame)]
    dependent = _dataset_dependent(frame)
    if len(dependent):
        parts.append(
            "<p class='note'>Parameters that depend on the dataset (params_for): one contestant each, its value "
            "per dataset.</p>" + html_table(dependent)
        )
    return "".join(parts) or "<p class='note'>Nothing was tuned and no parameter depends on the dataset.</p>"


def _dataset_dependent(frame):
    """algorithm, parameter, values per dataset: the parameters of
    :func:`knnx.stats.configurations.dataset_dependent`."""
    from knnx.stats.configurations import dataset_dependent_values

    rows = [
        {
            "algorithm": alg,
            "parameter": name,
            "value per dataset": "; ".join(f"{d}: {v}" for d, v in per.items()),
        }
        for alg, name, per in dataset_dependent_values(frame)
    ]
    return pd.DataFrame(rows)


def datasets_html(characteristics):
    """The datasets' characteristics (datasets.csv): n, d, classes, nominal attributes,
    missing values."""
    if characteristics is None:
        return "<p class='note'>No datasets.csv in this folder (a run of an older knnx).</p>"
    shown = characteristics.reset_index()
    counts = [c for c in shown.columns if c not in ("dataset", VIEWS_COLUMN)]
    shown = shown.astype({c: "Int64" for c in counts if shown[c].notna().all()})
    return html_table(shown)


def diagnostics_frame(frame):
    """The reported quantities (rows whose metric is neither a metric nor a choice of
    ``tune:`` (:func:`knnx.reporting.tuning.tune_choice_mask`), e.g. ``loo_error``, ``epochs``): mean per
    (dataset, configuration, quantity)."""
    from knnx.reporting.tuning import tune_choice_mask

    rows = frame[~frame["metric"].isin(list(METRICS)).to_numpy() & ~tune_choice_mask(frame)]
    if rows.empty:
        return rows
    out = rows.groupby(["metric", "dataset", "configuration"], sort=False)["value"].agg(["mean", "count"])
    return out.reset_index().rename(columns={"metric": "quantity", "count": "n"}).astype({"mean": np.float64})


def timings_html(frame, environment, options=None, characteristics=None):
    """The Timings section: seconds per algorithm, per dataset and contestant
    (:func:`time_tables_html`), and the kernels' warm-up per invocation (collapsed)."""
    parts = ["<h2 id='timings'>Timings</h2>"]
    cell = ["dataset", "algorithm", "params", "repeat", "fold"]
    cells = frame.drop_duplicates(cell)
    if "round" in frame.columns:  # an active cell's time: the sum of its rounds'
        rounds = frame.drop_duplicates([*cell, "round"])
        cells = (
            rounds.groupby(cell, sort=False)[["fit_seconds", "predict_seconds", "tune_seconds"]]
            .sum()
            .reset_index()
        )
    table = (
        cells.groupby("algorithm", sort=False)
        .agg(
            cells=("fit_seconds", "size"),
            median_fit_seconds=("fit_seconds", "median"),
            median_tune_seconds=("tune_seconds", "median"),
            median_predict_seconds=("predict_seconds", "median"),
            total_seconds=("fit_seconds", "sum"),
        )
        .reset_index()
    )
    table["total_seconds"] += cells.groupby("algorithm", sort=False)["predict_seconds"].sum().to_numpy()
    parts.append(
        "<p class='note'>Per algorithm, over its cells, seconds of wall time: fit (for a tuned cell the inner "
        "search and the refit), of which the inner search (tune), and predict; knnx's kernels are compiled "
        "before the first timed cell.</p>"
    )
    parts.append(html_table(table))
    parts.append(time_tables_html(frame, options.select if options else "all", characteristics))
    runs = environment.get("runs", []) if isinstance(environment, dict) else []
    warm = [r.get("warmup_seconds") for r in runs if isinstance(r, dict) and r.get("warmup_seconds")]
    if warm:
        parts.append(
            "<p class='note'>Seconds spent compiling (or loading from numba's cache) each algorithm's kernels "
            "before its first timed cell, per invocation:</p>"
        )
        rows = [
            {"invocation": i + 1, "algorithm": a, "seconds": float(s)}
            for i, w in enumerate(warm)
            for a, s in w.items()
        ]
        parts.append(html_table(pd.DataFrame(rows)))
    return parts[0] + collapsed(
        "Seconds per algorithm, per dataset and contestant, and the kernels' warm-up", parts[1:]
    )
