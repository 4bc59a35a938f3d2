"""Tables and regression checks built from result files only."""

import numpy as np
import pandas as pd

from knnx._text import escape_control, markdown_text
from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS
from knnx.limits import check_tolerance
from knnx.results import read_results
from knnx.stats.configurations import configuration_labels
from knnx.stats.ties import best_mask

GROUP_KEYS = ["dataset", "algorithm", "params", "protocol", "metric"]
# The columns that count what a summary's row pools (see summarize and results_table).
POOL_COUNTS = ("seeds", "configurations", "datasets", "protocols", "experiments")


def summarize(frame, by=("dataset", "algorithm", "params"), metric=None):
    """Mean, standard deviation (ddof=1; 0 for a single value) and count per group, of
    the values that are not NaN (a metric undefined on a fold, such as ``auc`` on a test
    part of a single class, is left out of all three).

    ``by`` names columns of the results frame (a list, or a text of comma-separated
    names: :func:`grouping`), each once; a parameter by its bare name (``k``) or its
    column (``param_k``), not both; ``configuration`` for :func:`configuration_labels`
    (pools seeds, see :data:`knnx.stats.configurations.SEED_PARAMS`).

    ``metric`` may also name a timing column (:data:`knnx.results.TIMINGS`:
    ``fit_seconds``, ``predict_seconds``, ``tune_seconds``): each cell counts once, with
    that column's value (an active run's cell: the sum over its rounds).

    Seeds pooled are said: when a group pools several seed settings (values of
    ``seed`` or ``random_state`` not grouped by), a column ``seeds`` before ``mean``
    counts them per group (``n`` counts their values, folds times seeds)."""
    from knnx.results import PARAM_PREFIX, TIMINGS

    named = grouping(by)
    repeated = next((c for i, c in enumerate(named) if c in named[:i]), None)
    if repeated is not None:
        raise ResultsError(f"column '{repeated}' is given twice", param="by")
    if "configuration" in named and "configuration" not in frame.columns:
        frame = frame.assign(configuration=configuration_labels(frame))
    by = [
        c if c in frame.columns or PARAM_PREFIX + c not in frame.columns else PARAM_PREFIX + c for c in named
    ]
    twice = next((i for i, c in enumerate(by) if c in by[:i]), None)
    if twice is not None:  # k and param_k
        raise ResultsError(f"'{named[by.index(by[twice])]}' and '{named[twice]}' name one column", param="by")
    for col in by:
        if col not in frame.columns:
            known = [c for c in frame.columns if not c.startswith(PARAM_PREFIX)] + ["configuration"]
            params = [c.removeprefix(PARAM_PREFIX) for c in frame.columns if c.startswith(PARAM_PREFIX)]
            raise ResultsError(
                f"unknown column '{col}'; known: {', '.join(known)}; parameters: {', '.join(params) or 'none'}",
                param="by",
            )
    if metric in TIMINGS and metric not in set(frame["metric"]):
        frame = timing_rows(frame, metric)
    if metric is not None:
        if metric not in set(frame["metric"]):
            raise ResultsError(
                f"no rows for metric '{metric}'; present: {', '.join(map(repr, sorted(set(frame['metric']))))}; "
                f"timings: {', '.join(TIMINGS)}",
                param="metric",
            )
        frame = frame[frame["metric"] == metric]
    keys = by + (["metric"] if "metric" not in by else [])
    grouped = frame.groupby(keys, sort=False)["value"]
    with np.errstate(over="ignore"):  # a sum that overflows: its mean is scaled below
        out = grouped.agg(mean="mean", std=_std, n="count")
    overflowed = np.isinf(out["mean"]).to_numpy()
    if overflowed.any():  # finite values whose sum overflows (1e308 twice): scaled, as _std does
        means = grouped.agg(_scaled_mean)
        out.loc[overflowed, "mean"] = means[overflowed].to_numpy()
    seeds = _seeds_pooled(frame, keys, out.index)
    out = out.reset_index()
    if seeds is not None:
        out.insert(out.columns.get_loc("mean"), "seeds", seeds)
    return out


