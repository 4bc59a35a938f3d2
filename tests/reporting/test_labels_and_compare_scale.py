"""Configuration labels name one setting each (issue 33, item 11), and ``knnx compare``
answers at scale with the numbers of the pair-by-pair code (item 15).

Labels: two distinct settings of one algorithm never share a label (values whose text
is equal, an absent parameter beside an empty string, a value holding the label's
separators, an algorithm name that reads like a label), while seeds stay pooled, and
say so. Scale: the vectorised pairwise statistics against the pair-by-pair code they
replaced, kept below as the oracle, to the bit; the limit on paired tests."""

import io
import json
import math
import textwrap

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import ResultsError
from knnx.results import read_results, results_columns, rows_to_csv, with_param_columns
from knnx.stats.configurations import configuration_labels, dataset_dependent

runner = CliRunner()


def _frame(settings, datasets=("d1", "d2"), folds=3, values=None, metric="error", seeds=None):
    """A results frame read back from CSV: ``settings`` is a list of (algorithm, params
    dict); every setting has ``folds`` folds on every dataset, value ``values(i, d, f)``
    (default: a distinct value per setting)."""
    rows = []
    for d_index, d in enumerate(datasets):
        for i, (algorithm, params) in enumerate(settings):
            for f in range(folds):
                value = values(i, d_index, f) if values else 0.1 * (i + 1) + 0.01 * f + 0.001 * d_index
                rows.append(
                    {
                        "experiment": "e",
                        "dataset": d,
                        "algorithm": algorithm,
                        "params": json.dumps(params, sort_keys=True, separators=(",", ":")),
                        "protocol": '{"kind":"kfold"}',
                        "repeat": 0,
                        "fold": f,
                        "seed": 0,
                        "metric": metric,
                        "value": value,
                        "n_train": 20,
                        "n_test": 10,
                        "fit_seconds": 0.0,
                        "predict_seconds": 0.0,
                        "tune_seconds": 0.0,
                    }
                )
    names = sorted({n for _, p in settings for n in p})
    text = rows_to_csv(with_param_columns(rows, names), header=True, columns=results_columns(names))
    return read_results(io.StringIO(text))


def _labels(frame):
    return list(dict.fromkeys(configuration_labels(frame)))


# --- item 11: one label per setting ---------------------------------------------------


def test_values_whose_text_is_equal_get_distinct_labels():
    # 3 and "3", true and "true" are written alike in param_tag: four settings, four labels
    settings = [("tag", {"k": 3, "tag": v}) for v in (3, "3", True, "true")]
    frame = _frame(settings)
    assert set(frame["param_tag"]) == {"3", "true"}  # the columns cannot tell them apart
    assert _labels(frame) == ["tag tag=3", 'tag tag="3"', "tag tag=true", 'tag tag="true"']
    # one text, two values, on one dataset only: the parameter still varies
    settings = [("tag", {"tag": 3}), ("tag", {"tag": "3"})]
    one = _frame(settings).query("~(dataset == 'd2' and params == '{\"tag\":\"3\"}')")
    assert _labels(one) == ["tag tag=3", 'tag tag="3"']


def test_an_absent_parameter_and_an_empty_string_get_distinct_labels():
    # two grids of one algorithm: one without ``tag`` (a default JSON cannot hold), one with ""
    frame = _frame([("x", {"k": 3}), ("x", {"k": 3, "tag": ""})])
    assert set(frame["param_tag"]) == {""}
    assert _labels(frame) == ["x", 'x tag=""']


def test_values_holding_the_separators_of_a_label_are_quoted():
    frame = _frame([("x", {"a": "1, b=2"}), ("x", {"a": "1", "b": "2"})])
    assert _labels(frame) == ['x a="1, b=2"', "x a=1, b=2"]


def test_an_algorithm_name_that_reads_like_a_label_is_kept_apart():
    # a hand-edited file: an algorithm named "knn k=3" beside knn's k=3
    frame = _frame([("knn k=3", {}), ("knn", {"k": 3}), ("knn", {"k": 5})])
    labels = configuration_labels(frame)
    assert _labels(frame) == ["knn k=3", "knn k=3 #2", "knn k=5"]
    assert (labels[frame["algorithm"] == "knn k=3"] == "knn k=3").all()


def test_params_that_are_no_json_object_tell_their_settings_apart():
    frame = _frame([("x", {"k": 1}), ("x", {"k": 2})])
    frame["params"] = frame["params"].map({'{"k":1}': "[1]", '{"k":2}': "garbled"})  # edited by hand
    frame = frame.drop(columns=["param_k"])
    assert _labels(frame) == ["x", "x #2"]


def test_a_parameter_that_varies_on_one_dataset_only_is_shown_everywhere():
    from knnx.stats.compare import compare

    both = _frame([("knn", {"k": 3}), ("unn", {})], datasets=("d1", "d2", "d3"))
    extra = _frame([("knn", {"k": 5})], datasets=("d1",))  # k = 5 on d1 alone
    frame = pd.concat([both, extra], ignore_index=True)
    labels = configuration_labels(frame)
    assert set(labels[frame["dataset"] == "d2"]) == {"knn k=3", "unn"}
    assert set(labels[frame["dataset"] == "d1"]) == {"knn k=3", "knn k=5", "unn"}
    result = compare(frame, select="all")
    assert list(result.means.columns) == ["knn k=3", "unn"]
    assert result.left_out.to_dict("list") == {
        "contestant": ["knn k=5"],
        "reason": ["no 'error' results on 2 of 3 datasets (d2, d3)"],
    }


def test_labels_stay_as_they_were_where_nothing_collides():
    settings = [("knn", {"k": k, "weights": w}) for k in (1, 5) for w in ("uniform", "distance")]
    settings += [("unn", {"theta": 0.1}), ("rf", {"n_estimators": 5, "random_state": 0})]
    settings += [("rf", {"n_estimators": 5, "random_state": 1})]  # a seed: pooled
    frame = _frame(settings)
    assert _labels(frame) == [
        "knn k=1, weights=uniform",
        "knn k=1, weights=distance",
        "knn k=5, weights=uniform",
        "knn k=5, weights=distance",
        "unn",
        "rf",
    ]
    # params_for: one value per dataset, different values on different datasets: one contestant
    per_dataset = _frame([("unn", {"k": 5})], datasets=("iris",))
    other = _frame([("unn", {"k": 7})], datasets=("wine",))
    both = pd.concat([per_dataset, other], ignore_index=True)
    assert _labels(both) == ["unn"] and dataset_dependent(both) == {"unn": ["param_k"]}


