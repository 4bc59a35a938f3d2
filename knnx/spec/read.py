"""Reading a spec file: a hardened YAML loader and :func:`read_spec`.

Hostile input is refused before it can cost time or memory (each with one line):
a spec file larger than :data:`MAX_SPEC_BYTES`; YAML nested deeper than
:data:`MAX_YAML_DEPTH` (the one limit of :data:`knnx.limits.MAX_DEPTH`, which a spec
given as a Python dict and each ``--set`` override at its place obey too), holding a
string longer than :data:`MAX_YAML_STRING`, or
holding more than :data:`MAX_YAML_VALUES` values once its aliases are expanded
(anchors and aliases, ``<<`` merges included, are fine below that; a "billion
laughs" alias bomb is refused from the composed node graph, without expanding it);
duplicate or non-string mapping keys; control characters in strings; and YAML types
with no JSON counterpart (dates, binary data, sets, ordered maps, pairs). The grid's
size is limited too (:data:`knnx.spec.schema.MAX_CELLS`), before any dataset loads.
"""

import re
from pathlib import Path

import yaml

from knnx._paths import path_problem
from knnx._text import describe_control, find_control, find_surrogate
from knnx.errors import SpecError
from knnx.limits import MAX_DEPTH, depth_problem, too_deep
from knnx.spec.messages import short_repr

# Guards against hostile or accidental explosions (see the module docstring).
MAX_SPEC_BYTES = 1_000_000
MAX_YAML_DEPTH = MAX_DEPTH  # one limit for spec files, --set overrides, dicts and params JSON
MAX_YAML_STRING = 4096
MAX_YAML_VALUES = 10_000


class _SpecLoader(yaml.SafeLoader):
    """SafeLoader with the limits of a hand-written spec (see the module docstring).

    Refuses, with a mark pointing at the place: a key given twice in one mapping
    (plain YAML keeps the last), a key that is not a string (``3:``, ``null:``,
    ``yes:``, ``[a, b]:``), nesting deeper than MAX_YAML_DEPTH (checked while
    composing, before Python's recursion limit is near), a scalar longer than
    MAX_YAML_STRING, and more than MAX_YAML_VALUES values once aliases are
    expanded (counted on the composed node graph, where an alias is a shared node,
    so a billion-laughs document is measured in time linear in its size).
    """

    def __init__(self, stream, levels=0):
        super().__init__(stream)
        self._depth = levels  # the levels above the document (a --set override's path)
        self._values = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_YAML_STRING:
            raise _limit_error(f"a value of {len(event.value)} characters; at most {MAX_YAML_STRING}", event)
        if not isinstance(event, yaml.AliasEvent):
            self._values += 1
            if self._values > MAX_YAML_VALUES:  # stop reading early; aliases are counted after composing
                raise _limit_error(f"more than {MAX_YAML_VALUES} values; a spec must stay small", event)
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _limit_error(depth_problem(), event)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<: *defaults" merges, its keys may be overridden
            key = self.construct_object(key_node, deep=deep)
            mark = key_node.start_mark
            if not isinstance(key, str):
                if isinstance(key_node, yaml.ScalarNode):
                    kind = "null" if key is None else "a boolean" if isinstance(key, bool) else "a number"
                    problem = (
                        f"key {short_repr(key_node.value, 40)} is read as {kind}; keys are names (quote it)"
                    )
                else:
                    problem = "a key is a list or a mapping; keys are names"
                raise yaml.constructor.ConstructorError(None, None, problem, mark)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}; a key appears once per mapping", mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_scalar(self, node):
        value = super().construct_scalar(node)
        if isinstance(value, str) and find_control(value) is not None:
            # YAML escapes ("a\rb") get past the reader's rule on raw control characters;
            # a spec string becomes a CSV field or a path, where they break lines.
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{short_repr(value, 40)} holds a {describe_control(value)}; spec values hold none",
                node.start_mark,
            )
        if isinstance(value, str) and find_surrogate(value) is not None:
            # "\ud800" escapes a lone surrogate, which no UTF-8 file can hold.
            i = find_surrogate(value)
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{short_repr(value, 40)} holds a lone surrogate U+{ord(value[i]):04X} at "
                f"position {i + 1}, which is no character; spec values are UTF-8 text",
                node.start_mark,
            )
        return value

    def construct_yaml_int(self, node):
        value = super().construct_yaml_int(node)
        _refuse_yaml11_number(node, value)
        return value

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        _refuse_yaml11_number(node, value)
        return value

    def construct_yaml_str(self, node):
        value = super().construct_yaml_str(node)
        if node.style is None and (_NOT_OCTAL.fullmatch(value) or _OCTAL_12.fullmatch(value)):
            number = int(value.replace("0o", "").replace("0O", ""), 8 if "o" in value.lower() else 10)
            why = (
                "YAML 1.1 writes octal as 010"
                if "o" in value.lower()
                else "a leading 0 means octal, and 8 or 9 is no octal digit"
            )
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{short_repr(value, 40)} is read as text, not a number ({why}); write {number}, or quote it "
                "to make it a string",
                node.start_mark,
            )
        if node.style is None and _E_NOTATION.fullmatch(value):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{short_repr(value, 40)} is read as text, not a number (YAML 1.1: a float needs a dot and a "
                f"signed exponent); "
                f"write {_with_dot(value)}, or quote it to make it a string",
                node.start_mark,
            )
        return value

    def _refuse_tag(self, node):
        what = _REFUSED_TAGS[node.tag.rsplit(":", 1)[1]]
        if isinstance(node, yaml.ScalarNode):
            problem = f"{short_repr(node.value, 40)} is read as {what}; quote it to make it a string"
        else:
            problem = f"a YAML !!{node.tag.rsplit(':', 1)[1]} is not a spec value; use a list or a mapping"
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


