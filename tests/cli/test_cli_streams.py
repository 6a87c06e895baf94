"""`rsp run` with several streams: each file's elements reach its own stream (the windows of the two
streams differ, so an element read into the wrong stream changes the answers), exactly as pushing
the same elements through the Python API."""

from __future__ import annotations

import json
from pathlib import Path

from rsp.cli import main
from rsp.io.ntriples import read_triple_file
from rsp.runtime import Engine

QUERY = """REGISTER QUERY Two AS
PREFIX ex: <http://ex.org/>
SELECT ?room ?v ?d
FROM STREAM <http://ex.org/temps> [RANGE 2s STEP 1s]
FROM STREAM <http://ex.org/doors> [RANGE 4s STEP 1s]
WHERE { ?room ex:temp ?v . OPTIONAL { ?room ex:door ?d } }
ORDER BY ?room ?v
"""
TEMPS = [
    '<http://ex.org/r1> <http://ex.org/temp> "20" . # 0',
    '<http://ex.org/r1> <http://ex.org/temp> "21" . # 1500',
    '<http://ex.org/r2> <http://ex.org/temp> "22" . # 3000',
    '<http://ex.org/r1> <http://ex.org/temp> "23" . # 5200',
]
DOORS = [
    '<http://ex.org/r1> <http://ex.org/door> "open" . # 500',
    '<http://ex.org/r2> <http://ex.org/door> "shut" . # 2500',
]


def test_each_file_feeds_its_own_stream(tmp_path: Path) -> None:
    query, temps, doors = tmp_path / "q.rq", tmp_path / "t.nt", tmp_path / "d.nt"
    query.write_text(QUERY)
    temps.write_text("\n".join(TEMPS) + "\n")
    doors.write_text("\n".join(DOORS) + "\n")
    output = tmp_path / "out.jsonl"
    status = main(["run", str(query), "--stream", f"http://ex.org/temps={temps}",
                   "--stream", f"http://ex.org/doors={doors}", "--output", str(output), "-q"])  # fmt: skip
    assert status == 0
    got = [json.loads(line) for line in output.read_text().splitlines()]

    engine = Engine()
    handle = engine.register(QUERY)
    elements = [(t, 0, "<http://ex.org/temps>", b) for t, b in read_triple_file(temps)]
    elements += [(t, 1, "<http://ex.org/doors>", b) for t, b in read_triple_file(doors)]
    for time, _order, iri, triples in sorted(elements):
        engine.push(triples, time, iri)
    engine.close()
    expected = [{"query": r.query, "time": r.time, "bindings": r.bindings} for r in handle]
    assert [(r["time"], len(r["bindings"])) for r in got] == [(r["time"], len(r["bindings"])) for r in expected]
    # r1's door (opened at 500 ms) is seen through the 4 s door window, not the 2 s temperature window
    at_4000 = next(r for r in got if r["time"] == 4000)
    assert {b["room"]: b.get("d") for b in at_4000["bindings"]} == {"<http://ex.org/r2>": '"shut"'}
    at_2000 = next(r for r in got if r["time"] == 2000)
    assert [b.get("d") for b in at_2000["bindings"]] == ['"open"', '"open"']
