"""KEEL Java reference harness for knnx's prototype-selection methods.

What it measures
----------------
For each KEEL standard dataset chosen (``--datasets``), each of KEEL's own 10-fold
partitions (as knnx bundles them: ``load_dataset("keel.NAME").partitions["10-fold"]``;
fold f, numbered 1-10 as KEEL's files ``NAME-10-f``, has as test part the rows whose
partition value is f - 1, and every other row, in knnx's row order, as training part) and each KEEL method
(``--methods``: CNN, ENN, RNN, IB3, DROP3, ICF, HMNEI, RMHC, SSMA, Multiedit, LVQ3),
the harness

1. writes the fold as KEEL ``.dat`` files (the header of KEEL's own partition file
   ``dist/data/NAME/NAME-10-1tra.dat`` in the KEEL mirror: same attribute types,
   declared ranges and categories; the rows are knnx's rows), under
   ``/tmp/keel-build/data``;
2. runs KEEL's own Java code for the method with KEEL's default parameters
   (``dist/algorithm/methods/*-C.xml``) and the fixed seed ``KEEL_SEED``;
3. reads KEEL's reduced training set and computes the retention (rows kept /
   training rows) and the test accuracy of 1-NN on the kept rows, in NumPy, with
   KEEL's distance: Euclidean on attributes min-max normalised with the declared
   ranges (nominal: value index / (values - 1); test values clipped into the
   declared range as KEEL does), ties to the lowest row index;
4. runs knnx's own method (``knnx_method``) on the
   same normalised training matrix, with KEEL's defaults, ``tie="lowest"`` (KEEL's
   vote goes to the lowest class) and ``random_state`` = the fold number for the
   seeded methods, and records the same numbers (LVQ3: knnx's ``LVQ`` prototypes,
   their count and 1-NN accuracy), plus, for the deterministic methods (ENN, DROP3,
   ICF, HMNEI), whether the kept row set is identical to KEEL's;
5. for ENN, checks that knnx keeps KEEL's rows on every fold without duplicated
   training rows and without a class that editing would empty (``enn_check``).

How KEEL's reduced set is read
------------------------------
The KEEL version in the mirror does not write the reduced set: its instance
selection methods write the classification of the training and test files by the
reduced set (``KNN.writeOutput``), computed with ``KNN.evaluate(example, conjS,
nClasses, classesS, k)``, where ``conjS`` is the reduced set, normalised. The
harness therefore builds KEEL from the mirror's sources with a one-line
instrumentation: at the top of ``KNN.evaluate`` (``Preprocess/Basic/KNN.java``) and
of ``PrototypeGenerationAlgorithm.evaluate`` (LVQ3) it inserts a call to its own
class ``keelharness.Hook.record(trainData, trainOutput)``; at exit, the Hook writes
the last set seen (the reduced set KEEL classified the test file with) to the file
named by the ``keelharness.out`` property. Nothing else in KEEL is changed. The
rows are KEEL's normalised values (written with Java's round-tripping
``Double.toString``), which the harness matches exactly against its own
normalisation of the training rows (same IEEE operations: (x - min) / (max - min)).
Duplicates: a KEEL row is mapped to the lowest training index with the same values
and class not mapped yet (duplicated rows are interchangeable; ``same_rows`` thus
compares the multiset of kept rows for rows with duplicates). Rows that do not
match exactly are mapped to the nearest unmapped row of the same class (counted in
the log; none are expected). LVQ3 generates prototypes, not a subset: its row
count and 1-NN accuracy on its prototypes are recorded, nothing is mapped.

Commands
--------
From the repository root, with the venv active and a JDK (javac, java >= 11)::

    python benchmarks/keel_reference/harness.py            # everything (README's run)
    python benchmarks/keel_reference/harness.py --datasets iris wine --methods ENN DROP3
    python benchmarks/keel_reference/harness.py --rebuild  # re-extract and recompile KEEL
    # knnx's side only, KEEL's rows of results.csv (and reduced sets in /tmp/keel-build/runs)
    # reused, the rows rerun merged into results.csv:
    python benchmarks/keel_reference/harness.py --implementations knnx --methods IB3 HMNEI RMHC LVQ3
    python benchmarks/keel_reference/harness.py --implementations knnx --methods SSMA

It (re)builds ``/tmp/keel-build`` when missing (``git archive`` of the mirror's src,
``javac``), writes ``benchmarks/keel_reference/results.csv`` (``--out``) and prints
the summary table of the README (``--summary-only`` prints it from an existing csv,
``--enn-check`` the ENN check too). A run rewrites the csv, unless ``--merge`` or
``--implementations knnx`` (which implies it): then only the rows rerun are replaced.
Not part of CI or of the test suite.
"""

