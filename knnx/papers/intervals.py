"""Confidence intervals, one documented policy per kind of quantity.

=============  ===========================================  ===========================
policy         quantity                                     interval (two-sided, 95 %)
=============  ===========================================  ===========================
``student_t``  a mean over resamples (CV folds x repeats,   mean +- t(0.975, n-1) s/sqrt(n)
               simulations): the values are the n results   (s: sample std, ddof 1);
                                                            none for n < 2
``clopper``    one error rate on one test set of n_test     Clopper-Pearson (exact
               rows (a fraction in [0, 1])                  binomial), scipy's
                                                            ``binomtest(...).proportion_ci``
``paired_t``   a mean difference of paired results (the     Student-t on the paired
               same folds for two methods)                  differences
``none``       a count, a rank, a median, a ratio: no       (NaN, NaN)
               interval is claimed
=============  ===========================================  ===========================

Every function returns ``(low, high)`` as floats, NaN when undefined.
"""

import math

import numpy as np
from scipy import stats

POLICIES = ("student_t", "clopper", "paired_t", "none")
LEVEL = 0.95


def student_t(values, level=LEVEL):
    """Student-t interval of the mean of ``values`` (NaN, NaN for fewer than two; the mean
    itself for a zero spread)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n < 2:
        return math.nan, math.nan
    mean = float(np.mean(values))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * np.std(values, ddof=1) / math.sqrt(n))
    return mean - half, mean + half


def clopper(error, n_test, level=LEVEL):
    """Clopper-Pearson interval of an error rate ``error`` measured on ``n_test`` rows
    (the count of errors is ``round(error * n_test)``)."""
    n = int(n_test)
    if n < 1 or not 0.0 <= error <= 1.0:
        return math.nan, math.nan
    k = int(round(error * n))
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def interval(policy, values, n_test=None, level=LEVEL):
    """The interval of ``policy`` (see the module table) for the selected ``values``."""
    if policy in ("student_t", "paired_t"):
        return student_t(values, level)
    if policy == "clopper":
        values = np.asarray(values, dtype=np.float64)
        if values.size != 1 or n_test is None:
            return math.nan, math.nan
        return clopper(float(values[0]), n_test, level)
    if policy == "none":
        return math.nan, math.nan
    raise ValueError(f"interval: expected one of {', '.join(POLICIES)}, got {policy!r}")