def grouping(by):
    """The columns ``by`` names, as a list: a text is split at its commas
    (``"dataset, k"``: ``["dataset", "k"]``, blanks dropped). ResultsError (about ``by``)
    when it names no column or holds something that is not a name."""
    if isinstance(by, str):
        named = [c.strip() for c in by.split(",") if c.strip()]
        if not named:
            raise ResultsError(f"expected one column or more, got {by!r}", param="by")
        return _groups_only(named)
    try:
        named = list(by)
    except TypeError:
        named = [by]
    wrong = [c for c in named if not isinstance(c, str)]
    if wrong:
        raise ResultsError(f"expected column names (texts), got {wrong[0]!r}", param="by")
    if not named:
        raise ResultsError("expected one column or more, got none", param="by")
    return _groups_only(named)


# Columns that hold what a table summarises, not what names a group.
MEASURED_COLUMNS = ("value", "fit_seconds", "predict_seconds", "tune_seconds")


def _groups_only(named):
    """``named`` unless it holds a measured column (each of its values would be a group
    of one): ResultsError (about ``by``) then."""
    measured = next((c for c in named if c in MEASURED_COLUMNS), None)
    if measured is not None:
        raise ResultsError(
            f"{measured!r} is a measured column, what the table summarises (--metric), not a group: "
            "group by dataset, algorithm, configuration, protocol, a parameter, ...",
            param="by",
        )
    return named


def _seeds_pooled(frame, keys, index):
    """Per group of ``index`` (the groups of ``keys``), how many seed settings it pools
    (:data:`knnx.stats.configurations.SEED_PARAMS` not grouped by); None when no group
    pools more than one (nothing to say)."""
    from knnx.results import PARAM_PREFIX, param_text
    from knnx.stats.configurations import SEED_PARAMS

    seeds = [
        c
        for c in frame.columns
        if c.startswith(PARAM_PREFIX) and c.removeprefix(PARAM_PREFIX) in SEED_PARAMS and c not in keys
    ]
    if not seeds or frame.empty:
        return None
    levels = list(range(len(keys)))
    # a seed left at None and no seed parameter at all are one setting: no seed
    unseeded = param_text(None)
    frame = frame.assign(**{c: frame[c].where(frame[c] != "", unseeded) for c in seeds})
    counts = frame.groupby(keys + seeds, sort=False).size().groupby(level=levels, sort=False).size()
    if counts.max() <= 1:
        return None
    return counts.reindex(index).to_numpy(dtype=np.int64)


def timing_rows(frame, column):
    """One row per cell of ``frame`` whose metric is the timing ``column`` and whose value
    is the cell's time (an active cell's rows: one per round, summed)."""
    from knnx.results import CELL_COLUMNS, ROUND

    cell = [
        c
        for c in frame.columns
        if c not in ("metric", "value", "fit_seconds", "predict_seconds", "tune_seconds")
    ]
    if ROUND in frame.columns:
        rounds = frame.drop_duplicates([*CELL_COLUMNS, ROUND])
        cell = [c for c in cell if c != ROUND]
        frame = rounds.groupby(cell, sort=False, dropna=False)[column].sum().reset_index()
    else:
        frame = frame.drop_duplicates(CELL_COLUMNS)
    return frame.assign(metric=column, value=frame[column])


def _std(values):
    """Sample standard deviation (ddof=1) of the values that are not NaN; 0 for one or none.
    Values whose squares overflow (beyond about 1e154) are scaled by their largest
    magnitude first, so finite values give a finite deviation."""
    values = values.dropna()
    if len(values) < 2:
        return 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        std = float(np.std(values, ddof=1))
    values = values.to_numpy(dtype=np.float64)
    if np.isfinite(std) or not np.isfinite(values).all():
        return std
    scale = float(np.max(np.abs(values)))
    return scale * float(np.std(values / scale, ddof=1))


def _scaled_mean(values):
    """The mean of the values that are not NaN, scaled by their largest magnitude so that
    finite values whose sum overflows give their finite mean (±inf stays ±inf)."""
    values = values.dropna().to_numpy(dtype=np.float64)
    if not len(values) or not np.isfinite(values).all():
        return float(np.mean(values)) if len(values) else float("nan")
    scale = float(np.max(np.abs(values)))
    return scale * float(np.mean(values / scale))


