"""Parameter constraints: one table per estimator, used by ``fit`` and by spec validation.

Each estimator class declares ``_parameter_constraints = {name: constraint}``. A
constraint's ``check(value)`` returns None when the value is allowed, else a phrase
saying what is expected ("an integer >= 1"); :func:`check_params` turns that into a
one-line error.
"""

import math
from numbers import Integral, Real

import numpy as np

from knnx.errors import SpecError


class Interval:
    """Numbers in [low, high] (either bound may be None, either may be open); ``integer`` restricts
    to ints. NaN and infinities are never allowed: a spec or an estimator takes finite values
    (``high`` = None means no bound short of that)."""

    def __init__(self, low=None, high=None, *, integer=False, low_open=False, high_open=False):
        self.low, self.high, self.integer = low, high, integer
        self.low_open, self.high_open = low_open, high_open

    def describe(self):
        kind = "an integer" if self.integer else "a number" if self.high is not None else "a finite number"
        if self.low is not None and self.high is not None:
            return f"{kind} in {'(' if self.low_open else '['}{self.low}, {self.high}{')' if self.high_open else ']'}"
        if self.low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {self.low}"
        if self.high is not None:
            return f"{kind} {'<' if self.high_open else '<='} {self.high}"
        return kind

    def check(self, value):
        kind = Integral if self.integer else Real
        if isinstance(value, bool) or not isinstance(value, kind):
            return self.describe()
        if not isinstance(value, Integral) and not math.isfinite(value):  # NaN, inf (ints are exact)
            return self.describe()
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return self.describe()
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return self.describe()
        return None


class Options:
    """One of a fixed set of strings."""

    def __init__(self, *values):
        self.values = values

    def describe(self):
        return "one of " + ", ".join(repr(v) for v in self.values)

    def check(self, value):
        return None if isinstance(value, str) and value in self.values else self.describe()


def check_params(owner, constraints, params, error=SpecError):
    """Raise ``error`` for the first unknown parameter or disallowed value."""
    for name, value in params.items():
        if name not in constraints:
            known = ", ".join(sorted(constraints))
            raise error(f"{owner}: unknown parameter '{name}'; known: {known}")
        expected = constraints[name].check(value)
        if expected is not None:
            raise error(f"{owner}: {name} must be {expected}, got {value!r}")


class Literal:
    """One of a few fixed non-string values (``True``, ``False``, ``None``), compared by identity."""

    def __init__(self, *values):
        self.values = values

    def describe(self):
        return " or ".join(repr(v) for v in self.values)

    def check(self, value):
        return None if any(value is v for v in self.values) else self.describe()


class AnyOf:
    """A value accepted by at least one of several constraints."""

    def __init__(self, *constraints):
        self.constraints = constraints

    def describe(self):
        return " or ".join(c.describe() for c in self.constraints)

    def check(self, value):
        return None if any(c.check(value) is None for c in self.constraints) else self.describe()


class InstanceOf:
    """An instance of a class (``describe`` names it as the reader knows it), or None."""

    def __init__(self, cls, name):
        self.cls, self.name = cls, name

    def describe(self):
        return f"a {self.name} or None"

    def check(self, value):
        return None if value is None or isinstance(value, self.cls) else self.describe()


class ColumnIndices:
    """None, or column indices: a list, tuple or 1-D integer array of integers >= 0
    (duplicates allowed; their order does not matter)."""

    def describe(self):
        return "None or a list of column indices (integers >= 0)"

    def check(self, value):
        if value is None:
            return None
        if isinstance(value, np.ndarray):
            if value.ndim != 1 or (value.size and value.dtype.kind not in "iu"):
                return self.describe()
            values = value.tolist()
        elif isinstance(value, list | tuple):
            values = value
        else:
            return self.describe()
        ok = all(isinstance(v, Integral) and not isinstance(v, bool) and v >= 0 for v in values)
        return None if ok else self.describe()
