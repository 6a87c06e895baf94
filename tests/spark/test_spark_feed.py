"""The driver side of the Spark pipeline without Spark: Arrow micro-batches into the engines, re-checking,
ordering, late elements, rejects; Spark's fast regex agrees with rsp's parser; a missing java is
reported with how to install it."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import string
import tempfile
from itertools import groupby
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import ROOT

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from fuzzing import examples  # noqa: E402

from rsp.cli import main  # noqa: E402
from rsp.errors import LateElementError  # noqa: E402
from rsp.io import ntriples  # noqa: E402
from rsp.io.ntriples import parse_line  # noqa: E402
from rsp.runtime import Engine  # noqa: E402
from rsp.spark import QueryFeeder, Rejects, feed, source  # noqa: E402
from rsp.spark import lines as driver_lines  # noqa: E402

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


def _arrow(lines_: list[str]) -> list[tuple]:
    """What the driver's Arrow parse (rsp.spark.lines) makes of lines: (s, p, o, time, line) each."""
    table = driver_lines.parse(pa.table({"value": pa.array(lines_, pa.string())}))
    columns = [table.column(name).to_pylist() for name in ("s", "p", "o", "time", "line")]
    return list(zip(*columns, strict=True))


@pytest.mark.generated
@settings(max_examples=examples(1500), deadline=None)
@given(pieces=LINE, digits=st.sampled_from(["", "7", "12", "9" * 18, "9" * 19, "1" + "0" * 30]))
def test_arrow_parse_takes_what_sparks_regex_takes(pieces, digits) -> None:
    """The driver's parse (Arrow's RE2 with the named pattern) gives Spark's regex's terms and time on
    the lines it takes, and leaves every other line, and times of more than 18 digits, to rsp's parser
    with its text."""
    line = "".join(pieces) + (f" # {digits}" if digits and "#" not in pieces[-1] else "")
    if _java(source.NTRIPLES_BLANK).match(line):  # a blank or comment line: dropped, as Spark drops it
        assert _arrow([line]) == []
        return
    [(s, p, o, time, text)] = _arrow([line])
    fast = _java(source.TRIPLE).match(line)
    if fast is not None and fast.group(4) and len(fast.group(4)) <= driver_lines.TIME_DIGITS:
        assert (s, p, o, time, text) == (*fast.groups()[:3], int(fast.group(4)), None)
        (terms, comment) = parse_line(line)
        assert (s, p, o) == terms and comment.split() == [fast.group(4)]
    else:
        assert (time, text) == (None, line)
        assert s == (fast.group(1) if fast else None)


def _expected(line: str) -> tuple:
    """What the driver's parse must make of a line that is not blank, by Spark's regex (in Java)."""
    fast = _java(source.TRIPLE).match(line)
    if fast is None:
        return (None, None, None, None, line)
    digits = fast.group(4)
    if digits and len(digits) <= driver_lines.TIME_DIGITS:
        return (*fast.groups()[:3], int(digits), None)
    return (*fast.groups()[:3], None, line)


# lines near the canonical form ``S P O . # T``: mostly single spaces, objects that hold " . # ", spaces,
# escaped quotes, dots; times of every length the parse treats apart
TRICKY = ['"a . # 5"', '" . # "', '"\\" . # 3"', '"x . # 1" . # 2', '"a b"@en', '"1"^^<h://t#i>',
          "_:a.b", "_:x-y"]  # fmt: skip
NEAR_SUBJECT = st.sampled_from(IRIS[:4] * 2 + IRIS + BNODES + ['"v"', "x"])
NEAR_PREDICATE = st.sampled_from(IRIS[:4] * 3 + IRIS + ["_:b1", "x"])
NEAR_OBJECT = st.sampled_from(TRICKY * 3 + IRIS + BNODES + LITERALS + ["x"])
NEAR_SEP = st.sampled_from([" "] * 6 + ["", "  ", "\t"])
NEAR_TAIL = st.sampled_from([" . # "] * 6 + [" .# ", " . #", ". # ", " . #  ", " . ## ", " , # "])
NEAR_TIME = st.sampled_from(["0", "7", "42", "007", "9" * 18, "9" * 19, "1" + "0" * 30, "", "x", "5 ", "5\r"])
NEAR_LINE = st.builds(
    lambda a, s, b, p, c, o, tail, time: f"{a}{s}{b}{p}{c}{o}{tail}{time}",
    st.sampled_from([""] * 6 + [" "]), NEAR_SUBJECT, NEAR_SEP, NEAR_PREDICATE, NEAR_SEP, NEAR_OBJECT, NEAR_TAIL,
    NEAR_TIME,
)  # fmt: skip


