"""One rule for names (knnx._text.name_problem): what validation accepts as a dataset id,
an algorithm id or a printed name, knnx writes, every reader reads back, and every
command prints as written (CSV, Markdown, LaTeX, HTML, figures); what it refuses is
refused in one line wherever the name enters (the spec, the results file, --names)."""

import csv
import html.parser
import io
import re
import shutil
import unicodedata

import pandas as pd
import pytest
import yaml
from conftest import pdflatex
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pydantic import TypeAdapter, ValidationError
from typer.testing import CliRunner

from knnx import run_spec, validate_spec
from knnx._text import MAX_NAME, name_problem
from knnx.cli import app
from knnx.errors import KnnxError, ResultsError
from knnx.reporting.latex import latex_escape
from knnx.results import read_results
from knnx.spec.schema import Name

# Pieces a name is drawn from: blanks and invisible characters, control characters, a
# lone surrogate, the specials of CSV, LaTeX, HTML and Markdown, other scripts.
PIECES = [
    *[
        "",
        " ",
        "\t",
        "\u00a0",
        "\u3000",
        "\u200b",
        "\u200d",
        "\ufeff",
        "\u00ad",
        "\u3164",
        "\u2800",
        "\ufe0f",
    ],
    *["\u0301", "\u034f"],
    *["\x00", "\x07", "\n", "\r", "\x1b[31m", "\x85", "\u2028", "\u202e", "\u2066", "\ud800"],
    *[",", '"', "'", "=", "&", "<b>", "&amp;", "</td>", "%", "$", "#", "_", "{", "}", "~", "^", "\\"],
    *["|", "*", "`", "[", "](", "![x](y)", "<http://x>", "~~"],
    *["é", "e\u0301", "数据", "🧪", "بيانات", "x", "knn", "1", "nan", "None", ".."],
]
NAMES = st.one_of(
    st.lists(st.sampled_from(PIECES) | st.text(max_size=3), min_size=1, max_size=6).map("".join),
    st.text(max_size=12),
    st.integers(MAX_NAME - 2, MAX_NAME + 2).map(lambda n: "é" * n),
)
ALGORITHM_IDS = st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True).filter(lambda t: set(t) != {"."})

HEAD = "name: names\nseed: 0\nprotocol: {kind: kfold, folds: 2}\nmetrics: [error]\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A folder with a 2-class CSV (24 rows) and a results file of one small run."""
    folder = tmp_path_factory.mktemp("names")
    (folder / "d.csv").write_text(
        "a,b,label\n" + "".join(f"{i % 5},{(3 * i) % 7},{i % 2}\n" for i in range(24))
    )
    spec = folder / "base.yaml"
    spec.write_text(HEAD + "datasets: [{csv: d.csv, id: plain}]\nalgorithms: [{name: knn, params: {k: 1}}]\n")
    run_spec(spec, out=folder / "base", figures=False)
    return folder


def _spec(folder, ids, algorithms=("knn",), file="s.yaml", unicode=False):
    spec = {
        "name": "names",
        "seed": 0,
        "protocol": {"kind": "kfold", "folds": 2},
        "metrics": ["error"],
        "datasets": [{"csv": "d.csv", "label": "label", "id": i} for i in ids],
        "algorithms": [{"name": "knn", "id": a, "params": {"k": [1, 3]}} for a in algorithms],
    }
    path = folder / file
    path.write_text(yaml.safe_dump(spec, allow_unicode=unicode), encoding="utf-8", errors="surrogatepass")
    return path


def _results_with(base, column, text, path):
    """A copy of the base run's results file with every ``column`` cell set to ``text``."""
    rows = list(csv.reader(io.StringIO((base / "results.csv").read_text(), newline="")))
    j = rows[0].index(column)
    for row in rows[1:]:
        row[j] = text
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(rows)  # a "\r" quoted too
    path.write_text(out.getvalue(), encoding="utf-8", newline="")
    return path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, unicode=st.booleans())
