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
import subprocess
import time
from pathlib import Path

import pandas as pd

from knnx.errors import KnnxError, SpecError
from knnx.papers.comparison import COMPARISON_COLUMNS, comparison_rows
from knnx.papers.declaration import load_target, target_names
from knnx.papers.render import read_comparison, report_markdown
from knnx.results import atomic_write_text

__all__ = ["reproduce", "assemble", "comparison_rows", "load_target", "target_names", "read_comparison"]

TIMES = "reproduce-times.json"


def reproduce(names=None, *, root=".", variables=None, run=True, resume=True, jobs=1, progress=None):
    """Run the targets ``names`` (default: all), then :func:`assemble`. Returns
    ``(rows, times)``.

    ``variables``: {VAR: value} for the targets that declare VAR (e.g. CPW_UCI_REPEATS).
    ``run=False`` runs nothing. A spec step is :func:`knnx.run_spec` (``resume``: cells
    already computed by the same code are reused; ``jobs`` worker processes); a command
    step runs in a shell from ``root``. A failing step is recorded as the target's status
    and the next target runs. ``progress(text)`` is told each step."""
    root = Path(root)
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
    times_path = root / "results" / TIMES
    times = json.loads(times_path.read_text()) if times_path.is_file() else {}
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
    root = Path(root)
    targets = [load_target(n, _declared(n, variables)) for n in target_names()]
    frames = [comparison_rows(t, root) for t in targets]
    frames = [f for f in frames if len(f)]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COMPARISON_COLUMNS)
    out = root / "results"
    out.mkdir(parents=True, exist_ok=True)
    if times is None:
        times = json.loads((out / TIMES).read_text()) if (out / TIMES).is_file() else {}
    atomic_write_text(out / "comparison.csv", rows.to_csv(index=False, float_format=None))
    # REPORT.md from the file just written, read back: the report shows what the CSV holds
    written = read_comparison(out / "comparison.csv")
    atomic_write_text(out / "REPORT.md", report_markdown(targets, written, times))
    return written


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
