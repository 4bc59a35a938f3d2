"""Plots built from result files only (matplotlib's object API, no pyplot state).

``plot_comparison`` shows every configuration of a run, one panel per dataset, its
per-fold values and mean ± std; ``plot_metric`` draws a metric against one parameter,
one panel per dataset and algorithm; ``write_figures`` makes both kinds for a run's
folder and says, in one line per figure, what it could not draw. The panels are
planned and drawn by :mod:`knnx.reporting.panels` (its public names are importable from
here too). Summaries across datasets that stay readable for hundreds of datasets
(ranks, wins against a control, mean ranks): :mod:`knnx.reporting.summary_figures`.

Rules, all tested (tests/reporting/test_figures_scale.py, tests/reporting/test_figures_report.py):

* **Pages.** A figure holds at most :data:`MAX_PANELS` (12) panels. More are drawn as
  pages of 12 panels, in drawing order: the figure ``NAME.png`` becomes the files
  ``NAME-1.png``, ``NAME-2.png``, ... (:func:`page_names`; a figure that fits on one
  page keeps its name, and no automatic figure's name ends in ``-<digits>``
  otherwise, :func:`figure_name`). :func:`metric_pages`, :func:`comparison_pages` and
  :func:`plot_pages` give every page, :func:`write_plot` saves them, the run's
  automatic figures (:func:`automatic_figures`) are paged; :func:`plot_metric`,
  :func:`plot_comparison` and :func:`plot` draw one figure and refuse more panels.
* **Datasets.** Every public plotting function takes ``datasets``: the names of the
  datasets to draw, in that order (default: every dataset, in order of appearance);
  a name the results do not hold is a ResultsError naming it and the datasets they
  hold (:func:`select_datasets`).
* **Ranges.** A point is the mean over repeats, folds and pooled seeds, its bar ± one
  standard deviation cut at the bounds of the metric's range (:data:`METRIC_RANGES`:
  error, accuracy, F1, AUC ... in [0, 1], MCC in [-1, 1], timings >= 0), so no bar
  of an error rate goes below 0 nor one of an F1 above 1. A quantity not listed (what
  an estimator reports, e.g. ``chosen_k``) is drawn uncut.
* **One meaning per axis.** A parameter's name means the same thing within one
  algorithm only (CPW's ``tol`` is not SVC's ``tol``), so a metric is drawn against a
  parameter ``x`` in one panel per (dataset, algorithm), never two algorithms on one
  axes, and only where the algorithm takes two values of ``x`` or more on the dataset
  (each tuned grid counting as one value; a value set per dataset by ``params_for``
  is not drawn against). A results file records each algorithm's id, not its
  estimator class: two ids are two algorithms even when they share a class (``knn1``
  and ``knn_tuned`` are drawn apart, or not at all when each has one value).
* **Numeric axes.** An algorithm's values of ``x`` that are all numbers (booleans are
  not) are drawn on a numeric axis, on a log scale when they form a geometric grid
  (:func:`is_geometric`: 1e-3, 1e-2, 1e-1 or 1, 2, 4, 8); any other values (text,
  booleans, numbers mixed with them) on a categorical axis, in order of first
  appearance, long texts shortened.
* **Tuned grids.** A cell tuned on inner folds (``tune:``) has its grid, a list, as
  its value of each tuned parameter, and records the value it chose, per split, as
  its row of metric ``chosen_<name>`` (the number; for a grid of other values, its
  index in the list). A grid is never a tick or a legend text: against a numeric
  ``x`` the tuned setting is a diamond at the median of the values chosen for ``x``
  (its horizontal bar from the smallest to the largest chosen), at the mean of the
  metric (± std, cut to the range); against a categorical ``x``, or where the frame
  holds no ``chosen_<x>`` rows, a dashed horizontal line at that mean. Its legend
  reads ``<line>, x tuned over <n> values <min>–<max>``; another parameter tuned
  alongside reads ``name tuned``; in the comparison figure a grid's configuration
  label reads ``name=tuned`` (``tuned (2)``, ... for a second grid of one algorithm).
"""

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from knnx._text import describe_control, escape_control, find_control
from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS
from knnx.reporting.panels import (  # noqa: F401  (re-exported: this module's names before panels.py)
    MAX_CONFIGURATIONS,
    METRIC_RANGES,
    ComparisonPlan,
    MetricPlan,
    clipped_spread,
    comparison_plan,
    is_geometric,
    metric_plan,
    metric_range,
    metric_rows,
    plain_text,
)
from knnx.reporting.parameters import (  # noqa: F401  (re-exported: this module's names before)
    WithinAlgorithm,
    parameter_values,
    parse_params,
    varying_numeric_params,
    varying_params,
    varying_within,
)
from knnx.reporting.retention import retention_plans
from knnx.results import read_results, save_figure
from knnx.stats.configurations import SEED_PARAMS


