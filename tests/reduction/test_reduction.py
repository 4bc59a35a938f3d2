"""Prototype selection (knnx.reduction): each method against a brute-force version
written from its paper's definition (every distance in NumPy, squared Euclidean and
manhattan, neighbours ordered by (distance, index), knnx's vote and tie rule), against
imbalanced-learn where it defines the same rule; under the other metrics (nominal codes
and missing values included) the stores' consistency and ENN's vote on knnx's search;
as a pipeline step in a run (the rows a cell's classifier is fitted on, fold by fold),
and the rule that a selection never empties a class."""

import numpy as np
import pandas as pd
import pytest
from reduction_oracles import blobs, grid, l1, neighbour_order, sq, vote

from knnx import KNNClassifier, kneighbors
from knnx.datasets import load_dataset
from knnx.experiment.runner import run_spec
from knnx.reduction import (
    CNN,
    DROP3,
    ENN,
    FCNN,
    HMNEI,
    IB3,
    ICF,
    NCR,
    OSS,
    RENN,
    RMHC,
    RNN,
    AllKNN,
    Multiedit,
    TomekLinks,
)
from knnx.reduction.editing import agrees

SELECTIONS = (
    ENN,
    RENN,
    AllKNN,
    TomekLinks,
    NCR,
    Multiedit,
    CNN,
    RNN,
    FCNN,
    OSS,
    DROP3,
    ICF,
    RMHC,
    IB3,
    HMNEI,
)


def _brute_enn(X, y, k, tie, D=None):
    D = sq(X) if D is None else D
    order = neighbour_order(D)
    keep = np.array([vote(y[order[i][:k]], y.max() + 1, tie) == y[i] for i in range(len(y))])
    for c in np.unique(y):  # a class the rule would empty keeps its rows
        if not keep[y == c].any():
            keep[y == c] = True
    return np.flatnonzero(keep)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("tie", ["nearest", "lowest"])
@pytest.mark.parametrize("k", [1, 3, 4, 7])
@pytest.mark.parametrize("data", [blobs, grid])
def test_enn_removes_exactly_the_rows_their_k_nearest_others_outvote(data, k, tie, metric):
    for seed in range(3):
        X, y = data(seed)
        D = l1(X) if metric == "manhattan" else None
        expected = _brute_enn(X, y, k, tie, D=D).tolist()
        assert ENN(k=k, tie=tie, metric=metric).fit(X, y).sample_indices_.tolist() == expected


def test_enn_under_hvdm_with_nominal_codes_and_missing_values():
    """keel.crx kept as codes, 3 % of its cells then made missing: ENN under hvdm removes
    the rows knnx's kNN (k=3, hvdm fitted on every row) misclassifies from their other
    rows."""
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, y, nominal = ds.X.copy(), ds.y, list(ds.nominal)
    X[np.random.default_rng(0).random(X.shape) < 0.03] = np.nan
    assert nominal
    enn = ENN(k=3, metric="hvdm", nominal=nominal).fit(X, y)
    _, ind = kneighbors(X, 3, metric=enn.metric_)
    brute = [i for i in range(len(y)) if vote(y[ind[i]], 2, "nearest") == y[i]]
    assert enn.sample_indices_.tolist() == brute and 0 < len(brute) < len(y)


def test_enn_and_tomek_links_equal_imbalanced_learn():
    from imblearn.under_sampling import EditedNearestNeighbours
    from imblearn.under_sampling import TomekLinks as ImbTomek

    for seed in range(4):
        X, y = blobs(seed, n=200)
        theirs = EditedNearestNeighbours(n_neighbors=3, kind_sel="mode", sampling_strategy="all")
        theirs.fit_resample(X, y)
        assert (
            np.sort(theirs.sample_indices_).tolist()
            == ENN(k=3, tie="lowest").fit(X, y).sample_indices_.tolist()
        )
        links = ImbTomek(sampling_strategy="all")
        links.fit_resample(X, y)
        ours = TomekLinks().fit(X, y)
        assert np.sort(links.sample_indices_).tolist() == ours.sample_indices_.tolist()
        assert len(ours.links_) > 0


