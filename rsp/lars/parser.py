"""The ``.lars`` syntax: the lark grammar in ``lars.lark`` and a transformer that builds the rule model."""

from __future__ import annotations

import re
from functools import lru_cache

from lark import Lark, Token, Transformer, UnexpectedInput, v_args
from lark.exceptions import UnexpectedToken

from rsp.errors import Position, ProgramError
from rsp.lark_errors import SemanticError, syntax_error, transform
from rsp.lars.model import (
    Atom,
    BinOp,
    Comparison,
    ExtAtom,
    Head,
    Op,
    Origin,
    Program,
    Rule,
    Var,
    Window,
    constraint_rule,
)

_TOKEN_NAMES = {
    "DOT": "'.'",
    "COMMA": "','",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "IF": "':-'",
    "VAR": "a variable",
    "LNAME": "a name",
    "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefix",
    "IRIREF": "an IRI",
    "STRING": "a string",
    "INT": "an integer",
    "DECIMAL": "a decimal",
    "CMP": "a comparison",
    "ADD": "'+' or '-'",
    "MUL": "'*' or '/'",
    "NOT": "'not'",
    "DIAMOND": "'<>'",
    "BOX": "'[]'",
    "AT": "'@'",
    "HASH": "'#'",
    "MINUS": "'-'",
    "$END": "end of input",
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark.open_from_package(
        "rsp.lars", "lars.lark", parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True
    )


def _unescape(text: str) -> str:
    return text


class _ToModel(Transformer):
    """Builds model objects from the parse tree; it resolves prefixed names and nothing else."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self.prefixes: dict[str, str] = {}

    # terms -------------------------------------------------------------
    def var(self, children):
        return Var(str(children[0]))

    def symbol(self, children):
        return str(children[0])

    def iri(self, children):
        return str(children[0])

    def pname(self, children):
        tok: Token = children[0]
        prefix, _, local = str(tok).partition(":")
        if prefix not in self.prefixes:
            raise SemanticError(
                f"undeclared prefix '{prefix}:' (declare it with @prefix {prefix}: <…> .)",
                tok.line,
                tok.column,
            )
        return f"<{self.prefixes[prefix]}{local}>"

    def string(self, children):
        return str(children[0])

    def int_const(self, children):
        return int(children[0])

    def decimal_const(self, children):
        return float(children[0])

    def neg_int(self, children):
        return -int(children[0])

    def neg_decimal(self, children):
        return -float(children[0])

    # declarations -------------------------------------------------------
    def prefix_decl(self, children):
        name, iri = children
        self.prefixes[str(name)[:-1]] = str(iri)[1:-1]
        return None

    # atoms ---------------------------------------------------------------
    def atom(self, children):
        pred, *args = children
        args = tuple(a for a in args if a is not None)
        return Atom(pred, args)

    def time_window(self, children):
        return Window(int(children[0]), False)

    def tuple_window(self, children):
        return Window(int(children[0]), True)

    def diamond(self, children):
        return (Op.DIAMOND, None)

    def box(self, children):
        return (Op.BOX, None)

    def at(self, children):
        return (Op.AT, children[0])

    @v_args(meta=True)
    def ext_atom(self, meta, children):
        window, operator, atom = children
        op, time = operator if operator is not None else (Op.PLAIN, None)
        if op in (Op.DIAMOND, Op.BOX) and window is None:
            raise SemanticError(
                f"'{op.value}' needs a window in front of it, e.g. [10] {op.value}", meta.line, meta.column
            )
        return ExtAtom(atom, op, window, time, position=Position(self.source, meta.line, meta.column))

    def ext_literal(self, children):
        neg, ext = children
        if neg is None:
            return ext
        return ExtAtom(ext.atom, ext.op, ext.window, ext.time, negated=True, position=ext.position)

    def binop(self, children):
        left, op, right = children
        return BinOp(str(op), left, right)

    def comparison(self, children):
        left, op, right = children
        return Comparison(str(op), left, right)

    def at_time(self, children):
        return children[0]

    def head(self, children):
        time, atom = children
        return Head(atom, time)

    def body(self, children):
        return tuple(children)

    @v_args(meta=True)
    def rule(self, meta, children):
        head, _, body = children
        pos = Position(self.source, meta.line, meta.column)
        return Rule(head, body or (), Origin(pos))

    @v_args(meta=True)
    def constraint(self, meta, children):
        _, body = children
        pos = Position(self.source, meta.line, meta.column)
        return constraint_rule(body, Origin(pos))

    def start(self, children):
        return [c for c in children if c is not None]


_WINDOW_SIZE = re.compile(r"\[\s*#?\s*[0-9]+\s*$")
_VARIABLE_BEFORE = re.compile(r"(?<![A-Za-z0-9_:])([A-Z_][A-Za-z0-9_]*)\s*$")


def _why(err: UnexpectedInput, text: str) -> str:
    """What a user most likely meant where the grammar stopped: a predicate written in upper case (a
    variable in LARS), or a window with a time unit (``[3s]``: LARS windows count time points)."""
    if not isinstance(err, UnexpectedToken):
        return ""
    token = err.token
    before = text[: token.start_pos] if token.start_pos is not None else ""
    window = _WINDOW_SIZE.search(before)
    if token.type == "LNAME" and window:
        size = window.group(0).strip("[# \t\n")
        if "#" in window.group(0):
            return f" (a tuple window counts stream atoms and has no unit: write [#{size}])"
        return (
            f" (a LARS window counts time points and has no unit: [{size}] spans the time points t-{size} "
            "to t, in the times the stream's lines carry)"
        )
    name = None
    if token.type == "VAR" and "LNAME" in err.expected:
        name = str(token)
    elif token.type == "LPAR" and _VARIABLE_BEFORE.search(before):
        name = _VARIABLE_BEFORE.search(before).group(1)
    if name is None:
        return ""
    lower = name[0].lower() + name[1:] if name[0] != "_" else name.lstrip("_").lower() or "p"
    return (
        f" ({name} starts in upper case, which makes it a variable; predicates and constants start in "
        f"lower case: {lower})"
    )


def parse_program(text: str, source: str = "<string>") -> Program:
    """Parse ``.lars`` text into a :class:`Program` (no checks beyond syntax; see :func:`rsp.lars.load`).

    >>> print(parse_program("q(A,B) :- [10] <> p(A,B)."))
    q(A,B) :- [10] <> p(A,B).
    """
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as err:
        hint = " (is a '.' missing?)"
        error = syntax_error(err, text, source, _TOKEN_NAMES, end_hint=hint, lower=True)
        raise ProgramError(error.message + _why(err, text), error.position) from None
    transformer = _ToModel(source)
    rules = transform(transformer, tree, source)
    return Program(tuple(rules), tuple(transformer.prefixes.items()), source)
