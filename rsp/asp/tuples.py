"""Tuple windows for the answer-set modes: the last n stream elements at each time point, kept as a
multiset of (pred, args, time) per window size, with what entered and left at each tick; and mode tms's
tuple-window nodes, updated from those changes."""

from __future__ import annotations

from collections import Counter

from rsp.asp.values import time_point

Element = tuple[str, tuple, int]  # (pred, args, time)


class TupleWindows:
    """The contents of every tuple window ``[#n]`` of a program, updated tick by tick: a tick costs what
    enters and leaves the windows, not their size."""

    def __init__(self, sizes: set[int], start: int) -> None:
        self.start = start
        self.sizes = sorted(sizes)
        self.keep = max(self.sizes, default=0)
        self.last: list[Element] = []  # the latest elements, at least the last ``keep``
        self.base = 0  # the arrival number of last[0]
        self.arrived = 0
        self.members: dict[int, Counter] = {n: Counter() for n in self.sizes}

    def update(self, t: int, batch: list[tuple[str, tuple]]) -> dict[int, tuple[list, list, int]]:
        """Add the elements of time point ``t``; per size n: (elements that entered, elements that
        left, the window's first time point t'), each list in arrival order (never hash order: the
        modes ground and search in the order they get them)."""
        before = self.arrived
        last = self.last
        for pred, args in batch:
            last.append((pred, args, t))
        self.arrived += len(batch)
        base = self.base
        changes = {}
        for n in self.sizes:
            members = self.members[n]
            # window n held arrivals [before - n, before) and holds [arrived - n, arrived) now
            old_low, new_low = max(0, before - n), max(0, self.arrived - n)
            leaving = [last[i - base] for i in range(old_low, min(new_low, before))]
            entering = [last[i - base] for i in range(max(before, new_low), self.arrived)]
            touched = set(leaving) | set(entering)
            was = {e for e in touched if e in members}
            for e in leaving:
                members[e] -= 1
                if not members[e]:
                    del members[e]
            for e in entering:
                members[e] += 1
            entered = [e for e in dict.fromkeys(entering) if e not in was]
            left = [e for e in dict.fromkeys(leaving + entering) if e in was and e not in members]
            if n == 0:
                first = t
            elif self.arrived < n:
                first = self.start
            else:
                first = last[new_low - base][2]
            changes[n] = (entered, left, first)
        drop = len(last) - self.keep
        if drop > self.keep:  # trim now and then: amortised O(1) per element
            del last[:drop]
            self.base += drop
        return changes


class TupleNodes:
    """Mode tms's tuple-window nodes (``("TD"|"TP"|"TB"|"TV", n, pred, args[, s])``), kept from tick to
    tick: per (n, pred, arity) read through a tuple window, the time points at which each args has an
    element in the window, and the args background facts also give (their nodes are computed whole)."""

    def __init__(self, forms: set[tuple], windows: TupleWindows, facts) -> None:
        self.forms = forms  # (n, kind, pred, arity)
        self.windows = windows
        self.facts = list(facts)
        self.points: dict[tuple, dict[tuple, set[int]]] = {
            (n, pred, arity): {} for n, _k, pred, arity in forms
        }
        self.fact_args: dict[tuple, set[tuple]] = {key: set() for key in self.points}
        self.holding: dict[tuple, set[tuple]] = {}  # (kind, n, pred, arity) -> args whose TP/TB node holds
        for rule in self.facts:
            atom = rule.head.atom
            for key in self.points:
                if key[1:] == (atom.pred, len(atom.args)):
                    self.fact_args[key].add(atom.args)

    def update(self, t: int, batch: list[tuple[str, tuple]], current: set[tuple]) -> tuple[list, list]:
        """The nodes to add and to drop at t, given those that held before (``current``), from what
        entered and left each window (not from its whole content): ``[#n] <> p(a)`` while an element
        p(a) is in the window, ``[#n] p(a)`` while one is at t, ``[#n] [] p(a)`` while one is at each
        time point from the window's first to t, ``[#n] @s p(a)`` while one at s is. Arguments that
        background facts give too are computed whole. Both lists are sorted (by ``repr``: the same
        order in every run, whatever the hash of a string)."""
        changes = self.windows.update(t, batch)
        touched: dict[tuple, set[tuple]] = {}
        for key, points in self.points.items():
            n, pred, arity = key
            entered, left, _first = changes[n]
            moved = touched[key] = set()
            for p, args, s in left:
                if p == pred and len(args) == arity:
                    held = points[args]
                    held.discard(s)
                    if not held:
                        del points[args]
                    moved.add(args)
            for p, args, s in entered:
                if p == pred and len(args) == arity:
                    points.setdefault(args, set()).add(s)
                    moved.add(args)
        add: set[tuple] = set()
        drop: set[tuple] = set()
        for n, kind, pred, arity in self.forms:
            key = (n, pred, arity)
            points, facts, (entered, _left, first) = self.points[key], self.fact_args[key], changes[n]
            holding = self.holding.setdefault((kind, n, pred, arity), set())  # TP, TB: args now
            if kind in ("TD", "TV"):
                candidates = touched[key]
            else:  # an element at t entered now: the args held before and those of the batch
                candidates = holding | {a for p, a, s in entered if s == t and p == pred and len(a) == arity}
            for args in candidates | facts:
                held = points.get(args, set())
                if args in facts:
                    held = held | self._fact_points(pred, args, first, t)
                want = self._tuple_nodes(kind, n, pred, args, held, first, t)
                if kind == "TV":
                    if args in facts:
                        have = {node for node in current if node[:4] == ("TV", n, pred, args)}
                    else:
                        have = {
                            ("TV", n, pred, args, s) for s in self._tv_before(key, args, held, changes[n])
                        }
                else:
                    node = (kind, n, pred, args)
                    have = {node} if node in current else set()
                    if want:
                        holding.add(args)
                    else:
                        holding.discard(args)
                add |= want - have
                drop |= have - want
        return sorted(add, key=repr), sorted(drop, key=repr)

    def _tv_before(self, key: tuple, args: tuple, held: set[int], change: tuple) -> set[int]:
        """The points s of the ``[#n] @s p(args)`` nodes before this tick: now's, with what left added
        back and what entered taken out."""
        _n, pred, arity = key
        entered, left, _first = change
        before = set(held)
        before |= {s for p, a, s in left if p == pred and a == args}
        before -= {s for p, a, s in entered if p == pred and a == args}
        return before

    def _fact_points(self, pred: str, args: tuple, first: int, t: int) -> set[int]:
        """The time points from first to t at which background facts give ``pred(args)``."""
        out: set[int] = set()
        for rule in self.facts:
            atom = rule.head.atom
            if atom.pred != pred or atom.args != args:
                continue
            if rule.head.time is None:
                out.update(range(first, t + 1))
            else:
                at = time_point(rule.head.time)
                if at is not None and first <= at <= t:
                    out.add(at)
        return out

    @staticmethod
    def _tuple_nodes(kind: str, n: int, pred: str, args: tuple, held: set[int], first: int, t: int) -> set:
        """The nodes of one tuple-window form over ``pred(args)`` given the points it is seen at."""
        if not held:
            return set()
        if kind == "TD":
            return {("TD", n, pred, args)}
        if kind == "TP":
            return {("TP", n, pred, args)} if t in held else set()
        if kind == "TB":  # the points are the window's (from first to t): enough of them is all of them
            whole = t in held and len(held) == t - first + 1
            return {("TB", n, pred, args)} if whole else set()
        return {("TV", n, pred, args, s) for s in held}