def mark_best(summary, within="dataset"):
    """Boolean column: the best mean per (``within``, metric) group (lowest error, highest
    score), every mean that ties it (knnx's tie rule, :mod:`knnx.stats.ties`) marked too.

    Rows of reported quantities (names that are not metrics, e.g. ``chosen_k``) are
    never marked.
    """
    best = np.zeros(len(summary), dtype=bool)
    group_cols = [c for c in (within, "metric") if c in summary.columns]
    grouping = group_cols if len(group_cols) > 1 else group_cols[0]  # a list of one: pandas 4 changes keys
    for _, idx in summary.groupby(grouping, sort=False).groups.items():
        sub = summary.loc[idx]
        metric = sub["metric"].iloc[0]
        if metric not in METRICS and metric not in LOWER_IS_BETTER:
            continue  # a reported quantity (e.g. chosen_k), not a score
        tied = best_mask(sub["mean"].to_numpy(dtype=np.float64), LOWER_IS_BETTER.get(metric, False))
        best[summary.index.get_indexer(sub.index[tied])] = True
    return best


def best_rule(summary, within="dataset"):
    """The sentence that says what :func:`mark_best`'s mark means for ``summary``."""
    metrics = [m for m in dict.fromkeys(summary["metric"]) if m in METRICS or m in LOWER_IS_BETTER]
    lower = [m for m in metrics if LOWER_IS_BETTER.get(m, False)]
    direction = "lowest" if len(lower) == len(metrics) else "highest" if not lower else "lowest or highest"
    group = f"per {within}" if within in summary.columns else "over all rows"
    return (
        f"Best: the {direction} mean {group} among these rows. It is the best on the test folds, "
        "an optimistic choice; to choose a setting honestly, tune it on inner folds (tune: in the spec)."
    )


def _value_cell(row, digits):
    """``mean ± std``; the mean alone for a single value (no spread to show). Magnitudes
    of 1e12 or more in exponent form (``5.0000e+306``), not hundreds of digits."""
    style = "e" if max(abs(row.mean), abs(row.std) if row.n > 1 else 0.0) >= 1e12 else "f"
    if row.n <= 1:
        return f"{row.mean:.{digits}{style}}"
    return f"{row.mean:.{digits}{style}} ± {row.std:.{digits}{style}}"


def format_table(summary, fmt="md", digits=4):
    """Render a summary as Markdown, CSV or LaTeX (booktabs: ``\\usepackage{booktabs}``).

    The best mean per dataset is marked (bold) and a line says so; a group of one
    value shows its mean alone, not ``± 0``, its count in the n column."""
    summary = summary.copy()
    summary["best"] = mark_best(summary)
    if fmt == "csv":
        return summary.to_csv(index=False, lineterminator="\n")
    keys = [c for c in summary.columns if c not in ("mean", "std", "n", "best")]
    if "metric" in keys and summary["metric"].nunique() == 1 and set(keys) - {"metric", *POOL_COUNTS}:
        keys.remove("metric")  # a one-metric table names its metric elsewhere (kept when it is the group)
    marked = bool(summary["best"].any())
    cells = []
    for row in summary.itertuples(index=False):
        value = _value_cell(row, digits)
        if row.best:
            value = f"**{value}**" if fmt == "md" else "\\textbf{" + value.replace("±", "$\\pm$") + "}"
        elif fmt == "latex":
            value = value.replace("±", "$\\pm$")
        cells.append([escape_control(str(getattr(row, k))) for k in keys] + [value, str(row.n)])
    header = [k.removeprefix("param_") for k in keys] + ["mean ± std", "n"]
    if fmt == "md":
        lines = [
            "| " + " | ".join(map(markdown_text, header)) + " |",
            "|" + "|".join("---" for _ in header) + "|",
        ]
        lines += [
            "| " + " | ".join([markdown_text(c) for c in row[: len(keys)]] + row[len(keys) :]) + " |"
            for row in cells
        ]
        if marked:
            lines += ["", best_rule(summary).replace("Best:", "Bold:", 1)]
        return "\n".join(lines) + "\n"
    if fmt == "latex":
        from knnx.reporting.latex import latex_escape as esc

        lines = ["% " + best_rule(summary).replace("Best:", "Bold:", 1)] if marked else []
        lines += [
            "\\begin{tabular}{" + "l" * len(keys) + "rr}",
            "\\toprule",
            " & ".join(esc(h) for h in header[: len(keys)]) + " & mean $\\pm$ std & $n$ \\\\",
            "\\midrule",
        ]
        lines += [
            " & ".join([esc(c) for c in row[: len(keys)]] + row[len(keys) :]) + " \\\\" for row in cells
        ]
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"
    raise ResultsError(f"expected md, csv or latex, got '{fmt}'", param="fmt")


