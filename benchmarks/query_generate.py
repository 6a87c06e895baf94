"""Generators for the continuous-query benchmarks (see ``benchmarks/README.md``, "Continuous queries").

Two scenarios, each written as an ontology (Turtle), a registered query (``.rq``) and an RDF stream
(N-Triples lines ending in their time, ``<s> <p> <o> . # <ms>``, as ``rsp run`` reads them). Data is
generated on demand into a directory (a temporary one by default) and never committed::

    python benchmarks/query_generate.py --scenario isin --size 5000 --seconds 30 --dir /tmp/q
    python benchmarks/query_generate.py --scenario obs --size 2000 --seconds 30 --dir /tmp/q

``isin``: the expiration-tagged maintenance experiment (Barbieri et al., "Incremental reasoning on
streams and rich background knowledge", ESWC 2010): ``ex:isIn`` is an ``owl:TransitiveProperty`` and
the stream brings the edges of random trees (depth 4-8), ``size / 10`` edges per second, so a 10 s
window holds about ``size`` triples. Trees grow across seconds (edges in breadth-first order, several
trees interleaved), so a derived ``isIn`` triple often rests on edges of different timestamps and
expires with the oldest of them. The query asks for the transitive closure, under OWL 2 RL.

``obs``: CSRBench-style observations (Dell'Aglio et al., ISWC 2013; SRBench's sensor data): each
observation is four triples (type, procedure, observed property, result value) at ``size`` triples per
second, spread over the second in 100 ms ticks. The query is CSRBench's Q1 (sensors whose air
temperature readings exceed a threshold) written against our small RDFS sensor ontology so that it
only matches under RDFS: the data types observations with subclasses of ``ex:Observation``, gives
values with a subproperty of ``ex:result`` and never types the sensors (``rdfs:range`` does).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path

RANGE_S = 10
"""Window range of both queries, in seconds."""
STEP_S = 1
"""Window step of both queries (one evaluation instant per second)."""

ISIN_SIZES = (500, 1_000, 2_000, 5_000, 10_000)
"""``isin``: triples in a full window (``size / RANGE_S`` edges per second)."""
OBS_RATES = (1_000, 2_000, 5_000, 10_000)
"""``obs``: stream triples per second."""

STREAM_IRI = {"isin": "http://example.org/isin/stream", "obs": "http://example.org/sensors/observations"}

XSD_DOUBLE = "<http://www.w3.org/2001/XMLSchema#double>"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


# --- the isIn trees ---------------------------------------------------------------------------------

ISIN = "http://example.org/isin#"

ISIN_ONTOLOGY = f"""\
@prefix ex: <{ISIN}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

ex:isIn a owl:TransitiveProperty ;
    rdfs:domain ex:SpatialThing ;
    rdfs:range ex:Container .
ex:Container rdfs:subClassOf ex:Place .
ex:Place rdfs:subClassOf ex:SpatialThing .
ex:Room rdfs:subClassOf ex:Place .
"""

ISIN_QUERY_WHERE = "?x ex:isIn ?y"


def isin_query() -> str:
    return f"""\
