"""The naive reference evaluator: LARS semantics computed straight from docs/lars-semantics.md, from
scratch at every time point, for differential testing of the incremental engine."""

from __future__ import annotations

from collections.abc import Iterator

from rsp.io.atoms import AtomStream, Element
from rsp.lars import CheckedProgram
from rsp.lars.model import (
    Atom,
    BinOp,
    Comparison,
    Constant,
    Expr,
    ExtAtom,
    Op,
    Rule,
    Term,
    Var,
    expr_variables,
    format_atom,
)

Fact = tuple[str, tuple[Constant, ...]]
Pair = tuple[Fact, int]  # (atom, s): "atom holds at time point s"
Subst = dict[str, Constant]
BackgroundFact = tuple[Fact, int | None]  # (atom, c) for "@c atom.", (atom, None) for "atom."

__all__ = ["evaluate", "evaluate_sets"]


# -- numbers, comparisons, arithmetic -----------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _time_point(value: object) -> int | None:
    """The integer time point ``value`` denotes, or None (non-numbers and non-integral numbers)."""
    if not _is_number(value) or not float(value).is_integer():  # type: ignore[arg-type]
        return None
    return int(value)  # type: ignore[arg-type]


def _arith(op: str, left: Constant, right: Constant) -> Constant | None:
    if not (_is_number(left) and _is_number(right)):
        return None
    if op == "+":
        return left + right  # type: ignore[operator]
    if op == "-":
        return left - right  # type: ignore[operator]
    if op == "*":
        return left * right  # type: ignore[operator]
    if right == 0:
        return None
    if isinstance(left, int) and isinstance(right, int) and left % right == 0:
        return left // right
    return left / right  # type: ignore[operator]


def _value(expr: Expr, sub: Subst) -> Constant | None:
    """The value of ``expr`` under ``sub`` (all its variables bound), or None when arithmetic has none."""
    if isinstance(expr, Var):
        return sub[expr.name]
    if isinstance(expr, BinOp):
        left, right = _value(expr.left, sub), _value(expr.right, sub)
        if left is None or right is None:
            return None
        return _arith(expr.op, left, right)
    return expr


def _compare(op: str, left: Constant, right: Constant) -> bool:
    """``left op right``: numbers numerically, other constants by identity (=) or by their text (<)."""
    if _is_number(left) != _is_number(right):  # a number and a non-number: never equal, never ordered
        return op == "!="
    if op in ("=", "!="):
        return (left == right) == (op == "=")
    if not _is_number(left):
        left, right = str(left), str(right)
    if op == "<":
        return left < right  # type: ignore[operator]
    if op == "<=":
        return left <= right  # type: ignore[operator]
    if op == ">":
        return left > right  # type: ignore[operator]
    return left >= right  # type: ignore[operator]


# -- matching ----------------------------------------------------------------------------------------


def _unify(terms: tuple[Term, ...], values: tuple[Constant, ...], sub: Subst) -> Subst | None:
    """Extend ``sub`` so that ``terms`` equal ``values`` (constants compared as by ``=``), or None."""
    if len(terms) != len(values):
        return None
    out = dict(sub)
    for term, value in zip(terms, values, strict=True):
        if isinstance(term, Var):
            if term.name not in out:
                out[term.name] = value
                continue
            term = out[term.name]
        if not _compare("=", term, value):
            return None
    return out


def _bind_time(time: Var | int | None, s: int, sub: Subst) -> Subst | None:
    """Extend ``sub`` so that the ``@`` time term ``time`` denotes time point ``s``, or None."""
    if isinstance(time, Var):
        if time.name not in sub:
            return {**sub, time.name: s}
        return sub if _time_point(sub[time.name]) == s else None
    return sub if _time_point(time) == s else None


