# make demo: create .venv, install rsp (the core only), run a bundled example.  make test: the whole test
# suite (adds the test dependencies and every extra).  make test-fast: every test but the Spark and browser
# ones, for the edit-test loop.  make test-versions: the fast suite on the oldest and the newest Python the
# project declares, each in a venv of its own.
PYTHON ?= python3
# pytest-xdist: one worker per core (CI has 2), each test file on one worker (its fixtures, e.g. the Spark
# session, built once there), handed out longest file first (tests/durations.json, make durations; not
# pytest-xdist's own order, by number of tests); JOBS= runs in one process. Three workers on 2 cores
# were slower (533 s against 508 s, 2026-11-28).
JOBS ?= -n 2 --dist loadfile --no-loadscope-reorder
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test fuzz lint bench clean java browser mosquitto docs durations test-versions

# What each target installs into $(VENV), as sets of extras (pyproject.toml): the demo needs the core only
# (lark, rdflib, clingo: under 40 MB), the fast suite every extra but spark (the test tools, the service,
# pandas, the benchmarks' and the figures' packages), the whole suite every extra (PySpark: over 1 GB).
# Each set has its stamp, remade when pyproject.toml changes, so a target installs its set once and a
# smaller set after a larger one installs nothing.
EXTRAS_core :=
EXTRAS_fast := test,bench,docs,serve,pandas,mqtt
EXTRAS_all := test,bench,spark,docs,serve,pandas,mqtt
CORE := $(VENV)/.installed-core
FAST := $(VENV)/.installed-fast
ALL := $(VENV)/.installed-all

$(VENV)/.installed-%: pyproject.toml
	test -x $(BIN)/python || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet --upgrade pip; }
	$(BIN)/python -m pip install --quiet -e '.$(if $(EXTRAS_$*),[$(EXTRAS_$*)])'
	touch $@
	$(if $(filter all,$*),touch $(FAST))
	$(if $(filter all fast,$*),touch $(CORE))

demo: $(CORE)
	@echo "== a continuous query with RDFS over a sensor stream (examples/building) =="
	$(BIN)/rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \
		--ontology ontologies/building.ttl --entailment rdfs --format text
	@echo "== a LARS program: the cooling system (examples/cooling) =="
	$(BIN)/rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream --format text

# The W3C SPARQL 1.1 entailment tests ship in rdflib's source distribution: fetched from PyPI once.
W3C := $(VENV)/w3c/entailment

$(W3C): | $(CORE)
	rm -rf $(VENV)/w3c && mkdir -p $(VENV)/w3c
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: -d $(VENV)/w3c \
		"rdflib==$$($(BIN)/python -c 'import rdflib; print(rdflib.__version__)')"
	tar -xzf $(VENV)/w3c/rdflib-*.tar.gz -C $(VENV)/w3c --strip-components=6 \
		--wildcards '*/test/data/suites/w3c/sparql11/entailment/*'
	test -f $(W3C)/manifest.ttl

# The W3C SPARQL 1.1 query-evaluation tests (the query-language manifests of the same distribution).
W3C_QUERY := $(VENV)/w3c/sparql11
W3C_QUERY_DIRS := aggregates bind bindings construct exists functions grouping json-res negation \
	project-expression property-path subquery

$(W3C_QUERY): $(W3C)
	rm -rf $(W3C_QUERY) && mkdir -p $(W3C_QUERY)
	tar -xzf $(VENV)/w3c/rdflib-*.tar.gz -C $(W3C_QUERY) --strip-components=6 \
		$(foreach d,$(W3C_QUERY_DIRS),--wildcards '*/test/data/suites/w3c/sparql11/$(d)/*')
	test -f $(W3C_QUERY)/property-path/manifest.ttl

# where the tests find the W3C suites (tests/query/test_w3c_sparql.py): in this VENV, whichever it is
W3C_ENV := RSP_W3C_ENTAILMENT=$(abspath $(W3C)) RSP_W3C_SPARQL=$(abspath $(W3C_QUERY))

# Spark (rsp spark and its tests) needs Java 17: say how to get it, or install it when run as root.
java:
	@command -v java >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing a Java 17 runtime for Spark (openjdk-17-jre-headless)"; \
			apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
		else \
			echo "Spark needs Java 17: install it, e.g. sudo apt-get install openjdk-17-jre-headless"; exit 1; \
		fi; }

# The browser test of rsp serve's page (tests marked browser) drives headless Chromium with chromedriver:
# say how to get them, or install them (Debian's chromium, chromium-driver) when run as root.
browser:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing headless Chromium for the browser test (chromium, chromium-driver)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
		else \
			echo "the browser test needs Chromium: install it, e.g. sudo apt-get install chromium chromium-driver"; exit 1; \
		fi; }

