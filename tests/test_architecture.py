"""Data flows one way: spec -> dataset -> protocol -> algorithm -> metrics -> results -> reports.

Parses every module's imports and checks that no module reaches upstream.
"""

import ast
from collections import Counter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "knnx"

# One rule per subpackage: package prefix -> knnx packages it must not import.
# Layers, lowest first: _kernels; neighbors; metric_learning (learned maps); lpo (the
# risk) and estimators; reduction (prototype selections); steps (a
# contestant's steps before its classifier); datasets and evaluation beside them; spec;
# experiment; results, reporting, stats; papers; cli.
_ENGINE = ["knnx.spec", "knnx.experiment", "knnx.papers", "knnx.cli"]
_OUTPUTS = ["knnx.results", "knnx.reporting", "knnx.stats"]
FORBIDDEN = {
    "knnx._kernels": ["knnx."],  # kernels import nothing from knnx
    "knnx.neighbors": [
        "knnx.estimators",
        "knnx.steps",
        "knnx.reduction",
        "knnx.metric_learning",
        "knnx.lpo",
        "knnx.datasets",
        "knnx.evaluation",
        *_ENGINE,
        *_OUTPUTS,
    ],
    "knnx.lpo": [
        "knnx.datasets",
        "knnx.evaluation",
        "knnx.steps",
        "knnx.reduction",
        "knnx.metric_learning",
        *_ENGINE,
        *_OUTPUTS,
    ],
    "knnx.estimators": [
        "knnx.datasets",
        "knnx.evaluation",
        "knnx.steps",
        "knnx.reduction",
        *_ENGINE,
        *_OUTPUTS,
    ],
    # prototype selections: samplers on the search and the estimators' vote, below the steps
    "knnx.reduction": ["knnx.steps", "knnx.datasets", "knnx.evaluation", *_ENGINE, *_OUTPUTS],
    # metric learners: transformers on the search, below the estimators (itml_knn uses ITML)
    "knnx.metric_learning": [
        "knnx.estimators",
        "knnx.lpo",
        "knnx.steps",
        "knnx.reduction",
        "knnx.datasets",
        "knnx.evaluation",
        *_ENGINE,
        *_OUTPUTS,
    ],
    # a contestant's steps before its classifier: above the estimators, below the engine
    "knnx.steps": ["knnx.datasets", "knnx.evaluation", *_ENGINE, *_OUTPUTS],
    "knnx.datasets": [
        "knnx.neighbors",
        "knnx.estimators",
        "knnx.steps",
        "knnx.lpo",
        "knnx.evaluation",
        *_ENGINE,
        *_OUTPUTS,
    ],
    "knnx.evaluation": [
        "knnx.neighbors",
        "knnx.estimators",
        "knnx.steps",
        "knnx.lpo",
        "knnx.datasets",
        *_ENGINE,
        *_OUTPUTS,
    ],
    "knnx.spec": ["knnx.experiment", "knnx.papers", "knnx.cli", *_OUTPUTS],
    "knnx.experiment": ["knnx.papers", "knnx.cli"],
    "knnx.results": [
        "knnx.neighbors",
        "knnx.estimators",
        "knnx.steps",
        "knnx.lpo",
        "knnx.datasets",
        "knnx.evaluation",
        *_ENGINE,
        "knnx.reporting",
        "knnx.stats",
    ],
    "knnx.reporting": [
        "knnx.neighbors",
        "knnx.estimators",
        "knnx.steps",
        "knnx.lpo",
        "knnx.datasets",
        *_ENGINE,
    ],
    # stats computes the tests; reporting shows them (tables, sentences, the CD diagram)
    "knnx.stats": [
        "knnx.neighbors",
        "knnx.estimators",
        "knnx.steps",
        "knnx.lpo",
        "knnx.datasets",
        *_ENGINE,
        "knnx.reporting",
    ],
    "knnx.papers": ["knnx.neighbors", "knnx.estimators", "knnx.steps", "knnx.lpo", "knnx.cli"],
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


def _internal_imports(name, path, known):
    """The knnx modules ``name`` (at ``path``) imports anywhere in its body, relative
    imports resolved and ``from package import module`` counted as the module."""
    base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = base.split(".")
            module = ".".join(parts[: len(parts) - node.level + 1]) if node.level else node.module
            if node.level and node.module:
                module = f"{module}.{node.module}"
            found = [module, *(f"{module}.{a.name}" for a in node.names)]
        else:
            continue
        yield from (m for m in found if m in known and m != name)


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root), on.add(root)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w not in index or w in on), None)
            if nxt is not None and nxt not in index:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt), on.add(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
                continue
            if nxt is not None:
                low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_circle_inside_a_subpackage():
    """Within each subpackage (and the package root), the modules' imports (at the top or inside a function,
    relative or absolute) form no circle: each module can be read knowing only the ones
    below it. A package's __init__ (which re-exports its modules) is left out."""
    modules = dict(_modules())
    graph = {
        name: set(_internal_imports(name, path, modules))
        for name, path in modules.items()
        if path.name != "__init__.py"
    }
    same_package = {
        name: {m for m in deps if m in graph and m.rsplit(".", 1)[0] == name.rsplit(".", 1)[0]}
        for name, deps in graph.items()
    }
    assert _cycles(same_package) == []


def test_the_circle_finder_finds_circles():
    """The check above, on a made-up graph: a 3-circle, a 2-circle, a chain and a self-loop-free tail."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}, "g": {"a"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["e", "f"]]


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
        if name.startswith(("knnx.neighbors", "knnx.estimators", "knnx.lpo")):
            rebound = {g for n in ast.walk(tree) if isinstance(n, ast.Global) for g in n.names}
            assert rebound <= {"_blas_controller"}, name  # built once on first use; no result depends on it


def _string_comparisons(path, words):
    """(line, word) of every ``x == "word"`` / ``x != "word"`` in a module."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            for side in [node.left, *node.comparators]:
                if isinstance(side, ast.Constant) and side.value in words:
                    yield node.lineno, side.value


def test_cell_kinds_are_chosen_by_type_not_by_string():
    """Execution modes come from the cell-kind table (knnx/experiment/cells.py) and the
    typed spec objects: no module compares a value with "active" or "lpo"."""
    found = [
        f"{name}:{line} == {word!r}"
        for name, path in _modules()
        for line, word in _string_comparisons(path, {"active", "lpo"})
    ]
    assert found == []


# The one place a module keeps state between calls besides knnx.experiment.context.PROCESS:
# the BLAS thread-pool controller of the screened search, built once on first use (no
# result depends on it).
ALLOWED_GLOBAL_REBINDS = {"knnx.neighbors.screen": {"_blas_controller"}}


def test_no_module_rebinds_a_global():
    for name, path in _modules():
        rebound = {
            g for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Global) for g in n.names
        }
        assert rebound <= ALLOWED_GLOBAL_REBINDS.get(name, set()), name


