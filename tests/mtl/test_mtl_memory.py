"""The memory bound of rsp.mtl's engine with ``Since`` (docs/mtl.md, "Memory with Since"): the intervals
it stores (:meth:`rsp.mtl.engine.Engine.stored_intervals`) stay under a constant however long the stream
and however dense its timestamps, for ``Since[a,inf)`` and for bounded ranges; and generated
Since-heavy programs (random ranges with open and closed ends, 0 lower bounds, ``inf`` upper bounds,
nested left sides, recursion, dense rational points, a new denominator mid-stream) against the naive
evaluator (tests/oracles/mtl_naive.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from mtl_naive import least_model
from mtl_strategies import num as _num
from mtl_strategies import streams
from paths import GOLDEN_MTL

from rsp.mtl import format_fact, parse, run
from rsp.mtl.engine import Engine
from rsp.mtl.facts import parse_fact
from rsp.mtl.syntax import parse_program

GOLDEN_ROOT = GOLDEN_MTL
INF = float("inf")
HORIZON = 3  # of the generated cases: their facts start by then


def _reference(program: str, facts: list[str], horizon) -> list[str]:
    model = least_model(parse_program(program), [parse_fact(f) for f in facts], horizon)
    return sorted(format_fact(*fact) for fact in model)


def _engine(program: str, facts: list[str], horizon) -> list[str]:
    return sorted(f for _, batch in run(program, facts, horizon=horizon) for f in batch)


def _files(program: str, facts: list[str], horizon) -> dict[str, str]:
    """A failing case as a golden case of tests/golden/mtl (what test_mtl_differential replays)."""
    return {
        "program.txt": program + "\n",
        "stream.txt": "\n".join(facts) + "\n",
        "horizon.txt": f"{horizon}\n",
        "expected.txt": "\n".join(_reference(program, facts, horizon)) + "\n",
    }


# ------------------------------------------------------------------ the bound
def _plain(t: Fraction):
    return t.numerator if t.denominator == 1 else t


def _points(pred: str, n: int, spacing: Fraction, start: int = 0) -> list[tuple]:
    return [(pred, ("a",), (_plain(k * spacing),) * 2 + (True, True)) for k in range(start, start + n)]


def _blocks(n: int, spacing: Fraction) -> list[tuple]:
    """``B(a)`` points and ``E(a)`` on [t, t + spacing] except every 7th step: E breaks now and then."""
    facts = []
    for k in range(n):
        t = k * spacing
        facts.append(("B", ("a",), (_plain(t), _plain(t), True, True)))
        if k % 7 != 6:
            facts.append(("E", ("a",), (_plain(t), _plain(t + spacing), True, k % 7 != 5)))
    return facts[:n]


STREAMS = {
    "inf": (
        "C(X):-D(X)Since[0,inf)B(X)",
        lambda n, s: [("D", ("a",), (0, INF, True, False))] + _points("B", n, s),
    ),
    "inf-open": (
        "C(X):-D(X)Since(1,inf)B(X)",
        lambda n, s: [("D", ("a",), (0, INF, True, False))] + _points("B", n, s),
    ),
    "bounded": ("C(X):-Diamondminus[0,2]B(X)\nF(X):-C(X)Since[0,3]B(X)", lambda n, s: _points("B", n, s)),
    "bounded-open-nested": ("F(X):-(Diamondminus[0,2]B(X))Since(1/2,3)B(X)", lambda n, s: _points("B", n, s)),
    "left-breaks": (
        "G(X):-E(X)Since[1/4,inf)B(X)\nH(X):-E(X)Since(0,1/2]B(X)",
        _blocks,
    ),
    "recursive": ("P(X):-B(X)\nP(X):-P(X)Since(1,2]B(X)", lambda n, s: _points("B", n, s)),
    # a left side whose variable the right side lacks (bound by the body's other atom): a carry per pair
    "pairs-inf": (
        "C(X):-D(X)Since[0,inf)B(Y), D(X)",
        lambda n, s: [("D", ("a",), (0, INF, True, False))] + _points("B", n, s),
    ),
    "pairs-bounded": (
        "C(X):-Diamondminus[0,2]B(X)\nF(X):-C(X)Since[0,3]B(Y), C(X)",
        lambda n, s: _points("B", n, s),
    ),
    "pairs-breaks": ("G(X):-E(X)Since[1/4,inf)B(Y), B(X)\nH(X):-E(X)Since(0,1/2]B(Y), E(X)", _blocks),
}
BOUND = 12  # stored intervals, whatever the length and the density


def _peak(program: str, facts: list[tuple]) -> tuple[int, Engine]:
    engine = Engine(parse(program))
    peak = 0
    for pred, args, iv in facts:
        engine.push(pred, args, iv)
        peak = max(peak, engine.stored_intervals())
    engine.finish()
    return max(peak, engine.stored_intervals()), engine


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stored_intervals_do_not_grow_with_length_or_density(name: str) -> None:
    """Streams of 300 and 3,000 facts, a timestamp every 1, 0.1 and 0.01: the same few stored intervals
    (before, the right side of Since kept every ended point: 3,001 intervals for 3,000 facts)."""
    program, make = STREAMS[name]
    assert not parse(program).punctual
    peaks = {}
    for spacing in (Fraction(1), Fraction(1, 10), Fraction(1, 100)):
        for n in (300, 3000):
            peak, engine = _peak(program, make(n, spacing))
            assert engine.peak_intervals <= peak
            peaks[(n, spacing)] = peak
    assert max(peaks.values()) <= BOUND, peaks
    for spacing in (Fraction(1), Fraction(1, 10), Fraction(1, 100)):
        assert peaks[(3000, spacing)] == peaks[(300, spacing)], peaks


def test_since_from_zero_to_inf_keeps_one_pending_interval() -> None:
    """The issue's case: ``D(a)@[0,inf)`` and a point ``B(a)`` at every integer; the answer is right
    and the engine holds D, the last point, C and one pending interval."""
    program, make = STREAMS["inf"]
    facts = make(3001, Fraction(1))
    engine = Engine(parse(program))
    results = []
    for fact in facts:
        results += [format_fact(*f) for _, batch in engine.push(*fact) for f in batch]
        assert engine.stored_intervals() <= 4
    results += [format_fact(*f) for _, batch in engine.finish() for f in batch]
    assert results == ["C(a)@[0,3000]"]


def test_punctual_range_is_bounded_by_the_window_not_the_length() -> None:
    """With a punctual range (``Since[1,1]``) the pending points within the range are kept, one per
    timestamp of the last time unit: bounded by the density, never by the length."""
    program = "C(X):-D(X)Since[1,1]B(X)"
    make = STREAMS["inf"][1]
    for spacing, bound in ((Fraction(1), 4), (Fraction(1, 10), 14)):
        short, _ = _peak(program, make(300, spacing))
        long, _ = _peak(program, make(3000, spacing))
        assert short == long <= bound


def test_pending_results_survive_a_new_denominator() -> None:
    """A carry in halves is rescaled when thirds arrive; the results stay those of the naive evaluator."""
    program = "C(X):-D(X)Since(1/2,3/2]B(X)"
    facts = ["D(a)@[0,4]", "B(a)@0", "B(a)@1/2", "B(a)@1", "B(a)@4/3", "B(b)@(4/3,5/3)", "D(b)@[5/3,3]"]
    engine = Engine(parse(program), horizon=4)
    for fact in facts[:4]:
        engine.push(*parse_fact(fact))
    in_store = sum(len(ivs) for table in engine.store.values() for ivs in table.values())
    assert engine.stored_intervals() > in_store  # the ended points at 0 and 1/2 are a carry now
    assert _engine(program, facts, 4) == _reference(program, facts, 4)


def test_a_broken_left_side_drops_what_was_pending() -> None:
    program = "C(X):-D(X)Since[1,2]B(X)"
    facts = ["B(a)@0", "D(a)@[0,1/2]", "D(a)@(1/2,3/4)", "B(a)@1", "D(a)@(1,3]"]
    engine = Engine(parse(program), horizon=3)
    for fact in facts:
        engine.push(*parse_fact(fact))
    # D broke at 3/4: the point at 0 (pending on [1,2] while D held) can give nothing any more
    in_store = sum(len(ivs) for table in engine.store.values() for ivs in table.values())
    assert engine.stored_intervals() == in_store == 2  # B(a)@1 and D(a)@(1,3]: no carry left
    assert _engine(program, facts, 3) == _reference(program, facts, 3) == ["C(a)@[2,3]"]


# ------------------------------------------------------------------ generated Since-heavy programs
_LOWS = [0, 0, Fraction(1, 4), Fraction(1, 2), 1, Fraction(3, 2)]
_HIGHS = [0, Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), 1, 2, "inf", "inf"]


@st.composite
def since_ranges(draw) -> str:
    """A range for Since: 0 as lower bound often, ``inf`` often, open or closed at either end."""
    a = draw(st.sampled_from(_LOWS))
    b = draw(st.sampled_from([x for x in _HIGHS if x == "inf" or x >= a]))
    if b == "inf":
        return f"{draw(st.sampled_from('[('))}{_num(a)},inf)"
    if a == b:
        return f"[{_num(a)},{_num(a)}]"
    return f"{draw(st.sampled_from('[('))}{_num(a)},{_num(b)}{draw(st.sampled_from('])'))}"


_LEFT = ["A", "A", "B"]  # mostly long intervals in the streams
_RIGHT = ["B", "C", "C"]  # mostly points and runs of points


@st.composite
def since_lefts(draw, heads: list[str], var: str = "X") -> str:
    atom = f"{draw(st.sampled_from(_LEFT + heads))}({var})"
    kind = draw(st.sampled_from(["atom", "atom", "dia", "box", "since"]))
    if kind == "atom":
        return atom
    if kind == "dia":
        return f"(Diamondminus{draw(since_ranges())}{atom})"
    if kind == "box":
        return f"(Boxminus{draw(since_ranges())}{atom})"
    return f"({atom}Since{draw(since_ranges())}{draw(st.sampled_from(_RIGHT))}({var}))"


@st.composite
def since_programs(draw) -> str:
    """One to three rules, each with a Since (its left side an atom or a nested formula, its right
    side an atom, a binary atom or a ◇⁻), sometimes recursive, sometimes joined with an atom; sometimes
    the left side is over Y, which the right side lacks and an atom beside the Since binds."""
    rules = []
    defined: list[str] = []  # the heads of earlier rules: recursion through them, never through nothing
    for i in range(draw(st.integers(1, 3))):
        head = "PQ"[i % 2]
        other = draw(st.integers(0, 3)) == 0  # the left side over Y, bound elsewhere
        left = draw(since_lefts(defined, "Y" if other else "X"))
        right = draw(st.sampled_from(["atom", "atom", "binary", "dia"] + (["head"] if defined else [])))
        if right == "atom":
            right = f"{draw(st.sampled_from(_RIGHT))}(X)"
        elif right == "binary":
            right = "E(X,Y)"
        elif right == "dia":
            right = f"Diamondminus{draw(since_ranges())}{draw(st.sampled_from(_RIGHT))}(X)"
        else:
            right = f"{draw(st.sampled_from(defined))}(X)"
        body = [f"{left}Since{draw(since_ranges())}{right}"]
        if other and right != "E(X,Y)":
            body.append(draw(st.sampled_from([f"{p}(Y)" for p in _LEFT + _RIGHT] + ["E(X,Y)", "E(Y,X)"])))
        if draw(st.integers(0, 3)) == 0:
            body.append(f"{draw(st.sampled_from(_LEFT))}(X)")
        hargs = "X,Y" if right == "E(X,Y)" and len(body) == 1 and draw(st.booleans()) else "X"
        rules.append(f"{head}({hargs}):-{', '.join(body)}")
        if hargs == "X" and head not in defined:
            defined.append(head)
    return "\n".join(rules)


_KINDS = {
    "A": ["interval", "interval", "interval", "point", "run"],
    "B": ["interval", "point", "run", "third"],
    "C": ["point", "run", "run", "third", "interval"],
    "E": ["point", "run", "third"],
}


@st.composite
def dense_streams(draw) -> list[str]:
    """Facts on [0, 3] in quarters: single facts (points, short and long intervals, open or closed,
    up to ``inf``), runs of points every quarter, and now and then a point in thirds (a new unit);
    mostly about ``a``, with a long ``A(a)`` and a run of ``C(a)`` first (left and right sides)."""
    facts = []
    if draw(st.integers(0, 3)):  # a long left side and a run of right points about a
        lo = Fraction(draw(st.integers(0, 2)), 4)
        end = draw(st.sampled_from(["inf", _num(lo + 2), _num(lo + 3)]))
        facts.append(
            (lo, f"A(a)@{draw(st.sampled_from('[('))}{_num(lo)},{end}{')' if end == 'inf' else ']'}")
        )
        lo = Fraction(draw(st.integers(0, 6)), 4)
        run = [lo + Fraction(k, 4) for k in range(draw(st.integers(2, 8)))]
        facts += [(t, f"C(a)@{_num(t)}") for t in run if t <= HORIZON]
    drawn = []
    for _ in range(draw(st.integers(1, 5))):
        pred = draw(st.sampled_from(["A", "A", "B", "B", "C", "C", "E"]))
        drawn.append((pred, draw(st.sampled_from(_KINDS[pred]))))
    for pred, kind in drawn:
        const = draw(st.sampled_from(["a", "a", "a", "b"]))
        atom = f"{pred}({const},{draw(st.sampled_from(['a', 'b']))})" if pred == "E" else f"{pred}({const})"
        lo = Fraction(draw(st.integers(0, 10)), 4)
        if kind == "point":
            facts.append((lo, f"{atom}@{_num(lo)}"))
        elif kind == "third":
            t = Fraction(draw(st.integers(0, 8)), 3)
            facts.append((t, f"{atom}@{_num(t) if t.denominator == 1 else f'{t.numerator}/{t.denominator}'}"))
        elif kind == "run":
            for k in range(draw(st.integers(2, 8))):
                t = lo + Fraction(k, 4)
                if t <= HORIZON:
                    facts.append((t, f"{atom}@{_num(t)}"))
        else:
            length = draw(st.sampled_from([Fraction(1, 4), Fraction(1, 2), 1, 2, "inf"]))
            left = draw(st.sampled_from("[("))
            if length == "inf":
                facts.append((lo, f"{atom}@{left}{_num(lo)},inf)"))
            else:
                right = draw(st.sampled_from("])"))
                facts.append((lo, f"{atom}@{left}{_num(lo)},{_num(lo + length)}{right}"))
    facts.sort(key=lambda f: f[0])
    return [f for _, f in facts]


@pytest.mark.generated
@settings(max_examples=examples(150))
@given(since_programs(), dense_streams())
def test_generated_since_programs_against_naive(program: str, facts: list[str]) -> None:
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(program, facts, HORIZON)):
        assert _engine(program, facts, HORIZON) == _reference(program, facts, HORIZON)


@pytest.mark.generated
@settings(max_examples=examples(60))
@given(since_programs(), streams())
def test_generated_since_programs_on_shared_streams(program: str, facts: list[str]) -> None:
    """The same programs over the shared differential tests' streams (tests/support/mtl_strategies.py: halves
    up to 4, propositional and binary facts), with their horizon 5."""
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(program, facts, 5)):
        assert _engine(program, facts, 5) == _reference(program, facts, 5)


@pytest.mark.generated
@settings(max_examples=examples(60))
@given(since_programs(), dense_streams())
def test_generated_since_results_leave_when_final(program: str, facts: list[str]) -> None:
    """After each fact starting at t, exactly the model's maximal intervals that end before t have been
    reported (nothing pending in a carry comes out twice or late)."""
    model = least_model(parse_program(program), [parse_fact(f) for f in facts], HORIZON)
    normalised = parse(program)
    outputs = normalised.source.head_predicates()
    engine = Engine(normalised, horizon=HORIZON)
    reported: list[str] = []
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(program, facts, HORIZON)):
        for fact in facts:
            pred, args, iv = parse_fact(fact)
            for _, batch in engine.push(pred, args, iv):
                reported += [format_fact(*f) for f in batch]
            final = sorted(format_fact(*f) for f in model if f[0] in outputs and f[2][1] < iv[0])
            assert sorted(reported) == final, fact
        for _, batch in engine.finish():
            reported += [format_fact(*f) for f in batch]
        assert sorted(reported) == sorted(format_fact(*f) for f in model if f[0] in outputs)
