"""The SPARQL 1.1 built-in functions beyond those of :mod:`rsp.query.answers.expr`: term constructors (STRDT,
STRLANG, BNODE, UUID, STRUUID), hashes (MD5, SHA1, SHA256, SHA384, SHA512), the parts of a dateTime
(YEAR … SECONDS, TIMEZONE, TZ), the functions that depend on the evaluation (NOW, RAND) and C-SPARQL's
``f:timestamp(?s, ?p, ?o)`` (``f:`` is ``<http://larkc.eu/csparql/sparql/jena/ext#>``).

What an expression reads besides its solution comes from its :class:`EvalContext`, given when it is
compiled (each query has its own; an expression compiled without one reads :data:`WALL_CLOCK`'s).
``NOW()`` is the time of the instant being evaluated (:meth:`EvalContext.at`, called by the runtime
before it evaluates an instant), as an ``xsd:dateTime`` in UTC: the answer at instant 1000 ms sees
``"1970-01-01T00:00:01Z"``. ``BNODE()`` is a new blank node at every call (labels numbered per
context); ``BNODE(str)`` is the same blank node for the same string within one solution
(:meth:`EvalContext.new_solution` starts the next one) and a new one for the next solution (§17.4.2.9).

``f:timestamp(s, p, o)`` is the time (ms, an ``xsd:integer``) of the stream element that holds the
triple in a window of the query at the instant being evaluated: the latest such element when several
do, as in C-SPARQL, whose Jena engine keeps one time per triple and lets each element of the window
overwrite the time of the one before (``eu.larkc.csparql.sparql.jena.JenaEngine.addStatement``). A
triple that no element in a window holds (a static or entailed triple, or none) has no time: an error,
so ``BIND`` leaves the variable unbound and ``FILTER`` drops the solution (C-SPARQL answers ``false``).
The runtime says which elements the windows hold with :attr:`EvalContext.element_time`.

>>> from rsp.query.syntax.ast import FunctionCall
>>> from rsp.query.answers.expr import compile_expr
>>> compile_expr(FunctionCall("MD5", ('"abc"',)), [])(())
'"900150983cd24fb0d6963f7d28e17f72"'
>>> compile_expr(FunctionCall("STRDT", ('"1"', "<http://www.w3.org/2001/XMLSchema#integer>")), [])(())
'"1"^^<http://www.w3.org/2001/XMLSchema#integer>'
>>> context = EvalContext()
>>> context.at(1500); compile_expr(FunctionCall("NOW", ()), [], context=context)(())
'"1970-01-01T00:00:01.5Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
"""

from __future__ import annotations

import hashlib
import random
import re
import uuid
from collections.abc import Callable
from decimal import Decimal

from rsp.io.terms import XSD
from rsp.query.answers import values as E
from rsp.query.answers.context import EvalContext
from rsp.query.answers.functions import _FUNCTIONS, _on_value
from rsp.query.syntax.ast import TIMESTAMP, FunctionCall

XSD_DAYTIME_DURATION = f"<{XSD}dayTimeDuration>"

# -- constructors ----------------------------------------------------------------------------------------


def _simple(v: E.Value) -> bool:
    """A simple literal or an xsd:string (what the hashes and BNODE take)."""
    return v.kind == E.STR


def _plain(v: E.Value) -> bool:
    """A simple literal, not written ``^^xsd:string`` (what STRDT and STRLANG take, §17.4.3.11-12; the
    W3C tests strdt03 and strlang03 refuse an xsd:string)."""
    return v.kind == E.STR and v.dt is None


def _strdt(lex: E.Value, datatype: E.Value) -> E.Value | None:
    if not _plain(lex) or datatype.kind != E.IRI:
        return None
    return E.term_value(f'"{E.escape(lex.lex)}"^^<{datatype.lex}>')


def _strlang(lex: E.Value, lang: E.Value) -> E.Value | None:
    if not _plain(lex) or not _simple(lang) or not re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z0-9]+)*", lang.lex):
        return None
    return E.string(lex.lex, lang.lex)


def _bnode(c, expr: FunctionCall) -> E.ValueFn:
    fns = c.args(expr, 0, 1)
    context: EvalContext = c.context
    if not fns:
        return lambda sol: context.blank_node()
    (fa,) = fns

    def named(sol: tuple) -> E.Value | None:
        a = fa(sol)
        if a is None or not _simple(a):
            return None
        key = (context.scope, a.lex)
        node = context.named.get(key)
        if node is None:
            node = context.named[key] = context.blank_node()
        return node

    return named


def _nullary(make: Callable[[], E.Value | None]) -> Callable:
    def build(c, expr: FunctionCall) -> E.ValueFn:
        c.args(expr, 0, 0)
        return lambda sol: make()

    return build


def _rand() -> E.Value:
    return E.number(random.random(), 3)


