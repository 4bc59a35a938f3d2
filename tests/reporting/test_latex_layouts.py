"""The comparison table laid out for a paper (knnx.reporting.latex): every layout's
structure, its marks in both directions against the control checked against the
corrected t-test itself, the caption's mathematics against the comparison's numbers,
names shortened or mapped, columns chosen; and every layout compiled by pdflatex in a
one-column and a two-column article where pdflatex exists, a study of 8 contestants on
20 datasets fitting the text width."""

import itertools
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import pdflatex
from test_compare import _fold_results
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import ResultsError
from knnx.reporting.latex import Layout, parse_layout, tex_number, to_latex
from knnx.reporting.wide import renamed, render, wide_table
from knnx.stats.compare import compare, paired_tests

runner = CliRunner()

DATASETS = [
    "keel.iris", "keel.hayes-roth", "keel.wine", "keel.glass", "keel.new-thyroid", "keel.heart", "keel.breast",
    "keel.cleveland", "keel.haberman", "keel.bupa", "keel.monk-2", "keel.wdbc", "keel.crx", "keel.australian",
    "keel.wisconsin", "keel.pima", "keel.vehicle", "keel.tic-tac-toe", "keel.german", "returns",
]  # fmt: skip
CONTESTANTS = ["knn_hvdm", "knn", "unn", "gnnb", "cpw", "rf", "svc", "mylab.LocalMeanKNN"]


def study_values():
    """8 contestants x 20 datasets x 10 folds of seeded errors; the control (knn) is far
    worse than rf on one dataset and far better than gnnb on another."""
    rng = np.random.default_rng(50)
    values = {}
    for i, d in enumerate(DATASETS):
        base = 0.05 + 0.3 * rng.random()
        for j, c in enumerate(CONTESTANTS):
            values[(d, c)] = np.clip(base + 0.01 * j * (i % 3) + 0.02 * rng.standard_normal(10), 0, 1)
    values[("keel.tic-tac-toe", "knn")] = 0.308 + 0.01 * rng.standard_normal(10)
    values[("keel.tic-tac-toe", "rf")] = 0.002 + 0.001 * rng.random(10)
    values[("keel.monk-2", "gnnb")] = values[("keel.monk-2", "knn")] + 0.2
    return values


@pytest.fixture(scope="module")
def study():
    return study_values()


@pytest.fixture(scope="module")
def table(study):
    return wide_table(compare(_fold_results(study, n_train=90, n_test=10), control="knn"))


def test_marks_in_both_directions_equal_the_corrected_t_test(study, table):
    """▲ / \\bullet where a contestant is significantly better than the control, ▼ /
    \\circ where worse: each cell against Nadeau and Bengio's test on its folds."""
    for d in DATASETS:
        for c in CONTESTANTS[:1] + CONTESTANTS[2:]:
            a, b = study[(d, c)], study[(d, "knn")]
            p = paired_tests(a, b, 10 / 90)["p_corrected"]
            tie = abs(np.mean(a) - np.mean(b)) <= 1e-12 * max(abs(np.mean(a)), abs(np.mean(b)))
            significant = p < 0.05 and not tie
            assert table.better.loc[d, c] == (significant and np.mean(a) < np.mean(b)), (d, c)
            assert table.worse.loc[d, c] == (significant and np.mean(a) > np.mean(b)), (d, c)
    assert table.better.loc["keel.tic-tac-toe", "rf"] and table.worse.loc["keel.monk-2", "gnnb"]
    md = render(table, "md")
    row = next(line for line in md.splitlines() if line.startswith("| keel.tic-tac-toe |"))
    assert re.search(r"\*\*0\.00\d\d ± 0\.000\d\*\*▲", row)
    latex = to_latex(table)
    row = next(line for line in latex.splitlines() if line.startswith("keel.tic-tac-toe &"))
    assert re.search(r"\$\\mathbf\{0\.00\d \\pm 0\.00\d\}\^\{\\bullet\}\$", row)
    assert "$^\\circ$ / $^\\bullet$: significantly worse / better than the control knn" in latex


def test_no_control_marks_only_worse_than_the_best(study):
    plain = wide_table(compare(_fold_results(study, n_train=90, n_test=10)))
    assert not plain.better.to_numpy().any() and plain.worse.to_numpy().any()
    assert "$^\\circ$: significantly worse than the row's best" in to_latex(plain)


