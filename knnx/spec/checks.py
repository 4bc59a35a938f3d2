"""The checks of a run spec, each a function of one job returning its problems (one
line each, without the source label) or raising SpecError when nothing after it can
be checked: the spec's folders and datasets entries, the size of its grid, its
metrics, its algorithm entries and ids, what its protocol asks of them, and, once a
dataset is loaded and split, what would fail its cells at run time (classes, the
neighbour counts, tuning folds, what the dataset's column types ask of the
algorithms' metrics (:mod:`knnx.spec.datatypes`), the estimator classes'
``_data_problems`` hooks, exact LpO's limits and the memory of the shared neighbour
graphs)."""

import dataclasses
import math
import zipfile

import numpy as np

from knnx.datasets import expand_entry
from knnx.errors import KnnxError, SpecError
from knnx.estimators.registry import LPO_RISK, resolve_algorithm
from knnx.evaluation.metrics import METRIC_INPUT, METRICS
from knnx.evaluation.preprocess import split_parts
from knnx.limits import graph_bytes, lpo_bytes, memory_problem
from knnx.neighbors.metrics import check_nonzero_rows
from knnx.neighbors.search import check_power_scale, check_scale
from knnx.plugins import add_import_dirs
from knnx.spec.datatypes import type_problems
from knnx.spec.grids import array_grid_hint, entry_params, fitted_settings, hook, lpo_rule_problems
from knnx.spec.plan import canonical_json
from knnx.spec.schema import MAX_CELLS, LeavePOut
from knnx.spec.seeds import tune_seed
from knnx.spec.views import cell_view, wanted_view
from knnx.steps import resolve_steps
from knnx.steps.resolve import PROBE_ROWS, SELECTIONS, probe_problem
from knnx.steps.shapes import inner_training_parts, steps_problem, training_parts

# --- before any dataset is loaded ------------------------------------------------------


def use_python_path(spec, label, base_dir):
    """Make the folders and zip archives of ``spec.python_path`` (relative to ``base_dir``)
    importable, as on ``PYTHONPATH`` (an archive's bytes enter the cell key:
    :func:`knnx.plugins.object_version`); SpecError naming the first that is neither (run
    and active specs alike)."""
    folders = []
    for i, p in enumerate(spec.python_path):
        try:
            folder = (base_dir / p).resolve()
            is_dir = folder.is_dir() or (folder.is_file() and zipfile.is_zipfile(folder))
        except (OSError, RuntimeError) as exc:  # a symbolic link loop (RuntimeError before Python 3.13)
            reason = (
                "a loop of symbolic links" if "loop" in str(exc).lower() else (exc.strerror or "unreadable")
            )
            raise SpecError(f"{label}: python_path[{i}]: {base_dir / p}: {reason}") from None
        if not is_dir:
            what = "not a folder or a zip archive" if folder.exists() else "no such folder"
            raise SpecError(f"{label}: python_path[{i}]: {folder}: {what}")
        folders.append(folder)
    add_import_dirs([str(f) for f in folders], refresh=True)


def expand_datasets(spec, label):
    """``(index in spec.datasets, entry)`` of every dataset once list-valued options are
    expanded (:func:`knnx.datasets.expand_entry`); SpecError with every bad entry."""
    entries, problems = [], []
    for d, entry in enumerate(spec.datasets):
        try:
            entries += [(d, e) for e in expand_entry(entry)]
        except KnnxError as exc:
            problems.append(f"{label}: datasets[{d}]: {exc}")
    if problems:
        raise SpecError.from_lines(problems)
    return entries


def check_size(spec, label, n_datasets=None):
    """Refuse a spec of more than MAX_CELLS cells, counted before any grid is expanded
    (``n_datasets``: the datasets once list-valued options are expanded)."""
    n_datasets = len(spec.datasets) if n_datasets is None else n_datasets

    def count(params):
        return math.prod(len(v) if isinstance(v, list) else 1 for v in params.values())

    settings = sum(
        max([count(algo.params)] + [count({**algo.params, **p}) for p in algo.params_for.values()])
        for algo in spec.algorithms
    )
    n_splits = spec.protocol.n_splits()
    n_cells = n_datasets * n_splits * settings
    if n_cells > MAX_CELLS:
        raise SpecError(
            f"{label}: algorithms: the grid expands to {n_cells} cells ({n_datasets} dataset(s) x "
            f"{n_splits} split(s) x {settings} parameter setting(s)), more than the limit of {MAX_CELLS}"
        )