def _uuid() -> E.Value:
    return E.term_value(f"<urn:uuid:{uuid.uuid4()}>")


def _struuid() -> E.Value:
    return E.string(str(uuid.uuid4()))


def _now(c, expr: FunctionCall) -> E.ValueFn:
    c.args(expr, 0, 0)
    context: EvalContext = c.context
    return lambda sol: context.now_value()


def _hash(algorithm: str) -> Callable[[E.Value], E.Value | None]:
    def digest(a: E.Value) -> E.Value | None:
        if not _simple(a):
            return None
        return E.string(hashlib.new(algorithm, a.lex.encode("utf-8")).hexdigest())

    return digest


# -- dateTime parts ----------------------------------------------------------------------------------------
_SECONDS = re.compile(r"T[0-9]{2}:[0-9]{2}:([0-9]{2}(?:\.[0-9]+)?)")
_ZONE = re.compile(r"(Z|[+-][0-9]{2}:[0-9]{2})$")


def _part(field: str) -> Callable[[E.Value], E.Value | None]:
    def part(a: E.Value) -> E.Value | None:
        if a.kind != E.DATETIME:
            return None
        return E.number(getattr(a.value, field), 0)

    return part


def _seconds(a: E.Value) -> E.Value | None:
    """The seconds as written (``01`` → ``1``, ``01.50`` → ``1.5``): the W3C suite's answer."""
    if a.kind != E.DATETIME:
        return None
    match = _SECONDS.search(a.lex)
    if match is None:
        return None
    value = Decimal(match.group(1))
    text = f"{value:f}".lstrip("0") or "0"
    if "." in text:
        text = text.rstrip("0").rstrip(".") or "0"
    if text.startswith("."):
        text = "0" + text
    return E.Value(E.NUM, value, text, E.XSD_DECIMAL, None, 1)


def _timezone(a: E.Value) -> E.Value | None:
    """The offset as an xsd:dayTimeDuration (``PT0S``, ``-PT8H``, ``PT5H30M``); an error without one."""
    if a.kind != E.DATETIME or a.value.tzinfo is None:
        return None
    offset = a.value.utcoffset()
    minutes = int(offset.total_seconds()) // 60
    if minutes == 0:
        return E.term_value(f'"PT0S"^^{XSD_DAYTIME_DURATION}')
    sign, minutes = ("-" if minutes < 0 else ""), abs(minutes)
    hours, minutes = divmod(minutes, 60)
    text = f"{sign}PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return E.term_value(f'"{text}"^^{XSD_DAYTIME_DURATION}')


def _tz(a: E.Value) -> E.Value | None:
    if a.kind != E.DATETIME:
        return None
    match = _ZONE.search(a.lex)
    return E.string(match.group(1) if match else "")


def _nt(v: E.Value) -> str:
    """A term in N-Triples syntax (an IRI built by IRI() has no text of its own yet)."""
    return f"<{v.lex}>" if v.kind == E.IRI else v.nt()


def _timestamp(c, expr: FunctionCall) -> E.ValueFn:
    fs, fp, fo = c.args(expr, 3, 3)
    context: EvalContext = c.context

    def timestamp(sol: tuple) -> E.Value | None:
        s, p, o = fs(sol), fp(sol), fo(sol)
        lookup = context.element_time
        if s is None or p is None or o is None or lookup is None:
            return None
        time = lookup((_nt(s), _nt(p), _nt(o)))
        return None if time is None else E.number(time, 0)

    return timestamp


FUNCTIONS: dict[str, Callable] = {
    "STRDT": _on_value(2, 2, _strdt),
    "STRLANG": _on_value(2, 2, _strlang),
    "BNODE": _bnode,
    "RAND": _nullary(_rand),
    "NOW": _now,
    "UUID": _nullary(_uuid),
    "STRUUID": _nullary(_struuid),
    "MD5": _on_value(1, 1, _hash("md5")),
    "SHA1": _on_value(1, 1, _hash("sha1")),
    "SHA256": _on_value(1, 1, _hash("sha256")),
    "SHA384": _on_value(1, 1, _hash("sha384")),
    "SHA512": _on_value(1, 1, _hash("sha512")),
    "YEAR": _on_value(1, 1, _part("year")),
    "MONTH": _on_value(1, 1, _part("month")),
    "DAY": _on_value(1, 1, _part("day")),
    "HOURS": _on_value(1, 1, _part("hour")),
    "MINUTES": _on_value(1, 1, _part("minute")),
    "SECONDS": _on_value(1, 1, _seconds),
    "TIMEZONE": _on_value(1, 1, _timezone),
    "TZ": _on_value(1, 1, _tz),
    TIMESTAMP: _timestamp,
}
"""Name -> builder ``(compiler, call) -> closure`` (merged into the table of
:mod:`rsp.query.answers.functions` that :mod:`rsp.query.answers.expr` reads)."""

_FUNCTIONS.update(FUNCTIONS)
