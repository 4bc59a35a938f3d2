"""What a dataset's column types ask of the algorithms run on it: one line per
algorithm and dataset, naming both and the column.

A dataset may hold nominal category codes (``Dataset.nominal``, from ``categorical:
keep``), missing values (NaN, from ``missing: keep``) or be a distance matrix
(``Dataset.precomputed``, from a loader). An algorithm whose class has a ``metric``
parameter runs under the metric of its setting (``metric``, default ``euclidean``;
``metric_params``), and what that metric takes is :data:`knnx.neighbors.metrics.METRICS`'
(the wording is :func:`knnx.neighbors.metrics.data_problem`'s); the metric is also
fitted on the whole dataset (:func:`knnx.neighbors.metrics.fit_metric`), which finds
what would fail every training part (a singular covariance for mahalanobis: a training
part's rows are some of the dataset's, so its covariance is singular too). An algorithm
without one (cw, pw, cpw, scikit-learn's classifiers, the user's), or with a metric
knnx does not know, reads every column as a number: it takes no nominal codes
(``categorical: onehot`` makes numbers of them) unless it has a ``nominal`` parameter
and no ``metric`` (a class of one's own that says it takes them), no missing values
unless its scikit-learn tags say ``allow_nan``, and no distance matrix. On a dataset
entry that does not say ``categorical``, each algorithm is checked against the view
it reads (:mod:`knnx.spec.views`).
"""

import numpy as np

from knnx.estimators.registry import EstimatorFault, ask
from knnx.neighbors.metrics import METRICS, MIXED, data_problem, fit_metric
from knnx.spec.plan import canonical_json
from knnx.spec.views import wanted_view


def type_problems(resolved, settings, ds):
    """The problems of each algorithm's settings (``settings[a]``: the settings its cells
    fit; ``resolved[a]``: its ResolvedAlgorithm) on dataset ``ds``: the first of each
    algorithm, one line each, without the dataset entry's place."""
    facts = _facts(ds)
    fits = {}  # (metric, metric_params) -> the problem of its fit on the whole dataset
    problems = []
    for a, grid in enumerate(settings):
        ref = resolved[a]
        if ref is None or not grid:
            continue
        params = ref.param_names
        at = f"algorithms[{a}] ({ref.id}) on '{ds.name}'"
        for g in grid:
            if ref.steps:
                problem = _steps_problem(ref, g, ds, facts, fits, at)
            else:
                problem = _setting_problem(ref, params, g, ds, facts, fits, at)
            if problem:
                problems.append(problem)
                break
    return problems


def euclidean_only_problem(ds, what):
    """Why ``what`` (a method that reads every column as a number, e.g. an active
    learning loop) cannot run on ``ds``: its first nominal column, missing value or its
    distance matrix; None if it can."""
    facts = _facts(ds)
    if ds.precomputed:
        return f"'{ds.name}' is a precomputed distance matrix; {what} reads features"
    if facts["nominal"]:
        return (
            f"'{ds.name}': column '{facts['nominal'][0]}' holds nominal category codes (categorical: keep); "
            f"{what} reads every column as a number: use categorical: onehot"
        )
    if facts["missing"]:
        return (
            f"'{ds.name}': column '{facts['missing']}' has missing values (missing: keep); {what} takes none: "
            "use missing: drop_rows or fill"
        )
    return None


def _facts(ds):
    """The dataset's nominal columns (names), its first column with a missing value and,
    if it is typed (``categorical: keep``), its first numeric column (names, or None)."""
    names = ds.feature_names
    nominal = [names[j] for j in ds.nominal]
    numeric = None
    if ds.nominal and len(ds.nominal) < len(names):
        numeric = next(f for j, f in enumerate(names) if j not in ds.nominal)
    missing = None
    if not ds.precomputed:
        cols = np.flatnonzero(np.isnan(ds.X).any(axis=0))
        if cols.size:
            missing = names[int(cols[0])]
    facts = {"nominal": nominal, "missing": missing, "numeric": numeric, "encoded": _encoded(ds)}
    # bundled heart, australian, vote: an entry without categorical gives the numbers as filed
    facts["as_filed"] = any(
        a.kind == "nominal" and a.categories and all(map(_number, a.categories)) for a in ds.attributes
    )
    return facts


