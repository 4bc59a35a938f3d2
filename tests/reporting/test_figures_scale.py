"""Figures of many datasets: summaries across datasets (ranks, wins, mean ranks), pages of
per-dataset panels, the datasets filter, error bars inside the metric's range, tuned
grids, numeric and log axes, and one algorithm per axes. Frames are built here (40
datasets in a tidy results file, as read_results gives it); nothing is run."""

import hashlib
import io
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from matplotlib.container import ErrorbarContainer
from scipy.stats import rankdata
from test_figures_report import _row

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS
from knnx.reporting import figures as plots
from knnx.reporting import summary_figures as summary
from knnx.results import read_results, rows_to_csv
from knnx.stats.compare import compare, nemenyi_cd
from knnx.stats.control import bonferroni_dunn_cd

GRID = [1, 3, 5, 7, 9, 15, 21]
DATASETS = [f"d{i:02d}" for i in range(40)]


def _chosen(d, fold):
    """The k a tuned cell chose on dataset number ``d``, fold ``fold``."""
    return GRID[(d + 2 * fold) % len(GRID)]


def _rows_40(seed=0):
    """40 datasets, 3 folds: knn over a geometric k (1..16) and, under the same id, a
    tuned knn (its grid as k, its choice as chosen_k rows); cpw and svc, each with a
    ``tol`` of its own. k = 1 errs on one fold in three (0, 0, 0.3): mean 0.1, std 0.17,
    an unclipped bar would go below 0 (and its F1, 1 - error, above 1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, name in enumerate(DATASETS):
        for k in (1, 2, 4, 8, 16):
            for fold in range(3):
                e = (0.0, 0.0, 0.3)[fold] if k == 1 else float(rng.uniform(0.05, 0.3))
                rows.append(_row(name, "knn", {"k": k, "weights": "uniform"}, e, fold))
                rows.append(_row(name, "knn", {"k": k, "weights": "uniform"}, 1 - e, fold, "f1_macro"))
        tuned = {"k": GRID, "weights": "uniform"}
        for fold in range(3):
            e = float(rng.uniform(0.05, 0.3))
            rows.append(_row(name, "knn", tuned, e, fold))
            rows.append(_row(name, "knn", tuned, 1 - e, fold, "f1_macro"))
            rows.append(_row(name, "knn", tuned, float(_chosen(d, fold)), fold, "chosen_k"))
        for algorithm, tols in (("cpw", (1e-4, 1e-3, 1e-2)), ("svc", (1e-3, 0.5))):
            for tol in tols:
                for fold in range(3):
                    e = float(rng.uniform(0.05, 0.3))
                    rows.append(_row(name, algorithm, {"tol": tol}, e, fold))
                    rows.append(_row(name, algorithm, {"tol": tol}, 1 - e, fold, "f1_macro"))
    return rows


def _frame(rows):
    return read_results(io.StringIO(rows_to_csv(rows, header=True)))


@pytest.fixture(scope="module")
def forty():
    return _frame(_rows_40())


def _visible(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def _drawn(fig):
    """``fig`` drawn (tick labels exist only once a figure is drawn)."""
    fig.savefig(io.BytesIO(), format="png", dpi=40)
    return fig


def _texts(fig):
    out = []
    for ax in fig.axes:
        out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    return out


def _bars(ax):
    """Each error bar of ``ax`` as ((x0, y0), (x1, y1)) segments, from the drawn LineCollections."""
    segments = []
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            for collection in container.lines[2]:
                assert isinstance(collection, LineCollection)
                segments += [np.asarray(s) for s in collection.get_segments()]
    return segments


# ---------------------------------------------------------------- ranges


def test_every_metric_declares_its_range():
    assert set(METRICS) <= set(plots.METRIC_RANGES)
    for name in ("error", "accuracy", "f1_macro", "auc", "balanced_accuracy", "g_mean"):
        assert plots.metric_range(name) == (0.0, 1.0)
    assert plots.metric_range("fit_seconds") == (0.0, np.inf)
    assert plots.metric_range("chosen_k") == (-np.inf, np.inf)  # a reported quantity: uncut


def test_clipped_spread_never_passes_a_bound():
    spread = plots.clipped_spread([0.1, 0.9, 0.5], [0.17, 0.17, 0.1], "error")
    np.testing.assert_allclose(spread, [[0.1, 0.17, 0.1], [0.17, 0.1, 0.1]], rtol=1e-7)


@pytest.mark.parametrize("metric", ["error", "f1_macro"])
def test_error_bars_stay_inside_the_metric_range(forty, metric):
    fig = plots.plot_metric(forty, metric, x="k", datasets=DATASETS[:3])
    lowest, highest = np.inf, -np.inf
    for ax in fig.axes:
        for segment in _bars(ax):
            lowest, highest = min(lowest, segment[:, 1].min()), max(highest, segment[:, 1].max())
    assert 0.0 <= lowest and highest <= 1.0
    # not vacuous: k = 1's bar (mean 0.1 or 0.9, std 0.17) reaches the bound exactly
    assert (lowest == 0.0) if metric == "error" else (highest == 1.0)
    # the comparison's horizontal bars too
    fig = plots.plot_comparison(forty, metric, datasets=DATASETS[:2])
    xs = np.concatenate([s[:, 0] for ax in fig.axes for s in _bars(ax)])
    assert xs.min() >= 0.0 and xs.max() <= 1.0


# ---------------------------------------------------------------- pages and the filter


def test_forty_datasets_are_drawn_on_pages_of_twelve_panels(forty):
    rows = forty[(forty["metric"] == "error") & (forty["algorithm"] == "knn")]
    pages = list(plots.automatic_figures(rows))
    names = [name for name, _, _ in pages]
    assert names == [f"error-{i}.png" for i in range(1, 5)] + [f"error-k-{i}.png" for i in range(1, 5)]
    assert all(fig is not None for _, _, fig in pages)  # drawn, not refused
    assert pages[0][1] == "error, every configuration, page 1 of 4 (d00 to d11)"
    assert pages[7][1] == "error against k, page 4 of 4 (d36 to d39)"
    for start in (0, 4):  # the comparison's pages, then those against k
        figs = [fig for _, _, fig in pages[start : start + 4]]
        assert [len(_visible(f)) for f in figs] == [12, 12, 12, 4]
        titles = [ax.get_title() for f in figs for ax in _visible(f)]
        assert titles == DATASETS  # every dataset once, in order


def test_a_run_saves_the_pages_and_says_nothing_of_them(forty, tmp_path):
    rows = forty[(forty["metric"] == "error") & (forty["algorithm"] == "svc")]
    rows = rows[rows["dataset"].isin(DATASETS[:13])]
    written, notes = plots.write_figures(rows, tmp_path)
    assert notes == []
    assert written == ["error-1.png", "error-2.png", "error-tol-1.png", "error-tol-2.png"]
    assert [p.name for p in plots.figure_files(tmp_path)] == sorted(written)


def test_a_figure_that_cannot_be_drawn_is_one_line_whatever_the_datasets():
    # 81 configurations: too many rows for the comparison, on every page alike
    rows = [_row(d, "knn", {"k": k}, 0.1) for d in DATASETS[:13] for k in range(1, 82)]
    out = list(plots.automatic_figures(_frame(rows)))
    notes = [title for _, title, fig in out if fig is None]
    assert notes == [
        "no figure of error, every configuration: 81 configurations: more than 80 rows would be "
        "unreadable; knnx table lists them"
    ]
    assert [name for name, _, fig in out if fig is not None] == ["error-k-1.png", "error-k-2.png"]


def test_page_names():
    assert plots.page_names("error-k.png", 1) == ["error-k.png"]
    assert plots.page_names("error-k.png", 3) == ["error-k-1.png", "error-k-2.png", "error-k-3.png"]
    assert plots.figure_name("a-b", "c-1") == "a_b-c_1.png"  # no page name is a figure's name
    # a 250-character parameter made a name the system refused (exit 3 on every rerun)
    long = plots.figure_name("error", "p" * 250)
    assert long == f"error-{'p' * 71}_{hashlib.sha256(('p' * 250).encode()).hexdigest()[:8]}.png"
    assert len(long) == 90 and plots.figure_name("error", "p" * 251) != long


def test_write_plot_pages_and_plot_refuses_more_than_twelve_panels(forty, tmp_path):
    paths = plots.write_plot(forty, tmp_path / "error-k.png", x="k", datasets=DATASETS[:13])
    assert [p.name for p in paths] == ["error-k-1.png", "error-k-2.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    one = plots.write_plot(forty, tmp_path / "c.png", x="configuration", datasets=["d03"])
    assert one == [tmp_path / "c.png"] and one[0].stat().st_size > 0
    with pytest.raises(ResultsError) as err:
        plots.plot(forty, "error", x="k", datasets=DATASETS[:13])
    assert str(err.value) == (
        "13 panels (a dataset and algorithm each): more than 12 on one figure; choose datasets (datasets) "
        "or draw pages of 12 (plot_pages, write_plot)"
    )
    pages = plots.plot_pages(forty, "error", x="configuration", datasets=DATASETS[:13])
    assert [len(_visible(f)) for f in pages] == [12, 1]


def test_the_datasets_filter(forty, tmp_path):
    fig = plots.plot_metric(forty, "error", x="k", datasets=["d05", "d01"])
    assert [ax.get_title() for ax in fig.axes] == ["d05", "d01"]  # the order given
    fig = plots.plot_comparison(forty, "error", datasets="d07")
    assert [ax.get_title() for ax in _visible(fig)] == ["d07"]
    known = ", ".join(DATASETS)
    for call in (
        lambda: plots.plot_metric(forty, "error", x="k", datasets=["d01", "nope"]),
        lambda: plots.plot_comparison(forty, "error", datasets=["nope"]),
        lambda: plots.write_plot(forty, tmp_path / "x.png", datasets=["nope"]),
        lambda: plots.metric_pages(forty, "error", x="k", datasets=["nope"]),
    ):
        with pytest.raises(ResultsError) as err:
            call()
        assert str(err.value) == f"datasets: no dataset 'nope' in the results; they hold: {known}"
        assert err.value.render({"datasets": "--datasets"}).startswith("--datasets: no dataset 'nope'")
    with pytest.raises(
        ResultsError, match=r"^datasets: no datasets 'x', 'y' in the results; they hold: d00, "
    ):
        plots.select_datasets(forty, ["x", "d00", "y"])
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------- axes


@pytest.mark.parametrize(
    ("values", "geometric"),
    [
        ([1e-3, 1e-2, 1e-1, 1], True),
        ([1, 2, 4, 8, 16], True),
        ([16, 1, 4, 2, 8, 4], True),  # order and repeats do not matter
        ([1, 3, 10, 30, 100], True),
        ([1, 3, 5, 7, 9, 15, 21], False),
        ([0.1, 0.2, 0.3, 0.4], False),
        ([0, 1, 10, 100], False),  # not all positive
        ([1, 10], False),  # two values: no grid to read
        ([1, 10, 1000], False),  # a ratio of 10, then of 100
    ],
)
def test_is_geometric(values, geometric):
    assert plots.is_geometric(values) is geometric


def test_a_numeric_parameter_is_drawn_on_a_numeric_axis_log_when_geometric(forty):
    fig = _drawn(plots.plot_metric(forty, "error", x="k", datasets=["d00"]))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    line = next(c for c in ax.containers if c.get_label() == "knn")
    assert list(line.lines[0].get_xdata()) == [1.0, 2.0, 4.0, 8.0, 16.0]  # the values, not 0..4
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8", "16"]
    # an arithmetic grid: numeric, linear
    rows = [
        _row(d, "knn", {"k": k}, 0.1 * k, fold)
        for d in ("a", "b")
        for k in (1, 3, 5, 7, 9)
        for fold in (0, 1)
    ]
    ax = plots.plot_metric(_frame(rows), "error", x="k").axes[0]
    assert ax.get_xscale() == "linear"
    assert list(ax.containers[0].lines[0].get_xdata()) == [1.0, 3.0, 5.0, 7.0, 9.0]


def test_a_tuned_grid_is_placed_at_its_chosen_values_never_written_as_a_list(forty):
    fig = _drawn(plots.plot_metric(forty, "error", x="k", datasets=["d02", "d03"]))
    texts = _texts(fig)
    assert not any("[" in t for t in texts), texts
    for ax, d in zip(fig.axes, (2, 3), strict=True):
        tuned = next(c for c in ax.containers if "tuned" in c.get_label())
        assert tuned.get_label() == "knn, k tuned over 7 values 1–21"
        chosen = [_chosen(d, fold) for fold in range(3)]
        assert list(tuned.lines[0].get_xdata()) == [float(np.median(chosen))]
        rows = forty[
            (forty.dataset == DATASETS[d])
            & (forty.metric == "error")
            & (forty.param_k == "[1,3,5,7,9,15,21]")
        ]
        assert list(tuned.lines[0].get_ydata()) == pytest.approx([rows["value"].mean()], rel=1e-12)
        horizontal = tuned.lines[2][0].get_segments()[0]  # the chosen range, smallest to largest
        assert (horizontal[0][0], horizontal[1][0]) == (min(chosen), max(chosen))
    # without the chosen_k rows the tuned setting is a dashed line at its mean, never a tick
    no_choice = forty[forty["metric"] != "chosen_k"]
    fig = _drawn(plots.plot_metric(no_choice, "error", x="k", datasets=["d02"]))
    assert not any("[" in t for t in _texts(fig))
    dashed = [line for line in fig.axes[0].lines if line.get_linestyle() == "--"]
    expected = "knn, k tuned over 7 values 1–21 (choices not recorded)"
    assert [line.get_label() for line in dashed] == [expected]
    # the comparison names it "k=tuned"
    fig = _drawn(plots.plot_comparison(forty, "error", datasets=["d02"]))
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "knn k=tuned" in labels and not any("[" in t for t in labels)


def test_a_parameter_is_never_drawn_across_algorithms(forty):
    """cpw's tol and svc's tol: one panel each, never one axes."""
    values = {"cpw": {1e-4, 1e-3, 1e-2}, "svc": {1e-3, 0.5}}
    for fig in plots.metric_pages(forty, "error", x="tol", datasets=DATASETS[:7]):
        for ax in _visible(fig):
            algorithms = {c.get_label().split()[0] for c in ax.containers}
            assert len(algorithms) == 1
            (algorithm,) = algorithms
            assert ax.get_title().endswith(f" · {algorithm}")
            xs = {float(x) for c in ax.containers for x in c.lines[0].get_xdata()}
            assert xs == values[algorithm]
    # one k per algorithm id (knn1, knn3): nothing to draw against k
    rows = [_row(d, f"knn{k}", {"k": k}, 0.1 * k) for d in ("a", "b") for k in (1, 3)]
    with pytest.raises(ResultsError) as err:
        plots.plot_metric(_frame(rows), "error", x="k")
    assert str(err.value) == (
        "x: parameter 'k' takes one value per algorithm and dataset in the 'error' rows; it is drawn "
        "within one algorithm only (another algorithm's 'k' may mean another thing); parameters that "
        "vary within an algorithm: none (or x='configuration': every configuration side by side)"
    )
    assert plots.default_x(_frame(rows)) is None  # knnx plot draws the configurations
    # a value set per dataset (params_for: unn k=5 on a, k=7 on b) is no axis either
    rows = [_row(d, "knn", {"k": k}, 0.1 * k, fold) for d in ("a", "b") for k in (1, 3) for fold in (0, 1)]
    rows += [_row(d, "unn", {"k": k}, 0.2, fold) for d, k in (("a", 5), ("b", 7)) for fold in (0, 1)]
    assert plots.varying_within(_frame(rows))["k"].algorithms == ("knn",)
    fig = plots.plot_metric(_frame(rows), "error", x="k")
    assert [ax.get_title() for ax in fig.axes] == ["a", "b"]
    assert {c.get_label() for ax in fig.axes for c in ax.containers} == {"knn"}


# ---------------------------------------------------------------- summaries across datasets


def _means_with_ties(seed=1):
    """40 datasets x 5 configurations of errors on a 0.05 grid (exact ties), and the same
    with one-ulp differences added to some tied values: ``(intended, perturbed)``."""
    rng = np.random.default_rng(seed)
    intended = pd.DataFrame(
        np.round(rng.integers(0, 6, size=(40, 5)) * 0.05, 2),
        index=DATASETS,
        columns=["a", "b", "c", "d", "e"],
    )
    perturbed = intended.copy()
    for i in range(0, 40, 3):
        perturbed.iloc[i, 1] = np.nextafter(intended.iloc[i, 1], 1.0)
        perturbed.iloc[i, 0] = intended.iloc[i, 1]
        intended.iloc[i, 0] = intended.iloc[i, 1]  # the tie the ulp hides
    perturbed.iloc[5, 3] = 0.1 + 0.2  # 0.30000000000000004
    intended.iloc[5, 3] = 0.3
    perturbed.iloc[5, 4] = intended.iloc[5, 4] = 0.3
    return intended, perturbed


def test_the_rank_heatmap_shows_the_ranks_of_the_tie_rule():
    intended, perturbed = _means_with_ties()
    expected = pd.DataFrame(
        rankdata(intended.to_numpy(), axis=1, method="average"), index=DATASETS, columns=list("abcde")
    )
    fig = summary.rank_heatmap(perturbed, metric="error")
    ax = fig.axes[0]
    shown = np.asarray(ax.images[0].get_array())
    rows = [t.get_text() for t in ax.get_yticklabels()]
    columns = [t.get_text() for t in ax.get_xticklabels()]
    assert sorted(rows) == DATASETS and sorted(columns) == list("abcde")
    assert shown.shape == (40, 5)
    for i, d in enumerate(rows):
        for j, c in enumerate(columns):
            assert shown[i, j] == expected.loc[d, c], (d, c)
    # columns: best mean rank first; rows: by the best configuration's error, then name
    mean_ranks = expected.mean(axis=0)
    assert columns == list(mean_ranks.sort_values(kind="stable").index)
    best = perturbed[columns[0]]
    assert rows == sorted(DATASETS, key=lambda d: (best[d], d))
    assert [t.get_text() for t in ax.texts][:5] == [f"{shown[0, j]:g}" for j in range(5)]
    by_name = summary.rank_heatmap(perturbed, metric="error", sort="name")
    assert [t.get_text() for t in by_name.axes[0].get_yticklabels()] == DATASETS
    # higher is better for accuracy: rank 1 is the highest
    accuracy = summary.rank_heatmap(1 - intended, metric="accuracy", sort="given")
    np.testing.assert_array_equal(
        np.asarray(accuracy.axes[0].images[0].get_array()),
        rankdata(intended.to_numpy(), axis=1, method="average")[:, [list("abcde").index(c) for c in columns]],
    )


def test_win_tie_loss_counts_by_hand():
    means = pd.DataFrame(
        {
            "ctl": [0.10, 0.30, 0.10, 0.05, 0.1 + 0.2, 0.20],
            "x": [0.20, 0.20, 0.10, 0.10, 0.30, 0.10],
            "y": [np.nextafter(0.10, 1), 0.30, 0.05, 0.20, 0.40, 0.20],
        },
        index=["d1", "d2", "d3", "d4", "d5", "d6"],
    )
    # ctl vs x: better d1 d4; equal d3, d5 (0.1 + 0.2 is 0.3 up to rounding); worse d2 d6
    # ctl vs y: better d4 d5; equal d1 (one ulp), d2, d6; worse d3
    counts = summary.win_tie_loss_counts(means, control="ctl", metric="error")
    hand = {"x": (2, 2, 2), "y": (2, 3, 1)}
    assert {r.configuration: (r.wins, r.ties, r.losses) for r in counts.itertuples()} == hand
    fig = summary.win_tie_loss(means, control="ctl", metric="error")
    ax = fig.axes[0]
    order = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(order) == ["x", "y"]
    wins, tied, losses = ax.containers
    for part, column in ((wins, 0), (tied, 1), (losses, 2)):
        assert [p.get_width() for p in part] == [hand[c][column] for c in order]
    written = [t.get_text() for t in ax.texts]
    assert sorted(w for w in written if w) == sorted(str(n) for c in order for n in hand[c])
    # higher is better: the same values as accuracies swap wins and losses
    flipped = summary.win_tie_loss_counts(means, control="ctl", metric="accuracy")
    assert {r.configuration: (r.wins, r.ties, r.losses) for r in flipped.itertuples()} == {
        "x": (2, 2, 2),
        "y": (1, 3, 2),
    }
    with pytest.raises(
        ResultsError, match=r"^control: no configuration 'z' in the comparison; configurations: ctl, x, y$"
    ):
        summary.win_tie_loss(means, control="z", metric="error")


def test_mean_ranks_with_the_critical_difference():
    intended, perturbed = _means_with_ties()
    expected = pd.Series(rankdata(intended.to_numpy(), axis=1).mean(axis=0), index=list("abcde"))
    cd = nemenyi_cd(5, 40)
    ax = summary.mean_ranks(perturbed, metric="error").axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == list(expected.sort_values(kind="stable").index)
    dots = ax.containers[0]
    np.testing.assert_allclose(dots.lines[0].get_xdata(), expected[labels], rtol=1e-12)
    for segment, label in zip(dots.lines[2][0].get_segments(), labels, strict=True):
        np.testing.assert_allclose(
            segment[:, 0], [expected[label] - cd / 2, expected[label] + cd / 2], rtol=1e-12
        )
    # with a control: Bonferroni-Dunn's CD, the test against a control (not Nemenyi's)
    bd = bonferroni_dunn_cd(5, 40, 0.05)
    ax = summary.mean_ranks(perturbed, control="c", metric="error").axes[0]
    band = ax.patches[0]
    np.testing.assert_allclose(
        [band.get_x(), band.get_x() + band.get_width()], [expected["c"] - bd, expected["c"] + bd]
    )
    assert bd < cd and f"Bonferroni-Dunn CD = {bd:.3g}" in ax.get_title()
    # a comparison made with a control (CompareResult-like: means, metric, alpha, its CD, control)
    friedman = pd.DataFrame([{"critical_difference": 1.5}])
    made = SimpleNamespace(
        means=perturbed, metric="error", alpha=0.1, friedman_row=friedman.iloc[0], control="d"
    )
    ax = summary.mean_ranks(made).axes[0]
    band = ax.patches[0]
    bd = bonferroni_dunn_cd(5, 40, 0.1)
    np.testing.assert_allclose([band.get_x(), band.get_width()], [expected["d"] - bd, 2 * bd])
    assert f"Bonferroni-Dunn CD = {bd:.3g} at alpha 0.1" in ax.get_title()
    assert "d" not in set(summary.win_tie_loss_counts(made)["configuration"])  # against the control


def test_summary_figures_of_a_comparison_of_forty_datasets(forty, tmp_path):
    rows = forty[forty["algorithm"] == "knn"]
    result = compare(rows, "error")
    assert len(result.means) == 40
    names = summary.write_summary_figures(result, tmp_path)
    assert names == [
        "error-summary-ranks.png",
        "error-summary-win_tie_loss.png",
        "error-summary-mean_ranks.png",
    ]
    for name in names:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in plots.figure_files(tmp_path)] == sorted(names)
    # the comparison's own critical difference, every dataset a row of the heatmap
    ax = summary.mean_ranks(result).axes[0]
    assert f"Nemenyi CD = {result.friedman_row.critical_difference:.3g}" in ax.get_title()
    # with a control: the band, the CD diagram and the sentence under the table share one CD
    from knnx.reporting.comparison import _diagram
    from knnx.reporting.wide import wide_table

    controlled = compare(rows, "error", control=result.means.columns[0])
    cd = float(controlled.control_tests["bonferroni_dunn_cd"].iloc[0])
    band = summary.mean_ranks(controlled).axes[0].patches[0]
    assert band.get_width() == pytest.approx(2 * cd, rel=1e-12)
    assert _diagram(controlled, "error")[1] == cd
    assert f"Bonferroni-Dunn (CD = {cd:.3g})" in wide_table(controlled).lines[1]
    heatmap = summary.rank_heatmap(result)
    assert len(heatmap.axes[0].get_yticklabels()) == 40
    control = result.means.columns[0]
    counts = summary.win_tie_loss_counts(result, control=control)
    lower = LOWER_IS_BETTER["error"]
    for r in counts.itertuples():
        a, b = result.means[control], result.means[r.configuration]
        assert r.wins == int(((a < b) if lower else (a > b)).sum())
        assert r.ties == int((a == b).sum())
    with pytest.raises(ResultsError, match="is not a folder"):
        summary.write_summary_figures(result, tmp_path / "missing")


def test_a_large_heatmap_grows_and_keeps_every_label():
    rng = np.random.default_rng(3)
    names = [f"dataset_{i:03d}" for i in range(150)]
    means = pd.DataFrame(rng.uniform(size=(150, 7)), index=names, columns=[f"c{j}" for j in range(7)])
    fig = summary.rank_heatmap(means, metric="error")
    assert len(fig.axes[0].get_yticklabels()) == 150
    assert fig.get_figheight() >= 150 * 0.12
    assert {t.get_fontsize() for t in fig.axes[0].get_yticklabels()} == {5.0}


def test_plot_names_the_parameters_it_could_draw():
    """``plot --x C`` on a tuned-only svc listed ``random_state`` as varying, though it
    varies across algorithms only (no axis): the messages list what can be drawn, and a
    parameter tuned on one grid says where its choices are."""
    rows = []
    for d in ("a", "b"):
        for fold in (0, 1):
            rows.append(_row(d, "svc", {"C": [0.1, 1, 10], "random_state": 0}, 0.2, fold))
            rows.append(_row(d, "svc", {"C": [0.1, 1, 10], "random_state": 0}, 1.0, fold, "chosen_C"))
            rows.append(_row(d, "forest", {"random_state": 3}, 0.1, fold))
    assert _plot_refusal(rows, "C") == (
        "x: parameter 'C' is tuned on one grid (3 values 0.1–10; its choices: knnx table --metric chosen_C) "
        "in the 'error' rows; parameters that vary within an algorithm: none (or x='configuration': every "
        "configuration side by side)"
    )
    rows += [_row(d, "knn", {"k": k}, 0.1, fold) for d in ("a", "b") for k in (1, 3) for fold in (0, 1)]
    assert _plot_refusal(rows, "random_state").endswith(
        "parameters that vary within an algorithm: k (or x='configuration': every configuration side by side)"
    )


def _plot_refusal(rows, x):
    with pytest.raises(ResultsError) as err:
        plots.plot_metric(_frame(rows), "error", x=x)
    return str(err.value)


def test_a_long_dataset_id_is_cut_in_its_panel_title(recwarn):
    """A 250-character id (with glyphs the font lacks) ran across its neighbours'
    titles, and matplotlib's warnings named its own files on stderr."""
    import io as _io

    from knnx.writing import draw_figure

    long = "é漢" * 125
    rows = [_row(d, "knn", {"k": k}, 0.1 * k, fold) for d in (long, "b") for k in (1, 3) for fold in (0, 1)]
    fig = plots.plot_metric(_frame(rows), "error", x="k")
    titles = [ax.get_title() for ax in _visible(fig)]
    assert titles == [long[:47] + "…", "b"]
    draw_figure(fig, _io.BytesIO(), format="png")
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_a_parameter_named_configuration_is_drawn_by_its_column():
    """``--x configuration`` is every configuration side by side, so a parameter of that
    name had no way to be drawn; ``param_configuration`` (as table's --by) names it."""
    rows = [
        _row(d, "mine", {"configuration": c}, 0.1 * c, fold)
        for d in ("a", "b")
        for c in (1, 2)
        for fold in (0, 1)
    ]
    fig = plots.plot_metric(_frame(rows), "error", x="param_configuration")
    ax = _visible(fig)[0]
    xs = sorted(float(x) for c in ax.containers for x in c.lines[0].get_xdata())
    assert xs == [1.0, 2.0]


