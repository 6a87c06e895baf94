"""SPARQL 1.1 expressions (§17) compiled once into Python closures over solution tuples.

Terms are N-Triples strings (see :mod:`rsp.query.ast`); a solution is a tuple of terms (None = unbound)
in the order of the ``variables`` given to the compiler. Inside a compiled expression terms are read
once into :class:`Value` objects (memoised per term text), so that the same data term compared a
million times is parsed once. Numbers that are only compared or projected keep their lexical forms;
computed numbers are written in their XSD canonical lexical form (XML Schema 1.0: ``"2.5"`` for ``5/2``,
a decimal ``"2.0"``, a double ``"5.5E1"``).

``NOW()`` is the evaluation instant (:func:`set_now`); ``RAND()``, ``UUID()``, ``STRUUID()`` and ``BNODE()``
give a new value at every call (``BNODE(str)`` the same blank node within one solution, see
:func:`new_solution`).

>>> from rsp.query.ast import BinaryOp, Var
>>> f = compile_filter(BinaryOp(">", Var("v"), '"80"^^<http://www.w3.org/2001/XMLSchema#integer>'), ["v"])
>>> f(('"81.5"^^<http://www.w3.org/2001/XMLSchema#double>',)), f((None,)), f(('"hot"',))
(True, False, False)
>>> compile_expr(BinaryOp("/", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>',
...                       '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'), [])(())
'"2.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'
"""

from __future__ import annotations

import math
import re
import urllib.parse
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Context, Decimal, InvalidOperation

from rsp.errors import QuerySyntaxError
from rsp.query.ast import Aggregate, BinaryOp, Exists, Expr, FunctionCall, InList, UnaryOp, Var

XSD = "http://www.w3.org/2001/XMLSchema#"
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
_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


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


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body

    def one(m: re.Match[str]) -> str:
        if m.group(3) is not None:
            return _ESCAPES.get(m.group(3), m.group(3))
        return chr(int(m.group(1) or m.group(2), 16))

    return _ESCAPE_RE.sub(one, body)


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
    lex = _unescape(text[1:end])
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


def number(value: int | Decimal | float, rank: int, dt: str | None = None) -> Value:
    return Value(NUM, value, format_number(value, rank), dt or RANK_TYPES[rank], None, rank)


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


# -- the compiler ---------------------------------------------------------------------------------

ValueFn = Callable[[tuple], "Value | None"]
CondFn = Callable[[tuple], "bool | None"]


def compile_expr(
    expr: Expr, variables: Sequence[str], exists: Callable | None = None
) -> Callable[[tuple], str | None]:
    """Compile ``expr`` to a function from a solution tuple to the result term (None for an error).

    >>> from rsp.query.ast import FunctionCall, Var
    >>> f = compile_expr(FunctionCall("UCASE", (Var("x"),)), ["x"])
    >>> f(('"chat"@en',)), f(('<http://ex.org/a>',))
    ('"CHAT"@en', None)
    """
    if isinstance(expr, Var):
        i = _index(variables, expr)
        return lambda sol: sol[i]
    if isinstance(expr, str):
        return lambda sol: expr
    fn = _Compiler(variables, exists).value(expr)

    def term(sol: tuple) -> str | None:
        v = fn(sol)
        return None if v is None else v.nt()

    return term


def compile_filter(
    expr: Expr, variables: Sequence[str], exists: Callable | None = None
) -> Callable[[tuple], bool]:
    """Compile ``expr`` to its effective boolean value over a solution tuple (errors give False)."""
    cond = _Compiler(variables, exists).cond(expr)
    return lambda sol: cond(sol) is True


def compile_value(expr: Expr, variables: Sequence[str], exists: Callable | None = None) -> ValueFn:
    """Compile ``expr`` to a function giving its :class:`Value` (used by the aggregates)."""
    return _Compiler(variables, exists).value(expr)


def _index(variables: Sequence[str], var: Var) -> int | None:
    try:
        return list(variables).index(var.name)
    except ValueError:
        return None  # a variable the pattern never binds: always unbound


