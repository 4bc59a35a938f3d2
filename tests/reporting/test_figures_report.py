"""Figures that show every configuration, knnx plot on any parameter, and the HTML report
(checked in a real headless browser: Debian's chromium driven by playwright)."""

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.evaluation.metrics import METRICS
from knnx.experiment.runner import run_spec
from knnx.reporting import figures as plots
from knnx.reporting.summaries import configuration_labels, summarize
from knnx.reporting.tuning import discrete
from knnx.results import read_results, rows_to_csv

runner = CliRunner()
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"

# Three weighted-metric schemes and kNN on three datasets: no numeric parameter varies
# across the algorithms (the spec that used to write no figure at all).
SCHEMES = {
    "name": "schemes",
    "seed": 0,
    "datasets": ["iris", "wine", "glass"],
    "protocol": {"kind": "kfold", "folds": 3},
    "algorithms": [
        {"name": "knn", "params": {"k": 1}},
        {"name": "cw", "params": {"max_epochs": 2}},
        {"name": "pw", "params": {"max_epochs": 2}},
        {"name": "cpw", "params": {"max_epochs": 2}},
    ],
}


def _captured_figures(monkeypatch):
    """Every figure knnx saves, as (file name, Figure), captured before it is cleared."""
    saved = []
    real = plots.save_figure

    def capture(fig, path, dpi, metadata=None):
        saved.append((Path(path).name, fig))
        real(fig, path, dpi, metadata)
        # keep the drawing readable after write_figures clears the figure
        saved[-1] = (Path(path).name, _texts(fig))

    monkeypatch.setattr(plots, "save_figure", capture)
    return saved


def _texts(fig):
    """The tick labels, legend entries and titles of every axes of ``fig``."""
    out = {"ticks": set(), "legend": set(), "titles": [], "xlabels": []}
    for ax in fig.axes:
        out["ticks"] |= {t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels()}
        legend = ax.get_legend()
        if legend is not None:
            out["legend"] |= {t.get_text() for t in legend.get_texts()}
        out["titles"].append(ax.get_title())
        out["xlabels"].append(ax.get_xlabel())
    return out


@pytest.fixture(scope="module")
def ripley_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ripley")
    run_spec(EXPERIMENTS / "ripley.yaml", out=out)
    return out


@pytest.fixture(scope="module")
def schemes_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("schemes")
    run_spec(SCHEMES, out=out)
    return out


@pytest.mark.parametrize("which", ["ripley_run", "schemes_run"])
def test_every_configuration_appears_in_a_figure(which, request, tmp_path, monkeypatch):
    """Read back from the saved figures' tick labels and legends: every configuration of
    the run (its label in summary.md) is drawn, for every metric."""
    folder = request.getfixturevalue(which)
    frame = read_results(folder / "results.csv")
    saved = _captured_figures(monkeypatch)
    # what the estimators report about their fits (diagnostics) is drawn when asked
    diagnostics = [m for m in dict.fromkeys(frame["metric"]) if m not in METRICS]
    written, notes = plots.write_figures(frame, tmp_path, requested=diagnostics)
    assert notes == []
    assert [name for name, _ in saved] == written
    assert [p.name for p in plots.figure_files(tmp_path)] == sorted(written)  # each marked as the run's
    drawn = dict(saved)
    for metric in dict.fromkeys(frame["metric"]):
        rows = frame[frame["metric"] == metric]
        if discrete(rows) and metric not in METRICS:  # counts per value: values, not configurations
            assert set(drawn[f"{metric}.png"]["titles"]) <= {
                f"{a}: {metric} reported (folds per value)" for a in rows["algorithm"]
            }
            continue
        configs = set(configuration_labels(rows))
        shown = drawn[f"{metric}.png"]["ticks"]
        assert configs <= shown, (metric, configs - shown)
        assert drawn[f"{metric}.png"]["titles"] == list(dict.fromkeys(rows["dataset"]))
    if which == "ripley_run":
        # 32 configurations: 12 knn (k x weights), 10 unn (theta), 10 knn_sample (fraction; seeds pooled)
        assert len(set(configuration_labels(frame[frame["metric"] == "error"]))) == 32
        assert {"error-k.png", "error-theta.png", "error-fraction.png"} <= set(written)
        assert drawn["error-k.png"]["legend"] == {"knn weights=uniform", "knn weights=distance"}
        assert drawn["error-theta.png"]["legend"] == {"unn"}
        assert drawn["error-fraction.png"]["legend"] == {"knn_sample"}
        assert not any("-seed" in name for name in written)  # seeds are pooled, not an axis
    else:
        # no numeric parameter varies: the comparisons alone, of the metric and of what the
        # weighted schemes report about their fits (loo_error, epochs, ...)
        assert written == [f"{m}.png" for m in dict.fromkeys(frame["metric"])]
        assert written[:3] == ["error.png", "loo_error.png", "initial_loo_error.png"]
    # not asked, no diagnostic is drawn: the scores' figures alone
    (tmp_path / "plain").mkdir()
    plain, notes = plots.write_figures(frame, tmp_path / "plain")
    assert notes == [] and plain == [
        n for n in written if not any(n.startswith(f"{m}.") or n.startswith(f"{m}-") for m in diagnostics)
    ]
    assert not any(n.startswith(("loo_error", "epochs", "prototype_fraction")) for n in plain)