@example(name=" lead", unicode=True)
@example(name="\u200b", unicode=True)
@example(name="x\x85", unicode=True)
@example(name="\u202eabc", unicode=False)
@example(name="50% & $x^2$ #1 {}~\\", unicode=True)
def test_validation_and_the_results_reader_apply_one_rule(data, tmp_path, name, unicode):
    """A drawn dataset id is accepted by validation exactly when name_problem says it is
    a name (the spec written with escapes or with raw Unicode), and a results file
    holding it in any name column is read back exactly then, with the same text."""
    problem = name_problem(name)
    try:
        spec = _spec(data, [name], unicode=unicode, file=f"rule-{tmp_path.name}.yaml")
    except UnicodeEncodeError:  # a lone surrogate written raw: no UTF-8 file holds it
        assert problem is not None
        return
    try:
        validated = validate_spec(spec)
    except KnnxError as exc:
        assert problem is not None, f"{name!r} refused: {exc}"
        assert "\n" not in str(exc)
    else:
        assert problem is None, f"{name!r} accepted, yet {problem}"
        assert [d.name for d in validated.datasets] == [name]
    if re.search("[\ud800-\udfff]", name):
        return  # no results file can hold a lone surrogate either
    for column in ("dataset", "algorithm", "metric", "experiment"):
        if column == "metric" and problem is None:
            continue  # a metric must also be one of knnx's; names refused alike are enough here
        path = _results_with(data / "base", column, name, tmp_path / f"{column}.csv")
        try:
            frame = read_results(path)
        except ResultsError as exc:
            assert problem is not None, f"{column} {name!r} refused: {exc}"
            assert str(exc).startswith(f"{path}: column '{column}' line 2: ")
            assert "\n" not in str(exc)
        else:
            assert problem is None, f"{column} {name!r} read, yet {problem}"
            assert set(frame[column]) == {name}


@given(ALGORITHM_IDS | NAMES)
@settings(max_examples=300, deadline=None)
def test_an_algorithm_id_is_a_name(text):
    """Algorithm ids (and experiment names, which name folders) are the names made of
    letters, digits and _.-: every id the schema accepts is a name."""
    try:
        TypeAdapter(Name).validate_python(text)
    except ValidationError:
        return
    assert name_problem(text) is None and len(text) <= 100


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "is empty"),
        ("  ", "is blank (it has no visible character)"),
        ("\u200b\ufeff", "is blank (it has no visible character)"),
        (" x", "starts with a blank (U+0020); a name starts and ends with a visible character"),
        ("x\u00a0", "ends with a blank (U+00A0); a name starts and ends with a visible character"),
        (
            "x\u200b",
            "ends with an invisible character (U+200B); a name starts and ends with a visible character",
        ),
        (
            "a\u3164",
            "ends with an invisible character (U+3164); a name starts and ends with a visible character",
        ),
        ("\u2800", "is blank (it has no visible character)"),
        (
            "a\ufe0f",
            "ends with an invisible character (U+FE0F); a name starts and ends with a visible character",
        ),
        ("\u0301a", "starts with a combining mark (U+0301); a name starts with a character of its own"),
        ("a\rb", "holds a control character U+000D at position 2"),
        ("ab\u202e", "holds a bidirectional control U+202E at position 3"),
        ("x\ud800", "holds a lone surrogate U+D800 at position 2 (no character)"),
        ("é" * (MAX_NAME + 1), f"has {MAX_NAME + 1:,} characters; at most {MAX_NAME:,}"),
        (3, "is not a text (int)"),
    ],
)
def test_what_is_no_name_and_why(name, problem):
    assert name_problem(name) == problem


@pytest.mark.parametrize(
    "name", ["a b", "é数据", "e\u0301", "x\u200dy", "<b>&amp;</b>", "a|b\\", "🧪", "é" * MAX_NAME]
)
def test_names(name):
    assert name_problem(name) is None


# --- every command prints a name as written ------------------------------------------


