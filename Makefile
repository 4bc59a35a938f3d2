# Every target runs exactly what CI runs. Use inside a virtual environment (see README).
PYTHON ?= python3

.PHONY: install docs test test-all test-pandas lint format bench ripley lpo-timing lpo-select lpo-active unn-ripley unn-uci unn-posteriors gnnb-small gnnb-large cpw-synthetic cpw-beta cpw-uci regress regress-update reproduce report clean

install:  ## install knnx with the test, benchmark, ITML (Table 2 baseline), Dask, statistics and documentation extras
	$(PYTHON) -m pip install -e '.[dev,bench,itml,dask,stats,docs]'

test:  ## the fast test suite (what CI runs)
	$(PYTHON) -m pytest -m "not slow"

test-all:  ## every test, including the slow ones
	$(PYTHON) -m pytest

# pandas releases besides the newest that knnx is tested with: each is installed into
# .cache/pandas-VERSION (beside the environment, not into it) and shadows the installed
# pandas for the tests that write result and data files and read them back.
PANDAS_COMPAT ?= 2.2.3 3.0.6
COMPAT_TESTS = tests/test_reliability.py tests/test_runner.py tests/test_active.py tests/test_lpo.py \
  tests/test_trust.py tests/test_regress.py tests/test_hostile_data.py tests/test_datasets.py

test-pandas:  ## the file round-trip tests under each pandas of PANDAS_COMPAT (what CI runs after make test)
	for v in $(PANDAS_COMPAT); do \
	  $(PYTHON) -m pip install --quiet --no-deps --target .cache/pandas-$$v "pandas==$$v" pytz || exit 1; \
	  KNNX_EXPECT_PANDAS=$$v PYTHONPATH=.cache/pandas-$$v $(PYTHON) -m pytest -m "not slow" -q -p no:cacheprovider $(COMPAT_TESTS) || exit 1; \
	done

lint:
	$(PYTHON) -m ruff check knnx tests benchmarks experiments docs/hooks
	$(PYTHON) -m ruff format --check knnx tests benchmarks experiments docs/hooks

docs:  ## the documentation site in site/ (mkdocs build --strict: any warning fails)
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict

format:
	$(PYTHON) -m ruff format knnx tests benchmarks experiments docs/hooks
	$(PYTHON) -m ruff check --fix knnx tests benchmarks experiments docs/hooks

bench:  ## time knnx against scikit-learn and faiss (medians and ratios); weighted.py --scaling: WeightedMetricNN's fit at n = 5k-20k; tune.py: nested tuning of k vs GridSearchCV; scale.py: kNN graph and GNNB at n up to 1e5, d = 512
	$(PYTHON) benchmarks/neighbors.py
	$(PYTHON) benchmarks/lpo.py
	$(PYTHON) benchmarks/lpo_weighted.py
	$(PYTHON) benchmarks/unn.py
	$(PYTHON) benchmarks/gnnb.py
	$(PYTHON) benchmarks/weighted.py --table3 --scaling
	$(PYTHON) benchmarks/tune.py
	$(PYTHON) benchmarks/scale.py --csv results/bench/scale.csv

ripley:  ## the main job
	knnx run experiments/ripley.yaml

# Celisse & Mary-Huard (2011). Each target takes minutes here; the paper's counts are a
# variable away (ACTIVE_REPEATS=100). Results and side-by-side tables land in results/.
ACTIVE_REPEATS ?= 10

lpo-timing:  ## Fig. 1 (plurality, n up to 5000) and Table 1 (weighted) timings beside the paper's seconds
	$(PYTHON) experiments/lpo_timing.py --out results/lpo-timing
	$(PYTHON) benchmarks/lpo_weighted.py --csv results/lpo-timing/table1.csv

