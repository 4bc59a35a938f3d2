"""How the per-dataset panels of :mod:`knnx.reporting.figures` are planned and drawn
(matplotlib's object API): the metric ranges that cut error bars, the numeric, log and
categorical axes, the parameters that vary within an algorithm, tuned grids, and the
two kinds of panel (a metric against a parameter; every configuration side by side).
The rules are stated in :mod:`knnx.reporting.figures`, whose public functions use these
plans; a plan's ``draw(panels)`` draws one page.
"""

import json
import math
from contextlib import contextmanager
from dataclasses import dataclass

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from knnx._text import shorten
from knnx.errors import ResultsError
from knnx.reporting.parameters import (
    is_number,
    parameter_values,
    parse_params,
    takes_two_values,
    value_key,
    values_per_key,
    varying_params,
    varying_within,
)
from knnx.results import PARAM_PREFIX, CellId
from knnx.stats.configurations import SEED_PARAMS, configuration_labels


@contextmanager
def plain_text():
    """Figures whose titles, labels and legends are drawn as written: matplotlib would
    read a dataset named ``$x^$`` as mathtext and fail on it."""
    with matplotlib.rc_context({"text.parse_math": False}):
        yield


# A comparison figure has a row per configuration: more would be unreadable (knnx table
# and knnx compare still cover them).
MAX_CONFIGURATIONS = 80


_UNIT = (0.0, 1.0)
_POSITIVE = (0.0, math.inf)
# The range of each metric's values (knnx.evaluation.metrics, and the timings): error
# bars are cut at its bounds. Every registered metric is listed (a test checks it).
METRIC_RANGES = {
    **dict.fromkeys(("error", "accuracy", "f1_macro", "recall_macro", "precision_macro"), _UNIT),
    **dict.fromkeys(("balanced_accuracy", "g_mean", "f_measure_auc", "rejection_auc", "auc"), _UNIT),
    **dict.fromkeys(("log_loss", "sym_kl", "fit_seconds", "predict_seconds", "tune_seconds"), _POSITIVE),
    "mcc": (-1.0, 1.0),
    "brier": (0.0, 2.0),
    "js": (0.0, math.log(2.0)),
}


def metric_range(metric):
    """``(low, high)``: the bounds of ``metric``'s values (:data:`METRIC_RANGES`);
    ``(-inf, inf)`` for a quantity not listed."""
    return METRIC_RANGES.get(metric, (-math.inf, math.inf))


def clipped_spread(means, std, metric):
    """The error bars of ``means`` ± ``std`` cut to ``metric``'s range, as matplotlib's
    ``yerr``/``xerr`` of shape (2, n): the distance drawn below and above each mean,
    each at most ``std`` and never past a bound of :func:`metric_range`."""
    means = np.atleast_1d(np.asarray(means, dtype=np.float64))
    std = np.atleast_1d(np.asarray(std, dtype=np.float64))
    low, high = metric_range(metric)
    below = np.minimum(std, np.maximum(means - low, 0.0))
    above = np.minimum(std, np.maximum(high - means, 0.0))
    return np.vstack([below, above])


def is_geometric(values):
    """Whether ``values`` form a geometric grid, drawn on a log scale: at least three
    distinct values, all positive, the ratios of consecutive sorted values each above
    1.5 and the largest at most 1.5 times the smallest (1e-3, 1e-2, 1e-1; 1, 2, 4, 8;
    1, 3, 10, 30, 100; not 1, 3, 5, 7, 9)."""
    v = np.unique(np.asarray(values, dtype=np.float64))
    if len(v) < 3 or not np.all(np.isfinite(v)) or v[0] <= 0:
        return False
    ratios = v[1:] / v[:-1]
    return bool(ratios.min() > 1.5 and ratios.max() <= 1.5 * ratios.min())