def test_tomek_links_are_mutual_nearest_neighbours_of_two_classes():
    for seed in range(3):
        X, y = grid(seed)
        order = neighbour_order(sq(X))
        nearest = np.array([o[0] for o in order])
        linked = {i for i in range(len(y)) if nearest[nearest[i]] == i and y[nearest[i]] != y[i]}
        ours = TomekLinks().fit(X, y)
        assert set(range(len(y))) - set(ours.sample_indices_.tolist()) == linked
        assert {tuple(p) for p in ours.links_} == {(min(i, nearest[i]), max(i, nearest[i])) for i in linked}


def test_renn_is_enn_repeated_until_it_removes_nothing():
    for seed in range(3):
        X, y = blobs(seed, noise=1.6)
        rows = np.arange(len(y))
        while True:
            kept = _brute_enn(X[rows], y[rows], 3, "nearest")
            if len(kept) == len(rows):
                break
            rows = rows[kept]
        renn = RENN(k=3).fit(X, y)
        assert renn.sample_indices_.tolist() == rows.tolist() and renn.n_iter_ >= 2


def test_renn_equals_imbalanced_learn_where_its_extra_stops_do_not_apply():
    """imbalanced-learn's extra stops (a class falling below the smallest's size, one
    vanishing) never fire here, and it keeps the rows knnx keeps."""
    from imblearn.under_sampling import RepeatedEditedNearestNeighbours

    for seed in range(3):
        rng = np.random.default_rng(seed)
        y = np.repeat([0, 1], [100, 250])  # class 1 stays above 100 rows: no early stop
        X = rng.normal(size=(350, 2)) + y[:, None] * 2.0
        theirs = RepeatedEditedNearestNeighbours(kind_sel="mode", sampling_strategy="all")
        theirs.fit_resample(X, y)
        ours = RENN(k=3, tie="lowest").fit(X, y)
        assert np.sort(theirs.sample_indices_).tolist() == ours.sample_indices_.tolist()
        assert ours.n_iter_ >= 2 and len(ours.sample_indices_) < 350


def test_allknn_is_tomeks_every_neighbourhood_on_the_rows_given():
    """Removed: the rows some i-NN vote (i = 1..k, among all the rows given) outvotes.
    imbalanced-learn edits successively instead and removes fewer rows here."""
    from imblearn.under_sampling import AllKNN as ImbAllKNN

    for seed in range(3):
        X, y = blobs(seed, noise=1.4)
        order = neighbour_order(sq(X))
        keep = [
            i for i in range(len(y)) if all(vote(y[order[i][:j]], 3, "nearest") == y[i] for j in (1, 2, 3))
        ]
        assert AllKNN(k=3).fit(X, y).sample_indices_.tolist() == keep
    theirs = ImbAllKNN(n_neighbors=3, kind_sel="mode", sampling_strategy="all")
    theirs.fit_resample(X, y)
    assert len(theirs.sample_indices_) > len(keep)


def _brute_cnn(X, y, k, seed, D):
    """Hart's passes as CNN's docstring states them, with its draws, in plain Python."""
    rng = np.random.default_rng(seed)
    store = []
    for c in range(y.max() + 1):
        rows = np.flatnonzero(y == c)
        store.append(int(rows[rng.integers(rows.size)]))
    passes = 0
    while True:
        passes += 1
        added = 0
        for i in rng.permutation(len(y)):
            if i in store:
                continue
            nearest = sorted(store, key=lambda j: (D[i, j], j))[:k]
            if vote(y[nearest], y.max() + 1, "nearest") != y[i]:
                store.append(int(i))
                added += 1
        if added == 0:
            return sorted(store), passes


