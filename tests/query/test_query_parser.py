"""The continuous query syntax: every construct of DESIGN.md §4 to its exact AST, the CSRBench queries,
keywords used as names, and syntax and semantic errors with their exact positions."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from paths import TEST_DATA

from rsp.errors import Position, QuerySyntaxError
from rsp.query.syntax.ast import (
    BGP,
    Aggregate,
    Ask,
    BinaryOp,
    Bind,
    Construct,
    Exists,
    Filter,
    FunctionCall,
    Group,
    InList,
    Minus,
    Modifiers,
    Optional,
    OrderCondition,
    OutputPolicy,
    Projection,
    Select,
    StreamWindow,
    SubSelect,
    TriplePattern,
    UnaryOp,
    Union,
    Values,
    Var,
    WindowBlock,
    WindowOp,
)
from rsp.query.syntax.parser import parse_and_validate, parse_duration, parse_query, parse_query_file
from rsp.query.syntax.validate import validate

CSRBENCH = TEST_DATA / "csrbench" / "queries"
SAMPLES = TEST_DATA / "queries"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
PROLOGUE = "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
STREAM = "FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s]"


def ex(local: str) -> str:
    return f"<http://example.org/{local}>"


def integer(n: int) -> str:
    return f'"{n}"^^<{XSD}integer>'


def typed(lexical: str, datatype: str) -> str:
    return f'"{lexical}"^^<{XSD}{datatype}>'


x, y, z, s, o, t = (Var(n) for n in ("x", "y", "z", "s", "o", "t"))


def tp(subject, predicate, obj) -> TriplePattern:
    return TriplePattern(subject, predicate, obj)


def select(head: str, where: str, tail: str = "", dataset: str = STREAM) -> Select:
    """Parse ``REGISTER QUERY Q AS <prologue> SELECT head dataset WHERE { where } tail``."""
    text = f"REGISTER QUERY Q AS\n{PROLOGUE}SELECT {head}\n{dataset}\nWHERE {{ {where} }}\n{tail}"
    form = parse_query(text).form
    assert isinstance(form, Select)
    return form


def where(body: str, head: str = "*") -> tuple:
    return select(head, body).where.elements


def expr(text: str, head: str = "*", bind: str = "?x ?y ?z") -> object:
    """The expression of ``FILTER(text)`` in a group that binds ?x ?y ?z."""
    elements = where(f"{bind} . FILTER({text})", head)
    return elements[-1].expr


def error_of(text: str, file: str = "<query>") -> str:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text, file)
    return str(info.value)


# -- REGISTER, prologue ----------------------------------------------------------------------------------


def test_register_query_defaults() -> None:
    query = parse_query(f"REGISTER QUERY HotRooms AS SELECT * {STREAM} WHERE {{ ?s ?p ?o }}", "q.rq")
    assert (query.name, query.register, query.policy, query.compute_every) == (
        "HotRooms",
        "QUERY",
        OutputPolicy.RSTREAM,
        None,
    )
    assert query.pos == Position("q.rq", 1, 1)
    assert query.file == "q.rq"
    assert query.form.projection is None


def test_compute_every_is_in_milliseconds() -> None:
    query = parse_query(f"REGISTER QUERY Q COMPUTE EVERY 5s AS SELECT * {STREAM} WHERE {{ ?s ?p ?o }}")
    assert query.compute_every == 5000


@pytest.mark.parametrize(
    "register, form, kind, policy",
    [
        ("REGISTER STREAM Out AS", "CONSTRUCT { ?s ?p ?o }", "STREAM", OutputPolicy.RSTREAM),
        ("REGISTER QUERY Out AS", "CONSTRUCT { ?s ?p ?o }", "QUERY", OutputPolicy.RSTREAM),
        ("REGISTER ISTREAM Out AS", "SELECT *", "QUERY", OutputPolicy.ISTREAM),
        ("REGISTER DSTREAM Out AS", "SELECT *", "QUERY", OutputPolicy.DSTREAM),
        ("REGISTER RSTREAM Out AS", "CONSTRUCT { ?s ?p ?o }", "STREAM", OutputPolicy.RSTREAM),
        ("REGISTER ISTREAM QUERY Out AS", "CONSTRUCT { ?s ?p ?o }", "QUERY", OutputPolicy.ISTREAM),
        ("register dstream stream Out as", "select *", "STREAM", OutputPolicy.DSTREAM),
    ],
)
def test_register_kind_and_output_policy(register: str, form: str, kind: str, policy: OutputPolicy) -> None:
    query = parse_query(f"{register} {form} {STREAM} WHERE {{ ?s ?p ?o }}")
    assert (query.name, query.register, query.policy) == ("Out", kind, policy)


@pytest.mark.parametrize(
    "register, name, kind, policy",
    [
        ("REGISTER ISTREAM Stream AS", "Stream", "QUERY", OutputPolicy.ISTREAM),
        ("REGISTER QUERY IStream AS", "IStream", "QUERY", OutputPolicy.RSTREAM),
        ("REGISTER STREAM Query AS", "Query", "STREAM", OutputPolicy.RSTREAM),
        ("REGISTER QUERY Query-Log_2 AS", "Query-Log_2", "QUERY", OutputPolicy.RSTREAM),
    ],
)
def test_query_names_may_look_like_keywords(
    register: str, name: str, kind: str, policy: OutputPolicy
) -> None:
    query = parse_query(f"{register} SELECT * {STREAM} WHERE {{ ?s ?p ?o }}")
    assert (query.name, query.register, query.policy) == (name, kind, policy)


def test_query_name_may_be_an_iri() -> None:
    query = parse_query(f"REGISTER ISTREAM <http://ex.org/out> AS SELECT * {STREAM} WHERE {{ ?s ?p ?o }}")
    assert query.name == "<http://ex.org/out>"


def test_prefix_and_base_before_and_after_register() -> None:
    text = """
    BASE <http://example.org/data/>
    PREFIX ex: <http://example.org/>
    REGISTER QUERY Q AS
    PREFIX in: <sub/>
    SELECT ?s FROM <building.ttl> FROM STREAM <temps> [RANGE 1s STEP 1s]
    WHERE { ?s ex:p in:q }
    """
    query = parse_query(text)
    assert query.base == "http://example.org/data/"
    assert query.prefixes == (("ex", "http://example.org/"), ("in", "http://example.org/data/sub/"))
    assert query.graphs == ("<http://example.org/data/building.ttl>",)
    assert query.windows[0].stream == "<http://example.org/data/temps>"
    assert query.form.where.elements == (BGP((tp(s, ex("p"), "<http://example.org/data/sub/q>"),)),)


def test_relative_iris_stay_as_written_without_base() -> None:
    query = parse_query(f"REGISTER QUERY Q AS SELECT * FROM <building.ttl> {STREAM} WHERE {{ ?s ?p ?o }}")
    assert query.graphs == ("<building.ttl>",)


# -- dataset: windows and durations ----------------------------------------------------------------------


def test_design_example_windows() -> None:
    query = parse_query_file(SAMPLES / "hot_rooms.rq")
    assert query.name == "HotRooms" and query.compute_every == 1000
    assert query.graphs == ("<building.ttl>",)
    assert query.windows == (
        StreamWindow("<http://ex.org/temps>", 10_000, 1_000),
        StreamWindow("<http://ex.org/doors>", 30_000, 30_000),
        StreamWindow("<http://ex.org/ids>", None, None, triples=100),
        StreamWindow("<http://ex.org/temps>", 5_000, 1_000, name=ex("w")),
    )
    assert query.windows[1].pos == Position(str(SAMPLES / "hot_rooms.rq"), 7, 1)
    body = query.form.where.elements
    assert body[0] == BGP((tp(Var("room"), RDF_TYPE, ex("Room")),))
    true = typed("true", "boolean")
    assert body[1:4] == (
        WindowBlock(ex("w"), WindowOp.DIAMOND, Group((BGP((tp(Var("room"), ex("smoke"), true),)),))),
        WindowBlock(ex("w"), WindowOp.BOX, Group((BGP((tp(Var("room"), ex("hot"), true),)),))),
        WindowBlock(ex("w"), WindowOp.AT, Group((BGP((tp(Var("room"), ex("alarm"), true),)),)), t),
    )
    assert body[4] == Filter(BinaryOp(">", t, integer(0)))
    assert query.form.modifiers == Modifiers(order_by=(OrderCondition(Var("room")),), limit=10)


def test_count_window_in_csparql_spelling() -> None:
    query = parse_query("REGISTER QUERY Q AS SELECT * FROM STREAM <s> [RANGE TRIPLES 7] WHERE { ?s ?p ?o }")
    assert query.windows == (StreamWindow("<s>", None, None, triples=7),)


@pytest.mark.parametrize(
    "text, ms",
    [
        ("10s", 10_000),
        ("500ms", 500),
        ("1m", 60_000),
        ("1h", 3_600_000),
        ("1d", 86_400_000),
        ("1.5s", 1_500),
        ("10S", 10_000),
        ("PT10S", 10_000),
        ("PT1M30S", 90_000),
        ("PT0.5S", 500),
        ("P1D", 86_400_000),
        ("PT2H", 7_200_000),
        ("P1DT1S", 86_401_000),
        ("pt5s", 5_000),
    ],
)
def test_durations_become_milliseconds(text: str, ms: int) -> None:
    assert parse_duration(text) == ms
    query = parse_query(
        f"REGISTER QUERY Q AS SELECT * FROM STREAM <s> [RANGE {text} TUMBLING] WHERE {{ ?s ?p ?o }}"
    )
    assert query.windows[0].range == query.windows[0].step == ms


@pytest.mark.parametrize(
    "duration, message",
    [
        ("0s", "duration '0s' must be positive"),
        ("-5s", "duration '-5s' must be positive"),
        ("PT0S", "duration 'PT0S' must be positive"),
        ("10x", "unknown duration unit 'x' in '10x'"),
        ("10", "duration '10' needs a unit"),
        ("P1M", "ISO 8601 duration 'P1M' uses years or months (no fixed length)"),
        ("PT", "malformed ISO 8601 duration 'PT'"),
        ("PT0.0001S", "duration 'PT0.0001S' is not a whole number of milliseconds"),
    ],
)
def test_bad_durations_are_errors_at_their_position(duration: str, message: str) -> None:
    text = f"REGISTER QUERY Q AS\nSELECT *\nFROM STREAM <s> [RANGE 10s STEP {duration}]\nWHERE {{ ?s ?p ?o }}"
    assert error_of(text, "w.rq").startswith(f"w.rq:3:33: {message}")


def test_range_zero_is_an_error() -> None:
    text = "REGISTER QUERY Q AS SELECT * FROM STREAM <s> [RANGE 0ms STEP 1s] WHERE { ?s ?p ?o }"
    assert error_of(text) == "<query>:1:53: duration '0ms' must be positive"


def test_count_window_of_zero_is_an_error() -> None:
    text = "REGISTER QUERY Q AS SELECT * FROM STREAM <s> [TRIPLES 0] WHERE { ?s ?p ?o }"
    assert error_of(text).startswith("<query>:1:55: a count window needs at least one triple")


def test_step_larger_than_range_is_allowed_with_a_warning() -> None:
    text = "REGISTER QUERY Q AS\nSELECT * FROM STREAM <s> [RANGE 1s STEP 5s] WHERE { ?s ?p ?o }"
    query, warnings = parse_and_validate(text)
    assert (query.windows[0].range, query.windows[0].step) == (1000, 5000)
    assert warnings == [
        "<query>:2:10: warning: STEP (5000 ms) is larger than RANGE (1000 ms) on <s>: "
        "elements between two windows are never seen"
    ]


# -- query forms -----------------------------------------------------------------------------------------


def test_select_projections_distinct_and_expressions() -> None:
    form = select("DISTINCT ?s (?o + 1 AS ?next)", "?s ex:p ?o")
    assert form.projection == (Projection(s, s), Projection(Var("next"), BinaryOp("+", o, integer(1))))
    assert form.distinct and not form.reduced
    assert select("REDUCED ?s", "?s ex:p ?o").reduced


def test_construct_template_and_where() -> None:
    text = (
        f"REGISTER STREAM Out AS {PROLOGUE} CONSTRUCT {{ ?s ex:q ?o ; a ex:C . _:n ex:r ?s }} {STREAM} "
        "WHERE { ?s ex:p ?o } LIMIT 3"
    )
    query = parse_query(text)
    assert query.register == "STREAM"
    assert query.form == Construct(
        (tp(s, ex("q"), o), tp(s, RDF_TYPE, ex("C")), tp(Var("_n"), ex("r"), s)),
        Group((BGP((tp(s, ex("p"), o),)),)),
        Modifiers(limit=3),
    )


def test_construct_where_short_form() -> None:
    query = parse_query(
        f"REGISTER QUERY Q AS {PROLOGUE} CONSTRUCT {STREAM} WHERE {{ ?s ex:p ?o . ?o ex:q 1 }}"
    )
    triples = (tp(s, ex("p"), o), tp(o, ex("q"), integer(1)))
    assert query.form == Construct(triples, Group((BGP(triples),)))


def test_ask() -> None:
    query = parse_query(f"REGISTER QUERY Q AS {PROLOGUE} ASK {STREAM} {{ ?s ex:p ?o }}")
    assert query.form == Ask(Group((BGP((tp(s, ex("p"), o),)),)))


def test_sample_files_parse() -> None:
    averages = parse_query_file(SAMPLES / "average_by_sensor.rq")
    assert (averages.name, averages.policy, averages.register) == (
        "AverageBySensor",
        OutputPolicy.ISTREAM,
        "QUERY",
    )
    assert averages.windows[0].range == 60_000 and averages.windows[0].step == 10_000
    alarms = parse_query_file(SAMPLES / "alarms.rq")
    assert alarms.register == "STREAM" and isinstance(alarms.form, Construct)


# -- triple patterns and terms ---------------------------------------------------------------------------


def test_predicate_and_object_lists_form_one_bgp() -> None:
    body = where("?s ex:p ?o , ?y ; ex:q ?z ; . ?o a ex:C")
    assert body == (BGP((tp(s, ex("p"), o), tp(s, ex("p"), y), tp(s, ex("q"), z), tp(o, RDF_TYPE, ex("C")))),)


def test_blank_nodes_become_fresh_underscore_variables() -> None:
    body = where("?s ex:p [ ex:q ?o ; ex:r [] ] . _:b1 ex:p ?s . [ ex:q ?s ] ex:r ?o")
    b1, b2, b3, b4 = Var("_b1"), Var("_b2"), Var("_b3"), Var("_b4")
    # _:b1 is a label of the query, so the fresh names skip it
    assert body == (
        BGP(
            (
                tp(s, ex("p"), b3),
                tp(b3, ex("q"), o),
                tp(b3, ex("r"), b2),
                tp(b1, ex("p"), s),
                tp(b4, ex("q"), s),
                tp(b4, ex("r"), o),
            )
        ),
    )
    assert select("*", "?s ex:p [ ex:q ?o ]").projection is None


@pytest.mark.parametrize(
    "written, term",
    [
        ('"chat"@en', '"chat"@en'),
        ("'chat'@en-GB", '"chat"@en-GB'),
        ('"54"^^xsd:double', typed("54", "double")),
        ('"54"^^<http://ex.org/t>', '"54"^^<http://ex.org/t>'),
        ('"plain"^^xsd:string', '"plain"'),
        ("42", integer(42)),
        ("-42", integer(-42)),
        ("2.5", typed("2.5", "decimal")),
        ("1e3", typed("1e3", "double")),
        ("true", typed("true", "boolean")),
        ("FALSE", typed("false", "boolean")),
        ('"say \\"hi\\"\\n\\u00e9"', '"say \\"hi\\"\\né"'),
        ('"""two\nlines"""', '"two\\nlines"'),
        ("'''it's'''", '"it\'s"'),
        ("ex:a\\.b", ex("a.b")),
        ("<http://ex.org/a#frag>", "<http://ex.org/a#frag>"),
    ],
)
def test_constants_in_ntriples_syntax(written: str, term: str) -> None:
    assert where(f"?s ex:p {written}") == (BGP((tp(s, ex("p"), term),)),)


def test_empty_prefix_and_dollar_variables() -> None:
    text = f"PREFIX : <http://example.org/> REGISTER QUERY Q AS SELECT $s {STREAM} WHERE {{ $s :p :o }}"
    assert parse_query(text).form.where.elements == (BGP((tp(s, ex("p"), ex("o")),)),)


# -- expressions -----------------------------------------------------------------------------------------


def test_operator_precedence() -> None:
    assert expr("?x || ?y && !?z") == BinaryOp("||", x, BinaryOp("&&", y, UnaryOp("!", z)))
    assert expr("?x + 2 * -?y >= ?z / 4 - 1") == BinaryOp(
        ">=",
        BinaryOp("+", x, BinaryOp("*", integer(2), UnaryOp("-", y))),
        BinaryOp("-", BinaryOp("/", z, integer(4)), integer(1)),
    )
    assert expr("(?x + ?y) * ?z") == BinaryOp("*", BinaryOp("+", x, y), z)


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_comparisons(op: str) -> None:
    assert expr(f"?x {op} ?y") == BinaryOp(op, x, y)


def test_a_sign_before_a_number_folds_into_the_literal() -> None:
    assert expr("?x > -5") == BinaryOp(">", x, integer(-5))
    assert expr("?x - 5 = -2.5") == BinaryOp("=", BinaryOp("-", x, integer(5)), typed("-2.5", "decimal"))


def test_bound_if_coalesce() -> None:
    assert expr("IF(BOUND(?x), ?y, COALESCE(?z, 0))") == FunctionCall(
        "IF", (FunctionCall("BOUND", (x,)), y, FunctionCall("COALESCE", (z, integer(0))))
    )


def test_in_and_not_in() -> None:
    assert expr("?x IN (1, 2)") == InList(x, (integer(1), integer(2)))
    assert expr("?x NOT IN (ex:a)") == InList(x, (ex("a"),), negated=True)
    assert expr("?x IN ()") == InList(x, ())


@pytest.mark.parametrize(
    "call, name, arity",
    [
        ("STR(?x)", "STR", 1),
        ("strlen(?x)", "STRLEN", 1),
        ("SUBSTR(?x, 1, 2)", "SUBSTR", 3),
        ("UCASE(?x)", "UCASE", 1),
        ("LCASE(?x)", "LCASE", 1),
        ("STRSTARTS(?x, 'a')", "STRSTARTS", 2),
        ("STRENDS(?x, 'a')", "STRENDS", 2),
        ("CONTAINS(?x, 'a')", "CONTAINS", 2),
        ("CONCAT(?x, ?y, ?z)", "CONCAT", 3),
        ("REPLACE(?x, 'a', 'b', 'i')", "REPLACE", 4),
        ("STRBEFORE(?x, 'a')", "STRBEFORE", 2),
        ("STRAFTER(?x, 'a')", "STRAFTER", 2),
        ("ENCODE_FOR_URI(?x)", "ENCODE_FOR_URI", 1),
        ("LANG(?x)", "LANG", 1),
        ("LANGMATCHES(LANG(?x), 'en')", "LANGMATCHES", 2),
        ("DATATYPE(?x)", "DATATYPE", 1),
        ("REGEX(?x, '^a', 'i')", "REGEX", 3),
        ("ABS(?x)", "ABS", 1),
        ("ROUND(?x)", "ROUND", 1),
        ("CEIL(?x)", "CEIL", 1),
        ("FLOOR(?x)", "FLOOR", 1),
        ("isIRI(?x)", "ISIRI", 1),
        ("isURI(?x)", "ISIRI", 1),
        ("isBlank(?x)", "ISBLANK", 1),
        ("isLITERAL(?x)", "ISLITERAL", 1),
        ("isNumeric(?x)", "ISNUMERIC", 1),
        ("sameTerm(?x, ?y)", "SAMETERM", 2),
    ],
)
def test_builtin_functions(call: str, name: str, arity: int) -> None:
    result = expr(call)
    assert isinstance(result, FunctionCall) and result.name == name and len(result.args) == arity
    assert result.args[0] in (x, FunctionCall("LANG", (x,)))


def test_iri_functions_and_casts() -> None:
    assert expr("xsd:integer(?x) > <http://ex.org/f>(?y, 1)") == BinaryOp(
        ">",
        FunctionCall(f"<{XSD}integer>", (x,)),
        FunctionCall("<http://ex.org/f>", (y, integer(1))),
    )


def test_function_arity_and_bound_are_checked() -> None:
    prefix = f"REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ ?x ?y ?z "
    assert error_of(prefix + "FILTER(STRLEN(?x, ?y)) }") == "<query>:2:25: STRLEN takes 1 argument, got 2"
    assert error_of(prefix + "FILTER(REGEX(?x)) }") == "<query>:2:25: REGEX takes 2 to 3 arguments, got 1"
    assert error_of(prefix + "FILTER(BOUND(1)) }") == "<query>:2:25: BOUND takes a variable"


def test_exists_inside_expressions_and_filters() -> None:
    inner = Group((BGP((tp(x, ex("q"), y),)),))
    assert expr("?z > 1 || EXISTS { ?x ex:q ?y }") == BinaryOp(
        "||", BinaryOp(">", z, integer(1)), Exists(inner)
    )
    body = where("?x ex:p ?z FILTER NOT EXISTS { ?x ex:q ?y } FILTER EXISTS { ?x ex:q ?y }")
    assert body[1:] == (Filter(Exists(inner, negated=True)), Filter(Exists(inner)))


# -- group patterns --------------------------------------------------------------------------------------


def test_optional_minus_union() -> None:
    body = where("?s ex:p ?o OPTIONAL { ?o ex:q ?y } MINUS { ?s ex:r 1 } { ?s ex:a ?z } UNION { ?s ex:b ?z } "
                 "UNION { ?s ex:c ?z }")  # fmt: skip
    assert body == (
        BGP((tp(s, ex("p"), o),)),
        Optional(Group((BGP((tp(o, ex("q"), y),)),))),
        Minus(Group((BGP((tp(s, ex("r"), integer(1)),)),))),
        Union(tuple(Group((BGP((tp(s, ex(p), z),)),)) for p in "abc")),
    )


def test_filters_stay_where_written() -> None:
    body = where("?s ex:p ?o . FILTER(?o > 1) ?o ex:q ?y . FILTER(?y)")
    assert body == (
        BGP((tp(s, ex("p"), o),)),
        Filter(BinaryOp(">", o, integer(1))),
        BGP((tp(o, ex("q"), y),)),
        Filter(y),
    )


def test_nested_groups() -> None:
    # a join-only group is spliced (adjacent triples merge); one with a FILTER keeps its scope
    body = where("?s ex:p ?o . { ?o ex:q ?y } { ?y ex:r ?z FILTER(?z > 2) }")
    assert body == (
        BGP((tp(s, ex("p"), o), tp(o, ex("q"), y))),
        Union((Group((BGP((tp(y, ex("r"), z),)), Filter(BinaryOp(">", z, integer(2))))),)),
    )


def test_bind_and_values() -> None:
    body = where(
        "?s ex:p ?o BIND(?o * 2 AS ?y) VALUES ?z { 1 ex:a UNDEF } VALUES (?s ?t) { (1 UNDEF) (-2 'x') }"
    )
    assert body[1:] == (
        Bind(BinaryOp("*", o, integer(2)), y),
        Values((z,), ((integer(1),), (ex("a"),), (None,))),
        Values((s, t), ((integer(1), None), (integer(-2), '"x"'))),
    )


def test_values_rows_must_match_the_variables() -> None:
    text = f"REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ VALUES (?a ?b) {{ (1) }} }}"
    assert error_of(text) == "<query>:2:9: VALUES row has 1 value(s) but 2 variable(s) are declared"


def test_sub_select() -> None:
    body = where(
        "?s ex:p ?o . { SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ex:q ?o } GROUP BY ?s LIMIT 2 }", "?s ?n"
    )
    assert body == (
        BGP((tp(s, ex("p"), o),)),
        SubSelect(
            Select(
                (Projection(s, s), Projection(Var("n"), Aggregate("COUNT", o))),
                Group((BGP((tp(s, ex("q"), o),)),)),
                Modifiers(group_by=(Projection(s, s),), limit=2),
            )
        ),
    )
    form = select("?s", "{ SELECT ?s WHERE { ?s ?p ?o } }")
    assert isinstance(form.where.elements[0], SubSelect)


def test_window_blocks_nest_anything() -> None:
    dataset = f"{STREAM}\nFROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE 5s STEP 1s]"
    form = select(
        "?s ?t", "WINDOW <http://ex.org/w> AT ?t { ?s ex:p ?o OPTIONAL { ?o ex:q ?y } }", dataset=dataset
    )
    assert form.where.elements == (
        WindowBlock(
            "<http://ex.org/w>",
            WindowOp.AT,
            Group((BGP((tp(s, ex("p"), o),)), Optional(Group((BGP((tp(o, ex("q"), y),)),))))),
            t,
        ),
    )


# -- aggregates and modifiers ----------------------------------------------------------------------------


def test_aggregates() -> None:
    form = select(
        "?s (COUNT(*) AS ?a) (COUNT(DISTINCT ?o) AS ?b) (SUM(?o) AS ?c) (AVG(?o) AS ?d) (MIN(?o) AS ?e) "
        "(MAX(?o) AS ?f) (SAMPLE(?o) AS ?g) (GROUP_CONCAT(DISTINCT ?o ; SEPARATOR = ', ') AS ?h) "
        "(group_concat(?o) AS ?i)",
        "?s ex:p ?o",
        "GROUP BY ?s",
    )
    assert [p.expr for p in form.projection[1:]] == [
        Aggregate("COUNT", None),
        Aggregate("COUNT", o, distinct=True),
        Aggregate("SUM", o),
        Aggregate("AVG", o),
        Aggregate("MIN", o),
        Aggregate("MAX", o),
        Aggregate("SAMPLE", o),
        Aggregate("GROUP_CONCAT", o, distinct=True, separator=", "),
        Aggregate("GROUP_CONCAT", o, separator=" "),
    ]


def test_group_by_having_order_limit_offset() -> None:
    form = select(
        "?s (SUM(?o) AS ?total)",
        "?s ex:p ?o",
        "GROUP BY ?s (?o * 2 AS ?double) STR(?o)\nHAVING (SUM(?o) > 10) (COUNT(*) > 1)\n"
        "ORDER BY DESC(?total) ASC(?s) ?s STRLEN(?s)\nOFFSET 5 LIMIT 10",
    )
    assert form.modifiers == Modifiers(
        group_by=(
            Projection(s, s),
            Projection(Var("double"), BinaryOp("*", o, integer(2))),
            Projection(Var("_g1"), FunctionCall("STR", (o,))),
        ),
        having=(
            BinaryOp(">", Aggregate("SUM", o), integer(10)),
            BinaryOp(">", Aggregate("COUNT", None), integer(1)),
        ),
        order_by=(
            OrderCondition(Var("total"), descending=True),
            OrderCondition(s),
            OrderCondition(s),
            OrderCondition(FunctionCall("STRLEN", (s,))),
        ),
        limit=10,
        offset=5,
    )


def test_aggregate_misuse_is_a_syntax_error() -> None:
    head = "REGISTER QUERY Q AS SELECT "
    tail = f" {STREAM} WHERE {{ ?s ?p ?o }}"
    assert error_of(head + "(SUM(*) AS ?n)" + tail) == "<query>:1:33: only COUNT takes '*', not SUM"
    assert error_of(head + "(COUNT(?o ; SEPARATOR='-') AS ?n)" + tail) == (
        "<query>:1:29: only GROUP_CONCAT takes a SEPARATOR, not COUNT"
    )


# -- lexical matters: comments, case, keywords as names --------------------------------------------------


def test_comments_but_not_inside_iris_and_strings() -> None:
    text = """# a comment before everything
    REGISTER QUERY Q AS # after the register clause
    PREFIX ex: <http://example.org/#> # hash inside an IRI
    SELECT ?s # ?o would be a syntax error if this were read
    FROM STREAM <http://ex.org/s#stream> [RANGE 1s STEP 1s] # window
    WHERE { # open
      ?s ex:p "a # not a comment" . # close the triple
      ?s ex:q <http://ex.org/x#y> # end
    } # done"""
    query = parse_query(text)
    assert query.windows[0].stream == "<http://ex.org/s#stream>"
    assert query.form.where.elements == (
        BGP(
            (
                tp(s, "<http://example.org/#p>", '"a # not a comment"'),
                tp(s, "<http://example.org/#q>", "<http://ex.org/x#y>"),
            )
        ),
    )