def test_text_equal_values_stay_apart_in_summaries_and_compare(tmp_path):
    from knnx.reporting.summaries import results_table, summarize
    from knnx.stats.compare import compare

    settings = [("tag", {"tag": 3}), ("tag", {"tag": "3"}), ("knn", {"k": 3})]
    frame = _frame(settings, datasets=("d1", "d2", "d3"))
    summary = summarize(frame, by=("dataset", "configuration"), metric="error")
    assert summary["n"].tolist() == [3] * 9  # 3 folds each: nothing pooled
    assert summary["configuration"].tolist()[:3] == ["tag tag=3", 'tag tag="3"', "knn"]
    result = compare(frame, select="all")
    assert list(result.means.columns) == ["tag tag=3", 'tag tag="3"', "knn"]
    assert result.means.loc["d1"].tolist() == pytest.approx([0.11, 0.21, 0.31], abs=1e-15)
    assert result.per_dataset["n_folds"].tolist() == [3] * 9
    table = results_table(frame, by=("dataset", "algorithm"))
    assert "| d1 | tag | 2 | **0.1600 ± 0.0555** | 6 |" in table  # two settings pooled, and counted


RUN_MODULE = '''\
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import KNeighborsClassifier


class TagNN(ClassifierMixin, BaseEstimator):
    """kNN with k = int(k), one more neighbour when ``tag`` is the string "3"."""

    def __init__(self, k=5, tag=None):
        self.k = k
        self.tag = tag

    def fit(self, X, y):
        extra = 2 if isinstance(self.tag, str) else 0
        self._model = KNeighborsClassifier(n_neighbors=int(self.k) + extra).fit(X, y)
        self.classes_ = self._model.classes_
        return self

    def predict(self, X):
        return self._model.predict(X)
'''


def test_a_real_run_keeps_text_equal_settings_apart_in_summary_csv_and_compare(tmp_path):
    (tmp_path / "labels_lab").mkdir()
    (tmp_path / "labels_lab" / "__init__.py").write_text("")
    (tmp_path / "labels_lab" / "methods.py").write_text(RUN_MODULE)
    spec = tmp_path / "tags.yaml"
    spec.write_text(
        textwrap.dedent(
            """\
            name: tags
            seed: 0
            datasets: [iris, wine, glass]
            protocol: {kind: kfold, folds: 3}
            algorithms:
              - {id: tag, estimator: "labels_lab.methods:TagNN", params: {k: 3, tag: [3, "3"]}}
              - {name: knn, params: {k: 3}}
            """
        )
    )
    out = tmp_path / "out"
    done = runner.invoke(app, ["run", str(spec), "--out", str(out), "--quiet"])
    assert done.exit_code == 0, done.output
    summary = pd.read_csv(out / "summary.csv", keep_default_na=False)
    error = summary[summary["metric"] == "error"]
    assert error["configuration"].tolist()[:3] == ["tag tag=3", 'tag tag="3"', "knn"]
    assert error["n"].tolist() == [3] * 9
    frame = read_results(out / "results.csv")
    for label, params in (("tag tag=3", '"tag":3'), ('tag tag="3"', '"tag":"3"')):
        rows = frame[(frame["metric"] == "error") & frame["params"].str.contains(params, regex=False)]
        for d, group in rows.groupby("dataset"):
            row = error[(error["dataset"] == d) & (error["configuration"] == label)]
            assert float(row["mean"].iloc[0]) == pytest.approx(group["value"].mean(), abs=1e-15)
    done = runner.invoke(app, ["compare", str(out / "results.csv"), "--out", str(tmp_path / "cmp")])
    assert done.exit_code == 2  # two configurations of tag: the command asks how to treat them
    assert done.output.startswith("error: --select: algorithm 'tag' has 2 configurations;")
    done = runner.invoke(
        app, ["compare", str(out / "results.csv"), "--select", "all", "--out", str(tmp_path / "cmp")]
    )
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[2] == '| dataset | n | d | classes | tag tag=3 | tag tag="3" | knn |'
    per = pd.read_csv(tmp_path / "cmp" / "per_dataset.csv", keep_default_na=False)
    assert per["configuration"].tolist()[:3] == ["tag tag=3", 'tag tag="3"', "knn"]
    assert per["n_folds"].tolist() == [3] * 9


def test_seeds_are_pooled_and_say_so():
    from knnx.reporting.comparison import selection_note
    from knnx.reporting.summaries import format_table, summarize
    from knnx.stats.compare import compare

    settings = [("rf", {"n_estimators": 5, "random_state": s}) for s in (0, 1)] + [("knn", {"k": 3})]
    frame = _frame(settings, datasets=("d1", "d2", "d3"))
    assert _labels(frame) == ["rf", "knn"]  # pooled by design: replicates, not settings
    summary = summarize(frame, by=("dataset", "configuration"), metric="error")
    assert list(summary.columns) == ["dataset", "configuration", "metric", "seeds", "mean", "std", "n"]
    assert summary["seeds"].tolist() == [2, 1] * 3 and summary["n"].tolist() == [6, 3] * 3
    assert format_table(summary).splitlines()[:3] == [
        "| dataset | configuration | seeds | mean ± std | n |",
        "|---|---|---|---|---|",
        "| d1 | rf | 2 | **0.1600 ± 0.0555** | 6 |",
    ]
    result = compare(frame)
    assert result.per_dataset["seeds"].tolist() == [2, 1] * 3
    assert result.per_dataset["n_folds"].tolist() == [3] * 6  # seeds averaged within a fold
    assert result.means.loc["d1", "rf"] == pytest.approx(0.16, abs=1e-15)
    assert selection_note(result) == (
        "Each configuration (an algorithm and the parameters that vary) is a contestant. Seed parameters "
        "(seed, random_state) are pooled, as repeats and folds are: a contestant's value on a fold is the "
        "mean over its seeds (rf: 2 seeds)."
    )
    # without a seed that varies: no column, the sentence as before
    plain = _frame([("knn", {"k": 3}), ("unn", {})])
    assert "seeds" not in summarize(plain, by=("dataset", "configuration"), metric="error").columns
    assert "seeds" not in compare(plain).per_dataset.columns
    assert (
        selection_note(compare(plain))
        == "Each configuration (an algorithm and the parameters that vary) is a contestant."
    )


def test_a_seed_left_at_none_and_no_seed_parameter_are_one_setting():
    """``--by dataset`` pooling knn (seed: None) and an estimator without a seed read
    ``seeds 2``: an absent seed and a seed of None are both no seed."""
    from knnx.reporting.summaries import summarize

    frame = _frame([("knn", {"k": 3, "seed": None}), ("nb", {})], datasets=("d1", "d2"))
    assert "seeds" not in summarize(frame, by=("dataset",), metric="error").columns
    seeded = _frame([("s", {"seed": 1}), ("s", {"seed": 2}), ("nb", {})], datasets=("d1", "d2"))
    assert summarize(seeded, by=("dataset",), metric="error")["seeds"].tolist() == [3, 3]


# --- item 15: the pair-by-pair code the vectorised statistics replaced (the oracle) -------
# Copied from knnx 0.x before issue 33 (knnx/stats/compare.py, ties.py, control.py and
# knnx/reporting/wide.py): every pair a Python loop, every test one scipy call.


def old_snap(values, axis=-1):
    from knnx.stats.ties import ties

    values = np.array(values, dtype=np.float64)
    moved = np.moveaxis(values, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1]) if moved.ndim else moved.reshape(1, 1)
    for row in flat:
        order = np.argsort(row, kind="stable")
        order = order[~np.isnan(row[order])]
        for prev, cur in zip(order[:-1], order[1:], strict=True):
            if ties(row[prev], row[cur]):
                row[cur] = row[prev]
    return np.moveaxis(flat.reshape(moved.shape), -1, axis)