lpo-select:  ## Sec. 3: k chosen by LpO against p and n (Table 2, Fig. 2), with the test-set optimum
	knnx run experiments/lpo_select_p.yaml --jobs 2 --quiet --no-resume
	knnx run experiments/lpo_select_n.yaml --jobs 2 --quiet --no-resume
	$(PYTHON) experiments/lpo_report.py select results/lpo-select-p results/lpo-select-n results/lpo-select

lpo-active:  ## Sec. 4.3: LpO query-by-committee against passive LpO kNN (simulated q = 0..0.4, spambase)
	knnx active experiments/lpo_active_sim.yaml --repeats $(ACTIVE_REPEATS) --out results/lpo-active-sim-r$(ACTIVE_REPEATS) --quiet --no-resume
	knnx active experiments/lpo_active_spam.yaml --repeats $(ACTIVE_REPEATS) --out results/lpo-active-spam-r$(ACTIVE_REPEATS) --quiet --no-resume
	$(PYTHON) experiments/lpo_report.py active results/lpo-active-sim-r$(ACTIVE_REPEATS) results/lpo-active-sim-r$(ACTIVE_REPEATS)
	$(PYTHON) experiments/lpo_report.py active results/lpo-active-spam-r$(ACTIVE_REPEATS) results/lpo-active-spam-r$(ACTIVE_REPEATS)

# Piro et al. (2012) and D'Ambrosio et al. (2012): UNN. Side-by-side tables land in results/unn-*.
unn-ripley:  ## Fig. 2 (test error against theta, UNN vs kNN on a random theta-sample) and Fig. 3 (prototype maps)
	knnx run experiments/ripley.yaml --quiet --no-resume
	$(PYTHON) experiments/unn_ripley.py results/ripley results/unn-ripley

unn-uci:  ## Table 2: UNN (theta by inner CV), ITML+kNN, kNN; five runs of 2-fold CV on UCI data
	knnx run experiments/unn_uci.yaml --jobs 2 --quiet --no-resume
	mkdir -p results
	for d in iris balance ionosphere glass liver cancer diabetes wdbc; do \
	  knnx run experiments/unn_uci/itml_$$d.yaml --jobs 2 --quiet --no-resume 2> results/unn-uci-itml-$$d.log \
	    || echo "itml_knn failed on $$d (results/unn-uci-itml-$$d.log)"; \
	done
	$(PYTHON) experiments/unn_uci.py results/unn-uci results/unn-uci-itml results/unn-uci-table2

# UNN_SIMS simulations per sigma (10 = the paper's count).
UNN_SIMS ?= 10

unn-posteriors:  ## Sec. 5.3 of D'Ambrosio et al.: UNN(exp/log/Mat) posteriors vs linear SVM + Platt (Table 3, Fig. 2-3)
	$(PYTHON) experiments/unn_posteriors.py spec $(UNN_SIMS) results/unn-posteriors-s$(UNN_SIMS).yaml
	knnx run results/unn-posteriors-s$(UNN_SIMS).yaml --out results/unn-posteriors-s$(UNN_SIMS) --jobs 2 --quiet --no-resume
	$(PYTHON) experiments/unn_posteriors.py results/unn-posteriors-s$(UNN_SIMS) results/unn-posteriors

# Nock et al. (2014): GNNB. Side-by-side tables land in results/gnnb-*.
gnnb-small:  ## Sec. 6.3-6.5: GNNB vs NN, UNN, SVM, SGD, AdaBoost on 8 small domains (Fig. 3-5, time ratios; about 20 minutes)
	knnx run experiments/gnnb_small.yaml --jobs 2 --quiet --no-resume
	$(PYTHON) experiments/gnnb_small.py results/gnnb-small results/gnnb-small-report

gnnb-large:  ## Table 3 / Sec. 6.4, 6.6 on a synthetic blobs stand-in for Caltech/SUN (about 1 minute)
	$(PYTHON) experiments/gnnb_large.py results/gnnb-large

