"""Active-learning experiments from a YAML spec: ``knnx active SPEC``.

A spec names datasets and the loop's settings (Celisse & Mary-Huard 2011, Sec. 4.3)::

    name: lpo-active
    seed: 0
    datasets:                       # as in run specs: bundled names, csv or synthetic entries
      - {synthetic: celisse2011, n: 10050, q: 0.2, id: celisse2011-q0.2}
      - spambase
    start: 50        # size of the start set E^0
    pool: null       # pool size; null = every other row
    m: 5             # points queried per round
    rounds: 60
    p_select: 10     # committee of the point-selection step
    p_tune: 10       # LpO of the tuning step
    k_max: 50
    k_fixed: null    # an integer fixes k (Sec. 4.4) instead of tuning it
    strategies: [qbc, passive]
    repeats: 10
    standardize: false  # standardise with the mean/std of start + pool features (no labels used)

Repeat r draws its data (synthetic entries: a fresh sample) and its start set from
seeds derived from (seed, dataset label, r); both strategies of a repeat share the
start set and pool, so their comparison is paired.

Outputs in OUT (default ``results/<name>``): ``results.csv`` in knnx's tidy schema
(algorithm = ``lpo_qbc`` or ``passive_lpo``, fold = round, metrics ``error`` on the
remaining pool and ``chosen_k``), written one (dataset, strategy, repeat) run at a
time so that a rerun resumes; ``summary.csv`` (mean, std, n per round);
``active.png`` (error against training size, Fig. 4) and ``active_k.png`` (chosen
k per round, Fig. 5 right).
"""

from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knnx.active import active_learning
from knnx.datasets import dataset_label, load_dataset
from knnx.errors import KnnxError, ResultsError, SpecError, WriteError
from knnx.limits import MAX_RUNS, graph_bytes, lpo_bytes, memory_problem
from knnx.plots import plain_text
from knnx.preprocess import apply_standardizer, fit_standardizer
from knnx.results import (
    COLUMNS,
    ResultsWriter,
    atomic_write_text,
    output_lock,
    prepare_output_folder,
    read_results,
    recover,
    rows_to_csv,
    save_figure,
)
from knnx.spec import (
    SEED_DATA,
    SEED_SPLITS,
    Name,
    _pydantic_problems,
    canonical_json,
    dataset_seedseq,
    read_spec,
)

__all__ = ["ActiveSpec", "run_active", "ALGORITHM_NAMES"]

ALGORITHM_NAMES = {"qbc": "lpo_qbc", "passive": "passive_lpo"}
METRIC_NAMES = ("error", "chosen_k")


class ActiveSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 0
    datasets: Annotated[list[str | dict[str, Any]], Field(min_length=1)]
    start: Annotated[int, Field(ge=2)] = 50
    pool: Annotated[int, Field(ge=1)] | None = None
    m: Annotated[int, Field(ge=1)] = 5
    rounds: Annotated[int, Field(ge=0)] = 60
    p_select: Annotated[int, Field(ge=1)] = 10
    p_tune: Annotated[int, Field(ge=1)] = 10
    k_max: Annotated[int, Field(ge=1)] = 50
    k_fixed: Annotated[int, Field(ge=1)] | None = None
    strategies: Annotated[list[Literal["qbc", "passive"]], Field(min_length=1)] = Field(
        default_factory=lambda: ["qbc", "passive"]
    )
    repeats: Annotated[int, Field(ge=1)] = 10
    standardize: bool = False


