"""The comparison table a paper prints (knnx.reporting.wide): values, bold, daggers and
ranks against hand computations and the tests' own functions; the Markdown, LaTeX and
HTML renderings checked for structure (and LaTeX compiled where a TeX engine is)."""

import math
import re
import shutil
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from test_compare import _fold_results, _results
from typer.testing import CliRunner

from knnx.cli import app
from knnx.reporting.latex import Layout, to_latex
from knnx.reporting.wide import render, wide_table
from knnx.stats.compare import compare, paired_tests
from knnx.stats.configurations import configuration_labels
from knnx.stats.control import five_by_two_f

runner = CliRunner()

# three configurations, two datasets, five folds each: on d1, b is clearly worse than a
# (a constant gap), c ties a up to rounding; on d2, c is best and a and b are noisy
FOLDS = {
    "d1": {
        "a": [0.10, 0.12, 0.08, 0.11, 0.09],
        "b": [0.30, 0.32, 0.28, 0.31, 0.29],
        "c": [0.10, 0.12, 0.08, 0.11, float(np.nextafter(0.09, 1.0))],
    },
    "d2": {
        "a": [0.20, 0.25, 0.15, 0.22, 0.18],
        "b": [0.21, 0.19, 0.24, 0.17, 0.20],
        "c": [0.05, 0.06, 0.04, 0.05, 0.05],
    },
}


def _frame():
    return _fold_results({(d, c): v for d, configs in FOLDS.items() for c, v in configs.items()})


def _sizes():
    """No datasets.csv: n from the folds' sizes (80 + 20), d and classes unknown."""
    from knnx.reporting.characteristics import read_datasets

    return read_datasets("/nonexistent/datasets.csv", _frame())


def test_cells_bold_daggers_and_ranks_by_hand():
    result = compare(_frame())
    table = wide_table(result)
    for d, configs in FOLDS.items():
        for c, values in configs.items():
            assert table.mean.loc[d, c] == pytest.approx(np.mean(values), rel=1e-15)
            assert table.std.loc[d, c] == pytest.approx(np.std(values, ddof=1), rel=1e-12)
    # d1: a and c tie (one ulp on one fold) and are both bold; d2: c alone
    assert table.best.loc["d1"].tolist() == [True, False, True]
    assert table.best.loc["d2"].tolist() == [False, False, True]
    # daggers: the corrected resampled t-test against the row's best (a on d1, c on d2)
    for d, reference in (("d1", "a"), ("d2", "c")):
        for c in ("a", "b", "c"):
            if c == reference:
                assert not table.worse.loc[d, c]
                continue
            out = paired_tests(FOLDS[d][c], FOLDS[d][reference], 20 / 80)
            behind = np.mean(FOLDS[d][c]) > np.mean(FOLDS[d][reference])
            tie = abs(np.mean(FOLDS[d][c]) - np.mean(FOLDS[d][reference])) <= 1e-12
            assert table.worse.loc[d, c] == (behind and not tie and out["p_corrected"] < 0.05), (d, c)
    assert table.worse.loc["d1", "b"] and not table.worse.loc["d1", "c"]  # a constant gap; a tie
    assert table.worse.loc["d2"].tolist() == [True, True, False]
    assert table.rank.tolist() == [(1.5 + 2) / 2, 3.0, (1.5 + 1) / 2]


def test_markdown_rendering_exactly():
    result = compare(_frame())
    text = render(wide_table(result, _sizes()), "md")
    lines = text.splitlines()
    assert lines[0] == "| dataset | n | d | classes | a | b | c |"
    assert lines[2] == "| d1 | 100 | – | – | **0.1000 ± 0.0158** | 0.3000 ± 0.0158▼ | **0.1000 ± 0.0158** |"
    assert lines[3] == "| d2 | 100 | – | – | 0.2000 ± 0.0381▼ | 0.2020 ± 0.0259▼ | **0.0500 ± 0.0071** |"
    assert lines[4] == "| average rank | | | | 1.75 | 3.00 | 1.25 |"
    assert (
        "▼: significantly worse than the row's best (Nadeau and Bengio's corrected resampled t-test" in text
    )
    assert "Friedman chi2 = " in lines[-1]


def _check_latex_structure(text, k):
    assert text.startswith("% \\usepackage{booktabs}\n\\begin{table}[t]\n")
    assert text.rstrip().endswith("\\end{table}")
    for env in ("table", "tabular"):
        assert text.count(f"\\begin{{{env}}}") == text.count(f"\\end{{{env}}}") == 1
    assert [line for line in text.splitlines() if line in ("\\toprule", "\\midrule", "\\bottomrule")] == [
        "\\toprule",
        "\\midrule",
        "\\midrule",
        "\\bottomrule",
    ]
    assert re.search(r"\\caption(\[[^]]*\])?\{.+\}", text) and re.search(r"\\label\{tab:[^}]+\}", text)
    assert "\\begin{tabular}{l" + "r" * (3 + k) + "}" in text
    body = text[text.index("\\toprule") : text.index("\\bottomrule")]
    rows = [line for line in body.splitlines() if line.endswith("\\\\")]
    assert rows and all(line.count("&") == 3 + k for line in rows)  # every row has every column
    assert "\\pm" in text and "\\mathbf{" in text and "^{\\circ}" in text
    # braces and math delimiters balance on every line (the package comment aside)
    for line in text.splitlines()[1:]:
        assert line.count("{") - line.count("\\{") == line.count("}") - line.count("\\}"), line
        assert (line.count("$") - line.count("\\$")) % 2 == 0, line


