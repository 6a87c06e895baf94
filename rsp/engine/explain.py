"""Derivations on demand: why an atom holds at the current time point — the rule (with its origin),
the ground body instance, the stream atoms with their time points, and the derivations of the
intensional premises. Nothing is recorded while evaluating: the engine's tables are searched when
an explanation is asked for, so tracing costs nothing on the hot path."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rsp.engine.plan import _ARITH, _COMPARE, RUNTIME
from rsp.engine.store import NEVER
from rsp.lars.model import Atom, BinOp, Comparison, ExtAtom, Rule, Var, format_atom, format_expr
from rsp.lars.safety import assignment_target


@dataclass
class Premise:
    """One ground body literal: its text, the time points of the atoms that support it, and the
    derivation of each supporting intensional atom."""

    text: str
    times: list[int] = field(default_factory=list)
    atom: tuple[str, tuple] | None = None
    """(pred, args) of a positive body atom; None for negated atoms and comparisons."""
    derivations: list[Derivation] = field(default_factory=list)
    values: dict[str, object] | None = None
    """The values of the variables a comparison or guard reads (None for atoms)."""
    literal: object = None
    """The body literal (ExtAtom, Comparison or Guard) this premise grounds."""

    def lines(self, indent: int) -> Iterator[str]:
        where = f" @ {', '.join(map(str, self.times))}" if self.times else ""
        yield f"{'  ' * indent}{self.text}{where}"
        for derivation in self.derivations:
            yield from derivation.lines(indent + 1)

    def to_json(self) -> dict:
        """The premise as JSON: ``literal``, ``times`` (time points) and ``derivations``."""
        out: dict[str, object] = {"literal": self.text}
        if self.times:
            out["times"] = list(self.times)
        if self.derivations:
            out["derivations"] = [d.to_json() for d in self.derivations]
        return out


@dataclass
class Derivation:
    """``atom`` holds at ``time`` because ``rule`` fired with ``premises`` (None: a stream atom or fact)."""

    atom: str
    time: int
    rule: Rule | None
    premises: list[Premise] = field(default_factory=list)
    source: str = "stream"
    pred: str = ""
    args: tuple = ()

    def lines(self, indent: int = 0) -> Iterator[str]:
        pad = "  " * indent
        if self.rule is None:
            yield f"{pad}{self.atom} @ {self.time}  [{self.source}]"
            return
        yield f"{pad}{self.atom} @ {self.time}  by {self.rule}  ({self.rule.origin})"
        for premise in self.premises:
            yield from premise.lines(indent + 1)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_json(self) -> dict:
        """The derivation tree as JSON: ``atom``, ``time``, then ``rule`` and ``origin`` with the
        ``premises``, or ``source`` (``stream``, ``background fact``) for a leaf."""
        out: dict[str, object] = {"atom": self.atom, "time": self.time}
        if self.rule is None:
            out["source"] = self.source
        else:
            out["rule"] = str(self.rule)
            out["origin"] = str(self.rule.origin)
            out["premises"] = [p.to_json() for p in self.premises]
        return out

    def walk(self) -> Iterator[Derivation]:
        """This derivation and every derivation below it, depth first."""
        yield self
        for premise in self.premises:
            for derivation in premise.derivations:
                yield from derivation.walk()

    def rules(self) -> list[Rule]:
        """The rules the derivation uses, each once, in the order they first appear."""
        seen: dict[int, Rule] = {}
        for derivation in self.walk():
            if derivation.rule is not None:
                seen.setdefault(id(derivation.rule), derivation.rule)
        return list(seen.values())

    def stream_atoms(self) -> list[tuple[int, str, tuple]]:
        """The stream atoms ``(time point, pred, args)`` the derivation rests on, sorted, each once:
        the premises over extensional predicates, and stream leaves."""
        found: set[tuple[int, str, tuple]] = set()
        for derivation in self.walk():
            if derivation.rule is None:
                if derivation.source == "stream":
                    found.add((derivation.time, derivation.pred, derivation.args))
                continue
            for premise in derivation.premises:
                if premise.atom is not None and not premise.derivations:
                    pred, args = premise.atom
                    found.update((time, pred, args) for time in premise.times)
        return sorted(found, key=repr)


def _unify(pattern: tuple, key: tuple, sub: dict) -> dict | None:
    out = dict(sub)
    for term, value in zip(pattern, key, strict=False):
        if isinstance(term, Var):
            bound = out.get(term.name, _MISSING)
            if bound is _MISSING:
                out[term.name] = value
            elif bound != value:
                return None
        elif term != value:
            return None
    return out


_MISSING = object()


def _value(expr, sub: dict):
    if isinstance(expr, Var):
        return sub.get(expr.name)
    if isinstance(expr, BinOp):
        return RUNTIME[_ARITH[expr.op]](_value(expr.left, sub), _value(expr.right, sub))
    return expr


def _holds(comp: Comparison, sub: dict) -> bool:
    left, right = _value(comp.left, sub), _value(comp.right, sub)
    if left is None or right is None:
        return False
    if comp.op == "=":
        return left == right
    if comp.op == "!=":
        return left != right
    return RUNTIME[_COMPARE[comp.op]](left, right)


class Explainer:
    """Searches an engine's current tables for a rule instance that derives an atom."""

    def __init__(self, engine) -> None:
        self.engine = engine

    def explain(self, pred: str, args: tuple, time: int | None = None, _seen: frozenset = frozenset()):
        engine = self.engine
        t = engine.t
        time = t if time is None else time
        key = (pred, args, time)
        if key in _seen:
            return None
        seen = _seen | {key}
        text = format_atom(pred, args)
        sig = (pred, len(args))
        if args in engine.background.get(sig, ()):
            return Derivation(text, time, None, source="background fact", pred=pred, args=args)
        for plan in engine._rules_of.get(sig, ()):
            derivation = self._try(plan, args, time, t, seen)
            if derivation is not None:
                return derivation
        facts = engine.facts.get(sig)
        if sig not in engine.intensional or (facts is not None and facts.holds_at(args, time)):
            return Derivation(text, time, None, source="stream", pred=pred, args=args)
        return None

    def _try(self, plan, args: tuple, time: int, t: int, seen: frozenset):
        rule = plan.rule
        head = rule.head
        sub = _unify(head.atom.args, args, {})
        if sub is None:
            return None
        if head.time is None:
            if time != t:
                return None
        else:
            sub = _unify((head.time,), (time,), sub)
            if sub is None:
                return None
        for final in self._match(plan, 0, sub):
            pred = head.atom.pred
            derivation = Derivation(format_atom(pred, args), time, rule, pred=pred, args=args)
            for lit, literal in zip(rule.positive_atoms(), plan.positives, strict=False):
                premise = self._premise(lit, literal, final, t, seen)
                if self._unfounded(premise):
                    break  # this instance rests on the atom being explained (a cycle): try the next
                derivation.premises.append(premise)
            else:
                self._finish(derivation, rule, final)
                return derivation
        return None

    def _unfounded(self, premise: Premise) -> bool:
        """Whether an intensional (or background) premise lacks a derivation for one of its times."""
        pred, args = premise.atom
        engine = self.engine
        sig = (pred, len(args))
        if sig not in engine.intensional and args not in engine.background.get(sig, ()):
            return False
        return len(premise.derivations) < len(premise.times) or not premise.times

    def _finish(self, derivation: Derivation, rule: Rule, final: dict) -> None:
        """Add the negated atoms, comparisons and guards of the rule instance to its premises."""
        for lit in rule.negative_atoms():
            derivation.premises.append(Premise(_ground(lit, final), literal=lit))
        for comp in rule.comparisons():
            values = {name: final.get(name) for name in sorted(comp.variables())}
            text = _ground_comparison(comp, final)
            derivation.premises.append(Premise(text, values=values, literal=comp))
        for guard in rule.guards():
            values = ", ".join(f"{a}={final[a.name]}" for a in guard.args)
            derivation.premises.append(
                Premise(
                    f"{guard}  ({values})",
                    values={a.name: final[a.name] for a in guard.args},
                    literal=guard,
                )
            )

    def _match(self, plan, index: int, sub: dict) -> Iterator[dict]:
        if index == len(plan.positives):
            sub = self._comparisons(plan.rule, sub)
            if sub is None:
                return
            for guard in plan.rule.guards():
                if not guard.test(*(sub[a.name] for a in guard.args)):
                    return
            for literal in plan.negatives:
                key = tuple(sub[t.name] if isinstance(t, Var) else t for t in literal.pattern)
                if key in literal.table.entries:
                    return
            yield sub
            return
        literal = plan.positives[index]
        for key in list(literal.table.entries):
            extended = _unify(literal.pattern, key, sub)
            if extended is not None:
                yield from self._match(plan, index + 1, extended)

    def _comparisons(self, rule: Rule, sub: dict) -> dict | None:
        pending = list(rule.comparisons())
        while pending:
            progress = False
            for comp in list(pending):
                target = assignment_target(comp, set(sub))
                if target is not None:
                    expr = (
                        comp.right if isinstance(comp.left, Var) and comp.left.name == target else comp.left
                    )
                    value = _value(expr, sub)
                    if value is None:
                        return None
                    sub = {**sub, target: value}
                elif not _holds(comp, sub):
                    return None
                pending.remove(comp)
                progress = True
            if not progress:
                return None
        return sub

    def _premise(self, lit, literal, sub: dict, t: int, seen: frozenset) -> Premise:
        engine = self.engine
        pred = lit.atom.pred
        args = tuple(sub[a.name] if isinstance(a, Var) else a for a in lit.atom.args)
        premise = Premise(_ground(lit, sub), atom=(pred, args), literal=lit)
        sig = lit.atom.sig
        window = lit.window
        size = window.size if window is not None else None
        if window is not None and window.tuple_based:
            times = sorted({time for time, p, a in engine.recent if p == sig and a == args})
        elif lit.time is not None:
            times = [sub[lit.time.name] if isinstance(lit.time, Var) else lit.time]
        elif lit.op.value == "plain":
            times = [t]
        else:
            lo = max(engine.t1, t - (size or 0))
            times = self._times(sig, args, lo, t, literal, size)
        some = lit.op.value == "<>" and len(times) > 1  # ◇: one time point suffices, the latest that can
        if sig in engine.intensional or args in engine.background.get(sig, ()):
            for time in sorted(times, reverse=True) if some else times:
                derivation = self.explain(pred, args, time, seen)
                if derivation is not None:
                    premise.derivations.append(derivation)
                    if some:
                        times = [time]
                        break
        elif some:
            times = [max(times)]
        premise.times = times
        return premise

    def _times(self, pred: tuple[str, int], args: tuple, lo: int, t: int, literal, size: int) -> list[int]:
        engine = self.engine
        facts = engine.facts.get(pred)
        if facts is not None:
            times = [s for s in range(lo, t + 1) if facts.holds_at(args, s)]
            if args in facts.now:
                times.append(t)
            return sorted(set(times))
        tracker = engine.runs.get(pred)
        if tracker is not None and args in tracker.start:
            return list(range(max(lo, tracker.start[args]), tracker.last[args] + 1))
        horizon = literal.table.entries.get(args)
        if horizon is None or horizon >= NEVER:
            return []
        return [horizon - size]  # a stream atom at τ is seen through [size] <> until τ + size


def _ground(lit: ExtAtom, sub: dict) -> str:
    args = tuple(sub.get(a.name, a) if isinstance(a, Var) else a for a in lit.atom.args)
    time = sub.get(lit.time.name, lit.time) if isinstance(lit.time, Var) else lit.time
    return str(ExtAtom(Atom(lit.atom.pred, args), lit.op, lit.window, time, lit.negated))


def _ground_comparison(comp: Comparison, sub: dict) -> str:
    left, right = _value(comp.left, sub), _value(comp.right, sub)
    return f"{format_expr(comp.left)} {comp.op} {format_expr(comp.right)}  ({left} {comp.op} {right})"


def explanation_json(derivation: Derivation) -> dict:
    """An output atom's explanation as ``rsp lars --explain`` writes it in JSON lines: the ``atom``, the
    ``rules`` it uses (rule text and origin), the ``stream`` atoms with their time points, and the
    whole ``derivation`` tree."""
    return {
        "atom": derivation.atom,
        "rules": [{"rule": str(rule), "origin": str(rule.origin)} for rule in derivation.rules()],
        "stream": [
            {"atom": format_atom(pred, args), "time": time} for time, pred, args in derivation.stream_atoms()
        ],
        "derivation": derivation.to_json(),
    }
