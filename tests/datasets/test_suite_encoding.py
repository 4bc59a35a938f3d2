"""Typed suite data reaching the estimators: the encodings of nominal attributes, missing
values, and ``preprocess: {standardize: numeric}``, each against scikit-learn on KEEL's own
folds."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from knnx import run_spec
from knnx.datasets import load_dataset


def _spec(dataset, standardize):
    return {
        "name": "enc",
        "seed": 0,
        "datasets": [dataset],
        "preprocess": {"standardize": standardize},
        "protocol": {"kind": "partitions", "scheme": "10-fold"},
        "algorithms": [{"name": "knn", "params": {"k": 1}}],
        "metrics": ["error"],
    }


def _knnx_errors(tmp_path, dataset, standardize):
    run_spec(_spec(dataset, standardize), out=tmp_path, figures=False)
    rows = pd.read_csv(tmp_path / "results.csv")
    return rows[rows.metric == "error"].sort_values("fold")["value"].to_numpy()


def _sklearn_errors(ds, pipeline):
    fold_of = ds.partitions["10-fold"]
    out = []
    for f in range(10):
        train, test = fold_of != f, fold_of == f
        model = pipeline().fit(ds.values[train], ds.y[train])
        out.append(np.mean(model.predict(ds.values[test]) != ds.y[test]))
    return np.array(out)


def test_numeric_standardisation_leaves_one_hot_columns(tmp_path):
    # crx: 6 numeric and 9 nominal attributes; scikit-learn scales the numeric columns and
    # one-hot encodes the nominal codes (categories 0..m-1, as knnx's order), from the typed values.
    ds = load_dataset("keel.crx")
    kinds = [a.kind for a in ds.attributes]
    numeric = [j for j, k in enumerate(kinds) if k == "numeric"]
    nominal = [j for j, k in enumerate(kinds) if k == "nominal"]
    cats = [list(range(len(ds.attributes[j].categories))) for j in nominal]

    def pipeline():
        encode = ColumnTransformer(
            [("num", StandardScaler(), numeric), ("nom", OneHotEncoder(categories=cats), nominal)]
        )
        return make_pipeline(encode, KNeighborsClassifier(1, algorithm="brute"))

    ours = _knnx_errors(tmp_path, "keel.crx", "numeric")
    np.testing.assert_array_equal(ours, _sklearn_errors(ds, pipeline))
    # Standardising the 0/1 columns too is another metric: some folds differ.
    assert not np.array_equal(ours, _knnx_errors(tmp_path / "all", "keel.crx", True))


def test_numeric_columns_of_each_encoding():
    onehot = load_dataset("keel.crx")
    ordinal = load_dataset({"name": "keel.crx", "categorical": "ordinal"})
    assert onehot.X.shape == (
        653,
        6 + sum(len(a.categories) for a in onehot.attributes if a.kind == "nominal"),
    )
    assert ordinal.X.shape == (653, 15)
    assert onehot.numeric_columns().sum() == ordinal.numeric_columns().sum() == 6
    # Ordinal columns hold the category codes of the typed values.
    np.testing.assert_array_equal(ordinal.X, ordinal.values)
    # A bundled dataset without types: every column but the one-hot ones (german: 7 numeric).
    german = load_dataset("german")
    assert german.numeric_columns().sum() == 7 and german.X.shape == (1000, 61)


@pytest.mark.parametrize(
    ("options", "rows", "nan"),
    [({}, 297, 0), ({"missing": "fill", "fill_value": 0.0}, 303, 6), ({"missing": "error"}, None, None)],
)
def test_missing_values_kept_and_treated(options, rows, nan):
    # cleveland: 6 missing cells in 6 rows (ca 4, thal 2), as KEEL's file has them.
    from knnx.errors import DataError

    entry = {"name": "keel.cleveland", **options}
    if rows is None:
        with pytest.raises(DataError, match="keel.cleveland: attribute '(ca|thal)' row \\d+ is missing"):
            load_dataset(entry)
        return
    ds = load_dataset(entry)
    assert ds.X.shape[0] == rows and np.isnan(ds.values).sum() == nan
    assert np.isfinite(ds.X).all()
    assert sum(len(f) for f in [ds.partitions["10-fold"]]) == rows
