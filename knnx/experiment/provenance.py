"""Provenance: what produced a run's rows. environment.json (versions, git commit, CPU,
warm-up seconds per run) and the content hash of every cell (:func:`cell_keys`): a
cached cell is reused only while everything that produced it is unchanged."""

import hashlib
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from knnx._version import __version__
from knnx.experiment.rerun import NUMERIC_LIBRARIES, code_checksum, library_versions  # noqa: F401 (re-exported)
from knnx.limits import json_too_deep
from knnx.results import atomic_write_text
from knnx.spec import canonical_json


def environment_info():
    """Versions, git commit and CPU of this run (written to environment.json)."""
    import numba
    import pandas
    import scipy
    import sklearn

    commit, dirty = None, None
    repo = Path(__file__).resolve().parents[2]

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()

    try:
        # Only if knnx itself is the checkout (an installed copy inside another repo is not).
        if Path(git("rev-parse", "--show-toplevel")).resolve() == repo:
            commit = git("rev-parse", "HEAD")
            dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "knnx": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
    }


def array_checksum(*arrays):
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}{a.shape}".encode() + a.tobytes())
    return digest.hexdigest()


def data_checksum(ds):
    """The checksum of what a cell reads of a dataset: its arrays, its column types
    where it has any, and which columns ``standardize: numeric`` scales (read from the
    column names: renaming ``b`` to ``b=x`` in a CSV file changes the results)."""
    numeric = ds.numeric_columns()
    if not (ds.nominal or ds.precomputed):
        return array_checksum(ds.X, ds.y, numeric)
    return array_checksum(
        ds.X, ds.y, np.asarray(ds.nominal, dtype=np.intp), np.asarray([ds.precomputed]), numeric
    )


def loader_version(entry, base_dir):
    """What identifies the code of a dataset entry's loader outside knnx (its
    ``loader:`` function, or a dataset a plugin registered): that code is run again by
    every worker and may give more than the arrays (a ``posterior``), so a cell's key
    holds it as it holds an estimator's (:func:`knnx.plugins.object_version`); None
    for knnx's own datasets and CSV files (their bytes are in the data checksum)."""
    from knnx import datasets
    from knnx.plugins import import_object, object_version

    if isinstance(entry, dict) and isinstance(entry.get("loader"), str):
        return object_version(import_object(entry["loader"], base_dir), entry["loader"])
    name = entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, dict) else None
    if isinstance(name, str) and name in datasets.REGISTERED:
        return object_version(datasets.REGISTERED[name])
    return None


def data_material(vspec):
    """Per dataset, what a cell's key holds of it: the checksum of what cells read, and
    the version of its loader's code when that is not knnx's."""
    out = []
    for ds, entry in zip(vspec.datasets, vspec.entries, strict=True):
        version = loader_version(entry, vspec.base_dir)
        out.append({"data": data_checksum(ds), **({"loader": version} if version is not None else {})})
    return out


def code_material():
    """What every cell's hash covers of the code: knnx's version, a checksum of its
    source files and the versions of the numeric libraries (an upgrade can move a
    baseline's last digits, so cells cached under another version are rerun)."""
    return {"knnx": __version__, "code": code_checksum(), "libraries": library_versions()}


def cell_keys(vspec, kind):
    """{cell key: content hash} for every cell of a validated spec: the hash of its cell
    kind's material (:meth:`knnx.experiment.cells.CellKind.hash_material`; ``kind`` is
    :func:`knnx.experiment.cells.kind_of` of the spec) and of the cell's identity
    (dataset, algorithm, params, repeat, fold)."""
    common, per_cell = kind.hash_material(vspec)
    keys = {}
    for c in vspec.cells:
        material = {
            **common,
            **per_cell(c),
            "cell": [c.dataset, c.algorithm, c.params_json, c.repeat, c.fold],
        }
        keys[c.key()] = hashlib.sha256(canonical_json(material).encode()).hexdigest()
    return keys


def record_environment(path, n_todo):
    """environment.json: one entry per invocation (a resumed run adds one), newest last."""
    runs = []
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
            runs = [] if json_too_deep(text) else json.loads(text).get("runs", [])
        except (ValueError, AttributeError, OSError):
            runs = []
        if not isinstance(runs, list):  # a hand-edited file: start the record again
            runs = []
    entry = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cells_to_run": n_todo, **environment_info()}
    atomic_write_text(path, json.dumps({"runs": [*runs, entry]}, indent=2) + "\n")


def record_warmup(path, seconds):
    """Add ``"warmup_seconds": {algorithm: seconds}`` (rounded to ms) to the newest entry of
    environment.json, this run's (the run holds the folder's lock), rewritten atomically.
    Only algorithms that warmed up are listed: a class without numba kernels (a
    scikit-learn estimator) is never warmed up (:func:`knnx.experiment.warmup.warms_up`)."""
    try:
        text = path.read_text(encoding="utf-8")
        if json_too_deep(text):
            return
        doc = json.loads(text)
        runs = doc["runs"]
        runs[-1]["warmup_seconds"] = {name: round(s, 3) for name, s in sorted(seconds.items())}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OSError):
        return  # no entry of this run to complete (edited meanwhile): the results stand
    atomic_write_text(path, json.dumps(doc, indent=2) + "\n")
