"""Plots built from result files only (matplotlib's object API, no pyplot state).

``plot_comparison`` shows every configuration of a run, one panel per dataset, its
per-fold values and mean ± std; ``plot_metric`` draws a metric against one parameter
(numeric or categorical), one line per algorithm and setting of its other
parameters; ``write_figures`` makes both kinds for a run's folder and says, in one
line each, what it could not draw.
"""

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from knnx._text import describe_control, escape_control, find_control
from knnx.errors import ResultsError
from knnx.results import read_results, save_figure
from knnx.stats.configurations import SEED_PARAMS


@contextmanager
def plain_text():
    """Figures whose titles, labels and legends are drawn as written: matplotlib would
    read a dataset named ``$x^$`` as mathtext and fail on it."""
    with matplotlib.rc_context({"text.parse_math": False}):
        yield


def parse_params(params):
    """The ``params`` cells of a results frame (a Series indexed by data row, as read) as
    dicts; ResultsError naming the line of a cell that is not a JSON object (a
    hand-edited file)."""
    out = []
    for row, text in params.items():
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            shown = escape_control(text if len(text) <= 40 else text[:40] + "...")
            raise ResultsError(
                f"column 'params' line {row + 2}: '{shown}' is not a JSON object of parameters"
            )
        out.append(value)
    return out


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def parameter_values(frame):
    """{parameter: list of its distinct values, in order of appearance} over the rows of
    ``frame`` (values as JSON gives them: numbers, text, booleans, None, lists)."""
    values = {}
    for params in parse_params(frame["params"].drop_duplicates()):
        for key, value in params.items():
            seen = values.setdefault(key, {})
            seen.setdefault(json.dumps(value, sort_keys=True), value)
    return {key: list(seen.values()) for key, seen in values.items()}


def varying_params(frame):
    """Names of the parameters that take more than one value in ``frame``."""
    return [key for key, vals in parameter_values(frame).items() if len(vals) > 1]


def varying_numeric_params(frame):
    """Names of numeric parameters that take more than one value in ``frame``."""
    return [
        key for key, vals in parameter_values(frame).items() if len([v for v in vals if _is_number(v)]) > 1
    ]


def _check_image_path(out):
    """ResultsError unless ``out`` names an image file matplotlib can write in an existing folder."""
    folder = Path(out).parent
    if Path(out).is_dir():
        raise ResultsError(f"{out} is a folder; give an image file name (e.g. error.png)", param="out")
    if find_control(str(out)) is not None:
        raise ResultsError(
            f"{str(out)!r} holds a {describe_control(str(out))}; name the file without one", param="out"
        )
    if not folder.is_dir():
        raise ResultsError(f"{out}: no folder {folder} to write it in", param="out")
    fmt = Path(out).suffix.lstrip(".").lower()
    supported = Figure().canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ResultsError(
            f"unsupported image format '.{fmt}'; use one of {', '.join('.' + f for f in sorted(supported))}",
            param="out",
        )


def _metric_rows(frame, metric):
    if metric not in set(frame["metric"]):
        raise ResultsError(
            f"no rows for metric '{metric}'; present: {', '.join(sorted(set(frame['metric'])))}",
            param="metric",
        )
    return frame[frame["metric"] == metric]


def _value_text(value):
    return value if isinstance(value, str) else json.dumps(value)


def plot_metric(results, metric="error", x=None, out=None):
    """Plot ``metric`` against parameter ``x``; return the Figure (and save it to ``out``).

    One panel per dataset; one line per algorithm and combination of its other
    parameters that vary (seed-like parameters, :data:`knnx.stats.configurations.SEED_PARAMS`, are
    pooled unless ``x`` is one of them), each point the mean over repeats, folds and
    pooled seeds with ± one standard deviation. A numeric ``x`` is drawn on a numeric
    axis; any other (text, booleans, lists, or numbers mixed with them) on a
    categorical axis, its values in order of first appearance. Rows without ``x`` (an
    algorithm that has no such parameter) are left out; a line with a single value of
    ``x`` is left out when others vary along it.

    Parameters
    ----------
    results : path or DataFrame
        A results.csv file (or its frame).
    metric : str
    x : str, optional
        Parameter for the horizontal axis; default: the first numeric one that varies
        (seed-like ones last), else the first that varies.
    out : path, optional
        Where to write the image (format from the suffix, e.g. .png or .pdf).
    """
    frame = read_results(results) if not hasattr(results, "columns") else results
    frame = _metric_rows(frame, metric)
    x, values = _check_x(frame, metric, x)
    if out is not None:
        _check_image_path(out)
    parsed = parse_params(frame["params"])
    has_x = np.array([x in p for p in parsed], dtype=bool)
    frame = frame[has_x]
    parsed = [p for p, keep in zip(parsed, has_x, strict=True) if keep]
    positions, ticks = _x_positions(frame, parsed, x, values[x])
    frame = frame.assign(_x=positions, _line=_line_labels(frame, parsed, x))
    # A setting with a single x value is a dot, not a line: drop such settings when
    # others have a curve (e.g. UNN with one k beside kNN over k).
    n_x = frame.groupby(["dataset", "_line"])["_x"].transform("nunique")
    if (n_x > 1).any():
        frame = frame[n_x > 1]
    with plain_text():  # dataset and parameter names drawn as written
        fig = _draw_lines(frame, metric, x, ticks)
        if out is not None:
            save_figure(fig, out, dpi=120)
    return fig


