"""Every code example of README.md and docs/**/*.md runs, and the output a page shows is
the output it gives.

The rules (also written in docs/development.md, "Examples are tested"):

* a fenced block preceded by ``<!-- file: PATH -->`` is written to PATH (a spec, a
  module, data) in the page's temporary folder, and not run;
* ``python`` blocks run in order in one namespace per page; ``pycon`` blocks run as
  doctests in that namespace, so the output they show is checked;
* in ``bash`` blocks a line starting with ``knnx`` runs through typer's CliRunner and
  must exit 0, or 2 when the expected output starts with ``error:``; a ``text`` block
  right after a ``bash`` block of one ``knnx`` line is its output, compared line by line
  (trailing spaces ignored; a first line ``...`` shows the output's last lines only). Every other line is in NOT_RUN, the commands shown but not
  run, and the set of such lines in the pages must equal NOT_RUN exactly;
* other blocks (yaml, toml, text) are data and are not run.

Pages run in a temporary folder holding links to the repository's experiments/ and
datasets/, so ``knnx run experiments/ripley.yaml`` works as in a checkout.

The generated blocks of docs/**/*.md (the CLI reference, the spec schema, the dataset,
target and paper tables; docs/hooks/generate.py) are committed and must be current:
``test_generated_blocks_are_current`` makes them afresh and names any page that differs
(``make docs-generated`` rewrites them).
"""

import doctest
import functools
import io
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knnx.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))

# Commands shown in the pages that the test does not run: installs, the test suite and
# the build themselves, and the multi-minute paper targets. Exactly these, no more.
NOT_RUN = {
    "python3 -m venv .venv && . .venv/bin/activate",
    "make install",
    "make test",
    "make lint",
    "make docs",
    "make docs-generated",
    "make regress",
    "make reproduce",
    "make report",
    "make lpo-select",
    "make unn-ripley",
    "make cpw-synthetic",
    "make gnnb-large",
    "make mixed-data",
    "make prototype-reduction",
    "make metric-learning",
    "make publishable",
    "python -m knnx.experiment.precompile --jobs 2",
}

# Pages whose examples run the main job (experiments/ripley.yaml) or another full spec.
SLOW_PAGES = {"README.md", "docs/index.md"}


@dataclass
class Block:
    lang: str
    text: str
    line: int
    file: str | None


def read_blocks(page):
    """The fenced blocks of ``page`` in order, with the ``<!-- file: ... -->`` marker that
    precedes one, if any."""
    lines = (ROOT / page).read_text().split("\n")
    blocks, i, previous = [], 0, ""
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if m:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            marker = re.match(r"^<!-- file: (\S+) -->$", previous.strip())
            blocks.append(
                Block(m.group(1), "\n".join(lines[i + 1 : j]) + "\n", i + 1, marker and marker.group(1))
            )
            previous, i = "", j + 1
            continue
        if lines[i].strip():
            previous = lines[i]
        i += 1
    return blocks


def command_lines(block):
    """The command lines of a bash block (comments and blank lines dropped)."""
    out = []
    for line in block.text.splitlines():
        line = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            out.append(line)
    return out


def _normalise(text):
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


