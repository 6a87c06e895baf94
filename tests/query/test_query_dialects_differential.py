"""Generated differential tests of the dialect constructs that change what a query means (issue 14):
RSP-QL window variables (``WINDOW ?w``), static named graphs (``FROM NAMED <g>`` with ``GRAPH ?g`` and
``GRAPH <g>``), C-SPARQL's ``f:timestamp(?s, ?p, ?o)`` and ``[TRIPLES n]`` windows on several streams.
At every instant rsp's answers must equal the rdflib reference (tests/oracles/query_oracle.py), which reads
``WINDOW ?w`` as ``GRAPH ?w`` over a dataset whose named graphs are the windows and the static graphs,
and ``f:timestamp`` from the window elements (the latest one holding the triple)."""

from __future__ import annotations

from pathlib import Path

import pytest
import query_oracle
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT
from query_golden import GOLDEN_QUERIES, case_files, oracle, records, same_answers
from test_query_differential import (
    _STATIC,
    A_STREAM,
    B_STREAM,
    ONTOLOGY_PATH,
    PREFIX,
    REGIMES,
    _from,
    rsp_arrivals,
    stream_file,
)

from rsp.runtime import Engine

ABOUT = "found by make fuzz (tests/query/test_query_dialects_differential.py); expected answers from tests/oracles/query_oracle.py"
F = "PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>\n"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def _q(streams: str, body: str, head: str = "SELECT *", tail: str = "") -> str:
    return f"REGISTER QUERY T AS\n{PREFIX}{F}{head}\n{streams}WHERE {{ {body} }}{tail}"


NAMED_AB = _from(A_STREAM, name="ex:wa") + _from(B_STREAM, "[RANGE 1s STEP 1s]", "ex:wb")
WINDOW_VARIABLES = {
    "window-var": _q(NAMED_AB, "WINDOW ?w { ?v ex:at ?s }"),
    "window-var-and-default": _q(
        _from(A_STREAM, "[RANGE 3s STEP 1s]") + NAMED_AB, "?v ex:speed ?sp WINDOW ?w { ?v ex:at ?s }"
    ),
    "window-var-twice": _q(NAMED_AB, "WINDOW ?w { ?v ex:at ?s } WINDOW ?w { ?v a ex:Vehicle }"),
    "window-var-filter": _q(NAMED_AB, "WINDOW ?w { ?v ?p ?o } FILTER(?w != ex:wa)", "SELECT ?w ?v"),
    "window-var-count": _q(NAMED_AB, "WINDOW ?w { ?v ?p ?o }", "SELECT ?w (COUNT(*) AS ?n)", " GROUP BY ?w"),
    "window-var-optional": _q(
        _from(A_STREAM) + NAMED_AB, "?v a ex:Vehicle OPTIONAL { WINDOW ?w { ?v ex:delay ?d } }"
    ),
}
TIMESTAMPS = {
    "ts-bind": _q(_from(A_STREAM), "?v ?p ?o BIND(f:timestamp(?v, ?p, ?o) AS ?t)"),
    "ts-filter": _q(
        _from(A_STREAM, "[RANGE 3s STEP 1s]"),
        "?v ex:at ?s . ?v ex:speed ?sp FILTER(f:timestamp(?v, ex:at, ?s) > f:timestamp(?v, ex:speed, ?sp))",
    ),
    # an entailed triple (rdfs, owlrl) is held by no element: no time, ?t unbound
    "ts-entailed": _q(_from(A_STREAM), f"?v a ex:Vehicle BIND(f:timestamp(?v, {TYPE}, ex:Vehicle) AS ?t)"),
    "ts-aggregate": _q(
        _from(A_STREAM, "[RANGE 3s STEP 1s]"),
        "?v ex:at ?s",
        "SELECT ?v (MAX(f:timestamp(?v, ex:at, ?s)) AS ?last)",
        " GROUP BY ?v",
    ),
    "ts-count-window": _q(_from(A_STREAM, "[TRIPLES 3]"), "?v ?p ?o BIND(f:timestamp(?v, ?p, ?o) AS ?t)"),
    "ts-two-streams": _q(
        _from(A_STREAM) + _from(B_STREAM, "[TRIPLES 2]"), "?v ?p ?o BIND(f:timestamp(?v, ?p, ?o) AS ?t)"
    ),
    "ts-named-window": _q(
        _from(A_STREAM, "[RANGE 1s STEP 1s]") + _from(B_STREAM, "[RANGE 3s STEP 1s]", "ex:w"),
        "WINDOW ex:w { ?v ex:at ?s } BIND(f:timestamp(?v, ex:at, ?s) AS ?t)",
    ),
    "count-windows-two-streams": _q(
        _from(A_STREAM, "[TRIPLES 2]") + _from(B_STREAM, "[TRIPLES 3]"), "?v ?p ?o", "SELECT ?v ?p ?o"
    ),
}


