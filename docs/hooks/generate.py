"""mkdocs hook: pages generated at build time from the code, never copied by hand.

A page holds a marker line and the hook replaces it:

* ``<!-- generated: spec-schema -->``: every key of a spec, from the pydantic models of
  :mod:`knnx.spec` (type, default, allowed values, description);
* ``<!-- generated: cli -->``: every command of the ``knnx`` command line, from the typer
  app of :mod:`knnx.cli` (usage, arguments and options with their help and defaults).
"""

import enum
import json
import re
import sys
import types
import typing
from pathlib import Path

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

# The knnx beside this file, not another installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

MARKERS = {}


def generator(marker):
    def register(func):
        MARKERS[f"<!-- generated: {marker} -->"] = func
        return func

    return register


def on_page_markdown(markdown, page, config, files):
    for marker, func in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, func())
    return markdown


# --- spec schema ------------------------------------------------------------------------------


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _type_name(annotation):
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping {_type_name(args[0])} → {_type_name(args[1])}" if args else "mapping"
    if annotation is typing.Any:
        return "any YAML value"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


_BOUNDS = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤", "min_length": "length ≥", "max_length": "length ≤"}


def _constraints(field: FieldInfo):
    parts = []
    metadata = list(field.metadata)
    if typing.get_origin(field.annotation) is typing.Annotated:
        metadata += list(typing.get_args(field.annotation)[1:])
    for item in metadata:
        if isinstance(item, FieldInfo):
            metadata.extend(item.metadata)
            continue
        for attr, sign in _BOUNDS.items():
            value = getattr(item, attr, None)
            if value is not None and isinstance(item, annotated_types.BaseMetadata):
                parts.append(
                    f"{sign} {value:_}".replace("_", " ") if isinstance(value, int) else f"{sign} {value}"
                )
        pattern = getattr(item, "pattern", None)
        if pattern:
            parts.append(f"matches `{pattern}`")
    return ", ".join(dict.fromkeys(parts))


def _default(field: FieldInfo):
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            value = value.model_dump()
        return f"`{json.dumps(value)}`"
    if field.default is PydanticUndefined:
        return "required"
    return f"`{json.dumps(field.default)}`"


def _model_table(model):
    doc = (model.__doc__ or "").strip()
    lines = [f"### {model.__name__}", ""]
    if doc and not doc.startswith("!!!") and model.__doc__ is not BaseModel.__doc__:
        lines += [" ".join(doc.split()), ""]
    lines += ["| key | type | default | constraints |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        lines.append(
            f"| `{name}` | {_cell(_type_name(field.annotation))} | {_cell(_default(field))} "
            f"| {_cell(_constraints(field))} |"
        )
    return lines + [""]


@generator("spec-schema")
def spec_schema():
    from knnx import spec
    from knnx.algorithms import ALIASES, BUILTIN
    from knnx.metrics import METRIC_INPUT
    from knnx.protocols import PROTOCOLS

    models = [spec.Spec, spec.AlgorithmEntry, spec.Tune, spec.Preprocess]
    protocols = typing.get_args(typing.get_args(spec.Protocol)[0])
    lines = [
        "Generated from the pydantic models of `knnx/spec.py` when the site is built. "
        "Unknown keys are refused (`extra = forbid`) and values are not coerced (`strict`): "
        '`k: "3"` is a string, not a number.',
        "",
    ]
    for model in models:
        lines += _model_table(model)
    lines += ["### protocol", "", "`protocol` is one of the following, chosen by `kind`.", ""]
    for model in protocols:
        lines += _model_table(model)
    names = sorted(set(BUILTIN) | set(ALIASES))
    lines += [
        "### Registered names",
        "",
        "Algorithms (`name:`): " + ", ".join(f"`{n}`" for n in names) + ".",
        "",
        "Protocols (`kind:`): " + ", ".join(f"`{n}`" for n in PROTOCOLS) + ".",
        "",
        "| metric | computed from |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {what} |" for name, what in METRIC_INPUT.items()]
    lines += [
        "",
        "### Limits",
        "",
        "| constant | value |",
        "|---|---|",
    ]
    for name in ("MAX_SPEC_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_STRING", "MAX_YAML_VALUES", "MAX_CELLS"):
        lines.append(
            f"| `knnx.spec.{name}` | {getattr(spec, name):_} |".replace("_", " ").replace(
                "`knnx.spec.MAX ", "`knnx.spec.MAX_"
            )
        )
    return "\n".join(lines) + "\n"


# --- command line ------------------------------------------------------------------------------


def _is_option(param):
    return getattr(param, "param_type_name", "") == "option"


def _param_type(param, ctx):
    if _is_option(param) and param.is_flag:
        return "flag"
    try:  # typer >= 0.20 describes its parameters itself
        text = param.display_type(ctx)
    except (AttributeError, TypeError):
        text = param.type.name.lower()
    return str(text).strip("<>").replace("|", " or ")


def _param_default(param):
    if _is_option(param) and param.is_flag:
        return ""
    default = param.default
    if default is None or default == () or default == []:
        return ""
    if isinstance(default, enum.Enum):
        default = default.value
    return f"`{default}`"


@generator("cli")
def cli_reference():
    import typer

    from knnx.cli import app

    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="knnx")
    lines = [
        "Generated from the typer app of `knnx/cli.py` when the site is built; "
        "`knnx COMMAND --help` prints the same text.",
        "",
    ]
    for name in sorted(group.commands):
        command = group.commands[name]
        sub = command.context_class(command, info_name=name, parent=ctx)
        usage = re.sub(r"\{(\w+)\}", lambda m: m.group(1).upper(), command.get_usage(sub))
        lines += [f"## knnx {name}", "", "```text", usage, "```", ""]
        lines += [" ".join((command.help or "").split()), ""]
        lines += ["| argument or option | type | default | help |", "|---|---|---|---|"]
        for param in command.params:
            if param.name == "help":
                continue
            if _is_option(param):
                label = ", ".join(f"`{o}`" for o in param.opts + param.secondary_opts)
            else:
                label = f"`{(param.metavar or param.name).upper()}`"
            help_text = getattr(param, "help", "") or ""
            lines.append(
                f"| {label} | {_cell(_param_type(param, sub))} | {_cell(_param_default(param))} | {_cell(' '.join(help_text.split()))} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"
