"""The neighbour searches of the weighted descent (CW, PW, CPW): the full search of every
epoch, and the certified candidate lists that give the same neighbours for less work.

Both return, for weights (W, v), each training row's nearest same-class and
different-class prototype and their dissimilarities, bit for bit alike.
:class:`CertifiedSearch` keeps per row a list of ``LIST_LENGTH`` candidates of each kind
and lower bounds on the dissimilarities of the prototypes outside them, per class,
under the weights of a *reference* (the weights of the row's last search). Under new
weights the candidates are computed exactly and the bounds carried over by how far the
weights moved (the certificate is in :mod:`knnx._kernels.weighted_lists`); when every
bound is strictly above the best candidate, that candidate is the nearest. A row whose
bound fails for some classes has those classes searched again, and the current
weights become its reference. At most ``MAX_REFERENCES`` references are live; when a
new one is needed and none is free, the rows of the one with the fewest rows have their
bounds carried over to the current weights. When more than ``REFRESH_FRACTION`` of the
rows fail, or at the first call, every row is searched in full.

Memory: O(n (2 L + C + MAX_REFERENCES)) beside the data, for n rows and C classes.
"""

import numpy as np

from knnx import _kernels as kernels
from knnx._kernels import lazy

K = lazy("knnx._kernels.weighted")
KL = lazy("knnx._kernels.weighted_lists")

# Chosen on letter (16 000 x 16, 26 classes), satimage (4 435 x 36, 6) and dna
# (2 000 x 180, 3), CW for 100 epochs (benchmarks/weighted.py --lists --epochs 100), seconds
# with lists / with the full search at every epoch: list length 8 gave 15.3 s (letter,
# 4 references), 16: 14.2 / 88.4 (letter), 2.5 / 12.6 (satimage), 32: 17.8, 64: 21.9 (letter);
# the per-class bounds and the repair of failing classes (MAX_REFERENCES 64) brought
# letter to 10.3 / 85.2, satimage 2.1 / 12.5, dna 3.2 / 11.4. With 4 or 8 references
# and the rows of a given-up reference searched again, letter took 16 s.
LIST_LENGTH = 16
# The descent uses the lists when a full search's work n^2 m reaches this; below it the
# lists' fixed cost per epoch (bounds, tables) exceeds what they save. One thread, CW,
# ms per epoch full / lists: vehicle (m = 18) n = 400: 1.39 / 1.43, 800: 4.9 / 4.1;
# german (m = 61) n = 200: 0.83 / 1.29, 400: 3.1 / 2.5, 800: 11.2 / 4.5.
LISTS_MIN_WORK = 10_000_000
# A kernel runs on the calling thread below this many element operations: launching a
# parallel kernel costs 0.2-0.5 ms here. The LOO search (n^2 m) of 400 x 18 took 0.93 ms
# parallel / 1.11 ms serial, 200 x 18: 0.61 / 0.38, 800 x 18: 3.1 / 4.2 (2 cores).
PARALLEL_MIN_WORK = 3_000_000
MAX_REFERENCES = 8
REFRESH_FRACTION = 0.5


def launch(kernel, n_units, work, *args):
    """:func:`knnx._kernels.launch` with the threshold PARALLEL_MIN_WORK."""
    kernels.launch(kernel, n_units, work, PARALLEL_MIN_WORK, *args)


