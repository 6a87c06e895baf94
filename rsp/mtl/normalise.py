"""The forward-propagation check and the normal form (the paper's Prop. 6) the streaming engine runs.

A program is forward-propagating when rule bodies use only past operators (Diamondminus, Boxminus,
Since) and heads are an atom under zero or more Boxplus; anything else is refused naming the rule and
the operator. Normalisation gives every body operator a fresh predicate of its own (nested operators
from the inside out, one rule each), so that what remains is of four shapes the engine evaluates
directly: a join of plain atoms (its head possibly under one ⊞ρ), ``H :- ◇⁻ρ P``, ``H :- ⊟ρ P`` and
``H :- A S_ρ B``, over atoms only. Equal operator subformulas (up to the names of their variables)
share one fresh predicate.

>>> from rsp.mtl.syntax import parse_program
>>> for rule in normalise(parse_program("A(X):-Boxminus[1,2]Diamondminus[0,1]B(X), C(X)")).rules:
...     print(rule)
_mtl1(X0):-Diamondminus[0,1]B(X0)
_mtl2(X0):-Boxminus[1,2]_mtl1(X0)
A(X):-_mtl2(X), C(X)

A ``Since`` whose left side has a variable its right side lacks (:func:`check` accepts it when the body
binds that variable elsewhere) is kept whole when 0 ∉ ρ: its fresh predicate has the variables of both
sides, and the engine evaluates it per pair of a left and a right fact (:class:`rsp.mtl.plans.SincePairs`;
with t' < t the left side holds on a nonempty (t', t), so the pair binds them all). With 0 ∈ ρ it holds
wherever its right side does, whatever the value of that variable: ``φ S_ρ ψ ≡ ψ ∨ φ S_{ρ∖{0}} ψ``. The
disjunction is carried up through ``◇⁻`` and the right sides of ``Since`` (over which it distributes)
to the rule, which becomes one rule per choice of disjuncts, where the body's other atoms bind the
variable. (Under ``⊟`` or on the left of a ``Since`` it does not distribute: :func:`check` refuses that.)

>>> for rule in normalise(parse_program("Q(X):-B(X)Since[0,0.75]E(W,W), B(X)")).rules:
...     print(rule)
_mtl1(X0,X1):-B(X0)Since(0,0.75]E(X1,X1)
Q(X):-E(W,W), B(X)
Q(X):-_mtl1(X,W), B(X)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from rsp.errors import ProgramError
from rsp.mtl.intervals import INF, Interval, covers_zero, shift
from rsp.mtl.model import FUTURE, Atom, Binary, Formula, Origin, Program, Rule, Unary, Var, variables_of


@dataclass(frozen=True)
class Normalised:
    """The program the engine runs: rules of the four shapes, the user's predicates and facts about it."""

    rules: tuple[Rule, ...]
    source: Program
    fresh: frozenset[str]
    punctual: bool
    """Whether a punctual interval ``[a,a]`` occurs in the program (the paper's Algorithm 6 needs none)."""

    def derived(self) -> set[str]:
        """The user's predicates that rules derive (the default output)."""
        return {_head_atom(r.head).pred for r in self.source.rules}


def _head_atom(head: Formula) -> Atom:
    while isinstance(head, Unary):
        head = head.sub
    return head  # type: ignore[return-value]


def check(program: Program) -> None:
    """Raise :class:`ProgramError` for the first rule that is not forward-propagating or not safe."""
    for rule in program.rules:
        where = rule.origin.position
        head = rule.head
        while isinstance(head, Unary) and head.op == "Boxplus":
            head = head.sub
        if not isinstance(head, Atom):
            op = head.op
            raise ProgramError(
                f"rule '{rule}' is not forward-propagating: {op} in its head "
                "(heads are an atom, possibly under Boxplus)",
                where,
            )
        for literal in rule.body:
            op = _future_operator(literal)
            if op is not None:
                raise ProgramError(
                    f"rule '{rule}' is not forward-propagating: {op} in its body "
                    "(bodies may use only Diamondminus, Boxminus and Since)",
                    where,
                )
        body_vars = {v for literal in rule.body for v in variables_of(literal)}
        missing = [str(v) for v in variables_of(head) if v not in body_vars]
        if missing:
            raise ProgramError(
                f"rule '{rule}' is not safe: head variable(s) {', '.join(missing)} do not occur in the body",
                where,
            )
        outside = {v for literal in rule.body for v in _outside_since_left(literal)}
        for literal in rule.body:
            _check_since(literal, rule, outside, None)