@pytest.mark.generated
@settings(max_examples=examples(800), deadline=None)
@given(rows=st.lists(NEAR_LINE, min_size=1, max_size=12))
def test_arrow_parse_of_canonical_and_other_lines_in_one_slice(rows) -> None:
    """Canonical lines (split at spaces) and others (the pattern's groups) mixed in one slice: each row
    gets Spark's regex's terms and time, in order; blank and comment lines dropped."""
    kept = [line for line in rows if not _java(source.NTRIPLES_BLANK).match(line)]
    assert _arrow(rows) == [_expected(line) for line in kept]


def test_canonical_lines_are_split_not_extracted(monkeypatch) -> None:
    """A slice of canonical lines is parsed without the pattern's group extraction, with the terms and
    times the extraction gives; one other line among them is extracted alone."""
    rows = _stream_lines()[:200] + ['<h://s> <h://p> "a . # 5" . # 6', "_:a.b <h://p> _:c.d . # 7"]
    assert all(re.fullmatch(r"\S+ \S+ .+ \. # \d+", row) for row in rows)
    expected = [_expected(row) for row in rows]
    assert all(row[3] is not None for row in expected)
    extracted: list[int] = []
    extract = driver_lines._extract
    monkeypatch.setattr(
        driver_lines, "_extract", lambda values: extracted.append(len(values)) or extract(values)
    )
    assert _arrow(rows) == expected and extracted == []
    assert _arrow([*rows[:3], "<a:b> <c:d> <e:f> .", rows[3]]) == [*expected[:3], _expected("<a:b> <c:d> <e:f> ."),
                                                                     expected[3]]  # fmt: skip
    assert extracted == [1]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet=" \t\r#x.\ufeff\x85\u2028\u2029é<>", max_size=8), max_size=12))
def test_arrow_drops_the_blank_and_comment_lines_spark_drops(texts) -> None:
    """The driver keeps the rows of the lines Spark's blank-line pattern does not match, in order, with
    their other columns (here a position), and looks for blank lines only among those its pattern does
    not take."""
    rows = [*texts, '<http://ex.org/a> <http://ex.org/p> "x" . # 5']
    kept = [i for i, text in enumerate(rows) if not _java(source.NTRIPLES_BLANK).match(text)]
    parsed = driver_lines.parse(pa.table({"value": rows, "pos": list(range(len(rows)))}))
    assert parsed.column("pos").to_pylist() == kept
    assert parsed.column("line").to_pylist() == [None if i == len(rows) - 1 else rows[i] for i in kept]


def test_arrow_parse_in_slices_on_threads_is_one_parse(monkeypatch) -> None:
    """A large micro-batch parsed in slices on several threads gives the rows of one parse, in order."""
    rows = [line for line in _stream_lines() for _ in range(3)] + ["x", "<a:b> <c:d> <e:f> ."]
    whole = _arrow(rows)
    monkeypatch.setattr(driver_lines, "THREADED_ROWS", 10)
    monkeypatch.setattr(driver_lines.os, "cpu_count", lambda: 3)
    assert len(driver_lines._slices(pa.chunked_array([pa.array(rows)]))) == 3
    assert _arrow(rows) == whole
    assert sum(1 for row in whole if row[4] is None) == len(rows) - 2


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
    if fast == "value":  # the line as Spark read it, for the driver to parse (rsp.spark.source.read_lines)
        return {"value": line, "file": file, "stream": stream, "file_time": 0, "block": 0, "pos": pos}
    m = _java(source.TRIPLE).match(line) if fast else None
    s, p, o, t = m.groups() if m else (None, None, None, None)
    return {"s": s, "p": p, "o": o, "time": int(t) if t else None, "line": line, "file": file,
            "stream": stream, "file_time": 0, "block": 0, "pos": pos}  # fmt: skip


