"""The Dataset record every loader returns, and label encoding."""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

import numpy as np
import pandas as pd

from knnx.errors import DataError


class Attribute(NamedTuple):
    """One input attribute as its source declares it: ``kind`` is ``numeric`` or
    ``nominal``; ``categories`` lists a nominal attribute's values (their codes are
    their positions), ``()`` for a numeric one."""

    name: str
    kind: str
    categories: tuple = ()


@dataclass(frozen=True, eq=False)
class Dataset:
    """A classification dataset, ready for the kernels.

    Attributes
    ----------
    name : str
        Display name used in results.
    X : ndarray of shape (n_samples, n_features), float64, C-contiguous
    y : ndarray of shape (n_samples,), intp
        Integer class codes ``0 .. n_classes - 1``.
    classes : ndarray of shape (n_classes,), object
        Original class names; ``classes[y]`` gives the labels as the source spells them.
    feature_names : tuple of str
    split : (train_idx, test_idx) or None
        Predefined train/test split (indices into X), if the dataset has one.
    posterior : callable or None
        For synthetic data: ``posterior(X) -> (n, n_classes)`` true class probabilities.
    metadata : dict
        ``source``, ``citation``, ``notes``, ``sha256`` (of the files read) and the
        loader options in force.
    attributes : tuple of Attribute
        The input attributes before encoding (suite datasets, and any dataset loaded
        with ``categorical: keep``; ``()`` where the source does not type them).
    values : ndarray of shape (n_samples, len(attributes)), float64, or None
        The attributes before encoding: numbers as they are, a nominal attribute's
        category code, NaN for a missing value. ``X`` is their encoding for a
        Euclidean method (see the loader's ``categorical`` and ``missing``).
    partitions : dict
        The source's own partitions: scheme name (``10-fold``) -> each row's test
        fold ``0 .. k-1`` (``protocol: {kind: partitions}``).
    nominal : tuple of int
        The columns of ``X`` that hold a nominal attribute's category codes (0 .. m-1,
        as floats; NaN for a missing value under ``missing: keep``): the loaders'
        ``categorical: keep``. ``()`` otherwise (one-hot and ordinal columns are
        numbers for a Euclidean method). The runner gives them to an estimator's
        ``nominal`` parameter.
    precomputed : bool
        ``X`` is the square matrix of the distances between the rows (``X[i, j]``: from
        row i to row j), as scikit-learn's ``metric="precomputed"``: a loader's own
        Dataset. A training part is then ``X[train][:, train]`` and its queries
        ``X[test][:, train]``; methods run under ``metric: precomputed`` only.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    feature_names: tuple
    split: tuple | None = None
    posterior: Callable | None = None
    metadata: dict = field(default_factory=dict)
    attributes: tuple = ()
    values: np.ndarray | None = None
    partitions: dict = field(default_factory=dict)
    nominal: tuple = ()
    precomputed: bool = False

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def n_classes(self):
        return len(self.classes)

    def class_counts(self):
        """Mapping original class name -> count, in class-code order."""
        counts = np.bincount(self.y, minlength=self.n_classes)
        return {str(c): int(n) for c, n in zip(self.classes, counts, strict=True)}

    def numeric_columns(self):
        """Boolean mask of the columns of X that hold numeric attributes: with
        ``attributes``, the columns named as a numeric attribute; without, every column
        but the one-hot ones (named ``attribute=category``); never a column of
        ``nominal`` codes, nor any column of a ``precomputed`` distance matrix."""
        if self.precomputed:
            return np.zeros(self.X.shape[1], dtype=bool)
        if self.attributes:
            numeric = {a.name for a in self.attributes if a.kind == "numeric"}
            mask = np.array([f in numeric for f in self.feature_names], dtype=bool)
        else:
            mask = np.array(["=" not in f for f in self.feature_names], dtype=bool)
        mask[list(self.nominal)] = False
        return mask

    def split_sizes(self):
        """(n_train, n_test) of the predefined split, or None."""
        if self.split is None:
            return None
        return len(self.split[0]), len(self.split[1])


# A label that is a number: an ASCII decimal, spaces around allowed (as a numeric cell).
_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def _number(label):
    """The exact value of a label that is a number (a Decimal: 9007199254740993 and
    9007199254740992 differ, although they are one float64), else None."""
    if not _NUMBER.fullmatch(label):
        return None
    try:
        return Decimal(label.strip())
    except InvalidOperation:  # an exponent beyond Decimal's range (1e99999999999999999999): text
        return None


def _is_na(value):
    """A missing value as Python, NumPy and pandas write one: None, a NaN (float,
    NumPy, Decimal), ``pandas.NA``, ``pandas.NaT`` or NumPy's ``NaT``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | complex | np.inexact):
        return bool(np.isnan(value))
    if isinstance(value, Decimal):
        return value.is_nan()
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    return False