def _blocks(n_rows):
    """Query blocks (of QUERY_BLOCK rows) covering ``n_rows`` rows."""
    return -(-n_rows // K.QUERY_BLOCK)


class Prototypes:
    """Training rows sorted by class with their scaled, feature-major copy for one (W, v)."""

    def __init__(self, X, y_codes, n_classes):
        self.X, self.y = X, y_codes
        self.order = np.argsort(y_codes, kind="stable").astype(np.intp)
        counts = np.bincount(y_codes, minlength=n_classes)
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)

    def prepare(self, W, v):
        self.W = np.ascontiguousarray(W, dtype=np.float64)
        self.v = np.ascontiguousarray(v, dtype=np.float64)
        self.PT = K.scaled_prototypes(self.X, self.y, self.W, self.order)
        self.v_sorted = np.ascontiguousarray(self.v[self.order])
        return self

    def same_diff(self, l1):
        n = len(self.y)
        same, diff = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
        d_same, d_diff = np.empty(n), np.empty(n)
        n_features = self.X.shape[1]
        sorted_protos = (self.PT, self.v_sorted, self.order, self.starts)
        args = (self.X, self.y, self.W, *sorted_protos, l1, same, diff, d_same, d_diff)
        launch(K.same_diff_neighbors, _blocks(n), n * n * n_features, *args)
        return same, diff, d_same, d_diff

    def lists(self, l1, rows, size):
        """The ``size`` nearest same- and different-class prototypes of ``rows`` (sorted)."""
        r = len(rows)
        ind_s, ind_d = np.empty((r, size), dtype=np.intp), np.empty((r, size), dtype=np.intp)
        dist_s, dist_d = np.empty((r, size)), np.empty((r, size))
        class_min = np.empty((r, len(self.starts) - 1))
        finite = np.empty(r, dtype=np.bool_)
        sorted_protos = (self.PT, self.v_sorted, self.order, self.starts)
        args = (
            self.X,
            self.y,
            self.W,
            *sorted_protos,
            l1,
            rows,
            ind_s,
            dist_s,
            ind_d,
            dist_d,
            class_min,
            finite,
        )
        launch(KL.nearest_lists, _blocks(r), r * self.X.shape[0] * self.X.shape[1], *args)
        return ind_s, dist_s, ind_d, dist_d, class_min, bool(finite.all())

    def k_nearest(self, Q, k, l1):
        ind = np.empty((Q.shape[0], k), dtype=np.intp)
        dist = np.empty((Q.shape[0], k))
        work = Q.shape[0] * self.X.shape[0] * self.X.shape[1]
        sorted_protos = (self.PT, self.v_sorted, self.order, self.starts)
        launch(K.k_nearest, _blocks(Q.shape[0]), work, Q, self.W, *sorted_protos, k, l1, ind, dist)
        return ind, dist


class FullSearch:
    """Every row searched in full at every evaluation (the reference behaviour)."""

    def __init__(self, protos, l1):
        self.protos, self.l1 = protos, l1
        self.last_fraction = 1.0

    def same_diff(self, W, v):
        return self.protos.prepare(W, v).same_diff(self.l1)

    def copy(self):
        return FullSearch(self.protos, self.l1)


def _class_reduce(ufunc, values, protos):
    """Per class (last axis), ``ufunc`` reduced over the class's rows of ``values`` (..., n);
    classes without rows get inf (min) or 0 (max)."""
    n_classes = len(protos.starts) - 1
    fill = np.inf if ufunc is np.minimum else 0.0
    out = np.full(values.shape[:-1] + (n_classes,), fill)
    present = protos.starts[1:] > protos.starts[:-1]
    if present.any():
        out[..., present] = ufunc.reduceat(values[..., protos.order], protos.starts[:-1][present], axis=-1)
    return out


def _slack(W, v):
    """4 * 2^-52 * max|W| * max|v|: times |x| + max_p |p|, it bounds the rounding error of
    a computed sqrt(D) (see knnx._kernels.weighted_lists)."""
    return 4.0 * KL.EPS * float(np.abs(W).max(initial=0.0)) * float(np.abs(v).max(initial=0.0))


