"""The order of an instant's answers is fixed (rsp/query/answers/order.py, docs/reference.md "The order of
answers"): the same stream gives the same output, byte for byte, whatever Python's hash seed, however
the elements were batched or arrived within an instant, and whichever way the answer was computed
(maintained, maintained with blocks and aggregates, recomputed) or merged from partitions."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ORACLES, ROOT, SUPPORT
from query_golden import handle_in_answer_order, in_answer_order

from rsp.runtime import Engine

STREAM = "<http://ex.org/pos>"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
DOUBLE = "<http://www.w3.org/2001/XMLSchema#double>"
WINDOW = f"FROM STREAM {STREAM} [RANGE 3s STEP 1s]"
HEAD = "PREFIX ex: <http://ex.org/>\n"


def _q(policy: str, head: str, where: str, tail: str = "", window: str = WINDOW) -> str:
    return f"REGISTER {policy} Q AS\n{HEAD}{head}\n{window}\nWHERE {{ {where} }}{tail}"


# each path that computes an answer (the class of ``handle.maintained``, None: recomputed), each policy
QUERIES = {
    "projection-bag": ("MaintainedSelect", _q("RSTREAM", "SELECT ?v ?place", "?v ex:at ?place")),
    "projection-istream": ("MaintainedSelect", _q("ISTREAM", "SELECT ?v ?place", "?v ex:at ?place")),
    "distinct-dstream": ("MaintainedSelect", _q("DSTREAM", "SELECT DISTINCT ?v ?place", "?v ex:at ?place")),
    "every-variable": ("MaintainedSelect", _q("RSTREAM", "SELECT *", "?v ex:speed ?s . ?v ex:at ?place")),
    "every-variable-dstream": ("MaintainedSelect", _q("DSTREAM", "SELECT ?place ?v", "?v ex:at ?place")),
    "construct": ("MaintainedConstruct", _q("RSTREAM", "CONSTRUCT { ?v ex:was ?place }", "?v ex:at ?place")),
    "construct-istream": (
        "MaintainedConstruct",
        _q("ISTREAM", "CONSTRUCT { ?v ex:was ?place . ?place ex:had ?s }", "?v ex:speed ?s . ?v ex:at ?place"),
    ),
    "group-by": (
        "MaintainedOps",
        _q(
            "RSTREAM",
            "SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?lo) (COUNT(DISTINCT ?place) AS ?places)",
            "?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 30)",
            " GROUP BY ?v",
        ),
    ),
    "group-by-tumbling-doubles": (
        "MaintainedOps",
        _q(
            "RSTREAM",
            "SELECT ?place (SUM(?d) AS ?sum) (AVG(?d) AS ?avg)",
            "?v ex:load ?d . ?v ex:at ?place",
            " GROUP BY ?place",
            window=f"FROM STREAM {STREAM} [RANGE 2s TUMBLING]",
        ),
    ),
    "optional-select-star": ("MaintainedOps", _q("RSTREAM", "SELECT *", "?v ex:speed ?s OPTIONAL { ?b ex:near ?v }")),
    "optional-istream": ("MaintainedOps", _q("ISTREAM", "SELECT ?b ?v", "?v ex:speed ?s OPTIONAL { ?b ex:near ?v }")),
    "union": (None, _q("RSTREAM", "SELECT ?x", "{ ?x ex:speed ?s } UNION { ?x ex:at ?p } UNION { ?b ex:near ?x }")),
    "group-concat": (
        None,
        _q("RSTREAM", "SELECT ?place (GROUP_CONCAT(?s) AS ?all) (SAMPLE(?v) AS ?one)", "?v ex:speed ?s . ?v ex:at ?place",
           " GROUP BY ?place"),
    ),  # fmt: skip
    "path-dstream": (None, _q("DSTREAM", "SELECT ?b ?x", "?b (ex:near/ex:at)|ex:at ?x")),
    "construct-blank-nodes": (None, _q("RSTREAM", "CONSTRUCT { _:x ex:saw ?v . _:x ex:speed ?s }", "?v ex:speed ?s")),
    "at": (
        None,
        f"REGISTER RSTREAM Q AS\n{HEAD}SELECT ?v ?t\nFROM NAMED WINDOW ex:w ON {STREAM} [RANGE 3s STEP 1s]\n"
        "WHERE { WINDOW ex:w AT ?t { ?v ex:at ex:stop1 } }",
    ),
    "limit-without-order-by": (None, _q("RSTREAM", "SELECT ?v ?s", "?v ex:speed ?s", " LIMIT 3")),
    "order-by-ties": (None, _q("RSTREAM", "SELECT ?v ?place ?s", "?v ex:speed ?s . ?v ex:at ?place", " ORDER BY ?place")),
}  # fmt: skip


def _stream(seed: int, length: int = 160) -> list[tuple[int, tuple[str, str, str]]]:
    """Vehicles' speeds, loads (doubles), stops and blank nodes near them, several at each time."""
    rng = random.Random(seed)
    out = []
    for k in range(length):
        t = k * 90 - k % 3 * 40  # out of time order within an instant, never late
        v = f"<http://ex.org/bus{rng.randrange(9)}>"
        out.append((t, (v, "<http://ex.org/speed>", f'"{rng.randrange(40)}"^^{INT}')))
        out.append((t, (v, "<http://ex.org/at>", f"<http://ex.org/stop{rng.randrange(4)}>")))
        out.append((t, (v, "<http://ex.org/load>", f'"{rng.randrange(1000) / 7}"^^{DOUBLE}')))
        if rng.random() < 0.3:
            out.append((t, (f"_:b{rng.randrange(4)}", "<http://ex.org/near>", v)))
    return out


