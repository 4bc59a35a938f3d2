"""Classification metrics: on predicted labels, on predicted probabilities, and against
the true posterior of synthetic data.

Every metric takes two arrays; :data:`METRIC_INPUT` says which:

* ``label`` — ``f(y_true, y_pred)``, integer class codes: ``error``, ``accuracy``,
  ``f1_macro``, ``recall_macro``, ``precision_macro``, ``balanced_accuracy``,
  ``g_mean``, ``mcc``. Macro averages run over the classes present in ``y_true`` or
  ``y_pred`` (as scikit-learn does by default); a class with no predicted (or no true)
  sample contributes 0 to precision (recall), and F1 is 0 when precision + recall is
  0. ``balanced_accuracy`` and ``g_mean`` average the recalls of the classes present
  in ``y_true`` only.
* ``proba`` — ``f(y_true, proba)``, ``proba`` of shape (n_samples, n_classes) with
  column c the estimated probability of class code c: ``log_loss``, ``brier``,
  ``f_measure_auc``, ``rejection_auc``, ``auc``. ``auc`` is the only metric that can
  be undefined (NaN): on a ``y_true`` of a single class.
* ``posterior`` — ``f(posterior, proba)``, both of shape (n_samples, n_classes),
  ``posterior`` the true class probabilities at the test points: ``sym_kl``, ``js``.

Probability rows must be finite, non-negative and sum to 1 within 1e-6 (else
ValueError). Logarithms are natural.

Posterior metrics (D'Ambrosio et al. 2012, Sec. 5.2, eqs. 28-30). The paper scores an
estimate p̂ of the posterior p by integrals over the input space,
``D_KL(p||p̂) = ∫ Pr[x] Σ_c p_c(x) ln(p_c(x) / p̂_c(x)) dx``, the symmetric
``½ (D_KL(p||p̂) + D_KL(p̂||p))`` (29) and the Jensen-Shannon
``½ (D_KL(p||m) + D_KL(p̂||m))``, m = (p + p̂)/2 (30), which it approximates on a
fine grid. knnx averages the pointwise divergence between the categorical
distributions p(x) and p̂(x) over the test points instead: they are drawn from
Pr[x] independently of the training part, so the test-set mean is an unbiased
Monte-Carlo estimate of the same integral (over the whole space, not only the
grid's region of sufficient mass).

Zeros: a term with a zero first argument is 0 (0 ln 0 = 0). Wherever a
distribution stands in the denominator of a KL term (p̂ in KL(p||p̂), p in
KL(p̂||p)) it is first clipped below at ``EPS`` = 1e-15 and its row renormalised,
so a class the estimate (or the truth) gives probability 0 costs a large but
finite amount; the true posterior can itself be exactly 0 (``celisse2011`` with
q = 0, Gaussian tails that underflow). Jensen-Shannon needs no clipping (m > 0
wherever p or p̂ is) and lies in [0, ln 2].
"""

import numpy as np

# Floor for probabilities inside a logarithm (log_loss, KL denominators).
EPS = 1e-15
# Thresholds of f_measure_auc and rejection_auc: the midpoints of 50 equal steps of (1/2, 1).
KAPPAS = 0.5 + (np.arange(50) + 0.5) / 100


def _confusion(y_true, y_pred):
    labels = np.union1d(y_true, y_pred)
    t = np.searchsorted(labels, y_true)
    p = np.searchsorted(labels, y_pred)
    cm = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(cm, (t, p), 1)
    return cm


def _prf(tp, pred_pos, true_pos):
    """Precision, recall and F1 per class from counts; 0 wherever undefined."""
    tp = np.asarray(tp, dtype=float)
    precision = np.divide(tp, pred_pos, out=np.zeros_like(tp), where=pred_pos > 0)
    recall = np.divide(tp, true_pos, out=np.zeros_like(tp), where=true_pos > 0)
    denom = precision + recall
    f1 = np.divide(2 * precision * recall, denom, out=np.zeros_like(tp), where=denom > 0)
    return precision, recall, f1


