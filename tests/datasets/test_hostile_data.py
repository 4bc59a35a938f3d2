"""Hostile CSV datasets (issue 7): each is refused with one line naming file, column and line
(exit 2, nothing written), or accepted with the behaviour documented in knnx/datasets/tabular.py."""

import csv

import numpy as np
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.datasets import load_dataset

# Round trips through files: also run under each pandas of make test-pandas.
pytestmark = pytest.mark.pandas_io

runner = CliRunner()

SPEC = """\
name: t
seed: 0
datasets: [{csv: d.csv, label: label}]
preprocess: {standardize: true}
protocol: {kind: kfold, folds: 2, stratified: false}
algorithms:
  - name: knn
    params: {k: 1}
metrics: [error]
"""
H = "a,b,label\n"
OK = "1,2,x\n3,4,y\n5,6,x\n7,8,y\n"

CASES = [
    (
        "nan",
        H + "1,2,x\nnan,4,y\n",
        "column 'a' line 3: 'nan' is not a number; a missing value is an empty cell",
    ),
    (
        "NaN",
        H + "1,2,x\n3,NaN,y\n",
        "column 'b' line 3: 'NaN' is not a number; a missing value is an empty cell",
    ),
    (
        "NA",
        H + "1,NA,x\n3,4,y\n",
        "column 'b' line 2: 'NA' is not a number; a missing value is an empty cell",
    ),
    (
        "question-mark",
        H + "1,2,x\n?,4,y\n",
        "column 'a' line 3: '?' is not a number; a missing value is an empty",
    ),
    (
        "empty-cell",
        H + "1,2,x\n,4,y\n",
        "column 'a' line 3: missing value (set missing: drop_rows, or missing: fill",
    ),
    (
        "inf",
        H + "1,2,x\ninf,4,y\n",
        "column 'a' line 3: infinite value 'inf' (only finite numbers are allowed)",
    ),
    (
        "-inf",
        H + "1,2,x\n3,-inf,y\n",
        "column 'b' line 3: infinite value '-inf' (only finite numbers are allowed)",
    ),
    ("overflow", H + "1,2,x\n3,1e400,y\n", "column 'b' line 3: infinite value '1e400'"),
    (
        "text",
        H + "1,2,x\n3,abc,y\n",
        "column 'b' line 3: 'abc' is not a number, while other cells of the column are (a categorical column holds "
        "text only)",
    ),
    (
        "single-class",
        H + "1,2,x\n3,4,x\n",
        "column 'label': every row has class 'x'; a classifier needs at least two",
    ),
    ("empty-file", "", "d.csv: file is empty (expected a header row and data rows)"),
    ("blank-lines", "\n\n", "d.csv: file is empty (expected a header row and data rows)"),
    ("header-only", H, "d.csv: has a header but no data rows"),
    ("no-label-column", "a,b,c\n1,2,x\n", "d.csv: no label column 'label' (columns: a, b, c)"),
    ("only-label", "label\nx\ny\n", "d.csv: no feature columns besides the label column 'label'"),
    ("row-too-long", H + "1,2,x\n1,2,3,y\n", "d.csv: line 3: 4 fields, while the header has 3"),
    ("row-too-short", H + "1,2,x\n1,y\n", "d.csv: line 3: 2 fields, while the header has 3"),
    ("label-empty", H + "1,2,x\n3,4,\n", "column 'label' line 3: missing class label"),
    (
        "label-nan",
        H + "1,2,x\n3,4,nan\n",
        "column 'label' line 3: class label 'nan' reads as a missing label",
    ),
    (
        "unnamed-column",
        ",a,label\n0,1,x\n1,2,y\n",
        "d.csv: line 1: column 1 has no name (name it, or remove it if",
    ),
    (
        "repeated-column",
        "a,a,label\n1,2,x\n3,4,y\n",
        "d.csv: line 1: column name 'a' appears twice (columns 1 and 2)",
    ),
    ("open-quote", H + '1,"2,x\n3,4,y\n', "d.csv: line 3: not readable as CSV (unexpected end of data)"),
    ("blank-line-numbering", H + "1,2,x\n\n\n3,oops,y\n", "column 'b' line 5: 'oops' is not a number"),
    (
        "latin-1",
        (H + "1,2,caf\xe9\n").encode("latin-1"),
        "d.csv: line 2: byte 0xe9 is not UTF-8 text (save the file",
    ),
    ("utf-16", (H + OK).encode("utf-16"), "d.csv: line 1: byte 0xff is not UTF-8 text"),
    ("binary", bytes(range(256)) * 4, "d.csv: line 2: byte 0x80 is not UTF-8 text"),
    (
        "long-cell",
        H + "1," + "9" * 200_000 + ",x\n",
        "d.csv: line 2: not readable as CSV (field larger than field",
    ),
]


