"""The hand-written baseline of issue 15: a single-purpose maintainer of the ``isin`` answer.

It keeps the transitive closure of ``ex:isIn`` over a sliding window by expiration tags (Barbieri et al.,
ESWC 2010), written for this one query and nothing else, and writes the same JSON lines as
``rsp``'s ``jsonl`` writer for ``SELECT ?x ?y WHERE { ?x ex:isIn ?y }`` under ISTREAM, RSTREAM or
DSTREAM. ``benchmarks/instants.py`` runs it in the same round robin as rsp and checks that both write
the same lines at every instant, so the ratio it prints compares equal work. Like rsp since its answers
come in a fixed order, it writes them sorted (``ordered=False``: in the order its dicts hold them, as
before that order was fixed; the benchmark prints that variant too, as ``unordered``).

Semantics (DESIGN.md §5, with RANGE and STEP multiples of the slot, here both whole seconds): an
element at τ lies in slot ⌊τ/step⌋; the window closing at instant t holds the slots t/step - R .. t/step - 1
(R = range/step). Each closure pair ``(x, y)`` carries its horizon, the last slot point at which some
path of window edges from x to y still lies wholly in the window: the maximum over paths of the
minimum of their edges' horizons. Inserting an edge a→b with horizon h offers every pair (x, y) with
x ∈ {a} ∪ {x: x→a} and y ∈ {b} ∪ {y: b→y} the horizon min(h(x,a), h, h(b,y)); a pair is dropped when the
point passes its horizon. This is exact for any graph (cycles included): the best path through the
new edge uses it once, and the rest of the closure is already exact.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

NEVER = 1 << 62
ISIN = "<http://example.org/isin#isIn>"


class IsInMaintainer:
    """The isIn closure over a sliding window of ``range_slots`` slots, with each pair's JSON text made
    once, when the pair appears, and written from there while it lives."""

    def __init__(self, range_slots: int, ordered: bool = True) -> None:
        self.range_slots = range_slots
        self.ordered = ordered
        """Answers in rsp's order (docs/reference.md, "The order of answers"), as rsp writes them."""
        self.order: list[tuple[str, str]] = []
        """RSTREAM, ordered: the pairs of the last answer written, sorted."""
        self.up: dict[str, dict[str, int]] = {}
        """x -> {y: horizon} for every closure pair (x, y)."""
        self.down: dict[str, dict[str, int]] = {}
        """y -> {x: horizon}: the same pairs from their other end."""
        self.text: dict[tuple[str, str], str] = {}
        """Each live pair's JSON object, as rsp's writer makes it."""
        self.buckets: dict[int, list[tuple[str, str]]] = {}
        """horizon -> pairs stored with it (stale entries, whose horizon grew since, are skipped)."""
        self.appeared: dict[tuple[str, str], None] = {}
        """Pairs live now that were not in the answer at the last instant written."""
        self.gone: set[tuple[str, str]] = set()
        """Pairs of the answer at the last instant written that are no longer live."""
        self.point: int | None = None

    def _store(self, x: str, y: str, horizon: int) -> None:
        row = self.up.get(x)
        if row is None:
            self.up[x] = row = {}
        old = row.get(y)
        if old is not None and old >= horizon:
            return
        row[y] = horizon
        column = self.down.get(y)
        if column is None:
            self.down[y] = column = {}
        column[x] = horizon
        bucket = self.buckets.get(horizon)
        if bucket is None:
            self.buckets[horizon] = bucket = []
        bucket.append((x, y))
        if old is None:
            pair = (x, y)
            self.text[pair] = json.dumps({"x": x, "y": y}, ensure_ascii=False)
            if pair in self.gone:
                self.gone.discard(pair)  # in the last answer written, and again now
            else:
                self.appeared[pair] = None

    def add_edge(self, a: str, b: str, horizon: int) -> None:
        """Store the window edge a→b valid up to ``horizon`` and every pair it extends."""
        sources = [(a, NEVER), *self.down.get(a, {}).items()]
        targets = [(b, NEVER), *self.up.get(b, {}).items()]
        for x, hx in sources:
            through = hx if hx < horizon else horizon
            for y, hy in targets:
                self._store(x, y, through if through < hy else hy)

    def step(self, point: int, edges: Iterable[tuple[str, str]]) -> None:
        """Advance to slot ``point``: drop the pairs whose horizon passed, add the slot's edges."""
        for horizon in [h for h in self.buckets if h < point]:
            for pair in self.buckets.pop(horizon):
                x, y = pair
                row = self.up.get(x)
                if row is None or row.get(y) != horizon:
                    continue
                del row[y]
                if not row:
                    del self.up[x]
                column = self.down[y]
                del column[x]
                if not column:
                    del self.down[y]
                del self.text[pair]
                if pair in self.appeared:
                    del self.appeared[pair]
                else:
                    self.gone.add(pair)
        horizon = point + self.range_slots - 1
        for a, b in edges:
            self.add_edge(a, b, horizon)
        self.point = point

    def bindings(self, policy: str) -> list[str]:
        """The JSON objects of the answer at this instant under ``policy``, in rsp's order of answers
        (sorted by x, then y) unless the maintainer is ``ordered=False``; starts the next change."""
        if policy == "RSTREAM" and not self.ordered:
            texts = list(self.text.values())
        elif policy == "RSTREAM":
            # the last answer's sorted pairs, less those gone, plus those that appeared: timsort merges
            # the two sorted runs
            order = [pair for pair in self.order if pair not in self.gone] if self.gone else self.order
            if self.appeared:
                order += self.appeared
                order.sort()
            self.order = order
            texts = list(map(self.text.__getitem__, order))
        elif policy == "ISTREAM":
            pairs = sorted(self.appeared) if self.ordered else self.appeared
            texts = [self.text[pair] for pair in pairs]
        else:
            pairs = sorted(self.gone) if self.ordered else self.gone
            texts = [json.dumps({"x": x, "y": y}, ensure_ascii=False) for x, y in pairs]
        self.appeared = {}
        self.gone = set()
        return texts


