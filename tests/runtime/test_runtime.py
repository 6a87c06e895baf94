"""The Python API and the pieces of the query runtime not covered by the differential tests: output
policies (ISTREAM, DSTREAM), COMPUTE EVERY, FROM <g> static graphs, subscribe/advance, late elements."""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp.errors import RspError, StreamError
from rsp.runtime import Engine

P = "<http://ex.org/p>"
STREAM = "<http://ex.org/s>"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"


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


def test_the_triples_of_one_push_are_elements_in_list_order() -> None:
    """push([b, c], 0) after an element at 2000, nothing closed yet: b moves the first instant back to
    1000 and closes 1000 and 2000 (the clock is 2000); c comes after them, late (DESIGN.md §3: each
    triple is an element). push_sorted and pushing each triple alone agree."""
    runs = []
    for how in ("push", "each", "sorted"):
        engine = Engine()
        q = engine.register(query())
        engine.push([triple("a")], 2000)
        if how == "push":
            engine.push([triple("b"), triple("c")], 0)
        elif how == "each":
            engine.push([triple("b")], 0)
            engine.push([triple("c")], 0)
        else:
            engine.push_sorted([0, 0], [triple("b"), triple("c")])
        engine.close()
        runs.append((engine.late, [(r.time, sorted(str(b) for b in r.bindings)) for r in q]))
    assert runs[0] == runs[1] == runs[2]
    late, results = runs[0]
    assert late == 1
    assert results[0][0] == 1000 and "http://ex.org/b" in str(results[0][1])
    assert "http://ex.org/c" not in str(results)


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
    kept = [(q.element_times, list(q._element_order)) for q in queries]
    return results, engine.late, sorted(late), kept  # push_sorted reports late elements query by query


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
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
    """The last instant reported is the first one after the newest element, whatever came last; the
    first is the first one after the earliest element (DESIGN.md §5), here the older one that came
    second, before any instant closed."""
    engine = Engine()
    both = engine.register(BULK_QUERIES[3])
    engine.push([triple("a")], 1500, STREAM)
    engine.push([triple("b")], 200, T_STREAM)  # no instant closed yet: not late
    engine.close()
    # at 1000: b (200) in T's [-1000, 1000); at 2000: a (1500) in S's [1000, 2000) and b in T's [0, 2000)
    counts = [(r.time, r.bindings[0]["n"]) for r in both]
    assert counts == [(1000, f'"1"^^{INT}'), (2000, f'"2"^^{INT}')]
    assert engine.late == 0


# -- SELECT *: every in-scope variable (SPARQL 1.1 §18.2.1) -------------------------------------------------
# Expected lists written from the spec's table of in-scope variables: BGP and path variables; a group,
# OPTIONAL and UNION take their parts'; BIND(e AS ?v) and VALUES add theirs; a sub-SELECT gives its
# projection; MINUS and FILTER (NOT) EXISTS add nothing; blank nodes of patterns are not variables to
# project. (rdflib differs on MINUS and FILTER NOT EXISTS: it projects ?m and ?ne.)
SELECT_STAR = [
    ("?s ?p ?o BIND(?o + 10 AS ?z)", ["s", "p", "o", "z"]),
    ("?s ?p ?o VALUES (?a ?b) { (1 2) }", ["s", "p", "o", "a", "b"]),
    ("?s ?p ?o OPTIONAL { ?s <http://ex.org/q> ?opt }", ["s", "p", "o", "opt"]),
    ("{ ?s <http://ex.org/p> ?x } UNION { ?s <http://ex.org/q> ?y }", ["s", "x", "y"]),
    ("?s ?p ?o MINUS { ?s <http://ex.org/q> ?m }", ["s", "p", "o"]),
    ("?s ?p ?o FILTER NOT EXISTS { ?s <http://ex.org/q> ?ne }", ["s", "p", "o"]),
    ("{ SELECT ?s (COUNT(*) AS ?c) WHERE { ?s ?p2 ?o2 } GROUP BY ?s } ?s ?p ?o", ["s", "c", "p", "o"]),
    ("{ SELECT * WHERE { ?s ?p2 ?o2 BIND(1 AS ?one) } }", ["s", "p2", "o2", "one"]),
    ("?s ?p [ <http://ex.org/q> ?r ] . _:x <http://ex.org/p> ?s", ["s", "p", "r"]),
]


