"""The partitionability check of ``rsp spark --partition-by``: which queries run as one engine per key,
how stream triples are keyed, and the reason given for each query that cannot."""

from __future__ import annotations

from collections import Counter

import pytest
from paths import ROOT

from rsp.background.vocab import RDF_TYPE
from rsp.errors import RspError
from rsp.query.syntax.parser import parse_query
from rsp.query.translation.partition import partition_plan
from rsp.runtime import Engine

HEAD = "REGISTER QUERY Q AS\nPREFIX ex: <http://ex.org/>\n"
WINDOW = "FROM STREAM <http://ex.org/s> [RANGE 5s STEP 1s]\n"


def query(select: str, where: str, tail: str = "", window: str = WINDOW):
    return parse_query(f"{HEAD}{select}\n{window}WHERE {{ {where} }}\n{tail}")


def test_a_per_vehicle_query_is_keyed_by_subject_or_object() -> None:
    q = query(
        "SELECT ?v (COUNT(?s) AS ?n)",
        "?v ex:speed ?s . ?v ex:at ?p . ?d ex:drives ?v OPTIONAL { ?v ex:delay ?x } "
        "FILTER NOT EXISTS { ?v ex:broken ?b }",
        "GROUP BY ?v",
    )
    plan = partition_plan(q, "?v")
    assert plan.by_subject == ["<http://ex.org/at>", "<http://ex.org/broken>", "<http://ex.org/delay>",
                               "<http://ex.org/speed>"]  # fmt: skip
    assert plan.by_object == ["<http://ex.org/drives>"]
    assert plan.key("<http://ex.org/bus1>", "<http://ex.org/speed>", '"3"') == "<http://ex.org/bus1>"
    assert plan.key("<http://ex.org/ann>", "<http://ex.org/drives>", "<http://ex.org/bus1>") == "<http://ex.org/bus1>"
    assert plan.key("<http://ex.org/bus1>", "<http://ex.org/colour>", '"red"') is None  # matches no pattern
    assert partition_plan(query("SELECT *", "?v ex:speed ?s"), "v").var == "v"


@pytest.mark.parametrize(
    "select, where, tail, window, reason",
    [
        ("SELECT ?v ?w", "?v ex:near ?w . ?w ex:speed ?s", "", WINDOW,
         "the pattern on <http://ex.org/speed> does not use ?v"),
        ("SELECT ?v", "?v ?p ?s", "", WINDOW, "the pattern with predicate ?p cannot be keyed"),
        ("SELECT ?v ?w", "?v ex:near ?w . ?w ex:near ?v", "", WINDOW,
         "?v is the subject of one <http://ex.org/near> pattern and the object of another"),
        ("SELECT ?s", "?v ex:speed ?s", "", WINDOW, "the answers must keep ?v"),
        ("SELECT (COUNT(?s) AS ?n)", "?v ex:speed ?s", "", WINDOW, "the answers must keep ?v"),
        ("SELECT ?v (MAX(?s) AS ?m)", "?v ex:speed ?s ; ex:at ?p", "GROUP BY ?p ?v", WINDOW, None),
        ("SELECT ?v", "?v ex:speed ?s", "ORDER BY ?s", WINDOW, "ORDER BY, LIMIT and OFFSET"),
        ("SELECT ?v", "?v ex:speed ?s", "LIMIT 3", WINDOW, "ORDER BY, LIMIT and OFFSET"),
        ("SELECT ?v", "?v ex:speed ?s", "", "FROM STREAM <http://ex.org/s> [TRIPLES 10]\n",
         "a [TRIPLES n] window counts the triples of every partition"),
        ("SELECT ?v", "?v ex:speed ?s { SELECT ?v (COUNT(*) AS ?n) WHERE { ?v ex:at ?p } GROUP BY ?v }", "",
         WINDOW, "a sub-SELECT"),
    ],
)  # fmt: skip
def test_refusals_name_the_reason(select, where, tail, window, reason) -> None:
    q = query(select, where, tail, window)
    if reason is None:
        assert partition_plan(q, "?v").var == "v"
        return
    with pytest.raises(RspError, match="--partition-by \\?v: ") as caught:
        partition_plan(q, "?v")
    assert reason in str(caught.value)


