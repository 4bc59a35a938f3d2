"""Datasets: bundled real data, seeded synthetic generators and user CSV files.

Registries (greppable, and every key is exercised by the tests):

* :data:`DATASETS` — bundled name -> loader (``load_bundled`` with that name).
* :data:`GENERATORS` — synthetic family name -> generator function.

:func:`load_dataset` accepts the forms a spec may use::

    "ripley"                                          # bundled, default treatments
    {"name": "cancer", "missing": "error"}           # bundled, with options
    {"name": "letter", "max_rows": 2561}              # a stratified subsample (seeded)
    {"csv": "data/my.csv", "label": "class"}          # the user's own file
    {"synthetic": "paredes2006", "n_per_class": 64}   # a generator and its parameters
    {"loader": "mylab.data:load_rings", "params": {"n": 500}}  # the user's own function
    "rings"                                           # a name given to register_dataset,
                                                      # or offered by a plugin (knnx.datasets)

Every form also takes ``id`` (the name written in results). A loader function returns
``(X, y)`` or a :class:`Dataset`; it receives ``seed`` (an int drawn from the spec's
seed) when it has such a parameter and the entry does not set it. A Dataset it
returns may type its columns: ``nominal`` (the columns of category codes 0, 1, ...)
or ``precomputed=True`` (X is the square matrix of the distances between its rows,
non-negative; see :class:`Dataset`), and keeps its ``split`` and ``partitions``.

Every dataset, whatever its form, passes one check before it is returned
(:func:`knnx.datasets.checks.check_dataset`: shapes, finite numbers, class codes
within ``classes`` and two classes present, class names none missing nor repeated,
the split's and partitions' row indices), with one missing-label rule for every
source (:func:`knnx.datasets._base.label_problem`).

Bundled, suite and CSV entries take ``categorical: keep`` (each nominal attribute one
column of category codes, listed in ``Dataset.nominal``) and ``missing: keep``
(missing values stay NaN), for the metrics of :mod:`knnx.neighbors.metrics` that take
them. A ``loader:`` entry takes ``categorical`` (``keep``, its Dataset's own
``nominal`` columns, the default; ``onehot``; ``ordinal``) and ``missing`` (``error``,
the default; ``drop_rows``; ``fill`` with a ``fill_value``; ``keep``). An entry that
does not say ``categorical`` gives each contestant of a run the view it takes, codes
or one-hot indicators, under one id (``view``; :mod:`knnx.datasets.views`).

:func:`expand_entry` turns list-valued options into one entry each (a grid over
datasets): ``{"synthetic": "dambrosio2012", "sigma": [0.1, 0.5]}`` gives
``dambrosio2012[sigma=0.1]`` and ``dambrosio2012[sigma=0.5]``.
"""

import inspect
import itertools
import math
from functools import partial

import numpy as np

from knnx._text import canonical_json, describe_control, find_control, find_leaf, name_problem, quoted
from knnx.datasets import checks
from knnx.datasets._base import Dataset, encode_labels, make_dataset
from knnx.datasets.bundled import BUNDLED, data_dir, load_bundled
from knnx.datasets.checks import as_dataset, check_dataset
from knnx.datasets.suites import SUITES, check_suite_entry, expand_suite, is_suite_dataset, load_suite_dataset
from knnx.datasets.synthetic import GENERATORS
from knnx.datasets.tabular import load_csv
from knnx.datasets.views import check_loader_treatments, treat_loaders, view_entry
from knnx.datasets.views import finite_number as _is_number
from knnx.errors import DataError, describe, exit_guard, user_fault
from knnx.plugins import DATASET_GROUP, built_in_clash, entry_point_names, import_object, load_entry_point

__all__ = [
    "DATASETS",
    "GENERATORS",
    "Dataset",
    "load_dataset",
    "load_bundled",
    "load_csv",
    "dataset_label",
    "check_entry",
    "describe_bundled",
    "generator_parameters",
    "data_dir",
    "encode_labels",
    "make_dataset",
    "register_dataset",
    "expand_entry",
    "as_dataset",
    "check_dataset",
    "SUITES",
    "load_suite_dataset",
]

