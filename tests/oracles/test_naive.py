"""Tests of the naive reference evaluator on small cases worked out by hand from docs/lars-semantics.md."""

from __future__ import annotations

import pytest
from fuzzing import examples
from hypothesis import given, settings
from lars_naive import evaluate, evaluate_sets
from lars_strategies import cases, programs, streams

from rsp.io.atoms import AtomStream, read_atom_lines
from rsp.lars import parse


def run(program: str, lines: list[str]) -> list[tuple[int, list[str]]]:
    return evaluate(parse(program), read_atom_lines(lines))


def test_diamond_window() -> None:
    # q at t iff some p(X) at a time in [max(0, t-2), t]:
    # t0 [0,0] p(a); t1 [0,1] p(a); t2 [0,2] p(a); t3 [1,3] p(c); t4 [2,4] p(c); t5 [3,5] p(c), p(b).
    result = run("q(X) :- [2] <> p(X).", ["0 p(a)", "3 p(c)", "5 p(b)"])
    assert result == [
        (0, ["q(a)"]),
        (1, ["q(a)"]),
        (2, ["q(a)"]),
        (3, ["q(c)"]),
        (4, ["q(c)"]),
        (5, ["q(b)", "q(c)"]),
    ]


def test_box_window_clipped_at_start() -> None:
    # Timeline [1,4]; the window [max(1, t-2), t]:
    # t1 [1,1]: p(a)@1 -> h(a) (the window is clipped at t1, so one point suffices);
    # t2 [1,2]: p(a)@1,@2 -> h(a); p(b) is missing at 1;
    # t3 [1,3]: p(a)@1,2,3 -> h(a); p(b) missing at 1;
    # t4 [2,4]: p(a) missing at 4; p(b)@2,3,4 -> h(b).
    stream = ["1 p(a)", "2 p(a)", "2 p(b)", "3 p(a)", "3 p(b)", "4 p(b)"]
    assert run("h(X) :- [2] [] p(X).", stream) == [
        (1, ["h(a)"]),
        (2, ["h(a)"]),
        (3, ["h(a)"]),
        (4, ["h(b)"]),
    ]


def test_at_in_body_and_head() -> None:
    # r(T) :- @T p(a): T ranges over [0, t] where p(a) holds: t0..t2 r(0); t3 r(0), r(3).
    # @T s :- [1] @T p(b): T in [t-1, t] with p(b)@T; p(b)@1 gives (s, 1) at t1 and t2 (not t0, t3).
    #   The output at t shows (s, t) only: s at t1 alone.
    # u :- [2] <> s: M_t holds (s, 1) only for t = 1, 2 (M_t is built anew at every t), so u at t1, t2.
    program = "r(T) :- @T p(a).\n@T s :- [1] @T p(b).\nu :- [2] <> s."
    assert run(program, ["0 p(a)", "1 p(b)", "2", "3 p(a)"]) == [
        (0, ["r(0)"]),
        (1, ["r(0)", "s", "u"]),
        (2, ["r(0)", "u"]),
        (3, ["r(0)", "r(3)"]),
    ]


def test_shifted_at_head() -> None:
    # @T z :- [2] @U a, T = U + 1 with a at 0 and 3, timeline [0,5]; (z, T) is added only if T <= t:
    # t0: U=0, T=1 > 0, nothing; t1: U=0, T=1 -> z at 1; t2: U=0, T=1, (z,1) is not output at 2;
    # t3: U=3, T=4 > 3, nothing; t4: U=3, T=4 -> z at 4; t5: U=3, T=4, not output at 5.
    # @T e :- [2] @U a, T = U - 1: T < t always, so e is never output (and T=-1 < t1 adds nothing).
    program = "@T z :- [2] @U a, T = U + 1.\n@T e :- [2] @U a, T = U - 1."
    assert run(program, ["0 a", "3 a", "5"]) == [
        (0, []),
        (1, ["z"]),
        (2, []),
        (3, []),
        (4, ["z"]),
        (5, []),
    ]


def test_plain_head_chain() -> None:
    # i at t iff p in [t-2, t]: t0 i(a); t1 i(a); t2 i(a), i(b); t3 i(b); t4 i(b). h copies i at t.
    program = "i(X) :- [2] <> p(X).\nh(X) :- i(X)."
    assert run(program, ["0 p(a)", "2 p(b)", "4"]) == [
        (0, ["h(a)", "i(a)"]),
        (1, ["h(a)", "i(a)"]),
        (2, ["h(a)", "h(b)", "i(a)", "i(b)"]),
        (3, ["h(b)", "i(b)"]),
        (4, ["h(b)", "i(b)"]),
    ]


