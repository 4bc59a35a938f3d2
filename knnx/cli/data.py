"""Commands on data: ``knnx datasets`` and ``select-k``."""

import math
import sys
from pathlib import Path

import typer
from rich.table import Table

from knnx._text import markdown_text
from knnx.cli.core import ListFormat, RiskFormat, Weights, console, reported
from knnx.errors import KnnxError

SUITE_COLUMNS = [
    "name",
    "n",
    "d",
    "numeric",
    "nominal",
    "classes",
    "imbalance",
    "missing",
    "partitions",
    "source",
]


def datasets(
    fmt: ListFormat = typer.Option(ListFormat.table, "--format", help="table, csv or md (Markdown)."),
    suite: str = typer.Option(
        None,
        "--suite",
        help="List a benchmark suite (keel-standard, keel-imbalanced) instead of the bundled sets.",
    ),
):
    """List the bundled datasets (name, n, d, classes, predefined split, size on file, source), or with
    --suite a benchmark suite's (name, n, d = numeric + nominal, classes, imbalance ratio, missing
    cells, the source's partitions, source)."""
    from knnx.datasets import describe_bundled
    from knnx.datasets.suites import describe_suite

    with reported():
        rows = describe_suite(suite) if suite is not None else describe_bundled()
    if suite is not None:
        keys = SUITE_COLUMNS
        title = (
            f"suite {suite}: {len(rows)} datasets; n and d as filed (d = numeric + nominal attributes), "
            "imbalance = largest class / smallest, missing = missing cells"
        )
    else:
        keys = ["name", "n", "d", "classes", "split", "files", "source"]
        if fmt is not ListFormat.table:
            keys = ["name", "n", "d", "classes", "class_counts", "split", "files", "source"]
        title = (
            "bundled datasets: n x d as loaded with the default treatments, 'files' as shipped "
            "(datasets/README.md explains each treatment; --format csv adds class counts)"
        )
    if fmt is ListFormat.csv:
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=keys, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return
    if fmt is ListFormat.md:
        lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        lines += ["| " + " | ".join(markdown_text(str(r[k])) for k in keys) + " |" for r in rows]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    table = Table(*keys, title=title)
    for row in rows:
        table.add_row(*(str(row[k]) for k in keys))
    console.print(table)


