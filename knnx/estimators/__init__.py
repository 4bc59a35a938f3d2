"""Estimators: scikit-learn classifiers over the exact neighbour search.

``base`` (the shared neighbour machinery), ``params`` (parameter tables), ``knn``
(kNN and its LpO-tuned form), ``unn`` (UNN and UNN-CV), ``gnnb`` (GNNB, GNNB*),
``weighted`` (CW, PW, CPW), ``leveraged`` (the leveraging shared by UNN and GNNB),
``baselines`` (the papers' comparison methods) and ``registry`` (names, aliases,
plugins and import paths resolved to classes).
"""
