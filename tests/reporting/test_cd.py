"""The critical-difference diagram drawn with matplotlib alone (knnx.reporting.cd):
Nemenyi's groups on hand examples and Demšar's, and the drawing's geometry measured on
the Agg canvas (no two labels overlap, all inside the figure, each on its side of the
axis; elbows, CD bar, clique and control bars at their ranks; distinct colours)."""

import io
import itertools

import numpy as np
import pandas as pd
import pytest
from conftest import RTOL
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from knnx.errors import ResultsError
from knnx.reporting.cd import CDDiagram, cd_figure, draw_cd_diagram, nemenyi_cliques


def _names(k):
    return [f"cmdw k={2 * i + 1}, weights={'distance' if i % 2 else 'uniform'}" for i in range(k)]


def _ranks(k):
    """k long-named configurations with mean ranks in [1, k] summing to k(k+1)/2 as real
    mean ranks do, and ties: the 2nd and 3rd, and the last two, share a rank."""
    values = np.linspace(1.3, k - 0.3, k) if k > 2 else np.array([1.25, 1.75])
    if k >= 5:
        values[1] = values[2] = (values[1] + values[2]) / 2
        values[-2] = values[-1] = (values[-2] + values[-1]) / 2
    order = np.random.default_rng(k).permutation(k)  # given out of rank order
    return pd.Series(values[order], index=[_names(k)[i] for i in order])


def _draw(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _diagram(ax):
    (diagram,) = [a for a in ax.artists if isinstance(a, CDDiagram)]
    return diagram


def _display_x(ax, rank, y):
    return ax.transData.transform((rank, y))[0]


def _texts(diagram):
    texts = [*diagram.labels.values(), *diagram.tick_texts, diagram.cd_text, diagram.title_text]
    return [t for t in texts if t is not None and t.get_visible()]


def _assert_readable(fig, diagram, renderer):
    """No two texts of the diagram overlap, each lies inside the figure, and the labels
    of the better half lie beyond rank 1's end of the axis, the others beyond rank k's."""
    ax, k = diagram.axes, len(diagram.ranks)
    boxes = {t: t.get_window_extent(renderer) for t in _texts(diagram)}
    for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
        assert not box_a.overlaps(box_b), (a.get_text(), b.get_text())
    for t, box in boxes.items():
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width, t.get_text()
        assert 0 <= box.y0 and box.y1 <= fig.bbox.height, t.get_text()
    y_axis = diagram.axis_line.get_ydata()[0]
    one, last = _display_x(ax, 1, y_axis), _display_x(ax, k, y_axis)
    left_end, right_end = min(one, last), max(one, last)
    better_side = left_end if diagram.lower_rank_is_left else right_end
    for name, t in diagram.labels.items():
        box = boxes[t]
        on_left = (name in diagram.better) == diagram.lower_rank_is_left
        if on_left:
            assert box.x1 < left_end, name
        else:
            assert box.x0 > right_end, name
    assert better_side == one


# --- nemenyi_cliques -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ranks", "cd", "expected"),
    [
        # c - a = 1.9, c - b = 1.4 < 1.5, d - b = 2.1, d - c = 0.7
        ({"a": 1.0, "b": 1.5, "c": 2.9, "d": 3.6}, 1.5, [["a", "b"], ["b", "c"], ["c", "d"]]),
        # a difference equal to cd is significant: no group
        ({"a": 1.0, "b": 2.5, "c": 4.0}, 1.5, []),
        ({"a": 1.0, "b": 2.5, "c": 4.0}, np.nextafter(1.5, 2.0), [["a", "b"], ["b", "c"]]),
        # ties: b and c share a rank; d - b = 1.5 = cd separates d
        ({"a": 1.0, "b": 2.0, "c": 2.0, "d": 3.5}, 1.0, [["b", "c"]]),
        ({"a": 1.0, "b": 2.0, "c": 2.0, "d": 3.5}, 1.5, [["a", "b", "c"]]),
        ({"a": 1.0, "b": 2.0, "c": 2.0, "d": 3.5}, 1.75, [["a", "b", "c"], ["b", "c", "d"]]),
        # tied configurations keep their given order
        ({"c": 2.0, "b": 2.0, "a": 1.0}, 0.5, [["c", "b"]]),
        # the runs starting at b and c are contained in a's: dropped
        ({"a": 1.0, "b": 1.2, "c": 1.4, "d": 3.0}, 1.0, [["a", "b", "c"]]),
        # given out of rank order; everything within cd: one group
        ({"c": 3.0, "a": 1.0, "b": 2.0}, 5.0, [["a", "b", "c"]]),
        ({"a": 1.0, "b": 3.0}, 1.0, []),
    ],
)
def test_nemenyi_cliques_by_hand(ranks, cd, expected):
    assert nemenyi_cliques(pd.Series(ranks), cd) == expected