def _outside_since_left(f: Formula) -> list[Var]:
    """The variables of ``f`` that occur outside the left side of every Since in it."""
    if isinstance(f, Atom):
        return f.variables()
    if isinstance(f, Unary):
        return _outside_since_left(f.sub)
    return _outside_since_left(f.right)


def _future_operator(f: Formula) -> str | None:
    if isinstance(f, Atom):
        return None
    if f.op in FUTURE:
        return f.op
    if isinstance(f, Unary):
        return _future_operator(f.sub)
    return _future_operator(f.left) or _future_operator(f.right)


def _check_since(f: Formula, rule: Rule, outside: set[Var], context: str | None) -> None:
    """Refuse a Since whose left side has a variable its right side lacks unless the body binds it
    elsewhere (``outside``: the variables outside every Since's left side); with 0 in the Since's range,
    refuse it also in a ``context`` over which its split (``ψ ∨ φ S_{ρ∖{0}} ψ``) does not distribute:
    under Boxminus, or on the left side of a Since."""
    if isinstance(f, Unary):
        _check_since(f.sub, rule, outside, "under Boxminus" if f.op == "Boxminus" else context)
    elif isinstance(f, Binary):
        right = set(variables_of(f.right))
        extra = [v for v in variables_of(f.left) if v not in right]
        if extra:
            names = ", ".join(str(v) for v in extra)
            if not all(v in outside for v in extra):
                if covers_zero(f.rho):
                    reason = f"{f} holds with no left-side fact at all when t' = t, leaving them unbound"
                else:
                    reason = "nothing else in the body binds them"
                raise ProgramError(
                    f"rule '{rule}': the left side of {f.op} uses variable(s) {names} that its right side "
                    f"does not ({reason})",
                    rule.origin.position,
                )
            if covers_zero(f.rho) and context is not None:
                raise ProgramError(
                    f"rule '{rule}': the left side of {f.op} uses variable(s) {names} that its right side "
                    f"does not; the body binds them elsewhere, but with 0 in its range {f} holds wherever "
                    f"its right side does, for every value of {names}, and rsp mtl evaluates that only "
                    f"where the {f.op} can be split into its right side or the same {f.op} without 0 (in "
                    f"a rule body, under Diamondminus, on the right of a Since), not {context}",
                    rule.origin.position,
                )
        _check_since(f.left, rule, outside, "on the left of a Since")
        _check_since(f.right, rule, outside, context)


def _splits(f: Formula) -> bool:
    """Whether ``f`` has a Since with 0 in its range whose left side has a variable its right side lacks."""
    if isinstance(f, Atom):
        return False
    if isinstance(f, Unary):
        return _splits(f.sub)
    if covers_zero(f.rho):
        right = set(variables_of(f.right))
        if any(v not in right for v in variables_of(f.left)):
            return True
    return _splits(f.left) or _splits(f.right)


def _without_zero(rho: Interval) -> Interval | None:
    """``ρ ∖ {0}`` for a range that holds 0 (``None`` when ρ is ``[0,0]``)."""
    if rho[1] == 0:
        return None
    return (0, rho[1], False, rho[3])


def _rename(f: Formula, names: dict[Var, Var]) -> Formula:
    if isinstance(f, Atom):
        return Atom(f.pred, tuple(names.get(a, a) if isinstance(a, Var) else a for a in f.args))
    if isinstance(f, Unary):
        return Unary(f.op, f.rho, _rename(f.sub, names))
    return Binary(f.op, f.rho, _rename(f.left, names), _rename(f.right, names))


def _intervals(f: Formula) -> list[Interval]:
    if isinstance(f, Atom):
        return []
    if isinstance(f, Unary):
        return [f.rho, *_intervals(f.sub)]
    return [f.rho, *_intervals(f.left), *_intervals(f.right)]


