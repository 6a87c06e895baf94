"""The fact store keeps each item with the latest horizon among its derivations and expires it once,
when the clock passes that horizon, whichever update path stored it (one key, a batch with one horizon,
(key, horizon) pairs, with or without indexes): checked against a dictionary of maximum horizons."""

from __future__ import annotations

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp.engine.store import NEVER, ExpiryQueue, FactTable, Table


def test_two_derivations_in_one_call_keep_the_later_horizon() -> None:
    queue = ExpiryQueue()
    table = Table("h0", queue)
    table.update_pairs([(("a",), 10), (("a",), 12), (("b",), 10)])
    queue.expire_before(11)
    assert table.entries == {("a",): 12}  # b's horizon passed; a holds until 12
    queue.expire_before(13)
    assert table.entries == {}


KEYS = st.sampled_from([("a",), ("b",), ("a", "x")])
HORIZONS = st.integers(0, 6) | st.just(NEVER)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("update"), KEYS, HORIZONS),
        st.tuples(st.just("many"), st.lists(KEYS, max_size=4), HORIZONS),
        st.tuples(st.just("pairs"), st.lists(st.tuples(KEYS, HORIZONS), max_size=5)),
        st.tuples(st.just("now"), st.lists(st.tuples(KEYS, HORIZONS), max_size=5)),
        st.tuples(st.just("expire"), st.integers(0, 2)),
    ),
    max_size=30,
)


@pytest.mark.generated
@settings(max_examples=examples(400), deadline=None)
@given(OPERATIONS, st.booleans())
def test_store_keeps_the_latest_horizon_and_expires_once(operations, indexed: bool) -> None:
    queue = ExpiryQueue()
    table = Table("t", queue)
    facts = FactTable(("f", 1), queue)
    if indexed:
        table.ensure_index((0,))
    model: dict[tuple, int] = {}
    now_model: dict[tuple, int] = {}
    clock = 0

    def store(target: dict, key: tuple, horizon: int) -> None:
        if horizon >= clock:  # the engine never stores an item whose horizon already passed
            target[key] = max(target.get(key, horizon), horizon)

    for operation in operations:
        kind = operation[0]
        if kind == "update":
            _, key, horizon = operation
            if horizon >= clock:
                table.update(key, horizon)
            store(model, key, horizon)
        elif kind == "many":
            _, keys, horizon = operation
            if horizon >= clock:
                table.update_many(list(keys), horizon)
            for key in keys:
                store(model, key, horizon)
        elif kind == "pairs":
            pairs = [(k, h) for k, h in operation[1] if h >= clock]
            table.update_pairs(pairs)
            for key, horizon in pairs:
                store(model, key, horizon)
        elif kind == "now":
            pairs = [(k, h) for k, h in operation[1] if h >= clock]
            facts.add_now_many(pairs)
            for key, horizon in pairs:
                store(now_model, key, horizon)
        else:
            clock += operation[1] + 1
            queue.expire_before(clock)
            model = {k: h for k, h in model.items() if h >= clock}
            now_model = {k: h for k, h in now_model.items() if h >= clock}
        assert table.entries == model
        assert facts.now == now_model
        for positions, index in table.indexes.items():
            rebuilt: dict = {}
            for key in table.entries:
                rebuilt.setdefault(tuple(key[i] for i in positions), {})[key] = None
            assert index == rebuilt
