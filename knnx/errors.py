"""One exception family for every domain error; the CLI turns them into one line and exit 2.

Library errors speak of values, the CLI of flags: an error about one argument of a
library call names that parameter (``param="by"``: ``by: unknown column 'kk'; ...``),
and may mention a parameter with a value in its text (``{select=all}`` in the message,
listed in ``mentions``: ``select='all'``). The CLI renders the same error with its
flags (:meth:`KnnxError.render` with ``{"by": "--by", "select": "--select"}``:
``--by: unknown column 'kk'; ...``, ``--select all``).

It also holds how knnx contains the failures of code that is not its own
(:func:`user_fault`, :func:`describe`, :func:`exit_guard`, :func:`unraisable_to`)."""

import os
import sys
from contextlib import contextmanager


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


# --- user code's failures ----------------------------------------------------------------
# What code that is not knnx's (an estimator, a loader, a module named by import path)
# may do when it fails, and how knnx reports it: any exception but Ctrl-C's
# KeyboardInterrupt — SystemExit, GeneratorExit and subclasses of KeyboardInterrupt
# included — is that code's failure (a failed cell, or a
# one-line refusal during validation); Ctrl-C stays the user's.


def user_fault(exc):
    """True when ``exc`` (caught as BaseException around user code) is that code's
    failure to report, False for Ctrl-C (re-raise it). Ctrl-C raises exactly
    KeyboardInterrupt; a subclass of it can only come from the code itself."""
    return type(exc) is not KeyboardInterrupt


def describe(exc, limit=200):
    """``"TypeName: first line of the message"`` for any exception, in one line of at
    most ``limit`` characters of message, whatever the exception does (a ``__str__``
    that raises or returns no text gives ``TypeName: (its message cannot be
    printed)``), control characters escaped. A SystemExit reads
    ``SystemExit: sys.exit(3) called`` (its code is not a message)."""
    name = _type_name(exc)
    if isinstance(exc, SystemExit):
        try:
            code = repr(exc.code)
        except BaseException:  # noqa: BLE001 - a code whose repr raises
            code = "..."
        return f"{name}: sys.exit({code[:limit]}) called"
    try:
        text = str(exc)
        if not isinstance(text, str):
            raise TypeError
    except BaseException:  # noqa: BLE001 - user code's __str__ may do anything
        return f"{name}: (its message cannot be printed)"
    first = (text.strip().splitlines() or [""])[0][:limit]
    from knnx._text import escape_control

    return f"{name}: {escape_control(first)}" if first else name


def _type_name(exc):
    try:
        name = type(exc).__name__
        return name if isinstance(name, str) else "Exception"
    except BaseException:  # noqa: BLE001
        return "Exception"


class ProcessExit(BaseException):
    """User code called ``os._exit`` in a process running cells (see :func:`exit_guard`)."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code

    def __str__(self):
        return f"os._exit({self.code!r}) called"


@contextmanager
def exit_guard():
    """While user code runs (a cell, a loader or an import during validation):
    ``os._exit`` called from this process's own code (not from a child it forked)
    raises :class:`ProcessExit`, which fails the cell or refuses the spec, instead of
    ending the process with the run in it. What ends a process below Python (a signal,
    the out-of-memory killer, a C library's ``exit``) is not caught here: in a pool or
    Dask worker the executor reports the dead worker (see :mod:`knnx.experiment.executors`).
    Re-entrant; restored on the way out."""
    real, owner = os._exit, os.getpid()
    if getattr(real, "_knnx_guard", False):
        yield
        return

    def guarded(code):
        if os.getpid() != owner:  # a forked child ending as it should
            real(code)
        raise ProcessExit(code)

    guarded._knnx_guard = True
    os._exit = guarded
    try:
        yield
    finally:
        os._exit = real


def unraisable_text(unraisable):
    """``(category, message)`` of an error Python could not raise (one in a ``__del__``
    or a weakref callback, passed to :data:`sys.unraisablehook`): its type's name, and
    ``"MESSAGE in WHERE, ignored"``, WHERE the function or object it came from."""
    exc = unraisable.exc_value
    where = "a finaliser"
    try:
        obj = unraisable.object
        name = getattr(obj, "__qualname__", None) if obj is not None else None
        where = name if isinstance(name, str) else type(obj).__name__ if obj is not None else where
    except BaseException:  # noqa: BLE001 - user code's __getattr__ may do anything
        pass
    if exc is None:
        return "Exception", f"an error in {where}, ignored"
    text = describe(exc)
    name = _type_name(exc)
    return name, f"{text.removeprefix(name + ': ')} in {where}, ignored"


@contextmanager
def unraisable_to(record):
    """While user code runs: each error Python cannot raise (see :func:`unraisable_text`)
    is given to ``record(category, message)`` instead of printed with its traceback
    ("Exception ignored in ..."). Restored on the way out."""
    previous = sys.unraisablehook

    def hook(unraisable):
        try:
            record(*unraisable_text(unraisable))
        except BaseException:  # noqa: BLE001 - never let a report of an error raise
            pass

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def note_unraisable(stream=None):
    """For a process of the knnx command or a worker: an error Python cannot raise
    outside a cell (a cycle collected later) is one line on stderr, ``warning: MESSAGE``,
    once per distinct message, instead of a traceback."""
    seen = set()

    def hook(unraisable):
        try:
            line = "warning: {}: {}".format(*unraisable_text(unraisable))
            if line not in seen:
                seen.add(line)
                (stream or sys.stderr).write(line + "\n")
        except BaseException:  # noqa: BLE001
            pass

    sys.unraisablehook = hook
