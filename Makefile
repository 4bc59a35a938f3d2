# Every target runs exactly what CI runs. Use inside a virtual environment (see README).
PYTHON ?= python3

.PHONY: install docs test test-all test-pandas lint format bench ripley lpo-timing lpo-select lpo-active lpo-active-paper unn-ripley unn-uci unn-uci-sensitivity unn-posteriors gnnb-small gnnb-large cpw-synthetic cpw-beta cpw-uci mixed-data publishable prototype-reduction metric-learning regress regress-update reproduce report clean docs-generated

install:  ## install knnx with the test, benchmark, Dask, statistics and documentation extras, then compile its kernels into numba's cache
	$(PYTHON) -m pip install -e '.[dev,bench,dask,stats,docs]'
	$(PYTHON) -m knnx.experiment.precompile --jobs 2

test:  ## the fast test suite (what CI runs), on every core (pytest-xdist)
	$(PYTHON) -m pytest -m "not slow" -n auto --dist loadgroup

test-all:  ## every test, including the slow ones
	$(PYTHON) -m pytest -n auto --dist loadgroup

# pandas releases besides the newest that knnx is tested with: each is installed into
# .cache/pandas-VERSION (beside the environment, not into it) and shadows the installed
# pandas for the tests marked pandas_io (those that write result and data files and read
# them back).
PANDAS_COMPAT ?= 2.2.3 3.0.6

test-pandas:  ## the pandas_io tests under each pandas of PANDAS_COMPAT (what CI runs after make test)
	for v in $(PANDAS_COMPAT); do \
	  $(PYTHON) -m pip install --quiet --no-deps --target .cache/pandas-$$v "pandas==$$v" pytz || exit 1; \
	  KNNX_EXPECT_PANDAS=$$v PYTHONPATH=.cache/pandas-$$v $(PYTHON) -m pytest -m "pandas_io and not processes and not slow" -n auto --dist loadgroup -q -p no:cacheprovider || exit 1; \
	done

lint:
	$(PYTHON) -m ruff check knnx tests benchmarks experiments docs/hooks
	$(PYTHON) -m ruff format --check knnx tests benchmarks experiments docs/hooks

docs:  ## the documentation site in site/ (mkdocs build --strict: any warning fails)
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict

format:
	$(PYTHON) -m ruff format knnx tests benchmarks experiments docs/hooks
	$(PYTHON) -m ruff check --fix knnx tests benchmarks experiments docs/hooks

bench:  ## time knnx against scikit-learn and faiss (medians and ratios); compile.py: numba's compile seconds per kernel family on an empty cache; weighted.py --lists: CW/PW/CPW with certified lists vs the full search (200 epochs, about 13 minutes), --scaling: their fit at n = 5k-20k; tune.py: nested tuning of k vs GridSearchCV; tune_cost.py: a tuned cell's recorded seconds vs GridSearchCV.fit; scale.py: kNN graph and GNNB at n up to 1e5, d = 512; runner.py: the runner's cost per cell on 2,000 cells vs cross_val_score; wide.py: a 20-row CSV of up to 100,000 columns validated and run vs pandas.read_csv; pipelines.py: a tuned NCA -> kNN with shared step fits vs GridSearchCV over the pipeline; prototypes.py: the prototype selections vs imbalanced-learn; metric_learning.py: LMNN, ITML, LFDA vs metric-learn
	$(PYTHON) benchmarks/compile.py --families
	$(PYTHON) benchmarks/neighbors.py
	$(PYTHON) benchmarks/metrics.py
	$(PYTHON) benchmarks/lpo.py
	$(PYTHON) benchmarks/lpo_weighted.py
	$(PYTHON) benchmarks/unn.py
	$(PYTHON) benchmarks/gnnb.py
	$(PYTHON) benchmarks/weighted.py --table3 --scaling
	$(PYTHON) benchmarks/weighted.py --lists --epochs 200
	$(PYTHON) benchmarks/tune.py
	$(PYTHON) benchmarks/tune_cost.py --csv results/bench/tune_cost.csv
	$(PYTHON) benchmarks/scale.py --csv results/bench/scale.csv
	$(PYTHON) benchmarks/suites.py --csv results/bench/suites.csv
	$(PYTHON) benchmarks/wide.py
	$(PYTHON) benchmarks/runner.py
	$(PYTHON) benchmarks/pipelines.py
	$(PYTHON) benchmarks/prototypes.py
	$(PYTHON) benchmarks/metric_learning.py --raw