import argparse
import csv
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MIRROR = Path("/work/.mirror/SCI2SUGR+KEEL/repo")
BUILD = Path("/tmp/keel-build")
KEEL_SEED = 12345678  # every seeded KEEL method, every fold

DATASETS = [
    "iris",
    "wine",
    "glass",
    "ecoli",
    "new-thyroid",
    "haberman",
    "bupa",
    "monk-2",
    "pima",
    "vehicle",
]  # KEEL standard sets with KEEL's 10-fold partitions in the mirror, no missing values
METHODS = ["CNN", "ENN", "RNN", "IB3", "DROP3", "ICF", "HMNEI", "RMHC", "SSMA", "Multiedit", "LVQ3"]

# KEEL's defaults (dist/algorithm/methods/NAME-C.xml), in the order each Main parses
# them after the file lines; "Seed" only where the XML has <seed>1</seed>.
D = "Distance Function = Euclidean"
S = f"Seed = {KEEL_SEED}"
PARAMS = {
    "CNN": [S, "Number of Neighbors = 1", D],
    "ENN": ["Number of Neighbors = 3", D],
    "RNN": ["Number of Neighbors = 1", D],
    "IB3": [S, "Confidence Level for Acceptance = 0.9", "Confidence Level for Dropping = 0.7", D],
    "DROP3": ["Number of Neighbors = 1", D],
    "ICF": ["Number of Neighbors = 1", D],
    "HMNEI": ["Epsilon = 0.1", D],
    "RMHC": [S, "Number of Neighbors = 1", "Size of S Respect to T = 10", "Number of Mutations = 10000", D],
    "SSMA": [
        S,
        "Population Size = 30",
        "Number of Evaluations = 10000",
        "Cross Probability per bit = 0.5",
        "Mutation Probability per bit = 0.001",
        "Number of Neighbours = 1",
        D,
    ],
    "Multiedit": [S, "Number of Neighbors = 1", "Number of Subblocks = 3", D],
    "LVQ3": [
        S,
        "number_of_iterations = 1000",
        "percentage_respect_training_size = 2",
        "alpha_0 = 0.1",
        "windowWidth = 0.2",
        "epsilon = 0.1",
    ],
}
MAIN = {m: f"keel.Algorithms.Instance_Selection.{m}.Main" for m in METHODS}
MAIN["LVQ3"] = "keel.Algorithms.Instance_Generation.LVQ.LVQ3Algorithm"
DETERMINISTIC = ("ENN", "DROP3", "ICF", "HMNEI")

HOOK_JAVA = """package keelharness;
public final class Hook {
  private static double[][] lastX; private static int[] lastY;
  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      String out = System.getProperty("keelharness.out");
      if (out == null || lastX == null) return;
      try (java.io.PrintWriter w = new java.io.PrintWriter(new java.io.BufferedWriter(new java.io.FileWriter(out)))) {
        for (int i = 0; i < lastX.length; i++) {
          StringBuilder b = new StringBuilder().append(lastY[i]);
          for (double v : lastX[i]) b.append(',').append(Double.toString(v));
          w.println(b);
        }
      } catch (java.io.IOException e) { e.printStackTrace(); }
    }));
  }
  public static synchronized void record(double[][] x, int[] y) { lastX = x; lastY = y; }
}
"""
SIGNATURE = "public static int evaluate (double example[], double trainData[][],int nClasses,int trainOutput[],int k) {"
HOOKED = (
    "src/keel/Algorithms/Preprocess/Basic/KNN.java",
    "src/keel/Algorithms/Instance_Generation/Basic/PrototypeGenerationAlgorithm.java",
)


