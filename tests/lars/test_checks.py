"""The checking passes: safety, stratification (no negation through recursion), tuple windows."""

from __future__ import annotations

import pytest

from rsp.errors import ProgramError
from rsp.lars import parse


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("q(X) :- p(Y).", "head variable(s) X not bound"),
        ("q(X) :- p(X), not r(Y).", "variable(s) Y of 'not r(Y)'"),
        ("q(X) :- p(X), Y > 3.", "variable(s) Y of 'Y > 3'"),
        ("q(Z) :- p(X), Z = X + Y.", "not bound"),
        ("@T q :- p.", "head variable(s) T"),
        ("p(X).", "head variable(s) X"),
    ],
)
def test_unsafe_rules_are_refused_with_position(text: str, fragment: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse("% header\n" + text, "u.lars")
    assert str(info.value).startswith("u.lars:2:1: unsafe rule")
    assert fragment in str(info.value)


def test_assignments_bind_variables() -> None:
    program = parse("@T z(W) :- [2] @U a(X), T = U + 1, W = T * X, W > 2.")
    assert len(program.program.rules) == 1


@pytest.mark.parametrize(
    "text, line",
    [
        # found by make fuzz: the naive evaluator and rsp lars both ran without end on it
        ("i4(0) :- not p.\ni4(V) :- i4(X), V = X + 1.", 2),
        ("b(1).\na(V) :- b(X), V = X * 2.\nb(X) :- a(X).", 2),  # through another predicate
        ("n(0).\nn(W) :- [3] <> n(X), V = X + 1, W = V.", 2),  # copied from a computed value
        ("n(0).\n@T n(V) :- [3] @T s, [3] @U n(X), V = X + 1.", 2),  # @U may be the head's own time point
        ("n(0).\n@T n(V) :- [3] @T s, [3] @U n(X), U = T + 1, V = X + 1.", 2),  # reads later points
        ("n(0) :- not p.\nn(V) :- n(X), V = X + 1.", 2),  # (clingo/tms modes check the same)
    ],
)
def test_recursion_through_arithmetic_is_refused(text: str, line: int) -> None:
    with pytest.raises(ProgramError) as info:
        parse(text, "r.lars")
    assert str(info.value).startswith(f"r.lars:{line}:1: recursion through arithmetic")
    assert "compute the value outside the recursion" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "n(V) :- p(X), V = X + 1.\nm(X) :- n(X), m(X).",  # arithmetic outside the recursion
        "r(X,Y) :- e(X,Y).\nr(X,Z) :- r(X,Y), e(Y,Z), W = Y + 1, W > 2.",  # computed, not in the head
        # counting back in time: the value moves forward, and the timeline is finite
        "@T c(V,N) :- [5] @T s(V), [5] @U c(V,M), U = T - 1, N = M + 1.",
        "@T c(N) :- [5] @T s, [5] @U c(M), T = U + 2, N = M + 1.",
        "@T c(N) :- [5] @T s, [5] @U c(M), U < T, N = M * 2.",
    ],
)
def test_arithmetic_outside_recursion_or_forward_in_time_is_accepted(text: str) -> None:
    assert parse(text).program.rules


def test_negation_through_recursion_is_refused() -> None:
    with pytest.raises(ProgramError) as info:
        parse("a :- p, not b.\nb :- a.", "n.lars")
    assert str(info.value).startswith("n.lars:1:1: negation through recursion")


def test_stratified_negation_orders_strata() -> None:
    program = parse("c :- not b.\nb :- a.\na :- p.")
    order = [sorted(s.predicates) for s in program.strata]
    assert order.index([("a", 0)]) < order.index([("b", 0)]) < order.index([("c", 0)])


def test_recursion_is_one_stratum() -> None:
    program = parse("t(X,Y) :- e(X,Y).\nt(X,Z) :- t(X,Y), e(Y,Z).\nu(X) :- t(X,X).")
    strata = {frozenset(s.predicates): s.recursive for s in program.strata}
    assert strata == {frozenset({("t", 2)}): True, frozenset({("u", 1)}): False}


def test_a_predicate_is_its_name_and_arity() -> None:
    """p/1 and p/2 are two predicates: a/0 negated under a/1 is no negation through recursion."""
    program = parse("a(X) :- p(X), not a.\na :- q.")
    assert sorted(sorted(s.predicates) for s in program.strata) == [[("a", 0)], [("a", 1)]]
    with pytest.raises(ProgramError) as info:
        parse("a(X) :- p(X), not a(X).", "n.lars")
    assert "'a/1' depends negatively on 'a/1'" in str(info.value)


def test_tuple_window_over_intensional_predicate_is_refused() -> None:
    with pytest.raises(ProgramError) as info:
        parse("i(X) :- p(X).\nj(X) :- [#3] <> i(X).", "t.lars")
    assert str(info.value).startswith("t.lars:2:1: tuple window [#3] over 'i'")


def test_windows_over_at_derived_predicates_do_not_warn() -> None:
    assert parse("@T i(X) :- [3] @T p(X).\nj(X) :- [3] [] i(X).").warnings == ()


def test_a_body_atom_nothing_gives_is_reported_at_its_position() -> None:
    """A body predicate that no rule head, fact or stream atom gives (a typo such as tmp for temp) never
    holds: one warning per predicate, at its first extended atom, with the close name as a hint; a name
    the stream carries with another arity is left to describe_other_arities."""
    from rsp.lars.undefined import undefined_body_atoms

    program = parse(
        "limit(100).\n"
        "hot :- [3] <> tmp(V), limit(L), V > L.\n"
        "cold :- not [2] <> tmp(V), temp(V).\n"
        "q :- other(X), wind(X,Y).\n",
        "p.lars",
    ).program
    assert undefined_body_atoms(program, {("temp", 1), ("wind", 1)}) == [
        "p.lars:2:8: warning: tmp/1 is read here, but no rule derives it, no fact gives it and no stream "
        "atom carried it: it never holds (a typo? the stream has temp/1)",
        "p.lars:4:6: warning: other/1 is read here, but no rule derives it, no fact gives it and no stream "
        "atom carried it: it never holds",
    ]
    assert undefined_body_atoms(program, {("temp", 1), ("tmp", 1), ("other", 1), ("wind", 2)}) == []