# Numbers YAML 1.1 (PyYAML) reads otherwise than YAML 1.2 and most readers would:
# 010 is 8 (octal), 1_000 and 0x_1F drop their '_', 1:30 is 90 (base 60), and 1e3 or
# 1.5e3 (a float needs a dot and a signed exponent: 1.0e+3), 08 and 0o10 are text.
_E_NOTATION = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+")
_OCTAL = re.compile(r"[-+]?0[0-9_]+")
_NOT_OCTAL = re.compile(r"[-+]?0[0-9]*[89][0-9]*")  # 08, 09, 019: text in YAML 1.1, numbers in 1.2
_OCTAL_12 = re.compile(r"[-+]?0[oO][0-7]+")  # YAML 1.2's octal: text in YAML 1.1


def _refuse_yaml11_number(node, value):
    """ConstructorError for a plain number YAML 1.1 reads in its own way (see above)."""
    text = node.value
    if node.style is not None:
        return
    radix = text.lower().lstrip("+-").startswith(("0x", "0b"))
    reason = (
        "'_' is dropped"
        if "_" in text
        else "':' makes it base 60"
        if ":" in text
        else "a leading 0 makes it octal"
        if not radix and _OCTAL.fullmatch(text)
        else None
    )
    if reason is not None:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{short_repr(text, 40)} is read as {value!r} (YAML 1.1: {reason}); write {value!r}, or quote it "
            "to make it a string",
            node.start_mark,
        )


def _with_dot(text):
    """``1e3`` as YAML 1.1 reads a float: ``1.0e+3``."""
    mantissa, exponent = re.split("[eE]", text, maxsplit=1)
    mantissa = mantissa if "." in mantissa else mantissa + ".0"
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"


_SpecLoader.add_constructor("tag:yaml.org,2002:int", _SpecLoader.construct_yaml_int)
_SpecLoader.add_constructor("tag:yaml.org,2002:float", _SpecLoader.construct_yaml_float)
_SpecLoader.add_constructor("tag:yaml.org,2002:str", _SpecLoader.construct_yaml_str)

# YAML types with no JSON counterpart: a spec holds strings, numbers, booleans, null, lists and mappings.
_REFUSED_TAGS = {
    "timestamp": "a date",
    "binary": "binary data",
    "set": "a set",
    "omap": "an ordered map",
    "pairs": "pairs",
}
for _tag in _REFUSED_TAGS:
    _SpecLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _SpecLoader._refuse_tag)


class LimitError(yaml.composer.ComposerError):
    """YAML refused for one of the limits of a spec (not a syntax error): too deep, a
    string too long, too many values."""


