"""``--explain`` in mode clingo: every atom of the printed model gets a program rule whose ground
instance holds in the model. Checked against the brute-force reference (tests/oracles/asp_reference.py): the
explanation's premises hold and its assumptions (``not x``) are true in the reference's answer with that
output, the rule is one of the program's and its head is the atom; on the golden cases, the
content-retrieval example and generated programs."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import pytest
from asp_reference import _holds, answers_at
from asp_strategies import cases
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from lars_naive import _Context, _time_point
from paths import GOLDEN_ASP, ROOT

from rsp.asp import parse
from rsp.asp.clingo_mode import ClingoReasoner
from rsp.io.atoms import AtomStream, parse_line, read_atom_lines, read_atom_stream
from rsp.lars.model import format_atom
from rsp.lars.parser import parse_program

CONTENT = ROOT / "examples" / "content-retrieval"
SMALL = [
    "0 lev(hstn,2)",
    "0 lev(ipls,2)",
    "0 cache(i1,hstn)",
    "1 cache(i1,ipls)",
    "2 req(i1,atla)",
    "4 down(ipls)",
]


def _context(program, stream: AtomStream, t: int, pairs: set) -> _Context:
    facts = []
    for rule in program.facts:
        atom, time = rule.head.atom, rule.head.time
        if time is None:
            facts.append(((atom.pred, atom.args), None))
        elif _time_point(time) is not None:
            facts.append(((atom.pred, atom.args), _time_point(time)))
    ctx = _Context(stream.start, t, stream.elements, facts)
    ctx.pairs = set(pairs)
    return ctx


def _literal(text: str):
    """A premise or assumption as the extended atom it names (``not`` dropped) and whether it was negated."""
    lit = parse_program(f"why :- {text}.").proper_rules[0].body[0]
    return dataclasses.replace(lit, negated=False), lit.negated


def check_explanations(text: str, stream: AtomStream) -> int:
    """Explain every atom of clingo's printed model at every t; check each against the reference's answer
    with that output. Returns how many atoms were explained by a rule."""
    program = parse_program(text)
    rules = {str(r) for r in program.proper_rules}
    solver = ClingoReasoner(parse(text), stream.start, 1)
    solver.explaining = True
    by_time = {t: list(batch) for t, batch in stream.batches()}
    explained = 0
    for t in range(stream.start, stream.end + 1):
        found = solver.step(t, by_time.get(t, []))
        if not found:
            continue
        answers = [
            pairs
            for pairs in answers_at(program, stream, t)
            if sorted(format_atom(p, a) for (p, a), s in pairs if s == t and format_atom(p, a) in found[0])
            == found[0]
        ]
        assert answers, f"t={t}: clingo's model {found[0]} is none of the reference's"
        whys = []
        for atom in found[0]:
            _, pred, args = parse_line(f"{t} {atom}")
            why = solver.explain(found[0], pred, args)
            assert why is not None, f"t={t}: no rule supports {atom}"
            assert why["atom"] == atom
            whys.append(why)
        # one answer with this output makes every explanation true
        assert any(all(_true(program, stream, t, pairs, why, rules) for why in whys) for pairs in answers), (
            f"t={t}: an explanation does not hold in the model {found[0]}: {whys}"
        )
        explained += sum(why["rule"] in rules for why in whys)
    return explained


def _true(program, stream, t, pairs, why, rules) -> bool:
    if why["rule"] == "[background fact]":
        return any(str(r.head) == why["atom"] for r in program.facts)
    assert why["rule"] in rules
    rule = next(r for r in program.proper_rules if str(r) == why["rule"])
    assert rule.head.atom.pred == why["atom"].split("(")[0]
    assert len(why["premises"]) == len(rule.positive_atoms())
    assert len(why["assumptions"]) == len(rule.negative_atoms())
    ctx = _context(program, stream, t, pairs)
    for premise in why["premises"]:
        lit, negated = _literal(premise)
        if negated or not _holds(ctx, lit):
            return False
    for assumption in why["assumptions"]:
        if re.match(r"not (\[#?\d+\] )?@[^\d-]", assumption):
            continue  # "not @c p" with c not a time point: p holds at no such point, so the assumption is true
        lit, negated = _literal(assumption.removeprefix("not "))
        if negated or _holds(ctx, lit):
            return False
    return True


@pytest.mark.parametrize(
    "name", sorted(p.name for p in GOLDEN_ASP.iterdir() if (p / "program.lars").exists())
)
def test_explanations_hold_on_golden_cases(name: str) -> None:
    case = GOLDEN_ASP / name
    assert check_explanations((case / "program.lars").read_text(), read_atom_stream(case / "stream.txt")) > 0


def test_explanations_hold_on_content_retrieval() -> None:
    text = (CONTENT / "content.lars").read_text()
    assert check_explanations(text, read_atom_lines(SMALL)) > 50


def test_cli_explain_in_mode_clingo() -> None:
    case = GOLDEN_ASP / "even_loop_window"
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "lars", str(case / "program.lars"), "--stream", str(case / "stream.txt"),
         "--mode", "clingo", "--explain"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout.splitlines()[0])
    (why,) = first["explanations"]
    other = "fetch" if why["atom"].startswith("here") else "here"
    assert why["assumptions"] == [f"not {other}(a)"] and why["premises"] == ["[2] <> req(a)"]


@pytest.mark.generated
@settings(max_examples=examples(25))
@given(cases())
def test_generated_explanations_hold(case) -> None:
    """Generated programs (even loops, choices through windows, negation over ◇/□/@, tuple windows)."""
    text, lines = case
    with saved_on_failure(GOLDEN_ASP, lambda: {"program.lars": text, "stream.txt": "\n".join(lines) + "\n"}):
        check_explanations(text, read_atom_lines(lines))
