"""Critical-difference diagrams (Demšar 2006, JMLR 7, Fig. 1 and Fig. 2), drawn with
matplotlib alone (numpy and pandas for the ranks; no scikit-posthocs).

:func:`nemenyi_cliques` finds the groups of configurations that Nemenyi's test does not
tell apart; :func:`draw_cd_diagram` draws the diagram on a matplotlib Axes and returns
the :class:`CDDiagram` artist holding its parts; :func:`cd_figure` draws it on a Figure
of its own, sized to the number of configurations.

Layout (Demšar's Fig. 1): a horizontal rank axis from 1 to k at the top, integer ticks
(numbered; every 2nd, 5th, ... when the numbers would touch) and half ticks; above it
the critical difference as a bar from rank 1 to 1 + cd labelled ``CD = ...``. The better
half of the configurations (the ceil(k/2) lowest mean ranks) is labelled beyond rank
1's end of the axis, the others beyond rank k's end; each label, "name (mean rank to
2 decimals)", is joined to the configuration's mean rank on the axis by an elbow line
(down from the axis, then out to the label). On the better side the best is the top
row, on the other side the worst, so that no two elbows cross. Under the axis: the
clique bars (thick lines, each from its group's lowest to its highest mean rank),
stacked in rows so that no two touch; with a control (Demšar's Fig. 2, Bonferroni–Dunn)
one bar from R_c − cd to R_c + cd instead, clipped to [1, k], and the control's label
in bold.

Sizes are measured, not guessed: every time the figure is drawn, the diagram measures
its texts with the renderer and places them for the Axes' size then (so it follows
``tight_layout``, constrained layout, another dpi or a resized figure). Label rows are
1.3 text heights apart; when the Axes is too small for the texts at their size (9 pt
labels) the diagram scales all its fonts and lines down until they fit, and
:func:`draw_cd_diagram` first grows the figure so that, at the Axes' position when
called, they fit at full size. All the parts lie inside the Axes and are left out of
layout computations.
"""

import warnings

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from knnx.errors import ResultsError

# Points at full size; the diagram scales them all by one factor when space is short.
LABEL_SIZE = 9.0
TICK_SIZE = 8.0
TITLE_SIZE = 10.0
# Beyond this many configurations, colours repeat and the elbow lines change style.
N_COLOURS = 20
LINE_STYLES = ("-", "--", ":", "-.")
# Width of the page a figure of its own starts from (inches); wider when labels need it.
FIGURE_WIDTH = 7.0
# The most configurations a diagram (and a figure across datasets) shows: one label row
# each, so 300 make a figure of 44 x 28 inches (6,600 x 4,200 pixels at 150 dpi, drawn in
# 2.5 s); 2,000 would need 290 x 190 inches (5 GB of pixels) that no one could read.
# ``knnx compare`` writes its tables alone above it, and says so.
MAX_CONFIGURATIONS = 300


def palette():
    """The 20 colours of configurations, in the order they are given out (by rank):
    matplotlib's tab10, then the darkest and the second darkest shade of tab20b's five
    hues (the light shades of tab20 are too faint for text on white). Consecutive ones
    are of different hues."""
    tab20b = matplotlib.colormaps["tab20b"].colors
    return [*matplotlib.colormaps["tab10"].colors, *tab20b[0::4], *tab20b[1::4]]


def _sorted_ranks(mean_ranks):
    """``mean_ranks`` as a float Series sorted by mean rank, ties in their given order;
    ResultsError for names given twice, missing names or ranks that are not finite."""
    try:
        ranks = pd.Series(mean_ranks, dtype=float)
    except (TypeError, ValueError):
        raise ResultsError("mean ranks must be numbers, one per configuration", param="mean_ranks") from None
    if ranks.index.has_duplicates:
        twice = ranks.index[ranks.index.duplicated()][0]
        raise ResultsError(f"configuration {twice!r} is given twice", param="mean_ranks")
    if ranks.index.hasnans:
        raise ResultsError("a configuration has no name", param="mean_ranks")
    bad = ranks[~np.isfinite(ranks.to_numpy())]
    if len(bad):
        raise ResultsError(f"the mean rank of {bad.index[0]!r} is {bad.iloc[0]}", param="mean_ranks")
    return ranks.sort_values(kind="stable")


