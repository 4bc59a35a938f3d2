"""The generated parts of the documentation: written into the pages, checked current.

A generated block of a page sits between two comment lines,
``<!-- generated: NAME (make docs-generated) -->`` and ``<!-- end generated: NAME -->``,
and holds the text that the generator NAME makes from the code, committed, so that the
page reads whole where it is stored (GitHub renders ``docs/*.md``). ``make
docs-generated`` (``python docs/hooks/generate.py --write``) rewrites every block that
is not current; ``tests/test_docs.py`` fails, naming the page and the block, when one is
not (``python docs/hooks/generate.py`` without ``--write`` lists them and exits 1). As an
mkdocs hook the module fills the blocks again when the site is built, so the site shows
the code being built. A line holding only ``<!-- generated: NAME -->`` becomes such a
block (the way to add one); a block naming no generator fails. The generators:

* ``spec-schema``: every key of a spec, from the pydantic models of
  :mod:`knnx.spec.schema` and :mod:`knnx.spec.active` (type, default, allowed values, description);
* ``paper-targets``: the declared paper targets of ``knnx/papers/targets`` (paper, what
  each runs, its tables);
* ``cli``: every command of the ``knnx`` command line, from the typer app of
  :mod:`knnx.cli` (usage, arguments and options with their help and defaults);
* ``bundled-datasets``: the datasets of ``datasets/`` as loaded with their default
  treatments (:func:`knnx.datasets.describe_bundled`, what ``knnx datasets`` lists);
* ``suite-tables``: the datasets of every benchmark suite, from
  ``datasets/suites/MANIFEST.json`` (:func:`knnx.datasets.suites.describe_suite`);
* ``unn-uci-sensitivity``: UNN's sensitivity study on Piro et al.'s Table 2, from
  ``docs/data/unn_uci_sensitivity.csv`` (the summary written by
  ``experiments/unn_uci_sensitivity.py`` in ``make unn-uci-sensitivity``), and
  ``unn-uci-readings`` its per-reading table (``docs/data/unn_uci_sensitivity_readings.csv``).

A paper page's side-by-side table sits between two marker lines,
``<!-- paper-table: TARGET/TABLE -->`` and ``<!-- /paper-table: TARGET/TABLE -->``, and is
written and checked the same way, from the committed snapshot of comparison rows,
``docs/data/comparison.csv``: the table's title (from the target's declaration,
:func:`knnx.papers.load_target`), its rows rendered by
:func:`knnx.papers.render.markdown_table` with the declared digits, and the headline counts
(:func:`knnx.papers.render.headline_text`). Nothing is parsed back from rendered text. A
block naming no declared table fails; a declared table without rows in the snapshot
shows one line saying so.
"""

import argparse
import enum
import json
import logging
import re
import sys
import types
import typing
from pathlib import Path

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

# The knnx beside this file, not another installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
COMMAND = "make docs-generated"

# generator name -> function returning the block's Markdown
GENERATORS = {}


def generator(name):
    def register(func):
        GENERATORS[name] = func
        return func

    return register


def on_pre_build(config):
    _generated.clear()  # mkdocs serve: each build generates afresh


def on_page_markdown(markdown, page, config, files):
    built = fill_page(markdown)
    if built != markdown:  # the site shows the fresh text; the page as stored is behind it
        logging.getLogger("mkdocs.hooks.generate").info(
            "%s: generated blocks not current (%s); run `%s`",
            getattr(getattr(page, "file", None), "src_uri", "a page"),
            ", ".join(stale_blocks(markdown)),
            COMMAND,
        )
    return built


# --- generated blocks -------------------------------------------------------------------------

GENERATED_BLOCK = re.compile(
    r"^<!-- generated: (?P<name>[\w.-]+)(?: \([^)\n]*\))? -->\n(?P<body>.*?)^<!-- end generated: (?P=name) -->$",
    re.M | re.S,
)
LONE_MARKER = re.compile(r"^<!-- generated: (?P<name>[\w.-]+) -->$", re.M)

# name -> text: each generator runs once per process (the datasets' table loads them all)
_generated = {}


