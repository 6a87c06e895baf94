"""`rsp run` and `rsp explain`: formats, errors with positions and exit code 2, malformed and late
stream lines, several streams, and the bundled building example with and without RDFS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import ROOT

from rsp.cli import main

BUILDING = ROOT / "examples" / "building"
EX = "http://example.org/"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def building(capsys, *extra: str) -> tuple[int, str, str]:
    return run_cli(
        capsys,
        "run",
        BUILDING / "hot-rooms.rq",
        "--stream",
        BUILDING / "temperatures.nt",
        "--ontology",
        ROOT / "ontologies" / "building.ttl",
        *extra,
    )


def test_building_needs_rdfs_to_find_rooms(capsys) -> None:
    code, out, _ = building(capsys, "--entailment", "rdfs")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["time"] for r in records] == list(range(5000, 45000, 5000))
    rooms = {b["room"] for r in records for b in r["bindings"]}
    assert rooms == {f"<{EX}building#r102>"}  # the meeting room; the warm corridor is no room
    code, out, _ = building(capsys, "--entailment", "none")
    assert all(json.loads(line)["bindings"] == [] for line in out.splitlines())


def test_csv_and_text_formats(capsys) -> None:
    _, out, _ = building(capsys, "--entailment", "rdfs", "--format", "csv")
    lines = out.splitlines()
    assert lines[0] == "time,room,max,readings"
    assert lines[1].startswith("15000,http://example.org/building#r102,30.8,4")
    _, out, _ = building(capsys, "--entailment", "rdfs", "--format", "text")
    assert "HotRooms @ 15000 ms: 1 solution" in out


def query_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "q.rq"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://s> [RANGE 10x STEP 1s]\nWHERE { ?x <http://p> ?y }",
            ":3:31: unknown duration unit 'x'",
        ),
        (
            "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://s> [RANGE 1s STEP 1s]\nWHERE { ?x foo:p ?y }",
            ":4:12: undeclared prefix 'foo:'",
        ),
        (
            "REGISTER QUERY Q AS\nSELECT (?y AS ?x)\nFROM STREAM <http://s> [RANGE 1s STEP 1s]\nWHERE { ?x <http://p> ?y }",
            ":2:15: ",
        ),
        ("REGISTER QUERY Q AS\nSELECT ?x\nWHERE { ?x <http://p> ?y }", ": "),
        (
            "REGISTER QUERY Q AS\nSELECT ?x FROM STREAM <http://s> [RANGE 1s STEP 1s]\nWHERE { ?x <http://p> ",
            ":3:",
        ),
    ],
)
def test_query_errors_have_positions(capsys, tmp_path: Path, text: str, message: str) -> None:
    stream = tmp_path / "s.nt"
    stream.write_text("<http://a> <http://p> <http://b> . # 0\n")
    code, out, err = run_cli(capsys, "run", query_file(tmp_path, text), "--stream", stream)
    assert code == 2 and out == ""
    assert err.startswith(str(tmp_path / "q.rq")) and message in err, err
    assert "Traceback" not in err


def test_malformed_lines_are_reported_kept_and_skipped(capsys, tmp_path: Path) -> None:
    query = query_file(
        tmp_path,
        "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://s> [RANGE 1s STEP 1s]\n"
        "WHERE { ?x <http://p> ?y }",
    )
    stream = tmp_path / "s.nt"
    stream.write_text(
        '<http://a> <http://p> <http://b> . # 0\n<http://c> <http://p> "open . # 100\n'
        "<http://d> <http://p> <http://e> . # soon\n<http://f> <http://p> <http://g> . # 1500\n"
    )
    rejects = tmp_path / "rejects.nt"
    code, out, err = run_cli(capsys, "run", query, "--stream", stream, "--reject", rejects)
    assert code == 0
    assert f"{stream}:2:23: unterminated string literal" in err and f"{stream}:3:38: time comment 'soon'" in err
    assert rejects.read_text().splitlines() == [
        '<http://c> <http://p> "open . # 100',
        "<http://d> <http://p> <http://e> . # soon",
    ]
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["time"], r["bindings"]) for r in records] == [
        (1000, [{"x": "<http://a>"}]),
        (2000, [{"x": "<http://f>"}]),
    ]


def test_several_streams_by_iri(capsys, tmp_path: Path) -> None:
    query = query_file(
        tmp_path,
        "REGISTER QUERY Q AS\nSELECT ?x ?y\nFROM STREAM <http://ex.org/a> [RANGE 2s STEP 1s]\n"
        "FROM STREAM <http://ex.org/b> [RANGE 2s STEP 1s]\nWHERE { ?x <http://p> ?z . ?z <http://q> ?y }",
    )
    a, b = tmp_path / "a.nt", tmp_path / "b.nt"
    a.write_text("<http://x1> <http://p> <http://z1> . # 100\n")
    b.write_text("<http://z1> <http://q> <http://y1> . # 900\n")
    code, out, _ = run_cli(
        capsys, "run", query, "--stream", f"http://ex.org/a={a}", "--stream", f"http://ex.org/b={b}"
    )
    assert code == 0
    assert json.loads(out.splitlines()[0])["bindings"] == [{"x": "<http://x1>", "y": "<http://y1>"}]
    code, _, err = run_cli(capsys, "run", query, "--stream", a)
    assert code == 2 and "the query reads 2 streams" in err


def test_late_elements_are_counted(capsys, tmp_path: Path) -> None:
    query = query_file(
        tmp_path,
        "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://s> [RANGE 1s STEP 1s]\n"
        "WHERE { ?x <http://p> ?y }",
    )
    stream = tmp_path / "s.nt"
    # 2000 closes the instants 1000 and 2000: the element at 1500 that follows is late (DESIGN.md §3)
    stream.write_text(
        "<http://e> <http://p> <http://f> . # 500\n<http://a> <http://p> <http://b> . # 2000\n"
        "<http://c> <http://p> <http://d> . # 1500\n"
    )
    code, out, err = run_cli(capsys, "run", query, "--stream", stream)
    assert code == 0 and "1 late" in err
    assert f"{stream}:3: late element at time 1500 (instant 2000 is already closed), dropped" in err
    assert all("http://c" not in line for line in out.splitlines())
    code, _, err = run_cli(capsys, "run", query, "--stream", stream, "--late", "fail")
    assert code == 2 and f"{stream}:3: " in err


def test_explain_prints_rules_with_origins(capsys) -> None:
    code, out, _ = run_cli(
        capsys,
        "explain",
        BUILDING / "hot-rooms.rq",
        "--ontology",
        ROOT / "ontologies" / "building.ttl",
        "--entailment",
        "rdfs",
    )
    assert code == 0
    assert "g(S,P,O) :- [1] <> s0(S,P,O)." in out
    assert "hot-rooms.rq:9:3" in out and "% rdfs9" in out and "% rdfs3" in out
    assert "filter(?v > 28)" in out


def test_bundled_queries_run(capsys, tmp_path: Path) -> None:
    """The ready-to-run queries in queries/ answer over a small positions stream."""
    ex = "http://example.org/t#"
    stream = tmp_path / "positions.nt"
    stream.write_text(
        f"<{ex}t1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ex}Train> . # 1000\n"
        f"<{ex}t1> <{ex}stopsAt> <{ex}s1> . # 1000\n"
        f'<{ex}t1> <{ex}delay> "3"^^<http://www.w3.org/2001/XMLSchema#integer> . # 2000\n'
    )
    ontology = ROOT / "ontologies" / "transport.ttl"
    code, out, _ = run_cli(capsys, "run", ROOT / "queries" / "vehicles-in-region.rq", "--stream", stream,
                           "--ontology", ontology, "--entailment", "owlrl")
    assert code == 0
    first = json.loads(out.splitlines()[0])
    assert first["bindings"] == [{"region": f"<{ex}c1>", "vehicle": f"<{ex}t1>", "place": f"<{ex}s1>"}]
    code, out, _ = run_cli(capsys, "run", ROOT / "queries" / "delayed-trains.rq", "--stream", stream,
                           "--ontology", ontology, "--entailment", "rdfs")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["bindings"] == [
        {"train": f"<{ex}t1>", "delay": '"3"^^<http://www.w3.org/2001/XMLSchema#integer>', "station": f"<{ex}s1>"}
    ]


# -- issue 13: out of order is not late; blank nodes per file; no stream without a source -------------------
TEMPS = "REGISTER QUERY Q AS\nSELECT ?s ?o\nFROM STREAM <http://ex/s> [RANGE 3s STEP 1s]\nWHERE { ?s <http://ex/p> ?o }"


def test_an_element_out_of_order_but_not_late_is_in_its_windows(capsys, tmp_path: Path) -> None:
    """3347 comes after 3775 while no instant is closed: not late (DESIGN.md §3). The first instant is the
    one after the earliest element, 4000, whose window [1000, 4000) holds both (the API agrees)."""
    query = query_file(tmp_path, TEMPS)
    stream = tmp_path / "s.nt"
    stream.write_text('<http://ex/a> <http://ex/p> "1" . # 3775\n<http://ex/b> <http://ex/p> "2" . # 3347\n')
    code, out, err = run_cli(capsys, "run", query, "--stream", stream)
    assert code == 0 and "late" not in err
    records = [json.loads(line) for line in out.splitlines()]
    both = [{"s": "<http://ex/a>", "o": '"1"'}, {"s": "<http://ex/b>", "o": '"2"'}]
    assert [(r["time"], sorted(r["bindings"], key=str)) for r in records] == [(4000, both)]


def test_late_fail_keeps_the_instants_closed_before(capsys, tmp_path: Path) -> None:
    """1500 and 3500 close 2000 and 3000 (written); 2200 is then late: exit 2 naming its line."""
    query = query_file(tmp_path, TEMPS.replace("RANGE 3s", "RANGE 1s"))
    stream = tmp_path / "s.nt"
    stream.write_text(
        '<http://ex/a> <http://ex/p> "1" . # 1500\n<http://ex/b> <http://ex/p> "2" . # 3500\n'
        '<http://ex/c> <http://ex/p> "3" . # 2200\n<http://ex/d> <http://ex/p> "4" . # 4200\n'
    )
    code, out, err = run_cli(capsys, "run", query, "--stream", stream, "--late", "fail")
    assert code == 2
    assert err == f"{stream}:3: late element at time 2200 (instant 3000 is already closed)\n"
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["time"], r["bindings"]) for r in records] == [
        (2000, [{"s": "<http://ex/a>", "o": '"1"'}]),
        (3000, []),
    ]


def test_each_line_is_an_element_even_among_lines_of_one_time(capsys, tmp_path: Path) -> None:
    """Each line is an element (DESIGN.md §3), as the API and the reference take it: line 2 (0, after a
    line at 2000, nothing closed yet) moves the first instant back to 1000 and, the clock being 2000,
    closes 1000 and 2000; line 3, also at 0, then comes after them: late, and named by its own line.
    Several queries: each late line reported once, naming the query, never a crash."""
    stream = tmp_path / "s.nt"
    stream.write_text(
        "<http://ex/a> <http://ex/p> <http://ex/o> . # 2000\n<http://ex/b> <http://ex/p> <http://ex/o> . # 0\n"
        "<http://ex/c> <http://ex/p> <http://ex/o> . # 0\n<http://ex/d> <http://ex/p> <http://ex/o> . # 500\n"
        "<http://ex/e> <http://ex/p> <http://ex/o> . # 2500\n"
    )
    one = query_file(tmp_path, TEMPS.replace("RANGE 3s", "RANGE 1s"))
    code, out, err = run_cli(capsys, "run", one, "--stream", stream)
    assert code == 0 and "2 late" in err
    assert f"{stream}:3: late element at time 0 (instant 2000 is already closed), dropped" in err
    assert f"{stream}:4: late element at time 500 (instant 2000 is already closed), dropped" in err
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["time"], sorted(b["s"] for b in r["bindings"])) for r in records] == [
        (1000, ["<http://ex/b>"]),
        (2000, []),
        (3000, ["<http://ex/a>", "<http://ex/e>"]),
    ]
    code, _, err = run_cli(capsys, "run", one, "--stream", stream, "--late", "fail")
    assert code == 2 and err == f"{stream}:3: late element at time 0 (instant 2000 is already closed)\n"
    other = tmp_path / "other.rq"
    other.write_text(TEMPS.replace("QUERY Q", "QUERY R"))
    code, out, err = run_cli(capsys, "run", one, other, "--stream", stream)
    assert code == 0
    late_lines = [line for line in err.splitlines() if "late element" in line]
    assert late_lines == [
        f"{stream}:3: late element at time 0 (instant 2000 is already closed) for query Q, dropped",
        f"{stream}:4: late element at time 500 (instant 2000 is already closed) for query Q, dropped",
    ]
    assert "2 late" in err


def test_blank_nodes_of_two_files_are_two_nodes(capsys, tmp_path: Path) -> None:
    """RDF merge: _:n of a.nt and _:n of b.nt never join; within one file _:n is one node across
    elements, and comes out as an N-Triples blank node."""
    from rsp.io.ntriples import parse_line

    query = query_file(
        tmp_path,
        "REGISTER QUERY Q AS\nSELECT ?n ?x ?y\nFROM STREAM <http://ex/a> [RANGE 1s STEP 1s]\n"
        "FROM STREAM <http://ex/b> [RANGE 1s STEP 1s]\nWHERE { ?n <http://ex/p> ?x . ?n <http://ex/q> ?y }",
    )
    a, b = tmp_path / "a.nt", tmp_path / "b.nt"
    a.write_text('_:n <http://ex/p> "1" . # 100\n')
    b.write_text('_:n <http://ex/q> "2" . # 100\n')
    code, out, _ = run_cli(capsys, "run", query, "--stream", f"http://ex/a={a}", "--stream", f"http://ex/b={b}")
    assert code == 0 and [json.loads(line)["bindings"] for line in out.splitlines()] == [[]]
    a.write_text('_:n <http://ex/p> "1" . # 100\n_:n <http://ex/q> "3" . # 600\n')
    code, out, _ = run_cli(capsys, "run", query, "--stream", f"http://ex/a={a}", "--stream", f"http://ex/b={b}")
    ((row,),) = [json.loads(line)["bindings"] for line in out.splitlines()]
    assert (row["x"], row["y"]) == ('"1"', '"3"')
    assert parse_line(f"{row['n']} <http://ex/p> <http://ex/o> .") is not None  # a valid blank node label
    for fmt, shown in (("csv", "_:"), ("sparql-json", '"type": "bnode"'), ("text", "_:")):
        argv = ("run", query, "--stream", f"http://ex/a={a}", "--stream", f"http://ex/b={b}", "--format", fmt)
        code, out, _ = run_cli(capsys, *argv)
        assert code == 0 and shown in out


def test_a_stream_without_a_source_is_refused(capsys, tmp_path: Path) -> None:
    """Issue 13: a FROM STREAM no --stream gives would stay empty and answer wrongly with exit 0."""
    query = query_file(
        tmp_path,
        "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://ex/a> [RANGE 1s STEP 1s]\n"
        "FROM NAMED WINDOW <http://ex/w> ON <http://ex/b> [RANGE 1s STEP 1s]\n"
        "WHERE { ?x <http://ex/p> ?y WINDOW <http://ex/w> { ?x <http://ex/q> ?z } }",
    )
    a = tmp_path / "a.nt"
    a.write_text("<http://ex/x> <http://ex/p> <http://ex/y> . # 100\n")
    code, out, err = run_cli(capsys, "run", query, "--stream", f"http://ex/a={a}")
    assert code == 2 and out == ""
    assert err == (
        f"{query}:4:1: FROM NAMED WINDOW <http://ex/w> ON <http://ex/b>: no --stream gives this stream; "
        "add --stream http://ex/b=FILE\n"
    )
    code, _, err = run_cli(capsys, "run", query, "--stream", f"http://ex/b={a}")
    assert code == 2 and "FROM STREAM <http://ex/a>: no --stream gives this stream" in err


def test_rsp_spark_refuses_a_stream_without_a_source_before_starting_spark(capsys, tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    query = query_file(
        tmp_path,
        "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://ex/a> [RANGE 1s STEP 1s]\n"
        "FROM STREAM <http://ex/b> [RANGE 1s STEP 1s]\nWHERE { ?x <http://ex/p> ?y }",
    )
    code, _, err = run_cli(capsys, "spark", query, "--stream", f"http://ex/a={tmp_path}")
    assert code == 2
    assert err == f"{query}:4:1: FROM STREAM <http://ex/b>: no --stream gives this stream; add --stream http://ex/b=SOURCE\n"
