"""Metric learning for nearest neighbours: linear maps L learned from labelled rows, as
pipeline steps (``steps: [lmnn]``), so that any classifier, selection or metric after
them works in the learned space (see :mod:`knnx.metric_learning.base`).

* :class:`LMNN`: large margin nearest neighbour (Weinberger & Saul 2009), native;
* :class:`ITML`: information-theoretic metric learning (Davis et al. 2007), native;
* :class:`LFDA`: local Fisher discriminant analysis (Sugiyama 2007), closed form;
* :class:`NCA`: neighbourhood components analysis, scikit-learn's.
"""

from knnx.metric_learning.itml import ITML
from knnx.metric_learning.lfda import LFDA
from knnx.metric_learning.lmnn import LMNN
from knnx.metric_learning.nca import NCA

__all__ = ["ITML", "LFDA", "LMNN", "NCA"]