def test_keywords_are_case_insensitive() -> None:
    upper = parse_query(f"REGISTER QUERY Q AS {PROLOGUE} SELECT DISTINCT ?s {STREAM} WHERE {{ ?s ex:p ?o "
                        "OPTIONAL { ?s ex:q ?y } FILTER(?o IN (1)) } ORDER BY DESC(?s) LIMIT 1")  # fmt: skip
    prologue = PROLOGUE.replace("PREFIX", "prefix")
    lower = parse_query(f"register query Q as {prologue} select distinct ?s "
                        "from stream <http://ex.org/s> [range 10s step 1s] where { ?s ex:p ?o "
                        "optional { ?s ex:q ?y } filter(?o in (1)) } order by desc(?s) limit 1")  # fmt: skip
    assert lower == upper


@pytest.mark.parametrize(
    "name",
    ["step", "range", "window", "from", "select", "stream", "where", "filter", "a", "as", "in", "not",
     "box", "at", "on", "named", "triples", "tumbling", "count", "str", "group", "order", "limit", "true"],
)  # fmt: skip
def test_keywords_as_variables_and_local_names(name: str) -> None:
    """C-SPARQL's lexer treats STEP, RANGE, … as reserved everywhere; here they are ordinary names."""
    v = Var(name)
    text = (
        f"REGISTER QUERY Q AS PREFIX ex: <http://example.org/> PREFIX {name}: <http://ex.org/{name}/>\n"
        f"SELECT ?{name} {STREAM}\n"
        f"WHERE {{ ?{name} ex:{name} {name}:{name} . FILTER(?{name} != ex:{name}) }}"
    )
    form = parse_query(text).form
    assert form.projection == (Projection(v, v),)
    assert form.where.elements == (
        BGP((tp(v, ex(name), f"<http://ex.org/{name}/{name}>"),)),
        Filter(BinaryOp("!=", v, ex(name))),
    )


