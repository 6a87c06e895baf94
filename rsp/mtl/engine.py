"""The streaming DatalogMTL engine: the least model of a forward-propagating program, slice by slice.

Facts arrive in the order of their left ends. When a fact starting at ``t`` arrives and every earlier
fact started before ``t``, nothing can change the model on ``(−∞, t)`` any more (forward propagation),
so the engine closes the slice ``[F, t)`` (F the previous frontier; the last slice, at the end of the
stream, is ``[F, H]``), as the paper's Algorithm 1 does: rules are applied semi-naively
and derive only within the slice; what a rule derives beyond it (a ``⊞ρ`` head, a ``◇⁻ρ`` shift, a long
input interval) is stored whole and released slice by slice, so recursion never runs ahead of the
stream. Each predicate's facts are kept per ground atom as coalesced maximal intervals.

Forgetting: an interval that ended before the frontier is final; it is reported (output predicates)
and dropped. Joins need facts at the same time point, ``◇⁻ρ`` and ``⊞ρ`` are applied once to each new
interval, and ``⊟ρ`` and ``Since`` recompute only maximal intervals that grew. What an ended interval
``j`` on the right of ``A S_ρ B`` can still give is kept instead as its *carry* (per rule and ground
right atom, and per ground left atom too when A has variables B lacks: such a Since is evaluated per
pair of left and right atoms, :class:`rsp.mtl.plans.SincePairs`): ``(j ∩ [k.lo, ∞)) ⊕ ρ`` beyond the
frontier, ``k`` the left atom's maximal interval that reaches the frontier, coalesced and tagged with
``k``'s start; it becomes a result up to ``k``'s end as ``k`` grows, and is dropped when ``k`` ends
(see :meth:`Engine._fold`). So memory holds the intervals that reach the frontier or the future, never
the stream's past (:meth:`Engine.stored_intervals`). For a program with no punctual interval (the case
of the paper's Algorithm 6) that is also independent of how dense the timestamps are: a ``◇⁻[a,b]`` or
a ``Since[a,b]`` with ``a < b`` coalesces the shifts of close points into one interval, and isolated
points are dropped as soon as they are passed. Rational times are exact (``int`` or ``Fraction``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from rsp.errors import LateElementError
from rsp.mtl.intervals import (
    INF,
    Interval,
    add,
    box,
    covers_zero,
    denominator,
    from_unit,
    intersect,
    shift,
    since,
    to_unit,
)
from rsp.mtl.model import Var, format_atom
from rsp.mtl.normalise import Normalised
from rsp.mtl.plans import Join, Op, Since, SincePairs, compile_rules, match, rescale

Key = tuple  # (pred, args)


def _within(iv: Interval, end, closed: bool) -> bool:
    """Whether ``iv`` lies in ``(−∞, end]`` (``closed``) or ``(−∞, end)``."""
    return iv[1] < end or (iv[1] == end and (closed or not iv[3]))


def _ended(iv: Interval, end, closed: bool) -> bool:
    """Whether a maximal interval is final once the model is known on ``(−∞, end]`` (``closed``) or
    ``(−∞, end)``: it stops at a point where the model is known not to go on."""
    return iv[1] < end or (iv[1] == end and closed and not iv[3])


class Engine:
    """Feed facts with :meth:`push` in the order of their left ends; read what became final from the
    return values of :meth:`push` and :meth:`finish`.

    ``outputs``: the predicates reported (default: those the user's rules derive). ``horizon``: the
    model is computed on ``(−∞, horizon]`` (``None``: up to the greatest finite time point of the
    stream and of ``points``). ``points``: report the atoms holding at these time points instead of
    maximal intervals.

    Inside, times are integers in the unit ``1/scale`` (``scale`` the least common multiple of the
    denominators met so far, in the program, the horizon, the points and the stream; a fact with a
    new denominator rescales the state once), so that interval arithmetic never meets a ``Fraction``;
    results are given back in plain units.
    """

    def __init__(
        self,
        program: Normalised,
        *,
        outputs: Iterable[str] | None = None,
        horizon=None,
        points: Iterable | None = None,
        late: str = "drop",
    ) -> None:
        self.program = program
        self.rules = compile_rules(program)
        self.outputs = set(program.derived() if outputs is None else outputs)
        self.points = sorted(set(points)) if points is not None else None
        self._next_point = 0
        self.late_policy = late
        self.late = 0
        self.facts_read = 0
        self.store: dict[str, dict[tuple, list[Interval]]] = {}
        self.future: set[Key] = set()
        self.frontier = -INF  # the model is final on (−∞, frontier] (closed) or (−∞, frontier)
        self.closed = True  # (at −∞ the first slice is open on the left either way)
        self.read_lo = None
        self.greatest = -INF
        self._delta: dict[str, dict[tuple, list[Interval]]] | None = None
        self._emitted: dict[Key, int] = {}
        self._indexes: dict[str, dict[tuple, dict[tuple, set[tuple]]]] = {}  # pred -> positions -> index
        self._by_body: dict[str, list] = {}
        self._since_right: dict[str, list[Since | SincePairs]] = {}
        # Since rule -> left args -> right args -> [tag lo, tag lc, head args, coalesced intervals]
        self._carries: dict[int, dict[tuple, dict[tuple, list]]] = {}
        self._since_rules: dict[int, Since | SincePairs] = {}
        for rule in self.rules:
            if isinstance(rule, Join):
                preds = {p for p, _ in rule.body}
            elif isinstance(rule, Op):
                preds = {rule.body[0]}
            else:  # Since, SincePairs
                preds = {rule.left[0], rule.right[0]}
                self._since_right.setdefault(rule.right[0], []).append(rule)
                self._carries[id(rule)] = {}
                self._since_rules[id(rule)] = rule
            for p in preds:
                self._by_body.setdefault(p, []).append(rule)
        self.peak_intervals = 0
        self.scale = 1
        self.horizon = self._points = None
        scale = 1
        for rule in self.rules:
            if rule.rho0 is not None:
                scale = math.lcm(scale, denominator(rule.rho0[0]), denominator(rule.rho0[1]))
        for t in (horizon, *(self.points or ())):
            if t is not None:
                scale = math.lcm(scale, denominator(t))
        self._rescale(scale)
        self.horizon = None if horizon is None else to_unit(horizon, self.scale)
        self._points = None if self.points is None else [to_unit(p, self.scale) for p in self.points]

    # ---------------------------------------------------------------- time unit
    def _rescale(self, scale: int) -> None:
        """Move every time of the state to the unit ``1/scale`` (a multiple of the current scale)."""
        factor = scale // self.scale
        self.scale = scale
        rescale(self.rules, scale)
        if factor == 1:
            return
        for table in self.store.values():
            for args, ivs in table.items():
                table[args] = [(iv[0] * factor, iv[1] * factor, iv[2], iv[3]) for iv in ivs]
        for carries in self._carries.values():
            for by_right in carries.values():
                for carry in by_right.values():
                    carry[0] *= factor
                    carry[3] = [(iv[0] * factor, iv[1] * factor, iv[2], iv[3]) for iv in carry[3]]
        self.frontier *= factor
        self.greatest *= factor
        if self.read_lo is not None:
            self.read_lo *= factor
        if self.horizon is not None:
            self.horizon *= factor
        if self._points is not None:
            self._points = [p * factor for p in self._points]

    def in_unit(self, iv: Interval) -> Interval:
        """A stream fact's interval in the engine's unit (rescaling the state for a new denominator)."""
        lo, hi, lc, hc = iv
        scale = self.scale
        if type(lo) is int and type(hi) is int:
            return iv if scale == 1 else (lo * scale, hi * scale, lc, hc)
        need = math.lcm(scale, denominator(lo), denominator(hi))
        if need != scale:
            self._rescale(need)
            scale = need
        return (to_unit(lo, scale), to_unit(hi, scale), lc, hc)

    def _out(self, iv: Interval) -> Interval:
        scale = self.scale
        if scale == 1:
            return iv
        return (from_unit(iv[0], scale), from_unit(iv[1], scale), iv[2], iv[3])

    # ---------------------------------------------------------------- input
    def push(self, pred: str, args: tuple, iv: Interval, position=None) -> list:
        """Add a stream fact ``pred(args)@iv``; returns the results that became final (possibly none)."""
        iv = self.in_unit(iv)
        lo = iv[0]
        results: list = []
        if self.read_lo is not None and lo < self.read_lo:
            self.late += 1
            if self.late_policy == "fail":
                raise LateElementError(
                    f"late fact {format_atom(pred, args)} starting at {from_unit(lo, self.scale)}: the "
                    f"stream had reached {from_unit(self.read_lo, self.scale)} (facts must come in the "
                    "order of their left ends)",
                    position,
                )
            return results
        if self.horizon is not None and (lo > self.horizon or (lo == self.horizon and not iv[2])):
            return results
        if self.read_lo is None or lo > self.read_lo:
            if self.read_lo is not None:  # every fact starts at lo or later: (−∞, lo) is final
                results = self._step(lo, False)
            self.read_lo = lo
        self.facts_read += 1
        if lo > self.greatest:
            self.greatest = lo
        if iv[1] != INF and iv[1] > self.greatest:
            self.greatest = iv[1]
        self._insert(pred, args, iv)
        return results

    def advance(self, time) -> list:
        """The stream has reached ``time`` without a fact there: every fact still to come starts at
        ``time`` or later (one that starts before is late), so the model on ``(−∞, time)`` is final, as
        when a fact starting at ``time`` is pushed (a fact of another engine's, when several engines share
        one stream's clock); returns the results that became final (as :meth:`push`)."""
        lo = self.in_unit((time, time, True, True))[0]
        if self.horizon is not None and lo > self.horizon:
            return []
        if self.read_lo is not None and lo <= self.read_lo:
            return []
        results = self._step(lo, False) if self.read_lo is not None else []
        self.read_lo = lo
        return results

    def finish(self) -> list:
        """The end of the stream: close the model up to the horizon and report everything left."""
        horizon = self.horizon
        if horizon is None:
            horizon = self.greatest
            if self._points:
                horizon = max(horizon, self._points[-1])
            if horizon == -INF:
                return []
            self.horizon = horizon
        if horizon > self.frontier or (horizon == self.frontier and not self.closed):
            results = self._step(horizon, True)
        else:
            results = []
        if self.points is None:
            final = []
            cap = (-INF, horizon, False, True)
            out = self._out
            for pred in sorted(self.outputs):
                for args, ivs in self.store.get(pred, {}).items():
                    for iv in ivs[self._emitted.get((pred, args), 0) :]:
                        iv = intersect(iv, cap)
                        if iv is not None:
                            final.append((pred, args, out(iv)))
            if final:
                shown = from_unit(horizon, self.scale)
                if results and results[-1][0] == shown:
                    results[-1] = (shown, results[-1][1] + final)
                else:
                    results.append((shown, final))
        return results

    # ---------------------------------------------------------------- store
    def _insert(self, pred: str, args: tuple, iv: Interval) -> None:
        horizon = self.horizon
        if horizon is not None and iv[1] >= horizon:
            iv = intersect(iv, (-INF, horizon, False, True))
            if iv is None:
                return
        table = self.store.get(pred)
        if table is None:
            table = self.store[pred] = {}
        old = table.get(args)
        if old is None:
            table[args] = [iv]
            new = [iv]
            indexes = self._indexes.get(pred)
            if indexes:
                for positions, index in indexes.items():
                    if len(args) > positions[-1]:  # (a predicate may occur with several arities)
                        index.setdefault(tuple([args[i] for i in positions]), set()).add(args)
        else:
            last = old[-1]
            if last[1] < iv[0] or (last[1] == iv[0] and not (last[3] or iv[2])):  # after the rest
                old.append(iv)
                new = [iv]
            elif iv[0] > last[0] or (iv[0] == last[0] and (last[2] or not iv[2])):  # starts in the last
                if iv[1] < last[1] or (iv[1] == last[1] and (last[3] or not iv[3])):
                    return  # nothing new
                old[-1] = (last[0], iv[1], last[2], iv[3])
                new = [(last[1], iv[1], not last[3], iv[3])]
            else:
                merged, new = add(old, iv)
                if not new:
                    return
                table[args] = merged
        delta = self._delta
        if delta is None:  # a stream fact, between slices: released when its slice comes
            self.future.add((pred, args))
            return
        cut = self._slice
        for part in new:
            visible = intersect(part, cut)
            if visible is not None:
                facts = delta.get(pred)
                if facts is None:
                    facts = delta[pred] = {}
                parts = facts.get(args)
                if parts is None:
                    facts[args] = [visible]
                else:
                    parts.append(visible)
            if not _within(part, cut[1], cut[3]):
                self.future.add((pred, args))

    def _candidates(self, pred: str, positions: tuple, key: tuple, table: dict) -> list:
        """The ground atoms of ``pred`` with the values ``key`` at ``positions`` (through an index)."""
        if not positions:
            return list(table)
        indexes = self._indexes.get(pred)
        if indexes is None:
            indexes = self._indexes[pred] = {}
        index = indexes.get(positions)
        if index is None:
            index = indexes[positions] = {}
            last = positions[-1]
            for args in table:
                if len(args) > last:
                    index.setdefault(tuple([args[i] for i in positions]), set()).add(args)
        return list(index.get(key, ()))

    def _lookup(self, pred: str, terms: tuple, binding: dict) -> Iterable[tuple]:
        table = self.store.get(pred)
        if not table:
            return ()
        positions = tuple(i for i, t in enumerate(terms) if type(t) is not Var or t in binding)
        key = tuple(binding[terms[i]] if type(terms[i]) is Var else terms[i] for i in positions)
        if len(positions) == len(terms):
            return (key,) if key in table else ()
        return self._candidates(pred, positions, key, table)

    def _containing(self, pred: str, args: tuple, part: Interval) -> Interval | None:
        """The maximal interval of ``pred(args)`` holding ``part``, cut at the slice's end."""
        for iv in self.store[pred][args]:
            if iv[0] <= part[0] and iv[1] >= part[1]:
                return intersect(iv, self._visible)
        return None  # pragma: no cover - parts always lie in a stored interval

    # ---------------------------------------------------------------- slices
    def _step(self, end, closed: bool) -> list:
        """Close the slice from the frontier to ``end`` (included if ``closed``); returns the results
        that became final."""
        start = self.frontier
        cut = self._slice = (start, end, not self.closed and start != -INF, closed)
        self._visible = (-INF, end, False, closed)
        delta: dict[str, dict[tuple, list[Interval]]] = {}
        store = self.store
        done = []
        for key in self.future:
            pred, args = key
            ivs = store[pred].get(args)
            if ivs is None:
                done.append(key)
                continue
            for iv in ivs:
                if iv[1] < start:
                    continue
                if iv[0] > end:
                    break
                part = intersect(iv, cut)
                if part is not None:
                    facts = delta.get(pred)
                    if facts is None:
                        facts = delta[pred] = {}
                    facts.setdefault(args, []).append(part)
            if _within(ivs[-1], end, closed):
                done.append(key)
        self.future.difference_update(done)
        while delta:
            self._delta = {}
            for pred, facts in delta.items():
                for rule in self._by_body.get(pred, ()):
                    self._apply(rule, pred, facts)
            delta = self._delta
        self._delta = None
        self.frontier, self.closed = end, closed
        results = self._report(end, closed)
        self._forget(end, closed)
        return results

    def _apply(self, rule, pred: str, facts: dict) -> None:
        insert = self._insert
        if type(rule) is Op:
            project = rule.project
            hpred = rule.head
            rho = rule.rho
            if rule.kind == "diamond":
                for args, parts in facts.items():
                    hargs = project(args)
                    if hargs is not None:
                        for part in parts:
                            insert(hpred, hargs, shift(part, rho))
                return
            for args, parts in facts.items():
                hargs = project(args)
                if hargs is None:
                    continue
                done = set()
                for part in parts:
                    whole = self._containing(pred, args, part)
                    if whole is None or whole in done:
                        continue
                    done.add(whole)
                    out = box(whole, rho)
                    if out is not None:
                        insert(hpred, hargs, out)
        elif type(rule) is Join:
            join = self._join
            for i, (p, _) in enumerate(rule.body):
                if p != pred:
                    continue
                arity, consts, fills, checks = rule.entries[i]
                plan = rule.plans[i]
                slots = [None] * rule.size
                for args, parts in facts.items():
                    if len(args) != arity:
                        continue
                    if consts and any(args[k] != c for k, c in consts):
                        continue
                    if checks and any(args[k] != args[m] for k, m in checks):
                        continue
                    for slot, k in fills:
                        slots[slot] = args[k]
                    for part in parts:
                        join(rule, plan, 0, slots, part)
        elif type(rule) is Since:
            self._apply_since(rule, pred, facts)
        else:
            self._apply_pairs(rule, pred, facts)

    def _join(self, rule: Join, plan: list, k: int, slots: list, current: Interval) -> None:
        store = self.store
        n = len(plan)
        while k < n:  # atoms with every argument known: one ground atom each, no recursion for one interval
            step = plan[k]
            table = store.get(step.pred)
            if not table:
                return
            if not step.full:
                break
            ivs = table.get(step.key(slots))
            if ivs is None:
                return
            if len(ivs) == 1:
                current = intersect(ivs[0], current)
                if current is None:
                    return
                k += 1
                continue
            clo, chi = current[0], current[1]
            for iv in ivs:
                if iv[0] > chi:
                    break
                if iv[1] >= clo:
                    both = intersect(iv, current)
                    if both is not None:
                        self._join(rule, plan, k + 1, slots, both)
            return
        else:
            hpred, build = rule.head
            out = current if rule.rho is None else shift(current, rule.rho)
            self._insert(hpred, build(slots), out)
            return
        arity, fills, checks = step.arity, step.fills, step.checks
        clo, chi = current[0], current[1]
        for args in self._candidates(step.pred, step.positions, step.key(slots), table):
            if len(args) != arity:
                continue
            if checks and any(args[i] != args[m] for i, m in checks):
                continue
            for slot, i in fills:
                slots[slot] = args[i]
            for iv in table[args]:
                if iv[0] > chi:
                    break
                if iv[1] >= clo:
                    both = intersect(iv, current)
                    if both is not None:
                        self._join(rule, plan, k + 1, slots, both)

    def _apply_since(self, rule: Since, pred: str, facts: dict) -> None:
        hpred = rule.head
        (lpred, lterms), (rpred, rterms) = rule.left, rule.right
        rho = rule.rho
        visible = self._visible
        if pred == rpred:
            for args, parts in facts.items():
                hargs = rule.head_of_right(args)
                if hargs is None:
                    continue
                largs = rule.left_of_right(args)
                stored = self.store.get(lpred, {}).get(largs, ())
                lefts = [k for k in (intersect(k, visible) for k in stored) if k]
                done = set()
                for part in parts:
                    j = self._containing(rpred, args, part)
                    if j is None or j in done:
                        continue
                    done.add(j)
                    self._since_out(hpred, hargs, j, lefts, rho)
        if pred == lpred:
            for largs, parts in facts.items():
                b = match(lterms, largs, {})
                if b is None:
                    continue
                ks = set()
                for part in parts:
                    k = self._containing(lpred, largs, part)
                    if k is not None:
                        ks.add(k)
                for args in self._lookup(rpred, rterms, b):
                    hargs = rule.head_of_right(args)
                    if hargs is None or match(rterms, args, b) is None:
                        continue
                    for j in self.store[rpred][args]:
                        j = intersect(j, visible)
                        if j is None:
                            continue
                        for k in ks:
                            out = since(j, k, rho)
                            if out is not None:
                                self._insert(hpred, hargs, out)
                carries = self._carries[id(rule)].get(largs)
                if carries:
                    self._release(hpred, carries, ks)

    def _matching(self, pred: str, positions: tuple, key: tuple, arity: int) -> list[tuple]:
        """The ground atoms of ``pred`` in the store with the values ``key`` at ``positions``."""
        table = self.store.get(pred)
        if not table:
            return []
        if len(positions) == arity:
            return [key] if key in table else []
        return self._candidates(pred, positions, key, table)

    def _apply_pairs(self, rule: SincePairs, pred: str, facts: dict) -> None:
        """``A S_ρ B`` with variables in A that B lacks: each new part of B (or of A) with every fact of
        A (of B) that agrees with it on the shared variables, as a pair (head arguments from both);
        what ended intervals of B can still give comes from the carries of each (left, right) pair."""
        hpred = rule.head
        (lpred, lterms), (rpred, rterms) = rule.left, rule.right
        rho = rule.rho
        visible = self._visible
        insert = self._insert
        head_of_pair = rule.head_of_pair
        if pred == rpred:
            positions, arity = rule.left_positions, len(lterms)
            for args, parts in facts.items():
                key = rule.left_key(args)
                if key is None:
                    continue
                lefts = self._matching(lpred, positions, key, arity)
                if not lefts:
                    continue
                js = []
                for part in parts:
                    j = self._containing(rpred, args, part)
                    if j is not None and j not in js:
                        js.append(j)
                table = self.store[lpred]
                for largs in lefts:
                    hargs = head_of_pair(args + largs)
                    if hargs is None:
                        continue
                    for k in table[largs]:
                        k = intersect(k, visible)
                        if k is None:
                            continue
                        for j in js:
                            out = since(j, k, rho)
                            if out is not None:
                                insert(hpred, hargs, out)
        if pred == lpred:
            positions, arity = rule.right_positions, len(rterms)
            carries = self._carries[id(rule)]
            for largs, parts in facts.items():
                key = rule.right_key(largs)
                if key is None:
                    continue
                ks = []
                for part in parts:
                    k = self._containing(lpred, largs, part)
                    if k is not None and k not in ks:
                        ks.append(k)
                rights = self._matching(rpred, positions, key, arity)
                if rights:
                    table = self.store[rpred]
                    for args in rights:
                        hargs = head_of_pair(args + largs)
                        if hargs is None:
                            continue
                        for j in table[args]:
                            j = intersect(j, visible)
                            if j is None:
                                continue
                            for k in ks:
                                out = since(j, k, rho)
                                if out is not None:
                                    insert(hpred, hargs, out)
                pending = carries.get(largs)
                if pending:
                    self._release(hpred, pending, ks)

    def _release(self, hpred: str, carries: dict, ks) -> None:
        """Give out the carries of one left atom tagged with a maximal interval in ``ks`` (one that grew),
        up to its end."""
        for k in ks:
            upto = (-INF, k[1], False, True)
            for lo, lc, hargs, pending in carries.values():
                if lo != k[0] or lc != k[2]:
                    continue
                for iv in pending:
                    out = intersect(iv, upto)
                    if out is None:
                        break
                    self._insert(hpred, hargs, out)

    def _since_out(self, hpred, hargs, j, lefts, rho) -> None:
        if covers_zero(rho):
            self._insert(hpred, hargs, j)
        for k in lefts:
            out = since(j, k, rho)
            if out is not None:
                self._insert(hpred, hargs, out)

    # ---------------------------------------------------------------- output and forgetting
    def _report(self, end, closed: bool) -> list:
        results = []
        if self.points is not None:
            points = self._points
            while self._next_point < len(points) and (
                points[self._next_point] < end or (closed and points[self._next_point] == end)
            ):
                p = points[self._next_point]
                shown = self.points[self._next_point]
                self._next_point += 1
                atoms = []
                for pred in self.outputs:
                    for args, ivs in self.store.get(pred, {}).items():
                        for iv in ivs:
                            if iv[0] > p:
                                break
                            if (iv[0] < p or iv[2]) and (p < iv[1] or (p == iv[1] and iv[3])):
                                atoms.append((pred, args))
                                break
                results.append((shown, atoms))
            return results
        final = []
        out = self._out
        for pred in self.outputs:
            for args, ivs in self.store.get(pred, {}).items():
                key = (pred, args)
                done = self._emitted.get(key, 0)
                n = done
                while n < len(ivs):
                    iv = ivs[n]
                    if _ended(iv, end, closed):
                        final.append((pred, args, out(iv)))
                        n += 1
                    else:
                        break
                if n != done:
                    self._emitted[key] = n
        if final:
            results.append((from_unit(end, self.scale), final))
        return results

    def _forget(self, end, closed: bool) -> None:
        count = 0
        for pred, table in self.store.items():
            fold_rules = self._since_right.get(pred)
            dead = []
            for args, ivs in table.items():
                hi = ivs[0][1]
                if hi > end or (hi == end and (not closed or ivs[0][3])):  # the first has not ended
                    count += len(ivs)
                    continue
                n = 0
                while n < len(ivs):
                    iv = ivs[n]
                    if not _ended(iv, end, closed):
                        break
                    if fold_rules:
                        for rule in fold_rules:
                            self._fold(rule, args, iv, end, closed)
                    n += 1
                if n:
                    key = (pred, args)
                    if key in self._emitted:
                        left = self._emitted[key] - n
                        if left > 0:
                            self._emitted[key] = left
                        else:
                            del self._emitted[key]
                    if n == len(ivs):
                        dead.append(args)
                        continue
                    del ivs[:n]
                count += len(ivs)
            if not dead:
                continue
            indexes = self._indexes.get(pred, {})
            for args in dead:
                del table[args]
                for positions, index in indexes.items():
                    if len(args) <= positions[-1]:
                        continue
                    k = tuple([args[i] for i in positions])
                    members = index.get(k)
                    if members is not None:
                        members.discard(args)
                        if not members:
                            del index[k]
        count += self._trim_carries(end, closed)
        if count > self.peak_intervals:
            self.peak_intervals = count

    def stored_intervals(self) -> int:
        """How many intervals the engine holds now: the maximal intervals of every ground atom in its
        store (those reaching the frontier or the future, and the current slice's), and the pending
        intervals of ``Since`` carries. (``peak_intervals`` is the greatest such count seen after a
        slice.) docs/mtl.md bounds it by the program and the objects, never by the stream's length."""
        count = sum(len(ivs) for table in self.store.values() for ivs in table.values())
        for carries in self._carries.values():
            for by_right in carries.values():
                count += sum(len(carry[3]) for carry in by_right.values())
        return count

    def _left_reaching(self, rule: Since | SincePairs, largs: tuple, end, closed: bool) -> Interval | None:
        """The left atom ``largs``'s maximal interval that has not ended at the frontier and starts
        before it (the only one a witness before the frontier can use), or ``None``."""
        ivs = self.store.get(rule.left[0], {}).get(largs)
        if ivs:
            for k in ivs:
                if not _ended(k, end, closed):
                    return k if k[0] < end else None
        return None

    def _fold(self, rule: Since | SincePairs, args: tuple, j: Interval, end, closed: bool) -> None:
        """Keep what an ended interval ``j`` of the right atom ``args`` can still give, before it is
        dropped. ``A S_ρ B`` holds at t if B holds at some t' with t − t' ∈ ρ and A on (t', t). A t
        not yet final (after the frontier F) with t' in ``j`` (t' < F, as ``j`` ended) needs A on
        (t', t), across F: so the maximal interval k of A that reaches F starts at k.lo ≤ t' (A need
        not hold at t' itself), and t ≤ k.hi. The results ``j`` can still give are thus
        ``(j ∩ [k.lo, ∞)) ⊕ ρ`` beyond F, up to k.hi as k grows: that set is the carry, coalesced
        with the other ended intervals' and tagged with k's start. It is given out when k grows
        (:meth:`_release`) and dropped when k ends. Trimmed to what is not final, it lies in
        (F, F + b] for ρ = ⟨a, b⟩; each piece but the first is at least b − a long, so with a < b there
        are at most 1 + b/(b − a) pieces however dense the points (an unbounded ρ gives one).
        For :class:`SincePairs` the same holds of each left atom that agrees with ``args``: one carry per
        (left atom, right atom) pair."""
        if type(rule) is Since:
            hargs = rule.head_of_right(args)
            if hargs is not None:
                self._fold_pair(rule, args, rule.left_of_right(args), hargs, j, end, closed)
            return
        key = rule.left_key(args)
        if key is None:
            return
        head_of_pair = rule.head_of_pair
        for largs in self._matching(rule.left[0], rule.left_positions, key, len(rule.left[1])):
            hargs = head_of_pair(args + largs)
            if hargs is not None:
                self._fold_pair(rule, args, largs, hargs, j, end, closed)

    def _fold_pair(
        self,
        rule: Since | SincePairs,
        args: tuple,
        largs: tuple,
        hargs: tuple,
        j: Interval,
        end,
        closed: bool,
    ) -> None:
        """:meth:`_fold` for the right atom ``args`` and the left atom ``largs``."""
        k = self._left_reaching(rule, largs, end, closed)
        if k is None:
            return
        part = intersect(j, (k[0], INF, k[0] != -INF, False))
        if part is None:
            return
        out = intersect(shift(part, rule.rho), (end, INF, not closed, False))
        if out is None:
            return
        by_right = self._carries[id(rule)].setdefault(largs, {})
        carry = by_right.get(args)
        if carry is None or carry[0] != k[0] or carry[1] != k[2]:
            by_right[args] = [k[0], k[2], hargs, [out]]
        else:
            carry[3] = add(carry[3], out)[0]

    def _trim_carries(self, end, closed: bool) -> int:
        """Drop the carries whose left interval has ended and the parts of the others that are final;
        returns how many intervals the carries keep."""
        count = 0
        after = (end, INF, not closed, False)
        for rid, carries in self._carries.items():
            if not carries:
                continue
            rule = self._since_rules[rid]
            dead_left = []
            for largs, by_right in carries.items():
                k = self._left_reaching(rule, largs, end, closed)
                if k is None:
                    dead_left.append(largs)
                    continue
                dead = []
                for args, carry in by_right.items():
                    if carry[0] != k[0] or carry[1] != k[2]:
                        dead.append(args)
                        continue
                    pending = carry[3]
                    first = pending[0]
                    if first[0] < end or (first[0] == end and first[2] and closed):
                        pending = [p for p in (intersect(iv, after) for iv in pending) if p is not None]
                        if not pending:
                            dead.append(args)
                            continue
                        carry[3] = pending
                    count += len(pending)
                for args in dead:
                    del by_right[args]
                if not by_right:
                    dead_left.append(largs)
            for largs in dead_left:
                del carries[largs]
        return count
