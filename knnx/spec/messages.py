"""Pydantic's validation errors as the spec's one-line problems (``PATH: message``)."""

import re

from knnx._text import shorten
from knnx.spec.schema import PROTOCOL_MODELS, AlgorithmEntry, Preprocess, Spec, Tune

# Union branch names pydantic puts in a location; they add nothing for the reader.
_BRANCH_NAMES = frozenset({"str", "dict[str,any]", *PROTOCOL_MODELS})

# Pydantic's wording that names its own classes rather than the spec's keys.
_PYDANTIC_NOISE = re.compile(r" or (instance of \w+|object to extract fields from)")

_KINDS = list(PROTOCOL_MODELS)


def short_repr(value, limit=80):
    """``repr(value)`` cut to ``limit`` characters, so that one message stays one short line."""
    return shorten(repr(value), limit + 3)


def loc_to_path(loc):
    """A pydantic location as the spec's path (``algorithms[0].params``)."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in _BRANCH_NAMES:
            continue
        else:
            path += f".{part}" if path else str(part)
    return path or "(top level)"


def pydantic_problems(exc, data, model_at=None):
    """One message per location; ``model_at(loc, data)`` finds the model whose keys an
    unknown key is listed against (default: the run spec's, :func:`spec_model_at`)."""
    problems = {}
    for err in exc.errors():
        # The str | dict union reports one error per branch for datasets: keep the first.
        problems.setdefault(loc_to_path(err["loc"]), _message(err, data, model_at or spec_model_at))
    return [f"{path}: {msg}" for path, msg in problems.items()]


def _message(err, data, model_at):
    """The message of one pydantic error (without its path)."""
    if err["type"] == "extra_forbidden":
        model = model_at(err["loc"][:-1], data)
        known = ", ".join(model.model_fields) if model else ""
        return f"unknown key; known: {known}" if known else "unknown key"
    if err["type"] == "missing":
        return "required key is missing"
    if err["type"] == "union_tag_invalid":
        given = err["input"].get("kind") if isinstance(err["input"], dict) else err["input"]
        return f"unknown protocol kind {given!r}; known: {', '.join(_KINDS)}"
    if err["type"] == "union_tag_not_found":
        return f"needs a 'kind': {', '.join(_KINDS[:-1])} or {_KINDS[-1]}"
    if err["type"] == "too_short":
        return "empty list; give at least one item"
    text = _PYDANTIC_NOISE.sub("", err["msg"]).removeprefix("Value error, ")
    msg = text[0].lower() + text[1:]
    if not (err["type"] == "value_error" and isinstance(err.get("input"), dict)):
        # (a rule on a whole entry: the entry is at its path, its repr would be noise)
        msg += f" (got {short_repr(err.get('input'))})"
    return msg


_MODELS_AT = {"": Spec, "protocol": None, "preprocess": Preprocess, "algorithms": AlgorithmEntry}


def spec_model_at(loc, data):
    """The pydantic model of a run spec a location refers to (for listing known keys)."""
    names = [p for p in loc if isinstance(p, str)]
    if not names:
        return Spec
    if names[0] == "protocol":
        protocol = data.get("protocol")
        kind = protocol.get("kind") if isinstance(protocol, dict) else None
        return PROTOCOL_MODELS.get(kind) if isinstance(kind, str) else None
    if names[0] == "algorithms" and "tune" in names:
        return Tune
    return _MODELS_AT.get(names[0])