# Paredes & Vidal (2006): learned weighted metrics. CPW_RUNS runs per training size
# (100 = the paper's count, about 1 minute).
CPW_RUNS ?= 100

cpw-synthetic:  ## Sec. 5.1, Fig. 2: 1-NN error of L2, CW, PW, CPW against training size (8..256 per class), Bayes risk, claims
	$(PYTHON) experiments/cpw_synthetic.py spec $(CPW_RUNS) results/cpw-synthetic-r$(CPW_RUNS).yaml
	knnx run results/cpw-synthetic-r$(CPW_RUNS).yaml --out results/cpw-synthetic-r$(CPW_RUNS) --jobs 2 --quiet --no-resume
	$(PYTHON) experiments/cpw_synthetic.py report results/cpw-synthetic-r$(CPW_RUNS) results/cpw-synthetic

# Random 5-CV partitions for Tables 2 and 3 (the paper: 100, about 1.5 hours).
CPW_BETA_REPEATS ?= 10
CPW_UCI_REPEATS ?= 5

cpw-beta:  ## Table 2 / Fig. 3: CW error against beta on 12 small UCI sets, 5-CV x CPW_BETA_REPEATS (about 4 minutes)
	$(PYTHON) experiments/cpw_report.py spec experiments/cpw_beta.yaml $(CPW_BETA_REPEATS) results/cpw-beta-r$(CPW_BETA_REPEATS).yaml
	knnx run results/cpw-beta-r$(CPW_BETA_REPEATS).yaml --out results/cpw-beta-r$(CPW_BETA_REPEATS) --jobs 2 --quiet --no-resume
	$(PYTHON) experiments/cpw_report.py beta results/cpw-beta-r$(CPW_BETA_REPEATS) results/cpw-beta-report

cpw-uci:  ## Table 3: L2, CDM, CW, PW, CPW (beta 8), 5-CV x CPW_UCI_REPEATS + dna/letter/satimage standard splits (about 5 minutes)
	$(PYTHON) experiments/cpw_report.py spec experiments/cpw_uci.yaml $(CPW_UCI_REPEATS) results/cpw-uci-r$(CPW_UCI_REPEATS).yaml
	knnx run results/cpw-uci-r$(CPW_UCI_REPEATS).yaml --out results/cpw-uci-r$(CPW_UCI_REPEATS) --jobs 2 --quiet --no-resume
	knnx run experiments/cpw_uci_large.yaml --out results/cpw-uci-large --jobs 2 --quiet --no-resume
	$(PYTHON) experiments/cpw_report.py uci results/cpw-uci-r$(CPW_UCI_REPEATS) results/cpw-uci-large results/cpw-uci-report

regress:  ## regression gate: fast subsets of every paper target against results/reference/ (about 1 minute)
	$(PYTHON) experiments/regress.py

regress-update:  ## regenerate the gate's references (only after an intended change; say why in the commit)
	$(PYTHON) experiments/regress.py --update

# All paper targets with the variables above.
REPRODUCE_VARS = --var ACTIVE_REPEATS=$(ACTIVE_REPEATS) --var UNN_SIMS=$(UNN_SIMS) --var CPW_RUNS=$(CPW_RUNS) \
  --var CPW_BETA_REPEATS=$(CPW_BETA_REPEATS) --var CPW_UCI_REPEATS=$(CPW_UCI_REPEATS)

reproduce:  ## every paper target in turn, timed, then results/REPORT.md beside the papers (about 41 minutes on 2 cores)
	$(PYTHON) experiments/reproduce.py $(REPRODUCE_VARS)

report:  ## results/REPORT.md from existing results, running nothing
	$(PYTHON) experiments/reproduce.py --assemble-only $(REPRODUCE_VARS)

clean:
	rm -rf results/ripley results/lpo-* results/unn-* results/gnnb-* results/cpw-* results/regress results/REPORT.md results/reproduce-logs results/reproduce-times.json .pytest_cache .ruff_cache
