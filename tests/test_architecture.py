"""Data flows one way: spec -> dataset -> protocol -> algorithm -> metrics -> results -> reports.

Parses every module's imports and checks that no module reaches upstream.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "knnx"

# module prefix -> knnx modules it must not import
FORBIDDEN = {
    "knnx._kernels": ["knnx."],  # kernels import nothing from knnx
    "knnx.neighbors": [
        "knnx.datasets",
        "knnx.spec",
        "knnx.runner",
        "knnx.report",
        "knnx.results",
        "knnx.cli",
    ],
    "knnx.knn": ["knnx.datasets", "knnx.spec", "knnx.runner", "knnx.report", "knnx.results", "knnx.cli"],
    "knnx.lpo": ["knnx.datasets", "knnx.spec", "knnx.runner", "knnx.report", "knnx.results", "knnx.cli"],
    "knnx.active": ["knnx.datasets", "knnx.spec", "knnx.runner", "knnx.report", "knnx.results", "knnx.cli"],
    "knnx.datasets": ["knnx.knn", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.report", "knnx.cli"],
    "knnx.protocols": ["knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.report", "knnx.cli"],
    "knnx.metrics": ["knnx.datasets", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.cli"],
    "knnx.results": ["knnx.datasets", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.cli"],
    "knnx.report": ["knnx.datasets", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.cli"],
    "knnx.spec": ["knnx.runner", "knnx.report", "knnx.results", "knnx.cli"],
    "knnx.runner": ["knnx.cli"],
}
# Estimators and the search take their neighbour graphs as arguments: none reaches the
# runner (whose process store it hands over explicitly).
for _module in ("knnx.graphs", "knnx.base", "knnx.unn", "knnx.gnnb", "knnx.weighted", "knnx.baselines"):
    FORBIDDEN.setdefault(_module, []).extend(["knnx.runner", "knnx.spec", "knnx.cli"])


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        yield name, path


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


@pytest.mark.parametrize("name,path", list(_modules()), ids=[n for n, _ in _modules()])
def test_no_upstream_imports(name, path):
    rules = [
        bad
        for prefix, bads in FORBIDDEN.items()
        if name == prefix or name.startswith(prefix + ".")
        for bad in bads
    ]
    offending = [
        imp for imp in _imports(path) for bad in rules if imp == bad.rstrip(".") or imp.startswith(bad)
    ]
    offending = [
        imp
        for imp in offending
        if not (
            name.startswith("knnx._kernels") and (imp == "knnx._kernels" or imp.startswith("knnx._kernels."))
        )
    ]
    assert offending == [], f"{name} imports {offending}"


def test_license_and_citation_agree_with_the_package():
    """LICENSE is the BSD-3-Clause text pyproject declares; CITATION.cff is valid YAML in
    CFF 1.2.0 form whose version and licence are the package's own."""
    import tomllib
    from pathlib import Path

    import yaml

    import knnx

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "BSD-3-Clause"
    text = (root / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License\n")
    assert "Neither the name of the copyright holder nor the names of its" in text
    cff = yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == knnx.__version__ and cff["license"] == project["license"]
    assert {"title", "authors", "message"} <= set(cff)
    # the five papers knnx implements, each with its year
    assert sorted(r["year"] for r in cff["references"]) == [2006, 2011, 2012, 2012, 2014]


def test_no_hidden_state_in_the_search_path():
    """No context variables or module globals rebound at run time in knnx (the runner's
    process store is passed explicitly): kneighbors' result depends on its arguments."""
    for name, path in _modules():
        tree = ast.parse(path.read_text())
        used = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        used |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "contextvars" not in used, name
        if name.startswith(
            ("knnx.neighbors", "knnx.graphs", "knnx.knn", "knnx.unn", "knnx.gnnb", "knnx.lpo")
        ):
            rebound = {g for n in ast.walk(tree) if isinstance(n, ast.Global) for g in n.names}
            assert rebound <= {"_blas_controller"}, name  # built once on first use; no result depends on it
