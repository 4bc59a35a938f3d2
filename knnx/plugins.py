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

import ast
import difflib
import hashlib
import importlib
import json
import os
import re
import stat
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from knnx.errors import SpecError, describe, exit_guard, user_fault

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
        with exit_guard():  # os._exit at import: a failed import, not the end of knnx
            return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing != top or base_dir is None:
            if missing and (name == missing or name.startswith(missing + ".")):
                raise SpecError(_not_found(name, missing, base_dir)) from None
            raise SpecError(_failed(name, exc)) from None
    except BaseException as exc:  # the user's module raised (or exited) while importing: one line
        if not user_fault(exc):
            raise
        raise SpecError(_failed(name, exc)) from None
    folder = str(Path(base_dir).resolve())
    if folder not in sys.path:
        sys.path.append(folder)  # after the installed packages: a file beside the spec shadows none
    importlib.invalidate_caches()
    try:
        with exit_guard():  # os._exit at import: a failed import, not the end of knnx
            return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (name == missing or name.startswith(missing + ".")):
            raise SpecError(_not_found(name, missing, base_dir)) from None
        raise SpecError(_failed(name, exc)) from None
    except BaseException as exc:
        if not user_fault(exc):
            raise
        raise SpecError(_failed(name, exc)) from None


def _not_found(name, missing, base_dir):
    where = f" nor in {Path(base_dir).resolve()}" if base_dir is not None else ""  # '.' says nothing
    return f"cannot import '{name}': no module named '{missing}' on the Python path{where}"


def _failed(name, exc):
    return f"importing '{name}' failed: {describe(exc)}"


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


def built_in_clash(group, name):
    """The line refusing a built-in ``name`` that an installed package offers too in
    ``group`` (its entry point would never run: the built-in is found first), or None."""
    found = [ep for ep in metadata.entry_points(group=group) if ep.name == name]
    if not found:
        return None
    dist = getattr(found[0], "dist", None)
    owner = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
    return (
        f"'{name}' is a built-in name, and {owner} offers it too in entry-point group {group} (entry point "
        f"{found[0].value}), which would never run; the package must offer it under another name"
    )


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
        with exit_guard():
            return ep.load()
    except BaseException as exc:
        if not user_fault(exc):
            raise
        raise SpecError(
            f"'{name}' from {owner} (entry point {ep.value}) failed to load: {describe(exc)}"
        ) from None


def object_version(obj, path=None):
    """What identifies the code of a class or function outside knnx, for cell hashes
    (None for knnx's own code, which is in every cell hash already):

    - ``"dist==version"`` of the installed distribution that provides its top-level
      package; for a distribution installed in place (editable), also the digest of its
      package's files, since an edit changes no version;
    - else ``"sha256:..."``: the digest of the user code the class runs
      (:func:`user_code_digest`): its module and, transitively, the modules it imports
      from the folder its top-level module was imported from, as Python compiles them,
      so that an edited helper module or a replaced sourceless module reruns the
      cells, and a comment or a script nothing imports does not.

    ``path``: the import path the spec gave (``"pkg.mod:Name"``), whose module is
    covered too (a class may claim another ``__module__``)."""
    modules = [getattr(obj, "__module__", None) or ""]
    if path:
        modules.append(path.split(":")[0])
    if all(m.split(".")[0] == "knnx" for m in modules):
        return None  # knnx's own code is in every cell hash already
    parts = []
    for top in dict.fromkeys(m.split(".")[0] for m in modules if m.split(".")[0] != "knnx"):
        dist = _distribution(top)
        if dist is not None:
            name, version, editable = dist
            parts.append(f"{name}=={version}")
            if not editable:
                continue
        parts.append("sha256:" + user_code_digest(*(m for m in modules if m.split(".")[0] == top)))
    return " ".join(dict.fromkeys(parts))


def object_files(obj, path=None):
    """{path: digest} of the user code ``obj`` (and the module of ``path``) runs, as
    :func:`object_version` fingerprints it (:func:`user_code_files`); empty for knnx's
    own code and an installed (not editable) distribution, whose version stands for it."""
    modules = [getattr(obj, "__module__", None) or ""]
    if path:
        modules.append(path.split(":")[0])
    out = {}
    for top in dict.fromkeys(m.split(".")[0] for m in modules if m and m.split(".")[0] != "knnx"):
        dist = _distribution(top)
        if dist is None or dist[2]:
            out.update(user_code_files(*(m for m in modules if m.split(".")[0] == top)))
    return dict(sorted(out.items()))


