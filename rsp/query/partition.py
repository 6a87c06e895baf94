"""Whether a continuous query can run as one engine per value of a variable (``rsp spark --partition-by``).

A query is partitionable by ``?k`` when every stream triple can be given to exactly one partition and
no answer needs triples of two partitions: then running one engine per value of ``?k`` over the
triples with that value, and taking the union of their answers at each instant, gives exactly the
answers of one engine over the whole stream. The compiler checks, and refuses with the reason:

* every triple pattern (in every group, OPTIONAL, UNION, MINUS, EXISTS and window block) has a constant
  predicate and ``?k`` as its subject or object, always in the same place for a given predicate — so a
  stream triple's partition is the term in that place (the *key*), and triples of other predicates can
  match no pattern;
* the answers of different partitions are disjoint and need no combining: a SELECT whose projection
  keeps ``?k`` (``SELECT *`` does; with aggregates, ?k is then grouped by), no ORDER BY, LIMIT or OFFSET, no
  sub-SELECT, no count window ``[TRIPLES n]`` (it counts triples of every partition);
* no entailment: RDFS and OWL 2 RL derive triples whose key differs from their premises' (a domain
  axiom types the subject, a range axiom the object), which would cross partitions.

Static data must not use a keyed predicate (checked when the data is known, :meth:`KeyPlan.check_static`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rsp.errors import Position, RspError
from rsp.query import ast


@dataclass(frozen=True)
class KeyPlan:
    """How stream triples are keyed: ``positions[predicate]`` is 0 (the subject is the key) or 2 (the
    object is); triples of any other predicate match no pattern and are left out."""

    var: str
    positions: tuple[tuple[str, int], ...]

    @property
    def by_subject(self) -> list[str]:
        return [p for p, place in self.positions if place == 0]

    @property
    def by_object(self) -> list[str]:
        return [p for p, place in self.positions if place == 2]

    def key(self, s: str, p: str, o: str) -> str | None:
        """The partition of a stream triple (None: no pattern can match it).

        >>> KeyPlan("v", (("<http://ex.org/at>", 0),)).key("<http://ex.org/bus1>", "<http://ex.org/at>", "x")
        '<http://ex.org/bus1>'
        """
        for predicate, place in self.positions:
            if predicate == p:
                return s if place == 0 else o
        return None

    def check_static(self, triples: list[tuple[str, str, str]], source: str) -> None:
        """Refuse static data (ontology, FROM graphs) that uses a keyed predicate: its triples would
        belong to no single partition."""
        keyed = dict(self.positions)
        for s, p, o in triples:
            if p in keyed:
                raise RspError(
                    f"--partition-by ?{self.var}: the static data ({source}) has {p} triples ({s} {p} {o}); "
                    f"{p} is keyed by ?{self.var}, so they belong to no single partition"
                )


def _refuse(query: ast.Query, var: str, reason: str, pos: Position | None = None) -> RspError:
    return RspError(f"--partition-by ?{var}: {reason}", pos or query.pos or Position(query.file))


def _patterns(group: ast.Group) -> Iterator[ast.TriplePattern | ast.SubSelect]:
    for element in group.elements:
        match element:
            case ast.BGP(triples=triples):
                yield from triples
            case ast.Optional(group=inner) | ast.Minus(group=inner) | ast.WindowBlock(group=inner):
                yield from _patterns(inner)
            case ast.Union(alternatives=alternatives):
                for alternative in alternatives:
                    yield from _patterns(alternative)
            case ast.Filter(expr=expr) | ast.Bind(expr=expr):
                for exists in _exists(expr):
                    yield from _patterns(exists.pattern)
            case ast.SubSelect():
                yield element


def _exists(expr: ast.Expr) -> Iterator[ast.Exists]:
    match expr:
        case ast.Exists():
            yield expr
        case ast.BinaryOp(left=left, right=right):
            yield from _exists(left)
            yield from _exists(right)
        case ast.UnaryOp(arg=arg):
            yield from _exists(arg)
        case ast.FunctionCall(args=args):
            for arg in args:
                yield from _exists(arg)
        case ast.InList(expr=inner, options=options):
            yield from _exists(inner)
            for option in options:
                yield from _exists(option)


def partition_plan(query: ast.Query, variable: str, entailment: str = "none") -> KeyPlan:
    """The keying of ``query``'s stream triples by ``variable`` (``?k`` or ``k``); raises
    :class:`rsp.errors.RspError` with the reason when the query is not partitionable by it."""
    var = variable.removeprefix("?").removeprefix("$")
    if not var or not var.replace("_", "a").isalnum():
        raise RspError(f"--partition-by {variable}: write a variable of the query, e.g. ?vehicle")
    if entailment != "none":
        raise _refuse(
            query, var, f"not with --entailment {entailment}: inferred triples can take another key than "
            "their premises (a domain axiom types the subject, a range axiom the object)",
        )  # fmt: skip
    form = query.form
    if not isinstance(form, ast.Select):
        kind = "CONSTRUCT" if isinstance(form, ast.Construct) else "ASK"
        reason = f"{kind} answers of several partitions would have to be combined; use SELECT"
        raise _refuse(query, var, reason)
    for window in query.windows:
        if window.triples is not None:
            reason = "a [TRIPLES n] window counts the triples of every partition"
            raise _refuse(query, var, reason, window.pos)
    modifiers = form.modifiers
    if modifiers.order_by or modifiers.limit is not None or modifiers.offset:
        raise _refuse(query, var, "ORDER BY, LIMIT and OFFSET rank answers across partitions", form.pos)
    if form.projection is not None and not any(p.var.name == var for p in form.projection):
        raise _refuse(
            query, var, f"the answers must keep ?{var} (SELECT ?{var} …) so that those of different "
            "partitions never coincide", form.pos,
        )  # fmt: skip
    # (a projection that keeps ?k also groups by it: the query checks refuse ungrouped projected variables)
    positions: dict[str, int] = {}
    found = False
    for pattern in _patterns(form.where):
        if isinstance(pattern, ast.SubSelect):
            raise _refuse(query, var, "a sub-SELECT may combine answers across partitions", pattern.pos)
        found = True
        where = pattern.pos
        if isinstance(pattern.predicate, ast.Var):
            reason = f"the pattern with predicate ?{pattern.predicate.name} cannot be keyed"
            raise _refuse(query, var, reason, where)
        if pattern.subject == ast.Var(var):
            place = 0
        elif pattern.object == ast.Var(var):
            place = 2
        else:
            raise _refuse(query, var, f"the pattern on {pattern.predicate} does not use ?{var}", where)
        known = positions.setdefault(pattern.predicate, place)
        if known != place:
            raise _refuse(
                query, var, f"?{var} is the subject of one {pattern.predicate} pattern and the object of "
                "another", where,
            )  # fmt: skip
    if not found:
        raise _refuse(query, var, "the query has no triple pattern")
    return KeyPlan(var, tuple(sorted(positions.items())))
