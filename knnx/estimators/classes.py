"""What validation reads of an estimator or step class, once, asking its code only
through :func:`ask` (every fault of that code contained): :func:`inspect_classifier`
for an algorithm entry, the facts of any class (:class:`ClassFacts`), and the
parameters the runner supplies (:data:`RUNNER_PARAMS`)."""

import json
import math
from dataclasses import dataclass, field

from knnx.errors import describe, exit_guard, user_fault

# Parameters the runner supplies to the estimators that have them, never a spec: name ->
# what it is.
RUNNER_PARAMS = {"graphs": "the process's knnx.GraphStore, see knnx.neighbors.graphs"}


def _count_names(cls):
    """A class's ``_neighbor_counts`` as a tuple of names, or None for none; ValueError
    for anything else. Class code: run under :func:`ask`."""
    names = getattr(cls, "_neighbor_counts", None)
    if names is None:
        return None
    if isinstance(names, tuple | list) and all(isinstance(name, str) for name in names):
        return tuple(str(name) for name in names)
    raise ValueError(f"expected a tuple of parameter names or None, got {names!r}")


# --- asking a class that is not knnx's -----------------------------------------------------
# Validation asks an estimator class what it needs once, when its entry is resolved
# (:func:`_inspect`: an instance made with its defaults, their get_params, their tags and
# the class attributes validation reads, kept in :class:`ClassFacts`), and asks again
# only what depends on a setting (its hooks, a constraint's check, a probe of one
# setting). Each call goes through :func:`ask`.


class EstimatorFault(Exception):
    """A call into an estimator class's code failed (:func:`ask`): ``method`` names the
    call (``get_params()``, ``reading _neighbor_param``), ``cause`` the fault in one line
    (``ProcessExit: os._exit(0) called``); ``str()``: ``get_params() fails (cause)``."""

    def __init__(self, method, cause):
        super().__init__(f"{method} fails ({cause})")
        self.method, self.cause = method, cause


def ask(method, call):
    """``call()``, code of an estimator class (``method`` names it in messages), with
    every fault of that code contained: any exception but Ctrl-C's KeyboardInterrupt,
    ``sys.exit`` and ``os._exit`` (:func:`knnx.errors.exit_guard`) included, raises
    :class:`EstimatorFault`. The fault is described under the guard too (its
    ``__str__`` is the class's code)."""
    with exit_guard():
        try:
            return call()
        except BaseException as exc:  # noqa: BLE001 - user code: sys.exit and os._exit too
            if not user_fault(exc):
                raise
            cause = describe(exc, 120)
    raise EstimatorFault(method, cause)


@dataclass(frozen=True)
class ClassFacts:
    """What validation reads of an estimator class, once (:func:`_inspect`).

    names : its parameters (get_params of an instance made with its defaults).
    defaults : those defaults a spec can write (JSON values, plain containers).
    constraints : its ``_parameter_constraints`` (a plain dict), or None.
    knnx_params : the constraints are knnx's tables (each value has ``check``).
    hints : its ``_parameter_hints`` as text (name -> hint).
    neighbor_param : its ``_neighbor_param`` (see :class:`ResolvedAlgorithm`).
    count_names : its ``_neighbor_counts`` (see :func:`neighbor_counts`), or None.
    """

    names: tuple
    defaults: dict
    constraints: dict | None = None
    knnx_params: bool = False
    hints: dict = field(default_factory=dict)
    neighbor_param: tuple | None = None
    count_names: tuple | None = None


_INIT = "cannot be made with its defaults ({cause}); every parameter needs a default"
_CONVENTIONS = {
    "get_params()": "scikit-learn's convention: __init__ stores each parameter, unchanged, as an attribute of the "
    "same name",
    "__sklearn_tags__()": "scikit-learn's convention: __sklearn_tags__ returns the Tags of super().__sklearn_tags__(), "
    "changed where the class differs",
}


