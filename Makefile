# Two commands from a fresh clone: `make demo` and `make test`.
# Both create .venv with the interpreter named by PYTHON (3.11+) and install into it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Extras the fast group exercises for real (MiniLM through sentence-transformers, the HTML
# report, pandas). The live group adds the rest (LIVE_EXTRAS: the embedded vector engines,
# mem0, Letta's client, Graphiti, LangMem, LiteLLM, llama.cpp compiled once per machine,
# Ray) and runs the tests that need them (marked `extras`, tests/conftest.py EXTRA_TESTS),
# so a fresh machine's `make test` installs 2 GB less and never compiles llama.cpp.
TEST_EXTRAS ?= embeddings,analysis,report
LIVE_EXTRAS ?= mem0,vector,letta,graphiti,langmem,cost,providers,local-llm,distributed
# llama.cpp compiles from source. Its default build targets the building CPU
# (-march=native) and crashed with a general protection fault on an AMX machine here, so
# we build it portable (AVX2) once per machine and keep the wheel outside pip's cache,
# which would otherwise hand back a native build made elsewhere.
LLAMA_VERSION := 0.3.36
WHEELS ?= $(HOME)/.cache/mnemometer/wheels
LLAMA_WHEEL = $(wildcard $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl)

# Browser tests drive Debian's Chromium through playwright (never a downloaded browser).
CHROMIUM ?= /usr/bin/chromium

.PHONY: demo test test-live test-all letta-env cognee-env test-cognee plugins-env test-plugins claims peers-env bench clean chromium bubblewrap screenshot

# Into .venv, under the pins. --no-compile: pip would byte-compile every file of torch and
# transformers (half of a fresh install's time); Python compiles the modules a run imports,
# once, as it first imports them.
PIP := $(BIN)/python -m pip install -q --no-compile -c constraints.txt

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	@touch $@

$(VENV)/.llama: | $(BIN)/python
	@if [ -z "$(LLAMA_WHEEL)" ]; then \
	  echo "building llama-cpp-python $(LLAMA_VERSION) (portable, once per machine: minutes)"; \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip wheel -q --no-cache-dir --no-deps \
	    -w $(WHEELS) llama-cpp-python==$(LLAMA_VERSION); \
	fi
	$(BIN)/python -m pip install -q --no-deps --force-reinstall \
	  $$(ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl | head -1)
	@touch $@

# The demo writes an HTML report, so it installs the [report] extra too.
$(VENV)/.demo: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e ".[report]"
	@touch $@ $(VENV)/.core

$(VENV)/.test: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e ".$(if $(TEST_EXTRAS),[$(TEST_EXTRAS)])" --group dev
	@touch $@ $(VENV)/.core $(VENV)/.demo

# The live group's own extras, on top of the fast group's (llama.cpp's wheel first: pip
# then finds it installed and only adds its server's dependencies).
$(VENV)/.live: pyproject.toml constraints.txt $(VENV)/.test | $(VENV)/.llama
	$(PIP) -e ".[$(TEST_EXTRAS),$(LIVE_EXTRAS)]" \
	  --group dev --group browser
	@touch $@ $(VENV)/.browser

# playwright, for the browser tests and the README's screenshot.
$(VENV)/.browser: pyproject.toml constraints.txt $(VENV)/.test
	$(PIP) --group browser
	@touch $@

demo: $(VENV)/.demo
	@bash scripts/demo.sh $(BIN)

# $(call apt_install,COMMAND,PACKAGE,WHAT): Debian's PACKAGE, installed once where we may
# (root with apt-get, as on CI); elsewhere the tests of WHAT skip and say why.
define apt_install
	@if ! command -v $(1) >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's $(2) for $(3) (once per machine)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) \
	      >/dev/null) || echo "$(2): apt-get failed: the tests of $(3) will skip"; \
	  else \
	    echo "$(2): not installed and no root apt-get here: the tests of $(3) will skip"; \
	  fi; \
	fi
endef

# Chromium for the browser tests; bubblewrap for the sandbox of shell and agent items
# (docs/sandbox.md).
chromium:
	$(call apt_install,$(CHROMIUM),chromium,the HTML reports in a browser)

bubblewrap:
	$(call apt_install,bwrap,bubblewrap,the sandbox)

# The peer harnesses whose retrieval rules mnemometer transcribes (src/mnemometer/scoring/
# rules.py), installed from PyPI without their dependencies (the scoring functions the tests
# call import only the standard library) into a venv of their own under ~/.cache/mnemometer,
# once per machine (seconds); tests/scoring/test_rules_peers.py runs their code on the same
# rankings. A changed pin rebuilds it.
PEERS := infolang-bench==0.1.0 memory-core-eval==0.2.0 benchd-harness==0.2.0
PEERS_VENV ?= $(HOME)/.cache/mnemometer/peers/venv
peers-env:
	@if [ "$$(cat $(PEERS_VENV)/.mnemometer-complete 2>/dev/null)" != "$(PEERS)" ]; then \
	  echo "installing the peer harnesses in $(PEERS_VENV) (once per machine)"; \
	  rm -rf $(PEERS_VENV) && $(PYTHON) -m venv $(PEERS_VENV) && \
	  $(PEERS_VENV)/bin/python -m pip install -q --no-deps $(PEERS) && \
	  echo "$(PEERS)" > $(PEERS_VENV)/.mnemometer-complete; \
	fi

