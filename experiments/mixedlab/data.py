"""A loader of one's own for experiments/publishable.yaml: a synthetic shop's
returns, three attributes (colour: 3 categories, shape: 2 categories, both given as
category codes, and a numeric size), 400 rows, two classes, and a 10-fold partition
of its own (rows dealt to folds in a seeded random order). Written as a researcher
would write their loader: a function returning a knnx Dataset."""

from dataclasses import replace

import numpy as np

from knnx.datasets import make_dataset


def load_returns(n=400, seed=0):
    """The returns data: ``returned`` is likelier for colour 2, shape 1 and large
    sizes; 15 % of the labels flipped."""
    rng = np.random.default_rng(seed)
    colour = rng.integers(0, 3, n)
    shape = rng.integers(0, 2, n)
    size = rng.normal(size=n)
    score = 1.2 * (colour == 2) + 0.8 * shape + size
    y = ((score > 0.9) ^ (rng.random(n) < 0.15)).astype(np.int64)
    X = np.column_stack([colour, shape, size]).astype(np.float64)
    ds = make_dataset(
        "returns", X, y, np.array(["kept", "returned"], dtype=object), ["colour", "shape", "size"]
    )
    folds = np.empty(n, dtype=np.int64)
    folds[rng.permutation(n)] = np.arange(n) % 10
    return replace(ds, nominal=(0, 1), partitions={"10-fold": folds})
