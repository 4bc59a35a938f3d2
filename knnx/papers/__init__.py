"""The papers' tables as declared data, and ``knnx reproduce``.

* :mod:`knnx.papers.declaration`: the target files (``knnx/papers/targets/*.yaml``): what
  to run, which tables, which rows, which statistic and interval policy.
* :mod:`knnx.papers.intervals`: one documented interval policy per kind of quantity.
* :mod:`knnx.papers.comparison`: results -> tidy comparison rows (``comparison.csv``).
* :mod:`knnx.papers.render`: the one renderer (markdown, LaTeX) and REPORT.md, an
  aggregation of the comparison rows.

:func:`reproduce` runs targets and writes ``results/comparison.csv`` and
``results/REPORT.md`` for every declared target (a target not run this time
contributes the results already on disk).
"""

import json
import re
import subprocess
import time
from pathlib import Path

import pandas as pd

from knnx.errors import KnnxError, SpecError
from knnx.papers.comparison import COMPARISON_COLUMNS, comparison_rows
from knnx.papers.declaration import ROOT_HINT, load_target, read_paper_values, target_names
from knnx.papers.render import read_comparison, report_markdown
from knnx.results import atomic_write_text, json_kind, read_json
from knnx.spec.messages import short_repr

__all__ = ["reproduce", "assemble", "comparison_rows", "load_target", "target_names", "read_comparison"]

TIMES = "reproduce-times.json"


def reproduce(names=None, *, root=".", variables=None, run=True, resume=True, jobs=1, progress=None):
    """Run the targets ``names`` (default: all), then :func:`assemble`. Returns
    ``(rows, times)``.

    ``variables``: {VAR: value} for the targets that declare VAR (e.g. CPW_UCI_REPEATS).
    ``run=False`` runs nothing. A spec step is :func:`knnx.run_spec` (``resume``: cells
    already computed by the same code are reused; ``jobs`` worker processes); a command
    step runs in a shell from ``root``. A failing step is recorded as the target's status
    and the next target runs. ``progress(text)`` is told each step. Before anything runs:
    ``root`` must be a folder holding every paper CSV the targets read, and its timing
    record (:func:`read_times`) sound; one-line errors otherwise."""
    root = _project_root(root)
    names = list(names or target_names())
    known = set(target_names())
    for name in names:
        if name not in known:
            raise SpecError(f"unknown target '{name}'; known: {', '.join(sorted(known))}")
    variables = {k: str(v) for k, v in (variables or {}).items()}
    declared = set()
    for name in known:
        declared |= set(load_target(name).variables)
    unknown = set(variables) - declared
    if unknown:
        raise SpecError(f"unknown variable {sorted(unknown)[0]}; known: {', '.join(sorted(declared))}")
    for var, value in sorted(variables.items()):
        problem = _value_problem(var, value)
        if problem:
            raise SpecError(problem)
    times_path = root / "results" / TIMES
    times = read_times(times_path)
    for name in sorted(known):  # every paper CSV assemble reads, before anything runs
        target = load_target(name, _declared(name, variables))
        for table in target.tables:
            read_paper_values(root, table, target.target)
    if run:
        for name in names:
            target = load_target(name, _declared(name, variables))
            start, status = time.perf_counter(), "ok"
            for step in target.runs:
                if progress is not None:
                    progress(f"{name}: {step.command or step.spec}")
                try:
                    _run_step(step, root, resume, jobs)
                except (KnnxError, subprocess.CalledProcessError, OSError) as exc:
                    status = f"failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                    break
            times[name] = {"seconds": time.perf_counter() - start, "status": status}
            times_path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(times_path, json.dumps(times, indent=1, sort_keys=True) + "\n")
    rows = assemble(root=root, variables=variables, times=times)
    return rows, times


def assemble(*, root=".", variables=None, times=None):
    """comparison.csv and REPORT.md in ``root/results`` from the result files on disk,
    for every declared target; returns the comparison rows."""
    root = _project_root(root)
    targets = [load_target(n, _declared(n, variables)) for n in target_names()]
    if times is None:
        times = read_times(root / "results" / TIMES)
    frames = [comparison_rows(t, root) for t in targets]
    frames = [f for f in frames if len(f)]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COMPARISON_COLUMNS)
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "comparison.csv", rows.to_csv(index=False, float_format=None))
    # REPORT.md from the file just written, read back: the report shows what the CSV holds
    written = read_comparison(out / "comparison.csv")
    atomic_write_text(out / "REPORT.md", report_markdown(targets, written, times))
    return written


def read_times(path):
    """The timing record ``results/reproduce-times.json`` ({target: {"seconds": s,
    "status": text}}; {} when absent); ResultsError naming the file, one line, if it is
    not one (see :func:`knnx.results.read_json`)."""
    if not Path(path).is_file():
        return {}
    hint = "; remove it to start the record again"
    return read_json(path, "timing", _times_problem, hint)


def _times_problem(times):
    """What makes ``times`` not a timing record, or None."""
    if not isinstance(times, dict):
        return f"expected a JSON object {{target: {{seconds, status}}}}, got {json_kind(times)}"
    for name, entry in times.items():
        if not isinstance(entry, dict):
            return f"{name}: expected {{seconds, status}}, got {short_repr(entry)}"
        seconds, status = entry.get("seconds"), entry.get("status", "")
        number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
        if seconds is not None and not (number and seconds >= 0):
            return f"{name}: seconds: expected a number >= 0, got {short_repr(seconds)}"
        if not isinstance(status, str):
            return f"{name}: status: expected a string, got {short_repr(status)}"
    return None


def _project_root(root):
    """``root`` as a Path: KnnxError about ``root`` unless it is a folder."""
    root = Path(root)
    if not root.is_dir():
        raise KnnxError(f"{root} is not a folder; {ROOT_HINT}", param="root")
    return root


def _value_problem(var, value):
    """A line when ``value`` is not of the kind of ``var``'s declared default: a count
    (a default that is an integer, such as CPW_BETA_REPEATS=10) is an integer >= 1,
    so that a mistyped value is refused before any target runs, not a failed target."""
    defaults = [load_target(n).variables[var] for n in target_names() if var in load_target(n).variables]
    if any(isinstance(d, int) and not isinstance(d, bool) for d in defaults):
        if not re.fullmatch(r"[0-9]{1,9}", value.strip()) or int(value) < 1:
            return f"--var {var}: expected an integer >= 1 (its default is {defaults[0]}), got {value!r}"
    return None


def _declared(name, variables):
    if not variables:
        return None
    declared = load_target(name).variables
    return {k: v for k, v in variables.items() if k in declared} or None


def _run_step(step, root, resume, jobs):
    if step.command is not None:
        subprocess.run(step.command, shell=True, cwd=root, check=True)
        return
    from knnx.experiment.runner import run_spec

    overrides = [f"{k}={v}" for k, v in step.set.items()]
    run_spec(root / step.spec, out=root / step.out, overrides=overrides, resume=resume, jobs=jobs)
