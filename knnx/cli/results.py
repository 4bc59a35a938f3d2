"""Commands on a run's results: ``knnx table``, ``compare``, ``report``, ``check`` and ``plot``."""

import sys
from pathlib import Path

import typer

from knnx._text import name_problem, quoted, shown
from knnx.cli.core import (
    CompareFormat,
    SignificanceTest,
    TableFormat,
    console,
    dataset_dependent_notes,
    dataset_dependent_sentences,
    err_console,
    note_last_round,
    print_notes,
    reported,
    require_file,
)
from knnx.errors import KnnxError, ResultsError, WriteError
from knnx.writing import quiet_arithmetic


def table_cmd(
    results: Path = typer.Argument(..., help="A results.csv file."),
    by: str = typer.Option(
        "dataset,configuration",
        "--by",
        help="Comma-separated grouping columns, each once; a parameter by name (k or param_k); configuration = "
        "the algorithm and the parameters that vary (seeds pooled). Not value nor a timing: --metric names those.",
    ),
    metric: str = typer.Option(
        "error",
        "--metric",
        help="Metric to tabulate, or a timing: fit_seconds, predict_seconds, tune_seconds.",
    ),
    fmt: TableFormat = typer.Option(TableFormat.md, "--format", help="md, csv or latex."),
):
    """Mean ± std of a metric (or a timing) per group over repeats and folds; the best per dataset is marked."""
    from knnx.reporting.summaries import read_results, results_table
    from knnx.results import last_round

    with reported(), quiet_arithmetic():
        require_file(results, "RESULTS")
        frame = read_results(results)
        note_last_round(last_round(frame)[1])
        columns = [c.strip() for c in by.split(",") if c.strip()]
        text = results_table(frame, by=columns, metric=metric, fmt=fmt.value)
        notes = dataset_dependent_notes(frame) if "configuration" in columns else []
    sys.stdout.write(text)
    print_notes(notes)


_COMPARE_SELECT_OPTION = typer.Option(
    None,
    "--select",
    help="all: every configuration a contestant; best-test: each algorithm's best configuration per dataset "
    "on the test folds (optimistic). Needed when an algorithm has several configurations. At most "
    "6,000,000 paired tests (every pair of contestants on every dataset: 2,000 contestants on 3 datasets).",
)
_COMPARE_RETENTION_OPTION = typer.Option(
    None,
    "--retention",
    help="LOW,HIGH: compare only the configurations whose mean retention (the share of training rows their "
    "classifier is fitted on; 1 for one that reduces nothing) lies in [LOW, HIGH], e.g. 0,0.3; the others "
    "are left out by name.",
)
_COMPARE_OUT_OPTION = typer.Option(
    None,
    "--out",
    help="Folder for the table, cd.png/cd.svg (up to 300 contestants; above, the tables alone, and a note "
    "says so), ranks.csv, control.csv, ...",
)
_COMPARE_METRIC_OPTION = typer.Option(
    "error",
    "--metric",
    help="The metric compared; also retained (the share of the training rows a contestant fits on: a "
    "selection's, UNN's or a sample's prototype fraction, 1 for one that reduces nothing; lower is better).",
)
# knnx compare's options for the page (LaTeX's layout, the columns and names printed)
_LAYOUT_OPTION = typer.Option(
    "table",
    "--layout",
    help="LaTeX: table (one column), table* (both columns of a two-column paper) or landscape "
    "(sidewaystable), with resize (scaled to the line width) and a font size (small, footnotesize, "
    "scriptsize, tiny), comma-separated: table*,resize.",
)
_COLUMNS_OPTION = typer.Option(
    None,
    "--columns",
    help="The columns printed, in order, comma-separated: n, d, classes, columns (encoded columns) and "
    "contestants; ranks and tests stay over every contestant.",
)
_TRANSPOSE_OPTION = typer.Option(
    False, "--transpose", help="Contestants as rows, datasets as columns (LaTeX; for many contestants)."
)
_DIGITS_OPTION = typer.Option(
    None, "--digits", min=0, max=12, help="Decimals of the means (3 in LaTeX, else 4)."
)
_STD_OPTION = typer.Option(
    True,
    "--std/--no-std",
    help="--no-std: the means alone, the standard deviations in a second table (LaTeX).",
)
_MARKS_OPTION = typer.Option(
    None,
    "--marks/--no-marks",
    help="Mark significant differences (default: for a score, not for a time, whose noise is the machine's).",
)
_NAMES_OPTION = typer.Option(
    "full",
    "--names",
    help="full; short (suite prefixes left out: keel.iris -> iris); or a YAML file mapping dataset ids "
    "and contestants to the names printed.",
)


