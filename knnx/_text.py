"""Text that knnx writes: control characters (below), values cut short for a message
(:func:`shorten`) and the canonical JSON of a value (:func:`canonical_json`).

Control characters in text that becomes a CSV field, a path or a terminal line.

A control character is any of Unicode category Cc (``\\x00``-``\\x1f``, ``\\x7f``-``\\x9f``:
tab, line feed and carriage return among them) or a line or paragraph separator
(U+2028, U+2029). Python's ``str.splitlines`` breaks lines at several of them, a CSV
reader at a bare ``\\r``, a terminal obeys escape sequences: knnx refuses them in
names and paths (spec values, dataset ids, CSV file names, ``--out``) and escapes them
in free text it writes (error messages).
"""

import json
import numbers
import re

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def find_control(text):
    """Index of the first control character of ``text``, or None."""
    match = _CONTROL.search(text)
    return None if match is None else match.start()


def describe_control(text):
    """``"control character U+000D at position 4"`` for the first one of ``text`` (which has one)."""
    i = find_control(text)
    return f"control character U+{ord(text[i]):04X} at position {i + 1}"


def escape_control(text):
    """``text`` with every control character written as a Python escape (``\\r``, ``\\x1b``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def find_leaf(value, test, depth=0):
    """The first value in ``value``, its lists and its mappings' values (8 levels at most)
    for which ``test`` is true, or None."""
    if not isinstance(value, list | dict):
        return value if test(value) else None
    if depth < 8:
        for v in value.values() if isinstance(value, dict) else value:
            found = find_leaf(v, test, depth + 1)
            if found is not None:
                return found
    return None


def shorten(text, limit, mark="..."):
    """``text`` if it has at most ``limit`` characters, else its start and ``mark``,
    ``limit`` characters in all: how a message, a tick label or a title shows a value."""
    return text if len(text) <= limit else text[: limit - len(mark)] + mark


def shown(text, limit=40):
    """``text`` for a one-line message: at most ``limit`` characters (then ``...``),
    control characters escaped."""
    return escape_control(shorten(text, limit + 3))


def canonical_json(value, allow_nan=False):
    """JSON with sorted keys and no spaces: the one text of a value that knnx compares,
    hashes and writes (``params`` in results). numpy scalars are written as Python's;
    NaN and infinities raise ValueError unless ``allow_nan`` (values read back from a
    file, which its checks judge)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), default=_plain_number, allow_nan=allow_nan
    )


def _plain_number(value):
    if isinstance(value, numbers.Integral):  # numpy's integers register as Integral
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"not JSON serialisable: {value!r}")
