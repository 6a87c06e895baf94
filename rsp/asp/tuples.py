"""Tuple windows for the answer-set modes: the last n stream elements at each time point, kept as a
multiset of (pred, args, time) per window size, with what entered and left at each tick."""

from __future__ import annotations

from collections import Counter, deque

Element = tuple[str, tuple, int]  # (pred, args, time)


class TupleWindows:
    """The contents of every tuple window ``[#n]`` of a program, updated tick by tick."""

    def __init__(self, sizes: set[int], start: int) -> None:
        self.start = start
        self.sizes = sorted(sizes)
        keep = max(self.sizes, default=0)
        self.last: deque[Element] = deque(maxlen=keep or 1)
        self.arrived = 0
        self.members: dict[int, Counter] = {n: Counter() for n in self.sizes}

    def update(self, t: int, batch: list[tuple[str, tuple]]) -> dict[int, tuple[set, set, int]]:
        """Add the elements of time point ``t``; per size n: (elements that entered, elements that
        left, the window's first time point t')."""
        for pred, args in batch:
            self.last.append((pred, args, t))
            self.arrived += 1
        changes = {}
        for n in self.sizes:
            window = list(self.last)[max(0, len(self.last) - n) :] if n > 0 else []
            now = Counter(window)
            old = self.members[n]
            entered = {e for e in now if e not in old}
            left = {e for e in old if e not in now}
            self.members[n] = now
            if n == 0:
                first = t
            elif self.arrived < n:
                first = self.start
            else:
                first = window[0][2]
            changes[n] = (entered, left, first)
        return changes
