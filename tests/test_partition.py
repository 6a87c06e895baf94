"""The partitionability check of ``rsp spark --partition-by``: which queries run as one engine per key,
how stream triples are keyed, and the reason given for each query that cannot."""

from __future__ import annotations

import pytest

from rsp.errors import RspError
from rsp.query.parser import parse_query
from rsp.query.partition import partition_plan

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
    "select, where, tail, window, entailment, reason",
    [
        ("SELECT ?v ?w", "?v ex:near ?w . ?w ex:speed ?s", "", WINDOW, "none",
         "the pattern on <http://ex.org/speed> does not use ?v"),
        ("SELECT ?v", "?v ?p ?s", "", WINDOW, "none", "the pattern with predicate ?p cannot be keyed"),
        ("SELECT ?v ?w", "?v ex:near ?w . ?w ex:near ?v", "", WINDOW, "none",
         "?v is the subject of one <http://ex.org/near> pattern and the object of another"),
        ("SELECT ?s", "?v ex:speed ?s", "", WINDOW, "none", "the answers must keep ?v"),
        ("SELECT (COUNT(?s) AS ?n)", "?v ex:speed ?s", "", WINDOW, "none", "the answers must keep ?v"),
        ("SELECT ?v (MAX(?s) AS ?m)", "?v ex:speed ?s ; ex:at ?p", "GROUP BY ?p ?v", WINDOW, "none", None),
        ("SELECT ?v", "?v ex:speed ?s", "ORDER BY ?s", WINDOW, "none", "ORDER BY, LIMIT and OFFSET"),
        ("SELECT ?v", "?v ex:speed ?s", "LIMIT 3", WINDOW, "none", "ORDER BY, LIMIT and OFFSET"),
        ("SELECT ?v", "?v ex:speed ?s", "", "FROM STREAM <http://ex.org/s> [TRIPLES 10]\n", "none",
         "a [TRIPLES n] window counts the triples of every partition"),
        ("SELECT ?v", "?v ex:speed ?s", "", WINDOW, "rdfs", "not with --entailment rdfs"),
        ("SELECT ?v", "?v ex:speed ?s { SELECT ?v (COUNT(*) AS ?n) WHERE { ?v ex:at ?p } GROUP BY ?v }", "",
         WINDOW, "none", "a sub-SELECT"),
    ],
)
def test_refusals_name_the_reason(select, where, tail, window, entailment, reason) -> None:
    q = query(select, where, tail, window)
    if reason is None:
        assert partition_plan(q, "?v", entailment).var == "v"
        return
    with pytest.raises(RspError, match="--partition-by \\?v: ") as caught:
        partition_plan(q, "?v", entailment)
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


# -- LARS programs -------------------------------------------------------------------------------------
from rsp.lars import parse  # noqa: E402
from rsp.lars.partition import partition_keys  # noqa: E402


def test_the_traffic_program_is_keyed_by_its_vehicle() -> None:
    from pathlib import Path

    from rsp.lars import load

    program = load(Path(__file__).resolve().parents[1] / "examples" / "traffic" / "short-stops.lars").program
    keys = partition_keys(program, "V")
    tr = "<http://example.org/traffic#"
    assert keys.positions == ((f"{tr}x>", 0), (f"{tr}y>", 0))
    assert keys.key(f"{tr}x>", (f"{tr}van>", 17)) == f"{tr}van>"
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
    assert keys.positions == (("alarm", 0), ("p", 0))


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
