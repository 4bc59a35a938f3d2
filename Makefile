# Every target runs exactly what CI runs. Use inside a virtual environment (see README).
PYTHON ?= python3

.PHONY: install test test-all lint format bench ripley clean

install:  ## install knnx with the test and benchmark extras
	$(PYTHON) -m pip install -e '.[dev,bench]'

test:  ## the fast test suite (what CI runs)
	$(PYTHON) -m pytest -m "not slow"

test-all:  ## every test, including the slow ones
	$(PYTHON) -m pytest

lint:
	$(PYTHON) -m ruff check knnx tests benchmarks
	$(PYTHON) -m ruff format --check knnx tests benchmarks

format:
	$(PYTHON) -m ruff format knnx tests benchmarks
	$(PYTHON) -m ruff check --fix knnx tests benchmarks

bench:  ## time knnx against scikit-learn and faiss (medians and ratios)
	$(PYTHON) benchmarks/neighbors.py
	$(PYTHON) benchmarks/lpo.py

ripley:  ## the main job
	knnx run experiments/ripley.yaml

clean:
	rm -rf results/ripley .pytest_cache .ruff_cache
