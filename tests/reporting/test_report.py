"""The report and the comparison a researcher publishes, on a small version of a real
study: their own classifier and loader beside the spec, knnx's knn tuned over k, UNN
with params_for, GNNB, CPW, scikit-learn's random forest and a tuned SVC, four
datasets, 3-fold cross-validation. The page leads with the comparison table and the
critical-difference diagram (checked in a headless browser on the first screen), the
LaTeX table compiles, and no configuration is missing without a named reason."""

import re
import shutil
import textwrap
from html.parser import HTMLParser

import numpy as np
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.results import read_results
from knnx.stats.compare import compare
from knnx.stats.configurations import configuration_labels

runner = CliRunner()

MODULE = textwrap.dedent(
    '''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.neighbors import KNeighborsClassifier


    class CMDW(ClassifierMixin, BaseEstimator):
        """A user's own kNN variant (distance-weighted votes)."""

        def __init__(self, k=5):
            self.k = k

        def fit(self, X, y):
            self.model_ = KNeighborsClassifier(n_neighbors=self.k, weights="distance").fit(X, y)
            self.classes_ = self.model_.classes_
            return self

        def predict(self, X):
            return self.model_.predict(X)


    def rings(n=150):
        rng = np.random.default_rng(0)
        r = np.r_[rng.normal(1, 0.2, n // 2), rng.normal(2, 0.2, n - n // 2)]
        a = rng.uniform(0, 2 * np.pi, n)
        return np.c_[r * np.cos(a), r * np.sin(a)], np.r_[np.zeros(n // 2), np.ones(n - n // 2)].astype(int)
    '''
)

SPEC = textwrap.dedent(
    """
    name: study
    datasets: [iris, wine, glass, {loader: "lab:rings", id: rings}]
    protocol: {kind: kfold, folds: 3}
    algorithms:
      - {estimator: "lab:CMDW", id: cmdw, params: {k: [5, 11]}}
      - {name: knn, params: {k: [1, 3, 5, 9]}, tune: {cv: 3}}
      - {name: unn, params: {k: 5}, params_for: {rings: {k: 9}}}
      - {name: gnnb, params: {k: 5}}
      - {name: cpw, params: {max_epochs: 5}}
      - {estimator: "sklearn.ensemble:RandomForestClassifier", id: rf, params: {n_estimators: 30, random_state: 0}}
      - {estimator: "sklearn.svm:SVC", id: svc, params: {C: [0.1, 10.0]}, tune: {cv: 3}}
    metrics: [error, accuracy]
    """
)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    (folder / "lab.py").write_text(MODULE)
    (folder / "spec.yaml").write_text(SPEC)
    done = runner.invoke(app, ["run", str(folder / "spec.yaml"), "--out", str(folder / "out"), "--quiet"])
    assert done.exit_code == 0, done.output
    return folder / "out"


class _Page(HTMLParser):
    """The h2 headings, and per table its column headers, in order."""

    def __init__(self):
        super().__init__()
        self.events, self.tag, self.text = [], None, ""

    def handle_starttag(self, tag, attrs):
        if tag in ("h2", "th", "table", "img"):
            self.events.append((tag, dict(attrs)))
        if tag in ("h2", "th"):
            self.tag, self.text = tag, ""

    def handle_endtag(self, tag):
        if tag == self.tag:
            self.events.append((f"/{tag}", self.text.strip()))
            self.tag = None

    def handle_data(self, data):
        if self.tag:
            self.text += data


def test_the_report_leads_with_the_wide_table_and_the_cd_diagram(study):
    page = _Page()
    page.feed((study / "report.html").read_text(encoding="utf-8"))
    kinds = [e[0] for e in page.events]
    headings = [e[1] for e in page.events if e[0] == "/h2"]
    assert headings[:4] == ["Comparison: error", "Chosen hyper-parameters", "Datasets", "Figures"]
    first_h2 = kinds.index("h2")
    # the first table after the first heading is the wide table; the first image the CD diagram
    first_table = kinds.index("table", first_h2)
    assert page.events[first_table][1].get("class") == "wide compact"
    first_img = kinds.index("img", first_h2)
    assert page.events[first_img][1]["alt"] == "critical-difference diagram, error"
    assert first_table < first_img < kinds.index("h2", first_h2 + 1)
    # its columns: every configuration of the run, none missing, each named once
    frame = read_results(study / "results.csv")
    configurations = list(dict.fromkeys(configuration_labels(frame)))
    header = [e[1] for e in page.events[first_table:] if e[0] == "/th"][: 1 + len(configurations)]
    assert header == ["dataset", *configurations]
    assert configurations == ["cmdw k=5", "cmdw k=11", "knn", "unn", "gnnb", "cpw", "rf", "svc"]


