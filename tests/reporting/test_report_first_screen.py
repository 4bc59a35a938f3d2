"""The report's first screen is the result: for 20 datasets x 8 contestants, the
whole compact table (means, marks, average ranks) and the critical-difference diagram
inside a 1280 x 900 window, checked in a real headless browser (Debian's chromium
driven by playwright); no number or name broken across lines; the standard deviations
on hover and behind a checkbox (CSS alone)."""

import pytest
from test_compare import _fold_results
from test_figures_report import _browser_or_skip, _chromium
from test_latex_layouts import study_values

from knnx.reporting.html import ReportOptions, write_report
from knnx.results import rows_to_csv


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("first")
    frame = _fold_results(study_values(), n_train=90, n_test=10)
    (out / "results.csv").write_text(rows_to_csv(frame.to_dict("records"), header=True))
    return write_report(out, options=ReportOptions(control="knn"))


def test_the_first_screen_holds_the_table_the_ranks_and_the_cd_diagram(page_path):
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            box = page.evaluate(
                "(() => { const r = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };"
                " const t = document.querySelector('table.compact'); const img = document.querySelector('.first .side img');"
                " return {table: r(t), rank: r(t.tFoot.rows[0]), cd: r(img), rows: t.tBodies[0].rows.length,"
                " heads: [...t.tHead.rows[0].cells].map(c => c.textContent)}; })()"
            )
            assert box["rows"] == 20 and box["heads"][1:] == [
                "knn_hvdm",
                "knn",
                "unn",
                "gnnb",
                "cpw",
                "rf",
                "svc",
                "mylab.LocalMeanKNN",
            ]
            for name in ("table", "rank", "cd"):
                left, top, right, bottom = box[name]
                assert 0 <= left and 0 <= top and right <= 1280 and bottom <= 900, (name, box[name])
            # no line break inside any cell of the comparison: each row one line high
            heights = page.evaluate(
                "[...document.querySelectorAll('table.compact tbody tr')].map(r => r.getBoundingClientRect().height)"
            )
            assert max(heights) - min(heights) < 1.0, heights
            wraps = page.evaluate(
                "[...document.querySelectorAll('table.wide td, table.wide th')].map(c => getComputedStyle(c).whiteSpace)"
            )
            assert set(wraps) == {"nowrap"}
            anywhere = page.evaluate(
                "[...document.querySelectorAll('td, th')].filter(c => getComputedStyle(c).overflowWrap === 'anywhere').length"
            )
            assert anywhere == 0
            # the standard deviations: hidden, in each cell's title, shown by the checkbox
            cell = "document.querySelector('table.compact tbody td')"
            assert page.evaluate(f"{cell}.title").startswith("± 0.")
            assert page.evaluate(f"{cell}.querySelector('.sd').offsetWidth") == 0
            page.check("#sd-error")
            assert page.evaluate(f"{cell}.querySelector('.sd').offsetWidth") > 0
            assert page.evaluate(f"{cell}.textContent").count(" ± ") == 1
        finally:
            browser.close()


def test_the_compact_cells_equal_the_comparison(page_path):
    """Each compact cell is the mean to 3 decimals, its title the std; the rank row."""
    from html.parser import HTMLParser

    from knnx.reporting.wide import wide_table
    from knnx.stats.compare import compare

    table = wide_table(compare(_fold_results(study_values(), n_train=90, n_test=10), control="knn"))

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.inside, self.in_cell, self.cells, self.titles = False, False, [], []

        def handle_starttag(self, tag, attrs):
            if tag == "table" and ("class", "wide compact") in attrs:
                self.inside = True
            elif self.inside and tag == "td":
                self.titles.append(dict(attrs).get("title", ""))
                self.cells.append("")
                self.in_cell = True

        def handle_endtag(self, tag):
            self.inside = self.inside and tag != "table"
            self.in_cell = self.in_cell and tag != "td"

        def handle_data(self, data):
            if self.inside and self.in_cell:
                self.cells[-1] += data

    parser = Cells()
    parser.feed(page_path.read_text(encoding="utf-8"))
    k = len(table.mean.columns)
    body, ranks = parser.cells[: 20 * k], parser.cells[20 * k :]
    for i, d in enumerate(table.mean.index):
        for j, c in enumerate(table.mean.columns):
            text = body[i * k + j]
            assert text.startswith(f"{table.mean.loc[d, c]:.3f} ± {table.std.loc[d, c]:.3f}"), (d, c, text)
            mark = "▼" if table.worse.loc[d, c] else "▲" if table.better.loc[d, c] else ""
            assert text.endswith(mark) and parser.titles[i * k + j] == f"± {table.std.loc[d, c]:.3f}"
    assert ranks == [f"{table.rank[c]:.2f}" for c in table.mean.columns]