class _Context:
    """M_t being built at time t, with what the tuple windows need (stream elements, background facts)."""

    def __init__(self, t1: int, t: int, elements: list[Element], facts: list[BackgroundFact]) -> None:
        self.t1, self.t = t1, t
        self.elements = [e for e in elements if e[0] <= t]
        self.facts = facts
        self._tuple_windows: dict[tuple[int, Op], tuple[range, set[Pair]]] = {}
        self.pairs: set[Pair] = {((pred, args), time) for time, pred, args in self.elements}
        for fact, at in facts:
            if at is None:
                self.pairs |= {(fact, s) for s in range(t1, t + 1)}
            elif t1 <= at <= t:
                self.pairs.add((fact, at))

    def window(self, ext: ExtAtom) -> tuple[range, set[Pair]]:
        """The time points the extended atom looks at and the (atom, s) pairs visible to it."""
        t1, t, window = self.t1, self.t, ext.window
        if ext.op is Op.PLAIN:
            points = range(t, t + 1)
        elif window is None or window.tuple_based:
            points = range(t1, t + 1)
        else:
            points = range(max(t1, t - window.size), t + 1)
        if window is None or not window.tuple_based:
            return points, self.pairs
        # Tuple window: W = the last n elements with time <= t; its range is [t', t]. It sees stream
        # elements and background facts only, fixed for this t: computed once per (n, operator).
        cached = self._tuple_windows.get((window.size, ext.op))
        if cached is not None:
            return cached
        n = window.size
        last = self.elements[max(0, len(self.elements) - n) :] if n > 0 else []
        if len(self.elements) < n:
            start = t1
        else:
            start = last[0][0] if last else t  # [#0]: W is empty; the range is taken as [t, t]
        visible = {((pred, args), time) for time, pred, args in last}
        for fact, at in self.facts:
            visible |= {(fact, s) for s in range(start, t + 1) if at is None or at == s}
        if ext.op in (Op.BOX, Op.AT):
            points = range(start, t + 1)
        self._tuple_windows[(window.size, ext.op)] = points, visible
        return points, visible

    def matches(self, ext: ExtAtom, sub: Subst) -> Iterator[Subst]:
        """Every extension of ``sub`` under which the (non-negated) extended atom holds at t."""
        points, visible = self.window(ext)
        atom = ext.atom
        seen: set[frozenset] = set()
        if ext.op in (Op.PLAIN, Op.DIAMOND, Op.AT):
            for (pred, args), s in visible:
                if pred != atom.pred or s not in points:
                    continue
                new = _unify(atom.args, args, sub)
                if new is not None and ext.op is Op.AT:
                    new = _bind_time(ext.time, s, new)
                if new is not None and (key := frozenset(new.items())) not in seen:
                    seen.add(key)
                    yield new
            return
        # BOX: candidates come from the atoms at any covered point, then every point must hold.
        candidates = {args for (pred, args), s in visible if pred == atom.pred and s in points}
        for args in candidates:
            new = _unify(atom.args, args, sub)
            if new is None or (key := frozenset(new.items())) in seen:
                continue
            ground = tuple(new[a.name] if isinstance(a, Var) else a for a in atom.args)
            if all(((atom.pred, ground), s) in visible for s in points):
                seen.add(key)
                yield new


# -- rules ---------------------------------------------------------------------------------------------


def _assignment_target(comp: Comparison, sub: Subst) -> tuple[str, Expr] | None:
    if comp.op != "=":
        return None
    for side, other in ((comp.left, comp.right), (comp.right, comp.left)):
        if isinstance(side, Var) and side.name not in sub and expr_variables(other) <= sub.keys():
            return side.name, other
    return None