def test_nemenyi_cliques_of_demsars_example():
    """Demšar (2006), Sect. 3.2.4: C4.5 and three variants over 14 data sets, mean
    ranks 3.143, 2.000, 2.893, 1.964 (the rank sums 44, 28, 40.5, 27.5 over 14); Nemenyi's
    CD = q_alpha sqrt(k(k+1)/(6N)) with q_0.05 = 2.569, q_0.10 = 2.291 (Table 5a, k = 4)."""
    ranks = pd.Series({"C4.5": 44 / 14, "C4.5+m": 28 / 14, "C4.5+cf": 40.5 / 14, "C4.5+m+cf": 27.5 / 14})
    scale = np.sqrt(4 * 5 / (6 * 14))
    # alpha 0.10, CD = 1.118: C4.5 differs from C4.5+m (1.143) and C4.5+m+cf (1.179), C4.5+cf
    # from none, so it belongs to both groups
    assert nemenyi_cliques(ranks, 2.291 * scale) == [["C4.5+m+cf", "C4.5+m", "C4.5+cf"], ["C4.5+cf", "C4.5"]]
    # alpha 0.05, CD = 1.254: no pair differs
    assert nemenyi_cliques(ranks, 2.569 * scale) == [["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]]


@pytest.mark.parametrize(
    ("ranks", "cd", "param"),
    [
        ({"a": 1.0, "b": 2.0}, 0.0, "cd"),
        ({"a": 1.0, "b": 2.0}, float("nan"), "cd"),
        ({"a": 1.0, "b": float("nan")}, 1.0, "mean_ranks"),
        (pd.Series([1.0, 2.0], index=["a", "a"]), 1.0, "mean_ranks"),
    ],
)
def test_nemenyi_cliques_refuses_bad_input(ranks, cd, param):
    with pytest.raises(ResultsError) as err:
        nemenyi_cliques(pd.Series(ranks), cd)
    assert err.value.param == param


# --- the drawing -----------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 5, 12, 20])
def test_no_two_labels_overlap_and_each_is_on_its_side(k):
    ranks = _ranks(k)
    fig = cd_figure(ranks, 0.6 * np.sqrt(k), title=f"error: mean ranks of {k} configurations")
    renderer = _draw(fig)
    diagram = _diagram(fig.axes[0])
    assert diagram.scale == 1.0  # the figure was made big enough for full-size texts
    assert [t.get_text() for t in diagram.labels.values()] == [
        f"{name} ({rank:.2f})" for name, rank in ranks.sort_values(kind="stable").items()
    ]
    _assert_readable(fig, diagram, renderer)


@pytest.mark.parametrize("k", [5, 12])
def test_the_mirrored_diagram_labels_the_better_half_on_the_right(k):
    fig = Figure(figsize=(7, 4), dpi=200)
    diagram = draw_cd_diagram(fig.subplots(), _ranks(k), 1.5, lower_rank_is_left=False)
    renderer = _draw(fig)
    _assert_readable(fig, diagram, renderer)
    ax = diagram.axes
    assert _display_x(ax, 1, 0) > _display_x(ax, k, 0)


def test_a_small_axes_in_a_constrained_figure_stays_readable():
    """Drawn on one panel of a constrained-layout figure: the figure grows so that the
    labels fit at full size, and the layout done at draw time follows the panel."""
    fig = Figure(figsize=(6, 2), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.plot([0, 1], [0, 1])
    diagram = draw_cd_diagram(right, _ranks(12), 2.0, title="twelve")
    assert fig.get_size_inches()[1] > 2  # grown for twelve labels
    renderer = _draw(fig)
    _assert_readable(fig, diagram, renderer)
    assert left.axison and not right.axison


def test_labels_are_stacked_so_that_no_elbows_cross():
    """Better side: the best on the top row; other side: the worst on top. Each elbow
    goes down from the axis to its row and out to its label."""
    ranks = _ranks(12)
    fig = cd_figure(ranks, 2.0)
    renderer = _draw(fig)
    diagram = _diagram(fig.axes[0])
    order = list(ranks.sort_values(kind="stable").index)
    assert diagram.better == order[:6] and diagram.worse == order[6:][::-1]
    for side in (diagram.better, diagram.worse):
        tops = [diagram.labels[n].get_window_extent(renderer).y0 for n in side]
        assert tops == sorted(tops, reverse=True)  # display y: down the page
        for name in side:
            label_y = diagram.labels[name].get_position()[1]
            assert np.asarray(diagram.elbows[name].get_ydata())[1:].tolist() == [label_y, label_y]


def test_colours_are_distinct_up_to_20_and_line_styles_beyond():
    fig = cd_figure(_ranks(20), 3.0)
    _draw(fig)
    diagram = _diagram(fig.axes[0])
    colours = [to_rgba(t.get_color()) for t in diagram.labels.values()]
    assert len(set(colours)) == 20
    for name, t in diagram.labels.items():
        assert to_rgba(diagram.elbows[name].get_color()) == to_rgba(t.get_color())
    fig = cd_figure(pd.Series(np.arange(1.0, 31.0), index=[f"c{i}" for i in range(30)]), 3.0)
    diagram = _diagram(fig.axes[0])
    styles = {(to_rgba(line.get_color()), line.get_linestyle()) for line in diagram.elbows.values()}
    assert len(styles) == 30


@pytest.mark.parametrize("lower_rank_is_left", [True, False])
def test_elbows_cd_bar_and_clique_bars_are_at_their_ranks(lower_rank_is_left):
    ranks = _ranks(12)
    cd = 2.3
    fig = Figure(figsize=(7, 5))
    diagram = draw_cd_diagram(fig.subplots(), ranks, cd, lower_rank_is_left=lower_rank_is_left)
    _draw(fig)
    k = len(ranks)
    y_axis = diagram.axis_line.get_ydata()[0]
    assert np.asarray(diagram.axis_line.get_xdata()).tolist() == [1.0, k]
    for name, line in diagram.elbows.items():
        x, y = line.get_xdata(), line.get_ydata()
        assert (x[0], y[0]) == (ranks[name], y_axis) and x[1] == ranks[name]
        assert x[2] < 1 if name in diagram.better else x[2] > k
    x = diagram.cd_bar.get_xdata()
    assert x[0] == 1 and x[1] - x[0] == pytest.approx(cd, rel=RTOL)
    groups = nemenyi_cliques(ranks, cd)
    assert groups and [g for g, _ in diagram.clique_bars] == groups
    for group, line in diagram.clique_bars:
        assert np.asarray(line.get_xdata()).tolist() == [ranks[group].min(), ranks[group].max()]
    # bars in one row leave a gap; in different rows, they are below the axis
    rows = {}
    for _, line in diagram.clique_bars:
        assert line.get_ydata()[0] > y_axis  # y is down the page
        rows.setdefault(line.get_ydata()[0], []).append(sorted(line.get_xdata()))
    assert len(rows) > 1
    for spans in rows.values():
        for (_, hi), (lo, _) in itertools.pairwise(sorted(spans)):
            assert hi < lo


def test_given_cliques_are_drawn_as_given():
    ranks = pd.Series({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    fig = cd_figure(ranks, 1.0, cliques=[["c", "a"], ["d", "b", "c"]])
    diagram = _diagram(fig.axes[0])
    assert [np.asarray(line.get_xdata()).tolist() for _, line in diagram.clique_bars] == [
        [1.0, 3.0],
        [2.0, 4.0],
    ]


@pytest.mark.parametrize(
    ("control_rank", "cd", "interval"),
    [(1.5, 2.0, [1.0, 3.5]), (4.5, 2.0, [2.5, 5.0]), (3.0, 1.25, [1.75, 4.25]), (3.0, 9.0, [1.0, 5.0])],
)
def test_the_control_interval_is_cd_each_side_clipped_to_the_axis(control_rank, cd, interval):
    others = [r for r in (1.0, 2.0, 3.0, 4.0, 5.0) if r != control_rank][:4]
    ranks = pd.Series([control_rank, *others], index=["ctl", "p", "q", "r", "s"])
    fig = cd_figure(ranks, cd, control="ctl")
    renderer = _draw(fig)
    diagram = _diagram(fig.axes[0])
    assert np.asarray(diagram.control_bar.get_xdata()).tolist() == interval
    assert diagram.clique_bars == [] and diagram.cliques is None
    assert diagram.labels["ctl"].get_fontweight() == "bold"
    assert {t.get_fontweight() for n, t in diagram.labels.items() if n != "ctl"} == {"normal"}
    _assert_readable(fig, diagram, renderer)


def test_names_are_drawn_as_written():
    """ "$x^$" would be an unparseable mathtext expression."""
    ranks = pd.Series({"$x^$": 1.2, r"a_b \alpha$": 2.1, "c": 2.7})
    fig = cd_figure(ranks, 1.0, title="$y^$")
    _draw(fig)
    for fmt in ("png", "svg", "pdf"):
        fig.savefig(io.BytesIO(), format=fmt)
    diagram = _diagram(fig.axes[0])
    assert diagram.labels["$x^$"].get_text() == "$x^$ (1.20)"


def test_the_figure_is_7_inches_wide_and_grows_in_height_with_k():
    sizes = [cd_figure(_ranks(k), 1.0).get_size_inches() for k in (2, 5, 12, 20, 40)]
    assert [w for w, _ in sizes[:3]] == [7.0, 7.0, 7.0]
    heights = [h for _, h in sizes]
    assert heights == sorted(heights) and len(set(heights)) == len(heights)


def test_a_figure_drawn_at_another_dpi_stays_readable():
    fig = cd_figure(_ranks(20), 2.0)
    fig.set_dpi(220)
    renderer = _draw(fig)
    _assert_readable(fig, _diagram(fig.axes[0]), renderer)


@pytest.mark.parametrize(
    ("ranks", "kwargs", "param"),
    [
        ({"a": 1.0}, {}, "mean_ranks"),
        ({"a": 0.5, "b": 2.0}, {}, "mean_ranks"),
        ({"a": 1.0, "b": 2.0}, {"control": "z"}, "control"),
        ({"a": 1.0, "b": 2.0}, {"control": "a", "cliques": [["a", "b"]]}, "cliques"),
        ({"a": 1.0, "b": 2.0}, {"cliques": [["a", "z"]]}, "cliques"),
        ({"a": 1.0, "b": 2.0}, {"cliques": [["a"]]}, "cliques"),
    ],
)
def test_draw_refuses_bad_input(ranks, kwargs, param):
    with pytest.raises(ResultsError) as err:
        cd_figure(pd.Series(ranks), 1.0, **kwargs)
    assert err.value.param == param


def test_a_name_the_font_cannot_draw_prints_nothing(tmp_path):
    """A CJK contestant name drew the CD diagram with one matplotlib warning per missing
    glyph on stderr; the diagram is drawn (boxes for those characters) and nothing is
    printed but the table."""
    import warnings

    from typer.testing import CliRunner

    from knnx.cli import app
    from knnx.experiment.runner import run_spec

    spec = {
        "name": "c",
        "datasets": ["iris", "wine", "glass"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [{"name": "knn", "id": "a1"}, {"name": "knn", "id": "k3", "params": {"k": 3}}],
    }
    run_spec(spec, out=tmp_path / "o", figures=False, report=False)
    results = tmp_path / "o" / "results.csv"
    results.write_text(results.read_text(encoding="utf-8").replace(",a1,", ",最近傍,"), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(app, ["compare", str(results), "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and [str(w.message) for w in caught if "Glyph" in str(w.message)] == []
    assert "最近傍" in result.stdout and (tmp_path / "cmp" / "cd.png").stat().st_size > 1000
