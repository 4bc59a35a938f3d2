"""The end of a run: results.csv and curves.csv sorted in cell order, then the
summaries (summary.csv, summary.md), the figures and report.html (see
:func:`finish_outputs`)."""

from pathlib import Path

from knnx.errors import ResultsError
from knnx.reporting.summaries import configuration_labels, format_table, mark_best, summarize
from knnx.results import (
    COLUMNS,
    CURVE_COLUMNS,
    ROUND,
    atomic_write_text,
    last_round,
    read_curves,
    read_results,
    results_columns,
    rows_to_csv,
    with_param_columns,
)


def finish_outputs(out, *, order, metrics, names, rounds=False, curves=False, html_report=True):
    """Sort results.csv (and curves.csv if ``curves``) in cell order, write the summaries
    and figures, and report.html if ``html_report``; return the notes (one line per
    figure or report that could not be made, saying why).

    ``order``: {cell key: index} of the spec's cells; ``metrics``: the spec's metrics in
    order; ``names``: the parameter names of the file's ``param_<name>`` columns;
    ``rounds``: an active run's rows (a ``round`` column, per-round summaries)."""
    out = Path(out)
    results_path = out / "results.csv"
    sort_results(results_path, order, metrics, names, rounds)
    if curves:
        sort_curves(out / "curves.csv", order)
    notes = (write_active_summaries if rounds else write_summaries)(results_path, out)
    if html_report:
        from knnx.reporting.html import write_report

        try:
            write_report(out)
        except ResultsError as exc:  # e.g. every cell failed: no rows to report
            (out / "report.html").unlink(missing_ok=True)
            notes.append(f"no report: {exc}")
    return notes


def sort_results(path, order, metrics, names, rounds=False):
    """Rewrite results.csv in cell order, metrics in spec order (atomic)."""
    frame = read_results(path)
    metric_rank = {m: i for i, m in enumerate(metrics)}
    frame["_cell"] = [
        order.get((r.dataset, r.algorithm, r.params, int(r.repeat), int(r.fold)), len(order))
        for r in frame.itertuples()
    ]
    frame["_metric"] = frame["metric"].map(metric_rank)
    rounds = [ROUND] if rounds else []  # an active cell's rows: round by round
    frame = frame.sort_values(["_cell", *rounds, "_metric"], kind="stable")
    rows = with_param_columns(frame[COLUMNS + rounds].to_dict("records"), names)
    atomic_write_text(path, rows_to_csv(rows, header=True, columns=results_columns(names, bool(rounds))))


def sort_curves(path, order):
    """Rewrite curves.csv in cell order, each cell's rows as written (atomic)."""
    frame = read_curves(path)
    frame["_cell"] = [
        order.get((r.dataset, r.algorithm, r.params, int(r.repeat), int(r.fold)), len(order))
        for r in frame.itertuples()
    ]
    frame = frame.sort_values("_cell", kind="stable")
    atomic_write_text(
        path, rows_to_csv(frame[CURVE_COLUMNS].to_dict("records"), header=True, columns=CURVE_COLUMNS)
    )


def write_summaries(results_path, out):
    """summary.csv (all metrics), summary.md (one table per metric) and the figures
    (:func:`knnx.reporting.figures.write_figures`) from results.csv. Returns the figures' notes: one
    line per figure that could not be drawn, saying why."""
    frame = read_results(results_path)
    if frame.empty:  # every cell failed: no figure of an earlier run stays
        from knnx.reporting.figures import figure_files

        for path in figure_files(out):
            path.unlink(missing_ok=True)
        return []
    frame = frame.assign(configuration=configuration_labels(frame))
    summary = summarize(frame, by=("dataset", "algorithm", "configuration", "metric"))
    summary["best"] = mark_best(summary)
    atomic_write_text(Path(out) / "summary.csv", summary.to_csv(index=False, lineterminator="\n"))
    parts = [
        f"# {frame['experiment'].iloc[0]}: mean ± std over repeats, folds and seeds\n\n"
        "A configuration is an algorithm and the parameters that vary among its settings; "
        "seeds (seed, random_state) are pooled. A single value shows its mean alone.\n"
    ]
    for metric in dict.fromkeys(frame["metric"]):
        sub = summarize(frame, by=("dataset", "configuration"), metric=metric)
        parts.append(f"\n## {metric}\n\n" + format_table(sub, "md"))
    atomic_write_text(Path(out) / "summary.md", "".join(parts))
    return write_plots(frame, out)


def write_active_summaries(results_path, out):
    """An active run's summary.csv (:func:`knnx.reporting.figures.active_summary`: per round),
    summary.md (one table per metric of the last round's values, as knnx run's) and its
    figures ``active.png`` and ``active_k.png`` (:func:`knnx.reporting.figures.active_figures`).
    Returns the notes of the figures that could not be drawn."""
    from knnx.reporting.figures import active_summary

    frame = read_results(results_path)
    if frame.empty:
        return []
    summary = active_summary(frame)
    atomic_write_text(Path(out) / "summary.csv", summary.to_csv(index=False, lineterminator="\n"))
    last = last_round(frame)[0]
    last = last.assign(configuration=configuration_labels(last))
    low, high = int(last["n_train"].min()), int(last["n_train"].max())
    parts = [
        f"# {frame['experiment'].iloc[0]}: active learning, mean ± std over repeats after the last round\n\n"
        f"Round {int(last[ROUND].iloc[0])}: {low if low == high else f'{low} to {high}'} labelled points. "
        "summary.csv and the figures give every round.\n"
    ]
    for metric in dict.fromkeys(last["metric"]):
        sub = summarize(last, by=("dataset", "configuration"), metric=metric)
        parts.append(f"\n## {metric}\n\n" + format_table(sub, "md"))
    atomic_write_text(Path(out) / "summary.md", "".join(parts))
    return write_plots(frame, out)  # knnx.reporting.figures.figures draws an active run's figures


def write_plots(frame, out):
    """The automatic figures in ``out`` (:func:`knnx.reporting.figures.write_figures`), after removing
    those of an earlier run that this one does not draw again. Returns the notes."""
    from knnx.reporting.figures import figure_files, write_figures

    written, notes = write_figures(frame, out)
    for path in figure_files(out):
        if path.name not in written:
            path.unlink(missing_ok=True)
    return notes