def test_latex_structure_and_escapes():
    result = compare(_frame(), control="a")
    text = to_latex(wide_table(result, _sizes()), Layout(label="tab:demo"))
    _check_latex_structure(text, 3)
    assert "\\label{tab:demo}" in text and "Dem\\v{s}ar" in text
    assert "d1 & 100 & -- & -- & $\\mathbf{0.100 \\pm 0.016}$ & $0.300 \\pm 0.016^{\\circ}$" in text
    # names with LaTeX's special characters are escaped
    frame = _results(
        pd.DataFrame({"a_b": [0.1, 0.2], "c&d": [0.2, 0.1], "50%": [0.3, 0.3]}, index=["x#1", "y"])
    )
    text = to_latex(wide_table(compare(frame)))
    assert "a\\_b & c\\&d & 50\\%" in text and "x\\#1 &" in text


def compile_latex(body, folder):
    """Compile ``body`` (a LaTeX table) in a minimal article by pdflatex; assert it
    compiles to a PDF with no missing character (:func:`conftest.pdflatex`)."""
    from conftest import pdflatex

    pdflatex(body, folder)
    assert (folder / "t.pdf").read_bytes()[:4] == b"%PDF"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine here")
def test_latex_compiles(tmp_path):
    compile_latex(to_latex(wide_table(compare(_frame(), control="a"))), tmp_path)


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.row, self.strong, self.cell = [], None, 0, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "strong":
            self.cell += "*"

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr":
            self.rows.append(self.row)

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def test_html_rendering_has_the_same_cells_as_markdown():
    table = wide_table(compare(_frame()), _sizes())
    parser = _Cells()
    parser.feed(render(table, "html"))
    assert parser.rows[0] == ["dataset", "n", "d", "classes", "a", "b", "c"]
    assert parser.rows[1] == [
        "d1",
        "100",
        "–",
        "–",
        "*0.1000 ± 0.0158",
        "0.3000 ± 0.0158▼",
        "*0.1000 ± 0.0158",
    ]
    assert parser.rows[-1] == ["average rank", "", "", "", "1.75", "3.00", "1.25"]


def test_a_control_moves_the_daggers_and_adds_the_post_hoc_line():
    result = compare(_frame(), control="b")
    table = wide_table(result)
    # against b: a and c are better on d1 (never marked), on d2 neither is worse than b
    assert not table.worse.to_numpy().any()
    assert table.reference == "b" and "Against the control b after Friedman" in table.lines[1]


