"""Result writers: exact output of every format on hand-written records, and that the machine formats
parse back (json, rdflib's SPARQL JSON results parser, rdflib's N-Triples parser)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pytest
import rdflib
from rdflib.query import Result as RdflibResult

from rsp.errors import RspError
from rsp.io.ntriples import read_triple_batches
from rsp.io.results import (
    AskResult,
    ConstructResult,
    SelectResult,
    TextWriter,
    decode_term,
    make_writer,
)

XSD = "http://www.w3.org/2001/XMLSchema#"
A, B = "<http://ex.org/a>", "<http://ex.org/b>"
INT = f'"30"^^<{XSD}integer>'
TRICKY = r'"say \"hi\"\nnow, ok"@en-GB'  # quotes, an escaped newline and a comma
TAB = '"a\tb"'  # a raw tab, allowed in N-Triples literals

SELECT = SelectResult("Hot", 5000, ("x", "v"), [{"x": A, "v": INT}, {"x": "_:b1"}, {"x": A, "v": INT}])
TYPED = SelectResult("Hot", 6000, ("x", "v"), [{"x": B, "v": TRICKY}, {"v": TAB}])
EMPTY = SelectResult("Hot", 7000, ("x", "v"), [])
P, Q = "<http://ex.org/p>", "<http://ex.org/q>"
CONSTRUCT = ConstructResult("Make", 1000, [(A, P, TRICKY), ("_:n", Q, INT)])
EMPTY_CONSTRUCT = ConstructResult("Make", 2000, [])
ASK = AskResult("Any", 3000, True)


def written(format: str, *results, **options) -> str:
    handle = io.StringIO()
    writer = make_writer(format, handle, **options)
    for result in results:
        writer.write(result)
    writer.close()
    return handle.getvalue()


def test_jsonl_is_exactly_the_design_format() -> None:
    no = AskResult("Any", 4000, False)
    text = written("jsonl", SELECT, TYPED, EMPTY, CONSTRUCT, EMPTY_CONSTRUCT, ASK, no)
    assert text.splitlines() == [
        '{"query": "Hot", "time": 5000, "bindings": [{"x": "<http://ex.org/a>", "v": "\\"30\\"^^<http://www.w3.org/2001/XMLSchema#integer>"}, {"x": "_:b1"}, {"x": "<http://ex.org/a>", "v": "\\"30\\"^^<http://www.w3.org/2001/XMLSchema#integer>"}]}',  # noqa: E501
        '{"query": "Hot", "time": 6000, "bindings": [{"x": "<http://ex.org/b>", "v": "\\"say \\\\\\"hi\\\\\\"\\\\nnow, ok\\"@en-GB"}, {"v": "\\"a\\tb\\""}]}',  # noqa: E501
        '{"query": "Hot", "time": 7000, "bindings": []}',
        '{"query": "Make", "time": 1000, "triples": ["<http://ex.org/a> <http://ex.org/p> \\"say \\\\\\"hi\\\\\\"\\\\nnow, ok\\"@en-GB .", "_:n <http://ex.org/q> \\"30\\"^^<http://www.w3.org/2001/XMLSchema#integer> ."]}',  # noqa: E501
        '{"query": "Make", "time": 2000, "triples": []}',
        '{"query": "Any", "time": 3000, "boolean": true}',
        '{"query": "Any", "time": 4000, "boolean": false}',
    ]
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["bindings"][0] == {"x": A, "v": INT}
    assert records[1]["bindings"] == [{"x": B, "v": TRICKY}, {"v": TAB}]  # terms round-trip exactly


def test_jsonl_projects_in_variable_order_and_keeps_duplicates() -> None:
    result = SelectResult("Q", 0, ("b", "a"), [{"a": A, "b": B, "hidden": A}, {"a": A, "b": B, "hidden": A}])
    assert written("jsonl", result) == (
        '{"query": "Q", "time": 0, "bindings": [{"b": "<http://ex.org/b>", "a": "<http://ex.org/a>"}, '
        '{"b": "<http://ex.org/b>", "a": "<http://ex.org/a>"}]}\n'
    )


def test_sparql_json_per_instant() -> None:
    lines = written("sparql-json", TYPED, SELECT, ASK, EMPTY).splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "query": "Hot",
            "time": 6000,
            "head": {"vars": ["x", "v"]},
            "results": {
                "bindings": [
                    {
                        "x": {"type": "uri", "value": "http://ex.org/b"},
                        "v": {"type": "literal", "value": 'say "hi"\nnow, ok', "xml:lang": "en-GB"},
                    },
                    {"v": {"type": "literal", "value": "a\tb"}},
                ]
            },
        },
        {
            "query": "Hot",
            "time": 5000,
            "head": {"vars": ["x", "v"]},
            "results": {
                "bindings": [
                    {
                        "x": {"type": "uri", "value": "http://ex.org/a"},
                        "v": {"type": "literal", "value": "30", "datatype": f"{XSD}integer"},
                    },
                    {"x": {"type": "bnode", "value": "b1"}},
                    {
                        "x": {"type": "uri", "value": "http://ex.org/a"},
                        "v": {"type": "literal", "value": "30", "datatype": f"{XSD}integer"},
                    },
                ]
            },
        },
        {"query": "Any", "time": 3000, "head": {}, "boolean": True},
        {"query": "Hot", "time": 7000, "head": {"vars": ["x", "v"]}, "results": {"bindings": []}},
    ]
    assert lines[2] == '{"query": "Any", "time": 3000, "head": {}, "boolean": true}'


def test_sparql_json_is_read_by_rdflib() -> None:
    line = written("sparql-json", TYPED).splitlines()[0]
    parsed = RdflibResult.parse(io.StringIO(line), format="json")
    assert [str(v) for v in parsed.vars] == ["x", "v"]
    rows = [{str(k): v for k, v in row.asdict().items()} for row in parsed]
    assert rows == [
        {"x": rdflib.URIRef("http://ex.org/b"), "v": rdflib.Literal('say "hi"\nnow, ok', lang="en-GB")},
        {"v": rdflib.Literal("a\tb")},
    ]
    parsed = RdflibResult.parse(io.StringIO(written("sparql-json", SELECT).splitlines()[0]), format="json")
    assert [row.asdict() for row in parsed][0]["v"] == rdflib.Literal("30", datatype=rdflib.XSD.integer)
    assert RdflibResult.parse(io.StringIO(written("sparql-json", ASK)), format="json").askAnswer is True


def test_csv_with_time_column_header_once() -> None:
    text = written("csv", SELECT, TYPED, EMPTY)
    assert text == (
        "time,x,v\r\n"
        "5000,http://ex.org/a,30\r\n"
        "5000,_:b1,\r\n"
        "5000,http://ex.org/a,30\r\n"
        '6000,http://ex.org/b,"say ""hi""\nnow, ok"\r\n'
        "6000,,a\tb\r\n"
    )


def test_csv_header_comes_from_the_writer_before_any_instant() -> None:
    assert written("csv", variables=["x", "v"]) == "time,x,v\r\n"
    assert written("csv", EMPTY, SELECT, variables=["v"]) == "time,v\r\n5000,30\r\n5000,\r\n5000,30\r\n"


def test_tsv_keeps_terms_and_escapes_tabs() -> None:
    assert written("tsv", SELECT, TYPED, EMPTY) == (
        "time\t?x\t?v\n"
        f"5000\t<http://ex.org/a>\t{INT}\n"
        "5000\t_:b1\t\n"
        f"5000\t<http://ex.org/a>\t{INT}\n"
        f"6000\t<http://ex.org/b>\t{TRICKY}\n"
        '6000\t\t"a\\tb"\n'
    )


def test_csv_and_tsv_for_ask_and_construct() -> None:
    assert written("tsv", ASK, AskResult("Any", 4000, False)) == "time\t?boolean\n3000\ttrue\n4000\tfalse\n"
    assert written("csv", CONSTRUCT) == (
        "time,subject,predicate,object\r\n"
        '1000,http://ex.org/a,http://ex.org/p,"say ""hi""\nnow, ok"\r\n'
        "1000,_:n,http://ex.org/q,30\r\n"
    )


def test_csv_for_ask_and_construct_as_rsp_run_makes_the_writer() -> None:
    """`rsp run` passes a CONSTRUCT's or ASK's (empty) variables: the header still names the columns."""
    assert written("csv", ASK, variables=()) == "time,boolean\r\n3000,true\r\n"
    assert written("csv", CONSTRUCT, variables=()).startswith("time,subject,predicate,object\r\n1000,")


def test_ntriples_output_is_an_rsp_stream_and_parses_with_rdflib() -> None:
    text = written("ntriples", CONSTRUCT, EMPTY_CONSTRUCT, ConstructResult("Make", 3000, [(B, B, '"x\ny"')]))
    assert text == (
        f"<http://ex.org/a> <http://ex.org/p> {TRICKY} . # 1000\n"
        f"_:n <http://ex.org/q> {INT} . # 1000\n"
        '<http://ex.org/b> <http://ex.org/b> "x\\ny" . # 3000\n'
    )
    graph = rdflib.Graph().parse(data=text, format="nt")
    assert len(graph) == 3
    literal = rdflib.Literal('say "hi"\nnow, ok', lang="en-GB")
    assert (rdflib.URIRef("http://ex.org/a"), rdflib.URIRef("http://ex.org/p"), literal) in graph
    batches = read_triple_batches(text.splitlines(keepends=True))
    assert [(t, len(b)) for t, b in batches] == [(1000, 2), (3000, 1)]
    with pytest.raises(RspError, match="needs a CONSTRUCT query"):
        written("ntriples", SELECT)


def test_text_table_for_people() -> None:
    text = written("text", SELECT, EMPTY, CONSTRUCT, ASK)
    assert text == (
        "Hot @ 5000 ms: 3 solutions\n"
        "  x                  v\n"
        f"  {'-' * 17}  {'-' * len(INT)}\n"
        f"  <http://ex.org/a>  {INT}\n"
        "  _:b1\n"
        f"  <http://ex.org/a>  {INT}\n"
        "\n"
        "Hot @ 7000 ms: no solutions\n"
        "\n"
        "Make @ 1000 ms: 2 triples\n"
        f"  <http://ex.org/a> <http://ex.org/p> {TRICKY} .\n"
        f"  _:n <http://ex.org/q> {INT} .\n"
        "\n"
        "Any @ 3000 ms: true\n"
        "\n"
    )
    assert "\033[" not in text


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_text_colour_only_on_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = FakeTerminal()
    make_writer("text", terminal).write(ASK)
    assert terminal.getvalue() == "\033[1mAny @ 3000 ms\033[0m: true\n\n"
    monkeypatch.setenv("NO_COLOR", "1")
    assert TextWriter(FakeTerminal()).colour is False


def test_writers_flush_per_instant_and_shortcuts_use_the_query_name() -> None:
    class Recorder(io.StringIO):
        flushes = 0

        def flush(self) -> None:
            self.flushes += 1

    handle = Recorder()
    writer = make_writer("jsonl", handle, variables=["x"], query_name="Q")
    writer.select(0, [{"x": A}])
    writer.ask(1, False)
    writer.construct(2, [])
    assert handle.flushes == 3
    assert handle.getvalue().splitlines()[1] == '{"query": "Q", "time": 1, "boolean": false}'


def test_unknown_format_and_engine_values() -> None:
    with pytest.raises(RspError, match="unknown output format 'xml'"):
        make_writer("xml", io.StringIO())
    result = SelectResult("Q", 0, ("n", "f", "ok"), [{"n": 3, "f": 2.5, "ok": True}])
    assert json.loads(written("jsonl", result))["bindings"] == [
        {"n": f'"3"^^<{XSD}integer>', "f": f'"2.5"^^<{XSD}double>', "ok": f'"true"^^<{XSD}boolean>'}
    ]


def test_result_like_objects_are_accepted() -> None:
    @dataclass
    class Loose:
        query: str
        time: int
        variables: tuple = ()
        bindings: list | None = None
        triples: list | None = None
        boolean: bool | None = None

    assert written("jsonl", Loose("Q", 1, ("x",), bindings=[{"x": A}])) == (
        '{"query": "Q", "time": 1, "bindings": [{"x": "<http://ex.org/a>"}]}\n'
    )
    assert written("ntriples", Loose("Q", 2, triples=[f"{A} {P} {TRICKY} ."])) == f"{A} {P} {TRICKY} . # 2\n"
    assert written("jsonl", Loose("Q", 3, boolean=False)) == '{"query": "Q", "time": 3, "boolean": false}\n'


@pytest.mark.parametrize(
    "term, decoded",
    [
        (r"<http://ex.org/\u00e9>", ("uri", "http://ex.org/é", None, None)),
        ("_:x", ("bnode", "x", None, None)),
        (r'"\U0001F600\\"', ("literal", "😀\\", None, None)),
        (f'"5"^^<{XSD}int>', ("literal", "5", None, f"{XSD}int")),
    ],
)
def test_decode_term(term: str, decoded: tuple) -> None:
    assert decode_term(term) == decoded
