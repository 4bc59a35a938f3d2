"""Size limits: what knnx refuses before allocating it or starting on it.

A request whose memory estimate exceeds :func:`memory_limit`, or whose work exceeds a
stated count, is refused with one :class:`knnx.errors.DataError` line naming the size
and the limit, before anything is allocated; the spec validator, ``knnx validate`` and
every loader or estimator that allocates by a user's number use these functions.

Memory: :func:`memory_limit` is the environment variable ``KNNX_MEMORY_LIMIT``
(bytes, or a number with a unit: ``512M``, ``8G``, ``1.5GiB``), else 80 % of the
machine's physical memory or of a smaller cap the system sets the process
(``ulimit -v``, a control group's ``memory.max``). Estimates count the arrays knnx allocates (float64 data,
float32 working copies, neighbour graphs of 16 bytes per neighbour) with their
largest transient copies; they are deliberate upper bounds to within a small factor,
not measurements.

Nesting: a spec (a YAML file, a ``--set`` value at its place, a Python dict) and the
JSON knnx reads back (a results file's ``params``) nest at most :data:`MAX_DEPTH`
levels, checked without recursion (:func:`too_deep`, :func:`json_too_deep`) before any
recursive code (a YAML composer, ``json.loads``, ``copy.deepcopy``, pydantic) sees the
value, so that no depth ends in a RecursionError; the refusal reads
:func:`depth_problem` ("nested more than 32 levels deep").

Tolerances: every tolerance (``knnx gate --atol``, ``knnx check --atol`` and
``--atol-for``, :func:`knnx.papers.gate.gate`) follows :func:`check_tolerance`: a
finite number >= 0.
"""

import math
import numbers
import os
import re
from fractions import Fraction

from knnx.errors import DataError, KnnxError

MAX_ITERATIONS = 1_000_000
"""Iterations per class of UNN and GNNB (``n_iter``, or ``theta`` times the training
size; the papers use at most 10 m). Measured on 60 rows of iris, 3 classes: UNN with
n_iter = 10^6 takes 2.5 s and 330 MB (training curves keep values per iteration and
class); 10^7 took 25 s and 1 GB."""

MAX_ROUNDS = 100_000
"""Boosting rounds of the AdaBoost baseline (one decision tree each)."""

MAX_EPOCHS = 100_000
"""Epochs of WeightedMetricNN (each one costs O(n^2 d))."""

MAX_SEARCH = 100_000
"""Steps of the prototype searches: RMHC's mutations (``n_iter``; KEEL's default 10^4)
and SSMA's evaluations (``max_evaluations``; the paper's 10^4). The limits of the
steps below were measured as one cell of ``knnx run`` on iris, 3 folds (100 training
rows, 4 features, 3 classes; ``fit_seconds``, scale then the step): at this limit RMHC
takes 1.0 s and SSMA 4.0-4.6 s (10^6: 16 s and 70 s; 10^9 would take hours); RMHC's
10^4 mutations take 11.7 s on 10,000 rows in 20 dimensions (docs/reduction.md)."""

MAX_POPULATION = 1000
"""Chromosomes of SSMA's population (the paper's 30), each drawn as n floats and
evaluated at the start: a cell at 1000 takes 0.4 s (see :data:`MAX_SEARCH`)."""

MAX_UPDATES = 1_000_000
"""Updates of LVQ (``n_iter``; by default 50 times the codebook), whose presentation
order holds 8 bytes an update: a cell at 10^6 takes 0.1 s (8 MB)."""

MAX_PATIENCE = 1000
"""Rounds in a row without a removal that stop Multiedit (``patience``, the paper's I;
default 2): each round splits the rows left and searches every block's nearest rows in
the next. A cell at 1000 takes 0.4 s (some 1100 rounds)."""

MAX_LEARNER_ITERATIONS = 10_000
"""Iterations of the metric learners: LMNN's gradient steps (``max_iter``, default 1000;
its ``min_iter`` only delays the stop on ``tol``), ITML's passes over its constraints
(``max_iter``, default 1000) and NCA's L-BFGS iterations (``max_iter``, default 50).
A cell at this limit with ``tol`` = 0 takes 7.0-7.3 s with LMNN (``min_iter`` 10^4:
every step made), 0.2 s with ITML (its 360 constraints; a pass costs O(m d^2)) and
0.05 s with NCA (L-BFGS stopped before 60 iterations)."""