def validate_active_spec(source):
    """(ActiveSpec, source label, base folder); SpecError with one line per problem."""
    data, label, base_dir = read_spec(source)
    try:
        spec = ActiveSpec.model_validate(data)
    except ValidationError as exc:
        problems = _pydantic_problems(exc, data, model_at=lambda loc, data: ActiveSpec if not loc else None)
        raise SpecError.from_lines([f"{label}: {p}" for p in problems]) from None
    problems = [p for p in (_runs_problem(spec),) if p is not None]
    if len(set(spec.strategies)) != len(spec.strategies):
        problems.append("strategies: each strategy once")
    if spec.start <= spec.p_tune:
        problems.append(f"p_tune: {spec.p_tune} must be below start ({spec.start})")
    if spec.k_fixed is not None and spec.k_fixed > spec.start - 1:
        problems.append(f"k_fixed: {spec.k_fixed} must be below start ({spec.start})")
    labels = {}
    for d, entry in enumerate(spec.datasets):
        try:
            lab = dataset_label(entry)
            if lab in labels:
                raise SpecError(f"same name as datasets[{labels[lab]}] ('{lab}'); give one an 'id'")
            labels[lab] = d
            ds = load_dataset(entry, seed=dataset_seedseq(spec.seed, lab, SEED_DATA), base_dir=base_dir)
        except KnnxError as exc:
            problems.append(f"datasets[{d}]: {exc}")
            continue
        need = spec.start + (spec.pool if spec.pool is not None else spec.rounds * spec.m)
        if ds.n_samples < need or ds.n_samples - spec.start < spec.rounds * spec.m:
            problems.append(
                f"datasets[{d}]: '{lab}' has {ds.n_samples} rows; start {spec.start} + a pool of at least "
                f"{max(need - spec.start, spec.rounds * spec.m)} are needed"
            )
            continue  # the sizes below would be of rows the data does not have
        n_train = spec.start + spec.rounds * spec.m  # the training set of the last round
        n_pool = spec.pool if spec.pool is not None else ds.n_samples - spec.start
        k_max = spec.k_fixed or spec.k_max
        for problem in (
            memory_problem(
                lpo_bytes(n_train, ds.n_features, spec.p_tune, min(k_max, max(1, n_train - spec.p_tune))),
                f"'{lab}': exact leave-{spec.p_tune}-out on {n_train} rows (p_tune)",
            ),
            memory_problem(
                graph_bytes(n_pool, min(k_max + spec.p_select, n_train), n_train, ds.n_features),
                f"'{lab}': the committee's neighbours of {n_pool} pool rows (p_select)",
            ),
        ):
            if problem:
                problems.append(f"datasets[{d}]: {problem}")
    if spec.pool is not None and spec.pool < spec.rounds * spec.m:
        problems.append(f"pool: {spec.pool} is smaller than rounds x m = {spec.rounds * spec.m}")
    if problems:
        raise SpecError.from_lines([f"{label}: {p}" for p in problems])
    return spec, label, base_dir


def _runs_problem(spec):
    """A line if the spec asks for more than MAX_RUNS runs (datasets x strategies x repeats)."""
    runs = len(spec.datasets) * len(spec.strategies) * spec.repeats
    if runs > MAX_RUNS:
        return (
            f"repeats: {len(spec.datasets)} dataset(s) x {len(spec.strategies)} strateg"
            f"{'y' if len(spec.strategies) == 1 else 'ies'} x {spec.repeats} repeats = {runs} runs, more than "
            f"the limit of {MAX_RUNS}"
        )
    return None


def _repeat_seed(spec, lab, purpose, r):
    base = dataset_seedseq(spec.seed, lab, purpose)
    return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, r))


def _repeat_data(spec, entry, lab, base_dir, r):
    """(X_start, y_start, X_pool, y_pool) of repeat r (y as class names)."""
    ds = load_dataset(entry, seed=_repeat_seed(spec, lab, SEED_DATA, r), base_dir=base_dir)
    rng = np.random.default_rng(_repeat_seed(spec, lab, SEED_SPLITS, r))
    order = rng.permutation(ds.n_samples)
    start = order[: spec.start]
    pool = order[spec.start :] if spec.pool is None else order[spec.start : spec.start + spec.pool]
    X = ds.X
    if spec.standardize:
        used = np.concatenate([start, pool])
        X = apply_standardizer(fit_standardizer(X[used]), X, f"'{lab}'")
    return X[start], ds.y[start], X[pool], ds.y[pool], int(rng.integers(2**63))


def _params(spec, strategy):
    params = {"m": spec.m, "p_tune": spec.p_tune, "k_max": spec.k_max, "k_fixed": spec.k_fixed}
    if strategy == "qbc":
        params["p_select"] = spec.p_select
    return canonical_json(params)


def _complete_runs(path, rounds):
    """Drop runs missing a round (a crash between rows); return the keys of complete runs."""
    recover(path, list(METRIC_NAMES))
    frame = read_results(path)
    if frame.empty:
        return set()
    unit = ["dataset", "algorithm", "params", "repeat"]
    sizes = frame[frame["metric"] == "error"].groupby(unit)["fold"].nunique()
    complete = {key for key, size in sizes.items() if size == rounds + 1}
    keep = [tuple(row) in complete for row in frame[unit].itertuples(index=False)]
    kept = frame[keep]
    if len(kept) != len(frame):
        atomic_write_text(path, rows_to_csv(kept[COLUMNS].to_dict("records"), header=True))
    return {(d, a, p, int(r)) for d, a, p, r in complete}


def run_active(spec, *, out=None, resume=True, progress=None, repeats=None):
    """Run an active-learning spec (see the module docstring); returns the output folder.

    ``repeats`` overrides the spec's count (the normalised spec written to OUT says so,
    so a folder never mixes counts).
    """
    source = spec
    spec, _, base_dir = validate_active_spec(source)
    if repeats is not None:
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise SpecError(f"--repeats: expected an integer >= 1, got {repeats!r}")
        spec = spec.model_copy(update={"repeats": repeats})
        problem = _runs_problem(spec)
        if problem is not None:
            raise SpecError(f"--{problem}")
    out = prepare_output_folder(
        out if out is not None else Path("results") / spec.name,
        source=None if isinstance(source, dict) else source,
    )
    with output_lock(out):
        try:
            return _run_locked(spec, out, base_dir, resume, progress)
        except WriteError as exc:
            raise WriteError(
                f"{exc}; the runs finished before are saved: rerun the same command to resume"
            ) from None