REGISTER QUERY IsInClosure AS
PREFIX ex: <{ISIN}>
SELECT ?x ?y
FROM STREAM <{STREAM_IRI["isin"]}> [RANGE {RANGE_S}s STEP {STEP_S}s]
WHERE {{ {ISIN_QUERY_WHERE} }}
"""


def random_tree(rng: random.Random, first: int) -> list[tuple[int, int]]:
    """Edges ``(child, parent)`` of a random tree whose nodes are numbered from ``first``, in
    breadth-first order (a parent's edge before its children's): a chain of depth 4-8 from the root,
    plus 4-24 nodes hung under random nodes above the deepest level."""
    depth = rng.randint(4, 8)
    level = {first: 0}
    edges = []
    node = first
    for k in range(1, depth + 1):
        edges.append((node + 1, node))
        node += 1
        level[node] = k
    inner = [n for n, k in level.items() if k < depth]
    for _ in range(rng.randint(4, 24)):
        parent = rng.choice(inner)
        node += 1
        level[node] = level[parent] + 1
        edges.append((node, parent))
        if level[node] < depth:
            inner.append(node)
    edges.sort(key=lambda e: level[e[0]])
    return edges


def isin_batches(size: int, seconds: int, seed: int) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """``seconds`` batches (time ``s * 1000``) of ``size // RANGE_S`` new ``isIn`` edges each.

    About ``rate / 10`` trees grow at once, each giving one edge per round, so a tree of ~20 edges
    spreads over about two seconds."""
    rng = random.Random(seed)
    rate = max(1, size // RANGE_S)
    growing: deque[deque[tuple[int, int]]] = deque()
    concurrent = max(1, rate // 10)
    next_node = 0

    def new_tree() -> deque[tuple[int, int]]:
        nonlocal next_node
        edges = random_tree(rng, next_node)
        next_node = max(c for c, _ in edges) + 1
        return deque(edges)

    pred = f"<{ISIN}isIn>"
    batches = []
    for s in range(seconds):
        triples = []
        while len(triples) < rate:
            while len(growing) < concurrent:
                growing.append(new_tree())
            tree = growing.popleft()
            child, parent = tree.popleft()
            triples.append((f"<{ISIN}n{child}>", pred, f"<{ISIN}n{parent}>"))
            if tree:
                growing.append(tree)
        batches.append((s * 1000, triples))
    return batches


# --- CSRBench-style observations --------------------------------------------------------------------

SENSORS = "http://example.org/sensors#"

OBS_ONTOLOGY = f"""\
@prefix ex: <{SENSORS}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

ex:WeatherObservation rdfs:subClassOf ex:Observation .
ex:TemperatureObservation rdfs:subClassOf ex:WeatherObservation .
ex:WindSpeedObservation rdfs:subClassOf ex:WeatherObservation .
ex:HumidityObservation rdfs:subClassOf ex:WeatherObservation .
ex:Thermometer rdfs:subClassOf ex:Sensor .
ex:Anemometer rdfs:subClassOf ex:Sensor .
ex:Hygrometer rdfs:subClassOf ex:Sensor .

ex:procedure rdfs:domain ex:Observation ; rdfs:range ex:Sensor .
ex:observedProperty rdfs:domain ex:Observation ; rdfs:range ex:Property .
ex:floatResult rdfs:subPropertyOf ex:result .
ex:result rdfs:domain ex:Observation .

ex:AirTemperature a ex:Property .
ex:WindSpeed a ex:Property .
ex:RelativeHumidity a ex:Property .
"""

OBS_THRESHOLD = 90
OBS_QUERY_WHERE = f"""\
  ?obs a ex:Observation ;
       ex:procedure ?sensor ;
       ex:observedProperty ex:AirTemperature ;
       ex:result ?value .
  ?sensor a ex:Sensor .
  FILTER(?value > {OBS_THRESHOLD})"""

# (observation class, observed property, value range) per kind of station
OBS_KINDS = (
    ("TemperatureObservation", "AirTemperature", (0.0, 100.0)),
    ("WindSpeedObservation", "WindSpeed", (0.0, 120.0)),
    ("HumidityObservation", "RelativeHumidity", (0.0, 100.0)),
)
OBS_SENSORS = 200
"""Sensors per kind of observation."""
TICK_MS = 100
"""Observations of a second are spread over it in ticks of this many milliseconds."""


def obs_query() -> str:
    return f"""\