def compare(
    results: Path = typer.Argument(..., help="A results.csv file."),
    metric: str = _COMPARE_METRIC_OPTION,
    select: str = _COMPARE_SELECT_OPTION,
    alpha: float = typer.Option(
        0.05,
        "--alpha",
        help="Level of the tests, the critical difference and the significance counts (significance.csv).",
    ),
    control: str = typer.Option(
        None,
        "--control",
        help="A contestant (its label, or an algorithm id naming one) to test every other against: Holm and "
        "Bonferroni-Dunn after Friedman, the Bayesian signed-rank test; the table's marks then compare with it.",
    ),
    test: SignificanceTest = typer.Option(
        SignificanceTest.corrected_t,
        "--test",
        help="The per-dataset test behind the table's marks: corrected-t (Nadeau-Bengio), t, or 5x2cv-f "
        "(5 repeats of 2 folds).",
    ),
    rope: float = typer.Option(
        0.01, "--rope", help="Half-width of the Bayesian signed-rank test's region of practical equivalence."
    ),
    retention: str = _COMPARE_RETENTION_OPTION,
    out: Path = _COMPARE_OUT_OPTION,
    fmt: CompareFormat = typer.Option(CompareFormat.md, "--format", help="md, csv, latex or html."),
    layout: str = _LAYOUT_OPTION,
    columns: str = _COLUMNS_OPTION,
    transpose: bool = _TRANSPOSE_OPTION,
    digits: int = _DIGITS_OPTION,
    std: bool = _STD_OPTION,
    names: str = _NAMES_OPTION,
    marks: bool = _MARKS_OPTION,
):
    """Compare configurations across datasets: the table a paper prints (mean ± std, best in bold, ▼ ▲ marks), ranks,
    Friedman, Nemenyi CD, Wilcoxon-Holm, tests against a control."""
    from knnx.reporting.characteristics import read_datasets
    from knnx.reporting.comparison import comparison_table, figures_lines, left_out_lines, write_comparison
    from knnx.results import last_round, prepare_output_folder, read_results
    from knnx.stats.compare import compare as run_compare

    with reported(), quiet_arithmetic():
        require_file(results, "RESULTS")
        frame, last = last_round(read_results(results))
        note_last_round(last)
        notes = dataset_dependent_notes(frame) if fmt is CompareFormat.csv else []  # the others print them
        shape = _layout(layout, columns, transpose, digits, std, names)
        band = None if retention is None else _band(retention)
        result = run_compare(frame, metric, select, alpha, control=control, rope=rope, retention=band)
        notes += _unused_names(shape.names, result, names)
        characteristics = read_datasets(Path(results).with_name("datasets.csv"), frame)
        sentences = dataset_dependent_sentences(frame)
        text = comparison_table(
            result, fmt.value, characteristics, test.value, layout=shape, notes=sentences, marks=marks
        )
        if out is not None:
            write_comparison(
                result,
                prepare_output_folder(out),
                fmt.value,
                characteristics=characteristics,
                test=test.value,
                layout=shape,
                notes=sentences,
                marks=marks,
            )
    if fmt is not CompareFormat.md:  # Markdown names them in its text; the others keep stdout a file
        for line in [*left_out_lines(result), *(figures_lines(result) if out is not None else [])]:
            err_console.print(line, markup=False)
    sys.stdout.write(text)
    print_notes(notes)


def _layout(layout, columns, transpose, digits, std, names):
    """The :class:`knnx.reporting.latex.Layout` of ``knnx compare``'s options."""
    from knnx.reporting.latex import Layout, parse_layout

    float_, resize, size = parse_layout(layout)
    shown = None if columns is None else tuple(c.strip() for c in columns.split(",") if c.strip())
    return Layout(
        float=float_,
        resize=resize,
        size=size,
        columns=shown,
        transpose=transpose,
        std=std,
        digits=digits,
        names=names if names in ("full", "short") else _names_file(names),
    )


