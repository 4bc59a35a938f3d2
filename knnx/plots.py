"""Plots built from result files only (matplotlib's object API, no pyplot state).

``plot_metric`` draws, per dataset, the mean of a metric over repeats and folds
against one numeric parameter (e.g. ``k``), one line per algorithm and setting of
the other parameters, with ± one standard deviation as error bars. Settings with a
single value of that parameter are left out when others vary along it.
"""

import json
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from knnx._text import describe_control, escape_control, find_control
from knnx.errors import ResultsError
from knnx.results import read_results, save_figure


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


def varying_numeric_params(frame):
    """Names of numeric parameters that take more than one value in ``frame``."""
    values = {}
    for params in parse_params(frame["params"].drop_duplicates()):
        for key, value in params.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                values.setdefault(key, set()).add(value)
    return [key for key, vals in values.items() if len(vals) > 1]


def plot_metric(results, metric="error", x=None, out=None):
    """Plot ``metric`` against parameter ``x``; return the Figure (and save it to ``out``).

    Parameters
    ----------
    results : path or DataFrame
        A results.csv file (or its frame).
    metric : str
    x : str, optional
        Numeric parameter for the horizontal axis; default: the first one that varies.
    out : path, optional
        Where to write the image (format from the suffix, e.g. .png or .pdf).
    """
    frame = read_results(results) if not hasattr(results, "columns") else results
    if metric not in set(frame["metric"]):
        raise ResultsError(
            f"--metric: no rows for metric '{metric}'; present: {', '.join(sorted(set(frame['metric'])))}"
        )
    frame = frame[frame["metric"] == metric]
    candidates = varying_numeric_params(frame)
    if x is None:
        if not candidates:
            raise ResultsError("--x: no numeric parameter varies in these results; nothing to plot against")
        x = candidates[0]
    parsed = parse_params(frame["params"])
    if not any(x in p for p in parsed):
        raise ResultsError(
            f"--x: no parameter '{x}' in these results; numeric ones that vary: {', '.join(candidates) or 'none'}"
        )
    numeric = [not (x in p and (isinstance(p[x], bool) or not isinstance(p[x], int | float))) for p in parsed]
    if not any(x in p and ok for p, ok in zip(parsed, numeric, strict=True)):
        raise ResultsError(
            f"--x: parameter '{x}' is not numeric; numeric ones that vary: {', '.join(candidates) or 'none'}"
        )
    # rows whose x is not a number (a tuned cell's list of k) are left out of the figure
    frame = frame[np.asarray(numeric, dtype=bool)]
    parsed = [p for p, ok in zip(parsed, numeric, strict=True) if ok]
    for row, p in zip(frame.index, parsed, strict=True):
        try:
            if x in p:
                float(p[x])  # an integer beyond float64 (10^400) cannot be drawn
        except OverflowError:
            raise ResultsError(
                f"column 'params' line {row + 2}: {x} = {str(p[x])[:20]}... is too large to plot"
            ) from None
    if out is not None:
        folder = Path(out).parent
        if Path(out).is_dir():
            raise ResultsError(f"--out: {out} is a folder; give an image file name (e.g. error.png)")
        if find_control(str(out)) is not None:
            raise ResultsError(
                f"--out: {str(out)!r} holds a {describe_control(str(out))}; name the file without one"
            )
        if not folder.is_dir():
            raise ResultsError(f"--out: {out}: no folder {folder} to write it in")
        fmt = Path(out).suffix.lstrip(".").lower()
        supported = Figure().canvas.get_supported_filetypes()
        if fmt not in supported:
            raise ResultsError(
                f"--out: unsupported image format '.{fmt}'; use one of {', '.join('.' + f for f in sorted(supported))}"
            )
    # Line labels name the algorithm and only the parameters that vary among its rows
    # (a full parameter list can be wider than the figure).
    varying = {}
    for a, p in zip(frame["algorithm"], parsed, strict=True):
        for k, v in p.items():
            varying.setdefault(a, {}).setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    frame = frame.assign(
        _x=[float(p[x]) if x in p else np.nan for p in parsed],
        _line=[
            f"{a} " + ",".join(f"{k}={v}" for k, v in sorted(p.items()) if k != x and len(varying[a][k]) > 1)
            for a, p in zip(frame["algorithm"], parsed, strict=True)
        ],
    ).dropna(subset=["_x"])
    # A setting with a single x value is a dot, not a line: drop such settings when
    # others have a curve (e.g. UNN over theta beside kNN over k).
    n_x = frame.groupby(["dataset", "_line"])["_x"].transform("nunique")
    if (n_x > 1).any():
        frame = frame[n_x > 1]
    datasets = list(dict.fromkeys(frame["dataset"]))
    # The legend goes under each panel; the figure grows with the longest one, so that a
    # spec with many settings (e.g. 22 algorithms) keeps a readable plotting area.
    n_lines = int(frame.groupby("dataset")["_line"].nunique().max()) if len(frame) else 0
    with plain_text():  # dataset and parameter names drawn as written
        fig = Figure(figsize=(5.0 * len(datasets), 3.8 + 0.16 * n_lines), layout="constrained")
        axes = fig.subplots(1, len(datasets), squeeze=False)[0]
        for ax, name in zip(axes, datasets, strict=True):
            sub = frame[frame["dataset"] == name]
            for line, part in sub.groupby("_line", sort=False):
                stats = part.groupby("_x")["value"].agg(["mean", "std", "size"]).sort_index()
                std = stats["std"].where(stats["size"] > 1, 0.0).to_numpy(dtype=float)
                xs, means = stats.index.to_numpy(dtype=float), stats["mean"].to_numpy(dtype=float)
                ax.errorbar(xs, means, yerr=std, marker="o", ms=3, capsize=2, label=line.strip())
            ax.set_title(name)
            ax.set_xlabel(x)
            ax.set_ylabel(metric)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
        if out is not None:
            save_figure(fig, out, dpi=120)
    return fig
