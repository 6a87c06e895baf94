"""CSRBench (Dell'Aglio et al., ISWC 2013): the seven correctness queries over the SRBench sensor stream
must give exactly the expected answers at every instant (tests/data/csrbench, see its README).

Answers are compared per instant as multisets of solutions; numeric literals are compared by datatype
and value, as the benchmark's README prescribes for computed numbers (Q4's averages)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from paths import TEST_DATA

from rsp.cli import main
from rsp.io.ntriples import read_triple_file
from rsp.runtime import Engine

CSRBENCH = TEST_DATA / "csrbench"
STREAM_IRI = "<http://www.cwi.nl/SRBench/observations>"
XSD = '"^^<http://www.w3.org/2001/XMLSchema#'


def _normal(term: str):
    if term.startswith('"') and XSD in term:
        lexical, _, datatype = term[1:].rpartition(XSD)
        try:
            return datatype, float(lexical)
        except ValueError:
            return term
    return term


def _instants(records) -> list[tuple[int, Counter]]:
    return [
        (r["time"], Counter(tuple(sorted((k, _normal(v)) for k, v in b.items())) for b in r["bindings"]))
        for r in records
    ]


def _expected(number: int) -> list[dict]:
    lines = (CSRBENCH / "expected" / f"q{number}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_the_benchmark_is_there() -> None:
    assert (CSRBENCH / "stream.nt").exists(), f"CSRBench data not found at {CSRBENCH}"


@pytest.mark.parametrize("number", range(1, 8))
def test_query_matches_the_oracle(number: int) -> None:
    engine = Engine()
    query = engine.register((CSRBENCH / "queries" / f"q{number}.rq").read_text(), f"q{number}.rq")
    for time, triples in read_triple_file(CSRBENCH / "stream.nt"):
        engine.push(triples, time, STREAM_IRI)
    engine.close()
    got = [{"time": r.time, "bindings": r.bindings} for r in query]
    assert _instants(got) == _instants(_expected(number))


def test_lexical_forms_of_data_values_are_kept() -> None:
    """Values projected from the data keep their lexical forms ("54", not "54.0")."""
    engine = Engine()
    query = engine.register((CSRBENCH / "queries" / "q3.rq").read_text(), "q3.rq")
    for time, triples in read_triple_file(CSRBENCH / "stream.nt"):
        engine.push(triples, time, STREAM_IRI)
    engine.close()
    got = sorted(b["value"] for r in query for b in r.bindings)
    expected = sorted(b["value"] for r in _expected(3) for b in r["bindings"])
    assert got == expected


def test_cli_runs_a_csrbench_query(capsys) -> None:
    code = main(
        [
            "run",
            str(CSRBENCH / "queries" / "q6.rq"),
            "--stream",
            f"http://www.cwi.nl/SRBench/observations={CSRBENCH / 'stream.nt'}",
        ]
    )
    assert code == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all(r["query"] == "Q6" for r in records)
    assert _instants(records) == _instants(_expected(6))