def test_a_is_only_lowercase() -> None:
    text = f"REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ ?s A ?o }}"
    assert error_of(text) == (
        "<query>:2:12: unexpected 'A'; expected '!', '(', '^', 'a', a prefix, a prefixed name, a variable, an IRI"
    )


# -- CSRBench --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [CSRBENCH / f"q{n}.rq" for n in range(1, 8)], ids=lambda p: p.stem)
def test_csrbench_queries_parse_quickly(path: Path) -> None:
    text = path.read_text()
    parse_query(text)  # warm the cached parser
    start = time.perf_counter()
    query = parse_query(text, str(path))
    elapsed = time.perf_counter() - start
    assert query.name == path.stem.upper()
    assert query.windows[0].stream == "<http://www.cwi.nl/SRBench/observations>"
    assert elapsed < 0.1, f"{path.name} took {elapsed * 1000:.1f} ms"


OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
WEATHER = "http://knoesis.wright.edu/ssw/ont/weather.owl#"


def test_csrbench_q1_exactly() -> None:
    query = parse_query_file(CSRBENCH / "q1.rq")
    assert query.name == "Q1" and query.register == "QUERY" and query.policy is OutputPolicy.RSTREAM
    assert query.windows == (StreamWindow("<http://www.cwi.nl/SRBench/observations>", 10_000, 10_000),)
    sensor, obs, res, value = Var("sensor"), Var("obs"), Var("res"), Var("value")
    assert query.form == Select(
        (Projection(sensor, sensor), Projection(obs, obs)),
        Group(
            (
                BGP(
                    (
                        tp(obs, f"<{OM}observedProperty>", f"<{WEATHER}_AirTemperature>"),
                        tp(obs, f"<{OM}procedure>", sensor),
                        tp(obs, f"<{OM}result>", res),
                        tp(res, f"<{OM}floatValue>", value),
                    )
                ),
                Filter(BinaryOp(">", value, integer(80))),
            )
        ),
    )


