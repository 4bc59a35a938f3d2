"""Command-line interface: a thin typer layer over the library.

Every command calls one public function and renders its result. Domain errors
(:class:`knnx.errors.KnnxError`) print as one line per problem on stderr with exit
code 2, never a traceback; a library error's parameter is named by the command's
flag (:func:`knnx.cli.core.command_flags`).

The commands live in modules by theme (:mod:`knnx.cli.running`, :mod:`knnx.cli.results`,
:mod:`knnx.cli.data`); this table registers them on :data:`app`, in the order
``knnx --help`` lists them.
"""

from knnx.cli import data, results, running
from knnx.cli.core import app

COMMANDS = [
    ("run", running.run),
    ("validate", running.validate),
    ("datasets", data.datasets),
    ("table", results.table_cmd),
    ("compare", results.compare),
    ("report", results.report),
    ("gate", running.gate),
    ("reproduce", running.reproduce),
    ("check", results.check),
    ("plot", results.plot),
    ("select-k", data.select_k_cmd),
]
for _name, _command in COMMANDS:
    app.command(_name)(_command)

__all__ = ["app"]