def old_holm(pvalues):
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        adjusted[j] = running
    return adjusted


def old_paired(parts):
    import itertools

    from knnx.stats.compare import paired_tests

    means, folds = parts["means"], parts["folds"]
    paired = []
    for d in means.index:
        block = folds.loc[d]
        n_train, n_test = parts["sizes"].loc[d, ["n_train", "n_test"]]
        ratio = float(n_test) / float(n_train)
        for i, j in itertools.combinations(range(len(means.columns)), 2):
            a, b = block[means.columns[i]].to_numpy(), block[means.columns[j]].to_numpy()
            shared = ~(np.isnan(a) | np.isnan(b))
            paired.append(
                {
                    "dataset": d,
                    "a": means.columns[i],
                    "b": means.columns[j],
                    **paired_tests(a[shared], b[shared], ratio),
                    "test_train_ratio": ratio,
                }
            )
    return pd.DataFrame(paired)


def old_wilcoxon_holm(means, metric):
    import itertools

    from scipy.stats import wilcoxon

    from knnx.evaluation.metrics import LOWER_IS_BETTER

    lower = LOWER_IS_BETTER.get(metric, False)
    values = old_snap(means.to_numpy(dtype=np.float64), axis=1)
    pairs = []
    for i, j in itertools.combinations(range(values.shape[1]), 2):
        a, b = values[:, i], values[:, j]
        better = a < b if lower else a > b
        worse = a > b if lower else a < b
        if np.all(a == b):
            statistic, p_value = math.nan, 1.0
        else:
            d = a - b
            result = wilcoxon(np.sign(d) * old_snap(np.abs(d)))
            statistic, p_value = float(result.statistic), float(result.pvalue)
        pairs.append(
            {
                "a": means.columns[i],
                "b": means.columns[j],
                "wins": int(better.sum()),
                "ties": int((a == b).sum()),
                "losses": int(worse.sum()),
                "statistic": statistic,
                "p": p_value,
            }
        )
    pairwise = pd.DataFrame(pairs)
    pairwise["p_holm"] = old_holm(pairwise["p"])
    return pairwise


def old_significant_winners(paired, metric="error", alpha=0.05):
    from knnx.evaluation.metrics import LOWER_IS_BETTER
    from knnx.stats.ties import TIE_RTOL

    lower = LOWER_IS_BETTER.get(metric, False)
    out = {"winner": [], "winner_corrected": []}
    for row in paired.itertuples(index=False):
        decided = not math.isnan(row.mean_difference) and abs(row.mean_difference) > TIE_RTOL
        a_better = (row.mean_difference < 0) if lower else (row.mean_difference > 0)
        better = row.a if a_better else row.b
        for column, key in (("p", "winner"), ("p_corrected", "winner_corrected")):
            out[key].append(better if decided and getattr(row, column) < alpha else None)
    return paired.assign(**{k: pd.Series(v, index=paired.index, dtype=object) for k, v in out.items()})


def old_significance_counts(paired, configurations, metric="error", alpha=0.05):
    counts = {
        c: dict.fromkeys(("better", "worse", "better_corrected", "worse_corrected"), 0)
        for c in configurations
    }
    verdicts = old_significant_winners(paired, metric, alpha)
    for row in verdicts.itertuples(index=False):
        for winner, suffix in ((row.winner, ""), (row.winner_corrected, "_corrected")):
            if winner is not None:
                counts[winner]["better" + suffix] += 1
                counts[row.b if winner == row.a else row.a]["worse" + suffix] += 1
    frame = pd.DataFrame.from_dict(counts, orient="index")
    return frame.rename_axis("configuration").reset_index()


def old_per_dataset(parts, ranks, select):
    means, folds = parts["means"], parts["folds"]
    rows = []
    for d in means.index:
        for c in means.columns:
            n_folds = int(folds.loc[d, c].notna().sum())
            std = float(folds.loc[d, c].std(ddof=1)) if n_folds > 1 else math.nan
            rows.append(
                {
                    "dataset": d,
                    "configuration": c,
                    "mean": float(means.loc[d, c]),
                    "std": std,
                    "n_folds": n_folds,
                }
            )
    per_dataset = pd.DataFrame(rows)
    per_dataset["rank"] = [ranks.loc[r.dataset, r.configuration] for r in per_dataset.itertuples()]
    if select == "best-test":
        chosen = parts["chosen"].set_index(["dataset", "contestant"])
        keys = [(r.dataset, r.configuration) for r in per_dataset.itertuples()]
        per_dataset["chosen"] = [chosen.loc[key, "configuration"] for key in keys]
        per_dataset["choices"] = [int(chosen.loc[key, "choices"]) for key in keys]
    return per_dataset


def old_rank_counts(means, metric, method="min"):
    from knnx.evaluation.metrics import LOWER_IS_BETTER
    from knnx.stats.ties import rank_rows

    values = means.to_numpy(dtype=np.float64)
    ranks = rank_rows(values, LOWER_IS_BETTER.get(metric, False), method=method).astype(np.int64)
    k = values.shape[1]
    counts = np.zeros((k, k), dtype=np.int64)
    for row in ranks:
        for c, r in enumerate(row):
            counts[c, r - 1] += 1
    return pd.DataFrame(counts, index=means.columns, columns=range(1, k + 1))


def old_nemenyi_pvalues(result):
    from scipy.stats import studentized_range

    ranks = result.ranks.mean(axis=0).to_numpy(dtype=np.float64)
    n, k = result.means.shape
    q = np.abs(ranks[:, None] - ranks[None, :]) / math.sqrt(k * (k + 1) / (6 * n)) * math.sqrt(2)
    p = np.where(q > 0, studentized_range.sf(np.maximum(q, 1e-300), k, np.inf), 1.0)
    names = result.means.columns
    return pd.DataFrame(np.minimum(p, 1.0), index=names, columns=names)


def old_bayesian_signed_rank(x, y, rope, prior=0.5, n_samples=50000, seed=0):
    from knnx.stats.control import _BLOCK_ELEMENTS
    from knnx.stats.ties import ties

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    bound = 0.0 if ties(rope, 0.0) else 2.0 * float(rope)
    d = np.concatenate(([0.0], x - y))
    sums = d[:, None] + d[None, :]
    on_upper, on_lower = ties(sums, bound), ties(sums, -bound)
    x_greater = np.where(on_upper, 0.5, (sums > bound).astype(np.float64))
    y_greater = np.where(on_lower, 0.5, (sums < -bound).astype(np.float64))
    within = 1.0 - x_greater - y_greater
    regions = np.hstack((x_greater, within, y_greater))
    m = len(d)
    alpha = np.ones(m)
    alpha[0] = prior
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_ELEMENTS // m)
    wins = np.zeros(3)
    done = 0
    while done < n_samples:
        size = min(block, n_samples - done)
        w = rng.dirichlet(alpha, size=size)
        theta = np.einsum("srj,sj->sr", (w @ regions).reshape(size, 3, m), w)
        top = theta == theta.max(axis=1, keepdims=True)
        wins += (top / top.sum(axis=1, keepdims=True)).sum(axis=0)
        done += size
    return tuple(float(v) for v in wins / n_samples)