def test_the_comparison_figure_draws_the_means_and_every_fold(schemes_run):
    frame = read_results(schemes_run / "results.csv")
    fig = plots.plot_comparison(frame, "error")
    ax = next(a for a in fig.axes if a.get_title() == "wine")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]  # the panels share their rows
    assert labels == ["knn", "cw", "pw", "cpw"]
    # the grey dots: one per fold; the error bars: the means, at the configurations' rows
    dots = ax.lines[0]
    sub = frame[(frame.dataset == "wine") & (frame.metric == "error")]
    assert sorted(dots.get_xdata()) == sorted(sub["value"])
    means = {labels[int(round(c.lines[0].get_ydata()[0]))]: c.lines[0].get_xdata()[0] for c in ax.containers}
    expected = summarize(sub, by=("configuration",)).set_index("configuration")["mean"]
    for name in labels:
        assert means[name] == pytest.approx(expected[name], abs=1e-15)


def test_many_datasets_are_drawn_on_pages(tmp_path):
    """13 datasets: each figure on two pages of at most 12 panels (it used to be refused,
    one line each); tests/reporting/test_figures_scale.py has the rest of the rules of pages."""
    rows = []
    for d in range(13):
        for k in (1, 3):
            rows.append(_row(f"d{d}", "knn", {"k": k}, 0.1 * k))
    path = tmp_path / "r.csv"
    path.write_text(rows_to_csv(rows, header=True))
    out = tmp_path / "out"
    out.mkdir()
    written, notes = plots.write_figures(read_results(path), out)
    assert written == ["error-1.png", "error-2.png", "error-k-1.png", "error-k-2.png"]
    assert notes == []
    assert [p.name for p in plots.figure_files(out)] == sorted(written)
    # a user's own image in the folder, whatever its name, is never taken for a figure of the run
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "error-k.png").write_bytes(b"\x89PNG\r\n\x1a\n mine")
    assert plots.figure_files(mine) == []


def _row(dataset, algorithm, params, value, fold=0, metric="error"):
    return {
        "experiment": "e",
        "dataset": dataset,
        "algorithm": algorithm,
        "params": json.dumps(params, separators=(",", ":"), sort_keys=True),
        "protocol": '{"kind":"kfold"}',
        "repeat": 0,
        "fold": fold,
        "seed": 0,
        "metric": metric,
        "value": value,
        "n_train": 10,
        "n_test": 5,
        "fit_seconds": 0.0,
        "predict_seconds": 0.0,
    }


def test_plot_accepts_a_categorical_parameter(ripley_run, tmp_path):
    fig = plots.plot_metric(ripley_run / "results.csv", "error", x="weights")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["uniform", "distance"]
    assert {c.get_label() for c in ax.containers} == {f"knn k={k}" for k in (5, 15, 31)}
    frame = read_results(ripley_run / "results.csv")
    line = next(c for c in ax.containers if c.get_label() == "knn k=15").lines[0]
    sub = frame[(frame.metric == "error") & (frame.algorithm == "knn") & (frame.param_k.astype(str) == "15")]
    expected = [sub[sub.param_weights.astype(str) == w]["value"].mean() for w in ("uniform", "distance")]
    assert list(line.get_xdata()) == [0.0, 1.0]
    assert list(line.get_ydata()) == pytest.approx(expected, abs=1e-15)