def _listing(names, limit=40):
    shown = ", ".join(escape_control(str(n)) for n in names[:limit])
    return shown if len(names) <= limit else f"{shown}, ... ({len(names)} in all)"


def select_datasets(frame, datasets=None):
    """The rows of ``frame`` on ``datasets`` (names; a single name may be given as a
    string), in that order of datasets, each dataset's rows in file order; every row
    when ``datasets`` is None. ResultsError (``datasets``) naming every name the frame
    does not hold, and the datasets it holds, or a name given twice."""
    if datasets is None:
        return frame
    names = [datasets] if isinstance(datasets, str) else list(datasets)
    present = list(dict.fromkeys(frame["dataset"]))
    if not names:
        raise ResultsError(f"no dataset given; the results hold: {_listing(present)}", param="datasets")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:  # one panel per dataset: a second would be dropped
        raise ResultsError(f"'{escape_control(str(twice))}' is named twice", param="datasets")
    known = set(present)
    unknown = [n for n in names if n not in known]
    if unknown:
        quoted = ", ".join(f"'{escape_control(str(n))}'" for n in unknown)
        plural = "s" if len(unknown) > 1 else ""
        raise ResultsError(
            f"no dataset{plural} {quoted} in the results; they hold: {_listing(present)}",
            param="datasets",
        )
    order = {n: i for i, n in enumerate(names)}
    rows = frame[frame["dataset"].isin(known & set(names))]
    return rows.iloc[np.argsort(rows["dataset"].map(order).to_numpy(), kind="stable")]


def _selected(results, datasets):
    """The frame of ``results`` (a results file or its frame) on ``datasets``."""
    frame = read_results(results) if not hasattr(results, "columns") else results
    return select_datasets(frame, datasets)


# The most panels of one figure (or page): more are drawn as pages of MAX_PANELS.
MAX_PANELS = 12


def page_names(name, n_pages):
    """The file names of a figure ``name`` (``error-k.png``) drawn on ``n_pages`` pages:
    ``[name]`` for one page, else ``error-k-1.png``, ``error-k-2.png``, ... (the page
    number before the suffix)."""
    if n_pages == 1:
        return [name]
    path = Path(name)
    return [f"{path.stem}-{i}{path.suffix}" for i in range(1, n_pages + 1)]


def _chunks(items, size=MAX_PANELS):
    return [items[i : i + size] for i in range(0, len(items), size)]


def _check_image_path(out):
    """ResultsError unless ``out`` names an image file matplotlib can write (its folder
    is created when the figure is saved, :func:`_save_image`, as ``knnx run --out``
    creates its own)."""
    folder = Path(out).parent
    if Path(out).is_dir():
        raise ResultsError(f"{out} is a folder; give an image file name (e.g. error.png)", param="out")
    if find_control(str(out)) is not None:
        raise ResultsError(
            f"{str(out)!r} holds a {describe_control(str(out))}; name the file without one", param="out"
        )
    if folder.exists() and not folder.is_dir():
        raise ResultsError(f"{out}: {folder} is a file, not a folder", param="out")
    fmt = Path(out).suffix.lstrip(".").lower()
    supported = Figure().canvas.get_supported_filetypes()
    if fmt not in supported:
        said = f"unsupported image format '.{fmt}'" if fmt else f"{out} has no image suffix"
        raise ResultsError(f"{said}; use one of {', '.join('.' + f for f in sorted(supported))}", param="out")


def _save_image(fig, out, dpi):
    """``fig`` saved at ``out`` (atomically), its folder and parents created first;
    ResultsError naming the folder when the system refuses to create it."""
    folder = Path(out).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultsError(
            f"{out}: cannot create the folder {folder} ({exc.strerror or exc})", param="out"
        ) from None
    save_figure(fig, out, dpi=dpi)


