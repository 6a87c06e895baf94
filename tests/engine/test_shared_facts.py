"""A predicate read only plainly keeps its facts in its plain formula table (rsp/engine/evaluator.py
``Engine._share``): one dict for the facts that hold now and the table rules join on. Generated programs
put such a predicate in every corner the sharing has to survive (recursion through it, background and
``@c`` facts of it, stream atoms of its own name, readers with constants, negation next to it) and the
answers at every time point must be the naive evaluator's; the change log read by maintained answers
(rsp/engine/changes.py) must give exactly what appeared and went."""

from __future__ import annotations

import pytest
from fuzzing import examples, saved_on_failure
from golden_cases import GOLDEN
from hypothesis import given, settings
from hypothesis import strategies as st
from test_differential import _check, golden_case

from rsp.engine import Engine
from rsp.engine.changes import FactChanges
from rsp.io.atoms import read_atom_lines
from rsp.lars import parse

SHARED = ("i", 2)
SYMBOLS = ("a", "b", "c")


@st.composite
def shared_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A program whose ``i/2`` is derived from windows (and from itself) and read only as plain ``i(…)``,
    with a stream of ``e/2``, ``f/1`` and sometimes ``i/2`` atoms (or ``i`` of another arity)."""
    w = draw(st.sampled_from((0, 1, 2, 3, 5)))
    lines = [f"i(X,Y) :- [{w}] <> e(X,Y)."]
    recursion = draw(st.sampled_from(("closure", "chain", "none")))
    if recursion == "closure":
        lines.append("i(X,Z) :- i(X,Y), i(Y,Z).")
    elif recursion == "chain":
        lines.append(f"i(X,Z) :- i(X,Y), [{draw(st.sampled_from((0, 1, 4)))}] <> e(Y,Z).")
    if draw(st.booleans()):
        lines.append(f"i(X,X) :- [{draw(st.sampled_from((1, 2)))}] [] f(X).")
    if draw(st.booleans()):
        lines.append(f"i(X,{draw(st.sampled_from(SYMBOLS))}) :- [{w}] @T f(X), T >= 2.")
    readers = [
        "h(X) :- i(X,Y), not e(Y,X).",
        "h(X) :- i(X,X).",
        f"k(Y) :- i({draw(st.sampled_from(SYMBOLS))},Y).",
        "m(X,Z) :- i(X,Y), i(Y,Z), not f(Z).",
    ]
    lines += draw(st.lists(st.sampled_from(readers), min_size=1, max_size=3, unique=True))
    if draw(st.booleans()):
        lines.append(f"i({draw(st.sampled_from(SYMBOLS))},{draw(st.sampled_from(SYMBOLS))}).")
    if draw(st.booleans()):
        lines.append(f"@{draw(st.integers(0, 8))} i({draw(st.sampled_from(SYMBOLS))},c).")
    stream = []
    for time in sorted(draw(st.lists(st.integers(0, 10), min_size=1, max_size=8, unique=True))):
        atoms = draw(st.lists(st.integers(0, 9), max_size=5))
        if not atoms:
            stream.append(str(time))
        for kind in atoms:
            x, y = draw(st.sampled_from(SYMBOLS)), draw(st.sampled_from(SYMBOLS))
            if kind == 0:
                stream.append(f"{time} i({x},{y})")  # a stream atom of the shared predicate
            elif kind == 1:
                stream.append(f"{time} i({x})")  # its name with another arity: read by nobody
            elif kind <= 3:
                stream.append(f"{time} f({x})")
            else:
                stream.append(f"{time} e({x},{y})")
    return "\n".join(lines) + "\n", stream


def _check_changes(program, stream) -> None:
    """FactChanges over the shared predicate: what appeared and went at each time point is the
    difference of what holds (the log it reads is the plain table's delta)."""
    engine = Engine(program)
    assert SHARED in engine.shared
    changes = FactChanges(engine, SHARED)
    before: set = set()
    for _t in engine.run(stream):
        new, gone = changes.update()
        now = engine.holding(*SHARED)
        assert (set(new), set(gone)) == (now - before, before - now)
        before = now


@pytest.mark.generated
@settings(max_examples=examples(300), deadline=None)
@given(shared_cases())
def test_shared_predicate_against_naive(case) -> None:
    program_text, lines = case
    with saved_on_failure(GOLDEN, lambda: golden_case(program_text, lines)):
        program = parse(program_text)
        _check(program, read_atom_lines(lines))
        _check_changes(program, read_atom_lines(lines))


def test_sharing_is_decided_by_readers() -> None:
    """Shared: read only plainly. Not shared: read through a window too, or derived by an @T head."""
    plain = Engine(parse("i(X) :- [2] <> p(X).\nh(X) :- i(X), not p(X)."))
    windowed = Engine(parse("i(X) :- [2] <> p(X).\nh(X) :- [3] <> i(X)."))
    placed = Engine(parse("@T i(X) :- [2] @T p(X).\nh(X) :- i(X)."))
    assert ("i", 1) in plain.shared
    assert ("i", 1) not in windowed.shared
    assert ("i", 1) not in placed.shared
