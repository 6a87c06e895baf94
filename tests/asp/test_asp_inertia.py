"""Inertia in mode tms (docs/answer-streams.md): the answer chosen at t keeps every label of the previous
answer that some answer keeps, past time points included, whenever one answer keeps them all at once.

Checked at two levels, each against a reference written from the definition: the truth maintenance
network's relabelling (:mod:`rsp.asp.network`) on random networks changed step by step, against every
stable labelling enumerated; and whole programs (tests/oracles/asp_reference.py's ``inertia_violation``, which
enumerates every answer at every time point) on generated programs, on the golden cases and on the
cases that showed the flaw."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
from asp_reference import TooBig, answers, inertia_violation
from asp_strategies import cases, choose_one, past_choices
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import GOLDEN_ASP

from rsp.asp import answer_streams, parse
from rsp.asp.network import Network, NoModel
from rsp.errors import ProgramError
from rsp.io.atoms import read_atom_lines, read_atom_stream
from rsp.lars.parser import parse_program

NAMES = sorted(p.name for p in GOLDEN_ASP.iterdir() if (p / "program.lars").exists())

# -- the network ------------------------------------------------------------------------------------------

INERTIAL = tuple(f"n{i}" for i in range(5))
"""Nodes whose labels inertia keeps (as an answer's atoms now and at past time points)."""
DERIVED = ("w0", "w1")
"""Nodes defined from the inertial ones alone, positively (as window nodes are from the atoms): their
labels follow from those, and their previous labels may be stale."""


def _stable(keys: list[tuple], nodes: list[str], label: dict[str, bool]) -> bool:
    """Whether ``label`` is a stable model of the justifications ``keys``: the least model of the
    reduct (negations read in ``label``) is exactly the nodes labelled in."""
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for head, pos, neg in keys:
            if head not in derived and all(p in derived for p in pos) and not any(label[n] for n in neg):
                derived.add(head)
                changed = True
    return all(label[n] == (n in derived) for n in nodes)


def _stable_models(keys: list[tuple]) -> tuple[list[str], list[dict[str, bool]]]:
    nodes = sorted({n for head, pos, neg in keys for n in (head, *pos, *neg)})
    found = []
    for values in itertools.product((False, True), repeat=len(nodes)):
        label = dict(zip(nodes, values, strict=True))
        if _stable(keys, nodes, label):
            found.append(label)
    return nodes, found


_body = st.lists(st.sampled_from(INERTIAL + DERIVED), max_size=2, unique=True).map(tuple)
_justification = st.one_of(
    st.tuples(st.sampled_from(INERTIAL), _body, _body),
    st.tuples(
        st.sampled_from(DERIVED),
        st.lists(st.sampled_from(INERTIAL), max_size=2, unique=True).map(tuple),
        st.just(()),
    ),
)


@st.composite
def _choices(draw: st.DrawFn) -> tuple[list[tuple], list[tuple]]:
    """A network shaped like mode tms's: even loops (choices) between inertial nodes, facts that force
    one side, derived nodes over inertial ones (as windows over atoms), sometimes made first, and rules
    reading them. Steps add and remove facts and loop rules (as ticks add stream atoms and drop links
    and expired instances), so a choice made under a fact is open again while a derived node still
    holds a label whose support has gone."""
    loops = [("n0", (), ("n1",)), ("n1", (), ("n0",)), ("n2", (), ("n3",)), ("n3", (), ("n2",))]
    derived = [
        (w, (draw(st.sampled_from(INERTIAL[:4])),), ())
        for w in DERIVED
        for _ in range(draw(st.integers(1, 2)))
    ]
    readers = [("n4", ("w0",), ("n0",)), ("n4", ("w1",), ()), ("n4", (), ("w0",))]
    read = draw(st.lists(st.sampled_from(readers), max_size=2))
    first = derived + loops + read if draw(st.booleans()) else loops + derived + read
    facts = [(n, (), ()) for n in INERTIAL[:4]]
    present = set(first + draw(st.lists(st.sampled_from(facts), max_size=2)))
    start = sorted(present, key=(first + facts).index)
    steps = []
    for _ in range(draw(st.integers(1, 5))):  # each step flips some facts and loop rules: in or out
        flips = [key for key in facts + loops if draw(st.integers(0, 2)) == 0]
        steps.append(([k for k in flips if k not in present], [k for k in flips if k in present]))
        present ^= set(flips)
    return start, steps


def _rank(node: str) -> int:
    return 0 if node in INERTIAL else 1


@pytest.mark.generated
@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.tuples(
            st.lists(_justification, min_size=1, max_size=7),
            st.lists(
                st.tuples(st.lists(_justification, max_size=3), st.lists(st.integers(0, 20), max_size=3)),
                min_size=1,
                max_size=5,
            ),
        ),
        _choices(),
    )
)
def test_network_keeps_every_keepable_label(case: tuple[list[tuple], list[tuple]]) -> None:
    """Random justifications, then steps that add some and remove some: after each update the labels are
    a stable model, and when some stable model keeps every label of the inertial nodes of the previous
    step that any stable model keeps, the labels are such a model, however stale the derived nodes'
    previous labels are."""
    first, changes = case
    net = Network()
    present: list[tuple] = []
    for added, removed in [(first, [])] + changes:
        for gone in removed:  # an index into the justifications present, or one of them
            if isinstance(gone, int):
                gone = present[gone % len(present)] if present else None
            if gone in present:
                present.remove(gone)
                net.remove(gone)
        for key in added:
            if key not in present:
                net.add(key)
                present.append(key)
        previous = dict(net.label)
        nodes, models = _stable_models(present)
        try:
            net.update(_rank)
        except NoModel:
            assert models == [], f"NoModel, yet {models} are stable"
            return  # a network without a model stays without labels to keep
        label = {n: net.label.get(n, False) for n in nodes}
        assert label in models, f"{label} is not a stable model of {present}"
        inertial = [n for n in nodes if n in INERTIAL]
        keepable = {n for n in inertial if any(m[n] == previous.get(n, False) for m in models)}
        keepers = [m for m in models if all(m[n] == previous.get(n, False) for n in keepable)]
        if keepers:
            assert label in keepers, f"previous {previous}: kept by {keepers}, got {label}"