_AS_FILED = (
    " (its file stores the nominal attributes as numbers, which an entry without categorical gives as filed, "
    "not as one-hot indicators)"
)


def _leave_out(facts):
    """The advice to leave ``categorical`` out, where that gives one-hot indicators."""
    return (
        ""
        if facts.get("as_filed")
        else ", or leave categorical out of the dataset entry to give it one-hot indicators"
    )


def _number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _encoded(ds):
    """``(attribute, categorical, indicators)``: the first attribute that ``ds``'s source
    types as nominal and that its loader wrote as numbers (``categorical``: onehot or
    ordinal; ``indicators``: written as one-hot indicators, else as numbers: ordinal
    codes, or bundled heart's filed numbers under either), or None."""
    if ds.nominal or ds.precomputed:
        return None
    how = ds.metadata.get("options", {}).get("categorical") if isinstance(ds.metadata, dict) else None
    if how not in ("onehot", "ordinal"):
        return None
    typed = next((a.name for a in ds.attributes if a.kind == "nominal"), None)
    if typed is None:  # a CSV's, a bundled set's or a loader's: recorded by its loader
        typed = next(iter(ds.metadata.get("nominal_attributes", ())), None)
    if typed is None and how == "onehot":
        typed = next((f.split("=", 1)[0] for f in ds.feature_names if "=" in f), None)
    if typed is None:
        return None
    indicators = any(f.split("=", 1)[0] == typed for f in ds.feature_names if "=" in f)
    return typed, how, indicators


def _setting_problem(ref, params, g, ds, facts, fits, at):
    metric = g.get("metric", "euclidean") if "metric" in params else None
    known = isinstance(metric, str) and metric in METRICS
    if ds.precomputed:
        if metric == "precomputed":
            return None
        if metric is None:
            return (
                f"{at}: '{ds.name}' is a precomputed distance matrix, and {ref.id} has no metric parameter (it "
                "would read the distances as features); use an algorithm with metric: precomputed"
            )
        return (
            f"{at}: '{ds.name}' is a precomputed distance matrix; {ref.id} runs under metric {metric!r} (set "
            "metric: precomputed)"
        )
    if metric == "precomputed":
        return (
            f"{at}: metric 'precomputed' needs a dataset of distances (a loader's Dataset with "
            f"precomputed=True); '{ds.name}' holds features"
        )
    if not known:
        # a class with a nominal parameter and no metric says it takes nominal codes
        told = metric is None and "nominal" in params
        return _numbers_only_problem(ref, g, {**facts, "nominal": []} if told else facts, at)
    if METRICS[metric].nominal and not facts["nominal"] and facts["encoded"]:
        name, how, indicators = facts["encoded"]
        if "nominal" not in params:
            return (
                f"{at}: '{ds.name}' has nominal attribute '{name}', and {ref.id} has no nominal parameter to tell "
                f"metric '{metric}' which columns hold its codes; use a classifier that has one (knn)"
            )
        written = "one-hot indicators" if indicators else "numbers"
        return (
            f"{at}: '{ds.name}' gives nominal attribute '{name}' as {written} (categorical: {how}), which metric "
            f"'{metric}' would read as numbers; leave categorical out of the dataset entry and {ref.id} reads its "
            "category codes"
        )
    metric_params = g.get("metric_params")
    given = metric_params if isinstance(metric_params, dict) else None  # else the fit below says
    problem = data_problem(metric, facts["nominal"], facts["missing"], at, metric_params=given)
    if problem:
        return problem
    if metric == "vdm" and facts["numeric"]:
        return (
            f"{at}: column '{facts['numeric']}' is numeric; metric 'vdm' reads every column as nominal (use hvdm, "
            "heom or gower for numeric and nominal attributes)"
        )
    told = metric in MIXED or bool((given or {}).get("onehot"))  # needs to be told the nominal columns
    if facts["nominal"] and "nominal" not in params and told:
        return (
            f"{at}: column '{facts['nominal'][0]}' holds nominal category codes, and {ref.id} has no nominal "
            f"parameter to tell metric '{metric}' which columns they are; use categorical: onehot"
        )
    given_nominal = g.get("nominal") if "nominal" in params else None
    if isinstance(given_nominal, list) and given_nominal:
        problem = _given_nominal_problem(given_nominal, metric, ds, at)
        if problem:
            return problem
    return _fit_problem(metric, metric_params, ds, fits, at, given_nominal)


