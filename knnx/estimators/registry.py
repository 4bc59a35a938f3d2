"""Algorithm registry: spec name -> estimator class, and what a spec entry names.

Each class carries ``_parameter_constraints``; spec validation checks every grid
value against it. Its class attributes and hooks (see
:class:`knnx.estimators.base.NeighborsClassifierBase`) say the rest:
``_neighbor_param`` names the parameter (if any) that may not exceed the size of the
training part (less a slack), ``_neighbor_counts`` the parameters that count the
neighbours searched (read by :func:`neighbor_counts`), and ``_lpo_risk`` computes the
closed-form leave-p-out risk where one exists (used by ``protocol: {kind: lpo, p: P}``;
:func:`lpo_risk_of`, and ``LPO_RISK``: registered name -> that function, derived from
the classes). :class:`ResolvedAlgorithm` reads them as ``neighbor_param``,
``lpo_risk`` and ``neighbor_counts``. ``ALIASES`` are names a reader would guess for a
registered algorithm with some parameters fixed (``cpw`` is ``weighted_metric`` with
``scheme: cpw``).

An ``algorithms`` entry of a spec names a class in one of four ways, resolved by
:func:`resolve_algorithm` in this order: a built-in name or alias, a name given to
:func:`register_algorithm`, a name offered by an installed package in the
``knnx.algorithms`` entry-point group, or ``estimator: "package.module:Class"``
(any scikit-learn-compatible classifier; see :mod:`knnx.plugins`).
"""

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from knnx._text import find_leaf
from knnx.errors import SpecError
from knnx.estimators.baselines import (
    ITMLKNN,
    SVMRBF,
    AdaBoostTrees,
    LinearSVMPlatt,
    SGDBudget,
    SubsampledKNN,
    SVMLinear,
)
from knnx.estimators.classes import (
    RUNNER_PARAMS,
    ClassFacts,
    EstimatorFault,
    _count_names,
    _plain,
    ask,
    inspect_classifier,
)
from knnx.estimators.gnnb import GNNBClassifier
from knnx.estimators.knn import KNNClassifier, KNNLpoClassifier
from knnx.estimators.unn import UNNClassifier, UNNCVClassifier
from knnx.estimators.weighted import WeightedMetricNN
from knnx.plugins import (
    ALGORITHM_GROUP,
    built_in_clash,
    entry_point_names,
    import_object,
    load_entry_point,
    object_version,
)

# A step's parameter in a setting is ``<step id>__<name>`` (scikit-learn's convention).
STEP_SEP = "__"


def split_setting(step_ids, setting):
    """``(per step, its parameters; the classifier's)`` of a setting whose step
    parameters are ``<step id>__<name>`` (``step_ids``: the steps' ids, in order). A key
    with ``__`` that names no step stays the classifier's (validation refuses it)."""
    steps = [{} for _ in step_ids]
    own = {}
    for key, value in setting.items():
        sid, sep, name = key.partition(STEP_SEP)
        if sep and sid in step_ids:
            steps[step_ids.index(sid)][name] = value
        else:
            own[key] = value
    return steps, own


ALGORITHMS = {
    "knn": KNNClassifier,
    "knn_lpo": KNNLpoClassifier,
    "unn": UNNClassifier,
    "unn_cv": UNNCVClassifier,
    "gnnb": GNNBClassifier,
    "weighted_metric": WeightedMetricNN,
    # Baselines of the papers (knnx.estimators.baselines).
    "knn_sample": SubsampledKNN,
    "svm_platt": LinearSVMPlatt,
    "itml_knn": ITMLKNN,
    "svm_rbf": SVMRBF,
    "svm_linear": SVMLinear,
    "sgd": SGDBudget,
    "adaboost": AdaBoostTrees,
}


# Parameters that count neighbours in a class that does not say which of its parameters
# do (no ``_neighbor_counts``: an estimator from outside knnx).
FOREIGN_NEIGHBOR_COUNTS = ("k", "k_max", "n_neighbors")


def neighbor_counts(cls, params, foreign=FOREIGN_NEIGHBOR_COUNTS):
    """The neighbour counts a setting ``params`` of class ``cls`` asks of the neighbour
    search: the integer values (the items of a list too: a tuned cell's grid) of the
    parameters named by ``cls._neighbor_counts`` (``k``; ``k_max`` for ``knn_lpo``),
    or, for a class without that attribute, of the names ``foreign`` (default
    :data:`FOREIGN_NEIGHBOR_COUNTS`). The attribute is read through :func:`ask`: a class
    whose code fails there (validation read it once) asks none."""
    try:
        names = ask("reading _neighbor_counts", lambda: _count_names(cls))
    except EstimatorFault:
        return []
    return _counted(foreign if names is None else names, params)


