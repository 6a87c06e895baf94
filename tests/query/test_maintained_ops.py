"""OPTIONAL, MINUS, (NOT) EXISTS, FILTERs and GROUP BY aggregates maintained from the engine's changes
(rsp/query/answers/maintained_ops.py) against recomputation: at every instant the maintained answer equals
rsp's evaluation of the whole window by the algebra (rsp/query/answers/algebra.py) and re-materialising the
window with rdflib (tests/oracles/query_oracle.py), under RSTREAM, ISTREAM and DSTREAM, over streams with
insertions and expirations whose values mix integers, decimals, doubles, floats, numbers written two
ways ("1" and "01": one value, two terms, two GROUP BY keys), strings and IRIs (errors in SUM/AVG).

The doubles and floats are exact binary fractions, so their sums do not depend on the order they are
added in: SPARQL leaves that order open, and the two paths meet the members in different orders.
"""

from __future__ import annotations

import random

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from query_golden import GOLDEN_QUERIES, case_files
from test_maintained_answers import POLICIES, _policy_reference, _rsp, _with_policy
from test_query_differential import ABOUT, EX, STREAM, _bag, oracle_answers, q

from rsp.query.answers.maintained_ops import MaintainedOps

XSD = "http://www.w3.org/2001/XMLSchema#"
VALUES = [
    f'"3"^^<{XSD}integer>',
    f'"03"^^<{XSD}integer>',
    f'"-2"^^<{XSD}integer>',
    f'"1.5"^^<{XSD}decimal>',
    f'"0.25"^^<{XSD}decimal>',
    f'"2.5E0"^^<{XSD}double>',
    f'"-0.5"^^<{XSD}double>',
    f'"0.75"^^<{XSD}float>',
    '"abc"',
    f"<{EX}s1>",
    f'"7"^^<{XSD}integer>',
    f'"1"^^<{XSD}integer>',
]
PLAIN = [VALUES[i] for i in (0, 2, 3, 4, 10, 11)]  # integers and decimals: rdflib's answers are SPARQL's
SUBJECTS = [f"<{EX}v{i}>" for i in range(4)]
KINDS = [f"<{EX}A>", f"<{EX}B>"]


def element(kind: int, subject: int, value: int, pool: list[str] = VALUES) -> tuple[str, str, str]:
    s = SUBJECTS[subject]
    if kind == 0:
        return s, f"<{EX}val>", pool[value % len(pool)]
    if kind == 1:
        return s, f"<{EX}kind>", KINDS[value % 2]
    if kind == 2:
        return s, f"<{EX}near>", SUBJECTS[value % 4]
    return s, f"<{EX}tag>", f'"{"xyz"[value % 3]}"'


ROWS = st.lists(
    st.tuples(
        st.integers(0, 24), st.sampled_from([0, 0, 0, 1, 1, 2, 3]), st.integers(0, 3), st.integers(0, 11)
    ),
    min_size=15,
    max_size=45,
)


