"""`rsp run` and `rsp explain`: formats, errors with positions and exit code 2, malformed and late
stream lines, several streams, and the bundled building example with and without RDFS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsp.cli import main

ROOT = Path(__file__).resolve().parents[1]
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
            "REGISTER QUERY Q AS\nSELECT ?z\nFROM STREAM <http://s> [RANGE 1s STEP 1s]\nWHERE { ?x <http://p> ?y }",
            ":2:8: ",
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
    assert f"{stream}:2: " in err and f"{stream}:3: " in err
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
    stream.write_text("<http://a> <http://p> <http://b> . # 2000\n<http://c> <http://p> <http://d> . # 500\n")
    code, out, err = run_cli(capsys, "run", query, "--stream", stream)
    assert code == 0 and "1 late" in err
    assert all("http://c" not in line for line in out.splitlines())
    code, _, err = run_cli(capsys, "run", query, "--stream", stream, "--late", "fail")
    assert code == 2 and f"{stream}:2: " in err


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