def _check_cd(cd):
    try:
        value = float(cd)
    except (TypeError, ValueError):
        raise ResultsError(f"{cd!r} is not a number", param="cd") from None
    if not np.isfinite(value) or value <= 0:
        raise ResultsError(f"{cd!r} is not a positive number", param="cd")
    return value


def nemenyi_cliques(mean_ranks, cd):
    """The groups of configurations that Nemenyi's test does not tell apart.

    Two configurations differ significantly when their mean ranks differ by at least
    the critical difference (Demšar 2006, Sect. 3.2.4); a difference *equal* to ``cd``
    is significant, only one strictly less than ``cd`` is not.

    Rule: sort the configurations by mean rank (ties keep the order of ``mean_ranks``).
    The run starting at configuration i holds i and every later one j with
    ``R_j - R_i < cd``. A run of one is not a group, and a run contained in an earlier
    run (same last member) is dropped; the rest, in order of their first member, are
    the groups. Each group's members are pairwise not significantly different, and the
    groups are maximal: no configuration can be added to one.

    Parameters
    ----------
    mean_ranks : pandas Series
        Mean rank of each configuration (index: names, unique).
    cd : float
        The critical difference (> 0).

    Returns
    -------
    list of lists of names
        The groups in rank order, each in rank order; [] when every pair differs.

    Examples
    --------
    >>> nemenyi_cliques(pd.Series({"a": 1.0, "b": 1.5, "c": 2.9, "d": 3.6}), 1.5)
    [['a', 'b'], ['b', 'c'], ['c', 'd']]
    """
    ranks = _sorted_ranks(mean_ranks)
    cd = _check_cd(cd)
    values = ranks.to_numpy()
    names = list(ranks.index)
    groups, last_end = [], 0
    for i, value in enumerate(values):
        # values are sorted, so R_j - R_i grows with j (also rounded): the run is a prefix
        end = i + int(np.count_nonzero(values[i:] - value < cd))
        if end - i >= 2 and end > last_end:
            groups.append(names[i:end])
        last_end = max(last_end, end)
    return groups


def _check_cliques(cliques, ranks):
    out = []
    for group in cliques:
        members = list(group)
        missing = [m for m in members if m not in ranks.index]
        if missing:
            raise ResultsError(f"{missing[0]!r} is not one of the configurations", param="cliques")
        if len(set(members)) < 2:
            raise ResultsError(f"group {members!r} has fewer than two configurations", param="cliques")
        out.append(members)
    return out


