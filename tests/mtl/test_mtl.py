"""rsp.mtl: MeTeoR syntax, refusals with positions, normal form, stream facts, the public API."""

from __future__ import annotations

import pytest
from fuzzing import examples
from hypothesis import given, settings
from mtl_strategies import programs
from paths import GOLDEN_MTL, TEST_DATA

from rsp.errors import ProgramError, StreamError
from rsp.mtl import load, parse, run
from rsp.mtl.facts import parse_fact, read_facts
from rsp.mtl.syntax import parse_program

DATA = TEST_DATA / "mtl"


def test_benchmark_programs_parse() -> None:
    for name in ("short_stop.txt", "meteor_recursive.txt", "meteor_nonrecursive.txt"):
        program = load(DATA / name)
        assert program.rules
    assert load(DATA / "short_stop.txt").punctual
    assert load(DATA / "meteor_recursive.txt").punctual  # [1,1] intervals


def test_syntax_error_has_line_and_column() -> None:
    with pytest.raises(ProgramError) as err:
        parse_program("A(X):-B(X)\nC(X):-Boxminus[1,2 D(X)", "p.txt")
    assert err.value.position.line == 2
    assert err.value.position.column == 20
    assert str(err.value).startswith("p.txt:2:20: unexpected")


def test_the_end_of_input_is_on_the_last_line_feed_counted_line() -> None:
    """Lines end at line feeds only: a U+2028 in a quoted constant does not start a line."""
    with pytest.raises(ProgramError, match=r"^p\.txt:2:7: unexpected end of input"):
        parse_program('A(X):-B(X,"x\u2028y")\nC(X):-\n', "p.txt")


def test_bad_interval_is_refused_with_position() -> None:
    with pytest.raises(ProgramError, match=r"p.txt:1:15: bad interval \[2,1\]"):
        parse("A(X):-Boxminus[2,1]B(X)", "p.txt")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A(X):-Diamondplus[0,1]B(X)", "Diamondplus in its body"),
        ("A(X):-C(X), Boxminus[0,1]Boxplus[1,2]B(X)", "Boxplus in its body"),
        ("A(X):-B(X)Until[0,1]C(X)", "Until in its body"),
        ("Boxminus[0,1]A(X):-B(X)", "Boxminus in its head"),
        ("Diamondminus[0,1]A(X):-B(X)", "Diamondminus in its head"),
    ],
)
def test_not_forward_propagating_is_refused_naming_rule_and_operator(text: str, message: str) -> None:
    with pytest.raises(ProgramError) as err:
        parse("P(X):-Q(X)\n" + text, "p.txt")
    assert message in str(err.value)
    assert "not forward-propagating" in str(err.value)
    assert err.value.position.line == 2
    assert text.split(":-")[0] in str(err.value)


def test_unsafe_rules_are_refused() -> None:
    with pytest.raises(ProgramError, match="head variable"):
        parse("A(X,Y):-B(X)")
    with pytest.raises(ProgramError, match="left side of Since"):
        parse("A(X):-C(X,Y)Since[0,1]B(X)")


def test_normal_form_of_nested_operators() -> None:
    """Prop. 6's normalisation: every operator gets a fresh predicate, inner ones first, shared when equal."""
    program = parse("A(X):-Boxminus[1,2]Diamondminus[0,1]B(X), C(Y)Since[0,1]Diamondminus[0,1]B(Y), E(X,Y)")
    assert [str(r) for r in program.rules] == [
        "_mtl1(X0):-Diamondminus[0,1]B(X0)",
        "_mtl2(X0):-Boxminus[1,2]_mtl1(X0)",
        "_mtl3(X0):-C(X0)Since[0,1]_mtl1(X0)",
        "A(X):-_mtl2(X), _mtl3(Y), E(X,Y)",
    ]
    assert program.derived() == {"A"}
    assert "normalised from Boxminus[1,2]Diamondminus[0,1]B(X)" in str(program.rules[1].origin)


GOLDEN = GOLDEN_MTL


