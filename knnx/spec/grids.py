"""Parameter grids: each ``algorithms`` entry's settings, checked against the estimator
class's constraint table and hooks before any dataset is loaded."""

import itertools
import json
import math
from dataclasses import dataclass

from knnx._text import find_leaf
from knnx.estimators.registry import EstimatorFault, ask
from knnx.evaluation.metrics import METRIC_INPUT, METRICS
from knnx.spec.messages import short_repr
from knnx.spec.schema import LeavePOut
from knnx.steps import STEP_PARAM_SEPARATOR, step_id


def expand_grid(params):
    """Cartesian product of list-valued parameters, in the spec's key order."""
    keys = list(params)
    values = [v if isinstance(v, list) else [v] for v in params.values()]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def tuned_settings(grid):
    """The settings a tuned entry searches, in scikit-learn's ParameterGrid order
    (names sorted, the last varying fastest): GridSearchCV's order, hence its tie rule
    (the first setting with the best mean inner score)."""
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid({k: v if isinstance(v, list) else [v] for k, v in grid.items()}))


def hook(cls, name):
    """An estimator class's problem hook ``name`` (see
    knnx.estimators.base.NeighborsClassifierBase) as a function of the hook's arguments
    giving its problems (a list of lines; none for a class without it). The hook is the
    class's code, called through :func:`knnx.estimators.classes.ask`: one that fails
    (sys.exit and os._exit included) gives one problem naming it,
    ``_data_problems() fails (ValueError: ...)``."""

    def problems(*args):
        def call():
            method = getattr(cls, name, None)
            found = method(*args) if method is not None else None
            return [] if found is None else [str(p) for p in found]

        try:
            return ask(f"{name}()", call)
        except EstimatorFault as fault:
            return [str(fault)]

    return problems


def has_proba(cls, params):
    """Whether an estimator with these parameters offers ``predict_proba`` (scikit-learn's
    SVC has it only with ``probability=True``): asked of an instance with them, else
    (the class refuses the setting: its cells will say why) of the class, else no."""
    try:
        return ask("__init__()", lambda: hasattr(cls(**params), "predict_proba"))
    except EstimatorFault:
        pass
    try:
        return ask("reading predict_proba", lambda: hasattr(cls, "predict_proba"))
    except EstimatorFault:
        return False


@dataclass
class Grids:
    """The settings of each algorithm entry (its ``params``, every default filled in; a
    tuned entry's grid itself, one cell per split) and, per entry, those of its
    ``params_for`` (dataset id -> settings)."""

    base: list
    params_for: list

    def on(self, label):
        """Per algorithm, its settings on dataset ``label``."""
        return [per.get(label, grid) for grid, per in zip(self.base, self.params_for, strict=True)]

    def none(self):
        """Per algorithm, no settings (a dataset that failed to load)."""
        return [[] for _ in self.base]


def algorithm_grids(spec, resolved):
    """The :class:`Grids` of a spec's algorithm entries (``resolved``: their
    ResolvedAlgorithm, None for an entry that did not resolve) and the problems found."""
    proba_metrics = [
        (i, m)
        for i, m in enumerate(spec.metrics)
        if METRIC_INPUT.get(m) in ("proba", "posterior") and m not in spec.metrics[:i]
    ]
    grids, problems = Grids([], []), []
    for a, (algo, ref) in enumerate(zip(spec.algorithms, resolved, strict=True)):
        params, twice = entry_params(algo)
        if ref is None or twice:
            problems += [f"algorithms[{a}]: {line}" for line in twice]
            grids.base.append([])
            grids.params_for.append({})
            continue
        fixed = lpo_rule(spec, ref)
        grid, found = setting_grid(ref, params, params, f"algorithms[{a}]", proba_metrics, fixed)
        problems += [_step_place(line, a, algo) for line in found]
        if algo.tune is not None and grid:
            problems += _tune_problems(a, algo, ref, spec)
            grid = [{**ref.defaults(), **params}]  # one cell per split: the grid itself
        grids.base.append(grid)
        per = {}
        for ds_id, replaced in algo.params_for.items():
            if not isinstance(replaced, dict):
                continue
            where = f"algorithms[{a}].params_for.{ds_id}"
            grid, found = setting_grid(ref, {**params, **replaced}, replaced, where, proba_metrics, fixed)
            problems += found
            if algo.tune is not None and grid:
                grid = [{**ref.defaults(), **params, **replaced}]
            per[ds_id] = grid
        grids.params_for.append(per)
    return grids, problems