def write(tmp_path, content):
    path = tmp_path / "d.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    (tmp_path / "x.yaml").write_text(SPEC)
    return path


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("content,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_csv_is_one_line_exit_2_and_writes_nothing(tmp_path, content, message):
    write(tmp_path, content)
    spec = tmp_path / "x.yaml"
    prefix = f"error: {spec}: datasets[0]: {tmp_path / 'd.csv'}: "
    for args in (["validate", spec], ["run", spec, "--out", tmp_path / "out", "--quiet"]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output, result.exception)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(prefix), result.stderr[:500]
        assert message in lines[0]
        assert len(lines[0]) < 400 and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_csv_folder_is_refused(tmp_path):
    (tmp_path / "d.csv").mkdir()
    (tmp_path / "x.yaml").write_text(SPEC)
    result = invoke("validate", tmp_path / "x.yaml")
    assert result.exit_code == 2 and f"{tmp_path / 'd.csv'}: is a folder, not a CSV file" in result.stderr


def test_a_missing_value_marker_in_a_text_column_is_a_category(tmp_path):
    path = write(tmp_path, "a,c,label\n1,NA,x\n2,red,y\n3,NA,x\n")
    ds = load_dataset({"csv": str(path), "categorical": "onehot"})
    assert ds.feature_names == ("a", "c=NA", "c=red")
    with pytest.raises(
        Exception, match="column 'c' line 3: 'NA' is not a number; a missing value is an empty"
    ):
        load_dataset({"csv": str(write(tmp_path, "a,c,label\n1,5,x\n2,NA,y\n")), "categorical": "onehot"})


def test_accepted_oddities_load_as_documented(tmp_path):
    """A BOM, CRLF line ends, spaces around numbers, blank lines and 'NA' as a class name are accepted."""
    path = write(tmp_path, "\ufeffa,b,label\r\n 1 ,2,x\r\n\r\n3, 4 ,NA\r\n")
    ds = load_dataset({"csv": str(path)})
    assert ds.feature_names == ("a", "b") and ds.X.tolist() == [[1, 2], [3, 4]]
    assert list(ds.classes) == ["NA", "x"]
    path = write(tmp_path, "a,label\n1,x\n2, x\n")  # label text is verbatim
    assert list(load_dataset({"csv": str(path)}).classes) == [" x", "x"]


def test_duplicate_rows_and_zero_variance_columns_run_with_finite_results(tmp_path):
    """Duplicate rows are kept, constant columns too (standardisation keeps them at scale 1)."""
    rows = "".join(f"{i % 4},5,{'x' if i % 2 else 'y'}\n" for i in range(12)) + "0,5,y\n0,5,y\n"
    path = write(tmp_path, "a,b,label\n" + rows)
    ds = load_dataset({"csv": str(path)})
    assert ds.n_samples == 14 and np.all(ds.X[:, 1] == 5)
    result = invoke("run", tmp_path / "x.yaml", "--out", tmp_path / "out", "--quiet")
    assert result.exit_code == 0, result.output
    with open(tmp_path / "out" / "results.csv") as f:
        values = [float(r["value"]) for r in csv.DictReader(f) if r["metric"] == "error"]
    assert len(values) == 2 and all(np.isfinite(v) and 0 <= v <= 1 for v in values)
