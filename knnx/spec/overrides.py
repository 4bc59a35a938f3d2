"""``--set PATH=VALUE`` overrides: parsed into :class:`Override` objects, then applied.

As Hydra does with its command-line overrides, a text is first parsed
(:func:`parse_override`: the path into its keys and list indices, the value read as
YAML under the limits of a spec file), and the parsed objects are then applied to a
copy of the spec's mapping (:func:`apply_overrides`). Every problem is one SpecError
line naming the override as it was written (``--set 'TEXT': ...``).

The spec's nesting limit (:data:`knnx.spec.read.MAX_YAML_DEPTH`) counts from the spec's
top level: an override's value sits as many levels down as its path is long, so
``algorithms[0].params.k`` leaves 28 levels to the value, exactly as in a file.
"""

import copy
import re
from dataclasses import dataclass
from typing import Any

import yaml

from knnx.errors import SpecError
from knnx.limits import depth_problem, too_deep
from knnx.spec.read import LimitError, load_yaml

# PATH of an override: keys joined by dots, list indices in brackets (or as a dotted number).
_OVERRIDE_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\[\d+\]|\.[A-Za-z_][\w-]*|\.\d+)*", re.ASCII)
_PATH_PART = re.compile(r"\[(\d+)\]|\.?([A-Za-z_][\w-]*|\d+)", re.ASCII)


@dataclass(frozen=True)
class Override:
    """One parsed ``--set PATH=VALUE``.

    path : the keys (str) and list indices (int) from the spec's top level, e.g.
        ``("algorithms", 0, "params", "k")`` for ``algorithms[0].params.k`` or
        ``algorithms.0.params.k``.
    value : VALUE read as YAML (None for an empty value).
    text : the override as written (for messages).
    """

    path: tuple[str | int, ...]
    value: Any
    text: str

    @property
    def where(self):
        """How a message names the override: ``--set 'TEXT'``."""
        return f"--set {self.text!r}"


def parse_override(text):
    """The :class:`Override` of ``"PATH=VALUE"``: PATH is dotted keys with list indices
    (``protocol.folds``, ``algorithms[0].params.k`` or ``algorithms.0.params.k``),
    VALUE is read as YAML (``10``, ``[1, 3, 5]``, ``{kind: 5x2}``, ``cpw``) under the
    same limits as a spec file, its nesting counted from the spec's top level (the
    path's levels, then the value's). SpecError, one line naming the override, otherwise."""
    where = f"--set {text!r}"
    if not isinstance(text, str) or "=" not in text:
        raise SpecError(f"{where}: expected PATH=VALUE, e.g. protocol.folds=10")
    path, raw = text.split("=", 1)
    path = path.strip()
    if not _OVERRIDE_PATH.fullmatch(path):
        raise SpecError(
            f"{where}: '{path}' is not a path; expected keys joined by dots and list indices, e.g. "
            "algorithms[0].params.k"
        )
    parts = tuple(int(i) if i else int(k) if k.isdigit() else k for i, k in _PATH_PART.findall(path))
    try:
        value = load_yaml(raw, levels=len(parts)) if raw.strip() else None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if isinstance(exc, LimitError):  # valid YAML, beyond a spec's limits
            raise SpecError(f"{where}: {problem}") from None
        raise SpecError(f"{where}: the value is not valid YAML ({problem})") from None
    return Override(parts, value, text)


def apply_overrides(data, overrides):
    """A copy of the spec mapping ``data`` with each override of ``overrides`` applied in
    order: an :class:`Override` or a ``"PATH=VALUE"`` text (parsed by
    :func:`parse_override` when its turn comes, so the first problem in order is the
    one reported). Keys the spec lacks are created along the path, as writing them in
    the file would (the spec's checks then refuse a key that is no field, naming the
    override: :func:`blame_overrides`); a list index must exist and each step must be
    a mapping or a list; a path set twice is refused (the last would win silently), and
    so is a path that holds one an earlier override set (it would drop that value; the
    other order refines it).
    SpecError, one line naming the override, otherwise."""
    if not overrides:
        return data
    data = copy.deepcopy(data)
    seen = {}
    for override in overrides:
        if not isinstance(override, Override):
            override = parse_override(override)
        first = seen.setdefault(override.path, override)
        if first is not override:  # the last would win silently: one of the two is a mistake
            raise SpecError(
                f"{override.where}: {path_text(override.path)} is set twice (also by --set {first.text!r}); "
                "set each path once"
            )
        inner = next(
            (
                o
                for path, o in seen.items()
                if path[: len(override.path)] == override.path and o is not override
            ),
            None,
        )
        if inner is not None:  # it would replace an earlier override's value without a word
            raise SpecError(
                f"{override.where}: sets {path_text(override.path)} whole, which would drop --set {inner.text!r} "
                f"given before it; set {path_text(override.path)} first, then the paths inside it"
            )
        _apply(data, override)
    return data


def _check_depth(override):
    """SpecError if ``override``'s value, at its path, nests deeper than a spec may."""
    if too_deep(override.value, levels=len(override.path)) is not None:
        raise SpecError(f"{override.where}: {depth_problem()}")


def _apply(data, override):
    """Set ``override.value`` at ``override.path`` in ``data`` (changed in place)."""
    _check_depth(override)  # an Override made in Python, not by parse_override, too
    parts, where = override.path, override.where
    node = data
    for depth, part in enumerate(parts):
        shown = path_text(parts[: depth + 1])
        if isinstance(part, int):
            if not isinstance(node, list):
                raise SpecError(f"{where}: {path_text(parts[:depth]) or 'the spec'} is not a list")
            if part >= len(node):
                raise SpecError(f"{where}: {shown}: no such item; the list has {len(node)}")
        elif not isinstance(node, dict):
            raise SpecError(f"{where}: {path_text(parts[:depth])} is not a mapping")
        if depth == len(parts) - 1:
            node[part] = override.value
        else:
            if isinstance(node, dict) and part not in node:
                node[part] = {}
            node = node[part]


def blame_overrides(exc, label, overrides):
    """``exc`` (a SpecError of the spec ``label``, lines ``LABEL: PATH: message``) with
    each line whose PATH is at, below or above an override's path naming that override
    (the last such in order): ``LABEL: --set 'TEXT': PATH: message`` — the value, or
    the key it created, came from the command line, not from the file."""
    if not overrides:
        return exc
    parsed = [o if isinstance(o, Override) else parse_override(o) for o in overrides]
    paths = [(path_text(o.path), o.where) for o in reversed(parsed)]
    prefix, lines = f"{label}: ", []
    for line in exc.lines():
        rest = line[len(prefix) :] if line.startswith(prefix) else ""
        where = next((w for p, w in paths if rest and _related(rest.split(": ", 1)[0], p)), None)
        lines.append(line if where is None else f"{prefix}{where}: {rest}")
    return exc if lines == exc.lines() else SpecError.from_lines(lines)


def _related(one, other):
    """Whether the written paths ``one`` and ``other`` are equal or one lies below the other."""
    short, long = sorted((one, other), key=len)
    return long == short or (long.startswith(short) and long[len(short)] in ".[")


def path_text(parts):
    """The written form of a path: ``("algorithms", 0, "params")`` -> ``algorithms[0].params``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out