def test_csrbench_q3_q4_q6() -> None:
    value, value1 = Var("value"), Var("value1")
    q3 = parse_query_file(CSRBENCH / "q3.rq")
    assert [p.var.name for p in q3.form.projection] == ["sensor", "obs", "value"]
    assert q3.form.where.elements[1:] == (
        Filter(BinaryOp("<", value, integer(49))),
        Filter(BinaryOp(">", value, integer(24))),
    )
    q4 = parse_query_file(CSRBENCH / "q4.rq")
    assert q4.form.projection == (Projection(Var("avg"), Aggregate("AVG", value)),)
    assert (q4.windows[0].range, q4.windows[0].step) == (4000, 4000)
    q6 = parse_query_file(CSRBENCH / "q6.rq")
    bgp = q6.form.where.elements[0]
    assert tp(Var("ob1"), f"<{OM}result>", Var("_b1")) in bgp.triples
    assert tp(Var("_b1"), f"<{OM}floatValue>", value1) in bgp.triples
    assert q6.form.where.elements[1] == Filter(BinaryOp(">", value1, value))


# -- errors with positions -------------------------------------------------------------------------------


def test_syntax_error_names_the_expected_tokens() -> None:
    text = "REGISTER QUERY Q AS\nSELECT ?s\nFROM STREAM <s> [RANGE 10s SLIDE]\nWHERE { ?s ?p ?o }"
    assert error_of(text, "q.rq") == "q.rq:3:33: unexpected ']'; expected a duration"