def _records(text: str, elements, batched: bool) -> tuple[list[dict], object]:
    """The query's results over ``elements``: pushed one by one in arrival order, or (``batched``) in
    time order, all the elements of a time in one push."""
    engine = Engine()
    handle = engine.register(text)
    if batched:
        by_time: dict[int, list] = {}
        for t, triple in sorted(elements, key=lambda e: e[0]):
            by_time.setdefault(t, []).append(triple)
        for t, triples in by_time.items():
            engine.push(triples[::-1], t, STREAM)
    else:
        for t, triple in elements:
            engine.push([triple], t, STREAM)
    engine.close()
    records = [
        {"time": r.time, "bindings": r.bindings, "triples": r.triples, "boolean": r.boolean} for r in handle
    ]
    return records, handle


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_answers_come_in_their_order_whatever_the_arrival(name: str) -> None:
    path, text = QUERIES[name]
    elements = _stream(3)
    one_by_one, handle = _records(text, elements, batched=False)
    assert (type(handle.maintained).__name__ if handle.maintained is not None else None) == path
    handle_in_answer_order(handle)
    assert sum(len(r["bindings"] or r["triples"] or ()) > 1 for r in one_by_one) > 5  # instants with several
    batched, _ = _records(text, elements, batched=True)
    assert batched == one_by_one


def test_limit_without_order_by_takes_the_first_answers_in_their_order() -> None:
    elements = _stream(5)
    whole, handle = _records(_q("RSTREAM", "SELECT ?v ?s", "?v ex:speed ?s"), elements, batched=False)
    limited, _ = _records(QUERIES["limit-without-order-by"][1], elements, batched=False)
    keys = [[(b["v"], b["s"]) for b in r["bindings"]] for r in whole]
    assert [[(b["v"], b["s"]) for b in r["bindings"]] for r in limited] == [sorted(k)[:3] for k in keys]
    assert any(len(k) > 3 for k in keys)


def test_order_by_ties_come_in_the_answer_order() -> None:
    records, _ = _records(QUERIES["order-by-ties"][1], _stream(6), batched=False)
    ties = 0
    for record in records:
        rows = [(b["place"], b["v"], b["s"]) for b in record["bindings"]]
        assert rows == sorted(rows)  # ORDER BY ?place, then the answer's order: ?v, ?s
        ties += len(rows) - len({place for place, _v, _s in rows})
    assert ties > 20