def _limit_error(problem, event):
    return LimitError(None, None, problem, event.start_mark)


def _expanded_size(node, memo):
    """Number of values ``node`` stands for with every alias expanded (memoised per node);
    LimitError for an alias inside the value it names (``&a [*a]``: no finite value)."""
    _VISITING = -1
    size = memo.get(id(node))
    if size == _VISITING:
        raise LimitError(
            None, None, "an alias inside the value it names (a value that holds itself)", node.start_mark
        )
    if size is None:
        memo[id(node)] = _VISITING
        if isinstance(node, yaml.SequenceNode):
            size = 1 + sum(_expanded_size(child, memo) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        else:
            size = 1
        if size > MAX_YAML_VALUES:
            raise LimitError(
                None,
                None,
                f"more than {MAX_YAML_VALUES} values once aliases are expanded (an alias bomb?); a spec "
                "must stay small",
                node.start_mark,
            )
        memo[id(node)] = size
    return size


def load_yaml(text, levels=0):
    """The value of the YAML document ``text`` under the limits of a spec (yaml.YAMLError
    otherwise, a :class:`LimitError` for a limit); ``levels``: the levels of the spec
    above the document (the depth limit counts them)."""
    # YAML reads these as line breaks where a reader of the file sees none: a name
    # written with one would change under the reader's eyes ('x<NEL>' read as 'x ').
    hidden = next((i for i, ch in enumerate(text) if ch in "\x85\u2028\u2029"), None)
    if hidden is not None:
        raise yaml.reader.ReaderError("<spec>", hidden, ord(text[hidden]), "utf-8", "a hidden line break")
    loader = _SpecLoader(text, levels)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {})
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_spec(source):
    """Read a spec from a YAML path or a dict. Returns (data, source label, base folder).
    A dict nested deeper than :data:`MAX_YAML_DEPTH` is refused as a file would be."""
    if isinstance(source, dict):
        path = too_deep(source)
        if path is not None:
            raise SpecError(f"<spec>: {path[0]}: {depth_problem()}")
        return source, "<spec>", Path.cwd()
    path = Path(source)
    text = _read_text(path)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: {yaml_problem(exc, text)}") from None
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {_YAML_KIND.get(type(data), type(data).__name__)}"
        raise SpecError(
            f"{path}: expected a mapping of spec keys (name, datasets, protocol, algorithms, ...), "
            f"but the file is {what}"
        )
    return data, str(path), path.parent


def _read_text(path):
    """The text of a spec file: a regular file of at most MAX_SPEC_BYTES bytes of UTF-8."""
    problem = path_problem(path)
    if problem == "a folder":
        raise SpecError(f"{path}: is a folder; expected a spec file (YAML)")
    if problem == "file not found":
        raise SpecError(f"{path}: spec file not found")
    if problem == "not a regular file (a device or a pipe)":
        raise SpecError(f"{path}: not a regular file; expected a spec file (YAML)")
    if problem is not None:
        raise SpecError(f"{path}: {problem}; expected a spec file (YAML)")
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(f"{path}: {size} bytes, more than the limit of {MAX_SPEC_BYTES} for a spec file")
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def yaml_problem(exc, text):
    """``line L, column C: invalid YAML (problem)`` for a yaml.YAMLError raised on ``text``."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if isinstance(exc, yaml.reader.ReaderError):  # a control character: no mark, a position
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        where = f"line {line}, column {column}: "
        problem = f"control character #x{exc.character:04x} is not allowed"
    return f"{where}invalid YAML ({problem})"


_YAML_KIND = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


class _SpecDumper(yaml.SafeDumper):
    """SafeDumper whose texts read back as the same texts through :func:`load_yaml`: a
    text such as ``1e3`` (plain in YAML 1.1, refused by the spec loader) is quoted."""


def _represent_text(dumper, text):
    style = "'" if any(p.fullmatch(text) for p in (_E_NOTATION, _NOT_OCTAL, _OCTAL_12)) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_SpecDumper.add_representer(str, _represent_text)


def dump_spec(value):
    """The YAML text of a spec's value (``spec.yaml`` beside the results), keys in their
    order, which :func:`load_yaml` reads back as ``value``."""
    return yaml.dump(value, Dumper=_SpecDumper, sort_keys=False)