def _counted(names, params):
    """The integer values of the parameters ``names`` in ``params`` (a list's items too)."""
    return [
        v
        for name in names
        if name in params
        for v in (params[name] if isinstance(params[name], list) else [params[name]])
        if isinstance(v, int)
    ]


def lpo_risk_of(cls):
    """The closed-form leave-p-out risk of class ``cls``, ``f(params, X, y, p,
    graphs=None) -> risk`` (its ``_lpo_risk`` hook; ``graphs``: a knnx.GraphStore to
    search through, see knnx.neighbors.graphs), or None if it has none.

    The hook must be the class's own, not inherited: a subclass of KNNClassifier may
    change its rule (override ``predict``), and kNN's closed form would then be the risk
    of another classifier. A subclass that keeps the rule says so by setting
    ``_lpo_risk = KNNClassifier._lpo_risk`` again."""
    if cls is None or "_lpo_risk" not in vars(cls):
        return None
    risk = getattr(cls, "_lpo_risk", None)
    return risk if callable(risk) else None


class _LpoRiskTable(Mapping):
    """Registered name -> closed-form leave-p-out risk (:func:`lpo_risk_of` of its
    class), for the registered algorithms that have one: a view of ``ALGORITHMS``, so it
    follows :func:`register_algorithm` and is never maintained by hand."""

    def __getitem__(self, name):
        risk = lpo_risk_of(ALGORITHMS[name])
        if risk is None:
            raise KeyError(name)
        return risk

    def __iter__(self):
        return (name for name, cls in list(ALGORITHMS.items()) if lpo_risk_of(cls) is not None)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"LPO_RISK({dict(self)!r})"


# Algorithms with an exact leave-p-out risk: name -> f(params, X, y, p, graphs=None) -> risk.
LPO_RISK = _LpoRiskTable()


# Names a reader would guess: name -> (registered name, parameters it fixes).
ALIASES = {
    "cw": ("weighted_metric", {"scheme": "cw"}),
    "pw": ("weighted_metric", {"scheme": "pw"}),
    "cpw": ("weighted_metric", {"scheme": "cpw"}),
    "l2": ("weighted_metric", {"scheme": "l2"}),
    "cdm": ("weighted_metric", {"scheme": "cdm"}),
}