def mirror_commit():
    return subprocess.run(
        ["git", "-C", str(MIRROR), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def build(rebuild=False):
    """Extract KEEL's sources from the mirror, add the Hook, compile the mains."""
    classes = BUILD / "classes"
    stamp = classes / "BUILT"
    if stamp.exists() and not rebuild:
        return classes
    src = BUILD / "src"
    subprocess.run(["rm", "-rf", str(src), str(classes), str(BUILD / "extra")], check=True)
    src.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(MIRROR), "archive", "HEAD", "src", "dist/data"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    for rel in HOOKED:
        path = src / rel
        text = path.read_text(encoding="ISO-8859-1")
        if text.count(SIGNATURE) != 1:
            raise SystemExit(f"{rel}: evaluate's signature not found once; cannot add the hook")
        text = text.replace(SIGNATURE, SIGNATURE + " keelharness.Hook.record(trainData, trainOutput);")
        path.write_text(text, encoding="ISO-8859-1")
    extra = BUILD / "extra"
    (extra / "keelharness").mkdir(parents=True)
    (extra / "keelharness" / "Hook.java").write_text(HOOK_JAVA)
    # javac needs the (class-less) package keel.Algorithms.Instance_Generation that LVQ imports
    stub = extra / "keel" / "Algorithms" / "Instance_Generation"
    stub.mkdir(parents=True)
    (stub / "PackageStub.java").write_text(
        "package keel.Algorithms.Instance_Generation;\nclass PackageStub {}\n"
    )
    files = [str(extra / "keelharness" / "Hook.java"), str(stub / "PackageStub.java")]
    for m in METHODS:
        files.append(str(src / "src" / (MAIN[m].replace(".", "/") + ".java")))
    classes.mkdir(parents=True)
    subprocess.run(
        [
            "javac",
            "-nowarn",
            "-encoding",
            "ISO-8859-1",
            "-sourcepath",
            f"{src / 'src'}:{extra}",
            "-d",
            str(classes),
            *files,
        ],
        check=True,
        capture_output=True,
    )
    stamp.write_text(mirror_commit() + "\n")
    return classes


# ---------------------------------------------------------------- KEEL data files
def keel_header(name):
    """KEEL's header lines of the dataset's first 10-fold training file and its parsed attributes."""
    path = f"dist/data/{name}/{name}-10-1tra.dat"  # KEEL's own partition file: the header KEEL runs with
    text = subprocess.run(
        ["git", "-C", str(MIRROR), "show", f"HEAD:{path}"], capture_output=True, check=True
    ).stdout.decode("ISO-8859-1")
    lines, attrs = [], []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.lower().startswith("@data"):
            break
        lines.append(s)
        if s.lower().startswith("@attribute"):
            body = s[len("@attribute") :].strip()
            if "{" in body:
                aname = body[: body.index("{")].strip()
                cats = [c.strip() for c in body[body.index("{") + 1 : body.index("}")].split(",")]
                attrs.append({"name": aname, "kind": "nominal", "categories": cats})
            else:
                aname, rest = body.split(None, 1)
                kind = rest.split("[")[0].split()[0].strip().lower()
                if "[" not in rest:
                    raise SystemExit(f"{name}: {aname} has no declared range in KEEL's header")
                lo, hi = (float(v) for v in rest[rest.index("[") + 1 : rest.index("]")].split(","))
                attrs.append({"name": aname, "kind": kind, "min": lo, "max": hi})
    return lines, attrs


def load(name):
    """knnx's rows of keel.NAME: inputs as KEEL text, normalised matrix, labels, folds."""
    from knnx.datasets import load_dataset

    ds = load_dataset({"name": f"keel.{name}", "categorical": "keep", "missing": "error"})
    header, attrs = keel_header(name)
    inputs, output = attrs[:-1], attrs[-1]
    if len(inputs) != ds.values.shape[1]:
        raise SystemExit(f"{name}: KEEL header has {len(inputs)} inputs, knnx {ds.values.shape[1]}")
    n = len(ds.y)
    text = [[None] * len(inputs) for _ in range(n)]
    Z = np.empty((n, len(inputs)))
    for j, (a, kattr) in enumerate(zip(inputs, ds.attributes, strict=True)):
        col = ds.values[:, j]
        if a["kind"] == "nominal":
            names = [kattr.categories[int(c)] for c in col]
            codes = np.array([a["categories"].index(v) for v in names], dtype=float)
            Z[:, j] = codes / (len(a["categories"]) - 1)
            for i in range(n):
                text[i][j] = names[i]
        else:
            lo, hi = a["min"], a["max"]
            if col.min() < lo or col.max() > hi:
                raise SystemExit(f"{name}: {a['name']} outside KEEL's declared range")
            with np.errstate(invalid="ignore", divide="ignore"):
                z = (col - lo) / (hi - lo)
            Z[:, j] = np.where(np.isnan(z), col, z)  # KEEL: a constant range leaves the raw value
            for i in range(n):
                text[i][j] = str(int(col[i])) if a["kind"] == "integer" else repr(float(col[i]))
    labels = np.asarray(ds.classes)[ds.y]
    cls = np.array([output["categories"].index(str(v)) for v in labels])  # KEEL's class index
    return {
        "header": header,
        "text": text,
        "labels": labels,
        "Z": Z,
        "cls": cls,
        "folds": ds.partitions["10-fold"],
    }


def write_dat(path, d, rows):
    with open(path, "w", encoding="ISO-8859-1") as fh:
        fh.write("\n".join(d["header"]) + "\n@data\n")
        for i in rows:
            fh.write(",".join(d["text"][i]) + "," + str(d["labels"][i]) + "\n")


# ---------------------------------------------------------------- running KEEL
def run_keel(classes, method, name, fold, timeout):
    work = BUILD / "runs" / name / f"fold{fold}" / method
    work.mkdir(parents=True, exist_ok=True)
    data = BUILD / "data" / name
    tra, tst = data / f"{name}-10-{fold}tra.dat", data / f"{name}-10-{fold}tst.dat"
    conf = work / "config.txt"
    conf.write_text(
        f"algorithm = {method}\n"
        f'inputData = "{tra}" "{tra}" "{tst}"\n'
        f'outputData = "{work / "result.tra"}" "{work / "result.tst"}"\n\n' + "\n".join(PARAMS[method]) + "\n"
    )
    out = work / "reduced.csv"
    if out.exists():
        out.unlink()
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            ["java", "-Xss16m", f"-Dkeelharness.out={out}", "-cp", str(classes), MAIN[method], str(conf)],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        (work / "stdout.txt").write_text(p.stdout + "\n--- stderr\n" + p.stderr)
        err = None if p.returncode == 0 else f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    except subprocess.TimeoutExpired:
        err = f"timeout after {timeout} s"
    secs = time.perf_counter() - t0
    if err is None and not out.exists():
        err = "no reduced set recorded: " + (work / "stdout.txt").read_text()[-300:]
    if err:
        return None, secs, err
    rows = np.loadtxt(out, delimiter=",", ndmin=2)
    return (rows[:, 1:], rows[:, 0].astype(int)), secs, None


def keel_own_accuracy(path):
    """Accuracy of KEEL's own test output (lines 'real predicted' after @data)."""
    try:
        lines = path.read_text(encoding="ISO-8859-1").split("@data", 1)[1].split("\n")
    except (OSError, IndexError):
        return None
    pairs = [ln.split() for ln in lines if ln.strip()]
    return float(np.mean([a == b for a, b in pairs])) if pairs else None


def keel_rule_accuracy(Xs, ys, Xte, yte):
    """KEEL's KNN.evaluate with k = 1: nearest row at distance > 0, first in store order."""
    d = keel_distances(Xte, Xs)
    d[d <= 0.0] = np.inf
    pred = ys[np.argmin(d, axis=1)]
    pred[np.isinf(d.min(axis=1))] = ys[0]  # nothing at distance > 0: KEEL votes for nearestN = 0
    return float(np.mean(pred == yte))


def map_rows(Xk, yk, Ztr, ctr):
    """Training indices of KEEL's kept rows (exact match, lowest unused index)."""
    index = {}
    for i in range(len(Ztr)):
        index.setdefault((ctr[i], Ztr[i].tobytes()), []).append(i)
    kept, inexact = [], 0
    used = np.zeros(len(Ztr), bool)
    for x, c in zip(Xk, yk, strict=True):
        free = [i for i in index.get((c, x.tobytes()), []) if not used[i]]
        if free:
            i = free[0]
        else:  # not expected: nearest unmapped row of the class
            inexact += 1
            cand = np.flatnonzero((ctr == c) & ~used)
            i = cand[np.argmin(((Ztr[cand] - x) ** 2).sum(1))]
        used[i] = True
        kept.append(i)
    return np.sort(np.array(kept, dtype=int)), inexact


def keel_distances(Xte, Xs):
    """Euclidean distances computed as KEEL's KNN.distance does (sum over attributes in
    order, then sqrt), so that ties fall exactly where they fall in KEEL."""
    d = np.zeros((len(Xte), len(Xs)))
    for j in range(Xte.shape[1]):
        d += (Xs[None, :, j] - Xte[:, None, j]) * (Xs[None, :, j] - Xte[:, None, j])
    return np.sqrt(d)


def nn1_accuracy(Xs, ys, Xte, yte):
    """1-NN accuracy, KEEL's Euclidean distance, ties to the lowest row index of Xs."""
    if len(Xs) == 0:
        return float("nan")
    d = keel_distances(Xte, Xs)
    return float(np.mean(ys[np.argmin(d, axis=1)] == yte))


# ---------------------------------------------------------------- knnx
def knnx_method(method, fold):
    """knnx's estimator for a KEEL method, with KEEL's defaults (NAME-C.xml), or None."""
    from knnx import reduction as r

    if method == "ENN":
        return r.ENN(k=3, tie="lowest")
    if method == "CNN":
        return r.CNN(k=1, random_state=fold)
    if method == "RNN":
        return r.RNN(random_state=fold)
    if method == "IB3":
        return r.IB3(accept_level=0.9, drop_level=0.7, random_state=fold)
    if method == "DROP3":
        return r.DROP3(k=1, tie="lowest")  # KEEL's DROP3-C.xml: k = 1
    if method == "ICF":
        return r.ICF(k=1, tie="lowest")  # KEEL's ICF-C.xml: k = 1
    if method == "HMNEI":
        return r.HMNEI(epsilon=0.1)
    if method == "RMHC":  # KEEL: 10 % of T, 10000 mutations, k = 1
        return r.RMHC(k=1, fraction=0.1, n_iter=10000, tie="lowest", random_state=fold)
    if method == "SSMA":  # KEEL: 30 chromosomes, 10000 evaluations, crossover 0.5 per bit, mutation 0.001,
        # k = 1 (SSMA-C.xml); fitness 50/50 and meme chance 0.0625 fixed in KEEL's SSMA.java
        return r.SSMA(
            population=30,
            max_evaluations=10000,
            alpha=0.5,
            p_mutation=0.001,
            p_meme=0.0625,
            random_state=fold,
        )
    if method == "Multiedit":
        return r.Multiedit(n_blocks=3, random_state=fold)
    if method == "LVQ3":  # KEEL: 2 % of T, 1000 presentations, alpha0 0.1, window 0.2, epsilon 0.1
        return r.LVQ(
            variant="lvq3", fraction=0.02, n_iter=1000, alpha0=0.1, window=0.2, epsilon=0.1, random_state=fold
        )
    return None


FIELDS = [
    "dataset",
    "fold",
    "method",
    "implementation",
    "n_train",
    "n_kept",
    "retention",
    "test_accuracy",
    "same_rows",
    "seconds",
]
IMPLEMENTATIONS = ("keel", "knnx")


def fold_parts(d, f):
    """Training indices, normalised training rows and classes, clipped test rows and classes of fold f."""
    te = np.flatnonzero(d["folds"] == f - 1)
    tr = np.flatnonzero(d["folds"] != f - 1)
    Zte = np.clip(d["Z"][te], 0.0, 1.0)  # KEEL clips test values into the declared range
    return tr, d["Z"][tr], d["cls"][tr], Zte, d["cls"][te]


def prepare(name, folds):
    """knnx's rows of the dataset, each fold written as KEEL .dat files."""
    d = load(name)
    (BUILD / "data" / name).mkdir(parents=True, exist_ok=True)
    for f in folds:
        te = np.flatnonzero(d["folds"] == f - 1)
        tr = np.flatnonzero(d["folds"] != f - 1)
        write_dat(BUILD / "data" / name / f"{name}-10-{f}tra.dat", d, tr)
        write_dat(BUILD / "data" / name / f"{name}-10-{f}tst.dat", d, te)
    return d


def row(name, f, m, impl, n_train, n_kept, acc, same, secs):
    return {
        "dataset": name,
        "fold": f,
        "method": m,
        "implementation": impl,
        "n_train": n_train,
        "n_kept": n_kept,
        "retention": n_kept / n_train,
        "test_accuracy": acc,
        "same_rows": same,
        "seconds": secs,
    }


def keel_result(name, f, m, res, secs, parts, log):
    """KEEL's row of the csv and its kept training indices (None for LVQ3), with the result.tst check."""
    tr, Ztr, ctr, Zte, cte = parts
    Xk, yk = res
    if m == "LVQ3":
        kept, acc, n_kept = None, nn1_accuracy(Xk, yk, Zte, cte), len(Xk)
    else:
        kept, inexact = map_rows(Xk, yk, Ztr, ctr)
        if inexact:
            print(f"  KEEL {m} {name} fold {f}: {inexact} rows matched inexactly", flush=True)
        acc, n_kept = nn1_accuracy(Ztr[kept], ctr[kept], Zte, cte), len(kept)
    own = keel_own_accuracy(BUILD / "runs" / name / f"fold{f}" / m / "result.tst")
    # KEEL's own test output (result.tst) comes from KNN.evaluate on the same reduced set, which
    # skips training rows at distance 0 from the test row; the check replays that rule.
    if m != "ENN" and own is not None:  # ENN's output votes with k = 3
        replay = keel_rule_accuracy(Xk, yk, Zte, cte)
        if abs(own - replay) > 1e-9:
            log["mismatches"].append((name, f, m, own, replay))
            print(
                f"  KEEL {m} {name} fold {f}: own test accuracy {own:.4f} != replayed {replay:.4f}",
                flush=True,
            )
        elif abs(own - acc) > 1e-9:
            log["zero_skips"].append((name, f, m))
    return row(name, f, m, "keel", len(tr), n_kept, acc, "", secs), kept


def recorded_keel_kept(name, f, m, parts):
    """KEEL's kept training indices from an earlier run's reduced.csv (knnx-only runs), or None."""
    path = BUILD / "runs" / name / f"fold{f}" / m / "reduced.csv"
    if m == "LVQ3" or not path.exists():
        return None
    rows = np.loadtxt(path, delimiter=",", ndmin=2)
    return map_rows(rows[:, 1:], rows[:, 0].astype(int), parts[1], parts[2])[0]


def knnx_result(name, f, m, parts, keel_kept):
    """knnx's row of the csv (None when knnx has no counterpart); same_rows for the deterministic methods."""
    tr, Ztr, ctr, Zte, cte = parts
    est = knnx_method(m, f)
    if est is None:
        return None
    t0 = time.perf_counter()
    if m == "LVQ3":  # prototypes, not rows: their count and 1-NN accuracy, as for KEEL's
        P, labels = est.fit_resample(Ztr, ctr)
        secs = time.perf_counter() - t0
        return row(name, f, m, "knnx", len(tr), len(P), nn1_accuracy(P, labels, Zte, cte), "", secs)
    est.fit(Ztr, ctr)
    secs = time.perf_counter() - t0
    kk = np.sort(np.asarray(est.sample_indices_, dtype=int))
    same = ""
    if m in DETERMINISTIC and keel_kept is not None:
        same = str(bool(len(kk) == len(keel_kept) and np.array_equal(kk, keel_kept)))
    return row(name, f, m, "knnx", len(tr), len(kk), nn1_accuracy(Ztr[kk], ctr[kk], Zte, cte), same, secs)


def run_dataset(name, args, classes, log):
    """The csv rows of one dataset: KEEL's runs (if asked), then knnx's on the same folds."""
    d = prepare(name, args.folds)
    jobs = [(m, f) for f in args.folds for m in args.methods]
    outs = [(None, 0.0, None)] * len(jobs)
    if "keel" in args.implementations:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outs = list(pool.map(lambda mf: run_keel(classes, mf[0], name, mf[1], args.timeout), jobs))
    results = []
    for (m, f), (res, secs, err) in zip(jobs, outs, strict=True):
        parts = fold_parts(d, f)
        if err:
            log["failures"].append((name, f, m, err))
            print(f"  KEEL {m} {name} fold {f}: FAILED {err}", flush=True)
            continue
        if res is not None:
            keel_row, kept = keel_result(name, f, m, res, secs, parts, log)
            results.append(keel_row)
        else:
            kept = recorded_keel_kept(name, f, m, parts) if m in DETERMINISTIC else None
        if "knnx" in args.implementations:
            knnx_row = knnx_result(name, f, m, parts, kept)
            if knnx_row is not None:
                results.append(knnx_row)
    return results


def write_results(path, results, merge):
    """Write the rows; with merge, the rows of the csv not rerun are kept (a rerun row replaces its key)."""
    key = ("dataset", "fold", "method", "implementation")
    new = {tuple(str(r[k]) for k in key): r for r in results}
    old = list(csv.DictReader(open(path))) if merge and path.exists() else []
    rows = [r for r in old if tuple(r[k] for k in key) not in new]
    for r in results:
        r = dict(r)
        for k in ("retention", "test_accuracy"):
            r[k] = f"{r[k]:.6f}"
        r["seconds"] = f"{r['seconds']:.3f}"
        rows.append(r)
    order = {m: i for i, m in enumerate(METHODS)}
    datasets = {n: i for i, n in enumerate(DATASETS)}
    rows.sort(
        key=lambda r: (
            datasets.get(r["dataset"], len(DATASETS)),
            r["dataset"],
            int(r["fold"]),
            order[r["method"]],
            IMPLEMENTATIONS.index(r["implementation"]),
        )
    )
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    return len(rows)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=DATASETS)
    ap.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    ap.add_argument("--folds", nargs="+", type=int, default=list(range(1, 11)))
    ap.add_argument(
        "--implementations",
        nargs="+",
        default=list(IMPLEMENTATIONS),
        choices=IMPLEMENTATIONS,
        help="knnx alone reuses KEEL's rows of --out (and its reduced sets under /tmp/keel-build/runs) "
        "and implies --merge",
    )
    ap.add_argument(
        "--merge", action="store_true", help="replace only the rows rerun in --out, keep the others"
    )
    ap.add_argument("--out", type=Path, default=HERE / "results.csv")
    ap.add_argument("--jobs", type=int, default=2, help="KEEL runs at once")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per KEEL run")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--enn-check", action="store_true", help="only the ENN check on --out's rows")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.summary_only or args.enn_check:
        if args.enn_check:
            enn_check(args.out)
        summary(args.out)
        return
    t_start = time.perf_counter()
    classes = None
    if "keel" in args.implementations:
        classes = build(args.rebuild)
        print(f"KEEL mirror commit {mirror_commit()}, classes in {classes}", flush=True)
    log = {"failures": [], "mismatches": [], "zero_skips": []}
    results = []
    for name in args.datasets:
        results += run_dataset(name, args, classes, log)
        print(f"{name}: done ({time.perf_counter() - t_start:.0f} s)", flush=True)
    merge = args.merge or "keel" not in args.implementations
    n = write_results(args.out, results, merge)
    print(f"wrote {args.out} ({len(results)} rows run, {n} in all) in {time.perf_counter() - t_start:.0f} s")
    for fail in log["failures"]:
        print("FAILED", *fail)
    if "keel" in args.implementations:
        print(
            f"check: KEEL's own test predictions (result.tst) = the replay of its rule on the recorded reduced "
            f"set in all but {len(log['mismatches'])} runs (ENN excluded: its output votes with k = 3); they "
            f"differ from plain 1-NN (the test_accuracy column) in {len(log['zero_skips'])} runs, because KEEL "
            "skips distance-0 rows"
        )
    if "ENN" in args.methods:
        enn_check(args.out)
    summary(args.out)