def metric_problems(spec):
    """Metrics that are unknown or listed twice."""
    problems = []
    for i, metric in enumerate(spec.metrics):
        if metric not in METRICS:
            problems.append(f"metrics[{i}]: unknown metric '{metric}'; known: {', '.join(METRICS)}")
        elif metric in spec.metrics[:i]:
            problems.append(f"metrics[{i}]: '{metric}' is listed twice")
    return problems


def report_problems(spec, resolved):
    """The ``report:`` section: its metric one of the spec's, its control an algorithm
    id of the spec or a contestant's label of one (``knn k=3``: the id, a blank, its
    parameters)."""
    problems = []
    if spec.report.metric is not None and spec.report.metric not in spec.metrics:
        problems.append(
            f"report.metric: '{spec.report.metric}' is not a metric of this spec; its metrics: {', '.join(spec.metrics)}"
        )
    control = spec.report.control
    ids = list(dict.fromkeys(ref.id for ref in resolved if ref is not None))
    resolvable = all(ref is not None for ref in resolved)  # else the failing entry is said first
    if (
        control is not None
        and resolvable
        and not any(control == i or control.startswith(f"{i} ") for i in ids)
    ):
        problems.append(
            f"report.control: '{control}' names no algorithm of this spec; its ids: {', '.join(ids)}"
        )
    return problems


def resolve_algorithms(spec, base_dir):
    """The ResolvedAlgorithm of each entry (None where it fails) and the problems."""
    resolved, problems = [], []
    for a, algo in enumerate(spec.algorithms):
        try:
            ref = resolve_algorithm(algo.model_dump(), base_dir, also_known=SELECTIONS)
        except KnnxError as exc:
            field = "estimator" if algo.estimator is not None else "name"
            problems.append(f"algorithms[{a}].{field}: {exc}")
            ref = None
        if algo.steps:
            steps, found = resolve_steps(
                [s if isinstance(s, str) else s.model_dump() for s in algo.steps], base_dir
            )
            problems += [f"algorithms[{a}].{line}" for line in found]
            if ref is not None and steps is not None:
                # named for its steps and classifier unless given an id: scale>pca>knn
                name = algo.id or ">".join([*(step.id for step in steps), ref.id])
                ref = dataclasses.replace(ref, id=name, steps=steps)
            else:
                ref = None
        resolved.append(ref)
    return resolved, problems


def id_problems(spec, resolved):
    """Entries sharing an id: allowed only when neither gives ``id``, both name the
    same algorithm (two grids of one algorithm) and neither has ``params_for`` (one
    contestant across datasets, which the other's rows would join); an ``id`` given
    is unique."""
    problems = []
    first = {}
    for a, (algo, ref) in enumerate(zip(spec.algorithms, resolved, strict=True)):
        if ref is None:
            continue
        if ref.id in first:
            b = first[ref.id]
            other, other_ref = spec.algorithms[b], resolved[b]
            same = (
                algo.id is None
                and other.id is None
                and (ref.cls, ref.fixed, _step_classes(ref))
                == (other_ref.cls, other_ref.fixed, _step_classes(other_ref))
            )
            if not same:
                problems.append(
                    f"algorithms[{a}].id: '{ref.id}' is already the id of algorithms[{b}]; give each a distinct id"
                )
            elif algo.params_for or other.params_for:
                c = b if other.params_for else a
                problems.append(
                    f"algorithms[{a}]: '{ref.id}' is also the id of algorithms[{b}], and an entry with params_for is "
                    "one contestant whose parameters depend on the dataset: give algorithms"
                    f"[{c}] an id of its own (id: {_free_id(ref.id, resolved)})"
                )
            continue
        first[ref.id] = a
    return problems


def _step_classes(ref):
    return tuple(step.cls for step in ref.steps)