GROUPED = "?v ex:val ?x . ?v ex:kind ?k"
QUERIES = {
    "count-sum-avg": q(GROUPED, "SELECT ?k (COUNT(?x) AS ?n) (SUM(?x) AS ?s) (AVG(?x) AS ?a)")
    + " GROUP BY ?k",
    "min-max": q(GROUPED, "SELECT ?k (MIN(?x) AS ?lo) (MAX(?x) AS ?hi)") + " GROUP BY ?k",
    "distinct-aggregates": q(
        "?v ex:val ?x",
        "SELECT (COUNT(DISTINCT ?x) AS ?n) (SUM(DISTINCT ?x) AS ?s) (AVG(DISTINCT ?x) AS ?a) "
        "(MIN(DISTINCT ?x) AS ?lo) (COUNT(DISTINCT *) AS ?rows)",
    ),
    "terms-as-keys": q("?v ex:val ?x", "SELECT ?x (COUNT(*) AS ?n) (COUNT(DISTINCT ?v) AS ?m)")
    + " GROUP BY ?x",
    "expression-key": q("?v ex:val ?x", "SELECT ?d (SUM(?x) AS ?s) (MIN(-?x) AS ?m)")
    + " GROUP BY (DATATYPE(?x) AS ?d)",
    "argument-errors": q(
        "?v ex:val ?x", "SELECT ?v (SUM(?x + 1) AS ?s) (AVG(?x - 1) AS ?a) (MIN(?x + 0) AS ?lo)"
    )
    + " GROUP BY ?v",
    "two-keys": q(GROUPED, "SELECT ?v ?k (COUNT(*) AS ?n) (SUM(?x) AS ?s)") + " GROUP BY ?k ?v",
    "unbound-key": q("?v ex:kind ?k OPTIONAL { ?v ex:val ?x }", "SELECT ?x (COUNT(*) AS ?n)") + " GROUP BY ?x",
    "having": q(GROUPED, "SELECT ?k (COUNT(*) AS ?n) (SUM(?x) + 1 AS ?s1)")
    + " GROUP BY ?k HAVING (COUNT(*) > 1 && SUM(?x) < 10)",
    "no-group": q("?v ex:near ?w", "SELECT (COUNT(*) AS ?n) (COUNT(DISTINCT ?w) AS ?m) (AVG(?z) AS ?a)"),
    "distinct-projection": q("?v ex:kind ?k OPTIONAL { ?v ex:val ?x }", "SELECT DISTINCT ?k ?x"),
    "bag-projection": q("?v ex:near ?w OPTIONAL { ?w ex:kind ?k }", "SELECT ?v ?k"),
    "optional": q("?v ex:kind ?k OPTIONAL { ?v ex:val ?x }"),
    "optional-filter": q("?v ex:kind ?k OPTIONAL { ?v ex:val ?x FILTER(?x > 1) }", "SELECT ?v ?x"),
    "two-optionals": q("?v ex:near ?w OPTIONAL { ?v ex:tag ?t } OPTIONAL { ?w ex:val ?x FILTER(?x != ?v) }"),
    "optional-aggregate": q(
        "?v ex:kind ?k OPTIONAL { ?v ex:val ?x }", "SELECT ?k (COUNT(?x) AS ?n) (SUM(?x) AS ?s)"
    )
    + " GROUP BY ?k",
    "minus": q("?v ex:near ?w MINUS { ?w ex:kind ex:A }", "SELECT ?v ?w"),
    "minus-nothing-shared": q("?v ex:kind ?k MINUS { ?a ex:tag ?b }"),
    "not-exists": q("?v ex:near ?w FILTER NOT EXISTS { ?w ex:val ?x FILTER(?x > 0) }", "SELECT ?v"),
    "exists": q("?v ex:tag ?t FILTER EXISTS { ?v ex:near ?w }", "SELECT ?t"),
    "exists-unshared": q("?v ex:tag ?t FILTER EXISTS { ?a ex:kind ex:B }"),
    "filter-after-optional": q("?v ex:kind ?k OPTIONAL { ?v ex:val ?x } FILTER(!BOUND(?x) || ?x < 3)"),
    "all-blocks-grouped": q(
        '?v ex:near ?w OPTIONAL { ?w ex:val ?x } MINUS { ?v ex:kind ex:B } FILTER NOT EXISTS { ?v ex:tag "x" }',
        "SELECT ?w (COUNT(*) AS ?n) (MIN(?x) AS ?lo) (MAX(?x) AS ?hi)",
    )
    + " GROUP BY ?w HAVING (COUNT(?x) >= 1)",
}


def maintained_vs_recomputed(text: str, elements, policy: str) -> list:
    """rsp's answers by both paths; asserts the query is maintained and both agree at every instant."""
    text = _with_policy(text, policy)
    query, ours = _rsp(text, elements, "none")
    assert isinstance(query.maintained, MaintainedOps), "the query should be maintained"
    _, recomputed = _rsp(text, elements, "none", maintained=False)
    assert [t for t, _ in ours] == [t for t, _ in recomputed]
    for (time, got), (_, expected) in zip(ours, recomputed, strict=True):
        assert _raw(got) == _raw(expected), f"at {time}"  # in the same order (rsp/query/answers/order.py)
    return ours


def _raw(bindings) -> list:
    """Solutions exactly, terms as written (no canonical numbers: "1" and "01" stay apart)."""
    return [tuple(sorted(b.items())) for b in bindings]


def check(name: str, elements, policy: str, reference: bool, window: str | None = None) -> None:
    """Maintained against recomputed; against the rdflib reference too when ``reference`` (streams of
    integers and decimals only: on IRIs, strings, floats and doubles rdflib's answers are not SPARQL's,
    e.g. MIN over IRIs gives a string, AVG over floats a double)."""
    text = QUERIES[name] if window is None else _windowed(name, window)
    ours = maintained_vs_recomputed(text, elements, policy)
    if not reference:
        return
    expected = _policy_reference(oracle_answers(text, elements, "none", ontology=False), policy)
    assert [t for t, _ in ours] == [t for t, _ in expected]
    for (time, got), (_, answer) in zip(ours, expected, strict=True):
        assert _bag(got) == _bag(answer), f"at {time} (reference)"


def stream(rows, pool: list[str]) -> list:
    return [(t * 250, element(k, v, x, pool)) for t, k, v, x in sorted(rows)]


