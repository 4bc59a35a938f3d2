"""What a spec's ``steps:`` name: the built-in table and the resolution of each step
to its class, checked once as an algorithm entry's class is (see
:mod:`knnx.estimators.registry`)."""

import dataclasses
import re
from numbers import Integral

from knnx.errors import KnnxError
from knnx.estimators.classes import (
    ClassFacts,
    EstimatorFault,
    ask,
    class_attributes,
    estimator_kind,
    read_params,
)
from knnx.estimators.registry import STEP_SEP, ResolvedAlgorithm
from knnx.limits import MAX_RANDOMIZED
from knnx.plugins import import_object, object_version

# Built-in step name -> import path of its class. knnx's own classes are in
# knnx.steps.builtin, knnx.reduction and knnx.metric_learning; the others are
# scikit-learn's, used as they are.
STEPS = {
    "allknn": "knnx.reduction:AllKNN",
    "cnn": "knnx.reduction:CNN",
    "drop3": "knnx.reduction:DROP3",
    "encode": "knnx.steps.builtin:Encode",
    "enn": "knnx.reduction:ENN",
    "fcnn": "knnx.reduction:FCNN",
    "hmnei": "knnx.reduction:HMNEI",
    "ib3": "knnx.reduction:IB3",
    "icf": "knnx.reduction:ICF",
    "impute": "sklearn.impute:SimpleImputer",
    "itml": "knnx.metric_learning:ITML",
    "lfda": "knnx.metric_learning:LFDA",
    "lmnn": "knnx.metric_learning:LMNN",
    "lvq": "knnx.reduction:LVQ",
    "multiedit": "knnx.reduction:Multiedit",
    "nca": "knnx.metric_learning:NCA",
    "ncr": "knnx.reduction:NCR",
    "oss": "knnx.reduction:OSS",
    "pca": "sklearn.decomposition:PCA",
    "renn": "knnx.reduction:RENN",
    "rmhc": "knnx.reduction:RMHC",
    "rnn": "knnx.reduction:RNN",
    "scale": "knnx.steps.builtin:Scale",
    "ssma": "knnx.reduction:SSMA",
    "tomek_links": "knnx.reduction:TomekLinks",
}

# The built-in prototype selections and generations (knnx.reduction): steps, and
# algorithm names (the method, then kNN: knnx.spec.named).
SELECTIONS = tuple(name for name, path in STEPS.items() if path.startswith("knnx.reduction:"))

# A step's parameter in a setting: ``<step id>__<parameter>`` (scikit-learn's convention).
STEP_PARAM_SEPARATOR = STEP_SEP

# A step id: letters and digits, single underscores inside (``__`` separates a step id
# from its parameter's name).
STEP_ID = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")


def step_id(entry):
    """The id of one step entry (a name, or a mapping with ``name`` or ``estimator`` and
    an optional ``id``): its ``id``, else its built-in name, else its class's name in
    lower case (as scikit-learn's ``make_pipeline`` names steps)."""
    if isinstance(entry, str):
        return entry
    if entry.get("id"):
        return entry["id"]
    if entry.get("name") is not None:
        return entry["name"]
    path = entry.get("estimator") or ""
    return path.rsplit(":", 1)[-1].rsplit(".", 1)[-1].lower()


def resolve_steps(entries, base_dir=None):
    """``(steps, problems)``: the :class:`~knnx.estimators.registry.ResolvedAlgorithm` of
    each step entry (``id`` its step id) and one line per problem, each starting with
    the step's place (``steps[1].name: ...``); ``steps`` is None if there is any."""
    steps, problems, seen = [], [], {}
    for i, entry in enumerate(entries):
        entry = {"name": entry} if isinstance(entry, str) else dict(entry)
        field = "estimator" if entry.get("estimator") is not None else "name"
        sid = step_id(entry)
        if not STEP_ID.fullmatch(sid):
            problems.append(
                f"steps[{i}]: its id {sid!r} is not letters and digits with single underscores inside (a "
                "parameter is written <step id>__<name>); give it an 'id'"
            )
            continue
        if sid in seen:
            problems.append(f"steps[{i}]: '{sid}' is already the id of steps[{seen[sid]}]; give one an 'id'")
            continue
        seen[sid] = i
        try:
            steps.append(_resolve(entry, sid, base_dir))
        except KnnxError as exc:
            problems.append(f"steps[{i}].{field}: {exc}")
    return (None if problems else tuple(steps)), problems