@pytest.fixture
def page_dir(tmp_path, monkeypatch):
    for name in ("experiments", "datasets"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("COLUMNS", "100")
    # names a page registers (knnx.register_algorithm, register_dataset) end with the test
    from knnx import datasets
    from knnx.estimators import registry as algorithms

    monkeypatch.setattr(algorithms, "ALGORITHMS", dict(algorithms.ALGORITHMS))
    monkeypatch.setattr(datasets, "REGISTERED", dict(datasets.REGISTERED))
    for name in [m for m in sys.modules if m == "mylab" or m.startswith("mylab.")]:
        monkeypatch.delitem(sys.modules, name)
    yield tmp_path
    for name in [m for m in sys.modules if m == "mylab" or m.startswith("mylab.")]:
        del sys.modules[name]


def run_page(page, folder):
    """Run every example of ``page`` in ``folder``; return the CLI outputs by command."""
    blocks = read_blocks(page)
    namespace = {"__name__": "__docs__"}
    outputs = {}
    cli = CliRunner()
    for index, block in enumerate(blocks):
        where = f"{page}:{block.line}"
        if block.file:
            path = folder / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text)
        elif block.lang == "python":
            exec(compile(block.text, where, "exec"), namespace)
        elif block.lang == "pycon":
            test = doctest.DocTestParser().get_doctest(block.text, namespace, where, page, block.line)
            report = io.StringIO()
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
            runner.run(test, out=report.write, clear_globs=False)
            namespace.update(test.globs)  # DocTest works on a copy of the namespace
            assert runner.failures == 0, f"{where}:\n{report.getvalue()}"
        elif block.lang == "bash":
            commands = [c for c in command_lines(block) if c.startswith("knnx ")]
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            expected = (
                following.text if following and following.lang == "text" and not following.file else None
            )
            if not commands:
                expected = None
            assert expected is None or len(commands) == 1, f"{where}: output shown after several commands"
            for command in commands:
                result = cli.invoke(app, shlex.split(command)[1:])
                wanted = 2 if expected and expected.startswith("error:") else 0
                assert result.exit_code == wanted, f"{where}: {command}\n{result.output}"
                if expected is not None and expected.startswith("...\n"):  # the output's last lines
                    tail = _normalise(expected[4:]).splitlines()
                    assert _normalise(result.output).splitlines()[-len(tail) :] == tail, f"{where}: {command}"
                elif expected is not None:
                    assert _normalise(result.output) == _normalise(expected), f"{where}: {command}"
                outputs[command] = result.output
    return outputs


def test_not_run_commands_are_exactly_the_listed_ones():
    shown = {
        line
        for page in PAGES
        for block in read_blocks(page)
        if block.lang == "bash" and not block.file
        for line in command_lines(block)
        if not line.startswith("knnx ")
    }
    assert shown == NOT_RUN


def test_every_block_has_a_known_kind():
    """A block of another language would silently escape the rules above."""
    for page in PAGES:
        for block in read_blocks(page):
            assert block.lang in {"python", "pycon", "bash", "text", "yaml", "toml"}, (page, block.line)


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_PAGES else p for p in PAGES]
)
def test_page_examples_run(page, page_dir):
    run_page(page, page_dir)
    if page == "README.md":  # the main job's figures are those of the run just made
        assert readme_ripley_errors() == ripley_errors(page_dir / "results" / "ripley" / "results.csv")


def readme_ripley_errors():
    """The main job's test errors as the README states them: {(weights, k): error}."""
    text = (ROOT / "README.md").read_text()
    ks = re.search(r"^\| k \| (.*) \|$", text, re.M).group(1).split(" | ")
    row = re.search(r"^\| test error \(uniform\) \| (.*) \|$", text, re.M).group(1).split(" | ")
    errors = {("uniform", int(k)): e.strip("*") for k, e in zip(ks, row, strict=True)}
    weighted = re.search(r"Distance-weighted: (k=\d+ [\d.]+(?:, k=\d+ [\d.]+)*)\.", text).group(1)
    for part in weighted.split(", "):
        k, e = re.match(r"k=(\d+) ([\d.]+)", part).groups()
        errors[("distance", int(k))] = e
    return errors


def ripley_errors(path):
    """Test errors of the main job's kNN rows in ``path``, rounded as the README rounds them."""
    from knnx.results import read_results

    frame = read_results(path)
    rows = frame[(frame.algorithm == "knn") & (frame.metric == "error")]
    return {
        (w, int(k)): f"{v:.3f}" for w, k, v in zip(rows.param_weights, rows.param_k, rows.value, strict=True)
    }


def test_readme_figures_equal_the_reference_results():
    """The README's main-job table equals the committed reference results, which CI checks
    a fresh run against with atol 0."""
    assert readme_ripley_errors() == ripley_errors(ROOT / "results" / "reference" / "ripley.csv")


def test_make_commands_shown_are_makefile_targets():
    """Every `make TARGET` a page shows (run or not) names a target of the Makefile."""
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", (ROOT / "Makefile").read_text(), re.M))
    shown = {line.split()[1] for line in NOT_RUN if line.startswith("make ")}
    assert shown <= targets, shown - targets
    assert {"install", "test", "docs"} <= shown