class _Compiler:
    def __init__(self, variables: Sequence[str], exists: Callable | None) -> None:
        self.variables = list(variables)
        self.exists = exists

    def error(self, message: str, expr: Expr) -> QuerySyntaxError:
        return QuerySyntaxError(message, getattr(expr, "pos", None))

    # value-producing closures

    def value(self, expr: Expr) -> ValueFn:
        match expr:
            case Var():
                i = _index(self.variables, expr)
                if i is None:
                    return lambda sol: None
                get = _CACHE.get

                def var(sol: tuple) -> Value | None:
                    t = sol[i]
                    if t is None:
                        return None
                    return get(t) or term_value(t)

                return var
            case str():
                v = parse_term(expr)
                return lambda sol: v
            case BinaryOp(op=op) if op in ("+", "-", "*", "/"):
                return self.arithmetic(op, self.value(expr.left), self.value(expr.right))
            case UnaryOp(op="-" | "+"):
                return self.sign(expr.op, self.value(expr.arg))
            case FunctionCall():
                builder = _FUNCTIONS.get(expr.name)
                if builder is None:
                    if expr.name in _CASTS:
                        return self.cast(expr)
                    if expr.name not in _CONDITIONS:
                        raise self.error(f"unknown function {expr.name}", expr)
                else:
                    return builder(self, expr)
            case Aggregate():
                raise self.error(f"aggregate {expr.name} outside SELECT, HAVING or ORDER BY", expr)
        cond = self.cond(expr)

        def boolean(sol: tuple) -> Value | None:
            b = cond(sol)
            return None if b is None else (TRUE if b else FALSE)

        return boolean

    def arithmetic(self, op: str, fa: ValueFn, fb: ValueFn) -> ValueFn:
        def arith(sol: tuple) -> Value | None:
            a = fa(sol)
            if a is None or a.kind != NUM:
                return None
            b = fb(sol)
            if b is None or b.kind != NUM:
                return None
            return numeric_op(op, a, b)

        return arith

    def sign(self, op: str, fa: ValueFn) -> ValueFn:
        def sign(sol: tuple) -> Value | None:
            a = fa(sol)
            if a is None or a.kind != NUM:
                return None
            rank = a.rank
            # rdflib turns xsd:float into a double here; the spec keeps the operand's type
            return number(-a.value if op == "-" else +a.value, rank, RANK_TYPES[rank])

        return sign

    # boolean closures (True / False / None for an error)

    def cond(self, expr: Expr) -> CondFn:
        match expr:
            case BinaryOp(op="||"):
                return _or(self.cond(expr.left), self.cond(expr.right))
            case BinaryOp(op="&&"):
                return _and(self.cond(expr.left), self.cond(expr.right))
            case BinaryOp(op=op) if op in ("=", "!=", "<", "<=", ">", ">="):
                return self.comparison(op, expr.left, expr.right)
            case UnaryOp(op="!"):
                inner = self.cond(expr.arg)

                def negation(sol: tuple) -> bool | None:
                    b = inner(sol)
                    return None if b is None else not b

                return negation
            case InList():
                return self.in_list(expr)
            case Exists():
                return self.exists_cond(expr)
            case FunctionCall(name=name) if name in _CONDITIONS:
                return _CONDITIONS[name](self, expr)
        fn = self.value(expr)
        return lambda sol: ebv(fn(sol))

    def comparison(self, op: str, left: Expr, right: Expr) -> CondFn:
        if op in ("=", "!="):
            fa, fb = self.value(left), self.value(right)
            negate = op == "!="

            def eq(sol: tuple) -> bool | None:
                a = fa(sol)
                if a is None:
                    return None
                b = fb(sol)
                if b is None:
                    return None
                r = equal(a, b)
                return r if r is None or not negate else not r

            return eq
        relation = _RELATIONS[op]
        if isinstance(left, Var) and isinstance(right, str) and term_value(right).kind == NUM:
            return self.numeric_threshold(op, left, term_value(right))
        if isinstance(right, Var) and isinstance(left, str) and term_value(left).kind == NUM:
            flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
            return self.numeric_threshold(flipped, right, term_value(left))
        fa, fb = self.value(left), self.value(right)

        def rel(sol: tuple) -> bool | None:
            a = fa(sol)
            if a is None:
                return None
            b = fb(sol)
            if b is None:
                return None
            o = order(a, b)
            return None if o is None else relation(o)

        return rel

    def numeric_threshold(self, op: str, var: Var, const: Value) -> CondFn:
        """``?v op number``, the commonest filter of stream queries, with the cache read inline."""
        i = _index(self.variables, var)
        if i is None:
            return lambda sol: None
        get = _CACHE.get
        relation = _RELATIONS[op]
        c, c_rank, c_float = const.value, const.rank, float(const.value)
        compare = {
            "<": lambda x, y: x < y,
            "<=": lambda x, y: x <= y,
            ">": lambda x, y: x > y,
            ">=": lambda x, y: x >= y,
        }[op]

        if op == ">":

            def threshold(sol: tuple) -> bool | None:
                t = sol[i]
                if t is None:
                    return None
                v = get(t) or term_value(t)
                if v.kind != NUM:
                    return None
                if v.rank >= 2:
                    return v.value > c_float
                if c_rank >= 2:
                    return float(v.value) > c_float
                return v.value > c

            return threshold

        def general(sol: tuple) -> bool | None:
            t = sol[i]
            if t is None:
                return None
            v = get(t) or term_value(t)
            if v.kind != NUM:
                return None
            if v.rank >= 2 or c_rank >= 2:
                x = float(v.value)
                if x != x or c_float != c_float:
                    return relation(_UNORDERED)
                return compare(x, c_float)
            return compare(v.value, c)

        return general

    def in_list(self, expr: InList) -> CondFn:
        fa = self.value(expr.expr)
        options = [self.value(o) for o in expr.options]
        negated = expr.negated

        def member(sol: tuple) -> bool | None:
            a = fa(sol)
            if a is None:
                return None
            error = False
            for fo in options:
                o = fo(sol)
                r = None if o is None else equal(a, o)
                if r:
                    return not negated
                if r is None:
                    error = True
            return None if error else negated

        return member

    def exists_cond(self, expr: Exists) -> CondFn:
        callback = self.exists
        if callback is None:
            raise self.error("EXISTS is not supported here", expr)
        if expr.negated:
            return lambda sol: not callback(expr, sol)
        return lambda sol: bool(callback(expr, sol))

    def cast(self, expr: FunctionCall) -> ValueFn:
        if len(expr.args) != 1:
            raise self.error(f"a cast takes one argument: {expr.name}", expr)
        fa = self.value(expr.args[0])
        convert = _CASTS[expr.name]

        def cast(sol: tuple) -> Value | None:
            a = fa(sol)
            if a is None:
                return None
            try:
                return convert(a)
            except (ValueError, ArithmeticError, OverflowError):
                return None

        return cast

    def args(self, expr: FunctionCall, low: int, high: int | None = None) -> list[ValueFn]:
        high = low if high is None else high
        if not low <= len(expr.args) <= high:
            raise self.error(f"{expr.name} takes {low}-{high} arguments, got {len(expr.args)}", expr)
        return [self.value(a) for a in expr.args]


