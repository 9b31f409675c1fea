# Two commands from a fresh clone: `make demo` and `make test`.
# Both create .venv with the interpreter named by PYTHON (3.11+) and install into it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Extras the test suite exercises for real (heavy backends run embedded, offline).
TEST_EXTRAS ?= embeddings,mem0,vector,local-llm

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".$(if $(TEST_EXTRAS),[$(TEST_EXTRAS)])" --group dev
	@touch $@ $(VENV)/.core

demo: $(VENV)/.core
	@bash scripts/demo.sh $(BIN)

test: $(VENV)/.test
	$(BIN)/python -m pytest -q

bench: $(VENV)/.test
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