def fixed(seed: int, pool: list[str] = VALUES, length: int = 45) -> list:
    rng = random.Random(seed)
    return stream(
        [(rng.randrange(32), rng.randrange(4), rng.randrange(4), rng.randrange(12)) for _ in range(length)],
        pool,
    )


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_fixed_streams(name: str, policy: str) -> None:
    for seed in (1, 2):
        check(name, fixed(seed), policy, reference=False)
        check(name, fixed(seed, PLAIN), policy, reference=True)


AGGREGATED = sorted(name for name, text in QUERIES.items() if "GROUP BY" in text or "COUNT" in text)
BLOCKS = sorted(set(QUERIES) - set(AGGREGATED))


WINDOW = "[RANGE 2s STEP 1s]"
WINDOWS = [WINDOW, "[RANGE 1s STEP 1s]", "[RANGE 500ms STEP 1s]"]
"""Sliding, tumbling (every row of the window goes at each step) and hopping with gaps."""


def _windowed(name: str, window: str) -> str:
    assert WINDOW in QUERIES[name]
    return QUERIES[name].replace(WINDOW, window)


def _generated(rows, name: str, policy: str, mixed: bool, window: str = WINDOW) -> None:
    elements = stream(rows, VALUES if mixed else PLAIN)
    text = _with_policy(_windowed(name, window), policy)
    files = [(STREAM, elements)]
    with saved_on_failure(GOLDEN_QUERIES, lambda: case_files(text, files, "none", None, ABOUT)):
        check(name, elements, policy, reference=not mixed, window=window)


@pytest.mark.generated
@settings(max_examples=examples(80), deadline=None)
@given(ROWS, st.sampled_from(AGGREGATED), st.sampled_from(POLICIES), st.booleans(), st.sampled_from(WINDOWS))
def test_generated_aggregates(rows, name: str, policy: str, mixed: bool, window: str) -> None:
    _generated(rows, name, policy, mixed, window)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", AGGREGATED)
def test_a_window_that_empties_starts_its_groups_afresh(name: str, policy: str, monkeypatch) -> None:
    """Under a tumbling window every row goes at each step: a group that is its main pattern alone then
    starts its groups afresh (MaintainedOps._plain_changes) instead of taking each row out; the answers
    stay those of recomputation and rdflib's at every instant."""
    fresh = []
    plain_changes = MaintainedOps._plain_changes

    def spy(self):
        changes, emptied = plain_changes(self)
        fresh.append(emptied)
        return changes, emptied

    monkeypatch.setattr(MaintainedOps, "_plain_changes", spy)
    for seed in (1, 2, 3):
        check(name, fixed(seed), policy, reference=False, window="[RANGE 1s STEP 1s]")
        check(name, fixed(seed, PLAIN), policy, reference=True, window="[RANGE 1s STEP 1s]")
    if not any(word in QUERIES[name] for word in ("OPTIONAL", "MINUS", "EXISTS", "FILTER")):
        assert any(fresh), "the emptied window should have started the groups afresh"
    else:
        assert not fresh  # blocks and filters: a row's outputs are followed one by one


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None)
@given(ROWS, st.sampled_from(BLOCKS), st.sampled_from(POLICIES), st.booleans())
def test_generated_blocks(rows, name: str, policy: str, mixed: bool) -> None:
    _generated(rows, name, policy, mixed)


RECOMPUTED = {
    "order-limit": q(GROUPED, "SELECT ?k (COUNT(*) AS ?n)") + " GROUP BY ?k ORDER BY ?n LIMIT 1",
    "sample": q(GROUPED, "SELECT ?k (SAMPLE(?x) AS ?one)") + " GROUP BY ?k",
    "group-concat": q(GROUPED, "SELECT ?k (GROUP_CONCAT(?x) AS ?all)") + " GROUP BY ?k",
    "optional-shares-optional": q("?v ex:near ?w OPTIONAL { ?w ex:val ?x } OPTIONAL { ?v ex:val ?x }"),
    "exists-outer-filter": q("?v ex:val ?x FILTER EXISTS { ?v ex:near ?w FILTER(?x > 1) }"),
    "union": q("{ ?v ex:val ?x } UNION { ?v ex:tag ?x }", "SELECT ?x (COUNT(*) AS ?n)") + " GROUP BY ?x",
    "now": q("?v ex:val ?x", "SELECT ?v (COUNT(*) AS ?n) (NOW() AS ?t)") + " GROUP BY ?v",
}


@pytest.mark.parametrize("name", sorted(RECOMPUTED))
def test_other_shapes_are_recomputed(name: str) -> None:
    query, _ = _rsp(RECOMPUTED[name], fixed(1, length=5), "none")
    assert query.maintained is None