def _one_page(plan, what):
    if len(plan.panels) > MAX_PANELS:
        raise ResultsError(
            f"{len(plan.panels)} panels ({what}): more than {MAX_PANELS} on one figure; choose datasets "
            f"(datasets) or draw pages of {MAX_PANELS} (plot_pages, write_plot)"
        )
    return plan.draw(plan.panels)


def plot_metric(results, metric="error", x=None, out=None, datasets=None):
    """Plot ``metric`` against parameter ``x``; return the Figure (and save it to ``out``).

    One panel per dataset and algorithm that takes two values of ``x`` or more (the
    module docstring: one meaning per axis, numeric and log axes, tuned grids); one
    line per combination of the algorithm's other parameters that vary (seed-like
    parameters, :data:`knnx.stats.configurations.SEED_PARAMS`, are pooled unless ``x``
    is one of them), each point the mean over repeats, folds and pooled seeds with ±
    one standard deviation cut to the metric's range. A line with a single value of
    ``x`` is left out when another of its panel varies along it. More than
    :data:`MAX_PANELS` panels: ResultsError (:func:`metric_pages` draws pages).

    Parameters
    ----------
    results : path or DataFrame
        A results.csv file (or its frame: every metric's rows, so that a tuned
        cell's ``chosen_<x>`` rows place it).
    metric : str
    x : str, optional
        Parameter for the horizontal axis; default: the first that varies within an
        algorithm, numeric ones first, seed-like ones last.
    out : path, optional
        Where to write the image (format from the suffix, e.g. .png or .pdf).
    datasets : list of str, optional
        The datasets to draw, in that order (:func:`select_datasets`).
    """
    if out is not None:
        _check_image_path(out)
    plan = metric_plan(_selected(results, datasets), metric, x)
    fig = _one_page(plan, "a dataset and algorithm each")
    if out is not None:
        _save_image(fig, out, 120)
    return fig


def metric_pages(results, metric="error", x=None, datasets=None):
    """:func:`plot_metric`'s figure as pages of at most :data:`MAX_PANELS` panels, in
    order (a list of Figures; file names: :func:`page_names`)."""
    plan = metric_plan(_selected(results, datasets), metric, x)
    return [plan.draw(chunk) for chunk in _chunks(plan.panels)]


def plot_comparison(results, metric="error", out=None, datasets=None):
    """Every configuration side by side: one panel per dataset, one row per
    configuration (:func:`knnx.stats.configurations.configuration_labels`: the algorithm
    and the parameters that vary; a tuned grid as ``tuned``), its per-fold values as
    dots (repeats, folds and pooled seeds; grey) and its mean ± one standard deviation
    cut to the metric's range (in the algorithm's colour). Returns the Figure (and
    saves it to ``out``); ``datasets``: :func:`select_datasets`. More than
    :data:`MAX_PANELS` datasets: ResultsError (:func:`comparison_pages` draws pages)."""
    if out is not None:
        _check_image_path(out)
    plan = comparison_plan(_selected(results, datasets), metric)
    fig = _one_page(plan, "one per dataset")
    if out is not None:
        _save_image(fig, out, 110)
    return fig


def comparison_pages(results, metric="error", datasets=None):
    """:func:`plot_comparison`'s figure as pages of at most :data:`MAX_PANELS` datasets
    (every page with the same rows), in order (a list of Figures; :func:`page_names`)."""
    plan = comparison_plan(_selected(results, datasets), metric)
    return [plan.draw(chunk) for chunk in _chunks(plan.panels)]


def figure_name(metric, x=None):
    """File name of an automatic figure: ``METRIC.png`` (the comparison) or
    ``METRIC-X.png`` (against parameter X); characters other than letters, digits and
    ``_.`` become ``_`` (so that the pages of a figure, :func:`page_names`, are the
    only names with a second ``-``); a name over 80 characters keeps its first 71 and
    ``_`` and 8 hex digits of its sha256 (a file name holds at most 255 bytes)."""

    def safe(text):
        text = re.sub(r"[^A-Za-z0-9_.]", "_", text)
        if len(text) <= 80:
            return text
        return f"{text[:71]}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"

    return f"{safe(metric)}.png" if x is None else f"{safe(metric)}-{safe(x)}.png"