def generated(name):
    """The Markdown of generator ``name``, trailing spaces and blank edges removed."""
    if name not in GENERATORS:
        raise ValueError(f"generated block {name!r}: no such generator; known: {', '.join(GENERATORS)}")
    if name not in _generated:
        text = GENERATORS[name]().strip("\n")
        _generated[name] = "\n".join(line.rstrip() for line in text.split("\n"))
    return _generated[name]


def generated_block(name):
    """Block ``name`` as a page holds it, its two comment lines included."""
    return f"<!-- generated: {name} ({COMMAND}) -->\n\n{generated(name)}\n\n<!-- end generated: {name} -->"


def generated_blocks(markdown):
    """``[(name, body)]``: the generated blocks of a page in order (body: the text between
    the comment lines)."""
    return [(m.group("name"), m.group("body")) for m in GENERATED_BLOCK.finditer(markdown)]


def fill_generated(markdown):
    """``markdown`` with every generated block, and every line holding only a marker,
    written afresh."""
    markdown = GENERATED_BLOCK.sub(lambda m: generated_block(m.group("name")), markdown)
    return LONE_MARKER.sub(lambda m: generated_block(m.group("name")), markdown)


def fill_page(markdown, rows=None):
    """``markdown`` with its generated blocks and paper tables written afresh."""
    return fill_paper_tables(fill_generated(markdown), rows)


def pages():
    """The documentation's Markdown pages (docs/**/*.md but the hooks')."""
    return sorted(p for p in DOCS.rglob("*.md") if DOCS / "hooks" not in p.parents)


def stale_blocks(markdown, rows=None):
    """The names of the blocks of ``markdown`` (generated blocks, lone markers and paper
    tables) whose text is not what the code and the committed data give now."""
    fresh = fill_page(markdown, rows)
    if fresh == markdown:
        return []
    old = dict(generated_blocks(markdown) + paper_blocks(markdown))
    new = dict(generated_blocks(fresh) + paper_blocks(fresh))
    stale = [name for name in old if old[name] != new.get(name)]
    stale += [f"{m.group('name')} (a marker line, not yet a block)" for m in LONE_MARKER.finditer(markdown)]
    return stale or ["a block's comment lines"]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="docs/hooks/generate.py",
        description="Check, or with --write rewrite, the generated blocks and paper tables of docs/**/*.md.",
    )
    parser.add_argument(
        "--write", action="store_true", help="rewrite every page whose blocks are not current"
    )
    args = parser.parse_args(argv)
    rows = snapshot_rows()
    stale = {}
    for path in pages():
        text = path.read_text(encoding="utf-8")
        names = stale_blocks(text, rows)
        if names:
            stale[path] = names
            if args.write:
                path.write_text(fill_page(text, rows), encoding="utf-8")
    for path, names in stale.items():
        verb = "rewrote" if args.write else "not current:"
        print(f"{verb} {path.relative_to(ROOT)} ({', '.join(names)})")
    if args.write or not stale:
        print(f"every generated block of docs/ is current ({len(GENERATORS)} generators, paper tables)")
        return 0
    print(f"run `{COMMAND}` to rewrite them")
    return 1


@generator("paper-targets")
def paper_targets():
    import yaml

    from knnx.papers import target_names
    from knnx.papers.declaration import TARGETS_DIR, Target

    lines = [
        "Generated from `knnx/papers/targets/*.yaml` by `make docs-generated` "
        "(`knnx reproduce --list` prints the titles). `{VAR}` is a variable of the target, "
        "set by `--var VAR=VALUE` (default in parentheses, when short).",
        "",
        "| target | paper | variables | runs | tables |",
        "|---|---|---|---|---|",
    ]
    for name in target_names():
        target = Target.model_validate(yaml.safe_load((TARGETS_DIR / f"{name}.yaml").read_text()))
        runs = []
        for run in target.runs:
            if run.command is not None:
                runs.append(f"command `{run.command}`")
            else:
                sets = "".join(f" `--set {k}={v}`" for k, v in run.set.items())
                runs.append(f"`{run.spec}` → `{run.out}`{sets}")
        variables = ", ".join(
            f"`{k}` ({v})" if len(str(v)) <= 20 else f"`{k}`" for k, v in target.variables.items()
        )
        tables = ", ".join(f"`{t.id}`" for t in target.tables) or "none declared"
        lines.append(
            f"| `{name}` | {target.paper} | {variables or '-'} | {_cell('; '.join(runs))} | {tables} |"
        )
    return "\n".join(lines) + "\n"


