"""Configurations: what a comparison's contestants, a summary's rows and a figure's lines
are (an algorithm and the parameters that vary among its settings, seeds pooled).

One label names one setting: every summary, table, comparison and figure groups rows
by :func:`configuration_labels`, so two settings that shared a label would be pooled
silently. A parameter's value is read from the row's ``params`` JSON as well as from
its ``param_<name>`` column, whose text cannot tell ``3`` from ``"3"``, ``true`` from
``"true"`` or an absent parameter from ``""``."""

import json

import pandas as pd

from knnx.params import Params, value_key
from knnx.results import PARAM_PREFIX

# Parameters whose values are replicates, not settings: a configuration's summary pools
# them (knn_sample's seeds, a scikit-learn estimator's random_state), as it pools
# repeats and folds.
SEED_PARAMS = ("seed", "random_state")

# The value of a parameter a setting does not have, and its key (never a JSON text).
_MISSING = object()
_ABSENT = "\x00absent"
# Between a parameter's shown text and its value's key (neither holds it).
_JOIN = "\x00"


def configuration_labels(frame):
    """A short label per row: the algorithm (its id) followed by the parameters that take
    more than one value among that algorithm's rows of one dataset, seed-like parameters
    (:data:`SEED_PARAMS`) left out, e.g. ``knn k=3`` or ``unn k=5, theta=0.1``; the
    algorithm alone when nothing varies. The JSON of every default is never shown.

    A parameter that takes one value per dataset but differs between datasets (an
    algorithm entry's ``params_for``: UNN with k=5 on iris and k=7 elsewhere) is part
    of the dataset, not of the configuration: the entry is one contestant, labelled by
    its id, whose parameters depend on the dataset.

    One label, one setting: values are compared as the ``params`` JSON holds them, and a
    text value is shown in JSON quotes (``tag="3"``, ``tag=""``) where it could be read
    as another value (its parameter also takes a value of the same text: ``3`` and
    ``"3"``, ``true`` and ``"true"``, absent and ``""``) or holds the label's separators
    (``, `` or ``=``). Two settings that would still share a label (an algorithm named
    like another's label, in a file edited by hand) are told apart by ``#2``, ``#3``,
    ... after the label, in order of appearance. Seeds are the one deliberate pooling:
    settings that differ in a seed alone share their label."""
    columns = [c for c in frame.columns if c.startswith(PARAM_PREFIX)]
    codes, settings = _settings(frame, columns)
    varying = _varying(frame, codes, settings, columns)
    labels, keys = [], []
    for alg, group in settings.groupby("algorithm", sort=False):
        shown = varying.get(alg, [])
        quoted = {c for c in shown if group.groupby(c + "_text", sort=False)[c].nunique().max() > 1}
        for row in group.itertuples(index=False, name=None):
            values = dict(zip(group.columns, row, strict=True))
            parts = [_shown(c, values, c in quoted) for c in shown]
            parts = [p for p in parts if p is not None]
            labels.append(f"{alg} {', '.join(parts)}" if parts else str(alg))
            keys.append((alg, values["_unparsed"], *(values[c] for c in shown)))
    order = [i for _, group in settings.groupby("algorithm", sort=False) for i in group.index]
    unique = _apart(labels, keys)
    per_setting = pd.Series(unique, index=order).reindex(settings.index)
    return pd.Series(per_setting.to_numpy(dtype=object)[codes], index=frame.index, dtype=object)


def _texts(frame, column):
    """A ``param_`` column as text ('' where empty or missing)."""
    values = frame[column]
    return values.where(values.notna(), "").astype(str)


def _settings(frame, columns):
    """(code per row, one row per distinct setting): the settings' ``algorithm``, for
    each parameter column its shown text (``<column>_text``), its value (``<column>_raw``:
    the value as ``params`` holds it, ``_MISSING`` where the setting lacks it) and its key
    (``<column>``: text and value together, equal exactly when both are)."""
    keys = ["algorithm", *(["params"] if "params" in frame.columns else []), *columns]
    texts = frame[["algorithm"]].assign(
        **({"params": frame["params"].astype(str)} if "params" in frame.columns else {}),
        **{c: _texts(frame, c) for c in columns},
    )
    codes = texts.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    first = texts.drop_duplicates(keys).reset_index(drop=True)
    parsed = [_parsed(t) for t in first["params"]] if "params" in first.columns else [None] * len(first)
    settings = first[["algorithm"]].copy()
    # a ``params`` that is no JSON object (a file edited by hand) has no parameter columns:
    # its text alone tells its settings apart
    settings["_unparsed"] = [
        None if p is not None else t for p, t in zip(parsed, first.get("params", parsed), strict=True)
    ]
    added = {}  # every column at once: pandas warns of a frame inserted into column by column
    for c in columns:
        name = c.removeprefix(PARAM_PREFIX)
        raw = [(p.get(name, _MISSING) if p is not None else _MISSING) for p in parsed]
        added[c + "_text"] = first[c].to_numpy(dtype=object)
        added[c + "_raw"] = pd.Series(raw, dtype=object)
        added[c] = pd.Series([t + _JOIN + _key(r) for t, r in zip(first[c], raw, strict=True)], dtype=object)
    return codes, pd.concat([settings, pd.DataFrame(added, index=settings.index)], axis=1)