def test_construct_and_ask_are_refused() -> None:
    construct = parse_query(f"{HEAD}CONSTRUCT {{ ?v ex:slow true }}\n{WINDOW}WHERE {{ ?v ex:speed ?s }}")
    with pytest.raises(RspError, match="CONSTRUCT answers of several partitions"):
        partition_plan(construct, "?v")
    ask = parse_query(f"{HEAD}ASK\n{WINDOW}WHERE {{ ?v ex:speed ?s }}")
    with pytest.raises(RspError, match="ASK answers"):
        partition_plan(ask, "?v")


def test_static_data_on_a_keyed_predicate_is_refused() -> None:
    plan = partition_plan(query("SELECT ?v", "?v ex:speed ?s"), "?v")
    plan.check_static([("<http://ex.org/bus1>", "<http://ex.org/colour>", '"red"')], "--ontology")
    with pytest.raises(RspError, match="static data .* <http://ex.org/speed> triples"):
        plan.check_static([("<http://ex.org/bus1>", "<http://ex.org/speed>", '"0"')], "--ontology")


def test_a_name_that_is_not_a_variable_is_refused() -> None:
    with pytest.raises(RspError, match="write a variable of the query"):
        partition_plan(query("SELECT ?v", "?v ex:speed ?s"), "?")


# -- with entailment: the background rules specialised to the ontology are checked ---------------------
TRANSPORT = ROOT / "ontologies" / "transport.ttl"
T = "PREFIX t: <http://example.org/t#>\n"


def entailed(where: str, regime="rdfs", select="SELECT ?v", var="?v", extra=(), tail=""):
    """The plan of a query over the transport ontology (Train, Bus ⊑ Vehicle; ex:at has domain Vehicle
    and range Place; stopsAt ⊑ at; onBoard ⊑ isIn with range Train; isIn transitive)."""
    engine = Engine(entailment=regime)
    engine.load_ontology(TRANSPORT)
    if extra:
        engine.static.extend(extra)
    handle = engine.register(f"{HEAD}{T}{select}\n{WINDOW}WHERE {{ {where} }}\n{tail}")
    plan = partition_plan(handle.query, var, handle.background_rules)
    plan.check_static(handle.static_closure, "--ontology")
    return plan


def test_rdfs_keys_the_premises_of_what_the_query_reads() -> None:
    plan = entailed("?v a t:Vehicle . ?v t:at ?s")
    t = "<http://example.org/t#{}>".format
    # Train and Bus are Vehicles by rdfs9, stopsAt triples are at triples by rdfs7: keyed like them;
    # a train is typed by the object of onBoard (its range), so onBoard triples go to the train
    assert dict(plan.classes) == {t("Bus"): 0, t("Train"): 0, t("Vehicle"): 0}
    assert dict(plan.positions) == {t("at"): 0, t("onBoard"): 2, t("stopsAt"): 0}
    assert plan.key(t("bus1"), RDF_TYPE, t("Bus")) == t("bus1")
    assert plan.key(t("ann"), t("onBoard"), t("ic5")) == t("ic5")
    assert plan.key(t("s1"), RDF_TYPE, t("Station")) is None  # Place and Station: nothing the query reads
    # keyed by place, at and stopsAt triples go to their object
    by_place = entailed("?v t:at ?p", select="SELECT ?p (COUNT(?v) AS ?n)", var="?p", tail="GROUP BY ?p")
    assert dict(by_place.positions) == {t("at"): 2, t("stopsAt"): 2}
    # but the ontology's own stations are static data: their type triples cannot be keyed
    with pytest.raises(RspError, match="static data .* <http://example.org/t#Station> triples"):
        entailed("?v t:at ?p . ?p a t:Station", select="SELECT ?p", var="?p")