def _run_locked(spec, out, base_dir, resume, progress):
    results_path, spec_path = out / "results.csv", out / "spec.yaml"
    normalized = yaml.safe_dump(spec.model_dump(), sort_keys=False)
    done = set()
    if resume and results_path.exists():
        if not spec_path.is_file() or spec_path.read_bytes() != normalized.encode("utf-8"):
            raise ResultsError(
                f"{out}: holds results of a different spec; rerun with --no-resume to start over, or use --out"
            )
        done = _complete_runs(results_path, spec.rounds)
    elif not resume:
        for name in ("results.csv", "summary.csv", "active.png", "active_k.png"):
            (out / name).unlink(missing_ok=True)
    atomic_write_text(spec_path, normalized)
    writer = ResultsWriter(results_path)
    protocol = canonical_json(
        {
            "kind": "active",
            "start": spec.start,
            "pool": spec.pool,
            "rounds": spec.rounds,
            "standardize": spec.standardize,
        }
    )
    runs = [
        (d, entry, s, r)
        for d, entry in enumerate(spec.datasets)
        for r in range(spec.repeats)
        for s in spec.strategies
    ]
    total, count = len(runs), 0
    if progress:
        progress(0, total, "")
    for _, entry, strategy, r in runs:
        lab = dataset_label(entry)
        params = _params(spec, strategy)
        count += 1
        if (lab, ALGORITHM_NAMES[strategy], params, r) in done:
            if progress:
                progress(count, total, f"{lab} {strategy} repeat {r} (done)")
            continue
        X0, y0, Xp, yp, loop_seed = _repeat_data(spec, entry, lab, base_dir, r)
        records = active_learning(
            X0,
            y0,
            Xp,
            yp,
            strategy=strategy,
            rounds=spec.rounds,
            m=spec.m,
            p_select=spec.p_select,
            p_tune=spec.p_tune,
            k_max=spec.k_max,
            k_fixed=spec.k_fixed,
            seed=loop_seed,
        )
        rows = []
        for rec in records:
            base = {
                "experiment": spec.name,
                "dataset": lab,
                "algorithm": ALGORITHM_NAMES[strategy],
                "params": params,
                "protocol": protocol,
                "repeat": r,
                "fold": rec.round,
                "seed": spec.seed,
                "n_train": rec.n_train,
                "n_test": rec.n_pool,
                "fit_seconds": rec.seconds,
                "predict_seconds": 0.0,
            }
            rows.append({**base, "metric": "error", "value": rec.error})
            rows.append({**base, "metric": "chosen_k", "value": float(rec.k)})
        writer.append(rows)
        if progress:
            progress(count, total, f"{lab} {strategy} repeat {r}")
    write_active_summaries(results_path, out)
    return out


def active_summary(frame):
    """mean, std, n of each metric per (dataset, algorithm, round, n_train)."""
    keys = ["dataset", "algorithm", "fold", "n_train", "metric"]
    summary = frame.groupby(keys, sort=False)["value"].agg(["mean", "std", "size"]).reset_index()
    return summary.rename(columns={"fold": "round", "size": "n"})


def write_active_summaries(results_path, out):
    from matplotlib.figure import Figure

    frame = read_results(results_path)
    if frame.empty:
        return
    summary = active_summary(frame)
    atomic_write_text(Path(out) / "summary.csv", summary.to_csv(index=False, lineterminator="\n"))
    for metric, name, ylabel in (
        ("error", "active.png", "error on the pool"),
        ("chosen_k", "active_k.png", "k"),
    ):
        sub = summary[summary["metric"] == metric]
        datasets = list(dict.fromkeys(sub["dataset"]))
        with plain_text():  # dataset names drawn as written
            fig = Figure(figsize=(4.5 * len(datasets), 3.6), layout="constrained")
            axes = fig.subplots(1, len(datasets), squeeze=False)[0]
            for ax, lab in zip(axes, datasets, strict=True):
                for algo, part in sub[sub["dataset"] == lab].groupby("algorithm", sort=False):
                    ax.plot(
                        part["n_train"],
                        part["mean"],
                        marker="o" if algo == "lpo_qbc" else "+",
                        ms=3,
                        label=algo,
                    )
                ax.set_title(lab, fontsize=9)
                ax.set_xlabel("training set size")
                ax.set_ylabel(ylabel)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=7)
            save_figure(fig, Path(out) / name, dpi=110)