def test_caption_sentences_carry_the_comparisons_numbers(study, table):
    result = compare(_fold_results(study, n_train=90, n_test=10), control="knn")
    f = result.friedman_row
    caption = re.search(r"\\caption\[[^]]*\]\{(.*)\}\n", to_latex(table)).group(1)
    assert (
        f"$\\chi^2_F = {tex_number(f.chi2)}$ ({int(f.df)} degrees of freedom), $p = {tex_number(f.p)}$"
        in caption
    )
    assert f"Iman and Davenport's $F_F = {tex_number(f.iman_davenport_f)}$" in caption
    cd = float(result.control_tests["bonferroni_dunn_cd"].iloc[0])
    assert f"Bonferroni--Dunn's critical difference is {tex_number(cd, 3)};" in caption
    # sentences: each ends with a full stop before the next begins; no plain-text chi2 or e-notation
    assert "chi2" not in caption and not re.search(r"\d e-?\d|\de-\d", caption)
    sentences = re.split(r"(?<=\.) (?=[A-Z$])", caption)
    assert all(s.endswith(".") for s in sentences), sentences
    assert tex_number(1.277e-11) == "1.277\\times 10^{-11}" and tex_number(65.35) == "65.35"


def test_params_for_notes_go_into_the_caption(tmp_path):
    from test_labels_and_compare_scale import _frame

    from knnx.results import results_columns

    iris = _frame([("tuned", {"k": k, "weights": "uniform"}) for k in (5, 7)], datasets=("iris",))
    wine = _frame([("tuned", {"k": k, "weights": "distance"}) for k in (5, 7)], datasets=("wine",))
    import pandas as pd

    path = tmp_path / "results.csv"
    pd.concat([iris, wine], ignore_index=True)[results_columns(["k", "weights"])].to_csv(path, index=False)
    done = runner.invoke(app, ["compare", str(path), "--select", "all", "--format", "latex"])
    assert done.exit_code == 0, done.output
    assert done.stderr == ""
    caption = re.search(r"\\caption\[[^]]*\]\{(.*)\}\n", done.stdout).group(1)
    assert caption.endswith(
        "Set per dataset (params\\_for), not in the contestants' names: tuned weights (iris: uniform; wine: distance)."
    )


def _structure(text, layout, n_rows, n_cols):
    """Every float balanced, the package comment naming what the layout uses, each
    tabular row with every column."""
    env = {"table": "table", "table*": "table*", "landscape": "sidewaystable"}[layout.float]
    shrinks = layout.resize or layout.float == "landscape"
    packages = [
        "booktabs",
        *(["graphicx"] if shrinks else []),
        *(["rotating"] if layout.float == "landscape" else []),
    ]
    assert text.splitlines()[0] == f"% \\usepackage{{{','.join(packages)}}}"
    floats = 1 if layout.std else 2
    assert text.count(f"\\begin{{{env}}}") == text.count(f"\\end{{{env}}}") == floats
    assert text.count("\\begin{tabular}") == text.count("\\end{tabular}") == floats
    shrink = "\\ifdim\\wd0>\\linewidth\\resizebox{\\linewidth}{!}{\\usebox0}\\else\\usebox0\\fi"
    assert text.count("\\sbox0{%") == text.count(shrink) == (floats if shrinks else 0)
    if layout.size:
        assert text.count(f"\\{layout.size}\n") == floats
    tabulars = re.findall(r"\\begin\{tabular\}\{(lr*)\}\n(.*?)\\end\{tabular\}", text, re.S)
    assert len(tabulars) == floats
    for spec, body in tabulars:
        rows = [line for line in body.splitlines() if line.endswith("\\\\")]
        assert all(line.count("&") == len(spec) - 1 for line in rows), (spec, rows)
    main = tabulars[0][1]
    rows = [line for line in main.splitlines() if line.endswith("\\\\")]
    if layout.transpose:
        assert len(tabulars[0][0]) == 1 + n_rows + 1  # the datasets and the rank
    else:
        assert len(rows) == 1 + n_rows + 1  # head, datasets, average rank
        assert len(tabulars[0][0]) == 1 + n_cols
    if not layout.std:
        assert "\\label{tab:error-std}" in text and "Table~\\ref{tab:error-std}" in text
        assert "\\pm" not in main
    depth = 0
    for line in text.splitlines()[1:]:  # braces close where they open; math on one line
        depth += line.count("{") - line.count("\\{") - line.count("}") + line.count("\\}")
        assert depth >= 0 and (line.count("$") - line.count("\\$")) % 2 == 0, line
    assert depth == 0


LAYOUTS = [
    Layout(float=f, resize=r, transpose=t, std=s, size=z)
    for f, r, t, s, z in itertools.product(
        ("table", "table*", "landscape"), (False, True), (False, True), (True, False), (None, "scriptsize")
    )
]


@pytest.mark.parametrize(
    "layout", LAYOUTS, ids=lambda x: f"{x.float}-{x.resize}-{x.transpose}-{x.std}-{x.size}"
)
def test_every_layout_is_well_formed(table, layout):
    _structure(to_latex(renamed(table, "short"), layout), layout, len(DATASETS), 3 + len(CONTESTANTS))


