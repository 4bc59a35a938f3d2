"""Estimator objects given through the Python API, written as spec entries.

``knnx.run_spec`` takes a spec as a dict, whose algorithm entry may give, in place of an
import path, an estimator object: a classifier made with its parameters, or a
scikit-learn or imbalanced-learn ``Pipeline`` whose last step is a classifier. Each is
written as the spec entry it stands for (:func:`object_entries`): the class's import
path and the parameters that differ from its defaults, the pipeline's steps before the
classifier as ``steps:`` under their names in the pipeline. The run then treats it as
any entry (validated, hashed, written in ``spec.yaml``, rerun from there), so an
object whose parameters a spec cannot hold (another estimator, a function) is refused
in one line rather than pickled.
"""

import sys

from knnx.estimators.classes import jsonable

# What a step of a pipeline may be instead of an object (scikit-learn skips them).
_SKIPPED = ("passthrough", None)


def object_entries(data):
    """``(data, problems)``: the spec mapping ``data`` with each algorithm entry whose
    ``estimator`` is an object written as its entry (see the module docstring), and one
    line per object that cannot be (``algorithms[0].estimator: ...``)."""
    algorithms = data.get("algorithms") if isinstance(data, dict) else None
    if not isinstance(algorithms, list) or not any(_holds_object(e) for e in algorithms):
        return data, []
    out, problems = [], []
    for a, entry in enumerate(algorithms):
        if not _holds_object(entry):
            out.append(entry)
            continue
        try:
            out.append(_entry_of(entry))
        except ValueError as exc:
            problems.append(f"algorithms[{a}].estimator: {exc}")
            out.append(entry)
    return {**data, "algorithms": out}, problems


def _holds_object(entry):
    return (
        isinstance(entry, dict)
        and entry.get("estimator") is not None
        and not isinstance(entry["estimator"], str)
    )


def _entry_of(entry):
    obj = entry["estimator"]
    if isinstance(obj, type):
        raise ValueError(
            f"is the class {obj.__qualname__}; give an instance made with its parameters, or its import path "
            "'package.module:Class'"
        )
    steps = getattr(obj, "steps", None)
    if not _is_pipeline(obj, steps):
        return {
            **entry,
            "estimator": _path(obj),
            "params": {**_params(obj, "the estimator"), **entry.get("params", {})},
        }
    if entry.get("steps"):
        raise ValueError("is a Pipeline, and the entry has steps too; give the steps in one place")
    kept = [(name, step) for name, step in steps if not (isinstance(step, str) or step is None)]
    if not kept:
        raise ValueError("is a Pipeline without a classifier")
    *before, (last_name, last) = kept
    for name, step in before:
        if _is_classifier(step):
            raise ValueError(
                f"is a Pipeline with the classifier '{name}' before its last step; the classifier comes last"
            )
    if not _is_classifier(last):
        kind = "sampler" if callable(getattr(last, "fit_resample", None)) else "transformer"
        raise ValueError(
            f"is a Pipeline that ends with the {kind} '{last_name}'; its last step is the classifier"
        )
    written = {
        name: {"estimator": _path(step), "id": name, "params": _params(step, f"step '{name}'")}
        for name, step in before
    }
    own = _params(last, f"step '{last_name}'")
    for key, value in entry.get("params", {}).items():  # the entry's grids: a step's as <name>__<param>
        name, sep, param = key.partition("__")
        if sep and name in written:
            written[name]["params"][param] = value
        else:
            own[key] = value
    return {**entry, "estimator": _path(last), "params": own, "steps": list(written.values())}


def _is_pipeline(obj, steps):
    return (
        isinstance(steps, list)
        and bool(steps)
        and all(isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str) for s in steps)
        and callable(getattr(obj, "get_params", None))
    )


def _is_classifier(obj):
    if isinstance(obj, str) or obj is None:
        return False
    try:
        from sklearn.base import is_classifier

        if is_classifier(obj):
            return True
    except Exception:  # noqa: BLE001 - a class without tags is judged by its methods
        pass
    return callable(getattr(obj, "predict", None)) and not callable(getattr(obj, "transform", None))


def _path(obj):
    """The import path of ``obj``'s class, from the shortest public module (already
    imported) that holds it: ``sklearn.decomposition:PCA``, not
    ``sklearn.decomposition._pca:PCA``."""
    cls = type(obj)
    parts = cls.__module__.split(".")
    for i in range(1, len(parts)):
        module = sys.modules.get(".".join(parts[:i]))
        if (
            module is not None
            and "." not in cls.__qualname__
            and getattr(module, cls.__qualname__, None) is cls
        ):
            return f"{module.__name__}:{cls.__qualname__}"
    return f"{cls.__module__}:{cls.__qualname__}"


def _params(obj, what):
    """The parameters of ``obj`` that differ from its class's defaults, as a spec writes
    them (a list or tuple as a grid of one value); ValueError for one a spec cannot
    hold."""
    params = obj.get_params(deep=False)
    try:
        defaults = type(obj)().get_params(deep=False)
    except Exception:  # noqa: BLE001 - a class without defaults: every parameter is written
        defaults = {}
    out = {}
    for name, value in params.items():
        if name in defaults and _same(defaults[name], value):
            continue
        if not jsonable(_plain(value)):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ValueError(
                f"{what} has {name}={shown}, which a spec cannot hold (numbers, texts, booleans, null, lists "
                "and mappings of them); give its import path and parameters in the spec instead"
            )
        out[name] = [_plain(value)] if isinstance(value, list | tuple) else _plain(value)
    return out


def _same(a, b):
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare are not the same
        return False


def _item(value):
    """A NumPy scalar as the Python number it holds (other values unchanged)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def _plain(value):
    value = _item(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
