"""Prototype reduction: the instance selection methods a kNN study sets against its
classifiers, on knnx's exact neighbour search under every metric.

Each method is an imbalanced-learn-style sampler (``fit_resample``) and a spec's step
(``steps: [{name: enn}]``, :data:`knnx.steps.STEPS`), fitted on the training part only;
a cell that reduces records ``n_fit`` and ``retained``. See :mod:`knnx.reduction.base`
for what every method shares (the metric, the neighbour order, a class never emptied).

* editing (:mod:`knnx.reduction.editing`): :class:`ENN` (Wilson 1972), :class:`RENN` and
  :class:`AllKNN` (Tomek 1976), :class:`TomekLinks` (Tomek 1976);
* condensing (:mod:`knnx.reduction.condensing`): :class:`CNN` (Hart 1968),
  :class:`RNN` (Gates 1972), :class:`FCNN` (Angiulli 2007).
"""

from knnx.reduction.condensing import CNN, FCNN, RNN
from knnx.reduction.editing import ENN, RENN, AllKNN, TomekLinks

__all__ = ["CNN", "ENN", "FCNN", "RENN", "RNN", "AllKNN", "TomekLinks"]