DATASETS = {name: partial(load_bundled, name) for name in BUNDLED}

_CSV_KEYS = ("csv", "label", "missing", "fill_value", "categorical", "id")
_LOADER_KEYS = ("loader", "params", "categorical", "missing", "fill_value", "id")
_FORMS = ("name", "csv", "synthetic", "loader", "suite")

# Datasets registered in Python (register_dataset): name -> loader function.
REGISTERED = {}


def generator_parameters(name):
    """Keyword parameters of a synthetic generator (besides ``seed``)."""
    sig = inspect.signature(GENERATORS[name])
    return tuple(p for p in sig.parameters if p not in ("seed", "name"))


def _format_value(value):
    return repr(value) if isinstance(value, str) else str(value)


_TEXT_OPTIONS = ("missing", "categorical", "label")
_LIST_PARAMS = ("means", "covs", "priors")  # gaussians takes arrays; other parameters are numbers


def _all_numbers(value, depth=0):
    if isinstance(value, list) and depth < 4:
        return all(_all_numbers(v, depth + 1) for v in value)
    return _is_number(value)


def check_entry(entry):
    """Check the shape and value types of a dataset entry; raise DataError naming the key."""
    if isinstance(entry, str):
        if not entry:
            raise DataError("dataset entry: empty name")
        if find_control(entry) is not None:
            raise DataError(f"dataset entry: {entry!r} holds a {describe_control(entry)}; names hold none")
        return
    if not isinstance(entry, dict):
        raise DataError(f"dataset entry must be a name or a mapping, got {type(entry).__name__}")
    forms = [k for k in _FORMS if k in entry]
    if len(forms) != 1:
        keys = ", ".join(map(str, entry)) or "none"
        raise DataError(
            "dataset entry needs exactly one of 'name', 'csv', 'synthetic', 'loader' or 'suite' "
            f"(keys given: {keys})"
        )
    form = forms[0]
    for key, value in entry.items():
        # Names, paths and options become CSV fields (the dataset's name) or paths.
        text = _first_text_with_control(value)
        if text is not None:
            raise DataError(f"{key}: {text!r} holds a {describe_control(text)}; names and paths hold none")
    if not isinstance(entry[form], str) or not entry[form]:
        raise DataError(f"{form}: expected a non-empty string, got {entry[form]!r}")
    if "id" in entry and (isinstance(entry["id"], bool) or not isinstance(entry["id"], str | int)):
        raise DataError(f"id: expected a string, got {entry['id']!r}")
    problem = name_problem(str(entry["id"])) if "id" in entry else None
    if problem is not None:  # the one rule of names, which the results reader applies too
        raise DataError(
            f"id: {quoted(entry['id'], 60)} {problem}; a dataset id names its rows in every result file"
        )
    if form == "suite":
        if "id" in entry:
            raise DataError("suite entry: 'id' names one dataset, and a suite stands for many")
        check_suite_entry(entry)
        return
    if form == "loader":
        unknown = sorted(set(entry) - set(_LOADER_KEYS))
        if unknown:
            raise DataError(f"loader dataset: unknown key '{unknown[0]}'; known: {', '.join(_LOADER_KEYS)}")
        if not isinstance(entry.get("params", {}), dict):
            raise DataError(f"params: expected a mapping of the loader's arguments, got {entry['params']!r}")
        check_loader_treatments(entry)
        return
    for key, value in entry.items():
        if key in (form, "id"):
            continue
        if form != "synthetic" and key in _TEXT_OPTIONS and not isinstance(value, str):
            raise DataError(f"{key}: expected a string, got {value!r}")
        if (
            key == "max_rows"
            and form == "name"
            and (isinstance(value, bool) or not isinstance(value, int) or value < 1)
        ):
            raise DataError(f"max_rows: expected an integer >= 1, got {value!r}")
        if key == "fill_value" and not _is_number(value):
            raise DataError(f"fill_value: expected a finite number, got {value!r}")
        if form == "synthetic" and key not in _LIST_PARAMS and key != "seed" and not _is_number(value):
            raise DataError(f"synthetic {entry[form]}: {key} must be a finite number, got {value!r}")
        if form == "synthetic" and key in _LIST_PARAMS and not _all_numbers(value):
            raise DataError(
                f"synthetic {entry[form]}: {key} must be a finite number or (nested) lists of them, got "
                f"{_format_value(value)[:80]}"
            )


