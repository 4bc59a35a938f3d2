"""A wheel carries the benchmark suites: built from the checkout, installed into a folder
of its own, it runs a suite spec from a folder outside the checkout.

Slow (about 45 s, most of it numba compiling the kernels afresh in the installed copy),
and skipped where the build backend (hatchling) is not importable: the wheel is built
without build isolation so that the test needs no network.
"""

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import knnx

REPO = Path(__file__).resolve().parents[2]
MANIFEST = json.loads((REPO / "datasets" / "suites" / "MANIFEST.json").read_text(encoding="utf-8"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("hatchling") is None,
        reason="no hatchling (knnx's build backend) to build the wheel without network",
    ),
]

SPEC = """\
name: wheel-suite
seed: 0
datasets:
  - {suite: keel-imbalanced, max_rows: 200, has_partitions: 5-fold}
protocol: {kind: partitions, scheme: 5-fold}
algorithms:
  - name: knn
    params: {k: 1}
metrics: [error]
"""


def run(args, cwd, env):
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout


def test_an_installed_wheel_runs_a_suite_spec_outside_the_checkout(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("KNNX_DATA", "PYTHONPATH")}
    # the build backend where this interpreter finds it (pip's backend subprocess inherits env)
    env["PYTHONPATH"] = str(Path(importlib.util.find_spec("hatchling").origin).parents[1])
    wheels, target, work = tmp_path / "wheels", tmp_path / "site", tmp_path / "work"
    work.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", wheels, REPO],
        work,
        env,
    )
    (wheel,) = wheels.glob("knnx-*.whl")
    run([*pip, "install", "--no-deps", "--no-index", "-q", "--target", target, wheel], work, env)

    env["PYTHONPATH"] = str(target)  # the installed copy, not the checkout, is imported
    where = run(
        [
            sys.executable,
            "-c",
            "import knnx, knnx.datasets.suites as s; print(knnx.__file__); print(s.suites_dir())",
        ],
        work,
        env,
    ).splitlines()
    assert where == [str(target / "knnx" / "__init__.py"), str(target / "knnx" / "_bundled_data" / "suites")]
    assert len(list((target / "knnx" / "_bundled_data" / "suites" / "data").glob("*.csv.xz"))) == len(
        list((REPO / "datasets" / "suites" / "data").glob("*.csv.xz"))
    )

    (work / "s.yaml").write_text(SPEC)
    run([sys.executable, "-m", "knnx.cli", "run", "s.yaml", "--out", "out", "--quiet"], work, env)
    with open(work / "out" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))

    expected = sorted(
        d["id"]
        for d in MANIFEST["datasets"]
        if d["suite"] == "keel-imbalanced"
        and d["n_rows"] <= 200
        and "5-fold" in d.get("partitions", {}).get("schemes", {})
    )
    assert expected  # the filters keep some datasets
    assert len(rows) == 5 * len(expected)
    assert sorted({r["dataset"] for r in rows}) == expected
    n_rows = {d["id"]: d["n_rows"] for d in MANIFEST["datasets"]}
    for name in expected:
        mine = [r for r in rows if r["dataset"] == name]
        assert sorted(int(r["fold"]) for r in mine) == [0, 1, 2, 3, 4]
        assert sum(int(r["n_test"]) for r in mine) == n_rows[name]  # every row tested once

    # the same spec from the checkout gives the same errors
    (tmp_path / "here.yaml").write_text(SPEC)
    knnx.run_spec(tmp_path / "here.yaml", out=tmp_path / "here", report=False, figures=False)
    with open(tmp_path / "here" / "results.csv", newline="") as fh:
        here = {(r["dataset"], r["fold"]): r["value"] for r in csv.DictReader(fh)}
    assert {(r["dataset"], r["fold"]): r["value"] for r in rows} == here
