"""Code that is not knnx's: classes and functions named by import path, plugin entry
points, and the versions that identify them.

A spec may name a classifier or a dataset loader by import path,
``"package.module:Name"`` (``Name`` may be dotted: ``"pkg.mod:Outer.Inner"``). It is
imported as Python would import it; if its top-level package is not importable, the
spec's folder is tried (a ``mylab/`` package or ``mylab.py`` beside the spec), and
stays at the end of ``sys.path`` for the rest of the process (after the installed
packages, so a file beside a spec never shadows one).

Installed packages extend knnx through the entry-point groups ``knnx.algorithms``
(name -> classifier class) and ``knnx.datasets`` (name -> loader function): in a
``pyproject.toml``::

    [project.entry-points."knnx.algorithms"]
    mynn = "mylab.methods:MyNN"

An entry point is loaded only when a spec names it, so a broken plugin breaks no other
spec. :func:`knnx.register_algorithm` and :func:`knnx.register_dataset` do the same in
Python, for the running process (workers of ``--jobs N`` receive registered classes by
reference, so they must be importable; a loader is looked up again by name).
"""

import difflib
import hashlib
import importlib
import inspect
import re
import sys
from importlib import metadata
from pathlib import Path

from knnx.errors import SpecError

IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII)

ALGORITHM_GROUP = "knnx.algorithms"
DATASET_GROUP = "knnx.datasets"


def import_object(path, base_dir=None):
    """The object at ``"package.module:Name"``; SpecError (one line, without the
    caller's location) saying what is wrong: the form, the module, the name."""
    if not isinstance(path, str) or not IMPORT_PATH.fullmatch(path):
        raise SpecError(f"{path!r} is not an import path; expected 'package.module:Name'")
    module_name, qualname = path.split(":")
    module = _import_module(module_name, base_dir)
    obj = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in vars(obj) if not n.startswith("_"))
            close = sorted(difflib.get_close_matches(part, names, n=3, cutoff=0.6))
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise SpecError(f"module '{module_name}' has no '{qualname}'{hint}")
        obj = getattr(obj, part)
    return obj


def _import_module(name, base_dir):
    top = name.split(".")[0]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing != top or base_dir is None:
            if missing and (name == missing or name.startswith(missing + ".")):
                raise SpecError(_not_found(name, missing, base_dir)) from None
            raise SpecError(_failed(name, exc)) from None
    except Exception as exc:  # the user's module raised while importing: say so, in one line
        raise SpecError(_failed(name, exc)) from None
    folder = str(Path(base_dir).resolve())
    if folder not in sys.path:
        sys.path.append(folder)  # after the installed packages: a file beside the spec shadows none
    importlib.invalidate_caches()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (name == missing or name.startswith(missing + ".")):
            raise SpecError(_not_found(name, missing, base_dir)) from None
        raise SpecError(_failed(name, exc)) from None
    except Exception as exc:
        raise SpecError(_failed(name, exc)) from None


def _not_found(name, missing, base_dir):
    where = f" nor in {base_dir}" if base_dir is not None else ""
    return f"cannot import '{name}': no module named '{missing}' on the Python path{where}"


def _failed(name, exc):
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    return f"importing '{name}' failed: {type(exc).__name__}: {text}"


def add_import_dirs(folders, refresh=False):
    """Append ``folders`` (a spec's ``python_path``, absolute) to ``sys.path`` if absent:
    searched after the installed packages, so they never shadow one. The import system's
    caches of folder listings are cleared when a folder is added, or with ``refresh``
    (validation: files may have been written since the last import); a cell's call
    costs nothing once its folders are on the path (clearing them costs ~0.5 ms)."""
    added = False
    for folder in folders:
        if folder not in sys.path:
            sys.path.append(folder)
            added = True
    if added or refresh:
        importlib.invalidate_caches()


def entry_point_names(group):
    """Names offered by installed packages in an entry-point group (none loaded)."""
    return sorted({ep.name for ep in metadata.entry_points(group=group)})


def load_entry_point(group, name):
    """The object an installed package offers as ``name`` in ``group``, or None if no
    package offers it; SpecError (one line naming the package) if loading it fails."""
    found = [ep for ep in metadata.entry_points(group=group) if ep.name == name]
    if not found:
        return None
    ep = found[0]
    dist = getattr(ep, "dist", None)
    owner = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
    if len({e.value for e in found}) > 1:
        raise SpecError(
            f"'{name}' is offered twice in entry-point group {group}; uninstall one of the packages"
        )
    try:
        return ep.load()
    except Exception as exc:
        text = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SpecError(
            f"'{name}' from {owner} (entry point {ep.value}) failed to load: {type(exc).__name__}: {text}"
        ) from None


def object_version(obj):
    """What identifies the code of a class or function outside knnx, for cell hashes:
    ``"dist==version"`` of the installed distribution that provides its top-level
    package, else ``"sha256:..."`` of its source file (a module beside the spec: an edit
    reruns its cells), else None."""
    module = getattr(obj, "__module__", None) or ""
    top = module.split(".")[0]
    if top == "knnx":
        return None  # knnx's own code is in every cell hash already
    dists = metadata.packages_distributions().get(top, [])
    for dist in dists:
        try:
            return f"{dist}=={metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    try:
        source = inspect.getsourcefile(obj)
    except TypeError:
        source = None
    if source and Path(source).is_file():
        return "sha256:" + hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
    return None
