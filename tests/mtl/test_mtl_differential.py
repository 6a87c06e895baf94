"""Differential tests: rsp.mtl's streaming engine against the naive evaluator (tests/oracles/mtl_naive.py),
on fixed cases and on generated programs and streams (tests/support/mtl_strategies.py: joins, recursion, Since,
nested and parenthesised, propositional predicates written P and P(), Boxplus heads, nested operators,
rational and open bounds, unbounded [0,inf))."""

from __future__ import annotations

from fractions import Fraction

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from mtl_naive import least_model
from mtl_strategies import programs, streams
from paths import GOLDEN_MTL

from rsp.mtl import format_fact, run
from rsp.mtl.facts import parse_fact
from rsp.mtl.syntax import parse_program

GOLDEN_ROOT = GOLDEN_MTL


def _reference(program: str, facts: list[str], horizon) -> list[str]:
    model = least_model(parse_program(program), [parse_fact(f) for f in facts], horizon)
    return sorted(format_fact(*fact) for fact in model)


def _engine(program: str, facts: list[str], horizon) -> list[str]:
    return sorted(f for _, batch in run(program, facts, horizon=horizon) for f in batch)


def _files(program: str, facts: list[str], horizon) -> dict[str, str]:
    return {
        "program.txt": program + "\n",
        "stream.txt": "\n".join(facts) + "\n",
        "horizon.txt": f"{horizon}\n",
        "expected.txt": "\n".join(_reference(program, facts, horizon)) + "\n",
    }


FIXED = [
    # Since with 0 in its interval: the right side alone is enough at t' = t
    ("A(X):-B(X)Since[0,2]C(X)", ["C(a)@1", "B(a)@(1,3]", "C(b)@[2,2.5]", "B(b)@[3,4]"], 6),
    # nested Boxminus…Diamondminus: the inner intervals coalesce before the box looks at them
    ("A(X):-Boxminus[1,2]Diamondminus[0,1]B(X)", ["B(a)@0", "B(a)@1", "B(a)@2.5", "B(a)@[4,inf)"], 9),
    # Boxplus head feeding recursion through Diamondminus, joins on open bounds
    (
        "Boxplus[1,2]A(X):-B(X), C(X)\nP(X):-Diamondminus[0,1]P(X)\nP(X):-A(X)",
        ["B(a)@[0,1]", "C(a)@(0.5,3]"],
        7,
    ),
    # continuous semantics: punctual facts at 0, 1, 2 do not satisfy Boxminus[0,2]
    ("A(X):-Boxminus[0,2]B(X)", ["B(a)@0", "B(b)@[0,1)", "B(a)@1", "B(b)@[1,2]", "B(a)@2"], 3),
    # binary join with a Since whose left side uses fewer variables
    (
        "R(X,Y):-E(X,Y), Diamondminus[0,1]S(Y)\nS(Y):-T(Y)Since(0,1]U(Y)",
        ["U(b)@0", "T(b)@[0,2]", "E(a,b)@[0,3]"],
        4,
    ),
    # unbounded intervals and rational bounds
    (
        "A(X):-Diamondminus[0.5,inf)B(X)\nC(X):-B(X)Since[1/2,inf)D(X)",
        ["D(a)@0", "B(a)@[0,2]", "B(b)@(3,3.5)"],
        5,
    ),
]


@pytest.mark.parametrize(("program", "facts", "horizon"), FIXED)
def test_fixed_cases_against_naive(program, facts, horizon) -> None:
    assert _engine(program, facts, horizon) == _reference(program, facts, horizon)


def test_golden_cases() -> None:
    """Saved cases (hand-verified, or shrunk by make fuzz): program, stream, horizon, expected model."""
    cases = sorted(p for p in GOLDEN_ROOT.iterdir() if p.is_dir())
    assert cases, "no golden DatalogMTL cases"
    for case in cases:
        program = (case / "program.txt").read_text()
        facts = (case / "stream.txt").read_text().split("\n")
        facts = [f for f in facts if f.strip()]
        horizon = Fraction((case / "horizon.txt").read_text().strip())
        expected = [f for f in (case / "expected.txt").read_text().split("\n") if f]
        assert _engine(program, facts, horizon) == expected, case.name
        assert _reference(program, facts, horizon) == expected, case.name


# ------------------------------------------------------------------ generated cases (tests/support/mtl_strategies.py)


@pytest.mark.generated
@settings(max_examples=examples(120))
@given(programs(), streams())
def test_generated_programs_against_naive(program: str, facts: list[str]) -> None:
    horizon = 5
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(program, facts, horizon)):
        assert _engine(program, facts, horizon) == _reference(program, facts, horizon)


@pytest.mark.generated
@settings(max_examples=examples(60))
@given(programs(), streams())
def test_generated_results_leave_when_final(program: str, facts: list[str]) -> None:
    """After each fact starting at t, exactly the maximal intervals of the least model that end before t
    have been reported: (−∞, t) is final then, and nothing reported is ever taken back."""
    from rsp.mtl import parse
    from rsp.mtl.engine import Engine

    horizon = 5
    model = least_model(parse_program(program), [parse_fact(f) for f in facts], horizon)
    outputs = parse(program).source.head_predicates()
    engine = Engine(parse(program), horizon=horizon)
    reported: list[str] = []
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(program, facts, horizon)):
        for fact in facts:
            pred, args, iv = parse_fact(fact)
            for _, batch in engine.push(pred, args, iv):
                reported += [format_fact(*f) for f in batch]
            final = sorted(format_fact(*f) for f in model if f[0] in outputs and f[2][1] < iv[0])
            assert sorted(reported) == final, fact
        for _, batch in engine.finish():
            reported += [format_fact(*f) for f in batch]
        assert sorted(reported) == sorted(format_fact(*f) for f in model if f[0] in outputs)
