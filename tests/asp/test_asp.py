"""Answer streams (rsp.asp): both modes against the brute-force reference (tests/oracles/asp_reference.py) on
hand-verified golden cases (tests/golden/asp/) and generated ones, mode tms's single model and its
inertia, and the refusal of odd loops in mode tms."""

from __future__ import annotations

import json

import pytest
from asp_reference import answer_streams as reference
from asp_strategies import cases, choose_one
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from lars_naive import evaluate
from lars_strategies import cases as stratified_cases
from paths import GOLDEN_ASP

from rsp.asp import answer_streams, parse
from rsp.errors import ProgramError
from rsp.io.atoms import read_atom_lines, read_atom_stream
from rsp.lars.parser import parse_program

NAMES = sorted(p.name for p in GOLDEN_ASP.iterdir() if (p / "program.lars").exists())


def _expected(name: str) -> list[tuple[int, list[list[str]]]]:
    rows = [json.loads(line) for line in (GOLDEN_ASP / name / "expected.jsonl").read_text().splitlines()]
    return [(row["time"], row["models"]) for row in rows]


@pytest.mark.parametrize("name", NAMES)
def test_golden_reference(name: str) -> None:
    """The reference agrees with the hand-worked answers."""
    program = parse_program((GOLDEN_ASP / name / "program.lars").read_text(), name)
    assert reference(program, read_atom_stream(GOLDEN_ASP / name / "stream.txt")) == _expected(name)


def _tms_until_refused(program, stream, models: int = 0):
    """Mode tms's rows, and the time point and error where it refused (None if it did not)."""
    rows = []
    try:
        for t, found in answer_streams(program, stream, mode="tms", models=models):
            rows.append((t, found))
    except ProgramError as error:
        assert "mode tms cannot handle odd loops" in str(error) and "use --mode clingo" in str(error)
        return rows, error
    return rows, None


def _check_tms_against(expected: list[tuple[int, list[list[str]]]], rows, error) -> None:
    """tms agrees with the reference up to where it refused, and refuses only at a time point without an
    answer stream (an odd loop that leaves no model: clingo's ``[]``)."""
    assert rows == expected[: len(rows)]
    if error is not None:
        t = expected[len(rows)][0]
        assert f"no answer stream at time point {t}" in str(error)
        assert expected[len(rows)][1] == [], f"tms refused at {t}, where there are answers"


@pytest.mark.parametrize("mode", ["clingo", "tms"])
@pytest.mark.parametrize("name", NAMES)
def test_golden_modes(name: str, mode: str) -> None:
    program = parse((GOLDEN_ASP / name / "program.lars").read_text(), name)
    stream = read_atom_stream(GOLDEN_ASP / name / "stream.txt")
    if mode == "tms":
        rows, error = _tms_until_refused(program, stream)
        _check_tms_against(_expected(name), rows, error)
        if all(models for _t, models in _expected(name)):
            assert error is None
        return
    assert list(answer_streams(program, stream, mode=mode, models=0)) == _expected(name)


def test_tms_refuses_odd_loops_with_position() -> None:
    program = parse("a :- p.\nb :- not c.\nc :- a, not c.\n", "odd.lars")
    assert list(answer_streams(program, [(0, "q", ())], mode="tms")) == [(0, [["b"]])]  # no loop grounded
    with pytest.raises(ProgramError) as error:
        list(answer_streams(program, [(0, "p", ())], mode="tms"))
    assert str(error.value).startswith("odd.lars:3:1: mode tms cannot handle odd loops")
    assert "no answer stream at time point 0" in str(error.value) and "use --mode clingo" in str(error.value)
    assert list(answer_streams(program, [(0, "p", ())], mode="clingo", models=0)) == [(0, [])]


def test_tms_takes_constraints_while_there_are_answers() -> None:
    """An odd loop that has answers (a constraint that only removes some) is not refused: the labels
    outside the changed region are searched again when the region alone has no model."""
    text = "a :- [1] <> p, not b.\nb :- not a.\n:- a, q.\n"
    stream = read_atom_lines(["0 p", "1 q", "2"])
    got = list(answer_streams(parse(text), stream, mode="tms", models=1))
    assert got[1] == (1, [["b"]])  # a (if chosen at 0) is given up: the constraint forbids it with q
    assert list(answer_streams(parse(text), stream, mode="tms", models=0)) == reference(
        parse_program(text), stream
    )


