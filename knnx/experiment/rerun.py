"""A rerun with nothing to do, answered before the heavy imports.

The end of a run records in ``OUT/.knnx-outputs.json`` (:data:`STAMP`) a digest of the
files it made its outputs from and of those it wrote (:func:`outputs_digest`), and,
when everything that made the run's cells is files whose bytes can be read again, a
*fingerprint* of those inputs (:func:`fingerprint`): the spec file's bytes and place
(as typed: relative paths in it are resolved from its folder), the ``--set``
overrides, the bytes of the data files its datasets came from (CSV files through
their links, the bundled and suite files, their manifests, and which bundled folder
was found), knnx's source files, the versions of the numeric libraries and of those
that read the spec and the data, the Python version, ``KNNX_DATA``, and the ledger
(cells.csv) as it was at the end; besides it, the memory limit validation passed
under. A fingerprint is recorded only when the spec and the data files read at the
end are those validation read at the start (an edit during the run leaves none).

:func:`unchanged_run` reads that record first. When the fingerprint and the outputs'
digest are both what they were, the memory limit is no lower, and the options are the
same, every cell of the spec is done and its outputs are made from the files there
now: the run has nothing to do or to write, and it says so without importing
scikit-learn, numba or pandas, without loading the data and without validating the
spec again (a 2,000-cell rerun: 0.3 s in place of 2.2 s). Anything else (no record, a
changed byte, an option it cannot vouch for, a locked folder) returns None, and the
run takes its full path, which decides as it always has; that path refreshes a record
whose fingerprint is out of date (a new Python, say) when it finds nothing to do.

A run has no fingerprint, so that its reruns always take the full path, when code
outside knnx and scikit-learn may make its cells (a loader, a registered or plugin
dataset, an estimator from the user's module or a plugin package, or a module that
re-exports one of scikit-learn's) or the spec sets ``python_path``: that code may
read what no fingerprint lists. One window stays open: a data file changed between
validation's reading it and the run's first fingerprint, a fraction of a second at
the start of a run, is recorded as it is after the change.
"""

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from knnx._paths import read_regular
from knnx.limits import json_too_deep
from knnx.writing import atomic_write_text, output_lock

STAMP = ".knnx-outputs.json"

# What the end of a run reads, and what it writes besides the figures.
_INPUTS = (
    "results.csv",
    "curves.csv",
    "failures.csv",
    "warnings.csv",
    "spec.yaml",
    "datasets.csv",
    "environment.json",
)
_WRITTEN = ("summary.csv", "summary.md", "report.html")

# The libraries whose numerics reach a cell's rows (numba compiles the kernels; scikit-learn,
# scipy and metric-learn run the baselines): their versions are part of every cell's hash.
NUMERIC_LIBRARIES = ("numpy", "scipy", "numba", "llvmlite", "scikit-learn", "metric-learn")
# Besides them, what reads the spec and the data (and so decides what the cells are): a
# fingerprint holds their versions too.
READING_LIBRARIES = ("pandas", "PyYAML", "pydantic")


@dataclass(frozen=True)
class RunSummary:
    out: Path
    n_cells: int
    n_run: int
    n_skipped: int
    seconds: float
    n_warned: int = 0  # cells of this run that raised warnings (listed in OUT/warnings.csv)
    notes: tuple = ()  # one line per figure (or report) that could not be made, saying why
    advice: tuple = ()  # lines on the results worth a look (a tuned choice at its grid's edge)
    reruns: tuple = ()  # one line per reason cells of an earlier run ran again (knnx.experiment.reasons)


@lru_cache(maxsize=1)
def code_checksum():
    """SHA-256 of knnx's own source files (relative path and bytes, in path order)."""
    root = Path(__file__).resolve().parents[1]  # the knnx package
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def library_versions():
    """{distribution: version or None if not installed} for :data:`NUMERIC_LIBRARIES`."""
    return _versions(NUMERIC_LIBRARIES)


def _versions(names):
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def file_digest(path):
    """sha256 of a regular file's bytes, or "absent" when it cannot be read or is no
    regular file (:func:`knnx._paths.read_regular`: a FIFO is not read, which would wait
    for a writer forever; the spec's and the data's own checks refuse it in one line)."""
    data = read_regular(path)
    return "absent" if data is None else hashlib.sha256(data).hexdigest()


def outputs_digest(out, options):
    """sha256 of ``options`` (the end of a run's arguments, JSON-able) and of the bytes of
    every input and output file of the end of a run in ``out`` (absent ones as absent),
    and of every PNG file there (the figures among them)."""
    out = Path(out)
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode())
    names = [*_INPUTS, *_WRITTEN, *sorted(p.name for p in out.glob("*.png"))]
    for name in names:
        digest.update(name.encode() + b"\0" + file_digest(out / name).encode())
    return digest.hexdigest()


def _bundled_folder():
    from knnx._paths import data_dir

    try:
        return str(data_dir())
    except Exception:  # noqa: BLE001 - no bundled data: recorded as such
        return None


def fingerprint(spec_path, overrides, files, out):
    """What made a run's cells, as bytes read again (see the module): a JSON-able dict.
    ``files``: the data files of its datasets (absolute paths, links not resolved: they
    are followed when read, as the loaders do)."""
    return {
        "spec": file_digest(spec_path),
        # relative paths in it are resolved from its folder, as typed (links included)
        "spec_path": os.path.abspath(spec_path),
        "overrides": [str(o) for o in overrides],
        "files": {p: file_digest(p) for p in sorted(map(str, files))},
        "code": code_checksum(),
        "libraries": {**library_versions(), **_versions(READING_LIBRARIES)},
        "python": sys.version,
        "knnx_data": os.environ.get("KNNX_DATA"),
        "bundled": _bundled_folder(),
        "ledger": file_digest(Path(out) / "cells.csv"),
    }