def test_plot_against_seed_and_its_messages(ripley_run, tmp_path):
    results = ripley_run / "results.csv"
    fig = plots.plot_metric(results, "error", x="seed")
    assert {c.get_label() for c in fig.axes[0].containers} == {
        f"knn_sample fraction={f / 10}" for f in range(1, 11)
    }
    # a parameter that does not vary, one that does not exist: each one correct line
    one = runner.invoke(app, ["plot", str(results), "--x", "loss", "--out", str(tmp_path / "x.png")])
    assert one.exit_code == 2
    assert one.stderr == (
        "error: --x: parameter 'loss' takes one value (exp) in the 'error' rows; parameters that vary "
        "within an algorithm: k, seed, weights, theta, fraction (or --x configuration: every configuration side by side)\n"
    )
    missing = runner.invoke(app, ["plot", str(results), "--x", "scheme", "--out", str(tmp_path / "x.png")])
    assert missing.stderr == (
        "error: --x: no parameter 'scheme' in the 'error' rows; parameters that vary within an algorithm: k, seed, weights, theta, "
        "fraction (or --x configuration: every configuration side by side)\n"
    )
    assert not (tmp_path / "x.png").exists()


def test_plot_configuration_draws_the_comparison(schemes_run, tmp_path):
    result = runner.invoke(
        app,
        ["plot", str(schemes_run / "results.csv"), "--x", "configuration", "--out", str(tmp_path / "c.png")],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # schemes: the algorithms share no varying parameter; the default is the comparison
    result = runner.invoke(app, ["plot", str(schemes_run / "results.csv"), "--out", str(tmp_path / "d.png")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d.png").stat().st_size > 10_000


# ---------------------------------------------------------------- the HTML report


def test_the_report_holds_the_run_and_nothing_outside_it(schemes_run):
    from knnx.reporting.html import write_report
    from knnx.stats.compare import compare

    path = write_report(schemes_run)
    text = path.read_text(encoding="utf-8")
    # self-contained: no address outside the page, every image embedded
    assert not re.search(r"(?:src|href)\s*=\s*['\"](?!data:|#)", text)
    assert "http://" not in text and "https://" not in text
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == text.count("<img")
    import base64

    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    # the numbers: summary means and the Friedman statistic as knnx computes them
    frame = read_results(schemes_run / "results.csv")
    summary = summarize(frame, by=("dataset", "configuration"), metric="error")
    for r in summary.itertuples():
        assert f"<td>{r.dataset}</td><td>{r.configuration}</td><td>{r.mean:.4f} ± {r.std:.4f}</td>" in text
    f = compare(frame, metric="error", select="all").friedman_row
    assert (
        f"Friedman chi2 = {f.chi2:.4g} (df 3), p = {f.p:.4g}; Iman-Davenport F = {f.iman_davenport_f:.4g}"
        in text
    )


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _browser_or_skip():
    """Debian's chromium and the playwright package, or a skip that says which is missing
    (CI installs both and sets KNNX_REQUIRE_BROWSER=1, which turns the skip into a failure)."""
    missing = []
    if _chromium() is None:
        missing.append("no chromium on PATH (Debian: apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("no playwright (pip install -e '.[dev]')")
    if missing:
        reason = "browser test not run: " + "; ".join(missing)
        if os.environ.get("KNNX_REQUIRE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)


def test_the_report_opens_in_a_headless_browser(schemes_run, ripley_run):
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    from knnx.reporting.html import write_report

    pages = [write_report(schemes_run), write_report(ripley_run)]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            for path in pages:
                page = browser.new_page()
                problems, requests = [], []
                page.on(
                    "console", lambda m, out=problems: m.type in ("error", "warning") and out.append(m.text)
                )
                page.on("pageerror", lambda e, out=problems: out.append(str(e)))
                page.on("request", lambda r, out=requests: out.append(r.url))
                page.goto(path.resolve().as_uri(), wait_until="load")
                assert problems == []
                # the page itself and its embedded images only: nothing fetched from elsewhere
                assert all(u == path.resolve().as_uri() or u.startswith("data:") for u in requests), requests
                sizes = page.evaluate(
                    "[...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
                )
                text = path.read_text(encoding="utf-8")
                assert len(sizes) == text.count("<img") >= 2
                assert all(done and w > 0 and h > 0 for done, w, h in sizes), sizes
                headings = page.evaluate("[...document.querySelectorAll('h2')].map(h => h.textContent)")
                assert headings == [
                    "Comparison: error",
                    "Chosen hyper-parameters",
                    "Datasets",
                    "Figures",
                    "Tables",
                    "Diagnostics",
                    "Timings",
                    "Failures and warnings",
                    "Spec and environment",
                ]
                n_tables = page.evaluate("document.querySelectorAll('table').length")
                frame = read_results(path.parent / "results.csv")
                n_metrics = frame["metric"].nunique()
                assert n_tables >= n_metrics + 1  # a summary per metric, the timings
                # the long summary table of the first metric, collapsed under "Tables"
                first = page.evaluate(
                    "(m => { const h = [...document.querySelectorAll('#tables ~ details h3')]"
                    ".find(x => x.textContent === m && x.nextElementSibling.tagName === 'TABLE');"
                    " return [...h.nextElementSibling.rows].slice(1).map(r => [...r.cells].map(c => c.textContent)); })",
                    frame["metric"].iloc[0],
                )
                summary = summarize(frame, by=("dataset", "configuration"), metric=frame["metric"].iloc[0])
                assert [row[1] for row in first] == list(summary["configuration"])
                assert [float(row[2].split(" ± ")[0]) for row in first] == pytest.approx(
                    np.round(summary["mean"].to_numpy(), 4), abs=1e-12
                )
                page.close()
        finally:
            browser.close()


def test_run_writes_the_report_and_says_what_it_could_not_draw(tmp_path):
    import yaml

    many = ["australian", "balance", "cancer", "diabetes", "glass", "heart", "ionosphere"]
    many += ["iris", "liver", "sonar", "vote", "wdbc", "wine"]
    spec = {
        "name": "many",
        "seed": 0,
        "datasets": many,
        "protocol": {"kind": "holdout", "test_size": 0.3},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}],
    }
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "o"
    assert f"report in {out}/report.html" in result.stdout.replace("\n", "")
    # 13 datasets: every figure on two pages, nothing left undrawn
    assert "no figure" not in result.stdout
    pages = ["error-1.png", "error-2.png", "error-k-1.png", "error-k-2.png"]
    assert sorted(p.name for p in out.glob("*.png")) == pages
    text = (out / "report.html").read_text(encoding="utf-8")
    for caption in (
        "error, every configuration, page 1 of 2 (australian to wdbc)",
        "error, every configuration, page 2 of 2 (wine)",
        "error against k, page 1 of 2 (australian to wdbc)",
        "error against k, page 2 of 2 (wine)",
    ):
        assert f'<figcaption class="note">{caption}</figcaption>' in text
    # two configurations: no Friedman test, said so ...
    assert "Friedman&#x27;s test needs three configurations or more; with two, see the Wilcoxon test." in text
    assert "<td>knn k=1</td><td>knn k=3</td>" in text  # ... but the pair and its Wilcoxon test
    # --no-report: the report of the earlier run goes with the rest
    result = runner.invoke(app, ["run", str(path), "--out", str(out), "--no-report", "--no-resume"])
    assert result.exit_code == 0 and not (out / "report.html").exists()
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0 and result.stdout == f"wrote {out}/report.html\n"
    again = (out / "report.html").read_text(encoding="utf-8")
    # the rerun's results are the same, its timings are not: the page is the same up to them
    # (and up to the figures' pixels: the run embeds its files, knnx report draws its own)
    cut = "<h2 id='timings'>"

    def without_images(page):
        return re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,", page.split(cut)[0])

    assert without_images(again) == without_images(text) and again != text
    runner.invoke(app, ["report", str(out)])
    assert (out / "report.html").read_text(encoding="utf-8") == again  # the same files, the same page
    bad = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert bad.exit_code == 2
    assert bad.stderr == (
        f"error: OUT: {tmp_path / 'nothing'} is not a folder; give the folder of a run (holding results.csv)\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = runner.invoke(app, ["report", str(empty)])
    assert (
        bad.stderr
        == f"error: {empty}: no results.csv; give the folder of a run (knnx run ... --out {empty})\n"
    )
    assert not (empty / "report.html").exists()


def test_the_report_compares_the_configurations_complete_on_every_dataset(tmp_path):
    """A configuration that failed on one dataset is left out of the comparison (named),
    the others are compared; the failure itself is listed."""
    from knnx.reporting.html import build_report
    from knnx.results import FAILURE_COLUMNS

    rows = []
    for d, values in {"d1": (0.1, 0.2, 0.3), "d2": (0.2, 0.1, 0.3), "d3": (0.1, 0.3, 0.2)}.items():
        for name, v in zip(("a", "b", "c"), values, strict=True):
            if not (name == "c" and d == "d3"):
                rows += [_row(d, name, {}, v + fold / 100, fold=fold) for fold in range(3)]
    (tmp_path / "results.csv").write_text(rows_to_csv(rows, header=True))
    failure = {c: rows[0][c] for c in ("dataset", "algorithm", "params", "repeat", "fold")}
    failure.update(dataset="d3", algorithm="c", cell_key="0" * 64, error="ValueError: <boom>")
    (tmp_path / "failures.csv").write_text(rows_to_csv([failure], header=True, columns=FAILURE_COLUMNS))
    text = build_report(tmp_path)
    assert "<li>c: no &#x27;error&#x27; results on 1 of 3 datasets (d3)</li>" in text  # named in the header
    assert text.index("<li>c: no") < text.index("<h2 id='comparison'>")
    # the comparison of a and b
    assert "<th>dataset</th><th>n</th><th>d</th><th>classes</th><th>a</th><th>b</th></tr>" in text
    assert "<td>ValueError: &lt;boom&gt;</td>" in text
    assert "1 failed cells." in text


def test_the_progress_names_cells_by_what_varies(tmp_path):
    seen = []
    spec = {
        "name": "p",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3]}},
            {
                "id": "rf",
                "estimator": "sklearn.ensemble:RandomForestClassifier",
                "params": {"n_estimators": 5},
            },
        ],
    }
    run_spec(spec, out=tmp_path, progress=lambda done, total, text: seen.append((done, text)))
    finished = [text for done, text in seen if done > 0 and not text.startswith("compiling")]
    assert finished == ["iris knn k=1", "iris knn k=1", "iris knn k=3", "iris knn k=3", "iris rf", "iris rf"]