# The fast loop: everything but the slow and live-server groups, with its slowest tests
# named (a test over a few seconds belongs in SLOW_TESTS in tests/conftest.py).
test: $(VENV)/.test bubblewrap peers-env
	$(BIN)/python -m pytest -q --durations=15 --strict-installs

# The Letta server stack the live tests start (`mnemometer serve letta`): its own venv,
# PostgreSQL + pgvector and a migrated database under ~/.cache/mnemometer, never in .venv.
# Once per machine (a few minutes, needs PyPI); a quick check afterwards.
letta-env: $(VENV)/.test
	$(BIN)/mnemometer serve letta --prepare

# cognee cannot share the test environment (it pins transformers<5, openai<3, ...): its
# tests run in a venv of its own under ~/.cache/mnemometer, built once per machine (2.9 GB,
# about 8 min, needs PyPI); this checkout is linked into it (editable, no deps) on every run.
# `make test-live` (so CI) runs its tests there after the main live group: on a quiet
# 2-core machine the build took 86 s from local wheels and the tests 2 min 35 s
# (COGNEE_TESTS=0 leaves them out); docs/systems.md has the figures.
COGNEE_VERSION := 1.6.5
COGNEE_VENV ?= $(HOME)/.cache/mnemometer/cognee-$(COGNEE_VERSION)/venv
cognee-env: | $(BIN)/python
	@if [ ! -f $(COGNEE_VENV)/.mnemometer-complete ]; then \
	  echo "building the cognee test environment in $(COGNEE_VENV) (once per machine: minutes)"; \
	  rm -rf $(COGNEE_VENV) && $(PYTHON) -m venv $(COGNEE_VENV) && \
	  $(COGNEE_VENV)/bin/python -m pip install -q --upgrade pip && \
	  $(COGNEE_VENV)/bin/python -m pip install -q -c constraints.txt ".[cognee]" --group dev && \
	  touch $(COGNEE_VENV)/.mnemometer-complete; \
	fi
	$(COGNEE_VENV)/bin/python -m pip install -q --no-deps -e .

test-cognee: cognee-env
	$(COGNEE_VENV)/bin/python -m pytest -q -m "slow or live" tests/live/test_cognee_live.py

# The third-party memory systems of docs/claims.md, each through its plug-in under
# examples/plugins/ (registered by the `mnemometer.stores` entry point, as a third party's
# would be). They cannot share the test environment (genome-memory pins
# sentence-transformers<6): a venv of their own under ~/.cache/mnemometer, filled from the
# plug-ins' own pins (torch held by constraints.txt) and refilled when a plug-in's
# pyproject changes; this checkout is linked into it (editable, no deps) on every run.
PLUGINS_VENV ?= $(HOME)/.cache/mnemometer/plugins/venv
PLUGIN_DIRS := $(sort $(wildcard examples/plugins/*/pyproject.toml))
PLUGINS_KEY = $$(cat constraints.txt $(PLUGIN_DIRS) | sha256sum | cut -c1-16)
plugins-env: | $(BIN)/python
	@if [ ! -x $(PLUGINS_VENV)/bin/python ]; then \
	  echo "building the plug-ins' environment in $(PLUGINS_VENV) (once per machine: minutes)"; \
	  $(PYTHON) -m venv $(PLUGINS_VENV) && $(PLUGINS_VENV)/bin/python -m pip install -q --upgrade pip; \
	fi
	@if [ "$$(cat $(PLUGINS_VENV)/.mnemometer-complete 2>/dev/null)" != "$(PLUGINS_KEY)" ]; then \
	  $(PLUGINS_VENV)/bin/python -m pip install -q -c constraints.txt ".[embeddings]" --group dev \
	    $(foreach d,$(PLUGIN_DIRS),-e $(dir $(d))) && \
	  echo "$(PLUGINS_KEY)" > $(PLUGINS_VENV)/.mnemometer-complete; \
	fi
	$(PLUGINS_VENV)/bin/python -m pip install -q --no-deps -e .

test-plugins: plugins-env
	$(PLUGINS_VENV)/bin/python -m pytest -q -m "slow or live" tests/claims/

# docs/claims.md's table: each plug-in's system on LoCoMo conv-26 under its claim's rule.
claims: plugins-env
	$(PLUGINS_VENV)/bin/python scripts/claims.py --write

# The marked groups (real servers, models, browsers, clusters); CI runs them too.
test-live: $(VENV)/.live letta-env chromium bubblewrap
	$(BIN)/python -m pytest -q -m "slow or live or extras"
	@if [ "$(COGNEE_TESTS)" != 0 ]; then $(MAKE) test-cognee; \
	  else echo "cognee's tests left out (COGNEE_TESTS=0): make test-cognee runs them"; fi
	@if [ "$(PLUGIN_TESTS)" != 0 ]; then $(MAKE) test-plugins; \
	  else echo "the plug-ins' tests left out (PLUGIN_TESTS=0): make test-plugins runs them"; fi

test-all: test test-live

# The README's screenshot: the demo's bm25 run as its HTML report, in headless Chromium.
screenshot: $(VENV)/.browser chromium
	@bash scripts/demo.sh $(BIN) >/dev/null
	$(BIN)/mnemometer report runs/demo/demo-en-bm25 -o runs/demo/demo-en-bm25.html
	$(BIN)/python scripts/screenshot.py runs/demo/demo-en-bm25.html docs/images/report.png

bench: $(VENV)/.live
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