def inspect_classifier(cls):
    """``(problem, facts)``: why ``cls`` is not a scikit-learn-compatible classifier class
    (one phrase naming the call that failed, or None), and its :class:`ClassFacts`
    (None with a problem). Each call into the class goes through :func:`ask`."""
    if not isinstance(cls, type):
        return f"is a {type(cls).__name__}, not a class", None
    try:
        missing = ask(
            "reading its methods",
            lambda: [m for m in ("fit", "predict", "get_params") if not callable(getattr(cls, m, None))],
        )
        if missing == ["predict"] and ask(
            "reading its methods", lambda: callable(getattr(cls, "fit_resample", None))
        ):
            return (
                "is a sampler (fit_resample), not a classifier; a sampler goes among the entry's steps",
                None,
            )
        if missing:
            return f"is not a scikit-learn-compatible classifier (no {', '.join(missing)})", None
        module = ask("reading __module__", lambda: getattr(cls, "__module__", None))
        if type(module) is not str:  # its code's identity (the cell hash) starts from it
            return (
                f"has a __module__ of type {type(module).__name__}, not the name of the module defining it",
                None,
            )
        try:
            instance = ask("__init__()", cls)
        except EstimatorFault as fault:
            return _INIT.format(cause=fault.cause), None
        read = ask("get_params()", lambda: read_params(instance))
        if isinstance(read, str):
            return read, None
        kind = ask("__sklearn_tags__()", lambda: estimator_kind(instance))
        if kind not in ("classifier", "untagged", *_NOT_CLASSIFIERS):  # no type in its tags: its own word
            kind = ask(
                "reading _estimator_type", lambda: _text(getattr(instance, "_estimator_type", "classifier"))
            )
        facts = ClassFacts(*read, **class_attributes(cls))
    except EstimatorFault as fault:
        convention = _CONVENTIONS.get(fault.method)
        return (f"{fault}; {convention}" if convention else str(fault)), None
    if kind in _NOT_CLASSIFIERS:
        return f"is {_NOT_CLASSIFIERS[kind]}, not a classifier", None
    if kind not in ("classifier", "untagged"):
        return "is not a classifier", None
    return None, facts


_NOT_CLASSIFIERS = {
    "regressor": "a regressor",
    "clusterer": "a clusterer",
    "outlier_detector": "an outlier detector",
}


def read_params(instance):
    """``(names, defaults)`` of ``instance.get_params(deep=False)``, or why it is not a
    mapping of parameter names to values (class code: run under :func:`ask`)."""
    params = instance.get_params(deep=False)
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        return f"get_params() returned {type(params).__name__}, not a mapping of parameter names to values"
    params = {str(k): v for k, v in dict(params).items()}
    defaults = {k: _plain(v) for k, v in params.items() if k not in RUNNER_PARAMS and jsonable(v)}
    return tuple(params), defaults


def estimator_kind(instance):
    """The ``estimator_type`` of the instance's scikit-learn tags (``classifier``,
    ``regressor``, ...; None for none), ``untagged`` for a class without tags (no
    ``__sklearn_tags__`` in its classes: judged by its fit). Class code: run under
    :func:`ask`."""
    from sklearn.utils import get_tags

    try:
        tags = get_tags(instance)
    except AttributeError as exc:
        if "__sklearn_tags__" in str(exc):  # no class of its MRO implements the tags
            return "untagged"
        raise
    return _text(tags.estimator_type)


def _text(value):
    return value if type(value) is str else None


def class_attributes(cls):
    """The class attributes validation reads, each under :func:`ask` (named by the
    attribute), as plain values."""

    def constraints():
        table = getattr(cls, "_parameter_constraints", None)
        if not isinstance(table, dict):
            return None, False
        table = dict(table)
        return table, all(hasattr(c, "check") for c in table.values())

    def hints():
        table = getattr(cls, "_parameter_hints", None)
        return {str(k): str(v) for k, v in dict(table).items()} if isinstance(table, dict) else {}

    table, knnx_params = ask("reading _parameter_constraints", constraints)
    return {
        "constraints": table,
        "knnx_params": knnx_params,
        "hints": ask("reading _parameter_hints", hints),
        "neighbor_param": ask(
            "reading _neighbor_param", lambda: _neighbor_param(getattr(cls, "_neighbor_param", None))
        ),
        "count_names": ask("reading _neighbor_counts", lambda: _count_names(cls)),
    }


def _neighbor_param(value):
    """A class's ``_neighbor_param`` as ``(name, slack)``, or None for None; ValueError
    for anything else."""
    if value is None:
        return None
    if isinstance(value, tuple | list) and len(value) == 2:
        name, slack = value
        if isinstance(name, str) and isinstance(slack, int) and not isinstance(slack, bool):
            return str(name), int(slack)
    raise ValueError(f"expected (parameter name, slack) or None, got {value!r}")


def _plain(value):
    """A JSON value rebuilt of Python's own types (a default kept by knnx cannot run the
    class's code when it is copied or compared)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def jsonable(value):
    if value is None or isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple | dict):
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            return False
        return True
    return False