def _first_text_with_control(value):
    return find_leaf(value, lambda v: isinstance(v, str) and find_control(v) is not None)


def dataset_label(entry):
    """The name a dataset entry gets in results (its ``id`` if given)."""
    check_entry(entry)
    if isinstance(entry, str):
        return entry
    if "id" in entry:
        return str(entry["id"])
    if "name" in entry:
        opts = {k: v for k, v in entry.items() if k != "name"}
        args = ",".join(f"{k}={_format_value(v)}" for k, v in sorted(opts.items()))
        return f"{entry['name']}({args})" if args else entry["name"]
    if "csv" in entry:
        from pathlib import Path

        return Path(entry["csv"]).stem
    if "suite" in entry:
        return f"suite {entry['suite']}"
    if "loader" in entry:
        args = ",".join(f"{k}={_format_value(v)}" for k, v in sorted(entry.get("params", {}).items()))
        name = entry["loader"].rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        return f"{name}({args})" if args else name
    params = {k: v for k, v in entry.items() if k not in ("synthetic", "seed")}
    args = ",".join(f"{k}={_format_value(v)}" for k, v in sorted(params.items()))
    return f"{entry['synthetic']}({args})"


def expand_entry(entry):
    """A dataset entry with list-valued options as one entry per combination, each with
    its ``id`` (``base[key=value,...]``, base = the entry's ``id`` or its label without
    the listed options). An entry without lists is returned as is: ``[entry]``.
    Lists that are values, not grids, stay: gaussians' ``means``, ``covs``, ``priors``.
    DataError for an empty list or a value listed twice."""
    if not isinstance(entry, dict):
        return [entry]
    _check_fill_value(entry)
    if "suite" in entry:
        check_entry(entry)
        return expand_suite(entry)
    if "loader" in entry:
        options = entry.get("params", {}) if isinstance(entry.get("params", {}), dict) else {}
    else:
        options = {k: v for k, v in entry.items() if k not in (*_FORMS, "id")}
    if "synthetic" in entry:
        options = {k: v for k, v in options.items() if k not in _LIST_PARAMS}
    axes = {k: v for k, v in options.items() if isinstance(v, list)}
    if not axes:
        return [entry]
    for key, values in axes.items():
        if not values:
            raise DataError(f"{key}: empty list of values")
        seen = [canonical_json(v, allow_nan=True) for v in values]
        if len(set(seen)) != len(seen):
            dup = next(v for i, v in enumerate(values) if seen[i] in seen[:i])
            raise DataError(f"{key}: value {dup!r} is listed twice")
    n = math.prod(len(v) for v in axes.values())
    if n > MAX_EXPANDED:
        raise DataError(f"the lists expand to {n} datasets, more than the limit of {MAX_EXPANDED}")

    def with_options(values):
        if "loader" in entry:
            return {**entry, "params": {**entry.get("params", {}), **values}}
        return {**entry, **values}

    if "id" in entry:
        base = str(entry["id"])
    else:
        rest = {k: v for k, v in with_options({}).items() if k not in axes} if "loader" not in entry else None
        if rest is None:
            rest = {**entry, "params": {k: v for k, v in entry.get("params", {}).items() if k not in axes}}
        base = dataset_label(rest)
        base = base.removesuffix("()")
    out = []
    for combo in itertools.product(*axes.values()):
        values = dict(zip(axes, combo, strict=True))
        suffix = ",".join(f"{k}={_format_value(v)}" for k, v in values.items())
        expanded = {k: v for k, v in with_options(values).items() if k != "id"}
        out.append({**expanded, "id": f"{base}[{suffix}]"})
    return out


