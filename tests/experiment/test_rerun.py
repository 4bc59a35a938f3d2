"""A rerun with nothing to do, answered from the files alone (knnx.experiment.rerun):
it imports no scikit-learn, numba or pandas and writes nothing; every change of what
made the cells (spec, data, code, libraries, options, the folder's files) sends the
run down its full path, which decides as before; runs made by code outside knnx and
scikit-learn never take the short path."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
import yaml

from knnx.errors import DataError, ResultsError, SpecError
from knnx.experiment import rerun
from knnx.experiment.runner import run_spec
from knnx.writing import output_lock

CSV = "a,b,label\n" + "".join(f"{i},{(i * 7) % 5},{i % 2}\n" for i in range(40))


def spec_dict(**changes):
    return {
        "name": "quick",
        "seed": 0,
        "datasets": [{"csv": "d.csv", "label": "label"}, "iris"],
        "preprocess": {"standardize": False},
        "protocol": {"kind": "kfold", "folds": 4, "repeats": 2},
        "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}],
        "metrics": ["error"],
        **changes,
    }


@pytest.fixture
def done(tmp_path):
    """A spec file beside its CSV, run to the end once: (spec path, out, cells)."""
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "d.csv").write_text(CSV)
    spec = folder / "spec.yaml"
    spec.write_text(yaml.safe_dump(spec_dict(), sort_keys=False))
    out = tmp_path / "out"
    summary = run_spec(spec, out=out, figures=False)
    assert summary.n_run == summary.n_cells == 32
    return spec, out, summary.n_cells


def folder_bytes(out):
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != ".knnx.lock"}


def test_nothing_to_do_is_answered_without_heavy_imports_and_writes_nothing(done):
    spec, out, n = done
    before = folder_bytes(out)
    probe = textwrap.dedent(f"""
        import json, sys
        from knnx.experiment.rerun import unchanged_run
        s = unchanged_run({str(spec)!r}, out={str(out)!r}, figures=False)
        heavy = [m for m in ("sklearn", "numba", "pandas", "scipy", "matplotlib", "pydantic") if m in sys.modules]
        print(json.dumps([s.n_cells, s.n_run, s.n_skipped, heavy]))
    """)
    line = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(line) == [n, 0, n, []]
    summary = run_spec(spec, out=out, figures=False)  # the library takes the same path
    assert (summary.n_cells, summary.n_run, summary.n_skipped, summary.notes) == (n, 0, n, ())
    assert folder_bytes(out) == before


def test_the_full_path_agrees_when_the_short_one_is_off(done, monkeypatch):
    """With the short path disabled, the full path finds the same nothing to do and
    leaves the same bytes: the short path only skips work."""
    spec, out, n = done
    before = folder_bytes(out)
    monkeypatch.setattr("knnx.experiment.runner.unchanged_run", lambda *a, **k: None)
    summary = run_spec(spec, out=out, figures=False)
    assert (summary.n_run, summary.n_skipped) == (0, n)
    assert folder_bytes(out) == before


def edit_csv(spec, out):
    csv = spec.parent / "d.csv"
    csv.write_text(csv.read_text().replace("\n7,4,1\n", "\n7,3,1\n"))  # one value
    return 16  # the CSV dataset's cells run again


def edit_results(spec, out):
    path = out / "results.csv"
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:-1]))  # a row lost
    return None  # the full path decides: it reruns what the files no longer hold


def edit_ledger(spec, out):
    path = out / "cells.csv"
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:-1]))
    return 1


def comment_spec(spec, out):
    spec.write_text(spec.read_text() + "# a comment\n")
    return 0  # the cells are the same: the full path finds nothing to do


def other_knnx_code(spec, out, monkeypatch):
    monkeypatch.setattr(rerun, "code_checksum", lambda: "edited")
    monkeypatch.setattr("knnx.experiment.provenance.code_checksum", lambda: "edited")
    return 32


def other_library(spec, out, monkeypatch):
    upgraded = {**rerun.library_versions(), "numpy": "99.0"}
    monkeypatch.setattr(rerun, "library_versions", lambda: upgraded)
    monkeypatch.setattr("knnx.experiment.provenance.library_versions", lambda: upgraded)
    return 32


def other_data_folder(spec, out, monkeypatch):
    monkeypatch.setenv("KNNX_DATA", str(rerun.Path(__file__).resolve().parents[2] / "datasets"))
    return 0  # the same files through another name: nothing to rerun, the stamp is refreshed


@pytest.mark.parametrize(
    "change",
    [
        edit_csv,
        edit_results,
        edit_ledger,
        comment_spec,
        other_knnx_code,
        other_library,
        other_data_folder,
    ],  # fmt: skip
)
def test_every_change_takes_the_full_path(done, change, monkeypatch):
    spec, out, n = done
    args = (spec, out, monkeypatch) if change.__code__.co_argcount == 3 else (spec, out)
    expected = change(*args)
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    summary = run_spec(spec, out=out, figures=False)
    if expected is not None:
        assert summary.n_run == expected
    assert summary.n_cells == n
    again = rerun.unchanged_run(spec, out=out, figures=False)  # the full path's record serves the next rerun
    assert again is not None and (again.n_cells, again.n_run) == (n, 0)


@pytest.mark.parametrize(
    "options",
    [{"overrides": ["seed=1"]}, {"report": False}, {"resume": False}, {"executor": "dask"}],
)
def test_other_options_take_the_full_path(done, options):
    spec, out, _ = done
    assert rerun.unchanged_run(spec, out=out, **options) is None


def test_a_copy_of_the_spec_elsewhere_reads_its_own_csv(done, tmp_path):
    """The same spec bytes in another folder name another d.csv: not the same run."""
    spec, out, _ = done
    other = tmp_path / "copy"
    other.mkdir()
    shutil.copy(spec, other / "spec.yaml")
    (other / "d.csv").write_text(CSV.replace("\n7,4,1\n", "\n7,0,1\n"))
    assert rerun.unchanged_run(other / "spec.yaml", out=out, figures=False) is None
    assert run_spec(other / "spec.yaml", out=out, figures=False).n_run == 16


def test_the_default_folder_follows_the_spec_name(done, monkeypatch):
    spec, _, n = done
    monkeypatch.chdir(spec.parent)
    first = run_spec(spec, figures=False)
    assert first.out == rerun.Path("results") / "quick" and first.n_run == n
    assert rerun.unchanged_run(spec, figures=False).n_skipped == n
    assert (
        rerun.unchanged_run(spec, overrides=["name=quick"], figures=False) is None
    )  # an override may rename it


def test_a_locked_folder_or_too_many_jobs_are_refused_by_the_full_path(done, monkeypatch):
    spec, out, _ = done
    with output_lock(out):
        assert rerun.unchanged_run(spec, out=out, figures=False) is None
        with pytest.raises(ResultsError, match="another knnx run"):
            run_spec(spec, out=out, figures=False)
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "1MiB")
    assert rerun.unchanged_run(spec, out=out, jobs=2, figures=False) is None
    with pytest.raises(DataError, match="jobs"):
        run_spec(spec, out=out, jobs=2, figures=False)
    assert (
        rerun.unchanged_run(spec, out=out, figures=False) is None
    )  # below the limit validation passed under
    monkeypatch.delenv("KNNX_MEMORY_LIMIT")
    assert rerun.unchanged_run(spec, out=out, figures=False) is not None


def test_a_stamp_without_inputs_is_completed_by_the_next_rerun(done):
    spec, out, n = done
    stamp = out / rerun.STAMP
    record = json.loads(stamp.read_text())
    stamp.write_text(json.dumps({**record, "inputs": None}))
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    assert run_spec(spec, out=out, figures=False).n_run == 0
    assert json.loads(stamp.read_text()) == record
    assert rerun.unchanged_run(spec, out=out, figures=False) is not None


def test_code_outside_knnx_and_scikit_learn_has_no_fingerprint(tmp_path):
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "mine.py").write_text(
        "import numpy as np\n"
        "from sklearn.neighbors import KNeighborsClassifier\n"
        "class Mine(KNeighborsClassifier):\n    pass\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "class MyScale(StandardScaler):\n    pass\n"
        "def load():\n    rng = np.random.default_rng(0)\n"
        "    return rng.normal(size=(30, 2)), np.arange(30) % 2\n"
    )
    base = spec_dict(datasets=["iris"])
    cases = {
        "sklearn": (
            spec_dict(
                datasets=["iris"],
                algorithms=[
                    {"estimator": "sklearn.neighbors:KNeighborsClassifier", "params": {"n_neighbors": [1]}}
                ],
            ),
            True,
        ),  # fmt: skip
        "estimator": (
            {**base, "algorithms": [{"estimator": "mine:Mine", "params": {"n_neighbors": [1]}}]},
            False,
        ),
        "loader": ({**base, "datasets": [{"loader": "mine:load"}]}, False),
        "synthetic": ({**base, "datasets": [{"synthetic": "blobs", "n": 30}]}, True),
        # steps of knnx and scikit-learn are in the fingerprint; another package's are not
        "steps": ({**base, "algorithms": [{"name": "knn", "steps": ["scale", "pca"]}]}, True),
        "sampler": (
            {
                **base,
                "algorithms": [
                    {"name": "knn", "steps": [{"estimator": "imblearn.under_sampling:TomekLinks"}]}
                ],
            },
            False,
        ),
        "step": ({**base, "algorithms": [{"name": "knn", "steps": [{"estimator": "mine:MyScale"}]}]}, False),
    }
    for name, (data, short) in cases.items():
        spec = folder / f"{name}.yaml"
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
        out = tmp_path / name
        run_spec(spec, out=out, figures=False)
        inputs = json.loads((out / rerun.STAMP).read_text())["inputs"]
        assert (inputs is not None) == short, name
        assert (rerun.unchanged_run(spec, out=out, figures=False) is not None) == short, name
        assert run_spec(spec, out=out, figures=False).n_run == 0


def test_an_edit_during_the_run_leaves_no_fingerprint(tmp_path):
    """The cells were made from what validation read: a spec edited while they run
    (here by the progress callback, at the first cell) is not what made them."""
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "d.csv").write_text(CSV)
    spec = folder / "spec.yaml"
    spec.write_text(yaml.safe_dump(spec_dict(), sort_keys=False))
    edited = []

    def progress(done, total, text="", **_):
        if done == 1 and not edited:
            spec.write_text(spec.read_text() + "# edited meanwhile\n")
            edited.append(True)

    out = tmp_path / "out"
    run_spec(spec, out=out, progress=progress, figures=False)
    assert edited and json.loads((out / rerun.STAMP).read_text())["inputs"] is None
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    assert run_spec(spec, out=out, figures=False).n_run == 0  # the full path: same cells, now recorded
    assert rerun.unchanged_run(spec, out=out, figures=False) is not None


def test_a_retargeted_link_to_the_csv_is_read_again(tmp_path):
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "v1.csv").write_text(CSV)
    (folder / "v2.csv").write_text(CSV.replace("\n7,4,1\n", "\n7,0,1\n"))
    (folder / "d.csv").symlink_to("v1.csv")
    spec = folder / "spec.yaml"
    spec.write_text(yaml.safe_dump(spec_dict(), sort_keys=False))
    out = tmp_path / "out"
    run_spec(spec, out=out, figures=False)
    assert rerun.unchanged_run(spec, out=out, figures=False) is not None
    (folder / "d.csv").unlink()
    (folder / "d.csv").symlink_to("v2.csv")
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    assert run_spec(spec, out=out, figures=False).n_run == 16


def test_a_lower_memory_limit_or_an_unreadable_one_takes_the_full_path(done, monkeypatch):
    spec, out, _ = done
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "1TiB")
    assert (
        rerun.unchanged_run(spec, out=out, figures=False) is not None
    )  # higher: validation's checks pass again
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "1KiB")
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    monkeypatch.setenv("KNNX_MEMORY_LIMIT", "lots")
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    with pytest.raises(SpecError, match="KNNX_MEMORY_LIMIT: expected a size"):
        run_spec(spec, out=out, figures=False)


def test_odd_spec_files_and_folders_take_the_full_path(done, tmp_path):
    spec, out, _ = done
    assert rerun.unchanged_run(tmp_path, out=out, figures=False) is None  # a folder, not a spec file
    assert rerun.unchanged_run("/dev/null", out=out, figures=False) is None
    (out / "spec.yaml").unlink()
    (out / "spec.yaml").hardlink_to(spec)  # the run would overwrite its own spec
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    with pytest.raises(ResultsError, match="spec"):
        run_spec(spec, out=out, figures=False)


def test_python_path_and_re_exported_classes_have_no_fingerprint(tmp_path):
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "lib").mkdir()
    (folder / "reexport.py").write_text("from sklearn.neighbors import KNeighborsClassifier as Est\n")
    cases = {
        "python_path": spec_dict(datasets=["iris"], python_path=["lib"]),
        "reexport": spec_dict(
            datasets=["iris"], algorithms=[{"estimator": "reexport:Est", "params": {"n_neighbors": [1]}}]
        ),
    }
    for name, data in cases.items():
        spec = folder / f"{name}.yaml"
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
        run_spec(spec, out=tmp_path / name, figures=False)
        assert json.loads((tmp_path / name / rerun.STAMP).read_text())["inputs"] is None, name
        assert rerun.unchanged_run(spec, out=tmp_path / name, figures=False) is None, name


def test_a_spec_reached_through_a_link_reads_from_the_link_s_folder(tmp_path):
    """The same spec file through a link in another folder resolves its relative CSV
    path from that folder: another run, whatever the bytes say."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    (first / "d.csv").write_text(CSV)
    (second / "d.csv").write_text(CSV.replace("\n7,4,1\n", "\n7,0,1\n"))
    spec = first / "spec.yaml"
    spec.write_text(yaml.safe_dump(spec_dict(), sort_keys=False))
    (second / "spec.yaml").symlink_to(spec)
    out = tmp_path / "out"
    run_spec(spec, out=out, figures=False)
    assert rerun.unchanged_run(second / "spec.yaml", out=out, figures=False) is None
    assert run_spec(second / "spec.yaml", out=out, figures=False).n_run == 16