# --- paper tables ------------------------------------------------------------------------------

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "comparison.csv"
PAPER_BLOCK = re.compile(
    r"^<!-- paper-table: (?P<name>[\w.-]+/[\w.-]+) -->\n(?P<body>.*?)^<!-- /paper-table: (?P=name) -->$",
    re.M | re.S,
)


def paper_blocks(markdown):
    """``[(name, body)]``: the paper-table blocks of a page in order (body: the text
    between the marker lines)."""
    return [(m.group("name"), m.group("body")) for m in PAPER_BLOCK.finditer(markdown)]


def snapshot_rows(path=SNAPSHOT):
    """The snapshot's comparison rows, read back as written (:func:`read_comparison`)."""
    from knnx.papers.render import read_comparison

    return read_comparison(path)


def paper_table(name, rows):
    """The markdown of block ``name`` (``TARGET/TABLE``) from the comparison ``rows``."""
    from knnx.errors import SpecError
    from knnx.papers import load_target
    from knnx.papers.render import headline, headline_text, markdown_table

    target_name, table_id = name.split("/", 1)
    try:
        target = load_target(target_name)
    except SpecError as exc:
        raise ValueError(f"paper-table {name}: {exc}") from None
    tables = {t.id: t for t in target.tables}
    if table_id not in tables:
        raise ValueError(
            f"paper-table {name}: {target_name} declares no table {table_id!r}; it has {', '.join(tables)}"
        )
    table = tables[table_id]
    mine = rows[(rows["target"] == target_name) & (rows["table"] == table_id)]
    lines = [f"**{table.title}** (`{name}`)", ""]
    if len(mine) == 0:
        return "\n".join(lines + ["No rows of this table in `docs/data/comparison.csv`.", ""])
    lines += [markdown_table(mine, table.digits), "", headline_text(headline(mine)) + ".", ""]
    return "\n".join(lines)


def fill_paper_tables(markdown, rows=None):
    """``markdown`` with every paper-table block filled from ``rows`` (default: the
    snapshot)."""
    if not PAPER_BLOCK.search(markdown):
        return markdown
    rows = snapshot_rows() if rows is None else rows

    def block(m):
        name = m.group("name")
        return f"<!-- paper-table: {name} -->\n{paper_table(name, rows)}\n<!-- /paper-table: {name} -->"

    return PAPER_BLOCK.sub(block, markdown)


# --- spec schema ------------------------------------------------------------------------------


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _html_text(text):
    """Prose with ``<`` escaped: ``results/<spec name>`` would be an HTML tag, not shown."""
    return text.replace("<", "&lt;")


def _type_name(annotation):
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping {_type_name(args[0])} → {_type_name(args[1])}" if args else "mapping"
    if annotation is typing.Any:
        return "any YAML value"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


_BOUNDS = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤", "min_length": "length ≥", "max_length": "length ≤"}


def _constraints(field: FieldInfo):
    parts = []
    metadata = list(field.metadata)
    if typing.get_origin(field.annotation) is typing.Annotated:
        metadata += list(typing.get_args(field.annotation)[1:])
    for item in metadata:
        if isinstance(item, FieldInfo):
            metadata.extend(item.metadata)
            continue
        for attr, sign in _BOUNDS.items():
            value = getattr(item, attr, None)
            if value is not None and isinstance(item, annotated_types.BaseMetadata):
                parts.append(
                    f"{sign} {value:_}".replace("_", " ") if isinstance(value, int) else f"{sign} {value}"
                )
        pattern = getattr(item, "pattern", None)
        if pattern:
            parts.append(f"matches `{pattern}`")
    return ", ".join(dict.fromkeys(parts))


def _default(field: FieldInfo):
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            value = value.model_dump()
        return f"`{json.dumps(value)}`"
    if field.default is PydanticUndefined:
        return "required"
    return f"`{json.dumps(field.default)}`"


