"""Why a rerun runs cells again: each cell's key (:func:`knnx.experiment.provenance.cell_keys`)
covers knnx's code, the numeric libraries' versions, the code of an estimator, a step
or a loader outside knnx (the files its modules import, :func:`knnx.plugins.user_code_files`),
the data and the spec's settings. A run records what those were in ``OUT/.knnx-material.json``
(:func:`record_material`); the next run, for the cells it finds in the ledger under
another key, compares the two records and says, in one line per reason, why they run
again (:func:`rerun_reasons`): ``200 cells: mylab/methods.py changed``, ``10 cells:
the data of returns changed``, ``1,600 cells: knnx's code changed``. A cell whose
recorded parts are all unchanged ran again because its settings in the spec did
(protocol, preprocessing, metrics, tuning, seed)."""

import json
from collections import Counter
from pathlib import Path

MATERIAL = ".knnx-material.json"


def run_material(vspec, code):
    """What the cells' keys of a validated spec cover, by part: ``code`` (knnx's version,
    code and libraries, :func:`knnx.experiment.provenance.code_material`), per algorithm
    id its version and its code's files (steps' included), per dataset its data checksum
    and its loader's version and files."""
    from knnx.experiment.provenance import data_material
    from knnx.plugins import import_object, object_files

    algorithms = {}
    for ref in vspec.algorithms:
        if ref is None:
            continue
        files = object_files(ref.cls, ref.path)
        for step in ref.steps:
            files.update(object_files(step.cls, getattr(step, "path", None)))
        algorithms[ref.id] = {"version": ref.version, "files": files}
    datasets = {}
    labels = {c.dataset_index: c.dataset for c in vspec.cells}
    for i, (entry, material) in enumerate(zip(vspec.entries, data_material(vspec), strict=True)):
        files = {}
        if isinstance(entry, dict) and isinstance(entry.get("loader"), str):
            files = object_files(import_object(entry["loader"], vspec.base_dir), entry["loader"])
        datasets[labels.get(i, str(i))] = {**material, "files": files}
    return {"code": code, "algorithms": algorithms, "datasets": datasets}


def record_material(out, material):
    """Write ``material`` (:func:`run_material`) to ``OUT/.knnx-material.json``, atomically."""
    from knnx.results import atomic_write_text

    atomic_write_text(Path(out) / MATERIAL, json.dumps(material, sort_keys=True, default=str) + "\n")


def read_material(out):
    """The material an earlier run of ``out`` recorded, or None (none, or unreadable)."""
    try:
        doc = json.loads((Path(out) / MATERIAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _files_changed(old, new):
    """The files whose digests differ (added or removed too), in path order."""
    old, new = old or {}, new or {}
    return sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))


def _shown(files, limit=3):
    named = ", ".join(files[:limit]) + (f" and {len(files) - limit} more" if len(files) > limit else "")
    return f"{named} changed"


def cell_reason(old, new, algorithm, dataset):
    """Why a cell of ``algorithm`` on ``dataset`` has another key, from the materials
    ``old`` and ``new`` (:func:`run_material`)."""
    if old is None:
        return "no record of the earlier run's code and data (a run of an older knnx)"
    if old.get("code") != new.get("code"):
        was, now = old.get("code") or {}, new.get("code") or {}
        if was.get("libraries") != now.get("libraries") and was.get("code") == now.get("code"):
            changed = sorted(
                k for k in now.get("libraries", {}) if was.get("libraries", {}).get(k) != now["libraries"][k]
            )
            return "the numeric libraries changed (" + ", ".join(changed) + ")"
        return "knnx's code changed"
    reasons = []
    a_old, a_new = old.get("algorithms", {}).get(algorithm), new.get("algorithms", {}).get(algorithm)
    if a_old is not None and a_new is not None:
        files = _files_changed(a_old.get("files"), a_new.get("files"))
        if files:
            reasons.append(_shown(files))
        elif a_old.get("version") != a_new.get("version"):
            reasons.append(
                f"the version of {algorithm}'s code changed ({a_old.get('version')} -> {a_new.get('version')})"
            )
    d_old, d_new = old.get("datasets", {}).get(dataset), new.get("datasets", {}).get(dataset)
    if d_old is not None and d_new is not None:
        files = _files_changed(d_old.get("files"), d_new.get("files"))
        if files:
            reasons.append(f"the loader's {_shown(files)}")
        if d_old.get("data") != d_new.get("data"):
            reasons.append(f"the data of {dataset} changed")
    return (
        "; ".join(reasons)
        or "its settings in the spec changed (protocol, preprocessing, metrics, tuning or seed)"
    )


def rerun_reasons(changed, old, new):
    """One line per reason, the commonest first: ``N cells: reason``, for the cells
    ``changed`` (identities ``(dataset, algorithm, params, repeat, fold)`` found in the
    ledger under another key)."""
    counts = Counter(cell_reason(old, new, cell[1], cell[0]) for cell in changed)
    return [f"{n:,} cell{'s' if n > 1 else ''} run again: {reason}" for reason, n in counts.most_common()]