def _brute_fcnn(X, y, k, D, l1=False):
    """FCNN's rounds as its docstring states them, in plain Python (euclidean or
    manhattan: a class's centre is its mean)."""
    n = len(y)
    delta = []
    for c in range(y.max() + 1):
        rows = np.flatnonzero(y == c)
        centre = X[rows].mean(axis=0)
        gaps = np.abs(X[rows] - centre).sum(axis=1) if l1 else ((X[rows] - centre) ** 2).sum(axis=1)
        delta.append(int(rows[np.lexsort((rows, gaps))[0]]))
    store, rounds = set(), 0
    while delta:
        rounds += 1
        store |= set(delta)
        rep = {}
        for q in range(n):
            if q in store:
                continue
            members = sorted(store, key=lambda j: (D[q, j], j))[:k]
            if vote(y[members], y.max() + 1, "nearest") != y[q]:
                for p in members:
                    if p not in rep or D[q, p] < D[rep[p], p]:
                        rep[p] = q
        delta = sorted(set(rep.values()))
    return sorted(store), rounds


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("data", [blobs, grid])
@pytest.mark.parametrize("rule", ["cnn", "fcnn"])
def test_condensing_is_its_papers_rule(rule, data, k, metric):
    """CNN with its documented draws (Hart's passes) and FCNN (Angiulli's rounds) keep
    the stores of the plain-Python versions, after as many passes or rounds."""
    for seed in range(3):
        X, y = data(seed)
        D = l1(X) if metric == "manhattan" else sq(X)
        if rule == "cnn":
            selection = CNN(k=k, random_state=seed, metric=metric).fit(X, y)
            made = (selection.sample_indices_.tolist(), selection.n_passes_)
            assert made == _brute_cnn(X, y, k, seed, D)
        else:
            selection = FCNN(k=k, metric=metric).fit(X, y)
            made = (selection.sample_indices_.tolist(), selection.n_rounds_)
            assert made == _brute_fcnn(X, y, k, D, l1=metric == "manhattan")


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("data", [blobs, grid])
def test_rnn_is_gates_reduction_of_harts_store(data, metric):
    """From CNN's store (the same seed), each member in increasing row order leaves when
    no row it classified correctly by 1-NN loses its class (brute force over every row
    at each step); every training row is then still classified correctly."""
    for seed in range(3):
        X, y = data(seed)
        D = l1(X) if metric == "manhattan" else sq(X)
        store = CNN(random_state=seed, metric=metric).fit(X, y).sample_indices_.tolist()
        before = _nearest_classes(store, D, y) == y
        for x in list(store):
            rest = [j for j in store if j != x]
            if rest and not (before & (_nearest_classes(rest, D, y) != y)).any():
                store = rest
        rnn = RNN(random_state=seed, metric=metric).fit(X, y)
        assert rnn.sample_indices_.tolist() == store
        assert set(store) <= set(rnn.cnn_indices_.tolist())
        assert (_nearest_classes(store, D, y) == y)[before].all()


def _nearest_classes(store, D, y):
    """The class of each row's nearest member of ``store``, by (distance, row index)."""
    return np.array([y[min(store, key=lambda j, i=i: (D[i, j], j))] for i in range(len(y))])


def test_fcnn_does_not_depend_on_the_order_of_the_rows():
    """Without distance ties, the rows permuted give the same store, permuted."""
    X, y = blobs(5, n=300)
    perm = np.random.default_rng(1).permutation(300)
    store = FCNN().fit(X, y).sample_indices_
    assert sorted(perm[FCNN().fit(X[perm], y[perm]).sample_indices_].tolist()) == store.tolist()


@pytest.mark.parametrize(("cls", "k"), [(CNN, 1), (CNN, 3), (FCNN, 1), (FCNN, 3), (RNN, 1)])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "chebyshev", "hvdm", "gower", "hamming"])
def test_a_condensed_store_classifies_every_row_it_left_out(metric, cls, k):
    """Hart's consistency: the k nearest store members (knnx's search, the metric fitted
    on every row) vote each row outside the store into its class (RNN: each such row
    Hart's store classified correctly); one row of each class at least. Hamming on rounded codes: many distance ties and duplicates of two
    classes (a store member's own duplicate may outvote it: only the rows left out
    are promised)."""
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, y = ds.X[:300], ds.y[:300]
    nominal = list(ds.nominal) if metric in ("hvdm", "gower") else None
    if metric == "hamming":
        X = np.round(X[:, ds.nominal][:, :5])
    elif nominal is None:
        X = np.delete(X, ds.nominal, axis=1)
    params = {} if cls is RNN else {"k": k}  # Gates' rule is 1-NN
    selection = cls(**params, metric=metric, nominal=nominal).fit(X, y)
    store = selection.sample_indices_
    out = np.setdiff1d(np.arange(len(y)), store)
    _, ind = kneighbors(X[store], k, X[out], metric=selection.metric_)
    right = agrees(np.ascontiguousarray(store[ind]), y, 2, "nearest", y[out])
    if cls is RNN:  # Gates: the rows Hart's store classified correctly stay so
        cnn = selection.cnn_indices_
        _, first = kneighbors(X[cnn], 1, X[out], metric=selection.metric_)
        right |= y[cnn][first[:, 0]] != y[out]
    assert right.all()
    assert set(y[store]) == {0, 1} and len(store) < len(y)
    assert cls(**params, metric=metric, nominal=nominal).fit(X, y).sample_indices_.tolist() == store.tolist()


