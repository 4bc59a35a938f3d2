"""Paper targets as declared data: the YAML files of ``knnx/papers/targets``.

A target names the paper, what to run (specs with overrides, or a command for the targets
still produced by a script), and its tables. A table is read from the paper's values (a
CSV under ``experiments/paper_values``): every row of that CSV (optionally filtered by
``where``, plus ``add_rows``) and every declared column (whose ``when`` the row meets)
make one cell; a CSV with one number per row (``metric, k, algorithm, paper_value``)
declares one column per kind of row, told apart by ``when``. A cell selects
result rows (``select``: filters on the columns of ``results.csv``, ``params`` on the
parameters), reduces their ``value`` by the table's statistic, puts an interval on it by
the table's interval policy (:mod:`knnx.papers.intervals`), and sets the paper's number
beside it. Strings in ``row``, column labels, ``select`` and ``add_rows`` may name the CSV row's columns
as ``{column}`` (a string that is one placeholder takes the column's value with its
type: ``"{k}"`` becomes the integer 4).

Example (``targets/unn-uci.yaml``)::

    target: unn-uci
    paper: piro2012
    title: "Table 2: UNN, ITML+kNN and kNN error (%) on UCI data, 5 x 2-fold CV"
    runs:
      - {spec: experiments/unn_uci.yaml, out: results/unn-uci}
    tables:
      - id: table2
        title: "Table 2 of Piro et al. (2012): test error (%)"
        results: [results/unn-uci]
        paper_values: experiments/paper_values/unn_table2.csv
        row: "{dataset}"
        select: {dataset: "{dataset}", metric: error, params: {k: "{k}"}}
        columns:
          - {label: UNN, paper: unn, select: {algorithm: unn_cv}}
          - {label: kNN, paper: knn, select: {algorithm: knn}}
        statistic: mean
        interval: student_t
        scale: 100
"""

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knnx.errors import SpecError
from knnx.papers.intervals import POLICIES

TARGETS_DIR = Path(__file__).resolve().parent / "targets"

# The papers, by the key a target names.
PAPERS = {
    "celisse2011": "Celisse & Mary-Huard (2011): exact leave-p-out cross-validation for kNN",
    "piro2012": "Piro et al. (2012): UNN, leveraging k-NN",
    "dambrosio2012": "D'Ambrosio et al. (2012): UNN posteriors",
    "nock2014": "Nock et al. (2014): GNNB",
    "paredes2006": "Paredes & Vidal (2006): CW, PW, CPW learned weighted metrics",
}

# What a claim may state of a cell's statistic (knnx.papers.comparison judges them).
CLAIM_OPS = ("<", ">", "within", "not_below")

