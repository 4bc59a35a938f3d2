"""The end of a run: results.csv and curves.csv sorted in cell order, then the
summaries (summary.csv, summary.md), the figures and report.html (see
:func:`finish_outputs`).

Read once, render once: results.csv is read by :func:`sort_results` alone, which
returns the sorted frame (equal to reading the rewritten file back); the summaries,
the figures and the report take that frame, and report.html embeds the figure files
just written instead of drawing them again.

Done once: the end of a run records in ``OUT/.knnx-outputs.json`` a digest of the
files it was made from and of those it wrote (:func:`knnx.experiment.rerun.outputs_digest`).
A rerun that finds every cell done and that digest unchanged has nothing to write: it
leaves the folder as it is (environment.json included) instead of drawing the same
figures again (2-4 s of matplotlib at every no-op rerun); see :mod:`knnx.experiment.rerun`."""

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from knnx._text import canonical_json
from knnx.errors import ResultsError
from knnx.experiment.rerun import STAMP, outputs_current, outputs_digest, record_outputs  # noqa: F401 (re-exported)
from knnx.params import Params, value_key
from knnx.reporting.summaries import configuration_labels, format_table, mark_best, summarize
from knnx.results import (
    COLUMNS,
    CURVE_COLUMNS,
    ROUND,
    CellId,
    atomic_write_text,
    last_round,
    param_names,
    read_curves,
    read_results,
    results_columns,
    rows_to_csv,
    with_param_columns,
)
from knnx.writing import quiet_arithmetic


@dataclass(frozen=True)
class Finished:
    """What the end of a run has to say: ``notes``, one line per figure or report that
    could not be made (saying why: the outputs are made again at the next run), and
    ``advice``, lines on the results worth a look (a tuned choice at its grid's edge)."""

    notes: list
    advice: list


@quiet_arithmetic()
def finish_outputs(
    out,
    *,
    order,
    metrics,
    names,
    rounds=False,
    curves=False,
    html_report=True,
    figures=(),
    report=None,
    plots=True,
):
    """Sort results.csv (and curves.csv if ``curves``) in cell order, write the summaries
    and figures (``figures``: the diagnostics the spec asks to draw; none, and those of
    an earlier run removed, when ``plots`` is false), and report.html if ``html_report`` (``report``: the spec's ``report:`` settings); return what the end
    of the run has to say (:class:`Finished`).

    ``order``: {cell key: index} of the spec's cells; ``metrics``: the spec's metrics in
    order; ``names``: the parameter names of the file's ``param_<name>`` columns;
    ``rounds``: an active run's rows (a ``round`` column, per-round summaries)."""
    from knnx.reporting.tuning import edge_lines

    out = Path(out)
    frame = sort_results(out / "results.csv", order, metrics, names, rounds)
    if curves:
        sort_curves(out / "curves.csv", order)
    labelled = frame.assign(configuration=configuration_labels(frame)) if len(frame) else None
    tables = (write_active_summaries if rounds else write_summaries)(frame, out, labelled)
    # every cell failed: no figure of an earlier run stays (an active run's are kept, as before)
    if not plots:  # a run without figures: the folder holds none (an earlier run's removed)
        drawn = write_plots(frame.iloc[:0], out)
    else:
        drawn = write_plots(frame, out, figures) if len(frame) or not rounds else []
    notes = [f.title for f in drawn if f.path is None]
    if html_report:
        from knnx.reporting.html import ReportOptions, RunOutputs, write_report

        try:
            run = RunOutputs(frame=frame, labelled=labelled, tables=tables, figures=drawn)
            write_report(out, run=run, options=ReportOptions(**(report or {})))
        except ResultsError as exc:  # e.g. every cell failed: no rows to report
            (out / "report.html").unlink(missing_ok=True)
            notes.append(f"no report: {exc}")
    return Finished(notes, edge_lines(frame) if len(frame) else [])


def _cell_positions(frame, order):
    return [order.get(cell, len(order)) for cell in CellId.of_frame(frame)]


def sort_results(path, order, metrics, names, rounds=False):
    """Rewrite results.csv in cell order, metrics in spec order (atomic); return the
    sorted frame, equal to :func:`knnx.results.read_results` of the rewritten file (its
    values read from the file before: the file writes floats round-trip exactly, and
    ``param_<name>`` columns are derived from ``params`` on reading, never from the
    file's)."""
    frame = read_results(path)
    metric_rank = {m: i for i, m in enumerate(metrics)}
    rounds = [ROUND] if rounds else []  # an active cell's rows: round by round
    keys = frame.assign(_cell=_cell_positions(frame, order), _metric=frame["metric"].map(metric_rank))
    frame = frame.loc[keys.sort_values(["_cell", *rounds, "_metric"], kind="stable").index]
    rows = with_param_columns(frame[COLUMNS + rounds].to_dict("records"), names)
    atomic_write_text(path, rows_to_csv(rows, header=True, columns=results_columns(names, bool(rounds))))
    return frame.reset_index(drop=True)


def sort_curves(path, order):
    """Rewrite curves.csv in cell order, each cell's rows as written (atomic)."""
    frame = read_curves(path)
    frame["_cell"] = _cell_positions(frame, order)
    frame = frame.sort_values("_cell", kind="stable")
    atomic_write_text(
        path, rows_to_csv(frame[CURVE_COLUMNS].to_dict("records"), header=True, columns=CURVE_COLUMNS)
    )


