"""Rules whose body atom with constants has no fact are skipped (rsp/engine/evaluator.py ``_guards``):
OWL 2 RL's eq-rep-* rules run no variant while no owl:sameAs holds, and the answers stay those of
re-materialising every window (tests/oracles/query_oracle.py) when owl:sameAs triples come and go."""

from __future__ import annotations

import random

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_query_differential import STREAM, VEHICLES, check, element, q

from rsp.runtime import Engine

SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"


def _same(a: int, b: int) -> tuple[str, str, str]:
    return VEHICLES[a % len(VEHICLES)], SAME_AS, VEHICLES[b % len(VEHICLES)]


def _stream(seed: int, same_at: list[int]) -> list:
    rng = random.Random(seed)
    times = sorted(rng.randrange(0, 8000, 250) for _ in range(30))
    elements = [(t, element(rng.randrange(4), rng.randrange(4), rng.randrange(12))) for t in times]
    elements += [(t, _same(rng.randrange(4), rng.randrange(4))) for t in same_at]
    return sorted(elements, key=lambda e: e[0])


QUERIES = {
    "bgp": q("?v a ex:Vehicle . ?v ex:at ?p", "SELECT ?v ?p"),
    "speed": q("?v ex:speed ?s", "SELECT ?v ?s"),
    "same": q(f"?a {SAME_AS} ?b . ?a ex:speed ?s", "SELECT ?a ?b ?s"),
}


def _eq_rep_calls(text: str, elements) -> tuple[int, int]:
    """(calls of eq-rep-* variants, calls of every other rule's variants) over the stream."""
    engine = Engine(entailment="owlrl")
    query = engine.register(text)
    calls = {"eq-rep": 0, "other": 0}
    for sp in query.lars.strata:
        for plan in sp.plans:
            kind = "eq-rep" if str(plan.rule.origin).startswith("eq-rep") else "other"

            def counted(fn, kind=kind):
                def wrapper(delta, t, *new):
                    calls[kind] += 1
                    return fn(delta, t, *new)

                return wrapper

            plan.variants = [counted(fn) for fn in plan.variants]
    for time, triple in elements:
        engine.push([triple], time, STREAM)
    engine.close()
    return calls["eq-rep"], calls["other"]


def test_eq_rep_rules_cost_nothing_without_same_as() -> None:
    elements = _stream(3, [])
    eq_rep, other = _eq_rep_calls(QUERIES["bgp"], elements)
    assert other > 0
    assert eq_rep == 0


def test_eq_rep_rules_run_once_same_as_arrives() -> None:
    eq_rep, _ = _eq_rep_calls(QUERIES["bgp"], _stream(3, [4000]))
    assert eq_rep > 0


@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_same_as_coming_and_going_against_rematerialisation(name: str, seed: int) -> None:
    check(QUERIES[name], _stream(seed, [1000, 1250, 5000]), "owlrl")


@pytest.mark.generated
@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10_000), st.lists(st.integers(0, 32).map(lambda k: k * 250), max_size=4))
def test_generated_same_as_against_rematerialisation(seed: int, same_at: list[int]) -> None:
    check(QUERIES["bgp"], _stream(seed, same_at), "owlrl")