def _check_x(frame, metric, x):
    """``(x, values)``: the parameter to plot ``metric`` against (default: the first
    numeric one that varies, seed-like ones last) and :func:`parameter_values` of
    ``frame``; ResultsError when there is none, it takes one value, or the datasets
    are too many for panels."""
    varying = varying_params(frame)
    shown = ", ".join(varying) or "none"
    if x is None:
        ordered = sorted(varying, key=lambda n: (n in SEED_PARAMS, n not in varying_numeric_params(frame)))
        if not ordered:
            raise ResultsError(
                f"no parameter varies in the '{metric}' rows; nothing to plot against", param="x"
            )
        x = ordered[0]
    values = parameter_values(frame)
    if x not in values:
        raise ResultsError(
            f"no parameter '{x}' in the '{metric}' rows; parameters that vary: {shown} "
            "(or {x=configuration}: every configuration side by side)",
            param="x",
            mentions=[("x", "configuration")],
        )
    n_datasets = frame["dataset"].nunique()
    if n_datasets > MAX_PANELS:
        raise ResultsError(
            f"{n_datasets} datasets: more than {MAX_PANELS} panels would be unreadable; "
            "knnx compare draws the comparison across datasets"
        )
    if len(values[x]) < 2:
        raise ResultsError(
            f"parameter '{x}' takes one value ({_value_text(values[x][0])[:40]}) in the '{metric}' rows; "
            f"parameters that vary: {shown} (or {{x=configuration}}: every configuration side by side)",
            param="x",
            mentions=[("x", "configuration")],
        )
    return x, values


def _x_positions(frame, parsed, x, values):
    """``(positions, ticks)``: each row's place on the horizontal axis, its value of
    ``x`` when every value is a number (ticks None), else the index of its value among
    ``values`` (ticks: their texts)."""
    if all(_is_number(p[x]) for p in parsed):
        for row, p in zip(frame.index, parsed, strict=True):
            try:
                float(p[x])  # an integer beyond float64 (10^400) cannot be drawn
            except OverflowError:
                raise ResultsError(
                    f"column 'params' line {row + 2}: {x} = {str(p[x])[:20]}... is too large to plot"
                ) from None
        return [float(p[x]) for p in parsed], None
    order = {json.dumps(v, sort_keys=True): i for i, v in enumerate(values)}
    positions = [float(order[json.dumps(p[x], sort_keys=True)]) for p in parsed]
    return positions, [_value_text(v) for v in values]


def _line_labels(frame, parsed, x):
    """Each row's line: its algorithm and the other parameters that vary among that
    algorithm's rows (seed-like ones pooled unless ``x`` is one)."""
    pooled = set(SEED_PARAMS) - {x}
    per_algorithm = {}
    for a, p in zip(frame["algorithm"], parsed, strict=True):
        for k, v in p.items():
            per_algorithm.setdefault(a, {}).setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    lines = []
    for a, p in zip(frame["algorithm"], parsed, strict=True):
        others = [
            f"{k}={_value_text(v)}"
            for k, v in sorted(p.items())
            if k != x and k not in pooled and len(per_algorithm[a][k]) > 1
        ]
        lines.append(f"{a} {', '.join(others)}".strip())
    return lines