def test_the_papers_running_example_in_normal_form() -> None:
    """The monitoring example (tests/golden/mtl/paper-monitoring): its normal form is the hand-written one of
    paper-monitoring-normal-form up to the fresh predicates' names, and both have the same Flag and Monit facts."""
    program = load(GOLDEN / "paper-monitoring" / "program.txt")
    assert [str(r) for r in program.rules] == [
        "_mtl1(X0):-Diamondminus[0,2]Signal(X0)",
        "_mtl2(X0):-Boxminus[0,4]_mtl1(X0)",
        "Flag(X,Z):-Monit(X,Z), _mtl2(Z)",
        "Boxplus[0,3]Monit(X,Z):-Flag(Y,Z), Connect(X,Y)",
    ]
    assert program.derived() == {"Flag", "Monit"}
    by_hand = (GOLDEN / "paper-monitoring-normal-form" / "program.txt").read_text().splitlines()
    assert by_hand[:2] == ["P(Z):-Diamondminus[0,2]Signal(Z)", "Q(Z):-Boxminus[0,4]P(Z)"]
    assert by_hand[2:] == ["Flag(X,Z):-Monit(X,Z), Q(Z)", str(program.rules[3])]
    nested = (GOLDEN / "paper-monitoring" / "expected.txt").read_text().split()
    flat = (GOLDEN / "paper-monitoring-normal-form" / "expected.txt").read_text().split()
    assert nested == [f for f in flat if f.startswith(("Flag(", "Monit("))]
    # the README writes rule (2)'s head with a past sign: a past operator in a head is refused, by position
    with pytest.raises(ProgramError, match=r"p\.txt:2:1: .*Boxminus in its head"):
        parse(by_hand[0] + "\nBoxminus[0,3]Monit(X,Z):-Flag(Y,Z), Connect(X,Y)", "p.txt")


def test_fact_lines() -> None:
    assert parse_fact("P(a,b)@(0.5,inf)")[2] == (pytest.approx(0.5), float("inf"), False, False)
    assert parse_fact("P@[1,3)") == ("P", (), (1, 3, True, False))
    assert parse_fact("<http://s> <http://p> <http://o> . # 12") == (
        "<http://p>",
        ("<http://s>", "<http://o>"),
        (12, 12, True, True),
    )
    for bad in ("P(a)", "P(a)@[3,1]", "P(a)@[x,1]", "<http://s> <http://p> <http://o> .", "P(a)@[-inf,1]"):
        with pytest.raises(ValueError):
            parse_fact(bad)


def test_read_facts_positions() -> None:
    errors = []
    lines = ["P(a)@1\n", "\n", "% comment\n", "oops\n", "P(b)@2\n"]
    facts = list(read_facts(iter(lines), "s.txt", errors.append))
    assert [f[:3] for f in facts] == [("P", ("a",), (1, 1, True, True)), ("P", ("b",), (2, 2, True, True))]
    assert [str(e.position) for e in errors] == ["s.txt:4"]
    with pytest.raises(StreamError, match="s.txt:4: not a fact"):
        list(read_facts(iter(lines), "s.txt"))


def test_results_leave_as_soon_as_final() -> None:
    """A point t is final once the stream has passed t; an interval once it has ended before the frontier."""
    program = parse("A(X):-Diamondminus[0,1]B(X)")
    produced = []
    stream = ["B(a)@0", "B(b)@3", "B(c)@10"]
    for time, facts in run(program, iter(stream), points=[0, 1, 2, 3, 4]):
        produced.append((time, facts))
    assert produced == [(0, ["A(a)"]), (1, ["A(a)"]), (2, []), (3, ["A(b)"]), (4, ["A(b)"])]
    read = 0

    def facts():
        nonlocal read
        for f in stream:
            read += 1
            yield f

    emitted = {}
    for time, batch in run(program, facts()):
        for fact in batch:
            emitted[fact] = (time, read)
    # A(a)@[0,1] is final once the stream has passed 1: as soon as B(b)@3 arrives
    assert emitted["A(a)@[0,1]"] == (3, 2)
    assert emitted["A(b)@[3,4]"] == (10, 3)  # B(c) at 10 could not extend it: reported at the end
    assert emitted["A(c)@[10,10]"] == (10, 3)


def test_shortstop_on_s1_slice_matches_hand_count() -> None:
    """The Hackathon S1 stream's first 20 s (tests/data/mtl/S1-head.txt) through ShortStop."""
    program = load(DATA / "short_stop.txt")
    lines = (DATA / "S1-head.txt").read_text().splitlines()
    stops = sorted(f for _, batch in run(program, lines, outputs=["ShortStop"]) for f in batch)
    assert stops, "ShortStop derives something on S1's first seconds"
    assert all(f.startswith("ShortStop(") and f.endswith("]") for f in stops)


