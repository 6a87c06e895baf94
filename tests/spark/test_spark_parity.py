"""The query and LARS differential cases through ``rsp spark --available-now``: every query of
tests/query/test_query_differential.py under each entailment regime, and every fixed LARS case of
tests/engine/test_differential.py, give through Spark the records ``rsp run`` / ``rsp lars`` give (those are
checked against re-materialisation and the naive evaluator in their own suites). Every other case
reaches Spark as three files taken one per micro-batch, so elements cross micro-batch borders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spark_conftest import write_parts
from test_differential import FIXED
from test_query_differential import ONTOLOGY, ORDERED, QUERIES, STREAM, fixed_stream

from rsp.cli import main

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("no_streams_left")]

QUERY_CASES = sorted(QUERIES.items()) + sorted(ORDERED.items())


def _output(tmp_path: Path, command: str, *args: str) -> str:
    output = tmp_path / f"{command}.out"
    assert main([command, *args, "--output", str(output), "--quiet"]) == 0
    return output.read_text()


def _sources(tmp_path: Path, lines: list[str], split: bool, suffix: str) -> tuple[str, list[str]]:
    """The stream as one file (for rsp run/lars, and for Spark when not ``split``) and Spark's source."""
    single = tmp_path / f"stream{suffix}"
    single.write_text("".join(lines))
    if not split:
        return str(single), []
    write_parts(tmp_path / "parts", lines, 3, suffix)
    return str(single), ["--max-files-per-trigger", "1"]


@pytest.mark.parametrize("regime", ["none", "rdfs", "owlrl"])
@pytest.mark.parametrize("index", range(len(QUERY_CASES)), ids=[name for name, _ in QUERY_CASES])
def test_query_differential_cases_through_spark(tmp_path: Path, index: int, regime: str) -> None:
    name, text = QUERY_CASES[index]
    query = tmp_path / f"{name}.rq"
    query.write_text(text)
    lines = [f"{s} {p} {o} . # {t}\n" for t, (s, p, o) in fixed_stream(hash(name) % 1000)]
    split = (index + len(regime)) % 2 == 0
    single, spark_options = _sources(tmp_path, lines, split, ".nt")
    source = str(tmp_path / "parts") if split else single
    common = ["--ontology", str(ONTOLOGY), "--entailment", regime]
    expected = _output(tmp_path, "run", str(query), "--stream", f"{STREAM[1:-1]}={single}", *common)
    got = _output(
        tmp_path, "spark", str(query), "--stream", f"{STREAM[1:-1]}={source}", *common, *spark_options,
        "--available-now",
    )  # fmt: skip
    assert got == expected
    assert len(expected.splitlines()) > 3


@pytest.mark.parametrize("index", range(len(FIXED)))
def test_lars_differential_cases_through_spark(tmp_path: Path, index: int) -> None:
    text, stream = FIXED[index]
    program = tmp_path / "case.lars"
    program.write_text(text + "\n")
    lines = [line + "\n" for line in stream.splitlines()]
    single, spark_options = _sources(tmp_path, lines, index % 2 == 0, ".txt")
    source = str(tmp_path / "parts") if spark_options else single
    expected = _output(tmp_path, "lars", str(program), "--stream", single)
    got = _output(tmp_path, "spark", str(program), "--stream", source, *spark_options, "--available-now")
    assert got == expected
    assert any(json.loads(line)["atoms"] for line in expected.splitlines())
