"""SPARQL 1.1 expressions (§17) compiled once into Python closures over solution tuples (the values they
compute are :mod:`rsp.query.answers.values`, the built-in functions :mod:`rsp.query.answers.functions`).

Terms are N-Triples strings (see :mod:`rsp.query.syntax.ast`); a solution is a tuple of terms (None = unbound)
in the order of the ``variables`` given to the compiler. Inside a compiled expression terms are read
once into :class:`Value` objects (memoised per term text), so that the same data term compared a
million times is parsed once. Numbers that are only compared or projected keep their lexical forms;
computed numbers are written in their XSD canonical lexical form (XML Schema 1.0: ``"2.5"`` for ``5/2``,
a decimal ``"2.0"``, a double ``"5.5E1"``).

``NOW()`` is the evaluation instant (the :class:`rsp.query.answers.context.EvalContext` an expression is
compiled with); ``RAND()``, ``UUID()``, ``STRUUID()`` and ``BNODE()`` give a new value at every call
(``BNODE(str)`` the same blank node within one solution, see :meth:`EvalContext.new_solution`).

>>> from rsp.query.syntax.ast import BinaryOp, Var
>>> f = compile_filter(BinaryOp(">", Var("v"), '"80"^^<http://www.w3.org/2001/XMLSchema#integer>'), ["v"])
>>> f(('"81.5"^^<http://www.w3.org/2001/XMLSchema#double>',)), f((None,)), f(('"hot"',))
(True, False, False)
>>> compile_expr(BinaryOp("/", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>',
...                       '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'), [])(())
'"2.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rsp.errors import QuerySyntaxError
from rsp.query.answers.context import WALL_CLOCK
from rsp.query.answers.functions import _CASTS, _CONDITIONS, _FUNCTIONS, _index
from rsp.query.answers.functions import _on_value as _on_value  # rsp.query.answers.builtins builds with it

# the value layer; BNODE, DECIMAL_CONTEXT, escape, format_number, string … are re-exported for the
# modules that read them from here (rsp.query.answers.aggregates, rsp.query.answers.builtins, tests)
from rsp.query.answers.values import (  # noqa: F401
    _CACHE,
    _RELATIONS,
    _UNORDERED,
    BNODE,
    BOOL,
    DATETIME,
    DECIMAL_CONTEXT,
    FALSE,
    IRI,
    LANG,
    NUM,
    RANK_TYPES,
    STR,
    TRUE,
    XSD_DATETIME,
    XSD_DECIMAL,
    CondFn,
    Value,
    ValueFn,
    ebv,
    equal,
    escape,
    format_number,
    number,
    numeric_op,
    order,
    parse_term,
    string,
    term_value,
)
from rsp.query.syntax.ast import Aggregate, BinaryOp, Exists, Expr, FunctionCall, InList, UnaryOp, Var


def compile_expr(
    expr: Expr, variables: Sequence[str], exists: Callable | None = None, context=None
) -> Callable[[tuple], str | None]:
    """Compile ``expr`` to a function from a solution tuple to the result term (None for an error).

    >>> from rsp.query.syntax.ast import FunctionCall, Var
    >>> f = compile_expr(FunctionCall("UCASE", (Var("x"),)), ["x"])
    >>> f(('"chat"@en',)), f(('<http://ex.org/a>',))
    ('"CHAT"@en', None)
    """
    if isinstance(expr, Var):
        i = _index(variables, expr)
        return lambda sol: sol[i]
    if isinstance(expr, str):
        return lambda sol: expr
    fn = _Compiler(variables, exists, context).value(expr)

    def term(sol: tuple) -> str | None:
        v = fn(sol)
        return None if v is None else v.nt()

    return term


def compile_filter(
    expr: Expr, variables: Sequence[str], exists: Callable | None = None, context=None
) -> Callable[[tuple], bool]:
    """Compile ``expr`` to its effective boolean value over a solution tuple (errors give False)."""
    cond = _Compiler(variables, exists, context).cond(expr)
    return lambda sol: cond(sol) is True


def compile_value(
    expr: Expr, variables: Sequence[str], exists: Callable | None = None, context=None
) -> ValueFn:
    """Compile ``expr`` to a function giving its :class:`Value` (used by the aggregates)."""
    return _Compiler(variables, exists, context).value(expr)


class _Compiler:
    def __init__(self, variables: Sequence[str], exists: Callable | None, context=None) -> None:
        self.variables = list(variables)
        self.exists = exists
        if context is None:
            context = WALL_CLOCK
        self.context = context
        """The :class:`rsp.query.answers.context.EvalContext` that NOW(), BNODE() and f:timestamp read."""

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


# STRDT, STRLANG, BNODE, hashes, dateTime parts, NOW, RAND, UUID …: rsp.query.answers.builtins adds them to
# _FUNCTIONS when it is imported (last, so that either module may be imported first)
import rsp.query.answers.builtins  # noqa: E402, F401