# At most this many datasets from the lists of one entry.
MAX_EXPANDED = 10_000


def _check_fill_value(entry):
    """DataError for a ``fill_value`` that no dataset of the entry reads: only ``missing:
    fill`` (or a list of treatments holding it) fills, and a value given otherwise was
    ignored without a word."""
    missing = entry.get("missing", "error")
    if "fill_value" not in entry or not _is_number(entry["fill_value"]):
        return  # no value, or one that is none: check_entry says so
    if missing != "fill" and not (isinstance(missing, list) and "fill" in missing):
        raise DataError(
            f"fill_value: {entry['fill_value']!r} is read only under missing: fill, and this entry's missing is "
            f"{missing!r}; give missing: fill or leave fill_value out"
        )


def register_dataset(name, loader):
    """Make ``loader`` (a function returning ``(X, y)`` or a Dataset; its keyword
    arguments are the entry's options) available to specs as ``name`` in this process.
    Re-registering the same function is allowed; a taken name raises ValueError."""
    import re

    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or set(name) == {"."}:
        raise ValueError(f"dataset name {name!r}: letters, digits and _.- only")
    if not callable(loader):
        raise ValueError(f"register_dataset({name!r}, ...): expected a function, got {type(loader).__name__}")
    if name in BUNDLED or (name in REGISTERED and REGISTERED[name] is not loader):
        raise ValueError(f"dataset name '{name}' is taken; choose another")
    REGISTERED[name] = loader


def _loader_for(name):
    """The loader function registered or offered by a plugin for ``name``, or None."""
    if name in REGISTERED:
        return REGISTERED[name]
    return load_entry_point(DATASET_GROUP, name)


def _positional_only(takes, kwargs, where):
    """The values of ``kwargs`` (removed from it) for the loader's positional-only
    parameters (``def load(seed, /)``), in order: passed by name they would raise
    TypeError in the loader's call, blamed on the loader. DataError when one is given
    after another left out (no position to pass it at)."""
    args, skipped = [], None
    for name, param in takes.items():
        if param.kind is not inspect.Parameter.POSITIONAL_ONLY:
            break
        if name not in kwargs:
            skipped = name
        elif skipped is not None:
            raise DataError(
                f"{where}: '{name}' is positional-only and comes after '{skipped}', which is not given; give "
                f"'{skipped}' too"
            )
        else:
            args.append(kwargs.pop(name))
    return args


def _call_loader(fn, options, seed, where):
    """``fn(**options)`` (with ``seed`` if it takes one and ``options`` lacks it); one
    DataError line for whatever it raises (:func:`knnx.errors.describe`; ``sys.exit``
    included, Ctrl-C excepted)."""
    kwargs = dict(options)
    try:
        takes = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = {}
    if "seed" in takes and "seed" not in kwargs:
        kwargs["seed"] = (
            int(seed.generate_state(1)[0]) if isinstance(seed, np.random.SeedSequence) else int(seed or 0)
        )
    unknown = [
        k
        for k in kwargs
        if takes
        and k not in takes
        and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in takes.values())
    ]
    if unknown:
        known = ", ".join(k for k, p in takes.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL)
        raise DataError(f"{where}: unknown parameter '{unknown[0]}'; known: {known or 'none'}")
    args = _positional_only(takes, kwargs, where)
    try:
        with exit_guard():  # os._exit in the loader: its failure, not the end of knnx
            return fn(*args, **kwargs)
    except DataError:
        raise
    except BaseException as exc:  # noqa: BLE001 - sys.exit or an unprintable error of user code too
        if not user_fault(exc):
            raise
        raise DataError(f"{where}: the loader raised {describe(exc, 200)}") from None


