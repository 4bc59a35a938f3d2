"""One self-contained HTML page for a run's folder (``knnx report OUT``).

Built from the files a run writes, and nothing else: ``results.csv``, ``datasets.csv``,
``spec.yaml``, ``environment.json``, ``failures.csv`` and ``warnings.csv``. The page
leads with what a paper shows (:mod:`knnx.reporting.report_parts`): the run's header
(datasets × configurations, failed cells, every configuration left out of the
comparison with why), the primary metric's comparison table (:mod:`knnx.reporting.wide`:
mean ± std, best in bold, ▼ ▲ marks, average rank, Friedman), its critical-difference
diagram and, with a control, the tests against it; then the hyper-parameters the tuned
cells chose (counts per value) and the parameters that depend on the dataset, the
datasets' characteristics, and every figure (:func:`knnx.reporting.figures.automatic_figures`).
Collapsed after them: the other metrics' comparisons, the long tables (mean ± std
per configuration, ranks, Wilcoxon-Holm, per-dataset tests), the estimators'
diagnostics, the timings, the failures and warnings, the spec and the environment.
Figures are embedded as PNG data; there are no scripts, no style sheets or
fonts to fetch and no links outside the page, so it opens offline and can be mailed
as one file.

At the end of a run (:func:`knnx.experiment.outputs.finish_outputs`) the page is
given the run's frame, summary tables and figure files (:class:`RunOutputs`): it
reads no results again and embeds the PNG files just written, byte for byte. Alone
(``knnx report``), it reads results.csv and draws the figures itself (at 100 dpi):
figure files in the folder may be of an earlier run, so they are not trusted.
"""