def old_against_control(means, mean_ranks, metric, control, alpha, rope):
    from knnx.evaluation.metrics import LOWER_IS_BETTER
    from knnx.stats.control import bonferroni_dunn_cd, control_tests

    ranks = mean_ranks.set_index("configuration")["mean_rank"].reindex(means.columns)
    n, k = means.shape
    table = control_tests(ranks, n, control, alpha)
    lower = LOWER_IS_BETTER.get(metric, False)
    x = means[control].to_numpy(dtype=np.float64)
    bayes = []
    for c in table["configuration"]:
        left, rope_, right = old_bayesian_signed_rank(x, means[c].to_numpy(dtype=np.float64), rope)
        better, worse = (right, left) if lower else (left, right)
        bayes.append((better, rope_, worse))
    table[["p_control_better", "p_rope", "p_control_worse"]] = np.asarray(bayes, dtype=np.float64).reshape(
        -1, 3
    )
    table["bonferroni_dunn_cd"] = bonferroni_dunn_cd(k, n, alpha)
    return table


def old_five_by_two_pairs(means, folds):
    from knnx.stats.control import five_by_two_f, five_by_two_t

    rows = []
    for d in means.index:
        block = folds.loc[d]
        repeats = block.index.get_level_values(0).nunique()
        if (repeats, block.index.get_level_values(1).nunique(), len(block)) != (5, 2, 10):
            return None
        for i, a in enumerate(means.columns):
            for b in means.columns[i + 1 :]:
                x, y = (block[c].to_numpy(dtype=np.float64).reshape(5, 2) for c in (a, b))
                f, t = five_by_two_f(x, y), five_by_two_t(x, y)
                rows.append({"dataset": d, "a": a, "b": b, "f": f.f, "p_f": f.p, "t": t.t, "p_t": t.p})
    return pd.DataFrame(rows)


def old_wide_parts(result, test):
    """The std and dagger tables of knnx.reporting.wide.wide_table, pair by pair."""
    from knnx.evaluation.metrics import LOWER_IS_BETTER
    from knnx.stats.control import five_by_two_f
    from knnx.stats.ties import best_mask, ties

    def p_values(dataset, reference):
        if test == "5x2cv-f":
            block = result.folds.loc[dataset]
            ref = block[reference].to_numpy(dtype=np.float64).reshape(5, 2)
            return {
                c: five_by_two_f(block[c].to_numpy(dtype=np.float64).reshape(5, 2), ref).p
                for c in result.means.columns
                if c != reference
            }
        column = "p_corrected" if test == "corrected-t" else "p"
        rows = result.paired[result.paired["dataset"] == dataset]
        out = {}
        for row in rows.itertuples(index=False):
            if reference in (row.a, row.b):
                out[row.b if row.a == reference else row.a] = getattr(row, column)
        return out

    means = result.means
    lower = LOWER_IS_BETTER.get(result.metric, False)
    per = result.per_dataset.set_index(["dataset", "configuration"])
    std = pd.DataFrame(
        [[per.loc[(d, c), "std"] for c in means.columns] for d in means.index],
        index=means.index,
        columns=means.columns,
    )
    best = pd.DataFrame(
        [best_mask(row, lower) for row in means.to_numpy(dtype=np.float64)],
        index=means.index,
        columns=means.columns,
    )
    worse = pd.DataFrame(False, index=means.index, columns=means.columns)
    for d in means.index:
        reference = result.control or means.columns[int(np.argmax(best.loc[d].to_numpy()))]
        for c, p in p_values(d, reference).items():
            a, b = means.loc[d, c], means.loc[d, reference]
            behind = (a > b) if lower else (a < b)
            worse.loc[d, c] = bool(behind and not ties(a, b) and p < result.alpha)
    return std, worse


def old_compare(frame, monkeypatch, metric="error", select="all", alpha=0.05, control=None, rope=0.01):
    """Every table of compare() as the pair-by-pair code made it (the old snap in place)."""
    from knnx.stats import compare as compare_module
    from knnx.stats import ties as ties_module

    with monkeypatch.context() as patch:
        patch.setattr(ties_module, "snap", old_snap)
        patch.setattr(compare_module, "snap", old_snap)
        parts = compare_module._contestants(frame, metric, select)
        means = parts["means"]
        ranks, mean_ranks = compare_module._ranks(means, metric)
        paired = old_paired(parts)
        counts = old_rank_counts(means, metric)
        counts = counts.rename(columns=lambda r: f"rank_{r}").rename_axis("configuration").reset_index()
        return {
            "means": means,
            "ranks": ranks,
            "mean_ranks": mean_ranks,
            "pairwise": old_wilcoxon_holm(means, metric),
            "friedman": compare_module._friedman(old_snap(means.to_numpy(dtype=np.float64), axis=1), alpha),
            "per_dataset": old_per_dataset(parts, ranks, select),
            "paired": paired,
            "rank_counts": counts,
            "significance": old_significance_counts(paired, list(means.columns), metric, alpha),
            "control_tests": None
            if control is None
            else old_against_control(means, mean_ranks, metric, control, alpha, rope),
        }