def label_problem(value):
    """Why ``value`` cannot be a class label, or None: the one missing-label rule of
    every source (a CSV file's label column, a loader's ``y``, a Dataset's ``classes``,
    a suite's labels).

    Missing (``"missing class label"``): a missing value (None, a NaN, ``pandas.NA``,
    ``NaT``) and an empty or blank text. Refused as reading as missing: a text that
    is NaN in any case and sign, spaces around (``nan``, ``+nan``, `` -NaN``), which
    pandas, NumPy and ``float()`` read as a missing value. Any other label is a class
    (``NA``, ``None`` as text, ``?`` are names)."""
    if _is_na(value):
        return "missing class label"
    if isinstance(value, str):
        if not value.strip():
            return "missing class label"
        if value.strip().lower().lstrip("+-") == "nan":
            return f"class label {value!r} reads as a missing label; give the class"
    return None


def same_number(texts):
    """The first two positions ``(i, j)``, ``i < j``, of ``texts`` (class labels as text)
    holding two spellings of one number (``1``, ``01``, ``1.0``, `` 1``, ``+1``: two
    classes that would sort as one), or None. The rule of every source: a loader's or a
    file's labels (:func:`encode_labels`) and a Dataset's ``classes``
    (:func:`knnx.datasets.checks.check_dataset`)."""
    first = {}  # number -> position of its first spelling
    for j, label in enumerate(texts):
        value = _number(label)
        if value is None:
            continue
        if value in first and texts[first[value]] != label:
            return first[value], j
        first.setdefault(value, j)
    return None


# What follows the two spellings :func:`same_number` found, in every source's message.
SAME_NUMBER = (
    "are the same number written two ways; write each class one way (or give the classes names that are not "
    "numbers)"
)


def encode_labels(labels, where):
    """Map labels to codes 0..C-1 by a rule that depends on the labels only.

    Class order (it fixes the class codes, hence stratified splits and every tie rule
    that falls back on class order): the labels that are numbers (ASCII decimals such
    as ``2``, ``-1.5``, ``1e3``, spaces around allowed) first, in numeric order, then
    the others in text order (Python's string comparison, by code point). So ``10``
    follows ``9``, and ``b`` follows ``a`` and every number.

    Labels are classes as written (``x`` and `` x`` are two classes), except that two
    spellings of one number (``1``, ``01``, ``1.0``, `` 1``) would make two classes
    that sort as one: they are refused with a DataError naming both.

    A missing label (:func:`label_problem`) is refused with a DataError naming its
    position (``y[3]``). Returns (y, classes). ``where`` names the source for error
    messages.
    """
    labels = np.asarray(labels, dtype=object)
    for i, value in enumerate(labels):
        problem = label_problem(value)
        if problem is not None:
            raise DataError(f"{where}: y[{i}]: {problem}")
    text = np.array([str(v) for v in labels], dtype=object)
    _one_kind_per_text(labels, text, where)
    distinct = list(dict.fromkeys(text))  # in order of first appearance
    clash = same_number(distinct)
    if clash is not None:
        first, second = sorted(distinct[i] for i in clash)
        raise DataError(f"{where}: class labels {first!r} and {second!r} {SAME_NUMBER}")
    numbers, words = [], []
    for label in distinct:
        value = _number(label)
        if value is None:
            words.append(label)
        else:
            numbers.append((value, label))
    classes = np.array([label for _, label in sorted(numbers)] + sorted(words), dtype=object)
    lookup = {c: i for i, c in enumerate(classes)}
    y = np.fromiter((lookup[v] for v in text), dtype=np.intp, count=len(text))
    return y, classes


def _kind(value):
    if isinstance(value, bool | np.bool_):
        return "a boolean"
    if isinstance(value, int | float | np.number):
        return "a number"
    return "a text" if isinstance(value, str) else f"a {type(value).__name__}"


def _one_kind_per_text(labels, text, where):
    """DataError when two labels of other kinds are written alike (``1`` and ``"1"``,
    ``True`` and ``"True"``): classes are compared as written, and these would be one."""
    if labels.dtype != object or len(labels) == 0:
        return
    first = {}
    for i, (value, label) in enumerate(zip(labels, text, strict=True)):
        j = first.setdefault(label, i)
        if j != i and _kind(labels[j]) != _kind(value):
            a, b = (v.item() if isinstance(v, np.generic) else v for v in (labels[j], value))
            raise DataError(
                f"{where}: y[{j}] = {a!r} ({_kind(a)}) and y[{i}] = {b!r} ({_kind(b)}) are written alike, so "
                "they would be one class; give every label one type"
            )


def make_dataset(name, X, y, classes, feature_names, split=None, posterior=None, metadata=None):
    """Build a Dataset with the array conventions enforced (float64 C-contiguous, intp)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.intp)
    if split is not None:
        split = tuple(np.ascontiguousarray(s, dtype=np.intp) for s in split)
    return Dataset(
        name=name,
        X=X,
        y=y,
        classes=np.asarray(classes, dtype=object),
        feature_names=tuple(str(f) for f in feature_names),
        split=split,
        posterior=posterior,
        metadata=dict(metadata or {}),
    )