def results_table(results, by=("dataset", "configuration"), metric="error", fmt="md"):
    """``knnx table``: mean ± std of ``metric`` per group of a results file or frame (of
    an active run, its last round: :func:`knnx.results.last_round`). A grouping that
    pools several configurations or datasets per row says so: a column counts them
    (``configurations``, ``datasets``, before the mean) and a line under the table
    (a comment above it in LaTeX; CSV has the columns alone)."""
    from knnx.results import last_round

    by = grouping(by)
    frame = results if isinstance(results, pd.DataFrame) else read_results(results)
    frame = last_round(frame)[0]
    summary = summarize(frame, by, metric)
    pooled = _pooled(frame, summary, by, metric)
    for column, counts in pooled.items():
        summary.insert(summary.columns.get_loc("mean"), column, counts)
    text = format_table(summary, fmt)
    notes = [_POOLED_NOTES[column] for column in pooled]
    if not notes:
        return text
    if fmt == "md":
        return text + "\n" + "\n".join(notes) + "\n"
    return "".join(f"% {note}\n" for note in notes) + text if fmt == "latex" else text


_POOLED_NOTES = {
    "configurations": (
        "Pooled: rows with configurations > 1 average several configurations (settings that differ in a "
        "parameter not grouped by); --by dataset,configuration separates them."
    ),
    "protocols": (
        "Pooled: rows with protocols > 1 average the folds of several protocols (a file pooling runs); "
        "protocol added to --by separates them."
    ),
    "experiments": (
        "Pooled: rows with experiments > 1 average the rows of several experiments (a file pooling runs, "
        "which may differ outside params: preprocessing, data); experiment added to --by separates them."
    ),
    "datasets": (
        "Pooled: rows with datasets > 1 average the folds of several datasets (each fold one value, "
        "whatever its dataset's size); dataset added to --by separates them."
    ),
}


def _pooled(frame, summary, by, metric):
    """{column: per row of ``summary``, how many configurations (``configurations``),
    datasets (``datasets``), protocols or experiments it pools}, each only when some row
    pools more than one: a grouping without ``configuration`` (``--by
    dataset,algorithm``) would average an algorithm's grid silently otherwise, one
    without ``dataset`` (``--by algorithm``) its datasets, and a file pooling runs the
    runs' rows."""
    from knnx.results import PARAM_PREFIX, TIMINGS

    if metric is None:
        return {}
    keys = [c for c in summary.columns if c not in ("mean", "std", "n", "metric", "seeds")]
    rows = frame.assign(configuration=configuration_labels(frame))  # labelled as summarize labels
    if metric in TIMINGS and metric not in set(frame["metric"]):
        rows = rows.drop_duplicates(["dataset", "algorithm", "params", "repeat", "fold"])
    else:
        rows = rows[rows["metric"] == metric]
    keys = [
        k if k in rows.columns or PARAM_PREFIX + k not in rows.columns else PARAM_PREFIX + k for k in keys
    ]
    counted = {}
    if "configuration" not in by:
        counted["configurations"] = rows["configuration"]
    if "dataset" not in by:
        counted["datasets"] = rows["dataset"]
    if "protocol" not in by and "protocol" in rows.columns:
        counted["protocols"] = rows["protocol"]
    if "experiment" not in by and "experiment" in rows.columns:
        counted["experiments"] = rows["experiment"]
    out = {}
    for column, values in counted.items():
        rows = rows.assign(_pooled=values.to_numpy())
        if not keys:  # --by metric: every row one group
            n = rows["_pooled"].nunique()
            if n > 1:
                out[column] = [n] * len(summary)
            continue
        counts = rows.groupby(keys, sort=False)["_pooled"].nunique()
        if counts.max() > 1:
            out[column] = [
                int(counts[tuple(r) if len(keys) > 1 else r[0]])
                for r in summary[keys].itertuples(index=False)
            ]
    return out


