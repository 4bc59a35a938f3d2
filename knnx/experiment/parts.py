"""What a cell fits on: the training and test parts of a split of a dataset, the
estimator given what the run supplies (its neighbour graphs, the dataset's column
types, the spec's seed), a contestant with steps as a :class:`knnx.steps.Chain`
(:func:`contestant`), and an active-learning repeat's start set and pool
(:func:`active_repeat_data`).

The parts (:func:`split_parts`) are rows of X, standardised with the training part's
statistics if the spec asks: ``preprocess: {standardize: numeric}`` scales the columns
of numeric attributes (:meth:`knnx.datasets.Dataset.numeric_columns`), ``true`` every
column but those of nominal category codes (``Dataset.nominal``, from ``categorical:
keep``); a missing value (``missing: keep``) is left out of the statistics and stays
NaN (:mod:`knnx.evaluation.preprocess`). A precomputed distance matrix
(``Dataset.precomputed``) is sliced on both axes, the training part ``X[train][:,
train]`` (distances between training rows) and the test part ``X[test][:, train]``
(from each test row to the training rows), as scikit-learn's ``metric="precomputed"``
takes them; it is never standardised.
"""

import copy

import numpy as np

from knnx._text import shorten
from knnx.datasets import load_dataset
from knnx.estimators.registry import neighbor_counts, split_setting
from knnx.evaluation.preprocess import apply_standardizer, fit_standardizer, split_parts  # noqa: F401 (re-exported)
from knnx.limits import MAX_SEED
from knnx.spec import SEED_DATA, SEED_SPLITS, dataset_seedseq
from knnx.steps import Chain


def construct(cls, setting):
    """``cls(**setting)``, checked as scikit-learn's ``clone`` checks a copy: its
    ``get_params`` must give back each parameter as given (the same object, or an equal
    value), else ValueError (the cell fails): the results would record a setting that
    did not run (an ``__init__`` that ignores or changes an argument)."""
    estimator = _fresh_defaults(cls(**setting), setting)
    if setting:

        def stored(name, value, got):
            shown = "no such parameter" if got is _ABSENT else f"{name}={_short(got)}"
            return f"{cls.__name__}({name}={_short(value)}).get_params() gives {shown}: __init__ must store each parameter as given"

        _check_kept(setting, estimator.get_params(deep=False), stored)
    return estimator


def _check_kept(given, held, said):
    """ValueError (the cell fails) for the first parameter of ``given`` that ``held``
    (what ``get_params`` gives) holds otherwise: another object and no equal value of the
    same type (``got`` is ``_ABSENT`` when it holds none); its message is
    ``said(name, value, got)`` and why that fails the cell."""
    for name, value in given.items():
        got = held.get(name, _ABSENT)
        if got is not value and not _equal(got, value):
            raise ValueError(
                f"{said(name, value, got)} (scikit-learn's convention), or the results would record a setting "
                "that did not run"
            )


_ABSENT = object()

# Defaults of these types cannot change: they need no copy of their own.
_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _fresh_defaults(estimator, setting):
    """``estimator`` with a copy of its own of each default parameter that is an object (a
    ``RandomState``, an estimator, a list), as scikit-learn's ``clone`` gives: a default
    is one object shared by every instance of the class, and a cell that draws from it or
    fits it would change what the next cell in the process starts from (results would
    depend on ``--jobs`` and on what ran before). A default that cannot be copied is
    kept."""
    defaults = {
        name: value
        for name, value in estimator.get_params(deep=False).items()
        if name not in setting and not isinstance(value, _IMMUTABLE) and not callable_class(value)
    }
    fresh = {}
    for name, value in defaults.items():
        try:
            fresh[name] = copy.deepcopy(value)
        except Exception:  # noqa: BLE001, S112 - an object that cannot be copied stays shared
            continue
    if fresh:
        estimator.set_params(**fresh)
    return estimator


