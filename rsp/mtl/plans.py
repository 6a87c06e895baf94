"""The engine's compiled rules: each normal-form rule of :mod:`rsp.mtl.normalise` as a plan whose atom
matching and head building are precomputed functions over argument tuples and variable slots.

A rule's variables are numbered; a join keeps its binding in one list of slots, filled atom by atom
(a later atom only reads slots an earlier one filled, so backtracking just overwrites them). A plan
step knows which argument positions are bound when it is looked up, how to build its lookup key from
the slots, and which slots its free positions fill. Operator rules (``◇⁻``, ``⊟``, ``Since``) need no
slots: a *projector* maps the body atom's arguments straight to the head's (``None`` when a constant
or a repeated variable does not match); a ``Since`` whose left side has variables its right side
lacks projects a pair of a right and a left atom's arguments (:class:`SincePairs`). Bounds ``rho`` are
stored in the engine's time unit and rescaled with it (:meth:`rescale`).

>>> from rsp.mtl.model import Var
>>> X, Y = Var("X"), Var("Y")
>>> projector((X, Y), (Y, "a"))(("1", "2"))
('2', 'a')
>>> projector((X, X), (X,))(("1", "2")) is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from rsp.mtl.intervals import Interval, covers_zero, fmt, to_unit
from rsp.mtl.model import Atom, Binary, Unary, Var
from rsp.mtl.normalise import Normalised


def _scaled(rho: Interval | None, scale: int) -> Interval | None:
    """A bound in the unit ``1/scale``: integers (``Fraction(1, 2) * 2`` would stay a ``Fraction``)."""
    if rho is None or scale == 1:
        return rho
    return (to_unit(rho[0], scale), to_unit(rho[1], scale), rho[2], rho[3])


def _getter(positions: tuple[int, ...]) -> Callable[[tuple | list], tuple]:
    """``values -> tuple(values[i] for i in positions)``, as cheap as it can be."""
    if not positions:
        return lambda values: ()
    if len(positions) == 1:
        (i,) = positions
        return lambda values: (values[i],)
    return itemgetter(*positions)


def _template(parts: tuple[tuple[bool, object], ...]) -> Callable[[tuple | list], tuple]:
    """A tuple builder from ``(is_index, index or constant)`` parts over a sequence of values."""
    if all(is_index for is_index, _ in parts):
        return _getter(tuple(i for _, i in parts))
    return lambda values: tuple([values[v] if is_index else v for is_index, v in parts])


def projector(src: tuple, dst: tuple) -> Callable[[tuple], tuple | None]:
    """A function from the arguments of a ground atom to those of ``dst`` (terms whose variables all
    occur in ``src``), ``None`` when the atom does not match ``src``."""
    n = len(src)
    first: dict[Var, int] = {}
    checks: list[tuple[int, bool, object]] = []  # (position, is_position, other position or constant)
    for i, term in enumerate(src):
        if type(term) is Var:
            if term in first:
                checks.append((i, True, first[term]))
            else:
                first[term] = i
        else:
            checks.append((i, False, term))
    if not checks and tuple(dst) == tuple(src):
        return lambda args: args if len(args) == n else None
    build = _template(tuple((True, first[t]) if type(t) is Var else (False, t) for t in dst))
    if not checks:
        return lambda args: build(args) if len(args) == n else None

    def project(args: tuple) -> tuple | None:
        if len(args) != n:
            return None
        for i, is_position, other in checks:
            if args[i] != (args[other] if is_position else other):
                return None
        return build(args)

    return project


def match(terms: tuple, args: tuple, binding: dict) -> dict | None:
    """``binding`` extended so that ``terms`` match the ground ``args`` (a new dict), or ``None``."""
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


@dataclass
class Step:
    """One body atom of a join looked up with some positions bound."""

    pred: str
    positions: tuple[int, ...]  # the argument positions known when the atom is looked up
    key: Callable  # slots -> the values at ``positions`` (the full argument tuple when all are bound)
    full: bool
    arity: int
    fills: tuple[tuple[int, int], ...]  # (slot, position) for variables first met here
    checks: tuple[tuple[int, int], ...]  # (position, earlier position) for a variable met twice here


@dataclass
class Join:
    head: tuple  # (pred, head builder over slots)
    rho: Interval | None
    rho0: Interval | None
    body: list[tuple]  # (pred, terms)
    size: int = 0
    entries: list | None = None  # per delta position: (arity, checks, fills) of the delta atom
    plans: list[list[Step]] | None = None  # per delta position: the other atoms in body order


@dataclass
class Op:
    kind: str  # "diamond" | "box"
    head: str
    rho: Interval
    rho0: Interval
    body: tuple  # (pred, terms)
    project: Callable


@dataclass
class Since:
    head: str
    rho: Interval
    rho0: Interval
    left: tuple
    right: tuple
    head_of_right: Callable  # right-side args -> head args
    left_of_right: Callable  # right-side args -> left-side args


@dataclass
class SincePairs:
    """``A S_ρ B`` whose left side A has variables its right side B lacks (bound elsewhere in the
    rule's body): evaluated per pair of a left fact and a right fact that agree on their shared
    variables, the head's arguments taken from both. ρ never holds 0 (the normaliser makes the case
    t' = t a rule of its own), so A holds on a nonempty (t', t) and binds its variables."""

    head: str
    rho: Interval
    rho0: Interval
    left: tuple
    right: tuple
    head_of_pair: Callable  # right args + left args -> head args (None: they do not match)
    left_positions: tuple[int, ...]  # the left atom's positions a right atom fixes (constants, shared vars)
    left_key: Callable  # right args -> the values at ``left_positions`` (None: the right atom does not match)
    right_positions: tuple[int, ...]  # the right atom's positions a left atom fixes
    right_key: Callable  # left args -> the values at ``right_positions`` (None: the left atom does not match)


def _pairs(head: Atom, rho: Interval, left: Atom, right: Atom) -> SincePairs:
    if covers_zero(rho):
        raise ValueError(
            f"{left}Since{fmt(rho)}{right}: a Since whose left side has variables its right side lacks "
            "cannot hold 0 in its range here (rsp.mtl.normalise splits it)"
        )
    lvars, rvars = set(left.variables()), set(right.variables())
    lpos = tuple(i for i, t in enumerate(left.args) if type(t) is not Var or t in rvars)
    rpos = tuple(i for i, t in enumerate(right.args) if type(t) is not Var or t in lvars)
    return SincePairs(
        head.pred,
        rho,
        rho,
        (left.pred, left.args),
        (right.pred, right.args),
        projector(right.args + left.args, head.args),
        lpos,
        projector(right.args, tuple(left.args[i] for i in lpos)),
        rpos,
        projector(left.args, tuple(right.args[i] for i in rpos)),
    )


def _slot_pattern(terms: tuple, slot: dict[Var, int], bound: set[Var]):
    """For an atom whose variables in ``bound`` already have slots: its bound positions, their key
    parts, the slots its new variables fill and the equalities among its new positions."""
    positions, key, fills, checks = [], [], [], []
    first: dict[Var, int] = {}
    for i, term in enumerate(terms):
        if type(term) is not Var:
            positions.append(i)
            key.append((False, term))
        elif term in bound:
            positions.append(i)
            key.append((True, slot[term]))
        elif term in first:
            checks.append((i, first[term]))
        else:
            first[term] = i
            fills.append((slot[term], i))
    return tuple(positions), tuple(key), tuple(fills), tuple(checks)


def _join(head: Atom, rho: Interval | None, body: list[Atom]) -> Join:
    slot: dict[Var, int] = {}
    for atom in body:
        for t in atom.args:
            if type(t) is Var:
                slot.setdefault(t, len(slot))
    join = Join(
        (head.pred, _template(tuple((True, slot[t]) if type(t) is Var else (False, t) for t in head.args))),
        rho,
        rho,
        [(a.pred, a.args) for a in body],
        len(slot),
        [],
        [],
    )
    for i, atom in enumerate(body):
        positions, key, fills, checks = _slot_pattern(atom.args, slot, set())
        consts = tuple((p, v) for p, (_, v) in zip(positions, key, strict=True))
        join.entries.append((len(atom.args), consts, fills, checks))
        bound = {t for t in atom.args if type(t) is Var}
        plan = []
        for j, other in enumerate(body):
            if j == i:
                continue
            positions, key, fills, checks = _slot_pattern(other.args, slot, bound)
            full = len(positions) == len(other.args)
            plan.append(Step(other.pred, positions, _template(key), full, len(other.args), fills, checks))
            bound.update(t for t in other.args if type(t) is Var)
        join.plans.append(plan)
    return join


def compile_rules(program: Normalised) -> list:
    """The plans of a normalised program's rules, in its order."""
    rules: list = []
    for rule in program.rules:
        head = rule.head
        rho = None
        if isinstance(head, Unary):
            rho, head = head.rho, head.sub
        if len(rule.body) == 1 and not isinstance(rule.body[0], Atom):
            (literal,) = rule.body
            if isinstance(literal, Binary):
                left, right = literal.left, literal.right
                if not set(left.variables()) <= set(right.variables()):
                    rules.append(_pairs(head, literal.rho, left, right))
                    continue
                rules.append(
                    Since(
                        head.pred,
                        literal.rho,
                        literal.rho,
                        (left.pred, left.args),
                        (right.pred, right.args),
                        projector(right.args, head.args),
                        projector(right.args, left.args),
                    )
                )
            else:
                kind = "diamond" if literal.op == "Diamondminus" else "box"
                sub = literal.sub
                project = projector(sub.args, head.args)
                rules.append(Op(kind, head.pred, literal.rho, literal.rho, (sub.pred, sub.args), project))
            continue
        rules.append(_join(head, rho, list(rule.body)))
    return rules


def rescale(rules: list, scale: int) -> None:
    """Put every rule's bound in the time unit ``1/scale``."""
    for rule in rules:
        rule.rho = _scaled(rule.rho0, scale)