@pytest.mark.parametrize("parsed_by", [True, "value"], ids=["spark", "driver"])
def test_feeder_orders_rechecks_and_rejects(tmp_path: Path, parsed_by) -> None:
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
    feeder(_table([_row(line, i, fast=parsed_by) for i, line in enumerate(lines)]), 0)
    late = "<http://ex.org/c> <http://ex.org/p> <http://ex.org/o> . # 100"
    feeder(_table([_row(late, 0, fast=parsed_by)]), 1)
    feeder.close()
    assert [(r.time, sorted(r.bindings, key=str)) for r in query] == [
        (1000, [{"s": "<http://ex.org/a>", "o": "<http://ex.org/o>"}]),
        (
            2000,
            [{"s": "<http://ex.org/a>", "o": "<http://ex.org/o>"}, {"s": "<http://ex.org/b>", "o": '"é"'}],
        ),
    ]
    counter = feeder.counters[0]  # the late triple is read, then dropped: counted in both (as rsp run)
    assert (counter.lines, counter.triples, counter.rejected, counter.late) == (5, 3, 2, 1)
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

    def push_sorted(times, triples, stream, *, plain=False):  # recorded as the pushes of each time
        assert len(times) == len(triples) and plain
        pushed.extend((time, stream, len(list(group))) for time, group in groupby(times))

    engine.push_sorted = push_sorted
    feeder = QueryFeeder(engine, ["<http://ex.org/s>", "<http://ex.org/t>"], plain=True)
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
    """Sort each micro-batch (nulls last, as Arrow does) and push element by element: the engine
    decides what is late (older than the last instant the query closed)."""
    engine = Engine()
    query = engine.register(TWO_STREAMS)
    late = [0, 0]
    missing = (1, "")
    for rows in batches:
        key = [(r["time"], r["stream"], r["file_time"], (0, r["file"]) if r["file"] else missing, r["block"],
                r["pos"]) for r in rows]  # fmt: skip
        for _key, row in sorted(zip(key, rows, strict=True), key=lambda e: e[0]):
            index = row["stream"]
            before = engine.late
            stream = ["<http://ex.org/s>", "<http://ex.org/t>"][index]
            engine.push([(row["s"], row["p"], row["o"])], row["time"], stream)
            late[index] += engine.late - before
    engine.close()
    triples = [sum(1 for rows in batches for r in rows if r["stream"] == index) for index in (0, 1)]
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
    late = [c.late for c in feeder.counters]
    triples = [c.triples for c in feeder.counters]
    assert (results, late, triples) == _model(tables)


# -- lateness as in rsp run (issue 13, defect 4): the runtime decides, whatever micro-batch brings what --
OUT_OF_ORDER = """REGISTER QUERY Q AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 3s STEP 1s]
WHERE { ?s <http://ex.org/p> ?o }"""
LINE = "<http://ex.org/e{}> <http://ex.org/p> <http://ex.org/o> . # {}\n"
LATE_MESSAGE = re.compile(r"late element at time \d+ \(instant \d+ is already closed\)(, dropped)?")
COUNTS = re.compile(r"([\d,]+) lines, ([\d,]+) triples in ([\d,]+) instants, ([\d,]+) rejected, ([\d,]+) late")


def _records(results) -> list[tuple[int, list[str]]]:
    """Each instant's answers as a bag (SELECT without ORDER BY: no order among them)."""
    return [(r["time"], sorted(json.dumps(b, sort_keys=True) for b in r["bindings"])) for r in results]


def _lines(batches: list[list[int]]) -> list[list[str]]:
    """Each micro-batch's lines, in time order as a micro-batch reaches the engine (element k is e<k>)."""
    made, k = [], 0
    for times in batches:
        made.append([LINE.format(k + i, t) for i, t in sorted(enumerate(times), key=lambda e: e[1])])
        k += len(times)
    return made


