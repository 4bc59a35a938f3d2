"""Parameter constraints: one table per estimator, used by ``fit`` and by spec validation.

Each estimator class declares ``_parameter_constraints = {name: constraint}``. A
constraint's ``check(value)`` returns None when the value is allowed, else a phrase
saying what is expected ("an integer >= 1"); :func:`check_params` turns that into a
one-line error.
"""

from numbers import Integral, Real

from knnx.errors import SpecError


class Interval:
    """Numbers in [low, high] (either bound may be None); ``integer`` restricts to ints."""

    def __init__(self, low=None, high=None, *, integer=False):
        self.low, self.high, self.integer = low, high, integer

    def describe(self):
        kind = "an integer" if self.integer else "a number"
        if self.low is not None and self.high is not None:
            return f"{kind} in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"{kind} >= {self.low}"
        if self.high is not None:
            return f"{kind} <= {self.high}"
        return kind

    def check(self, value):
        kind = Integral if self.integer else Real
        if isinstance(value, bool) or not isinstance(value, kind):
            return self.describe()
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
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
