"""``rsp lars`` output kept from what changed (rsp/engine/output.py) against the output recomputed from
scratch: every line equal to the sorted, JSON-encoded answer of the naive evaluator (the reference
written from the definitions), on the golden cases, fixed corner cases and generated programs."""

from __future__ import annotations

import json

import pytest
from fuzzing import examples, saved_on_failure
from golden_cases import GOLDEN, case_names, expected
from hypothesis import given, settings
from hypothesis import strategies as st
from lars_naive import evaluate
from lars_strategies import cases
from test_differential import golden_case

import rsp.engine.output as lars_output
from rsp.cli import main
from rsp.engine import Engine
from rsp.engine.output import AtomLines, SortedTexts
from rsp.io.atoms import read_atom_lines
from rsp.lars import parse
from rsp.lars.model import format_atom


def _reference_jsonl(t: int, atoms: list[str]) -> str:
    return json.dumps({"time": t, "atoms": sorted(atoms)}, ensure_ascii=False) + "\n"


def _reference_text(t: int, atoms: list[str]) -> str:
    atoms = sorted(atoms)
    return f"{t:>6} | {'  '.join(atoms) if atoms else '-'}\n"


def _check(program_text: str, lines: list[str], every: int = 1, grouped: bool = True) -> None:
    """AtomLines (jsonl and text) at every ``every``-th time point against the naive evaluator."""
    program = parse(program_text)
    stream = read_atom_lines(lines)
    reference = dict(evaluate(program, stream))
    engine = Engine(program)
    writers = {fmt: AtomLines(engine, fmt) for fmt in ("jsonl", "text")}
    batches = []
    for t, atoms in stream.batches():
        if grouped and not engine.needs_arrival_order:
            groups: dict[str, list[tuple]] = {}
            for pred, args in atoms:
                groups.setdefault(pred, []).append(args)
            batches.append((t, groups))
        else:
            batches.append((t, atoms))
    for i, t in enumerate(engine.run_batches(batches)):
        if i % every:
            continue
        assert writers["jsonl"].line(t) == _reference_jsonl(t, reference[t]), t
        assert writers["text"].line(t) == _reference_text(t, reference[t]), t


FIXED = [
    # a sliding window: atoms appear, are extended while they arrive again, and expire
    ("q(A,B) :- [3] <> p(A,B).", ["0 p(a,b)", "1 p(b,c)", "2 p(a,b)", "4 p(c,d)", "5", "9 p(a,b)", "15"]),
    # an aliased window table read by no other rule, beside a predicate with a join and negation
    (
        "q(A) :- [2] <> p(A).\nr(A) :- q(A), not s(A).\ns(A) :- [1] <> t(A).",
        ["0 p(a)", "0 t(a)", "1 p(b)", "2 t(b)", "3", "4 p(a)", "8"],
    ),
    # @ heads (atoms placed at time points) and box: the output also holds atoms placed at t
    (
        "@T hot(S) :- [4] @T temp(S,V), V > 30.\nalert(S) :- [2] [] hot(S).\nsensor(s1).\n"
        "ok(S) :- sensor(S), not alert(S).",
        ["0 temp(s1,31)", "1 temp(s1,35)", "2 temp(s1,40)", "3 temp(s1,20)", "7"],
    ),
    # strings that JSON escapes (quotes) and strings that sort before and after their escaped form
    (
        'q(X) :- [2] <> p(X).\nr("a b") :- [1] <> p(X).',
        ['0 p("x")', '0 p(a)', '1 p("#")', '2 p(z)', "3", '4 p("x")', "7"],
    ),
    # background facts that never expire beside stream-derived ones; a stream predicate in the output
    ("b(1).\nb(2).\nq(X) :- [1] <> p(X), b(X).\np2(X) :- p(X).", ["0 p(1)", "0 p(3)", "1 p(2)", "3"]),
]


@pytest.mark.parametrize("program, lines", FIXED)
@pytest.mark.parametrize("every", [1, 2, 3])
def test_fixed_cases_against_naive(program: str, lines: list[str], every: int) -> None:
    _check(program, lines, every)
    _check(program, lines, every, grouped=False)


@pytest.mark.parametrize("name", case_names())
@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_cli_output_matches_golden(name: str, fmt: str, capsys) -> None:
    """``rsp lars`` writes the hand-verified answers of every golden case, in both formats."""
    program = GOLDEN / name / "program.lars"
    code = main(["lars", str(program), "--stream", str(GOLDEN / name / "stream.txt"), "--format", fmt, "-q"])
    out = capsys.readouterr().out
    assert code == 0
    rows = expected(name)
    if fmt == "jsonl":
        assert out == "".join(_reference_jsonl(t, atoms) for t, atoms in rows)
    else:  # text shortens IRIs; the golden atoms have none, except where a program declares prefixes
        assert [line.split(" | ")[0].strip() for line in out.splitlines()] == [str(t) for t, _ in rows]
        for line, (_t, atoms) in zip(out.splitlines(), rows, strict=True):
            body = line.split(" | ", 1)[1]
            assert len(body.split("  ")) == max(len(atoms), 1)


def test_many_changes_and_blocks(monkeypatch) -> None:
    """Small blocks: splits, emptied blocks and rebuilds on a window with many atoms per time point."""
    monkeypatch.setattr(lars_output, "_BLOCK", 2)
    lines = [f"{t} p(c{(t * 7 + i) % 23},d{i % 3})" for t in range(12) for i in range(6)] + ["20"]
    _check("q(A,B) :- [3] <> p(A,B).\nr(A) :- [1] <> p(A,B).", lines)
    _check("q(A,B) :- [3] <> p(A,B).\nr(A) :- [1] <> p(A,B).", lines, every=4)


@pytest.mark.generated
@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.lists(st.text("abc\"", max_size=3)), st.lists(st.integers(0, 30))), max_size=12))
def test_sorted_texts_against_sorted(batches) -> None:
    """SortedTexts keeps a sorted multiset exactly as ``sorted`` of what is held (duplicates kept)."""
    lars_output._BLOCK = 2
    try:
        texts = SortedTexts()
        held: list[str] = []
        for added, picks in batches:
            positions = sorted({i % len(held) for i in picks}, reverse=True) if held else []
            removed = [held.pop(i) for i in positions]
            texts.apply(list(added), removed)
            held.extend(added)
            assert list(texts) == sorted(held)
            assert len(texts) == len(held)
            assert texts.joined("|") == "|".join(sorted(held))  # block parts kept only while unchanged
            assert texts.joined(", ", repr, key="repr") == ", ".join(map(repr, sorted(held)))
    finally:
        lars_output._BLOCK = 512


@pytest.mark.generated
@settings(max_examples=examples(300), deadline=None)
@given(cases(), st.integers(1, 3))
def test_generated_programs_and_streams(case, every: int) -> None:
    program_text, lines = case
    with saved_on_failure(GOLDEN, lambda: golden_case(program_text, lines)):
        _check(program_text, lines, every)


def test_escaped_texts_are_json_strings() -> None:
    engine = Engine(parse('q(X) :- [0] <> p(X).'))
    out = AtomLines(engine, "jsonl")
    engine.step(0, [("p", ('"a"',)), ("p", ("b",))])
    record = json.loads(out.line(0))
    assert record == {"time": 0, "atoms": sorted([format_atom("q", ('"a"',)), "q(b)"])}
    assert out.escaped == 1
    engine.step(1)
    assert json.loads(out.line(1)) == {"time": 1, "atoms": []}
    assert out.escaped == 0 and not out.fragment
