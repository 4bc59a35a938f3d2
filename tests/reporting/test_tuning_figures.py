"""What tune: chose, by value (knnx.reporting.tuning): values read back from the
spec's grids, counts per value in the report and in the figure (never a mean ± std),
the grid-edge sentences; diagnostics drawn only when asked; and no two tick labels
overlapping in any automatic figure family (bounding boxes, as the CD diagram's)."""

import io
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from test_figures_report import _row
from test_figures_scale import GRID, _chosen, _frame, _rows_40

from knnx.reporting import figures as plots
from knnx.reporting import summary_figures as summary
from knnx.reporting.report_parts import tuning_html
from knnx.reporting.tuning import (
    choice_figures,
    choices,
    counts_text,
    edge_lines,
    tune_choice_mask,
    value_text,
)
from knnx.results import read_results, rows_to_csv
from knnx.stats.compare import compare


@pytest.fixture(scope="module")
def forty():
    return _frame(_rows_40())


def _rows(grid, recorded, algorithm="svc", name="gamma", datasets=("a", "b")):
    """A tuned cell per (dataset, fold) whose chosen_<name> row records ``recorded``."""
    rows = []
    for d in datasets:
        for fold, value in enumerate(recorded):
            rows.append(_row(d, algorithm, {name: grid}, 0.1, fold))
            rows.append(_row(d, algorithm, {name: grid}, float(value), fold, f"chosen_{name}"))
    return read_results(io.StringIO(rows_to_csv(rows, header=True)))


def test_choices_are_read_back_as_the_grids_values(forty):
    c = choices(forty)
    assert len(c) == 40 * 3 and set(c["parameter"]) == {"k"}
    expected = [_chosen(d, fold) for d in range(40) for fold in range(3)]
    assert c["value"].tolist() == expected and all(type(v) is int for v in c["value"])
    # a grid with text: the position recorded, the value read back
    mixed = choices(_rows(["scale", 0.01, 0.1], [0, 2, 1, 0]))
    assert mixed["value"].tolist() == ["scale", 0.1, 0.01, "scale"] * 2
    assert counts_text(mixed[mixed["dataset"] == "a"]) == "scale×2, 0.01×1, 0.1×1"
    page = tuning_html(_rows(["scale", 0.01, 0.1], [0, 2, 1, 0]))
    assert "scale×4, 0.01×2, 0.1×2" in page and "×" in page and "0×" not in page


@pytest.mark.parametrize(
    ("grid", "recorded", "text"),
    [
        ([1, None], [1, 1, 0, 1], "1×1, null×3"),  # docs/spec.md's max_depth: [1, null]
        ([{"p": 1}, {"p": 3}], [1, 0, 1, 1], '{"p": 1}×1, {"p": 3}×3'),  # metric_params
        ([[0.5, 8.0], [1.0, 20.0]], [0, 0, 1, 0], "[0.5, 8.0]×3, [1.0, 20.0]×1"),  # ITML's bounds
    ],
)
def test_a_grid_of_null_mappings_or_lists_is_read_back_counted_and_drawn(grid, recorded, text):
    """The run ended in a traceback after its cells, with no report and no
    tuned-choices.png (and so did knnx report and every rerun): a chosen null beside
    another algorithm's numbers was read as NaN (int(NaN)), and a grid of mappings or
    lists could not be an axis (unhashable). Oracle: the grid positions recorded."""
    rows = pd.concat(
        [
            _rows(grid, recorded, algorithm="dt", name="x"),
            _rows([1, 3], [1, 3, 3, 1], algorithm="knn", name="k"),
        ],
        ignore_index=True,
    )
    c = choices(rows)
    dt = c[(c["algorithm"] == "dt") & (c["dataset"] == "a")]
    assert dt["value"].tolist() == [grid[int(r)] for r in recorded]
    assert counts_text(dt) == text
    assert f"<td>dt</td><td>x</td><td>{_html(counts_text(c[c['algorithm'] == 'dt']))}</td>" in tuning_html(
        rows
    )
    ((_, _, draw),) = choice_figures(rows)
    fig = draw()
    ax = next(a for a in fig.axes if a.get_title().startswith("dt:"))
    assert [t.get_text() for t in ax.get_xticklabels()] == [value_text(g)[:12] for g in grid]  # each chosen
    assert sorted(int(t.get_text()) for t in ax.texts) == sorted(
        [recorded.count(r) for r in set(recorded)] * 2
    )