def test_a_selection_never_empties_a_class():
    """Three rows of class 2 inside class 0's cloud: ENN would remove them all; the
    class keeps its three rows (and ENN still removes others)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 4, rng.normal(size=(3, 2)) * 0.1])
    y = np.repeat([0, 1, 2], [60, 60, 3])
    order = neighbour_order(sq(X))
    assert all(vote(y[order[i][:5]], 3, "nearest") != 2 for i in range(120, 123))  # each outvoted
    for selection in (ENN(k=5), RENN(k=5), AllKNN(k=5)):
        kept = selection.fit(X, y).sample_indices_
        assert (y[kept] == 2).sum() == 3


def test_selections_return_the_rows_they_keep_in_order():
    X, y = blobs(1)
    labels = np.array(["a", "b", "c"])[y]
    for cls in SELECTIONS:
        sel = cls()
        X_out, y_out = sel.fit_resample(X, labels)
        assert np.array_equal(X_out, X[sel.sample_indices_]) and np.array_equal(
            y_out, labels[sel.sample_indices_]
        )
        assert np.all(np.diff(sel.sample_indices_) > 0)


def test_a_selection_step_in_a_run_fits_the_classifier_on_the_rows_it_keeps(tmp_path):
    """enn under hvdm before kNN under hvdm on keel.breast (no categorical: both read
    the codes and are told the nominal columns); cnn, drop3 and multiedit (seeded)
    before 1-NN on keel.breast's numbers and on iris: each fold's
    error, n_fit and retained equal the selection then knnx's kNN fitted by hand on that
    fold's training part."""
    from knnx.spec import validate_spec

    spec = {
        "name": "reduce",
        "seed": 4,
        "datasets": ["keel.breast", "iris"],
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [
            {"name": "knn", "id": "enn_hvdm", "steps": [{"name": "enn", "params": {"metric": "hvdm"}}],
             "params": {"k": 3, "metric": "hvdm"}},
            {"name": "knn", "id": "cnn_knn", "steps": ["cnn"], "params": {"k": 1}},
            {"name": "knn", "id": "drop3_knn", "steps": ["drop3"], "params": {"k": 1}},
            {"name": "knn", "id": "multiedit_knn", "steps": ["multiedit"], "params": {"k": 1}},
        ],
        "metrics": ["error"],
    }  # fmt: skip
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    rows = pd.read_csv(tmp_path / "out" / "results.csv")
    vspec = validate_spec(spec)
    for d, name in enumerate(["keel.breast", "iris"]):
        for a, algo in enumerate(["enn_hvdm", "cnn_knn", "drop3_knn", "multiedit_knn"]):
            cells = [c for c in vspec.cells if c.dataset_index == d and c.algorithm_index == a]
            for cell in cells:
                ds = vspec.dataset_of(cell)
                split = next(s for s in vspec.splits[d] if (s.repeat, s.fold) == (cell.repeat, cell.fold))
                train, test = split.train, split.test
                nominal = list(ds.nominal) or None
                if algo == "enn_hvdm":
                    sel = ENN(metric="hvdm", nominal=nominal)
                    clf = KNNClassifier(k=3, metric="hvdm", nominal=nominal)
                else:
                    sel = {"cnn_knn": CNN, "drop3_knn": DROP3, "multiedit_knn": Multiedit}[algo]()
                    if "random_state" in sel.get_params():
                        sel.set_params(random_state=4)  # the spec's seed
                    clf = KNNClassifier(k=1)
                X_fit, y_fit = sel.fit_resample(ds.X[train], ds.y[train])
                error = np.mean(clf.fit(X_fit, y_fit).predict(ds.X[test]) != ds.y[test])
                mine = rows[(rows.dataset == name) & (rows.algorithm == algo) & (rows.fold == cell.fold)]
                got = dict(zip(mine.metric, mine.value, strict=True))
                assert got["error"] == error
                assert got["n_fit"] == len(y_fit) and got["retained"] == len(y_fit) / len(train)
                if algo == "enn_hvdm" and name == "keel.breast":
                    assert len(ds.nominal) == 8  # it read the codes
            assert len(cells) == 3


