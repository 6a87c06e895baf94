"""SPARQL term values for expressions: a term read once into a :class:`Value` (kind, Python value,
lexical form, datatype, language; memoised per term text), the XSD numeric tower and its canonical
lexical forms, effective boolean values, ordering and equality of values (SPARQL 1.1 §17.3, §17.4.1),
and numeric arithmetic with XPath type promotion. :mod:`rsp.query.answers.expr` compiles expressions over
them; :mod:`rsp.query.answers.functions` holds the built-in functions."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from decimal import Context, Decimal, InvalidOperation

from rsp.io.terms import XSD, unescape

RDF_LANGSTRING = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>"
XSD_STRING = f"<{XSD}string>"
XSD_BOOLEAN = f"<{XSD}boolean>"
XSD_DATETIME = f"<{XSD}dateTime>"
XSD_INTEGER = f"<{XSD}integer>"
XSD_DECIMAL = f"<{XSD}decimal>"
XSD_FLOAT = f"<{XSD}float>"
XSD_DOUBLE = f"<{XSD}double>"
NUMERIC_TYPES = {XSD_INTEGER: 0, XSD_DECIMAL: 1, XSD_FLOAT: 2, XSD_DOUBLE: 3} | {
    f"<{XSD}{name}>": 0
    for name in (
        "int long short byte nonNegativeInteger positiveInteger nonPositiveInteger negativeInteger "
        "unsignedInt unsignedLong unsignedShort unsignedByte"
    ).split()
}
_KNOWN_TYPES = {XSD_STRING, XSD_BOOLEAN, XSD_DATETIME}
RANK_TYPES = (XSD_INTEGER, XSD_DECIMAL, XSD_FLOAT, XSD_DOUBLE)
DECIMAL_CONTEXT = Context(prec=28)  # Python's default context, as used by rdflib

# Value kinds. OTHER: a literal of an unknown datatype, or ill-typed (``"abc"^^xsd:integer``).
IRI, BNODE, STR, LANG, NUM, BOOL, DATETIME, OTHER = range(8)

_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DOUBLE_RE = re.compile(r"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN)")
_DATETIME_RE = re.compile(
    r"-?[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)


class Value:
    """A term read for evaluation: kind, Python value, lexical form, datatype (``<…>``) and language.

    ``value`` is an int, Decimal or float (NUM; ``rank`` 0-3 = integer, decimal, float, double), a bool,
    a datetime, or the lexical form. ``text`` is the N-Triples form (None until :meth:`nt` builds it).
    """

    __slots__ = ("kind", "value", "lex", "dt", "lang", "rank", "text")

    def __init__(self, kind, value, lex, dt=None, lang=None, rank=0, text=None):
        self.kind = kind
        self.value = value
        self.lex = lex
        self.dt = dt
        self.lang = lang
        self.rank = rank
        self.text = text

    def nt(self) -> str:
        """The term in N-Triples syntax."""
        text = self.text
        if text is None:
            text = '"' + escape(self.lex) + '"'
            if self.lang is not None:
                text += "@" + self.lang
            elif self.dt is not None and self.dt != XSD_STRING:
                text += "^^" + self.dt
            self.text = text
        return text

    def __repr__(self) -> str:
        return f"Value({self.nt()})"


def escape(lexical: str) -> str:
    """Escape a lexical form for an N-Triples string literal."""
    if "\\" in lexical or '"' in lexical or "\n" in lexical or "\r" in lexical:
        lexical = lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return lexical


def _parse_datetime(lexical: str) -> datetime | None:
    if _DATETIME_RE.fullmatch(lexical) is None:
        return None
    try:
        return datetime.fromisoformat(lexical.replace("Z", "+00:00"))
    except ValueError:
        return None


def _typed(lex: str, dt: str, text: str | None = None) -> Value:
    """A literal with a datatype, its value parsed when the datatype is known and the form valid."""
    rank = NUMERIC_TYPES.get(dt)
    if rank is not None:
        try:
            if rank == 0 and _INTEGER_RE.fullmatch(lex):
                return Value(NUM, int(lex), lex, dt, None, 0, text)
            if rank == 1 and _DECIMAL_RE.fullmatch(lex):
                return Value(NUM, Decimal(lex), lex, dt, None, 1, text)
            if rank >= 2 and _DOUBLE_RE.fullmatch(lex):
                return Value(NUM, float(lex), lex, dt, None, rank, text)
        except (ValueError, InvalidOperation):
            pass
    elif dt == XSD_STRING:
        return Value(STR, lex, lex, dt, None, 0, text)
    elif dt == XSD_BOOLEAN:
        if lex in ("true", "1"):
            return Value(BOOL, True, lex, dt, None, 0, text)
        if lex in ("false", "0"):
            return Value(BOOL, False, lex, dt, None, 0, text)
    elif dt == XSD_DATETIME:
        value = _parse_datetime(lex)
        if value is not None:
            return Value(DATETIME, value, lex, dt, None, 0, text)
    return Value(OTHER, lex, lex, dt, None, 0, text)


def parse_term(text: str) -> Value:
    """Read one N-Triples term (uncached; see :func:`term_value`)."""
    first = text[0]
    if first == "<":
        return Value(IRI, text[1:-1], text[1:-1], None, None, 0, text)
    if first == "_":
        return Value(BNODE, text, text, None, None, 0, text)
    end = text.rfind('"')
    lex = unescape(text[1:end])
    rest = text[end + 1 :]
    if not rest:
        return Value(STR, lex, lex, None, None, 0, text)
    if rest[0] == "@":
        return Value(LANG, lex, lex, None, rest[1:], 0, text)
    return _typed(lex, rest[2:], text)


_CACHE: dict[str, Value] = {}
_CACHE_LIMIT = 1 << 18  # bounded: an endless stream must not grow it forever


def term_value(text: str) -> Value:
    """The :class:`Value` of a term, memoised by its text."""
    value = _CACHE.get(text)
    if value is None:
        value = parse_term(text)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[text] = value
    return value


# -- building computed values ---------------------------------------------------------------------


def format_number(value: int | Decimal | float, rank: int) -> str:
    """The XSD canonical lexical form of a computed number (XML Schema 1.0 §3.2): integers without
    leading zeros, decimals with one digit at least on each side of the point (``2.0``, ``-0.5``),
    floats and doubles as a mantissa in [1, 10) and an exponent (``3.21E4``, ``1.0E0``, ``0.0E0``,
    ``INF``, ``-INF``, ``NaN``).

    >>> format_number(Decimal("2"), 1), format_number(Decimal("-0.50"), 1), format_number(32100.0, 3)
    ('2.0', '-0.5', '3.21E4')
    """
    if rank == 0:
        return str(value)
    if rank == 1:
        if value == 0:
            return "0.0"
        text = f"{value:f}"
        if "." not in text:
            return text + ".0"
        text = text.rstrip("0")
        return text + "0" if text.endswith(".") else text
    x = float(value)
    if math.isinf(x):
        return "INF" if x > 0 else "-INF"
    if math.isnan(x):
        return "NaN"
    if x == 0:
        return "-0.0E0" if math.copysign(1, x) < 0 else "0.0E0"
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    mantissa = str(digits[0]) + "." + ("".join(map(str, digits[1:])) or "0")
    return f"{'-' if sign else ''}{mantissa}E{len(digits) - 1 + exponent}"


_LEX = Value.lex  # the slot's descriptor: a computed number keeps its lexical form there once built


class _Computed(Value):
    """A number computed by an expression: its lexical form (:func:`format_number`, the costly part of an
    arithmetic step) is built when first read, so a FILTER comparing sums and products builds none."""

    __slots__ = ()

    @property
    def lex(self) -> str:
        lex = _LEX.__get__(self, Value)
        if lex is None:
            lex = format_number(self.value, self.rank)
            _LEX.__set__(self, lex)
        return lex

    @lex.setter
    def lex(self, lex: str | None) -> None:
        _LEX.__set__(self, lex)


def number(value: int | Decimal | float, rank: int, dt: str | None = None) -> Value:
    """A computed number of type ``rank`` (``dt`` its datatype if not the rank's own)."""
    return _Computed(NUM, value, None, dt or RANK_TYPES[rank], None, rank)


def string(lex: str, lang: str | None = None) -> Value:
    return Value(LANG if lang is not None else STR, lex, lex, None, lang)


TRUE = term_value(f'"true"^^{XSD_BOOLEAN}')
FALSE = term_value(f'"false"^^{XSD_BOOLEAN}')


def ebv(v: Value | None) -> bool | None:
    """Effective boolean value (§17.2.2); None for a type error."""
    if v is None:
        return None
    kind = v.kind
    if kind == BOOL:
        return v.value
    if kind == NUM:
        return bool(v.value) and v.value == v.value
    if kind == STR or kind == LANG:
        return len(v.lex) > 0
    if kind == OTHER and (v.dt in NUMERIC_TYPES or v.dt == XSD_BOOLEAN):
        return False  # ill-typed boolean or number
    return None


# -- comparison -----------------------------------------------------------------------------------

_UNORDERED = 2  # a NaN was compared


def order(a: Value, b: Value) -> int | None:
    """-1, 0, 1 for comparable values, ``_UNORDERED`` with NaN, None when the operators are undefined."""
    kind = a.kind
    if kind != b.kind:
        return None
    if kind == NUM:
        x, y = a.value, b.value
        if a.rank != b.rank and (a.rank >= 2 or b.rank >= 2):
            x, y = float(x), float(y)
        if x < y:
            return -1
        if x > y:
            return 1
        return 0 if x == y else _UNORDERED
    if kind == STR or kind == BOOL:
        x, y = a.value, b.value
    elif kind == LANG:
        if a.lang.lower() != b.lang.lower():
            return None
        x, y = a.value, b.value
    elif kind == DATETIME:
        x, y = a.value, b.value
        if (x.tzinfo is None) != (y.tzinfo is None):
            return None
    else:
        return None
    return -1 if x < y else (1 if x > y else 0)


def same_term(a: Value, b: Value) -> bool:
    if a.kind == LANG or b.kind == LANG:
        return a.kind == b.kind and a.lex == b.lex and a.lang.lower() == b.lang.lower()
    return a.nt() == b.nt()


def equal(a: Value, b: Value) -> bool | None:
    """SPARQL ``=``: value equality for known types, RDFterm-equal otherwise; None for a type error."""
    o = order(a, b)
    if o is not None:
        return o == 0
    if same_term(a, b):
        return True
    if a.kind <= BNODE or b.kind <= BNODE:
        return False
    if a.kind == OTHER and b.kind == OTHER or _ill_typed(a) or _ill_typed(b):
        return None  # two different literals whose values we cannot know
    # literals of different types, at least one known: different values (as in rdflib; the spec allows
    # this extension of RDFterm-equal)
    return False


def _ill_typed(v: Value) -> bool:
    return v.kind == OTHER and (v.dt in NUMERIC_TYPES or v.dt in _KNOWN_TYPES)


_RELATIONS: dict[str, Callable[[int], bool]] = {
    "<": lambda o: o == -1,
    "<=": lambda o: o == -1 or o == 0,
    ">": lambda o: o == 1,
    ">=": lambda o: o == 1 or o == 0,
}


ValueFn = Callable[[tuple], "Value | None"]
CondFn = Callable[[tuple], "bool | None"]


def numeric_op(op: str, a: Value, b: Value) -> Value | None:
    """``a op b`` for two numbers, with XPath type promotion; None for division by zero."""
    rank = a.rank if a.rank > b.rank else b.rank
    x, y = a.value, b.value
    try:
        if rank == 0 and op != "/":
            r = x + y if op == "+" else (x - y if op == "-" else x * y)
        elif rank <= 1:
            rank = 1
            x, y = Decimal(x), Decimal(y)
            ctx = DECIMAL_CONTEXT
            if op == "+":
                r = ctx.add(x, y)
            elif op == "-":
                r = ctx.subtract(x, y)
            elif op == "*":
                r = ctx.multiply(x, y)
            else:
                r = ctx.divide(x, y)
        else:
            x, y = float(x), float(y)
            if op == "+":
                r = x + y
            elif op == "-":
                r = x - y
            elif op == "*":
                r = x * y
            elif y == 0:  # IEEE 754 (the spec); rdflib reports an error instead
                r = math.nan if x == 0 or x != x else math.copysign(math.inf, x) * math.copysign(1, y)
            else:
                r = x / y
    except (ArithmeticError, OverflowError):
        return None
    return number(r, rank)