def test_choose_exactly_one_among_three_runs_in_tms() -> None:
    """Ticker's "choose exactly one" (odd predicate loop, odd ground cycles with 3 candidates) has an
    answer at every time point; tms gives the reference's models and keeps its choice by inertia."""
    text = (
        "get(I,N) :- [3] <> req(I), [3] <> has(N), not nget(I,N).\n"
        "nget(I,N) :- get(I,M), [3] <> has(N), M != N.\n"
    )
    stream = read_atom_lines(["0 req(a)", "0 has(n1)", "1 has(n2)", "2 has(n3)", "3 req(b)", "5", "7"])
    expected = reference(parse_program(text), stream)
    assert [len(m) for _t, m in expected] == [1, 2, 3, 9, 2, 1, 1, 1]  # at 3: 3 nodes for a times 3 for b
    assert list(answer_streams(parse(text), stream, mode="tms", models=0)) == expected
    one = list(answer_streams(parse(text), stream, mode="tms", models=1))
    assert all(m[0] in dict(expected)[t] for t, m in one)
    chosen = [a for a in one[0][1][0] if a.startswith("get(a,")]
    assert all(chosen[0] in m[0] for _t, m in one[1:3]), "a's node stays chosen while it is still there"


def test_stratified_programs_agree_with_the_engine_reference() -> None:
    """On a stratified program the single answer is the stratified semantics' output."""
    text = "q(X) :- [2] <> p(X), not r(X).\nr(X) :- [#1] <> p(X).\ns :- not q(a)."
    stream = read_atom_lines(["0 p(a)", "1 p(b)", "2", "3 p(a)", "5"])
    from rsp.lars import parse as parse_stratified

    expected = [(t, [atoms]) for t, atoms in evaluate(parse_stratified(text), stream)]
    for mode in ("clingo", "tms"):
        assert list(answer_streams(parse(text), stream, mode=mode, models=0)) == expected


def _golden_files(program_text: str, lines: list[str]) -> dict[str, str]:
    rows = reference(parse_program(program_text), read_atom_lines(lines))
    return {
        "program.lars": program_text,
        "stream.txt": "".join(f"{line}\n" for line in lines),
        "expected.jsonl": "".join(json.dumps({"time": t, "models": m}) + "\n" for t, m in rows),
    }


def _check_all(program_text: str, lines: list[str], mode: str) -> None:
    stream = read_atom_lines(lines)
    expected = reference(parse_program(program_text), stream)
    assert list(answer_streams(parse(program_text), stream, mode=mode, models=0)) == expected


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(cases(odd=True), stratified_cases()))
def test_generated_clingo_all_models(case) -> None:
    program_text, lines = case
    with saved_on_failure(GOLDEN_ASP, lambda: _golden_files(program_text, lines)):
        _check_all(program_text, lines, "clingo")


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(cases(odd=False), cases(odd=True), stratified_cases()))
def test_generated_tms_all_models(case) -> None:
    """tms against the reference; odd loops included: it refuses only where there is no answer."""
    program_text, lines = case
    with saved_on_failure(GOLDEN_ASP, lambda: _golden_files(program_text, lines)):
        stream = read_atom_lines(lines)
        rows, error = _tms_until_refused(parse(program_text), stream)
        _check_tms_against(reference(parse_program(program_text), stream), rows, error)


