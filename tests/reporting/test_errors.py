"""Library errors speak of values, the CLI of flags: a library exception names the
parameter of the call (``by``), the command line the flag a user typed (``--by``)."""

import pickle

import pytest
from test_compare import HAND, _results
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import CellError, KnnxError, ResultsError, SpecError
from knnx.reporting.figures import plot
from knnx.reporting.summaries import format_table, summarize
from knnx.stats.compare import compare

runner = CliRunner()
ALGORITHMS = {"A": ("knn", '{"k":1}'), "B": ("knn", '{"k":3}'), "C": ("unn", "{}")}


def test_a_library_error_names_the_parameter():
    frame = _results(HAND, algorithms=ALGORITHMS)
    with pytest.raises(ResultsError) as err:
        summarize(frame, by=["dataset", "kk"])
    assert err.value.param == "by"
    assert str(err.value).startswith("by: unknown column 'kk'; known: experiment, dataset")
    with pytest.raises(ResultsError, match=r"^by: column 'dataset' is given twice$"):
        summarize(frame, by=["dataset", "dataset"])
    with pytest.raises(ResultsError, match=r"^fmt: expected md, csv or latex, got 'html'$"):
        format_table(summarize(frame), "html")
    with pytest.raises(ResultsError, match=r"^alpha: expected a level in \(0, 1\), got 2$"):
        compare(frame, alpha=2, select="all")
    with pytest.raises(ResultsError) as err:
        compare(frame, select=None)
    assert str(err.value) == (
        "select: algorithm 'knn' has 2 configurations; give select='all' (each a contestant) or "
        "select='best-test' (each algorithm's best on the test folds: optimistic), or choose them honestly "
        "with tune:"
    )
    with pytest.raises(ResultsError) as err:
        plot(frame, x="kk")
    assert str(err.value) == (
        "x: no parameter 'kk' in the 'error' rows; parameters that vary within an algorithm: k "
        "(or x='configuration': every configuration side by side)"
    )


def test_render_names_flags_and_the_error_survives_pickling():
    err = ResultsError("only with {executor=dask}", param="scheduler", mentions=[("executor", "dask")])
    assert str(err) == "scheduler: only with executor='dask'"
    assert err.render({"scheduler": "--scheduler", "executor": "--executor"}) == (
        "--scheduler: only with --executor dask"
    )
    assert err.lines({"scheduler": "--scheduler"}) == ["--scheduler: only with executor='dask'"]
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is ResultsError and back.param == "scheduler" and str(back) == str(err)
    assert back.render({"executor": "--executor"}) == "scheduler: only with --executor dask"
    many = pickle.loads(pickle.dumps(SpecError.from_lines(["a: bad", "b: worse"])))
    assert isinstance(many, ValueError) and many.lines() == ["a: bad", "b: worse"]
    assert str(KnnxError("plain")) == "plain" and KnnxError("plain").param is None
    assert str(pickle.loads(pickle.dumps(CellError("cell d knn: boom")))) == "cell d knn: boom"


def test_the_command_line_names_the_flags(tmp_path):
    path = _results(HAND, tmp_path, algorithms=ALGORITHMS)
    cases = {
        ("table", "--by", "dataset,kk"): "error: --by: unknown column 'kk'; known: experiment, dataset",
        (
            "compare",
            "--select",
            "all",
            "--alpha",
            "2",
        ): "error: --alpha: expected a level in (0, 1), got 2.0\n",
        ("compare",): "error: --select: algorithm 'knn' has 2 configurations; give --select all (each a "
        "contestant) or --select best-test (each algorithm's best",
        (
            "plot",
            "--x",
            "kk",
        ): "error: --x: no parameter 'kk' in the 'error' rows; parameters that vary within an algorithm: k "
        "(or --x configuration: every configuration side by side)\n",
        ("plot", "--out", str(tmp_path)): f"error: --out: {tmp_path} is a folder; give an image file name",
        ("table", "--metric", "auc"): (
            "error: --metric: no rows for metric 'auc'; present: 'error'; timings: fit_seconds, predict_seconds, "
            "tune_seconds\n"
        ),
    }
    for (command, *options), expected in cases.items():
        result = runner.invoke(app, [command, str(path), *options])
        assert result.exit_code == 2, (command, result.output)
        assert result.output.startswith(expected), (command, result.output)


def test_knnx_run_names_the_runners_parameters_by_their_flags(tmp_path, monkeypatch):
    """The runner's errors about ``jobs``, ``executor`` and ``scheduler`` print as the
    flags of ``knnx run`` (its options of the same names)."""
    import knnx.experiment.runner

    def refuse(spec, **options):
        raise KnnxError("only with {executor=dask}", param="scheduler", mentions=[("executor", "dask")])

    monkeypatch.setattr(knnx.experiment.runner, "run_spec", refuse)
    result = runner.invoke(app, ["run", str(tmp_path / "s.yaml"), "--scheduler", "tcp://h:1", "--quiet"])
    assert result.exit_code == 2 and result.output == "error: --scheduler: only with --executor dask\n"