@pytest.mark.parametrize(("where", "expected"), SELECT_STAR)
def test_select_star_projects_every_in_scope_variable(where: str, expected: list[str]) -> None:
    text = f"REGISTER QUERY Q AS SELECT * FROM STREAM {STREAM} [RANGE 1s STEP 1s] WHERE {{ {where} }}"
    handle = Engine().register(text)
    assert list(handle.variables) == expected


def test_select_star_with_a_bind_answers_and_names_it() -> None:
    """Issue 13: ``SELECT * WHERE { ?s ?p ?o BIND(?o+10 AS ?z) }`` had no z."""
    engine = Engine()
    where = "?s ?p ?o BIND(?o+10 AS ?z)"
    handle = engine.register(
        f"REGISTER QUERY Q AS SELECT * FROM STREAM {STREAM} [RANGE 1s STEP 1s] WHERE {{ {where} }}"
    )
    engine.push([triple("a", f'"5"^^{INT}')], 100, STREAM)
    engine.close()
    (result,) = list(handle)
    assert result.variables == ("s", "p", "o", "z")
    assert result.bindings == [{"s": "<http://ex.org/a>", "p": P, "o": f'"5"^^{INT}', "z": f'"15"^^{INT}'}]


# -- terms given to push and push_sorted are checked ---------------------------------------------------------
BAD_TERMS = [
    (("<http://ex.org/r1>", P, '"30'), "bad object '\"30': unterminated string literal"),
    (
        ("http://ex.org/r1", P, '"30"'),
        "bad subject 'http://ex.org/r1': an IRI is written in angle brackets: <http://ex.org/r1>",
    ),
    (("<http://ex.org/r1>", '"p"', '"30"'), "bad predicate '\"p\"': a literal cannot be the predicate"),
    (('"r1"', P, '"30"'), "bad subject '\"r1\"': a literal cannot be the subject"),
    (("<r1>", P, '"30"'), "bad subject '<r1>': relative IRI '<r1>' (N-Triples IRIs must be absolute)"),
    (("<http://ex.org/r1>", P, '"30" x'), "bad object '\"30\" x': unexpected text after the term: 'x'"),
    (("<http://ex.org/r1>", P, "_:"), "bad object '_:': bad blank node label '_:'"),
    (("<http://ex.org/r1>", P, 30), "the object 30 is not an RDF term"),
    (("<http://ex.org/r1>", P), "('<http://ex.org/r1>', '<http://ex.org/p>') has 2 terms, not 3"),
    (
        "<http://ex.org/r1> <http://ex.org/p> <http://ex.org/o> .",
        "expected a (subject, predicate, object) tuple",
    ),
]


@pytest.mark.parametrize(("bad", "message"), BAD_TERMS)
def test_push_refuses_malformed_terms(bad, message: str) -> None:
    engine = Engine()
    handle = engine.register(query())
    with pytest.raises(StreamError) as push_error:
        engine.push([triple("a"), bad], 500, STREAM)
    assert message in str(push_error.value)
    assert str(push_error.value).startswith("push: triple 2 at 500 ms: ")
    with pytest.raises(StreamError) as bulk_error:
        engine.push_sorted([500, 500], [triple("a"), bad], STREAM)
    assert str(bulk_error.value) == str(push_error.value).replace("push: ", "push_sorted: ", 1)
    engine.close()
    assert list(handle) == []  # nothing of a refused call was added


