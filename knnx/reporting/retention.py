"""Accuracy against reduction: each contestant's error (or the run's first metric)
against the share of the training rows it keeps, the figure of prototype-reduction
studies (García et al. 2012).

A contestant's retention in a cell is its ``retained`` row (a selection or sampler
before its classifier: the rows it was fitted on over the training rows), else its
``prototype_fraction`` (UNN, GNNB, random sampling: the share of training rows kept as
prototypes), else 1 (it fits on every training row). Per dataset, a contestant's point
is its mean over the folds (seeds pooled within a fold first), its bars ± one standard
deviation over the folds on both axes (cut at 0, and at 1 for a metric in [0, 1]).
The Pareto front is the contestants no other contestant matches or beats on both
(lower retention, better metric; equal on both counts as matching), joined in order
of retention.

:func:`retention_table` gives the numbers; :func:`retention_plans` the figures, one
panel per dataset (``<metric>-retention.png``) and one over the datasets
(``<metric>-retention-suite.png``: each contestant's mean over the datasets it has on
every dataset, its bars the mean over datasets of its standard deviations over the
folds), drawn by :mod:`knnx.reporting.figures` with the run's other figures.
"""

from dataclasses import dataclass

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS
from knnx.reporting.panels import plain_text
from knnx.stats.configurations import configuration_labels
from knnx.stats.retention import has_retention, row_retention

# Metrics whose values lie in [0, 1] (their bars are cut at 1 too).
_UNIT = {"error", "accuracy", "balanced_accuracy", "f1", "auc", "g_mean"}


def reduction_metric(frame):
    """The metric drawn against retention: ``error`` if the results have it, else their
    first metric of knnx; None when they have no retention rows or no such metric."""
    if not has_retention(frame):
        return None
    present = list(dict.fromkeys(frame["metric"]))
    metrics = [m for m in present if m in METRICS]
    return "error" if "error" in metrics else (metrics[0] if metrics else None)