def _free_id(base, resolved):
    """``base_2`` (or ``_3``, ...): the first such id no entry has."""
    taken = {ref.id for ref in resolved if ref is not None}
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def protocol_problems(spec, resolved):
    """What the protocol asks of the metrics and algorithms: the exact LpO estimate is an
    error rate, for algorithms with a closed form (``ref.lpo_risk``)."""
    if not isinstance(spec.protocol, LeavePOut):
        return []
    problems = []
    if list(spec.metrics) != ["error"]:
        problems.append("metrics: protocol lpo gives the exact leave-p-out estimate of 'error' only")
    for a, ref in enumerate(resolved):
        if ref is not None and ref.steps:
            problems.append(
                f"algorithms[{a}].steps: protocol lpo's exact closed form holds for a fixed distance on all rows; "
                "steps are fitted on each training part (use protocol kfold or partitions)"
            )
        elif ref is not None and ref.lpo_risk is None:
            problems.append(
                f"algorithms[{a}]: {ref.id} has no closed-form leave-p-out risk; protocol lpo "
                f"supports: {', '.join(LPO_RISK)}"
            )
        else:
            problems += lpo_rule_problems(spec, a, ref)
    return problems


# --- on each dataset, once loaded and split --------------------------------------------


def dataset_problems(spec, resolved, grids, item):
    """What would fail the cells of one loaded dataset (a knnx.spec.plan.PlannedDataset)
    at run time: a training part of one class, each algorithm's neighbour count against
    the training parts (and a tuned one's inner folds), then :func:`data_problems` of
    the settings its cells fit."""
    problems = []
    for s in item.splits:
        present = np.unique(item.ds.y[s.train])
        if len(present) < 2:
            problems.append(
                f"{item.where}: training part of repeat {s.repeat} fold {s.fold} of '{item.ds.name}' has a "
                f"single class ('{item.ds.classes[present[0]]}'); a classifier needs at least two"
            )
            break
    n_train_min = min(len(s.train) for s in item.splits) - spec.protocol.held_out
    for a, ref in enumerate(resolved):
        if ref is not None and item.grids[a]:
            problem = _count_problem(spec, a, ref, item, n_train_min, item.label in grids.params_for[a])
            if problem:
                problems.append(problem)
    settings = fitted_settings(spec, item.grids)
    for ds, part in _by_view(spec, resolved, settings, item):
        problems += _step_problems(resolved, part, item, ds)
        found = data_problems(spec, resolved, part, ds, item.splits, item.label)
        problems += [f"{item.where}: {p}" for p in found]
    return problems


def _by_view(spec, resolved, settings, item):
    """``[(dataset, settings)]``: the dataset as loaded and each of its other views
    (``item.views``), with the settings (per algorithm) of the cells that read it; a
    tuned entry's settings go with the view of its cell (its grid's)."""
    out = {"": [[] for _ in settings]}
    out.update({view: [[] for _ in settings] for view in item.views})
    for a, grid in enumerate(settings):
        ref = resolved[a]
        if ref is None or not grid:
            continue
        tuned = spec.algorithms[a].tune is not None
        for g in grid:
            setting = item.grids[a][0] if tuned else g
            if wanted_view(ref, setting) is not None or not item.views:  # else plan_views said why
                out[cell_view(item.views, ref, setting)][a].append(g)
    pairs = [(item.views.get(view, item.ds), part) for view, part in out.items() if view == "" or any(part)]
    return [(ds, part) for ds, part in pairs if ds is not None]  # a view that failed to load: said once


def _count_problem(spec, a, ref, item, n_train_min, own_params):
    """Algorithm ``a``'s neighbour count (``ref.neighbor_param``: name, slack) beyond
    what the training parts of ``item`` offer (for a tuned entry: its inner folds,
    which need ``tune.cv`` rows of each class), or None. ``own_params``: the dataset
    has its own settings (``params_for``)."""
    ds, tune = item.ds, spec.algorithms[a].tune
    if tune is not None:
        problem = _tune_cv_problem(a, tune.cv, ds, item.splits)
        if problem:
            return problem
        n_limit = min(_inner_rows(ds.y[s.train], tune.cv) for s in item.splits)
    # a selection step is fitted on the inner training folds of a tuned entry
    rows_min = n_limit if tune is not None else n_train_min
    step_problem = _step_count_problem(spec, a, ref, item, rows_min, own_params)
    if ref.neighbor_param is None or step_problem:
        return step_problem
    pname, slack = ref.neighbor_param
    # a tuned entry's one setting holds its grid: its largest value counts
    values = [max(v) if isinstance(v, list) else v for g in item.grids[a] if pname in g for v in [g[pname]]]
    k_max = max(int(v) for v in values) if values else 1
    if tune is not None and k_max > n_limit - slack:
        return (
            f"algorithms[{a}].params.{pname}: {pname}={k_max} exceeds the {n_limit - slack} rows an inner "
            f"training fold of '{ds.name}' can offer (tune.cv = {tune.cv})"
        )
    if k_max > n_train_min - slack:
        limit = "exceeds the" if slack == 0 else "must be below the"
        at = f"params_for.{item.label}" if own_params else "params"
        return (
            f"algorithms[{a}].{at}.{pname}: {pname}={k_max} {limit} {n_train_min} training samples "
            f"of dataset '{ds.name}' under protocol {spec.protocol.kind}"
        )
    return None


