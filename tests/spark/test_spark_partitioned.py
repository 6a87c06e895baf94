"""``rsp spark --partition-by ?v``: one engine per vehicle on Spark's executors gives, at every instant,
exactly the answers of one engine over the whole stream (``rsp run``), over several micro-batches
(instants closed by other keys' data through the watermark and event-time timeouts, the last ones
finished from the state store), with ISTREAM too; refusals come before Spark starts."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest
from paths import ROOT
from spark_conftest import write_parts

from rsp.cli import main

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]

QUERY = """REGISTER {policy} Slow AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?slowest) (COUNT(DISTINCT ?place) AS ?places)
FROM STREAM <http://ex.org/pos> [RANGE 5s STEP 1s]
WHERE {{ ?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 20) }}
GROUP BY ?v
"""
INT = "<http://www.w3.org/2001/XMLSchema#integer>"


def _positions(seed: int, elements: int) -> list[str]:
    """Vehicles reporting speed and place, one every 250 ms (times from 0, some vehicles idle for long)."""
    rng = random.Random(seed)
    lines = []
    for k in range(elements):
        vehicle = rng.randrange(6) if k < elements // 2 else rng.randrange(3)
        lines.append(
            f'<http://ex.org/bus{vehicle}> <http://ex.org/speed> "{rng.randrange(40)}"^^{INT} . # {k * 250}\n'
        )
        lines.append(
            f"<http://ex.org/bus{vehicle}> <http://ex.org/at> <http://ex.org/stop{rng.randrange(4)}> . # {k * 250}\n"
        )
    return lines


def _answers(path: Path) -> dict[int, list[str]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["time"]: [json.dumps(b, sort_keys=True) for b in r["bindings"]] for r in records}  # in order


@pytest.mark.parametrize("policy, parts", [("QUERY", 4), ("ISTREAM QUERY", 3)])
def test_partitioned_answers_equal_one_engine(tmp_path: Path, spark, no_streams_left, policy, parts) -> None:
    query = tmp_path / "slow.rq"
    query.write_text(QUERY.format(policy=policy))
    lines = _positions(7, 160)
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    incoming = tmp_path / "in"
    write_parts(incoming, lines, parts, ".nt")
    single, partitioned = tmp_path / "single.jsonl", tmp_path / "partitioned.jsonl"
    assert main(["run", str(query), "--stream", str(stream), "-q", "--output", str(single)]) == 0
    assert main(["spark", str(query), "--stream", str(incoming), "--partition-by", "?v", "--available-now",
                 "--max-files-per-trigger", "1", "-q", "--output", str(partitioned)]) == 0  # fmt: skip
    expected, got = _answers(single), _answers(partitioned)
    assert sorted(got) == sorted(expected)  # every instant, none twice
    assert got == expected
    assert partitioned.read_text() == single.read_text()  # byte for byte: the answers in their order
    assert sum(len(c) for c in expected.values()) > 20


BAD = [  # malformed: rejected once (by partition 0), as rsp run rejects them
    "<http://ex.org/bus1> <http://ex.org/speed> . # 2000\n",
    "<http://ex.org/bus2> <http://ex.org/at> <http://ex.org/stop1> .\n",
]


def _odd(line: str, k: int) -> str:
    """The same element in a form Spark's regex does not take (rsp's parser reads it): a time comment
    with a word after the time, a non-ASCII literal, a \\u escape in an IRI (a key of its own)."""
    match k % 3:
        case 0:
            return line.replace("\n", " ms\n")
        case 1:
            return line.replace("<http://ex.org/stop", "<http://ex.org/stop\\u00e9")
        case _:
            return line.replace("<http://ex.org/bus", "<http://ex.org/b\\u0075s")


def test_partitioned_lines_only_rsp_parses_reach_their_key(
    tmp_path: Path, spark, no_streams_left, capsys
) -> None:
    """Lines Spark's regex does not take go to every partition, each partition's step parses them and
    keeps the keys Spark's shuffle gives it: the answers are rsp run's (an odd line of bus1 counts in
    the engine that has bus1's other lines), malformed lines are reported once."""
    query = tmp_path / "slow.rq"
    query.write_text(QUERY.format(policy="QUERY"))
    lines = [_odd(line, k) if k % 5 == 0 else line for k, line in enumerate(_positions(11, 120))]
    lines[40:40] = BAD
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    incoming = tmp_path / "in"
    write_parts(incoming, lines, 3, ".nt")
    single, partitioned = tmp_path / "single.jsonl", tmp_path / "partitioned.jsonl"
    run_rejects, rejects = tmp_path / "run-rejects.nt", tmp_path / "rejects"
    assert main(["run", str(query), "--stream", str(stream), "-q", "--output", str(single),
                 "--reject", str(run_rejects)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["spark", str(query), "--stream", str(incoming), "--partition-by", "?v", "--available-now",
                 "--max-files-per-trigger", "1", "--output", str(partitioned), "--reject", str(rejects)]) == 0  # fmt: skip
    assert _answers(partitioned) == _answers(single)
    assert sorted(run_rejects.read_text().splitlines(keepends=True)) == sorted(BAD)
    got = [json.loads(line) for path in sorted(rejects.iterdir()) for line in path.read_text().splitlines()]
    assert sorted(row["line"] + "\n" for row in got) == sorted(BAD)
    assert "missing time comment" in capsys.readouterr().err


TWO_STREAMS = """REGISTER QUERY Two AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (COUNT(DISTINCT ?place) AS ?places)
FROM STREAM <http://ex.org/speeds> [RANGE 2s STEP 1s]
FROM STREAM <http://ex.org/places> [RANGE 5s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place }
GROUP BY ?v
"""


def test_partitioned_two_streams_equal_one_engine(tmp_path: Path, spark, no_streams_left) -> None:
    """Two streams whose windows differ: each line keeps its stream through the keying in the tasks, so
    the partitioned run answers as one engine does, over one micro-batch (``rsp run``) and over three
    (``rsp spark`` without ``--partition-by``: the same arrival order)."""
    query = tmp_path / "two.rq"
    query.write_text(TWO_STREAMS)
    lines = _positions(23, 60)
    speeds, places = lines[0::2], lines[1::2]
    args = []
    for name, part in (("speeds", speeds), ("places", places)):
        (tmp_path / f"{name}.nt").write_text("".join(part))
        write_parts(tmp_path / name, part, 3, ".nt")
        args += ["--stream", f"http://ex.org/{name}={tmp_path / name}"]
    run = tmp_path / "run.jsonl"
    assert main(["run", str(query), "-q", "--output", str(run),
                 "--stream", f"http://ex.org/speeds={tmp_path / 'speeds.nt'}",
                 "--stream", f"http://ex.org/places={tmp_path / 'places.nt'}"]) == 0  # fmt: skip
    one, single, partitioned = (tmp_path / f"{name}.jsonl" for name in ("one", "single", "partitioned"))
    spark_args = ["spark", str(query), *args, "--available-now", "-q"]
    assert main([*spark_args, "--partition-by", "?v", "--output", str(one)]) == 0
    assert _answers(one) == _answers(run)
    assert main([*spark_args, "--max-files-per-trigger", "1", "--output", str(single)]) == 0
    assert main([*spark_args, "--max-files-per-trigger", "1", "--partition-by", "?v", "--output",
                 str(partitioned)]) == 0  # fmt: skip
    assert _answers(partitioned) == _answers(single)


TRAINS = """REGISTER QUERY Trains AS
PREFIX ex: <http://example.org/t#>
SELECT ?v (COUNT(?s) AS ?n)
FROM STREAM <http://ex.org/pos> [RANGE 3s STEP 1s]
WHERE { ?v a ex:Train . ?v ex:at ?s }
GROUP BY ?v
"""


def test_partitioned_with_rdfs_equals_one_engine(tmp_path: Path, spark, no_streams_left) -> None:
    """With the transport ontology under RDFS, trains are known from their type or from a commuter
    on board (the range of ex:onBoard), and ex:stopsAt triples are ex:at triples: each key's engine
    has the ontology and derives these from its own triples."""
    t = "<http://example.org/t#{}>".format
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    rng = random.Random(11)
    lines = []
    for k in range(240):
        vehicle = t(f"v{rng.randrange(5)}")
        triple = rng.choice([
            (vehicle, rdf_type, t(rng.choice(["Train", "Bus"]))),
            (vehicle, t("at"), t(f"s{rng.randrange(1, 4)}")),
            (vehicle, t("stopsAt"), t(f"s{rng.randrange(1, 4)}")),
            (t(f"ann{rng.randrange(3)}"), t("onBoard"), vehicle),
            (t(f"s{rng.randrange(1, 4)}"), rdf_type, t("Station")),  # nothing the query reads: left out
        ])  # fmt: skip
        lines.append(" ".join(triple) + f" . # {k * 100}\n")
    query = tmp_path / "trains.rq"
    query.write_text(TRAINS)
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    write_parts(tmp_path / "in", lines, 3, ".nt")
    options = ["--ontology", str(ROOT / "ontologies" / "transport.ttl"), "--entailment", "rdfs", "-q"]
    single, partitioned = tmp_path / "single.jsonl", tmp_path / "partitioned.jsonl"
    assert main(["run", str(query), "--stream", str(stream), *options, "--output", str(single)]) == 0
    assert main(["spark", str(query), "--stream", str(tmp_path / "in"), "--partition-by", "?v",
                 "--available-now", "--max-files-per-trigger", "1", *options, "--output", str(partitioned)]) == 0  # fmt: skip
    expected, got = _answers(single), _answers(partitioned)
    assert got == expected
    found = {json.loads(b)["v"] for answers in expected.values() for b in answers}
    assert len(found) >= 3
    # some answers come only from a commuter on board (the range axiom, onBoard keyed by its object)
    stream.write_text("".join(line for line in lines if "onBoard" not in line))
    assert main(["run", str(query), "--stream", str(stream), *options, "--output", str(single)]) == 0
    assert _answers(single) != expected


SUMS = """REGISTER QUERY Sums AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (SUM(?s) AS ?sum)
FROM STREAM <http://ex.org/pos> [RANGE 3s STEP 1s]
WHERE { ?v ex:speed ?s }
GROUP BY ?v
"""


def test_partitioned_lateness_across_micro_batches_as_rsp_run(
    tmp_path: Path, spark, no_streams_left, capsys
) -> None:
    """One file per micro-batch, elements out of order across them: rsp run's answers and late count."""
    batches = [[("bus0", 3775)], [("bus1", 2500)], [("bus0", 5500), ("bus0", 6000)], [("bus2", 4900)],
               [("bus0", 3100)], [("bus0", 7000)]]  # fmt: skip
    lines = [f'<http://ex.org/{v}> <http://ex.org/speed> "{k}"^^{INT} . # {t}\n'
             for k, (v, t) in enumerate(e for batch in batches for e in batch)]  # fmt: skip
    query, stream, incoming = tmp_path / "sums.rq", tmp_path / "all.nt", tmp_path / "in"
    query.write_text(SUMS)
    stream.write_text("".join(lines))
    incoming.mkdir()
    for index, batch in enumerate(batches):  # dated in order: one file per micro-batch
        start = sum(len(b) for b in batches[:index])
        path = incoming / f"part-{index}.nt"
        path.write_text("".join(lines[start : start + len(batch)]))
        os.utime(path, (1_000_000 + index, 1_000_000 + index))
    single, partitioned = tmp_path / "single.jsonl", tmp_path / "partitioned.jsonl"
    capsys.readouterr()
    assert main(["run", str(query), "--stream", f"http://ex.org/pos={stream}", "--output", str(single)]) == 0
    run_late = re.findall(r", (\d+) late$", capsys.readouterr().err, re.M)
    assert main(["spark", str(query), "--stream", f"http://ex.org/pos={incoming}", "--partition-by", "?v",
                 "--available-now", "--max-files-per-trigger", "1", "--output", str(partitioned)]) == 0  # fmt: skip
    spark_late = re.findall(r", (\d+) late$", capsys.readouterr().err, re.M)
    assert run_late == ["2"]  # 4900 (6000 is closed) and 3100
    assert _answers(partitioned) == _answers(single)
    assert spark_late == run_late


def test_refusals_come_before_spark_starts(tmp_path: Path, capsys) -> None:
    query = tmp_path / "q.rq"
    query.write_text(QUERY.format(policy="QUERY").replace("GROUP BY ?v", "GROUP BY ?v ORDER BY ?v"))
    (tmp_path / "in").mkdir()
    assert main(["spark", str(query), "--stream", str(tmp_path / "in"), "--partition-by", "?v"]) == 2
    assert (
        "--partition-by ?v: ORDER BY, LIMIT and OFFSET rank answers across partitions"
        in capsys.readouterr().err
    )
    cooling = ROOT / "examples" / "cooling" / "cooling.lars"
    assert main(["spark", str(cooling), "--stream", str(tmp_path / "in"), "--partition-by", "V"]) == 2
    assert "cooling.lars:5:1: --partition-by V: the head steam(…) does not use V" in capsys.readouterr().err
    ontology = ["--ontology", str(ROOT / "ontologies" / "transport.ttl"), "--entailment", "owlrl"]
    query.write_text(TRAINS)
    assert (
        main(["spark", str(query), "--stream", str(tmp_path / "in"), "--partition-by", "?v", *ontology]) == 2
    )
    assert "(owl:sameAs) derives" in capsys.readouterr().err


PROGRAM = """limit(20).
seen(V, X) :- [3] <> p(V, X).
fast(V) :- p(V, S), limit(L), S > L.
calm(V) :- p(V, _S), not [2] <> alarm(V).
@T late(V) :- [4] @T alarm(V), not fast(V).
always(L) :- limit(L).
"""


def _atom_lines(seed: int, points: int) -> list[str]:
    """Vehicles' readings and alarms, gaps without atoms and bare time lines, times from 3."""
    rng = random.Random(seed)
    lines = []
    for t in range(3, 3 + points):
        if rng.random() < 0.15:
            lines.append(f"{t}\n")  # a time point without atoms
            continue
        for _ in range(rng.randrange(3)):
            vehicle = f"bus{rng.randrange(5)}"
            lines.append(f"{t} p({vehicle},{rng.randrange(30)})\n")
            if rng.random() < 0.3:
                lines.append(f"{t} alarm({vehicle})\n")
    return lines


@pytest.mark.parametrize(
    "program, lines",
    [
        (ROOT / "examples" / "traffic" / "short-stops.lars", None),
        (None, _atom_lines(11, 60)),
    ],
)
def test_partitioned_program_equals_one_engine(
    tmp_path: Path, spark, no_streams_left, program, lines
) -> None:
    if program is None:
        program = tmp_path / "p.lars"
        program.write_text(PROGRAM)
    else:
        lines = (ROOT / "examples" / "traffic" / "positions.nt").read_text().splitlines(keepends=True)
    stream = tmp_path / "all.stream"
    stream.write_text("".join(lines))
    incoming = tmp_path / "in"
    write_parts(incoming, lines, 4)
    single, partitioned = tmp_path / "single.jsonl", tmp_path / "partitioned.jsonl"
    assert main(["lars", str(program), "--stream", str(stream), "-q", "--output", str(single)]) == 0
    assert main(["spark", str(program), "--stream", str(incoming), "--partition-by", "V", "--available-now",
                 "--max-files-per-trigger", "1", "-q", "--output", str(partitioned)]) == 0  # fmt: skip
    expected = single.read_text().splitlines()
    assert partitioned.read_text().splitlines() == expected
    assert sum(len(json.loads(line)["atoms"]) for line in expected) > 20
