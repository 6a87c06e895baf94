"""The Python API and the pieces of the query runtime not covered by the differential tests: output
policies (ISTREAM, DSTREAM), COMPUTE EVERY, FROM <g> static graphs, subscribe/advance, late elements."""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# -- push_sorted: a bulk push equals pushing each time on its own ------------------------------------------
T_STREAM = "<http://ex.org/t>"
BULK_QUERIES = [
    f"REGISTER QUERY A AS SELECT ?x ?o FROM STREAM {STREAM} [RANGE 2s STEP 1s] WHERE {{ ?x {P} ?o }}",
    # instants at multiples of 300 ms fall inside 500 ms slots
    f"REGISTER ISTREAM B COMPUTE EVERY 300ms AS SELECT ?x FROM STREAM {STREAM} [RANGE 1s STEP 500ms] "
    f"WHERE {{ ?x {P} ?o }}",
    f"REGISTER QUERY C AS SELECT ?x FROM STREAM {STREAM} [TRIPLES 3] WHERE {{ ?x {P} ?o }}",
    f"REGISTER QUERY D AS SELECT (COUNT(*) AS ?n) FROM STREAM {STREAM} [RANGE 1s STEP 1s] "
    f"FROM STREAM {T_STREAM} [RANGE 2s STEP 1s] WHERE {{ ?x {P} ?o }}",
]
# calls of push_sorted: a stream, a base time (a later call may go back: late elements) and elements
BULK_CALLS = st.lists(
    st.tuples(
        st.sampled_from([STREAM, T_STREAM]),
        st.integers(0, 4000),
        st.lists(st.tuples(st.integers(0, 400), st.sampled_from("abcde"), st.sampled_from("uvw"))),
    ),
    max_size=8,
)


def _bulk_run(calls, bulk: bool, explain: bool):
    engine = Engine(explain=explain)
    late = []
    engine.on_late = lambda time, triple: late.append((time, triple))
    queries = [engine.register(text) for text in BULK_QUERIES]
    for stream, base, elements in calls:
        timed = [(base + offset, triple(s, f"<http://ex.org/{o}>")) for offset, s, o in sorted(elements)]
        if bulk:
            engine.push_sorted([t for t, _ in timed], [x for _, x in timed], stream)
        else:
            for time in sorted({t for t, _ in timed}):
                engine.push([x for t, x in timed if t == time], time, stream)
    engine.close()
    results = [[(r.time, sorted(map(str, r.bindings))) for r in q] for q in queries]
    kept = [(q._element_times, list(q._element_order)) for q in queries]
    return results, engine.late, sorted(late), kept  # push_sorted reports late elements query by query


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=BULK_CALLS, explain=st.booleans())
def test_push_sorted_equals_pushing_each_time(calls, explain) -> None:
    bulk = _bulk_run(calls, True, explain)
    assert bulk == _bulk_run(calls, False, explain)
    assert any(bulk[0]) or not any(elements for _s, _b, elements in calls)


def test_push_sorted_checks_its_arguments() -> None:
    engine = Engine()
    engine.register(query())
    with pytest.raises(ValueError, match="2 times for 1 triples"):
        engine.push_sorted([1, 2], [triple("a")])
    engine.push_sorted([], [])  # nothing to do
    engine.close()


def test_an_older_element_of_another_stream_does_not_cut_the_last_instants() -> None:
    """The last instant reported is the first one after the newest element, whatever came last."""
    engine = Engine()
    both = engine.register(BULK_QUERIES[3])
    engine.push([triple("a")], 1500, STREAM)
    engine.push([triple("b")], 200, T_STREAM)  # no instant closed yet: not late
    engine.close()
    assert [r.time for r in both] == [2000]
    assert engine.late == 0
