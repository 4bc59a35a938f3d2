"""Ours beside the paper's, as tidy rows: one function from results to ``comparison.csv``.

:func:`comparison_rows` turns a declared target (:mod:`knnx.papers.declaration`) and the
result files it names into one row per table cell:

==============  ==================================================================
target, table   the target and the table's id
row, column     the cell's row label and column label
statistic       mean, median, mean_difference, mean_ratio or contrast of the selected ``value``s
interval        the interval policy (:mod:`knnx.papers.intervals`)
ours_mean       the statistic (times the table's ``scale``); NaN if no row matched
ours_sd         the values' standard deviation (ddof 1; NaN for fewer than two)
n               how many values (pairs for mean_difference) entered it
ci_low/ci_high  the 95 % interval of the policy, NaN where it claims none
paper           the paper's number (the low end of a printed range such as 17-15)
paper_high      the range's high end (= paper for a single number)
diff            ours - paper, to the nearest end of a range (0 inside it)
paper_in_ci     whether the paper's number (range) meets our interval; empty if none
claim           what the paper states of the statistic ("< 0", "within ±0.02",
                "not below 0"), else empty
claim_holds     the interval verdict: our whole interval on the stated side (inside
                the band; for "not below", reaching the bound), our statistic for a
                cell without an interval
claim_holds_mean  the point-estimate verdict: our statistic on the stated side (inside
                the band, not below the bound); beside ``claim_holds`` it tells "holds
                on the mean, not significant at n = 8" from a claim the mean contradicts
==============  ==================================================================

``mean_difference``: each side's rows are averaged within each pair (the table's ``pair``
columns, e.g. dataset, repeat, fold; five seeds of one sample size pool into one mean),
and the statistic is the mean over the pairs both sides have. ``mean_ratio`` is the same
with the ratio of the two sides per pair (e.g. one method's median fit time over
another's, per dataset: the table's ``within: median``). ``contrast`` sums weighted
terms per pair (each term a filter on the column's rows, e.g. a difference of two
differences), over the pairs every term has. A table's ``group`` reduces the
rows of a mean or median cell within each group first (``group: [dataset]``: one value
per dataset; the statistic, its sd and interval are then over datasets); a column's
``group`` replaces the table's (``[param_beta]``: one value per beta).

Rules written down: filters compare a results column with ``==`` (a list: membership; a
mapping ``{between: [lo, hi]}``: lo <= value <= hi, an empty bound open; ``{regex: ...}``: a full match of
the text); ``params`` filters compare each parameter's value parsed from its JSON. Missing
result folders or rows give NaN cells, never an error: the comparison says what is
missing. No rendered text is read back anywhere.
"""

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from knnx.errors import SpecError
from knnx.papers.declaration import CLAIM_OPS, read_paper_values
from knnx.papers.intervals import interval
from knnx.results import read_results

COMPARISON_COLUMNS = [
    "target",
    "table",
    "row",
    "column",
    "statistic",
    "interval",
    "ours_mean",
    "ours_sd",
    "n",
    "ci_low",
    "ci_high",
    "paper",
    "paper_high",
    "diff",
    "paper_in_ci",
    "claim",
    "claim_holds",
    "claim_holds_mean",
]

_PLACEHOLDER = re.compile(r"^\{(\w+)\}$")
_RANGE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*$")


def comparison_rows(target, root="."):
    """DataFrame of :data:`COMPARISON_COLUMNS`: every cell of every table of ``target``
    (a loaded :class:`knnx.papers.declaration.Target`), result paths under ``root``.
    SpecError naming the paper CSV if it lacks a column the table names (as a paper
    column, in ``where`` or in a template)."""
    root = Path(root)
    rows = []
    for table in target.tables:
        header, paper = read_paper_values(root, table, target.target)
        named = [c.paper for c in table.columns if c.paper] + list(table.where)
        missing = [n for n in named if n not in header]
        try:
            if missing:
                raise _NoColumn(missing[0])
            rows += _table_cells(target, table, root, paper)
        except _NoColumn as exc:
            raise SpecError(
                f"{root / table.paper_values}: no column '{exc.args[0]}', which {target.target} table "
                f"{table.id} names; it has {', '.join(header)}"
            ) from None
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def _table_cells(target, table, root, paper):
    """The comparison rows of one table (``paper``: its paper CSV's rows)."""
    rows = []
    frame = pooled_results(root, table.results)
    for variables, paper_row in table_rows(root, table, paper):
        label = fill(table.row, variables)
        for column in table.columns:
            if not all(_matches(variables.get(k), v) for k, v in column.when.items()):
                continue
            cell = compute_cell(frame, table, column, variables)
            paper_value = parse_paper(paper_row.get(column.paper) if column.paper else None)
            names = {"target": target.target, "table": table.id, "row": str(label)}
            names["column"] = str(fill(column.label, variables))
            claim = _filled_claim(column.claim, variables, f"{table.paper_values}: row {label}")
            rows.append(names | cell | verdict(cell, paper_value) | judge(cell, claim))
    return rows