def _unused_names(mapping, result, path):
    """The note on the names of a ``--names`` file that name no dataset or contestant of
    the comparison (a misspelt 'irsi' left 'iris' as it was, without a word); a file
    shared by several comparisons may hold others, so a note, not a refusal."""
    if not isinstance(mapping, dict):
        return []
    known = {*map(str, result.means.index), *map(str, result.means.columns)}
    if result.left_out is not None and len(result.left_out):
        known |= set(map(str, result.left_out["contestant"]))
    unused = [k for k in mapping if k not in known]
    if not unused:
        return []
    shown_names = ", ".join(f"'{shown(k)}'" for k in unused[:5]) + (
        f" and {len(unused) - 5} more" if len(unused) > 5 else ""
    )
    return [
        f"--names: {path}: {shown_names} name no dataset or contestant of this comparison; printed as they are"
    ]


def _names_file(path):
    """{id or contestant: printed name} of a YAML file (``--names``)."""
    import yaml

    from knnx.spec.read import load_yaml, yaml_problem

    path = Path(path)
    if not path.is_file():
        raise ResultsError(f"--names: expected full, short or a YAML file of names; no file {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"--names: {path} is not readable UTF-8 text ({type(exc).__name__})") from None
    try:  # the spec's YAML reader: a key given twice or a control character refused, with its line
        mapping = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ResultsError(f"--names: {path}: {yaml_problem(exc, text)}") from None
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
    ):
        raise ResultsError(f"--names: {path}: expected a mapping of names to printed names")
    for key, value in mapping.items():
        problem = name_problem(value)  # printed as a dataset id or a contestant is, by the same rule
        if problem is not None:
            raise ResultsError(
                f"--names: {path}: the name given to {quoted(key)}, {quoted(value)}, {problem}"
            )
    return mapping


def report(
    out: Path = typer.Argument(..., help="The folder of a run (holding results.csv)."),
    alpha: float = typer.Option(
        None,
        "--alpha",
        help="Level of the tests and the critical difference (default: the spec's report:, 0.05).",
    ),
    select: str = typer.Option(
        None,
        "--select",
        help="all: every configuration a contestant; best-test: each algorithm's best configuration per dataset "
        "on the test folds (optimistic). Default: the spec's report:, all.",
    ),
    control: str = typer.Option(
        None,
        "--control",
        help="A contestant (its label or algorithm id) to test every other against (default: the spec's report:).",
    ),
    metric: str = typer.Option(
        None,
        "--metric",
        help="The metric the page leads with (default: the spec's report:, the run's first).",
    ),
):
    """Write OUT/report.html: one self-contained page, led by the comparison table and the CD diagram."""
    from knnx.reporting.html import report_options, write_report
    from knnx.writing import output_lock

    with reported(), quiet_arithmetic():
        if not out.is_dir():
            raise ResultsError(f"OUT: {out} is not a folder; give the folder of a run (holding results.csv)")
        if alpha is not None and not 0 < alpha < 1:
            raise ResultsError(f"--alpha: expected a level in (0, 1), got {alpha}")
        options = report_options(out, alpha=alpha, select=select, control=control, metric=metric)
        try:
            with output_lock(
                out, option="OUT"
            ):  # not while a run writes the folder (its own page comes last)
                path = write_report(out, options=options)
        except WriteError as exc:  # not a run: a folder the page cannot go to is a bad argument
            raise ResultsError(f"OUT: {exc}") from None
    console.print(f"wrote {path}")


def _parse_atol_for(items):
    """{algorithm: tolerance} from ``--atol-for ALGORITHM=TOL`` options, each TOL by the rule
    of every tolerance (:func:`knnx.limits.check_tolerance`); one-line errors."""
    from knnx.limits import check_tolerance

    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not (sep and name.strip()):
                raise ValueError(item)
            tol = check_tolerance(float(value), "atol_for")
        except (ValueError, KnnxError):
            raise KnnxError(
                f"expected ALGORITHM=TOL with a finite TOL >= 0, got '{item}'", param="atol_for"
            ) from None
        name = name.strip()
        if name in out:
            raise KnnxError(
                f"'{name}' given twice ({out[name]:g} and {tol:g}); give each algorithm one tolerance",
                param="atol_for",
            )
        out[name] = tol
    return out