def _per_class(y_true, y_pred):
    cm = _confusion(y_true, y_pred)
    return _prf(np.diag(cm), cm.sum(0), cm.sum(1))


def error(y_true, y_pred):
    """Fraction of misclassified samples."""
    return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


def accuracy(y_true, y_pred):
    """Fraction of correctly classified samples."""
    return 1.0 - error(y_true, y_pred)


def precision_macro(y_true, y_pred):
    return float(_per_class(y_true, y_pred)[0].mean())


def recall_macro(y_true, y_pred):
    return float(_per_class(y_true, y_pred)[1].mean())


def f1_macro(y_true, y_pred):
    return float(_per_class(y_true, y_pred)[2].mean())


def _true_class_recalls(y_true, y_pred):
    """Recall of each class present in ``y_true``, in class order (a class that is only
    predicted has no recall and is left out)."""
    cm = _confusion(y_true, y_pred)
    true_pos = cm.sum(axis=1)
    present = true_pos > 0
    return np.diag(cm)[present] / true_pos[present]


def balanced_accuracy(y_true, y_pred):
    """Mean recall over the classes present in ``y_true``.

    Equals ``sklearn.metrics.balanced_accuracy_score(y_true, y_pred)`` (adjusted=False),
    which also leaves out a class that is predicted but never true.
    """
    return float(_true_class_recalls(y_true, y_pred).mean())


def g_mean(y_true, y_pred):
    """Geometric mean of the recalls of the classes present in ``y_true``:
    ``(Π_c R_c)^(1/m)``, R_c = (points of class c predicted c) / (points of class c),
    over the m classes that occur in ``y_true``; for two classes ``sqrt(TPR · TNR)``.

    Zero recall: a class present in ``y_true`` of which no point is predicted right
    makes the product, hence ``g_mean``, exactly 0 (imbalanced-learn's default
    ``correction=0``). Computed as ``exp(mean_c ln R_c)`` when every R_c > 0.

    Equals imbalanced-learn's ``geometric_mean_score(y_true, y_pred,
    labels=np.unique(y_true), average="multiclass")``, and the same without ``labels``
    whenever every predicted class occurs in ``y_true``. Without ``labels``
    imbalanced-learn takes the classes of ``y_true`` and ``y_pred`` together and gives a
    class that is predicted but never true recall 0, hence ``g_mean`` 0; knnx leaves
    such a class out, as :func:`balanced_accuracy` (and scikit-learn's) does, since its
    recall is undefined.
    """
    recall = _true_class_recalls(y_true, y_pred)
    if (recall == 0).any():
        return 0.0
    return float(np.exp(np.mean(np.log(recall))))


def mcc(y_true, y_pred):
    """Matthews correlation coefficient, multiclass (Gorodkin's R_K), in [-1, 1].

    With C the confusion matrix over the classes of ``y_true`` and ``y_pred``, t_k its
    row sums (true counts), p_k its column sums (predicted counts), c = trace(C) the
    correct predictions and s the number of samples::

        MCC = (c·s - Σ_k t_k p_k) / sqrt((s² - Σ_k p_k²) (s² - Σ_k t_k²))

    For two classes it is (TP·TN - FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)). When
    the denominator is 0 (``y_true`` or ``y_pred`` holds a single class) it is 0.0, as
    ``sklearn.metrics.matthews_corrcoef``, which it equals.
    """
    cm = _confusion(y_true, y_pred).astype(np.float64)
    t, p = cm.sum(axis=1), cm.sum(axis=0)
    s = t.sum()
    denominator = (s * s - p @ p) * (s * s - t @ t)
    if denominator == 0:
        return 0.0
    return float((np.trace(cm) * s - t @ p) / np.sqrt(denominator))


# -- probability metrics ---------------------------------------------------------------


