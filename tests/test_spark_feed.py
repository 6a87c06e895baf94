"""The driver side of the Spark pipeline without Spark: Arrow micro-batches into the engines, re-checking,
ordering, late elements, rejects; Spark's fast regex agrees with rsp's parser; a missing java is
reported with how to install it."""

from __future__ import annotations

import importlib
import json
import re
import string
from itertools import groupby
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from rsp.cli import main  # noqa: E402
from rsp.io import ntriples  # noqa: E402
from rsp.io.ntriples import parse_line  # noqa: E402
from rsp.runtime import Engine  # noqa: E402
from rsp.spark import QueryFeeder, Rejects, feed, source  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CSRBENCH = ROOT / "tests" / "data" / "csrbench"
QUERY = """REGISTER QUERY Q AS SELECT ?s ?o FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s]
WHERE { ?s <http://ex.org/p> ?o }"""


def _java(pattern: str) -> re.Pattern:
    """Spark's Java regex in Python syntax (the two constructs that differ: ``\\z`` and ``\\x{H…}``)."""
    pattern = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: f"\\U{int(m.group(1), 16):08X}", pattern)
    return re.compile(pattern.replace(r"\z", r"\Z"))


# rsp's own fast path (rsp.io.ntriples, Python regex with ranges and negated classes), anchored and with
# the time comment as Spark's regex has it: the written-out classes must accept exactly what it does.
SPEC_TRIPLE = "^" + ntriples._F_TRIPLE + r"(?:#[ \t]*([0-9]+)[ \t\r]*\z|(?:#[^\r\n]*)?\r?\z)"


def test_written_out_classes_accept_the_same_characters() -> None:
    every = "".join(map(chr, range(0x110000)))
    for spec, allowed, non_ascii in [
        (r'[^\x00-\x20<>"{}|^`\\]', [c for c in every[:0x80] if c > " " and c not in '<>"{}|^`\\'], True),
        (r'[^"\\\n\r]', [c for c in every[:0x80] if c not in '"\\\n\r'], True),
        (r"[A-Za-z0-9+.\-]", "+.-0123456789" + string.ascii_letters, False),
    ]:
        written = _java(source.char_class(allowed, non_ascii))
        assert written.findall(every) == re.findall(spec, every)


SPACE = st.sampled_from(["", " ", "  ", "\t", " \t"])
IRIS = ["<http://ex.org/a>", "<urn:x:y>", "<http://é/>", "<x:\x7f>", "<h://a b>", "<a>", "<1:x>", "<x:<>"]
BNODES = ["_:b1", "_:a.b", "_:b.", "_:-a", "_:é"]
LITERALS = ['"v"', '"a b"', '"é"', '"\\n"', '"\\q"', '"x"@en-GB', '"x"@', '"x"@en-', '"1"^^<http://t/int>',
            '"1"^^<bad>', '"x', '"a"b"', '"tab\t"', '"\\"']  # fmt: skip
