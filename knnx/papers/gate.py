"""The regression gate: run a folder of specs and check each against its committed reference.

``knnx gate`` (``make regress``) runs every ``regress_*.yaml`` of ``experiments/regress`` from
scratch into ``results/regress/<name>/`` (:func:`knnx.run_spec`, any kind of spec) and
compares its per-group means with ``results/reference/<name>.csv``
(:func:`knnx.reporting.summaries.check_against_reference`): tolerance 0 for knnx's own algorithms, which
are exact or seeded and deterministic, and :data:`ALGORITHM_ATOL` for the wrapped
third-party baselines. Groups in the results but not in the reference also fail (the spec
changed without its reference). ``update=True`` (``knnx gate --update``) runs the same
way and copies each ``results.csv`` to its reference: only after an intended change, said
in the commit. Any researcher can gate their own experiments the same way (``--specs``,
``--reference-dir``).
"""

import shutil
import time
from pathlib import Path

from knnx.errors import KnnxError
from knnx.limits import check_tolerance
from knnx.reporting.summaries import check_against_reference, new_groups

# Wrapped third-party baselines (scikit-learn, scipy's optimisers) and itml_knn (its map is
# ITML's matrix factored by LAPACK's eigh) get their own tolerance: their last digits follow
# the installed library builds, which a fresh install takes from the registry. Seen: svm_platt's (CalibratedClassifierCV, sigmoid) sym_kl moved
# by 3e-17 between two installs of the same knnx commit. knnx's own algorithms stay exact.
# 1e-6 is far below any real change of a metric (an error moves by 1/n >= 1e-4).
ALGORITHM_ATOL = {
    name: 1e-6 for name in ("svm_platt", "svm_rbf", "svm_linear", "sgd", "adaboost", "itml_knn")
}

# Metrics that compare with a synthetic dataset's true posterior get a few units in the last
# place, whatever the algorithm: the posterior comes from scipy's multivariate_normal.logpdf
# (LAPACK and BLAS) and numpy's exp and log, whose kernels the CPU chooses (numpy dispatches
# float64 exp and log to AVX-512 code where the CPU has it, to libm's elsewhere). Seen: the
# same commit moved js by 1.4e-17 and sym_kl by 1.1e-16 on a machine with AVX2 and no AVX-512
# against references made on the machine of earlier runs, while the error and Brier score of
# the same cells (the estimators' own outputs) stayed exact. 1e-15 is about ten units in the
# last place of a divergence near 0.5.
METRIC_ATOL = {"sym_kl": 1e-15, "js": 1e-15}


def find_specs(spec_dir, words=()):
    """The ``regress_*.yaml`` specs of ``spec_dir`` (sorted), keeping those whose stem
    contains one of ``words`` if given."""
    specs = sorted(Path(spec_dir).glob("regress_*.yaml"))
    if words:
        specs = [s for s in specs if any(w in s.stem for w in words)]
    return specs


def check(results, reference, atol=0.0, atol_for=None, atol_metric=None):
    """``(ok, problems)``: groups that moved beyond their tolerance (``atol``; per algorithm
    ``atol_for``, default :data:`ALGORITHM_ATOL`, and per metric ``atol_metric``, default
    :data:`METRIC_ATOL`, the larger applying, never below ``atol``), reference groups
    missing, and groups the reference lacks. Every tolerance is a finite number >= 0
    (:func:`knnx.limits.check_tolerance`; KnnxError otherwise)."""
    atol, atol_for, atol_metric = _tolerances(atol, atol_for, atol_metric)
    atol_for = {name: max(tol, atol) for name, tol in atol_for.items()}
    problems = [
        f"moved: {p}"
        for p in check_against_reference(
            results,
            reference,
            atol=atol,
            atol_for=atol_for,
            atol_metric=atol_metric,
        )
    ]
    fresh = new_groups(results, reference)
    problems += [
        f"new (not in the reference): {g} (reference incomplete: rerun with --update)" for g in fresh
    ]
    return not problems, problems


def _tolerances(atol, atol_for, atol_metric):
    """``(atol, atol_for, atol_metric)`` with the defaults filled in, each tolerance
    checked by the one rule (:func:`knnx.limits.check_tolerance`): KnnxError naming the
    parameter and the entry (``atol_for: knn: expected a finite number >= 0, got inf``)."""
    checked = [check_tolerance(atol, "atol")]
    for param, given, default in (
        ("atol_for", atol_for, ALGORITHM_ATOL),
        ("atol_metric", atol_metric, METRIC_ATOL),
    ):
        values = {}
        for name, tol in (default if given is None else given).items():
            try:
                values[name] = check_tolerance(tol, param)
            except KnnxError as exc:
                raise KnnxError(f"{name}: {exc.message}", param=param) from None
        checked.append(values)
    return tuple(checked)


def gate(specs, *, out_dir, reference_dir, jobs=2, update=False, atol=0.0, echo=print):
    """Run and check (or update) each spec; ``[(name, status, seconds, details)]`` with
    status PASS, FAIL or UPDATED. ``echo`` is told one line per spec (and a FAIL's
    details). ``atol``: a finite number >= 0, checked before any spec runs (KnnxError)."""
    from knnx.experiment.runner import run_spec

    atol = check_tolerance(atol, "atol")

    rows = []
    width = max((len(s.stem) for s in specs), default=0)
    for spec in specs:
        name = spec.stem
        out = Path(out_dir) / name
        reference = Path(reference_dir) / f"{name}.csv"
        if not update and not reference.exists():
            echo(
                f"{'FAIL':7s} {name:{width}s} {0.0:7.1f} s  no reference {reference} (create it with --update)"
            )
            rows.append((name, "FAIL", 0.0, [f"no reference {reference}"]))
            continue
        start = time.perf_counter()
        try:
            run_spec(spec, out=out, jobs=jobs, resume=False, report=False)
            error = None
        except KnnxError as exc:
            error = str(exc).splitlines() or [type(exc).__name__]
        seconds = time.perf_counter() - start
        if error is not None:
            status, details = "FAIL", ["run failed:", *error[:5]]
        elif update:
            reference.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / "results.csv", reference)
            status, details = "UPDATED", [f"-> {reference}"]
        else:
            good, details = check(out / "results.csv", reference, atol)
            status = "PASS" if good else "FAIL"
        echo(f"{status:7s} {name:{width}s} {seconds:7.1f} s  atol {atol:g}")
        if status == "FAIL":
            for line in details[:12]:
                echo(f"        {line}")
            if len(details) > 12:
                echo(f"        ... {len(details) - 12} more")
        rows.append((name, status, seconds, details))
    return rows