def test_the_wide_table_values_equal_the_results(study):
    frame = read_results(study / "results.csv")
    errors = frame[frame["metric"] == "error"].assign(configuration=lambda f: configuration_labels(f))
    text = (study / "report.html").read_text(encoding="utf-8")
    start = text.index("<table class='wide compact'")
    table = text[start : text.index("</table>", start)]
    rows = re.findall(r"<tr><th scope='row'(?: title='([^']*)')?>(.*?)</th>(.*?)</tr>", table)
    assert [r[1] for r in rows] == ["iris", "wine", "glass", "rings", "average rank"]
    for facts, dataset, cells in rows[:4]:
        values = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td class='num'[^>]*>(.*?)</td>", cells)]
        sub = errors[errors["dataset"] == dataset]
        assert facts.startswith(f"n = {int(sub['n_train'].iloc[0] + sub['n_test'].iloc[0])}, d = ")
        for config, cell in zip(dict.fromkeys(errors["configuration"]), values, strict=True):
            folds = sub[sub["configuration"] == config]["value"].to_numpy()
            mean, std = (float(x) for x in cell.rstrip("▼▲").split(" ± "))
            assert mean == pytest.approx(round(folds.mean(), 3), abs=1e-12)
            assert std == pytest.approx(round(folds.std(ddof=1), 3), abs=1e-12)
    assert "rings: 9" in text and "iris: 5" in text  # UNN's k per dataset, one contestant


def test_tuned_cells_record_their_search_and_compile_nothing_for_scikit_learn(study):
    import json

    frame = read_results(study / "results.csv")
    cells = frame.drop_duplicates(["dataset", "algorithm", "params", "repeat", "fold"])
    tuned = cells[cells["algorithm"].isin(["knn", "svc"])]
    assert (tuned["tune_seconds"] > 0).all() and (tuned["fit_seconds"] > tuned["tune_seconds"]).all()
    assert (cells[~cells["algorithm"].isin(["knn", "svc"])]["tune_seconds"] == 0).all()
    runs = json.loads((study / "environment.json").read_text())["runs"]
    warmed = set(runs[-1].get("warmup_seconds", {}))
    assert not warmed & {"cmdw", "rf", "svc"}  # scikit-learn underneath: no kernel to compile


def test_compare_with_a_control_and_its_latex_table(study, tmp_path):
    done = runner.invoke(
        app,
        [
            "compare",
            str(study / "results.csv"),
            "--select",
            "all",
            "--control",
            "unn",
            "--format",
            "latex",
            "--out",
            str(tmp_path / "c"),
        ],
    )
    assert done.exit_code == 0, done.output
    tex = (tmp_path / "c" / "table.tex").read_text()
    assert tex == done.stdout
    assert "\\begin{tabular}{l" + "r" * (3 + 8) + "}" in tex and "the control unn" in tex
    frame = read_results(study / "results.csv")
    result = compare(frame, control="unn")
    control = result.control_tests.set_index("configuration")
    written = __import__("pandas").read_csv(tmp_path / "c" / "control.csv").set_index("configuration")
    np.testing.assert_array_equal(written["p_holm"].to_numpy(), control["p_holm"].to_numpy())
    if shutil.which("pdflatex"):
        from test_wide import compile_latex

        compile_latex(tex, tmp_path)