class _NoColumn(KeyError):
    """A template names a column (``{name}``) the row's variables lack."""


def pooled_results(root, folders):
    """The rows of every ``FOLDER/results.csv`` that exists, pooled (empty if none), with
    the coordinates of dataset grids as columns (:func:`with_grid_columns`)."""
    frames = [read_results(root / f / "results.csv") for f in folders if (root / f / "results.csv").is_file()]
    return (
        with_grid_columns(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame(columns=["value"])
    )


_GRID_NAME = re.compile(r"^(?P<base>.*)\[(?P<coords>[^\[\]]*)\]$")


def with_grid_columns(frame):
    """``frame`` with one column ``dataset_<axis>`` per axis of the dataset grids its
    ``dataset`` names come from (``posteriors[sigma=0.5,seed=3]``: ``dataset_sigma`` 0.5,
    ``dataset_seed`` 3, typed as numbers where they parse), so that a table can select,
    pair or group on one coordinate (e.g. one cell per sigma over the seeds). Names
    outside a grid leave these columns empty (None)."""
    if "dataset" not in frame or frame.empty:
        return frame
    coords = {}
    names = frame["dataset"].astype(str)
    for name in names.unique():
        match = _GRID_NAME.match(name)
        parts = [p.split("=", 1) for p in match.group("coords").split(",")] if match else []
        coords[name] = {f"dataset_{k}": _typed(v) for k, v in (p for p in parts if len(p) == 2)}
    columns = sorted({c for values in coords.values() for c in values} - set(frame.columns))
    extra = {
        c: pd.Series([coords[n].get(c) for n in names], index=frame.index, dtype=object) for c in columns
    }
    return frame.assign(**extra) if extra else frame


def table_rows(root, table, paper=None):
    """``[(variables, paper row)]``: the paper CSV's rows passing ``where``, each its own
    variables, then ``add_rows`` (their variables over the paper row they name; one
    naming none stands beside no paper number). ``paper``: the CSV's rows if already
    read (:func:`knnx.papers.declaration.read_paper_values`)."""
    if paper is None:
        paper = read_paper_values(root, table)[1]
    paper = [{k: _typed(v) for k, v in r.items()} for r in paper]
    kept = [r for r in paper if all(_matches(r.get(k), v) for k, v in table.where.items())]
    out = [(r, r) for r in kept]
    for extra in table.add_rows:
        extra = dict(extra)
        named = extra.pop("paper_row", {})
        # no paper_row: a row of knnx's own, beside no paper number
        match = (
            next((r for r in paper if all(_matches(r.get(k), v) for k, v in named.items())), {})
            if named
            else {}
        )
        out.append(({**match, **extra}, match))
    return out


def fill(template, variables):
    """A template with the row's variables: ``"{k}"`` alone takes the value with its type;
    inside text an empty value shows as "-"."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.match(template)
        if whole and whole.group(1) in variables:
            return variables[whole.group(1)]
        try:
            return template.format_map({k: "-" if v is None else v for k, v in variables.items()})
        except KeyError as exc:
            raise _NoColumn(exc.args[0]) from None
    if isinstance(template, list):
        return [fill(t, variables) for t in template]
    if isinstance(template, dict):
        return {k: fill(v, variables) for k, v in template.items()}
    return template


def select(frame, filters, variables):
    """The rows of ``frame`` passing ``filters`` (templates filled from ``variables``)."""
    mask = np.ones(len(frame), dtype=bool)
    for key, wanted in fill(filters, variables).items():
        if key == "params":
            for name, value in wanted.items():
                column = f"param_{name}"
                if column not in frame:
                    return frame.iloc[0:0]
                parsed = frame[column].map(_json)
                mask &= parsed.map(lambda v, w=value: _matches(v, w)).to_numpy(dtype=bool)
            continue
        if key not in frame:
            return frame.iloc[0:0]
        mask &= frame[key].map(lambda v, w=wanted: _matches(v, w)).to_numpy(dtype=bool)
    return frame[mask]


def compute_cell(frame, table, column, variables):
    """ours_mean, ours_sd, n, ci_low, ci_high of one cell (scaled)."""
    kind = column.statistic or table.statistic
    policy = column.interval or table.interval
    group = table.group if column.group is None else column.group
    chosen = select(select(frame, table.select, variables), column.select, variables)
    n_test = None
    if kind in ("mean_difference", "mean_ratio"):
        base = select(select(frame, table.select, variables), column.minus, variables)
        if len(chosen) and len(base):
            a = _reduce(chosen, table.pair, column.value, table.within)
            b = _reduce(base, table.pair, column.value, table.within).reindex(a.index)
            values = (a - b if kind == "mean_difference" else a / b).dropna().to_numpy(dtype=np.float64)
        else:
            values = np.empty(0)
        statistic = float(np.mean(values)) if values.size else math.nan
    elif kind == "contrast":
        sides = []
        for term in column.terms:
            rows = select(chosen, term.select, variables)
            sides.append(
                term.weight * _reduce(rows, table.pair, column.value, table.within) if len(rows) else None
            )
        if all(side is not None for side in sides):
            total = sides[0]
            for side in sides[1:]:
                total = total + side.reindex(total.index)
            values = total.dropna().to_numpy(dtype=np.float64)
        else:
            values = np.empty(0)
        statistic = float(np.mean(values)) if values.size else math.nan
    else:
        values = chosen[column.value].to_numpy(dtype=np.float64) if len(chosen) else np.empty(0)
        if column.argmin is not None and len(chosen):
            values = _argmins(chosen, column.argmin)
        elif group and len(chosen):
            values = _reduce(chosen, group, column.value, table.within).to_numpy(dtype=np.float64)
        if kind == "median":
            statistic = float(np.median(values)) if values.size else math.nan
        else:
            statistic = float(np.mean(values)) if values.size else math.nan
        if values.size == 1 and "n_test" in chosen and not group:
            n_test = int(chosen["n_test"].iloc[0])
    low, high = interval(policy, values, n_test=n_test) if values.size else (math.nan, math.nan)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else math.nan
    s = table.scale
    return {
        "statistic": kind,
        "interval": policy,
        "ours_mean": statistic * s,
        "ours_sd": sd * s,
        "n": int(values.size),
        "ci_low": low * s,
        "ci_high": high * s,
    }


def _reduce(rows, by, column, within):
    """One value per group of ``by``: the mean (or median) of ``column`` within it (none
    when a column of ``by`` is not in the results)."""
    if any(c not in rows for c in by):
        return pd.Series(dtype=np.float64)
    grouped = rows.assign(_v=rows[column].astype(np.float64)).groupby(by, sort=True)["_v"]
    return grouped.median() if within == "median" else grouped.mean()


def parse_paper(value):
    """``(low, high)`` of a printed paper value: a number, a range "17-15", or (NaN, NaN)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan, math.nan
    if isinstance(value, int | float):
        return float(value), float(value)
    match = _RANGE.match(value)
    if match:
        a, b = float(match.group(1)), float(match.group(2))
        return min(a, b), max(a, b)
    try:
        return float(value), float(value)
    except ValueError:
        return math.nan, math.nan


def verdict(cell, paper):
    """paper, paper_high, diff and paper_in_ci of a cell (see the module table)."""
    low, high = paper
    ours = cell["ours_mean"]
    if math.isnan(low) or math.isnan(ours):
        diff = math.nan
    else:
        diff = ours - high if ours > high else ours - low if ours < low else 0.0
    if math.isnan(low) or math.isnan(cell["ci_low"]):
        inside = None
    else:
        inside = bool(cell["ci_low"] <= high and low <= cell["ci_high"])
    return {"paper": low, "paper_high": high, "diff": diff, "paper_in_ci": inside}


def _argmins(rows, argmin):
    """One value per group: the parameter value whose rows have the least mean ``value``
    within the group (folds and repeats averaged first; means that tie the least under
    knnx's tie rule, :mod:`knnx.stats.ties`: the smallest parameter value)."""
    from knnx.stats.ties import best_mask

    column = f"param_{argmin.param}"
    out = []
    for _, group in rows.groupby(argmin.by, sort=True):
        means = group.assign(_v=group["value"].astype(np.float64)).groupby(column, sort=True)["_v"].mean()
        best = best_mask(means.to_numpy(dtype=np.float64), lower=True)
        out.append(min(float(_json(v)) for v in means.index[best]))
    return np.asarray(out, dtype=np.float64)


def _filled_claim(claim, variables, where):
    """The claim with its templates (op, value) filled from the row's variables; SpecError
    naming the paper CSV's row if they do not give one of :data:`CLAIM_OPS` and a number
    (a positive one for ``within``)."""
    if claim is None:
        return None
    op, value = fill(claim.op, variables), fill(claim.value, variables)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{where}: claim value: expected a number, got {value!r}") from None
    if op not in CLAIM_OPS:
        raise SpecError(f"{where}: claim op: expected one of {', '.join(CLAIM_OPS)}, got {op!r}")
    if op == "within" and not value > 0:
        raise SpecError(f"{where}: claim value: a 'within' band needs a positive half-width, got {value:g}")
    return claim.model_copy(update={"op": op, "value": value})


# What a claim may state of a cell's statistic s, with its interval [lo, hi]:
# op          interval verdict (claim_holds)      point verdict (claim_holds_mean)
# "<" v       hi < v                              s < v
# ">" v       lo > v                              s > v
# "within" d  -d < lo and hi < d (equivalence)    |s| < d
# "not_below" v   hi >= v (not significantly      s >= v
#                 below v)
# (the ops: knnx.papers.declaration.CLAIM_OPS)


def _claim_text(claim):
    if claim.op == "within":
        return f"within ±{claim.value:g}"
    if claim.op == "not_below":
        return f"not below {claim.value:g}"
    return f"{claim.op} {claim.value:g}"


def _holds(op, value, low, high):
    """Whether [low, high] (a point when low == high) meets the claim (see CLAIM_OPS)."""
    if op == "<":
        return high < value
    if op == ">":
        return low > value
    if op == "within":
        return -value < low and high < value
    return high >= value  # not_below


def judge(cell, claim):
    """claim, claim_holds and claim_holds_mean of a cell (see the module table)."""
    if claim is None:
        return {"claim": "", "claim_holds": None, "claim_holds_mean": None}
    text = _claim_text(claim)
    ours = cell["ours_mean"]
    if math.isnan(ours):
        return {"claim": text, "claim_holds": None, "claim_holds_mean": None}
    low, high = (cell["ci_low"], cell["ci_high"]) if not math.isnan(cell["ci_low"]) else (ours, ours)
    return {
        "claim": text,
        "claim_holds": bool(_holds(claim.op, claim.value, low, high)),
        "claim_holds_mean": bool(_holds(claim.op, claim.value, ours, ours)),
    }


def _typed(text):
    """A CSV cell as int, float, text, or None when empty."""
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _json(text):
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _matches(value, wanted):
    if isinstance(wanted, list):
        return any(_matches(value, w) for w in wanted)
    if isinstance(wanted, dict):
        if "between" in wanted:
            lo, hi = wanted["between"]  # None or "": no bound on that side
            try:
                value = float(value)
                return (lo in (None, "") or float(lo) <= value) and (hi in (None, "") or value <= float(hi))
            except (TypeError, ValueError):
                return False
        if "regex" in wanted:
            return re.fullmatch(wanted["regex"], str(value)) is not None
        return False
    if isinstance(wanted, bool) or isinstance(value, bool):
        return value is wanted or value == wanted
    if isinstance(wanted, int | float) and isinstance(value, int | float | np.number):
        return float(value) == float(wanted)
    return value == wanted