def callable_class(value):
    """Whether ``value`` is a class or a function (a default such as a metric function):
    shared by nature, copied as itself."""
    return isinstance(value, type) or (callable(value) and not hasattr(value, "get_params"))


def fit_checked(estimator, X, y, **fit_kwargs):
    """``estimator.fit(X, y, **fit_kwargs)``, then ValueError (the cell fails) when ``fit``
    changed a parameter (``get_params`` gives another object or value than before): the
    results would record a setting that did not run (scikit-learn's convention: fit leaves
    the parameters as set)."""
    # a Chain: its steps and classifier, each checked
    parts = estimator.components() if isinstance(estimator, Chain) else [estimator]
    before = [part.get_params(deep=False) for part in parts]
    estimator.fit(X, y, **fit_kwargs)

    def changed(name, value, got):
        shown = "removed it" if got is _ABSENT else f"{name}: {_short(value)} -> {_short(got)}"
        return f"fit changed its parameter {name} ({shown}): fit must leave the parameters as set"

    for part, held in zip(parts, before, strict=True):
        _check_kept(held, part.get_params(deep=False), changed)


def _equal(a, b):
    try:
        return type(a) is type(b) and bool(np.all(a == b)) and np.shape(a) == np.shape(b)
    except Exception:  # noqa: BLE001 - a comparison that fails tells nothing equal
        return False


def _short(value):
    return shorten(repr(value), 60)


def cell_estimator(cls, setting, store, ds, seed):
    """The estimator a cell fits: ``cls(**setting)`` checked (:func:`construct`), then given
    what the run supplies: its graph store (:func:`with_graphs`), the dataset's nominal
    columns (:func:`with_types`) and the spec's seed (:func:`with_seed`)."""
    return with_seed(with_types(with_graphs(construct(cls, setting), store), ds), seed)


def contestant(cls, steps, setting, store, ds, seed, fits=None):
    """What a cell fits for one setting: :func:`cell_estimator` for a classifier alone; with
    ``steps`` (``[(step id, class)]``, the entry's steps in order), a
    :class:`knnx.steps.Chain` of the steps, each made with its parameters of the
    setting (``<step id>__<name>``) and the spec's seed (the first step also the
    dataset's nominal columns, :func:`with_types`: ``encode``), then the classifier given
    its graph store and seed (not the dataset's nominal columns: after a step the columns
    are not the dataset's, unless every step before keeps them: a selection, whose
    ``keeps_columns`` is True, returns rows of X). ``fits``: the process's
    :class:`knnx.steps.StepFits`."""
    if not steps:
        return cell_estimator(cls, setting, store, ds, seed)
    step_settings, own = split_setting([sid for sid, _ in steps], setting)
    chain = [
        (sid, with_seed(construct(step_cls, part), seed))
        for (sid, step_cls), part in zip(steps, step_settings, strict=True)
    ]
    classifier = with_seed(with_graphs(construct(cls, own), store), seed)
    # the first step reads the dataset's columns (encode: its nominal ones), and so does
    # each step or classifier after steps that keep them (selections: rows of X)
    for estimator in [est for _, est in chain] + [classifier]:
        with_types(estimator, ds)
        if not getattr(estimator, "keeps_columns", False):
            break
    return Chain(chain, classifier, fits)


def with_seed(estimator, seed):
    """``estimator``, given the spec's ``seed`` (modulo 2**32, scikit-learn's range) as
    its ``random_state`` when it has one left at None: a scikit-learn estimator drawing
    from fresh entropy would give other results on every run and in every worker
    process. The results' ``params`` keep None, what the spec said; its ``seed`` column
    is the seed given. Set ``random_state`` in ``params`` to choose it (a list of them:
    replicates, pooled)."""
    params = estimator.get_params(deep=False)  # raising fails the cell
    if "random_state" in params and params["random_state"] is None:
        estimator.set_params(random_state=int(seed) % (MAX_SEED + 1))
    return estimator