def test_another_pydantic_or_pyyaml_takes_the_full_path(done, monkeypatch):
    spec, out, _ = done
    real = rerun._versions
    for name in ("pydantic", "PyYAML"):
        monkeypatch.setattr(rerun, "_versions", lambda names, name=name: {**real(names), name: "0.0"})
        assert rerun.unchanged_run(spec, out=out, figures=False) is None
        monkeypatch.setattr(rerun, "_versions", real)
        assert rerun.unchanged_run(spec, out=out, figures=False) is not None


def test_override_objects_without_out_take_the_full_path(done, monkeypatch):
    """Parsed overrides (the Python API's Override objects) may rename the spec: without
    --out the default folder is not known from the text alone."""
    from knnx.spec.overrides import parse_override

    spec, _, _ = done
    monkeypatch.chdir(spec.parent)
    run_spec(spec, figures=False)
    assert rerun.unchanged_run(spec, figures=False) is not None
    assert rerun.unchanged_run(spec, overrides=[parse_override("seed=0")], figures=False) is None


@pytest.mark.parametrize("change", ["nothing", "a new seed"])
def test_knnx_run_asks_whether_there_is_anything_to_do_once(done, change, monkeypatch):
    """``knnx run`` asks :func:`unchanged_run` before its heavy imports, and the full path
    it takes when the answer is no does not ask again (it compared the stamp with the
    spec's files twice before)."""
    from typer.testing import CliRunner

    from knnx.cli import app

    spec, out, n = done
    if change == "a new seed":
        spec.write_text(yaml.safe_dump(spec_dict(seed=1), sort_keys=False))
    asked = []
    real = rerun._current_inputs
    monkeypatch.setattr(rerun, "_current_inputs", lambda *a: asked.append(a[1]) or real(*a))
    result = CliRunner().invoke(app, ["run", str(spec), "--out", str(out), "--quiet", "--no-figures"])
    assert result.exit_code == 0, result.output
    assert asked == [spec]
    summary = rerun.unchanged_run(spec, out=out, figures=False)
    assert summary is not None and (summary.n_cells, summary.n_run) == (n, 0)


