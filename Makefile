# make demo: create .venv, install rsp, run a bundled example.  make test: the whole test suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.rsp-installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream --format text

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check rsp tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --quick

clean:
	rm -rf $(VENV) build *.egg-info