def metric_tables(rows):
    """{metric: :func:`knnx.reporting.summaries.summarize` of ``rows`` (with their
    ``configuration`` labels) by dataset and configuration}, metrics in row order: the
    tables of summary.md and of the report's summary."""
    return {
        metric: summarize(rows, by=("dataset", "configuration"), metric=metric)
        for metric in dict.fromkeys(rows["metric"])
    }


def _write_summary_md(out, heading, tables):
    parts = [heading] + [f"\n## {metric}\n\n" + format_table(sub, "md") for metric, sub in tables.items()]
    atomic_write_text(Path(out) / "summary.md", "".join(parts))


def write_summaries(frame, out, labelled=None):
    """summary.csv (all metrics) and summary.md (one table per metric) from the results
    ``frame`` (``labelled``: the frame with its ``configuration`` column, if made
    already). Returns the per-metric tables (:func:`metric_tables`), None without rows."""
    if frame.empty:
        return None
    if labelled is None:
        labelled = frame.assign(configuration=configuration_labels(frame))
    summary = summarize(labelled, by=("dataset", "algorithm", "configuration", "metric"))
    summary["best"] = mark_best(summary)
    atomic_write_text(Path(out) / "summary.csv", summary.to_csv(index=False, lineterminator="\n"))
    tables = metric_tables(labelled)
    heading = (
        f"# {frame['experiment'].iloc[0]}: mean ± std over repeats, folds and seeds\n\n"
        "A configuration is an algorithm and the parameters that vary among its settings; "
        "seeds (seed, random_state) are pooled. A single value shows its mean alone.\n"
    )
    _write_summary_md(out, heading, tables)
    return tables


def write_active_summaries(frame, out, labelled=None):
    """An active run's summary.csv (:func:`knnx.reporting.figures.active_summary`: per
    round) and summary.md (one table per metric of the last round's values, as knnx
    run's). Returns the last round's per-metric tables (:func:`metric_tables`), None
    without rows."""
    from knnx.reporting.figures import active_summary

    if frame.empty:
        return None
    if labelled is None:
        labelled = frame.assign(configuration=configuration_labels(frame))
    summary = active_summary(frame)
    atomic_write_text(Path(out) / "summary.csv", summary.to_csv(index=False, lineterminator="\n"))
    last = last_round(labelled)[0]
    low, high = int(last["n_train"].min()), int(last["n_train"].max())
    heading = (
        f"# {frame['experiment'].iloc[0]}: active learning, mean ± std over repeats after the last round\n\n"
        f"Round {int(last[ROUND].iloc[0])}: {low if low == high else f'{low} to {high}'} labelled points. "
        "summary.csv and the figures give every round.\n"
    )
    tables = metric_tables(last)
    _write_summary_md(out, heading, tables)
    return tables


def write_plots(frame, out, requested=()):
    """The automatic figures in ``out`` (:func:`knnx.reporting.figures.save_figures`; an
    active run's: :func:`knnx.reporting.figures.active_figures`), after removing those
    of an earlier run that this one does not draw again. Returns the figures
    (:class:`knnx.reporting.figures.RunFigure`, a path None where one could not be
    drawn); none without rows, every earlier figure removed."""
    from knnx.reporting.figures import figure_files, save_figures

    drawn = save_figures(frame, out, requested) if len(frame) else []
    written = {f.name for f in drawn if f.path is not None}
    for path in figure_files(out):
        if path.name not in written:
            path.unlink(missing_ok=True)
    return drawn


def written_param_names(vspec):
    """The parameters results.csv gives a ``param_<name>`` column: those that take more
    than one value among one algorithm's cells, and those the spec writes in an algorithm entry
    (params, params_for); not the dozens of defaults of a scikit-learn estimator that
    nobody set. ``params`` keeps every value, and reading a file
    (:func:`knnx.results.read_results`) derives a column for each."""
    values = {}  # (algorithm, parameter): the values its cells take
    for algorithm, params_json in dict.fromkeys((c.algorithm, c.params_json) for c in vspec.cells):
        for name, value in Params.parse(params_json)[0].items():  # the cell's own canonical JSON
            values.setdefault((algorithm, name), set()).add(value_key(value))
    written = set()
    for entry in getattr(vspec.spec, "algorithms", None) or ():
        written |= set(getattr(entry, "params", {}) or {})
        for per in (getattr(entry, "params_for", {}) or {}).values():
            written |= set(per)
    if not getattr(vspec.spec, "algorithms", None):  # a spec without algorithm entries: every one
        return param_names(c.params_json for c in vspec.cells)
    return sorted({n for (_, n), seen in values.items() if len(seen) > 1 or n in written})


def report_control_problem(vspec):
    """``report.control: ...`` when the spec's ``report: {control: ...}`` names no
    contestant of the run, or several: the labels the comparison and the report give the
    settings of its cells (:func:`knnx.stats.configurations.configuration_labels`), found
    as ``--control`` finds them; None when it names one, or the spec names none. The run
    would otherwise end without its report (``no report: ...``)."""
    from knnx.stats.control import find_contestant

    report = getattr(vspec.spec, "report", None)
    control = None if report is None else report.control
    if control is None or not vspec.cells:
        return None
    settings = dict.fromkeys((c.dataset, c.algorithm, canonical_json(c.params)) for c in vspec.cells)
    names = sorted({n for *_, text in settings for n in Params.parse(text)[0]})
    rows = [{"dataset": d, "algorithm": a, "params": p} for d, a, p in settings]
    frame = pd.DataFrame(with_param_columns(rows, names))
    try:
        find_contestant(list(dict.fromkeys(configuration_labels(frame))), control)
    except ResultsError as exc:
        return f"report.control: {str(exc).removeprefix('control: ')}"
    return None