# The algorithms knnx ships; register_algorithm adds to ALGORITHMS, never to these.
BUILTIN = frozenset(ALGORITHMS)

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def register_algorithm(name, cls):
    """Make ``cls`` (a scikit-learn-compatible classifier class) available to specs as
    ``name: NAME`` in this process. Re-registering the same class is allowed; a name
    that is taken (built-in, alias or another class) raises ValueError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or set(name) == {"."}:
        raise ValueError(f"algorithm name {name!r}: letters, digits and _.- only")
    if not isinstance(cls, type):
        raise ValueError(f"register_algorithm({name!r}, ...): expected a class, got {type(cls).__name__}")
    if name in ALIASES or (name in ALGORITHMS and ALGORITHMS[name] is not cls):
        raise ValueError(f"algorithm name '{name}' is taken; choose another")
    problem = classifier_problem(cls)
    if problem:
        raise ValueError(f"register_algorithm({name!r}, {cls.__name__}): {problem}")
    ALGORITHMS[name] = cls


def known_algorithm_names(also=()):
    """Every name a spec may give: built-ins, aliases, registered, installed plugins, and
    ``also`` (names a higher layer gives meaning to: the named selections)."""
    return sorted(set(ALGORITHMS) | set(ALIASES) | set(entry_point_names(ALGORITHM_GROUP)) | set(also))


def classifier_problem(cls):
    """Why ``cls`` is not a scikit-learn-compatible classifier class, or None."""
    return inspect_classifier(cls)[0]


@dataclass(frozen=True)
class ResolvedAlgorithm:
    """What one ``algorithms`` entry of a spec runs.

    id : the name in results, tables and plots (the entry's ``id``, else its ``name``,
        else the class name of its ``estimator``).
    cls : the estimator class.
    name : the registered name it resolves to (``weighted_metric`` for ``cpw``), or None
        for an import path; keys ``LPO_RISK``.
    fixed : parameters fixed by an alias.
    path : the entry's import path (workers import it again), or None.
    version : the identity of its code outside knnx (see knnx.plugins.object_version).
    facts : what validation read of the class (:class:`ClassFacts`), once, when the
        entry was resolved; read then if not given. The methods below use them and call
        the class's code again only through :func:`ask`.
    steps : the steps before the classifier (``steps:`` of the entry, see
        :mod:`knnx.steps`), each a ResolvedAlgorithm whose ``id`` is its step id; a
        setting holds a step's parameter as ``<step id>__<name>`` (scikit-learn's
        convention), and :meth:`estimator_setting` and :meth:`step_settings` split it.
    """

    id: str
    cls: type
    name: str | None = None
    fixed: dict = field(default_factory=dict)
    path: str | None = None
    version: str | None = None
    facts: ClassFacts | None = field(default=None, compare=False, repr=False)
    steps: tuple = ()

    def __post_init__(self):
        if self.facts is None:
            problem, facts = inspect_classifier(self.cls)
            if problem:
                raise SpecError(f"'{self.source()}' {problem}")
            object.__setattr__(self, "facts", facts)

    @property
    def neighbor_param(self):
        """``(name, slack)`` of the parameter that counts training points (its value must
        be at most n_train - slack), from the class's ``_neighbor_param``; None if it has
        none. The same for a registered name and an import path of one class."""
        return self.facts.neighbor_param

    @property
    def lpo_risk(self):
        """The closed-form leave-p-out risk (:func:`lpo_risk_of`), for a registered name
        (``LPO_RISK[name]``); None if the class has none or the entry is an import path
        (protocol lpo runs the risk of a registered name)."""
        return LPO_RISK.get(self.name) if self.name is not None else None

    def neighbor_counts(self, params):
        """:func:`neighbor_counts` of this entry's class (its ``_neighbor_counts`` as read
        when the entry was resolved)."""
        names = self.facts.count_names
        return _counted(FOREIGN_NEIGHBOR_COUNTS if names is None else names, params)

    @property
    def knnx_params(self):
        """True when the class checks its parameters with knnx's constraint tables."""
        return self.facts.knnx_params

    @property
    def param_names(self):
        """The class's parameters (get_params of an instance made with its defaults)."""
        return self.facts.names

    def source(self):
        """How the entry named the class, for the cell hash and messages."""
        return self.path or self.name

    def defaults(self):
        """The class's own defaults that a spec can write (JSON values; the alias's fixed
        parameters included; not the runner's ``graphs``), as read when the entry was
        resolved: the class is not asked again."""
        own = {k: _plain(v) for k, v in self.facts.defaults.items()} | self.fixed
        for step in self.steps:  # each step's defaults, as <step id>__<name>
            own.update({f"{step.id}{STEP_SEP}{k}": v for k, v in step.defaults().items()})
        return own

    def _step_of(self, pname):
        """``(step, its parameter's name)`` of a setting's key ``<step id>__<name>``, or
        ``(None, None)`` for a parameter of the classifier."""
        if self.steps and STEP_SEP in pname:
            sid, _, rest = pname.partition(STEP_SEP)
            for step in self.steps:
                if step.id == sid:
                    return step, rest
        return None, None

    def estimator_setting(self, setting):
        """The classifier's parameters of a setting (without the steps')."""
        return split_setting([step.id for step in self.steps], setting)[1] if self.steps else setting

    def step_settings(self, setting):
        """Per step (in order), its parameters of a setting, by their own names."""
        return split_setting([step.id for step in self.steps], setting)[0]

    def parameter_problem(self, pname, value):
        """Why ``value`` is not allowed for parameter ``pname``, or None. A constraint
        whose check fails (any fault of its code) is the problem, named. A step's
        parameter ``<step id>__<name>`` is checked against the step's class."""
        step, name = self._step_of(pname)
        if step is not None:
            return step.parameter_problem(name, value)
        if self.steps and STEP_SEP in pname:
            ids = ", ".join(s.id for s in self.steps)
            return f"names no step of {self.id} before {STEP_SEP!r}; its steps: {ids}"
        names, constraints = self.facts.names, self.facts.constraints
        if pname in RUNNER_PARAMS and pname in names:
            return f"is supplied by the runner ({RUNNER_PARAMS[pname]}), not set in a spec"
        if pname not in names:
            known = sorted(name for name in names if name not in RUNNER_PARAMS)
            hint = self.facts.hints.get(pname)
            return f"unknown parameter for {self.id}; known: {', '.join(known)}" + (
                f" ({hint})" if hint else ""
            )
        if pname in self.fixed:
            return (
                f"fixed to {self.fixed[pname]!r} by the name '{self.id if self.name != self.id else self.name}'"
                f"; use name: {self.name} to vary it"
            )
        if self.knnx_params and pname in constraints:  # knnx's own tables state the range
            try:
                expected = ask(
                    f"_parameter_constraints[{pname!r}].check()",
                    lambda: _optional_text(constraints[pname].check(value)),
                )
            except EstimatorFault as fault:
                return str(fault)
            return None if expected is None else f"must be {expected}, got {value!r}"
        big = _first_huge_int(value)
        if big is not None:
            return f"{big} is beyond 64-bit integers; no estimator can use it"
        odd = find_leaf(value, lambda v: isinstance(v, float) and not math.isfinite(v))
        if odd is not None:
            return f"{odd} is not a finite number; parameters are finite (NaN and ±inf are refused)"
        if constraints is None or pname not in constraints or self.knnx_params:
            return None
        try:  # scikit-learn's own tables (a private helper): no verdict if it fails
            text = ask(
                "validate_parameter_constraints()",
                lambda: _sklearn_problem(self.cls, constraints, pname, value),
            )
        except EstimatorFault:
            return None
        if text is None:
            return None
        text = _SET_OF_STRINGS.sub(_sorted_set, text).split(" must be ", 1)
        return ("must be " + text[1]) if len(text) == 2 else text[0]