def test_five_by_two_f_daggers_equal_the_test_itself(tmp_path):
    rng = np.random.default_rng(3)
    values = {}
    for d in ("d1", "d2"):
        base = rng.random(10) * 0.05 + 0.1
        values[d] = {"a": base, "b": base + 0.08 + rng.random(10) * 0.01, "c": base + rng.random(10) * 0.02}
    rows = []
    for d, configs in values.items():
        for c, v in configs.items():
            for i, value in enumerate(v):
                rows.append((d, c, i // 2, i % 2, float(value)))
    frame = _fold_results_5x2(rows)
    result = compare(frame)
    table = wide_table(result, test="5x2cv-f")
    for d in ("d1", "d2"):
        for c in ("b", "c"):
            p = five_by_two_f(values[d][c].reshape(5, 2), values[d]["a"].reshape(5, 2)).p
            assert table.worse.loc[d, c] == (p < 0.05), (d, c, p)
    assert table.worse.loc["d1", "b"]
    from knnx.reporting.comparison import write_comparison

    written = write_comparison(result, tmp_path / "c", test="5x2cv-f")
    assert "five_by_two.csv" in written
    pairs = pd.read_csv(tmp_path / "c" / "five_by_two.csv").set_index(["dataset", "a", "b"])
    for d in ("d1", "d2"):
        expected = five_by_two_f(values[d]["a"].reshape(5, 2), values[d]["b"].reshape(5, 2))
        assert pairs.loc[(d, "a", "b"), "p_f"] == expected.p and pairs.loc[(d, "a", "b"), "f"] == expected.f
    with pytest.raises(
        Exception, match="5x2cv-f needs 5 repeats of 2 folds; dataset 'd1' has 1 repeats of 5 folds"
    ):
        wide_table(compare(_frame()), test="5x2cv-f")


def _fold_results_5x2(rows):
    import io

    from knnx.results import read_results, rows_to_csv

    out = []
    for d, c, repeat, fold, value in rows:
        out.append(
            {
                "experiment": "e",
                "dataset": d,
                "algorithm": c,
                "params": "{}",
                "protocol": "{}",
                "repeat": repeat,
                "fold": fold,
                "seed": 0,
                "metric": "error",
                "value": value,
                "n_train": 50,
                "n_test": 50,
                "fit_seconds": 0.0,
                "predict_seconds": 0.0,
            }
        )
    return read_results(io.StringIO(rows_to_csv(out, header=True)))


def test_params_for_is_one_contestant_labelled_by_its_id():
    """UNN with k=5 on two datasets and k=7 on the third (params_for) is one contestant;
    knn with a grid that varies within a dataset stays one contestant per k."""
    algorithms = {
        "u": ("unn", None),
        "k1": ("knn", '{"k":1}'),
        "k3": ("knn", '{"k":3}'),
    }
    means = pd.DataFrame(
        {"u": [0.1, 0.2, 0.3], "k1": [0.2, 0.1, 0.3], "k3": [0.3, 0.3, 0.1]}, index=["a", "b", "c"]
    )
    frame = _results(means, algorithms={k: (v[0], v[1] or "{}") for k, v in algorithms.items()})
    unn = frame["algorithm"] == "unn"
    frame.loc[unn, "params"] = ['{"k":7}' if d == "a" else '{"k":5}' for d in frame.loc[unn, "dataset"]]
    frame.loc[unn, "param_k"] = ["7" if d == "a" else "5" for d in frame.loc[unn, "dataset"]]
    labels = set(configuration_labels(frame))
    assert labels == {"unn", "knn k=1", "knn k=3"}
    result = compare(frame, select="all")
    assert list(result.means.columns) == ["unn", "knn k=1", "knn k=3"] and result.left_out.empty
    assert result.ranks.mean(axis=0)["unn"] == pytest.approx((1 + 2 + 2.5) / 3)


def test_a_configuration_without_every_dataset_is_named_not_dropped_silently(tmp_path):
    means = pd.DataFrame(
        {"a": [0.1, 0.2, 0.3], "b": [0.2, 0.1, 0.3], "c": [0.3, 0.3, 0.1]}, index=["x", "y", "z"]
    )
    frame = _results(means)
    frame = frame[~((frame["algorithm"] == "c") & (frame["dataset"] == "y"))]
    from knnx.results import rows_to_csv

    path = tmp_path / "results.csv"
    path.write_text(rows_to_csv(frame.to_dict("records"), header=True))
    done = runner.invoke(app, ["compare", str(path), "--select", "all"])
    assert done.exit_code == 0, done.output
    assert "Left out: c: no 'error' results on 1 of 3 datasets (y)." in done.output.splitlines()
    latex = runner.invoke(app, ["compare", str(path), "--select", "all", "--format", "latex"])
    assert latex.exit_code == 0 and latex.stdout.startswith("% \\usepackage{booktabs}\n\\begin{table}")
    assert "Left out: c: no 'error' results on 1 of 3 datasets (y)." in latex.stderr


def test_control_errors_are_one_line(tmp_path):
    path = _results(pd.DataFrame({"a": [0.1, 0.2], "b": [0.2, 0.1]}, index=["x", "y"]), tmp_path)
    done = runner.invoke(app, ["compare", str(path), "--control", "zz"])
    assert done.exit_code == 2
    assert done.output == "error: --control: 'zz' is not a contestant; contestants: a, b\n"
    done = runner.invoke(app, ["compare", str(path), "--control", "a", "--format", "latex"])
    assert done.exit_code == 0 and math.isfinite(
        float(re.search(r"Bonferroni--Dunn's critical difference is ([0-9.]+)", done.output).group(1))
    )


def test_csv_rendering_holds_counts_as_integers_and_numbers_round_trip():
    """n, d and classes were written as floats (345.0, and 4.0 for d); an unknown count
    is an empty cell. Means and stds read back equal to the table's."""
    import io

    table = wide_table(compare(_frame()), _sizes())
    frame = pd.read_csv(io.StringIO(render(table, "csv")), keep_default_na=False, dtype=str)
    assert frame[["dataset", "n", "d", "classes"]].drop_duplicates().values.tolist() == [
        ["d1", "100", "", ""],
        ["d2", "100", "", ""],
    ]
    for row in frame.itertuples():
        assert float(row.mean) == table.mean.loc[row.dataset, row.contestant]
        assert float(row.std) == table.std.loc[row.dataset, row.contestant]


def test_names_that_print_alike_once_normalised_are_refused():
    """'é' and e + a combining accent given to two datasets printed two rows alike."""
    from knnx.errors import ResultsError
    from knnx.reporting.wide import renamed

    table = wide_table(compare(_frame()), _sizes())
    with pytest.raises(ResultsError) as error:
        renamed(table, {"d1": "\u00e9", "d2": "e\u0301"})
    assert str(error.value) == "names: two datasets would print as 'e\u0301': d1 and d2"
