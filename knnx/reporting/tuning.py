"""What ``tune:`` chose, by value: the rows ``chosen_<name>`` of a results frame read
back as the values of the spec's grids, counted per value, drawn as counts per value,
and the choices that sit at an edge of their grid.

* A choice is a row of metric ``chosen_<name>`` whose params give ``<name>`` a list
  (the grid searched; :func:`tune_choice_mask`). A grid of numbers records the number
  chosen; any other grid (text, booleans, ``None``, numbers mixed with them) the
  position in the spec's list, which :func:`choices` reads back as the value.
* :func:`edge_lines`: one sentence per (algorithm, parameter, edge) when more than a
  quarter of the folds chose the smallest or the largest value of a numeric grid of
  two values or more (its best may lie beyond the grid); the smallest of a grid of
  integers that starts at 0 or 1 (k, a depth: nothing lies below) is no edge. The run prints them after its
  summary and the report shows them beside the choices.
* :func:`choice_figure`: per (algorithm, parameter), one panel: a row per dataset (or
  one row for every dataset at once above :data:`MAX_ROWS` datasets), each value
  chosen a dot whose area is its count, the count written beside it; numbers on a value
  axis (logarithmic for a geometric grid), others in the grid's order. Never a mean ±
  std: a mean of choices is not a choice.
"""

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from knnx.params import value_key
from knnx.reporting.panels import is_geometric, plain_text
from knnx.reporting.parameters import parse_params

CHOSEN = "chosen_"
EDGE_SHARE = 0.25  # more than this share of the folds at an edge: said
MAX_ROWS = 40  # above, a panel pools the datasets into one row
MAX_PANELS = 12


def tune_choice_mask(frame):
    """Per row, whether it is a choice ``tune:`` made: metric ``chosen_<name>`` where the
    row's params give ``<name>`` a list (the grid searched). A ``chosen_`` row of a
    setting that searched no grid is a quantity its estimator reported (an estimator
    choosing k inside its fit), not a tuning choice."""
    mask = np.array(frame["metric"].str.startswith(CHOSEN), dtype=bool)
    if mask.any():
        rows = frame[mask]
        params = parse_params(rows["params"])
        mask[mask] = [
            isinstance(p.get(m.removeprefix(CHOSEN)), list)
            for p, m in zip(params, rows["metric"], strict=True)
        ]
    return mask


def _numbers(grid):
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in grid)


def _decoded(grid, recorded):
    """(value, numeric, edge) of a recorded choice on ``grid``: the grid's own value
    (its type kept: 21, not 21.0), whether the grid is numeric, and ``smallest`` /
    ``largest`` where a numeric grid of two values or more was chosen at that end."""
    if _numbers(grid):
        value = next((g for g in grid if g == recorded), recorded)
        low, high = min(grid), max(grid)
        edge = "" if low == high else "largest" if recorded == high else "smallest" if recorded == low else ""
        if edge == "smallest" and low <= 1 and all(isinstance(g, int) for g in grid):
            edge = ""  # a count (k, a depth) from 0 or 1: nothing lies below
        return value, True, edge
    i = int(recorded) if math.isfinite(recorded) and recorded == int(recorded) else -1
    return (grid[i] if 0 <= i < len(grid) else recorded), False, ""