def _load_named(body, label, seed):
    """``(dataset, where)`` of a ``{"name": ...}`` entry: a suite dataset, a registered or
    plugin loader's (checked by :func:`as_dataset`), or a bundled one."""
    name = body.pop("name")
    where = f"dataset '{name}'"
    clash = built_in_clash(DATASET_GROUP, name) if name in BUNDLED or is_suite_dataset(name) else None
    if clash:
        raise DataError(clash)
    if is_suite_dataset(name):
        return load_suite_dataset(name, **body), where
    if name not in BUNDLED:
        fn = _loader_for(name)
        if fn is None:
            known = sorted(set(BUNDLED) | set(REGISTERED) | set(entry_point_names(DATASET_GROUP)))
            raise DataError(
                f"unknown dataset '{name}'; known: {', '.join(known)}, and the suites' datasets "
                "(knnx datasets --suite keel-standard)"
            )
        return as_dataset(_call_loader(fn, body, seed, where), label, where), None
    if "seed" in body:  # the subsample of max_rows follows the spec's seed
        raise DataError(f"{name}: unknown option 'seed'; bundled datasets are seeded by the spec")
    return load_bundled(name, seed=seed, **body), where


def _viewed(entry, view, label):
    """``entry`` in ``view`` (:func:`knnx.datasets.views.view_entry`), or as it is for
    None; DataError for an entry that has no such view."""
    if view is None:
        return entry
    viewed = view_entry(entry, view)
    if viewed is None:
        raise DataError(f"dataset '{label}': its entry has no {view} view (it says categorical)")
    return viewed


def _load_loader(body, label, seed, base_dir):
    """The Dataset of a ``loader:`` entry (its body without ``id``): the function's
    result checked (:func:`as_dataset`), its ``missing`` and ``categorical`` applied."""
    fn = import_object(body["loader"], base_dir)
    if not callable(fn) or isinstance(fn, type) and issubclass(fn, Dataset):
        raise DataError(f"loader {body['loader']}: is a {type(fn).__name__}, not a function")
    where = f"loader {body['loader']}"
    treated = body.get("missing", "error") != "error"
    ds = as_dataset(_call_loader(fn, body.get("params", {}), seed, where), label, where, missing_ok=treated)
    return treat_loaders(ds, body, where)


def load_dataset(entry, *, seed=0, base_dir=None, view=None):
    """Load a dataset from a spec entry (see module docstring).

    Parameters
    ----------
    entry : str or dict
    seed : int or numpy.random.SeedSequence
        Seed for synthetic generators, unless the entry sets its own ``seed``.
    base_dir : path, optional
        Folder that relative CSV paths are resolved against (the spec's folder).
    view : {"keep", "onehot"}, optional
        The entry's nominal attributes as category codes or one-hot indicators
        (:mod:`knnx.datasets.views`), under the entry's own id; for an entry that does
        not say ``categorical``. None: the entry as it is.

    Raises
    ------
    knnx.errors.DataError
        With a one-line message naming the entry, file, column or option at fault.
    """
    from dataclasses import replace
    from pathlib import Path

    label = dataset_label(entry)  # checks the entry's shape and value types
    entry = _viewed(entry, view, label)
    if isinstance(entry, str):
        entry = {"name": entry}
    forms = [k for k in _FORMS if k in entry]
    body = {k: v for k, v in entry.items() if k != "id"}
    form = forms[0]
    if form == "loader":
        return _load_loader(body, label, seed, base_dir)
    if form == "suite":
        raise DataError(
            f"suite {body['suite']}: a suite stands for many datasets; list it under datasets: in a spec"
        )
    if form == "name":
        ds, where = _load_named(body, label, seed)
        if where is None:  # a registered or plugin loader's data: checked as a loader's
            return ds
    elif form == "csv":
        unknown = sorted(set(body) - set(_CSV_KEYS))
        if unknown:
            raise DataError(f"csv dataset: unknown option '{unknown[0]}'; known: {', '.join(_CSV_KEYS)}")
        path = Path(body.pop("csv"))
        if base_dir is not None and not path.is_absolute():
            path = Path(base_dir) / path
        ds = load_csv(path, body.pop("label", "label"), **body)
        where = str(path)
    else:
        gen = body.pop("synthetic")
        if gen not in GENERATORS:
            raise DataError(f"unknown synthetic generator '{gen}'; known: {', '.join(sorted(GENERATORS))}")
        allowed = generator_parameters(gen)
        for key in body:
            if key not in allowed + ("seed",):
                raise DataError(f"synthetic {gen}: unknown parameter '{key}'; known: {', '.join(allowed)}")
        body.setdefault("seed", seed)
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # overflows surface as errors below
                ds = GENERATORS[gen](**body)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, DataError):
                raise
            raise DataError(f"synthetic {gen}: {exc}") from None
        except (OverflowError, FloatingPointError, np.linalg.LinAlgError):
            raise DataError(
                f"synthetic {gen}: a parameter is too large or too small for float64 arithmetic; rescale it"
            ) from None
        if not np.isfinite(ds.X).all():
            raise DataError(
                f"synthetic {gen}: the parameters give values beyond float64 (inf or NaN); rescale them"
            )
        where = f"synthetic {gen}"
    # Every source's data pass the one check a loader's do (NaN only where kept missing).
    keep = ds.metadata.get("options", {}).get("missing") == "keep"
    return checks.check_dataset(replace(ds, name=label), where, missing_ok=keep)