REFUSED = {
    "a metric a selection cannot use": (
        "datasets: [iris]\nalgorithms: [{name: knn, steps: [{name: enn, params: {metric: precomputed}}]}]\n",
        "algorithms[0].steps[0].params.metric: must be one of 'euclidean', 'seuclidean', 'mahalanobis', "
        "'cosine', 'manhattan', 'cityblock', 'chebyshev', 'minkowski', 'hamming', 'heom', 'hvdm', 'vdm', 'gower', "
        "got 'precomputed'",
    ),
    "k not below the training rows": (
        "datasets: [iris]\nalgorithms: [{name: knn, steps: [{name: enn, params: {k: [3, 100]}}]}]\n",
        "algorithms[0].params.enn__k: k=100 must be below the 100 training samples of dataset 'iris' under "
        "protocol kfold (step enn votes with the k nearest other rows)",
    ),
    "a numeric metric on nominal codes": (
        "datasets: [{name: keel.breast, categorical: keep, id: b}]\n"
        "algorithms: [{name: knn, steps: [enn], params: {metric: hvdm}}]\n",
        "datasets[0]: algorithms[0] (enn>knn) on 'b': column 'A1' is nominal; metric 'euclidean' takes numeric "
        "attributes only (use heom, hvdm, gower or hamming, metric_params: {onehot: true}, or categorical: onehot)",
    ),
    "a mixed metric on one-hot indicators": (
        "datasets: [{name: keel.breast, categorical: onehot, id: b}]\n"
        "algorithms: [{name: knn, steps: [{name: enn, params: {metric: hvdm}}]}]\n",
        "datasets[0]: algorithms[0] (enn>knn) on 'b': 'b' gives nominal attribute 'A1' as one-hot indicators "
        "(categorical: onehot), which metric 'hvdm' would read as numbers; leave categorical out of the dataset "
        "entry and enn reads its category codes",
    ),
    "the classifier after a selection on nominal codes": (
        "datasets: [{name: keel.breast, categorical: keep, id: b}]\n"
        "algorithms: [{name: knn, steps: [{name: cnn, params: {metric: heom}}]}]\n",
        "datasets[0]: algorithms[0] (cnn>knn) on 'b': column 'A1' is nominal; metric 'euclidean' takes numeric "
        "attributes only (use heom, hvdm, gower or hamming, metric_params: {onehot: true}, or categorical: onehot)",
    ),
    "missing values under a metric without a rule": (
        "datasets: [{name: vote, missing: keep, id: v}]\nalgorithms: [{name: knn, steps: [cnn]}]\n",
        "datasets[0]: algorithms[0] (cnn>knn) on 'v': column 'V1' has missing values; metric 'euclidean' has no "
        "missing-value rule (use heom, hvdm or gower, or missing: drop_rows)",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_bad_selections_are_refused_in_one_line(tmp_path, case):
    from conftest import refused_by_cli

    body, message = REFUSED[case]
    spec = tmp_path / "s.yaml"
    spec.write_text("name: bad\nprotocol: {kind: kfold, folds: 3}\n" + body)
    refused_by_cli(tmp_path, spec, message)


def test_fcnns_centre_under_hamming_is_the_most_frequent_value():
    """Hamming reads any numbers: the centre takes each column's most frequent value
    (negative and fractional ones included, the lowest on a tie), the row nearest to it
    starts the store."""
    from knnx.reduction.condensing import _centre

    X = np.array([[-1.5, 2.0], [-1.5, 0.25], [3.0, 0.25], [3.0, 0.25], [-1.5, 9.0]])
    fitted = FCNN(metric="hamming").fit(np.vstack([X, X + 10]), np.repeat([0, 1], 5)).metric_
    assert _centre(X, fitted).tolist() == [[-1.5, 0.25]]
    assert _centre(X[[0, 2]], fitted).tolist() == [[-1.5, 0.25]]  # a tie: the lowest value


def test_a_tuned_selections_k_is_checked_against_the_inner_folds(tmp_path):
    from conftest import refused_by_cli

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: bad\nprotocol: {kind: kfold, folds: 3}\ndatasets: [iris]\n"
        "algorithms: [{name: knn, steps: [{name: enn, params: {k: 80}}], params: {k: [1, 3]}, tune: {cv: 3}}]\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "algorithms[0].params.enn__k: k=80 must be below the 66 rows of an inner training fold (tune.cv = 3) of "
        "dataset 'iris' under protocol kfold (step enn votes with the k nearest other rows)",
    )
