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
    "knnx.active_experiment": ["knnx.runner", "knnx.cli"],
    "knnx.datasets": ["knnx.knn", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.report", "knnx.cli"],
    "knnx.protocols": ["knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.report", "knnx.cli"],
    "knnx.metrics": ["knnx.datasets", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.cli"],
    "knnx.results": ["knnx.datasets", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.cli"],
    "knnx.report": ["knnx.datasets", "knnx.algorithms", "knnx.spec", "knnx.runner", "knnx.cli"],
    "knnx.spec": ["knnx.runner", "knnx.report", "knnx.results", "knnx.cli"],
    "knnx.runner": ["knnx.cli"],
}


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
