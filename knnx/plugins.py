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
    where = f" nor in {base_dir}" if base_dir is not None else ""
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
    - else ``"sha256:..."``: the digest of every file of user code the class can run
      (:func:`user_code_digest`): the Python files of the folder its top-level module
      was imported from and below, so that an edited helper module or a replaced
      sourceless module reruns the cells.

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
        parts.append("sha256:" + user_code_digest(top))
    return " ".join(dict.fromkeys(parts))


_PACKAGES = {}


def _packages():
    """``importlib.metadata.packages_distributions()``, read again only when the path or
    a folder on it changed (a spec of 100 ``estimator:`` entries read it 100 times, 0.3
    to 0.6 s each)."""
    key = []
    for entry in sys.path:
        try:
            key.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            key.append((entry, None))
    key = tuple(key)
    if key not in _PACKAGES:
        _PACKAGES.clear()
        _PACKAGES[key] = metadata.packages_distributions()
    return _PACKAGES[key]


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


def user_code_digest(module):
    """sha256 (16 hex digits) of the user code a module can run: every Python file of
    the folder its top-level module or package was imported from (the spec's folder, a
    ``python_path`` folder, any folder on the path) and of the folders below it, so
    that the module's package and the helper modules beside it are covered. Files are
    Python sources, sourceless ``.pyc`` and extension modules (:data:`CODE_SUFFIXES`);
    caches (``__pycache__``), hidden folders, virtual environments and ``site-packages``
    are skipped; links to folders are followed (each folder once). Each file enters
    with its path relative to the folder, so a moved file counts as a change. A module
    that has no file (built in, or made in memory) enters by its name only; one imported
    from a zip archive (zipimport) enters with the archive's bytes. SpecError when the
    folder holds more than :data:`MAX_CODE_FILES` such files."""
    top = sys.modules.get(module.split(".")[0])
    digest = hashlib.sha256(module.encode())
    places = list(getattr(top, "__path__", None) or [])
    if not places and getattr(top, "__file__", None):
        places = [top.__file__]
    for folder in sorted({Path(os.path.abspath(p)).parent for p in places}):  # as imported: links kept
        archive = _archive_of(folder)
        if archive is not None:  # imported from a zip file (zipimport): the archive is the code
            _check_code_file(archive, archive.stat(), module)
            data = archive.read_bytes()
            digest.update(b"archive" + len(data).to_bytes(8, "little") + data)
            continue
        for rel, data in _code_files(folder, module):
            digest.update(len(rel).to_bytes(4, "little") + rel.encode())
            digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:16]


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


def _code_files(folder, module):
    """(relative path, bytes) of each code file under ``folder``, sorted by path."""
    found, seen = [], {os.path.realpath(folder)}
    for root, dirs, files in os.walk(folder, followlinks=True):  # a linked package is code too
        here = Path(root)
        kept = []
        for d in sorted(dirs):
            real = os.path.realpath(here / d)
            if (
                d.startswith(".")
                or d in SKIPPED_FOLDERS
                or (here / d / "pyvenv.cfg").exists()
                or real in seen
            ):
                continue  # not code, or a folder met before through a link (a loop)
            seen.add(real)
            kept.append(d)
        dirs[:] = kept
        found += [here / f for f in files if f.endswith(CODE_SUFFIXES)]
        if len(found) > MAX_CODE_FILES:
            raise SpecError(
                f"the code of '{module}' cannot be fingerprinted: {folder} holds more than {MAX_CODE_FILES} "
                "Python files; move the method's code into a folder of its own and name it in python_path"
            )
    out = []
    for file in sorted(found):
        try:
            info = file.stat()  # through a link: what Python would read
        except OSError:
            continue  # vanished or a dangling link: not code the cell can run
        _check_code_file(file, info, module)
        try:
            out.append((file.relative_to(folder).as_posix(), file.read_bytes()))
        except OSError:
            continue  # unreadable: not code the cell can run
    return out