def test_partitioned_answers_are_written_in_the_answer_order() -> None:
    """rsp spark's writer of the buckets' answers (rsp.spark.InstantWriter with ``ordered``, no Spark
    run needed): the union, written in the answer's order whatever order the buckets' answers came in."""
    pytest.importorskip("pyspark")
    from rsp.spark.answers import InstantWriter

    written = []
    writer = InstantWriter("Q", "select", ("v", "n"), written.append, ordered=True)
    answers = [{"v": f"<http://ex.org/bus{k}>", "n": f'"{k % 3}"^^{INT}'} for k in range(12)]
    answers.append({"v": "<http://ex.org/bus5>", "n": None})
    random.Random(1).shuffle(answers)
    rows = [{"kind": "instant", "time": 1000, "rank": 0, "detail": None, "bindings": None}]
    rows += [
        {"kind": "answer", "time": 1000, "rank": k % 6, "detail": None, "bindings": b}
        for k, b in enumerate(answers)
    ]
    writer.take(rows)
    (result,) = written
    in_answer_order([{"time": 1000, "bindings": result.bindings}], ("v", "n"), order_by=False)
    bound = [{k: v for k, v in b.items() if v is not None} for b in answers]
    assert sorted(map(json.dumps, result.bindings)) == sorted(map(json.dumps, bound))


_SEEDED_RUN = """
import hashlib, json, sys
sys.path[:0] = sys.argv[1:]
from test_answer_order import QUERIES, _records, _stream
out = {name: json.dumps(_records(text, _stream(11), batched=False)[0]) for name, (_p, text) in QUERIES.items()}
print(json.dumps({name: hashlib.sha256(text.encode()).hexdigest() for name, text in out.items()}))
"""


def test_the_output_does_not_depend_on_the_hash_seed() -> None:
    """Each query's results in three processes with different hash seeds (sets of strings iterate in
    another order in each): equal, in order."""
    digests = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _SEEDED_RUN, str(Path(__file__).parent), str(SUPPORT), str(ORACLES)],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=True,
        )  # fmt: skip
        digests.append(json.loads(done.stdout))
    assert set(digests[0]) == set(QUERIES)
    assert digests[0] == digests[1] == digests[2]


def test_group_concat_reads_its_members_in_the_pattern_order() -> None:
    """A recomputed query lists a pattern's solutions sorted by their values, variable by variable in
    the pattern's order, whenever they arrived: GROUP_CONCAT over one pattern is the window's
    (?v, ?s) pairs in sorted order, from the definition; later elements often sort first here."""
    text = _q("RSTREAM", "SELECT (GROUP_CONCAT(?s) AS ?all)", "?v ex:speed ?s")
    elements = [
        (
            t,
            (
                f"<http://ex.org/bus{(7 - t // 300) % 5}>",
                "<http://ex.org/speed>",
                f'"{(t // 300 * 7) % 30}"^^{INT}',
            ),
        )
        for t in range(0, 6000, 300)
    ]
    records, _ = _records(text, elements, batched=False)
    for record in records:
        t = record["time"]
        pairs = sorted({triple[::2] for time, triple in elements if t - 3000 <= time < t})
        expected = " ".join(o.split('"')[1] for _v, o in pairs)
        (binding,) = record["bindings"]
        assert binding["all"] == f'"{expected}"', f"at {t}"
    assert len(records) > 5


@pytest.mark.generated
@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sets(st.integers(0, 60), max_size=12), st.sets(st.integers(0, 60), max_size=12), st.booleans()
        ),
        max_size=25,
    )
)
def test_sorted_rows_equal_a_sorted_dict(batches) -> None:
    """rsp.query.answers.order.SortedRows against a dict sorted from scratch after every batch (blocks of 2 keys,
    so they split and empty often); writers' texts follow, whether they asked at every batch or not.
    A batch removes keys held, then adds keys not held (a key may go and come back in one batch)."""
    from rsp.query.answers import order

    saved, order._BLOCK = order._BLOCK, 2
    try:
        rows, reference = order.SortedRows(), {}
        for add, remove, ask in batches:
            removed = [(f"k{k:02}",) for k in remove if (f"k{k:02}",) in reference]
            for key in removed:
                del reference[key]
            added = [((f"k{k:02}",), f"v{k}") for k in add if (f"k{k:02}",) not in reference]
            reference.update(added)
            rows.apply(added, removed)
            expected = [reference[key] for key in sorted(reference)]
            assert rows.values() == expected and len(rows) == len(expected)
            assert list(rows.items()) == [(key, reference[key]) for key in sorted(reference)]
            assert rows.texts("every batch", str.upper) == [v.upper() for v in expected]
            if ask:  # a second writer, some of the time
                assert rows.texts("sometimes", lambda v: v + "!") == [v + "!" for v in expected]
    finally:
        order._BLOCK = saved