def _resolve(entry, sid, base_dir):
    name, path = entry.get("name"), entry.get("estimator")
    if path is None and name not in STEPS:
        raise KnnxError(
            f"unknown step '{name}'; known: {', '.join(sorted(STEPS))} (or estimator: 'package.module:Class')"
        )
    source = STEPS[name] if path is None else path
    cls = import_object(source, base_dir)
    problem, facts = inspect_step(cls)
    if problem:
        raise KnnxError(f"'{path or name}' {problem}")
    limits = _sklearn_limits().get(f"{cls.__module__}.{cls.__qualname__}")
    if limits and facts.constraints is not None and not facts.knnx_params:
        facts = dataclasses.replace(facts, constraints={**facts.constraints, **limits})
    return ResolvedAlgorithm(
        sid,
        cls,
        name=name if path is None else None,
        path=source,
        version=object_version(cls, source),
        facts=facts,
    )


def _sklearn_limits():
    """Upper limits knnx puts on parameters that a scikit-learn step class leaves open
    (its own constraint table, with these entries replaced, checks a spec's values), by
    the class's module and name: the randomized PCA's power iterations and oversamples
    (:data:`knnx.limits.MAX_RANDOMIZED`)."""
    from sklearn.utils._param_validation import Interval, StrOptions

    return {
        "sklearn.decomposition._pca.PCA": {
            "iterated_power": [StrOptions({"auto"}), Interval(Integral, 0, MAX_RANDOMIZED, closed="both")],
            "n_oversamples": [Interval(Integral, 1, MAX_RANDOMIZED, closed="both")],
        }
    }


def inspect_step(cls):
    """``(problem, facts)``: why ``cls`` cannot be a step (one phrase, or None) and its
    :class:`~knnx.estimators.classes.ClassFacts`. A step is a class made with its
    defaults, with ``get_params`` and ``fit``, and ``transform`` (a transformer) or
    ``fit_resample`` (a sampler or selection); a classifier is not a step (it comes
    last). Each call into the class goes through
    :func:`~knnx.estimators.classes.ask`."""
    if not isinstance(cls, type):
        return f"is a {type(cls).__name__}, not a class", None
    try:
        has = ask(
            "reading its methods",
            lambda: {
                m: callable(getattr(cls, m, None)) for m in ("fit", "transform", "fit_resample", "get_params")
            },
        )
        if not (has["fit"] and has["get_params"]):
            missing = ", ".join(m for m in ("fit", "get_params") if not has[m])
            return f"is not a scikit-learn-compatible step (no {missing})", None
        try:
            instance = ask("__init__()", cls)
        except EstimatorFault as fault:
            return f"cannot be made with its defaults ({fault.cause}); every parameter needs a default", None
        read = ask("get_params()", lambda: read_params(instance))
        if isinstance(read, str):
            return read, None
        kind = ask("__sklearn_tags__()", lambda: estimator_kind(instance))
        facts = ClassFacts(*read, **class_attributes(cls))
    except EstimatorFault as fault:
        return str(fault), None
    if kind != "classifier" and not (has["transform"] or has["fit_resample"]):
        return "is neither a transformer (fit and transform) nor a sampler (fit_resample)", None
    if kind == "classifier":
        return (
            "is a classifier; the classifier comes last, as the entry's name or estimator, not among its steps",
            None,
        )
    if kind in ("regressor", "clusterer", "outlier_detector"):
        return f"is a {kind.replace('_', ' ')}, not a transformer or a sampler", None
    return None, facts


# Rows of a training part a transformer of one's own is probed on at validation.
PROBE_ROWS = 20


def probe_problem(step, setting, X, y):
    """Why a transformer that is not knnx's own cannot be a step, seen by fitting it with
    ``setting`` on the rows ``X, y`` (a few training rows) and transforming them: it
    returns a sparse matrix (scikit-learn's ``OneHotEncoder`` by default), or, for a
    class outside scikit-learn and imbalanced-learn, another number of rows. None if it
    does neither, is a sampler, or fails there (its cells will say why: the probe runs
    it alone, without the steps before it)."""
    import numpy as np

    from knnx.steps.chain import SHARED_PACKAGES

    cls = step.cls
    package = cls.__module__.partition(".")[0]
    if package == "knnx" or callable(getattr(cls, "fit_resample", None)):
        return None

    def transformed():
        import warnings

        with warnings.catch_warnings():  # a probe on 20 rows: its warnings are not the run's
            warnings.simplefilter("ignore")
            made = cls(**setting)
            made.fit(X, y)
            return made.transform(X)

    try:
        out = ask("probing it", transformed)
    except EstimatorFault:
        return None
    if hasattr(out, "toarray") and not isinstance(out, np.ndarray):
        return (
            f"step {step.id}: transform returned a sparse matrix (probed on {len(X)} training rows); the "
            "classifier takes dense rows: set the step's dense output (OneHotEncoder: sparse_output: false; "
            "KBinsDiscretizer: encode: onehot-dense)"
        )
    try:
        n = len(out)
    except TypeError:
        return None
    if package in SHARED_PACKAGES or n == len(X):
        return None
    return (
        f"step {step.id}: transform returned {n} rows for {len(X)} (probed on {len(X)} training rows); a "
        "transformer keeps every row (a step that removes or adds rows is a sampler, with fit_resample)"
    )
