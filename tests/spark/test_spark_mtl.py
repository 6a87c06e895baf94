"""rsp spark with a DatalogMTL program (rsp/spark/mtl.py) against rsp mtl on the same program and stream:
the same results, in the same order, whether the stream is one file or several read one per
micro-batch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from paths import TEST_DATA
from spark_conftest import write_parts

from rsp.cli import main

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("no_streams_left")]

DATA = TEST_DATA / "mtl"


def _cli(tmp_path: Path, name: str, *args: str) -> str:
    output = tmp_path / f"{name}.txt"
    assert main([*args, "--output", str(output), "--quiet"]) == 0
    return output.read_text()


def test_shortstop_through_spark_equals_rsp_mtl(tmp_path: Path) -> None:
    program = tmp_path / "short_stop.mtl"  # the .mtl suffix chooses DatalogMTL
    shutil.copy(DATA / "short_stop.txt", program)
    stream = DATA / "S1-head.txt"
    options = ["--output-predicates", "ShortStop,NotPos", "--format", "jsonl"]
    expected = _cli(tmp_path, "mtl", "mtl", str(program), "--stream", str(stream), *options)
    assert expected.count("ShortStop(") > 0
    got = _cli(tmp_path, "spark", "spark", str(program), "--stream", str(stream), *options, "--available-now")
    assert got == expected
    parts = tmp_path / "parts"
    write_parts(parts, stream.read_text().splitlines(keepends=True), 3)
    got = _cli(
        tmp_path,
        "spark-parts",
        "spark",
        str(DATA / "short_stop.txt"),
        "--mtl",
        "--stream",
        str(parts),
        *options,
        "--max-files-per-trigger",
        "1",
        "--available-now",
    )
    assert got == expected


def test_points_and_horizon_through_spark(tmp_path: Path) -> None:
    program = tmp_path / "p.mtl"
    program.write_text("A(X):-Boxminus[0,1]B(X)\nC(X):-B(X)Since[0,2]D(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("D(a)@0\nB(a)@(0,2.5]\nB(b)@[1,inf)\nD(b)@3\nB(c)@4\n")
    for options in (["--points", "0:4:0.5", "--format", "count"], ["--horizon", "3.5", "--format", "intervals"]):
        expected = _cli(tmp_path, "mtl", "mtl", str(program), "--stream", str(stream), *options)
        got = _cli(
            tmp_path, "spark", "spark", str(program), "--stream", str(stream), *options, "--available-now"
        )
        assert got == expected and got.strip(), options
