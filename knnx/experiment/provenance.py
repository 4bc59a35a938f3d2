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


def code_material():
    """What every cell's hash covers of the code: knnx's version, a checksum of its
    source files and the versions of the numeric libraries (an upgrade can move a
    baseline's last digits, so cells cached under another version are rerun)."""
    return {"knnx": __version__, "code": code_checksum(), "libraries": library_versions()}


def cell_keys(vspec, kind=None):
    """{cell key: content hash} for every cell of a validated spec: the hash of its cell
    kind's material (:meth:`knnx.experiment.cells.CellKind.hash_material`) and of the
    cell's identity (dataset, algorithm, params, repeat, fold)."""
    from knnx.experiment.cells import kind_of

    kind = kind_of(vspec) if kind is None else kind
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