def _step_count_problem(spec, a, ref, item, n_train_min, own_params):
    """A first step's neighbour count (a selection's ``k``, its class's
    ``_neighbor_param``) beyond the rows of the smallest training part (``n_train_min``;
    a tuned entry's: of its smallest inner training fold), or None. Only the
    first step reads the training part as it is; a later one reads what the steps before
    it leave."""
    step = ref.steps[0] if ref.steps else None
    if step is None or step.neighbor_param is None:
        return None
    pname, slack = step.neighbor_param
    values = []
    for g in item.grids[a]:
        v = ref.step_settings(g)[0].get(pname, step.facts.defaults.get(pname))
        values += v if isinstance(v, list) else [v]
    values = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if not values or max(values) <= n_train_min - slack:
        return None
    at = f"params_for.{item.label}" if own_params else "params"
    tune = spec.algorithms[a].tune
    where = (
        f"rows of an inner training fold (tune.cv = {tune.cv})" if tune is not None else "training samples"
    )
    return (
        f"algorithms[{a}].{at}.{step.id}__{pname}: {pname}={max(values)} must be below the {n_train_min} {where} "
        f"of dataset '{item.ds.name}' under protocol {spec.protocol.kind} (step {step.id} votes with the "
        f"{pname} nearest other rows)"
    )


def _step_problems(resolved, settings, item, ds):
    """Transformers of one's own that change the number of rows, probed on the first rows
    of the first training part of ``ds`` (the dataset of ``item`` in the view the
    algorithms' cells read; :func:`knnx.steps.resolve.probe_problem`); one line per
    algorithm."""
    if ds.precomputed or not item.splits:
        return []
    train = item.splits[0].train[:PROBE_ROWS]
    X, y = ds.X[train], ds.y[train]
    problems = []
    for a, ref in enumerate(resolved):
        if ref is None or not ref.steps or not settings[a]:
            continue
        settings_a = ref.step_settings(settings[a][0])
        found = next(
            (p for step, s in zip(ref.steps, settings_a, strict=True) if (p := probe_problem(step, s, X, y))),
            None,
        )
        if found:
            problems.append(f"{item.where}: algorithms[{a}] ({ref.id}) on '{item.ds.name}': {found}")
    return problems


def _tune_cv_problem(a, cv, ds, splits):
    """The first training part (of every repeat and fold) with a class of fewer than
    ``cv`` rows, which ``cv`` stratified inner folds cannot spread, or None."""
    for s in splits:
        counts = np.bincount(ds.y[s.train], minlength=ds.n_classes)
        short = np.flatnonzero((counts > 0) & (counts < cv))
        if len(short):
            c = int(short[0])
            return (
                f"algorithms[{a}].tune.cv: {cv} stratified inner folds need {cv} rows of each class in every "
                f"training part; the training part of repeat {s.repeat} fold {s.fold} of '{ds.name}' has "
                f"{counts[c]} of class '{ds.classes[c]}'"
            )
    return None


def _inner_rows(y_train, cv):
    """The fewest training rows an inner fold of stratified ``cv``-fold CV keeps."""
    counts = np.bincount(y_train)
    return len(y_train) - int(sum(math.ceil(c / cv) for c in counts if c))