def _check_proba(proba, n_samples, name="proba"):
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2 or proba.shape[0] != n_samples or proba.shape[1] < 1:
        raise ValueError(f"{name} must have shape ({n_samples}, n_classes), got {proba.shape}")
    if not np.isfinite(proba).all() or (proba < 0).any():
        raise ValueError(f"{name} must hold finite non-negative probabilities")
    worst = np.abs(proba.sum(axis=1) - 1.0).max(initial=0.0)
    if worst > 1e-6:
        raise ValueError(f"{name} rows must sum to 1 (off by {worst:.3g})")
    return proba


def _check_proba_labels(y_true, proba):
    y_true = np.asarray(y_true)
    proba = _check_proba(proba, len(y_true))
    if len(y_true) and (y_true.min() < 0 or y_true.max() >= proba.shape[1]):
        raise ValueError(f"y_true must hold class codes 0..{proba.shape[1] - 1}")
    return y_true.astype(np.intp), proba


def log_loss(y_true, proba):
    """Mean negative log-likelihood ``mean_i -ln max(p̂_{y_i}(x_i), EPS)``, EPS = 1e-15.

    Only the floor is applied (rows are not renormalised), so a true class given
    probability 0 costs ``15 ln 10`` ≈ 34.5. Equals ``sklearn.metrics.log_loss``
    whenever every p̂_{y_i} lies in [eps, 1 - eps], eps the float64 machine epsilon
    (scikit-learn clips at that epsilon instead).
    """
    y_true, proba = _check_proba_labels(y_true, proba)
    p = proba[np.arange(len(y_true)), y_true]
    return float(np.mean(-np.log(np.maximum(p, EPS))))


def brier(y_true, proba):
    """Multiclass Brier score ``mean_i Σ_c (p̂_c(x_i) - 1[y_i = c])²``, in [0, 2].

    Equals ``sklearn.metrics.brier_score_loss(y_true, proba, scale_by_half=False)``.
    For two classes it is twice scikit-learn's binary default
    ``brier_score_loss(y_true, proba[:, 1]) = mean_i (p̂_1(x_i) - y_i)²``, since both
    classes contribute the same squared difference when the row sums to 1.
    """
    y_true, proba = _check_proba_labels(y_true, proba)
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y_true)), y_true] = 1.0
    return float(np.mean(((proba - onehot) ** 2).sum(axis=1)))


def threshold_curves(y_true, proba, kappas=KAPPAS):
    """Macro F-measure and rejection rate of the thresholded decision, per threshold κ.

    At threshold κ, point x is assigned to class c iff ``p̂_c(x) > κ`` (at most one
    class when κ >= 1/2) and rejected when no class is assigned, i.e. iff
    ``max_c p̂_c(x) <= κ``. For each class c over all test points: precision = (points
    assigned to c that are of class c) / (points assigned to c), recall = (points
    assigned to c that are of class c) / (points of class c), F = 2PR/(P + R); each is
    0 when undefined. A rejected point counts against the recall of its class only.
    The macro F-measure averages F over the classes that occur in ``y_true`` or are
    assigned to some point (as the label metrics do).

    Returns
    -------
    f_measure, rejection : ndarray of shape (len(kappas),)
    """
    y_true, proba = _check_proba_labels(y_true, proba)
    n_classes = proba.shape[1]
    true_pos = np.bincount(y_true, minlength=n_classes)
    kappas = np.asarray(kappas, dtype=np.float64)
    f_measure, rejection = np.empty(len(kappas)), np.empty(len(kappas))
    for j, kappa in enumerate(kappas):
        assigned = proba > kappa  # (n_samples, n_classes)
        pred_pos = assigned.sum(axis=0)
        hit = assigned[np.arange(len(y_true)), y_true]  # assigned to its own class
        tp = np.bincount(y_true[hit], minlength=n_classes)
        f1 = _prf(tp, pred_pos, true_pos)[2]
        present = (pred_pos + true_pos) > 0
        f_measure[j] = f1[present].mean() if present.any() else 0.0
        rejection[j] = np.mean(~assigned.any(axis=1)) if len(y_true) else 0.0
    return f_measure, rejection