def entry_params(algo):
    """``(params, problems)``: an algorithms entry's parameters with those of its steps
    as ``<step id>__<name>`` (scikit-learn's convention), and a line for each parameter
    given twice (in ``params`` and in its step's own ``params``)."""
    params, problems = dict(algo.params), []
    for i, step in enumerate(algo.steps):
        if isinstance(step, str):
            continue
        sid = step_id(step.model_dump())
        for name, value in step.params.items():
            key = f"{sid}{STEP_PARAM_SEPARATOR}{name}"
            if key in params:
                problems.append(f"params.{key}: also given as steps[{i}].params.{name}; give it once")
            params[key] = value
    return params, problems


def _step_place(line, a, algo):
    """A problem line about a step's parameter, placed where the spec gave it
    (``algorithms[0].steps[1].params.n_components``, not ``params.pca__n_components``)."""
    for i, step in enumerate(algo.steps):
        if isinstance(step, str):
            continue
        sid = step_id(step.model_dump())
        for name in step.params:
            given = f"algorithms[{a}].params.{sid}{STEP_PARAM_SEPARATOR}{name}:"
            if line.startswith(given):
                return f"algorithms[{a}].steps[{i}].params.{name}:" + line[len(given) :]
    return line


def lpo_rule(spec, ref):
    """The parameters protocol lpo's closed form computes whatever they are set to (the
    class's ``_lpo_rule``: kNN's ``tie: random``), which its cells record; {} under
    another protocol."""
    if not isinstance(spec.protocol, LeavePOut) or ref is None or ref.lpo_risk is None:
        return {}
    return dict(getattr(ref.cls, "_lpo_rule", None) or {})


def lpo_rule_problems(spec, a, ref):
    """A value the spec gives a parameter that protocol lpo's closed form fixes
    (:func:`lpo_rule`: kNN's tie), in params or params_for."""
    fixed = lpo_rule(spec, ref)
    entry = spec.algorithms[a]
    given = [("params", entry.params)] + [(f"params_for.{d}", p) for d, p in entry.params_for.items()]
    for where, params in given:
        for name, rule in fixed.items():
            values = params.get(name, rule) if isinstance(params, dict) else rule
            other = next((v for v in (values if isinstance(values, list) else [values]) if v != rule), None)
            if other is not None:
                return [
                    f"algorithms[{a}].{where}.{name}: {other!r} under protocol lpo, whose closed form computes "
                    f"{name}: {rule} (a vote tie costs its expected cost under a uniform random choice among the "
                    f"tied classes); the {name} rules but {rule} have no closed form: use protocol kfold for them"
                ]
    return []


def setting_grid(ref, params, checked, where, proba_metrics, fixed=None):
    """The settings of one algorithm entry's ``params`` (every default filled in) and the
    problems found: each value of the parameters in ``checked`` against the class's
    table, values listed twice, combinations no single value shows, and
    ``predict_proba`` for the probability metrics ``proba_metrics`` ((index, name)).
    ``where`` starts each problem line (``algorithms[0]`` or
    ``algorithms[0].params_for.glass``); ``fixed``: values that replace the defaults
    (:func:`lpo_rule`)."""
    prefix = where if ".params_for." in where else f"{where}.params"
    problems = [p for pname, pvalue in checked.items() for p in _value_problems(ref, pname, pvalue, prefix)]
    if problems or len(checked) != len(checked.keys() & params.keys()):
        return [], problems
    # Every parameter appears in results, defaults included, so that {"k": 3} and
    # {"k": 3, "weights": "uniform"} are one setting.
    defaults = ref.defaults()
    grid = [{**defaults, **(fixed or {}), **g} for g in expand_grid(params)]
    for g in grid:  # combinations that no single value shows (e.g. base l1 with scheme cpw)
        setting_problems = hook(ref.cls, "_setting_problems")(ref.estimator_setting(g))
        if setting_problems:
            return [], [f"{where}: {setting_problems[0]}"]
    for i, metric in proba_metrics:
        lacking = next((g for g in grid if not has_proba(ref.cls, ref.estimator_setting(g))), None)
        if lacking is not None:
            setting = "" if len(grid) == 1 else f" with {short_repr(_varying(params, lacking), 60)}"
            problems.append(
                f"metrics[{i}]: {metric} needs predicted probabilities; {where} ({ref.id}){setting} "
                "has no predict_proba"
            )
    return grid, problems


