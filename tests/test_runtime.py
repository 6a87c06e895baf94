"""The Python API and the pieces of the query runtime not covered by the differential tests: output
policies (ISTREAM, DSTREAM), COMPUTE EVERY, FROM <g> static graphs, subscribe/advance, late elements."""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib

from rsp.errors import RspError, StreamError
from rsp.runtime import Engine

P = "<http://ex.org/p>"
STREAM = "<http://ex.org/s>"


def triple(s: str, o: str = "<http://ex.org/o>") -> tuple[str, str, str]:
    return (f"<http://ex.org/{s}>", P, o)


def run(text: str, elements, **engine_options):
    engine = Engine(**engine_options)
    query = engine.register(text)
    for time, triples in elements:
        engine.push(triples, time, STREAM)
    engine.close()
    return [(r.time, sorted(b["x"] for b in r.bindings)) for r in query]


ELEMENTS = [(100, [triple("a")]), (1100, [triple("b")]), (2100, [triple("b")]), (3500, [triple("c")])]


def query(policy: str = "QUERY", extra: str = "", window: str = "[RANGE 2s STEP 1s]") -> str:
    return f"REGISTER {policy} Q {extra} AS SELECT ?x FROM STREAM {STREAM} {window} WHERE {{ ?x {P} ?o }}"


def test_rstream_istream_dstream() -> None:
    x = "<http://ex.org/{}>".format
    rstream = run(query(), ELEMENTS)
    # b arrives twice inside [1000, 3000): the window's graph is a set, so b is one solution at 3000
    assert rstream == [(1000, [x("a")]), (2000, [x("a"), x("b")]), (3000, [x("b")]), (4000, [x("b"), x("c")])]
    assert run(query("ISTREAM"), ELEMENTS) == [
        (1000, [x("a")]),
        (2000, [x("b")]),
        (3000, []),
        (4000, [x("c")]),
    ]
    assert run(query("DSTREAM"), ELEMENTS) == [(1000, []), (2000, []), (3000, [x("a")]), (4000, [])]


def test_compute_every_sets_the_instants() -> None:
    results = run(query(extra="COMPUTE EVERY 500ms"), ELEMENTS)
    assert [t for t, _ in results] == list(range(500, 4001, 500))
    assert results[2] == (1500, ["<http://ex.org/a>", "<http://ex.org/b>"])  # window [-500, 1500)


def test_static_graph_from_a_local_file(tmp_path: Path) -> None:
    graph = tmp_path / "static.ttl"
    graph.write_text('<http://ex.org/a> <http://ex.org/label> "A" .\n')
    text = (
        f"REGISTER QUERY Q AS SELECT ?x ?l FROM <{graph.name}> FROM STREAM {STREAM} [RANGE 1s STEP 1s] "
        f"WHERE {{ ?x {P} ?o . ?x <http://ex.org/label> ?l }}"
    )
    engine = Engine()
    q = engine.register(text, str(tmp_path / "q.rq"))
    engine.push([triple("a"), triple("b")], 0, STREAM)
    engine.close()
    assert [r.bindings for r in q] == [[{"x": "<http://ex.org/a>", "l": '"A"'}]]
    with pytest.raises(RspError, match="no such local file"):
        Engine().register(text.replace(graph.name, "missing.ttl"), str(tmp_path / "q.rq"))


def test_subscribe_advance_and_rdflib_terms() -> None:
    engine = Engine()
    q = engine.register(query())
    seen = []
    q.subscribe(lambda r: seen.append((r.time, len(r.bindings))))
    engine.push(
        [(rdflib.URIRef("http://ex.org/a"), rdflib.URIRef("http://ex.org/p"), rdflib.Literal(3))], 100
    )
    assert seen == []  # the instant 1000 is not closed yet
    engine.advance(2000)
    assert seen == [(1000, 1), (2000, 1)]
    assert list(q)[0].bindings == [{"x": "<http://ex.org/a>"}]


def test_late_elements_are_dropped_or_fail() -> None:
    engine = Engine()
    q = engine.register(query())
    engine.push([triple("a")], 2500)
    engine.push([triple("b")], 3100)  # closes the instant 3000
    engine.push([triple("late")], 2900)  # older than the last closed instant: late
    engine.close()
    assert engine.late == 1
    assert all("late" not in str(r.bindings) for r in q)
    strict = Engine(late="fail")
    strict.register(query())
    strict.push([triple("a")], 2500)
    strict.push([triple("b")], 3100)
    with pytest.raises(StreamError, match="late element at 2900"):
        strict.push([triple("late")], 2900)


def test_engine_is_exported_from_the_package() -> None:
    import rsp

    assert rsp.Engine is Engine
