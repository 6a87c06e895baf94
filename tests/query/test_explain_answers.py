"""Explanations of answers (``QueryHandle.explain``, ``rsp run --explain``, ``rsp lars --explain``): every
explanation cites only stream elements that were in the window at that instant and rules of the compiled
program, and evaluating just the cited rules over just the cited elements (with the naive reference
evaluator) gives the answer again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_cases import GOLDEN, case_names
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lars_naive import evaluate_sets
from paths import ROOT

from rsp.cli import main
from rsp.engine import Engine as LarsEngine
from rsp.io.atoms import AtomStream, read_atom_stream
from rsp.io.ntriples import read_triple_file
from rsp.lars import check, load
from rsp.lars.model import Atom, Head, Program, Rule
from rsp.query.answers.algebra import ExpressionCache, Instant, construct
from rsp.query.syntax import ast
from rsp.runtime import Engine

EX = "http://ex.org/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
W3C_IDS = {"cax-sco", "rdfs9", "rdfs2", "rdfs3", "rdfs7", "prp-trp", "prp-dom", "prp-rng", "prp-spo1", "prp-symp"}


def iri(name: str) -> str:
    return f"<{EX}{name}>"


def stream_file(tmp_path: Path, elements: list[tuple[int, tuple[str, str, str]]]) -> Path:
    path = tmp_path / "stream.nt"
    path.write_text("".join(f"{s} {p} {o} . # {t}\n" for t, (s, p, o) in elements))
    return path


ONTOLOGY = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:Car rdfs:subClassOf ex:Vehicle .
ex:Vehicle rdfs:subClassOf ex:Thing .
ex:isIn a owl:TransitiveProperty .
ex:station1 ex:isIn ex:city1 .
"""


