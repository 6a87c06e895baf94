"""The SPARQL 1.1 built-in functions of :mod:`rsp.query.answers.expr` (§17.4): the tests (BOUND, sameTerm,
isIRI …, REGEX, langMatches), the functional forms IF and COALESCE, string, numeric and IRI functions, and the
XSD casts, each a builder ``(compiler, call) -> closure`` in the tables :data:`_CONDITIONS`,
:data:`_FUNCTIONS` and :data:`_CASTS` (:mod:`rsp.query.answers.builtins` adds the rest to
:data:`_FUNCTIONS`)."""

from __future__ import annotations

import math
import re
import urllib.parse
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal
from typing import Protocol

from rsp.query.answers.values import (
    _DECIMAL_RE,
    _DOUBLE_RE,
    _INTEGER_RE,
    BNODE,
    BOOL,
    DATETIME,
    FALSE,
    IRI,
    LANG,
    NUM,
    RDF_LANGSTRING,
    STR,
    TRUE,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
    CondFn,
    Value,
    ValueFn,
    _parse_datetime,
    number,
    same_term,
    string,
    term_value,
)
from rsp.query.syntax.ast import FunctionCall, Var


class Compiler(Protocol):
    """What a function's builder gets from the expression compiler (rsp.query.answers.expr.Compiler)."""

    variables: list[str]
    context: object

    def value(self, expr) -> ValueFn: ...

    def cond(self, expr) -> CondFn: ...

    def args(self, expr: FunctionCall, low: int, high: int) -> list[ValueFn]: ...

# -- built-in functions ---------------------------------------------------------------------------


def _index(variables: Sequence[str], var: Var) -> int | None:
    try:
        return list(variables).index(var.name)
    except ValueError:
        return None  # a variable the pattern never binds: always unbound


def _unary(test: Callable[[Value], bool | None]) -> Callable[[Compiler, FunctionCall], CondFn]:
    def build(c: Compiler, expr: FunctionCall) -> CondFn:
        (fa,) = c.args(expr, 1)

        def check(sol: tuple) -> bool | None:
            a = fa(sol)
            return None if a is None else test(a)

        return check

    return build


def _bound(c: Compiler, expr: FunctionCall) -> CondFn:
    if len(expr.args) != 1 or not isinstance(expr.args[0], Var):
        raise c.error("BOUND takes one variable", expr)
    i = _index(c.variables, expr.args[0])
    if i is None:
        return lambda sol: False
    return lambda sol: sol[i] is not None


def _same_term(c: Compiler, expr: FunctionCall) -> CondFn:
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


def _string_pair(test: Callable[[str, str], bool]) -> Callable[[Compiler, FunctionCall], CondFn]:
    def build(c: Compiler, expr: FunctionCall) -> CondFn:
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


def _regex(c: Compiler, expr: FunctionCall) -> CondFn:
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


def _lang_matches(c: Compiler, expr: FunctionCall) -> CondFn:
    fa, fb = c.args(expr, 2)

    def check(sol: tuple) -> bool | None:
        a, b = fa(sol), fb(sol)
        if a is None or b is None or a.kind != STR or b.kind != STR:
            return None
        return _langmatches(a.lex, b.lex)

    return check


def _if(c: Compiler, expr: FunctionCall) -> ValueFn:
    if len(expr.args) != 3:
        raise c.error("IF takes three arguments", expr)
    test, fa, fb = c.cond(expr.args[0]), c.value(expr.args[1]), c.value(expr.args[2])

    def if_(sol: tuple) -> Value | None:
        b = test(sol)
        if b is None:
            return None
        return fa(sol) if b else fb(sol)

    return if_


def _coalesce(c: Compiler, expr: FunctionCall) -> ValueFn:
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
) -> Callable[[Compiler, FunctionCall], ValueFn]:
    """A function of its argument values (any error or unbound argument gives an error)."""

    def build(c: Compiler, expr: FunctionCall) -> ValueFn:
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

_CONDITIONS: dict[str, Callable[[Compiler, FunctionCall], CondFn]] = {
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

_FUNCTIONS: dict[str, Callable[[Compiler, FunctionCall], ValueFn]] = {
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