def _folds_frame(
    seed, n_configs, n_datasets, repeats=1, folds=3, kind="quantized", metric="error", drop=0, trend=0.0
):
    """A results frame of ``n_configs`` settings of knn (k = 1, 2, ...) on ``n_datasets``
    datasets, ``repeats`` x ``folds`` folds; values on a grid of 1/30 (``quantized``: ties,
    zero differences), continuous, or ``equal`` (every setting alike), plus ``trend``
    times the setting's index; ``drop`` rows removed at random (folds a setting lacks:
    the paired tests use the shared ones)."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_datasets):
        for c in range(n_configs):
            for r in range(repeats):
                for f in range(folds):
                    if kind == "quantized":
                        value = float(rng.integers(0, 30)) / 30
                    elif kind == "equal":
                        value = 0.1 * (f + 1)
                    else:
                        value = float(rng.random())
                    value += trend * c
                    rows.append(
                        {
                            "experiment": "e",
                            "dataset": f"d{d}",
                            "algorithm": "knn" if c % 3 else "unn",
                            "params": json.dumps({"k": c + 1}),
                            "protocol": "{}",
                            "repeat": r,
                            "fold": f,
                            "seed": 0,
                            "metric": metric,
                            "value": value,
                            "n_train": 40 + d,
                            "n_test": 10 + d % 3,
                            "fit_seconds": 0.0,
                            "predict_seconds": 0.0,
                            "tune_seconds": 0.0,
                        }
                    )
    if drop:  # never a whole (dataset, setting): every mean stays
        keep = np.ones(len(rows), dtype=bool)
        keep[rng.choice(np.arange(0, len(rows), repeats * folds), drop, replace=False) + 1] = False
        rows = [row for row, k in zip(rows, keep, strict=True) if k]
    text = rows_to_csv(with_param_columns(rows, ["k"]), header=True, columns=results_columns(["k"]))
    return read_results(io.StringIO(text))


def _same(new, old):
    """Equal frames, floats to the bit (NaN where NaN; -0.0 and 0.0 apart)."""
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    for column in new.columns:
        a, b = new[column].to_numpy(), old[column].to_numpy()
        if a.dtype.kind == "f":
            present = ~np.isnan(a)
            assert np.array_equal(a[present].view(np.int64), b[present].view(np.int64)), column


SCENARIOS = {
    # 3 datasets with ties and zeros: Wilcoxon by permutation; three folds
    "ties-3-datasets": dict(seed=0, n_configs=14, n_datasets=3),
    # 13 datasets with ties: scipy's permutation test at its largest (2^13 sign changes)
    "ties-13-datasets": dict(seed=11, n_configs=4, n_datasets=13, folds=2),
    # 8 datasets, continuous: Wilcoxon's exact distribution; 2 x 5 folds, some missing
    "exact-8-datasets": dict(
        seed=1, n_configs=9, n_datasets=8, repeats=2, folds=5, kind="continuous", drop=7
    ),
    # 20 datasets with ties: the normal approximation; accuracy (higher is better), 10 folds
    "normal-20-datasets": dict(seed=2, n_configs=7, n_datasets=20, folds=10, metric="accuracy"),
    # 55 datasets: the normal approximation without ties; one fold (no paired test)
    "normal-55-datasets": dict(seed=3, n_configs=5, n_datasets=55, folds=1, kind="continuous"),
    # every setting alike: p = 1, no statistic, constant differences
    "equal": dict(seed=4, n_configs=6, n_datasets=4, folds=4, kind="equal"),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_compare_equals_the_pair_by_pair_code(name, monkeypatch):
    from knnx.stats.compare import compare, pairwise_significance

    options = SCENARIOS[name]
    metric = options.get("metric", "error")
    frame = _folds_frame(**options)
    control = "knn k=2"
    new = compare(frame, metric=metric, select="all", control=control)
    old = old_compare(frame, monkeypatch, metric=metric, select="all", control=control)
    for table in ("means", "ranks", "mean_ranks", "pairwise", "friedman", "per_dataset", "paired"):
        _same(getattr(new, table), old[table])
    for table in ("rank_counts", "significance", "control_tests"):
        _same(getattr(new, table), old[table])
    for corrected in (True, False):
        ours = pairwise_significance(new.paired, metric, 0.05, corrected)
        with monkeypatch.context() as patch:
            from knnx.stats import pairs

            patch.setattr(pairs, "significant_winners", old_significant_winners)
            _same(ours, pairwise_significance(old["paired"], metric, 0.05, corrected))
    assert len(new.paired) == len(new.means.columns) * (len(new.means.columns) - 1) // 2 * len(new.means)


def test_best_test_equals_the_pair_by_pair_code(monkeypatch):
    from knnx.stats.compare import compare

    frame = _folds_frame(seed=5, n_configs=12, n_datasets=6, folds=4)
    new = compare(frame, select="best-test")
    old = old_compare(frame, monkeypatch, select="best-test")
    assert list(new.means.columns) == ["unn", "knn"]
    for table in ("means", "ranks", "pairwise", "friedman", "per_dataset", "paired", "significance"):
        _same(getattr(new, table), old[table])


def test_the_wide_table_nemenyi_and_five_by_two_equal_the_pair_by_pair_code(monkeypatch):
    from knnx.reporting.wide import wide_table
    from knnx.stats.compare import compare, nemenyi_pvalues
    from knnx.stats.control import five_by_two_pairs

    # log_loss: lower is better, as error, and values past 1 (the trend) are log losses
    frame = _folds_frame(seed=6, n_configs=8, n_datasets=4, repeats=5, folds=2, trend=0.1, metric="log_loss")
    for control in (None, "unn k=4"):
        result = compare(frame, "log_loss", select="all", control=control)
        _same(nemenyi_pvalues(result), old_nemenyi_pvalues(result))
        _same(
            five_by_two_pairs(result.means, result.folds), old_five_by_two_pairs(result.means, result.folds)
        )
        for test in ("corrected-t", "t", "5x2cv-f"):
            table = wide_table(result, test=test)
            std, worse = old_wide_parts(result, test)
            _same(table.std, std)
            _same(table.worse, worse)
        assert wide_table(result).worse.to_numpy().any()  # some daggers to agree on
    # a fold missing (a failed cell): that setting's pairs on that dataset have no test (the
    # pair-by-pair code stopped on them: "b: expected finite values"), the others as before
    full = five_by_two_pairs(result.means, result.folds)
    gap = frame.drop(index=frame.index[(frame["dataset"] == "d1") & (frame["params"] == '{"k": 2}')][:1])
    result = compare(gap, "log_loss", select="all")
    with pytest.raises(Exception, match="^b: expected finite values, got nan or inf$"):
        old_five_by_two_pairs(result.means, result.folds)
    holed = five_by_two_pairs(result.means, result.folds)
    lacking = (holed["dataset"] == "d1") & ((holed["a"] == "knn k=2") | (holed["b"] == "knn k=2"))
    assert lacking.sum() == 7 and holed.loc[lacking, ["f", "p_f", "t", "p_t"]].isna().all().all()
    _same(holed[~lacking].reset_index(drop=True), full[~lacking].reset_index(drop=True))
    worse = wide_table(result, test="5x2cv-f").worse
    assert not worse.loc["d1", "knn k=2"]
    three = _folds_frame(seed=6, n_configs=3, n_datasets=2, folds=3)
    result = compare(three, select="all")
    assert five_by_two_pairs(result.means, result.folds) is None


def test_snap_and_holm_equal_their_loops():
    from knnx.stats.pairs import holm
    from knnx.stats.ties import snap

    rng = np.random.default_rng(8)
    base = rng.integers(0, 6, (200, 9)) / 7
    jitter = np.where(rng.random(base.shape) < 0.3, base * 1e-13, 0.0)  # rounding: ties
    values = base + jitter
    values[rng.random(values.shape) < 0.1] = np.nan
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(snap(values, axis=axis), old_snap(values, axis=axis))
    for row in values[:20]:
        np.testing.assert_array_equal(snap(row), old_snap(row))
    for p in (
        rng.random(50),
        np.round(rng.random(50), 1),
        np.array([0.2, np.nan, 0.01, np.nan]),
        np.array([]),
    ):
        np.testing.assert_array_equal(holm(p), old_holm(p))


def test_the_written_tables_are_the_bytes_pandas_writes(tmp_path):
    from knnx.reporting.comparison import _csv
    from knnx.stats.compare import compare, nemenyi_pvalues

    def pandas_csv(frame, index=False):
        return frame.to_csv(index=index, lineterminator="\n", float_format=lambda v: repr(float(v)))

    settings = [("knn", {"k": k, "note": n}) for k, n in ((1, 'a, "b"'), (3, "c=d"), (5, "e"), (7, ""))]
    result = compare(_frame(settings, datasets=("d1", "d2", "d3")), select="all", control="knn k=5, note=e")
    assert list(result.means.columns) == [
        'knn k=1, note="a, \\"b\\""',
        'knn k=3, note="c=d"',
        "knn k=5, note=e",
        'knn k=7, note=""',
    ]
    for table in (
        "mean_ranks",
        "pairwise",
        "friedman",
        "per_dataset",
        "paired",
        "rank_counts",
        "significance",
    ):
        frame = getattr(result, table)
        assert _csv(frame) == pandas_csv(frame), table
    assert _csv(result.control_tests) == pandas_csv(result.control_tests)
    assert _csv(nemenyi_pvalues(result), index=True) == pandas_csv(nemenyi_pvalues(result), index=True)
    odd = pd.DataFrame(
        {
            "text": ['x, "y"', "new\nline", None, "", "r\rs"],
            "float": [1e16, np.nan, -0.0, 1e-5, np.inf],
            "int": [1, 2, 3, 4, 5],
            "bool": [True, False, True, True, False],
            "mixed": [None, "x", np.nan, 1.5, "z"],
        }
    )
    assert _csv(odd) == pandas_csv(odd)
    assert _csv(odd.set_index("text"), index=True) == pandas_csv(odd.set_index("text"), index=True)
    for lone in (pd.DataFrame({"a": ["", "x", None]}), pd.DataFrame({"a": [], "b": []})):
        assert _csv(lone) == pandas_csv(lone)


def test_above_the_limit_compare_refuses_in_one_line_and_writes_nothing(tmp_path, monkeypatch):
    from knnx.stats import compare as compare_module

    assert compare_module.MAX_PAIRED_TESTS == 6_000_000  # 2,000 contestants on 3 datasets: 5,997,000
    frame = _folds_frame(seed=9, n_configs=6, n_datasets=3, folds=2)
    path = tmp_path / "results.csv"
    path.write_text(frame[[c for c in frame.columns if c != "param_k"]].to_csv(index=False))
    monkeypatch.setattr(compare_module, "MAX_PAIRED_TESTS", 44)  # 6 contestants: 15 pairs x 3 = 45 tests
    done = runner.invoke(app, ["compare", str(path), "--select", "all", "--out", str(tmp_path / "cmp")])
    assert done.exit_code == 2
    assert done.output == (
        "error: --select: 6 contestants on 3 datasets make 45 paired tests (every pair on every dataset), more "
        "than the limit of 44; compare fewer configurations (e.g. --select best-test: each algorithm's best, "
        "or a results file of fewer settings) or fewer datasets\n"
    )
    assert not (tmp_path / "cmp").exists()
    monkeypatch.setattr(compare_module, "MAX_PAIRED_TESTS", 45)  # at the limit: compared
    done = runner.invoke(app, ["compare", str(path), "--select", "all"])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["compare", str(path), "--select", "best-test"])  # two contestants: 3 tests
    assert done.exit_code == 0, done.output


def test_too_many_contestants_for_a_figure_get_the_tables_alone(tmp_path):
    from knnx.errors import ResultsError
    from knnx.reporting.cd import MAX_CONFIGURATIONS
    from knnx.reporting.comparison import cd_diagram, comparison_table
    from knnx.reporting.summary_figures import mean_ranks
    from knnx.stats.compare import compare

    assert MAX_CONFIGURATIONS == 300
    frame = _folds_frame(seed=10, n_configs=301, n_datasets=2, folds=2)
    path = tmp_path / "results.csv"
    path.write_text(frame[[c for c in frame.columns if c != "param_k"]].to_csv(index=False))
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "cd.png").write_bytes(b"an earlier comparison's")
    done = runner.invoke(app, ["compare", str(path), "--select", "all", "--out", str(out)])
    assert done.exit_code == 0, done.output
    note = (
        "Figures: not drawn for 301 contestants (the critical-difference diagram and the figures across "
        "datasets show at most 300); the tables hold every contestant."
    )
    assert done.output.splitlines()[1] == note
    assert (out / "table.md").read_text().splitlines()[1] == note
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["friedman.csv", "left_out.csv", "nemenyi.csv", "paired.csv", "pairwise.csv", "per_dataset.csv"]
        + ["rank_counts.csv", "ranks.csv", "significance.csv", "table.md"]
    )
    assert len(pd.read_csv(out / "paired.csv")) == 301 * 300 // 2 * 2
    # other formats keep stdout a file: the note goes to stderr, as the left-out lines do
    done = runner.invoke(app, ["compare", str(path), "--select", "all", "--format", "csv", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert done.stderr == note + "\n"
    assert done.stdout.splitlines()[0].startswith("dataset,")
    result = compare(frame, select="all")
    with pytest.raises(ResultsError, match=r"^mean_ranks: 301 configurations: a diagram shows at most 300 "):
        cd_diagram(result)
    with pytest.raises(
        ResultsError, match=r"^301 configurations: the figures across datasets show at most 300"
    ):
        mean_ranks(result)
    most = compare(frame[frame["param_k"] != "301"], select="all")
    assert comparison_table(most).splitlines()[1] == ""  # 300: drawn, no note
    assert len(cd_diagram(most).axes) == 1


@pytest.mark.parametrize("n", [2, 3, 8, 13, 14, 20, 51])
def test_the_wilcoxon_tests_of_many_pairs_equal_scipy_pair_by_pair(n):
    """Exact distribution, scipy's permutation test (replaced by counting subset sums),
    the normal approximation: each row as scipy.stats.wilcoxon gives it alone."""
    from scipy.stats import wilcoxon

    from knnx.stats.pairs import _wilcoxon_rows

    rng = np.random.default_rng(n)
    rows = 4 if n == 13 else 12  # scipy's permutation test takes 0.8 s a row at 13
    d = np.vstack(
        [
            rng.integers(-4, 5, (rows, n)) / 7,  # ties and zeros
            rng.standard_normal((rows, n)),  # neither
            np.where(rng.random((rows, n)) < 0.3, 0.0, rng.standard_normal((rows, n))),  # zeros
        ]
    )
    d = d[~(d == 0).all(axis=1)]
    statistic, p = _wilcoxon_rows(d)
    for i, row in enumerate(d):
        alone = wilcoxon(row)
        expected = np.array([float(alone.statistic), float(alone.pvalue)])
        assert np.array_equal(np.array([statistic[i], p[i]]).view(np.int64), expected.view(np.int64)), (
            i,
            row,
        )


def test_many_contestants_are_compared_in_seconds_each_pattern_tested_once(monkeypatch):
    """600 contestants on 3 datasets (179,700 pairs, 539,100 paired tests): the pair by
    pair code called scipy's Wilcoxon test once a pair (about 4 minutes here); now once
    a distinct pattern of signed ranks, and the whole comparison takes seconds."""
    import time

    import scipy.stats

    from knnx.stats.compare import compare

    frame = _folds_frame(seed=12, n_configs=600, n_datasets=3, folds=5)
    calls = []
    real = scipy.stats.wilcoxon
    monkeypatch.setattr(scipy.stats, "wilcoxon", lambda *a, **k: calls.append(1) or real(*a, **k))
    start = time.perf_counter()
    result = compare(frame, select="all")
    elapsed = time.perf_counter() - start
    assert len(result.pairwise) == 179_700 and len(result.paired) == 539_100
    assert len(calls) <= 10  # 3 datasets: a few dozen patterns, a handful of calls
    assert elapsed < 60, elapsed  # about 3 s on 2 busy cores


def test_table_and_compare_name_a_parameter_the_labels_leave_out(tmp_path):
    """``knnx table`` showed ``tuned k=7`` on wine, where the setting was k=7 with
    weights=distance (params_for): a parameter set per dataset is no part of the label
    (one contestant), so both commands name it, with its value on each dataset."""
    iris = _frame([("tuned", {"k": k, "weights": "uniform"}) for k in (5, 7)], datasets=("iris",))
    wine = _frame([("tuned", {"k": k, "weights": "distance"}) for k in (5, 7)], datasets=("wine",))
    frame = pd.concat([iris, wine], ignore_index=True)
    assert _labels(frame) == ["tuned k=5", "tuned k=7"]
    path = tmp_path / "results.csv"
    frame[results_columns(["k", "weights"])].to_csv(path, index=False)
    note = (
        "note: set per dataset (params_for), not in the labels: tuned weights (iris: uniform; wine: distance)"
    )
    table = runner.invoke(app, ["table", str(path)])
    assert table.exit_code == 0
    assert table.stderr.splitlines() == [note]
    assert "| wine | tuned k=7 |" in table.stdout
    compared = runner.invoke(app, ["compare", str(path), "--select", "all", "--format", "csv"])
    assert compared.exit_code == 0
    assert compared.stderr.splitlines()[0] == note


def test_a_long_list_of_datasets_is_cut_in_the_note():
    from knnx.stats.configurations import dataset_dependent_lines

    frames = [
        _frame([("a", {"k": 1, "w": i}), ("a", {"k": 3, "w": i})], datasets=(f"d{i}",)) for i in range(6)
    ]
    frame = pd.concat(frames, ignore_index=True)
    assert dataset_dependent_lines(frame) == ["a w (d0: 0; d1: 1; d2: 2; d3: 3; ... 6 datasets)"]
    assert dataset_dependent_lines(frames[0]) == []  # one dataset: nothing depends on it
    # values shared by several datasets: by value, the commonest first
    frames = [
        _frame(
            [("a", {"k": 1, "w": int(i in (2, 5))}), ("a", {"k": 3, "w": int(i in (2, 5))})],
            datasets=(f"d{i}",),
        )
        for i in range(7)
    ]
    assert dataset_dependent_lines(pd.concat(frames, ignore_index=True)) == [
        "a w (0 on d0, d1, d3, d4 and 1 more; 1 on d2, d5)"
    ]


def test_a_table_that_pools_datasets_says_so():
    """``knnx table --by algorithm`` averaged iris's and wine's folds into one mean with
    no word of it, and ``--by metric`` lost its one column in Markdown."""
    from knnx.reporting.summaries import results_table

    frame = _frame([("knn", {"k": 1})], datasets=("iris", "wine"), values=lambda i, d, f: 0.1 * d + 0.01 * f)
    values = frame["value"].to_numpy()
    text = results_table(frame, by="algorithm", fmt="csv")
    assert text.splitlines() == [
        "algorithm,metric,datasets,mean,std,n,best",
        f"knn,error,2,{float(values.mean())!r},{float(np.std(values, ddof=1))!r},6,True",
    ]
    md = results_table(frame, by="metric").splitlines()
    assert md[:3] == [
        "| metric | datasets | mean ± std | n |",
        "|---|---|---|---|",
        f"| error | 2 | **{values.mean():.4f} ± {np.std(values, ddof=1):.4f}** | 6 |",
    ]
    assert md[-1] == (
        "Pooled: rows with datasets > 1 average the folds of several datasets (each fold one value, whatever "
        "its dataset's size); dataset added to --by separates them."
    )
    one = results_table(frame, by="dataset,configuration").splitlines()  # nothing pooled, nothing said
    assert one[0] == "| dataset | configuration | mean ± std | n |" and not any(
        "Pooled" in line for line in one
    )
    assert (
        results_table(frame, by="metric,algorithm").splitlines()[0]
        == "| algorithm | datasets | mean ± std | n |"
    )


def test_a_reported_choice_of_an_untuned_setting_is_no_tuning_choice():
    """An estimator that reports ``chosen_k = 99`` without ``tune:`` was shown in the
    report as "Tuned on inner folds (tune:)", 99×12, while Diagnostics said no estimator
    reported a quantity: a ``chosen_`` row is a tuning choice only where the setting's
    params hold the grid searched."""
    from knnx.reporting.report_parts import diagnostics_frame, tuning_html
    from knnx.reporting.tuning import choices

    settings = [("mine", {"k": 1}), ("mine", {"k": 3}), ("knn", {"k": [1, 3]})]
    errors = _frame(settings)
    chosen = _frame(settings, metric="chosen_k", values=lambda i, d, f: 99.0 if i < 2 else 3.0)
    frame = pd.concat([errors, chosen], ignore_index=True)
    frame["configuration"] = configuration_labels(frame)
    tuned = choices(frame)
    assert set(tuned["algorithm"]) == {"knn"} and len(tuned) == 6 and tuned["value"].tolist() == [3] * 6
    page = tuning_html(frame)
    assert "<td>knn</td><td>k</td><td>3×6</td>" in page and "99" not in page
    reported = diagnostics_frame(frame)
    assert reported[["quantity", "dataset", "configuration", "mean", "n"]].values.tolist() == [
        ["chosen_k", d, f"mine k={k}", 99.0, 3] for d in ("d1", "d2") for k in (1, 3)
    ]


def test_a_file_pooling_two_protocols_is_said_in_tables_and_refused_by_compare():
    """A 3-fold run and a holdout run appended to it: ``compare`` paired kfold fold 0 with
    holdout repeat 0 and printed a mean of all rows beside a std of mixed folds; ``table``
    pooled them without a word."""
    from knnx.reporting.summaries import results_table
    from knnx.stats.compare import compare

    settings = [("knn", {"k": 1}), ("knn", {"k": 5})]
    kfold = _frame(settings)
    holdout = _frame(settings, folds=1).assign(protocol='{"kind":"holdout"}')
    frame = pd.concat([kfold, holdout], ignore_index=True)
    with pytest.raises(ResultsError) as err:
        compare(frame, select="all")
    assert str(err.value) == (
        'dataset \'d1\' has rows of 2 protocols ({"kind":"kfold"}; {"kind":"holdout"}); a comparison pairs the '
        "folds of one protocol: compare each run's results apart"
    )
    text = results_table(frame, by="dataset,configuration", fmt="csv").splitlines()
    assert text[0] == "dataset,configuration,metric,protocols,mean,std,n,best"
    assert all(line.split(",")[3] == "2" and line.split(",")[6] == "4" for line in text[1:])
    compare(kfold, select="all")  # one protocol: compared


@pytest.mark.parametrize("kind", ["kfold", "holdout", "5x2", "subsample", "predefined", "partitions", "lpo"])
def test_a_file_pooling_two_spec_seeds_is_refused(kind):
    """Two 5-fold runs under seeds 0 and 1 appended: compare averaged fold i of one with
    fold i of the other (unrelated splits) and printed the std of those averages (0.0438
    where the ten values have 0.0766), without a word. Under predefined, the seed draws a
    synthetic dataset's data: two datasets were averaged under one id."""
    from knnx.stats.compare import compare

    settings = [("knn", {"k": 1}), ("knn", {"k": 5})]
    one = _frame(settings).assign(protocol=f'{{"kind":"{kind}"}}')
    frame = pd.concat([one, one.assign(seed=1, value=one["value"] + 0.05)], ignore_index=True)
    with pytest.raises(ResultsError) as err:
        compare(frame, select="all")
    assert str(err.value) == (
        "dataset 'd1' has rows of 2 spec seeds (0, 1); each seed draws its own splits (and a synthetic dataset's "
        "data), and a comparison pairs folds by their index: compare each seed's results apart (knnx table pools "
        "them)"
    )
    compare(one, select="all")