def _optional_text(value):
    return None if value is None else str(value)


def _sklearn_problem(cls, constraints, pname, value):
    """scikit-learn's message refusing ``value`` for ``pname`` under ``constraints``
    (its ``validate_parameter_constraints``; the constraints may run the class's code:
    called under :func:`ask`), or None."""
    try:
        from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints
    except ImportError:
        return None
    try:
        validate_parameter_constraints({pname: constraints[pname]}, {pname: value}, caller_name=cls.__name__)
    except InvalidParameterError as exc:
        return str(exc)
    return None


# scikit-learn prints the options of a StrOptions as a Python set, whose order follows
# string hashing (it changes from process to process): knnx sorts them.
_SET_OF_STRINGS = re.compile(r"\{('[^'{}]*'(?:, '[^'{}]*')*)\}")


def _sorted_set(match):
    return "{" + ", ".join(sorted(match.group(1).split(", "))) + "}"


def _first_huge_int(value):
    """An int in ``value`` (or its lists and mappings) beyond int64, or None."""
    return find_leaf(
        value, lambda v: isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63
    )


def resolve_algorithm(entry, base_dir=None, also_known=()):
    """The :class:`ResolvedAlgorithm` of a spec's algorithms entry (``name`` or
    ``estimator``, optional ``id``); SpecError with one line (no location) otherwise
    (an unknown name's lists the known ones, ``also_known`` included)."""
    name, path = entry.get("name"), entry.get("estimator")
    if path is not None:
        cls = import_object(path, base_dir)
        problem, facts = inspect_classifier(cls)
        if problem:
            raise SpecError(f"'{path}' {problem}")
        return ResolvedAlgorithm(
            entry.get("id") or path.rsplit(":", 1)[1].rsplit(".", 1)[-1],
            cls,
            path=path,
            version=object_version(cls, path),
            facts=facts,
        )
    clash = built_in_clash(ALGORITHM_GROUP, name) if name in BUILTIN or name in ALIASES else None
    if clash:
        raise SpecError(clash)
    if name in ALIASES:
        target, fixed = ALIASES[name]
        return ResolvedAlgorithm(entry.get("id") or name, ALGORITHMS[target], target, dict(fixed))
    if name in ALGORITHMS:
        cls = ALGORITHMS[name]
        return ResolvedAlgorithm(entry.get("id") or name, cls, name, version=object_version(cls))
    cls = load_entry_point(ALGORITHM_GROUP, name)
    if cls is None:
        raise SpecError(f"unknown algorithm '{name}'; known: {', '.join(known_algorithm_names(also_known))}")
    problem, facts = inspect_classifier(cls)
    if problem:
        raise SpecError(f"'{name}' (entry point {ALGORITHM_GROUP}) {problem}")
    ALGORITHMS.setdefault(name, cls)  # workers of this run look it up as a registered name
    return ResolvedAlgorithm(entry.get("id") or name, cls, name, version=object_version(cls), facts=facts)