def _or(fa: CondFn, fb: CondFn) -> CondFn:
    def disjunction(sol: tuple) -> bool | None:
        a = fa(sol)
        if a is True:
            return True
        b = fb(sol)
        if b is True:
            return True
        return None if a is None or b is None else False

    return disjunction


def _and(fa: CondFn, fb: CondFn) -> CondFn:
    def conjunction(sol: tuple) -> bool | None:
        a = fa(sol)
        if a is False:
            return False
        b = fb(sol)
        if b is False:
            return False
        return None if a is None or b is None else True

    return conjunction


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


# -- built-in functions ---------------------------------------------------------------------------


def _unary(test: Callable[[Value], bool | None]) -> Callable[[_Compiler, FunctionCall], CondFn]:
    def build(c: _Compiler, expr: FunctionCall) -> CondFn:
        (fa,) = c.args(expr, 1)

        def check(sol: tuple) -> bool | None:
            a = fa(sol)
            return None if a is None else test(a)

        return check

    return build


def _bound(c: _Compiler, expr: FunctionCall) -> CondFn:
    if len(expr.args) != 1 or not isinstance(expr.args[0], Var):
        raise c.error("BOUND takes one variable", expr)
    i = _index(c.variables, expr.args[0])
    if i is None:
        return lambda sol: False
    return lambda sol: sol[i] is not None


def _same_term(c: _Compiler, expr: FunctionCall) -> CondFn:
    fa, fb = c.args(expr, 2)

    def same(sol: tuple) -> bool | None:
        a, b = fa(sol), fb(sol)
        return None if a is None or b is None else same_term(a, b)

    return same


def _compatible(a: Value, b: Value) -> bool:
    """Argument compatibility of two string literals (§17.4.3.1.2)."""
    if b.kind == STR:
        return a.kind == STR or a.kind == LANG
    return a.kind == LANG and b.kind == LANG and a.lang.lower() == b.lang.lower()