def data_problems(spec, resolved, settings, ds, ds_splits, label=None):
    """What validation can see of a dataset that would fail cells at run time: the range
    rule of the kernels (without standardisation), each setting against the largest
    training part (iteration counts, memory, feature splits, classes), each step of a
    setting against what it is given of every training part (its ``n_components``,
    hooks, class rows: :func:`knnx.steps.shapes.steps_problem`), exact LpO's own limits,
    and the memory of the neighbour graphs the run shares. One line each."""
    problems = type_problems(resolved, settings, ds)
    if not spec.preprocess.standardize and not ds.precomputed:  # distances are not coordinates
        try:
            check_scale(_present(ds.X))  # each training part and its queries are rows of X
        except KnnxError as exc:
            problems.append(f"'{ds.name}': {exc}")
    n_train = max(len(s.train) for s in ds_splits) - spec.protocol.held_out
    n_test = max(len(s.test) for s in ds_splits)
    parts = None if ds.precomputed else training_parts(ds, ds_splits)  # steps read features only
    inner = {}  # tune.cv: the inner training folds, on which a tuned entry's chain is fitted
    for a, grid in enumerate(settings):
        for g in grid:
            ref = resolved[a]
            if ref.steps:  # each step against what the steps before it give (knnx.steps.shapes)
                tune = spec.algorithms[a].tune
                these = parts
                if parts and tune is not None:
                    if tune.cv not in inner:
                        inner[tune.cv] = inner_training_parts(
                            ds,
                            ds_splits,
                            tune.cv,
                            lambda s: tune_seed(spec.seed, label or ds.name, s.repeat, s.fold),
                        )
                    these = inner[tune.cv] or parts
                found = steps_problem(ref, g, ds, these) if these else None
                if found:
                    hint = array_grid_hint(entry_params(spec.algorithms[a])[0], found)
                    problems.append(f"algorithms[{a}] ({ref.id}) on '{ds.name}': {found}{hint}")
                    break
                continue
            found = hook(ref.cls, "_data_problems")(g, n_train, ds.n_features, ds.n_classes)
            if found:
                hint = array_grid_hint(entry_params(spec.algorithms[a])[0], found[0])
                problems.append(f"algorithms[{a}] on '{ds.name}' ({n_train} training rows): {found[0]}{hint}")
                break
    problems += _power_problems(spec, resolved, settings, ds, ds_splits)
    return problems + _memory_problems(spec, resolved, settings, ds, n_train, n_test)


def _power_problems(spec, resolved, settings, ds, ds_splits):
    """The data checks the distances' kernels make, on each training part and its test
    rows as standardised as the spec says: Minkowski's sums of |x - y|^p
    (:func:`knnx.neighbors.search.check_power_scale`; the data's spread overflows or
    underflows them) and cosine's rows (:func:`knnx.neighbors.metrics.check_nonzero_rows`:
    none all zeros). The first algorithm (without steps, whose output validation cannot
    see) with each p, and with cosine, one line naming it, the dataset and the metric.
    Exact LpO reads no test rows."""
    if ds.precomputed:
        return []
    lpo = isinstance(spec.protocol, LeavePOut)
    checks = {}  # (metric, p) -> the first algorithm with it
    for a, grid in enumerate(settings):
        ref = resolved[a]
        if ref is None or ref.steps or "metric" not in ref.param_names:
            continue
        for g in grid:
            given = g.get("metric_params") if isinstance(g.get("metric_params"), dict) else {}
            p = given.get("p")
            if (
                g.get("metric") == "minkowski"
                and isinstance(p, int | float)
                and not isinstance(p, bool)
                and not lpo
            ):
                checks.setdefault(("minkowski, p = " + f"{float(p):g}", float(p)), a)
            elif g.get("metric") == "cosine" and not given.get("onehot"):
                checks.setdefault(("cosine", None), a)
    problems = []
    for (said, p), a in checks.items():
        for s in ds_splits:
            X_train, _, X_test, _ = split_parts(ds, s.train, s.test, spec.preprocess.standardize)
            try:
                if p is None:  # each part's rows, named by their row of the dataset (from 0)
                    for part, rows in ((X_train, s.train), (X_test, s.test)):
                        norms = check_nonzero_rows(_present(part), "", raises=False)
                        if not (norms > 0).all():
                            zero = int(rows[np.flatnonzero(~(norms > 0))[0]])
                            raise SpecError(
                                f"row {zero} is all zeros; the cosine distance needs a non-zero row"
                            )
                else:
                    check_power_scale(_present(X_train), _present(X_test), p)
            except KnnxError as exc:
                problems.append(f"algorithms[{a}] ({resolved[a].id}) on '{ds.name}': metric {said}: {exc}")
                break
    return problems