def _html(text):
    import html

    return html.escape(text)


def test_grid_edges_are_said_past_a_quarter_of_the_folds():
    # gamma at the largest value of [0.01, 0.1, 1] in 3 of 4 folds per dataset
    lines = edge_lines(_rows([0.01, 0.1, 1.0], [1.0, 1.0, 1.0, 0.1]))
    assert lines == [
        "svc chose gamma = 1, the largest value of its grid, in 6 of 8 folds (75 %): the best may lie beyond; "
        "widen the grid"
    ]
    # exactly a quarter: not said; the smallest of a float grid is an edge
    assert edge_lines(_rows([0.01, 0.1, 1.0], [1.0, 0.1, 0.1, 0.1])) == []
    low = edge_lines(_rows([0.01, 0.1, 1.0], [0.01, 0.01, 0.1, 0.1]))
    assert len(low) == 1 and "gamma = 0.01, the smallest value of its grid, in 4 of 8 folds (50 %)" in low[0]
    # k from 1: nothing below, no edge; k = 21 at the top of 1..21 is one
    counts = _rows([1, 3, 21], [1, 1, 21, 21], algorithm="knn", name="k")
    assert edge_lines(counts) == [
        "knn chose k = 21, the largest value of its grid, in 4 of 8 folds (50 %): the best may lie beyond; "
        "widen the grid"
    ]
    # a text grid has no order, so no edge
    assert edge_lines(_rows(["scale", "auto"], [0, 0, 0, 0])) == []


def test_the_choice_figure_counts_each_value(forty):
    ((name, title, draw),) = choice_figures(forty)
    fig = draw()
    assert name == "tuned-choices.png" and title == "tuned choices, counts per value"
    ax = fig.axes[0]
    assert ax.get_title() == "knn: k chosen (folds per value)"
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"d{i:02d}" for i in range(40)]
    dots = ax.collections[0].get_offsets()
    counts = [int(t.get_text()) for t in ax.texts]
    expected = pd.Series([(d, _chosen(d, f)) for d in range(40) for f in range(3)]).value_counts()
    drawn = {(int(y), int(x)): n for (x, y), n in zip(dots, counts, strict=True)}
    assert drawn == {pair: int(n) for pair, n in expected.items()}
    assert sum(counts) == 120
    # a numeric axis at the values (not positions), and no error bar anywhere
    assert sorted({int(x) for x, _ in dots}) == sorted(set(GRID) & {int(x) for x, _ in dots})
    assert not ax.containers and not ax.lines


def test_a_geometric_grid_is_drawn_on_a_log_axis():
    ((_, _, draw),) = choice_figures(_rows([0.01, 0.1, 1.0], [1.0, 1.0, 1.0, 0.1]))
    assert draw().axes[0].get_xscale() == "log"


def test_diagnostics_are_drawn_on_request_and_flags_as_counts(forty):
    forty = forty[forty["dataset"].isin(["d00", "d01", "d02"])]
    flags = forty[forty["metric"] == "error"].assign(metric="init_cdm")
    flags["value"] = (np.arange(len(flags)) % 3 == 0).astype(float)
    frame = pd.concat([forty, flags], ignore_index=True)
    names = [n for n, _, _ in plots.automatic_figures(frame)]
    assert not any(n.startswith("init_cdm") for n in names) and "tuned-choices.png" in names
    assert not any(n.startswith("chosen_k") for n in names)  # choices: counts, never mean ± std
    asked = {n: fig for n, _, fig in plots.automatic_figures(frame, requested=["init_cdm", "missing"])}
    flag = asked["init_cdm.png"]
    assert flag is not None and not flag.axes[0].containers  # counts, not a mean ± std bar
    assert sorted({float(x) for x, _ in flag.axes[0].collections[0].get_offsets()}) == [0.0, 1.0]
    assert asked["missing.png"] is None


def _overlaps(labels, renderer):
    boxes = [t.get_window_extent(renderer) for t in labels if t.get_visible() and t.get_text()]
    return [
        (a, b)
        for a, b in itertools.combinations(boxes, 2)
        if min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5
    ]


def _no_overlap(fig, what):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        for axis in (ax.get_xticklabels(), ax.get_yticklabels()):
            assert _overlaps(axis, renderer) == [], (what, ax.get_title())