def test_comparison_without_spaces_reads_as_an_iri_and_says_so() -> None:
    text = f"REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ ?s ?p ?o FILTER(?o<10&&?o>5) }}"
    assert error_of(text) == (
        "<query>:2:27: unexpected '<10&&?o>'; expected '&&', ')', '*', '+' or '-', '/', '||', IN, NOT, "
        "a comparison (this was read as an IRI: put spaces around '<' and '>' in comparisons)"
    )


def test_missing_register_clause_is_a_bare_query_named_after_its_file() -> None:
    assert error_of("SELECT * WHERE { ?s ?p ?o }") == (
        "<query>:1:1: the query reads no stream: add FROM STREAM <iri> [RANGE … STEP …] or FROM NAMED "
        "WINDOW w ON <iri> [RANGE … STEP …]"
    )
    query = parse_query(f"SELECT * {STREAM} WHERE {{ ?s ?p ?o }}", "queries/hot-rooms.rq")
    assert (query.name, query.register) == ("hot-rooms", "QUERY")
    assert parse_query(f"SELECT * {STREAM} WHERE {{ ?s ?p ?o }}", "q.rq", name="Api").name == "Api"


def test_unexpected_character() -> None:
    text = f"REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ ?s ?p ?o ~ }}"
    assert error_of(text).startswith(
        "<query>:2:18: unexpected character '~'; expected ',', '.', ';', '{', '}'"
    )


