"""Regression gate: run every spec of experiments/regress/ and check it against its reference.

    python experiments/regress.py                 # run all, check, exit 1 on any failure
    python experiments/regress.py gnnb cpw_uci    # only specs whose name contains a word
    python experiments/regress.py --update        # regenerate the references deliberately

Each spec ``experiments/regress/regress_NAME.yaml`` is a fast subset of a paper target. It is
run from scratch (``--no-resume``) into ``results/regress/regress_NAME/`` by ``knnx run``
(an active-learning spec, ``kind: active``, too), then ``knnx check``-ed against ``results/reference/regress_NAME.csv`` with the spec's tolerance
(``ATOL``, 0 unless listed; wrapped third-party baselines: ``ALGORITHM_ATOL``, 1e-6). Groups
present in the results but not in the reference also fail: the spec changed without its
reference. One line per spec (PASS/FAIL, seconds), then the total; exit status 1 if any
spec failed.

``--update`` runs every selected spec the same way and copies its ``results.csv`` to the
reference (do it only after an intended change, and say why in the commit).
"""

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT / "experiments" / "regress"
REFERENCE_DIR = ROOT / "results" / "reference"
OUT_DIR = ROOT / "results" / "regress"

# |mean - reference mean| allowed per spec (knnx check --atol). Every spec here is exact or
# seeded and deterministic (tested: --jobs 1 and --jobs 2 give identical files), so 0.
ATOL = {}
DEFAULT_ATOL = 0.0
# Wrapped third-party baselines (scikit-learn, scipy's optimisers, metric-learn) get their own
# tolerance (knnx check --atol-for): their last digits follow the installed library builds, which
# a fresh install takes from the registry. Seen: svm_platt's (CalibratedClassifierCV, sigmoid)
# sym_kl moved by 3e-17 between two installs of the same knnx commit. knnx's own algorithms
# stay exact. 1e-6 is far below any real change of a metric (an error moves by 1/n >= 1e-4).
ALGORITHM_ATOL = {
    name: 1e-6 for name in ("svm_platt", "svm_rbf", "svm_linear", "sgd", "adaboost", "itml_knn")
}


def knnx_command():
    """The knnx CLI of this interpreter (its console script, else ``python -m knnx.cli``)."""
    script = Path(sys.executable).with_name("knnx")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "knnx.cli"]


def find_specs(spec_dir=SPEC_DIR, words=()):
    """The regress specs (sorted), keeping those whose stem contains one of ``words`` if given."""
    specs = sorted(Path(spec_dir).glob("regress_*.yaml"))
    if words:
        specs = [s for s in specs if any(w in s.stem for w in words)]
    return specs


def run_spec(spec, out, jobs=2):
    """Run one spec from scratch into ``out``; (ok, seconds, stderr tail)."""
    cmd = knnx_command() + [
        "run",
        str(spec),
        "--out",
        str(out),
        "--jobs",
        str(jobs),
        "--no-resume",
        "--quiet",
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return proc.returncode == 0, seconds, tail


def check(results, reference, atol, atol_for=None):
    """``knnx check``; (ok, problem lines). New groups (not in the reference) are problems here.
    ``atol_for``: {algorithm: tolerance} (default :data:`ALGORITHM_ATOL`), never below ``atol``."""
    atol_for = {
        name: max(tol, atol) for name, tol in (ALGORITHM_ATOL if atol_for is None else atol_for).items()
    }
    extra = [arg for name, tol in sorted(atol_for.items()) for arg in ("--atol-for", f"{name}={tol!r}")]
    proc = subprocess.run(
        knnx_command()
        + ["check", str(results), "--reference", str(reference), "--atol", repr(float(atol))]
        + extra,
        capture_output=True,
        text=True,
    )
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    problems = [ln for ln in lines if ln.startswith(("moved:", "error:"))]
    fresh = [ln for ln in lines if ln.startswith("new ")]
    if proc.returncode not in (0, 1) and not problems:
        problems = lines[-5:] or [f"knnx check exited with {proc.returncode}"]
    if fresh:
        problems += [f"{ln} (reference incomplete: rerun with --update)" for ln in fresh]
    return proc.returncode == 0 and not fresh, problems


def gate(specs, *, out_dir=OUT_DIR, reference_dir=REFERENCE_DIR, jobs=2, update=False, atol=None, echo=print):
    """Run and check (or update) each spec; returns a list of (name, status, seconds, details)."""
    rows = []
    width = max((len(s.stem) for s in specs), default=0)
    for spec in specs:
        name = spec.stem
        out = Path(out_dir) / name
        reference = Path(reference_dir) / f"{name}.csv"
        tol = ATOL.get(name, DEFAULT_ATOL) if atol is None else atol
        if not update and not reference.exists():
            echo(
                f"{'FAIL':7s} {name:{width}s} {0.0:7.1f} s  no reference {reference} (create it with --update)"
            )
            rows.append((name, "FAIL", 0.0, [f"no reference {reference}"]))
            continue
        ok, seconds, tail = run_spec(spec, out, jobs=jobs)
        if not ok:
            status, details = "FAIL", ["run failed:"] + tail
        elif update:
            reference.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / "results.csv", reference)
            status, details = "UPDATED", [f"-> {reference}"]
        else:
            good, details = check(out / "results.csv", reference, tol)
            status = "PASS" if good else "FAIL"
        echo(f"{status:7s} {name:{width}s} {seconds:7.1f} s  atol {tol:g}")
        for line in details[:12] if status == "FAIL" else []:
            echo(f"        {line}")
        if status == "FAIL" and len(details) > 12:
            echo(f"        ... {len(details) - 12} more")
        rows.append((name, status, seconds, details))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("words", nargs="*", help="only specs whose name contains one of these")
    parser.add_argument("--update", action="store_true", help="regenerate the references")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes per knnx run (default 2)")
    parser.add_argument("--specs", type=Path, default=SPEC_DIR, help="folder of regress_*.yaml specs")
    parser.add_argument("--reference-dir", type=Path, default=REFERENCE_DIR)
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="results root (default results/regress)")
    parser.add_argument("--atol", type=float, default=None, help="override every spec's tolerance")
    args = parser.parse_args(argv)
    specs = find_specs(args.specs, args.words)
    if not specs:
        print(
            f"error: no regress_*.yaml spec in {args.specs}"
            + (f" matching {args.words}" if args.words else "")
        )
        return 2
    start = time.perf_counter()
    rows = gate(
        specs,
        out_dir=args.out,
        reference_dir=args.reference_dir,
        jobs=args.jobs,
        update=args.update,
        atol=args.atol,
    )
    failed = [r[0] for r in rows if r[1] == "FAIL"]
    total = time.perf_counter() - start
    if failed:
        print(
            f"regression gate: {len(failed)} of {len(rows)} spec(s) failed ({', '.join(failed)}) in {total:.1f} s"
        )
        return 1
    verb = "updated" if args.update else "passed"
    print(f"regression gate: {len(rows)} spec(s) {verb} in {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