def check_arrivals(text: str, files: list[tuple[str, list]], regime: str) -> None:
    with saved_on_failure(GOLDEN_QUERIES, lambda: case_files(text, files, regime, ONTOLOGY_PATH, ABOUT)):
        expected, late = oracle(text, files, regime, _STATIC)
        ours, our_late = rsp_arrivals(text, files, regime)
        assert our_late == late, "late elements"
        same_answers(ours, records(text, expected), ordered=False)


@pytest.mark.generated
@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(stream_file(st.just(False)), min_size=2, max_size=2),
    st.sampled_from(sorted(WINDOW_VARIABLES)),
    REGIMES,
)
def test_generated_window_variables(files, name: str, regime: str) -> None:
    """``WINDOW ?w { P }`` ranges over the named windows and binds ?w, like SPARQL's GRAPH ?g."""
    check_arrivals(WINDOW_VARIABLES[name], list(zip([A_STREAM, B_STREAM], files, strict=True)), regime)


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(stream_file(st.just(False)), min_size=2, max_size=3),
    st.sampled_from(sorted(TIMESTAMPS)),
    REGIMES,
)
def test_generated_timestamps_and_count_windows(files, name: str, regime: str) -> None:
    """f:timestamp is the time of the latest window element holding the triple (two or three files:
    the same triple often comes at several times); [TRIPLES n] windows count per stream."""
    text = TIMESTAMPS[name]
    streams = [A_STREAM, B_STREAM if B_STREAM in text else A_STREAM, A_STREAM]  # only streams it reads
    check_arrivals(text, list(zip(streams, files, strict=False)), regime)


# -- static named graphs: FROM NAMED <g> with GRAPH ?g / GRAPH <g> ------------------------------------------

EX = "http://example.org/t#"
GRAPHS = {
    f"{EX}g1": [(f"<{EX}v0>", f"<{EX}owner>", f"<{EX}ann>"), (f"<{EX}v1>", f"<{EX}owner>", f"<{EX}bob>"),
                (f"<{EX}s1>", f"<{EX}isIn>", f"<{EX}region>")],
    f"{EX}g2": [(f"<{EX}v2>", f"<{EX}owner>", f"<{EX}ann>"), (f"<{EX}v0>", TYPE, f"<{EX}Bus>"),
                (f"<{EX}v1>", f"<{EX}owner>", f"<{EX}bob>")],
}  # fmt: skip
FROM_NAMED = f"FROM NAMED <{EX}g1>\nFROM NAMED <{EX}g2>\n"
STATIC_GRAPHS = {
    "graph-var": _q(_from(A_STREAM) + FROM_NAMED, "?v ex:at ?s . GRAPH ?g { ?v ex:owner ?o }"),
    "graph-iri": _q(_from(A_STREAM) + FROM_NAMED, "?v ex:speed ?sp . GRAPH ex:g1 { ?v ex:owner ?o }"),
    # the named graph's closure: v0 a Bus in g2 makes v0 a Vehicle there (rdfs, owlrl)
    "graph-var-entailment": _q(_from(A_STREAM) + FROM_NAMED, "?v ex:at ?s . GRAPH ?g { ?v a ex:Vehicle }"),
    "graph-var-over-windows-too": _q(
        _from(A_STREAM, name="ex:wa") + FROM_NAMED, "GRAPH ?g { ?v ex:owner ?o } GRAPH ?h { ?v ex:at ?s }"
    ),
    "graph-var-optional-count": _q(
        _from(A_STREAM) + FROM_NAMED,
        "?v ex:at ?s OPTIONAL { GRAPH ?g { ?v ex:owner ?o } }",
        "SELECT ?g (COUNT(*) AS ?n)",
        " GROUP BY ?g",
    ),
}