def test_report_options_and_their_errors(study):
    before = (study / "report.html").read_bytes()
    bad = runner.invoke(app, ["report", str(study), "--control", "nope"])
    assert bad.exit_code == 2
    assert bad.output.startswith(
        "error: --control: 'nope' is not a contestant; contestants: cmdw k=5, cmdw k=11,"
    )
    assert (study / "report.html").read_bytes() == before  # nothing written
    bad = runner.invoke(app, ["report", str(study), "--metric", "auc"])
    assert (
        bad.exit_code == 2
        and bad.output == "error: --metric: no rows for metric 'auc'; metrics: error, accuracy\n"
    )
    done = runner.invoke(app, ["report", str(study), "--control", "rf", "--metric", "accuracy"])
    assert done.exit_code == 0, done.output
    text = (study / "report.html").read_text(encoding="utf-8")
    assert (
        "<h2 id='comparison'>Comparison: accuracy</h2>" in text and "<h3>Against the control rf</h3>" in text
    )
    assert text.index("Against the control rf") < text.index("<h2 id='tuning'>")


def test_the_first_screen_shows_the_table_and_the_diagram(study):
    from test_figures_report import _browser_or_skip, _chromium

    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    runner.invoke(app, ["report", str(study)])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto((study / "report.html").resolve().as_uri(), wait_until="load")
            table = page.evaluate(
                "(() => { const r = document.querySelector('table.wide').getBoundingClientRect(); return [r.top, r.bottom, r.right]; })()"
            )
            image = page.evaluate(
                "(() => { const i = document.querySelector('img'); const r = i.getBoundingClientRect(); return [i.alt, r.top, r.bottom, i.naturalWidth]; })()"
            )
            assert 0 < table[0] < table[1] < 900 and table[2] <= 1280, table  # the whole table, no scrolling
            assert image[0] == "critical-difference diagram, error" and 0 < image[1] < image[2] < 900
            assert image[3] > 0
        finally:
            browser.close()


def test_results_carry_columns_for_the_parameters_set_or_varied_only(study):
    header = (study / "results.csv").read_text().splitlines()[0].split(",")
    assert [c for c in header if c.startswith("param_")] == [
        "param_C",
        "param_k",
        "param_max_epochs",
        "param_n_estimators",
        "param_random_state",
    ]
    frame = read_results(study / "results.csv")  # reading derives a column for every parameter
    assert {"param_bootstrap", "param_gamma", "param_kernel"} <= set(frame.columns)
    rf = frame[frame["algorithm"] == "rf"]
    assert set(rf["param_bootstrap"]) == {"true"} and set(rf["param_n_estimators"]) == {"30"}


def test_table_says_what_it_pools_and_tabulates_timings(study):
    frame = read_results(study / "results.csv")
    done = runner.invoke(
        app, ["table", str(study / "results.csv"), "--by", "dataset,algorithm", "--format", "csv"]
    )
    assert done.exit_code == 0, done.output
    import io

    import pandas as pd

    table = pd.read_csv(io.StringIO(done.stdout)).set_index(["dataset", "algorithm"])
    errors = frame[frame["metric"] == "error"]
    for (d, alg), row in table.iterrows():
        sub = errors[(errors["dataset"] == d) & (errors["algorithm"] == alg)]
        assert row["configurations"] == (2 if alg == "cmdw" else 1)  # cmdw's two k pooled, and said so
        assert row["mean"] == pytest.approx(sub["value"].mean(), rel=1e-15) and row["n"] == len(sub)
    md = runner.invoke(app, ["table", str(study / "results.csv"), "--by", "dataset,algorithm"])
    assert md.output.rstrip().endswith("--by dataset,configuration separates them.")
    timing = runner.invoke(
        app,
        [
            "table",
            str(study / "results.csv"),
            "--by",
            "algorithm",
            "--metric",
            "tune_seconds",
            "--format",
            "csv",
        ],
    )
    assert timing.exit_code == 0, timing.output
    seconds = pd.read_csv(io.StringIO(timing.stdout)).set_index("algorithm")
    cells = frame.drop_duplicates(["dataset", "algorithm", "params", "repeat", "fold"])
    for alg, row in seconds.iterrows():
        mine = cells[cells["algorithm"] == alg]["tune_seconds"]
        assert row["mean"] == pytest.approx(mine.mean(), rel=1e-12) and row["n"] == len(mine) == 12 * (
            1 + (alg == "cmdw")
        )
        assert row["datasets"] == mine.index.map(cells["dataset"]).nunique() > 1  # pooled, and said so