@functools.cache
def _hook():
    """The docs build hook (docs/hooks/generate.py), imported as mkdocs imports it (once:
    it keeps what its generators made)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "docs_hook_generate", ROOT / "docs" / "hooks" / "generate.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_paper_tables_are_the_snapshot_rows():
    """Every paper-table block the hook writes into a page is the snapshot's rows of that
    (target, table), rendered afresh here from docs/data/comparison.csv: same rows in the
    same order, each with our statistic and the paper's number at the declared digits;
    every declared table has exactly one block, and every table of the snapshot is shown."""
    from knnx.papers import load_target, target_names
    from knnx.papers.render import headline, headline_text, markdown_table, read_comparison

    hook = _hook()
    snapshot = read_comparison(ROOT / "docs" / "data" / "comparison.csv")
    declared = {f"{name}/{table.id}": table for name in target_names() for table in load_target(name).tables}
    shown = []
    for page in PAGES:
        source = (ROOT / page).read_text()
        built = hook.on_page_markdown(source, page=None, config=None, files=None)
        names = [name for name, _ in hook.paper_blocks(source)]
        assert [name for name, _ in hook.paper_blocks(built)] == names, page
        for name, body in hook.paper_blocks(built):
            table = declared[name]
            target, table_id = name.split("/")
            rows = snapshot[(snapshot.target == target) & (snapshot.table == table_id)]
            assert len(rows), f"{page}: {name} has no rows in docs/data/comparison.csv"
            expected = (
                f"**{table.title}** (`{name}`)\n\n{markdown_table(rows, table.digits)}\n\n"
                f"{headline_text(headline(rows))}.\n\n"
            )
            assert body == expected, f"{page}: {name}"
            # row by row: the table's body lines are the snapshot's rows, in order
            lines = [line for line in body.splitlines() if line.startswith("| ")][1:]
            assert len(lines) == len(rows), f"{page}: {name}"
            for line, (_, row) in zip(lines, rows.iterrows(), strict=True):
                cells = line[2:-2].split(" | ")
                assert cells[:2] == [str(row["row"]), str(row["column"])], f"{page}: {name}"
                ours = "-" if row["ours_mean"] != row["ours_mean"] else f"{row['ours_mean']:.{table.digits}f}"
                assert cells[2] == ours, f"{page}: {name}: {row['row']} {row['column']}"
                low, high, d = row["paper"], row["paper_high"], table.digits
                paper = "-" if low != low else f"{low:.{d}f}" + (f"-{high:.{d}f}" if high != low else "")
                assert cells[6] == paper, f"{page}: {name}: {row['row']} {row['column']}"
            shown.append(name)
    assert len(shown) == len(set(shown)), "a table shown twice"
    assert set(shown) == set(declared), set(declared) ^ set(shown)
    assert set(snapshot.target + "/" + snapshot.table) <= set(shown)


def test_generated_blocks_are_current():
    """Every generated block and paper table committed in docs/**/*.md is what the code and
    the committed data give now (docs/hooks/generate.py makes it afresh here and compares),
    and no page holds a marker line not yet filled. CI's check that the committed CLI
    reference, spec schema, dataset tables and paper tables are current."""
    hook = _hook()
    rows = hook.snapshot_rows()
    stale = {}
    for path in hook.pages():
        names = hook.stale_blocks(path.read_text(encoding="utf-8"), rows)
        if names:
            stale[str(path.relative_to(ROOT))] = names
    assert not stale, "\n".join(
        [f"{page}: not current: {', '.join(names)}" for page, names in stale.items()]
        + ["run `make docs-generated` (python docs/hooks/generate.py --write) and commit the pages"]
    )


def test_generated_blocks_are_where_the_pages_need_them():
    """The blocks a reader finds on GitHub (docs/*.md as stored), each on its page once."""
    hook = _hook()
    found = {}
    for path in hook.pages():
        for name, body in hook.generated_blocks(path.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
            assert body.strip(), f"{path}: generated block {name} is empty"
    assert found == {
        "cli": ["docs/cli.md"],
        "spec-schema": ["docs/spec.md"],
        "bundled-datasets": ["docs/datasets.md"],
        "suite-tables": ["docs/datasets.md"],
        "paper-targets": ["docs/reproducing.md"],
        "unn-uci-sensitivity": ["docs/papers/piro2012.md"],
        "unn-uci-readings": ["docs/papers/piro2012.md"],
        "algorithm-parameters": ["docs/spec.md"],
    }
    assert set(found) == set(hook.GENERATORS)


def test_generated_block_is_written_and_checked():
    """A marker line becomes a block; a stale block is named and rewritten; a block naming
    no generator fails the build."""
    hook = _hook()
    page = "# A page\n\n<!-- generated: spec-schema -->\n\nText after.\n"
    filled = hook.fill_page(page)
    assert hook.stale_blocks(page) == ["spec-schema (a marker line, not yet a block)"]
    assert hook.stale_blocks(filled) == []
    assert filled.startswith("# A page\n\n<!-- generated: spec-schema (make docs-generated) -->\n\n")
    assert filled.endswith("\n\n<!-- end generated: spec-schema -->\n\nText after.\n")
    assert hook.generated_blocks(filled) == [("spec-schema", f"\n{hook.generated('spec-schema')}\n\n")]
    edited = filled.replace("| `name` |", "| `the name` |")
    assert edited != filled and hook.stale_blocks(edited) == ["spec-schema"]
    assert hook.fill_page(edited) == filled
    with pytest.raises(ValueError, match="no such generator"):
        hook.fill_page("<!-- generated: nothing -->\n")


def test_generated_blocks_command(tmp_path, monkeypatch, capsys):
    """`python docs/hooks/generate.py` (main) lists the stale pages and exits 1; with
    `--write` (make docs-generated) it rewrites them, and then they are current."""
    hook = _hook()
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# A page\n\n<!-- generated: paper-targets -->\n", encoding="utf-8")
    monkeypatch.setattr(hook, "ROOT", tmp_path)
    monkeypatch.setattr(hook, "pages", lambda: [page])
    assert hook.main([]) == 1
    out = capsys.readouterr().out
    assert "not current: docs/page.md (paper-targets (a marker line, not yet a block))" in out
    assert "run `make docs-generated`" in out
    assert hook.main(["--write"]) == 0
    assert page.read_text(encoding="utf-8") == hook.fill_page(
        "# A page\n\n<!-- generated: paper-targets -->\n"
    )
    assert hook.main([]) == 0
    assert "every generated block of docs/ is current" in capsys.readouterr().out


def test_paper_table_marker_naming_no_declared_table_fails_the_build():
    hook = _hook()
    page = "<!-- paper-table: unn-uci/table9 -->\n<!-- /paper-table: unn-uci/table9 -->\n"
    with pytest.raises(ValueError, match="declares no table 'table9'"):
        hook.on_page_markdown(page, page=None, config=None, files=None)


def test_declaration_shown_is_the_file():
    """The declaration docs/reproducing.md shows whole is knnx/papers/targets/unn-uci.yaml
    as it is."""
    shown = [
        b.text for b in read_blocks("docs/reproducing.md") if b.lang == "yaml" and "target: unn-uci" in b.text
    ]
    assert shown == [(ROOT / "knnx" / "papers" / "targets" / "unn-uci.yaml").read_text()]


def test_every_paper_page_links_the_errata_page():
    pages = sorted((ROOT / "docs" / "papers").glob("*.md"))
    assert {p.stem for p in pages} >= {
        "celisse2011",
        "piro2012",
        "dambrosio2012",
        "nock2014",
        "paredes2006",
        "errata",
    }
    for page in pages:
        if page.stem != "errata":
            assert "](errata.md)" in page.read_text(encoding="utf-8"), page.name


def test_the_errata_on_paredes_table2_hold_on_the_transcribed_values():
    """docs/papers/errata.md: Table 2's Average row at beta = 32 (19.10) is not the mean of
    its 12 values (19.06), the other five are (to 0.01); the StdD column is the population
    sd of each row's six beta values over sqrt(6), within 0.01 (recomputed from rounded errors)."""
    import numpy as np
    import pandas as pd

    table = pd.read_csv(ROOT / "experiments" / "paper_values" / "cpw_table2.csv")
    betas = ["b0.125", "b0.5", "b2", "b8", "b32", "b128"]
    sets, average = table[table.dataset != "average"], table[table.dataset == "average"].iloc[0]
    assert len(sets) == 12
    means = sets[betas].astype(float).mean()
    assert round(means["b32"], 2) == 19.06 and average["b32"] == 19.10
    for beta in betas[:4] + betas[5:]:
        assert abs(means[beta] - average[beta]) <= 0.005 + 1e-9, beta
    values = sets[betas].astype(float).to_numpy()
    # within 0.01: recomputed from the printed (rounded) errors
    np.testing.assert_allclose(values.std(axis=1, ddof=0) / np.sqrt(6), sets["stdd"], atol=0.01)
    assert not np.allclose(values.std(axis=1, ddof=1) / np.sqrt(6), sets["stdd"], atol=0.01)


def test_the_sensitivity_tables_on_the_piro_page_are_the_committed_summary():
    """The Piro et al. page shows UNN's sensitivity study from docs/data (the output of
    experiments/unn_uci_sensitivity.py on the run of make unn-uci-sensitivity): each row of
    the built tables is a row of the CSV, and the CSV is consistent with itself (the
    oracle over all settings is at most the oracle within any level of any factor and at
    most any reading's best at the paper's k; the best keeping at most 40 % is no better
    than the best; the readings table has one row per metric x loss x smoothing)."""
    import pandas as pd

    hook = _hook()
    source = (ROOT / "docs" / "papers" / "piro2012.md").read_text()
    built = hook.on_page_markdown(source, page=None, config=None, files=None)
    study = pd.read_csv(ROOT / "docs" / "data" / "unn_uci_sensitivity.csv")
    readings = pd.read_csv(
        ROOT / "docs" / "data" / "unn_uci_sensitivity_readings.csv", keep_default_na=False, na_values=[""]
    )
    assert [name for name, body in hook.generated_blocks(built) if body.strip()] == [
        "unn-uci-sensitivity",
        "unn-uci-readings",
    ]
    rows = [line for line in built.splitlines() if line.startswith("| ")]
    for _, r in study.iterrows():
        line = next(x for x in rows if x.startswith(f"| {r['dataset']} | {r['k']} |"))
        cells = line[2:-2].split(" | ")
        assert cells[6].startswith(f"{r['best']:.1f} [") and cells[7] == r["best_setting"]
        assert cells[9] == f"{r['reach']}/{r['n_settings']}"
    factor = [
        c for c in study.columns if c.startswith(("best_metric_", "best_loss_", "best_smoothing_", "best_k_"))
    ]
    assert (study[factor].min(axis=1) == study["best"]).all()  # the best is the best of some level
    assert (study[factor].fillna(float("inf")).ge(study["best"], axis=0)).all().all()
    assert (study["best_retained_40"] >= study["best"]).all() and (
        study["reach"] <= study["n_settings"]
    ).all()
    assert (study["best_low"] <= study["best"]).all() and (study["best"] <= study["best_high"]).all()
    ours = readings[readings["metric"] != "paper"]
    assert len(ours) == 2 * 3 * 3 and not ours.duplicated(["metric", "loss", "smoothing"]).any()
    for _, r in study.iterrows():
        assert (ours[r["dataset"]] >= r["best"] - 1e-9).all(), r["dataset"]
    paper = readings[readings["metric"] == "paper"].iloc[0]
    assert paper["iris"] == pytest.approx(study.set_index("dataset").loc["iris", "paper_unn"])
    default = ours[(ours["metric"] == "euclidean") & (ours["loss"] == "exp") & (ours["smoothing"] == "raw")]
    shown = next(x for x in rows if x.startswith("| euclidean | exp | raw |"))
    assert shown.split(" | ")[3] == f"{default['iris'].iloc[0]:.1f}"


def test_the_readme_stays_short():
    """The README tells how to install, run and test, and points to the pages for the
    rest: at most 250 lines."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