def test_a_setting_with_rows_of_two_experiments_is_refused():
    """The same spec run twice, the second standardised under another experiment name:
    compare printed wine's k=1 as 0.1487, the mean of 0.2470 (raw) and 0.0504 (scaled).
    Two experiments with other settings stay comparable (one seed: the same splits)."""
    from knnx.stats.compare import compare

    settings = [("knn", {"k": 1}), ("knn", {"k": 5})]
    raw = _frame(settings)
    scaled = raw.assign(experiment="scaled", value=raw["value"] / 2)
    with pytest.raises(ResultsError) as err:
        compare(pd.concat([raw, scaled], ignore_index=True), select="all")
    assert str(err.value) == (
        "dataset 'd1': knn {\"k\":1} has rows of 2 experiments (e, scaled), which would be averaged as one "
        "contestant (their settings may differ outside params: preprocessing, data): compare each experiment "
        "apart, or give the algorithm another id in one of them"
    )
    renamed = scaled.assign(algorithm="knn_scaled")
    result = compare(pd.concat([raw, renamed], ignore_index=True), select="all")
    assert set(result.means.columns) == {"knn k=1", "knn k=5", "knn_scaled k=1", "knn_scaled k=5"}


def test_a_table_pooling_two_experiments_counts_them_and_says_so():
    """knnx table averaged the raw and the scaled run of one setting as one row (mean of
    both, n = 6) without a word, where compare refuses: it now counts the experiments a
    row pools and says how to separate them. Oracle: pandas' means per experiment."""
    from knnx.reporting.summaries import results_table

    settings = [("knn", {"k": 1}), ("knn", {"k": 5})]
    raw = _frame(settings)
    frame = pd.concat([raw, raw.assign(experiment="scaled", value=raw["value"] / 2)], ignore_index=True)
    text = results_table(frame, by="dataset,configuration", fmt="md")
    assert text.splitlines()[0] == "| dataset | configuration | experiments | mean ± std | n |"
    assert text.rstrip().splitlines()[-1] == (
        "Pooled: rows with experiments > 1 average the rows of several experiments (a file pooling runs, which "
        "may differ outside params: preprocessing, data); experiment added to --by separates them."
    )
    lines = results_table(frame, by="dataset,configuration", fmt="csv").splitlines()
    assert lines[0] == "dataset,configuration,metric,experiments,mean,std,n,best"
    assert [line.split(",")[3] for line in lines[1:]] == ["2"] * 4
    apart = results_table(frame, by="dataset,configuration,experiment", fmt="csv").splitlines()
    assert apart[0] == "dataset,configuration,experiment,metric,mean,std,n,best"
    means = frame.groupby(["dataset", "algorithm", "params", "experiment"], sort=False)["value"].mean()
    got = sorted(float(line.split(",")[4]) for line in apart[1:])
    np.testing.assert_allclose(got, sorted(means.to_numpy()), rtol=1e-15)
    assert "experiments" not in results_table(raw, by="dataset,configuration", fmt="csv").splitlines()[0]