def with_types(estimator, ds):
    """``estimator``, given the dataset's nominal columns (``ds.nominal``, as a list of
    column indices of X: a cell's training and test parts have the dataset's columns)
    as its ``nominal`` parameter when it has one left at None and ``ds`` has nominal
    columns (``categorical: keep``); unchanged otherwise."""
    if ds.nominal:
        params = estimator.get_params(deep=False)  # raising fails the cell, as fit raising would
        if "nominal" in params and params["nominal"] is None:
            estimator.set_params(nominal=[int(j) for j in ds.nominal])
    return estimator


def with_graphs(estimator, store):
    """``estimator``, given ``store`` as its ``graphs`` parameter when it has one left at
    None (knnx's neighbour estimators; any estimator may opt in the same way) and
    ``store`` is not None; unchanged otherwise. A class outside knnx gets an overlay of
    the store (:meth:`knnx.neighbors.graphs.GraphStore.overlay`): it reads the graphs
    knnx's searches stored, and a graph it adds (right or wrong) stays with it, never
    reaching other cells."""
    if store is not None:
        params = estimator.get_params(deep=False)  # raising fails the cell, as fit raising would
        if "graphs" in params and params["graphs"] is None:
            own = type(estimator).__module__.partition(".")[0] == "knnx"
            estimator.set_params(graphs=store if own else store.overlay())
    return estimator


def _repeat_seed(seed, label, purpose, repeat):
    base = dataset_seedseq(seed, label, purpose)
    return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, repeat))


def active_repeat_data(entry, label, seed, repeat, start, pool=None, standardize=False, base_dir="."):
    """``(X_start, y_start, X_pool, y_pool, loop_seed)`` of one repeat of an active spec.

    The data is loaded with the child seed (seed, label, SEED_DATA) spawned once more with
    key ``repeat`` (a synthetic entry: a fresh sample per repeat); a generator seeded with
    (seed, label, SEED_SPLITS, repeat) draws a permutation of the rows, whose first
    ``start`` rows are the start set and the next ``pool`` (all others if None) the pool,
    and then the loop's seed, ``integers(2**63)``. ``standardize``: features scaled with
    the mean and std of the start set and pool rows (no labels used). ``y`` are class codes."""
    ds = load_dataset(entry, seed=_repeat_seed(seed, label, SEED_DATA, repeat), base_dir=base_dir)
    rng = np.random.default_rng(_repeat_seed(seed, label, SEED_SPLITS, repeat))
    order = rng.permutation(ds.n_samples)
    first = order[:start]
    rest = order[start:] if pool is None else order[start : start + pool]
    X = ds.X
    if standardize:
        used = np.concatenate([first, rest])
        X = apply_standardizer(fit_standardizer(X[used]), X, f"'{label}'")
    return X[first], ds.y[first], X[rest], ds.y[rest], int(rng.integers(2**63))


# The parameters that size the shared graphs for a class that does not declare its own
# (``_neighbor_counts``): an estimator from outside knnx that opts in to the store takes
# ``k`` or ``k_max`` of it (not ``n_neighbors``: validation checks no graph memory for it).
GRAPH_WIDTH_FOREIGN = ("k", "k_max")


def graph_widths(vspec):
    """Per dataset index, the largest neighbour count any cell asks (its estimator's
    :func:`knnx.estimators.registry.neighbor_counts`; a tuned cell's whole grid): the
    width at which a run computes each neighbour graph once (see knnx.neighbors.graphs)."""
    classes = [ref.cls for ref in vspec.algorithms]
    out = {}
    for c in vspec.cells:
        cls = classes[c.algorithm_index] if classes else None
        counts = neighbor_counts(cls, c.params, foreign=GRAPH_WIDTH_FOREIGN)
        out[c.dataset_index] = max([out.get(c.dataset_index, 0), *counts])
    return out