# The MQTT tests (tests marked mqtt) start Debian's mosquitto broker on a loopback port, and
# benchmarks/mqtt.py publishes with its mosquitto_pub: say how to get them, or install them when run as root.
mosquitto:
	@{ { command -v mosquitto >/dev/null 2>&1 || test -x /usr/sbin/mosquitto; } && \
		command -v mosquitto_pub >/dev/null 2>&1; } || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing the mosquitto MQTT broker and its clients for the MQTT tests (mosquitto, mosquitto-clients)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto mosquitto-clients >/dev/null; \
		else \
			echo "the MQTT tests need the mosquitto broker: install it, e.g. sudo apt-get install mosquitto mosquitto-clients"; exit 1; \
		fi; }

test: $(ALL) $(W3C) $(W3C_QUERY) java browser mosquitto
	RSP_REQUIRE_BROWSER=1 RSP_REQUIRE_CLUSTER=1 RSP_REQUIRE_MQTT=1 RSP_REQUIRE_TMPFS=1 $(W3C_ENV) $(BIN)/python -m pytest -q $(JOBS)

# Record each test file's seconds (tests/durations.json), which orders the files for the workers: the
# longest first (tests/conftest.py). Run it when files were added or got much slower or faster.
durations:
	$(MAKE) test JOBS="$(JOBS) --junitxml=$(VENV)/durations.xml"
	$(BIN)/python tests/durations.py $(VENV)/durations.xml

# The edit-test loop: the suite without the tests marked spark or browser (no Spark session, no Java, no
# Chromium), about 3 minutes on 2 cores. make test runs them too, and is what CI runs.
.PHONY: test-fast
test-fast: $(FAST) $(W3C) $(W3C_QUERY)
	$(W3C_ENV) $(BIN)/python -m pytest -q $(JOBS) -m "not spark and not browser"

# Generated differential tests with fresh random cases until MINUTES are up; every disagreement is saved,
# shrunk, as a golden case (tests/golden/*/fuzz-*), and the exit code is 1 if there was one.
MINUTES ?= 30
fuzz: $(FAST)
	$(BIN)/python tests/fuzz.py --minutes $(MINUTES)

lint: $(FAST)
	$(BIN)/ruff check rsp tests benchmarks

# The pictures of docs/ (docs/img/*.svg) and the outputs of the examples in docs/*.md, regenerated.
# The benchmark plots come from the newest results in benchmarks/results (see docs/results.md).
docs: $(ALL)
	$(BIN)/python docs/figures/make_figures.py
	$(BIN)/python docs/render_examples.py
	if ls benchmarks/results/*.json >/dev/null 2>&1; then $(BIN)/python benchmarks/plot.py; fi

bench: $(ALL)
	$(BIN)/python benchmarks/run.py --quick

# The fast suite on the oldest and the newest Python of pyproject.toml's classifiers (which CI runs after
# make test), each in .venv-X.Y: pythonX.Y from PATH if it runs, else pyenv's newest X.Y.*
# ($(PYENV_ROOT)/versions). PYTHONS="/path/to/python3.10 /path/to/python3.13" names the interpreters.
PYENV_ROOT ?= $(HOME)/.pyenv
DECLARED := $(shell sed -n 's/.*"Programming Language :: Python :: \(3\.[0-9]*\)".*/\1/p' pyproject.toml | sort -t. -k2 -n)
TEST_VERSIONS ?= $(firstword $(DECLARED)) $(lastword $(DECLARED))
PYTHONS ?=
test-versions:
	@pythons="$(PYTHONS)"; \
	if [ -z "$$pythons" ]; then for v in $(TEST_VERSIONS); do \
		py=; for c in $$(command -v python$$v; ls -d $(PYENV_ROOT)/versions/$$v.*/bin/python 2>/dev/null | sort -rV); do \
			if $$c -c '' 2>/dev/null; then py=$$c; break; fi; \
		done; \
		if [ -z "$$py" ]; then \
			echo "make test-versions: no Python $$v (no python$$v on PATH, nothing in $(PYENV_ROOT)/versions/$$v.*):" \
				"install it (e.g. pyenv install $$v) or name it: make test-versions PYTHONS=/path/to/python$$v" >&2; \
			exit 1; \
		fi; \
		pythons="$$pythons $$py"; \
	done; fi; \
	for py in $$pythons; do \
		v=$$($$py -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || { \
			echo "make test-versions: $$py is not a Python interpreter" >&2; exit 1; }; \
		echo "== the fast suite on Python $$v ($$py), in .venv-$$v =="; \
		$(MAKE) --no-print-directory test-fast VENV=.venv-$$v PYTHON=$$py || exit 1; \
	done

clean:
	rm -rf $(VENV) .venv-3.* build *.egg-info