_PACKAGES = {}


def _packages():
    """``importlib.metadata.packages_distributions()`` (top-level package -> names of the
    distributions providing it, in path order), each folder of the path read once while it
    is unchanged: a run that adds a spec's folder to the path, or a spec of 100
    ``estimator:`` entries, scans the environment's site-packages once (0.3 to 0.6 s a
    scan: the file lists of the distributions without ``top_level.txt``)."""
    merged, current = {}, set()
    for entry in sys.path:
        try:
            key = (entry, os.stat(entry or ".").st_mtime_ns)
        except OSError:
            continue
        if key not in _PACKAGES:
            _PACKAGES[key] = _folder_packages(entry or ".")
        current.add(key)
        for top, names in _PACKAGES[key].items():
            merged.setdefault(top, []).extend(names)
    for key in set(_PACKAGES) - current:  # folders gone from the path, or changed since
        del _PACKAGES[key]
    return merged


def _folder_packages(folder):
    """{top-level package: distribution names} of the distributions installed in one
    folder of the path, as ``packages_distributions`` finds them (``top_level.txt``,
    else the top-level names of the ``.py`` files a distribution lists)."""
    out = {}
    for dist in metadata.distributions(path=[folder]):
        declared = (dist.read_text("top_level.txt") or "").split()
        inferred = {
            f.parts[0] if len(f.parts) > 1 else f.with_suffix("").name
            for f in (dist.files or ())
            if f.suffix == ".py"
        }
        for top in declared or sorted(inferred):
            out.setdefault(top, []).append(dist.metadata["Name"])
    return out


def _distribution(top):
    """(name, version, editable) of the installed distribution providing the top-level
    package ``top``, or None."""
    for dist in _packages().get(top, []):
        try:
            version = metadata.version(dist)
            found = metadata.distribution(dist)
            direct = found.read_text("direct_url.json")
        except metadata.PackageNotFoundError:
            continue
        if not _installed(found):
            continue  # metadata left in a source tree (mylab.egg-info beside mylab/): user code
        try:
            editable = bool(json.loads(direct or "{}").get("dir_info", {}).get("editable"))
        except (ValueError, AttributeError):
            editable = False
        return dist, version, editable
    return None


def _installed(dist):
    """Whether ``dist`` was installed by an installer: its metadata lists the files it
    installed (``RECORD``: pip, ``--target`` folders included), or lies in a
    site-packages or dist-packages folder or the interpreter's library folders.
    ``mylab.egg-info`` left in a source tree on ``python_path`` by ``setup.py egg_info``
    names a version that says nothing of the code beside it."""
    try:
        if dist.read_text("RECORD") is not None:
            return True
    except (OSError, ValueError):
        pass
    try:
        folder = Path(dist.locate_file("")).resolve()
    except (OSError, TypeError, ValueError):
        return False
    if folder.name in ("site-packages", "dist-packages"):
        return True
    paths = sysconfig.get_paths()
    return any(folder == Path(paths[k]).resolve() for k in ("purelib", "platlib") if k in paths)


# Files of user code hashed for a cell key: Python sources, sourceless modules and
# extension modules; at most this many under one folder (a folder holding more is
# not a method's code: one line asks to move the code into a folder of its own).
CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
SKIPPED_FOLDERS = ("__pycache__", "site-packages", "dist-packages", "node_modules")
MAX_CODE_FILES = 10_000
# The largest code file fingerprinted (a generated module can be large; a link to
# /dev/zero or a pipe named *.py is no code and would never end).
MAX_CODE_BYTES = 50_000_000


def user_code_digest(*modules):
    """sha256 (16 hex digits) of the user code ``modules`` (of one top-level package)
    run: their names and :func:`user_code_files`, each file's path and digest (a moved
    file counts as a change)."""
    digest = hashlib.sha256(" ".join(dict.fromkeys(modules)).encode())
    for rel, code in user_code_files(*modules).items():
        digest.update(len(rel).to_bytes(4, "little") + rel.encode() + code.encode())
    return digest.hexdigest()[:16]


