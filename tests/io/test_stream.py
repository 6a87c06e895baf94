"""Stream files: the line formats, malformed lines with positions, and the lazy batch reader, which
must agree with the in-memory reader on any input (including chunk boundaries and late elements)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp.errors import StreamError
from rsp.io.atoms import iter_batches, parse_line, read_atom_lines

XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("36 a(x1,y)", (36, "a", ("x1", "y"))),
        ("  37 ", (37, None, ())),
        ("38 alarm", (38, "alarm", ())),
        ('39 t(-2, 3.5, "a, b", <http://x>)', (39, "t", (-2, 3.5, '"a, b"', "<http://x>"))),
        (f'<http://s> <http://p> "5"^^<{XSD}integer> . # 40', (40, "<http://p>", ("<http://s>", 5))),
        (f'<http://s> <http://p> "2.5"^^<{XSD}double> . # 41', (41, "<http://p>", ("<http://s>", 2.5))),
        ('_:b1 <http://p> "hi"@en . # 42', (42, "<http://p>", ("_:b1", '"hi"@en'))),
        ("% a comment", None),
        ("", None),
    ],
)
def test_line_formats(line: str, expected) -> None:
    assert parse_line(line) == expected


@pytest.mark.parametrize(
    "line, reason",
    [
        ("x p(a)", "expected '<time> <atom>'"),
        ("3 p(a", "expected '<time> <atom>'"),
        ('<http://s> <http://p> "open . # 3', "unterminated string literal"),
        ("<http://s> <http://p> <http://o . # 3", "unterminated IRI"),
        ("<http://s> <http://p> <http://o> . # soon", "time comment 'soon' is not an integer time"),
        ("<http://s> <http://p> <http://o> .", "without a time comment"),
    ],
)
def test_malformed_lines(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_line(line)


def test_errors_carry_file_and_line() -> None:
    errors: list[StreamError] = []
    stream = read_atom_lines(["0 p(a)", "bad line here", "2 p(b)"], "s.txt", errors.append)
    assert [str(e) for e in errors] == [
        "s.txt:2: expected '<time> <atom>', a bare time, or an N-Triples line with a time comment"
    ]
    assert stream.rejected == 1 and [e[0] for e in stream.elements] == [0, 2]


LINE = st.one_of(
    st.builds(
        lambda t, p, a: f"{t} {p}({','.join(a)})",
        st.integers(0, 9),
        st.sampled_from(["p", "q"]),
        st.lists(st.sampled_from(["a", "b1", "7", "x_y", "-3", "2.5", '"s,t"']), min_size=1, max_size=3),
    ),
    st.builds(lambda t, p: f"{t} {p}", st.integers(0, 9), st.sampled_from(["r", "alarm"])),
    st.builds(str, st.integers(0, 9)),
    st.builds(lambda t: f"<http://s> <http://p> <http://o> . # {t}", st.integers(0, 9)),
    st.sampled_from(["", "% comment", "not a line", "3 p(a", '<a> <b> "x . # 2']),
)


def _reference_batches(lines: list[str]) -> tuple[list, list, list]:
    """Line by line with parse_line: the batches, the error lines and the late elements."""
    batches: list = []
    errors: list = []
    late: list = []
    for number, line in enumerate(lines, 1):
        try:
            parsed = parse_line(line)
        except ValueError:
            errors.append(number)
            continue
        if parsed is None:
            continue
        time, pred, args = parsed
        if batches and time < batches[-1][0]:
            if pred is not None:  # a late bare time line marks nothing
                late.append((time, pred, args))
        elif batches and time == batches[-1][0]:
            if pred is not None:
                batches[-1][1].append((pred, args))
        else:
            batches.append((time, [] if pred is None else [(pred, args)]))
    return batches, errors, late


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=40), st.integers(1, 5))
def test_lazy_reader_agrees_with_line_by_line_reading(lines: list[str], chunk: int) -> None:
    errors: list[int] = []
    late: list[tuple] = []
    batches = list(
        iter_batches(
            [line + "\n" for line in lines],
            "s",
            lambda e: errors.append(e.position.line),
            lambda *element: late.append(element),
            chunk=chunk,
        )
    )
    assert (batches, errors, late) == _reference_batches(lines)
    stream = read_atom_lines(lines, "s", on_error=lambda e: None)
    # in memory, bare time lines only survive as the timeline's ends (the engine fills the gaps)
    assert [b for b in stream.batches() if b[1]] == [b for b in batches if b[1]]
    assert (stream.start, stream.end) == ((batches[0][0], batches[-1][0]) if batches else (None, None))
    assert stream.late == len(late) and stream.rejected == len(errors)


def _by_predicate(atoms: list[tuple[str, tuple]]) -> dict[str, list[tuple]]:
    groups: dict[str, list[tuple]] = {}
    for pred, args in atoms:
        groups.setdefault(pred, []).append(args)
    return groups


# mostly one arity of symbolic arguments (the fixed-arity fast path), now and then another line
def _symbolic_lines(arity: int) -> st.SearchStrategy[list[str]]:
    line = st.builds(
        lambda t, p, a: f"{t} {p}({','.join(a)})",
        st.integers(0, 9),
        st.sampled_from(["p", "q"]),
        st.lists(st.sampled_from(["a", "b1", "x_y"]), min_size=arity, max_size=arity),
    )
    return st.lists(st.one_of(line, line, line, LINE), max_size=40)


SYMBOLIC_LINES = st.integers(1, 3).flatmap(_symbolic_lines)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(LINE, max_size=40), SYMBOLIC_LINES), st.integers(1, 5))
def test_grouped_batches_are_the_flat_batches_per_predicate(lines: list[str], chunk: int) -> None:
    def read(grouped: bool) -> tuple[list, list, list]:
        errors: list[int] = []
        late: list[tuple] = []
        batches = list(
            iter_batches(
                [line + "\n" for line in lines],
                "s",
                lambda e: errors.append(e.position.line),
                lambda *element: late.append(element),
                chunk=chunk,
                grouped=grouped,
            )
        )
        return batches, errors, late

    flat, flat_errors, flat_late = read(False)
    grouped, errors, late = read(True)
    assert grouped == [(t, _by_predicate(atoms)) for t, atoms in flat]
    assert (errors, late) == (flat_errors, flat_late)


def test_grouped_batches_on_the_fast_paths() -> None:
    symbolic = ["0 p(a,b)", "0 q(c)", "0 p(d,e)", "1 p(f,g)", "0 p(late,x)", "3"]
    late: list[tuple] = []
    assert list(iter_batches(symbolic, on_late=lambda *e: late.append(e), grouped=True)) == [
        (0, {"p": [("a", "b"), ("d", "e")], "q": [("c",)]}),
        (1, {"p": [("f", "g")]}),
        (3, {}),
    ]
    assert late == [(0, "p", ("late", "x"))]
    # one arity throughout: the fixed-arity pattern (arguments picked in C), late elements still reported
    late.clear()
    pairs = ["0 p(a,b)", "0 q(b,c)", "1 p(c,d)", "0 p(x,y)", "1 q(e,f)"]
    assert list(iter_batches(pairs, on_late=lambda *e: late.append(e), grouped=True)) == [
        (0, {"p": [("a", "b")], "q": [("b", "c")]}),
        (1, {"p": [("c", "d")], "q": [("e", "f")]}),
    ]
    assert late == [(0, "p", ("x", "y"))]
    assert list(iter_batches(["0 p(a)", "0 q(b)", "1 p(c)"], grouped=True)) == [
        (0, {"p": [("a",)], "q": [("b",)]}),
        (1, {"p": [("c",)]}),
    ]
    numeric = ["0 p(a,1)", "0 q(2.5)", "0 p(b,-3)", "2 p(c,4)"]
    assert list(iter_batches(numeric, grouped=True)) == [
        (0, {"p": [("a", 1), ("b", -3)], "q": [(2.5,)]}),
        (2, {"p": [("c", 4)]}),
    ]


def test_batches_group_time_points_and_report_late_elements() -> None:
    late: list[tuple] = []
    lines = ["0 p(a)", "0 p(1)", "2", "3 q", "1 p(late)", "3 p(b)", "5 p(c)"]
    assert list(iter_batches(lines, on_late=lambda *e: late.append(e))) == [
        (0, [("p", ("a",)), ("p", (1,))]),
        (2, []),
        (3, [("q", ()), ("p", ("b",))]),
        (5, [("p", ("c",))]),
    ]
    assert late == [(1, "p", ("late",))]