def test_a_run_whose_every_cell_failed_gets_a_report_of_its_failures(tmp_path):
    spec = {
        "name": "doomed",
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {
                "id": "bad",
                "estimator": "sklearn.neighbors:KNeighborsClassifier",
                "params": {"n_neighbors": 500},
            }
        ],
    }
    from knnx.errors import CellError

    with pytest.raises(CellError, match="2 of 2 cells failed"):
        run_spec(spec, out=tmp_path)
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h1>knnx report: doomed</h1>" in text
    assert "<p>No results: every cell that ran failed (2 failed cells).</p>" in text
    assert text.count("<td>iris</td><td>bad</td>") == 2 and "n_neighbors" in text


def test_the_report_keeps_the_labels_of_the_summary_when_it_leaves_a_configuration_out(tmp_path):
    from knnx.reporting.html import build_report

    rows = []
    for d in ("d1", "d2", "d3"):
        for k in (1, 3):
            if not (k == 3 and d == "d3"):
                rows += [_row(d, "knn", {"k": k}, 0.1 * k + fold / 100, fold=fold) for fold in range(2)]
        rows += [_row(d, "unn", {}, 0.25 + fold / 100, fold=fold) for fold in range(2)]
    (tmp_path / "results.csv").write_text(rows_to_csv(rows, header=True))
    text = build_report(tmp_path)
    assert "<li>knn k=3: no &#x27;error&#x27; results on 1 of 3 datasets (d3)</li>" in text
    # not relabelled "knn"
    assert "<th>dataset</th><th>n</th><th>d</th><th>classes</th><th>knn k=1</th><th>unn</th></tr>" in text


def test_plot_out_creates_its_folder_as_run_out_does(schemes_run, tmp_path):
    target = tmp_path / "figs" / "deep" / "error.png"
    done = CliRunner().invoke(app, ["plot", str(schemes_run / "results.csv"), "--out", str(target)])
    assert done.exit_code == 0, done.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and done.output == f"wrote {target}\n"
    (tmp_path / "file").write_text("x")
    refused = CliRunner().invoke(
        app, ["plot", str(schemes_run / "results.csv"), "--out", str(tmp_path / "file" / "e.png")]
    )
    assert refused.exit_code == 2
    assert (
        refused.output
        == f"error: --out: {tmp_path / 'file' / 'e.png'}: {tmp_path / 'file'} is a file, not a folder\n"
    )
