"""Lark's parse errors as rsp's positioned errors, for the ``.lars`` and MeTeoR parsers: what was found,
what the grammar expected there (its terminals in words), with the line and column; and the errors a
transformer raises when a text parses but means nothing (:class:`SemanticError`), with their position.
The query parser words its messages further (rsp/query/syntax/errors.py)."""

from __future__ import annotations

from collections.abc import Mapping

from lark import Transformer, Tree, UnexpectedInput
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

from rsp.errors import Position, ProgramError, RspError, end_position


class SemanticError(Exception):
    """Raised inside a transformer: the text parses, but is refused (a bad interval, say)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line, self.column = line, column


def describe_expected(expected, names: Mapping[str, str], limit: int = 6, lower: bool = False) -> str:
    """``; expected a, b, …`` for the terminals ``expected`` (``names`` words them; the others are shown
    quoted, or, with ``lower``, a terminal's name in lower case)."""

    def word(terminal: str) -> str:
        if terminal in names:
            return names[terminal]
        if lower and terminal.isupper():
            return terminal.strip("_").lower()
        return repr(terminal)

    shown = sorted({word(e) for e in expected})
    if not shown:
        return ""
    if len(shown) > limit:
        shown = shown[:limit] + ["…"]
    return "; expected " + ", ".join(shown)


def syntax_error(
    err: UnexpectedInput,
    text: str,
    source: str,
    names: Mapping[str, str],
    *,
    end_hint: str = "",
    lower: bool = False,
    quote_token: bool = False,
    error: type[RspError] = ProgramError,
) -> RspError:
    """The positioned error of a lark parse error: an unexpected character, the end of the input (with
    ``end_hint``) or an unexpected token (shown quoted with ``quote_token``)."""
    line, column = err.line, err.column
    if isinstance(err, UnexpectedCharacters):
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        allowed = describe_expected(set(err.allowed or ()), names, lower=lower)
        message = f"unexpected character {char!r}{allowed}"
    elif isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        line, column = end_position(text.rstrip("\n"))
        expected = describe_expected(set(err.expected), names, lower=lower)
        message = f"unexpected end of input{expected}{end_hint}"
    elif isinstance(err, UnexpectedToken):
        token = repr(str(err.token)) if quote_token else str(err.token)
        message = f"unexpected {token:.40}{describe_expected(set(err.expected), names, lower=lower)}"
    else:  # pragma: no cover - lark has no other subclasses
        message = str(err)
    return error(message, Position(source, line, column))


def transform(transformer: Transformer, tree: Tree, source: str, error: type[RspError] = ProgramError):
    """``transformer.transform(tree)``, a :class:`SemanticError` raised inside it as ``error`` with its
    position in ``source``."""
    try:
        return transformer.transform(tree)
    except VisitError as err:
        inner = err.orig_exc
        if isinstance(inner, SemanticError):
            raise error(str(inner), Position(source, inner.line, inner.column)) from None
        raise
