"""Prototype reduction: the instance selection methods a kNN study sets against its
classifiers, on knnx's exact neighbour search under every metric.

Each method is an imbalanced-learn-style sampler (``fit_resample``), a spec's step
(``steps: [{name: enn}]``, :data:`knnx.steps.STEPS`) fitted on the training part only,
and an algorithm name (``{name: enn}``: the method, then kNN); a cell that reduces
records ``n_fit``, ``retained`` and ``retained.<c>`` per class. See
:mod:`knnx.reduction.base` for what every selection shares (the metric, the neighbour
order, a class never emptied).

* editing (:mod:`knnx.reduction.editing`): :class:`ENN` (Wilson 1972), :class:`RENN`
  and :class:`AllKNN` (Tomek 1976), :class:`TomekLinks` (Tomek 1976),
  :class:`Multiedit` (Devijver & Kittler 1980), :class:`NCR` (Laurikkala 2001);
* condensing (:mod:`knnx.reduction.condensing`): :class:`CNN` (Hart 1968),
  :class:`RNN` (Gates 1972), :class:`FCNN` (Angiulli 2007), :class:`OSS` (Kubat &
  Matwin 1997);
* hybrid (:mod:`knnx.reduction.hybrid`): :class:`DROP3` (Wilson & Martinez 2000),
  :class:`ICF` (Brighton & Mellish 2002), :class:`IB3` (Aha et al. 1991),
  :class:`HMNEI` (Marchiori 2008);
* search (:mod:`knnx.reduction.stochastic`): :class:`RMHC` (Skalak 1994),
  :class:`SSMA` (García et al. 2008);
* generation (:mod:`knnx.reduction.generation`): :class:`LVQ` (Kohonen: LVQ1, LVQ2.1,
  LVQ3), new rows rather than training rows.
"""

from knnx.reduction.condensing import CNN, FCNN, OSS, RNN
from knnx.reduction.editing import ENN, NCR, RENN, AllKNN, Multiedit, TomekLinks
from knnx.reduction.generation import LVQ
from knnx.reduction.hybrid import DROP3, HMNEI, IB3, ICF
from knnx.reduction.stochastic import RMHC, SSMA

__all__ = [
    "CNN",
    "DROP3",
    "ENN",
    "FCNN",
    "HMNEI",
    "IB3",
    "ICF",
    "LVQ",
    "NCR",
    "OSS",
    "RENN",
    "RMHC",
    "RNN",
    "SSMA",
    "AllKNN",
    "Multiedit",
    "TomekLinks",
]
