"""Which view of a dataset each contestant sees (:mod:`knnx.datasets.views`).

A dataset entry that does not say ``categorical`` is loaded once as it is and, where a
contestant takes another view of it, once more in that view; both have the entry's id,
rows and folds. The view a contestant takes is what its first consumer declares
(:func:`wanted_view`):

* the first step, if it has steps, read as a classifier is below: the nominal codes
  (``keep``) if it has a ``nominal`` parameter (which the runner sets) and no
  ``metric`` (``encode``) or a metric that takes them (a selection under hvdm), else
  one-hot indicators;
* else the classifier: the codes if it has a ``nominal`` parameter (which the runner
  sets to the nominal columns) and either no ``metric`` parameter or a metric that
  takes them (hamming, heom, hvdm, vdm, gower, or a numeric metric with
  ``metric_params: {onehot: true}``, which makes indicators of each training part);
  one-hot indicators otherwise (a numeric metric, cw/pw/cpw, scikit-learn's classes,
  one's own without a ``nominal`` parameter).

Missing values are the entry's rule (``missing``) in either view. A metric that takes
nominal attributes is never run on one-hot indicators of a dataset typed with nominal
attributes, and a numeric one never on codes (:func:`view_problem`).
"""

import numpy as np

from knnx.neighbors.metrics import METRICS

KEEP, ONEHOT = "keep", "onehot"


def _as_list(value):
    return value if isinstance(value, list) else [value]


def wanted_view(ref, setting):
    """``keep`` or ``onehot``: the view the contestant ``ref`` (a ResolvedAlgorithm) takes
    with ``setting`` (its params; a tuned cell's lists of values included); None when
    the values of a tuned list take different views."""
    if ref.steps:
        first = ref.steps[0]
        return _declared_view(first.param_names, lambda: ref.step_settings(setting)[0])
    return _declared_view(ref.param_names, lambda: ref.estimator_setting(setting))


def _declared_view(names, own_setting):
    """The view a consumer with parameters ``names`` takes (its setting: ``own_setting()``):
    one-hot without a ``nominal`` parameter, the codes with one and no ``metric``, else
    as its metric says (None when a tuned list's metrics differ)."""
    if "nominal" not in names:
        return ONEHOT
    if "metric" not in names:  # it declares that it takes nominal codes
        return KEEP
    own = own_setting()
    views = set()
    for metric in _as_list(own.get("metric", "euclidean")):
        for params in _as_list(own.get("metric_params")):
            info = METRICS.get(metric) if isinstance(metric, str) else None
            onehot = isinstance(params, dict) and bool(params.get("onehot"))
            views.add(KEEP if (info is not None and info.nominal) or onehot else ONEHOT)
    return views.pop() if len(views) == 1 else None


def cell_view(views, ref, setting):
    """The view a cell of contestant ``ref`` with ``setting`` reads: a key of ``views``
    (the views of its dataset other than the entry's own), or ``""`` for the entry as
    loaded."""
    view = wanted_view(ref, setting)
    return view if view in views else ""


def plan_views(spec, entry, item, resolved, base_dir):
    """``(views, problems)``: the views of dataset entry ``entry`` (``item``: its
    knnx.spec.plan.PlannedDataset, loaded as the entry says) that its contestants take
    and that differ from it (``{view: dataset}``; none for an entry that says
    ``categorical``, or whose source types no nominal attribute), each loaded as
    validation loads the entry; and a line for each that fails to load or to match the
    entry's rows (its dataset None: the checks of its cells are left out rather than
    made on the entry's data), and for a tuned entry whose grid takes two views."""
    from knnx.datasets import load_dataset
    from knnx.datasets.views import default_view, view_entry
    from knnx.errors import KnnxError, describe
    from knnx.spec.seeds import SEED_DATA, dataset_seedseq

    wanted, problems, mixed = set(), [], []
    for a, ref in enumerate(resolved):
        grid = item.grids[a] if ref is not None else []
        for g in grid:
            view = wanted_view(ref, g)
            if view is None:
                mixed.append(f"{item.where}: algorithms[{a}] ({ref.id}) on '{item.label}'")
                wanted.update((KEEP, ONEHOT))
                break
            wanted.add(view)
    views = {}
    own = default_view(entry)
    for view in sorted(wanted - {own}):
        if view_entry(entry, view) is None or item.ds is None:
            continue
        seed = dataset_seedseq(spec.seed, item.label, SEED_DATA)
        try:
            ds = load_dataset(entry, seed=seed, base_dir=base_dir, view=view)
        except Exception as exc:  # noqa: BLE001 - DataError, or a loader's fault
            said = (str(exc).splitlines() or [""])[0] if isinstance(exc, KnnxError) else describe(exc)
            problems.append(f"{item.where}: its {view} view: {said}")
            views[view] = None  # its cells are not checked on the entry's data instead
            continue
        if not np.array_equal(ds.y, item.ds.y):
            problems.append(
                f"{item.where}: its {view} view has other rows or labels than the entry as loaded (a loader must "
                "give the same rows whatever categorical says)"
            )
            views[view] = None
        elif not _same_data(ds, item.ds):
            views[view] = ds
    if views:  # a dataset with nominal attributes: one view per cell
        problems += [
            f"{at}: its tune: grid holds metrics that take different views of the nominal attributes (codes "
            "and one-hot indicators); tune them in two algorithm entries"
            for at in mixed
        ]
    return views, problems


def _same_data(a, b):
    return a.X.shape == b.X.shape and np.array_equal(a.X, b.X, equal_nan=True) and a.nominal == b.nominal


_SAID = {KEEP: "nominal codes", ONEHOT: "one-hot"}


def number_view_said(ds):
    """How the view a contestant that reads numbers gets writes ``ds``'s nominal
    attributes: ``one-hot``, or ``numbers as filed`` where the source files them as
    numbers and the entry's encoding leaves them so (bundled heart, australian and vote:
    thal 3/6/7, a vote 0/1 with 0.5 for an abstention)."""
    typed = set(ds.metadata.get("nominal_attributes", ())) if isinstance(ds.metadata, dict) else set()
    return "numbers as filed" if any(name in typed for name in ds.feature_names) else _SAID[ONEHOT]


def views_said(vspec, d):
    """What each contestant of a validated run spec saw of dataset ``d`` when it has other
    views: ``knn_hvdm: nominal codes; knn, rf: one-hot`` (contestants by id in the
    spec's order, a contestant whose settings read two views under each; ``numbers as
    filed`` for a view that leaves them as the source files them, :func:`number_view_said`);
    ``""`` for a dataset every contestant read as its entry gives it."""
    from knnx.datasets.views import default_view

    if not vspec.views or not vspec.views[d]:
        return ""
    own = default_view(vspec.entries[d])
    seen = {}  # view -> contestant ids
    for cell in vspec.cells:
        if cell.dataset_index == d:
            view = vspec.cell_view(cell) or own
            ids = seen.setdefault(view, [])
            if cell.algorithm not in ids:
                ids.append(cell.algorithm)
    said = {**_SAID}
    if ONEHOT in seen:
        said[ONEHOT] = number_view_said(vspec.views[d].get(ONEHOT, vspec.datasets[d]))
    return "; ".join(f"{', '.join(ids)}: {said[view]}" for view, ids in sorted(seen.items()))