def test_unexpected_end_of_query() -> None:
    text = f"REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ ?s ?p ?o\n"
    message = error_of(text)
    assert message.startswith("<query>:2:17: unexpected end of query; expected ")
    assert message.endswith("(is a '}' missing?)")


def test_unexpected_end_of_query_after_a_line_separator_in_a_string() -> None:
    """Lines end at line feeds only: a U+2028 in a literal does not start a line."""
    text = f'REGISTER QUERY Q AS SELECT * {STREAM}\nWHERE {{ ?s ?p "a\u2028b" .\n  ?s ?p ?o\n'
    assert error_of(text).startswith("<query>:3:11: unexpected end of query; expected ")


def test_undeclared_prefix() -> None:
    text = (
        f"REGISTER QUERY Q AS\nPREFIX ex: <http://ex.org/>\nSELECT * {STREAM}\nWHERE {{ ?s ex:p foaf:name }}"
    )
    assert error_of(text, "q.rq") == "q.rq:4:17: undeclared prefix 'foaf:' (declare it with PREFIX foaf: <…>)"


def test_unbound_projected_variable_stays_unbound_with_a_warning() -> None:
    text = f"REGISTER QUERY Q AS\nSELECT ?y\n  ?x {STREAM}\nWHERE {{ ?y ?p ?o }}"
    _query, warnings = parse_and_validate(text, "q.rq")
    assert warnings == [
        "q.rq:3:3: warning: ?x is projected but the WHERE clause never binds it: it is always unbound"
    ]


