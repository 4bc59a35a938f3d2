"""Experiment specs: schema, validation and grid expansion.

A spec (YAML or a dict) names datasets, a preprocessing step, an evaluation
protocol, algorithms with parameter grids, and metrics::

    name: ripley
    seed: 0
    datasets: [ripley]
    preprocess: {standardize: false}
    protocol: {kind: predefined}
    algorithms:
      - name: knn
        params: {k: [1, 3, 5], weights: uniform}   # a list expands to a grid
    metrics: [error, f1_macro]
    record_curves: false    # true: write estimators' training curves (curve_) to curves.csv
    curve_points: 200       # at most this many evenly spaced iterations per curve
    share_graphs: true      # false: every cell searches its own neighbours (timings)

An ``algorithms`` entry names a registered algorithm (``name``; see
:mod:`knnx.estimators.registry` for aliases, registration and plugins) or any
scikit-learn-compatible classifier by import path (``estimator:
"package.module:Class"``), and may add ``id`` (its name in results), ``params_for``
(dataset id -> parameters replacing those of ``params`` there), ``tune`` (nested
tuning on inner folds, one cell per split) and ``steps`` (the steps before its
classifier, see :mod:`knnx.steps`). A dataset entry whose options are lists
stands for one dataset per combination (:func:`knnx.datasets.expand_entry`).
``python_path`` lists folders searched for import paths. :func:`apply_overrides`
applies ``--set PATH=VALUE`` changes before validation.

A spec with ``kind: active`` is an active-learning experiment instead (LpO
query-by-committee, :class:`ActiveSpec`): datasets, a start set and pool, the loop's
settings and strategies, run by the same runner (``knnx run``), one cell per
(dataset, strategy, repeat). A spec without ``kind`` is the form above.

Metrics (``knnx.evaluation.metrics.METRICS``) take predicted labels (``error``, ``accuracy``,
``f1_macro``, ``recall_macro``, ``precision_macro``, ``balanced_accuracy``, ``g_mean``,
``mcc``), predicted probabilities (``log_loss``, ``brier``, ``f_measure_auc``,
``rejection_auc``, ``auc``) or the true
posterior of a synthetic dataset beside the predicted probabilities (``sym_kl``,
``js``); ``knnx.evaluation.metrics.METRIC_INPUT`` says which.

:func:`validate_spec` checks everything before any computation: the schema, the
registry names, every grid value against the algorithm's constraint table, that
each dataset loads, that the protocol applies to it, that no training part has a
single class, that ``k`` fits in every training part, that every algorithm has
``predict_proba`` when a probability or posterior metric is asked, and that every
dataset has a true posterior when a posterior metric is asked. Every problem
becomes one line ``SOURCE: PATH: message`` and all are raised together as one
SpecError. Hostile input (huge files, deep or alias-bomb YAML, duplicate keys, huge
grids) is refused before it can cost time or memory: see :mod:`knnx.spec.read`.

The package's modules, in the order of the steps: :mod:`~knnx.spec.read` (the
hardened YAML loader, :func:`read_spec`), :mod:`~knnx.spec.overrides` (``--set``
parsed into :class:`Override` objects, then applied), :mod:`~knnx.spec.schema` (the
pydantic models, :data:`PROTOCOL_MODELS`), :mod:`~knnx.spec.messages` (pydantic's
errors as one line each), :mod:`~knnx.spec.grids` and :mod:`~knnx.spec.checks` (the
checks), :mod:`~knnx.spec.plan` (datasets, splits, cells: :class:`Cell`,
:class:`ValidatedSpec`), :mod:`~knnx.spec.seeds` (the random streams), :mod:`~knnx.spec.active` (``kind: active``) and
:mod:`~knnx.spec.validate` (:func:`validate_spec`, the steps in order).
"""

from knnx.spec.active import ACTIVE_ALGORITHMS, ActiveProtocol, ActiveSpec, active_params
from knnx.spec.grids import expand_grid, tuned_settings
from knnx.spec.overrides import Override, apply_overrides, parse_override
from knnx.spec.plan import Cell, ValidatedSpec, canonical_json
from knnx.spec.read import MAX_SPEC_BYTES, MAX_YAML_DEPTH, MAX_YAML_STRING, MAX_YAML_VALUES, read_spec
from knnx.spec.schema import (
    MAX_CELLS,
    PROTOCOL_MODELS,
    AlgorithmEntry,
    FiveByTwo,
    Holdout,
    KFold,
    LeavePOut,
    Name,
    Predefined,
    Preprocess,
    Protocol,
    Report,
    Spec,
    StepEntry,
    Subsample,
    Tune,
)
from knnx.spec.seeds import SEED_DATA, SEED_SPLITS, SEED_TUNE, dataset_seedseq, tune_seed
from knnx.spec.validate import SPEC_KINDS, validate_spec

__all__ = [
    "ACTIVE_ALGORITHMS",
    "MAX_CELLS",
    "MAX_SPEC_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_STRING",
    "MAX_YAML_VALUES",
    "PROTOCOL_MODELS",
    "SEED_DATA",
    "SEED_SPLITS",
    "SEED_TUNE",
    "SPEC_KINDS",
    "ActiveProtocol",
    "ActiveSpec",
    "AlgorithmEntry",
    "Cell",
    "FiveByTwo",
    "Holdout",
    "KFold",
    "LeavePOut",
    "Name",
    "Override",
    "Predefined",
    "Preprocess",
    "Protocol",
    "Spec",
    "StepEntry",
    "Subsample",
    "Tune",
    "ValidatedSpec",
    "active_params",
    "apply_overrides",
    "canonical_json",
    "dataset_seedseq",
    "expand_grid",
    "parse_override",
    "read_spec",
    "tune_seed",
    "tuned_settings",
    "validate_spec",
    "Report",
]