STATISTICS = ("mean", "median", "mean_difference", "mean_ratio", "contrast")
Statistic = Literal["mean", "median", "mean_difference", "mean_ratio", "contrast"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Run(_Model):
    """One step of a target: ``knnx run SPEC --out OUT --set KEY=VALUE ...``, or a shell
    ``command`` (a target still produced by a script of experiments/)."""

    spec: str | None = Field(None, description="spec file, relative to the project root")
    out: str | None = Field(None, description="results folder, relative to the project root")
    set: dict[str, Any] = Field(default_factory=dict, description="`--set` overrides (values may use {VAR})")
    command: str | None = Field(None, description="a shell command run from the project root")


class Claim(_Model):
    """What the paper states of the cell's statistic: a side of ``value`` (``<``, ``>``),
    an equivalence (``within``: |statistic| < ``value``, e.g. "on par"), or no
    significant shortfall (``not_below``: the interval reaches ``value``). Each claim gets
    two verdicts (:mod:`knnx.papers.comparison`): the interval's (the whole interval on
    the stated side, inside the band) and the point estimate's. Both fields may be
    templates on the paper CSV's columns (``"{op}"``, ``"{bound}"``): one column then
    carries claims that differ by row."""

    op: str = Field(description='"<", ">", "within" or "not_below", or a template giving one')
    value: float | str = Field(
        0.0, description="the bound (the band's half-width for within), or a template giving it"
    )


class ArgMin(_Model):
    """Before the statistic, each group of selected rows (``by``) becomes one value: the
    value of parameter ``param`` whose rows have the least mean ``value`` in the group
    (folds and repeats averaged first; means that tie the least under knnx's tie rule,
    :mod:`knnx.stats.ties`, count as equal,
    the smallest parameter value wins), e.g. the k of lowest test error per dataset."""

    param: str
    by: list[str] = Field(default_factory=lambda: ["dataset"])


class Term(_Model):
    """One term of a contrast: ``weight`` times the (paired) value of the rows ``select``
    picks, e.g. (NN_5 - NN_50) - (UNN_5 - UNN_50) as four terms of weights 1, -1, -1, 1."""

    weight: float
    select: dict[str, Any]


class Column(_Model):
    """A column of a table: its label, the paper CSV's column set beside it, and the filters
    that (with the table's) select its result rows."""

    label: str = Field(description="the column label, a template on the paper CSV's columns")
    paper: str | None = Field(None, description="column of the paper values CSV (None: no paper number)")
    when: dict[str, Any] = Field(
        default_factory=dict, description="make this column's cell only for paper rows with these values"
    )
    select: dict[str, Any] = Field(default_factory=dict)
    minus: dict[str, Any] | None = Field(
        None,
        description="statistic mean_difference (mean_ratio): filters of the rows subtracted (divided by), paired on `pair`",
    )
    terms: list[Term] = Field(
        default_factory=list,
        description="statistic contrast: the weighted terms, paired on `pair` (the column's select applies to each)",
    )
    value: str = Field(
        "value", description="the results column reduced: value, or fit_seconds / predict_seconds for times"
    )
    statistic: Statistic | None = Field(None, description="this column's statistic, if not the table's")
    interval: Literal["student_t", "clopper", "paired_t", "none"] | None = Field(
        None, description="this column's interval policy, if not the table's"
    )
    group: list[str] | None = Field(
        None, description="this column's `group`, if not the table's (e.g. [param_beta]: one value per beta)"
    )
    claim: Claim | None = Field(None, description="a direction the paper states for the statistic")
    argmin: ArgMin | None = Field(None, description="reduce each group to the parameter value of least value")


class Table(_Model):
    """A table or figure of the paper, set beside ours cell by cell."""

    id: str
    title: str
    results: list[str] = Field(description="result folders (their results.csv are pooled)")
    paper_values: str = Field(description="the paper's numbers, a CSV relative to the project root")
    where: dict[str, Any] = Field(
        default_factory=dict, description="keep only the paper rows with these values"
    )
    add_rows: list[dict[str, Any]] = Field(
        default_factory=list,
        description="extra rows: variables, and `paper_row` (filters) naming the paper row set beside them",
    )
    row: str = Field(description="the row label, a template on the paper CSV's columns")
    select: dict[str, Any] = Field(default_factory=dict, description="filters every cell shares")
    columns: list[Column]
    statistic: Statistic = "mean"
    interval: Literal["student_t", "clopper", "paired_t", "none"] = "student_t"
    pair: list[str] = Field(
        default_factory=lambda: ["dataset", "repeat", "fold"],
        description="mean_difference, mean_ratio: the columns that pair rows; each side is reduced within a pair first",
    )
    group: list[str] = Field(
        default_factory=list,
        description="mean, median: reduce the rows within each group of these columns first (e.g. [dataset]: "
        "one value per dataset, the statistic and interval over datasets)",
    )
    within: Literal["mean", "median"] = Field(
        "mean", description="how rows are reduced within a pair or group (median: robust for times)"
    )
    scale: float = Field(1.0, description="ours is multiplied by it (100: fractions to %)")
    digits: int = Field(2, description="decimals shown")


class Target(_Model):
    target: str
    paper: str
    title: str
    variables: dict[str, Any] = Field(
        default_factory=dict, description="defaults of {VAR} in runs and tables"
    )
    runs: list[Run] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    links: list[str] = Field(default_factory=list, description="other outputs REPORT.md links to (files)")


def target_names():
    """The declared targets, in file-name order."""
    return sorted(p.stem for p in TARGETS_DIR.glob("*.yaml"))


def load_target(name, variables=None, root=None):
    """The declaration of target ``name`` (or of a ``.yaml`` file) with ``{VAR}``
    substituted in run and table paths (``variables`` override the declared defaults).
    With ``root``, the paper CSVs are checked to have the columns the tables name.
    SpecError (one line) if unknown or malformed."""
    path = Path(name) if str(name).endswith(".yaml") else TARGETS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise SpecError(f"unknown target '{name}'; known: {', '.join(target_names())}")
    try:
        target = Target.model_validate(yaml.safe_load(path.read_text()))
    except (ValidationError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()
        raise SpecError(f"{path}: {first[0] if first else exc}") from None
    if target.paper not in PAPERS:
        raise SpecError(f"{path}: paper: expected one of {', '.join(PAPERS)}, got {target.paper!r}")
    for table in target.tables:
        if table.interval not in POLICIES:  # pragma: no cover - Literal already checks
            raise SpecError(f"{path}: {table.id}: unknown interval {table.interval!r}")
        for column in table.columns:
            kind = column.statistic or table.statistic
            if kind in ("mean_difference", "mean_ratio") and column.minus is None:
                raise SpecError(f"{path}: {table.id}: {column.label}: statistic {kind} needs `minus`")
            if kind == "contrast" and len(column.terms) < 2:
                raise SpecError(
                    f"{path}: {table.id}: {column.label}: statistic contrast needs two or more `terms`"
                )
            if column.claim is not None and "{" not in column.claim.op and column.claim.op not in CLAIM_OPS:
                raise SpecError(
                    f"{path}: {table.id}: {column.label}: claim op: expected one of {', '.join(CLAIM_OPS)}"
                )
    values = {**target.variables, **(variables or {})}
    unknown = set(variables or {}) - set(target.variables)
    if unknown:
        raise SpecError(
            f"{name}: unknown variable {sorted(unknown)[0]}; known: {', '.join(target.variables)}"
        )
    if root is not None:
        for table in target.tables:
            _check_paper_columns(path, table, Path(root))
    return _substitute(target, {k: str(v) for k, v in values.items()})


ROOT_HINT = "give the project folder, holding experiments/ and results/"


def read_paper_values(root, table, target=None):
    """``(header, rows)`` of ``table``'s paper CSV under ``root`` (rows as dicts of
    text). A file that is missing (``root`` is then not the project: a KnnxError about
    ``root``, named by the CLI as ``--root``), not UTF-8 or not CSV: one line."""
    import csv
    import io

    csv_path = Path(root) / table.paper_values
    if not csv_path.is_file():
        whose = f"{target}, table {table.id}" if target else f"table {table.id}"
        raise SpecError(
            f"{root} has no file {table.paper_values} (the paper values of {whose}); {ROOT_HINT}",
            param="root",
        )
    try:
        text = csv_path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{csv_path}: not UTF-8 text (byte {exc.start})") from None
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, [])
        # as csv.DictReader: blank lines skipped, a short row's missing cells None
        rows = [{h: row[i] if i < len(row) else None for i, h in enumerate(header)} for row in reader if row]
    except csv.Error as exc:
        raise SpecError(f"{csv_path}: not a readable CSV file ({exc})") from None
    return header, rows


def _check_paper_columns(path, table, root):
    """SpecError unless the paper CSV exists and has every column the table names."""
    csv_path = root / table.paper_values
    if not csv_path.is_file():
        raise SpecError(f"{path}: {table.id}: paper_values: no file {csv_path}")
    header = read_paper_values(root, table)[0]
    named = [c.paper for c in table.columns if c.paper] + list(table.where)
    named += [k for c in table.columns for k in c.when]
    named += [k for row in table.add_rows for k in row.get("paper_row", {})]
    missing = [n for n in named if n not in header]
    if missing:
        raise SpecError(
            f"{path}: {table.id}: {csv_path.name} has no column '{missing[0]}'; it has {', '.join(header)}"
        )


def _substitute(target, values):
    def sub(text):
        return text.format_map(_Keep(values)) if isinstance(text, str) else text

    runs = [
        run.model_copy(
            update={
                "spec": sub(run.spec),
                "out": sub(run.out),
                "command": sub(run.command),
                "set": {k: sub(v) for k, v in run.set.items()},
            }
        )
        for run in target.runs
    ]
    tables = [t.model_copy(update={"results": [sub(r) for r in t.results]}) for t in target.tables]
    return target.model_copy(update={"runs": runs, "tables": tables, "links": [sub(x) for x in target.links]})


class _Keep(dict):
    """format_map that leaves unknown placeholders (the table's {column}s) as they are."""

    def __missing__(self, key):
        return "{" + key + "}"