def f_measure_auc(y_true, proba):
    """Mean macro F-measure over the thresholds :data:`KAPPAS` (D'Ambrosio et al. 2012,
    Sec. 5.2): the area under F(κ) on (1/2, 1) divided by the interval's length 1/2,
    by the midpoint rule on 50 steps. Definitions in :func:`threshold_curves`."""
    return float(threshold_curves(y_true, proba)[0].mean())


def rejection_auc(y_true, proba):
    """Mean rejection rate (fraction of points with ``max_c p̂_c(x) <= κ``) over the
    thresholds :data:`KAPPAS`, averaged as :func:`f_measure_auc`. ``y_true`` is only
    checked, so that every probability metric has the same signature."""
    return float(threshold_curves(y_true, proba)[1].mean())


def _average_ranks(scores):
    """Ranks 1..n within each column of ``scores`` (n_samples, n_columns), in ascending
    order; tied values share the mean of the ranks they span."""
    n = scores.shape[0]
    order = np.argsort(scores, axis=0, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=0)
    starts = np.ones(ordered.shape, dtype=bool)  # first of a run of equal values
    starts[1:] = ordered[1:] != ordered[:-1]
    ends = np.ones(ordered.shape, dtype=bool)  # last of a run
    ends[:-1] = starts[1:]
    at = np.arange(n)[:, None]
    first = np.maximum.accumulate(np.where(starts, at, 0), axis=0)
    last = np.minimum.accumulate(np.where(ends, at, n - 1)[::-1], axis=0)[::-1]
    ranks = np.empty(ordered.shape)
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=0)
    return ranks


def auc(y_true, proba):
    """Area under the ROC curve: binary, or the macro one-vs-rest mean over classes.

    A class c is scored by the Mann-Whitney statistic of column c against ``y_true == c``:
    ``AUC_c = (Σ_{i: y_i = c} r_i - n_c (n_c + 1) / 2) / (n_c (n - n_c))``, r_i the rank of
    ``proba[i, c]`` among all n points (ties given their mean rank), n_c the points of
    class c: the probability that a point of class c scores above one of another class,
    a tie counting one half.

    * Two columns: ``AUC_1``, i.e. ``sklearn.metrics.roc_auc_score(y_true, proba[:, 1])``.
    * More: the mean of ``AUC_c`` over the classes c that occur in ``y_true``, which is
      ``roc_auc_score(y_true, proba, multi_class="ovr", average="macro")`` whenever
      every class occurs in ``y_true``. A class absent from ``y_true`` (e.g. from a test
      part) has no positive and is left out of the mean, as the macro averages leave
      out absent classes; scikit-learn instead refuses such a ``y_true`` (or, given
      ``labels``, returns NaN).
    * NaN when no class has both a positive and a negative, i.e. when ``y_true`` holds a
      single class (or none): the ROC curve is undefined, as in scikit-learn. The
      value is written as ``nan``; tables (:func:`knnx.reporting.summaries.summarize`),
      figures and ``knnx compare`` leave it out of their means, spreads and counts; a
      tuned cell whose inner fold has a single class fails
      (:func:`knnx.evaluation.tuning.tune`).
    """
    y_true, proba = _check_proba_labels(y_true, proba)
    if proba.shape[1] == 2:
        positive, scores = (y_true == 1)[:, None], proba[:, 1:]
    else:
        positive, scores = y_true[:, None] == np.arange(proba.shape[1]), proba
    n_pos = positive.sum(axis=0)
    n_neg = len(y_true) - n_pos
    scorable = (n_pos > 0) & (n_neg > 0)
    if not scorable.any():
        return float("nan")
    n_pos, n_neg = n_pos[scorable], n_neg[scorable]
    rank_sums = np.where(positive[:, scorable], _average_ranks(scores[:, scorable]), 0.0).sum(axis=0)
    return float(np.mean((rank_sums - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)))