def test_no_tick_labels_overlap_in_any_figure_family(forty):
    """Every automatic figure of a page of 12 datasets (the comparison, error against k,
    the tuned choices, a flag), the summaries across 40 datasets, and a crowded grid of
    30 values."""
    page = forty[forty["dataset"].isin([f"d{i:02d}" for i in range(12)])]
    flags = page[page["metric"] == "error"].assign(metric="init_cdm", value=1.0)
    frame = pd.concat([page, flags], ignore_index=True)
    for name, _, fig in plots.automatic_figures(frame, requested=["init_cdm"]):
        _no_overlap(fig, name)
    result = compare(forty[forty["algorithm"] != "knn"], "error", select="all")
    for draw in (summary.rank_heatmap, summary.win_tie_loss, summary.mean_ranks):
        _no_overlap(draw(result), draw.__name__)
    crowded = _rows(list(range(1, 31)), [float(v) for v in range(1, 31)], algorithm="knn", name="k")
    ((_, _, draw),) = choice_figures(crowded)
    _no_overlap(draw(), "30 values")


def test_a_chosen_row_without_a_grid_is_no_choice():
    rows = [_row("a", "mine", {"k": 3}, 0.1, 0), _row("a", "mine", {"k": 3}, 99.0, 0, "chosen_k")]
    frame = read_results(io.StringIO(rows_to_csv(rows, header=True)))
    assert not tune_choice_mask(frame).any() and choices(frame).empty and choice_figures(frame) == []
    assert json.loads(frame["params"].iloc[0]) == {"k": 3}


def test_knnx_plot_draws_choices_and_flags_as_counts_per_value_as_the_run_does(forty, tmp_path):
    """knnx plot --metric chosen_k (or a 0/1 flag such as cw's init_cdm) drew a mean ±
    std, its bar past 1 for the flag, where the run draws counts per value (docs: never
    as a mean ± std). Oracle: the run's own figure of the same rows (dots and counts)."""
    from typer.testing import CliRunner

    from knnx.cli import app

    def dots(fig):
        ax = fig.axes[0]
        return ax.get_title(), sorted(
            (tuple(xy), t.get_text())
            for xy, t in zip(ax.collections[0].get_offsets().tolist(), ax.texts, strict=True)
        )

    flags = [
        _row("d", "cw", {"max_epochs": 20}, float(v), f, "init_cdm") for f, v in enumerate([1, 1, 1, 1, 0])
    ]
    flagged = read_results(io.StringIO(rows_to_csv(flags, header=True)))
    for frame, metric in ((forty, "chosen_k"), (flagged, "init_cdm")):
        run = {name: fig for name, _, fig in plots.automatic_figures(frame, requested=("init_cdm",))}
        name = "tuned-choices.png" if metric == "chosen_k" else "init_cdm.png"
        ours = run[name]() if callable(run[name]) else run[name]
        assert dots(plots.plot(frame, metric=metric)) == dots(ours)
        path = tmp_path / "r.csv"
        path.write_text(rows_to_csv(frame.to_dict("records"), header=True))
        result = CliRunner().invoke(app, ["plot", str(path), "--metric", metric])
        assert result.output == f"wrote {tmp_path / f'{metric}.png'}\n"
    assert dots(plots.plot(flagged, metric="init_cdm"))[0] == "cw: init_cdm reported (folds per value)"


def test_the_legend_under_a_panel_of_category_ticks_clears_the_axis_title():
    """--x weights: the rotated labels (uniform, distance) pushed the axis title onto the
    legend's first entry. Oracle: the drawn extents of the title and the legend."""
    rows = [
        _row(d, "knn", {"k": k, "weights": w}, 0.01 * k + (w == "distance") * 0.01 + 0.001 * f, f)
        for d in ("wine", "glass")
        for k in (1, 5, 15, 31)
        for w in ("uniform", "distance")
        for f in range(3)
    ]
    fig = plots.plot_metric(read_results(io.StringIO(rows_to_csv(rows, header=True))), "error", x="weights")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        title = ax.xaxis.label.get_window_extent(renderer)
        legend = ax.get_legend().get_window_extent(renderer)
        assert ax.xaxis.label.get_text() == "weights" and legend.y1 < title.y0, (legend, title)
