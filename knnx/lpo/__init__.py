"""Exact leave-p-out cross-validation for kNN: the closed-form risk and the choice
of k (``risk``), and LpO query-by-committee active learning (``active``)."""