def metric_rows(frame, metric):
    if metric not in set(frame["metric"]):
        raise ResultsError(
            f"no rows for metric '{metric}'; present: {', '.join(map(repr, sorted(set(frame['metric']))))}",
            param="metric",
        )
    return frame[frame["metric"] == metric]


def _value_text(value):
    return value if isinstance(value, str) else json.dumps(value)


def _setting_text(name, value):
    return f"{name} tuned" if isinstance(value, list) else f"{name}={_value_text(value)}"


def _grid_text(grid):
    """``7 values 1–21`` (numbers) or ``3 values``: a tuned grid in a legend."""
    if grid and all(is_number(v) for v in grid):
        try:
            return f"{len(grid)} values {min(grid):g}–{max(grid):g}"
        except OverflowError:  # an integer beyond float64
            pass
    return f"{len(grid)} values"


TITLE_LIMIT = 48  # a panel title cut (…) beyond: a 250-character id hid its neighbours' titles


def _short(text, limit=24):
    return shorten(text, limit, "…")


@dataclass(frozen=True)
class _Axis:
    """How one algorithm's values of ``x`` are placed: on a numeric axis (``log``: a log
    scale, ``ticks`` its values) or as categories (``ticks``: their texts, ``slots``:
    {JSON of a value: its position})."""

    numeric: bool
    log: bool
    ticks: tuple
    slots: dict | None = None


def _axis_of(scalars, grids):
    values = list(scalars.values())
    grid_values = [v for g in grids.values() for v in g]
    if all(is_number(v) for v in [*values, *grid_values]):
        try:
            floats = [float(v) for v in values]
        except OverflowError:
            floats = []  # metric_plan names its line
        if is_geometric(floats):
            return _Axis(True, True, tuple(sorted(set(floats))))
        return _Axis(True, False, ())
    slots = {key: i for i, key in enumerate(scalars)}
    return _Axis(False, False, tuple(_value_text(v) for v in values), slots)


def check_x(frame, metric, x):
    """The parameter to plot ``metric`` against (default: the first varying within an algorithm,
    numeric first, seed-like last; ``param_k`` names ``k``); ResultsError, naming those that vary
    within an algorithm, when there is none, it takes one value or varies across algorithms only."""
    shown = ", ".join(varying_params(frame)) or "none"
    within = varying_within(frame)
    inside = f"parameters that vary within an algorithm: {', '.join(within) or 'none'}"
    if x is None:
        ordered = sorted(within, key=lambda n: (n in SEED_PARAMS, not within[n].numeric))
        if ordered:
            return ordered[0]
        if shown == "none":
            raise ResultsError(
                f"no parameter varies in the '{metric}' rows; nothing to plot against", param="x"
            )
        raise ResultsError(
            f"no parameter varies within one algorithm's '{metric}' rows (across algorithms: {shown}; "
            "the same name may mean another thing in another algorithm); nothing to plot against",
            param="x",
        )
    values = parameter_values(frame)
    if x not in values and x.startswith(PARAM_PREFIX) and x.removeprefix(PARAM_PREFIX) in values:
        x = x.removeprefix(PARAM_PREFIX)  # by its column: param_configuration
    if x not in values:
        raise ResultsError(
            f"no parameter '{x}' in the '{metric}' rows; {inside} "
            "(or {x=configuration}: every configuration side by side)",
            param="x",
            mentions=[("x", "configuration")],
        )
    if len(values[x]) < 2:
        one = values[x][0]
        what = (
            f"is tuned on one grid ({_grid_text(one)}; its choices: knnx table --metric chosen_{x})"
            if isinstance(one, list)
            else f"takes one value ({_value_text(one)[:40]})"
        )
        raise ResultsError(
            f"parameter '{x}' {what} in the '{metric}' rows; {inside} "
            "(or {x=configuration}: every configuration side by side)",
            param="x",
            mentions=[("x", "configuration")],
        )
    if x not in within:
        raise ResultsError(
            f"parameter '{x}' takes one value per algorithm and dataset in the '{metric}' rows; it is drawn "
            f"within one algorithm only (another algorithm's '{x}' may mean another thing); {inside} "
            "(or {x=configuration}: every configuration side by side)",
            param="x",
            mentions=[("x", "configuration")],
        )
    return x