def _given_nominal_problem(nominal, metric, ds, at):
    """The setting's own ``nominal`` (column indices) against the dataset: an index
    outside its columns, or (for a metric that reads category codes) a named column
    holding a value that is no code, with the column's name and the first such row."""
    d = ds.n_features
    for j in nominal:
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < d:
            return f"{at}: nominal: column index {j!r} is not one of the dataset's {d} columns (0 to {d - 1})"
    if not METRICS[metric].nominal:
        return None
    for j in nominal:
        col = ds.X[:, j]
        bad = np.flatnonzero(~np.isnan(col) & ((col < 0) | (col != np.floor(col)) | np.isinf(col)))
        if bad.size:
            r = int(bad[0])
            return (
                f"{at}: nominal: column {j} ('{ds.feature_names[j]}') holds {float(col[r])!r} at row {r}, not a "
                "category code 0, 1, 2, ...; nominal names the columns that hold codes"
            )
    return None


def _steps_problem(ref, g, ds, facts, fits, at):
    """An algorithm with steps: each step that reads the dataset's columns (the first,
    and each after steps that keep them: selections) takes what a classifier would
    under its metric if it has one (a selection's), else nominal codes only if it has a
    ``nominal`` parameter, which the runner sets (``encode``), and missing values only
    if its tags allow NaN; no step reads a distance matrix. The classifier reads the
    dataset's columns too when every step keeps them, else what the steps give
    (features, never distances)."""
    if ds.precomputed:
        return f"{at}: '{ds.name}' is a precomputed distance matrix; step {ref.steps[0].id} reads features"
    first, settings = ref.steps[0], ref.step_settings(g)
    if facts["nominal"] and "metric" in first.param_names and wanted_view(ref, g) == "keep":
        # the codes are the view the first step takes, not the entry's categorical: keep
        metric = settings[0].get("metric", "euclidean")
        facts = {
            **facts,
            "codes": f"the view step {first.id} takes under metric {metric}",
            "instead": f"put an encode step after {first.id}, or give {first.id} a numeric metric",
        }
    for step, setting in zip(ref.steps, settings, strict=True):
        if "metric" in step.param_names:
            problem = _setting_problem(step, step.param_names, setting, ds, facts, fits, at)
        else:
            problem = _plain_step_problem(step, setting, facts, at)
        if problem:
            return problem
        if not getattr(step.cls, "keeps_columns", False):
            break
    else:  # every step returns rows of X: the classifier reads the dataset's columns
        own = ref.estimator_setting(g)
        problem = _setting_problem(ref, ref.param_names, own, ds, facts, fits, at)
        return _after_steps_problem(problem, ref, own, facts, at)
    if "metric" in ref.param_names and ref.estimator_setting(g).get("metric") == "precomputed":
        return f"{at}: metric 'precomputed' reads distances, and {ref.id}'s steps give features"
    return None