def test_columns_choose_and_order_and_the_caption_says_what_is_hidden(table):
    layout = Layout(columns=("n", "rf", "knn", "svc"))
    text = to_latex(table, layout)
    assert "dataset & $n$ & rf & knn & svc \\\\" in text
    assert "Ranks and tests are over all 8 contestants; 5 not shown." in text
    rank = next(line for line in text.splitlines() if line.startswith("average rank"))
    assert (
        rank
        == "average rank &  & " + " & ".join(f"{table.rank[c]:.2f}" for c in ("rf", "knn", "svc")) + " \\\\"
    )
    with pytest.raises(
        ResultsError, match="'zz' is not a column; known: 'n', 'd', 'classes', 'columns', 'knn_hvdm'"
    ):
        to_latex(table, Layout(columns=("zz",)))
    with pytest.raises(ResultsError, match="'rf' is given twice"):
        to_latex(table, Layout(columns=("rf", "rf")))


def test_columns_take_a_contestant_whose_label_holds_a_comma():
    """--columns split at every comma: no contestant of a grid over two parameters
    (knn k=1, weights=uniform) could be chosen."""
    from knnx.reporting.wide_cells import shown_columns

    class Table:  # what shown_columns reads of a table
        mean = pd.DataFrame(columns=["knn k=1, weights=uniform", "knn k=3, weights=uniform", "rf"])

    pieces = tuple(c.strip() for c in "n,knn k=3, weights=uniform,rf".split(","))
    assert shown_columns(Table, pieces) == (["n"], ["knn k=3, weights=uniform", "rf"])


def test_names_short_map_and_collisions(table):
    short = renamed(table, "short")
    assert list(short.mean.index)[:2] == ["iris", "hayes-roth"] and short.mean.index[-1] == "returns"
    mapped = renamed(table, {"keel.iris": "Iris", "mylab.LocalMeanKNN": "LMkNN"})
    assert "LMkNN" in mapped.mean.columns and mapped.mean.index[0] == "Iris"
    assert mapped.rank["LMkNN"] == table.rank["mylab.LocalMeanKNN"]
    with pytest.raises(ResultsError, match="two contestants would print as 'x': knn_hvdm and knn"):
        renamed(table, {"knn_hvdm": "x", "knn": "x"})
    control = renamed(table, {"knn": "kNN"})
    assert control.control.name == "kNN" and control.reference == "kNN"
    assert "than the control kNN" in to_latex(control)


def test_compare_cli_options(tmp_path, study):
    from knnx.results import rows_to_csv

    frame = _fold_results(study, n_train=90, n_test=10)
    path = tmp_path / "results.csv"
    path.write_text(rows_to_csv(frame.to_dict("records"), header=True))
    (tmp_path / "names.yaml").write_text("keel.iris: Iris\nmylab.LocalMeanKNN: LMkNN\n")
    args = ["compare", str(path), "--control", "knn", "--format", "latex"]
    done = runner.invoke(
        app,
        [
            *args,
            "--layout",
            "table*,resize,small",
            "--transpose",
            "--no-std",
            "--digits",
            "2",
            "--names",
            str(tmp_path / "names.yaml"),
        ],
    )
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(
        "% \\usepackage{booktabs,graphicx}\n\\begin{table*}[t]\n\\centering\n\\small\n"
    )
    assert " & Iris & keel.hayes-roth & " in done.stdout and "\nLMkNN & " in done.stdout
    assert re.search(r"\nrf & \$0\.\d\d\$ &", done.stdout)
    for bad, message in (
        (
            ["--layout", "table,landscape"],
            "error: --layout: one float and one size at most, got 'table,landscape'",
        ),
        (
            ["--layout", "wide"],
            "error: --layout: 'wide' is not a layout; known: table, table*, landscape, resize, small",
        ),
        (
            ["--columns", "rf,zz"],
            "error: --columns: 'zz' is not a column; known: 'n', 'd', 'classes', 'columns', 'knn_hvdm'",
        ),
        (
            ["--names", str(tmp_path / "none.yaml")],
            "error: --names: expected full, short or a YAML file of names",
        ),
    ):
        out = runner.invoke(app, [*args, *bad])
        assert out.exit_code == 2 and out.output.startswith(message) and out.output.count("\n") == 1, (
            out.output
        )
    assert parse_layout("landscape,resize,tiny") == ("landscape", True, "tiny")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine here")
@pytest.mark.parametrize("twocolumn", [False, True], ids=["one-column", "two-column"])
def test_every_layout_compiles_and_the_resized_ones_fit(table, tmp_path, twocolumn):
    """All 48 layouts in one document each way; those scaled to the line (resize) and,
    in two columns, spanning both (table*) leave no overfull line."""
    short = renamed(table, "short")
    body = "\\clearpage\n".join(to_latex(short, layout) for layout in LAYOUTS)  # floats placed as they come
    pdflatex(body, tmp_path, twocolumn)
    fitting = [
        x for x in LAYOUTS if (x.resize or x.float == "landscape") and (x.float != "table" or not twocolumn)
    ]
    body = "\\clearpage\n".join(to_latex(short, layout) for layout in fitting)
    log = pdflatex(body, tmp_path, twocolumn)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox \(([0-9.]+)pt", log)