def _string_pair(test: Callable[[str, str], bool]) -> Callable[[_Compiler, FunctionCall], CondFn]:
    def build(c: _Compiler, expr: FunctionCall) -> CondFn:
        fa, fb = c.args(expr, 2)

        def check(sol: tuple) -> bool | None:
            a, b = fa(sol), fb(sol)
            if a is None or b is None or not _compatible(a, b):
                return None
            return test(a.lex, b.lex)

        return check

    return build


def _regex_flags(flags: str) -> tuple[int, bool] | None:
    value, quote = 0, False
    for f in flags:
        if f == "i":
            value |= re.IGNORECASE
        elif f == "s":
            value |= re.DOTALL
        elif f == "m":
            value |= re.MULTILINE
        elif f == "x":
            value |= re.VERBOSE
        elif f == "q":
            quote = True
        else:
            return None
    return value, quote


def _pattern(p: Value, f: Value | None) -> re.Pattern[str] | None:
    if p.kind != STR or (f is not None and f.kind != STR):
        return None
    flags = _regex_flags(f.lex if f is not None else "")
    if flags is None:
        return None
    try:
        return re.compile(re.escape(p.lex) if flags[1] else p.lex, flags[0])
    except re.error:
        return None


def _regex(c: _Compiler, expr: FunctionCall) -> CondFn:
    fns = c.args(expr, 2, 3)

    def regex(sol: tuple) -> bool | None:
        vals = [fn(sol) for fn in fns]
        if None in vals:
            return None
        text = vals[0]
        if text.kind != STR and text.kind != LANG:
            return None
        pattern = _pattern(vals[1], vals[2] if len(vals) == 3 else None)
        return None if pattern is None else pattern.search(text.lex) is not None

    return regex


def _langmatches(tag: str, range_: str) -> bool:
    if range_ == "*":
        return tag != ""
    tag, range_ = tag.lower(), range_.lower()
    return tag == range_ or tag.startswith(range_ + "-")


def _lang_matches(c: _Compiler, expr: FunctionCall) -> CondFn:
    fa, fb = c.args(expr, 2)

    def check(sol: tuple) -> bool | None:
        a, b = fa(sol), fb(sol)
        if a is None or b is None or a.kind != STR or b.kind != STR:
            return None
        return _langmatches(a.lex, b.lex)

    return check


def _if(c: _Compiler, expr: FunctionCall) -> ValueFn:
    if len(expr.args) != 3:
        raise c.error("IF takes three arguments", expr)
    test, fa, fb = c.cond(expr.args[0]), c.value(expr.args[1]), c.value(expr.args[2])

    def if_(sol: tuple) -> Value | None:
        b = test(sol)
        if b is None:
            return None
        return fa(sol) if b else fb(sol)

    return if_


def _coalesce(c: _Compiler, expr: FunctionCall) -> ValueFn:
    fns = [c.value(a) for a in expr.args]

    def coalesce(sol: tuple) -> Value | None:
        for fn in fns:
            v = fn(sol)
            if v is not None:
                return v
        return None

    return coalesce


def _on_value(
    low: int, high: int, fn: Callable[..., Value | None]
) -> Callable[[_Compiler, FunctionCall], ValueFn]:
    """A function of its argument values (any error or unbound argument gives an error)."""

    def build(c: _Compiler, expr: FunctionCall) -> ValueFn:
        fns = c.args(expr, low, high)
        if len(fns) == 1:
            (fa,) = fns

            def one(sol: tuple) -> Value | None:
                a = fa(sol)
                return None if a is None else fn(a)

            return one

        def many(sol: tuple) -> Value | None:
            vals = [f(sol) for f in fns]
            return None if None in vals else fn(*vals)

        return many

    return build


def _is_string(v: Value) -> bool:
    return v.kind == STR or v.kind == LANG


def _str(a: Value) -> Value | None:
    return None if a.kind == BNODE else string(a.lex)


def _lang(a: Value) -> Value | None:
    if a.kind <= BNODE:
        return None
    return string(a.lang or "")


def _datatype(a: Value) -> Value | None:
    if a.kind <= BNODE:
        return None
    if a.kind == LANG:
        return term_value(RDF_LANGSTRING)
    return term_value(a.dt or XSD_STRING)


def _iri(a: Value, base: Value | None = None) -> Value | None:
    """IRI(x): an IRI as it is, a string as an IRI resolved against the query's BASE (the parser passes
    BASE as a hidden second argument)."""
    if a.kind == IRI:
        return a
    if a.kind == STR:
        return term_value(f"<{urllib.parse.urljoin(base.lex, a.lex) if base is not None else a.lex}>")
    return None