import base64
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from knnx._text import shorten
from knnx.errors import ResultsError
from knnx.evaluation.metrics import METRICS
from knnx.reporting._html import collapsed as _collapsed
from knnx.reporting._html import escape as _e
from knnx.reporting._html import html_table

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1em auto; max-width: 1400px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.3em; margin: 0.2em 0; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h2#comparison { margin-top: 0.6em; font-size: 1.15em; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; max-width: 36em; overflow-wrap: break-word; }
table.wide th, table.wide td { white-space: nowrap; max-width: none; }
table.compact { font-size: 0.8em; margin: 0.2em 0; } table.compact th, table.compact td { padding: 1px 5px; }
sup { line-height: 0; } .sd { display: none; } .sd-toggle:checked ~ .first .sd { display: inline; }
.first { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.first .side { flex: 1 1 420px; min-width: 360px; } .first .side img { width: 100%; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; }
.best { font-weight: bold; }
.note { color: #555; font-size: 0.9em; }
.warn { color: #8a4b00; font-size: 0.9em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
nav { margin: 0.3em 0 0.5em; font-size: 0.85em; } body > p { margin: 0.3em 0; }
details { margin: 0.5em 0; } summary { cursor: pointer; color: #333; }
table.wide caption { caption-side: bottom; text-align: left; padding-top: 0.3em; }
table.wide th[scope=row] { text-align: left; font-weight: normal; }
table.wide tfoot td, table.wide tfoot th { border-top: 2px solid #999; }
"""


def _figure_tag(fig, alt):
    from knnx.writing import draw_figure

    buffer = io.BytesIO()
    try:
        draw_figure(fig, buffer, format="png", dpi=100)
    except ResultsError as exc:  # values matplotlib cannot draw: said where the figure would be
        return f'<p class="note">{_e(alt)}: not drawn: {_e(str(exc))}</p>'
    fig.clear()
    return _image_tag(buffer.getvalue(), alt)


def _image_tag(png, alt):
    """PNG bytes as an embedded image with ``alt`` as its caption."""
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img src="data:image/png;base64,{data}" alt="{_e(alt)}"><figcaption class="note">{_e(alt)}</figcaption></figure>'


def _read_optional_csv(path, columns):
    """A run's failures.csv or warnings.csv (``columns``), or None when there is none."""
    from knnx.results import read_table

    if not path.is_file() or not path.stat().st_size:
        return None
    return read_table(path, path, columns, path.stem)


def _summary_section(frame, tables=None):
    """One table per metric of ``frame`` (labelled with configurations); ``tables``: the
    same tables already made ({metric: summary}, see :func:`knnx.experiment.outputs.metric_tables`)."""
    from knnx.reporting.summaries import best_rule, mark_best, summarize

    parts = []
    parts.append(
        "<p class='note'>Mean ± standard deviation over repeats, folds and pooled seeds (seed, random_state) "
        "per configuration: the algorithm and the parameters that vary among its settings. A single value shows "
        "its mean alone.</p>"
    )
    if tables is None:
        tables = {
            m: summarize(frame, by=("dataset", "configuration"), metric=m)
            for m in dict.fromkeys(frame["metric"])
        }
    for metric, sub in tables.items():
        best = pd.Series(mark_best(sub))
        shown = pd.DataFrame(
            {
                "dataset": sub["dataset"],
                "configuration": sub["configuration"],
                "mean ± std": [
                    f"{m:.4f}" if n <= 1 else f"{m:.4f} ± {s:.4f}"
                    for m, s, n in zip(sub["mean"], sub["std"], sub["n"], strict=True)
                ],
                "n": sub["n"],
            }
        )
        parts.append(f"<h3>{_e(metric)}</h3>")
        parts.append(html_table(shown, bold=best))
        if best.any():
            parts.append(f"<p class='note'>{_e(best_rule(sub).replace('Best:', 'Bold:', 1))}</p>")
    return "".join(parts)


def _long_comparison(result):
    """The long tables of one metric's comparison: mean ranks, Wilcoxon-Holm pairs and
    per-dataset significance counts (the wide table and the diagram lead the page)."""
    from knnx.reporting.wide import friedman_sentence
    from knnx.stats.compare import pairwise_significance

    if isinstance(result, str):
        return [f"<p class='note'>No comparison: {_e(result)}.</p>"]
    metric, alpha = result.metric, result.alpha
    parts = [f"<p>{_e(friedman_sentence(result.friedman_row, alpha))}</p>"]
    parts.append("<p class='note'>Mean ranks, best first (tying means share the average rank).</p>")
    parts.append(html_table(result.mean_ranks))
    parts.append(
        "<p class='note'>Pairs: wins, ties and losses of <em>a</em> against <em>b</em> over datasets; "
        "two-sided Wilcoxon signed-rank test on the per-dataset means, p adjusted by Holm over all pairs.</p>"
    )
    parts.append(html_table(result.pairwise))
    counts = pairwise_significance(result.paired, metric, alpha, corrected=True)
    counts.columns = ["a", "b", "datasets a significantly better", "datasets b significantly better"]
    parts.append(
        "<p class='note'>Per dataset, over the folds the two share: Nadeau and Bengio's corrected resampled "
        f"t-test (the folds' training sets overlap), two-sided, at α = {alpha:g}; every test is in "
        "<code>knnx compare --out</code>'s paired.csv.</p>"
    )
    parts.append(html_table(counts))
    return parts


def _embedded_figures_section(drawn):
    """The figures a run has just written (:class:`knnx.reporting.figures.RunFigure`),
    their files embedded as they are; a line for each that could not be drawn."""
    parts = ["<h2 id='figures'>Figures</h2>"]
    if not drawn:
        parts.append("<p class='note'>None: the run was made without figures (knnx plot draws them).</p>")
    for figure in drawn:
        if figure.path is None:
            parts.append(f"<p class='note'>{_e(figure.title)}.</p>")
        else:
            parts.append(_image_tag(figure.path.read_bytes(), figure.title))
    return "".join(parts)


def _figures_section(frame):
    from knnx.reporting.figures import automatic_figures

    parts = ["<h2 id='figures'>Figures</h2>"]
    for _name, title, fig in automatic_figures(frame):
        if fig is None:
            parts.append(f"<p class='note'>{_e(title)}.</p>")
        else:
            parts.append(_figure_tag(fig, title))
    return "".join(parts)


def _sizes(frame):
    """The training set sizes of rows, as "n" or "n1 to n2"."""
    low, high = int(frame["n_train"].min()), int(frame["n_train"].max())
    return str(low) if low == high else f"{low} to {high}"


def _experiment_name(spec_text, out):
    """The experiment's name from the run's spec.yaml, else the folder's name."""
    doc = spec_document(spec_text)
    name = doc.get("name") if isinstance(doc, dict) else None
    return str(name) if name else Path(out).name


def spec_document(spec_text):
    """The run's spec.yaml parsed, or None when it is not YAML or nests deeper than a
    spec may (measured on YAML's events, which PyYAML parses without recursion, before
    composing: a nested copy never reaches Python's recursion limit)."""
    import yaml

    from knnx.limits import MAX_DEPTH

    try:
        depth = 0
        for event in yaml.parse(spec_text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.CollectionStartEvent | yaml.ScalarEvent | yaml.AliasEvent):
                if depth + 1 > MAX_DEPTH:
                    return None
                depth += isinstance(event, yaml.CollectionStartEvent)
        return yaml.safe_load(spec_text)
    except yaml.YAMLError:
        return None


@dataclass(frozen=True)
class RunOutputs:
    """What the end of a run hands the report, so that it reads and draws nothing again:
    the results ``frame`` as read (:func:`knnx.results.read_results`), the same with its
    ``configuration`` column (``labelled``; None without rows), the summary ``tables``
    ({metric: summary} of the rows the tables show: the last round's for an active run;
    None without rows) and the ``figures`` just written (:class:`knnx.reporting.figures.RunFigure`),
    whose files the page embeds."""

    frame: pd.DataFrame
    labelled: pd.DataFrame | None
    tables: dict | None
    figures: list


SECTIONS = [
    ("comparison", "Comparison"),
    ("tuning", "Chosen hyper-parameters"),
    ("datasets", "Datasets"),
    ("figures", "Figures"),
    ("tables", "Tables"),
    ("diagnostics", "Diagnostics"),
    ("timings", "Timings"),
    ("failures", "Failures and warnings"),
    ("spec", "Spec and environment"),
]


def _nav():
    return "<nav>" + " · ".join(f"<a href='#{k}'>{_e(t)}</a>" for k, t in SECTIONS) + "</nav>"


def _read_run(out, run):
    """(frame, labelled, failures, warnings, spec text, environment, characteristics) of
    the run folder ``out``; the frame from ``run`` when given, else read from results.csv."""
    from knnx.reporting.characteristics import read_datasets
    from knnx.reporting.summaries import configuration_labels
    from knnx.results import FAILURE_COLUMNS, WARNING_COLUMNS, read_json, read_results

    results = out / "results.csv"
    if run is None:
        if not results.is_file():
            raise ResultsError(f"{out}: no results.csv; give the folder of a run (knnx run ... --out {out})")
        frame = read_results(results)
        labelled = frame.assign(configuration=configuration_labels(frame)) if len(frame) else None
    else:
        frame, labelled = run.frame, run.labelled
    failures = _read_optional_csv(out / "failures.csv", FAILURE_COLUMNS)
    warned = _read_optional_csv(out / "warnings.csv", WARNING_COLUMNS)
    if frame.empty and failures is None:
        raise ResultsError(f"{results}: no result rows yet; nothing to report")
    spec_text = _read_spec_text(out / "spec.yaml")
    path = out / "environment.json"
    environment = read_json(path, "environment", _environment_problem) if path.is_file() else {}
    characteristics = read_datasets(out / "datasets.csv") if len(frame) else None
    return frame, labelled, failures, warned, spec_text, environment, characteristics


def report_options(out, **given):
    """The :class:`ReportOptions` of the run folder ``out``: the ``report:`` settings of
    its spec.yaml (metric, control, select, alpha; those a run was given), each replaced
    by ``given`` where not None (``knnx report``'s options). A spec.yaml that cannot be
    read, or settings of the wrong type, count as none (the run validated them)."""
    try:
        doc = spec_document(_read_spec_text(Path(out) / "spec.yaml"))
    except (ResultsError, OSError):
        doc = None
    section = doc.get("report") if isinstance(doc, dict) else None
    kinds = {"metric": str, "control": str, "select": str, "alpha": float}
    settings = {}
    for key, kind in kinds.items():
        value = section.get(key) if isinstance(section, dict) else None
        if isinstance(value, kind) and (key != "alpha" or 0 < value < 1):
            settings[key] = value
    settings.update({k: v for k, v in given.items() if v is not None})
    return ReportOptions(**settings)


def _read_spec_text(path):
    """The text of a run's spec.yaml ("" when there is none); ResultsError if not UTF-8."""
    if not path.is_file():
        return ""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _environment_problem(doc):
    """What makes ``doc`` (environment.json's value) not an environment knnx writes:
    an object whose ``runs`` is a list of objects, each ``warmup_seconds`` (if any) an
    object of numbers (:mod:`knnx.experiment.provenance`); None if it is one."""
    from knnx.results import json_kind

    if not isinstance(doc, dict):
        return f"expected a JSON object, got {json_kind(doc)}"
    runs = doc.get("runs", [])
    if not isinstance(runs, list):
        return f"runs: expected a list of invocations, got {json_kind(runs)}"
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            return f"runs[{i}]: expected an object, got {_short(run)}"
        warm = run.get("warmup_seconds")
        numbers = isinstance(warm, dict) and all(  # seconds: finite and >= 0, as knnx measures them
            isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < math.inf
            for v in warm.values()
        )
        if warm is not None and not numbers:
            return f"runs[{i}].warmup_seconds: expected {{algorithm: seconds}}, got {_short(warm)}"
    return None


def _short(value, limit=60):
    return shorten(repr(value), limit)


@dataclass(frozen=True)
class ReportOptions:
    """How ``knnx report`` compares (see :func:`knnx.stats.compare.compare`): the level
    ``alpha``, the contestants (``select``: all or best-test), a ``control`` to test
    every other against, and the primary ``metric`` the page leads with (None: the
    run's first metric)."""

    alpha: float = 0.05
    select: str = "all"
    control: str | None = None
    metric: str | None = None


def _results_body(frame, n_failed, options, run, characteristics):
    """The header, the comparison of the primary metric, the chosen hyper-parameters,
    the datasets, the figures and the long tables of a run with results (``frame``:
    labelled with configurations)."""
    from knnx.reporting import report_parts as rp
    from knnx.results import last_round

    # An active-learning run (a round column): tables and comparison of the last round's
    # values; the figures follow every round.
    last = last_round(frame)[0]
    primary = rp.primary_metric(last, options.metric)
    metrics = [m for m in dict.fromkeys(last["metric"]) if m in METRICS]
    compared = {
        m: rp.run_comparison(last, m, options.select, options.alpha, options.control) for m in metrics
    }
    n_cells = len(frame.drop_duplicates(["dataset", "algorithm", "params", "repeat", "fold"]))
    body = [
        f"<h1>knnx report: {_e(frame['experiment'].iloc[0])}</h1>",
        f"<p>{n_cells} cells: {frame['dataset'].nunique()} datasets × {frame['configuration'].nunique()} "
        f"configurations of {frame['algorithm'].nunique()} algorithms; metrics: {_e(', '.join(metrics))}; "
        f"{n_failed} failed cells.</p>",
        rp.left_out_html(compared[primary]) if primary else "",
        _nav(),
    ]
    if last is not frame:
        body.append(
            f"<p class='note'>Active learning: the tables and the comparison give the values after "
            f"the last round (round {int(last['round'].iloc[0])}, {_e(_sizes(last))} labelled points); "
            "summary.csv and the figures give every round.</p>"
        )
    body.append(f"<h2 id='comparison'>Comparison: {_e(primary or 'none')}</h2>")
    if primary is None:
        body.append("<p class='note'>No metric to compare (only reported quantities).</p>")
    else:
        body.append(rp.comparison_html(compared[primary], characteristics, _figure_tag))
    body += [
        "<h2 id='tuning'>Chosen hyper-parameters</h2>",
        rp.tuning_html(last),
        "<h2 id='datasets'>Datasets</h2>",
        rp.datasets_html(characteristics),
        _figures_section(frame) if run is None else _embedded_figures_section(run.figures),
        rp.summary_figures_html(compared[primary], _figure_tag) if primary else "",
        "<h2 id='tables'>Tables</h2>",
    ]
    for m in metrics:
        parts = (
            []
            if m == primary
            else [
                rp.left_out_html(compared[m]),
                rp.comparison_html(compared[m], characteristics, _figure_tag),
            ]
        )
        body.append(
            _collapsed(
                f"Comparison of {m}: ranks, Wilcoxon-Holm, per-dataset tests",
                parts + _long_comparison(compared[m]),
            )
        )
    body.append(
        _collapsed(
            "Mean ± std per dataset and configuration, every metric",
            [_summary_section(last, None if run is None else run.tables)],
        )
    )
    body += _diagnostics_section(rp.diagnostics_frame(last))
    return body


def _diagnostics_section(diagnostics):
    """The diagnostics' heading, their names and how to draw them, and their table (collapsed)."""
    body = []
    body.append("<h2 id='diagnostics'>Diagnostics</h2>")
    if len(diagnostics):
        names = ", ".join(dict.fromkeys(diagnostics["quantity"]))
        body.append(
            f"<p class='note'>Quantities the estimators report about their fits: {_e(names)}. Their figures are "
            "drawn when asked: <code>figures: [NAME, ...]</code> in the spec, or <code>knnx plot RESULTS --metric "
            "NAME</code>.</p>"
        )
    body.append(
        _collapsed(
            f"Quantities the estimators report ({diagnostics['quantity'].nunique()})",
            [html_table(diagnostics)],
        )
        if len(diagnostics)
        else "<p class='note'>No estimator reported a quantity.</p>"
    )
    return body


def _table_or(frame, columns, empty, heading):
    if frame is None or frame.empty:
        return [f"<p>{empty}</p>"]
    return [heading, html_table(frame[columns])]


def build_report(out, alpha=0.05, run=None, options=None):
    """The HTML text of the report of the run folder ``out`` (see the module docstring).

    ``run``: the :class:`RunOutputs` of the run that has just written ``out`` (its
    frame, tables and figure files are used as they are); None (``knnx report``): read
    results.csv and draw the figures. ``options``: a :class:`ReportOptions` (its alpha
    wins over ``alpha``); None: the run's spec.yaml's ``report:`` settings
    (:func:`report_options`), else every configuration a contestant, no control, the
    run's first metric."""
    out = Path(out)
    options = options or report_options(out, alpha=alpha)
    frame, labelled, failures, warned, spec_text, environment, characteristics = _read_run(out, run)
    n_failed = 0 if failures is None else len(failures)
    if frame.empty:  # every cell failed: the page says so and lists the failures
        name = _experiment_name(spec_text, out)
        body = [
            f"<h1>knnx report: {_e(name)}</h1>",
            f"<p>No results: every cell that ran failed ({n_failed} failed cells).</p>",
            _nav(),
            *(f"<h2 id='{k}'>{_e(t)}</h2><p>No results.</p>" for k, t in SECTIONS[:6]),
        ]
    else:
        name = str(frame["experiment"].iloc[0])
        body = _results_body(labelled, n_failed, options, run, characteristics)
    if frame.empty:
        body.append("<h2 id='timings'>Timings</h2><p>No cell finished.</p>")
    else:
        from knnx.reporting.report_parts import timings_html

        body.append(timings_html(labelled, environment, options, characteristics))
    body.append("<h2 id='failures'>Failures and warnings</h2>")
    failed = _table_or(
        failures,
        ["dataset", "algorithm", "repeat", "fold", "error", "params"],
        "No cell failed.",
        f"<p>{n_failed} cells failed (a rerun retries them):</p>",
    )
    warnings_ = _table_or(
        warned,
        ["dataset", "algorithm", "repeat", "fold", "category", "message", "count", "params"],
        "No warnings.",
        "<p>Python warnings raised in cells (recorded, not printed):</p>",
    )
    n_warned = 0 if warned is None else len(warned)
    body.append(
        _collapsed(f"{n_failed} failed cells, {n_warned} warnings", failed + warnings_, open_=n_failed > 0)
    )
    body.append("<h2 id='spec'>Spec and environment</h2>")
    body.append(
        _collapsed(
            "spec.yaml and environment.json",
            [
                f"<h3>spec.yaml</h3><pre>{_e(spec_text)}</pre>",
                f"<h3>environment.json</h3><pre>{_e(json.dumps(environment, indent=2))}</pre>",
            ],
        )
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>knnx report: {_e(name)}</title><style>{STYLE}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )


def write_report(out, alpha=0.05, run=None, options=None):
    """Write ``out/report.html`` (atomically); return its path. ``run``, ``options``: as
    for :func:`build_report`."""
    from knnx.reporting.figures import plain_text
    from knnx.results import atomic_write_text

    with plain_text():
        text = build_report(out, alpha, run, options)
    path = Path(out) / "report.html"
    atomic_write_text(path, text)
    return path