def _line_labels(pairs, parsed, x):
    """Each row's line: its algorithm and the other parameters that vary among that
    algorithm's rows on its dataset (``pairs``: each row's (dataset, algorithm);
    seed-like parameters pooled unless ``x`` is one; a tuned grid as ``name tuned``),
    and, for a row tuned over ``x``, ``x tuned over <grid>``."""
    pooled = set(SEED_PARAMS) - {x}
    # rows of one setting share one parsed dict (parse_params parses each text once):
    # each (panel, setting) is labelled once, then every row takes its label
    distinct = {}
    for pair, p in zip(pairs, parsed, strict=True):
        distinct.setdefault((pair, id(p)), (pair, p))
    per_panel = {}
    for pair, p in distinct.values():
        for k, v in p.items():
            per_panel.setdefault(pair, {}).setdefault(k, set()).add(value_key(v))
    labels = {}
    for key, (pair, p) in distinct.items():
        others = [
            _setting_text(k, v)
            for k, v in sorted(p.items())
            if k != x and k not in pooled and len(per_panel[pair][k]) > 1
        ]
        line = f"{pair[1]} {', '.join(others)}".strip()
        labels[key] = f"{line}, {x} tuned over {_grid_text(p[x])}" if isinstance(p[x], list) else line
    return [labels[pair, id(p)] for pair, p in zip(pairs, parsed, strict=True)]


@dataclass(frozen=True)
class MetricPlan:
    """What :func:`knnx.reporting.figures.plot_metric` draws: ``rows`` (dataset,
    algorithm, value and ``_x`` the position on the axis, ``_line`` the series,
    ``_tuned`` a row of a tuned grid, ``_chosen`` its chosen value of x or nan), the
    ``axes`` of each algorithm and the ``panels`` ((dataset, algorithm), in drawing
    order)."""

    metric: str
    x: str
    rows: pd.DataFrame
    axes: dict
    panels: list
    left_out: tuple = ()  # the algorithms of the metric's rows with no panel: one value of x each

    def dataset_of(self, panel):
        return panel[0]

    def draw(self, panels):
        with plain_text():  # dataset and parameter names drawn as written
            return _draw_lines(self, panels)


def _require_x(rows, parsed, x):
    """ResultsError naming the first of ``rows`` (those of the panels drawn against ``x``)
    whose params lack ``x``: a run writes every row of an algorithm on a dataset with the
    same parameters, so such a row was edited by hand, and it has no place on the axis."""
    lacking = next((i for i, p in enumerate(parsed) if x not in p), None)
    if lacking is not None:
        line, dataset, algorithm = (
            rows.index[lacking] + 2,
            rows["dataset"].iloc[lacking],
            rows["algorithm"].iloc[lacking],
        )
        raise ResultsError(
            f"column 'params' line {line}: no '{x}' in this row of {algorithm} on {dataset}, while its other rows "
            f"there have one: it has no place on the '{x}' axis (a run writes every row of an algorithm with the "
            "same parameters)"
        )