# -- programs ----------------------------------------------------------------------------------------------


def _tms_models(program_text: str, lines: list[str]) -> list[tuple[int, list[str]]]:
    """Mode tms's single model at every time point, up to a refusal (an odd loop without answer)."""
    rows = []
    try:
        for t, models in answer_streams(parse(program_text), read_atom_lines(lines), mode="tms", models=1):
            rows.append((t, models[0]))
    except ProgramError:
        pass
    return rows


def _golden_files(program_text: str, lines: list[str]) -> dict[str, str]:
    from asp_reference import answer_streams as reference

    rows = reference(parse_program(program_text), read_atom_lines(lines))
    return {
        "program.lars": program_text,
        "stream.txt": "".join(f"{line}\n" for line in lines),
        "expected.jsonl": "".join(json.dumps({"time": t, "models": m}) + "\n" for t, m in rows),
    }


def _check_every_order(program_text: str, lines: list[str]) -> None:
    """Mode tms's single models keep the previous answer by inertia, past time points included, with the
    rules in every order (up to 24: the order the network meets its nodes in changes which labels a
    search would try first, never the answer inertia must choose)."""
    program, stream = parse_program(program_text), read_atom_lines(lines)
    try:
        found = answers(program, stream)
    except TooBig:
        return  # too many ground negated atoms for the reference
    for order in itertools.islice(itertools.permutations(program_text.splitlines()), 24):
        text = "\n".join(order) + "\n"
        with saved_on_failure(GOLDEN_ASP, lambda text=text: _golden_files(text, lines)):
            violation = inertia_violation(program, stream, _tms_models(text, lines), found)
            assert violation is None, f"{text}{violation}"


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(past_choices())
def test_generated_tms_inertia_past_choices(case) -> None:
    """Choices at past time points that a force opens again while a window over them holds an old label:
    the shape of issue 41's case, where inertia used to fail."""
    _check_every_order(*case)


@pytest.mark.generated
@settings(max_examples=examples(100), deadline=None)
@given(st.one_of(cases(odd=False), choose_one(), cases(odd=True)))
def test_generated_tms_inertia(case) -> None:
    """The other generated answer-stream programs under the same check."""
    _check_every_order(*case)


@pytest.mark.parametrize("name", NAMES)
def test_golden_inertia(name: str) -> None:
    """Every golden case (and every case ``make fuzz`` saved) under the inertia check."""
    case = GOLDEN_ASP / name
    text = (case / "program.lars").read_text(encoding="utf-8")
    lines = (case / "stream.txt").read_text(encoding="utf-8").splitlines()
    rows = _tms_models(text, lines)
    assert rows, "mode tms gave no model at all"
    assert inertia_violation(parse_program(text), read_atom_lines(lines), rows) is None


def test_past_labels_are_kept_on_the_command_line() -> None:
    """Issue 41's case: at 5 the answer {h1(x2)@4, h1(x2)@5} keeps every label of the answer at 4
    ({h1(x2)@4}); the one that flips h1(x2)@4 to h2(x2)@4 (and prints h0(x2)) must not be chosen."""
    case = GOLDEN_ASP / "inertia_past_choice"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rsp",
            "lars",
            str(case / "program.lars"),
            "--stream",
            str(case / "stream.txt"),
            "--mode",
            "tms",
            "--format",
            "jsonl",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows[-1] == {"time": 5, "atoms": ["h1(x2)"]}
    program = parse_program((case / "program.lars").read_text(encoding="utf-8"))
    stream = read_atom_stream(case / "stream.txt")
    assert inertia_violation(program, stream, [(r["time"], r["atoms"]) for r in rows]) is None
    # the check has teeth: the model that flips the past label is refused
    flipped = [(r["time"], r["atoms"]) for r in rows[:-1]] + [(5, ["h0(x2)", "h1(x2)"])]
    assert "inertia keeps the previous answer" in inertia_violation(program, stream, flipped)