REGISTER QUERY HighAirTemperature AS
PREFIX ex: <{SENSORS}>
SELECT ?sensor ?obs ?value
FROM STREAM <{STREAM_IRI["obs"]}> [RANGE {RANGE_S}s STEP {STEP_S}s]
WHERE {{
{OBS_QUERY_WHERE}
}}
"""


def obs_batches(rate: int, seconds: int, seed: int) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """``rate`` triples per second (``rate // 4`` observations), in ``1000 / TICK_MS`` batches per second."""
    rng = random.Random(seed)
    per_second = max(1, rate // 4)
    ticks = 1000 // TICK_MS
    ex = SENSORS
    procedure, observed, value_pred = f"<{ex}procedure>", f"<{ex}observedProperty>", f"<{ex}floatResult>"
    batches = []
    count = 0
    for s in range(seconds):
        for tick in range(ticks):
            n = per_second * (tick + 1) // ticks - per_second * tick // ticks
            triples = []
            for _ in range(n):
                cls, prop, (low, high) = OBS_KINDS[count % len(OBS_KINDS)]
                obs = f"<{ex}obs{count}>"
                sensor = f"<{ex}{prop}Sensor{rng.randrange(OBS_SENSORS)}>"
                value = f'"{rng.uniform(low, high):.1f}"^^{XSD_DOUBLE}'
                triples += [(obs, RDF_TYPE, f"<{ex}{cls}>"), (obs, procedure, sensor),
                            (obs, observed, f"<{ex}{prop}>"), (obs, value_pred, value)]
                count += 1
            if triples:
                batches.append((s * 1000 + tick * TICK_MS, triples))
    return batches


# --- writing a case ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A generated case: where its files are and what they hold."""

    scenario: str
    size: int
    """``isin``: triples in a full window; ``obs``: triples per second."""
    seconds: int
    rate: int
    """Stream triples per second."""
    triples: int
    entailment: str
    stream_iri: str
    ontology: Path
    query: Path
    stream: Path
    where: str
    """The query's WHERE body, for re-evaluating it over a re-materialised window with rdflib."""
    prefix: str


SCENARIOS = {
    "isin": "transitive isIn trees (depth 4-8), OWL 2 RL, 10 s window sliding by 1 s",
    "obs": "CSRBench-style observations, RDFS, query Q1 (air temperature > threshold), 10 s / 1 s",
}


def write_stream(path: Path, batches: list[tuple[int, list[tuple[str, str, str]]]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for time, triples in batches:
            out.writelines(f"{s} {p} {o} . # {time}\n" for s, p, o in triples)
            count += len(triples)
    return count


def generate(scenario: str, size: int, seconds: int, directory: Path, seed: int = 1) -> Case:
    """Write the ontology, query and stream of one case into ``directory``; return what was written."""
    directory.mkdir(parents=True, exist_ok=True)
    if scenario == "isin":
        ontology_text, query_text, where, prefix = ISIN_ONTOLOGY, isin_query(), ISIN_QUERY_WHERE, ISIN
        batches = isin_batches(size, seconds, seed)
        entailment, rate = "owlrl", max(1, size // RANGE_S)
    elif scenario == "obs":
        ontology_text, query_text, where, prefix = OBS_ONTOLOGY, obs_query(), OBS_QUERY_WHERE, SENSORS
        batches = obs_batches(size, seconds, seed)
        entailment, rate = "rdfs", max(1, size // 4) * 4
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    ontology = directory / f"{scenario}-ontology.ttl"
    query = directory / f"{scenario}.rq"
    stream = directory / f"{scenario}-{size}-t{seconds}-s{seed}.nt"
    ontology.write_text(ontology_text, encoding="utf-8")
    query.write_text(query_text, encoding="utf-8")
    triples = write_stream(stream, batches)
    return Case(scenario, size, seconds, rate, triples, entailment, STREAM_IRI[scenario], ontology, query,
                stream, where, prefix)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a continuous-query benchmark case.")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--size", type=int, required=True,
                        help="isin: triples in a full 10 s window; obs: triples per second")
    parser.add_argument("--seconds", type=int, default=30, help="stream length in seconds (default 30)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", help="output directory (default: a new temporary one)")
    args = parser.parse_args(argv)
    directory = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="rsp-qbench-"))
    case = generate(args.scenario, args.size, args.seconds, directory, args.seed)
    print(f"{case.triples:,} triples ({case.rate:,}/s, {case.entailment})")
    print(f"rsp run {case.query} --stream {case.stream} --ontology {case.ontology} "
          f"--entailment {case.entailment} --format text", file=sys.stderr)
    for path in (case.ontology, case.query, case.stream):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
