"""Evaluation protocols as seeded split generators.

Each protocol maps (dataset, seed sequence, parameters) to a list of
:class:`Split` (repeat, fold, train indices, test indices), indices sorted.
Repeat r draws from ``SeedSequence(entropy, spawn_key=(*key, r))`` where
``(entropy, key)`` is the dataset's splits seed (see ``knnx.spec.dataset_seedseq``),
so one repeat's split does not depend on how many others there are. Protocols other than ``predefined`` use all
rows of a dataset, ignoring any predefined split. ``lpo`` is not a sampler: its
one split holds every row, and the runner replaces fit/predict by the exact
leave-p-out estimate (eq. 1 of Celisse & Mary-Huard 2011).

Stratification (kfold, holdout): within each class the rows are shuffled; the
classes are then laid end to end in class order and position p goes to fold
``p mod folds``, which balances every class across folds and fold sizes overall.
"""

from dataclasses import dataclass

import numpy as np

from knnx.errors import SpecError


@dataclass(frozen=True, eq=False)
class Split:
    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray


def _rng(seedseq, repeat):
    """Generator of repeat r: SeedSequence(entropy, spawn_key=(*parent key, r)), stateless."""
    return np.random.default_rng(
        np.random.SeedSequence(seedseq.entropy, spawn_key=(*seedseq.spawn_key, repeat))
    )


def _stratified_order(y, rng):
    parts = [rng.permutation(np.flatnonzero(y == c)) for c in np.unique(y)]
    return np.concatenate(parts)


def predefined(dataset, seedseq):
    """The dataset's own train/test split (one split, repeat 0, fold 0)."""
    if dataset.split is None:
        raise SpecError(
            f"protocol.kind predefined: dataset '{dataset.name}' has no predefined train/test split; "
            "use holdout, kfold, 5x2 or subsample"
        )
    train, test = dataset.split
    return [Split(0, 0, np.sort(train), np.sort(test))]


def partitions(dataset, seedseq, scheme="10-fold"):
    """The source's own partition ``scheme`` (KEEL's ``10-fold``): fold f tests the
    rows the source puts in its f-th test file and trains on the others (repeat 0).
    SpecError if a fold tests no row or trains on none."""
    if scheme not in dataset.partitions:
        have = ", ".join(dataset.partitions) or "none"
        split = "; its predefined train/test split is protocol: {kind: predefined}" if dataset.split else ""
        raise SpecError(
            f"protocol.kind partitions: dataset '{dataset.name}' has no {scheme} partition from its source "
            f"(it has: {have}{split}); filter the suite with has_partitions: {scheme}, or use kfold"
        )
    fold_of = dataset.partitions[scheme]
    k = int(scheme.split("-")[0])
    splits = [Split(0, f, np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in range(k)]
    for s in splits:  # rows dropped for their missing values may leave a fold without any
        for part, what in ((s.test, "tests"), (s.train, "trains on")):
            if len(part) == 0:
                raise SpecError(
                    f"protocol.kind partitions: fold {s.fold} of the {scheme} partition of dataset "
                    f"'{dataset.name}' {what} no row; use kfold"
                )
    return splits


def kfold(dataset, seedseq, folds=5, repeats=1, stratified=True, where="protocol.folds"):
    """k-fold cross-validation, repeated ``repeats`` times with fresh shuffles; ``where``
    names what set the folds in a refusal (5x2's are its kind's)."""
    y = dataset.y
    n = len(y)
    if folds > n:
        raise SpecError(f"{where}: {folds} folds for dataset '{dataset.name}' with only {n} rows")
    if stratified:
        counts = np.bincount(y)
        c = int(np.argmin(counts))
        if counts[c] < folds:
            raise SpecError(
                f"{where}: {folds} stratified folds need at least {folds} rows per class; class "
                f"'{dataset.classes[c]}' of dataset '{dataset.name}' has {counts[c]}"
            )
    splits = []
    for r in range(repeats):
        rng = _rng(seedseq, r)
        order = _stratified_order(y, rng) if stratified else rng.permutation(n)
        fold_of = np.empty(n, dtype=np.intp)
        fold_of[order] = np.arange(n) % folds
        for f in range(folds):
            splits.append(Split(r, f, np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)))
    return splits


def five_by_two(dataset, seedseq):
    """5x2 cross-validation (Dietterich 1998): five repeats of stratified 2-fold."""
    return kfold(dataset, seedseq, folds=2, repeats=5, stratified=True, where="protocol.kind 5x2")


def holdout(dataset, seedseq, test_size=0.3, repeats=1, stratified=True):
    """Random train/test partitions; ``test_size`` is the test fraction.

    Stratified: each class contributes ``round(test_size * n_c)`` test rows, at
    least one training row kept per class. Otherwise ``round(test_size * n)`` rows.
    """
    y = dataset.y
    n = len(y)
    splits = []
    for r in range(repeats):
        rng = _rng(seedseq, r)
        if stratified:
            test_parts = []
            for c in np.unique(y):
                idx = rng.permutation(np.flatnonzero(y == c))
                n_test = min(int(round(test_size * len(idx))), len(idx) - 1)
                test_parts.append(idx[:n_test])
            test = np.sort(np.concatenate(test_parts))
        else:
            test = np.sort(rng.permutation(n)[: int(round(test_size * n))])
        if len(test) == 0 or len(test) == n:
            raise SpecError(
                f"protocol.test_size: {test_size} leaves an empty part of dataset '{dataset.name}'"
            )
        mask = np.ones(n, dtype=bool)
        mask[test] = False
        splits.append(Split(r, 0, np.flatnonzero(mask), test))
    return splits


def subsample(dataset, seedseq, train_per_class=30, repeats=10):
    """``train_per_class`` random training rows per class; all other rows are the test part."""
    y = dataset.y
    splits = []
    counts = np.bincount(y)
    if counts.min() <= train_per_class:
        c = int(np.argmin(counts))
        raise SpecError(
            f"protocol.train_per_class: {train_per_class} per class needs more rows; class "
            f"'{dataset.classes[c]}' of dataset '{dataset.name}' has {counts[c]}"
        )
    for r in range(repeats):
        rng = _rng(seedseq, r)
        train = np.sort(
            np.concatenate(
                [rng.permutation(np.flatnonzero(y == c))[:train_per_class] for c in range(len(counts))]
            )
        )
        mask = np.ones(len(y), dtype=bool)
        mask[train] = False
        splits.append(Split(r, 0, train, np.flatnonzero(mask)))
    return splits


def leave_p_out(dataset, seedseq, p=10):
    """All rows as one "split" (empty test part): the runner computes the exact
    leave-p-out estimate over all C(n, p) splits in closed form (knnx.lpo.risk)."""
    n = len(dataset.y)
    if p >= n:
        raise SpecError(f"protocol.p: {p} must be below the {n} rows of dataset '{dataset.name}'")
    return [Split(0, 0, np.arange(n), np.arange(0))]


PROTOCOLS = {
    "predefined": predefined,
    "partitions": partitions,
    "holdout": holdout,
    "kfold": kfold,
    "5x2": five_by_two,
    "subsample": subsample,
    "lpo": leave_p_out,
}


def make_splits(dataset, seedseq, kind, **params):
    """Splits of ``dataset`` under protocol ``kind`` with its parameters."""
    return PROTOCOLS[kind](dataset, seedseq, **params)