class IsInQuery:
    """Drives an :class:`IsInMaintainer` with timed triples as ``rsp``'s ``Engine.push`` would: an
    element at τ closes every instant up to τ first; :meth:`close` writes the instants up to the first
    one after the last element."""

    def __init__(
        self, range_ms: int, step_ms: int, policy: str, name: str, handle: TextIO, ordered: bool = True
    ) -> None:
        if range_ms % step_ms:
            raise ValueError("the baseline needs RANGE to be a multiple of STEP")
        self.step_ms = step_ms
        self.policy = policy
        self.handle = handle
        self.name = name
        self.maintainer = IsInMaintainer(range_ms // step_ms, ordered)
        self.pending: dict[int, list[tuple[str, str]]] = {}
        self.next_instant: int | None = None
        self.last_element: int | None = None
        self.on_instant = None
        """Called with the instant's time after each instant is written (the benchmark's clock)."""

    def push(self, triples: Iterable[tuple[str, str, str]], time: int) -> None:
        if self.next_instant is None:
            self.next_instant = (time // self.step_ms + 1) * self.step_ms
        while self.next_instant <= time:
            self._close(self.next_instant)
        slot = self.pending.setdefault(time // self.step_ms, [])
        slot.extend((s, o) for s, p, o in triples if p == ISIN)
        self.last_element = time if self.last_element is None else max(self.last_element, time)

    def close(self) -> None:
        if self.last_element is None:
            return
        last = (self.last_element // self.step_ms + 1) * self.step_ms
        while self.next_instant <= last:
            self._close(self.next_instant)

    def _close(self, instant: int) -> None:
        point = instant // self.step_ms - 1
        first = self.maintainer.point
        start = min(self.pending, default=point) if first is None else first + 1
        for k in range(start, point + 1):
            self.maintainer.step(k, self.pending.pop(k, ()))
        head = json.dumps({"query": self.name, "time": instant}, ensure_ascii=False)[:-1]
        # as rsp's writer: three writes, the joined answer not copied again into one line
        self.handle.write(f'{head}, "bindings": [')
        self.handle.write(", ".join(self.maintainer.bindings(self.policy)))
        self.handle.write("]}\n")
        self.handle.flush()
        self.next_instant = instant + self.step_ms
        if self.on_instant is not None:
            self.on_instant(instant)