def test_undeclared_named_window() -> None:
    text = (
        "REGISTER QUERY Q AS\nSELECT ?s\nFROM NAMED WINDOW <w1> ON <s> [RANGE 1s STEP 1s]\n"
        "WHERE {\n  WINDOW <w1> { ?s ?p ?o }\n  WINDOW <w2> { ?s ?p ?o }\n}"
    )
    assert error_of(text) == (
        "<query>:6:3: WINDOW <w2> is not declared (declare it with FROM NAMED WINDOW <w2> ON <stream> "
        "[RANGE … STEP …]; declared windows: <w1>)"
    )


def test_window_declared_twice() -> None:
    text = (
        "REGISTER QUERY Q AS SELECT ?s\nFROM NAMED WINDOW <w> ON <s> [RANGE 1s STEP 1s]\n"
        "FROM NAMED WINDOW <w> ON <s2> [RANGE 1s STEP 1s]\nWHERE { WINDOW <w> { ?s ?p ?o } }"
    )
    assert error_of(text) == "<query>:3:1: window <w> is declared twice"


def test_at_variable_already_bound_in_the_block() -> None:
    text = (
        "REGISTER QUERY Q AS SELECT ?s\nFROM NAMED WINDOW <w> ON <s> [RANGE 1s STEP 1s]\n"
        "WHERE { WINDOW <w> AT ?t { ?s <p> ?t } }"
    )
    assert error_of(text) == (
        "<query>:3:23: AT ?t binds the time of each slot, but ?t is already bound inside the window block; "
        "use a fresh variable"
    )