def test_a_run_without_figures_draws_none_and_its_setting_is_in_the_stamp(done):
    """``figures=False`` (``--no-figures``, how ``done`` was made) leaves no PNG in the
    folder and the report says so; a rerun with the other setting is not a rerun with
    nothing to do: it makes the outputs again, the figures with them, every cell cached;
    going back to ``figures=False`` removes the PNGs drawn."""
    spec, out, n = done
    assert sorted(out.glob("*.png")) == []
    assert "None: the run was made without figures" in (out / "report.html").read_text(encoding="utf-8")
    assert rerun.unchanged_run(spec, out=out) is None
    summary = run_spec(spec, out=out)
    assert (summary.n_run, summary.n_skipped) == (0, n)
    drawn = sorted(p.name for p in out.glob("*.png"))
    assert "error.png" in drawn
    again = rerun.unchanged_run(spec, out=out)
    assert again is not None and again.n_run == 0
    (out / "error.png").unlink()  # a figure removed: the full path draws it again
    assert rerun.unchanged_run(spec, out=out) is None
    assert run_spec(spec, out=out).n_run == 0 and sorted(p.name for p in out.glob("*.png")) == drawn
    assert rerun.unchanged_run(spec, out=out, figures=False) is None
    summary = run_spec(spec, out=out, figures=False)
    assert summary.n_run == 0 and sorted(out.glob("*.png")) == []