def describe_bundled():
    """One dict per bundled dataset: as loaded with its default treatments, and as filed.

    Keys: name, n, d, classes, class_counts (``label=count;...`` after the
    defaults), split (``train/test`` or ``none``), files (rows x columns in the CSV
    files, from MANIFEST.csv: differs from n x d where a default treatment drops rows
    or encodes columns), source, notes.
    """
    import csv

    manifest = {
        row["file"]: row for row in csv.DictReader(open(data_dir() / "MANIFEST.csv", encoding="utf-8"))
    }
    rows = []
    for name in sorted(BUNDLED):
        ds = load_bundled(name)
        sizes = ds.split_sizes()
        filed = [manifest[f] for f in BUNDLED[name].files]
        rows.append(
            {
                "name": name,
                "n": ds.n_samples,
                "d": ds.n_features,
                "classes": ds.n_classes,
                "class_counts": ";".join(f"{c}={k}" for c, k in ds.class_counts().items()),
                "split": f"{sizes[0]}/{sizes[1]}" if sizes else "none",
                "files": f"{sum(int(r['n_rows']) for r in filed)}x{filed[0]['n_features']}",
                "source": ds.metadata["source"],
                "notes": ds.metadata.get("notes", ""),
            }
        )
    return rows


def entry_files(entry, base_dir=None):
    """The files a (loaded, expanded) datasets entry is read from, when they and knnx's
    own code alone make its data: a CSV file; a bundled dataset's files and the
    bundled manifest; a suite dataset's data and partition files and the suite
    manifest; none for a synthetic generator. None when code outside knnx may make it
    (a loader, a registered or plugin dataset): what it reads is not known here."""
    import os
    from pathlib import Path

    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict):
        return None
    if "csv" in entry:
        path = Path(entry["csv"])
        if base_dir is not None and not path.is_absolute():
            path = Path(base_dir) / path
        return [Path(os.path.abspath(path))]  # links followed when read, as the loader does
    if "synthetic" in entry:
        return [] if entry["synthetic"] in GENERATORS else None
    name = entry.get("name")
    if not isinstance(name, str) or "loader" in entry:
        return None
    from knnx.datasets.suites import manifest, suites_dir

    suite_manifest = suites_dir() / "MANIFEST.json"  # read first for every name (suite or bundled)
    if is_suite_dataset(name):
        record = manifest()[name]
        parts = [record["file"]] + ([record["partitions"]["file"]] if "partitions" in record else [])
        return [suite_manifest, *(suites_dir() / f for f in parts)]
    if name in BUNDLED:
        folder = data_dir()
        return [suite_manifest, folder / "MANIFEST.csv", *(folder / f for f in BUNDLED[name].files)]
    return None