def metric_plan(frame, metric, x):
    """The :class:`MetricPlan` of ``metric`` against ``x`` (checked, default chosen) in ``frame``."""
    rows = metric_rows(frame, metric)
    x = check_x(rows, metric, x)
    everyone = list(dict.fromkeys(rows["algorithm"]))
    rows = rows[rows["algorithm"].isin(varying_within(rows)[x].algorithms)]
    parsed = parse_params(rows["params"])
    # a panel per (dataset, algorithm) taking two values of x or more on that dataset
    pairs = list(zip(rows["dataset"], rows["algorithm"], strict=True))
    drawn = {pair for pair, values in values_per_key(pairs, parsed, x).items() if takes_two_values(values)}
    keep = np.array([pair in drawn for pair in pairs], dtype=bool)
    rows, pairs = rows[keep], [pair for pair, k in zip(pairs, keep, strict=True) if k]
    parsed = [p for p, k in zip(parsed, keep, strict=True) if k]
    _require_x(rows, parsed, x)
    per_algorithm = values_per_key(rows["algorithm"], parsed, x)
    axes = {a: _axis_of(scalars, grids) for a, (scalars, grids) in per_algorithm.items()}
    chosen_rows = frame[frame["metric"] == f"chosen_{x}"]
    chosen = dict(zip(CellId.of_frame(chosen_rows), chosen_rows["value"], strict=True))
    positions, chosen_at = [], []
    for row, cell, alg, p in zip(rows.index, CellId.of_frame(rows), rows["algorithm"], parsed, strict=True):
        value, axis = p[x], axes[alg]
        if isinstance(value, list):
            positions.append(math.nan)
            chosen_at.append(float(chosen.get(cell, math.nan)) if axis.numeric else math.nan)
        elif axis.numeric:
            try:
                positions.append(float(value))  # an integer beyond float64 (10^400) cannot be drawn
            except OverflowError:
                raise ResultsError(
                    f"column 'params' line {row + 2}: {x} = {str(value)[:20]}... is too large to plot"
                ) from None
            chosen_at.append(math.nan)
        else:
            positions.append(float(axis.slots[value_key(value)]))
            chosen_at.append(math.nan)
    rows = pd.DataFrame(
        {
            "dataset": rows["dataset"].to_numpy(),
            "algorithm": rows["algorithm"].to_numpy(),
            "value": rows["value"].to_numpy(dtype=np.float64),
            "_x": positions,
            "_line": _line_labels(pairs, parsed, x),
            "_tuned": [isinstance(p[x], list) for p in parsed],
            "_chosen": chosen_at,
        }
    )
    # A setting with a single x value is a dot, not a line: drop such settings when
    # another of the panel has a curve (e.g. one weights with one k beside a k grid).
    scalar = ~rows["_tuned"]
    n_x = rows[scalar].groupby(["dataset", "algorithm", "_line"])["_x"].transform("nunique")
    widest = n_x.groupby([rows.loc[scalar, "dataset"], rows.loc[scalar, "algorithm"]]).transform("max")
    dots = pd.Series(False, index=rows.index)
    dots[n_x.index] = (n_x == 1) & (widest > 1)
    rows = rows[~dots].reset_index(drop=True)
    order = {a: i for i, a in enumerate(per_algorithm)}
    first = {d: i for i, d in enumerate(dict.fromkeys(rows["dataset"]))}
    pairs = rows[["dataset", "algorithm"]].drop_duplicates().itertuples(index=False, name=None)
    panels = sorted(pairs, key=lambda pair: (first[pair[0]], order[pair[1]]))
    drawn = {algorithm for _, algorithm in panels}
    return MetricPlan(metric, x, rows, axes, panels, tuple(a for a in everyone if a not in drawn))


def _draw_tuned(ax, part, metric, label, numeric):
    """One tuned setting: a diamond at the median chosen value (bar: smallest to largest
    chosen) on a numeric axis, else a dashed line at the metric's mean."""
    values = part["value"]
    mean, count = values.mean(), values.count()
    std = values.std() if count > 1 else 0.0
    chosen = part["_chosen"].to_numpy(dtype=np.float64)
    if numeric and len(chosen) and not np.isnan(chosen).any():
        middle = float(np.median(chosen))
        ax.errorbar(
            [middle],
            [mean],
            xerr=[[middle - chosen.min()], [chosen.max() - middle]],
            yerr=clipped_spread([mean], [std], metric),
            fmt="D",
            ms=5,
            capsize=3,
            label=label,
        )
    else:
        shown = f"{label} (choices not recorded)" if numeric else label
        ax.axhline(mean, linestyle="--", linewidth=1.2, color="0.35", label=shown)


