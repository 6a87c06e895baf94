"""The Spark SQL side of stream lines (rsp/spark/syntax.py, rsp/spark/source.py): Spark's fast regex
agrees with rsp's own N-Triples parser, Spark drops only the blank and comment lines rsp drops, the lines
it leaves are re-checked by rsp's parser (``recheck_triple``), ``parse_lines`` in a live Spark session
does what the regexes say, stream sources are named, a missing java is reported with how to install
it."""

from __future__ import annotations

import importlib
import re
import string

import pytest
from fuzzing import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import ROOT

pytest.importorskip("pyspark")

from rsp.cli import main  # noqa: E402
from rsp.errors import RspError  # noqa: E402
from rsp.io import ntriples  # noqa: E402
from rsp.io.ntriples import parse_line  # noqa: E402
from rsp.spark.source import Source, parse_lines  # noqa: E402
from rsp.spark.syntax import MAX_TIME, NTRIPLES_BLANK, TRIPLE, char_class, recheck_triple  # noqa: E402

pytest_plugins = ["spark_conftest"]
session_module = importlib.import_module("rsp.spark.session")  # the package's ``session`` is the function

CSRBENCH = ROOT / "tests" / "data" / "csrbench"


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
        written = _java(char_class(allowed, non_ascii))
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
BLANKISH = st.text(alphabet=" \t\r#x.\ufeff\x85\u2028\u2029é<>", max_size=8)
"""Texts near blank and comment lines: the characters Java's and rsp's blank lines are made of, Java's
other line terminators, and a few that make a line no blank one."""


@settings(max_examples=1500, deadline=None)
@given(pieces=LINE)
def test_fast_path_regex_as_specified_and_within_rsp(pieces) -> None:
    """On lines made of good and bad N-Triples pieces, the written-out regex matches as the spec regex
    does, and whatever it takes rsp's parser takes with the same terms and time."""
    line = "".join(pieces)
    fast, spec = _java(TRIPLE).match(line), _java(SPEC_TRIPLE).match(line)
    assert (fast.groups() if fast else None) == (spec.groups() if spec else None)
    if fast:
        (s, p, o), comment = parse_line(line)
        assert fast.groups()[:3] == (s, p, o)
        if fast.group(4) is not None:
            assert comment.split() == [fast.group(4)]


def test_fast_path_takes_plain_lines() -> None:
    for line in ['<http://ex.org/a> <http://ex.org/p> "x"@en-GB . # 12', "_:b1\t<urn:x:y>\t<http://é/>.#3",
                 '<a:b> <c:d> "1"^^<http://t/int> .']:  # fmt: skip
        assert _java(TRIPLE).match(line) is not None, line


def _stream_lines() -> list[str]:
    paths = [CSRBENCH / "stream.nt", ROOT / "examples" / "building" / "temperatures.nt"]
    return [line for path in paths if path.exists() for line in path.read_text().splitlines()]


def test_spark_fast_path_accepts_only_what_rsp_accepts() -> None:
    """Every line of the test streams matches Spark's regex with the terms rsp's parser finds."""
    triple = _java(TRIPLE)
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


@settings(max_examples=500, deadline=None)
@given(text=BLANKISH.map(lambda text: text.replace("\r", "")))
def test_spark_drops_only_the_blank_and_comment_lines_rsp_drops(text) -> None:
    """A line Spark's blank-line pattern drops is one rsp's parser reads as blank or comment
    (``recheck_triple`` gives None): Spark loses no triple and hides no malformed line. (Lines as Spark's
    text and socket sources give them: split at CR as well as LF, so no CR in a line.)"""
    if _java(NTRIPLES_BLANK).match(text):
        assert parse_line(text) is None
        assert recheck_triple(text) is None
        assert _java(TRIPLE).match(text) is None


@pytest.mark.parametrize("text", [" \ufeff", "\ufeff\ufeff", "\t\ufeff # x"])
def test_spark_keeps_the_lines_with_a_bom_inside_that_rsp_refuses(text: str) -> None:
    """rsp's parser refuses these lines (rsp run rejects them): Spark's blank-line pattern keeps them, so
    that rsp's parser rejects them with a reason (a byte order mark is blank only at a line's start)."""
    with pytest.raises(ValueError):
        parse_line(text)
    assert not _java(NTRIPLES_BLANK).match(text)


@settings(max_examples=1500, deadline=None)
@given(pieces=LINE, arrival=st.one_of(st.none(), st.integers(0, 10**6)))
def test_recheck_triple_is_rsps_parser_with_the_time(pieces, arrival) -> None:
    """``recheck_triple`` (rsp's parser on the lines the fast path leaves): None for a blank or comment
    line; rsp's parser's triple with the ``# <ms>`` time; without a comment, the arrival time when
    given; a ValueError with a reason for a line rsp's parser refuses or a line with no time. On a line
    Spark's regex takes with a time, the regex's terms and time."""
    line = "".join(pieces)
    try:
        parsed = parse_line(line)
    except ValueError as refused:
        with pytest.raises(ValueError, match=re.escape(str(refused))):
            recheck_triple(line, arrival)
        return
    if parsed is None:
        assert recheck_triple(line, arrival) is None
        return
    triple, comment = parsed
    words = comment.split() if comment else []
    if words and words[0].isdigit():
        assert recheck_triple(line, arrival) == (int(words[0]), triple)
    elif comment is None and arrival is not None:
        assert recheck_triple(line, arrival) == (arrival, triple)
    elif arrival is None:
        with pytest.raises(ValueError, match="time"):
            recheck_triple(line, arrival)
    else:  # a comment that is no time: the arrival time, or refused as a bad time
        try:
            assert recheck_triple(line, arrival) == (arrival, triple)
        except ValueError as error:
            assert "not a time" in str(error)
    fast = _java(TRIPLE).match(line)
    if fast is not None and fast.group(4) is not None:
        assert recheck_triple(line) == (int(fast.group(4)), fast.groups()[:3])


