"""The parameters of a results frame: each row's ``params`` parsed once
(:func:`parse_params`, with the one parser :meth:`knnx.params.Params.parse`),
the values each parameter takes (:func:`parameter_values`) and which parameters vary,
overall or within an algorithm on a dataset (:func:`varying_within`): what the figures
draw a metric against and the report counts."""

from dataclasses import dataclass

from knnx._text import shown
from knnx.errors import ResultsError
from knnx.params import Params, value_key


def parse_params(params):
    """The ``params`` cells of a results frame (a Series indexed by data row) as
    :class:`knnx.params.Params` (read-only; equal texts give one shared value). A file's
    cells are checked when read (:func:`knnx.results.read_results`); a cell of a frame
    built in Python that is not a JSON object of parameters
    (:meth:`knnx.params.Params.parse`) is a ResultsError naming its row by the frame's
    index."""
    cache = {}
    out = []
    for row, text in params.items():
        if not isinstance(text, str):
            value, problem = None, f"{shown(repr(text))} is not a JSON text"
        elif text in cache:
            value, problem = cache[text]
        else:
            value, problem = cache[text] = Params.parse(text)
        if problem is not None:
            label = repr(row) if isinstance(row, str) else str(row)
            raise ResultsError(f"column 'params' row {label} of the frame: {problem}")
        out.append(value)
    return out


def is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def parameter_values(frame):
    """{parameter: list of its distinct values, in order of appearance} over the rows of
    ``frame`` (values as JSON gives them: numbers, text, booleans, None, lists)."""
    values = {}
    for params in parse_params(frame["params"].drop_duplicates()):
        for key, value in params.items():
            seen = values.setdefault(key, {})
            seen.setdefault(value_key(value), value)
    return {key: list(seen.values()) for key, seen in values.items()}


def varying_params(frame):
    """Names of the parameters that take more than one value in ``frame``."""
    return [key for key, vals in parameter_values(frame).items() if len(vals) > 1]


def varying_numeric_params(frame):
    """Names of numeric parameters that take more than one value in ``frame``."""
    return [
        key for key, vals in parameter_values(frame).items() if len([v for v in vals if is_number(v)]) > 1
    ]


def values_per_key(keys, parsed, x):
    """{key: (scalars, grids)}: the distinct values of ``x`` that are not lists and the
    distinct lists (tuned grids) among the rows of each key (an algorithm, or a
    (dataset, algorithm) pair) having ``x``, each a {json: value} dict in order of
    first appearance."""
    out = {}
    for key, p in zip(keys, parsed, strict=True):
        if x in p:
            scalars, grids = out.setdefault(key, ({}, {}))
            (grids if isinstance(p[x], list) else scalars).setdefault(value_key(p[x]), p[x])
    return out


def takes_two_values(values):
    scalars, grids = values
    return len(scalars) + len(grids) > 1


@dataclass(frozen=True)
class WithinAlgorithm:
    """A parameter that varies within one algorithm or more: ``algorithms`` (in order of
    appearance) take two values of it or more on one dataset at least (each tuned grid
    counting as one value); ``numeric``: every value they take, and every value of
    their grids, is a number."""

    algorithms: tuple
    numeric: bool


def varying_within(frame):
    """{parameter: :class:`WithinAlgorithm`} of the parameters that take two values or
    more among the rows of one algorithm on one dataset at least (a parameter that
    takes one value per dataset, an entry's ``params_for``, does not), in order of
    appearance: what a metric can be drawn against (:mod:`knnx.reporting.figures`, "One
    meaning per axis")."""
    triples = frame[["dataset", "algorithm", "params"]].drop_duplicates()
    parsed = parse_params(triples["params"])
    pairs = list(zip(triples["dataset"], triples["algorithm"], strict=True))
    found = {}
    for name in dict.fromkeys(k for p in parsed for k in p):
        drawn = {
            a for (_, a), values in values_per_key(pairs, parsed, name).items() if takes_two_values(values)
        }
        if not drawn:
            continue
        per_algorithm = values_per_key(triples["algorithm"], parsed, name)
        algorithms = tuple(a for a in per_algorithm if a in drawn)
        numeric = all(
            is_number(v)
            for a in algorithms
            for v in [*per_algorithm[a][0].values(), *(v for g in per_algorithm[a][1].values() for v in g)]
        )
        found[name] = WithinAlgorithm(algorithms, numeric)
    return found