def _set_x_axis(ax, axis, x):
    if axis.log:
        ax.set_xscale("log")
        if len(axis.ticks) <= 16:  # the grid's own values, not powers of ten only
            ax.set_xticks(axis.ticks, [f"{v:g}" for v in axis.ticks])
            ax.xaxis.set_minor_locator(NullLocator())
    elif not axis.numeric:
        ticks = [_short(t) for t in axis.ticks]
        ax.set_xticks(range(len(ticks)), ticks, rotation=30 if max(map(len, ticks), default=0) > 6 else 0)
    ax.set_xlabel(f"{x} (log scale)" if axis.log else x)


def _legend_top(axis):
    """Where the legend under a panel starts (axes fraction): below the axis title, which
    rotated category labels (:func:`_set_x_axis`) push down by about their length."""
    ticks = [] if axis.numeric or axis.log else [_short(t) for t in axis.ticks]
    longest = max(map(len, ticks), default=0)
    return -0.15 - (0.012 * min(longest, 24) if longest > 6 else 0.0)


def _draw_lines(plan, panels):
    """One page of :func:`knnx.reporting.figures.plot_metric`: a panel per (dataset,
    algorithm) of ``panels``, a line per ``_line``."""
    metric, rows = plan.metric, plan.rows
    shown = set(panels)
    on_page = rows[[pair in shown for pair in zip(rows["dataset"], rows["algorithm"], strict=True)]]
    # The legend goes under each panel; the figure grows with the longest one, so that a
    # spec with many settings keeps a readable plotting area.
    n_lines = int(on_page.groupby(["dataset", "algorithm"])["_line"].nunique().max()) if len(on_page) else 0
    ncols = min(len(panels), 4)
    nrows = -(-len(panels) // ncols)
    fig = Figure(figsize=(5.0 * ncols, nrows * (3.8 + 0.16 * n_lines)), layout="constrained")
    grid = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in grid[len(panels) :]:
        ax.set_visible(False)
    several = len({a for _, a in plan.panels}) > 1
    for ax, (name, alg) in zip(grid, panels, strict=False):
        sub = rows[(rows["dataset"] == name) & (rows["algorithm"] == alg)]
        axis = plan.axes[alg]
        for line, part in sub[~sub["_tuned"]].groupby("_line", sort=False):
            stats = part.groupby("_x")["value"].agg(["mean", "std", "count"]).sort_index()
            std = stats["std"].where(stats["count"] > 1, 0.0).to_numpy(dtype=float)
            xs, means = stats.index.to_numpy(dtype=float), stats["mean"].to_numpy(dtype=float)
            ax.errorbar(
                xs, means, yerr=clipped_spread(means, std, metric), marker="o", ms=3, capsize=2, label=line
            )
        for line, part in sub[sub["_tuned"]].groupby("_line", sort=False):
            _draw_tuned(ax, part, metric, line, axis.numeric)
        _set_x_axis(ax, axis, plan.x)
        ax.set_title(_short(f"{name} · {alg}" if several else name, TITLE_LIMIT))
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, _legend_top(axis)), frameon=False)
    if plan.left_out:  # the figure says it, wherever it is seen (knnx plot says it too)
        fig.supxlabel(
            _short(
                f"Not drawn against {plan.x} (one value of it on every dataset): {', '.join(plan.left_out)}",
                200,
            ),
            fontsize=8,
        )
    return fig