def test_two_window_blocks_may_share_their_time_variable() -> None:
    text = (
        "REGISTER QUERY Q AS SELECT ?s ?t\nFROM NAMED WINDOW <w> ON <s> [RANGE 4s STEP 1s]\n"
        "WHERE { WINDOW <w> AT ?t { ?s <p> 1 } WINDOW <w> AT ?t { ?s <q> 1 } }"
    )
    assert len(parse_query(text).form.where.elements) == 2


def test_query_without_any_stream() -> None:
    text = "PREFIX ex: <http://example.org/>\nREGISTER QUERY Q AS SELECT ?s FROM <g.ttl> WHERE { ?s ?p ?o }"
    assert error_of(text).startswith("<query>:2:1: the query reads no stream: add FROM STREAM")


def test_non_grouped_variable_in_aggregate_query() -> None:
    text = f"REGISTER QUERY Q AS\nSELECT ?s (COUNT(*) AS ?n) ?o\n{STREAM}\nWHERE {{ ?s ?p ?o }} GROUP BY ?s"
    assert error_of(text) == (
        "<query>:2:28: ?o is neither grouped nor aggregated: "
        "add it to GROUP BY or use e.g. (SAMPLE(?o) AS ?…)"
    )
    expression = f"REGISTER QUERY Q AS\nSELECT ((?o + SUM(?s)) AS ?n)\n{STREAM}\nWHERE {{ ?s ?p ?o }}"
    assert error_of(expression).startswith("<query>:2:10: ?o is used in SELECT outside an aggregate")


def test_other_scope_errors() -> None:
    head = "REGISTER QUERY Q AS\nSELECT"
    assert error_of(f"{head} * {STREAM}\nWHERE {{ ?s ?p ?o }} GROUP BY ?s") == (
        "<query>:2:1: SELECT * cannot be used with GROUP BY or aggregates; name the variables"
    )
    assert error_of(f"{head} ?s {STREAM}\nWHERE {{ ?s ?p ?o BIND(1 AS ?o) }}") == (
        "<query>:3:18: BIND assigns ?o, which is already bound in this group"
    )
    assert error_of(f"{head} ?s {STREAM}\nWHERE {{ ?s ?p ?o FILTER(COUNT(?o) > 1) }}") == (
        "<query>:3:25: aggregate COUNT is not allowed inside WHERE"
    )
    assert error_of(f"{head} ?s (1 AS ?o) {STREAM}\nWHERE {{ ?s ?p ?o }}") == (
        "<query>:2:17: (… AS ?o) assigns ?o, which is already bound"
    )


def test_sub_selects_are_checked_too() -> None:
    text = (
        f"REGISTER QUERY Q AS\nSELECT ?s {STREAM}\nWHERE {{ ?s ?p ?o {{ SELECT ?zz WHERE {{ ?s ?p ?o }} }} }}"
    )
    assert parse_and_validate(text)[1] == [
        "<query>:3:27: warning: ?zz is projected but the WHERE clause never binds it: it is always unbound"
    ]


def test_construct_with_register_query_is_fine() -> None:
    query, warnings = parse_and_validate(
        f"REGISTER QUERY Q AS CONSTRUCT {{ ?s <p> ?o }} {STREAM} WHERE {{ ?s ?p ?o }}"
    )
    assert (query.register, warnings) == ("QUERY", [])


def test_warnings() -> None:
    text = (
        "REGISTER QUERY Q AS\nCONSTRUCT { ?s <p> ?nope }\nFROM NAMED WINDOW <w> ON <s> [RANGE 1s STEP 1s]\n"
        f"{STREAM}\nWHERE {{ ?s ?p ?o FILTER(?missing) }}"
    )
    _, warnings = parse_and_validate(text, "q.rq")
    assert warnings == [
        "q.rq:5:18: warning: FILTER uses ?missing, which the WHERE clause never binds",
        "q.rq:2:1: warning: CONSTRUCT template uses ?nope, which the WHERE clause never binds",
        "q.rq:3:1: warning: named window <w> is declared but no WINDOW block reads it",
    ]


def test_validate_without_source_points_at_the_select_clause() -> None:
    from rsp.query.syntax.parser import parse_query_unchecked

    query = parse_query_unchecked(f"REGISTER QUERY Q AS\nSELECT ?x {STREAM} WHERE {{ ?y ?p ?o }}")
    assert validate(query) == [
        "<query>:2:1: warning: ?x is projected but the WHERE clause never binds it: it is always unbound"
    ]


def test_unreadable_file() -> None:
    with pytest.raises(QuerySyntaxError, match="cannot read query"):
        parse_query_file(SAMPLES / "does_not_exist.rq")