# ------------------------------------------------------------------ issue 41, item 5: propositional atoms
# The programs of the issue, each with a stream and its least model reckoned by hand (and checked
# against the naive evaluator): a 0-ary head written without parentheses is the atom P, then ':-'.
PROPOSITIONAL = [
    # P holds while B(a) does
    ("P:-B(a)", "P():-B(a)", ["B(a)@[1,2)", "B(b)@3"], 5, ["P@[1,2)"]),
    # P holds while B(a) and some A(_) do: (1,2) from A(b), [2.5,3] from A(c) until B(a) ends
    (
        "P:-B(a),A(X)",
        "P():-B(a),A(X)",
        ["B(a)@[0,3]", "A(b)@(1,2)", "A(c)@[2.5,4]"],
        5,
        ["P@(1,2)", "P@[2.5,3]"],
    ),
    # [t-1.5, t-0.5] inside [0,2]: t in [1.5,2.5]; inside [1,4): t in [2.5,4.5)
    (
        "R:-Boxminus[0.5,1.5]B(X)",
        "R():-Boxminus[0.5,1.5]B(X)",
        ["B(a)@[0,2]", "B(a)@[1,4)"],
        5,
        ["R@[1.5,4.5)"],
    ),
    # ◇[0,4]R holds on [0,4] from R@0; the inner Since I(a) needs B(a) at t-1 and ◇R on (t-1,t): t in
    # [1,2] and [2.5,4]; the outer one needs B(a) at t-1 and I(a) on (t-1,t): t = 2 (B(a)@1, I on (1,2))
    # and t in [3.5,4] (B(a) on [2.5,3], I on (2.5,4)); the new R stays inside [0,8] for ◇R: a fixpoint
    (
        "R:-((Diamondminus[0,4]R)Since[1,1]B(X))Since[1,1]B(X)",
        "R():-((Diamondminus[0,4]R())Since[1,1]B(X))Since[1,1]B(X)",
        ["R@0", "B(a)@[0,1]", "B(a)@[1.5,3]"],
        8,
        ["R@[0,0]", "R@[2,2]", "R@[3.5,4]"],
    ),
]


@pytest.mark.parametrize(("text", "written_with_parentheses", "facts", "horizon", "expected"), PROPOSITIONAL)
def test_propositional_heads_parse_and_answer(
    text: str, written_with_parentheses: str, facts: list[str], horizon, expected: list[str]
) -> None:
    from mtl_naive import least_model

    from rsp.mtl import format_fact

    program = parse_program(text)
    head = program.rules[0].head
    assert (head.pred, head.args) == (text[0], ())
    assert parse_program(written_with_parentheses) == program
    assert parse_program(str(program)) == program  # printed back, it reads the same
    got = sorted(f for _, batch in run(text, facts, horizon=horizon) for f in batch)
    assert got == expected
    reference = least_model(program, [parse_fact(f) for f in facts], horizon)
    assert sorted(format_fact(*f) for f in reference) == expected


def test_propositional_facts() -> None:
    """0-ary facts are written P@1 or P()@1 alike."""
    assert parse_fact("P@1") == parse_fact("P()@1") == ("P", (), (1, 1, True, True))
    assert parse_fact("P()@[1,2)") == parse_fact(" P ( ) @ [1,2)") == ("P", (), (1, 2, True, False))
    with pytest.raises(ValueError, match="empty argument"):
        parse_fact("P(a,)@1")


def test_a_propositional_atom_before_since_prints_with_parentheses() -> None:
    """'R Since' and 'R()Since' read alike; 'RSince' would be one name, so the program prints 'R()Since'
    (also after an operator: 'Diamondminus[0,4]R()Since'), and reads back to itself."""
    for text in ("A(X):-R Since[0,1]B(X)", "A(X):-R()Since[0,1]B(X)", "A(X):-(R)Since[0,1]B(X)"):
        program = parse_program(text)
        assert str(program) == "A(X):-R()Since[0,1]B(X)"
    program = parse_program("A(X):-Diamondminus[0,4]R Since[0,1]B(X)")
    assert str(program) == "A(X):-Diamondminus[0,4]R()Since[0,1]B(X)"
    assert parse_program(str(program)) == program
    assert parse_program("a1:P:-a1:Q(X)").rules[0].head.pred == "a1:P"  # prefixed names still read


@pytest.mark.generated
@settings(max_examples=examples(200))
@given(programs())
def test_generated_programs_print_back_to_themselves(text: str) -> None:
    program = parse_program(text)
    assert parse_program(str(program)) == program
    assert str(parse_program(str(program))) == str(program)


