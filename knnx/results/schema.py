"""The result files' columns and what a row holds (see :mod:`knnx.results`): the
results, curves, ledger, failures and warnings columns, a cell's identity
(:class:`CellId`), the ``param_<name>`` columns derived from ``params``, and the numeric
columns read exactly."""

from typing import NamedTuple

from knnx.params import Params, value_text

COLUMNS = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "protocol",
    "repeat",
    "fold",
    "seed",
    "metric",
    "value",
    "n_train",
    "n_test",
    "fit_seconds",
    "predict_seconds",
    "tune_seconds",
]
# Timing columns, one value per cell (repeated on each of its rows): ``knnx table
# --metric`` tabulates them as it does metrics.
TIMINGS = ("fit_seconds", "predict_seconds", "tune_seconds")
# Columns a file of an older knnx may lack: read as NaN (not recorded); a row built
# without them is written with their default.
OPTIONAL_COLUMNS = {"tune_seconds": 0.0}
CELL_COLUMNS = ["dataset", "algorithm", "params", "repeat", "fold"]


class CellId(NamedTuple):
    """A cell's identity, the columns CELL_COLUMNS of every per-cell file: results rows,
    the ledger, failures and warnings. A plain tuple of the same values is equal to it
    (and hashes the same), so sets and dicts keyed by either agree."""

    dataset: str
    algorithm: str
    params: str  # the setting as canonical JSON (see knnx.spec.canonical_json)
    repeat: int
    fold: int

    @classmethod
    def of(cls, record):
        """The cell of a row: a namedtuple from ``DataFrame.itertuples`` or any object
        with the CELL_COLUMNS as attributes."""
        return cls(record.dataset, record.algorithm, record.params, int(record.repeat), int(record.fold))

    @classmethod
    def of_frame(cls, frame):
        """The cell of each row of a frame with the CELL_COLUMNS, in row order."""
        return [cls.of(r) for r in frame[CELL_COLUMNS].itertuples(index=False)]


# The cell ledger (OUT/cells.csv): one row per finished cell, appended after its results
# rows; ``cell_key`` is the content hash of what produced them (see knnx.experiment.provenance.cell_keys).
LEDGER_COLUMNS = ["cell_key", *CELL_COLUMNS]
# Failed cells of the last run (OUT/failures.csv): never cached, retried by the next run.
FAILURE_COLUMNS = [*CELL_COLUMNS, "cell_key", "error"]
# Warnings raised while a cell ran (OUT/warnings.csv): one row per (cell, category,
# message), with how many times it was raised; kept with the cell's results.
WARNING_COLUMNS = [*CELL_COLUMNS, "category", "message", "count"]
CURVE_COLUMNS = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "repeat",
    "fold",
    "iteration",
    "series",
    "value",
]


# After COLUMNS, a results file has one column per parameter name of its cells,
# ``param_<name>`` (sorted by name): the value as written in ``params`` (strings bare,
# other values as JSON), empty where a cell's algorithm lacks that parameter. They are
# derived from ``params``: read_results recomputes them (a file without them, written
# by an older knnx, reads the same).
PARAM_PREFIX = "param_"


# A parameter value as its ``param_<name>`` cell shows it: strings bare, the rest JSON.
param_text = value_text


def _params_of(text, cache):
    if text not in cache:
        value, problem = Params.parse(text)
        cache[text] = Params() if problem is not None else value  # hand-edited: no parameter columns
    return cache[text]


def param_names(params_texts):
    """Sorted parameter names of the ``params`` JSON strings given."""
    cache, names = {}, set()
    for text in set(params_texts):
        names |= _params_of(text, cache).keys()
    return sorted(names)


# An active-learning run (``kind: active``, see knnx.spec.ActiveSpec) gives one row per
# (cell, round, metric): its results files have the column ``round`` after COLUMNS (0 =
# the start set), and its cells are identified by CELL_COLUMNS as any other.
ROUND = "round"


def last_round(frame):
    """``(rows, round)``: an active run's rows of its last round (the largest ``round``),
    which knnx run's summary, report, ``knnx table``, ``knnx compare`` and ``knnx plot``
    use to compare strategies; any other results frame as it is, round None."""
    if ROUND not in frame.columns or not len(frame):
        return frame, None
    last = int(frame[ROUND].max())
    return frame[frame[ROUND] == last], last


def results_columns(names, rounds=False):
    """The columns of a results file whose cells have parameters ``names`` (and, with
    ``rounds``, one row per round: the column ``round``)."""
    return COLUMNS + ([ROUND] if rounds else []) + [PARAM_PREFIX + n for n in names]


def with_param_columns(rows, names):
    """``rows`` (dicts with ``params``) with their ``param_<name>`` cells added."""
    cache = {}
    out = []
    for row in rows:
        params = _params_of(row["params"], cache)
        cols = {PARAM_PREFIX + n: params.value_text(n) for n in names}
        out.append({**row, **cols})
    return out


# Numeric columns of the result files. Every column is read as text first; these are
# then parsed with Python's int() and float(), which read back exactly what
# ``rows_to_csv`` wrote (the shortest repr of each float) whatever the pandas version:
# pandas' own C parser rounds some 17-digit decimals to a neighbouring float before
# pandas 3.1 (float_precision="high"), and that option is deprecated from 3.1 on.
INT_COLUMNS = frozenset({"repeat", "fold", "seed", "n_train", "n_test", "iteration", "count", "round"})
FLOAT_COLUMNS = frozenset({"value", "fit_seconds", "predict_seconds", "tune_seconds"})


# A results file's checks beyond its numbers (see knnx.results_checks): counts >= 0,
# names not empty, params a JSON object of parameters; read_results also
# refuses a row that repeats another's REPEAT_KEY (recover, the runner's repair of its
# own file, keeps the last instead). The key is the runner's (the cell, CELL_COLUMNS; an
# active run's round; the metric) with what a run holds constant and a reader can group
# by (experiment, protocol, seed: another seed draws other splits), so a file pooling runs
# holds their cells side by side; params compare as the settings they parse to (every
# reader labels configurations so), so a copy with its JSON reformatted repeats too.
NAME_COLUMNS = ("experiment", "dataset", "algorithm", "metric")

# The values each of knnx's metrics takes (NaN aside: not defined): a results file
# holding another (an error of 4e305) was not written by knnx, and its means and
# standard deviations would overflow. Reported quantities are the estimators' own.
VALUE_RANGES = {
    **dict.fromkeys(
        ("error", "accuracy", "f1_macro", "recall_macro", "precision_macro", "balanced_accuracy", "g_mean"),
        (0.0, 1.0),
    ),
    **dict.fromkeys(("auc", "f_measure_auc", "rejection_auc"), (0.0, 1.0)),
    "mcc": (-1.0, 1.0),
    "brier": (0.0, 2.0),
    "log_loss": (0.0, float("inf")),
    "sym_kl": (0.0, float("inf")),
    "js": (0.0, 0.6931471805599453),  # ln 2
}
# Rounding a metric's last bits may carry it this far past its bounds (an MCC of 1 + 2e-16).
RANGE_SLACK = 1e-9
REPEAT_KEY = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "protocol",
    "seed",
    "repeat",
    "fold",
    ROUND,
    "metric",
]