def _string_map(fn: Callable[[str], str]) -> Callable[[Value], Value | None]:
    return lambda a: string(fn(a.lex), a.lang) if _is_string(a) else None


def _strlen(a: Value) -> Value | None:
    return number(len(a.lex), 0) if _is_string(a) else None


def _substr(source: Value, start: Value, length: Value | None = None) -> Value | None:
    """XPath fn:substring: the characters at positions p with start ≤ p < start + length (1-based)."""
    if not _is_string(source) or start.kind != NUM or start.rank != 0:
        return None
    if length is not None and (length.kind != NUM or length.rank != 0):
        return None
    first = max(start.value, 1)
    end = len(source.lex) + 1 if length is None else start.value + length.value
    return string(source.lex[first - 1 : max(end - 1, first - 1)], source.lang)


def _str_before(a: Value, b: Value) -> Value | None:
    if not _compatible(a, b):
        return None
    i = a.lex.find(b.lex)
    return string("") if i < 0 else string(a.lex[:i], a.lang)


def _str_after(a: Value, b: Value) -> Value | None:
    if not _compatible(a, b):
        return None
    i = a.lex.find(b.lex)
    return string("") if i < 0 else string(a.lex[i + len(b.lex) :], a.lang)


def _concat(*vals: Value) -> Value | None:
    if not all(_is_string(v) for v in vals):
        return None
    langs = {v.lang.lower() if v.lang else None for v in vals}
    lang = vals[0].lang if len(langs) == 1 and None not in langs else None
    return string("".join(v.lex for v in vals), lang)