def test_a_left_side_variable_bound_elsewhere_in_the_body() -> None:
    """docs/mtl.md refuses a variable on the left of Since *only*: here B(X) binds X beside the Since.
    (A left side entered exactly where the right side's interval ends is the case a guard cannot cover.)"""
    from mtl_naive import least_model

    from rsp.mtl import format_fact

    text = "Q(X):-B(X)Since[0,0.75]E(W,W),B(X)"
    facts = ["E(c,c)@[0,1]", "B(b)@[0,0.5]", "B(a)@(1,3]", "E(d,d)@2"]
    got = sorted(f for _, batch in run(parse(text), facts, horizon=4) for f in batch)
    reference = least_model(parse_program(text), [parse_fact(f) for f in facts], 4)
    assert got == sorted(format_fact(*f) for f in reference)


# Since whose left side has a variable its right side lacks, bound by the body's other atoms; each model
# reckoned by hand (`φ S_ρ ψ` at t: ψ at some t' with t − t' ∈ ρ and φ on the open (t', t)) and equal to
# the naive evaluator's.
BOUND_ELSEWHERE = [
    # the issue's program. Q(b): t' = t on [0,0.5] (E(c,c) there, B(b) at t). Q(a): B(a) on (1,3] takes
    # t' = 1 only from E(c,c)@[0,1] ((t',t) must lie in (1,3]), so t in (1,1.75]; t' = 2 gives [2,2.75]
    (
        "Q(X):-B(X)Since[0,0.75]E(W,W),B(X)",
        ["E(c,c)@[0,1]", "B(b)@[0,0.5]", "B(a)@(1,3]", "E(d,d)@2"],
        4,
        ["Q(a)@(1,1.75]", "Q(a)@[2,2.75]", "Q(b)@[0,0.5]"],
    ),
    # 0 in ρ, the left side starting open exactly at the right side's last point: t' = 1, t in (1,1.75];
    # at t = 1 itself B(a) does not hold, so the case t' = t gives nothing
    ("Q(X):-B(X)Since[0,0.75]E(W,W),B(X)", ["E(c,c)@[0,1]", "B(a)@(1,3]"], 4, ["Q(a)@(1,1.75]"]),
    # a bounded range without 0: t' = 0 gives t in (1/2,1] while B holds on (0,t): all of it for a, up
    # to 0.75 for b; t' in [2,2.5) gives (2.5,3.5), cut at 3 where B(a) ends (closed: (t',3) is inside)
    (
        "Q(X):-B(X)Since(1/2,1]E(W,W),C(X)",
        ["E(c,c)@0", "B(a)@[0,3]", "B(b)@(0,0.75]", "C(a)@[0,4]", "C(b)@[0,4]", "E(d,d)@[2,2.5)"],
        4,
        ["Q(a)@(0.5,1]", "Q(a)@(2.5,3]", "Q(b)@(0.5,0.75]"],
    ),
    # [1,inf): from t' = 0, t >= 1 as long as B holds on (0,t): up to 5 for a ((0,5) lies in [0,5)), up
    # to 2 for b; t' = 3 adds [4,5] for a
    (
        "Q(X):-B(X)Since[1,inf)E(W,W),C(X)",
        ["E(c,c)@0", "B(a)@[0,5)", "B(b)@(0,2]", "C(a)@[0,6]", "C(b)@[0,6]", "E(d,d)@3"],
        6,
        ["Q(a)@[1,5]", "Q(b)@[1,2]"],
    ),
    # under Diamondminus: the Since holds at 1 for every X (t' = t, E(c,c)@1) and on (1,1.5] for a
    # (B(a) on (1,t)); shifted by 1: Q(a) on [2,2.5], and Q(b) at 2 although B(b) never holds
    (
        "Q(X):-Diamondminus[1,1](B(X)Since[0,1/2]E(W,W)), C(X)",
        ["C(a)@[0,4]", "C(b)@[0,4]", "E(c,c)@1", "B(a)@(1,2]"],
        4,
        ["Q(a)@[2,2.5]", "Q(b)@[2,2]"],
    ),
    # under Boxminus, without 0: the Since holds on (0,1] and (1,2] (E(c,c) at 0 and 1, B(a) on [0,3]),
    # so on (0,2]; [t-1,t] lies in it for t in (1,2]
    (
        "Q(X):-Boxminus[0,1](B(X)Since(0,1]E(W,W)),C(X)",
        ["C(a)@[0,4]", "E(c,c)@0", "B(a)@[0,3]", "E(c,c)@1"],
        4,
        ["Q(a)@(1,2]"],
    ),
]


