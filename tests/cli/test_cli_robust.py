"""Input that is not what the commands expect (bytes that are not UTF-8, times beyond a date-time) gives a
message with its position and an exit code, never a traceback (issue 45, item 5). The generated tests
over random bytes, truncations and mutations of valid inputs are in test_cli_generated.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT, TEST_DATA

from rsp.cli import main

QUERY = ROOT / "examples" / "building" / "hot-rooms.rq"
ONTOLOGY = ROOT / "ontologies" / "building.ttl"
LARS = ROOT / "examples" / "cooling" / "cooling.lars"
MTL = TEST_DATA / "mtl" / "short_stop.txt"

GOOD = {
    "run": b'<http://ex.org/r1> <http://ex.org/temperature> "30"^^<http://www.w3.org/2001/XMLSchema#integer> . # 0\n',
    "lars": b"0 temp(120)\n",
    "mtl": b"Pos(v1)@1\n",
}  # fmt: skip
BAD = {  # each line holds a byte that is not UTF-8 at column 23
    "run": b'<http://ex.org/r1> <p> "\xff" . # 5\n',
    "lars": b"5 temp(1)    % caf\xe9 \xff\n",
    "mtl": b"NotPos(v1)@2 % \xff caf\xe9\n",
}
BAD_COLUMN = {"run": 25, "lars": 19, "mtl": 16}
COMMANDS = {
    "run": ["run", str(QUERY), "--ontology", str(ONTOLOGY), "--entailment", "rdfs"],
    "lars": ["lars", str(LARS)],
    "mtl": ["mtl", str(MTL), "--output-predicates", "Pos,NotPos"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_stream_line_that_is_not_utf8_is_a_bad_line_with_its_column(
    capsys, tmp_path: Path, command: str
) -> None:
    """The line is reported (file:line:column), counted and skipped; the lines around it are read."""
    stream = tmp_path / "stream.txt"
    stream.write_bytes(GOOD[command] + BAD[command] + GOOD[command].replace(b"0", b"9").replace(b"@1", b"@9"))
    code = main([*COMMANDS[command], "--stream", str(stream)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"{stream}:2:{BAD_COLUMN[command]}: byte 0x" in err and "is not UTF-8" in err, err
    assert "1 malformed line(s) skipped" in err or "1 rejected" in err, err
    assert "Traceback" not in err and out


def test_a_rejected_line_that_is_not_utf8_is_kept_byte_for_byte(capsys, tmp_path: Path) -> None:
    stream = tmp_path / "stream.nt"
    stream.write_bytes(GOOD["run"] + BAD["run"])
    reject = tmp_path / "rejected.nt"
    assert main([*COMMANDS["run"], "--stream", str(stream), "--reject", str(reject)]) == 0
    assert reject.read_bytes() == BAD["run"]


@pytest.mark.parametrize(
    "command, suffix",
    [("run", ".rq"), ("explain", ".rq"), ("lars", ".lars"), ("lars --models", ".lars"), ("mtl", ".txt")],
)
def test_a_program_or_query_that_is_not_utf8_is_refused_at_its_line_and_column(
    capsys, tmp_path: Path, command: str, suffix: str
) -> None:
    source = tmp_path / f"program{suffix}"
    source.write_bytes(b"% a comment\n# caf\xc3\xa9 ok\nq(X) :- \xe9t\xe9(X).\n")
    stream = tmp_path / "stream.txt"
    stream.write_bytes(GOOD["lars"])
    argv = [command.split()[0], str(source)]
    if command != "explain":
        argv += ["--stream", str(stream)]
    if command == "lars --models":
        argv += ["--models", "2"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"{source}:3:9: ") and "byte 0xe9 is not UTF-8" in err, err


def test_live_input_that_is_not_utf8_is_a_bad_line_too(tmp_path: Path) -> None:
    """Standard input (read live) goes through the same line readers: the bad line is reported, not
    silently changed into U+FFFD."""
    done = subprocess.run(
        [sys.executable, "-m", "rsp", *COMMANDS["run"], "--stream", "-"],
        input=GOOD["run"] + BAD["run"],
        capture_output=True,
        check=False,
    )
    err = done.stderr.decode("utf-8")
    assert done.returncode == 0, err
    assert f"<stdin>:2:{BAD_COLUMN['run']}: byte 0xff is not UTF-8" in err, err
    assert done.stdout == b'{"query": "HotRooms", "time": 5000, "bindings": []}\n'


@pytest.mark.parametrize("time", ["99999999999999999999999", "253402300800000"])
def test_a_time_beyond_a_date_time_is_an_instant_like_any_other(capsys, tmp_path: Path, time: str) -> None:
    """NOW() at an instant past the year 9999 is unbound (an expression error), not an OverflowError."""
    query = tmp_path / "now.rq"
    query.write_text(
        "REGISTER QUERY Now AS SELECT ?s ?now FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s]\n"
        "WHERE { ?s ?p ?o BIND(NOW() AS ?now) }\n"
    )
    stream = tmp_path / "s.nt"
    stream.write_text(f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # {time}\n")
    instant = f'"time": {int(time) // 1000 * 1000 + 1000}'
    assert main(["run", str(query), "--stream", str(stream)]) == 0
    out, err = capsys.readouterr()
    assert out == f'{{"query": "Now", {instant}, "bindings": [{{"s": "<http://ex.org/a>"}}]}}\n', err
    assert main([*COMMANDS["run"], "--stream", str(stream)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith('{"query": "HotRooms", "time": ') and "Traceback" not in err, err


def test_a_nul_in_a_term_of_a_program_or_an_ontology_is_a_term_like_any_other(capsys, tmp_path: Path) -> None:
    """A NUL character in a string of a program reaches the rules' compiled plans, whose code is named
    after the rule: it was a ValueError (found by test_cli_generated.py). In an ontology's IRI it is
    refused at its place."""
    program = tmp_path / "nul.lars"
    program.write_bytes(b'q(X) :- p(X), X != "a\\x00b".\n'.replace(b"\\x00", b"\x00"))
    stream = tmp_path / "p.stream"
    stream.write_text("0 p(a)\n")
    assert main(["lars", str(program), "--stream", str(stream)]) == 0
    assert capsys.readouterr().out == '{"time": 0, "atoms": ["q(a)"]}\n'
    ontology = tmp_path / "nul.ttl"
    ontology.write_bytes(
        (ROOT / "ontologies" / "traffic.ttl").read_bytes().replace(b"<http:", b"<\x00http:", 1)
    )
    query = str(ROOT / "queries" / "vehicles-in-region.rq")
    # an IRI may not hold a NUL (RFC 3987): the ontology is refused where it is, never a traceback
    assert main(["explain", query, "--ontology", str(ontology), "--entailment", "owlrl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{ontology}:") and "Invalid IRI code point" in err and "Traceback" not in err
