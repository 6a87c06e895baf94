"""The .lars syntax: every construct of the language, and syntax errors with positions."""

from __future__ import annotations

import pytest

from rsp.errors import ProgramError
from rsp.lars.model import Atom, BinOp, Comparison, ExtAtom, Head, Op, Var, Window
from rsp.lars.parser import parse_program

ISSUE_EXAMPLE = """\
@prefix ex: <http://example.org/> .              % comments run from % to the end of the line
q(A, B) :- [10] <> p(A, B).                      % time window of 10: [t-10, t], diamond
alarm :- [5] [] isSteam.                          % box: at every time point of the window
@T steam(V) :- [10] @T temp(V), V >= 100.         % @ in body (binds T) and head
freeze :- not alarm, not normal.                  % stratified negation
r(X) :- [#3] <> p(X).                             % tuple window: the last 3 stream atoms
total(X, Y, Z) :- a(X), b(Y), Z = X + Y.          % arithmetic (+ - * /), comparisons = != < <= > >=
value(18).                                        % a fact: background knowledge, holds at every time
ex:near(<http://example.org/a>, "text", 3.5) :- @T ex:seen(X).
"""


def test_issue_example_parses_to_the_model() -> None:
    rules = parse_program(ISSUE_EXAMPLE).rules
    A, B, T, V = Var("A"), Var("B"), Var("T"), Var("V")
    assert rules[0].head == Head(Atom("q", (A, B)))
    assert rules[0].body == (ExtAtom(Atom("p", (A, B)), Op.DIAMOND, Window(10)),)
    assert rules[1].body == (ExtAtom(Atom("isSteam"), Op.BOX, Window(5)),)
    assert rules[2].head == Head(Atom("steam", (V,)), T)
    assert rules[2].body == (
        ExtAtom(Atom("temp", (V,)), Op.AT, Window(10), T),
        Comparison(">=", V, 100),
    )
    assert rules[3].body == (ExtAtom(Atom("alarm"), negated=True), ExtAtom(Atom("normal"), negated=True))
    assert rules[4].body == (ExtAtom(Atom("p", (Var("X"),)), Op.DIAMOND, Window(3, tuple_based=True)),)
    assert rules[5].body[2] == Comparison("=", Var("Z"), BinOp("+", Var("X"), Var("Y")))
    assert rules[6].is_fact and rules[6].head == Head(Atom("value", (18,)))
    near = rules[7]
    assert near.head.atom == Atom("<http://example.org/near>", ("<http://example.org/a>", '"text"', 3.5))
    assert near.body == (ExtAtom(Atom("<http://example.org/seen>", (Var("X"),)), Op.AT, None, T),)
    assert rules[0].origin.position.line == 2


def test_printing_round_trips() -> None:
    program = parse_program(ISSUE_EXAMPLE)
    again = parse_program(str(program))
    assert again.rules == program.rules


@pytest.mark.parametrize(
    "text, expected",
    [
        ("q :- [3] @T p, T >= 2.", ExtAtom(Atom("p"), Op.AT, Window(3), Var("T"))),
        ("q :- [#4] [] p(a).", ExtAtom(Atom("p", ("a",)), Op.BOX, Window(4, True))),
        (
            "q :- not [#2] @T p(X, Y).",
            ExtAtom(Atom("p", (Var("X"), Var("Y"))), Op.AT, Window(2, True), Var("T"), True),
        ),
        ("q :- [2] p(a).", ExtAtom(Atom("p", ("a",)), Op.PLAIN, Window(2))),
        ('q :- @5 p(-3, 2.25, "s").', ExtAtom(Atom("p", (-3, 2.25, '"s"')), Op.AT, None, 5)),
        ("q :- nothing(_x).", ExtAtom(Atom("nothing", (Var("_x"),)))),
    ],
)
def test_extended_atoms(text: str, expected: ExtAtom) -> None:
    assert parse_program(text).rules[0].body[0] == expected


def test_decimal_needs_digits_on_both_sides_so_a_dot_ends_the_rule() -> None:
    rules = parse_program("a(V) :- p(V), V >= 100.\nb :- p(1.5).").rules
    assert rules[0].body[1] == Comparison(">=", Var("V"), 100)
    assert rules[1].body[0].atom.args == (1.5,)


def test_arithmetic_precedence_and_parentheses() -> None:
    comp = parse_program("z(Z) :- a(X), Z = (X - 1) * 2 + X / 3.").rules[0].body[1]
    assert comp.right == BinOp("+", BinOp("*", BinOp("-", Var("X"), 1), 2), BinOp("/", Var("X"), 3))


@pytest.mark.parametrize(
    "text, position, fragment",
    [
        ("q(A) :- p(A)", "x.lars:1:13", "is a '.' missing?"),
        # lines end at line feeds only: not at a U+2028 or U+0085 in a quoted string
        ('q("a\u2028b\u0085c").\nq(A) :- p(A)', "x.lars:2:13", "is a '.' missing?"),
        ("q(A) :-\n  [3] p(A) ,.", "x.lars:2:13", "unexpected ."),
        ("q :- ex:p.", "x.lars:1:6", "undeclared prefix 'ex:'"),
        ("q :- <> p.", "x.lars:1:6", "'<>' needs a window"),
        ("q :- p($).", "x.lars:1:8", "unexpected character '$'"),
        ("q(A :- p.", "x.lars:1:5", "unexpected :-"),
    ],
)
def test_syntax_errors_have_positions(text: str, position: str, fragment: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse_program(text, "x.lars")
    assert str(info.value).startswith(position + ": ")
    assert fragment in str(info.value)