@pytest.mark.parametrize(
    "where, regime, var, reason",
    [
        # a range axiom types the object of a triple the query keys by its subject
        ("?v a t:Place . ?v t:at ?s", "rdfs", "?v",
         "rdfs3 (a range axiom) derives <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/t#Place> "
         "triples (keyed by their subject) from <http://example.org/t#at> triples, which would then be keyed "
         "by their object and also by their subject"),
        # a transitive property joins triples about two resources
        ("?s t:isIn ?c", "owlrl", "?s", "from <http://example.org/t#isIn> triples that do not carry that key"),
        # owl:sameAs copies the triples of one resource to another
        ("?v a t:Vehicle", "owlrl", "?v", "(owl:sameAs) derives"),
    ],
)  # fmt: skip
def test_entailment_that_crosses_partitions_is_refused_with_the_rule(where, regime, var, reason) -> None:
    with pytest.raises(RspError, match=f"--partition-by \\{var}: ") as caught:
        entailed(where, regime, select=f"SELECT {var}", var=var)
    assert reason in str(caught.value)


def test_static_data_keyed_through_the_ontology_is_refused() -> None:
    bus = ("<http://example.org/t#bus9>", RDF_TYPE, "<http://example.org/t#Bus>")
    with pytest.raises(RspError, match="static data .* <http://example.org/t#Bus> triples .*#bus9>"):
        entailed("?v a t:Vehicle . ?v t:at ?s", extra=[bus])  # Bus triples are keyed as Vehicles (rdfs9)
    entailed("?v t:at ?s", extra=[bus], regime="none")  # without entailment no Vehicle triple is read


# -- LARS programs -------------------------------------------------------------------------------------
from rsp.lars import parse  # noqa: E402
from rsp.lars.partition import partition_keys  # noqa: E402


def test_the_traffic_program_is_keyed_by_its_vehicle() -> None:

    from rsp.lars import load

    program = load(ROOT / "examples" / "traffic" / "short-stops.lars").program
    keys = partition_keys(program, "V")
    tr = "<http://example.org/traffic#"
    assert keys.positions == (((f"{tr}x>", 2), 0), ((f"{tr}y>", 2), 0))
    assert keys.key(f"{tr}x>", (f"{tr}van>", 17)) == f"{tr}van>"
    assert keys.key(f"{tr}x>", (f"{tr}van>",)) is None  # x/1 is another predicate, which no rule reads
    assert keys.key("other", ("a",)) is None


def test_intensional_predicates_take_the_key_place_of_their_heads() -> None:
    program = parse(
        "limit(10).\n"
        "seen(X, V) :- [3] <> p(V, X).\n"
        "fast(V) :- seen(S, V), limit(L), S > L.\n"
        "calm(V) :- p(V, _S), not [2] <> alarm(V).\n"
        "always(L) :- limit(L).\n"
    ).program
    keys = partition_keys(program, "V")
    assert keys.positions == ((("alarm", 1), 0), (("p", 2), 0))


@pytest.mark.parametrize(
    "program, reason",
    [
        ("q(X) :- [3] <> p(V, X).", "the head q(…) does not use V"),
        ("q(V) :- p(V, X), r(X).", "the body atom r(…) does not use V"),
        ("q(V, X) :- p(V, X).\nr(V) :- q(X, V).", "V is argument 1 of q in one rule and 2 in another"),
        ("q(V) :- [#3] <> p(V).", "a tuple window over p counts the atoms of every partition"),
        ("q(V) :- [3] [] p(V).", "[n] [] p is false in the first time points"),
        ("q(a).\nq(V) :- p(V).", "the fact q(a) is of a keyed predicate"),
        ("p(a).\nq(V) :- p(V).", "no rule reads the stream"),
        ("vehicle(a).\nq(V) :- vehicle(V), not [3] <> p(V).", "a rule with only negated keyed atoms"),
    ],
)
def test_lars_refusals_name_the_rule_and_the_reason(program: str, reason: str) -> None:
    with pytest.raises(RspError, match="--partition-by V: ") as caught:
        partition_keys(parse(program, "p.lars").program, "V")
    assert reason in str(caught.value) and "p.lars:" in str(caught.value)