def _band(text):
    """``--retention``'s LOW,HIGH as a pair of floats; a one-line error otherwise (the
    bounds themselves are checked by :func:`knnx.stats.compare.compare`)."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError(text)
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise KnnxError(f"expected LOW,HIGH (two numbers), got '{text}'", param="retention") from None


def _tolerances_text(atol, per_algorithm):
    """``0.01``, or ``0.01 (knn: 0, cw: 0.002)`` with ``--atol-for``'s tolerances."""
    if not per_algorithm:
        return f"{atol:g}"
    return f"{atol:g} (" + ", ".join(f"{name}: {tol:g}" for name, tol in per_algorithm.items()) + ")"


def check(
    results: Path = typer.Argument(..., help="A results.csv file."),
    reference: Path = typer.Option(..., "--reference", help="Committed reference results."),
    atol: float = typer.Option(
        0.01, "--atol", help="Largest allowed |mean - reference mean| (a finite number >= 0)."
    ),
    atol_for: list[str] = typer.Option(
        None, "--atol-for", help="ALGORITHM=TOL: another tolerance for one algorithm's groups (repeatable)."
    ),
):
    """Compare per-group means with reference results; exit 1 listing every group that moved."""
    from knnx.limits import check_tolerance
    from knnx.reporting.summaries import check_against_reference, new_groups

    with reported():
        atol = check_tolerance(atol, "atol")
        per_algorithm = _parse_atol_for(atol_for or [])
        require_file(results, "RESULTS")
        require_file(reference, "--reference")
        problems = check_against_reference(
            results, reference, atol=atol, atol_for=per_algorithm, known_algorithms=True
        )
        fresh = new_groups(results, reference)
    for line in fresh:
        console.print(f"new (not in the reference, not checked): {line}", markup=False)
    if problems:
        for line in problems:
            console.print(f"moved: {line}", markup=False)
        console.print(f"{len(problems)} group(s) outside tolerance {_tolerances_text(atol, per_algorithm)}")
        raise typer.Exit(1)
    console.print(f"all groups of {reference} within {_tolerances_text(atol, per_algorithm)}")


def plot(
    results: Path = typer.Argument(..., help="A results.csv file."),
    metric: str = typer.Option(
        "error",
        "--metric",
        help="Metric on the vertical axis, or a timing: fit_seconds, predict_seconds, tune_seconds.",
    ),
    x: str = typer.Option(
        None,
        "--x",
        help="Parameter on the horizontal axis, numeric or not, or 'configuration' for every configuration "
        "side by side (default: the first numeric parameter that varies, else the first that varies, else "
        "the configurations).",
    ),
    datasets: str = typer.Option(
        None, "--datasets", help="Comma-separated dataset names, each once: only their panels, in this order."
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="Image file (default: METRIC-X.png, or METRIC.png for the configurations, beside RESULTS); more than "
        "12 panels are written as pages OUT-1.png, OUT-2.png, ...",
    ),
):
    """Plot a metric (mean ± std over repeats and folds) against a parameter, one panel per dataset (and
    algorithm), 12 panels a page."""
    from knnx.reporting.figures import default_x, drawn_as_counts, figure_name, select_datasets, write_plot
    from knnx.reporting.summaries import timing_rows
    from knnx.results import TIMINGS, last_round, read_results

    # The default file is named as the run names its own figures (knnx.reporting.figures.figure_name:
    # anything but letters, digits and "_." replaced, so that a metric "a/b" names no folder).
    with reported(), quiet_arithmetic():
        require_file(results, "RESULTS")
        frame, last = last_round(read_results(results))
        note_last_round(last)
        if metric in TIMINGS and metric not in set(frame["metric"]):  # a timing, as knnx table takes it
            frame = timing_rows(frame, metric)
        names = [d.strip() for d in datasets.split(",") if d.strip()] if datasets else None
        notes = []
        if x is None and not drawn_as_counts(select_datasets(frame, names), metric):
            x = default_x(select_datasets(frame, names), metric) or "configuration"
        name = figure_name(metric, None if x in (None, "configuration") else x)
        target = out if out is not None else Path(results).with_name(name)
        try:
            written = write_plot(frame, target, metric=metric, x=x, datasets=names, notes=notes)
        except WriteError as exc:  # not a run: a place the figure cannot go is a bad argument
            raise ResultsError(f"--out: {exc}") from None
    for path in written:
        console.print(f"wrote {path}")
    print_notes(notes)