def _draw_lines(frame, metric, x, ticks):
    """The Figure of :func:`plot_metric`: one panel per dataset, one line per ``_line``."""
    datasets = list(dict.fromkeys(frame["dataset"]))
    # The legend goes under each panel; the figure grows with the longest one, so that a
    # spec with many settings (e.g. 22 algorithms) keeps a readable plotting area.
    n_lines = int(frame.groupby("dataset")["_line"].nunique().max()) if len(frame) else 0
    ncols = min(len(datasets), 4)
    nrows = -(-len(datasets) // ncols)
    fig = Figure(figsize=(5.0 * ncols, nrows * (3.8 + 0.16 * n_lines)), layout="constrained")
    grid = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in grid[len(datasets) :]:
        ax.set_visible(False)
    for ax, name in zip(grid, datasets, strict=False):
        sub = frame[frame["dataset"] == name]
        for line, part in sub.groupby("_line", sort=False):
            stats = part.groupby("_x")["value"].agg(["mean", "std", "count"]).sort_index()
            std = stats["std"].where(stats["count"] > 1, 0.0).to_numpy(dtype=float)
            xs, means = stats.index.to_numpy(dtype=float), stats["mean"].to_numpy(dtype=float)
            ax.errorbar(xs, means, yerr=std, marker="o", ms=3, capsize=2, label=line)
        if ticks is not None:
            ax.set_xticks(range(len(ticks)), ticks, rotation=30 if max(map(len, ticks)) > 6 else 0)
        ax.set_title(name)
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
    return fig


# Above these sizes the comparison figure is not drawn (a panel per dataset, a row per
# configuration would be unreadable); knnx compare and the tables still cover them.
MAX_PANELS = 12
MAX_CONFIGURATIONS = 80


def plot_comparison(results, metric="error", out=None):
    """Every configuration side by side: one panel per dataset, one row per
    configuration (:func:`knnx.reporting.summaries.configuration_labels`: the algorithm and the
    parameters that vary), its per-fold values as dots (repeats, folds and pooled
    seeds; grey) and its mean ± one standard deviation (black). Returns the Figure
    (and saves it to ``out``)."""
    from knnx.reporting.summaries import configuration_labels

    frame = read_results(results) if not hasattr(results, "columns") else results
    frame = _metric_rows(frame, metric)
    frame = frame.assign(configuration=configuration_labels(frame))
    datasets = list(dict.fromkeys(frame["dataset"]))
    configs = list(dict.fromkeys(frame["configuration"]))
    if len(datasets) > MAX_PANELS:
        raise ResultsError(
            f"{len(datasets)} datasets: more than {MAX_PANELS} panels would be unreadable; "
            "knnx compare draws the comparison across datasets"
        )
    if len(configs) > MAX_CONFIGURATIONS:
        raise ResultsError(
            f"{len(configs)} configurations: more than {MAX_CONFIGURATIONS} rows would be unreadable; "
            "knnx table lists them"
        )
    if out is not None:
        _check_image_path(out)
    position = {c: i for i, c in enumerate(configs)}
    algorithm_of = dict(zip(frame["configuration"], frame["algorithm"], strict=True))
    palette = matplotlib.colormaps["tab10"].colors
    colour = {a: palette[i % len(palette)] for i, a in enumerate(dict.fromkeys(frame["algorithm"]))}
    ncols = min(len(datasets), 4)
    nrows = -(-len(datasets) // ncols)
    longest = max(len(c) for c in configs)
    with plain_text():
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
            for j, config in enumerate(stats.index):  # one colour per algorithm
                ax.errorbar(
                    stats["mean"].iloc[j],
                    position[config],
                    xerr=std[j],
                    fmt="o",
                    ms=4,
                    color=colour[algorithm_of[config]],
                    capsize=2,
                    zorder=2,
                )
            ax.set_yticks(range(len(configs)), configs, fontsize=8)
            ax.set_ylim(len(configs) - 0.5, -0.5)
            ax.set_title(datasets[i], fontsize=10)
            ax.set_xlabel(f"{metric} (mean ± std; dots: single runs)", fontsize=8)
            ax.grid(axis="x", alpha=0.3)
        if out is not None:
            save_figure(fig, out, dpi=110)
    return fig


def figure_name(metric, x=None):
    """File name of an automatic figure: ``METRIC.png`` (the comparison) or
    ``METRIC-X.png`` (against parameter X); characters other than letters, digits and
    ``_.`` become ``_``."""
    import re

    def safe(text):
        return re.sub(r"[^A-Za-z0-9_.]", "_", text)

    return f"{safe(metric)}.png" if x is None else f"{safe(metric)}-{safe(x)}.png"


def figures(frame):
    """The automatic figures of a results frame, in order: per metric (and reported
    quantity) the comparison of every configuration (:func:`plot_comparison`) and, for
    each numeric parameter that varies (seed-like ones left out: they are pooled), the
    metric against it (:func:`plot_metric`).

    Yields ``(name, title, figure)``, the figure None and the title one line saying why
    where nothing can be drawn; ``name`` is the file name :func:`figure_name` gives."""
    if "round" in frame.columns:  # an active-learning run: its metrics round by round
        yield from active_figures(frame)
        return
    for metric in dict.fromkeys(frame["metric"]):
        rows = frame[frame["metric"] == metric]
        jobs = [None] + [x for x in varying_numeric_params(rows) if x not in SEED_PARAMS]
        for x in jobs:
            what = f"{metric} against {x}" if x is not None else f"{metric}, every configuration"
            try:
                fig = plot_comparison(rows, metric) if x is None else plot_metric(rows, metric, x=x)
            except ResultsError as exc:
                yield figure_name(metric, x), f"no figure of {what}: {str(exc).removeprefix('x: ')}", None
                continue
            yield figure_name(metric, x), what, fig


def active_summary(frame):
    """An active-learning run's rows (a ``round`` column, see knnx.spec.ActiveSpec) as mean,
    std and n of each metric per (dataset, algorithm, round, n_train), in row order."""
    keys = ["dataset", "algorithm", "round", "n_train", "metric"]
    summary = frame.groupby(keys, sort=False)["value"].agg(["mean", "std", "size"]).reset_index()
    return summary.rename(columns={"size": "n"})


def active_figures(frame):
    """The figures of an active-learning run: ``active.png``, the mean error on the pool
    against the training set size (the paper's Fig. 4), and ``active_k.png``, the mean
    chosen k (Fig. 5 right); one panel per dataset, one line per strategy. Yields
    ``(name, title, figure)`` as :func:`figures` does."""
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
        with plain_text():  # dataset names drawn as written
            fig = Figure(figsize=(4.5 * len(datasets), 3.6), layout="constrained")
            axes = fig.subplots(1, len(datasets), squeeze=False)[0]
            for ax, lab in zip(axes, datasets, strict=True):
                for algo, part in sub[sub["dataset"] == lab].groupby("algorithm", sort=False):
                    marker = "o" if algo == "lpo_qbc" else "+"
                    ax.plot(part["n_train"], part["mean"], marker=marker, ms=3, label=algo)
                ax.set_title(lab, fontsize=9)
                ax.set_xlabel("training set size")
                ax.set_ylabel(ylabel)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=7)
        yield name, f"{metric} (mean over repeats) against the training set size", fig


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
    """One automatic figure of a run: its file ``name`` (:func:`figure_name`), its
    ``title`` (one line; where it could not be drawn, the line saying why) and the
    ``path`` it was saved to (None where it could not be drawn)."""

    name: str
    title: str
    path: Path | None


def save_figures(frame, out):
    """:func:`figures` saved in the folder ``out`` (each atomically, PNG at 110 dpi,
    tagged :data:`FIGURE_TAG`). Returns the :class:`RunFigure` list, in drawing order."""
    drawn = []
    for name, title, fig in figures(frame):
        if fig is None:
            drawn.append(RunFigure(name, title, None))
            continue
        path = Path(out) / name
        save_figure(fig, path, dpi=110, metadata={"Software": FIGURE_TAG})
        fig.clear()
        drawn.append(RunFigure(name, title, path))
    return drawn


def write_figures(frame, out):
    """:func:`save_figures`, as ``(written, notes)``: the file names written, and one
    line for each figure that could not be drawn, saying why."""
    drawn = save_figures(frame, out)
    return [f.name for f in drawn if f.path is not None], [f.title for f in drawn if f.path is None]


def default_x(frame, metric="error"):
    """What ``knnx plot`` draws ``metric`` against by default: the first numeric parameter
    that varies (seed-like ones last), else the first parameter that varies, else None
    (every configuration side by side)."""
    rows = _metric_rows(frame, metric)
    varying = varying_params(rows)
    numeric = varying_numeric_params(rows)
    ordered = sorted(varying, key=lambda n: (n in SEED_PARAMS, n not in numeric))
    return ordered[0] if ordered else None


def plot(results, metric="error", x=None, out=None):
    """``knnx plot``: ``metric`` against parameter ``x`` (:func:`plot_metric`; default
    :func:`default_x`), or, with ``x="configuration"`` or when no parameter varies,
    every configuration side by side (:func:`plot_comparison`). Returns the Figure
    (saved to ``out`` if given)."""
    frame = read_results(results) if not hasattr(results, "columns") else results
    if x is None:
        x = default_x(frame, metric) or "configuration"
    if x == "configuration":
        return plot_comparison(frame, metric, out=out)
    return plot_metric(frame, metric, x=x, out=out)
