"""Tidy result files: one row per (cell, metric), written cell by cell.

Schema (fixed column order)::

    experiment, dataset, algorithm, params, protocol, repeat, fold, seed,
    metric, value, n_train, n_test, fit_seconds, predict_seconds, tune_seconds

Timings (wall seconds, ``time.perf_counter``, in the cell's process): ``fit_seconds``
is the whole fit, for a tuned cell (``tune:``) the inner search plus the refit;
``tune_seconds`` the inner search alone (0 untuned); ``predict_seconds`` the test
part's ``predict``. Compilation is in none of them (the warm-up, see
:mod:`knnx.experiment.runner`). A file older than ``tune_seconds`` reads NaN there.

``params`` and ``protocol`` are canonical JSON (sorted keys); every reader turns
``params`` into a :class:`knnx.params.Params` (one parser, one canonical text). ``seed``
is the spec's seed. A cell is identified by (dataset, algorithm, params, repeat, fold).
An active-learning run (``kind: active``) adds the column ``round`` after these: a
cell (one loop) has one row per (round, metric). Reading refuses, in one line naming
the file, line and column, what knnx never writes (:mod:`knnx.results_checks`): a
``params`` cell that is not a JSON object of parameters, a count below 0, an empty
name, a column named twice, and (:func:`read_results`) a cell's metric given twice.

Crash safety: each finished cell is appended with a single write. The runner
``fsync``-s the files in groups (:meth:`ResultsWriter.sync`) and only then records the
group's cells as done in its ledger (``cells.csv``; see :mod:`knnx.experiment.runner`).
On resume, a trailing partial line and the rows of any cell missing some of its
metrics or its ledger row are discarded (the file is rewritten atomically: a temporary
file then ``os.replace``), so an interrupted run loses at most the cells of its last
group (:data:`knnx.experiment.runner.COMMIT_SECONDS` of work) and the cell in flight.

Training curves (optional, ``record_curves`` in a spec) go to a second tidy file::

    experiment, dataset, algorithm, params, repeat, fold, iteration, series, value

one row per (cell, series, iteration), from an estimator's ``curve_`` dict (see
:func:`curve_rows`). The runner appends a cell's curve rows (one write)
*before* its results rows, and on resume :func:`recover_curves` keeps the curve rows
of the cells complete in the results file only; so curve rows exist exactly for the
cells whose results are complete, each once.

The package's modules: :mod:`~knnx.results.schema` (the columns), :mod:`~knnx.results.write`
(rows as CSV, the writer), :mod:`~knnx.results.read` (reading back, every check) and
:mod:`~knnx.results.resume` (resuming); the checks themselves are in
:mod:`knnx.results_checks`, the atomic writes and locks in :mod:`knnx.writing`.
"""

from knnx.params import Params, parse_params_text
from knnx.results.read import (
    json_kind,
    parse_results,
    read_curves,
    read_json,
    read_ledger,
    read_results,
    read_table,
    read_text,
    read_warnings,
)
from knnx.results.resume import recover, recover_curves
from knnx.results.schema import (
    CELL_COLUMNS,
    COLUMNS,
    CURVE_COLUMNS,
    FAILURE_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    LEDGER_COLUMNS,
    NAME_COLUMNS,
    OPTIONAL_COLUMNS,
    PARAM_PREFIX,
    REPEAT_KEY,
    ROUND,
    TIMINGS,
    WARNING_COLUMNS,
    CellId,
    last_round,
    param_names,
    param_text,
    results_columns,
    with_param_columns,
)
from knnx.results.write import ResultsWriter, curve_rows, prepare_output_folder, rows_to_csv, thin_indices
from knnx.results_checks import MAX_PARAM_NAMES
from knnx.writing import OUTPUT_FILES, atomic_write_text, output_lock, save_figure, write_error

__all__ = [
    "CELL_COLUMNS",
    "COLUMNS",
    "CURVE_COLUMNS",
    "FAILURE_COLUMNS",
    "FLOAT_COLUMNS",
    "INT_COLUMNS",
    "LEDGER_COLUMNS",
    "MAX_PARAM_NAMES",
    "NAME_COLUMNS",
    "OPTIONAL_COLUMNS",
    "OUTPUT_FILES",
    "PARAM_PREFIX",
    "Params",
    "REPEAT_KEY",
    "ROUND",
    "TIMINGS",
    "WARNING_COLUMNS",
    "CellId",
    "ResultsWriter",
    "atomic_write_text",
    "curve_rows",
    "json_kind",
    "last_round",
    "output_lock",
    "param_names",
    "param_text",
    "parse_params_text",
    "parse_results",
    "prepare_output_folder",
    "read_curves",
    "read_json",
    "read_ledger",
    "read_results",
    "read_table",
    "read_text",
    "read_warnings",
    "recover",
    "recover_curves",
    "results_columns",
    "rows_to_csv",
    "save_figure",
    "thin_indices",
    "with_param_columns",
    "write_error",
]