def test_window_over_plain_derived_sees_current_point_only() -> None:
    # i(X) :- p(X) puts (i(X), t) in M_t only; M_t has no i at earlier points (rules run at t only),
    # so j(X) :- [3] <> i(X) holds iff i(X) at t: t0 j(a), t2 j(b), nothing at t1, t3.
    # k(X) :- [3] <> p(X) reads the stream itself: t0 k(a); t1 k(a); t2 k(a), k(b); t3 k(a), k(b).
    program = "i(X) :- p(X).\nj(X) :- [3] <> i(X).\nk(X) :- [3] <> p(X)."
    assert run(program, ["0 p(a)", "1", "2 p(b)", "3"]) == [
        (0, ["i(a)", "j(a)", "k(a)"]),
        (1, ["k(a)"]),
        (2, ["i(b)", "j(b)", "k(a)", "k(b)"]),
        (3, ["k(a)", "k(b)"]),
    ]


def test_tuple_windows() -> None:
    # Elements e1 (0,p(a)), e2 (1,p(b)), e3 (1,p(a)), e4 (2,p(a)), e5 (3,p(c)); W = the last 2 with time <= t.
    # t0: 1 element (< 2): W = {e1}, range [t1, 0] = [0,0]: d(a) b(a) w(a,0) now(a).
    # t1: W = {e2, e3}, t' = 1, range [1,1]: d(a) d(b); both at every point -> b(a) b(b);
    #     w(a,1) w(b,1); now(a) now(b).
    # t2: W = {e3, e4}, t' = 1, range [1,2]: p(b)@1 (e2) is NOT visible although 1 is in the range
    #     (the earliest point keeps only atoms among the last 2): d(a) only; b(a) (a at 1 and 2);
    #     w(a,1) w(a,2); now(a).
    # t3: W = {e4, e5}, t' = 2, range [2,3]: d(a) d(c); a misses 3, c misses 2 -> no b;
    #     w(a,2) w(c,3); now(c).
    program = "d(X) :- [#2] <> p(X).\nb(X) :- [#2] [] p(X).\nw(X,T) :- [#2] @T p(X).\nnow(X) :- [#2] p(X)."
    assert run(program, ["0 p(a)", "1 p(b)", "1 p(a)", "2 p(a)", "3 p(c)"]) == [
        (0, ["b(a)", "d(a)", "now(a)", "w(a,0)"]),
        (1, ["b(a)", "b(b)", "d(a)", "d(b)", "now(a)", "now(b)", "w(a,1)", "w(b,1)"]),
        (2, ["b(a)", "d(a)", "now(a)", "w(a,1)", "w(a,2)"]),
        (3, ["d(a)", "d(c)", "now(c)", "w(a,2)", "w(c,3)"]),
    ]


def test_negated_window_and_rule_without_positive_atom() -> None:
    # quiet :- not [2] <> alarm (no positive atom: fires with the empty substitution):
    #   alarm@0 is in [t-2, t] for t0..t2; quiet at t3, t4.
    # off(X) :- q(X), not [1] <> p(X): t1 q(a) but p(a)@1; t2 q(a), p(a)@1 in [1,2];
    #   t3 q(a) with no p(a) in [2,3] -> off(a); q(b) has p(b)@3.
    program = "quiet :- not [2] <> alarm.\noff(X) :- q(X), not [1] <> p(X)."
    stream = ["0 alarm", "1 q(a)", "1 p(a)", "2 q(a)", "3 q(a)", "3 q(b)", "3 p(b)", "4"]
    assert run(program, stream) == [
        (0, []),
        (1, []),
        (2, []),
        (3, ["off(a)", "quiet"]),
        (4, ["quiet"]),
    ]


def test_background_facts() -> None:
    # Timeline [1,4]. limit(3) holds at every point; special(a) at 2 only; @0 and @9 lie outside the
    # timeline. high(X): temp(X) at t with X > 3: t2 high(5), t3 high(4). mark(Y): special(Y) in
    # [t-1, t]: t2, t3. Facts are not intensional, so limit and special are never output.
    program = (
        "limit(3).\n@2 special(a).\n@0 special(c).\n@9 special(b).\n"
        "high(X) :- temp(X), limit(L), X > L.\nmark(Y) :- [1] <> special(Y)."
    )
    assert run(program, ["1 temp(2)", "2 temp(5)", "3 temp(4)", "4"]) == [
        (1, []),
        (2, ["high(5)", "mark(a)"]),
        (3, ["high(4)", "mark(a)"]),
        (4, []),
    ]


def test_background_facts_in_tuple_windows() -> None:
    # [#1]: W = the last element, range [t', t] with t' its time. Background facts are visible at every
    # point of [t', t]: limit(3) always -> s(3); flag (@2) only when 2 is in the range, i.e. at t2.
    program = "limit(3).\n@2 flag.\ns(L) :- [#1] [] limit(L).\nf :- [#1] <> flag.\ng :- [#1] @2 flag."
    assert run(program, ["1 temp(1)", "2 temp(2)", "3 temp(3)"]) == [
        (1, ["s(3)"]),
        (2, ["f", "g", "s(3)"]),
        (3, ["s(3)"]),
    ]


