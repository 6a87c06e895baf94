"""Indexes that only guarded rules probe sleep while their guards fail (rsp/engine/store.py
``Table.sleep``/``wake``, rsp/engine/evaluator.py ``_sleep_guarded_indexes``): OWL 2 RL's ``eq-rep-*``
shape, a triple table read by subject or object once some ``same`` triple exists. Generated programs
and streams bring the guard's constant at any time (from the stream, or derived in the middle of a
fixpoint), let it expire and come back, and the answers at every time point must be the naive
evaluator's."""

from __future__ import annotations

import pytest
from fuzzing import examples, saved_on_failure
from golden_cases import GOLDEN
from hypothesis import given, settings
from hypothesis import strategies as st
from test_differential import _check, golden_case

from rsp.engine import Engine
from rsp.io.atoms import read_atom_lines
from rsp.lars import parse
from rsp.lars.model import Op

SYMBOLS = ("a", "b", "c", "same", "p")


@st.composite
def guarded_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    w = draw(st.sampled_from((0, 1, 2, 4)))
    lines = [
        f"g(S,P,O) :- [{w}] <> t(S,P,O).",
        "g(S2,P,O) :- g(S,same,S2), g(S,P,O).",  # eq-rep-s: probes g by subject
        "g(S,P,O2) :- g(O,same,O2), g(S,P,O).",  # eq-rep-o: probes g by object
        "g(Y,same,X) :- g(X,same,Y).",
    ]
    if draw(st.booleans()):  # a same triple derived in the middle of a fixpoint
        lines.append(f"g(X,same,Y) :- g(X,p,Y), [{draw(st.sampled_from((0, 2)))}] <> key(X).")
    if draw(st.booleans()):
        lines.append("g(X,p,Z) :- g(X,p,Y), g(Y,p,Z).")
    lines.append(draw(st.sampled_from(("q(S,O) :- g(S,p,O).", "q(S,O) :- g(S,P,O), not g(O,P,S)."))))
    stream = []
    for time in sorted(draw(st.lists(st.integers(0, 10), min_size=1, max_size=8, unique=True))):
        atoms = draw(st.lists(st.integers(0, 9), max_size=5))
        if not atoms:
            stream.append(str(time))
        for kind in atoms:
            s, o = draw(st.sampled_from(SYMBOLS[:3])), draw(st.sampled_from(SYMBOLS[:3]))
            if kind == 0:
                stream.append(f"{time} t({s},same,{o})")
            elif kind == 1:
                stream.append(f"{time} key({s})")
            else:
                stream.append(f"{time} t({s},{draw(st.sampled_from(SYMBOLS))},{o})")
    return "\n".join(lines) + "\n", stream


@pytest.mark.generated
@settings(max_examples=examples(300), deadline=None)
@given(guarded_cases())
def test_dormant_indexes_against_naive(case) -> None:
    program_text, lines = case
    program = parse(program_text)
    engine = Engine(program)
    table = engine.tables[(("g", 3), Op.PLAIN, None, False)]
    assert table.dormant  # the corner is reached: eq-rep's indexes start asleep
    with saved_on_failure(GOLDEN, lambda: golden_case(program_text, lines)):
        _check(program, read_atom_lines(lines))


def test_an_index_wakes_with_every_entry() -> None:
    """A dormant index is filled from the table when its rule first runs, and kept from then on."""
    engine = Engine(parse("g(S,P,O) :- [5] <> t(S,P,O).\ng(S2,P,O) :- g(S,same,S2), g(S,P,O).\n"))
    engine.step(0, [("t", ("a", "p", "b")), ("t", ("c", "p", "d"))])
    assert sorted(engine.holding("g", 3)) == [("a", "p", "b"), ("c", "p", "d")]
    engine.step(1, [("t", ("a", "same", "e"))])
    assert ("e", "p", "b") in engine.holding("g", 3)
    engine.step(2, [("t", ("c", "p", "f"))])
    engine.step(3, [("t", ("c", "same", "a"))])
    assert {("a", "p", "d"), ("a", "p", "f"), ("a", "same", "e")} <= engine.holding("g", 3)