def _parsed(text):
    """The ``params`` JSON of a row as a dict (None when it is not a JSON object of
    parameters: :meth:`knnx.params.Params.parse`, the one parser)."""
    return Params.parse(text)[0] if isinstance(text, str) else None


def _key(value):
    return _ABSENT if value is _MISSING else value_key(value)


def _varying(frame, codes, settings, columns):
    """{algorithm: [``param_`` columns]}: the parameters (seeds excepted) that take more
    than one value among the algorithm's settings on some dataset."""
    if not columns:
        return {}
    counts = _on_datasets(frame, codes, settings, columns).groupby(["algorithm", "dataset"], sort=False)[
        columns
    ]
    counts = counts.nunique()
    out = {}
    for alg in dict.fromkeys(settings["algorithm"]):
        per = counts.loc[alg]
        out[alg] = [
            c for c in columns if c.removeprefix(PARAM_PREFIX) not in SEED_PARAMS and (per[c] > 1).any()
        ]
    return out


def _on_datasets(frame, codes, settings, columns):
    """One row per (dataset, setting) present in ``frame``: the setting's algorithm and
    parameter keys, and the dataset."""
    present = pd.DataFrame({"dataset": frame["dataset"].to_numpy(), "setting": codes}).drop_duplicates()
    rows = settings.iloc[present["setting"].to_numpy()][["algorithm", *columns]].reset_index(drop=True)
    rows["dataset"] = present["dataset"].to_numpy()
    return rows


def _shown(column, values, quoted):
    """``name=value`` of one parameter of a setting, None where the setting lacks it."""
    text, raw = values[column + "_text"], values[column + "_raw"]
    name = column.removeprefix(PARAM_PREFIX)
    if isinstance(raw, str) and (quoted or raw == "" or ", " in raw or "=" in raw):
        return f"{name}={json.dumps(raw, ensure_ascii=False)}"
    return f"{name}={text}" if text != "" else None


def _apart(labels, keys):
    """``labels`` with ``#2``, ``#3``, ... added to a label that names several distinct
    ``keys`` (settings), in order of appearance, so that no two settings share one."""
    owners = {}
    for label, key in zip(labels, keys, strict=True):
        owners.setdefault(label, {}).setdefault(key, None)
    taken = set(labels)
    renamed = {}
    for label, settings in owners.items():
        for n, key in enumerate(list(settings)[1:], start=2):
            while f"{label} #{n}" in taken:
                n += 1
            renamed[(label, key)] = f"{label} #{n}"
            taken.add(renamed[(label, key)])
    return [renamed.get((label, key), label) for label, key in zip(labels, keys, strict=True)]


def dataset_dependent(frame):
    """{algorithm: [``param_`` columns]}: the parameters that take one value per dataset
    but differ between datasets (``params_for``), which :func:`configuration_labels`
    leaves out of the labels."""
    columns = [c for c in frame.columns if c.startswith(PARAM_PREFIX)]
    codes, settings = _settings(frame, columns)
    out = {}
    for alg, sub in _on_datasets(frame, codes, settings, columns).groupby("algorithm", sort=False):
        per = sub.groupby("dataset", sort=False)[columns].nunique()
        out[alg] = [c for c in columns if (per[c] <= 1).all() and sub[c].nunique() > 1]
    return out


def dataset_dependent_values(frame):
    """``[(algorithm, parameter, {dataset: value text})]``: each parameter of
    :func:`dataset_dependent` with its value on each dataset, in order of appearance."""
    out = []
    for alg, columns in dataset_dependent(frame).items():
        sub = frame[frame["algorithm"] == alg]
        for c in columns:
            per = sub.groupby("dataset", sort=False)[c].first()
            out.append((alg, c.removeprefix(PARAM_PREFIX), {d: str(v) for d, v in per.items()}))
    return out


def dataset_dependent_lines(frame, shown=4):
    """One line per parameter of :func:`dataset_dependent` (a label leaves it out):
    ``ALGORITHM PARAMETER (d1: v1; d2: v2; ... N datasets)`` with its first ``shown``
    datasets when each dataset has a value of its own; else by value, the commonest
    first, each with its first ``shown`` datasets: ``unn k (5 on a, b, c, d and 13
    more; 7 on e, f)``."""
    lines = []
    for alg, name, per in dataset_dependent_values(frame):
        groups = {}
        for d, v in per.items():
            groups.setdefault(v, []).append(d)
        if len(groups) == len(per):
            parts = [f"{d}: {v}" for d, v in list(per.items())[:shown]]
            if len(per) > shown:
                parts.append(f"... {len(per)} datasets")
        else:
            parts = [
                f"{v} on {', '.join(ds[:shown])}"
                + (f" and {len(ds) - shown} more" if len(ds) > shown else "")
                for v, ds in sorted(groups.items(), key=lambda item: -len(item[1]))
            ]
        lines.append(f"{alg} {name} ({'; '.join(parts)})")
    return lines