def rederive(handle, explanation) -> set[tuple[str, tuple]]:
    """The query's table rows at the current time point, computed by the naive evaluator from the
    explanation's rules, its static triples and its stream triples only."""
    tr = handle.translation
    facts = [
        Rule(Head(Atom(pred, triple)))
        for triple in explanation.static_triples()
        for pred in {*tr.graphs.values(), *tr.slot_graphs.values()}
    ]
    program = check(Program(tuple(explanation.rules()) + tuple(facts)))
    preds = dict(tr.streams)
    elements = [
        (time // tr.slot, preds[stream], triple) for stream, triple, time in explanation.stream_triples()
    ]
    lars = handle.lars
    stream = AtomStream.from_elements(sorted(elements, key=repr), start=lars.t1, end=lars.t)
    return dict(evaluate_sets(program, stream))[lars.t]


def answers_from(handle, rows: set[tuple[str, tuple]]):
    """The query's answer over the given table rows (the algebra above the patterns, as at emission)."""
    by_pred: dict[str, set] = {}
    for pred, args in rows:
        by_pred.setdefault(pred, set()).add(args)
    instant = Instant(handle.translation, lambda p: by_pred.get(p, set()), handle.compilers, ExpressionCache())
    form = handle.query.form
    if isinstance(form, ast.Select):
        return [{k: v for k, v in s.items()} for s in instant.select(form)]
    if isinstance(form, ast.Construct):
        return construct(form.template, instant.group(form.where), [0])
    return bool(instant.group(form.where))


def check_query(
    tmp_path: Path,
    text: str,
    elements: list[tuple[int, tuple[str, str, str]]],
    entailment: str = "none",
    *,
    ontology: bool = False,
) -> int:
    """Run the query over the stream and check every answer's explanation; returns how many."""
    path = stream_file(tmp_path, elements)
    in_file = {(t, triple) for t, triple in elements}
    engine = Engine(entailment=entailment, explain=True)
    if ontology:
        (tmp_path / "onto.ttl").write_text(ONTOLOGY)
        engine.load_ontology(tmp_path / "onto.ttl")
    handle = engine.register(text, str(tmp_path / "q.rq"))
    window = handle.query.windows[0]
    compiled = set(handle.rules())
    checked = [0]

    def on_result(result) -> None:
        explanations = handle.explain_result(result, limit=None)
        answers = (
            result.bindings
            if result.bindings is not None
            else result.triples
            if result.triples is not None
            else [True] * bool(result.boolean)
        )
        assert len(explanations) == len({json.dumps(a, sort_keys=True) for a in answers})
        for explanation in explanations:
            assert explanation.time == result.time
            assert explanation.steps, explanation
            for stream, triple, time in explanation.stream_triples():
                assert stream == window.stream
                assert (time, triple) in in_file, (time, triple)
                if window.range:
                    assert result.time - window.range <= time < result.time, (time, result.time)
            for rule in explanation.rules():
                assert rule in compiled, rule
                if rule.origin.position is None:
                    assert str(rule.origin) in W3C_IDS, rule.origin
            again = answers_from(handle, rederive(handle, explanation))
            if isinstance(explanation.answer, dict):
                assert explanation.answer in again, (explanation.answer, again)
            elif isinstance(explanation.answer, str):
                assert explanation.answer in again
            else:
                assert again is True
            checked[0] += 1

    handle.subscribe(on_result)
    for time_, triples in read_triple_file(path):
        engine.push(triples, time_)
    engine.close()
    return checked[0]


def chain_stream(n: int = 12) -> list[tuple[int, tuple[str, str, str]]]:
    out = []
    for k in range(n):
        out.append((k * 700, (iri(f"a{k % 4}"), iri("p"), iri(f"b{k % 3}"))))
        out.append((k * 700 + 300, (iri(f"b{k % 3}"), iri("q"), f'"{k * 10}"^^<http://www.w3.org/2001/XMLSchema#integer>')))
    return out


PREFIX = f"PREFIX ex: <{EX}>\n"


def test_plain_bgp(tmp_path: Path) -> None:
    text = (
        "REGISTER QUERY Join AS\n" + PREFIX + "SELECT ?a ?b ?v\n"
        f"FROM STREAM <{EX}s> [RANGE 3s STEP 1s]\n"
        "WHERE { ?a ex:p ?b . ?b ex:q ?v }"
    )
    assert check_query(tmp_path, text, chain_stream()) > 10


def test_filter_and_aggregate(tmp_path: Path) -> None:
    text = (
        "REGISTER QUERY Big AS\n" + PREFIX + "SELECT ?b (COUNT(?v) AS ?n) (MAX(?v) AS ?top)\n"
        f"FROM STREAM <{EX}s> [RANGE 3s STEP 1s]\n"
        "WHERE { ?b ex:q ?v FILTER(?v >= 30) } GROUP BY ?b"
    )
    assert check_query(tmp_path, text, chain_stream()) > 5


def test_rdfs_subclass_cites_the_w3c_rule(tmp_path: Path) -> None:
    elements = [(k * 500, (iri(f"car{k % 3}"), RDF_TYPE, iri("Car"))) for k in range(10)]
    text = (
        "REGISTER QUERY Things AS\n" + PREFIX + "SELECT ?x\n"
        f"FROM STREAM <{EX}s> [RANGE 2s STEP 1s]\n"
        "WHERE { ?x a ex:Thing }"
    )
    assert check_query(tmp_path, text, elements, "rdfs", ontology=True) > 5
    engine = Engine(entailment="rdfs", explain=True)
    engine.load_ontology(tmp_path / "onto.ttl")
    handle = engine.register(text)
    engine.push([(iri("car1"), RDF_TYPE, iri("Car"))], 1500)
    engine.advance(2000)
    explanation = handle.explain({"x": iri("car1")})
    assert {str(r.origin) for r in explanation.rules()} & {"cax-sco", "rdfs9"}
    assert explanation.stream_triples() == [(f"<{EX}s>", (iri("car1"), RDF_TYPE, iri("Car")), 1500)]
    assert handle.explain({"x": iri("car2")}) is None
    with pytest.raises(Exception, match="current instant"):
        handle.explain({"x": iri("car1")}, time=1000)


def test_owl_rl_transitive_property(tmp_path: Path) -> None:
    elements = [
        (100, (iri("train1"), iri("isIn"), iri("station1"))),
        (900, (iri("train2"), iri("isIn"), iri("train1"))),
        (1800, (iri("bag"), iri("isIn"), iri("train2"))),
        (2600, (iri("train1"), iri("isIn"), iri("station2"))),
        (3900, (iri("station2"), iri("isIn"), iri("city2"))),
    ]
    text = (
        "REGISTER QUERY Where AS\n" + PREFIX + "SELECT ?x ?c\n"
        f"FROM STREAM <{EX}s> [RANGE 3s STEP 1s]\n"
        "WHERE { ?x ex:isIn ?c . FILTER(STRSTARTS(STR(?c), \"http://ex.org/city\")) }"
    )
    assert check_query(tmp_path, text, elements, "owlrl", ontology=True) > 5


def test_construct_and_ask(tmp_path: Path) -> None:
    construct_text = (
        "REGISTER STREAM Pairs AS\n" + PREFIX + "CONSTRUCT { ?a ex:reaches ?v }\n"
        f"FROM STREAM <{EX}s> [RANGE 2s STEP 1s]\n"
        "WHERE { ?a ex:p ?b . ?b ex:q ?v }"
    )
    assert check_query(tmp_path, construct_text, chain_stream()) > 5
    ask_text = (
        "REGISTER QUERY Any AS\n" + PREFIX + "ASK\n"
        f"FROM STREAM <{EX}s> [RANGE 2s STEP 1s]\n"
        "WHERE { ?a ex:p ?b . ?b ex:q ?v FILTER(?v > 50) }"
    )
    assert check_query(tmp_path, ask_text, chain_stream()) > 2


@pytest.mark.parametrize("op", ["BOX", "AT ?t"])
def test_box_and_at_windows(tmp_path: Path, op: str) -> None:
    elements = []
    for second in range(8):
        for room in ("r1", "r2"):
            if room == "r1" or second % 2 == 0:
                elements.append((second * 1000 + 200, (iri(room), iri("hot"), '"true"')))
    text = (
        "REGISTER QUERY Hot AS\n" + PREFIX + "SELECT *\n"
        f"FROM NAMED WINDOW ex:w ON <{EX}s> [RANGE 3s STEP 1s]\n"
        f'WHERE {{ WINDOW ex:w {op} {{ ?room ex:hot "true" }} }}'
    )
    assert check_query(tmp_path, text, elements) > 5


triple_elements = st.lists(
    st.tuples(
        st.integers(0, 5000),
        st.tuples(
            st.sampled_from([iri(f"n{k}") for k in range(4)]),
            st.sampled_from([iri("isIn"), iri("p")]),
            st.sampled_from([iri(f"n{k}") for k in range(4)]),
        ),
    ),
    min_size=1,
    max_size=12,
).map(sorted)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(elements=triple_elements)
def test_generated_streams_owl_rl(tmp_path: Path, elements) -> None:
    text = (
        "REGISTER QUERY Reach AS\n" + PREFIX + "SELECT ?x ?y\n"
        f"FROM STREAM <{EX}s> [RANGE 2s STEP 500ms]\n"
        "WHERE { ?x ex:isIn ?y . ?y ex:p ?z }"
    )
    check_query(tmp_path, text, elements, "owlrl", ontology=True)


# -- LARS programs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", case_names())
def test_lars_explanations_rederive_the_atom(name: str) -> None:
    program = load(GOLDEN / name / "program.lars")
    stream = read_atom_stream(GOLDEN / name / "stream.txt")
    elements = set(stream.elements)
    rules = set(program.program.rules)
    facts = tuple(program.program.facts)
    engine = LarsEngine(program)
    explained = 0
    for t in engine.run(stream):
        for pred, args in engine.output():
            derivation = engine.explain(pred, args)
            cited = derivation.stream_atoms()
            for time, p, a in cited:
                assert engine.t1 <= time <= t and (time, p, a) in elements
            assert set(derivation.rules()) <= rules
            subset = check(Program(tuple(derivation.rules()) + facts))
            # a tuple window's range depends on the elements that fill it, so it is replayed whole
            sizes = [
                lit.window.size
                for rule in derivation.rules()
                for lit in rule.positive_atoms() + rule.negative_atoms()
                if lit.window is not None and lit.window.tuple_based
            ]
            if sizes:
                arrived = [e for e in stream.elements if e[0] <= t]
                cited = [e for e in cited if e not in arrived[-max(sizes) :]] + arrived[-max(sizes) :]
            replay = AtomStream.from_elements(sorted(cited, key=lambda e: e[0]), start=engine.t1, end=t)
            assert (pred, args) in dict(evaluate_sets(subset, replay))[t], derivation
            explained += 1
    assert explained > 0


# -- the command line ------------------------------------------------------------------------------------


def test_run_explain_jsonl_cites_the_stream_file(capsys) -> None:
    building = ROOT / "examples" / "building"
    code = main(
        [
            "run", str(building / "hot-rooms.rq"), "--stream", str(building / "temperatures.nt"),
            "--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs", "--explain",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    lines = {}
    for time_, triples in read_triple_file(building / "temperatures.nt"):
        for triple in triples:
            lines.setdefault(" ".join(triple) + " .", set()).add(time_)
    explained = 0
    for record in map(json.loads, out.splitlines()):
        assert len(record["explanations"]) == len(record["bindings"])
        for explanation in record["explanations"]:
            assert explanation["answer"] in record["bindings"]
            assert {r["origin"] for r in explanation["rules"]} <= {
                f"{building / 'hot-rooms.rq'}:7:1",
                f"{building / 'hot-rooms.rq'}:9:3",
            }
            for cited in explanation["triples"]:
                assert cited["time"] in lines[cited["triple"]]
                assert record["time"] - 10000 <= cited["time"] < record["time"]
            explained += 1
    assert explained >= 4


def test_run_explain_text_is_a_tree_with_prefixed_names(capsys) -> None:
    building = ROOT / "examples" / "building"
    main(
        [
            "run", str(building / "hot-rooms.rq"), "--stream", str(building / "temperatures.nt"),
            "--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs",
            "--explain", "--format", "text",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert "why ?room=ex:r102 ?max=30.8 ?readings=4:" in out
    assert "    pattern hot-rooms.rq:9:3: ?obs=ex:obs" in out
    assert "ex:madeBySensor ex:t2  [stream <http://example.org/building/temperatures> @ " in out
    assert "ms, window hot-rooms.rq:7:1]" in out
    assert "ex:t2 ex:isHostedBy ex:r102  [static graph]" in out
    assert "FILTER(?v > 28)  [?v = " in out


def test_explain_refuses_formats_without_room_for_it(capsys, tmp_path: Path) -> None:
    building = ROOT / "examples" / "building"
    code = main(["run", str(building / "hot-rooms.rq"), "--stream", str(building / "temperatures.nt"),
                 "--format", "csv", "--explain"])  # fmt: skip
    assert code == 2 and "--explain needs --format" in capsys.readouterr().err
    code = main(["lars", str(GOLDEN / "chain/program.lars"), "--stream", str(GOLDEN / "chain/stream.txt"),
                 "--format", "count", "--explain"])  # fmt: skip
    assert code == 2 and "--explain needs --format" in capsys.readouterr().err


def test_lars_explain_jsonl_and_text(capsys) -> None:
    args = ["lars", str(GOLDEN / "laser_join/program.lars"), "--stream", str(GOLDEN / "laser_join/stream.txt")]
    assert main([*args, "--explain"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    at_40 = next(r for r in records if r["time"] == 40)
    q1 = next(e for e in at_40["explanations"] if e["atom"] == "q1(x3,z)")
    assert q1["rules"] == [{"rule": "q1(A,C) :- [3] <> a(A,B), [#3] <> b(B,C).",
                            "origin": f"{GOLDEN / 'laser_join/program.lars'}:9:1"}]  # fmt: skip
    assert {"atom": "a(x3,y)", "time": 40} in q1["stream"] and {"atom": "b(y,z)", "time": 38} in q1["stream"]
    assert all(len(r["explanations"]) == len(r["atoms"]) for r in records)
    assert main([*args, "--explain", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "    40 | " in out and "         q1(x3,z) @ 40  by q1(A,C) :- [3] <> a(A,B), [#3] <> b(B,C)." in out


def test_static_triples_the_ontology_entails_are_explained_by_their_w3c_rule() -> None:
    """An answer resting on a type the ontology gives (r102 is a MeetingRoom, hence a Room) shows the
    background rule that derived it when the static data was closed, with its static premises; running
    that rule over those premises derives the triple again."""
    from rsp.query.answers.explain import Kind

    building = ROOT / "examples" / "building"
    engine = Engine(entailment="rdfs", explain=True)
    engine.load_ontology(ROOT / "ontologies" / "building.ttl")
    handle = engine.register((building / "hot-rooms.rq").read_text(), str(building / "hot-rooms.rq"))
    derived_steps = []

    def on_result(result) -> None:
        for explanation in handle.explain_result(result, limit=None):
            assert set(explanation.rules()) <= set(handle.rules())
            for step in explanation.walk():
                if step.kind is Kind.STATIC and step.rule is not None:
                    derived_steps.append(step)
                    assert step.rule in explanation.static_rules()

    handle.subscribe(on_result)
    for time, triples in read_triple_file(building / "temperatures.nt"):
        engine.push(triples, time)
    engine.close()
    assert derived_steps
    assert {str(step.rule.origin) for step in derived_steps} <= W3C_IDS
    for step in derived_steps:
        facts = [Rule(Head(Atom("g", child.triple))) for child in step.children if child.triple]
        lars = LarsEngine(check(Program((step.rule, *facts))))
        lars.step(0)
        assert step.triple in lars.facts[("g", 3)].now, step.triple
