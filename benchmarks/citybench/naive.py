"""The naive baseline of benchmarks/citybench.py: each window of a CityBench query evaluated from scratch
with rdflib's SPARQL engine, instant by instant (RANGE/STEP windows as DESIGN.md §5 defines them).

The static graphs are parsed once; at each instant the window's triples are added to the graph the query
reads (C-SPARQL: the default graph, the union of its FROM graphs; CQELS: ``STREAM <s> { P }`` read as
``GRAPH <s> { P }``, graph <s> holding SensorRepository and the window), the query evaluated, the triples
taken away. rdflib joins a group's parts in the order written, and CityBench writes the static patterns
first (Q1: 449 × 449 congestion properties before two windows of a few observations), which rdflib
would enumerate at every instant (about a minute per instant for Q1); so the query is evaluated with the
distinct solutions of its stream blocks as a ``VALUES`` block in front, which keeps its answer (every
solution extends exactly one of them) and lets rdflib probe the static patterns from the stream side.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

WINDOW = re.compile(r"(?i)\b(?:from\s+stream|stream)\s*<([^>]+)>\s*\[\s*range\s+(\d+)\s*(ms|s|m)\b[^\]]*\]")
FROM = re.compile(r"(?i)\bfrom\s+(named\s+)?<([^>]+)>")
UNITS = {"ms": 1, "s": 1000, "m": 60_000}
GRAPHS_HTTP = "http://127.0.0.1:9000/WebGlCity/RDF/"
STATIC_OF = {
    GRAPHS_HTTP + "SensorRepository.rdf": "SensorRepository.n3",
    GRAPHS_HTTP + "AarhusCulturalEvents.rdf": "AarhusCulturalEvents.n3",
    GRAPHS_HTTP + "AarhusLibraryEvents.rdf": "AarhusLibraryEvents.n3",
    "culturalevents": "AarhusCulturalEvents.n3",
    "libraryevents": "AarhusLibraryEvents.n3",
}


def windows(text: str) -> dict[str, int]:
    """Stream IRI -> RANGE in ms, as written (every STEP is 1 s, CQELS's default too)."""
    return {m.group(1): int(m.group(2)) * UNITS[m.group(3).lower()] for m in WINDOW.finditer(text)}


def _where(sparql: str) -> tuple[int, int]:
    opened = re.search(r"(?i)\bwhere\s*\{", sparql).end()
    depth = 1
    for i in range(opened, len(sparql)):
        depth += {"{": 1, "}": -1}.get(sparql[i], 0)
        if depth == 0:
            return opened, i
    raise ValueError("unbalanced WHERE")


def _stream_side(sparql: str, ranges: dict[str, int]) -> str:
    begin, end = _where(sparql)
    body = sparql[begin:end]
    chosen, depth, opened, previous = [], 0, 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
            opened = i if depth == 1 else opened
        elif c == "}":
            depth -= 1
            if depth == 0:
                head, text, previous = body[previous:opened], body[opened : i + 1], i + 1
                if any(f"<{s}>" in head or f"<{s}>" in text for s in ranges):
                    graph = re.search(r"(?i)GRAPH\s*<[^>]+>\s*$", head)
                    chosen.append((graph.group(0) if graph else "") + text)
    return "SELECT * WHERE { " + " ".join(chosen) + " }"


def _with_values(sparql: str, rows: list[dict]) -> str:
    from rdflib import BNode

    names = sorted({k for row in rows for k in row})
    names = [n for n in names if not any(isinstance(row.get(n), BNode) for row in rows)]
    distinct = sorted({tuple(row.get(n) for n in names) for row in rows}, key=str)
    cells = " ".join("(" + " ".join(v.n3() if v is not None else "UNDEF" for v in r) + ")" for r in distinct)
    values = f"VALUES ({' '.join('?' + n for n in names)}) {{ {cells} }} " if names else ""
    if not rows:  # no stream-side solution: none at all (rdflib reads no VALUES without a variable)
        values = "VALUES ?none_at_all { } "
    begin, _end = _where(sparql)
    return sparql[:begin] + " " + values + sparql[begin:]


def evaluate(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload``: the query ``text``, its ``dialect``, the ``data`` folder (convert.py's output) and the
    stream ``files`` by IRI. Returns the static load time, each instant's time and its answer rows."""
    from rdflib import BNode, Dataset, Graph, Literal, URIRef

    from rsp.io.ntriples import read_triple_file

    def term(x: str, scope: str):
        if x.startswith("<"):
            return URIRef(x[1:-1])
        if x.startswith("_:"):
            return BNode(f"{scope}_{x[2:]}")
        lexical, _, rest = x[1:].rpartition('"')
        return Literal(lexical, datatype=URIRef(rest[3:-1])) if rest.startswith("^^<") else Literal(lexical)

    text, dialect, data = payload["text"], payload["dialect"], Path(payload["data"])
    began = time.perf_counter()
    parsed: dict[str, Graph] = {}

    def static(name: str) -> Graph:
        if name not in parsed:
            parsed[name] = Graph().parse(data / name, format="n3")
        return parsed[name]

    ranges = windows(text)
    if dialect == "csparql":
        sparql = FROM.sub(" ", WINDOW.sub(" ", text))
        source: Any = Graph()
        for _named, iri in FROM.findall(text):
            source += static(STATIC_OF[iri])
        targets = dict.fromkeys(ranges, source)
    else:
        sparql = FROM.sub(" ", WINDOW.sub(lambda m: f"GRAPH <{m.group(1)}>", text))
        source = Dataset()
        repository = static("SensorRepository.n3")
        source.default_graph += repository
        targets = {iri: source.graph(URIRef(iri)) for iri in ranges}
        for _named, iri in FROM.findall(text):
            targets[iri] = source.graph(URIRef(iri))
            targets[iri] += static(STATIC_OF[iri])
        for graph in targets.values():
            graph += repository
    side = _stream_side(sparql, ranges)
    load = time.perf_counter() - began
    elements = {
        iri: [(t, tuple(term(x, iri) for x in tr)) for t, trs in read_triple_file(path) for tr in trs]
        for iri, path in payload["files"].items()
    }
    last = max(t for items in elements.values() for t, _ in items)
    rows, spent = {}, []
    for t in range(1000, last // 1000 * 1000 + 2000, 1000):
        began = time.perf_counter()
        added = []
        for iri, omega in ranges.items():
            graph = targets[iri]
            for at, triple in elements[iri]:
                if t - omega <= at < t and triple not in graph:
                    graph.add(triple)
                    added.append((graph, triple))
        if side == "SELECT * WHERE {  }":  # no stream block: the patterns are all in one group
            result = source.query(sparql)
        else:
            found = [{str(k): v for k, v in row.asdict().items()} for row in source.query(side)]
            result = source.query(_with_values(sparql, found))
        rows[t] = 1 if result.type == "ASK" else sum(1 for _ in result)
        for graph, triple in added:
            graph.remove(triple)
        spent.append(time.perf_counter() - began)
    return {"load": load, "instant_s": spent, "rows": rows}