def select_k_cmd(
    p: int = typer.Option(..., "--p", help="Points held out per split (1 <= p < n)."),
    dataset: str = typer.Option(None, "--dataset", help="Bundled dataset name (default: ripley)."),
    csv_path: Path = typer.Option(None, "--csv", help="A CSV file instead of a bundled dataset."),
    label: str = typer.Option("label", "--label", help="Label column of --csv."),
    k_max: int = typer.Option(50, "--k-max", help="Largest k (k_max <= n - p)."),
    weights: Weights = typer.Option(Weights.uniform, "--weights", help="uniform or distance."),
    metric: str = typer.Option(
        "euclidean",
        "--metric",
        help="Distance of the kNN rule (euclidean, manhattan, chebyshev, minkowski, seuclidean, mahalanobis, "
        "cosine, hamming, heom, hvdm, vdm, gower), fitted on the rows used.",
    ),
    metric_param: list[str] = typer.Option(
        None,
        "--metric-param",
        help="A finite metric parameter KEY=VALUE, e.g. p=3 for minkowski (repeatable; p = inf: chebyshev).",
    ),
    fmt: RiskFormat = typer.Option(RiskFormat.table, "--format", help="table, csv or json."),
):
    """Choose k by exact leave-p-out: R_LpO(k) for k = 1..K_MAX and the smallest k of minimal risk.

    Uses the training part of a dataset with a predefined split, else all of it. With --metric the
    neighbours are ranked under that distance, its statistics (ranges, deviations, ...) fitted once on
    those rows; the dataset's nominal attributes are read as a kNN under that metric reads them in a
    run: category codes for a metric that takes them (hamming, heom, hvdm, vdm, gower), else one-hot
    indicators.
    """
    from knnx.lpo.risk import select_k

    with reported():
        if dataset is not None and csv_path is not None:
            raise KnnxError("--dataset and --csv: give one of them, not both")
        entry = (
            {"csv": str(csv_path), "label": label} if csv_path is not None else {"name": dataset or "ripley"}
        )
        params = _metric_params(metric, metric_param)
        ds = _knn_dataset(entry, metric, params)
        part = "training part" if ds.split is not None else "all rows"
        idx = ds.split[0] if ds.split is not None else slice(None)
        X, y = ds.X[idx], ds.y[idx]
        nominal = [int(j) for j in ds.nominal] or None  # the codes' columns, as protocol lpo passes them
        if 0 < len(y) - p < k_max:  # named as the option it is (its default, 50, included)
            raise KnnxError(
                f"--k-max {k_max}: at most n - p = {len(y) - p} on these {len(y)} rows with --p {p} "
                f"(the default is 50); give --k-max {len(y) - p} or less"
            )
        k_p, risk = select_k(
            X, y, p, k_max, weights.value, metric=metric, metric_params=params, nominal=nominal
        )
    if fmt is RiskFormat.csv:
        sys.stdout.write("k,lpo_risk\n" + "".join(f"{k},{r!r}\n" for k, r in enumerate(risk.tolist(), 1)))
        return
    if fmt is RiskFormat.json:
        import json

        doc = {
            "dataset": ds.name,
            "part": part,
            "n": int(X.shape[0]),
            "p": p,
            "k_max": k_max,
            "weights": weights.value,
            "metric": metric,
            "metric_params": params,
            "selected_k": k_p,
            "lpo_risk": risk.tolist(),
        }
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    settings = "".join(f" {key}={value}" for key, value in (params or {}).items())
    under = "" if metric == "euclidean" and not params else f", metric {metric}{settings}"
    table = Table(
        "k", "lpo_risk", title=f"exact leave-{p}-out risk, {ds.name} ({part}, n = {X.shape[0]}{under})"
    )
    for k, r in enumerate(risk.tolist(), 1):
        mark = " <- selected" if k == k_p else ""
        table.add_row(str(k), f"{r:.6f}{mark}")
    console.print(table)
    console.print(f"selected k = {k_p} (R_LpO = {risk[k_p - 1]:.6f}; smallest k of minimal risk)")


def _knn_dataset(entry, metric, params):
    """The dataset ``entry`` in the view a kNN under ``metric`` (with ``params``) reads in
    a run (:func:`knnx.spec.views.wanted_view`, the runner's rule): its nominal attributes
    as category codes for a metric that takes them (hamming, heom, hvdm, vdm, gower),
    else one-hot indicators; the entry as it is where it has no such view."""
    from knnx.datasets import load_dataset
    from knnx.datasets.views import default_view, view_entry
    from knnx.estimators.registry import resolve_algorithm
    from knnx.spec.views import wanted_view

    view = wanted_view(resolve_algorithm({"name": "knn"}), {"metric": metric, "metric_params": params})
    if view == default_view(entry) or view_entry(entry, view) is None:
        view = None  # as plan_views: the entry as loaded
    return load_dataset(entry, view=view)


def _metric_params(metric, pairs):
    """``--metric`` checked and the ``--metric-param KEY=VALUE`` pairs as a dict of numbers
    (KnnxError naming the flag otherwise)."""
    from knnx.neighbors.metrics import METRIC_NAMES, check_metric_params

    if metric not in METRIC_NAMES or metric == "precomputed":
        names = ", ".join(n for n in METRIC_NAMES if n != "precomputed")
        raise KnnxError(f"--metric: expected one of {names}, got {metric!r}")
    params = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not key or number is None:
            raise KnnxError(f"--metric-param: expected KEY=VALUE with a number VALUE (p=3), got {pair!r}")
        if not math.isfinite(number):  # as a spec: the json output has no inf, and p = inf is chebyshev
            hint = "; minkowski with p = inf is --metric chebyshev" if number > 0 else ""
            raise KnnxError(f"--metric-param: {pair!r} is not a finite number{hint}")
        if key.strip() in params:
            raise KnnxError(f"--metric-param: {key.strip()!r} given twice; give each once")
        params[key.strip()] = int(number) if number.is_integer() else number
    try:
        check_metric_params(metric, params)
    except KnnxError as exc:
        raise KnnxError(f"--metric-param: {str(exc).removeprefix('metric_params: ')}") from None
    return params or None