def test_check_names_the_protocol_when_the_two_files_differ_in_it(tmp_path):
    """Results of a 3-fold run checked against a holdout reference printed one group as
    both "new" and "missing" with the same text: the protocol, which tells them apart,
    is named when the files hold more than one between them."""
    from knnx.reporting.summaries import check_against_reference, new_groups

    settings = [("knn", {"k": 1})]
    ours, ref = tmp_path / "ours.csv", tmp_path / "ref.csv"
    _frame(settings, datasets=("iris",))[results_columns(["k"])].to_csv(ours, index=False)
    holdout = _frame(settings, datasets=("iris",), folds=1).assign(protocol='{"kind":"holdout"}')
    holdout[results_columns(["k"])].to_csv(ref, index=False)
    assert new_groups(ours, ref) == ['iris knn {"k":1} error {"kind":"kfold"}']
    assert check_against_reference(ours, ref) == [
        f'iris knn {{"k":1}} error {{"kind":"holdout"}}: missing from {ours}'
    ]
    assert new_groups(ours, ours) == [] and check_against_reference(ours, ours) == []


def test_the_prose_above_a_markdown_comparison_shows_names_as_written():
    """The sentences above compare's Markdown table (the best-test note, a contestant
    left out, uneven folds) printed names raw: ``*b*`` rendered as emphasis and ``<i>``
    as a tag, where the table's cells escape them. Oracle: a CommonMark renderer gives
    back the sentences' text with the names as written."""
    from markdown_it import MarkdownIt

    from knnx.reporting.comparison import comparison_table
    from knnx.stats.compare import compare

    settings = [("*b*", {"k": 1}), ("*b*", {"k": 3}), ("<i>", {"k": 1}), ("c_d_", {"k": 1})]
    frame = _frame(settings, datasets=("d1", "d2", "d3"))
    frame = frame[~((frame["algorithm"] == "c_d_") & (frame["dataset"] == "d1") & (frame["fold"] == 2))]
    frame = frame[~((frame["algorithm"] == "<i>") & (frame["dataset"] == "d3"))]
    result = compare(frame.reset_index(drop=True), select="best-test")
    text = comparison_table(result, "md")
    prose = text.split("\n\n")[0]
    rendered = MarkdownIt("commonmark").parse(prose)
    inline = [t for t in rendered if t.type == "inline"]
    assert len(inline) == 1
    tags = {c.type for c in inline[0].children}
    assert tags <= {"text", "softbreak"}, tags  # no emphasis, no html
    plain = "".join(c.content if c.type == "text" else "\n" for c in inline[0].children)
    assert plain == "\n".join(
        [
            "Each algorithm is represented on each dataset by its configuration with the best mean on the test "
            "folds: optimistic for *b*, whose test folds chose among several configurations (use tune: for an "
            "honest choice).",
            "Left out: <i>: no 'error' results on 1 of 3 datasets (d3).",
            "Uneven folds on d1: c_d_ (2 of 3); each mean is over its contestant's own folds, the paired tests "
            "over the folds shared.",
        ]
    )