@pytest.mark.generated
@settings(max_examples=examples(100), deadline=None)
@given(choose_one())
@pytest.mark.parametrize("mode", ["clingo", "tms"])
def test_generated_choose_one(mode: str, case) -> None:
    """ "Choose exactly one" through windows (up to three candidates, sometimes a constraint): both modes'
    models against the reference; tms refuses only at a time point without answer."""
    program_text, lines = case
    with saved_on_failure(GOLDEN_ASP, lambda: _golden_files(program_text, lines)):
        stream = read_atom_lines(lines)
        expected = reference(parse_program(program_text), stream)
        if mode == "clingo":
            assert list(answer_streams(parse(program_text), stream, mode=mode, models=0)) == expected
            return
        rows, error = _tms_until_refused(parse(program_text), stream)
        _check_tms_against(expected, rows, error)
        if not any(line.startswith(":-") for line in program_text.splitlines()):
            assert error is None, "choose-one alone always has answers"


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(cases(odd=False), choose_one()))
def test_generated_tms_one_model_with_inertia(case) -> None:
    """--models 1 in mode tms: one of the reference's models at every t, and the previous model again
    whenever it still is one (inertia)."""
    program_text, lines = case
    stream = read_atom_lines(lines)
    with saved_on_failure(GOLDEN_ASP, lambda: _golden_files(program_text, lines)):
        expected = dict(reference(parse_program(program_text), stream))
        previous = None
        rows, error = _tms_until_refused(parse(program_text), stream, models=1)
        if error is not None:  # a constraint of choose_one left no answer: tms stops there
            assert expected[rows[-1][0] + 1 if rows else stream.start] == []
        for t, models in rows:
            assert len(models) == 1 and models[0] in expected[t]
            if previous is not None and previous in expected[t]:
                assert models[0] == previous, f"t={t}: the previous model {previous} was dropped"
            previous = models[0]


def test_inertia_keeps_a_choice_while_it_is_an_answer() -> None:
    """A choice made at 0 stays while its reason is in the window, whichever way it went."""
    text = "here(X) :- [5] <> req(X), not fetch(X).\nfetch(X) :- [5] <> req(X), not here(X).\n"
    stream = read_atom_lines(["0 req(a)", "2 req(b)", "4 req(a)", "6"])
    got = list(answer_streams(parse(text), stream, mode="tms", models=1))
    first = got[0][1][0]
    assert first in (["here(a)"], ["fetch(a)"])
    for _t, models in got[1:]:
        assert first[0] in models[0]  # a's choice never flips while a stays in the window


def _rsp(*argv: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "rsp", *argv], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def test_cli_models_formats_and_refusal() -> None:
    case = GOLDEN_ASP / "constraint_odd"
    program, stream = str(case / "program.lars"), str(case / "stream.txt")
    code, out, _ = _rsp("lars", program, "--stream", stream, "--models", "all")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"time": t, "models": m} for t, m in _expected("constraint_odd")
    ]
    code, out, _ = _rsp("lars", program, "--stream", stream)  # not stratified: one model, today's format
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[3] == {"time": 3, "models": []}  # no answer stream at 3 is a result
    assert all(
        row["atoms"] in dict(_expected("constraint_odd"))[row["time"]] for row in rows if "atoms" in row
    )
    code, out, err = _rsp(
        "lars", program, "--stream", stream, "--mode", "tms"
    )  # answers until 3, then no model
    assert [json.loads(line)["time"] for line in out.splitlines()] == [0, 1, 2]
    assert code == 2 and "constraint_odd/program.lars:4:1: mode tms cannot handle odd loops" in err
    assert "no answer stream at time point 3" in err
    assert "Traceback" not in err


def test_cli_explain_names_rule_and_assumption() -> None:
    case = GOLDEN_ASP / "even_loop_window"
    code, out, _ = _rsp(
        "lars", str(case / "program.lars"), "--stream", str(case / "stream.txt"), "--mode", "tms", "--explain"
    )
    assert code == 0
    first = json.loads(out.splitlines()[0])
    (why,) = first["explanations"]
    assert why["origin"].endswith("program.lars:2:1") or why["origin"].endswith("program.lars:3:1")
    other = "fetch" if why["atom"].startswith("here") else "here"
    assert why["assumptions"] == [f"not {other}(a)"] and why["premises"] == ["[2] <> req(a)"]