def _mutable_globals():
    """``({(module, name): (id, repr)}, {id: object})``: every dict, list, set and
    bytearray held by a module global of knnx, and every ProcessContext and GraphStore."""
    import importlib
    import sys

    from knnx.experiment.context import ProcessContext
    from knnx.neighbors.graphs import GraphStore

    for name, _ in _modules():
        importlib.import_module(name)
    out, contexts = {}, {}
    for name in [m for m in sys.modules if m == "knnx" or m.startswith("knnx.")]:
        for attr, value in vars(sys.modules[name]).items():
            if isinstance(value, ProcessContext | GraphStore):
                contexts[id(value)] = value  # the context itself, or another name for it
            elif isinstance(value, dict | list | set | bytearray):
                out[(name, attr)] = (id(value), repr(value))
    return out, contexts


def test_a_run_changes_no_module_global_but_the_process_context(tmp_path):
    """Running a spec in this process (warm-up, shared graphs, a tuned cell, protocol
    lpo) leaves every mutable module global of knnx as it was: what a process keeps
    between cells is in the one context object, knnx.experiment.context.PROCESS."""
    from knnx import run_spec
    from knnx.experiment.context import PROCESS

    before, contexts = _mutable_globals()
    assert list(contexts.values()) == [PROCESS]
    base = {"seed": 0, "datasets": ["iris"], "metrics": ["error"]}
    run_spec(
        {
            **base,
            "name": "globals",
            "protocol": {"kind": "kfold", "folds": 2},
            "algorithms": [
                {"name": "knn", "params": {"k": [1, 5]}},
                {"name": "unn", "params": {"k": 5}},
                {"name": "knn", "id": "tuned", "params": {"k": [3, 7]}, "tune": {"cv": 2}},
            ],
        },
        out=tmp_path / "a",
        report=False,
    )
    run_spec(
        {**base, "name": "lpo", "protocol": {"kind": "lpo", "p": 3}, "algorithms": [{"name": "knn"}]},
        out=tmp_path / "b",
        report=False,
    )
    after, _ = _mutable_globals()
    changed = sorted(key for key in before if after.get(key) != before[key])
    assert changed == []