@pytest.mark.parametrize("where", ["spec", "stamp"])
def test_a_fifo_is_refused_before_anything_reads_it(tmp_path, where):
    """``knnx run`` on a spec that is a FIFO waited forever (the no-op check read it
    before validation's kind check); a FIFO in the place of the output folder's stamp
    too. Now one line, exit 2, nothing written (a fork, whose timeout a wait would
    reach)."""
    from _harness import forked_knnx

    spec, out = tmp_path / "s.yaml", tmp_path / "out"
    if where == "spec":
        os.mkfifo(spec)
        line = f"error: {spec}: not a regular file; expected a spec file (YAML)\n"
    else:
        spec.write_text(yaml.safe_dump({**spec_dict(), "datasets": ["iris"]}, sort_keys=False))
        out.mkdir()
        os.mkfifo(out / rerun.STAMP)
        line = f"error: --out: {out / rerun.STAMP} is not a regular file; remove it or choose another --out\n"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    done = forked_knnx("run", spec, "--out", out, "--quiet", "--no-figures", timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_file_digest_and_read_regular_read_regular_files_only(tmp_path):
    """Oracle: hashlib on the bytes; a FIFO, a folder, a missing path and a link loop
    are "absent" without blocking."""
    import hashlib

    from knnx._paths import read_regular

    (tmp_path / "f").write_bytes(b"abc" * 1000)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert rerun.file_digest(tmp_path / "f") == hashlib.sha256(b"abc" * 1000).hexdigest()
    assert (
        read_regular(tmp_path / "f", limit=2999) is None
        and read_regular(tmp_path / "f", limit=3000) == b"abc" * 1000
    )
    for odd in ("fifo", "loop", "missing", "."):
        assert rerun.file_digest(tmp_path / odd) == "absent" and read_regular(tmp_path / odd) is None
