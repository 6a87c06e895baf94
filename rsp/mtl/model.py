"""The DatalogMTL program model: terms, atoms, metric temporal formulas, rules with their origins.

Frozen dataclasses only, printed back in MeTeoR's syntax. Past operators (◇⁻ ``Diamondminus``,
⊟ ``Boxminus``, ``Since``) and future ones (◇⁺ ``Diamondplus``, ⊞ ``Boxplus``, ``Until``) are all
representable, so that a program outside the forward-propagating fragment can be refused with the
offending rule and operator (:mod:`rsp.mtl.normalise`) instead of failing to parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from rsp.errors import Position
from rsp.mtl.intervals import Interval, fmt


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


Term = Var | str


@dataclass(frozen=True)
class Atom:
    pred: str
    args: tuple[Term, ...] = ()

    def __str__(self) -> str:
        return format_atom(self.pred, tuple(str(a) for a in self.args))

    def variables(self) -> list[Var]:
        return [a for a in self.args if isinstance(a, Var)]


@dataclass(frozen=True)
class Unary:
    """``op ρ sub`` for op in Diamondminus, Boxminus, Diamondplus, Boxplus."""

    op: str
    rho: Interval
    sub: Formula

    def __str__(self) -> str:
        inner = f"({self.sub})" if isinstance(self.sub, Binary) else str(self.sub)
        return f"{self.op}{fmt(self.rho)}{inner}"


@dataclass(frozen=True)
class Binary:
    """``left op ρ right`` for op in Since, Until."""

    op: str
    rho: Interval
    left: Formula
    right: Formula

    def __str__(self) -> str:
        def side(f: Formula) -> str:
            return f"({f})" if isinstance(f, Binary) else str(f)

        left, end = side(self.left), self.left
        while isinstance(end, Unary):
            end = end.sub
        if isinstance(end, Atom) and not end.args:
            left += "()"  # 'PSince' would read back as one name
        return f"{left}{self.op}{fmt(self.rho)}{side(self.right)}"


Formula = Union["Atom", "Unary", "Binary"]  # noqa: UP007 - forward references

PAST = ("Diamondminus", "Boxminus", "Since")
FUTURE = ("Diamondplus", "Boxplus", "Until")


def atoms_of(f: Formula) -> list[Atom]:
    if isinstance(f, Atom):
        return [f]
    if isinstance(f, Unary):
        return atoms_of(f.sub)
    return atoms_of(f.left) + atoms_of(f.right)


def variables_of(f: Formula) -> list[Var]:
    """The variables of ``f`` in order of first occurrence."""
    seen: dict[Var, None] = {}
    for atom in atoms_of(f):
        for v in atom.variables():
            seen.setdefault(v)
    return list(seen)


@dataclass(frozen=True)
class Origin:
    """Where a rule comes from: its place in the source, and for a rule made by normalisation, why."""

    position: Position
    note: str = ""

    def __str__(self) -> str:
        return f"{self.position}" + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Rule:
    """``head :- body``; ``head`` is an atom under zero or more operators (only Boxplus is allowed)."""

    head: Formula
    body: tuple[Formula, ...]
    origin: Origin = field(default_factory=lambda: Origin(Position()), compare=False)

    def __str__(self) -> str:
        return f"{self.head}:-{', '.join(str(b) for b in self.body)}"


@dataclass(frozen=True)
class Program:
    rules: tuple[Rule, ...]
    source: str = "<string>"

    def __str__(self) -> str:
        return "\n".join(str(r) for r in self.rules)

    def head_predicates(self) -> set[str]:
        return {atoms_of(r.head)[0].pred for r in self.rules}


def format_atom(pred: str, args: tuple) -> str:
    """``P(a,b)``; a nullary atom is its bare name ``P``."""
    if not args:
        return pred
    return f"{pred}({','.join(str(a) for a in args)})"