def test_a_lars_key_must_be_a_variable_name() -> None:
    with pytest.raises(RspError, match="write a variable of the program's rules"):
        partition_keys(parse("q(V) :- p(V).").program, "v")


@pytest.mark.parametrize(
    "where",
    [
        "?v ex:next+ ?w",
        "?v ex:next* ?w",
        "?v ex:next? ?w",
        "?v !(ex:speed) ?w",
        "?v (ex:next|ex:at)/ex:in ?w",
        "?v (ex:next/ex:at)|ex:in ?w",
    ],
)
def test_property_paths_that_cross_partitions_are_refused(where: str) -> None:
    """A repeated, optional, negated or sequenced path joins (or equates) resources that may lie in
    different partitions: refused with the path (it used to be skipped, keying only the other patterns)."""
    with pytest.raises(RspError) as refusal:
        partition_plan(query("SELECT ?v", f"?v ex:speed ?s . {where}"), "?v")
    message = str(refusal.value)
    assert "property path" in message or "does not use ?v" in message, message
    assert message.startswith("<query>:5:")  # the position of the path pattern


def test_alternatives_of_links_are_keyed_like_their_triple_patterns() -> None:
    plan = partition_plan(query("SELECT ?v ?w", "?v ex:speed ?s . ?v (ex:at|^ex:drives) ?w"), "?v")
    assert plan.by_subject == ["<http://ex.org/at>", "<http://ex.org/speed>"]
    assert plan.by_object == ["<http://ex.org/drives>"]
    with pytest.raises(RspError, match="the pattern on <http://ex.org/at> does not use \\?v"):
        partition_plan(query("SELECT ?v", "?v ex:speed ?s . ?s ex:at|ex:near ?w"), "?v")


def _answers(text: str, elements, end: int) -> dict[int, Counter]:
    engine = Engine()
    handle = engine.register(text)
    for time, triple in elements:
        engine.push([triple], time)
    engine.advance(end)  # every partition runs to the whole stream's last instant
    return {r.time: Counter(tuple(sorted(b.items())) for b in r.bindings) for r in handle if r.bindings}


def test_a_keyed_path_query_answers_as_one_engine_per_key() -> None:
    """One engine per key over the keyed triples, answers united per instant, equals one engine over the
    whole stream, for a query whose path is an alternative of links."""
    text = f"{HEAD}SELECT ?v ?w\n{WINDOW}WHERE {{ ?v ex:speed ?s . ?v (ex:at|^ex:drives) ?w }}"
    plan = partition_plan(parse_query(text), "?v")
    ex = "http://ex.org/"
    elements = [
        (100 * i, (f"<{ex}{s}>", f"<{ex}{p}>", f"<{ex}{o}>"))
        for i, (s, p, o) in enumerate(
            [("b1", "speed", "fast"), ("b1", "at", "x"), ("ann", "drives", "b1"), ("b2", "speed", "slow"),
             ("b2", "at", "y"), ("bob", "drives", "b2"), ("b3", "at", "z"), ("b1", "near", "b2")] * 3
        )
    ]  # fmt: skip
    partitions: dict[str, list] = {}
    for time, triple in elements:
        key = plan.key(*triple)
        if key is not None:
            partitions.setdefault(key, []).append((time, triple))
    united: dict[int, Counter] = {}
    for part in partitions.values():
        for time, rows in _answers(text, part, 3000).items():
            united[time] = united.get(time, Counter()) + rows
    whole = _answers(text, elements, 3000)
    assert whole and united == whole