# -- posterior metrics -----------------------------------------------------------------


def _check_pair(posterior, proba):
    posterior = np.asarray(posterior, dtype=np.float64)
    if posterior.ndim != 2:
        raise ValueError(f"posterior must have shape (n_samples, n_classes), got {posterior.shape}")
    posterior = _check_proba(posterior, posterior.shape[0], "posterior")
    proba = _check_proba(proba, posterior.shape[0])
    if proba.shape != posterior.shape:
        raise ValueError(f"proba has shape {proba.shape} but posterior {posterior.shape}")
    return posterior, proba


def _clip_renormalize(q):
    q = np.maximum(q, EPS)
    return q / q.sum(axis=1, keepdims=True)


def _kl_rows(a, b):
    """Σ_c a_c ln(a_c / b_c) per row, with 0 ln(0 / b) = 0; needs b > 0 where a > 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(a > 0, a * (np.log(a) - np.log(b)), 0.0)
    return terms.sum(axis=1)


def sym_kl(posterior, proba):
    """Mean over points of ½ (KL(p||p̂) + KL(p̂||p)) (eq. 29), p the true posterior.

    The denominator of each KL term is clipped at EPS and renormalised (module
    docstring), so the result is finite and symmetric in its two arguments; for
    that reason ``sym_kl(p, p)`` is not exactly 0 when p has zeros, but at most
    about n_classes · EPS.
    """
    p, q = _check_pair(posterior, proba)
    return float(np.mean(0.5 * (_kl_rows(p, _clip_renormalize(q)) + _kl_rows(q, _clip_renormalize(p)))))


def js(posterior, proba):
    """Mean over points of the Jensen-Shannon divergence ½ (KL(p||m) + KL(p̂||m)),
    m = (p + p̂)/2 (eq. 30), in [0, ln 2]; symmetric in its two arguments.

    Each point's value is clipped to [0, ln 2] against rounding.
    """
    p, q = _check_pair(posterior, proba)
    m = 0.5 * (p + q)
    return float(np.mean(np.clip(0.5 * (_kl_rows(p, m) + _kl_rows(q, m)), 0.0, np.log(2.0))))


METRICS = {
    "error": error,
    "accuracy": accuracy,
    "f1_macro": f1_macro,
    "recall_macro": recall_macro,
    "precision_macro": precision_macro,
    "balanced_accuracy": balanced_accuracy,
    "g_mean": g_mean,
    "mcc": mcc,
    "log_loss": log_loss,
    "brier": brier,
    "f_measure_auc": f_measure_auc,
    "rejection_auc": rejection_auc,
    "auc": auc,
    "sym_kl": sym_kl,
    "js": js,
}

# The inputs of each metric: "label" f(y_true, y_pred), "proba" f(y_true, proba),
# "posterior" f(true_posterior, proba).
METRIC_INPUT = {
    "error": "label",
    "accuracy": "label",
    "f1_macro": "label",
    "recall_macro": "label",
    "precision_macro": "label",
    "balanced_accuracy": "label",
    "g_mean": "label",
    "mcc": "label",
    "log_loss": "proba",
    "brier": "proba",
    "f_measure_auc": "proba",
    "rejection_auc": "proba",
    "auc": "proba",
    "sym_kl": "posterior",
    "js": "posterior",
}

# Whether a smaller value is better (used to mark the best row in tables, to rank in
# comparisons and to choose in tuning); a metric not listed is better when higher.
LOWER_IS_BETTER = {
    "error": True,
    "log_loss": True,
    "brier": True,
    "rejection_auc": True,
    "sym_kl": True,
    "js": True,
    "fit_seconds": True,
    "predict_seconds": True,
    "tune_seconds": True,
    # the share of the training rows a reducing contestant fits on (knnx.steps.Chain)
    "retained": True,
}