MAX_CONSTRAINTS = 100_000
"""ITML's similar pairs, and as many dissimilar ones (``n_constraints``; its default 20
C^2 for C classes is held to it too): a cell at 10^5 takes 3.5 s with the default
``max_iter`` and ``tol``."""

MAX_RANDOMIZED = 1000
"""scikit-learn's randomized PCA (the ``pca`` step, ``svd_solver: randomized``): power
iterations (``iterated_power``; its "auto" is 7 or 4) and oversamples
(``n_oversamples``, default 10), each at most this: a cell at both limits takes
0.03 s (a fit of 10^5 power iterations 1.9 s; 10^9 oversamples fail, 30 GiB)."""

MAX_GRID = 1000
"""Candidate values or inner folds of an estimator's internal search (``unn_cv``'s
``n_thetas`` and ``cv``, ``svm_rbf``'s ``cv``)."""

C_RANGE = (1e-12, 1e12)
"""The linear SVM baselines' C: on 60 rows of iris liblinear had not returned after 20 s
at C = 1e-200 or 1e100, nor after minutes at 1e300; at 1e-15 and 1e15 it returns at once."""

MAX_CLASSES = 10_000
"""Classes of a synthetic generator (``n_classes``, or the number of ``means``); each
class is drawn in its own step. The benchmark literature goes to 256 (Caltech)."""

MAX_SEED = 2**32 - 1
"""Largest estimator ``seed`` (scikit-learn's ``random_state`` range)."""

MAX_RUNS = 1_000_000
"""Runs of an active-learning spec (datasets x strategies x repeats), as MAX_CELLS for
run specs."""

MAX_DEPTH = 32
"""Levels of nesting of a spec and of the JSON knnx reads back: the top-level value is
level 1, and a value inside a list or a mapping (a key too) is one level deeper than
it; ``{"a": [1]}`` has 3. A spec as knnx writes it needs 9 at most (algorithms[i].params
holds 5); Python's recursion limit (1000 frames) is far above, and so is the nesting at
which PyYAML's composer or ``json.loads`` would exhaust it."""

WORKER_BYTES = 256 * 2**20
"""Memory of one worker process before it loads data (measured: 224 MB resident after
importing knnx's algorithms, scikit-learn and numba): ``--jobs N`` plans N of them."""

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
    "ki": 2**10,
    "mi": 2**20,
    "gi": 2**30,
    "ti": 2**40,
}