def _model_table(model):
    doc = (model.__doc__ or "").strip()
    lines = [f"### {model.__name__}", ""]
    if doc and not doc.startswith("!!!") and model.__doc__ is not BaseModel.__doc__:
        lines += [" ".join(doc.split()), ""]
    lines += ["| key | type | default | constraints |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        lines.append(
            f"| `{name}` | {_cell(_type_name(field.annotation))} | {_cell(_default(field))} "
            f"| {_cell(_constraints(field))} |"
        )
    return lines + [""]


@generator("spec-schema")
def spec_schema():
    from knnx import spec
    from knnx.estimators.registry import ALIASES, BUILTIN
    from knnx.evaluation.metrics import METRIC_INPUT
    from knnx.evaluation.protocols import PROTOCOLS

    models = [spec.Spec, spec.AlgorithmEntry, spec.StepEntry, spec.Tune, spec.Preprocess, spec.Report]
    protocols = typing.get_args(typing.get_args(spec.Protocol)[0])
    lines = [
        "Generated from the pydantic models of `knnx/spec/schema.py` and `knnx/spec/active.py` by "
        "`make docs-generated`. "
        "Unknown keys are refused (`extra = forbid`) and values are not coerced (`strict`): "
        '`k: "3"` is a string, not a number.',
        "",
    ]
    for model in models:
        lines += _model_table(model)
    lines += ["### protocol", "", "`protocol` is one of the following, chosen by `kind`.", ""]
    for model in protocols:
        lines += _model_table(model)
    lines += [
        "### Active-learning specs",
        "",
        "A spec with `kind: active` has these keys instead (no `protocol`, `algorithms` or `metrics`).",
        "",
    ]
    lines += ["| key | type | default | constraints | description |", "|---|---|---|---|---|"]
    for name, field in spec.ActiveSpec.model_fields.items():
        lines.append(
            f"| `{name}` | {_cell(_type_name(field.annotation))} | {_cell(_default(field))} "
            f"| {_cell(_constraints(field))} | {_cell(field.description or '').replace('<', '&lt;')} |"
        )
    lines.append("")
    names = sorted(set(BUILTIN) | set(ALIASES))
    lines += [
        "### Registered names",
        "",
        "Algorithms (`name:`): " + ", ".join(f"`{n}`" for n in names) + ".",
        "",
        "Protocols (`kind:`): " + ", ".join(f"`{n}`" for n in PROTOCOLS) + ".",
        "",
        "| metric | computed from |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {what} |" for name, what in METRIC_INPUT.items()]
    lines += [
        "",
        "### Limits",
        "",
        "| constant | value |",
        "|---|---|",
    ]
    for name in ("MAX_SPEC_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_STRING", "MAX_YAML_VALUES", "MAX_CELLS"):
        lines.append(f"| `knnx.spec.{name}` | {format(getattr(spec, name), '_').replace('_', ' ')} |")
    return "\n".join(lines) + "\n"


# --- command line ------------------------------------------------------------------------------


def _is_option(param):
    return getattr(param, "param_type_name", "") == "option"


def _param_type(param, ctx):
    if _is_option(param) and param.is_flag:
        return "flag"
    try:  # typer >= 0.20 describes its parameters itself
        text = param.display_type(ctx)
    except (AttributeError, TypeError):
        text = param.type.name.lower()
    return str(text).strip("<>").replace("|", " or ")


def _param_default(param):
    if _is_option(param) and param.is_flag:
        return ""
    default = param.default
    if default is None or default == () or default == []:
        return ""
    if isinstance(default, enum.Enum):
        default = default.value
    return f"`{default}`"


