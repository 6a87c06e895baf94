"""The streaming DatalogMTL engine: the least model of a forward-propagating program, slice by slice.

Facts arrive in the order of their left ends. When a fact starting at ``t`` arrives and every earlier
fact started before ``t``, nothing can change the model on ``(−∞, t)`` any more (forward propagation),
so the engine closes the slice ``[F, t)`` (F the previous frontier; the last slice, at the end of the
stream, is ``[F, H]``), as the paper's Algorithm 1 does: rules are applied semi-naively
and derive only within the slice; what a rule derives beyond it (a ``⊞ρ`` head, a ``◇⁻ρ`` shift, a long
input interval) is stored whole and released slice by slice, so recursion never runs ahead of the
stream. Each predicate's facts are kept per ground atom as coalesced maximal intervals.

Forgetting: an interval that ended before the frontier is final; it is reported (output predicates)
and dropped, except on the right of a ``Since`` while a left-side interval can still use it. Joins need
facts at the same time point, ``◇⁻ρ`` and ``⊞ρ`` are applied once to each new interval, and ``⊟ρ`` and
``Since`` recompute only maximal intervals that grew: so memory holds the intervals that reach the
frontier or the future, never the stream's past. For a program with no punctual interval (the case of
the paper's Algorithm 6) that is also independent of how dense the timestamps are: a ``◇⁻[a,b]`` with
``a < b`` coalesces the shifts of close points into one interval, and isolated points are dropped as
soon as they are passed. Rational times are exact (``int`` or ``Fraction``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rsp.errors import LateElementError
from rsp.mtl.intervals import INF, Interval, add, box, covers_zero, intersect, shift, since
from rsp.mtl.model import Atom, Binary, Unary, Var, format_atom
from rsp.mtl.normalise import Normalised

Key = tuple  # (pred, args)


@dataclass
class _Join:
    head: tuple
    rho: Interval | None
    body: list[tuple]  # (pred, terms)
    plans: list[list[tuple]] | None = None  # per delta position: the other atoms, with bound positions

    def __post_init__(self) -> None:
        """For each body atom read from the delta, the join order of the others (body order) and, for
        each, the argument positions already bound when it is looked up (constants and variables of
        the atoms before it)."""
        self.plans = []
        for i, (_, terms) in enumerate(self.body):
            bound = {t for t in terms if type(t) is Var}
            plan = []
            for j, (pred, other) in enumerate(self.body):
                if j == i:
                    continue
                positions = tuple(k for k, t in enumerate(other) if type(t) is not Var or t in bound)
                plan.append((pred, other, positions, len(positions) == len(other)))
                bound.update(t for t in other if type(t) is Var)
            self.plans.append(plan)


@dataclass
class _Op:
    kind: str  # "diamond" | "box"
    head: tuple
    rho: Interval
    body: tuple


@dataclass
class _Since:
    head: tuple
    rho: Interval
    left: tuple
    right: tuple


def _terms(atom: Atom) -> tuple:
    return (atom.pred, atom.args)


def _compile(program: Normalised) -> list:
    rules = []
    for rule in program.rules:
        head = rule.head
        rho = None
        if isinstance(head, Unary):
            rho, head = head.rho, head.sub
        if len(rule.body) == 1 and not isinstance(rule.body[0], Atom):
            (literal,) = rule.body
            if isinstance(literal, Binary):
                rules.append(_Since(_terms(head), literal.rho, _terms(literal.left), _terms(literal.right)))
            else:
                kind = "diamond" if literal.op == "Diamondminus" else "box"
                rules.append(_Op(kind, _terms(head), literal.rho, _terms(literal.sub)))
            continue
        rules.append(_Join(_terms(head), rho, [_terms(a) for a in rule.body]))
    return rules


def _match(terms: tuple, args: tuple, binding: dict) -> dict | None:
    if len(terms) != len(args):
        return None
    new = binding
    for term, value in zip(terms, args, strict=True):
        if type(term) is Var:
            bound = new.get(term)
            if bound is None:
                if new is binding:
                    new = dict(binding)
                new[term] = value
            elif bound != value:
                return None
        elif term != value:
            return None
    return new


def _within(iv: Interval, end, closed: bool) -> bool:
    """Whether ``iv`` lies in ``(−∞, end]`` (``closed``) or ``(−∞, end)``."""
    return iv[1] < end or (iv[1] == end and (closed or not iv[3]))


def _ended(iv: Interval, end, closed: bool) -> bool:
    """Whether a maximal interval is final once the model is known on ``(−∞, end]`` (``closed``) or
    ``(−∞, end)``: it stops at a point where the model is known not to go on."""
    return iv[1] < end or (iv[1] == end and closed and not iv[3])


def _ground(terms: tuple, binding: dict) -> tuple:
    return tuple(binding[t] if type(t) is Var else t for t in terms)


class Engine:
    """Feed facts with :meth:`push` in the order of their left ends; read what became final from the
    return values of :meth:`push` and :meth:`finish`.

    ``outputs``: the predicates reported (default: those the user's rules derive). ``horizon``: the
    model is computed on ``(−∞, horizon]`` (``None``: up to the greatest finite time point of the
    stream and of ``points``). ``points``: report the atoms holding at these time points instead of
    maximal intervals.
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
        self.rules = _compile(program)
        self.outputs = set(program.derived() if outputs is None else outputs)
        self.horizon = horizon
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
        self._indexes: dict[tuple, dict[tuple, set[tuple]]] = {}
        self._by_body: dict[str, list] = {}
        self._since_right: dict[str, list[_Since]] = {}
        for rule in self.rules:
            if isinstance(rule, _Join):
                preds = {p for p, _ in rule.body}
            elif isinstance(rule, _Op):
                preds = {rule.body[0]}
            else:
                preds = {rule.left[0], rule.right[0]}
                self._since_right.setdefault(rule.right[0], []).append(rule)
            for p in preds:
                self._by_body.setdefault(p, []).append(rule)
        self.peak_intervals = 0

    # ---------------------------------------------------------------- input
    def push(self, pred: str, args: tuple, iv: Interval, position=None) -> list:
        """Add a stream fact ``pred(args)@iv``; returns the results that became final (possibly none)."""
        lo = iv[0]
        results: list = []
        if self.read_lo is not None and lo < self.read_lo:
            self.late += 1
            if self.late_policy == "fail":
                raise LateElementError(
                    f"late fact {format_atom(pred, args)} starting at {lo}: the stream had reached "
                    f"{self.read_lo} (facts must come in the order of their left ends)",
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
        for end in (lo, iv[1]):
            if end != INF and end > self.greatest:
                self.greatest = end
        self._insert(pred, args, iv)
        return results

    def finish(self) -> list:
        """The end of the stream: close the model up to the horizon and report everything left."""
        horizon = self.horizon
        if horizon is None:
            horizon = self.greatest
            if self.points:
                horizon = max(horizon, self.points[-1])
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
            for pred in sorted(self.outputs):
                for args, ivs in self.store.get(pred, {}).items():
                    for iv in ivs[self._emitted.get((pred, args), 0) :]:
                        iv = intersect(iv, cap)
                        if iv is not None:
                            final.append((pred, args, iv))
            if final:
                if results and results[-1][0] == horizon:
                    results[-1] = (horizon, results[-1][1] + final)
                else:
                    results.append((horizon, final))
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
            for (p, positions), index in self._indexes.items():
                if p == pred:
                    index.setdefault(tuple(args[i] for i in positions), set()).add(args)
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
                delta.setdefault(pred, {}).setdefault(args, []).append(visible)
            if not _within(part, cut[1], cut[3]):
                self.future.add((pred, args))

    def _lookup(self, pred: str, terms: tuple, binding: dict) -> Iterable[tuple]:
        table = self.store.get(pred)
        if not table:
            return ()
        positions = tuple(i for i, t in enumerate(terms) if type(t) is not Var or t in binding)
        if len(positions) == len(terms):
            args = _ground(terms, binding)
            return (args,) if args in table else ()
        if not positions:
            return list(table)
        index = self._indexes.get((pred, positions))
        if index is None:
            index = self._indexes[(pred, positions)] = {}
            for args in table:
                index.setdefault(tuple(args[i] for i in positions), set()).add(args)
        key = tuple(binding[terms[i]] if type(terms[i]) is Var else terms[i] for i in positions)
        return list(index.get(key, ()))

    def _candidates(self, pred: str, terms: tuple, positions: tuple, binding: dict, table: dict) -> list:
        """The ground atoms of ``pred`` agreeing with ``binding`` on ``positions`` (through an index)."""
        if not positions:
            return list(table)
        index = self._indexes.get((pred, positions))
        if index is None:
            index = self._indexes[(pred, positions)] = {}
            for args in table:
                index.setdefault(tuple(args[i] for i in positions), set()).add(args)
        key = tuple(binding[terms[i]] if type(terms[i]) is Var else terms[i] for i in positions)
        return list(index.get(key, ()))

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
        self._slice = (start, end, not self.closed and start != -INF, closed)
        self._visible = (-INF, end, False, closed)
        delta: dict[str, dict[tuple, list[Interval]]] = {}
        for key in list(self.future):
            pred, args = key
            ivs = self.store[pred].get(args)
            if ivs is None:
                self.future.discard(key)
                continue
            for iv in ivs:
                part = intersect(iv, self._slice)
                if part is not None:
                    delta.setdefault(pred, {}).setdefault(args, []).append(part)
            if _within(ivs[-1], end, closed):
                self.future.discard(key)
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
        if isinstance(rule, _Op):
            terms = rule.body[1]
            hpred, hterms = rule.head
            for args, parts in facts.items():
                b = _match(terms, args, {})
                if b is None:
                    continue
                hargs = _ground(hterms, b)
                if rule.kind == "diamond":
                    for part in parts:
                        insert(hpred, hargs, shift(part, rule.rho))
                else:
                    done = set()
                    for part in parts:
                        whole = self._containing(pred, args, part)
                        if whole is None or whole in done:
                            continue
                        done.add(whole)
                        out = box(whole, rule.rho)
                        if out is not None:
                            insert(hpred, hargs, out)
        elif isinstance(rule, _Join):
            for i, (p, terms) in enumerate(rule.body):
                if p != pred:
                    continue
                rest = rule.plans[i]
                for args, parts in facts.items():
                    b = _match(terms, args, {})
                    if b is None:
                        continue
                    for part in parts:
                        self._join(rule, rest, b, part)
        else:
            self._apply_since(rule, pred, facts)

    def _join(self, rule: _Join, rest: list, binding: dict, current: Interval) -> None:
        if not rest:
            hpred, hterms = rule.head
            out = current if rule.rho is None else shift(current, rule.rho)
            self._insert(hpred, _ground(hterms, binding), out)
            return
        (pred, terms, positions, full), remaining = rest[0], rest[1:]
        table = self.store.get(pred)
        if not table:
            return
        if full:  # every argument known: one ground atom to look at
            args = _ground(terms, binding)
            candidates = (args,) if args in table else ()
        else:
            candidates = self._candidates(pred, terms, positions, binding, table)
        for args in candidates:
            b = binding if full else _match(terms, args, binding)
            if b is None:
                continue
            for iv in table[args]:
                if iv[0] > current[1]:
                    break
                both = intersect(iv, current)
                if both is not None:
                    self._join(rule, remaining, b, both)

    def _apply_since(self, rule: _Since, pred: str, facts: dict) -> None:
        hpred, hterms = rule.head
        (lpred, lterms), (rpred, rterms) = rule.left, rule.right
        rho = rule.rho
        visible = self._visible
        if pred == rpred:
            for args, parts in facts.items():
                b = _match(rterms, args, {})
                if b is None:
                    continue
                hargs = _ground(hterms, b)
                largs = _ground(lterms, b)
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
                b = _match(lterms, largs, {})
                if b is None:
                    continue
                ks = set()
                for part in parts:
                    k = self._containing(lpred, largs, part)
                    if k is not None:
                        ks.add(k)
                for args in self._lookup(rpred, rterms, b):
                    b2 = _match(rterms, args, b)
                    if b2 is None:
                        continue
                    hargs = _ground(hterms, b2)
                    for j in self.store[rpred][args]:
                        j = intersect(j, visible)
                        if j is None:
                            continue
                        for k in ks:
                            out = since(j, k, rho)
                            if out is not None:
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
            points = self.points
            while self._next_point < len(points) and (
                points[self._next_point] < end or (closed and points[self._next_point] == end)
            ):
                p = points[self._next_point]
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
                results.append((p, atoms))
            return results
        final = []
        for pred in self.outputs:
            for args, ivs in self.store.get(pred, {}).items():
                key = (pred, args)
                done = self._emitted.get(key, 0)
                n = done
                while n < len(ivs):
                    iv = ivs[n]
                    if _ended(iv, end, closed):
                        final.append((pred, args, iv))
                        n += 1
                    else:
                        break
                if n != done:
                    self._emitted[key] = n
        if final:
            results.append((end, final))
        return results

    def _forget(self, end, closed: bool) -> None:
        count = 0
        for pred, table in self.store.items():
            keep_rules = self._since_right.get(pred)
            dead = []
            for args, ivs in table.items():
                n = 0
                while n < len(ivs):
                    iv = ivs[n]
                    if not _ended(iv, end, closed):
                        break
                    if keep_rules and self._still_needed(keep_rules, args, iv, end):
                        break
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
            for args in dead:
                del table[args]
                for (p, positions), index in self._indexes.items():
                    if p == pred:
                        k = tuple(args[i] for i in positions)
                        members = index.get(k)
                        if members is not None:
                            members.discard(args)
                            if not members:
                                del index[k]
        if count > self.peak_intervals:
            self.peak_intervals = count

    def _still_needed(self, rules: list[_Since], args: tuple, j: Interval, end) -> bool:
        """Whether an ended interval ``j`` on the right of a Since may still give a result after ``end``:
        some left-side interval reaching the frontier started before ``j`` ended."""
        for rule in rules:
            if j[1] + rule.rho[1] < end:
                continue
            b = _match(rule.right[1], args, {})
            if b is None:
                continue
            largs = _ground(rule.left[1], b)
            for k in self.store.get(rule.left[0], {}).get(largs, ()):
                if k[0] <= j[1] and k[1] >= end:
                    return True
        return False
