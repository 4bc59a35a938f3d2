"""Classification metrics on integer class codes.

Macro averages run over the classes present in ``y_true`` or ``y_pred`` (as
scikit-learn does by default); a class with no predicted (or no true) sample
contributes 0 to precision (recall), and F1 is 0 when precision + recall is 0.
"""

import numpy as np


def _confusion(y_true, y_pred):
    labels = np.union1d(y_true, y_pred)
    t = np.searchsorted(labels, y_true)
    p = np.searchsorted(labels, y_pred)
    cm = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(cm, (t, p), 1)
    return cm


def _per_class(y_true, y_pred):
    cm = _confusion(y_true, y_pred)
    tp = np.diag(cm).astype(float)
    pred_pos, true_pos = cm.sum(0), cm.sum(1)
    precision = np.divide(tp, pred_pos, out=np.zeros_like(tp), where=pred_pos > 0)
    recall = np.divide(tp, true_pos, out=np.zeros_like(tp), where=true_pos > 0)
    denom = precision + recall
    f1 = np.divide(2 * precision * recall, denom, out=np.zeros_like(tp), where=denom > 0)
    return precision, recall, f1


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


METRICS = {
    "error": error,
    "accuracy": accuracy,
    "f1_macro": f1_macro,
    "recall_macro": recall_macro,
    "precision_macro": precision_macro,
}

# Whether a smaller value is better (used to mark the best row in tables).
LOWER_IS_BETTER = {"error": True, "fit_seconds": True, "predict_seconds": True}
