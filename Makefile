# make demo: create .venv, install rsp, run a bundled example.  make test: the whole test suite.
# make test-fast: every test but the Spark ones, for the edit-test loop.
PYTHON ?= python3
# pytest-xdist: one worker per core (CI has 2), each test file on one worker (its fixtures, e.g. the Spark
# session, built once there), handed out longest file first (tests/durations.json, make durations; not
# pytest-xdist's own order, by number of tests); JOBS= runs in one process. Three workers on 2 cores
# were slower (533 s against 508 s, 2026-11-28).
JOBS ?= -n 2 --dist loadfile --no-loadscope-reorder
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.rsp-installed

.PHONY: demo test fuzz lint bench clean java browser mosquitto docs durations

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench,spark,docs,serve,mqtt]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== a continuous query with RDFS over a sensor stream (examples/building) =="
	$(BIN)/rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \
		--ontology ontologies/building.ttl --entailment rdfs --format text
	@echo "== a LARS program: the cooling system (examples/cooling) =="
	$(BIN)/rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream --format text

# The W3C SPARQL 1.1 entailment tests ship in rdflib's source distribution: fetched from PyPI once.
W3C := $(VENV)/w3c/entailment

$(W3C): $(STAMP)
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

test: $(STAMP) $(W3C) $(W3C_QUERY) java browser mosquitto
	RSP_REQUIRE_BROWSER=1 RSP_REQUIRE_CLUSTER=1 RSP_REQUIRE_MQTT=1 $(BIN)/python -m pytest -q $(JOBS)

# Record each test file's seconds (tests/durations.json), which orders the files for the workers: the
# longest first (tests/conftest.py). Run it when files were added or got much slower or faster.
durations:
	$(MAKE) test JOBS="$(JOBS) --junitxml=$(VENV)/durations.xml"
	$(BIN)/python tests/durations.py $(VENV)/durations.xml

# The edit-test loop: the suite without the tests marked spark or browser (no Spark session, no Java, no
# Chromium), about 3 minutes on 2 cores. make test runs them too, and is what CI runs.
.PHONY: test-fast
test-fast: $(STAMP) $(W3C) $(W3C_QUERY)
	$(BIN)/python -m pytest -q $(JOBS) -m "not spark and not browser"

# Generated differential tests with fresh random cases until MINUTES are up; every disagreement is saved,
# shrunk, as a golden case (tests/golden/*/fuzz-*), and the exit code is 1 if there was one.
MINUTES ?= 30
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz.py --minutes $(MINUTES)

lint: $(STAMP)
	$(BIN)/ruff check rsp tests benchmarks

# The pictures of docs/ (docs/img/*.svg) and the outputs of the examples in docs/*.md, regenerated.
# The benchmark plots come from the newest results in benchmarks/results (see docs/results.md).
docs: $(STAMP)
	$(BIN)/python docs/figures/make_figures.py
	$(BIN)/python docs/render_examples.py
	if ls benchmarks/results/*.json >/dev/null 2>&1; then $(BIN)/python benchmarks/plot.py; fi

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --quick

clean:
	rm -rf $(VENV) build *.egg-info
