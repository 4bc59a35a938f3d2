"""The end of a run reads results.csv once and draws each figure once: the sorted frame
is what reading the file back gives, and report.html embeds the figure files just written."""

import base64
import json
import re

import pandas as pd

from knnx.experiment import outputs
from knnx.results import ROUND, param_names, read_results, results_columns, rows_to_csv, with_param_columns

# Values whose shortest repr needs 17 digits, and ones pandas' own parser rounds.
VALUES = [0.1 + 0.2, 1 / 3, 2 / 3, 0.30000000000000004, 1e-300, 0.12345678901234567, float("nan"), 0.0]


def _rows(rounds=False):
    rows = []
    for i, (dataset, k, flag) in enumerate(
        [("d2", 3, True), ("d1", 1, False), ("d2", 1, False), ("d1", 3, True)]
    ):
        params = json.dumps({"k": k, "flag": flag, "name": "a,b"}, separators=(",", ":"), sort_keys=True)
        for r in (1, 0) if rounds else (None,):
            for metric in ("f1_macro", "error"):
                row = {
                    "experiment": "e",
                    "dataset": dataset,
                    "algorithm": "knn",
                    "params": params,
                    "protocol": '{"kind":"kfold"}',
                    "repeat": 0,
                    "fold": i % 2,
                    "seed": 7,
                    "metric": metric,
                    "value": VALUES[(2 * i + (metric == "error")) % len(VALUES)],
                    "n_train": 10 + (r or 0),
                    "n_test": 5,
                    "fit_seconds": 0.001 * (i + 1) / 3,
                    "predict_seconds": 1e-5 / 3,
                }
                if rounds:
                    row[ROUND] = r
                rows.append(row)
    return rows


def _write(path, rows, rounds=False):
    names = param_names([r["params"] for r in rows])
    text = rows_to_csv(with_param_columns(rows, names), header=True, columns=results_columns(names, rounds))
    path.write_text(text)
    return names


def _order(rows):
    cells = {}
    for r in sorted(rows, key=lambda r: (r["dataset"], r["params"])):
        cells.setdefault((r["dataset"], r["algorithm"], r["params"], r["repeat"], r["fold"]), len(cells))
    return cells


def test_the_sorted_frame_is_what_reading_the_file_back_gives(tmp_path):
    for rounds in (False, True):
        path = tmp_path / f"results-{rounds}.csv"
        rows = _rows(rounds)
        names = _write(path, rows, rounds)
        frame = outputs.sort_results(path, _order(rows), ["error", "f1_macro"], names, rounds)
        pd.testing.assert_frame_equal(frame, read_results(path), check_exact=True)
        # the cell order, metrics in spec order (and rounds in order within a cell)
        assert list(frame["dataset"][:2]) == ["d1", "d1"]
        assert list(frame["metric"][:2]) == ["error", "f1_macro"]
        if rounds:
            assert list(frame[ROUND][:4]) == [0, 0, 1, 1]


def test_finish_outputs_reads_once_and_embeds_the_figures_it_wrote(tmp_path, monkeypatch):
    import knnx.results
    from knnx.reporting import figures as plots

    rows = []
    for d in ("d1", "d2", "d3"):
        for k in (1, 3, 5):
            for fold in range(3):
                row = _rows()[0] | {"dataset": d, "fold": fold, "metric": "error"}
                row["params"] = json.dumps({"k": k}, separators=(",", ":"))
                row["value"] = 0.1 * k + 0.01 * fold + (d == "d2") * 0.05
                rows.append(row)
    names = _write(tmp_path / "results.csv", rows[::-1])
    reads = []
    real = knnx.results.read.parse_results
    monkeypatch.setattr(knnx.results.read, "parse_results", lambda *a: reads.append(a[1]) or real(*a))
    drawn = []
    real_figures = plots.automatic_figures
    monkeypatch.setattr(
        plots,
        "automatic_figures",
        lambda frame, requested=(): drawn.append(len(frame)) or real_figures(frame, requested),
    )
    finished = outputs.finish_outputs(tmp_path, order=_order(rows), metrics=["error"], names=names)
    assert finished.notes == [] and finished.advice == [] and reads == [tmp_path / "results.csv"]
    assert drawn == [len(rows)]  # the figures are drawn once, for the files
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    embedded = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"', text)
    files = {"error every configuration": "error.png", "error against k": "error-k.png"}
    # the run's figure files, embedded byte for byte; the CD diagram and the figures across
    # datasets are drawn for the page (they are no files of the run)
    drawn_for_page = ("critical-difference", "error: rank per dataset", "error: wins", "error: mean ranks")
    figures = [(data, alt) for data, alt in embedded if not alt.startswith(drawn_for_page)]
    assert [alt.replace(",", "") for _, alt in figures] == list(files)
    for (data, _), name in zip(figures, files.values(), strict=True):
        assert base64.b64decode(data) == (tmp_path / name).read_bytes()
    # the summary tables of summary.md and of the page are the same numbers
    assert "| d2 | knn k=3 | 0.3600 ± 0.0100 | 3 |" in (tmp_path / "summary.md").read_text()
    assert "<td>d2</td><td>knn k=3</td><td>0.3600 ± 0.0100</td>" in text


def test_knnx_report_alone_draws_the_figures_as_before(tmp_path):
    """Standalone (no run at hand), the report reads results.csv and draws its figures."""
    from knnx.reporting.html import build_report

    rows = [_rows()[0] | {"params": json.dumps({"k": k}), "value": 0.1 * k} for k in (1, 3)]
    _write(tmp_path / "results.csv", rows)
    text = build_report(tmp_path)
    assert text.count("<img") == 2 and "no figure" not in text