def test_arithmetic_and_comparisons() -> None:
    # n(7) n(6) n(a) n(0) n(3) at time 0.
    # half: 7/2 = 3.5 (inexact -> decimal), 6/2 = 3 (exact -> integer), 0/2 = 0, 3/2 = 1.5, a/2 no value.
    # inv: X < 7 keeps 6, 0, 3 (a < 7 is false: number vs non-number); 6/0 has no value -> inv(6,1), inv(3,2).
    # lt: X < b holds for a only (text order; numbers vs b are false). ge: X >= 3 -> 7, 6, 3.
    # eq: X = 3.0 -> 3 (numeric equality). ne: X != a -> 7, 6, 0, 3. sym: X = a -> a.
    # mix: X * 2 - 1 -> 13, 11, -1, 5 (a has no value). fl: X > 6 -> 7 + 0.5 = 7.5.
    program = """
        half(X,Y) :- n(X), Y = X / 2.
        inv(X,Y) :- n(X), X < 7, Y = 6 / X.
        lt(X) :- n(X), X < b.
        ge(X) :- n(X), X >= 3.
        eq(X) :- n(X), X = 3.0.
        ne(X) :- n(X), X != a.
        sym(X) :- n(X), X = a.
        mix(Z) :- n(X), Z = X * 2 - 1.
        fl(Z) :- n(X), X > 6, Z = X + 0.5.
    """
    expected = [
        "half(7,3.5)", "half(6,3)", "half(0,0)", "half(3,1.5)",
        "inv(6,1)", "inv(3,2)",
        "lt(a)",
        "ge(7)", "ge(6)", "ge(3)",
        "eq(3)",
        "ne(7)", "ne(6)", "ne(0)", "ne(3)",
        "sym(a)",
        "mix(13)", "mix(11)", "mix(-1)", "mix(5)",
        "fl(7.5)",
    ]  # fmt: skip
    assert run(program, ["0 n(7)", "0 n(6)", "0 n(a)", "0 n(0)", "0 n(3)"]) == [(0, sorted(expected))]


def test_types_of_arithmetic_results() -> None:
    # Exact integer division gives an int (3, not 3.0); inexact gives a float.
    result = evaluate_sets(parse("d(Y) :- n(X), Y = X / 2."), read_atom_lines(["0 n(6)", "0 n(5)"]))
    assert result == [(0, {("d", (3,)), ("d", (2.5,))})]
    assert {type(args[0]) for _, args in result[0][1]} == {int, float}


def test_recursion_and_negation_strata() -> None:
    # reach is the transitive closure of the edges at t; unreached(X) :- node(X), not reach(X) reads
    # reach only after its stratum is complete. At t0: edges a->b, b->c: reach(b), reach(c) from start(a).
    # At t1 only the edge c->a and start(c): reach(a); node b, c not reached (c is the start, not reached).
    program = (
        "reach(Y) :- start(X), e(X,Y).\nreach(Y) :- reach(X), e(X,Y).\nunreached(X) :- node(X), not reach(X)."
    )
    stream = ["0 start(a)", "0 e(a,b)", "0 e(b,c)", "0 node(a)", "0 node(c)",
              "1 start(c)", "1 e(c,a)", "1 node(b)", "1 node(c)"]  # fmt: skip
    assert run(program, stream) == [
        (0, ["reach(b)", "reach(c)", "unreached(a)"]),
        (1, ["reach(a)", "unreached(b)", "unreached(c)"]),
    ]


def test_empty_stream_has_no_timeline() -> None:
    assert evaluate(parse("q :- p."), AtomStream()) == []
    assert run("q :- not p.", ["2", "3"]) == [(2, ["q"]), (3, ["q"])]


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(cases())
def test_generated_cases_parse_and_evaluate(case: tuple[str, list[str]]) -> None:
    program_text, lines = case
    program = parse(program_text)
    stream = read_atom_lines(lines)
    result = evaluate(program, stream)
    if stream.start is None:
        assert result == []
    else:
        assert [t for t, _ in result] == list(range(stream.start, stream.end + 1))
        for _, atoms in result:
            assert atoms == sorted(atoms)
            for atom in atoms:  # generated constants hold no commas or parentheses
                name, _, args = atom.partition("(")
                assert (name, args.count(",") + 1 if args else 0) in program.intensional


@settings(max_examples=50, deadline=None)
@given(programs(), streams())
def test_programs_and_streams_parse_on_their_own(program_text: str, lines: list[str]) -> None:
    assert parse(program_text).program.proper_rules
    assert len(read_atom_lines(lines).elements) == sum(1 for line in lines if " " in line)