def _present(X):
    """X with each missing value (NaN, ``missing: keep``) replaced by its column's mean
    of the others: the spread the kernels see, which a missing value does not widen."""
    missing = np.isnan(X)
    if not missing.any():
        return X
    counts = (~missing).sum(axis=0)
    sums = np.where(missing, 0.0, X).sum(axis=0)
    # a column missing everywhere counts as 0 (nanmean warned "Mean of empty slice" on stderr)
    means = np.divide(sums, counts, out=np.zeros(X.shape[1]), where=counts > 0)
    return np.where(missing, means[None, :], X)


def _memory_problems(spec, resolved, settings, ds, n_train, n_test):
    """Exact LpO's limits (two classes for distance weights, memory) and the memory of
    the neighbour graphs the run shares, as wide as the largest neighbour count."""
    problems = []
    lpo = spec.protocol if isinstance(spec.protocol, LeavePOut) else None
    graph_k = 0
    for a, grid in enumerate(settings):
        ref = resolved[a]
        for g in grid:
            if lpo is not None and ref.lpo_risk is not None:
                problem = _lpo_problem(a, g, ds, lpo.p)
                if problem:
                    problems.append(problem)
                    break
            elif ref.neighbor_param is not None:
                graph_k = max([graph_k, *ref.neighbor_counts(g)])
    if graph_k:
        k = min(graph_k, n_train)
        need = ds.X.nbytes + graph_bytes(n_train, k, n_train, ds.n_features) + 16 * n_test * k
        problem = memory_problem(
            need, f"the neighbour graphs of '{ds.name}' ({n_train} training rows, k = {k})"
        )
        if problem:
            problems.append(problem)
    return problems


def _lpo_problem(a, setting, ds, p):
    """Why the exact leave-``p``-out risk of setting ``setting`` cannot be computed on ``ds``, or None."""
    if setting.get("weights") == "distance" and ds.n_classes > 2:
        return (
            f"algorithms[{a}]: protocol lpo with weights='distance' is exact for two classes only; "
            f"'{ds.name}' has {ds.n_classes}"
        )
    what = f"algorithms[{a}]: exact leave-{p}-out of k up to {setting['k']} on '{ds.name}'"
    return memory_problem(lpo_bytes(ds.n_samples, ds.n_features, p, setting["k"]), what)


# --- across the datasets ---------------------------------------------------------------


def posterior_problems(spec, planned):
    """Posterior metrics asked of datasets without a true posterior."""
    no_posterior = [
        f"{item.where} ('{item.ds.name}')"
        for item in planned
        if item.ds is not None and item.ds.posterior is None
    ]
    problems = []
    for i, metric in enumerate(spec.metrics):
        if METRIC_INPUT.get(metric) == "posterior" and no_posterior and metric not in spec.metrics[:i]:
            which = ", ".join(no_posterior)
            problems.append(
                f"metrics[{i}]: {metric} compares with the true posterior, and {which} "
                f"{'has' if len(no_posterior) == 1 else 'have'} none (only synthetic datasets have one)"
            )
    return problems


def params_for_problems(spec, labels_seen):
    """``params_for`` keys that name no dataset (``labels_seen``: the datasets' ids)."""
    return [
        f"algorithms[{a}].params_for.{ds_id}: no dataset has this id; ids: {', '.join(labels_seen)}"
        for a, algo in enumerate(spec.algorithms)
        for ds_id in algo.params_for
        if ds_id not in labels_seen
    ]


def duplicate_problems(planned, resolved):
    """Settings of one id given by two entries on one dataset (each reported once)."""
    problems, reported = [], set()
    for item in planned:
        seen_cells = {}
        for a, grid in enumerate(item.grids):
            for g in grid:
                key = (resolved[a].id, canonical_json(g))
                if key in seen_cells and seen_cells[key] != a and (a, key) not in reported:
                    reported.add((a, key))
                    problems.append(
                        f"algorithms[{a}]: {key[0]} {key[1]} is also in algorithms[{seen_cells[key]}]; each setting once"
                    )
                    break
                seen_cells.setdefault(key, a)
    return problems


def cell_count_problem(planned):
    """A line if the cells, counted once grids are expanded and splits drawn, exceed MAX_CELLS."""
    n_cells = sum(len(item.splits) * sum(len(g) for g in item.grids) for item in planned)
    if n_cells > MAX_CELLS:
        return [f"algorithms: the grid expands to {n_cells} cells, more than the limit of {MAX_CELLS}"]
    return []