def normalise(program: Program) -> Normalised:
    """Check ``program`` (:func:`check`) and bring it to the engine's normal form."""
    check(program)
    used = {a.pred for r in program.rules for f in (r.head, *r.body) for a in _atoms(f)}
    fresh: dict[Formula, str] = {}
    counter = 0
    out: list[Rule] = []

    def name() -> str:
        nonlocal counter
        while True:
            counter += 1
            candidate = f"_mtl{counter}"
            if candidate not in used:
                return candidate

    def flat(f: Formula, origin: Origin) -> Atom:
        """An atom standing for ``f``: ``f`` itself, or a fresh predicate defined by new rules."""
        if isinstance(f, Atom):
            return f
        if isinstance(f, Unary):
            inner: Formula = Unary(f.op, f.rho, flat(f.sub, origin))
        else:
            inner = Binary(f.op, f.rho, flat(f.left, origin), flat(f.right, origin))
        return define(inner, f, origin)

    def split(f: Formula, origin: Origin) -> list[Atom]:
        """Atoms whose disjunction is ``f`` (one unless a Since of ``f`` splits: see the module's text)."""
        if not _splits(f):
            return [flat(f, origin)]
        if isinstance(f, Unary):  # Diamondminus: check refuses a split under Boxminus
            return _distinct([define(Unary(f.op, f.rho, sub), f, origin) for sub in split(f.sub, origin)])
        left = flat(f.left, origin)  # check refuses a split on the left of a Since
        names = set(variables_of(left))
        parts = []
        for right in split(f.right, origin):
            if names <= set(variables_of(right)):
                parts.append(define(Binary(f.op, f.rho, left, right), f, origin))
                continue
            rho: Interval | None = f.rho
            if covers_zero(f.rho):
                parts.append(right)  # t' = t: the right side alone
                rho = _without_zero(f.rho)
            if rho is not None:
                parts.append(define(Binary(f.op, rho, left, right), f, origin))
        return _distinct(parts)

    def define(inner: Formula, f: Formula, origin: Origin) -> Atom:
        """The fresh predicate's atom for an operator over atoms (defined by a new rule if new)."""
        variables = variables_of(inner)
        canonical_names = {v: Var(f"X{i}") for i, v in enumerate(variables)}
        canonical = _rename(inner, canonical_names)
        pred = fresh.get(canonical)
        if pred is None:
            pred = fresh[canonical] = name()
            head = Atom(pred, tuple(canonical_names[v] for v in variables))
            out.append(Rule(head, (canonical,), Origin(origin.position, f"normalised from {f}")))
        return Atom(pred, tuple(variables))

    punctual = False
    for rule in program.rules:
        for f in (rule.head, *rule.body):
            if any(rho[0] == rho[1] for rho in _intervals(f)):
                punctual = True
        head = rule.head
        rho = None
        while isinstance(head, Unary):  # Boxplus ρ1 Boxplus ρ2 A = Boxplus (ρ1 ⊕ ρ2) A
            rho = head.rho if rho is None else shift(rho, head.rho)
            head = head.sub
        new_head = head if rho is None else Unary("Boxplus", rho, head)
        if len(rule.body) == 1 and rho is None and _single_op_rule(rule):
            # ``H :- op P`` is already in normal form: no fresh predicate (and no rule defining it)
            out.append(Rule(new_head, rule.body, rule.origin))
            continue
        if not any(_splits(literal) for literal in rule.body):
            body = tuple(flat(literal, rule.origin) for literal in rule.body)
            out.append(Rule(new_head, body, rule.origin))
            continue
        choices = [split(literal, rule.origin) for literal in rule.body]
        for body in _distinct([tuple(_distinct(list(atoms))) for atoms in itertools.product(*choices)]):
            out.append(Rule(new_head, body, rule.origin))
    return Normalised(tuple(out), program, frozenset(fresh.values()), punctual)


def _distinct(items: list) -> list:
    """``items`` without repetitions, in their order."""
    return list(dict.fromkeys(items))


def _single_op_rule(rule: Rule) -> bool:
    (literal,) = rule.body
    if isinstance(literal, Unary):
        return isinstance(literal.sub, Atom)
    if isinstance(literal, Binary):
        return isinstance(literal.left, Atom) and isinstance(literal.right, Atom)
    return False


def _atoms(f: Formula) -> list[Atom]:
    from rsp.mtl.model import atoms_of

    return atoms_of(f)


def history(rules: tuple[Rule, ...]) -> float:
    """The program's look-back t_Π: the largest finite bound of a body operator (``inf`` if unbounded)."""
    largest: float = 0
    for rule in rules:
        for literal in rule.body:
            for rho in _intervals(literal):
                largest = max(largest, rho[1])
    return largest if largest != INF else INF
