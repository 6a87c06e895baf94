"""rsp mtl on the command line: formats, points, output predicates, refusals and bad lines."""

from __future__ import annotations

import json
import os
import sys

from paths import TEST_DATA

from rsp.cli import main

DATA = TEST_DATA / "mtl"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_shortstop_intervals_equal_the_api(capsys) -> None:
    from rsp.mtl import load, run

    code, out, _ = _run(
        capsys,
        "mtl",
        str(DATA / "short_stop.txt"),
        "--stream",
        str(DATA / "S1-head.txt"),
        "--output-predicates",
        "ShortStop",
    )
    assert code == 0
    lines = (DATA / "S1-head.txt").read_text().splitlines()
    expected = [
        f for _, batch in run(load(DATA / "short_stop.txt"), lines, outputs=["ShortStop"]) for f in batch
    ]
    assert out.splitlines() == expected


def test_points_jsonl_and_count(tmp_path, capsys) -> None:
    program = tmp_path / "p.txt"
    program.write_text("A(X):-Diamondminus[0,1]B(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("B(a)@0\nB(b)@(1.5,2]\nbad line\n<http://x> <http://p> <http://y> . # 3\n")
    code, out, err = _run(
        capsys, "mtl", str(program), "--stream", str(stream), "--points", "0,1:2:0.5", "--format", "jsonl"
    )
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert records == [
        {"time": 0, "atoms": ["A(a)"]},
        {"time": 1, "atoms": ["A(a)"]},
        {"time": "1.5", "atoms": []},
        {"time": 2, "atoms": ["A(b)"]},
    ]
    assert f"{stream}:3" in err and "1 malformed line(s) skipped" in err
    code, out, _ = _run(capsys, "mtl", str(program), "--stream", str(stream), "--format", "count", "-q")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"time": "1.5", "count": 1},
        {"time": 3, "count": 1},
    ]


def test_refusals_exit_2_with_position(tmp_path, capsys) -> None:
    program = tmp_path / "p.txt"
    program.write_text("A(X):-B(X)\nA(X):-B(X)Until[0,1]C(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("B(a)@0\n")
    code, out, err = _run(capsys, "mtl", str(program), "--stream", str(stream))
    assert code == 2 and out == ""
    assert err.startswith(f"{program}:2:1: rule 'A(X):-B(X)Until[0,1]C(X)' is not forward-propagating: Until")
    program.write_text("A(X):-B(X\n")
    code, _, err = _run(capsys, "mtl", str(program), "--stream", str(stream))
    assert code == 2 and f"{program}:1:10: unexpected end of input" in err


def _stdin(monkeypatch, text: str):
    """Standard input becomes a pipe holding ``text`` (small enough for the pipe's buffer); close it after."""
    read, write = os.pipe()
    os.write(write, text.encode("utf-8"))
    os.close(write)
    handle = os.fdopen(read, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", handle)
    return handle


def test_late_fact_fails_under_fail(tmp_path, capsys, monkeypatch) -> None:
    """Live input (here a pipe) comes in the order of the left ends: a fact starting before one already
    read stops the run under --late fail, naming its line, and is dropped and counted by default. A
    regular file is a dataset, read in any order (tests/mtl/test_mtl_datasets.py)."""
    program = tmp_path / "p.txt"
    program.write_text("A(X):-B(X)\n")
    with _stdin(monkeypatch, "B(a)@2\nB(b)@1\n"):
        code, _, err = _run(capsys, "mtl", str(program), "--stream", "-", "--late", "fail")
    assert code == 2 and "<stdin>:2: late fact B(b)" in err
    with _stdin(monkeypatch, "B(a)@2\nB(b)@1\n"):
        code, out, err = _run(capsys, "mtl", str(program), "--stream", "-")
    assert code == 0 and out == "A(a)@[2,2]\n" and "1 late fact(s) dropped" in err
    assert "<stdin>:2: late fact B(b)@[1,1] starting at 1: the stream had reached 2, dropped" in err
    stream = tmp_path / "s.txt"
    stream.write_text("B(a)@2\nB(b)@1\n")
    code, out, err = _run(capsys, "mtl", str(program), "--stream", str(stream), "--late", "fail")
    assert (code, out, err) == (0, "A(b)@[1,1]\nA(a)@[2,2]\n", "")


def test_points_must_be_finite(tmp_path, capsys) -> None:
    """An infinite range would never end: refused with the column of the offending part."""
    program = tmp_path / "p.txt"
    program.write_text("A(X):-B(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("B(a)@2\n")
    for points, message in [
        ("0:inf", "--points:1:1: '0:inf': points must be finite"),
        ("1, -inf:3", "--points:1:4: '-inf:3': points must be finite"),
        ("1,inf", "--points:1:3: 'inf': points must be finite"),
        ("0:5:0", "--points:1:1: '0:5:0': the step must be positive"),
        ("1,x", "--points:1:3: cannot read 'x'"),
    ]:
        code, out, err = _run(capsys, "mtl", str(program), "--stream", str(stream), "--points", points)
        assert code == 2 and out == "" and err.startswith(message), (points, err)


def test_intervals_leave_once_the_stream_has_passed_them(tmp_path, capsys) -> None:
    """With --format jsonl, each fact's time says when it left: A(a)@[0,1] at 3 (the first fact after 1),
    not at the end of the stream; an interval reaching past --horizon is cut there."""
    program = tmp_path / "p.txt"
    program.write_text("A(X):-Diamondminus[0,1]B(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("B(a)@0\nB(b)@3\nB(c)@[3,inf)\nB(d)@10\n")
    code, out, _ = _run(capsys, "mtl", str(program), "--stream", str(stream), "--format", "jsonl")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"time": 3, "facts": ["A(a)@[0,1]"]},
        {"time": 10, "facts": ["A(b)@[3,4]"]},
        {"time": 10, "facts": ["A(c)@[3,10]", "A(d)@[10,10]"]},
    ]
    code, out, _ = _run(capsys, "mtl", str(program), "--stream", str(stream), "--horizon", "5")
    assert out.splitlines() == ["A(a)@[0,1]", "A(b)@[3,4]", "A(c)@[3,5]"]


def test_stats_summary(tmp_path, capsys) -> None:
    """``--stats`` prints the facts read and the peak of stored intervals: with ◇⁻[0,2] the points of one
    atom coalesce into a single stored interval per slice (plus the fact of the slice being closed)."""
    program = tmp_path / "p.txt"
    program.write_text("Warm(X):-Diamondminus[0,2]Hot(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("".join(f"Hot(a)@{t / 4:g}\n" for t in range(40)))
    code, out, err = _run(capsys, "mtl", str(program), "--stream", str(stream), "--stats")
    assert code == 0
    assert out.splitlines() == ["Warm(a)@[0,9.75]"]
    facts, peak = err.split("rsp mtl: ", 1)[1].split(" facts read, ")
    assert facts == "40"
    assert int(peak.split(" stored intervals at most")[0]) <= 3