class _Cells(html.parser.HTMLParser):
    """The texts of an HTML document's table cells, and of the whole document."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.cells, self.texts, self.tags, self._cell = [], [], [], False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self.cells.append("")
            self.tags.append([])
            self._cell = True
        elif self._cell:
            self.tags[-1].append(tag)

    def handle_endtag(self, tag):
        self._cell = self._cell and tag not in ("td", "th")

    def handle_data(self, text):
        self.texts.append(text)
        if self._cell:
            self.cells[-1] += text


_MARKDOWN = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _markdown_column(text):
    """The first column of the first Markdown table of ``text`` as a renderer shows it,
    and the markup tags found in it."""
    table = text[text.index("|") :].split("\n\n")[0] + "\n"
    document = _Cells(_MARKDOWN.render(table))
    width = table.splitlines()[1].count("|") - 1
    assert len(document.cells) % width == 0
    return document.cells[width::width], [t for tags in document.tags[width::width] for t in tags]


_UNLATEX = {tex: ch for ch, tex in [(c, latex_escape(c)) for c in "\\~^<>|_{}&%#$"]}


def _latex_column(text):
    """The first cell of each row of a LaTeX tabular, its escapes undone."""
    rows = text.split("\\midrule\n")[1].split("\\bottomrule")[0].split(" \\\\\n")
    pattern = re.compile("|".join(re.escape(t) for t in sorted(_UNLATEX, key=len, reverse=True)))
    firsts = [row.split(" & ")[0] for row in rows if row.strip()]
    assert not any(f.startswith(("[", "*")) for f in firsts)  # read as \\\\'s or \\midrule's argument
    firsts = [f.removeprefix("{}") for f in firsts]  # what protects a leading [ or *
    assert not any(re.search(r"(?<!\\)[&%#$_{}]", pattern.sub("", f)) for f in firsts)
    return [pattern.sub(lambda m: _UNLATEX[m.group()], f) for f in firsts]


def _cli(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


# Runs are slow to shrink: a failure is shown as drawn (and replayed first from the database).
@settings(
    max_examples=4,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    names=st.lists(NAMES, min_size=2, max_size=4),
    algorithms=st.lists(ALGORITHM_IDS, min_size=1, max_size=2, unique=True),
    printed=NAMES,
)
@example(
    names=["a|b\\", "<b>&amp;</b>", "50% & $x^2$ #1 {}~^_", "*x* _y_ `z` [l](u) ~~s~~", "[d] first"],
    algorithms=["knn", "knn_b"],
    printed="数据 & <i>",
)
@example(names=["é数据 🧪", " lead", "\u200b", "é" * MAX_NAME], algorithms=["1"], printed="$\\frac$")
def test_names_are_written_read_and_printed_as_written(data, tmp_path, names, algorithms, printed):
    """validate -> run -> results -> table, compare, report, plot: the names validation
    accepts come back from results.csv and from every format as written; one it
    refuses is refused by validate and run in one line, nothing written."""
    alike = {}  # one name per NFC form: the spec refuses two that print alike
    for n in names:
        if name_problem(n) is None and n != "plain":
            alike.setdefault(unicodedata.normalize("NFC", n), n)
    names = list(alike.values())
    refused = next((n for n in [*names, printed] if name_problem(n) is not None), None)
    folder = tmp_path / f"e2e{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "d.csv").write_text((data / "d.csv").read_text())
    if refused is not None and isinstance(refused, str) and not re.search("[\ud800-\udfff]", refused):
        spec = _spec(folder, [refused], file="refused.yaml")
        before = sorted(folder.rglob("*"))
        for args in (["validate", spec], ["run", spec, "--quiet", "--out", folder / "o"]):
            result = CliRunner().invoke(app, [str(a) for a in args])
            assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
            assert result.output.startswith(
                f"error: {spec}: "
            )  # datasets[0]: id, or the line of a YAML escape
        assert sorted(folder.rglob("*")) == before
        spec.unlink()
    if not names:
        return
    ids = [*names, "plain"]
    spec = _spec(folder, ids, algorithms, unicode=True)
    out = folder / "out"
    run_spec(spec, out=out)
    results = out / "results.csv"
    assert sorted(set(read_results(results)["dataset"])) == sorted(ids)
    assert sorted(set(pd.read_csv(results, keep_default_na=False, dtype=str)["dataset"])) == sorted(ids)

    tables = {fmt: _cli("table", results, "--format", fmt) for fmt in ("md", "csv", "latex")}
    assert set(pd.read_csv(io.StringIO(tables["csv"]), keep_default_na=False, dtype=str)["dataset"]) == set(
        ids
    )
    column, tags = _markdown_column(tables["md"])
    assert set(column) == set(ids) and not tags
    assert set(_latex_column(tables["latex"])) == set(ids)

    compared = {
        fmt: _cli("compare", results, "--select", "all", "--format", fmt) for fmt in ("md", "latex", "html")
    }
    column, tags = _markdown_column(compared["md"])
    assert set(column) == {*ids, "average rank"} and not tags
    assert set(ids) <= set(_latex_column(compared["latex"]))
    assert set(ids) <= set(_Cells(compared["html"]).cells)

    (folder / "names.yaml").write_text(
        yaml.safe_dump({names[0]: printed}, allow_unicode=True), encoding="utf-8"
    )
    renamed = ["compare", results, "--select", "all", "--names", folder / "names.yaml"]
    taken = {unicodedata.normalize("NFC", i) for i in ids[1:]}  # another row printed alike: refused
    if name_problem(printed) is None and unicodedata.normalize("NFC", printed) not in taken:
        column, tags = _markdown_column(_cli(*renamed))
        assert set(column) == {printed, *ids[1:], "average rank"} and not tags
    else:
        result = CliRunner().invoke(app, [str(a) for a in renamed])
        assert result.exit_code == 2 and result.output.count("\n") == 1
        said = (
            "two datasets would print as"
            if name_problem(printed) is None
            else f"{folder / 'names.yaml'}: "  # the rule's line, or YAML's with its line and column
        )
        assert result.output.startswith("error: --names: ") and said in result.output
    _cli("compare", results, "--select", "all", "--out", folder / "cmp")
    assert {"cd.svg", "cd.png", "table.md"} <= {p.name for p in (folder / "cmp").iterdir()}

    _cli("report", out)
    page = _Cells((out / "report.html").read_text(encoding="utf-8"))
    assert set(ids) <= set(page.cells)
    _cli("plot", results, "--out", folder / "error.png")
    assert (folder / "error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine here")
def test_names_escaped_for_latex_compile_after_a_row_end_and_a_rule(tmp_path):
    """A dataset '[d] first' after \\\\ or \\midrule was read as their optional argument
    (pdflatex: "Missing number"), and '*star' lost its star; the specials compile."""
    names = ["[d] first", "*star", "<b>|x", "50% & $x^2$ #1 {}~^_\\", "a\\", "]"]
    rows = "".join(f"{latex_escape(n)} & 1 \\\\\n" for n in names)
    body = f"\\begin{{tabular}}{{lr}}\n\\toprule\nname & x \\\\\n\\midrule\n{rows}\\bottomrule\n\\end{{tabular}}\n"
    pdflatex(body, tmp_path)  # it compiles, with no missing character
    assert (tmp_path / "t.pdf").read_bytes()[:4] == b"%PDF"


def test_the_progress_line_shows_a_name_as_written(monkeypatch):
    """A dataset id '[bold]x[/bold] [l] y' showed as 'x  y' in knnx run's progress line
    (rich read it as markup); the files held it as written."""
    import io

    from knnx.cli import core

    buffer = io.StringIO()
    monkeypatch.setattr(core.err_console, "_file", buffer)  # "file" would pin stderr once restored
    with core.progress_bar("t", "cells") as progress:
        progress(1, 2, "cell [bold]x[/bold] [l] y knn", eta_seconds=None)
    assert "cell [bold]x[/bold] [l] y knn" in buffer.getvalue()