def user_code_files(*modules):
    """{path: digest} of the user code ``modules`` (of one top-level package) run when
    imported, transitively: the
    file of the module, of each package on its way (their ``__init__``), and of every
    module it imports (``import a.b``, ``from .x import y``, ``from p import m``,
    relative or absolute) that lies in the folder its top-level module or package was
    imported from (the spec's folder, a ``python_path`` folder, an editable package's
    source), read from the source, not run. A Python source enters as what Python
    compiles (its syntax tree without positions: an edit of comments or layout alone
    changes nothing), a sourceless ``.pyc`` or an extension module by its bytes; a
    file the module does not import (an analysis script beside it) not at all. A
    module imported from a zip archive (zipimport) enters as the archive's bytes; one
    without a file (built in, or made in memory) as nothing. An import whose name is
    computed at run time (``importlib.import_module(name)``) is not seen. SpecError
    when more than :data:`MAX_CODE_FILES` files are reached, or one is not a regular
    file of at most :data:`MAX_CODE_BYTES`."""
    module = modules[0]
    top = sys.modules.get(module.split(".")[0])
    places = list(getattr(top, "__path__", None) or [])
    if not places and getattr(top, "__file__", None):
        places = [top.__file__]
    out = {}
    for folder in sorted({Path(os.path.abspath(p)).parent for p in places}):  # as imported: links kept
        archive = _archive_of(folder)
        if archive is not None:  # imported from a zip file (zipimport): the archive is the code
            _check_code_file(archive, archive.stat(), module)
            out[archive.name] = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
            continue
        for rel, material in _imported_code(modules, folder):
            out[rel] = hashlib.sha256(material).hexdigest()[:16]
    return dict(sorted(out.items()))


def _imported_code(modules, root):
    """(path relative to ``root``, material) of each code file under ``root`` that
    importing ``modules`` runs (see :func:`user_code_files`)."""
    module = modules[0]
    todo, seen, files = list(modules), set(), {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # the packages on the way run their __init__
            path = _module_file(root, parts[:i])
            if path is None:
                continue
            rel = path.relative_to(root).as_posix()
            if rel in files:
                continue
            if len(files) >= MAX_CODE_FILES:
                raise SpecError(
                    f"the code of '{module}' cannot be fingerprinted: it imports more than {MAX_CODE_FILES} "
                    f"files of {root}"
                )
            _check_code_file(path, path.stat(), module)
            files[rel], imported = _compiled(path, ".".join(parts[:i]))
            todo += imported
    return sorted(files.items())


def _module_file(root, parts):
    """The file under ``root`` that holds the module ``parts`` (a source, a package's
    ``__init__``, a sourceless ``.pyc`` or an extension module), or None."""
    base = Path(root, *parts)
    for path in (base.with_name(parts[-1] + ".py"), base / "__init__.py", base.with_name(parts[-1] + ".pyc")):
        if path.exists():  # a pipe or a device too: refused by the caller, never read
            return path
    extensions = sorted(base.parent.glob(parts[-1] + ".*.so")) + sorted(
        base.parent.glob(parts[-1] + ".*.pyd")
    )
    extensions += [
        p for p in (base.with_name(parts[-1] + ".so"), base.with_name(parts[-1] + ".pyd")) if p.is_file()
    ]
    return extensions[0] if extensions else None


def _compiled(path, name):
    """(material, names imported) of the code file ``path`` of module ``name``: a
    source's syntax tree without positions and the module names its imports may reach;
    any other file's bytes and no names (a source that does not parse: its bytes)."""
    data = path.read_bytes()
    if path.suffix != ".py":
        return data, []
    try:
        tree = ast.parse(data, filename=str(path))
    except (SyntaxError, ValueError):
        return data, []
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            base = ".".join([*(p for p in base if p), *([node.module] if node.module else [])])
            if base:
                names.append(base)
            names += [f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*"]
    return ast.dump(tree, include_attributes=False).encode(), names


def _archive_of(folder):
    """The zip archive a module's folder lies in (``code.zip/pkg``: ``code.zip``), or
    None for a folder on disk."""
    place = Path(folder)
    while not place.exists() and place != place.parent:
        place = place.parent
    return place if place.is_file() else None


def _check_code_file(file, info, module):
    """SpecError unless ``file`` (its ``os.stat`` result ``info``) is a regular file of at
    most :data:`MAX_CODE_BYTES`: a pipe or a device would never end being read."""
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CODE_BYTES:
        what = "not a regular file" if not stat.S_ISREG(info.st_mode) else f"{info.st_size} bytes"
        raise SpecError(
            f"the code of '{module}' cannot be fingerprinted: {file} is {what}; a code file is a regular "
            f"file of at most {MAX_CODE_BYTES} bytes (reading a pipe or a device would not end)"
        )