def choices(frame):
    """The choices of ``frame`` (see the module docstring), one row each: algorithm,
    parameter, dataset, value (the grid's value), numeric, edge, the grid's position of
    the value (``order``) and the grid itself (a tuple: the axis of the figure)."""
    rows = frame[tune_choice_mask(frame)]
    columns = ["algorithm", "parameter", "dataset", "value", "numeric", "edge", "order", "grid"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    out = []
    params = parse_params(rows["params"])
    for p, alg, metric, d, recorded in zip(
        params,
        rows["algorithm"],
        rows["metric"],
        rows["dataset"],
        rows["value"].to_numpy(dtype=np.float64),
        strict=True,
    ):
        name = metric.removeprefix(CHOSEN)
        grid = p[name]
        value, numeric, edge = _decoded(grid, recorded)
        order = next((i for i, g in enumerate(grid) if _same(g, value)), len(grid))
        out.append((alg, name, d, value, numeric, edge, order, tuple(grid)))
    frame = pd.DataFrame(out, columns=columns)
    # the values as the grids hold them: None stays None beside numbers (pandas made it NaN)
    frame["value"] = pd.Series([row[3] for row in out], index=frame.index, dtype=object)
    return frame


def _same(a, b):
    return type(a) is type(b) and a == b or (_numbers([a, b]) and a == b)


def value_text(value):
    """A chosen value as the spec writes it: 21, 0.01, scale, null, true, and a list or
    a mapping (``metric_params: [{p: 1}, {p: 3}]``) as JSON: {"p": 1}."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value == int(value) and abs(value) < 1e15:
        return f"{value:g}"
    return str(value)


def counts_text(sub):
    """``value×count, ...`` of a set of choices, in the grid's order."""
    counted = sub.groupby("order", sort=True).agg(value=("value", "first"), n=("value", "size"))
    return ", ".join(f"{value_text(v)}×{n}" for v, n in zip(counted["value"], counted["n"], strict=True))


def edge_lines(frame, share=EDGE_SHARE):
    """One sentence per (algorithm, parameter, edge) chosen in more than ``share`` of the
    folds (pooled over the datasets): ``knn chose k = 21, the largest value of its grid,
    in 71 of 200 folds (36 %): the best may lie beyond; widen the grid``."""
    c = choices(frame)
    lines = []
    for (alg, name), sub in c.groupby(["algorithm", "parameter"], sort=False):
        for side in ("largest", "smallest"):
            at = sub[sub["edge"] == side]
            if len(at) > share * len(sub):
                shown = " or ".join(value_text(v) for v in dict.fromkeys(at["value"]))
                lines.append(
                    f"{alg} chose {name} = {shown}, the {side} value of its grid, in {len(at)} of {len(sub)} folds "
                    f"({100 * len(at) / len(sub):.0f} %): the best may lie beyond; widen the grid"
                )
    return lines


def choice_figures(frame):
    """``[(name, title, figure)]``: the figure of :func:`choice_figure`, on pages of
    :data:`MAX_PANELS` panels (``tuned-choices-1.png``, ...; ``tuned-choices.png`` on one
    page); none
    without choices."""
    c = choices(frame)
    if c.empty:
        return []
    keys = list(dict.fromkeys(zip(c["algorithm"], c["parameter"], strict=True)))
    pages = [keys[i : i + MAX_PANELS] for i in range(0, len(keys), MAX_PANELS)]
    out = []
    for i, page in enumerate(pages, 1):
        name = "tuned-choices.png" if len(pages) == 1 else f"tuned-choices-{i}.png"
        what = "tuned choices, counts per value" + (f", page {i} of {len(pages)}" if len(pages) > 1 else "")
        out.append((name, what, page))
    return [(name, what, _drawer(c, page)) for name, what, page in out]


def _drawer(c, keys):
    return lambda: choice_figure(c, keys)


def choice_figure(c, keys, title="chosen"):
    """The panels of ``keys`` ((algorithm, parameter) pairs) of the choices ``c``
    (or of any discrete values in that form: a diagnostic, ``title`` "reported")."""
    datasets = list(dict.fromkeys(c["dataset"]))
    pooled = len(datasets) > MAX_ROWS
    rows = ["every dataset"] if pooled else datasets
    height = 1.2 + 0.22 * len(rows)
    columns = min(len(keys), 3)
    lines = math.ceil(len(keys) / columns)
    with plain_text():
        fig = Figure(figsize=(4.2 * columns, height * lines), layout="constrained")
        for i, (alg, name) in enumerate(keys):
            ax = fig.add_subplot(lines, columns, i + 1)
            sub = c[(c["algorithm"] == alg) & (c["parameter"] == name)]
            _panel(ax, sub, rows, pooled, first=i % columns == 0)
            ax.set_title(f"{alg}: {name} {title} (folds per value)", fontsize=8)
    return fig


def _hashable(value):
    """``value`` as a key: itself, or its canonical JSON for a list or a mapping."""
    return value_key(value) if isinstance(value, list | dict) else value


def _spaced(ticks, log, most=8):
    """Whether a tick at each value leaves room for its label: at most ``most`` values,
    each at least a twentieth of the axis's span from the next."""
    if len(ticks) > most:
        return False
    at = np.log10(ticks) if log else np.asarray(ticks, dtype=np.float64)
    span = at.max() - at.min()
    return len(at) < 2 or span == 0 or bool(np.diff(at).min() >= span / 20)


def _panel(ax, sub, rows, pooled, first):
    """Dots of area ∝ count at (value, dataset), the counts written beside them."""
    numeric = bool(sub["numeric"].all())
    grid = list({_hashable(v): v for g in sub["grid"] for v in g}.values())  # every grid's values: the axis
    where = {r: j for j, r in enumerate(rows)}
    by = sub.assign(row=0 if pooled else sub["dataset"].map(where))
    counted = (
        by.groupby(["row", "order"], sort=True)
        .agg(value=("value", "first"), n=("value", "size"))
        .reset_index()
    )
    if numeric:
        xs = counted["value"].to_numpy(dtype=np.float64)
        ticks = sorted({float(v) for v in grid})
        if all(v > 0 for v in ticks) and len(ticks) > 2 and is_geometric(ticks):
            ax.set_xscale("log")
        if _spaced(ticks, ax.get_xscale() == "log"):  # else matplotlib's own ticks: labels never overlap
            ax.set_xticks(ticks, [value_text(next(g for g in grid if g == t)) for t in ticks])
        else:
            ax.set_xlim(min(ticks), max(ticks))
    else:
        position = {o: j for j, o in enumerate(sorted(sub["order"].unique()))}
        xs = counted["order"].map(position).to_numpy(dtype=np.float64)
        shown = sub.drop_duplicates("order").sort_values("order")["value"].tolist()
        ax.set_xticks(range(len(shown)), [value_text(v)[:12] for v in shown])
    values = grid
    ns = counted["n"].to_numpy(dtype=np.float64)
    ax.scatter(xs, counted["row"], s=12 + 60 * ns / ns.max(), color="C0", alpha=0.6, linewidths=0)
    for x, y, n in zip(xs, counted["row"], counted["n"], strict=True):
        ax.annotate(str(int(n)), (x, y), xytext=(4, 0), textcoords="offset points", fontsize=6, va="center")
    ax.set_yticks(range(len(rows)), rows if first else [""] * len(rows), fontsize=6)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.tick_params(axis="x", labelsize=6, rotation=45 if len(values) > 6 else 0)
    ax.grid(axis="x", alpha=0.3)
    ax.margins(x=0.1)  # room for the counts written right of the outermost dots


# A diagnostic with at most this many distinct values, all integers, is drawn as counts per value.
DISCRETE_VALUES = 6


def discrete(rows):
    """Whether ``rows``' values are at most :data:`DISCRETE_VALUES` integers (a flag, a
    small count): drawn as counts per value."""
    values = rows["value"].to_numpy(dtype=np.float64)
    finite = values[np.isfinite(values)]
    return (
        bool(finite.size)
        and bool(np.all(finite == np.round(finite)))
        and len(np.unique(finite)) <= DISCRETE_VALUES
    )


def counted_values(rows, metric):
    """The values of a discrete diagnostic ``metric`` (its ``rows``) in the form of
    :func:`choices`, each value its own position."""
    values = rows["value"].to_numpy(dtype=np.float64)
    distinct = sorted(set(values[np.isfinite(values)].tolist()))
    c = pd.DataFrame(
        {
            "algorithm": rows["algorithm"].to_numpy(),
            "parameter": metric,
            "dataset": rows["dataset"].to_numpy(),
            "value": [int(v) if np.isfinite(v) else v for v in values],
            "numeric": True,
            "edge": "",
            "order": [distinct.index(v) if np.isfinite(v) else len(distinct) for v in values],
            "grid": [tuple(int(v) for v in distinct)] * len(values),
        }
    )
    return c[np.isfinite(values)]


@dataclass(frozen=True)
class CountsPlan:
    """What ``knnx plot`` draws of what ``tune:`` chose (``title`` "chosen") or of a
    discrete diagnostic ("reported"): counts per value, as the run draws them, never a
    mean ± std; a panel per (algorithm, parameter)."""

    counts: pd.DataFrame
    panels: list
    title: str

    def draw(self, panels):
        return choice_figure(self.counts, panels, self.title)


def counts_plan(frame, metric, is_score):
    """The :class:`CountsPlan` of ``metric`` in ``frame`` when the run draws it as counts
    per value (``chosen_<name>`` rows of tuned grids; a diagnostic, not ``is_score``,
    of :func:`discrete` values), else None."""
    rows = frame[frame["metric"] == metric]
    if rows.empty:
        return None
    tuned = tune_choice_mask(rows)
    if tuned.all():
        c, title = choices(rows), "chosen"
    elif not is_score and not tuned.any() and discrete(rows):
        c, title = counted_values(rows, metric), "reported"
    else:
        return None
    return CountsPlan(c, list(dict.fromkeys(zip(c["algorithm"], c["parameter"], strict=True))), title)
