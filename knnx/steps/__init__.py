"""The steps a contestant puts before its classifier: scaling, projections, learned
metrics, samplers and selections.

An ``algorithms`` entry of a spec may list ``steps:``, an ordered list before its
estimator. A step is a built-in name of :data:`STEPS` or an import path to a
scikit-learn transformer (``fit``/``transform``) or an imbalanced-learn-style sampler
(``fit_resample``). The runner fits them as imbalanced-learn's ``Pipeline`` does
(:class:`Chain`): every step on the training rows only, in order; a sampler or a
selection acts at fit only (the rows the classifier is fitted on), a transformer at fit
and at predict. A step fitted on some rows is fitted once per process for every
downstream grid value that needs it (:class:`StepFits`).

This layer sits above the estimators (a selection step searches neighbours as they
do) and below the spec and the engine: it imports neither.
"""

from knnx.steps.chain import Chain, StepFits
from knnx.steps.resolve import STEP_PARAM_SEPARATOR, STEPS, resolve_steps, step_id

__all__ = ["STEPS", "STEP_PARAM_SEPARATOR", "Chain", "StepFits", "resolve_steps", "step_id"]