@pytest.mark.parametrize(("text", "facts", "horizon", "expected"), BOUND_ELSEWHERE)
def test_since_left_variables_bound_elsewhere(
    text: str, facts: list[str], horizon, expected: list[str]
) -> None:
    from mtl_naive import least_model

    from rsp.mtl import format_fact

    got = sorted(f for _, batch in run(text, facts, horizon=horizon) for f in batch)
    assert got == expected
    reference = least_model(parse_program(text), [parse_fact(f) for f in facts], horizon)
    assert sorted(format_fact(*f) for f in reference) == expected


def test_normal_form_splits_a_since_with_zero_whose_left_side_is_bound_elsewhere() -> None:
    """φ S_ρ ψ ≡ ψ ∨ φ S_{ρ∖{0}} ψ: one rule with ψ in the Since's place (the other atoms bind X), one
    with the Since without 0, whose fresh predicate has the variables of both sides."""
    program = parse("Q(X):-B(X)Since[0,0.75]E(W,W),B(X)")
    assert [str(r) for r in program.rules] == [
        "_mtl1(X0,X1):-B(X0)Since(0,0.75]E(X1,X1)",
        "Q(X):-E(W,W), B(X)",
        "Q(X):-_mtl1(X,W), B(X)",
    ]
    # without 0 nothing splits; with [0,0] only the right side is left
    assert [str(r) for r in parse("Q(X):-B(X)Since(0,1]E(W,W),B(X)").rules] == [
        "_mtl1(X0,X1):-B(X0)Since(0,1]E(X1,X1)",
        "Q(X):-_mtl1(X,W), B(X)",
    ]
    assert [str(r) for r in parse("Q(X):-B(X)Since[0,0]E(W,W),B(X)").rules] == ["Q(X):-E(W,W), B(X)"]
    # through Diamondminus and the right side of a Since, the disjunction reaches the rule
    assert [str(r) for r in parse("Q(X):-C(X)Since[0,1](B(X)Since[0,1]E(W,W)),B(X)").rules] == [
        "_mtl1(X0,X1):-B(X0)Since(0,1]E(X1,X1)",
        "_mtl2(X0,X1):-C(X0)Since(0,1]E(X1,X1)",
        "_mtl3(X0,X1):-C(X0)Since[0,1]_mtl1(X0,X1)",
        "Q(X):-E(W,W), B(X)",
        "Q(X):-_mtl2(X,W), B(X)",
        "Q(X):-_mtl3(X,W), B(X)",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # on the left of Since only: unsafe, with or without 0
        ("Q(X,W):-B(X)Since[0,1]E(W,W)", "holds with no left-side fact at all when t' = t"),
        ("Q(X,W):-B(X)Since(0,1]E(W,W)", "nothing else in the body binds them"),
        ("Q(X):-B(X)Since[0,1]E(W,W),Boxminus[0,1]Diamondminus[0,1]C(X)Since[0,1]E(W,W)", "X that its right"),
        # bound elsewhere, 0 in the range, where the split does not distribute
        ("Q(X):-Boxminus[0,1](B(X)Since[0,1]E(W,W)),B(X)", "not under Boxminus"),
        ("Q(X):-Boxminus[0,1]Diamondminus[0,1](B(X)Since[0,1]E(W,W)),B(X)", "not under Boxminus"),
        ("Q(X):-(B(X)Since[0,1]E(W,W))Since[0,1]C(X,W)", "not on the left of a Since"),
    ],
)
def test_since_left_variables_refused(text: str, message: str) -> None:
    with pytest.raises(ProgramError, match="left side of Since uses variable") as err:
        parse(text)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("Q(X):-(B(X)Since(0,1]E(W,W))Since[0,1]C(X,W)", ["B(a)@[0,3]", "E(b,b)@0", "C(a,b)@[1,1.5]"]),
        (
            "Q(X):-Boxminus[0,1/2](B(X)Since(0,1]E(W,W)), Diamondminus[0,1]B(X)",
            ["B(a)@[0,2]", "E(b,b)@0", "E(c,c)@1/2", "B(b)@(1/2,3]", "E(b,b)@[1,2)"],
        ),
    ],
)
def test_since_left_variables_without_zero_anywhere(text: str, facts: list[str]) -> None:
    """Without 0 in its range such a Since needs its left side on a nonempty (t', t): evaluated per pair of
    facts in any context, under Boxminus and on the left of a Since too."""
    from mtl_naive import least_model

    from rsp.mtl import format_fact

    got = sorted(f for _, batch in run(text, facts, horizon=4) for f in batch)
    reference = least_model(parse_program(text), [parse_fact(f) for f in facts], 4)
    assert got == sorted(format_fact(*f) for f in reference)
    assert got  # something to compare