def test_recheck_triple_refuses_times_beyond_a_long() -> None:
    line = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # {}"
    assert recheck_triple(line.format(MAX_TIME)) == (MAX_TIME, ("<http://ex.org/a>", "<http://ex.org/p>",
                                                                "<http://ex.org/o>"))  # fmt: skip
    with pytest.raises(ValueError, match="out of range"):
        recheck_triple(line.format(MAX_TIME + 1))
    with pytest.raises(ValueError, match="not a time"):
        recheck_triple(line.format("-5"), arrival=7)  # a signed number is a bad time, not a comment


# -- Spark's own run of the regexes (Java's engine, not the Python reading of it above) ----------------
SPECIAL = st.sampled_from([
    '<http://ex.org/a> <http://ex.org/p> "x\u0001y" . # 1',  # the separator parse_lines splits at
    "<http://ex.org/a>\u0001<http://ex.org/p>\u0001<http://ex.org/o>\u0001. # 2",
    "x\u0001y\u0001z\u00013",
    "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # " + "9" * 18,
    "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # " + "9" * 19,  # more than a long holds
    f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # {MAX_TIME}",
    f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # {MAX_TIME + 1}",
    "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # 007",
    '<http://ex.org/a> <http://ex.org/p> "\U0001f600" . # 4',  # outside the BMP: two UTF-16 units in Java
    "<http://ex.org/\U0001f600> <http://ex.org/p> _:b . # 5",
    '<http://ex.org/a> <http://ex.org/p> "a\u2028b" . # 6',
    "# a\u2028b",
    "\ufeff<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # 8",
])  # fmt: skip


def _parsed_as_the_regexes_say(line: str, position: int) -> tuple | None:
    """What ``parse_lines`` must make of a line by the Python reading of Spark's regexes: None when the
    blank-line pattern drops it, else (s, p, o, time, line, position)."""
    if _java(NTRIPLES_BLANK).match(line):
        return None
    fast = _java(TRIPLE).match(line)
    if fast is None or any("\u0001" in group for group in fast.groups() if group):
        return (None, None, None, None, line, position)
    digits = fast.group(4)
    time = int(digits) if digits is not None and int(digits) <= MAX_TIME else None
    return (*fast.groups()[:3], time, line if time is None else None, position)


@pytest.mark.spark
@pytest.mark.generated
@settings(
    max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(st.one_of(BLANKISH, LINE.map("".join), SPECIAL), min_size=1, max_size=200))
def test_spark_parse_lines_is_the_regexes(spark, rows: list[str]) -> None:
    """``parse_lines`` in Spark (Java's regex engine) keeps the lines the blank-line pattern does not
    drop, in order, with their other columns, and gives each the terms and time the Python reading of
    the regexes gives (the reading every test above relies on); a line it does not fully parse keeps
    its text for rsp's parser. Several stream files per Spark job (a job costs a second or more)."""
    frame = spark.createDataFrame(
        [(line, "file:///in/s.nt", None, position, None) for position, line in enumerate(rows)],
        "value string, file string, file_time timestamp, block long, arrival long",
    ).coalesce(1)
    got = [
        (r.s, r.p, r.o, r.time, r.line, r.block)
        for r in parse_lines(frame).select("s", "p", "o", "time", "line", "block").collect()
    ]
    expected = [_parsed_as_the_regexes_say(line, position) for position, line in enumerate(rows)]
    assert got == [row for row in expected if row is not None]


def test_missing_java_says_how_to_get_it(monkeypatch, capsys) -> None:
    import pyspark.sql

    monkeypatch.setattr(session_module, "java_executable", lambda: None)
    monkeypatch.setattr(pyspark.sql.SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    with pytest.raises(RspError, match="apt-get install openjdk-17-jre-headless"):
        session_module.session()
    query = ROOT / "examples" / "building" / "hot-rooms.rq"
    code = main(["spark", str(query), "--stream", str(ROOT / "examples" / "building"), "--available-now"])
    assert code == 2
    assert "apt-get install openjdk-17-jre-headless" in capsys.readouterr().err


def test_java_executable_is_java_home_s_else_the_path_s(monkeypatch, tmp_path) -> None:
    home, bin_dir = tmp_path / "jdk", tmp_path / "bin"
    (home / "bin").mkdir(parents=True)
    bin_dir.mkdir()
    for java in (home / "bin" / "java", bin_dir / "java"):
        java.write_text("#!/bin/sh\n")
        java.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert session_module.java_executable() == str(home / "bin" / "java")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert session_module.java_executable() == str(bin_dir / "java")
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert session_module.java_executable() is None


def test_source_names() -> None:
    assert Source.parse("socket://127.0.0.1:9").kind == "socket"
    assert Source.parse(str(ROOT / "examples")).kind == "directory"
    assert Source.parse(str(ROOT / "examples" / "building" / "temperatures.nt")).kind == "file"
    with pytest.raises(RspError, match="no such file"):
        Source.parse(str(ROOT / "nothing-here"))


@pytest.mark.parametrize("module", ["rsp.spark.source", "rsp.spark.syntax", "rsp.spark.hashing"])
def test_spark_doctests(module: str) -> None:
    """pytest's doctest collection leaves rsp/spark out (it needs pyspark): run its examples here."""
    import doctest

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