def _replacement(text: str) -> str | None:
    """An XPath replacement string (``$1``, ``\\$``) as a Python ``re.sub`` template."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 < len(text) and text[i + 1] in "\\$":
                out.append("\\\\" if text[i + 1] == "\\" else "$")
                i += 2
                continue
            return None
        if ch == "$":
            m = re.match(r"[0-9]+", text[i + 1 :])
            if m is None:
                return None
            out.append(f"\\g<{m.group()}>")
            i += 1 + len(m.group())
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _replace(text: Value, pattern: Value, replacement: Value, flags: Value | None = None) -> Value | None:
    if not _is_string(text) or replacement.kind != STR:
        return None
    compiled = _pattern(pattern, flags)
    template = _replacement(replacement.lex)
    if compiled is None or template is None:
        return None
    try:
        # Python 3.7+ leaves unmatched groups empty, as XPath does
        return string(compiled.sub(template, text.lex), text.lang)
    except (re.error, IndexError):
        return None


def _encode_for_uri(a: Value) -> Value | None:
    return string(urllib.parse.quote(a.lex, safe="")) if _is_string(a) else None


def _numeric(fn: Callable[[Value], Value | None]) -> Callable[[Value], Value | None]:
    return lambda a: fn(a) if a.kind == NUM else None


def _abs(a: Value) -> Value:
    return number(abs(a.value), a.rank)


def _rounding(mode: str) -> Callable[[Value], Value]:
    def rounded(a: Value) -> Value:
        x = a.value
        if isinstance(x, float) and (math.isinf(x) or x != x):
            return a
        if mode == "ceil":
            r = math.ceil(x)
        elif mode == "floor":
            r = math.floor(x)
        else:  # round half towards positive infinity (XPath fn:round), as rdflib does
            r = int(Decimal(x).quantize(1, ROUND_HALF_UP if x > 0 else ROUND_HALF_DOWN))
        # the argument's datatype, the integral value in its canonical form
        return number(type(x)(r), a.rank, a.dt)

    return rounded


def _to_integer(a: Value) -> Value | None:
    if a.kind == NUM:
        if isinstance(a.value, float) and (math.isinf(a.value) or a.value != a.value):
            return None
        return number(int(a.value), 0)
    if a.kind == STR:
        lex = a.lex.strip()
        return number(int(lex), 0) if _INTEGER_RE.fullmatch(lex) else None
    if a.kind == BOOL:
        return number(int(a.value), 0)
    return None


def _to_decimal(a: Value) -> Value | None:
    if a.kind == NUM:
        if a.rank >= 2:
            if math.isinf(a.value) or a.value != a.value:
                return None
            return number(Decimal(repr(a.value)), 1)
        return number(Decimal(a.value), 1)
    if a.kind == STR:
        lex = a.lex.strip()
        return number(Decimal(lex), 1) if _DECIMAL_RE.fullmatch(lex) else None
    if a.kind == BOOL:
        return number(Decimal(int(a.value)), 1)
    return None


def _to_floating(rank: int) -> Callable[[Value], Value | None]:
    def convert(a: Value) -> Value | None:
        if a.kind == NUM:
            return number(float(a.value), rank)
        if a.kind == STR:
            lex = a.lex.strip()
            return number(float(lex), rank) if _DOUBLE_RE.fullmatch(lex) else None
        if a.kind == BOOL:
            return number(float(a.value), rank)
        return None

    return convert


def _to_string(a: Value) -> Value | None:
    return None if a.kind == BNODE else string(a.lex)


def _to_boolean(a: Value) -> Value | None:
    if a.kind == BOOL:
        return TRUE if a.value else FALSE
    if a.kind == NUM:
        return TRUE if a.value and a.value == a.value else FALSE
    if a.kind == STR:
        lex = a.lex.strip()
        if lex in ("true", "1"):
            return TRUE
        if lex in ("false", "0"):
            return FALSE
    return None


def _to_datetime(a: Value) -> Value | None:
    if a.kind == DATETIME:
        value = a.value
    elif a.kind == STR:
        value = _parse_datetime(a.lex.strip())
        if value is None:
            return None
    else:
        return None
    lex = value.isoformat()  # rdflib writes the cast value back with isoformat()
    return Value(DATETIME, value, lex, XSD_DATETIME)


_CASTS: dict[str, Callable[[Value], Value | None]] = {
    XSD_INTEGER: _to_integer,
    XSD_DECIMAL: _to_decimal,
    XSD_FLOAT: _to_floating(2),
    XSD_DOUBLE: _to_floating(3),
    XSD_STRING: _to_string,
    XSD_BOOLEAN: _to_boolean,
    XSD_DATETIME: _to_datetime,
}

_CONDITIONS: dict[str, Callable[[_Compiler, FunctionCall], CondFn]] = {
    "BOUND": _bound,
    "SAMETERM": _same_term,
    "ISIRI": _unary(lambda a: a.kind == IRI),
    "ISURI": _unary(lambda a: a.kind == IRI),
    "ISBLANK": _unary(lambda a: a.kind == BNODE),
    "ISLITERAL": _unary(lambda a: a.kind > BNODE),
    "ISNUMERIC": _unary(lambda a: a.kind == NUM),
    "STRSTARTS": _string_pair(str.startswith),
    "STRENDS": _string_pair(str.endswith),
    "CONTAINS": _string_pair(lambda a, b: b in a),
    "REGEX": _regex,
    "LANGMATCHES": _lang_matches,
}

_FUNCTIONS: dict[str, Callable[[_Compiler, FunctionCall], ValueFn]] = {
    "IF": _if,
    "COALESCE": _coalesce,
    "STR": _on_value(1, 1, _str),
    "LANG": _on_value(1, 1, _lang),
    "DATATYPE": _on_value(1, 1, _datatype),
    "IRI": _on_value(1, 2, _iri),
    "URI": _on_value(1, 2, _iri),
    "STRLEN": _on_value(1, 1, _strlen),
    "SUBSTR": _on_value(2, 3, _substr),
    "UCASE": _on_value(1, 1, _string_map(str.upper)),
    "LCASE": _on_value(1, 1, _string_map(str.lower)),
    "STRBEFORE": _on_value(2, 2, _str_before),
    "STRAFTER": _on_value(2, 2, _str_after),
    "CONCAT": _on_value(0, 1 << 16, _concat),
    "REPLACE": _on_value(3, 4, _replace),
    "ENCODE_FOR_URI": _on_value(1, 1, _encode_for_uri),
    "ABS": _on_value(1, 1, _numeric(_abs)),
    "ROUND": _on_value(1, 1, _numeric(_rounding("round"))),
    "CEIL": _on_value(1, 1, _numeric(_rounding("ceil"))),
    "FLOOR": _on_value(1, 1, _numeric(_rounding("floor"))),
}


# STRDT, STRLANG, BNODE, hashes, dateTime parts, NOW, RAND, UUID …: rsp.query.builtins adds them to
# _FUNCTIONS when it is imported (last, so that either module may be imported first)
import rsp.query.builtins  # noqa: E402, F401