ripley:  ## the main job
	knnx run experiments/ripley.yaml

# Celisse & Mary-Huard (2011). Each target takes minutes here; the paper's counts are a
# variable away (ACTIVE_REPEATS=100). Results and side-by-side tables land in results/.
ACTIVE_REPEATS ?= 10

lpo-timing:  ## Fig. 1 (plurality, n up to 5000) and Table 1 (weighted) timings beside the paper's seconds
	$(PYTHON) experiments/lpo_timing.py --out results/lpo-timing
	$(PYTHON) benchmarks/lpo_weighted.py --csv results/lpo-timing/table1.csv

lpo-select:  ## Sec. 3: k chosen by LpO against p and n (Table 2, Fig. 2), with the test-set optimum
	knnx reproduce lpo-select --jobs 2

lpo-active:  ## Sec. 4.3: LpO query-by-committee against passive LpO kNN (simulated q = 0..0.4, spambase)
	knnx reproduce lpo-active --var ACTIVE_REPEATS=$(ACTIVE_REPEATS)

lpo-active-paper:  ## Sec. 4.3 at the paper's 100 repeats (the committed comparison's run)
	$(MAKE) lpo-active ACTIVE_REPEATS=100

# Piro et al. (2012) and D'Ambrosio et al. (2012): UNN. Side-by-side tables land in results/unn-*.
unn-ripley:  ## Sec. 4.1, Fig. 2: UNN against kNN on a random theta-sample, the text's statements as cells (knnx/papers/targets/unn-ripley.yaml)
	knnx reproduce unn-ripley

unn-uci:  ## Table 2: UNN (theta by inner CV), ITML+kNN, kNN; five runs of 2-fold CV on UCI data (knnx/papers/targets/unn-uci.yaml)
	knnx reproduce unn-uci --jobs 2

unn-uci-sensitivity: unn-uci  ## UNN's gap to Table 2: UNN over scaling x loss x smoothing x theta x k in the same 5x2 CV, summarised per dataset
	knnx run experiments/unn_uci_sensitivity.yaml --out results/unn-uci-sensitivity --jobs 2
	$(PYTHON) experiments/unn_uci_sensitivity.py --out results/unn-uci-sensitivity/study.csv --readings-out results/unn-uci-sensitivity/readings.csv

# UNN_SEEDS: the simulations per sigma (ten = the paper's count).
UNN_SEEDS ?= [0,1,2,3,4,5,6,7,8,9]

unn-posteriors:  ## Sec. 5.3 of D'Ambrosio et al.: UNN(exp/log/Mat) posteriors vs linear SVM + Platt (Table 3)
	knnx reproduce unn-posteriors --jobs 2 --var UNN_SEEDS=$(UNN_SEEDS)

# Nock et al. (2014): GNNB. Side-by-side tables land in results/gnnb-*.
gnnb-small:  ## Sec. 6.3-6.5: GNNB vs NN, UNN, SVM, SGD, AdaBoost on 8 small domains (Fig. 3-5, time ratios; knnx/papers/targets/gnnb-small.yaml)
	knnx reproduce gnnb-small --jobs 2

gnnb-large:  ## Table 3 / Sec. 6.4, 6.6 on a synthetic blobs stand-in for Caltech/SUN (about 1 minute)
	$(PYTHON) experiments/gnnb_large.py results/gnnb-large

# Paredes & Vidal (2006): learned weighted metrics. CPW_RUNS runs per training size
# (100 = the paper's count, about 1.5 minutes).
CPW_RUNS ?= 100
CPW_SEEDS = [$(shell seq -s, 0 $$(($(CPW_RUNS) - 1)))]

cpw-synthetic:  ## Sec. 5.1, Fig. 2: 1-NN error of L2, CW, PW, CPW against training size (8..256 per class), the text's statements as cells
	knnx reproduce cpw-synthetic --jobs 2 --var "CPW_SEEDS=$(CPW_SEEDS)"