def _finish(rule: Rule, sub: Subst, ctx: _Context) -> Subst | None:
    """Apply comparisons and assignments, then negated atoms, to a substitution from the positive atoms."""
    pending = list(rule.comparisons())
    while pending:
        progress = False
        for comp in list(pending):
            target = _assignment_target(comp, sub)
            if target is None and not comp.variables() <= sub.keys():
                continue
            pending.remove(comp)
            progress = True
            if target is not None:
                value = _value(target[1], sub)
                if value is None:
                    return None
                sub = {**sub, target[0]: value}
                continue
            left, right = _value(comp.left, sub), _value(comp.right, sub)
            if left is None or right is None or not _compare(comp.op, left, right):
                return None
        if not progress:
            raise AssertionError(f"unsafe rule reached the evaluator: {rule}")
    for guard in rule.guards():
        if not guard.test(*(sub[a.name] for a in guard.args)):
            return None
    for ext in rule.negative_atoms():
        if next(ctx.matches(ext, sub), None) is not None:
            return None
    return sub


def _instances(rule: Rule, ctx: _Context) -> Iterator[Subst]:
    """The substitutions under which the body holds, restricted to the variables that matter after the
    positive atoms (a variable met only in atoms already matched is existential: dropping it, and the
    duplicates that leaves, changes no head and no later test, and keeps cross products small)."""
    positives = rule.positive_atoms()
    rest = rule.head.variables().union(
        *(lit.variables() for lit in rule.body if not (isinstance(lit, ExtAtom) and not lit.negated))
    )
    subs: list[Subst] = [{}]
    for i, ext in enumerate(positives):
        needed = rest.union(*(later.variables() for later in positives[i + 1 :]))
        projected: dict[frozenset, Subst] = {}
        for sub in subs:
            for new in ctx.matches(ext, sub):
                kept = {name: value for name, value in new.items() if name in needed}
                projected.setdefault(frozenset(kept.items()), kept)
        subs = list(projected.values())
    for sub in subs:
        done = _finish(rule, sub, ctx)
        if done is not None:
            yield done


def _head_pair(rule: Rule, sub: Subst, ctx: _Context) -> Pair | None:
    atom: Atom = rule.head.atom
    args = tuple(sub[a.name] if isinstance(a, Var) else a for a in atom.args)
    time = rule.head.time
    if time is None:
        return (atom.pred, args), ctx.t
    s = _time_point(sub[time.name] if isinstance(time, Var) else time)
    if s is None or not ctx.t1 <= s <= ctx.t:
        return None
    return (atom.pred, args), s


# -- the answer stream -----------------------------------------------------------------------------------


def evaluate_sets(program: CheckedProgram, stream: AtomStream) -> list[tuple[int, set[tuple[str, tuple]]]]:
    """For every t of the timeline, the output atoms ``(pred, args)`` at t (intensional predicates only)."""
    if stream.start is None or stream.end is None:
        return []
    facts: list[BackgroundFact] = []
    for rule in program.program.facts:
        atom, time = rule.head.atom, rule.head.time
        if time is None:
            facts.append(((atom.pred, atom.args), None))  # type: ignore[arg-type]
        elif _time_point(time) is not None:
            facts.append(((atom.pred, atom.args), _time_point(time)))  # type: ignore[arg-type]
    intensional = program.intensional
    result: list[tuple[int, set[tuple[str, tuple]]]] = []
    for t in range(stream.start, stream.end + 1):
        ctx = _Context(stream.start, t, stream.elements, facts)
        for stratum in program.strata:
            changed = True
            while changed:
                changed = False
                for rule in stratum.rules:
                    for sub in list(_instances(rule, ctx)):
                        pair = _head_pair(rule, sub, ctx)
                        if pair is not None and pair not in ctx.pairs:
                            ctx.pairs.add(pair)
                            changed = True
        # a predicate is its name and its arity: p(a) is not an atom of an intensional p/2
        result.append(
            (t, {fact for fact, s in ctx.pairs if s == t and (fact[0], len(fact[1])) in intensional})
        )
    return result


def evaluate(program: CheckedProgram, stream: AtomStream) -> list[tuple[int, list[str]]]:
    """For every t of the timeline, the sorted output atoms at t, formatted as ``pred(a,b)``."""
    return [(t, sorted(format_atom(p, a) for p, a in atoms)) for t, atoms in evaluate_sets(program, stream)]