@generator("cli")
def cli_reference():
    import typer

    from knnx.cli import app

    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="knnx")
    lines = [
        "Generated from the typer app of `knnx/cli/` by `make docs-generated`; "
        "`knnx COMMAND --help` prints the same text.",
        "",
    ]
    for name in sorted(group.commands):
        command = group.commands[name]
        sub = command.context_class(command, info_name=name, parent=ctx)
        usage = re.sub(r"[{\[](\w+)[}\]]", lambda m: m.group(0).upper(), command.get_usage(sub))
        usage = re.sub(r"\{(\w+)\}", r"\1", usage)
        lines += [f"## knnx {name}", "", "```text", usage, "```", ""]
        lines += [_html_text(" ".join((command.help or "").split())), ""]
        lines += ["| argument or option | type | default | help |", "|---|---|---|---|"]
        for param in command.params:
            if param.name == "help":
                continue
            if _is_option(param):
                label = ", ".join(f"`{o}`" for o in param.opts + param.secondary_opts)
            else:
                label = f"`{(param.metavar or param.name).upper()}`"
            help_text = getattr(param, "help", "") or ""
            lines.append(
                f"| {label} | {_cell(_param_type(param, sub))} | {_cell(_param_default(param))} "
                f"| {_html_text(_cell(' '.join(help_text.split())))} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


@generator("bundled-datasets")
def bundled_datasets():
    """The datasets of datasets/ as loaded with their default treatments (each is loaded:
    a few seconds), with their declared nominal attributes."""
    from knnx.datasets import describe_bundled
    from knnx.datasets.bundled import BUNDLED

    lines = [
        "Generated by `make docs-generated` from `knnx.datasets.describe_bundled()`, which "
        "`knnx datasets` prints (`--format csv` adds the class counts). n × d as loaded with the "
        "default treatments (`datasets/README.md` explains each); *files*: rows × columns as shipped; "
        "*split*: the predefined train/test split (`protocol: {kind: predefined}`); *nominal*: the "
        "attributes declared nominal, kept as codes under `categorical: keep` "
        "([Types](#types-nominal-attributes-missing-values-distance-matrices)).",
        "",
        "| name | n | d | classes | split | files | nominal | source | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in describe_bundled():
        nominal = len(BUNDLED[r["name"]].nominal) or "-"
        cells = [f"`{r['name']}`", r["n"], r["d"], r["classes"], r["split"], r["files"].replace("x", " × ")]
        cells += [nominal, r["source"], r["notes"] or "-"]
        lines.append("| " + " | ".join(_html_text(_cell(c)) for c in cells) + " |")
    return "\n".join(lines) + "\n"


@generator("suite-tables")
def suite_tables():
    """The benchmark suites' datasets, from datasets/suites/MANIFEST.json."""
    from knnx.datasets.suites import SUITES, describe_suite

    keys = ["name", "n", "d", "numeric", "nominal", "classes", "imbalance", "missing", "partitions", "source"]
    lines = []
    for suite, what in SUITES.items():
        rows = describe_suite(suite)
        with_parts = sum(r["partitions"] != "-" for r in rows)
        lines += [
            f"### {suite}",
            "",
            f"{what}: {len(rows)} datasets, {with_parts} with the source's partitions.",
            "",
        ]
        lines += ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        lines += ["| " + " | ".join(_cell(str(r[k])) for k in keys) + " |" for r in rows]
        lines.append("")
    return "\n".join(lines) + "\n"


def _parameter_docs(cls):
    """{name: (type, meaning)} of the numpydoc ``Parameters`` sections of ``cls`` and
    its bases, then of :class:`knnx.KNNClassifier` (the distance parameters many share)."""
    import inspect
    import re

    from knnx.estimators.knn import KNNClassifier

    found = {}
    for owner in [*cls.__mro__, KNNClassifier]:
        doc = inspect.getdoc(owner) or ""
        section = re.search(r"^Parameters\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.S | re.M)
        if section is None:
            continue
        for name, kind, text in re.findall(
            r"^(\w+) : ([^\n]*)\n((?:(?: {4}[^\n]*)?\n)*)", section.group(1) + "\n", re.M
        ):
            meaning = _markdown_roles(" ".join(text.split()))
            found.setdefault(name, (kind.split(", default")[0].strip(), meaning))
    return found


def _markdown_roles(text):
    """reStructuredText's inline code and roles as Markdown code: ``x`` and :class:`a.B` -> `x`, `a.B`."""
    import re

    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _default_text(value):
    import inspect
    import json

    if value is inspect.Parameter.empty:
        return "required"
    try:
        return f"`{json.dumps(value)}`"
    except (TypeError, ValueError):
        return f"`{value!r}`"


@generator("algorithm-parameters")
def algorithm_parameters():
    """Every built-in algorithm's parameters (name, type, default, meaning), from the
    classes' signatures and numpydoc ``Parameters`` sections; the first paragraph of
    each class's docstring says what it is and which paper it follows. A parameter
    without a documented meaning stops the generation."""
    import inspect

    from knnx.estimators.registry import ALGORITHMS, ALIASES

    lines = []
    for name, cls in ALGORITHMS.items():
        aliases = [a for a, (target, _) in ALIASES.items() if target == name]
        head = f"### `{name}`" + (f" (also {', '.join(f'`{a}`' for a in aliases)})" if aliases else "")
        summary = _markdown_roles(" ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split()))
        docs = _parameter_docs(cls)
        rows = []
        for pname, param in list(inspect.signature(cls.__init__).parameters.items())[1:]:
            if pname not in docs:
                raise SystemExit(
                    f"{cls.__module__}.{cls.__name__}: parameter '{pname}' has no documented meaning"
                )
            kind, meaning = docs[pname]
            rows.append(
                f"| `{pname}` | {_cell(kind)} | {_cell(_default_text(param.default))} | {_html_text(_cell(meaning))} |"
            )
        lines += [head, "", f"{_html_text(summary)} (`{cls.__module__}.{cls.__name__}`)", ""]
        if aliases:
            fixed = "; ".join(
                f"`{a}`: " + ", ".join(f"{k}={v}" for k, v in ALIASES[a][1].items()) for a in aliases
            )
            lines += [f"The aliases fix a parameter: {fixed}.", ""]
        lines += ["| parameter | type | default | meaning |", "|---|---|---|---|", *rows, ""]
    return "\n".join(lines) + "\n"


SENSITIVITY = Path(__file__).resolve().parents[1] / "data" / "unn_uci_sensitivity.csv"
READINGS = SENSITIVITY.with_name("unn_uci_sensitivity_readings.csv")


def _pct(value):
    return "-" if value != value else f"{value:.1f}"


@generator("unn-uci-sensitivity")
def unn_uci_sensitivity(path=SENSITIVITY):
    """From the committed summary of UNN's sensitivity study: per dataset the paper's
    numbers, ours, and the best configuration chosen on the test folds (an oracle) with
    its interval, setting and kept proportion."""
    import pandas as pd

    t = pd.read_csv(path)
    lines = [
        "| dataset | k | paper UNN | paper kNN | kNN | UNN (θ by CV) | best [95 % CI] | best setting "
        "| kept | reach | best, ≤ 40 % kept |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in t.iterrows():
        lines.append(
            f"| {r['dataset']} | {r['k']} | {_pct(r['paper_unn'])} | {_pct(r['paper_knn'])} | {_pct(r['knn'])} "
            f"| {_pct(r['unn_cv'])} | {_pct(r['best'])} [{_pct(r['best_low'])}, {_pct(r['best_high'])}] "
            f"| {r['best_setting']} | {r['best_fraction']:.2f} | {r['reach']}/{r['n_settings']} "
            f"| {_pct(r['best_retained_40'])} |"
        )
    return "\n".join(lines) + "\n"


@generator("unn-uci-readings")
def unn_uci_readings(path=READINGS):
    """From the committed per-reading table of the same study: per reading (metric, loss,
    smoothing), the least mean error over theta at the paper's k on each dataset."""
    import pandas as pd

    t = pd.read_csv(path, keep_default_na=False, na_values=[""])
    datasets = [c for c in t.columns if c not in ("metric", "loss", "smoothing", "at_or_below_paper", "of")]
    lines = [
        "| metric | loss | smoothing | " + " | ".join(datasets) + " | ≤ paper |",
        "|---|---|---|" + "---|" * (len(datasets) + 1),
    ]
    for _, r in t.iterrows():
        count = "" if r["of"] != r["of"] else f"{int(r['at_or_below_paper'])}/{int(r['of'])}"
        name = "**paper (UNN)**" if r["metric"] == "paper" else r["metric"]
        cells = " | ".join(_pct(float(r[d])) for d in datasets)
        loss, smoothing = (x if isinstance(x, str) else "" for x in (r["loss"], r["smoothing"]))
        lines.append(f"| {name} | {loss} | {smoothing} | {cells} | {count} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