@pytest.fixture(scope="module")
def graph_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("graphs")
    files = {}
    for index, (iri, triples) in enumerate(GRAPHS.items()):
        files[iri] = folder / f"g{index}.nt"
        files[iri].write_text("".join(f"{s} {p} {o} .\n" for s, p, o in triples), encoding="utf-8")
    return files


def _rsp_with_graphs(text: str, elements, regime: str, files: dict[str, Path]) -> list[dict]:
    engine = Engine(entailment=regime)
    engine.load_ontology(ROOT / ONTOLOGY_PATH)
    for iri, path in files.items():
        engine.add_graph(iri, path)
    query = engine.register(text)
    for time, triple in elements:
        engine.push([triple], time, A_STREAM)
    engine.close()
    return [{"time": r.time, "bindings": r.bindings} for r in query]


def _case_with_graphs(text: str, elements, regime: str) -> dict[str, str]:
    """A golden case (tests/support/query_golden.py) with the named graphs as files of its own."""
    import json

    graphs = {f"<{iri}>": triples for iri, triples in GRAPHS.items()}
    expected, late = oracle(text, [(A_STREAM, elements)], regime, _STATIC, graphs)
    files = case_files(text, [(A_STREAM, elements)], regime, ONTOLOGY_PATH, ABOUT)
    case = json.loads(files["case.json"])
    case["graphs"] = {iri: f"graph{i}.nt" for i, iri in enumerate(GRAPHS)}
    files["case.json"] = json.dumps(case, indent=2) + "\n"
    for i, triples in enumerate(GRAPHS.values()):
        files[f"graph{i}.nt"] = "".join(f"{s} {p} {o} .\n" for s, p, o in triples)
    files["expected.jsonl"] = "".join(json.dumps(r) + "\n" for r in records(text, expected))
    return files


@pytest.mark.generated
@settings(max_examples=examples(30), deadline=None)
@given(stream_file(st.just(False)), st.sampled_from(sorted(STATIC_GRAPHS)), REGIMES)
def test_generated_static_named_graphs(graph_files, elements, name: str, regime: str) -> None:
    """``GRAPH ?g`` ranges over the FROM NAMED graphs (each the closure of the static data and its own
    triples) and the named windows; ``GRAPH <g>`` reads one of them."""
    text = STATIC_GRAPHS[name]
    graphs = {f"<{iri}>": triples for iri, triples in GRAPHS.items()}
    with saved_on_failure(GOLDEN_QUERIES, lambda: _case_with_graphs(text, elements, regime)):
        expected, _late = oracle(text, [(A_STREAM, elements)], regime, _STATIC, graphs)
        ours = _rsp_with_graphs(text, elements, regime, graph_files)
        same_answers(ours, records(text, expected), ordered=False)


def test_the_reference_reads_timestamps_from_the_window() -> None:
    """The oracle's f:timestamp on a hand-checked stream: the same triple at 200 and 700 ms, the window
    [0, 1000) holds both (700, the latest), the window [1000, 2000) only the one at 1200."""
    a, p, b = f"<{EX}a>", f"<{EX}at>", f"<{EX}b>"
    text = _q(_from(A_STREAM, "[RANGE 1s STEP 1s]"), "?v ex:at ?s BIND(f:timestamp(?v, ex:at, ?s) AS ?t)")
    arrivals = [(200, A_STREAM, 0, (a, p, b)), (700, A_STREAM, 0, (a, p, b)), (1200, A_STREAM, 0, (a, p, b))]
    windows = [(None, A_STREAM, 1000, None)]
    answers, _late = query_oracle.run_arrivals(text, windows, arrivals, [], "none", 1000)
    integer = "^^<http://www.w3.org/2001/XMLSchema#integer>"
    expected = [
        (1000, [{"v": a, "s": b, "t": f'"700"{integer}'}]),
        (2000, [{"v": a, "s": b, "t": f'"1200"{integer}'}]),
    ]
    assert answers == expected
    ours, _late = rsp_arrivals(text, [(A_STREAM, [(t, triple) for t, _s, _i, triple in arrivals])], "none")
    assert [(r["time"], r["bindings"]) for r in ours] == expected
