"""The seeds of a run: every random stream (a dataset's generated data, its splits, the
inner folds that tune an algorithm) is a child of the spec's ``seed``, keyed by the
dataset's label and the purpose, so no stream depends on the order of the spec's
entries or on another stream."""

import hashlib

import numpy as np

# Purposes of the child seeds of one dataset.
SEED_DATA, SEED_SPLITS, SEED_TUNE = 0, 1, 2


def _label_word(label):
    """A stable 32-bit hash of a dataset's label."""
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")


def dataset_seedseq(seed, label, purpose):
    """Child seed of the spec's ``seed`` for one dataset and one purpose.

    ``spawn_key = (word, purpose)`` where ``word`` is a stable 32-bit hash of the
    dataset's label, so seeds do not depend on the order of datasets in the spec,
    and generating data (SEED_DATA) and drawing splits (SEED_SPLITS) use
    independent streams. Repeat r of a protocol draws from the r-th child of the
    splits stream (see knnx.evaluation.protocols).
    """
    return np.random.SeedSequence(seed, spawn_key=(_label_word(label), purpose))


def tune_seed(seed, label, repeat, fold):
    """The ``random_state`` of the inner folds that tune an algorithm on one training part
    (repeat, fold) of dataset ``label``: an int from the spec's seed, independent of the
    data and split streams."""
    seq = np.random.SeedSequence(seed, spawn_key=(_label_word(label), SEED_TUNE, repeat, fold))
    return int(seq.generate_state(1)[0])
