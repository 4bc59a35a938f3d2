"""Prototype generation: new rows, not training rows, that a kNN classifies with
(Kohonen's learning vector quantisation).

A generation is an imbalanced-learn-style sampler too: ``fit_resample(X, y)`` returns
the prototypes and their classes (``prototypes_``, ``prototype_labels_``), rows in X's
columns, so a classifier after it reads the dataset's columns. It works on numeric
attributes under the Euclidean distance, as Kohonen defines it: a nominal attribute
or a missing value is refused (in a spec, at validation: give it one-hot indicators).
"""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from knnx._kernels import lazy
from knnx.estimators.params import AnyOf, Interval, Literal, Options, check_params
from knnx.limits import MAX_SEED, MAX_UPDATES

L = lazy("knnx._kernels.lvq")

_VARIANTS = {"lvq1": "LVQ1", "lvq2.1": "LVQ21", "lvq3": "LVQ3"}


class LVQ(BaseEstimator):
    """Kohonen's learning vector quantisation (Kohonen 1990, "The self-organizing map";
    Kohonen 2001, *Self-Organizing Maps*, ch. 6): LVQ1, LVQ2.1 and LVQ3.

    1. The codebook: ``round(fraction * n)`` prototypes (one per class at least),
       shared among the classes in proportion to their rows (largest remainders, each
       class at most its rows), each class's started on its own rows drawn at random.
    2. ``n_iter`` updates, the rows presented in random order (a fresh permutation each
       time through them), at the learning rate alpha0 (1 - t / n_iter) for the t-th.
       With m1, m2 the nearest and second nearest prototypes of x (squared Euclidean,
       ties by prototype index):

       * ``lvq1``: m1 moves towards x by the rate if its class is x's, away otherwise;
       * ``lvq2.1``: when exactly one of m1, m2 is of x's class and x falls in the
         window, min(d1/d2, d2/d1) > s with s = (1 - window) / (1 + window) (Euclidean
         distances), that one moves towards x and the other away;
       * ``lvq3``: as ``lvq2.1``, and when both are of x's class, both move towards x
         by ``epsilon`` times the rate.

    The choices the sources leave open, and knnx's: the codebook's size and its share
    per class (above; Kohonen suggests equal shares or shares in proportion), its start
    (training rows of the class; LVQ_PAK picks rows kNN classifies correctly),
    ``n_iter`` (50 times the codebook's size: Kohonen's 30 to 50 for OLVQ1, more for
    LVQ1), ``alpha0`` = 0.1, ``window`` = 0.2 and ``epsilon`` = 0.1 (within Kohonen's
    ranges 0.2-0.3 and 0.1-0.5), the linear decay of the rate. Draws come from
    ``np.random.default_rng(random_state)``: each class's start rows in class order
    (``choice(n_c, m_c, replace=False)``), then the permutations.

    Parameters
    ----------
    variant : {"lvq1", "lvq2.1", "lvq3"}, default "lvq3"
    fraction : float in (0, 1], default 0.1
    n_iter : int in [1, 1000000] or None, default None (50 times the codebook's size; at most
        :data:`knnx.limits.MAX_UPDATES` when given)
    alpha0 : float in (0, 1], default 0.1
    window : float in (0, 1), default 0.2
    epsilon : float in (0, 1], default 0.1
    random_state : int or None, default None (counts as 0; the runner sets the seed)

    Attributes
    ----------
    prototypes_ : ndarray (m, d). prototype_labels_ : ndarray (m,), their classes (as
    given). start_indices_ : ndarray (m,), the rows each prototype started from.
    n_updates_ : int, the updates that moved a prototype.

    Notes
    -----
    KEEL's ``LVQ1``/``LVQ2_1``/``LVQ3`` keep the rate constant, take 100 (LVQ1) and 1,000
    (LVQ3) presentations of 10 % and 2 % of the rows, move the training rows themselves
    (the codebook shares their storage), and LVQ3's penalty uses epsilon times the rate
    (docs/reduction.md).
    """

    _parameter_constraints = {
        "variant": Options(*_VARIANTS),
        "fraction": Interval(0, 1, low_open=True),
        "n_iter": AnyOf(Interval(1, MAX_UPDATES, integer=True), Literal(None)),
        "alpha0": Interval(0, 1, low_open=True),
        "window": Interval(0, 1, low_open=True, high_open=True),
        "epsilon": Interval(0, 1, low_open=True),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
    }
    # A generation returns rows in X's columns: the classifier after it reads them.
    keeps_columns = True

    def __init__(
        self,
        variant="lvq3",
        fraction=0.1,
        n_iter=None,
        alpha0=0.1,
        window=0.2,
        epsilon=0.1,
        random_state=None,
    ):
        self.variant = variant
        self.fraction = fraction
        self.n_iter = n_iter
        self.alpha0 = alpha0
        self.window = window
        self.epsilon = epsilon
        self.random_state = random_state

    def fit_resample(self, X, y):
        """The prototypes and their classes (``prototypes_``, ``prototype_labels_``)."""
        check_params(type(self).__name__, self._parameter_constraints, self.get_params(), error=ValueError)
        X, y = validate_data(self, X, y, dtype=np.float64, order="C")
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        codes = codes.astype(np.intp)
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        counts = np.bincount(codes, minlength=len(classes))
        shares = allocate(counts, max(len(classes), int(round(self.fraction * len(codes)))))
        start = np.concatenate(
            [
                np.flatnonzero(codes == c)[rng.choice(counts[c], shares[c], replace=False)]
                for c in range(len(classes))
            ]
        )
        P, plab = X[start].copy(), np.ascontiguousarray(codes[start])
        n_iter = 50 * len(start) if self.n_iter is None else self.n_iter
        passes = -(-n_iter // len(codes))
        order = np.concatenate([rng.permutation(len(codes)) for _ in range(passes)])[:n_iter]
        s = (1 - self.window) / (1 + self.window)
        variant = getattr(L, _VARIANTS[self.variant])
        self.n_updates_ = L.lvq_train(P, plab, X, codes, order, self.alpha0, variant, s, self.epsilon)
        self.start_indices_ = start
        self.prototypes_, self.prototype_labels_ = P, classes[plab]
        return P, classes[plab]

    def fit(self, X, y):
        """:meth:`fit_resample`, returning self."""
        self.fit_resample(X, y)
        return self


def allocate(counts, total):
    """Prototypes per class: ``total`` shared in proportion to ``counts`` by largest
    remainders (ties to the lower class), each class one at least and its rows at most."""
    counts = np.asarray(counts, dtype=np.int64)
    exact = total * counts / counts.sum()
    shares = np.maximum(np.floor(exact).astype(np.int64), 1)
    for c in np.argsort(-(exact - np.floor(exact)), kind="stable"):
        if shares.sum() >= total:
            break
        shares[c] += 1
    return np.minimum(shares, counts)
