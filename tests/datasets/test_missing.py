"""One missing-value policy (knnx.datasets.missing) for every tabular source: a user's CSV,
a suite dataset and a loader's Dataset treat and refuse missing values alike."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from knnx.datasets import load_dataset
from knnx.datasets._base import make_dataset
from knnx.datasets.missing import check_options, treat
from knnx.datasets.views import treat_missing
from knnx.errors import DataError

X = np.array([[1.0, np.nan], [2.0, 3.0], [np.nan, 4.0]])
NAN_ROWS = np.isnan(X).any(axis=1)


def first():
    return "f: column 'b' line 2: missing value"


def test_each_treatment_by_hand():
    same, keep = treat(X, NAN_ROWS, "keep", None, "f", first)
    assert same is X and keep is None
    filled, keep = treat(X, NAN_ROWS, "fill", -1, "f", first)
    assert_array_equal(filled, [[1.0, -1.0], [2.0, 3.0], [-1.0, 4.0]]) and keep is None
    dropped, keep = treat(X, NAN_ROWS, "drop_rows", None, "f", first)
    assert_array_equal(dropped, [[2.0, 3.0]]) and keep.tolist() == [False, True, False]
    with pytest.raises(DataError) as err:
        treat(X, NAN_ROWS, "error", None, "f", first)
    assert (
        str(err.value)
        == "f: column 'b' line 2: missing value (set missing: drop_rows, or missing: fill with a fill_value)"
    )
    clean = X[[1]]
    assert treat(clean, np.isnan(clean).any(axis=1), "error", None, "f", first) == (clean, None)


def test_options_are_checked_alike():
    for missing, fill_value, categorical, message in [
        ("drop", None, "onehot", "s: missing must be one of error, drop_rows, fill, keep, got 'drop'"),
        ("fill", None, "onehot", "s: missing: fill needs a numeric fill_value"),
        ("keep", None, "codes", "s: categorical must be one of onehot, ordinal, keep, got 'codes'"),
    ]:
        with pytest.raises(DataError) as err:
            check_options("s", missing, fill_value, categorical)
        assert str(err.value) == message


ALL_MISSING = "missing: drop_rows removes every row (each has a missing value); fill them (missing: fill) or remove the emptiest columns"


def test_dropping_every_row_is_refused_by_every_source(tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("a,b,label\n1,,x\n,2,y\n")
    with pytest.raises(DataError) as err:
        load_dataset({"csv": str(path), "missing": "drop_rows"})
    assert str(err.value) == f"{path}: {ALL_MISSING}"
    ds = make_dataset(
        "lab", np.array([[1.0, np.nan], [np.nan, 2.0]]), np.array([0, 1]), np.array(["x", "y"]), ("a", "b")
    )
    with pytest.raises(DataError) as err:
        treat_missing(ds, "drop_rows", None, "loader lab")
    assert str(err.value) == f"loader lab: {ALL_MISSING}"
    kept, dropped = treat_missing(ds, "fill", 0.0, "loader lab")
    assert dropped == 0 and not np.isnan(kept.X).any()
