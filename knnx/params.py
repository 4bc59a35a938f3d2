"""A cell's parameters as one value: :class:`Params`.

knnx writes a cell's parameters in the ``params`` column of its result files as
canonical JSON (:func:`knnx._text.canonical_json`: sorted keys, no spaces). Every
reader turns that text into a :class:`Params` with the one parser
(:meth:`Params.parse`), and compares, groups and hashes settings by the one canonical
text (:attr:`Params.text`): ``{"k": 1}`` and ``{"k":1}`` are one setting, ``{"k": 1}``
and ``{"k": 1.0}`` two (as their rows are written). A ``param_<name>`` column shows one
value of it as :func:`value_text` gives it.

The parser accepts standard JSON only, a JSON object of named parameters: no key given
twice (Python's json keeps the last), no NaN or infinity (no JSON number; knnx writes
none), no integer of more digits than Python converts, no ``\\u`` escape that is no
character, nested at most :data:`knnx.limits.MAX_DEPTH` levels (checked before parsing,
which would exhaust the recursion of ``json.loads``)."""

import json
import math
import sys

from knnx._text import canonical_json, shown
from knnx.limits import depth_problem, json_too_deep


class Refused(Exception):
    """A JSON text that parses but is no knnx ``params`` cell (the message says why)."""


def _object(pairs):
    value = dict(pairs)
    if len(value) < len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise Refused(f"the key '{shown(key)}' is given twice")
            seen.add(key)
    return value


def refuse_constant(name):
    """``parse_constant`` of ``json.loads``: NaN, Infinity and -Infinity, which Python's
    json reads and JSON has not, are refused."""
    raise Refused(f"{name} is not a finite JSON number")


def _float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e999
        raise Refused(f"{shown(text)} is not a finite JSON number")
    return value


def _int(text):
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        digits = len(text.lstrip("-"))
        raise Refused(f"an integer of {digits} digits (at most {sys.get_int_max_str_digits()})") from None


def _encodable(value):
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def value_text(value):
    """One parameter's value as its ``param_<name>`` cell shows it: strings bare, the
    rest as canonical JSON."""
    return value if isinstance(value, str) else canonical_json(value, allow_nan=True)


def value_key(value):
    """The text that one parameter's values compare and group by: canonical JSON."""
    return canonical_json(value, allow_nan=True)


class Params(dict):
    """A cell's parameters: a read-only dict (name: value as JSON gives it) that equals
    and hashes as its canonical JSON :attr:`text`. A plain ``dict`` compares as dicts do.

    ``Params.parse(text)`` is the one parser of a ``params`` cell (see the module
    docstring): ``(Params, None)``, or ``(None, problem)`` with the reason in words."""

    __slots__ = ("_text",)

    @classmethod
    def parse(cls, text):
        if json_too_deep(text):
            return None, depth_problem()
        try:
            value = json.loads(
                text,
                object_pairs_hook=_object,
                parse_constant=refuse_constant,
                parse_float=_float,
                parse_int=_int,
            )
        except Refused as exc:
            return None, str(exc)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            return None, f"'{shown(text)}' is not a JSON object of parameters"
        if "" in value:
            return None, "a parameter without a name (the key '')"
        if "\\u" in text and not _encodable(value):
            return None, "a \\u escape that is no character (a lone surrogate)"
        return cls(value), None

    @property
    def text(self):
        """The canonical JSON of these parameters (sorted keys, no spaces)."""
        try:
            return self._text
        except AttributeError:
            self._text = canonical_json(dict(self), allow_nan=True)
            return self._text

    def value_text(self, name):
        """The ``param_<name>`` cell of these parameters: :func:`value_text` of the
        value, empty when they have no ``name``."""
        return value_text(self[name]) if name in self else ""

    def __eq__(self, other):
        if isinstance(other, Params):
            return self.text == other.text
        return dict.__eq__(self, other)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self.text)

    def __reduce__(self):
        return (type(self), (dict(self),))

    def __repr__(self):
        return f"Params({dict.__repr__(self)})"

    def _read_only(self, *args, **kwargs):
        raise TypeError("Params are read-only: make a dict of them to change one")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only


def parse_params_text(text):
    """``(parameters, None)`` for a ``params`` cell that is a JSON object of parameters
    (a :class:`Params`), else ``(None, problem)``: :meth:`Params.parse`."""
    return Params.parse(text)