EXTREME = """\
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


class Extreme(ClassifierMixin, BaseEstimator):
    \"\"\"Reports its ``scale`` (a finite number as large as a float holds) as ``big``.\"\"\"

    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.reported_ = {"big": self.scale}
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)
"""


def test_finite_values_matplotlib_cannot_draw_are_a_note_not_a_traceback(tmp_path):
    """A grid ``scale: [-1e308, 1e308]`` (finite, so valid) and a reported quantity of
    1e308 ended the run, ``report`` and ``plot`` in matplotlib's ``ValueError: arange:
    cannot compute length`` on every rerun, and summaries read ``inf ± inf``. The
    figures that cannot be drawn are notes; the tables hold the finite means."""
    import subprocess
    import sys

    (tmp_path / "extreme.py").write_text(EXTREME)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: x\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 2}\nmetrics: [error]\n"
        'algorithms: [{id: e, estimator: "extreme:Extreme", params: {scale: [-1.0e+308, 1.0e+308]}}]\n'
        "figures: [big]\n"  # a quantity the estimator reports: drawn when asked
    )
    out = tmp_path / "out"

    def knnx(*args):
        return subprocess.run(
            [sys.executable, "-m", "knnx.cli", *map(str, args)], capture_output=True, text=True
        )

    done = knnx("run", spec, "--out", out)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    drawn_not = (
        "not drawn: matplotlib cannot draw values this large or this close (ValueError: arange: cannot"
    )
    # big, one value (1e308) in every fold, is drawn as counts per value: a dot at 1e308
    assert [line for line in done.stdout.splitlines() if "not drawn" in line] == [
        f"error-scale.png {drawn_not} compute length)",
    ]
    assert (out / "big.png").is_file()
    assert "not drawn: matplotlib cannot draw" in (out / "report.html").read_text()
    plot = knnx("plot", out / "results.csv", "--metric", "big", "--x", "configuration")
    assert (plot.returncode, plot.stderr) == (2, f"error: {drawn_not.split(': ', 1)[1]} compute length)\n")
    table = knnx("table", out / "results.csv", "--metric", "big")
    assert table.returncode == 0 and table.stderr == ""
    assert "| iris | e scale=-1e+308 | -1.0000e+308 ± 0.0000e+00 | 2 |" in table.stdout


def test_the_mean_and_deviation_of_finite_values_whose_sum_overflows_are_finite():
    from knnx.reporting.summaries import summarize

    rows = pd.DataFrame(
        {"dataset": "d", "algorithm": "a", "metric": "big", "value": [1e308, 1e308, 0.9e308, 1.1e308]}
    )
    got = summarize(rows, ["dataset", "algorithm"], "big").iloc[0]
    assert got["mean"] == pytest.approx(1e308, rel=1e-15)
    assert got["std"] == pytest.approx(float(np.std([1.0, 1.0, 0.9, 1.1], ddof=1)) * 1e308, rel=1e-12)
