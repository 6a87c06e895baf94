"""Annotated fact storage: formula tables keyed by ground instance with their horizon, per-predicate
fact tables, the expiry queue keyed by horizon, and the run tracker that answers ⊞n□ over stream atoms.

Every stored item carries only its horizon h: it is valid at every evaluation time from the moment it
was stored up to h (its consideration time is implicit, since nothing is stored before it holds).
Keeping the latest horizon of each item is the expiration-tagged maintenance of Barbieri et al.: an
item is never deleted while a derivation still supports it, so nothing has to be re-derived.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable

NEVER = 1 << 62
"""Horizon of items that never expire (background facts, stream atoms under an unbounded ``@T``)."""


class ExpiryQueue:
    """Buckets of (table, key) by horizon; ``expire_before(t)`` drops every item whose horizon is < t.

    A table may be pushed the same key several times as its horizon grows; stale entries are skipped
    when popped because the table's current horizon no longer equals the bucket's.
    """

    __slots__ = ("_buckets", "_heap")

    def __init__(self) -> None:
        self._buckets: dict[int, list] = {}
        self._heap: list[int] = []

    def push(self, horizon: int, table: object, key: Hashable) -> None:
        bucket = self._buckets.get(horizon)
        if bucket is None:
            if horizon >= NEVER:
                return
            self._buckets[horizon] = bucket = []
            heapq.heappush(self._heap, horizon)
        bucket.append((table, key))

    def expire_before(self, t: int) -> None:
        heap, buckets = self._heap, self._buckets
        while heap and heap[0] < t:
            horizon = heapq.heappop(heap)
            for table, key in buckets.pop(horizon):
                table.expire(key, horizon)

    def __len__(self) -> int:
        return sum(len(b) for b in self._buckets.values())


class Table:
    """Ground instances (tuples) with their horizon, hash indexes on chosen positions, and a delta log.

    ``delta`` lists the keys whose horizon grew at the current time point, in order; the evaluator
    reads slices of it (semi-naive evaluation) and clears it when time advances.
    """

    __slots__ = (
        "name",
        "entries",
        "indexes",
        "delta",
        "queue",
        "_index_list",
        "batch",
        "extended",
        "_insert",
        "_remove",
        "dormant",
    )

    def __init__(self, name: str, queue: ExpiryQueue) -> None:
        self.name = name
        self.entries: dict[tuple, int] = {}
        self.indexes: dict[tuple[int, ...], dict[tuple, dict[tuple, None]]] = {}
        self._index_list: list[tuple[tuple[int, ...], dict]] = []
        self._insert = self._remove = _no_index
        self.dormant: dict[tuple[int, ...], dict] = {}
        """Indexes not kept up to date while no rule can read them (see :meth:`sleep`)."""
        """Add a new key to every index / take a deleted one out (generated for the table's indexes)."""
        self.delta: list[tuple] = []
        self.queue = queue
        self.batch = _BatchExpiry(self)
        self.extended = 0
        """How many times a stored key's horizon grew: a batch queued when this was k still holds
        every one of its keys with the batch's horizon while it is k (see :class:`_BatchExpiry`)."""

    def ensure_index(self, positions: tuple[int, ...]) -> dict[tuple, dict[tuple, None]]:
        """The index on ``positions`` (created on first use, filled from current entries)."""
        index = self.indexes.get(positions)
        if positions in self.dormant:
            self.wake(positions)
        if index is None:
            index = {}
            for key in self.entries:
                index.setdefault(tuple(key[i] for i in positions), {})[key] = None
            self.indexes[positions] = index
            self._index_list.append((positions, index))
            self._insert, self._remove = _index_functions(self._index_list)
        return index

    def sleep(self, positions: tuple[int, ...]) -> None:
        """Stop keeping the index on ``positions`` (emptied, the same dict) until :meth:`wake`: for
        indexes that only rules switched off by a guard read (OWL 2 RL's ``eq-rep-*``)."""
        if positions in self.dormant or positions not in self.indexes:
            return
        index = self.indexes[positions]
        index.clear()
        self.dormant[positions] = index
        self._index_list = [(p, i) for p, i in self._index_list if p != positions]
        self._insert, self._remove = _index_functions(self._index_list)

    def wake(self, positions: tuple[int, ...]) -> None:
        """Fill a dormant index from the entries (in place: compiled plans hold the dict) and keep it."""
        index = self.dormant.pop(positions, None)
        if index is None:
            return
        for key in self.entries:
            index.setdefault(tuple(key[i] for i in positions), {})[key] = None
        self._index_list.append((positions, index))
        self._insert, self._remove = _index_functions(self._index_list)

    def update(self, key: tuple, horizon: int) -> bool:
        """Store ``key`` valid until ``horizon`` (keeping the larger horizon); True if it grew."""
        entries = self.entries
        old = entries.get(key)
        if old is None:
            entries[key] = horizon
            self._insert(key)
        elif horizon > old:
            entries[key] = horizon
            self.extended += 1
        else:
            return False
        self.queue.push(horizon, self, key)
        self.delta.append(key)
        return True

    def update_many(self, keys: list[tuple], horizon: int) -> None:
        """:meth:`update` for many keys with one horizon (one queue entry for the whole batch)."""
        if self._index_list:
            for key in keys:
                self.update(key, horizon)
            return
        entries = self.entries
        if entries.keys().isdisjoint(keys):  # all new: one C-level update
            fresh = dict.fromkeys(keys, horizon)
            entries.update(fresh)
            grown = keys if len(fresh) == len(keys) else list(fresh)
        else:
            grown = []
            for key in keys:
                old = entries.get(key)
                if old is None:
                    entries[key] = horizon
                    grown.append(key)
                elif horizon > old:
                    entries[key] = horizon
                    grown.append(key)
                    self.extended += 1
        if grown:
            self.delta.extend(grown)
            self.queue.push(horizon, self.batch, (grown, self.extended))

    def update_pairs(self, pairs: list[tuple[tuple, int]]) -> None:
        """:meth:`update` for (key, horizon) pairs; keys that grew are queued in one batch per horizon."""
        entries = self.entries
        get = entries.get
        delta = self.delta
        insert = self._insert if self._index_list else None
        grown: dict[int, list[tuple]] = {}
        # A key may come twice with two horizons (two derivations of one atom): it then sits in the
        # batches of both, stored with the later one. Batches get the stamp from before the loop, so
        # that any extension here sends them to the per-key check (expired once, at its latest horizon).
        stamp = self.extended
        for key, horizon in pairs:
            old = get(key)
            if old is None or horizon > old:
                if old is not None:
                    self.extended += 1
                elif insert is not None:
                    insert(key)
                entries[key] = horizon
                delta.append(key)
                batch = grown.get(horizon)
                if batch is None:
                    grown[horizon] = [key]
                else:
                    batch.append(key)
        push, target = self.queue.push, self.batch
        for horizon, batch in grown.items():
            push(horizon, target, (batch, stamp))

    def expire(self, key: tuple, horizon: int) -> None:
        entries = self.entries
        if entries.get(key) != horizon:
            return
        del entries[key]
        self._remove(key)

    def __repr__(self) -> str:
        return f"Table({self.name}, {len(self.entries)} entries)"


def _no_index(key: tuple) -> None:
    """Index maintenance of a table without indexes."""


def _index_functions(index_list: list[tuple[tuple[int, ...], dict]]) -> tuple:
    """``insert(key)`` and ``remove(key)`` for these indexes, generated as straight-line code: a fact
    costs one call whatever the number of indexes, with each index's key built by one tuple display."""
    if not index_list:
        return _no_index, _no_index
    namespace: dict = {}
    insert, remove = ["def insert(key):"], ["def remove(key):"]
    for n, (positions, index) in enumerate(index_list):
        namespace[f"I{n}"] = index
        sub = "(" + "".join(f"key[{i}], " for i in positions) + ")"
        insert += [
            f"    s = {sub}",
            f"    b = I{n}.get(s)",
            "    if b is None:",
            f"        I{n}[s] = {{key: None}}",
            "    else:",
            "        b[key] = None",
        ]
        remove += [
            f"    s = {sub}",
            f"    b = I{n}[s]",
            "    del b[key]",
            "    if not b:",
            f"        del I{n}[s]",
        ]
    code = compile("\n".join(insert + remove), "<table indexes>", "exec")
    exec(code, namespace)  # noqa: S102 - generated from index positions only
    return namespace["insert"], namespace["remove"]


def _drop(entries: dict, keys: list, horizon: int) -> None:
    """Delete the keys still stored with ``horizon`` (the others were extended since)."""
    get = entries.get
    for key in keys:
        if get(key) == horizon:
            del entries[key]


class _BatchExpiry:
    """Queue entry for a batch of keys of one table stored with the same horizon, queued as
    ``(keys, stamp)`` where ``stamp`` is the table's :attr:`Table.extended` count right after storing
    them. If no horizon grew since, every key is still stored with this horizon and the whole batch is
    deleted in one C-level pass; otherwise each key is checked."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def expire(self, batch: tuple[list[tuple], int], horizon: int) -> None:
        keys, stamp = batch
        table = self.table
        if table._index_list:
            entries, remove = table.entries, table._remove
            if stamp == table.extended:
                for key in keys:
                    del entries[key]
                    remove(key)
            else:
                get = entries.get
                for key in keys:
                    if get(key) == horizon:
                        del entries[key]
                        remove(key)
        elif stamp == table.extended:
            deque(map(table.entries.__delitem__, keys), maxlen=0)
        else:
            _drop(table.entries, keys, horizon)


class FactTable:
    """The facts of one predicate that the engine must keep as such (intensional predicates): atoms
    that hold at the evaluation time (``now``) and atoms placed at a fixed time point (``fixed``)."""

    __slots__ = ("pred", "now", "fixed", "by_time", "queue", "_now_expiry", "_fixed_expiry", "fresh")

    def __init__(self, pred: str, queue: ExpiryQueue) -> None:
        self.pred = pred
        self.now: dict[tuple, int] = {}
        self.fresh: list[tuple] | None = None
        """When a list (see ``Engine.log_insertions``): the args newly stored in ``now`` during the
        current time point, so that an output consumer finds what appeared without scanning ``now``."""
        self.fixed: dict[tuple, dict[int, int]] = {}
        self.by_time: dict[int, dict[tuple, None]] = {}
        self.queue = queue
        self._now_expiry = _NowExpiry(self)
        self._fixed_expiry = _FixedExpiry(self)

    def add_now(self, args: tuple, horizon: int) -> bool:
        old = self.now.get(args)
        if old is not None and old >= horizon:
            return False
        if old is None and self.fresh is not None:
            self.fresh.append(args)
        self.now[args] = horizon
        self.queue.push(horizon, self._now_expiry, [args])
        return True

    def add_now_many(self, pairs: list[tuple[tuple, int]], keep: bool = True) -> list[tuple[tuple, int]]:
        """:meth:`add_now` for (args, horizon) pairs; returns the pairs that grew (if ``keep``)."""
        now = self.now
        get = now.get
        grown = []
        fresh = self.fresh
        batches: dict[int, list[tuple]] = {}
        last_horizon, last_batch = None, None
        for pair in pairs:
            args, horizon = pair
            old = get(args)
            if old is None or horizon > old:
                if old is None and fresh is not None:
                    fresh.append(args)
                now[args] = horizon
                if keep:
                    grown.append(pair)
                if horizon == last_horizon:
                    last_batch.append(args)
                    continue
                last_batch = batches.get(horizon)
                if last_batch is None:
                    batches[horizon] = last_batch = [args]
                else:
                    last_batch.append(args)
                last_horizon = horizon
        push, target = self.queue.push, self._now_expiry
        for horizon, batch in batches.items():
            push(horizon, target, batch)
        return grown

    def add_fixed(self, args: tuple, time: int, horizon: int) -> bool:
        times = self.fixed.get(args)
        if times is None:
            self.fixed[args] = times = {}
        old = times.get(time)
        if old is not None and old >= horizon:
            return False
        times[time] = horizon
        if old is None:
            self.by_time.setdefault(time, {})[args] = None
        self.queue.push(horizon, self._fixed_expiry, (args, time))
        return True

    def holds_at(self, args: tuple, time: int) -> bool:
        """Whether ``args`` holds at the past time point ``time`` (fixed facts only)."""
        times = self.fixed.get(args)
        return times is not None and time in times

    def at_current(self, t: int) -> set[tuple]:
        """Arguments of the atoms holding at the evaluation time t."""
        result = set(self.now)
        result.update(self.by_time.get(t, ()))
        return result

    def count_at(self, t: int) -> int:
        at_t = self.by_time.get(t)
        if not at_t:
            return len(self.now)
        now = self.now
        return len(now) + sum(1 for args in at_t if args not in now)


class _NowExpiry:
    __slots__ = ("facts",)

    def __init__(self, facts: FactTable) -> None:
        self.facts = facts

    def expire(self, batch: list[tuple], horizon: int) -> None:
        _drop(self.facts.now, batch, horizon)


class _FixedExpiry:
    __slots__ = ("facts",)

    def __init__(self, facts: FactTable) -> None:
        self.facts = facts

    def expire(self, key: tuple, horizon: int) -> None:
        args, time = key
        facts = self.facts
        times = facts.fixed.get(args)
        if times is None or times.get(time) != horizon:
            return
        del times[time]
        if not times:
            del facts.fixed[args]
        at_time = facts.by_time[time]
        del at_time[args]
        if not at_time:
            del facts.by_time[time]


class RunTracker:
    """For a stream predicate read under ⊞n□: per ground atom, the start of its current run of
    consecutive time points. ⊞n□ p(c) holds at t iff p(c) arrived at t and its run started by t-n."""

    __slots__ = ("start", "last", "at_time", "queue", "time")

    def __init__(self, queue: ExpiryQueue) -> None:
        self.start: dict[tuple, int] = {}
        self.last: dict[tuple, int] = {}
        self.at_time: list[tuple] = []
        self.queue = queue
        self.time: int | None = None

    def add(self, args: tuple, t: int) -> None:
        if self.time != t:
            self.time = t
            self.at_time = []
        last = self.last.get(args)
        if last == t:
            return
        if last != t - 1:
            self.start[args] = t
        self.last[args] = t
        self.at_time.append(args)
        self.queue.push(t + 1, self, args)

    def expire(self, args: tuple, horizon: int) -> None:
        # pushed with horizon last+1: still current if the atom did not arrive again since
        if self.last.get(args) == horizon - 1:
            del self.last[args]
            del self.start[args]

    def current(self, t: int) -> list[tuple]:
        return self.at_time if self.time == t else []