def check_against_reference(
    path, reference, atol=0.01, atol_for=None, atol_metric=None, known_algorithms=False
):
    """Compare per-group means with a reference results file.

    Groups are (dataset, algorithm, params, protocol, metric). Returns a list of
    problems (one string each): groups whose number of values differs (a row lost or
    added, a value NaN on one side), groups whose mean moved by more than their
    tolerance, and reference groups missing from the results. Empty when all hold. Groups present
    only in the results are not problems; :func:`new_groups` lists them.

    ``atol_for`` maps an algorithm name to its own tolerance, overriding ``atol`` for
    its groups (the regression gate keeps knnx's algorithms exact and gives wrapped
    third-party baselines a small one, see :mod:`knnx.papers.gate`); ``atol_metric`` maps a
    metric to a tolerance its groups get at least. A change below
    1e-6 is printed with all 17 significant digits, so that it is visible.
    ``known_algorithms``: ResultsError when ``atol_for`` names an algorithm the
    reference does not have (a misspelt name would leave its groups at ``atol``).
    """
    atol = check_tolerance(atol, "atol")
    atol_for = {name: check_tolerance(tol, "atol_for") for name, tol in dict(atol_for or {}).items()}
    atol_metric = {name: check_tolerance(tol, "atol_metric") for name, tol in dict(atol_metric or {}).items()}
    ours = summarize(read_results(path), by=GROUP_KEYS)
    given = read_results(reference)
    if not len(given):  # nothing to check against: every check would hold
        raise ResultsError(
            f"{reference}: no rows; a reference holds the results to check against", param="reference"
        )
    ref = summarize(given, by=GROUP_KEYS)
    if known_algorithms:
        _check_known(atol_for, ref, reference)
    merged = ref.merge(ours, on=GROUP_KEYS, how="left", suffixes=("_ref", ""), indicator="found")
    problems = []
    protocols = _protocols_differ(ours, ref)
    for row in merged.itertuples(index=False):
        group = _group_text(row, protocols)
        tol = max(atol_for.get(row.algorithm, atol), atol_metric.get(row.metric, 0.0))
        if row.found == "left_only":
            problems.append(f"{group}: missing from {path}")
            continue
        if pd.isna(row.mean) and pd.isna(row.mean_ref):
            continue  # NaN in both: unchanged
        diff = abs(row.mean - row.mean_ref)
        if np.isnan(diff):  # a NaN on one side only has moved too
            problems.append(f"{group}: {row.mean:.17g} vs reference {row.mean_ref:.17g} (NaN on one side)")
        elif row.n != row.n_ref:  # a mean over other values: a row lost or added, a value now NaN
            problems.append(
                f"{group}: {int(row.n)} values vs {int(row.n_ref)} in the reference (a row lost or added, or a "
                "value NaN on one side)"
            )
        elif diff > tol:
            f = ".6f" if diff >= 1e-6 else ".17g"
            problems.append(
                f"{group}: {row.mean:{f}} vs reference {row.mean_ref:{f}} (|diff| {diff:.3g} > {tol:g})"
            )
    return problems


def _check_known(atol_for, ref, reference):
    known = list(dict.fromkeys(ref["algorithm"]))
    unknown = [name for name in atol_for if name not in known]
    if unknown:
        shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
        raise ResultsError(
            f"no algorithm '{unknown[0]}' in {reference} (its algorithms: {shown or 'none'})",
            param="atol_for",
        )


def new_groups(path, reference):
    """Groups of ``path`` that the reference does not have (reported, not failed)."""
    ours = summarize(read_results(path), by=GROUP_KEYS)
    given = read_results(reference)
    if not len(given):  # nothing to check against: every check would hold
        raise ResultsError(
            f"{reference}: no rows; a reference holds the results to check against", param="reference"
        )
    ref = summarize(given, by=GROUP_KEYS)
    merged = ours.merge(ref[GROUP_KEYS], on=GROUP_KEYS, how="left", indicator=True)
    fresh = merged[merged["_merge"] == "left_only"]
    protocols = _protocols_differ(ours, ref)
    return [_group_text(r, protocols) for r in fresh.itertuples(index=False)]


def _protocols_differ(ours, ref):
    """Whether the two files' groups hold more than one protocol between them: then a
    group's text names its protocol (else a reference of another protocol would read
    as "new" and "missing" for one text)."""
    return len(set(ours["protocol"]) | set(ref["protocol"])) > 1


def _group_text(row, protocols):
    text = f"{row.dataset} {row.algorithm} {row.params} {row.metric}"
    return f"{text} {row.protocol}" if protocols else text