# Random 5-CV partitions for Tables 2 and 3 (the paper: 100; without an epoch cap Table 2 takes about 3.5 minutes per partition here).
CPW_BETA_REPEATS ?= 10
CPW_UCI_REPEATS ?= 5

cpw-beta:  ## Table 2: CW error against beta on 12 small UCI sets, 5-CV x CPW_BETA_REPEATS (35 minutes with 10)
	knnx reproduce cpw-beta --jobs 2 --var CPW_BETA_REPEATS=$(CPW_BETA_REPEATS)

cpw-uci:  ## Table 3: L2, CDM, CW, PW, CPW (beta 8), 5-CV x CPW_UCI_REPEATS + dna/letter/satimage standard splits (about 14 minutes)
	knnx reproduce cpw-uci --jobs 2 --var CPW_UCI_REPEATS=$(CPW_UCI_REPEATS)

mixed-data:  ## kNN under HVDM (codes) beside kNN, NCA > kNN, a random forest, an RBF SVC and a class of one's own (one-hot), one run on 19 KEEL sets (about 3.5 minutes)
	knnx run experiments/mixed_data.yaml --out results/mixed-data
	knnx compare results/mixed-data/results.csv --metric error

prototype-reduction:  ## every prototype selection and generation then 1-NN, beside 1-NN, random samples, UNN and GNNB, on 20 KEEL sets: error against retention (about 6 minutes)
	knnx run experiments/prototype_reduction.yaml --out results/prototype-reduction
	knnx compare results/prototype-reduction/results.csv --metric error --out results/prototype-reduction/compare-error
	knnx compare results/prototype-reduction/results.csv --metric retained --out results/prototype-reduction/compare-retained
	knnx compare results/prototype-reduction/results.csv --metric error --retention 0,0.2 --out results/prototype-reduction/compare-error-low

publishable:  ## 8 contestants on 20 datasets (KEEL partitions, a loader and a class of one's own) and the comparison's LaTeX in a one- and a two-column article (docs/publishing.md; needs pdflatex and pdftoppm; about 5 minutes)
	knnx run experiments/publishable.yaml --out results/publishable
	knnx compare results/publishable/results.csv --control knn --names short --no-std --format latex --layout table*,resize,footnotesize
	python experiments/publishable_pages.py results/publishable docs/images

metric-learning:  ## kNN under the Euclidean distance and after NCA, LMNN, ITML, LFDA, beside CW/PW/CPW, k tuned, on 14 numeric KEEL sets with their partitions (docs/metric-learning.md)
	knnx run experiments/metric_learning.yaml --out results/metric-learning
	knnx compare results/metric-learning/results.csv --metric error --out results/metric-learning/compare-error

regress:  ## regression gate: fast subsets of every paper target against results/reference/ (about 1 minute)
	knnx gate

regress-update:  ## regenerate the gate's references (only after an intended change; say why in the commit)
	knnx gate --update

# All paper targets with the variables above.
REPRODUCE_VARS = --var ACTIVE_REPEATS=$(ACTIVE_REPEATS) --var UNN_SEEDS=$(UNN_SEEDS) --var "CPW_SEEDS=$(CPW_SEEDS)" \
  --var CPW_BETA_REPEATS=$(CPW_BETA_REPEATS) --var CPW_UCI_REPEATS=$(CPW_UCI_REPEATS)

reproduce:  ## every paper target in turn (knnx/papers/targets), timed, then results/comparison.csv and results/REPORT.md
	knnx reproduce --jobs 2 $(REPRODUCE_VARS)

report:  ## results/comparison.csv and results/REPORT.md from existing results, running nothing
	knnx reproduce --assemble-only $(REPRODUCE_VARS)

clean:
	rm -rf results/ripley results/lpo-* results/unn-* results/gnnb-* results/cpw-* results/mixed-data results/publishable results/prototype-reduction results/regress results/REPORT.md results/comparison.csv results/reproduce-times.json .pytest_cache .ruff_cache

docs-generated:  ## rewrite the generated blocks of docs/**/*.md in place (CLI reference, spec schema, dataset, target and paper tables); tests/test_docs.py fails while one is stale
	$(PYTHON) docs/hooks/generate.py --write