def retention_table(frame, metric):
    """Per (dataset, configuration), in order of appearance: ``x``/``x_std`` (retention:
    mean and standard deviation over the folds), ``y``/``y_std`` (``metric``), ``folds``
    and ``pareto`` (on the dataset's Pareto front)."""
    rows = frame[frame["metric"] == metric]
    rows = rows.assign(configuration=configuration_labels(rows))
    rows = rows.assign(x=row_retention(frame, rows), y=rows["value"].to_numpy(dtype=np.float64))
    per_fold = rows.groupby(["dataset", "configuration", "repeat", "fold"], sort=False)[["x", "y"]].mean()
    table = per_fold.groupby(level=["dataset", "configuration"], sort=False).agg(["mean", "std", "size"])
    out = pd.DataFrame(
        {
            "x": table[("x", "mean")],
            "x_std": table[("x", "std")].fillna(0.0),
            "y": table[("y", "mean")],
            "y_std": table[("y", "std")].fillna(0.0),
            "folds": table[("x", "size")].astype(np.int64),
        }
    ).reset_index()
    lower = LOWER_IS_BETTER.get(metric, False)
    out["pareto"] = np.concatenate(
        [
            pareto_front(part["x"].to_numpy(), part["y"].to_numpy(), lower)
            for _, part in out.groupby("dataset", sort=False)
        ]
    )
    order = {d: i for i, d in enumerate(dict.fromkeys(out["dataset"]))}
    return out.sort_values("dataset", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def pareto_front(x, y, lower):
    """Whether each point (``x`` lower is better; ``y`` lower is better when ``lower``)
    is on the Pareto front: no other point as good on both and better on one."""
    y = y if lower else -y
    front = np.ones(len(x), dtype=bool)
    for i in range(len(x)):
        as_good = (x <= x[i]) & (y <= y[i])
        better = (x < x[i]) | (y < y[i])
        front[i] = not (as_good & better).any()
    return front


def suite_table(table, metric):
    """One row per configuration present on every dataset: its means over the datasets
    of ``x`` and ``y``, of ``x_std`` and ``y_std``, and ``pareto`` among them."""
    n_datasets = table["dataset"].nunique()
    complete = table.groupby("configuration", sort=False)["dataset"].transform("nunique") == n_datasets
    suite = (
        table[complete]
        .groupby("configuration", sort=False)[["x", "x_std", "y", "y_std"]]
        .mean()
        .reset_index()
        .assign(dataset=f"mean over {n_datasets} datasets")
    )
    suite["pareto"] = pareto_front(
        suite["x"].to_numpy(), suite["y"].to_numpy(), LOWER_IS_BETTER.get(metric, False)
    )
    return suite


def retention_plans(frame):
    """``[(file name, title, plan)]`` of the retention figures of a results frame (none
    without retention rows): per dataset, and over the datasets when there are two or
    more."""
    metric = reduction_metric(frame)
    if metric is None:
        return []
    table = retention_table(frame, metric)
    configs = list(dict.fromkeys(table["configuration"]))
    plans = [
        (
            f"{metric}-retention.png",
            f"{metric} against retention (the share of training rows kept), Pareto front circled and dashed",
            RetentionPlan(table, metric, configs, list(dict.fromkeys(table["dataset"]))),
        )
    ]
    if table["dataset"].nunique() >= 2:
        suite = suite_table(table, metric)
        if len(suite):
            plans.append(
                (
                    f"{metric}-retention-suite.png",
                    f"{metric} against retention, means over the datasets, Pareto front circled and dashed",
                    RetentionPlan(suite, metric, configs, list(dict.fromkeys(suite["dataset"]))),
                )
            )
    return plans


@dataclass(frozen=True)
class RetentionPlan:
    """One retention figure: ``table`` (rows of :func:`retention_table`), the metric,
    every configuration (its colour and marker, the same on every page) and the panels
    (datasets, or the one suite panel)."""

    table: pd.DataFrame
    metric: str
    configs: list
    panels: list

    def dataset_of(self, panel):
        return panel

    def draw(self, datasets):
        palette = matplotlib.colormaps["tab10"].colors
        markers = "osD^vP*Xph"
        style = {c: (palette[i % 10], markers[(i // 10) % len(markers)]) for i, c in enumerate(self.configs)}
        ncols = min(len(datasets), 3)
        nrows = -(-len(datasets) // ncols)
        present = [c for c in self.configs if c in set(self.table["configuration"])]
        legend_cols = -(-(len(present) + 1) // 16)  # at most 16 entries a column
        height = max(3.5 * nrows, 0.21 * min(len(present) + 1, 16) + 0.8)
        with plain_text():  # dataset and configuration names drawn as written
            fig = Figure(figsize=(4.2 * ncols + 2.6 * legend_cols, height), layout="constrained")
            axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
            for ax in axes[len(datasets) :]:
                ax.set_visible(False)
            for ax, dataset in zip(axes, datasets, strict=False):
                self._panel(ax, self.table[self.table["dataset"] == dataset], style)
                ax.set_title(dataset, fontsize=9)
            handles = [
                matplotlib.lines.Line2D([], [], color=style[c][0], marker=style[c][1], ls="", label=c)
                for c in present
            ]
            handles.append(
                matplotlib.lines.Line2D(
                    [], [], color="0.4", ls="--", marker="o", ms=9, mfc="none", label="Pareto front"
                )
            )
            fig.legend(handles=handles, loc="outside right upper", fontsize=7, ncols=legend_cols)
        return fig

    def _panel(self, ax, part, style):
        top = 1.0 if self.metric in _UNIT else np.inf
        for row in part.itertuples(index=False):
            colour, marker = style[row.configuration]
            xerr = [[row.x - max(0.0, row.x - row.x_std)], [row.x_std]]
            yerr = [[row.y - max(0.0, row.y - row.y_std)], [min(top, row.y + row.y_std) - row.y]]
            ax.errorbar(row.x, row.y, xerr=xerr, yerr=yerr, fmt=marker, color=colour, ms=5, capsize=2, lw=0.8)
        front = part[part["pareto"]].sort_values(["x", "y"])
        ax.plot(front["x"], front["y"], ls="--", color="0.4", lw=1, zorder=0)
        ax.scatter(front["x"], front["y"], s=110, facecolors="none", edgecolors="0.4", lw=1, zorder=3)
        ax.set_xlabel("retained (share of training rows)")
        ax.set_ylabel(self.metric)
        ax.set_xlim(0, max(1.05, float(part["x"].max()) + 0.05))
        ax.grid(alpha=0.3)