def _after_steps_problem(problem, ref, own, facts, at):
    """``problem`` of the classifier after steps that keep the columns, said of the
    steps where it comes from them: a metric that reads category codes after a first
    step that was given one-hot indicators or numbers."""
    metric = own.get("metric", "euclidean") if "metric" in ref.param_names else None
    if problem is None or facts["nominal"] or not facts["encoded"] or metric not in METRICS:
        return problem
    if not METRICS[metric].nominal:
        return problem
    first = ref.steps[0]
    name, _, indicators = facts["encoded"]
    written = "one-hot indicators" if indicators else "numbers"
    codes = (
        "give it a metric that reads category codes (heom, hvdm, gower), or "
        if "metric" in first.param_names
        else ""
    )
    return (
        f"{at}: step {first.id} reads nominal attribute '{name}' as {written}, and the classifier after it reads "
        f"the same columns, which metric '{metric}' would read as numbers; {codes}give the classifier a numeric "
        "metric"
    )


def _plain_step_problem(step, setting, facts, at):
    """A step without a metric that reads the dataset's columns: nominal codes only with a
    ``nominal`` parameter (``encode``), missing values only if its tags allow NaN."""
    if facts["nominal"] and "nominal" not in step.param_names:  # encode is told the nominal columns
        return (
            f"{at}: column '{facts['nominal'][0]}' holds nominal category codes "
            f"({facts.get('codes', 'categorical: keep')}), which step {step.id} would read as numbers; "
            + facts.get("instead", "put an encode step first" + (_leave_out(facts) or _AS_FILED))
        )
    if facts["missing"] and not _allows_nan(step.cls, setting):
        return (
            f"{at}: column '{facts['missing']}' has missing values (missing: keep), which step {step.id} does not "
            "take (its scikit-learn tags do not allow NaN); put an impute step first, or use missing: drop_rows "
            "or fill"
        )
    return None


def _numbers_only_problem(ref, g, facts, at):
    """An algorithm that reads every column as a number: no nominal codes, no missing
    values unless its scikit-learn tags allow NaN."""
    if facts["nominal"]:
        return (
            f"{at}: column '{facts['nominal'][0]}' holds nominal category codes "
            f"({facts.get('codes', 'categorical: keep')}), which {ref.id} would read as numbers (it has no metric "
            "that takes nominal attributes); "
            + facts.get("instead", "give it steps: [encode]" + (_leave_out(facts) or _AS_FILED))
        )
    if facts["missing"] and not _allows_nan(ref.cls, g):
        return (
            f"{at}: column '{facts['missing']}' has missing values (missing: keep), which {ref.id} does not "
            "take (its scikit-learn tags do not allow NaN); use missing: drop_rows or fill"
        )
    return None


def _allows_nan(cls, setting):
    """Whether the tags of an instance with ``setting`` (else of one with the defaults)
    allow NaN; no for a class without tags, or whose code fails here (its cells say why)."""
    from sklearn.utils import get_tags

    def allows(make):
        return bool(get_tags(make()).input_tags.allow_nan)

    for make in (lambda: cls(**setting), cls):
        try:
            return ask("__sklearn_tags__()", lambda make=make: allows(make))
        except EstimatorFault:
            continue
    return False


def _fit_problem(metric, metric_params, ds, fits, at, given_nominal=None):
    """The metric fitted on the whole dataset (statistics that fail there fail on every
    training part), with the setting's ``nominal`` if it gives one, else the dataset's:
    its DataError as a line, or None."""
    try:
        key = (metric, canonical_json(metric_params), repr(given_nominal))
    except (TypeError, ValueError):
        key = (metric, repr(metric_params), repr(given_nominal))
    if key not in fits:
        try:
            nominal = given_nominal or list(ds.nominal) or None
            fit_metric(metric, ds.X, ds.y, nominal=nominal, metric_params=metric_params)
            fits[key] = None
        except Exception as exc:  # noqa: BLE001 - DataError, or metric_params of the wrong type
            text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            fits[key] = f"metric '{metric}' fitted on all its rows: {text}"
    return None if fits[key] is None else f"{at}: {fits[key]}"
