"""The engine's fast paths against the naive evaluator (tests/oracles/mtl_naive.py): compiled join plans over
binary predicates with constants, repeated variables and projections (rsp.mtl.plans), integer time
units rescaled when a stream fact brings a new denominator (thirds after halves, a program in
quarters), and the cache of normalised programs (rsp.mtl.cache)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from mtl_naive import least_model
from paths import GOLDEN_MTL

from rsp.mtl import format_fact, load, parse, run
from rsp.mtl.engine import Engine
from rsp.mtl.facts import parse_fact
from rsp.mtl.syntax import parse_program

GOLDEN_ROOT = GOLDEN_MTL
HORIZON = 3


def _reference(program: str, facts: list[str], horizon) -> list[str]:
    model = least_model(parse_program(program), [parse_fact(f) for f in facts], horizon)
    return sorted(format_fact(*fact) for fact in model)


def _engine(program: str, facts: list[str], horizon, points=None) -> list[str]:
    return sorted(f for _, batch in run(program, facts, horizon=horizon, points=points) for f in batch)


def _files(program: str, facts: list[str], horizon) -> dict[str, str]:
    return {
        "program.txt": program + "\n",
        "stream.txt": "\n".join(facts) + "\n",
        "horizon.txt": f"{horizon}\n",
        "expected.txt": "\n".join(_reference(program, facts, horizon)) + "\n",
    }


FIXED = [
    # a projection (Y dropped), a constant in a body atom, a repeated variable
    (
        "S(X):-Diamondminus[0,1]E(X,Y)\nL(X):-E(X,X)\nC(Y):-E(a,Y), U(Y)",
        ["E(a,b)@[0,1]", "E(c,c)@1/3", "U(b)@[1/2,2]", "E(b,a)@(2/3,3/2)"],
        3,
    ),
    # a join through a binary atom looked up by its second argument, a constant in the head
    ("R(X,k):-U(Y), E(X,Y), Boxminus[0,1/2]U(X)", ["U(a)@[0,2]", "E(a,a)@[1/3,1]", "E(c,a)@[1/2,3]"], 3),
    # a predicate used with two arities: the index on E's second argument skips E(a)
    ("R(Y):-U(Y), E(X,Y)", ["E(a)@1", "U(a)@1", "E(b,a)@[1,2]", "U(b)@2", "E(a)@2"], 3),
    # rescaling mid-stream: halves, then thirds, then a quarter, under a Since and a Boxplus head
    (
        "A(X):-B(X)Since[0,1/2]C(X)\nBoxplus[0,1/4]D(X):-A(X), B(X)",
        ["C(a)@0", "B(a)@[0,1/2]", "C(b)@(1/2,2/3]", "B(b)@[2/3,3/4]", "B(a)@[3/4,2]"],
        3,
    ),
]


@pytest.mark.parametrize(("program", "facts", "horizon"), FIXED)
def test_fixed_cases_against_naive(program: str, facts: list[str], horizon) -> None:
    assert _engine(program, facts, horizon) == _reference(program, facts, horizon)


def test_points_after_rescaling() -> None:
    """Points given in thirds are reported in plain units while the stream moves the unit to sixths."""
    results = list(
        run("A(X):-Diamondminus[0,1/2]B(X)", ["B(a)@0", "B(a)@[1/2,1/2]"], points=[Fraction(1, 3), 1])
    )
    assert results == [(Fraction(1, 3), ["A(a)"]), (1, ["A(a)"])]


def test_state_is_rescaled_once_per_new_denominator() -> None:
    engine = Engine(parse("A(X):-Diamondminus[0,1/2]B(X)"))
    assert engine.scale == 2
    for fact in ("B(a)@0", "B(a)@1/3", "B(a)@1/2", "B(a)@[3/4,1]"):
        engine.push(*parse_fact(fact))
    assert engine.scale == 12
    assert engine.store["B"][("a",)][-1] == (9, 12, True, True)  # [3/4,1] in twelfths


def test_bounds_are_integers_in_the_unit() -> None:
    """A fractional bound in the engine's unit is an ``int`` (``Fraction(1, 2) * 2`` is ``Fraction(1, 1)``,
    and every interval shifted by it, then the store, would hold ``Fraction``s), also after a rescale."""
    engine = Engine(parse("F(X):-A(X)Since(1/2,3)B(X)\nBoxplus[1/4,inf)G(X):-B(X), F(X)"))
    assert [rule.rho for rule in engine.rules] == [(2, 12, False, False), (1, float("inf"), True, False)]
    engine.push(*parse_fact("B(a)@1/3"))
    assert [rule.rho for rule in engine.rules] == [(6, 36, False, False), (3, float("inf"), True, False)]
    for rule in engine.rules:
        assert type(rule.rho[0]) is int and type(rule.rho[1]) in (int, float)
    for fact in ("A(a)@[1/3,2]", "B(b)@1"):  # F(a) on (5/6,2], known up to 1 when B(b) arrives
        engine.push(*parse_fact(fact))
    assert engine.store["F"] == {("a",): [(10, 12, False, True)]}  # (5/6,1] in twelfths
    ends = [t for table in engine.store.values() for ivs in table.values() for iv in ivs for t in iv[:2]]
    assert all(type(t) is int for t in ends), ends


def test_single_operator_rules_define_no_fresh_predicate() -> None:
    """``H :- op P`` is evaluated as it stands: no unused fresh predicate is defined for ``op P``."""
    program = parse("A(X):-Diamondminus[1,1]E(X,Y)\nB(X):-Boxminus[0,1]A(X), C(X)")
    assert [str(r) for r in program.rules] == [
        "A(X):-Diamondminus[1,1]E(X,Y)",
        "_mtl1(X0):-Boxminus[0,1]A(X0)",
        "B(X):-_mtl1(X), C(X)",
    ]
    assert program.fresh == frozenset({"_mtl1"})


def test_program_cache_round_trip(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RSP_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "p.txt"
    path.write_text("A(X):-Boxminus[0,1]B(X)\n")
    first = load(path)
    assert list((tmp_path / "cache" / "mtl").iterdir())
    assert load(path) == first
    path.write_text("A(X):-Boxminus[0,2]B(X)\n")  # changed text: a miss, parsed again
    assert str(load(path).rules[0]) == "A(X):-Boxminus[0,2]B(X)"


# ------------------------------------------------------------------ generated cases
_TIMES = sorted({Fraction(k, 2) for k in range(6)} | {Fraction(k, 3) for k in range(9)})
_BOUNDS = [0, Fraction(1, 3), Fraction(1, 2), 1]
_PREDS = {"E": 2, "F": 2, "U": 1}
_TERMS = ["X", "Y", "Z", "a"]


def _num(x) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@st.composite
def _rho(draw) -> str:
    a = draw(st.sampled_from(_BOUNDS))
    b = draw(st.sampled_from([x for x in _BOUNDS if x >= a] + ["inf"]))
    if b == "inf":
        return f"[{_num(a)},inf)"
    if a == b:
        return f"[{_num(a)},{_num(a)}]"
    return f"{draw(st.sampled_from('[('))}{_num(a)},{_num(b)}{draw(st.sampled_from('])'))}"


@st.composite
def _atom(draw, terms=_TERMS) -> str:
    pred = draw(st.sampled_from(sorted(_PREDS)))
    args = [draw(st.sampled_from(terms)) for _ in range(_PREDS[pred])]
    return f"{pred}({','.join(args)})"


def _vars(text: str) -> list[str]:
    return [v for v in "XYZ" if v in text]  # (no operator or predicate name has these capitals)


@st.composite
def _literal(draw) -> str:
    kind = draw(st.sampled_from(["atom", "atom", "atom", "dia", "box", "since"]))
    atom = draw(_atom())
    if kind == "atom":
        return atom
    if kind == "dia":
        return f"Diamondminus{draw(_rho())}{atom}"
    if kind == "box":
        return f"Boxminus{draw(_rho())}{atom}"
    left = draw(_atom(terms=[*_vars(atom), "a"]))  # the left side of Since uses the right side's variables
    return f"{left}Since{draw(_rho())}{atom}"


@st.composite
def join_programs(draw) -> str:
    rules = []
    for _ in range(draw(st.integers(1, 3))):
        body = draw(st.lists(_literal(), min_size=1, max_size=3))
        if draw(st.integers(0, 3)) == 0:  # recursion through a derived binary predicate
            body[0] = (
                f"Diamondminus{draw(_rho())}R({draw(st.sampled_from(_TERMS))},{draw(st.sampled_from(_TERMS))})"
            )
        found = sorted({v for literal in body for v in _vars(literal)})
        terms = [*found, "k"]
        head = f"R({draw(st.sampled_from(terms))},{draw(st.sampled_from(terms))})"
        if draw(st.integers(0, 4)) == 0:
            head = f"Boxplus[0,{_num(draw(st.sampled_from(_BOUNDS[1:])))}]{head}"
        rules.append(f"{head}:-{', '.join(body)}")
    return "\n".join(rules)


@st.composite
def join_streams(draw) -> list[str]:
    facts = []
    for _ in range(draw(st.integers(1, 7))):
        lo = draw(st.sampled_from(_TIMES))
        length = draw(st.sampled_from([0, 0, Fraction(1, 3), Fraction(1, 2), 1, "inf"]))
        pred = draw(st.sampled_from(sorted(_PREDS)))
        arity = draw(st.sampled_from([_PREDS[pred]] * 5 + [1, 2]))  # now and then another arity
        args = ",".join(draw(st.sampled_from(["a", "b", "c"])) for _ in range(arity))
        if length == 0:
            span = _num(lo)
        elif length == "inf":
            span = f"{draw(st.sampled_from('[('))}{_num(lo)},inf)"
        else:
            span = f"{draw(st.sampled_from('[('))}{_num(lo)},{_num(lo + length)}{draw(st.sampled_from('])'))}"
        facts.append((lo, f"{pred}({args})@{span}"))
    facts.sort(key=lambda f: f[0])
    return [f for _, f in facts]


@pytest.mark.generated
@settings(max_examples=examples(80), deadline=None)
@given(join_programs(), join_streams())
def test_generated_joins_against_naive(program: str, facts: list[str]) -> None:
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(program, facts, HORIZON)):
        assert _engine(program, facts, HORIZON) == _reference(program, facts, HORIZON)
