"""The common base of the leveraged nearest-neighbour classifiers, UNN and GNNB.

Both learn one coefficient alpha_jc per (training example, class) by boosting on the
leave-one-out neighbour graph, one class against the rest (two classes: class 1 is
trained and class 0 mirrors it, alpha_j0 = alpha_j1 and h_0 = -h_1), and predict
with the leveraged k-NN rule h_c(x) = sum over j in NN_k(x) of alpha_jc y_jc. What
they share lives here: the class order used for ties, the lazy chooser's order,
the neighbour graph handed to the kernels, the search sets used at prediction and
the vote.

The neighbours (the training graph and the search at prediction) are ranked under the
estimator's fitted metric (``metric_``, see :mod:`knnx.estimators.base`); GNNB fits one
per feature block. With ``metric="precomputed"`` the search sets are the columns of
the distance matrices: the rows kept at prediction select the query columns too.
"""

import numpy as np

from knnx._kernels import Codes, lazy
from knnx.estimators.base import NeighborsClassifierBase
from knnx.neighbors.search import reciprocal_neighbors

L = lazy("knnx._kernels.leveraged")


PROTOTYPES = ("all", "leveraged")
TIES = Codes(L, frequent="TIE_FREQUENT", nearest="TIE_NEAREST", lowest="TIE_LOWEST", random="TIE_RANDOM")


class LeveragedNNClassifier(NeighborsClassifierBase):
    """Shared fit preparation and prediction of :class:`knnx.UNNClassifier` and
    :class:`knnx.GNNBClassifier` (not registered itself).

    Subclasses store ``k``, ``chooser``, ``prototypes``, ``tie`` and ``seed``, fit
    ``alpha_`` and call :meth:`_set_search_sets` with one (features, alpha) pair per
    feature block.
    """

    def _prepare_fit(self, y_codes, n_iter, snap_at=()):
        """Per-fit constants: the training tie order (classes by decreasing frequency,
        then code), the classes trained and the kernels' Schedule."""
        m = len(y_codes)
        n_classes = len(self.classes_)
        counts = np.bincount(y_codes, minlength=n_classes)
        self._tie_order = np.lexsort((np.arange(n_classes), -counts)).astype(np.intp)
        if self.seed is None:
            order = np.arange(m, dtype=np.intp)
        else:
            order = np.random.default_rng(self.seed).permutation(m).astype(np.intp)
        train_classes = np.array([1] if n_classes == 2 else range(n_classes), dtype=np.intp)
        schedule = L.Schedule(int(n_iter), self.chooser == "lazy", order, np.asarray(snap_at, dtype=np.intp))
        return train_classes, schedule

    def _graph(self, X, metric=None):
        """The leave-one-out k-NN graph of the training rows X (under ``metric``, a fitted
        Metric; default ``metric_``) and its reciprocal CSR."""
        _, nbr = self._kneighbors(X, self.k, metric=metric)
        rptr, rind = reciprocal_neighbors(nbr, X.shape[0])
        return L.Graph(nbr, rptr, rind)

    def _mirror(self, a):
        """(m, n_trained) kernel output to (m, n_classes): with two classes class 0
        mirrors class 1."""
        return np.column_stack([a[:, 0], a[:, 0]]) if len(self.classes_) == 2 else a

    def _set_search_sets(self, blocks, y_codes):
        """Per block (features of the training rows, alpha (m, n_classes), the block's
        fitted metric or None for ``metric_``): the rows searched at prediction
        (``prototypes="all"``: every training row, those with alpha = 0 taking a
        neighbour slot and voting 0; ``"leveraged"``: the rows with a non-zero
        leveraging vector in that block), their codes and alpha, the query columns
        they are (precomputed distances: those rows' columns, else None: every
        column) and the metric; and the prototypes (rows with a non-zero leveraging
        vector in some block) and their fraction, whichever rows are searched."""
        m = len(y_codes)
        kept = np.zeros(m, dtype=bool)
        self._search = []
        for Xb, alpha, metric in blocks:
            metric = self.metric_ if metric is None else metric
            leveraged = np.flatnonzero(np.any(alpha != 0.0, axis=1))
            kept[leveraged] = True
            rows = np.arange(m) if self.prototypes == "all" else leveraged
            cols = None
            ref = Xb[rows]
            if metric.name == "precomputed" and self.prototypes != "all":
                cols = rows
                ref = ref[:, rows]
            self._search.append(
                (
                    np.ascontiguousarray(ref),
                    np.ascontiguousarray(y_codes[rows]),
                    np.ascontiguousarray(alpha[rows]),
                    cols,
                    metric,
                )
            )
        self.prototypes_ = np.flatnonzero(kept)
        self.prototype_fraction_ = len(self.prototypes_) / m
        self.reported_ = {"prototype_fraction": float(self.prototype_fraction_)}

    def _search_scores(self, Xq, b, with_classes=False):
        """h on the queries Xq (block b's features) from block b's search set: shape
        (n, n_classes), all 0 when the search set is empty; with ``with_classes`` also
        the class codes of the neighbours searched, (n, n_neighbours), nearest first."""
        n_classes = len(self.classes_)
        ref_X, ref_y, ref_alpha, cols, metric = self._search[b]
        if len(ref_y) == 0:
            h = np.zeros((Xq.shape[0], n_classes))
            return (h, np.zeros((Xq.shape[0], 0), dtype=np.intp)) if with_classes else h
        if cols is not None:
            Xq = np.ascontiguousarray(Xq[:, cols])
        _, ind = self._kneighbors(ref_X, min(self.k, len(ref_y)), Xq, metric=metric)
        alpha = ref_alpha[:, 1:] if n_classes == 2 else ref_alpha
        h = L.leveraged_scores(ind, np.ascontiguousarray(alpha), ref_y, n_classes, n_classes == 2)
        return (h, ref_y[ind]) if with_classes else h

    def _vote(self, scores, neigh_class):
        """argmax_c of the scores, ties by the rule ``tie`` (see the class docstring)."""
        n = scores.shape[0]
        draws = np.random.default_rng(0 if self.seed is None else self.seed).random(n)
        codes = L.predict_with_ties(
            np.ascontiguousarray(scores),
            TIES[self.tie],
            self._tie_order,
            np.ascontiguousarray(neigh_class, dtype=np.intp),
            draws if self.tie == "random" else np.empty(0),
        )
        return self.classes_[codes]
