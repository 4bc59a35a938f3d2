"""Wide CSV files: every cell is typed in one pass over the table (a 20 x 100,000 file
validated in minutes when each column was a pandas Series of its own; its timing is
benchmarks/wide.py's), with the same values and the same first error as column by
column."""

import numpy as np
import pytest

from knnx.datasets.tabular import _numeric_or_text, load_csv, parse_numbers, read_table, table_to_dataset
from knnx.errors import DataError


def _write(path, header, rows):
    path.write_text(",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows))


def test_a_wide_file_loads_as_column_by_column_typing_gives_it(tmp_path):
    """Oracle: each column typed alone (parse_numbers, then _numeric_or_text for a text
    column), on 12 rows x 3,000 columns: numbers in every notation knnx reads, empty
    cells, and two text columns one-hot encoded."""
    rng = np.random.default_rng(0)
    n, d = 12, 3000
    cells = [[repr(float(v)) for v in rng.normal(size=d)] for _ in range(n)]
    for i in range(n):
        cells[i][7] = ["1e-3", "-2", "0.5", "3E2"][i % 4]  # exponents, integers
        cells[i][11] = "" if i % 3 == 0 else "4"  # empty cells: missing
        cells[i][100] = "ab"[i % 2]  # text
        cells[i][2999] = "xyz"[i % 3]
    header = [f"c{j}" for j in range(d)] + ["label"]
    _write(tmp_path / "w.csv", header, [[*r, str(i % 2)] for i, r in enumerate(cells)])
    ds = load_csv(tmp_path / "w.csv", missing="keep", categorical="onehot")
    features, _ = read_table(tmp_path / "w.csv", "label")
    blocks, names = [], []
    for col in features.columns:
        values, is_text = _numeric_or_text(features[col], lambda r, c: f"{c}:{r}", col, "onehot")
        if not is_text:
            blocks.append(values)
            names.append(col)
            continue
        for category in sorted(features[col].dropna().unique()):
            blocks.append((features[col] == category).to_numpy(dtype=np.float64))
            names.append(f"{col}={category}")
    expected = np.column_stack(blocks)
    assert list(ds.feature_names) == names and ds.X.shape == (n, d + 3)
    np.testing.assert_array_equal(ds.X, expected)  # NaN where empty, bit for bit elsewhere
    assert np.isnan(ds.X[0, 11]) and ds.X[1, 11] == 4.0 and ds.X[0, 7] == parse_numbers(["1e-3"])[0]


@pytest.mark.parametrize(
    "bad,message",
    [
        ({3: "inf", 9: "zz"}, "column 'c3' line 3: infinite value 'inf' (only finite numbers are allowed)"),
        ({3: "zz", 9: "inf"}, "column 'c3' line 3: 'zz' is not a number (set categorical: onehot or ordinal"),
        ({5: "NA"}, "column 'c5' line 3: 'NA' is not a number; a missing value is an empty cell"),
    ],
)
def test_the_first_bad_column_is_named_as_column_by_column(tmp_path, bad, message):
    """The first column in file order with a problem is the one named, whatever the
    other columns hold."""
    header = [f"c{j}" for j in range(12)] + ["label"]
    rows = [[str(i + j) for j in range(12)] + [str(i % 2)] for i in range(4)]
    for j, text in bad.items():
        rows[1][j] = text
    _write(tmp_path / "b.csv", header, rows)
    with pytest.raises(DataError) as error:
        table_to_dataset("b", [tmp_path / "b.csv"], categorical="onehot", allow_text=False)
    assert message in str(error.value)