def test_push_error_names_the_expected_form_and_the_triple() -> None:
    engine = Engine()
    engine.register(query())
    with pytest.raises(StreamError) as error:
        engine.push([triple("a"), triple("b"), ("<http://ex.org/c>", P, '"30')], 500, STREAM)
    assert str(error.value) == (
        "push: triple 3 at 500 ms: bad object '\"30': unterminated string literal (expected an IRI, blank node "
        'or literal in N-Triples syntax, e.g. <http://ex.org/a>, _:b1, "text", "text"@en or '
        '"30"^^<http://www.w3.org/2001/XMLSchema#integer>)'
    )
    with pytest.raises(StreamError, match=r"push_sorted: triple 2 at 700 ms: bad subject 'x'"):
        engine.push_sorted([500, 700], [triple("a"), ("x", P, '"1"')], STREAM)
    with pytest.raises(
        StreamError, match="times must be in order, but element 2 at 400 ms comes after one at 500"
    ):
        engine.push_sorted([500, 400], [triple("a"), triple("b")], STREAM)
    with pytest.raises(StreamError, match="the time '500' is not an integer number of milliseconds"):
        engine.push([triple("a")], "500", STREAM)
    with pytest.raises(StreamError, match="the time -1 is negative"):
        engine.push([triple("a")], -1, STREAM)


def test_push_takes_rdflib_terms_in_n_triples_syntax() -> None:
    """rdflib terms are written as N-Triples (a multi-line literal too, which n3() would triple-quote)."""
    engine = Engine()
    handle = engine.register(query())
    o = rdflib.Literal("two\nlines", lang="en")
    engine.push([(rdflib.URIRef("http://ex.org/a"), rdflib.URIRef("http://ex.org/p"), o)], 100, STREAM)
    with pytest.raises(StreamError, match="the subject .*Variable.* is not an RDF term"):
        engine.push([(rdflib.Variable("x"), rdflib.URIRef("http://ex.org/p"), o)], 3000, STREAM)
    engine.close()  # (a push after close() is an error of its own)
    assert [r.bindings for r in handle] == [[{"x": "<http://ex.org/a>"}]]


def test_numpy_times_are_times() -> None:
    numpy = pytest.importorskip("numpy")
    engine = Engine()
    handle = engine.register(query())
    engine.push([triple("a")], numpy.int64(100), STREAM)
    engine.push_sorted(list(numpy.array([200, 300])), [triple("b"), triple("c")], STREAM)
    engine.close()
    assert [(r.time, sorted(b["x"] for b in r.bindings)) for r in handle] == [
        (1000, [f"<http://ex.org/{x}>" for x in "abc"])
    ]


def test_push_to_a_stream_no_query_reads_is_an_error() -> None:
    """Elements for a stream that no registered query reads would be lost without a word (the CLI
    refuses such a --stream): push and push_sorted refuse them and name the streams the queries read."""
    engine = Engine()
    handle = engine.register(query())
    for call in (
        lambda: engine.push([triple("a")], 100, "http://my.org/WRONG"),
        lambda: engine.push_sorted([100], [triple("a")], "<http://my.org/WRONG>"),
    ):
        with pytest.raises(
            StreamError,
            match=r"no registered query reads the stream <http://my.org/WRONG>: "
            r"the queries read <http://ex.org/s>",
        ):
            call()
    with pytest.raises(StreamError, match="no query is registered"):
        Engine().push([triple("a")], 100, STREAM)
    engine.push([triple("a")], 100, "http://ex.org/s")  # the IRI with or without brackets
    engine.close()
    assert [r.time for r in handle] == [1000]


def test_nothing_can_be_pushed_after_close() -> None:
    """close() ends the streams: a later push, push_sorted or advance is an error, not new instants."""
    engine = Engine()
    handle = engine.register(query())
    engine.push([triple("a")], 100, STREAM)
    engine.close()
    engine.close()  # closing again does nothing
    for call in (
        lambda: engine.push([triple("b")], 5000, STREAM),
        lambda: engine.push_sorted([5000], [triple("b")], STREAM),
        lambda: engine.advance(9000),
    ):
        with pytest.raises(StreamError, match=r"after close\(\): the streams have ended"):
            call()
    assert [r.time for r in handle] == [1000]
