"""SPARQL 1.1 aggregates (§18.5) over a group of solution tuples, and the ORDER BY ordering (§15.1).

>>> from rsp.query.syntax.ast import Aggregate, Var
>>> D = "^^<http://www.w3.org/2001/XMLSchema#double>"
>>> avg = compile_aggregate(Aggregate("AVG", Var("v")), ["v"])
>>> avg([(f'"54"{D}',), (f'"55"{D}',)]), avg([])
('"5.45E1"^^<http://www.w3.org/2001/XMLSchema#double>', '"0"^^<http://www.w3.org/2001/XMLSchema#integer>')
>>> sorted(['"10"^^<http://www.w3.org/2001/XMLSchema#integer>', '<http://a>', '"9.5"' + D], key=order_key)
['<http://a>', '"9.5"^^<http://www.w3.org/2001/XMLSchema#double>', '"10"^^<http://www.w3.org/2001/XMLSchema#integer>']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import timezone
from decimal import Decimal

from rsp.errors import QuerySyntaxError
from rsp.io.terms import XSD
from rsp.query.answers.expr import (
    BNODE,
    BOOL,
    DATETIME,
    DECIMAL_CONTEXT,
    IRI,
    LANG,
    NUM,
    STR,
    Value,
    compile_value,
    number,
    numeric_op,
    string,
    term_value,
)
from rsp.query.syntax.ast import Aggregate

ZERO = f'"0"^^<{XSD}integer>'

AggregateFn = Callable[[Iterable[tuple]], "str | None"]


def order_key(term: str | None) -> tuple:
    """A sort key giving SPARQL's ORDER BY order: unbound < blank nodes < IRIs < literals.

    Literals: numbers (by value) < booleans < dateTimes < simple/xsd:string literals <
    language-tagged literals < literals of other datatypes; ties broken by the term text.
    """
    if term is None:
        return (0,)
    v = term_value(term)
    kind = v.kind
    if kind == BNODE:
        return (1, 0, term)
    if kind == IRI:
        return (2, 0, v.lex)
    if kind == NUM:
        x = v.value
        if x != x:  # NaN first among the numbers
            return (3, 0, float("-inf"), 0, term)
        return (3, 0, x, 1, term)
    if kind == BOOL:
        return (3, 1, v.value, term)
    if kind == DATETIME:
        x = v.value
        stamp = x.timestamp() if x.tzinfo is not None else x.replace(tzinfo=timezone.utc).timestamp()
        return (3, 2, stamp, term)
    if kind == STR:
        return (3, 3, v.lex, term)
    if kind == LANG:
        return (3, 4, v.lang.lower(), v.lex, term)
    return (3, 5, v.dt, v.lex, term)


def compile_aggregate(
    agg: Aggregate, variables: Sequence[str], exists: Callable | None = None, context=None
) -> AggregateFn:
    """Compile an aggregate to a function from the solutions of one group to the result term.

    The result is None (unbound) when the aggregate is an error: SUM or AVG over a non-number,
    MIN, MAX or SAMPLE over no values.
    """
    name = agg.name.upper()
    if name == "COUNT" and agg.arg is None:
        if agg.distinct:
            return lambda rows: number(len(set(rows)), 0).nt()
        return lambda rows: number(sum(1 for _ in rows), 0).nt()
    if agg.arg is None:
        raise QuerySyntaxError(f"{name}(*) is not allowed", agg.pos)
    fn = compile_value(agg.arg, variables, exists, context)
    distinct = agg.distinct
    separator = agg.separator

    def values(rows: Iterable[tuple]) -> list[Value | None]:
        vals = [fn(row) for row in rows]
        if distinct:
            seen: dict[str, Value] = {}
            for v in vals:
                if v is not None:
                    seen.setdefault(v.nt(), v)
            return list(seen.values())
        return vals

    def bound(rows: Iterable[tuple]) -> list[Value]:
        return [v for v in values(rows) if v is not None]

    if name == "COUNT":
        return lambda rows: number(len(bound(rows)), 0).nt()
    if name == "SUM":

        def sum_(rows: Iterable[tuple]) -> str | None:
            total = _sum(values(rows))
            return None if total is None else total.nt()

        return sum_
    if name == "AVG":

        def avg(rows: Iterable[tuple]) -> str | None:
            vals = bound(rows)
            if not vals:
                return ZERO
            total = _sum(vals)
            if total is None:
                return None
            if total.rank >= 2:
                return number(total.value / len(vals), total.rank).nt()
            return number(DECIMAL_CONTEXT.divide(Decimal(total.value), Decimal(len(vals))), 1).nt()

        return avg
    if name in ("MIN", "MAX"):
        pick = min if name == "MIN" else max

        def extremum(rows: Iterable[tuple]) -> str | None:
            terms = [v.nt() for v in bound(rows)]
            return pick(terms, key=order_key) if terms else None

        return extremum
    if name == "SAMPLE":

        def sample(rows: Iterable[tuple]) -> str | None:
            for row in rows:
                v = fn(row)
                if v is not None:
                    return v.nt()
            return None

        return sample
    if name == "GROUP_CONCAT":
        # like rdflib, every value joins by its string form (IRIs and numbers too); the result is simple
        return lambda rows: string(separator.join(v.lex for v in bound(rows))).nt()
    raise QuerySyntaxError(f"unknown aggregate {name}", agg.pos)


def _sum(vals: list[Value | None]) -> Value | None:
    """The sum of numbers (``"0"^^xsd:integer`` for none); None when one is not a number (§18.5.1.3).

    Unbound values (and expression errors, which the compiled closures do not tell apart from them)
    are skipped, as rdflib skips unbound values."""
    total = number(0, 0)
    for v in vals:
        if v is None:
            continue
        if v.kind != NUM:
            return None
        total = numeric_op("+", total, v)
        if total is None:
            return None
    return total