def _display_labels(rows):
    """:func:`knnx.stats.configurations.configuration_labels` of ``rows`` with each
    tuned grid shown as ``tuned`` (``tuned (2)``, ... for another grid of the same
    algorithm and parameter), never as its list."""
    parsed = parse_params(rows["params"])
    grids, cells = {}, {}
    for i, (alg, p) in enumerate(zip(rows["algorithm"], parsed, strict=True)):
        for name, value in p.items():
            if isinstance(value, list) and PARAM_PREFIX + name in rows.columns:
                seen = grids.setdefault((alg, name), {})
                n = seen.setdefault(value_key(value), len(seen) + 1)
                cells.setdefault(PARAM_PREFIX + name, {})[i] = "tuned" if n == 1 else f"tuned ({n})"
    if not cells:
        return configuration_labels(rows)
    shown = rows.copy()
    for column, texts in cells.items():
        values = shown[column].to_numpy(dtype=object).copy()
        values[list(texts)] = list(texts.values())
        shown[column] = values
    return configuration_labels(shown)


@dataclass(frozen=True)
class ComparisonPlan:
    """What :func:`knnx.reporting.figures.plot_comparison` draws: the ``metric`` rows
    with their ``configuration``, the configurations (rows of every panel) and the
    ``panels`` (datasets, in drawing order)."""

    metric: str
    rows: pd.DataFrame
    configs: list
    panels: list

    def dataset_of(self, panel):
        return panel

    def draw(self, panels):
        with plain_text():
            return _draw_comparison(self, panels)


def comparison_plan(frame, metric):
    """The :class:`ComparisonPlan` of ``metric`` in ``frame``."""
    rows = metric_rows(frame, metric)
    rows = rows.assign(configuration=_display_labels(rows))
    configs = list(dict.fromkeys(rows["configuration"]))
    if len(configs) > MAX_CONFIGURATIONS:
        raise ResultsError(
            f"{len(configs)} configurations: more than {MAX_CONFIGURATIONS} rows would be unreadable; "
            "knnx table lists them"
        )
    return ComparisonPlan(metric, rows, configs, list(dict.fromkeys(rows["dataset"])))


def _draw_comparison(plan, datasets):
    frame, configs, metric = plan.rows, plan.configs, plan.metric
    position = {c: i for i, c in enumerate(configs)}
    algorithm_of = dict(zip(frame["configuration"], frame["algorithm"], strict=True))
    palette = matplotlib.colormaps["tab10"].colors
    colour = {a: palette[i % len(palette)] for i, a in enumerate(dict.fromkeys(frame["algorithm"]))}
    ncols = min(len(datasets), 4)
    nrows = -(-len(datasets) // ncols)
    longest = max(len(c) for c in configs)
    fig = Figure(
        figsize=(1.2 + 0.07 * longest + 3.2 * ncols, nrows * (1.3 + 0.24 * len(configs))),
        layout="constrained",
    )
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    for i, ax in enumerate(axes.flat):
        if i >= len(datasets):
            ax.set_visible(False)
            continue
        sub = frame[frame["dataset"] == datasets[i]]
        ys = sub["configuration"].map(position).to_numpy(dtype=float)
        # per-fold values, spread a little vertically in a fixed pattern (no randomness)
        offsets = (np.arange(len(sub)) % 5 - 2) * 0.06
        ax.plot(sub["value"].to_numpy(dtype=float), ys + offsets, ".", ms=3, color="0.6", zorder=1)
        stats = sub.groupby("configuration", sort=False)["value"].agg(["mean", "std", "count"])
        std = stats["std"].where(stats["count"] > 1, 0.0).to_numpy(dtype=float)
        spread = clipped_spread(stats["mean"].to_numpy(dtype=float), std, metric)
        for j, config in enumerate(stats.index):  # one colour per algorithm
            ax.errorbar(
                stats["mean"].iloc[j],
                position[config],
                xerr=spread[:, j : j + 1],
                fmt="o",
                ms=4,
                color=colour[algorithm_of[config]],
                capsize=2,
                zorder=2,
            )
        ax.set_yticks(range(len(configs)), configs, fontsize=8)
        ax.set_ylim(len(configs) - 0.5, -0.5)
        ax.set_title(_short(datasets[i], TITLE_LIMIT), fontsize=10)
        ax.set_xlabel(f"{metric} (mean ± std; dots: single runs)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    return fig
