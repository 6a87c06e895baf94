"""What appeared and what expired among one intensional predicate's facts since the last look, at the
cost of what changed: the engine's log of insertions (:meth:`Engine.log_insertions`) gives what
appeared; a queue of the horizons the held facts had when last looked at gives what may have
expired (a fact leaves only once the clock passed its horizon, and horizons only grow while it holds).

Facts placed at time points (``@T`` heads, intensional stream atoms: ``FactTable.by_time``) and looks
more than one engine step apart are diffed in full, with C-level set differences.

>>> from rsp.engine import Engine
>>> from rsp.lars import parse
>>> engine = Engine(parse("q(X) :- [1] <> p(X)."))
>>> changes = FactChanges(engine, ("q", 1))
>>> engine.step(0, [("p", ("a",))]); [sorted(part) for part in changes.update()]
[[('a',)], []]
>>> engine.step(1, [("p", ("b",))]); [sorted(part) for part in changes.update()]
[[('b',)], []]
>>> engine.step(2); [sorted(part) for part in changes.update()]
[[], [('a',)]]
>>> sorted(changes.held)
[('b',)]
"""

from __future__ import annotations

from heapq import heappop, heappush

from rsp.engine.store import NEVER


class FactChanges:
    """The facts of ``pred`` held at the last :meth:`update` (``held``) and what changed since."""

    __slots__ = ("engine", "facts", "log", "held", "heap", "buckets", "fixed", "last_t")

    def __init__(self, engine, pred) -> None:
        self.engine = engine
        self.facts = engine.facts[pred]
        self.log = engine.log_insertions(pred)  # what was stored as new during the current time point
        self.held: set[tuple] = set()
        self.heap: list[int] = []
        self.buckets: dict[int, list[tuple]] = {}
        self.fixed = False  # facts placed at time points: diffed in full
        self.last_t: int | None = None

    def update(self) -> tuple[set | list | tuple, set | list | tuple]:
        """(args that appeared, args that went) since the last call; ``held`` becomes what holds now."""
        t = self.engine.t
        consecutive = self.last_t is not None and t == self.last_t + 1  # one step: times are integers
        self.last_t = t
        new, gone = self._diff(t, consecutive)
        if gone:
            self.held.difference_update(gone)
        if new:
            self.held.update(new)
        return new, gone

    def _queue(self, args_list, now: dict, t: int) -> None:
        buckets = self.buckets
        for args in args_list:
            h = now[args]
            if h >= NEVER:
                continue
            if h < t:
                h = t
            bucket = buckets.get(h)
            if bucket is None:
                buckets[h] = [args]
                heappush(self.heap, h)
            else:
                bucket.append(args)

    def _due(self, t: int, now: dict) -> list[tuple]:
        """Look again at the facts whose horizon passed: those gone from ``now`` (and held) are
        returned, the others queued at their new horizon."""
        heap, buckets, held = self.heap, self.buckets, self.held
        gone: list[tuple] = []
        again: list[tuple] = []
        while heap and heap[0] < t:
            for args in buckets.pop(heappop(heap)):
                if args in now:
                    again.append(args)
                elif args in held:
                    gone.append(args)
        if again:
            self._queue(again, now, t)
        return gone

    def _diff(self, t: int, consecutive: bool):
        facts = self.facts
        now = facts.now
        held = self.held
        if facts.by_time and not self.fixed:
            self.fixed = True
            self.heap, self.buckets = [], {}
        if self.fixed:
            at_t = facts.by_time.get(t)
            if at_t:
                current = set(now)
                current.update(at_t)
                return current - held, held - current
            return now.keys() - held, held.difference(now)
        if consecutive:  # one engine step since the last call: its log holds every insertion
            log = self.log
            new = set(log).difference(held) if log else ()
            gone = self._due(t, now)
        else:
            self._due(t, now)
            new = now.keys() - held
            gone = held.difference(now)
        if new:
            self._queue(new, now, t)
        return new, gone
