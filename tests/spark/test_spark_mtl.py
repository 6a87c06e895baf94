"""rsp spark with a DatalogMTL program (rsp.spark.reason_program, rsp/spark/processor_mtl.py) against
rsp mtl on the same program and stream: one bucket gives the same output, in the same order, whether
the stream is one file or several read one per micro-batch; with --partition-by, the same facts (each
micro-batch's sorted); programs that do not partition are refused before Spark starts."""

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
    for options in (
        ["--points", "0:4:0.5", "--format", "count"],
        ["--horizon", "3.5", "--format", "intervals"],
    ):
        expected = _cli(tmp_path, "mtl", "mtl", str(program), "--stream", str(stream), *options)
        got = _cli(
            tmp_path, "spark", "spark", str(program), "--stream", str(stream), *options, "--available-now"
        )
        assert got == expected and got.strip(), options


def test_short_stop_partitioned_equals_rsp_mtl(tmp_path: Path) -> None:
    program = tmp_path / "short_stop.mtl"
    shutil.copy(DATA / "short_stop.txt", program)
    stream = DATA / "S1-head.txt"
    options = ["--format", "intervals", "--output-predicates", "ShortStop,NotPos"]
    expected = _cli(tmp_path, "mtl", "mtl", str(program), "--stream", str(stream), *options)
    assert expected.count("ShortStop(") > 0
    parts = tmp_path / "parts"
    write_parts(parts, stream.read_text().splitlines(keepends=True), 3)
    got = _cli(tmp_path, "spark", "spark", str(program), "--stream", str(parts), *options, "--partition-by", "V",
               "--max-files-per-trigger", "1", "--available-now")  # fmt: skip
    assert sorted(got.splitlines()) == sorted(expected.splitlines())


def test_programs_that_do_not_partition_are_refused(tmp_path: Path, capsys) -> None:
    program = tmp_path / "p.mtl"
    program.write_text("A(V):-B(V)\nC(V):-Diamondminus[0,2]A(V), D(X)\n")
    (tmp_path / "in").mkdir()
    args = [
        "spark",
        str(program),
        "--stream",
        str(tmp_path / "in"),
        "--partition-by",
        "V",
        "--format",
        "intervals",
    ]
    assert main(args) == 2
    assert "p.mtl:2:1: --partition-by V: the atom D(X) does not use V" in capsys.readouterr().err
    program.write_text("A(V,X):-B(V,X)\nC(V):-A(X,V)\n")
    assert main(args) == 2
    assert "--partition-by V: A has V as argument 2 here and as argument 1 at" in capsys.readouterr().err