class CDDiagram(Artist):
    """A critical-difference diagram on an Axes: the artist that lays out its parts
    each time the figure is drawn, and holds them (made by :func:`draw_cd_diagram`).

    Coordinates of every part: x is the rank (the axis runs from 1 to k; the x limits
    leave room for the labels), y is in points down from the top of the diagram.

    Attributes
    ----------
    ranks : pandas Series
        Mean ranks, sorted (ties in their given order).
    cd : float
    cliques : list of lists of names, or None (with a control)
    control : name or None
    better, worse : lists of names
        The configurations labelled beyond rank 1's end (the better half,
        ceil(k/2) of them) and beyond rank k's end, each top row first.
    labels, elbows : dict name -> Text, name -> Line2D
        Each elbow's first point is (mean rank, axis' y); its last, at the label.
    axis_line, cd_bar : Line2D
        The rank axis from 1 to k; the critical difference from 1 to 1 + cd.
    cd_text, title_text : Text (title_text None without a title)
    tick_texts : list of Text
        Numbers 1..k (only some visible when they would touch).
    clique_bars : list of (group, Line2D)
        From the group's lowest to its highest mean rank.
    control_bar : Line2D or None
        [R_c - cd, R_c + cd] clipped to [1, k].
    scale : float
        Factor applied to the full-size fonts and lines at the last layout (1: full size).
    """

    def __init__(self, ax, ranks, cd, cliques, control, lower_rank_is_left, title):
        super().__init__()
        self.ranks, self.cd, self.cliques, self.control = ranks, cd, cliques, control
        self.lower_rank_is_left = lower_rank_is_left
        self.scale = 1.0
        self._size = {}  # full-size font size of each text
        self._width = {}  # full-size line width of each line
        k = len(ranks)
        names = list(ranks.index)
        n_better = -(-k // 2)
        self.better = names[:n_better]
        self.worse = names[n_better:][::-1]
        colours = palette()
        self.labels, self.elbows = {}, {}
        for i, (name, rank) in enumerate(ranks.items()):
            colour = colours[i % N_COLOURS]
            weight = "bold" if control is not None and name == control else "normal"
            self.labels[name] = self._text(
                ax, f"{name} ({rank:.2f})", LABEL_SIZE, color=colour, weight=weight
            )
            style = LINE_STYLES[(i // N_COLOURS) % len(LINE_STYLES)]
            self.elbows[name] = self._line(ax, 1.0, color=colour, linestyle=style, solid_joinstyle="miter")
        self.axis_line = self._line(ax, 1.0, color="black")
        self._ticks = self._line(ax, 1.0, color="black")
        self._half_ticks = self._line(ax, 0.8, color="black")
        self.tick_texts = [
            self._text(ax, str(r), TICK_SIZE, ha="center", va="bottom") for r in range(1, k + 1)
        ]
        self.cd_bar = self._line(ax, 1.5, color="black", solid_capstyle="butt")
        self._cd_ends = self._line(ax, 1.0, color="black")
        self.cd_text = self._text(ax, f"CD = {cd:.2f}", TICK_SIZE, ha="center", va="bottom")
        self.title_text = (
            None if title is None else self._text(ax, str(title), TITLE_SIZE, ha="center", va="top")
        )
        self.clique_bars = []
        for group in cliques or []:
            self.clique_bars.append((group, self._line(ax, 3.0, color="black", solid_capstyle="round")))
        self.control_bar = self._control_mark = None
        if control is not None:
            self.control_bar = self._line(ax, 3.0, color="black", solid_capstyle="butt")
            self._control_mark = self._line(ax, 1.5, color="black")
        ax.set_axis_off()
        ax.set_autoscale_on(False)
        self.set_in_layout(False)
        # drawn before the other artists of the Axes: it places them
        self.set_zorder(-1e9)

    def _text(self, ax, text, size, **kwargs):
        # parse_math=False: names such as "$x^$" are drawn as written (figures.plain_text,
        # stored in the Text so that it holds when the figure is drawn later)
        t = ax.text(0.0, 0.0, text, fontsize=size, parse_math=False, usetex=False, clip_on=False, **kwargs)
        t.set_in_layout(False)
        self._size[t] = size
        return t

    def _line(self, ax, width, **kwargs):
        line = Line2D([], [], linewidth=width, clip_on=False, **kwargs)
        line.set_in_layout(False)
        ax.add_line(line)
        self._width[line] = width
        return line

    def _set_scale(self, scale):
        self.scale = scale
        for t, size in self._size.items():
            if t.get_fontsize() != size * scale:
                t.set_fontsize(size * scale)
        for line, width in self._width.items():
            if line.get_linewidth() != width * scale:
                line.set_linewidth(width * scale)

    def _available(self):
        """(width, height) of the Axes in points."""
        per_point = self.axes.get_figure(root=True).dpi / 72
        return self.axes.bbox.width / per_point, self.axes.bbox.height / per_point

    def _plan(self, scale, width, renderer):
        """Sizes and positions (points) at font ``scale`` for an Axes ``width`` points wide."""
        self._set_scale(scale)
        per_point = self.axes.get_figure(root=True).dpi / 72

        def size(t):
            with warnings.catch_warnings():  # a glyph the font lacks is measured (and drawn) as a box
                warnings.filterwarnings(
                    "ignore", message=r"Glyph \d+ .*missing from font", category=UserWarning
                )
                box = t.get_window_extent(renderer)
            return box.width / per_point, box.height / per_point

        k = len(self.ranks)
        f = LABEL_SIZE * scale
        p = {"f": f, "pad": 0.5 * f, "gap": 1.2 * f, "text_gap": 0.3 * f, "tick": 0.45 * f}
        label = {name: size(t) for name, t in self.labels.items()}
        h_label = max(h for _, h in label.values())
        for t in self.tick_texts:
            t.set_visible(True)
        numbers = [size(t) for t in self.tick_texts]
        w_num, h_num = max(w for w, _ in numbers), max(h for _, h in numbers)
        w_cd, h_cd = size(self.cd_text)
        w_title, h_title = size(self.title_text) if self.title_text is not None else (0.0, 0.0)
        # horizontal: margin beyond rank 1 (near) and beyond rank k (far), in points
        outer = p["pad"] + p["text_gap"] + p["gap"]
        near = max(outer + max(label[n][0] for n in self.better), p["pad"] + w_cd / 2)
        far = outer + max(label[n][0] for n in self.worse)
        axis_min = max(8.0 * f, (k - 1) * f)
        p["width_need"] = max(
            near + far + axis_min,
            near + self.cd * axis_min / (k - 1) + p["pad"],  # the CD bar may pass rank k
            w_title + 2 * p["pad"],
        )
        # points per rank: the axis fills the width between the labels (and the CD bar fits)
        u = min((width - near - far) / (k - 1), (width - near - p["pad"]) / self.cd)
        u = max(u, 1e-3 * axis_min / (k - 1))
        p.update(u=u, near=near, far=far)
        # numbered ticks every 1, 2, 5, 10, 20, ... ranks: the first step whose numbers do not touch
        steps = (m * 10**e for e in range(6) for m in (1, 2, 5))
        p["step"] = next(s for s in steps if s * u >= w_num + 0.5 * f or s >= k)
        # bars under the axis: each clique in the first row where it clears the others
        rows, ends = [], []
        for group, _ in self.clique_bars:
            lo, hi = self.ranks.loc[group].min(), self.ranks.loc[group].max()
            row = next((r for r, end in enumerate(ends) if end + 0.8 * f / u <= lo), len(ends))
            if row == len(ends):
                ends.append(hi)
            ends[row] = hi
            rows.append(row)
        n_bar_rows = len(ends) if self.control is None else 1
        # vertical, top down
        y = p["pad"]
        p["title_y"] = y
        if self.title_text is not None:
            y += h_title + 0.5 * f
        p["cd_text_y"] = y + h_cd
        p["cd_y"] = p["cd_text_y"] + 0.15 * f + 0.25 * f
        p["number_y"] = p["cd_y"] + 0.25 * f + 0.5 * f + h_num
        p["axis_y"] = p["number_y"] + 0.15 * f + p["tick"]
        p["bar_y"] = [p["axis_y"] + 0.9 * f + r * 0.75 * f for r in range(n_bar_rows)]
        p["bar_rows"] = rows
        y = (p["bar_y"][-1] if n_bar_rows else p["axis_y"]) + 0.9 * f
        n_rows = max(len(self.better), len(self.worse))
        p["row_y"] = [y + h_label / 2 + i * 1.3 * h_label for i in range(n_rows)]
        p["height_need"] = p["row_y"][-1] + h_label / 2 + p["pad"]
        return p

    def _fit(self, renderer):
        """The plan for the Axes' size now, at the largest scale (≤ 1) whose texts fit."""
        width, height = self._available()
        scale = 1.0
        for _ in range(5):
            p = self._plan(scale, width, renderer)
            fit = min(width / p["width_need"], height / p["height_need"])
            if fit >= 1:
                break
            scale *= 0.98 * fit
        return p

    def _apply(self, p):
        ranks, k, u, f = self.ranks, len(self.ranks), p["u"], p["f"]
        width, height = self._available()
        ax = self.axes
        low = 1 - p["near"] / u
        ax.set_xlim(*((low, low + width / u) if self.lower_rank_is_left else (low + width / u, low)))
        top = -max(0.0, (height - p["height_need"]) / 2)  # centred vertically
        ax.set_ylim(top + height, top)
        axis_y, end_gap, text_gap = p["axis_y"], p["gap"] / u, (p["gap"] + p["text_gap"]) / u
        for side, edge, outward in ((self.better, 1.0, -1.0), (self.worse, float(k), 1.0)):
            # text aligned on the side facing the axis
            ha = "right" if (outward < 0) == self.lower_rank_is_left else "left"
            for name, y in zip(side, p["row_y"], strict=False):
                r = ranks.loc[name]
                self.elbows[name].set_data([r, r, edge + outward * end_gap], [axis_y, y, y])
                self.labels[name].set_position((edge + outward * text_gap, y))
                self.labels[name].set_horizontalalignment(ha)
        self.axis_line.set_data([1.0, float(k)], [axis_y, axis_y])
        xs = np.arange(1, k + 1, dtype=float)
        self._ticks.set_data(_segments(xs, axis_y, axis_y - p["tick"]))
        self._half_ticks.set_data(_segments(xs[:-1] + 0.5, axis_y, axis_y - 0.55 * p["tick"]))
        for r, t in enumerate(self.tick_texts, start=1):
            t.set_position((float(r), p["number_y"]))
            t.set_visible((r - 1) % p["step"] == 0)
        self.cd_bar.set_data([1.0, 1.0 + self.cd], [p["cd_y"], p["cd_y"]])
        ends = np.array([1.0, 1.0 + self.cd])
        self._cd_ends.set_data(_segments(ends, p["cd_y"] - 0.25 * f, p["cd_y"] + 0.25 * f))
        self.cd_text.set_position((1.0 + self.cd / 2, p["cd_text_y"]))
        if self.title_text is not None:
            self.title_text.set_position((low + width / u / 2, p["title_y"]))
        for (group, line), row in zip(self.clique_bars, p["bar_rows"], strict=True):
            y = p["bar_y"][row]
            line.set_data([ranks.loc[group].min(), ranks.loc[group].max()], [y, y])
        if self.control is not None:
            y, rc = p["bar_y"][0], ranks.loc[self.control]
            self.control_bar.set_data([max(1.0, rc - self.cd), min(float(k), rc + self.cd)], [y, y])
            self._control_mark.set_data([rc, rc], [y - 0.4 * f, y + 0.4 * f])

    def layout(self, renderer=None):
        """Place every part for the Axes' size now (done again at each draw)."""
        self._apply(self._fit(renderer))

    def needed_size(self, renderer=None):
        """(width, height) in points the Axes needs for full-size texts: the width, and
        the height at that width or at the Axes' width when wider."""
        width = self._available()[0]
        p = self._plan(1.0, width, renderer)
        if p["width_need"] > width:
            p = self._plan(1.0, p["width_need"], renderer)
        return p["width_need"], p["height_need"]

    def draw(self, renderer):
        if self.get_visible() and self.axes is not None:
            self.layout(renderer)
        self.stale = False


def _segments(xs, y0, y1):
    """Vertical segments at ``xs`` from y0 to y1, as one line broken by NaN."""
    x = np.repeat(xs, 3)
    y = np.tile([y0, y1, np.nan], len(xs))
    x[2::3] = np.nan
    return x, y


def draw_cd_diagram(ax, mean_ranks, cd, *, cliques=None, control=None, lower_rank_is_left=True, title=None):
    """Draw the critical-difference diagram of ``mean_ranks`` on the matplotlib Axes ``ax``.

    Demšar's Fig. 1 (all pairs, Nemenyi) or, with ``control``, Fig. 2 (against one,
    Bonferroni–Dunn); the layout is described in the module docstring. Each
    configuration's elbow line and label share a colour, distinct for up to 20
    configurations (:func:`palette`, given out in rank order); beyond 20 colours repeat
    and the elbow lines are dashed, dotted, ... by turns of 20; more than
    :data:`MAX_CONFIGURATIONS` are refused (ResultsError). The Axes' own axis is turned
    off.

    When the Axes is too small for the texts at full size, the figure is made larger
    (by the shortfall over the Axes' share of the figure); each draw then lays the
    diagram out for the Axes' size at that time, scaling fonts down if needed.

    Parameters
    ----------
    ax : matplotlib Axes
    mean_ranks : pandas Series
        Mean rank of each configuration (index: names, unique; ranks in [1, k]).
    cd : float
        The critical difference (> 0).
    cliques : list of lists of names, optional
        Groups joined by bars; default: :func:`nemenyi_cliques` of ``mean_ranks`` and
        ``cd``. Not with ``control``.
    control : name, optional
        The configuration the others are compared with: no cliques; one bar over
        [R_c - cd, R_c + cd] clipped to [1, k], outside which a configuration differs
        significantly from the control; its label in bold.
    lower_rank_is_left : bool
        Rank 1 at the left end of the axis (the better half labelled on the left);
        False mirrors the diagram.
    title : str, optional
        Drawn above the diagram, inside the Axes.

    Returns
    -------
    CDDiagram
        The artist holding the diagram's parts.
    """
    ranks = _sorted_ranks(mean_ranks)
    cd = _check_cd(cd)
    k = len(ranks)
    if k < 2:
        raise ResultsError(f"{k} configuration(s): a diagram needs two or more", param="mean_ranks")
    if k > MAX_CONFIGURATIONS:
        raise ResultsError(
            f"{k:,} configurations: a diagram shows at most {MAX_CONFIGURATIONS} (one label row each)",
            param="mean_ranks",
        )
    outside = ranks[(ranks < 1 - 1e-9) | (ranks > k + 1e-9)]
    if len(outside):
        raise ResultsError(
            f"the mean rank of {outside.index[0]!r} is {outside.iloc[0]:g}, outside [1, {k}]",
            param="mean_ranks",
        )
    if control is not None:
        if cliques is not None:
            raise ResultsError("give cliques or a control, not both", param="cliques")
        if control not in ranks.index:
            raise ResultsError(f"{control!r} is not one of the configurations", param="control")
        groups = None
    else:
        groups = nemenyi_cliques(ranks, cd) if cliques is None else _check_cliques(cliques, ranks)
    diagram = CDDiagram(ax, ranks, cd, groups, control, lower_rank_is_left, title)
    ax.add_artist(diagram)
    _grow_figure(diagram)
    diagram.layout()
    return diagram


def _grow_figure(diagram):
    """Make the figure larger when the diagram's Axes is smaller than the diagram needs at
    full size: by the shortfall, divided by the Axes' share of the figure."""
    fig = diagram.axes.get_figure(root=True)
    slack = 0.5  # points: rounding of sizes must not make a fitted diagram shrink
    for _ in range(2):  # the height needed depends on the width
        need_w, need_h = diagram.needed_size()
        width, height = diagram._available()
        if need_w + slack <= width and need_h + slack <= height:
            return
        share_w = diagram.axes.bbox.width / fig.bbox.width
        share_h = diagram.axes.bbox.height / fig.bbox.height
        fig_w, fig_h = fig.get_size_inches()
        fig.set_size_inches(
            fig_w + max(0.0, need_w + slack - width) / 72 / share_w,
            fig_h + max(0.0, need_h + slack - height) / 72 / share_h,
        )


def cd_figure(mean_ranks, cd, *, cliques=None, control=None, title=None):
    """The critical-difference diagram (:func:`draw_cd_diagram`) on a Figure of its own:
    7 inches wide (wider when the labels need it), as tall as the diagram needs (growing
    with the number of configurations), its one Axes filling it (the diagram keeps its
    own margins: the layout is tight). Returns the Figure."""
    fig = Figure(figsize=(FIGURE_WIDTH, 0.1))  # grown to the height the diagram needs
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    draw_cd_diagram(ax, mean_ranks, cd, cliques=cliques, control=control, title=title)
    return fig
