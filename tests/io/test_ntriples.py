"""N-Triples stream reading: the full line grammar with reasons, time policies, late elements, reject files,
the chunked fast path agreeing with line-by-line validation, and the real CSRBench stream."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import TEST_DATA

from rsp.errors import StreamError
from rsp.io.ntriples import (
    ArrivalTime,
    FileTime,
    LatePolicy,
    ReadCounters,
    parse_line,
    read_triple_batches,
    read_triple_file,
)

XSD = "http://www.w3.org/2001/XMLSchema#"
CSRBENCH = TEST_DATA / "csrbench" / "stream.nt"


def read(lines, **options):
    """Batches, error strings and late strings of reading ``lines`` as ``s.nt``."""
    errors: list[StreamError] = []
    late: list[StreamError] = []
    batches = list(read_triple_batches(lines, "s.nt", on_error=errors.append, on_late=late.append, **options))
    return batches, [str(e) for e in errors], [str(e) for e in late]


# -- the line grammar ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, triple",
    [
        ("<http://s> <http://p> <http://o> .", ("<http://s>", "<http://p>", "<http://o>")),
        ("<http://s><http://p><http://o>.", ("<http://s>", "<http://p>", "<http://o>")),
        ("\t_:b1 <http://p> _:b.2 .  ", ("_:b1", "<http://p>", "_:b.2")),
        ("_:a <http://p> _:a.", ("_:a", "<http://p>", "_:a")),
        ('<urn:x> <http://p> "54"^^<' + XSD + "double> .", ("<urn:x>", "<http://p>", f'"54"^^<{XSD}double>')),
        ('<urn:x> <http://p> "chat"@fr-CA .', ("<urn:x>", "<http://p>", '"chat"@fr-CA')),
        (
            r'<urn:x> <http://p> "a\"b\\c\td\n\u00e9\U0001F600" .',
            ("<urn:x>", "<http://p>", r'"a\"b\\c\td\n\u00e9\U0001F600"'),
        ),
        ('<urn:x> <http://p> "raw\ttab é" .', ("<urn:x>", "<http://p>", '"raw\ttab é"')),
        (
            r"<http://ex.org/\u00e9t\u00e9> <http://p> <http://o#frag> .",
            (r"<http://ex.org/\u00e9t\u00e9>", "<http://p>", "<http://o#frag>"),
        ),
        ("_:ünï <http://p> _:x-y .", ("_:ünï", "<http://p>", "_:x-y")),
        ('<http://s> <http://p> "" .', ("<http://s>", "<http://p>", '""')),
    ],
)
def test_valid_lines_keep_terms_exactly(line: str, triple: tuple[str, str, str]) -> None:
    assert parse_line(line) == (triple, None)
    assert parse_line(line + " # 7\r\n") == (triple, " 7")


@pytest.mark.parametrize("line", ["", "   \n", "# a comment", "  # <http://s> <http://p> <http://o> ."])
def test_blank_and_comment_lines_are_skipped(line: str) -> None:
    assert parse_line(line) is None


@pytest.mark.parametrize(
    "line, reason",
    [
        ('<http://s> <http://p> "open .', "unterminated string literal"),
        ("<http://s> <http://p> <http://o .", "unterminated IRI in object"),
        ("<http://s> <http://p> <http://o>", "missing final '.'"),
        ("<http://s> <http://p> <http://o> # 5", "missing final '.'"),
        ("<http://s> <http://p> .", "missing object"),
        ("<http://s> <http://p> <http://o> <http://x> .", "expected '.' after the object, found '<http://x>'"),
        ("<http://s> <http://p> <http://o> . junk", "unexpected text after '.': 'junk'"),
        (r'<http://s> <http://p> "bad \q" .', r"bad escape '\\q' in string literal"),
        (r'<http://s> <http://p> "bad \u12" .', r"bad escape '\\u' in string literal"),
        ("<http://s> <http://p> <http://a b> .", "space in IRI '<http://a'"),
        ("<http://s> <http://p> <http://a{b}> .", "invalid character '{' in IRI"),
        (r"<http://s> <http://p> <http://a\n> .", "bad escape in IRI"),
        ("<s> <http://p> <http://o> .", "relative IRI '<s>'"),
        ('"lit" <http://p> <http://o> .', "expected an IRI or blank node as subject, found '\"lit\"'"),
        ("<http://s> _:p <http://o> .", "expected an IRI as predicate, found '_:p'"),
        ("<http://s> <http://p> _:-x .", "bad blank node label '_:-x'"),
        ('<http://s> <http://p> "x"@1en .', "bad language tag '@1en'"),
        ('<http://s> <http://p> "x"^^xsd:int .', "datatype after '^^' must be an IRI"),
        ('<http://s> <http://p> "x"^^<int> .', "relative IRI '<int>'"),
        ("http://s <http://p> <http://o> .", "expected an IRI or blank node as subject, found 'http://s'"),
    ],
)
def test_malformed_lines_have_a_short_reason(line: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_line(line)
    assert str(info.value).startswith(reason)


# -- the reader ------------------------------------------------------------------------------------------


def test_batches_per_time_in_arrival_order() -> None:
    lines = [
        "<http://a> <http://p> <http://b> . # 0\n",
        "<http://a> <http://p> <http://c> . #0\n",
        "# a comment\n",
        "\n",
        '_:x <http://p> "v"@en . # 1200\n',
        "<http://a> <http://p> <http://d> . # 3000",
    ]
    counters = ReadCounters()
    batches = list(read_triple_batches(lines, counters=counters))
    assert batches == [
        (0, [("<http://a>", "<http://p>", "<http://b>"), ("<http://a>", "<http://p>", "<http://c>")]),
        (1200, [("_:x", "<http://p>", '"v"@en')]),
        (3000, [("<http://a>", "<http://p>", "<http://d>")]),
    ]
    assert counters == ReadCounters(lines=6, triples=4, rejected=0, late=0, timestamps=3)


def test_malformed_lines_are_reported_counted_rejected_and_skipped(tmp_path: Path) -> None:
    lines = [
        "<http://a> <http://p> <http://b> . # 0\n",
        "<http://a> <http://p> <http://b> . # soon\n",
        "<http://a> <http://p> <http://b> .\n",
        '<http://a> <http://p> "x . # 0\n',
        "<http://a> <http://p> <http://c> . # 10\n",
        "<http://a> <http://p> <http://b> . # -5\n",
    ]
    reject = tmp_path / "rejects.nt"
    counters = ReadCounters()
    errors: list[StreamError] = []
    batches = list(
        read_triple_batches(lines, "in.nt", on_error=errors.append, reject=reject, counters=counters)
    )
    assert [t for t, _ in batches] == [0, 10]
    assert [str(e) for e in errors] == [
        "in.nt:2:38: time comment 'soon' is not a time (milliseconds ≥ 0)",
        "in.nt:3:35: missing time comment (expected '. # <milliseconds>')",
        "in.nt:4:23: unterminated string literal",
        "in.nt:6:38: time comment '-5' is not a time (milliseconds ≥ 0)",
    ]
    assert all(e.position.file == "in.nt" for e in errors)
    assert [e.position.line for e in errors] == [2, 3, 4, 6]
    assert reject.read_text(encoding="utf-8") == "".join(lines[i] for i in (1, 2, 3, 5))
    assert counters.rejected == 4 and counters.triples == 2 and counters.lines == 6


def test_reject_handle_gets_the_original_line_and_errors_raise_without_a_handler() -> None:
    handle = io.StringIO()
    bad = "<http://a> <http://p> <http://b c> . # 0"
    with pytest.raises(StreamError, match="s.nt:1:23: space in IRI"):
        list(read_triple_batches([bad], "s.nt", reject=handle))
    assert handle.getvalue() == bad + "\n"


def test_late_elements_are_dropped_and_reported() -> None:
    lines = [f"<http://a> <http://p> <http://o{i}> . # {t}" for i, t in enumerate([0, 5, 5, 3, 5, 3, 7])]
    counters = ReadCounters()
    batches, errors, late = read(lines, counters=counters)
    assert [(t, [o for _, _, o in b]) for t, b in batches] == [
        (0, ["<http://o0>"]),
        (5, ["<http://o1>", "<http://o2>", "<http://o4>"]),
        (7, ["<http://o6>"]),
    ]
    assert late == [
        "s.nt:4: late element at time 3 (stream already at 5), dropped",
        "s.nt:6: late element at time 3 (stream already at 5), dropped",
    ]
    assert counters.late == 2 and counters.triples == 5 and not errors


def test_late_elements_fail_under_the_fail_policy() -> None:
    lines = ["<http://a> <http://p> <http://b> . # 5", "<http://a> <http://p> <http://b> . # 4"]
    with pytest.raises(StreamError) as info:
        list(read_triple_batches(lines, "s.nt", late_policy=LatePolicy.FAIL))
    assert str(info.value) == "s.nt:2: late element at time 4 (stream already at 5)"
    assert LatePolicy("fail") is LatePolicy.FAIL


def test_file_time_policy_makes_one_instant() -> None:
    lines = ["<http://a> <http://p> <http://b> .", "# note", "<http://a> <http://p> <http://c> . # a note"]
    batches, errors, _ = read(lines, time_policy=FileTime(4000))
    b, c = ("<http://a>", "<http://p>", "<http://b>"), ("<http://a>", "<http://p>", "<http://c>")
    assert batches == [(4000, [b, c])]
    assert not errors


def test_a_file_whose_first_triple_has_a_time_uses_line_times_whatever_the_policy() -> None:
    lines = ["<http://a> <http://p> <http://b> . # 10", "<http://a> <http://p> <http://c> ."]
    batches, errors, _ = read(lines, time_policy=FileTime(4000))
    assert batches == [(10, [("<http://a>", "<http://p>", "<http://b>")])]
    assert errors == ["s.nt:2:35: missing time comment (expected '. # <milliseconds>')"]


def test_untimed_file_rejects_a_later_time_comment() -> None:
    lines = ["<http://a> <http://p> <http://b> .", "<http://a> <http://p> <http://c> . # 20"]
    batches, errors, _ = read(lines, time_policy=FileTime(0))
    assert batches == [(0, [("<http://a>", "<http://p>", "<http://b>")])]
    assert errors == ["s.nt:2:38: time comment in a stream whose first triple has none"]


def test_arrival_time_policy_reads_the_clock_per_line() -> None:
    ticks = iter([100, 100, 250, 240])
    lines = [f"<http://a> <http://p> <http://o{i}> ." for i in range(4)]
    batches, _, late = read(lines, time_policy=ArrivalTime(lambda: next(ticks)))
    assert [(t, len(b)) for t, b in batches] == [(100, 2), (250, 1)]
    assert late == ["s.nt:4: late element at time 240 (stream already at 250), dropped"]


def test_read_triple_file(tmp_path: Path) -> None:
    path = tmp_path / "s.nt"
    path.write_text("\ufeff<http://a> <http://p> <http://b> . # 1\r\n", encoding="utf-8")
    assert list(read_triple_file(path)) == [(1, [("<http://a>", "<http://p>", "<http://b>")])]
    with pytest.raises(StreamError, match="cannot read stream"):
        list(read_triple_file(tmp_path / "missing.nt"))


# -- the fast path agrees with line-by-line validation ----------------------------------------------------


def reference(lines: list[str]):
    """Line-by-line reading with :func:`parse_line` only: batches, errors, late (line numbers)."""
    batches: list = []
    errors, late = [], []
    for number, line in enumerate(lines, 1):
        try:
            parsed = parse_line(line)
        except ValueError as err:
            errors.append(f"s.nt:{number}:{err.column}: {err}")
            continue
        if parsed is None:
            continue
        triple, comment = parsed
        word = comment.split()[0] if comment and comment.strip() else ""
        text = line.rstrip("\r\n")
        if comment is None:
            errors.append(f"s.nt:{number}:{len(text) + 1}: missing time comment (expected '. # <milliseconds>')")
            continue
        if not word.isascii() or not word.isdigit():
            column = text.index(word, len(text) - len(comment)) + 1 if word else len(text) + 1
            errors.append(f"s.nt:{number}:{column}: time comment {word!r} is not a time (milliseconds ≥ 0)")
            continue
        time = int(word)
        if batches and time == batches[-1][0]:
            batches[-1][1].append(triple)
        elif batches and time < batches[-1][0]:
            newest = batches[-1][0]
            late.append(f"s.nt:{number}: late element at time {time} (stream already at {newest}), dropped")
        else:
            batches.append((time, [triple]))
    return batches, errors, late


TERM_S = st.sampled_from(["<http://ex.org/s>", "_:b1", "<urn:a:b>", "<s>", "<http://a b>", "_:", '"x"'])
TERM_P = st.sampled_from(["<http://ex.org/p>", "<http://p#x>", "_:p", "<http://p"])
TERM_O = st.sampled_from(
    [
        "<http://ex.org/o>",
        "_:o.1",
        '"plain"',
        '"a\\"b\\\\c\\n"',
        '"tab\there"',
        '"\\u00e9t\\u00E9"@fr',
        '"54"^^<http://www.w3.org/2001/XMLSchema#double>',
        '"x"@en-GB',
        '"x"@-en',
        '"open',
        '"bad\\q"',
        "<http://o",
        "_:o.",
        '"é"^^<rel>',
    ]
)
TIME = st.one_of(st.integers(0, 4).map(str), st.sampled_from(["", "x", "-1", "3 note", "007"]))
SPACE = st.sampled_from(["", " ", "\t", "  "])


GOOD_S = st.sampled_from(["<http://ex.org/s>", "_:b1", "<urn:a:b>"])
GOOD_O = st.sampled_from(["<http://ex.org/o>", "_:o.1", '"plain"', '"a\\"b"', '"x"@en-GB', '"5"^^<urn:int>'])


@st.composite
def stream_line(draw, good: bool = False) -> str:
    """A line that is often bad, or (``good``) a well-formed timed line, with a few bad lines."""
    if good and draw(st.integers(0, 19)):
        s, o, sp = draw(GOOD_S), draw(GOOD_O), draw(SPACE)
        time, end = draw(st.integers(0, 4)), draw(st.sampled_from(["\n", ""]))
        return f"{s}{sp}<http://p> {o} .{sp}# {time}{end}"
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["", "# comment", "   ", "junk"]))
    s, p, o = draw(TERM_S), draw(TERM_P), draw(TERM_O)
    sp = [draw(SPACE) for _ in range(5)]
    dot = draw(st.sampled_from([".", ".", ".", ""]))
    time = draw(TIME)
    comment = f"#{draw(SPACE)}{time}" if draw(st.booleans()) or time else ""
    end = draw(st.sampled_from(["\n", "\r\n", ""]))
    return f"{sp[0]}{s}{sp[1]}{p}{sp[2]}{o}{sp[3]}{dot}{sp[4]}{comment}{end}"


@settings(max_examples=300, deadline=None)
@given(st.lists(stream_line(), max_size=25) | st.lists(stream_line(True), max_size=25), st.integers(1, 5))
def test_chunked_reader_equals_line_by_line_reference(lines: list[str], chunk: int) -> None:
    rejects = io.StringIO()
    counters = ReadCounters()
    batches, errors, late = read(lines, chunk=chunk, reject=rejects, counters=counters)
    assert (batches, errors, late) == reference(lines)
    assert counters.rejected == len(errors) and counters.late == len(late) and counters.lines == len(lines)
    assert counters.triples == sum(len(b) for _, b in batches) and counters.timestamps == len(batches)
    bad = {int(e.split(":")[1]) for e in errors}
    assert rejects.getvalue() == "".join(
        line if line.endswith("\n") else line + "\n" for i, line in enumerate(lines, 1) if i in bad
    )


# -- the CSRBench stream ---------------------------------------------------------------------------------


def test_csrbench_stream_reads_completely_and_round_trips_through_rdflib(monkeypatch) -> None:
    text = CSRBENCH.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    counters = ReadCounters()
    batches = list(read_triple_file(CSRBENCH, counters=counters))
    assert counters == ReadCounters(lines=15188, triples=15188, rejected=0, late=0, timestamps=len(batches))
    expected_sizes = Counter(int(line.rsplit("#", 1)[1]) for line in lines)
    assert {t: len(b) for t, b in batches} == expected_sizes
    times = [t for t, _ in batches]
    assert times == sorted(expected_sizes) and times[0] == 0 and times[-1] == 33000
    # the same result for a list of lines without newlines, in small chunks
    assert list(read_triple_batches(text.splitlines(), chunk=7)) == batches

    ours = Counter(triple for _, batch in batches for triple in batch)
    monkeypatch.setattr(rdflib, "NORMALIZE_LITERALS", False)  # rdflib would turn "79"^^xsd:double into "79.0"
    graph = rdflib.Graph().parse(data="".join(line.rsplit("#", 1)[0] + "\n" for line in lines), format="nt")
    theirs = Counter(tuple(term.n3() for term in triple) for triple in graph)
    assert set(ours) == set(theirs)  # rdflib keeps a set; the stream may repeat a triple at other times
    assert f'"79"^^<{XSD}double>' in {o for _, _, o in ours}