def _pages_of(plan, name, what):
    """``(name, title, figure)`` per page of ``plan``, drawn one at a time."""
    chunks = _chunks(plan.panels)
    for i, (page, chunk) in enumerate(zip(page_names(name, len(chunks)), chunks, strict=True), 1):
        if len(chunks) == 1:
            yield page, what, plan.draw(chunk)
            continue
        first, last = plan.dataset_of(chunk[0]), plan.dataset_of(chunk[-1])
        span = first if first == last else f"{first} to {last}"
        yield page, f"{what}, page {i} of {len(chunks)} ({span})", plan.draw(chunk)


def automatic_figures(frame, requested=()):
    """The automatic figures of a results frame, in order: per metric (a score of knnx)
    the comparison of every configuration (:func:`plot_comparison`) and, for each
    numeric parameter that varies within an algorithm (seed-like ones left out: they are
    pooled), the metric against it (:func:`plot_metric`); the choices ``tune:`` made,
    counted per value (:mod:`knnx.reporting.tuning`, ``tuned-choices.png``); accuracy
    against reduction (:mod:`knnx.reporting.retention`). A quantity an estimator reports
    about its fit (a diagnostic: ``loo_error``, ``epochs``, ...) is drawn only when
    ``requested`` names it (the spec's ``figures:``): as counts per value when it takes
    at most :data:`knnx.reporting.tuning.DISCRETE_VALUES` integer values (a flag, a count), else as
    a metric is; a requested name without rows gets a line saying so. Each figure on
    pages of :data:`MAX_PANELS` panels where there are more.

    Yields ``(name, title, figure)``: ``name`` the file name (:func:`figure_name`, a
    page's :func:`page_names`), ``title`` one line (with the page and its datasets),
    the figure drawn when its turn comes; the figure None and the title one line
    saying why where a figure cannot be drawn at all (one line per figure, not per
    page or dataset)."""
    from knnx.reporting.tuning import choice_figures, discrete, tune_choice_mask

    if "round" in frame.columns:  # an active-learning run: its metrics round by round
        yield from active_figures(frame)
        return
    plain = frame[~tune_choice_mask(frame)]
    present = set(plain["metric"])
    for metric in dict.fromkeys(plain["metric"]):
        if PER_CLASS.fullmatch(metric):  # retained.0, retained.1, ...: in results.csv, no figures
            continue
        score = metric in METRICS or metric in LOWER_IS_BETTER
        if not score and metric not in requested:  # a diagnostic: on request
            continue
        rows = plain[plain["metric"] == metric]
        if not score and discrete(rows):
            yield from _counted(rows, metric)
            continue
        within = varying_within(rows)
        jobs = [None] + [x for x, w in within.items() if w.numeric and x not in SEED_PARAMS]
        for x in jobs:
            what = f"{metric} against {x}" if x is not None else f"{metric}, every configuration"
            try:
                plan = comparison_plan(rows, metric) if x is None else metric_plan(frame, metric, x)
            except ResultsError as exc:
                yield figure_name(metric, x), f"no figure of {what}: {str(exc).removeprefix('x: ')}", None
                continue
            yield from _pages_of(plan, figure_name(metric, x), what)
    for name, what, draw in choice_figures(frame):
        yield name, what, draw()
    for name, what, plan in retention_plans(frame):  # accuracy against reduction
        yield from _pages_of(plan, name, what)
    for name in requested:
        if name not in present:
            yield figure_name(name), f"no figure of {name}: the results hold no rows of it", None


