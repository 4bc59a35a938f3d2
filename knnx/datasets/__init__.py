"""Datasets: bundled real data, seeded synthetic generators and user CSV files.

Registries (greppable, and every key is exercised by the tests):

* :data:`DATASETS` — bundled name -> loader (``load_bundled`` with that name).
* :data:`GENERATORS` — synthetic family name -> generator function.

:func:`load_dataset` accepts the three forms a spec may use::

    "ripley"                                          # bundled, default treatments
    {"name": "cancer", "missing": "error"}           # bundled, with options
    {"name": "letter", "max_rows": 2561}              # a stratified subsample (seeded)
    {"csv": "data/my.csv", "label": "class"}          # the user's own file
    {"synthetic": "paredes2006", "n_per_class": 64}   # a generator and its parameters

Every form also takes ``id`` (the name written in results).
"""

import inspect
from functools import partial

import numpy as np

from knnx._text import describe_control, find_control
from knnx.datasets._base import Dataset, encode_labels, make_dataset
from knnx.datasets.bundled import BUNDLED, data_dir, load_bundled
from knnx.datasets.synthetic import GENERATORS
from knnx.datasets.tabular import load_csv
from knnx.errors import DataError

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
]

DATASETS = {name: partial(load_bundled, name) for name in BUNDLED}

_CSV_KEYS = ("csv", "label", "missing", "fill_value", "categorical", "id")


def generator_parameters(name):
    """Keyword parameters of a synthetic generator (besides ``seed``)."""
    sig = inspect.signature(GENERATORS[name])
    return tuple(p for p in sig.parameters if p not in ("seed", "name"))


def _format_value(value):
    return repr(value) if isinstance(value, str) else str(value)


_TEXT_OPTIONS = ("missing", "categorical", "label", "corrupted")
_LIST_PARAMS = ("means", "covs", "priors")  # gaussians takes arrays; other parameters are numbers


def _is_number(value):
    """A finite int or float (an int as large as float64 can hold: 2^64 and beyond are
    fine, 10^400 is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False


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
    forms = [k for k in ("name", "csv", "synthetic") if k in entry]
    if len(forms) != 1:
        keys = ", ".join(map(str, entry)) or "none"
        raise DataError(
            f"dataset entry needs exactly one of 'name', 'csv' or 'synthetic' (keys given: {keys})"
        )
    form = forms[0]
    for key, value in entry.items():
        # Names, paths and options become CSV fields (the dataset's name) or paths.
        if isinstance(value, str) and find_control(value) is not None:
            raise DataError(f"{key}: {value!r} holds a {describe_control(value)}; names and paths hold none")
    if not isinstance(entry[form], str) or not entry[form]:
        raise DataError(f"{form}: expected a non-empty string, got {entry[form]!r}")
    if "id" in entry and (isinstance(entry["id"], bool) or not isinstance(entry["id"], str | int)):
        raise DataError(f"id: expected a string, got {entry['id']!r}")
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
    params = {k: v for k, v in entry.items() if k not in ("synthetic", "seed")}
    args = ",".join(f"{k}={_format_value(v)}" for k, v in sorted(params.items()))
    return f"{entry['synthetic']}({args})"


def load_dataset(entry, *, seed=0, base_dir=None):
    """Load a dataset from a spec entry (see module docstring).

    Parameters
    ----------
    entry : str or dict
    seed : int or numpy.random.SeedSequence
        Seed for synthetic generators, unless the entry sets its own ``seed``.
    base_dir : path, optional
        Folder that relative CSV paths are resolved against (the spec's folder).

    Raises
    ------
    knnx.errors.DataError
        With a one-line message naming the entry, file, column or option at fault.
    """
    from dataclasses import replace
    from pathlib import Path

    label = dataset_label(entry)  # checks the entry's shape and value types
    if isinstance(entry, str):
        entry = {"name": entry}
    forms = [k for k in ("name", "csv", "synthetic") if k in entry]
    body = {k: v for k, v in entry.items() if k != "id"}
    form = forms[0]
    if form == "name":
        name = body.pop("name")
        if "seed" in body:  # the subsample of max_rows follows the spec's seed
            raise DataError(f"{name}: unknown option 'seed'; bundled datasets are seeded by the spec")
        ds = load_bundled(name, seed=seed, **body)
    elif form == "csv":
        unknown = sorted(set(body) - set(_CSV_KEYS))
        if unknown:
            raise DataError(f"csv dataset: unknown option '{unknown[0]}'; known: {', '.join(_CSV_KEYS)}")
        path = Path(body.pop("csv"))
        if base_dir is not None and not path.is_absolute():
            path = Path(base_dir) / path
        ds = load_csv(path, body.pop("label", "label"), **body)
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
    return replace(ds, name=label)


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