# ---------------------------------------------------------------- ENN check
def emptied_class(Ztr, ctr, k=3):
    """Whether Wilson's editing (k nearest other rows, ties to the lowest row index, vote ties to the
    lowest class) would remove every row of some class."""
    d = keel_distances(Ztr, Ztr)
    np.fill_diagonal(d, np.inf)
    nn = np.argsort(d, axis=1, kind="stable")[:, :k]
    n_classes = int(ctr.max()) + 1
    vote = np.array([np.argmax(np.bincount(ctr[i], minlength=n_classes)) for i in nn])
    return np.setdiff1d(ctr, ctr[vote == ctr]).size > 0


def enn_check(path):
    """ENN's two known causes of difference: KEEL skips distance-0 neighbours (so duplicated rows differ),
    knnx keeps a class editing would empty. On the folds with neither, knnx's kept rows must be KEEL's."""
    rows = [r for r in csv.DictReader(open(path)) if r["method"] == "ENN" and r["same_rows"]]
    names = {
        (False, False): "neither",
        (True, False): "duplicates only",
        (False, True): "an emptied class only",
    }
    counts = {}
    for name in dict.fromkeys(r["dataset"] for r in rows):
        d = load(name)
        for r in (r for r in rows if r["dataset"] == name):
            _, Ztr, ctr, _, _ = fold_parts(d, int(r["fold"]))
            dup = len(np.unique(Ztr, axis=0)) < len(Ztr)
            key = names.get((dup, emptied_class(Ztr, ctr)), "both")
            same, total = counts.get(key, (0, 0))
            counts[key] = (same + (r["same_rows"] == "True"), total + 1)
    for key in [*names.values(), "both"]:
        same, total = counts.get(key, (0, 0))
        print(f"ENN check: folds with {key}: identical rows in {same}/{total}")
    bad = counts.get("neither", (0, 0))
    print("ENN check: " + ("PASSED" if bad[0] == bad[1] else "FAILED") + " on the folds with neither cause")
    return counts


