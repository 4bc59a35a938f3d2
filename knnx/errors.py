"""One exception family for every domain error; the CLI turns them into one line and exit 2.

Library errors speak of values, the CLI of flags: an error about one argument of a
library call names that parameter (``param="by"``: ``by: unknown column 'kk'; ...``),
and may mention a parameter with a value in its text (``{select=all}`` in the message,
listed in ``mentions``: ``select='all'``). The CLI renders the same error with its
flags (:meth:`KnnxError.render` with ``{"by": "--by", "select": "--select"}``:
``--by: unknown column 'kk'; ...``, ``--select all``)."""


def _restore(cls, message, param, mentions, state):
    err = cls(message, param=param, mentions=mentions)
    err.__dict__.update(state)
    return err


class KnnxError(Exception):
    """Base class of knnx's domain errors. ``str(err)`` is a complete message: one line,
    or, for an error made with :meth:`from_lines` (a spec with several problems), one
    line per problem; :meth:`lines` gives them (a line may quote a user's text holding a
    line break: the CLI escapes it, so each problem prints as one line).

    ``param``: the parameter the error is about (the message starts with its name);
    ``mentions``: (parameter, value) pairs whose tokens ``{parameter=value}`` the
    message holds. :meth:`render` names them as parameters (``str(err)``) or as the
    flags of a command line."""

    def __init__(self, message="", *, param=None, mentions=()):
        self.message = message
        self.param = param
        self.mentions = tuple(mentions)
        super().__init__(self.render())

    def __reduce__(self):  # keeps param and mentions across processes (a worker's error)
        state = {k: v for k, v in self.__dict__.items() if k not in ("message", "param", "mentions")}
        return (_restore, (type(self), self.message, self.param, self.mentions, state))

    @classmethod
    def from_lines(cls, lines):
        err = cls("\n".join(lines))
        err._lines = list(lines)
        return err

    def render(self, flags=None):
        """The message, each parameter named as ``flags`` ({parameter: flag}) gives it
        (``--by``; with a value: ``--select all``), any other by its name (``by``,
        ``select='all'``)."""
        flags = flags or {}

        def name(param, value=None):
            if param in flags:
                return flags[param] if value is None else f"{flags[param]} {value}"
            return param if value is None else f"{param}={value!r}"

        text = self.message
        for param, value in self.mentions:
            text = text.replace(f"{{{param}={value}}}", name(param, value))
        return f"{name(self.param)}: {text}" if self.param is not None else text

    def lines(self, flags=None):
        """The problems, one line each (:meth:`render` with ``flags``)."""
        return list(getattr(self, "_lines", None) or [self.render(flags)])


class SpecError(KnnxError, ValueError):
    """An experiment spec is malformed or asks for something impossible."""


class DataError(KnnxError, ValueError):
    """A dataset, CSV file or array is malformed (names the file, column and row)."""


class ResultsError(KnnxError):
    """A results file or output folder cannot be used as asked."""


class CellError(KnnxError):
    """A cell failed while running (names the cell and the underlying error)."""


class WriteError(ResultsError):
    """The operating system refused to write an output file (a full disk, a file-size
    limit, a permission changed while running): names the path and the OS reason. What
    was written before is intact and a rerun resumes; the CLI exits with code 3."""