# Every module outside the numba kernels is held to the size rule.
_SIZED = sorted(p for p in PACKAGE.rglob("*.py") if "_kernels" not in p.parts)


def test_no_two_test_files_share_a_name():
    """pytest imports a test file by its name (rootdir, no packages): two of one name
    in two folders stop the second file from being collected (an import mismatch)."""
    tests = Path(__file__).resolve().parent
    names = Counter(p.name for p in tests.rglob("test_*.py"))
    assert [name for name, n in names.items() if n > 1] == []


def test_the_package_root_holds_a_dozen_modules_at_most():
    """The rest live in the subpackages that show the architecture (see docs/architecture.md)."""
    assert len(list(PACKAGE.glob("*.py"))) <= 12


@pytest.mark.parametrize("path", _SIZED, ids=[str(p.relative_to(PACKAGE.parent)) for p in _SIZED])
def test_modules_and_functions_stay_short(path):
    """At most 600 lines per module and 80 per function (decorators and docstring included)."""
    text = path.read_text()
    assert len(text.splitlines()) <= 600, f"{path.name}: {len(text.splitlines())} lines"
    long = [
        f"{node.name} ({node.end_lineno - min([node.lineno, *(d.lineno for d in node.decorator_list)]) + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - min([node.lineno, *(d.lineno for d in node.decorator_list)]) + 1 > 80
    ]
    assert long == [], f"{path.name}: {', '.join(long)}"


def test_every_cell_kind_defines_the_whole_interface():
    """Each kind of CELL_KINDS defines applies, tasks, hash_material and run (none is left
    abstract), and the last applies to every spec, so kind_of always finds one."""
    import inspect

    from knnx.experiment.cells import CELL_KINDS, ActiveLoop, CellKind, ExactLpo, FitPredict, kind_of
    from knnx.spec import validate_spec

    assert CELL_KINDS == (ActiveLoop, ExactLpo, FitPredict)
    assert inspect.isabstract(CellKind)
    assert [k for k in CELL_KINDS if inspect.isabstract(k)] == []
    base = {"name": "k", "datasets": ["iris"], "algorithms": [{"name": "knn", "params": {"k": 3}}]}
    assert kind_of(validate_spec({**base, "protocol": {"kind": "kfold", "folds": 2}})) is FitPredict
    assert kind_of(validate_spec({**base, "protocol": {"kind": "lpo", "p": 2}})) is ExactLpo
    active = {
        "kind": "active",
        "name": "a",
        "datasets": ["iris"],
        "start": 20,
        "rounds": 2,
        "m": 2,
        "repeats": 1,
    }
    assert kind_of(validate_spec(active)) is ActiveLoop
