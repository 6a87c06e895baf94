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