def _rsp_run(batches: list[list[str]], *extra: str, text: str = OUT_OF_ORDER) -> tuple[int, list, list, tuple]:
    """``rsp run`` over the micro-batches' lines in the order they arrive: status, records, late
    messages (without their position) and the summary's counts (None when it writes none)."""
    with tempfile.TemporaryDirectory() as directory:
        query, stream, output = (Path(directory) / name for name in ("q.rq", "s.nt", "out.jsonl"))
        query.write_text(text)
        stream.write_text("".join(line for lines in batches for line in lines))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main(["run", str(query), "--stream", f"http://ex.org/s={stream}", "--output", str(output),
                           *extra])  # fmt: skip
        records = [json.loads(line) for line in output.read_text().splitlines()]
    counts = COUNTS.search(err.getvalue())
    late = [m.group(0) for m in LATE_MESSAGE.finditer(err.getvalue())]
    return status, records, late, counts.groups() if counts else None


def _spark_feed(batches: list[list[str]], late: str = "drop"):
    """The same micro-batches through a feeder (file part-K.nt for micro-batch K): the engine's query,
    the feeder, the late reports and the error that stopped it (None)."""
    engine = Engine(late=late)
    query = engine.register(OUT_OF_ORDER)
    reports: list = []
    feeder = QueryFeeder(engine, ["<http://ex.org/s>"], ["in/"], on_late=reports.append, plain=True)
    try:
        for batch_id, lines in enumerate(batches):
            file = f"file:/in/part-{batch_id}.nt"
            feeder(_table([_row(line.rstrip(), pos, file=file) for pos, line in enumerate(lines)]), batch_id)
    except LateElementError as err:
        return query, feeder, reports, err
    feeder.close()
    return query, feeder, reports, None


def _counts(feeder) -> tuple:
    c = feeder.counters[0]
    return tuple(f"{n:,}" for n in (c.lines, c.triples, c.instants, c.rejected, c.late))


def test_out_of_order_across_micro_batches_is_not_late() -> None:
    """Issue 13's example: 3775 in one micro-batch, 3347 in the next; no instant is closed yet, so 3347
    is in the window closing at 4000, as in rsp run (the feeder once dropped it as older than 3775)."""
    batches = _lines([[3775], [3347]])
    query, feeder, reports, _ = _spark_feed(batches)
    assert [(r.time, sorted(b["s"] for b in r.bindings)) for r in query][0] == (
        4000, ["<http://ex.org/e0>", "<http://ex.org/e1>"]
    )  # fmt: skip
    assert reports == [] and feeder.counters[0].late == 0
    status, records, late, _counts_ = _rsp_run(batches)
    assert status == 0 and not late
    assert _records(vars(r) for r in query) == _records(records)


def test_late_across_micro_batches_as_rsp_run_reports_it() -> None:
    """4100 closes 4000; a 3900 in a later micro-batch is late (counted, reported with its file, the
    time and the closed instant, dropped), a 4050 is not."""
    batches = _lines([[3775, 4100], [3900, 4050, 3347], [5000]])
    query, feeder, reports, _ = _spark_feed(batches)
    assert [str(e) for e in reports] == [
        "/in/part-1.nt: late element at time 3347 (instant 4000 is already closed), dropped",
        "/in/part-1.nt: late element at time 3900 (instant 4000 is already closed), dropped",
    ]
    status, records, late, counts = _rsp_run(batches)
    assert status == 0
    assert _records(vars(r) for r in query) == _records(records)
    assert [e.message for e in reports] == late
    assert _counts(feeder) == counts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(st.lists(st.integers(0, 9000), min_size=1, max_size=5), min_size=1, max_size=5),
    late=st.sampled_from(["drop", "fail"]),
)
def test_feeder_decides_lateness_as_rsp_run(batches, late) -> None:
    """Micro-batches of elements far out of order: the feeder gives the records, late messages and
    counts that rsp run gives over the same lines in the order they arrive (each micro-batch in time
    order); under --late fail the same instants before the same refused element."""
    lines = _lines(batches)
    query, feeder, reports, error = _spark_feed(lines, late)
    status, records, messages, counts = _rsp_run(lines, "--late", late)
    assert _records(vars(r) for r in query) == _records(records)
    if error is None:
        assert status == 0
        assert [e.message for e in reports] == messages
        if counts is not None or feeder.counters[0].late:
            assert _counts(feeder) == counts
    else:
        assert status == 2 and late == "fail"
        assert [error.message] == messages and error.position.file.startswith("/in/part-")