def summary(path):
    """Markdown table: per method, mean retention / accuracy (KEEL, knnx), differences, same rows."""
    rows = list(csv.DictReader(open(path)))
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    print(
        "| method | folds | KEEL retention | knnx retention | diff (pts) | KEEL acc | knnx acc | diff (pts) "
        "| identical rows |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for m in methods:
        k = [r for r in rows if r["method"] == m and r["implementation"] == "keel"]
        x = [r for r in rows if r["method"] == m and r["implementation"] == "knnx"]

        def mean(rs, c):
            return float(np.mean([float(r[c]) for r in rs])) * 100 if rs else float("nan")

        if x:  # KEEL's means over the folds knnx ran (all of them in a full run)
            ran = {(r["dataset"], r["fold"]) for r in x}
            k = [r for r in k if (r["dataset"], r["fold"]) in ran]
        kr, ka = mean(k, "retention"), mean(k, "test_accuracy")
        if x:
            xr, xa = mean(x, "retention"), mean(x, "test_accuracy")
            cells = [f"{xr:.2f}", f"{xr - kr:+.2f}", f"{ka:.2f}", f"{xa:.2f}", f"{xa - ka:+.2f}"]
            same = [r["same_rows"] for r in x if r["same_rows"]]
            ident = f"{sum(s == 'True' for s in same)}/{len(same)}" if same else "-"
        else:
            cells, ident = ["-", "-", f"{ka:.2f}", "-", "-"], "-"
        print(f"| {m} | {len(k)} | {kr:.2f} | " + " | ".join(cells) + f" | {ident} |")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent.parent))
    main()
