"""MeTeoR's program syntax: the lark grammar in ``mtl.lark`` and a transformer that builds the model.

Errors are :class:`rsp.errors.ProgramError` with the line and column of the offending text.
"""

from __future__ import annotations

from functools import lru_cache

from lark import Lark, Transformer, UnexpectedInput, v_args

from rsp.errors import Position, ProgramError
from rsp.lark_errors import SemanticError, syntax_error, transform
from rsp.mtl.intervals import make, number
from rsp.mtl.model import Atom, Binary, Origin, Program, Rule, Unary, Var

_TOKEN_NAMES = {
    "IF": "':-'",
    "UNOP": "an operator (Boxminus, Diamondminus, …)",
    "BINOP": "Since",
    "LB": "'[' or '('",
    "RB": "']' or ')'",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "NUMBER": "a number",
    "INF": "inf",
    "NAME": "a name",
    "IRIREF": "an IRI",
    "STRING": "a string",
    "$END": "end of input",
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark.open_from_package(
        "rsp.mtl", "mtl.lark", parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True
    )


class _ToModel(Transformer):
    """Builds model objects from the parse tree and nothing else."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def number(self, children):
        return number(str(children[0]))

    @v_args(meta=True)
    def interval(self, meta, children):
        left, lo, hi, right = children
        iv = make(lo, hi, str(left) == "[", str(right) == "]")
        if lo == -float("inf") or lo < 0 or iv is None:
            raise SemanticError(
                f"bad interval {left}{lo},{hi}{right}: operator intervals are non-empty, with bounds "
                "0 ≤ a ≤ b (b may be inf)",
                meta.line,
                meta.column,
            )
        return iv

    def name(self, children):
        return str(children[0])

    def name_term(self, children):
        text = str(children[0])
        return Var(text) if text[0].isupper() or text[0] == "_" else text

    def constant(self, children):
        return str(children[0])

    def atom(self, children):
        pred, *args = children
        return Atom(pred, tuple(a for a in args if a is not None))

    def unary(self, children):
        op, rho, sub = children
        return Unary(str(op), rho, sub)

    def binary(self, children):
        left, op, rho, right = children
        return Binary(str(op), rho, left, right)

    def body(self, children):
        return tuple(children)

    @v_args(meta=True)
    def rule(self, meta, children):
        head, _, body = children
        return Rule(head, body, Origin(Position(self.source, meta.line, meta.column)))

    def start(self, children):
        return list(children)


def parse_program(text: str, source: str = "<string>") -> Program:
    """Parse MeTeoR rule text into a :class:`Program` (syntax only; see :func:`rsp.mtl.parse`).

    >>> print(parse_program("A(X):-Boxminus[1,2]B(X), C(X)Since(0,1/2]D(X)"))
    A(X):-Boxminus[1,2]B(X), C(X)Since(0,0.5]D(X)
    """
    if "||" in text:
        line = text[: text.index("||")].count("\n") + 1
        column = text.index("||") - (text.rfind("\n", 0, text.index("||")) + 1) + 1
        raise ProgramError("negation ('||') is not supported by rsp mtl", Position(source, line, column))
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, text, source, _TOKEN_NAMES, quote_token=True) from None
    rules = transform(_ToModel(source), tree, source)
    return Program(tuple(rules), source)
