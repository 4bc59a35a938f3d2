"""Named selections: an ``algorithms`` entry named after a built-in prototype
selection (``{name: drop3, params: {...}}``) is that selection, then knnx's kNN on the
rows it keeps: the entry ``{name: knn, steps: [..., drop3], params: {...}}``, whose
contestant is named ``drop3>knn`` unless the entry gives an ``id``.

``params`` are the kNN's (``k``: 1 unless given) and, as ``<selection>__<name>``, the
selection's. The distance is the contestant's: ``metric`` and ``metric_params`` given
in ``params`` (or ``params_for``) go to the selection too, unless the entry gives the
selection's own; a list of them (a grid) is refused, since the selection and the kNN
would then be crossed.
"""

from knnx.estimators.registry import STEP_SEP
from knnx.plugins import import_object
from knnx.steps.resolve import SELECTIONS, STEPS

# What the selection takes from the kNN's parameters.
TIED = ("metric", "metric_params")


def named_selections(spec):
    """``(spec, problems)``: the spec with each entry named after a selection written as
    that selection then kNN (the entry's own ``steps`` first), and a line for each
    tied parameter given as a list."""
    problems, algorithms = [], []
    for a, algo in enumerate(spec.algorithms):
        if algo.name not in SELECTIONS:
            algorithms.append(algo)
            continue
        sid = algo.name
        tied = [n for n in TIED if n in import_object(STEPS[sid])().get_params()]  # LVQ has no metric
        params, found = _tied(algo.params, sid, f"algorithms[{a}].params", tied)
        problems += found
        params_for = {}
        for ds_id, replaced in algo.params_for.items():
            params_for[ds_id], found = _tied(replaced, sid, f"algorithms[{a}].params_for.{ds_id}", tied)
            problems += found
        update = {"name": "knn", "params": params, "params_for": params_for, "steps": [*algo.steps, sid]}
        algorithms.append(algo.model_copy(update=update))
    return spec.model_copy(update={"algorithms": algorithms}), problems


def _tied(params, sid, at, tied):
    """``params`` with each of ``tied`` (those of :data:`TIED` the method takes) it gives
    copied to the method's ``<sid>__<name>`` (unless given), and the problems (one per
    list given)."""
    if not isinstance(params, dict):
        return params, []
    out, problems = dict(params), []
    for name in tied:
        own = f"{sid}{STEP_SEP}{name}"
        if name not in params or own in params:
            continue
        if isinstance(params[name], list):
            problems.append(
                f"{at}.{name}: {sid} (a named selection) gives one {name} to the selection and to its kNN; "
                f"for several, write an entry for each, or give the selection's as {own}"
            )
        else:
            out[own] = params[name]
    return out, problems