TERM = st.sampled_from(IRIS + BNODES + LITERALS + ["", "x", "<"])
LINE = st.tuples(
    SPACE, TERM, SPACE, TERM, SPACE, TERM, SPACE, st.sampled_from([".", "", ","]), SPACE,
    st.sampled_from(["", "# 12", "#12 ", "# 7\r", "# x", "#", "# 1 2", "\r", "# 12 # 3"]),
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(pieces=LINE)
def test_fast_path_regex_as_specified_and_within_rsp(pieces) -> None:
    """On lines made of good and bad N-Triples pieces, the written-out regex matches as the spec regex
    does, and whatever it takes rsp's parser takes with the same terms and time."""
    line = "".join(pieces)
    fast, spec = _java(source.TRIPLE).match(line), _java(SPEC_TRIPLE).match(line)
    assert (fast.groups() if fast else None) == (spec.groups() if spec else None)
    if fast:
        (s, p, o), comment = parse_line(line)
        assert fast.groups()[:3] == (s, p, o)
        if fast.group(4) is not None:
            assert comment.split() == [fast.group(4)]


def test_fast_path_takes_plain_lines() -> None:
    for line in ['<http://ex.org/a> <http://ex.org/p> "x"@en-GB . # 12', "_:b1\t<urn:x:y>\t<http://é/>.#3",
                 '<a:b> <c:d> "1"^^<http://t/int> .']:  # fmt: skip
        assert _java(source.TRIPLE).match(line) is not None, line


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


# -- ordering and bulk pushing of micro-batches, against a model that sorts and pushes element by element --
TWO_STREAMS = QUERY.replace(
    "[RANGE 2s STEP 1s]", "[RANGE 2s STEP 1s] FROM STREAM <http://ex.org/t> [RANGE 1s STEP 500ms]"
)
ROW = st.fixed_dictionaries(
    {
        "time": st.integers(0, 3000),
        "stream": st.sampled_from([0, 1]),
        "file": st.sampled_from(["file:/in/a.nt", "file:/in/b.nt", None]),
        "file_time": st.integers(0, 2),
        "block": st.integers(0, 1),
        "s": st.sampled_from("abc"),
    }
)


def _batch_rows(rows: list[dict], first_pos: int) -> list[dict]:
    line = "<http://ex.org/{}> <http://ex.org/p> <http://ex.org/o> . # {}"
    out = []
    for pos, row in enumerate(rows, first_pos):
        made = _row(line.format(row["s"], row["time"]), pos, file=row["file"], stream=row["stream"])
        made.update(file_time=row["file_time"], block=row["block"])
        out.append(made)
    return out


def _model(batches: list[list[dict]]):
    """Sort each micro-batch (nulls last, as Arrow does) and push element by element."""
    engine = Engine()
    query = engine.register(TWO_STREAMS)
    newest, late, triples = [None, None], 0, 0
    missing = (1, "")
    for rows in batches:
        key = [(r["time"], r["stream"], r["file_time"], (0, r["file"]) if r["file"] else missing, r["block"],
                r["pos"]) for r in rows]  # fmt: skip
        for _key, row in sorted(zip(key, rows, strict=True), key=lambda e: e[0]):
            index = row["stream"]
            if newest[index] is not None and row["time"] < newest[index]:
                late += 1
                continue
            newest[index] = row["time"]
            triples += 1
            stream = ["<http://ex.org/s>", "<http://ex.org/t>"][index]
            engine.push([(row["s"], row["p"], row["o"])], row["time"], stream)
    engine.close()
    return [(r.time, sorted(map(str, r.bindings))) for r in query], late, triples


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(st.lists(ROW, max_size=12), min_size=1, max_size=3), chunk=st.sampled_from([2, 5, 65536]))
def test_feeder_equals_sorting_and_pushing_one_by_one(batches, chunk) -> None:
    tables, pos = [], 0
    for rows in batches:
        tables.append(_batch_rows(rows, pos))
        pos += len(rows)
    engine = Engine()
    query = engine.register(TWO_STREAMS)
    feeder = QueryFeeder(engine, ["<http://ex.org/s>", "<http://ex.org/t>"])
    default, feed.CHUNK = feed.CHUNK, chunk  # small chunks: late prefixes and runs cross chunk borders
    try:
        for batch_id, rows in enumerate(tables):
            if rows:
                feeder(_table(rows), batch_id)
    finally:
        feed.CHUNK = default
    feeder.close()
    results = [(r.time, sorted(map(str, r.bindings))) for r in query]
    late = sum(c.late for c in feeder.counters)
    triples = sum(c.triples for c in feeder.counters)
    assert (results, late, triples) == _model(tables)


@given(rows=st.lists(ROW, max_size=15))
def test_in_order_sorts_only_what_is_out_of_order(rows) -> None:
    table = feed._normalise(_table(_batch_rows(rows, 0)) if rows else _table(_batch_rows([{
        "time": 0, "stream": 0, "file": None, "file_time": 0, "block": 0, "s": "a"}], 0)),
        ("s", "p", "o", "line", "arrival", *feed.ORDER))  # fmt: skip
    expected = table.sort_by([(name, "ascending") for name in feed.ORDER])
    ordered = feed.in_order(table)
    assert ordered.to_pylist() == expected.to_pylist()
    assert feed.in_order(expected).to_pylist() == expected.to_pylist()
    if None not in expected.column("file").to_pylist():
        assert feed.in_order(expected) is expected  # an ordered micro-batch is only checked


@pytest.mark.parametrize("module", ["rsp.spark.feed", "rsp.spark.source"])
def test_spark_doctests(module: str) -> None:
    """pytest's doctest collection leaves rsp/spark out (it needs pyspark): run its examples here."""
    import doctest

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
