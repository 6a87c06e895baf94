"""The LARS rule model: terms, atoms, extended atoms with window and temporal operators, rules, programs.

Constants are plain Python values so that the engine can hash and compare them without wrappers:
``str`` for symbols (``a``), IRIs (``<http://…>``, brackets included) and string literals (quoted,
``"text"``, in N-Triples syntax), ``int`` and ``float`` for numbers. Variables are :class:`Var`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from rsp.errors import Position

Constant = str | int | float


class Sig(NamedTuple):
    """A predicate: its name AND its arity (``p/1`` and ``p/2`` are two predicates, as in clingo).

    Every pass and the engine key predicates by this; a plain ``(name, arity)`` tuple is equal to it
    and hashes alike, so hot paths may build tuples.
    """

    name: str
    arity: int

    def __str__(self) -> str:
        return f"{self.name}/{self.arity}"


@dataclass(frozen=True)
class Var:
    """A variable; its name starts with an uppercase letter or ``_``."""

    name: str

    def __str__(self) -> str:
        return self.name


Term = Var | Constant


def format_term(term: Term) -> str:
    """Render a term the way the ``.lars`` syntax writes it (``a``, ``3``, ``2.5``, ``"s"``, ``<iri>``)."""
    if isinstance(term, Var):
        return term.name
    if isinstance(term, bool):
        return "true" if term else "false"
    return str(term)


@dataclass(frozen=True)
class Atom:
    """``pred(args…)``; a zero-arity atom has ``args == ()``."""

    pred: str
    args: tuple[Term, ...] = ()

    def __str__(self) -> str:
        if not self.args:
            return self.pred
        return f"{self.pred}({','.join(format_term(a) for a in self.args)})"

    def variables(self) -> set[str]:
        return {a.name for a in self.args if isinstance(a, Var)}

    @property
    def sig(self) -> Sig:
        """The predicate this atom belongs to: its name and arity."""
        return Sig(self.pred, len(self.args))


def format_atom(pred: str, args: tuple[Constant, ...]) -> str:
    """Render a ground atom as ``pred(a,b)`` (no spaces), the form used in every output format."""
    if not args:
        return pred
    return f"{pred}({','.join(format_term(a) for a in args)})"


class Op(enum.Enum):
    """The temporal operator of an extended atom: none (plain), ◇, □ or @."""

    PLAIN = "plain"
    DIAMOND = "<>"
    BOX = "[]"
    AT = "@"


@dataclass(frozen=True)
class Window:
    """``[n]`` (time window: the time points [t-n, t]) or ``[#n]`` (tuple window: the last n stream atoms)."""

    size: int
    tuple_based: bool = False

    def __str__(self) -> str:
        return f"[#{self.size}]" if self.tuple_based else f"[{self.size}]"


@dataclass(frozen=True)
class ExtAtom:
    """An extended body atom: ``[not] [window] (<> | [] | @T)? atom``.

    ``time`` is the variable or integer after ``@`` (only for :attr:`Op.AT`). A plain or ``@`` atom may
    have no window; ◇ and □ always have one.
    """

    atom: Atom
    op: Op = Op.PLAIN
    window: Window | None = None
    time: Var | int | None = None
    negated: bool = False
    position: Position | None = field(default=None, compare=False, repr=False)
    """Where the source text writes it (for messages); not part of its identity."""

    def __str__(self) -> str:
        parts = []
        if self.negated:
            parts.append("not ")
        if self.window is not None:
            parts.append(f"{self.window} ")
        if self.op is Op.DIAMOND:
            parts.append("<> ")
        elif self.op is Op.BOX:
            parts.append("[] ")
        elif self.op is Op.AT:
            parts.append(f"@{format_term(self.time)} ")
        parts.append(str(self.atom))
        return "".join(parts)

    def variables(self) -> set[str]:
        names = self.atom.variables()
        if isinstance(self.time, Var):
            names.add(self.time.name)
        return names


@dataclass(frozen=True)
class BinOp:
    """Arithmetic ``left op right`` with op one of ``+ - * /``."""

    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return format_expr(self)


Expr = Var | Constant | BinOp


def expr_variables(expr: Expr) -> set[str]:
    """The variable names occurring in an arithmetic expression."""
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, BinOp):
        return expr_variables(expr.left) | expr_variables(expr.right)
    return set()