def read_stamp(out):
    """The record of the end of the last run in ``out`` (a dict), or None."""
    try:
        data = read_regular(Path(out) / STAMP)  # a FIFO put there is not read
        text = None if data is None else data.decode("utf-8")
        recorded = None if text is None or json_too_deep(text) else json.loads(text)
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


def outputs_current(out, options):
    """Whether the end of a run recorded in ``out`` was made with ``options`` from the
    files there now, and its outputs are there unchanged."""
    recorded = read_stamp(out)
    return recorded is not None and recorded.get("digest") == outputs_digest(out, options)


def record_outputs(out, options, inputs=None):
    """Record the end of a run just made in ``out`` (see :func:`outputs_current`), with
    ``inputs`` (:func:`inputs_record`, or None: no fingerprint) for :func:`unchanged_run`."""
    stamp = {"digest": outputs_digest(out, options), "options": options, "inputs": inputs}
    atomic_write_text(Path(out) / STAMP, json.dumps(stamp, sort_keys=True) + "\n")


def inputs_record(spec_path, overrides, files, out, n_cells, memory):
    """The stamp's ``inputs``: the fingerprint, the number of cells, (held, biggest)
    bytes of the datasets (the memory check of ``--jobs``) and the memory limit that
    validation's checks passed under."""
    from knnx.limits import memory_limit

    return {
        "fingerprint": fingerprint(spec_path, overrides, files, out),
        "cells": n_cells,
        "memory": memory,
        "memory_limit": memory_limit(),
    }


def default_out(spec_text, overrides):
    """``results/<spec name>`` for a spec's text, or None when it cannot be read here (the
    full path validates it) or an override may change the name."""
    if any(not isinstance(o, str) or o.split("=", 1)[0].strip() == "name" for o in overrides):
        return None
    import yaml

    try:
        name = yaml.safe_load(spec_text).get("name")
    except Exception:  # noqa: BLE001 - any unreadable spec: the full path says why
        return None
    return Path("results") / name if isinstance(name, str) and name else None


def _folder_plain(out, spec_path):
    """The folder's files are plain (as the full path requires: no link, no folder in
    place of a file) and its spec.yaml is not the spec being run."""
    from knnx.writing import OUTPUT_FILES

    for name in OUTPUT_FILES:
        path = out / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            return False
    copy = out / "spec.yaml"
    return not (copy.exists() and os.path.samefile(copy, spec_path))


def unchanged_run(
    spec,
    *,
    out=None,
    jobs=1,
    resume=True,
    executor="local",
    scheduler=None,
    overrides=(),
    report=True,
    progress=None,
    figures=True,
):
    """The RunSummary of a rerun of the spec file ``spec`` that has nothing to do (see
    the module), or None: then the run takes its full path (:func:`knnx.experiment.runner.run_spec`,
    whose arguments these are). ``progress`` is called as a run with nothing to do calls it."""
    start = time.perf_counter()
    if not resume or executor != "local" or scheduler is not None or isinstance(spec, dict):
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        return None
    overrides = tuple(overrides or ())
    try:
        spec_path = Path(spec)
        text = read_regular(spec_path, limit=1_000_000)
    except (OSError, TypeError, ValueError):
        return None
    if text is None:
        return None  # not a spec file this check reads (knnx.spec.read says why)
    out = Path(out) if out is not None else default_out(text, overrides)
    if out is None or read_stamp(out) is None or not _folder_plain(out, spec_path):
        return None
    try:
        lock = output_lock(out)
        lock.__enter__()
    except Exception:  # noqa: BLE001 - locked or not writable: the full path says so
        return None
    try:
        inputs = _current_inputs(read_stamp(out), spec_path, overrides, out, jobs, (report, figures))
    finally:
        lock.__exit__(None, None, None)
    if inputs is None:
        return None
    n = int(inputs["cells"])
    if progress is not None:
        progress(n, n, "")
    return RunSummary(out, n, 0, n, time.perf_counter() - start)


def _current_inputs(recorded, spec_path, overrides, out, jobs, made):
    """The stamp's ``inputs`` when this rerun has nothing to do (read under the lock),
    else None."""
    inputs = (recorded or {}).get("inputs")
    options = (recorded or {}).get("options")
    if not isinstance(inputs, dict) or not isinstance(options, dict):
        return None
    report, figures = made
    if options.get("html_report") != bool(report) or options.get("plots", True) != bool(figures):
        return None  # the end of the run was made with or without report.html or figures: not this rerun's
    if not _limit_holds(inputs.get("memory_limit")):
        return None
    if jobs > 1 and not _memory_fits(jobs, inputs.get("memory")):
        return None
    fp = inputs.get("fingerprint")
    if not isinstance(fp, dict) or not isinstance(fp.get("files"), dict):
        return None
    if fp != fingerprint(spec_path, overrides, fp["files"], out):
        return None
    if recorded.get("digest") != outputs_digest(out, options):
        return None
    return inputs


def _limit_holds(recorded):
    """The memory limit now is at least the one validation passed under (its checks
    would pass again)."""
    from knnx.limits import memory_limit

    try:
        return isinstance(recorded, int) and memory_limit() >= recorded
    except Exception:  # noqa: BLE001 - an unreadable KNNX_MEMORY_LIMIT: the full path says why
        return False


def _memory_fits(jobs, memory):
    """Whether ``--jobs`` passes the full path's memory check for datasets of (held,
    biggest) bytes."""
    from knnx.limits import WORKER_BYTES, memory_problem

    try:
        held, biggest = memory
    except (TypeError, ValueError):
        return False
    return memory_problem(held + jobs * (WORKER_BYTES + 4 * biggest), "") is None
