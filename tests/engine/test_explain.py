"""Derivations on demand: every output atom of the golden cases is explained by a rule of the
program whose ground body holds, and stream premises name atoms that are in the stream."""

from __future__ import annotations

import pytest
from golden_cases import GOLDEN, case_names

from rsp.engine import Engine
from rsp.io.atoms import read_atom_stream
from rsp.lars import load
from rsp.lars.model import format_atom


def _check(derivation, program, stream_atoms, intensional) -> None:
    if derivation.rule is None:
        return
    assert derivation.rule in program.program.rules
    for premise in derivation.premises:
        if premise.atom is None:
            continue
        pred, args = premise.atom
        if any(sub.source == "background fact" for sub in premise.derivations):
            assert any(r.head.atom.pred == pred and r.head.atom.args == args for r in program.program.facts)
        elif (pred, len(args)) in intensional:
            assert premise.derivations, f"no derivation for {premise.text}"
            for sub in premise.derivations:
                assert sub.atom == format_atom(pred, args)
                _check(sub, program, stream_atoms, intensional)
        elif premise.times:
            for time in premise.times:
                assert (time, pred, args) in stream_atoms, premise.text


@pytest.mark.parametrize("name", case_names())
def test_every_answer_has_a_derivation(name: str) -> None:
    program = load(GOLDEN / name / "program.lars")
    stream = read_atom_stream(GOLDEN / name / "stream.txt")
    stream_atoms = set(stream.elements)
    engine = Engine(program)
    explained = 0
    for _t in engine.run(stream):
        for pred, args in engine.output():
            derivation = engine.explain(pred, args)
            assert derivation is not None, f"{format_atom(pred, args)} at {engine.t}"
            assert derivation.atom == format_atom(pred, args) and derivation.time == engine.t
            _check(derivation, program, stream_atoms, program.intensional)
            explained += 1
    assert explained > 0


def test_explanation_text_names_rule_origin_and_stream_times() -> None:
    program = load(GOLDEN / "laser_join" / "program.lars")
    engine = Engine(program)
    for t in engine.run(read_atom_stream(GOLDEN / "laser_join" / "stream.txt")):
        if t == 40:
            break
    text = str(engine.explain("q1", ("x3", "z")))
    assert "by q1(A,C) :- [3] <> a(A,B), [#3] <> b(B,C)." in text
    assert "program.lars:9:1" in text
    assert "[3] <> a(x3,y) @ 40" in text and "[#3] <> b(y,z) @ 38" in text


def test_atoms_that_do_not_hold_have_no_derivation() -> None:
    engine = Engine(load(GOLDEN / "chain" / "program.lars"))
    engine.step(0, [("p", ("a",))])
    assert engine.explain("h", ("b",)) is None