def parse_bytes(text):
    """``"512M"``, ``"8G"``, ``"1.5GiB"``, ``"1000000"`` -> bytes (int); ValueError otherwise."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([kmgt]i?)?b?\s*", str(text).lower())
    if not match:
        raise ValueError(f"expected a size such as 512M, 8G or 1.5GiB, got {text!r}")
    return int(Fraction(match.group(1)) * _UNITS[match.group(2) or ""])  # exact, any size


def physical_memory():
    """Bytes of physical memory (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _process_cap():
    """The smallest memory cap the system sets this process, in bytes, or None: the
    address-space limit (``ulimit -v``, RLIMIT_AS) and the control group's limit
    (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``)."""
    caps = []
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft not in (resource.RLIM_INFINITY, -1):
            caps.append(soft)
    except (ImportError, OSError, ValueError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # "max", or v1's "no limit" near 2^63
            caps.append(int(text))
    return min(caps) if caps else None


def memory_limit():
    """Bytes one knnx process may plan to allocate (see the module docstring)."""
    text = os.environ.get("KNNX_MEMORY_LIMIT")
    if text:
        try:
            return parse_bytes(text)
        except ValueError as exc:
            raise DataError(f"KNNX_MEMORY_LIMIT: {exc}") from None
    available = [b for b in (physical_memory(), _process_cap()) if b]
    return int(0.8 * min(available)) if available else 2**40


def format_bytes(n):
    """``1.5 GiB``-style text."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def memory_problem(nbytes, what):
    """A line if ``nbytes`` (an estimate) exceeds :func:`memory_limit`, else None; ``what``
    names the request, e.g. ``"synthetic blobs: n = 300000000 rows x 2 features"``."""
    limit = memory_limit()
    if nbytes <= limit:
        return None
    if os.environ.get("KNNX_MEMORY_LIMIT"):
        source = "KNNX_MEMORY_LIMIT"
    elif (_process_cap() or 2**62) < (physical_memory() or 2**62):
        source = "80 % of this process's memory cap; KNNX_MEMORY_LIMIT sets another"
    else:
        source = "80 % of this machine's memory; KNNX_MEMORY_LIMIT sets another"
    return f"{what} needs about {format_bytes(nbytes)}, more than the memory limit of {format_bytes(limit)} ({source})"


def check_memory(nbytes, what):
    """DataError (the line of :func:`memory_problem`) if ``nbytes`` exceeds the limit."""
    problem = memory_problem(nbytes, what)
    if problem is not None:
        raise DataError(problem)


def graph_bytes(n_queries, k, n_ref, n_features):
    """Memory of an exact neighbour graph: the outputs (16 bytes a neighbour) and the
    float32 working copies of references and queries."""
    return 16 * n_queries * k + 4 * (n_ref + n_queries) * n_features


def lpo_bytes(n_samples, n_features, p, k_max):
    """Memory of exact leave-p-out risks for k = 1..k_max: the leave-one-out graph of
    k_max + p - 1 neighbours and the log-binomial table of (k_max + p) x p entries."""
    width = k_max + p - 1
    return graph_bytes(n_samples, width, n_samples, n_features) + 8 * (width + 1) * p


def depth_problem():
    """The one wording of a refused nesting depth (each reader adds the file and place)."""
    return f"nested more than {MAX_DEPTH} levels deep"


def too_deep(value, levels=0):
    """The path (keys and list indices) of a value of ``value`` that lies deeper than
    :data:`MAX_DEPTH` levels, ``value`` itself at level ``levels + 1`` (``levels``: the
    levels above it, e.g. the path of a ``--set`` override); the first in order, or
    None if there is none.

    Dicts, lists and tuples are walked without recursion and the walk stops at the
    first value found too deep, so a structure of any depth, or one that holds itself,
    costs at most its values down to that level (a container met again from a level
    no deeper than before is not walked again)."""
    if not isinstance(value, _NESTED):
        return () if levels + 1 > MAX_DEPTH else None
    stack = [(value, levels + 1, None)]  # (container, its level, (parent's link, key))
    seen = {}  # id -> the deepest level a container was walked from
    while stack:
        item, level, link = stack.pop()
        if level > MAX_DEPTH:
            return _path(link)
        if seen.get(id(item), 0) >= level:
            continue  # walked from as deep already: nothing new below
        seen[id(item)] = level
        children = list(item.items() if isinstance(item, dict) else enumerate(item))
        if children and level + 1 > MAX_DEPTH:  # every child is too deep: the first
            return _path((link, children[0][0]))
        # reversed: the first child is walked first, so the path found is the first in order
        stack.extend(
            (child, level + 1, (link, key)) for key, child in reversed(children) if isinstance(child, _NESTED)
        )
    return None


_NESTED = (dict, list, tuple)


def _path(link):
    """The keys of a chain of ``(parent's link, key)`` links, from the top."""
    keys = []
    while link is not None:
        link, key = link
        keys.append(key)
    return tuple(reversed(keys))


# A JSON text's tokens: a string (brackets inside it are text), a bracket, or another
# value (a number, true, false, null; separators are skipped).
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]|[^\s,:\[\]{}"]+')


def json_too_deep(text):
    """Whether the JSON ``text`` nests deeper than :data:`MAX_DEPTH` levels (counted as
    :data:`MAX_DEPTH` says), found by scanning its tokens, without parsing: before
    ``json.loads``, whose recursion a deep text exhausts. A text that is not JSON is
    measured by its brackets all the same."""
    if text.count("[") + text.count("{") < MAX_DEPTH:
        return False  # each level below the last is a bracket
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
        elif depth + 1 > MAX_DEPTH:  # a value inside the deepest container
            return True
    return False


def check_tolerance(value, param):
    """``value`` as a float if it is a finite number >= 0, the one rule of every
    tolerance (``--atol``, ``--atol-for``'s TOL); else a KnnxError about ``param``
    (``atol``: the CLI names it ``--atol``)."""
    if (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    ):
        return float(value) + 0.0  # -0.0 is 0
    raise KnnxError(f"expected a finite number >= 0, got {value!r}", param=param)