def format_expr(expr: Expr, nested: bool = False) -> str:
    """Render an expression in ``.lars`` syntax, parenthesising nested operations."""
    if isinstance(expr, BinOp):
        text = f"{format_expr(expr.left, True)} {expr.op} {format_expr(expr.right, True)}"
        return f"({text})" if nested else text
    return format_term(expr)


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=``; ``V = expr`` with V unbound is an assignment."""

    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"{format_expr(self.left)} {self.op} {format_expr(self.right)}"

    def variables(self) -> set[str]:
        return expr_variables(self.left) | expr_variables(self.right)


@dataclass(frozen=True)
class Guard:
    """A test computed by a Python function over bound variables (rules made by the query translator,
    e.g. a SPARQL FILTER): the rule instance fires only where ``test(*values)`` is true. ``text`` is
    what the user wrote; guards have no ``.lars`` syntax."""

    test: Callable[..., bool] = field(compare=False)
    args: tuple[Var, ...]
    text: str

    def __str__(self) -> str:
        return f"filter({self.text})"

    def variables(self) -> set[str]:
        return {a.name for a in self.args}


Literal = ExtAtom | Comparison | Guard


@dataclass(frozen=True)
class Head:
    """A rule head: ``atom`` (holds at the evaluation time) or ``@T atom`` (holds at time point T)."""

    atom: Atom
    time: Var | int | None = None

    def __str__(self) -> str:
        if self.time is None:
            return str(self.atom)
        return f"@{format_term(self.time)} {self.atom}"

    def variables(self) -> set[str]:
        names = self.atom.variables()
        if isinstance(self.time, Var):
            names.add(self.time.name)
        return names


@dataclass(frozen=True)
class Origin:
    """Where a rule came from: a source position, or the name of the pass or rule set that made it."""

    position: Position | None = None
    source: str = ""

    def __str__(self) -> str:
        if self.position is not None:
            return str(self.position)
        return self.source or "<unknown>"


@dataclass(frozen=True)
class Rule:
    """``head :- body.``; a rule with an empty body and a ground head is a fact (background knowledge)."""

    head: Head
    body: tuple[Literal, ...] = ()
    origin: Origin = field(default_factory=Origin, compare=False)

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        if self.is_constraint:
            return f":- {', '.join(str(b) for b in self.body[:-1])}."
        return f"{self.head} :- {', '.join(str(b) for b in self.body)}."

    @property
    def is_constraint(self) -> bool:
        """``:- body.``, kept as ``#false :- body, not #false.`` (see :func:`constraint_rule`)."""
        return self.head.atom.pred == CONSTRAINT_PRED

    @property
    def is_fact(self) -> bool:
        return not self.body

    def positive_atoms(self) -> list[ExtAtom]:
        return [b for b in self.body if isinstance(b, ExtAtom) and not b.negated]

    def negative_atoms(self) -> list[ExtAtom]:
        return [b for b in self.body if isinstance(b, ExtAtom) and b.negated]

    def comparisons(self) -> list[Comparison]:
        return [b for b in self.body if isinstance(b, Comparison)]

    def guards(self) -> list[Guard]:
        return [b for b in self.body if isinstance(b, Guard)]


CONSTRAINT_PRED = "#false"
"""The head of a constraint: a name no ``.lars`` text can write."""


def constraint_rule(body: tuple[Literal, ...], origin: Origin) -> Rule:
    """The constraint ``:- body.`` as the odd loop ``#false :- body, not #false.``: no answer stream makes
    ``body`` true (the usual ASP reading). Stratification refuses it like any odd loop; the answer-set
    modes (:mod:`rsp.asp`) accept it."""
    false = Atom(CONSTRAINT_PRED)
    return Rule(Head(false), (*body, ExtAtom(false, negated=True)), origin)


@dataclass(frozen=True)
class Program:
    """A LARS program: rules (facts included) and the prefixes declared in its source; ``data`` are
    more ground facts, given by predicate as sets of argument tuples (a query's static graph: tens of
    thousands of triples): ground by construction, so no pass checks them one by one, and the engine
    indexes them with the facts."""

    rules: tuple[Rule, ...]
    prefixes: tuple[tuple[str, str], ...] = ()
    source: str = "<string>"
    data: tuple[tuple[Sig, frozenset[tuple[Constant, ...]]], ...] = ()

    def __str__(self) -> str:
        return "\n".join(str(r) for r in self.rules)

    @property
    def facts(self) -> list[Rule]:
        return [r for r in self.rules if r.is_fact]

    @property
    def proper_rules(self) -> list[Rule]:
        return [r for r in self.rules if not r.is_fact]

    def data_predicates(self) -> set[Sig]:
        """The predicates of :attr:`data`."""
        return {sig for sig, _rows in self.data}

    def intensional_predicates(self) -> set[Sig]:
        """Predicates defined by a rule with a non-empty body: these are what the output stream shows."""
        return {r.head.atom.sig for r in self.rules if r.body}