def _counted(rows, metric):
    """The counts-per-value figure of a discrete diagnostic (``METRIC.png``)."""
    from knnx.reporting.tuning import choice_figure, counted_values

    c = counted_values(rows, metric)
    keys = list(dict.fromkeys(zip(c["algorithm"], c["parameter"], strict=True)))
    for i in range(0, len(keys), MAX_PANELS):
        pages = math.ceil(len(keys) / MAX_PANELS)
        name = figure_name(metric) if pages == 1 else page_names(figure_name(metric), pages)[i // MAX_PANELS]
        yield name, f"{metric}, counts per value", choice_figure(c, keys[i : i + MAX_PANELS], "reported")


def active_summary(frame):
    """An active-learning run's rows (a ``round`` column, see knnx.spec.ActiveSpec) as mean,
    std and n of each metric per (dataset, algorithm, round, n_train), in row order."""
    keys = ["dataset", "algorithm", "round", "n_train", "metric"]
    summary = frame.groupby(keys, sort=False)["value"].agg(["mean", "std", "size"]).reset_index()
    return summary.rename(columns={"size": "n"})


def active_figures(frame):
    """The figures of an active-learning run: ``active.png``, the mean error on the pool
    against the training set size (the paper's Fig. 4), and ``active_k.png``, the mean
    chosen k (Fig. 5 right); one panel per dataset (pages of :data:`MAX_PANELS`, four
    a row), one line per strategy. Yields ``(name, title, figure)`` as :func:`figures`
    does."""
    summary = active_summary(frame)
    for metric, name, ylabel in (
        ("error", "active.png", "error on the pool"),
        ("chosen_k", "active_k.png", "k"),
    ):
        sub = summary[summary["metric"] == metric]
        datasets = list(dict.fromkeys(sub["dataset"]))
        if not datasets:
            yield name, f"no figure of {metric}: no rows", None
            continue
        plan = _ActivePlan(sub, ylabel, datasets)
        yield from _pages_of(plan, name, f"{metric} (mean over repeats) against the training set size")


@dataclass(frozen=True)
class _ActivePlan:
    summary: pd.DataFrame
    ylabel: str
    panels: list

    def dataset_of(self, panel):
        return panel

    def draw(self, datasets):
        ncols = min(len(datasets), 4)
        nrows = -(-len(datasets) // ncols)
        with plain_text():  # dataset names drawn as written
            fig = Figure(figsize=(4.5 * ncols, 3.6 * nrows), layout="constrained")
            axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
            for ax in axes[len(datasets) :]:
                ax.set_visible(False)
            for ax, lab in zip(axes, datasets, strict=False):
                for algo, part in self.summary[self.summary["dataset"] == lab].groupby(
                    "algorithm", sort=False
                ):
                    marker = "o" if algo == "lpo_qbc" else "+"
                    ax.plot(part["n_train"], part["mean"], marker=marker, ms=3, label=algo)
                ax.set_title(lab, fontsize=9)
                ax.set_xlabel("training set size")
                ax.set_ylabel(self.ylabel)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=7)
        return fig


# The PNG text chunk that marks a figure as one of a run's automatic figures: those, and
# only those, are replaced or removed when the run is redone (a user's own images in the
# folder are never touched, whatever their names).
FIGURE_TAG = "knnx automatic figure"


def figure_files(out):
    """The run's automatic figures in the folder ``out`` (PNG files carrying
    :data:`FIGURE_TAG`, see :func:`write_figures`), in name order."""
    tag = FIGURE_TAG.encode("ascii")
    found = []
    for path in sorted(Path(out).glob("*.png")):
        try:
            if path.is_file() and not path.is_symlink():
                with open(path, "rb") as handle:
                    if tag in handle.read(4096):  # text chunks come before the image data
                        found.append(path)
        except OSError:
            continue
    return found


@dataclass(frozen=True)
class RunFigure:
    """One automatic figure (or page of one) of a run: its file ``name``
    (:func:`figure_name`, :func:`page_names`), its ``title`` (one line; where it could
    not be drawn, the line saying why) and the ``path`` it was saved to (None where it
    could not be drawn)."""

    name: str
    title: str
    path: Path | None


def save_figures(frame, out, requested=()):
    """:func:`figures` saved in the folder ``out`` (each atomically, PNG at 110 dpi,
    tagged :data:`FIGURE_TAG`), one at a time; ``requested``: the diagnostics to draw
    too. Returns the :class:`RunFigure` list, in drawing order."""
    drawn = []
    for name, title, fig in automatic_figures(frame, requested):
        if fig is None:
            drawn.append(RunFigure(name, title, None))
            continue
        path = Path(out) / name
        try:
            save_figure(fig, path, dpi=110, metadata={"Software": FIGURE_TAG})
        except ResultsError as exc:  # values matplotlib cannot draw: a note, as a figure left out
            drawn.append(RunFigure(name, f"{name} not drawn: {exc}", None))
            continue
        fig.clear()
        drawn.append(RunFigure(name, title, path))
    return drawn


# A quantity reported per class (``<name>.<class code>``, knnx.steps.Chain's
# ``retained.<c>``): its rows are in results.csv, its figure would be one per class.
PER_CLASS = re.compile(r"[A-Za-z][A-Za-z0-9_]*\.[0-9]+")


def write_figures(frame, out, requested=()):
    """:func:`save_figures`, as ``(written, notes)``: the file names written, and one
    line for each figure that could not be drawn, saying why."""
    drawn = save_figures(frame, out, requested)
    return [f.name for f in drawn if f.path is not None], [f.title for f in drawn if f.path is None]


def default_x(frame, metric="error"):
    """What ``knnx plot`` draws ``metric`` against by default: the first parameter that
    varies within an algorithm (numeric ones first, seed-like ones last), else None
    (every configuration side by side)."""
    rows = metric_rows(frame, metric)
    within = varying_within(rows)
    ordered = sorted(within, key=lambda n: (n in SEED_PARAMS, not within[n].numeric))
    return ordered[0] if ordered else None


def _counts_plan(frame, metric):
    """The counts per value the run draws of ``metric`` (what ``tune:`` chose, a flag:
    :func:`knnx.reporting.tuning.counts_plan`), or None."""
    from knnx.reporting.tuning import counts_plan

    return counts_plan(frame, metric, metric in METRICS or metric in LOWER_IS_BETTER)


def drawn_as_counts(results, metric):
    """Whether ``knnx plot`` draws ``metric`` without ``--x`` as counts per value."""
    return _counts_plan(_selected(results, None), metric) is not None


def _plan(results, metric, x, datasets):
    frame = _selected(results, datasets)
    counts = None if x is not None else _counts_plan(frame, metric)
    if counts is not None:  # what tune: chose, a flag: counts per value, as the run draws them
        return counts, "an algorithm and parameter each"
    if x is None:
        x = default_x(frame, metric) or "configuration"
    if x == "configuration":
        return comparison_plan(frame, metric), "one per dataset"
    return metric_plan(frame, metric, x), "a dataset and algorithm each"


def plot(results, metric="error", x=None, out=None, datasets=None):
    """``knnx plot`` as one figure: ``metric`` against parameter ``x``
    (:func:`plot_metric`; default :func:`default_x`), or, with ``x="configuration"`` or
    when no parameter varies within an algorithm, every configuration side by side
    (:func:`plot_comparison`), on ``datasets`` (:func:`select_datasets`). Returns the
    Figure (saved to ``out`` if given); ResultsError beyond :data:`MAX_PANELS` panels
    (:func:`write_plot` pages them)."""
    if out is not None:
        _check_image_path(out)
    plan, what = _plan(results, metric, x, datasets)
    fig = _one_page(plan, what)
    if out is not None:
        _save_image(fig, out, 120 if isinstance(plan, MetricPlan) else 110)
    return fig


def plot_pages(results, metric="error", x=None, datasets=None):
    """:func:`plot`'s figure as pages of at most :data:`MAX_PANELS` panels (a list of
    Figures, in order)."""
    plan, _ = _plan(results, metric, x, datasets)
    return [plan.draw(chunk) for chunk in _chunks(plan.panels)]


def write_plot(results, out, metric="error", x=None, datasets=None, notes=None):
    """``knnx plot``: draw :func:`plot`'s figure on as many pages as it needs and save
    them; returns the paths written, in page order. One page: the file ``out`` itself;
    more: ``out`` with ``-1``, ``-2``, ... before its suffix (``error-k.png`` ->
    ``error-k-1.png``, ``error-k-2.png``; :func:`page_names`), each of at most
    :data:`MAX_PANELS` panels. Nothing is written when the figure cannot be drawn
    (ResultsError); files of an earlier call are neither replaced nor removed beyond
    the names written. ``notes``: a list to which the lines on what is not drawn are
    added (the algorithms that take one value of ``x`` on every dataset)."""
    _check_image_path(out)
    plan, _ = _plan(results, metric, x, datasets)
    if notes is not None and getattr(plan, "left_out", ()):
        shown_ids = ", ".join(plan.left_out)
        notes.append(f"not drawn against {plan.x} (one value of it on every dataset): {shown_ids}")
    out = Path(out)
    chunks = _chunks(plan.panels)
    paths = [out.with_name(n) for n in page_names(out.name, len(chunks))]
    for path, chunk in zip(paths, chunks, strict=True):
        fig = plan.draw(chunk)
        _save_image(fig, path, 120 if isinstance(plan, MetricPlan) else 110)
        fig.clear()
    return paths