@settings(max_examples=100, deadline=None)
@given(batches=st.lists(st.lists(st.integers(0, 9000), min_size=1, max_size=6), min_size=1, max_size=4))
def test_queries_of_other_steps_decide_each_for_itself(batches) -> None:
    """Two queries on one stream, with other instants: an element may be late for one and not for the
    other. Each gets what pushing the elements one by one gives it; each late report names the row."""
    texts = [OUT_OF_ORDER, OUT_OF_ORDER.replace("Q AS", "R AS").replace("[RANGE 3s STEP 1s]", "[RANGE 2s STEP 1500ms]")]
    lines = _lines(batches)
    expected = Engine()
    handles = [expected.register(text) for text in texts]
    for batch in lines:
        for line in batch:
            (s, p, o), comment = parse_line(line)
            expected.push([(s, p, o)], int(comment.split()[0]), "<http://ex.org/s>")
    expected.close()
    engine = Engine()
    queries = [engine.register(text) for text in texts]
    reports: list = []
    feeder = QueryFeeder(engine, ["<http://ex.org/s>"], on_late=reports.append, plain=True)
    for batch_id, batch in enumerate(lines):
        feeder(_table([_row(line.rstrip(), pos) for pos, line in enumerate(batch)]), batch_id)
    feeder.close()
    for query, handle in zip(queries, handles, strict=True):
        assert _records(vars(r) for r in query) == _records(vars(r) for r in handle)
    assert feeder.counters[0].late == engine.late == expected.late == len(reports)


def test_late_fail_names_the_element_and_keeps_the_instants_closed_before() -> None:
    batches = _lines([[1500, 3500], [2200, 4200]])
    query, feeder, _reports, error = _spark_feed(batches, "fail")
    assert str(error) == "/in/part-1.nt: late element at time 2200 (instant 3000 is already closed)"
    assert [r.time for r in query] == [2000, 3000]  # 4200, after the late element, never came in
    assert feeder.counters[0].late == 1


def test_a_restart_replays_what_the_engine_took(tmp_path: Path) -> None:
    """With a checkpoint, a run stopped after any committed micro-batch and started again gives rsp
    run's records, out-of-order elements (6100 after 6400) and late ones (4900, 5900) included. The log
    keeps only what the engine took: micro-batch 0's log is deleted once no window needs it, and 4900
    (late: 5500 closed 5000) replayed would then find no instant closed and join the window of 14000."""
    from rsp.spark.checkpoint import Checkpoint

    times = [[0], [5500], [4900, 5600], [6400, 5900], [6100], *([t, t + 250] for t in range(6500, 13500, 500)),
             [12900, 14000], [13100]]  # fmt: skip
    batches = _lines(times)
    query_text = OUT_OF_ORDER.replace("RANGE 3s", "RANGE 10s")
    status, expected, _late, _counts_ = _rsp_run(batches, text=query_text)
    assert status == 0
    for stop in range(len(batches)):
        directory = tmp_path / f"ck-{stop}"
        results: list = []
        for first in (True, False):
            engine = Engine()
            handle = engine.register(query_text)
            handle.subscribe(results.append)
            feeder = QueryFeeder(engine, ["<http://ex.org/s>"], plain=True)
            feeder.resume(Checkpoint(directory, {"kind": "query"}))
            for batch_id, lines in enumerate(batches):
                if first and batch_id > stop:
                    break  # killed once micro-batch `stop` committed
                feeder(_table([_row(line.rstrip(), pos) for pos, line in enumerate(lines)]), batch_id)
        feeder.close()
        assert _records(vars(r) for r in results) == _records(expected), stop


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


@pytest.mark.parametrize(
    "module",
    ["rsp.spark.feed", "rsp.spark.source", "rsp.spark.lines", "rsp.spark.syntax", "rsp.spark.hashing",
     "rsp.spark.resident_driver"],
)  # fmt: skip
def test_spark_doctests(module: str) -> None:
    """pytest's doctest collection leaves rsp/spark out (it needs pyspark): run its examples here."""
    import doctest

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
