"""Metric learning for nearest neighbours: linear maps L learned from labelled rows, as
pipeline steps (``steps: [lmnn]``), so that any classifier, selection or metric after
them works in the learned space (see :mod:`knnx.metric_learning.base`).

* :class:`LMNN`: large margin nearest neighbour (Weinberger & Saul 2009), native;
* :class:`ITML`: information-theoretic metric learning (Davis et al. 2007), native;
* :class:`LFDA`: local Fisher discriminant analysis (Sugiyama 2007), closed form;
* :class:`NCA`: neighbourhood components analysis, scikit-learn's.

Each class is imported at its first use (PEP 562): ``knnx validate``, which imports the
estimators (``itml_knn`` fits ITML), loads neither scikit-learn's neighbours module (NCA)
nor scipy's eigensolvers (LFDA).
"""

import importlib

__all__ = ["ITML", "LFDA", "LMNN", "NCA"]

_MODULES = {"ITML": "itml", "LFDA": "lfda", "LMNN": "lmnn", "NCA": "nca"}


def __getattr__(name):
    if name in _MODULES:
        return getattr(importlib.import_module(f"knnx.metric_learning.{_MODULES[name]}"), name)
    raise AttributeError(f"module 'knnx.metric_learning' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_MODULES])