@st.composite
def box_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Box windows of 1 to 10 time points (mode tms splits them into segments of powers of two) over a
    stream atom and over an atom derived at past time points, in an even loop; streams of 14 points with
    gaps, so windows are clamped at the start, hold, break and hold again."""
    n, m, k = draw(st.integers(0, 9)), draw(st.integers(0, 9)), draw(st.integers(0, 3))
    text = (
        f"@T h(X) :- [{k}] @T p(X).\n"
        f"b(X) :- [{n}] [] h(X), not c(X).\n"
        f"c(X) :- [{m}] [] p(X), not b(X).\n"
        f"d :- [{n + m}] [] q, not b(a).\n"
    )
    lines = []
    for time in range(14):
        atoms = draw(st.lists(st.sampled_from(("p(a)", "p(b)", "q")), max_size=3, unique=True))
        lines += [f"{time} {atom}" for atom in atoms] or [str(time)]
    return text, lines


def _check_tms_case(case) -> None:
    """Mode tms accepts the generated program and gives one of the reference's models at each tick."""
    program_text, lines = case
    with saved_on_failure(GOLDEN_ASP, lambda: _golden_files(program_text, lines)):
        stream = read_atom_lines(lines)
        rows, error = _tms_until_refused(parse(program_text), stream)
        assert error is None
        _check_tms_against(reference(parse_program(program_text), stream), rows, error)


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None)
@given(box_cases())
def test_generated_tms_box_windows(case) -> None:
    _check_tms_case(case)


def test_tms_box_window_body_is_logarithmic() -> None:
    """A box over 1000 time points is justified, at each tick, by at most 10 segment nodes (a power of
    two each), not by its 1001 points; and it holds exactly while the atom held at each of them."""
    from rsp.asp.tms import TmsReasoner

    reasoner = TmsReasoner(parse("b :- [1000] [] p.\n"), 0, 1)
    for t in range(1500):
        models = reasoner.step(t, [] if t == 1200 else [("p", ())])
        assert models == ([["b"]] if t < 1200 else [[]]), t
        boxes = [key for key in reasoner.net.tags if key[0][0] == "B"]
        if t < 1200:
            [(_head, body, _neg)] = boxes
            assert len(body) == bin(min(t, 1000) + 1).count("1") <= 10
            assert sum(node[1] for node in body) == min(t, 1000) + 1  # the segments cover the window
        else:
            assert boxes == []  # p missing at 1200: some segment of every window after it is missing


@settings(max_examples=examples(100), deadline=None)
@given(
    sizes=st.sets(st.integers(0, 6), min_size=1, max_size=3),
    batches=st.lists(
        st.lists(st.sampled_from([("p", ("a",)), ("p", ("b",)), ("q", ())]), max_size=4), max_size=12
    ),
)
def test_tuple_windows_match_their_definition(sizes, batches) -> None:
    """The incremental tuple windows (rsp.asp.tuples) against the definition recomputed at every tick:
    the last n elements, what entered and left (each once), and the first time point of the window."""
    from collections import Counter

    from rsp.asp.tuples import TupleWindows

    windows = TupleWindows(sizes, 0)
    everything: list[tuple] = []
    previous = {n: Counter() for n in sizes}
    for t, batch in enumerate(batches):
        everything += [(pred, args, t) for pred, args in batch]
        changes = windows.update(t, batch)
        for n in sizes:
            window = everything[max(0, len(everything) - n) :] if n else []
            now = Counter(window)
            first = t if n == 0 else (0 if len(everything) < n else window[0][2])
            assert windows.members[n] == now
            entered, left, start = changes[n]
            assert (set(entered), set(left), start) == (set(now) - set(previous[n]), set(previous[n]) - set(now), first)
            assert len(entered) == len(set(entered)) and len(left) == len(set(left))  # each element once
            previous[n] = now


@st.composite
def tuple_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Every tuple-window form (◇, plain, □, @s) over a stream predicate that background facts (one
    untimed, one at a time point) also give, in an even loop; windows of 0 to 6 elements, streams of 8
    points with up to three atoms each."""
    n = [draw(st.integers(0, 6)) for _ in range(4)]
    text = (
        "p(c).\n@3 p(d).\n"
        f"b(X) :- [#{n[0]}] <> p(X), not c(X).\n"
        f"c(X) :- [#{n[1]}] p(X), not b(X).\n"
        f"e(X) :- [#{n[2]}] [] p(X).\n"
        f"f(X,T) :- [#{n[3]}] @T p(X), not b(X).\n"
    )
    lines = []
    for time in range(8):
        atoms = draw(st.lists(st.sampled_from(("p(a)", "p(b)", "p(c)", "p(d)")), max_size=3))
        lines += [f"{time} {atom}" for atom in atoms] or [str(time)]
    return text, lines


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None)
@given(tuple_cases())
def test_generated_tms_tuple_windows(case) -> None:
    _check_tms_case(case)