class CertifiedSearch:
    """Exact same- and different-class nearest prototypes through candidate lists (see
    the module). ``last_fraction`` is the fraction of rows the last call searched in full."""

    def __init__(self, protos, l1, list_length=LIST_LENGTH):
        self.protos, self.l1, self.size = protos, l1, list_length
        X = protos.X
        norms = np.abs(X).sum(axis=1) if l1 else np.sqrt(np.einsum("ij,ij->i", X, X))
        self.norms = norms + norms.max(initial=0.0)
        n = len(X)
        self.cand_s = np.full((n, list_length), -1, dtype=np.intp)
        self.cand_d = np.full((n, list_length), -1, dtype=np.intp)
        n_classes, m = len(protos.starts) - 1, X.shape[1]
        self.root_s = np.zeros(n)
        self.root_d = np.zeros((n, n_classes))
        self.slot = np.zeros(n, dtype=np.intp)
        self.refs = []  # (W, v) per slot, None when free
        # per slot: the reference weights, max_p |v_r,p| per class and the rounding slack
        self.W_ref = np.ones((MAX_REFERENCES, n_classes, m))
        self.v_ref = np.ones((MAX_REFERENCES, n))
        self.vmax = np.ones((MAX_REFERENCES, n_classes))
        self.slack_ref = np.zeros(MAX_REFERENCES)
        Xs = X[protos.order]
        present = protos.starts[1:] > protos.starts[:-1]
        self.lo, self.hi = np.zeros((n_classes, m)), np.zeros((n_classes, m))
        if present.any():
            self.lo[present] = np.minimum.reduceat(Xs, protos.starts[:-1][present], axis=0)
            self.hi[present] = np.maximum.reduceat(Xs, protos.starts[:-1][present], axis=0)
        self.g = (m + 10) * KL.EPS
        self.x_max, self.n_features = float(np.abs(X).max(initial=0.0)), m
        self.last_fraction = 1.0

    def copy(self):
        other = CertifiedSearch.__new__(CertifiedSearch)
        other.__dict__.update(self.__dict__)
        for name in ("cand_s", "cand_d", "root_s", "root_d", "slot", "W_ref", "v_ref", "vmax", "slack_ref"):
            setattr(other, name, getattr(self, name).copy())
        other.refs = list(self.refs)
        return other

    def same_diff(self, W, v):
        W = np.ascontiguousarray(W, dtype=np.float64)
        v = np.ascontiguousarray(v, dtype=np.float64)
        n = len(self.protos.y)
        if not self._finite(W, v):
            return self._fallback(W, v)
        if not self.refs:
            return self._refresh(W, v)
        out = self._certify(W, v)
        if out is None:
            return self._fallback(W, v)
        same, diff, d_same, d_diff, ok = out
        failed = np.flatnonzero(ok == 0).astype(np.intp)
        if len(failed) > REFRESH_FRACTION * n:
            return self._refresh(W, v)
        self.last_fraction = 0.0
        if len(failed):
            self._repair(W, v, failed, same, diff, d_same, d_diff)
        return same, diff, d_same, d_diff

    def _repair(self, W, v, failed, same, diff, d_same, d_diff):
        """Rows whose certificate failed: their failing classes are searched again and
        their lists and bounds made relative to (W, v), which becomes their reference
        (see ``knnx._kernels.weighted_lists.repair``); the rows of a reference given up
        for it keep their lists, their bounds carried over to (W, v)."""
        slot, victims = self._new_slot()
        victims = np.setdiff1d(victims, failed).astype(np.intp)
        lb = self._bounds(failed)
        lb_victims = self._bounds(victims)
        protos = self.protos.prepare(W, v)
        scanned = np.zeros(len(failed), dtype=np.intp)
        work = int(scanned.size) * len(protos.y) * protos.X.shape[1]  # at most
        launch(
            KL.repair,
            len(failed),
            work,
            protos.X,
            protos.y,
            W,
            v,
            self._P,
            protos.PT,
            protos.v_sorted,
            protos.order,
            protos.starts,
            self.l1,
            failed,
            lb,
            d_same.copy(),
            d_diff.copy(),
            self.g,
            self.cand_s,
            self.cand_d,
            self.root_s,
            self.root_d,
            same,
            diff,
            d_same,
            d_diff,
            scanned,
        )
        if len(victims):
            own = protos.y[victims]
            self.root_s[victims] = lb_victims[np.arange(len(victims)), own]
            lb_victims[np.arange(len(victims)), own] = np.inf
            self.root_d[victims] = lb_victims
        n = len(protos.y)
        self.last_fraction = float(scanned.sum()) / (n * n)
        self._assign(slot, np.concatenate([failed, victims]), W, v)

    def _bounds(self, rows):
        """The bounds of ``row_bounds`` for ``rows`` under this evaluation's tables."""
        out = np.empty((len(rows), self.root_d.shape[1]))
        if len(rows):
            work = len(rows) * out.shape[1] * self.protos.X.shape[1]
            launch(
                KL.row_bounds,
                len(rows),
                work,
                self.protos.X,
                self.protos.y,
                rows,
                self.root_s,
                self.root_d,
                self.slot,
                *self._tables,
                out,
            )
        return out

    def _new_slot(self):
        """A slot for the current weights: a free one, a new one below MAX_REFERENCES, or
        the one with the fewest rows (returned too: their bounds are carried over)."""
        free = [s for s, ref in enumerate(self.refs) if ref is None]
        if free:
            return free[0], np.empty(0, dtype=np.intp)
        if len(self.refs) < MAX_REFERENCES:
            self.refs.append(None)
            return len(self.refs) - 1, np.empty(0, dtype=np.intp)
        victim = int(np.argmin(np.bincount(self.slot, minlength=len(self.refs))))
        return victim, np.flatnonzero(self.slot == victim).astype(np.intp)

    def _assign(self, slot, rows, W, v):
        """(W, v) becomes reference ``slot`` of ``rows``; references left without rows are freed."""
        self.refs[slot] = (W, v)
        self.slot[rows] = slot
        self.W_ref[slot], self.v_ref[slot], self.slack_ref[slot] = W, v, _slack(W, v)
        self.vmax[slot] = _class_reduce(np.maximum, np.abs(v), self.protos)
        live = np.bincount(self.slot, minlength=len(self.refs))
        self.refs = [ref if live[s] else None for s, ref in enumerate(self.refs)]

    def _finite(self, W, v):
        """Whether every dissimilarity under (W, v) is certainly finite: |w x - w p| <=
        2 max|W| max|X| per feature, so D <= m (2 max|W| max|X| max|v|)^2 < 1e300. When it
        may not be, the full search decides (its handling of inf and nan is the reference)."""
        with np.errstate(over="ignore", invalid="ignore"):
            bound = 2.0 * float(np.abs(W).max(initial=0.0)) * self.x_max * float(np.abs(v).max(initial=0.0))
            return bool(self.n_features * bound * bound < 1e300)

    def _certify(self, W, v):
        """The certified candidates' results, or None when a value is not finite."""
        protos = self.protos
        S = len(self.refs)
        W_ref, v_ref = self.W_ref[:S], self.v_ref[:S]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            nonzero = W_ref != 0
            ratio = np.abs(W[None] / np.where(nonzero, W_ref, 1.0))
            rw = np.where(nonzero, ratio, np.inf).min(axis=2)
            a = np.where(nonzero, ratio * ratio, 0.0)
            v_ratio = np.where(v_ref != 0, np.abs(v[None] / np.where(v_ref != 0, v_ref, 1.0)), 0.0)
        a_order = np.argsort(a, axis=2, kind="stable").astype(np.intp)
        a_sorted = np.take_along_axis(a, a_order, axis=2)
        rv = _class_reduce(np.minimum, v_ratio, protos)
        self._tables = (
            rw,
            rv,
            self.vmax[:S],
            a_sorted,
            a_order,
            np.ascontiguousarray(W_ref),
            self.lo,
            self.hi,
            self.slack_ref[:S],
            _slack(W, v),
            self.norms,
            self.g,
            self.l1,
        )
        self._P = W[protos.y] * protos.X
        n = len(protos.y)
        same, diff = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
        d_same, d_diff = np.empty(n), np.empty(n)
        ok = np.empty(n, dtype=np.int8)
        work = n * 2 * self.size * protos.X.shape[1]
        launch(
            KL.certified_nearest,
            n,
            work,
            protos.X,
            protos.y,
            W,
            v,
            self._P,
            self.cand_s,
            self.cand_d,
            self.root_s,
            self.root_d,
            self.slot,
            *self._tables,
            same,
            diff,
            d_same,
            d_diff,
            ok,
        )
        if (ok < 0).any():
            return None
        return same, diff, d_same, d_diff, ok

    def _refresh(self, W, v):
        """Search every row in full under (W, v), with lists; (W, v) becomes the single
        reference. Returns (same, diff, d_same, d_diff)."""
        n = len(self.protos.y)
        rows = np.arange(n, dtype=np.intp)
        ind_s, dist_s, ind_d, dist_d, class_min, finite = self.protos.prepare(W, v).lists(
            self.l1, rows, self.size + 1
        )
        if not finite:  # not reached after _finite; the full search decides
            self.refs = []
            return self._fallback(W, v)
        L = self.size
        self.cand_s[:], self.cand_d[:] = ind_s[:, :L], ind_d[:, :L]
        self.root_s[:] = np.sqrt(np.where(ind_s[:, L] >= 0, dist_s[:, L], np.inf))
        thr_d = np.where(ind_d[:, L] >= 0, dist_d[:, L], np.inf)
        # class c's prototypes outside the list are at D_r >= thr_d and >= class c's nearest
        self.root_d[:] = np.sqrt(
            np.where(ind_d[:, L, None] >= 0, np.maximum(thr_d[:, None], class_min), np.inf)
        )
        self.refs = [None]
        self.slot[:] = 0
        self._assign(0, rows, W, v)
        self.last_fraction = 1.0
        return ind_s[:, 0], ind_d[:, 0], dist_s[:, 0], dist_d[:, 0]

    def _fallback(self, W, v):
        """A non-finite dissimilarity: the full search decides (its result is the reference)."""
        self.last_fraction = 1.0
        return self.protos.prepare(W, v).same_diff(self.l1)
