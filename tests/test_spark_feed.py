"""The driver side of the Spark pipeline without Spark: Arrow micro-batches into the engines, re-checking,
ordering, late elements, rejects; Spark's fast regex agrees with rsp's parser; a missing java is
reported with how to install it."""

from __future__ import annotations

import importlib
import json
import re
from itertools import groupby
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from rsp.cli import main  # noqa: E402
from rsp.io.ntriples import parse_line  # noqa: E402
from rsp.runtime import Engine  # noqa: E402
from rsp.spark import QueryFeeder, Rejects, source  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CSRBENCH = ROOT.parent / "shared" / "csrbench"
QUERY = """REGISTER QUERY Q AS SELECT ?s ?o FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s]
WHERE { ?s <http://ex.org/p> ?o }"""


def _java(pattern: str) -> re.Pattern:
    """Spark's Java regex in Python syntax (the two constructs that differ)."""
    return re.compile(pattern.replace(r"\z", r"\Z").replace(r"\x{FEFF}", "\ufeff"))


def _stream_lines() -> list[str]:
    paths = [CSRBENCH / "stream.nt", ROOT / "examples" / "building" / "temperatures.nt"]
    return [line for path in paths if path.exists() for line in path.read_text().splitlines()]


def test_spark_fast_path_accepts_only_what_rsp_accepts() -> None:
    """Every line of the test streams matches Spark's regex with the terms rsp's parser finds."""
    triple = _java(source.TRIPLE)
    lines = _stream_lines()
    assert lines
    for line in lines:
        m = triple.match(line)
        assert m is not None, line
        (s, p, o), comment = parse_line(line)
        assert m.groups() == (s, p, o, comment.strip())
    for bad in [
        "<http://s> <http://p> <http://o>",
        '<http://s> <http://p> "x . # 1',
        "<s> <http://p> <http://o> . # 1",
    ]:
        assert triple.match(bad) is None


def _table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows)


def _row(line: str, pos: int, *, fast: bool = True, file: str = "file:/in/a.nt", stream: int = 0) -> dict:
    m = _java(source.TRIPLE).match(line) if fast else None
    s, p, o, t = m.groups() if m else (None, None, None, None)
    return {"s": s, "p": p, "o": o, "time": int(t) if t else None, "line": line, "file": file,
            "stream": stream, "file_time": 0, "block": 0, "pos": pos}  # fmt: skip


def test_feeder_orders_rechecks_and_rejects(tmp_path: Path) -> None:
    engine = Engine()
    query = engine.register(QUERY)
    errors = []
    feeder = QueryFeeder(
        engine, ["<http://ex.org/s>"], ["in/"], rejects=Rejects(tmp_path / "rej", errors.append)
    )
    lines = [
        '<http://ex.org/b> <http://ex.org/p> "é" . # 1500',  # not ASCII: re-checked by rsp, good
        "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # 200",
        "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> .",  # no time in a file: malformed
        "<http://ex.org/a> <http://ex.org/p> . # 300",  # malformed
    ]
    feeder(_table([_row(line, i) for i, line in enumerate(lines)]), 0)
    feeder(_table([_row("<http://ex.org/c> <http://ex.org/p> <http://ex.org/o> . # 100", 0)]), 1)  # late
    feeder.close()
    assert [(r.time, sorted(r.bindings, key=str)) for r in query] == [
        (1000, [{"s": "<http://ex.org/a>", "o": "<http://ex.org/o>"}]),
        (
            2000,
            [{"s": "<http://ex.org/a>", "o": "<http://ex.org/o>"}, {"s": "<http://ex.org/b>", "o": '"é"'}],
        ),
    ]
    counter = feeder.counters[0]
    assert (counter.lines, counter.triples, counter.rejected, counter.late) == (5, 2, 2, 1)
    rejected = [
        json.loads(line) for line in (tmp_path / "rej" / "batch-000000.jsonl").read_text().splitlines()
    ]
    assert [r["line"] for r in rejected] == lines[2:]
    assert {r["file"] for r in rejected} == {"/in/a.nt"}
    assert "missing time comment" in rejected[0]["reason"]
    assert len(errors) == 2


def test_feeder_merges_streams_in_the_order_given() -> None:
    """Equal times: the first stream's elements first, as rsp run's merge does."""
    engine = Engine()
    engine.register(
        QUERY.replace(
            "[RANGE 2s STEP 1s]", "[RANGE 2s STEP 1s] FROM STREAM <http://ex.org/t> [RANGE 2s STEP 1s]"
        )
    )
    pushed = []

    def push_sorted(times, triples, stream):  # recorded as the pushes of each time it stands for
        assert len(times) == len(triples)
        pushed.extend((time, stream, len(list(group))) for time, group in groupby(times))

    engine.push_sorted = push_sorted
    feeder = QueryFeeder(engine, ["<http://ex.org/s>", "<http://ex.org/t>"])
    line = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # {}"
    rows = [
        _row(line.format(5), 0, stream=1),
        _row(line.format(5), 1, stream=0),
        _row(line.format(3), 2, stream=1),
    ]
    feeder(_table(rows), 0)
    assert pushed == [(3, "<http://ex.org/t>", 1), (5, "<http://ex.org/s>", 1), (5, "<http://ex.org/t>", 1)]


def test_missing_java_says_how_to_get_it(monkeypatch, capsys) -> None:
    import pyspark.sql

    session_module = importlib.import_module("rsp.spark.session")

    monkeypatch.setattr(session_module, "java_executable", lambda: None)
    monkeypatch.setattr(pyspark.sql.SparkSession, "getActiveSession", staticmethod(lambda: None))
    query = ROOT / "examples" / "building" / "hot-rooms.rq"
    code = main(["spark", str(query), "--stream", str(ROOT / "examples" / "building"), "--available-now"])
    assert code == 2
    assert "apt-get install openjdk-17-jre-headless" in capsys.readouterr().err


def test_source_names() -> None:
    from rsp.errors import RspError
    from rsp.spark import Source

    assert Source.parse("socket://127.0.0.1:9").kind == "socket"
    assert Source.parse(str(ROOT / "examples")).kind == "directory"
    assert Source.parse(str(ROOT / "examples" / "building" / "temperatures.nt")).kind == "file"
    with pytest.raises(RspError, match="no such file"):
        Source.parse(str(ROOT / "nothing-here"))