def _value_problems(ref, pname, pvalue, prefix):
    """The first problem (a list of one line, or none) of the values of one parameter:
    an empty list, a value listed twice, a value the class's table refuses."""
    values = pvalue if isinstance(pvalue, list) else [pvalue]
    if isinstance(pvalue, list) and not pvalue:
        return [f"{prefix}.{pname}: empty list of values"]
    grid_keys = [_grid_key(v) for v in values]
    if len(set(grid_keys)) != len(values):
        dup = next((v for i, v in enumerate(values) if grid_keys[i] in grid_keys[:i]), None)
        return [f"{prefix}.{pname}: value {dup!r} is listed twice"]
    for v in values:
        problem = ref.parameter_problem(pname, v)
        if problem is not None:
            whole = (
                isinstance(pvalue, list) and len(pvalue) > 1 and ref.parameter_problem(pname, pvalue) is None
            )
            if whole:
                problem = problem.rstrip(".") + one_value_hint(pname, pvalue)
            return [f"{prefix}.{pname}: {problem}"]
        infinite = find_leaf(v, lambda x: isinstance(x, float) and not math.isfinite(x))
        if infinite is not None:  # a value the class takes but no result file can hold
            hint = (
                "; minkowski with p = inf is metric: chebyshev"
                if pname == "metric_params" and infinite > 0
                else ""
            )
            return [
                f"{prefix}.{pname}: {short_repr(v, 60)} holds {infinite}, not a finite number; parameters are "
                f"written to results as JSON, which has no {infinite}{hint}"
            ]
    return []


def one_value_hint(pname, pvalue):
    """What to add to the problem of a value of a list ``pvalue`` that the parameter
    would take whole (an array such as ITML's ``bounds`` or ``prior``): the list was
    read as a grid of its items."""
    name = pname.split(STEP_PARAM_SEPARATOR)[-1]
    return (
        f"; a list is a grid of values (here {len(pvalue)} of them): one array is written as a "
        f"grid of one value, {name}: [{short_repr(pvalue, 60)}]"
    )


def array_grid_hint(params, problem):
    """The :func:`one_value_hint` of the parameter a setting's ``problem`` (``step <id>:
    <name> ...`` or ``<name> ...``) is about, when ``params`` (an entry's, steps'
    as ``<step id>__<name>``) gave it as a list of lists: a grid of rows, not a matrix."""
    for pname, pvalue in params.items():
        sid, _, name = pname.rpartition(STEP_PARAM_SEPARATOR)
        about = problem.removeprefix(f"step {sid}: ") if sid else problem
        if (
            isinstance(pvalue, list)
            and len(pvalue) > 1
            and all(isinstance(v, list) for v in pvalue)
            and about.startswith(f"{name} ")
        ):
            return one_value_hint(pname, pvalue)
    return ""


def _grid_key(value):
    """What makes two grid values one setting: equal numbers are one (``1`` and ``1.0``
    would run the same fit under two params strings), compared exactly as Python
    compares an int with a float (``2**53 + 1`` is not ``2**53``, though both are one
    float64), inside lists and mappings too (``[1, 2]`` and ``[1.0, 2.0]``,
    ``{x: 1}`` and ``{x: 1.0}``); booleans are not numbers (``true`` is not ``1``).
    Values are nested at most :data:`knnx.limits.MAX_DEPTH` levels (checked before)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)  # 1 == 1.0 and hash(1) == hash(1.0): one key
    if isinstance(value, list | tuple):
        return ("list", tuple(_grid_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _grid_key(v)) for k, v in value.items())))
    return ("json", json.dumps(value, sort_keys=True, default=str))


def _varying(params, setting):
    """The grid parameters' values in one setting (what tells it from the others)."""
    return {k: setting[k] for k, v in params.items() if isinstance(v, list)}


def fitted_settings(spec, grids_here):
    """Per algorithm, the settings its cells fit: a tuned entry's cell fits each setting
    of its grid (on inner folds), the others one each."""
    return [
        tuned_settings(grid[0]) if grid and spec.algorithms[a].tune is not None else grid
        for a, grid in enumerate(grids_here)
    ]


def _tune_problems(a, algo, ref, spec):
    """What makes a ``tune:`` entry impossible whatever the data."""
    problems = []
    metric = algo.tune.metric
    if metric not in METRICS or METRIC_INPUT.get(metric) == "posterior":
        known = ", ".join(m for m in METRICS if METRIC_INPUT.get(m) != "posterior")
        problems.append(
            f"algorithms[{a}].tune.metric: '{metric}' cannot choose a setting; use one of {known}"
        )
    elif METRIC_INPUT[metric] == "proba":
        settings = [{**ref.defaults(), **s} for s in tuned_settings(entry_params(algo)[0])]
        if not all(has_proba(ref.cls, ref.estimator_setting(s)) for s in settings):
            problems.append(f"algorithms[{a}].tune.metric: {metric} needs predict_proba in every setting")
    if isinstance(spec.protocol, LeavePOut):
        problems.append(f"algorithms[{a}].tune: protocol lpo has no training parts to tune on")
    return problems
