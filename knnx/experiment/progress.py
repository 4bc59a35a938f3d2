"""A run's progress: labels of cells, and the estimated time left (ETA)."""

import inspect
import time
from collections import Counter

from knnx.spec import canonical_json


def eta_seconds(finished, remaining, workers=1):
    """Estimated seconds until the cells ``remaining`` are done; None before a cell finished.

    ``finished``: ``(dataset, algorithm, seconds)`` of the cells this run finished,
    ``seconds`` being the cell's wall time in its process, warm-up excluded;
    ``remaining``: ``(dataset, algorithm)`` of the cells not finished (running or
    queued). Each remaining cell is expected to take the mean time of the finished cells
    of its dataset and algorithm; if there are none, of its algorithm; if none, of all
    finished cells. The sum is shared by the workers that can share it:
    min(workers, number of remaining cells)."""
    finished = list(finished)
    if not finished:
        return None
    remaining = list(remaining)
    groups = {}
    for dataset, algorithm, seconds in finished:
        for key in ((dataset, algorithm), algorithm, None):
            groups.setdefault(key, []).append(seconds)
    means = {key: sum(times) / len(times) for key, times in groups.items()}
    total = sum(
        means.get((dataset, algorithm), means.get(algorithm, means[None])) for dataset, algorithm in remaining
    )
    return total / max(1, min(workers, len(remaining)))


def _takes_eta(progress):
    """Whether a progress callback accepts the ``eta_seconds`` keyword (see :func:`run_spec`)."""
    try:
        parameters = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "eta_seconds" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class Progress:
    """A run's ``progress`` callback (or None: silent), with the ETA of :func:`eta_seconds`
    passed as ``eta_seconds`` to a callback that takes it: the estimate made when the last
    cell finished, less the seconds since.

    The estimate is kept by running sums per (dataset, algorithm), per algorithm and over
    all cells, and remaining counts per (dataset, algorithm): each finished cell costs
    O(number of (dataset, algorithm) pairs), not O(cells), so a run of 10^5 small cells
    spends no time on its own ETA. It equals :func:`eta_seconds` of the same cells up to
    the order of floating-point sums."""

    def __init__(self, progress, todo, workers):
        self.progress, self.workers = progress, workers
        self.takes_eta = progress is not None and _takes_eta(progress)
        self.remaining = Counter((c.dataset, c.algorithm) for c in todo)
        self.sums = {}  # key -> [seconds summed, cells]; keys (dataset, algorithm), algorithm, None
        self.estimate = None  # (seconds, time.perf_counter() when estimated)

    def cell_done(self, cell, seconds):
        """A cell left the run: finished in ``seconds``, or failed (None: no time)."""
        pair = (cell.dataset, cell.algorithm)
        self.remaining[pair] -= 1
        if self.remaining[pair] <= 0:
            del self.remaining[pair]
        if seconds is not None:
            for key in (pair, cell.algorithm, None):
                entry = self.sums.setdefault(key, [0.0, 0])
                entry[0] += seconds
                entry[1] += 1
        eta = self._eta()
        self.estimate = None if eta is None else (eta, time.perf_counter())

    def _eta(self):
        if None not in self.sums:
            return None
        means = {key: total / count for key, (total, count) in self.sums.items()}
        left = sum(self.remaining.values())
        total = sum(
            count * means.get(pair, means.get(pair[1], means[None])) for pair, count in self.remaining.items()
        )
        return total / max(1, min(self.workers, left))

    def __call__(self, done, total, text):
        if self.progress is None:
            return
        if not self.takes_eta:
            self.progress(done, total, text)
            return
        eta = None
        if self.estimate is not None:
            eta = max(0.0, self.estimate[0] - (time.perf_counter() - self.estimate[1]))
        self.progress(done, total, text, eta_seconds=eta)


def progress_labels(cells):
    """Per cell index, the short label the progress shows: the algorithm id and the
    parameters that vary among that algorithm's cells, written as the summary tables
    write configurations (seeds too: a cell has one), never every default."""
    values = {}
    for c in cells:
        for name, value in c.params.items():
            values.setdefault((c.algorithm, name), set()).add(canonical_json(value))
    labels = {}
    for c in cells:
        shown = [
            f"{name}={value if isinstance(value, str) else canonical_json(value)}"
            for name, value in c.params.items()
            if len(values[(c.algorithm, name)]) > 1
        ]
        labels[c.index] = f"{c.algorithm} {', '.join(shown)}".strip()
    return labels
