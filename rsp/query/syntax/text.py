"""Rendering query AST fragments (expressions, terms, property paths) back as SPARQL text, for
explanations, ``rsp explain`` and error messages.

>>> from rsp.query.syntax import ast
>>> expr_text(ast.BinaryOp(">", ast.Var("v"), '"80"^^<http://www.w3.org/2001/XMLSchema#integer>'))
'?v > 80'
"""

from __future__ import annotations

from rsp.io.terms import XSD
from rsp.query.syntax import ast

_XSD = f"^^<{XSD}"
_BARE = ("integer>", "decimal>", "double>", "boolean>")


def term_text(term) -> str:
    """A term as a query would write it (bare numbers and booleans for their literals)."""
    if isinstance(term, ast.Var):
        return f"?{term.name}"
    if term.startswith('"') and _XSD in term:
        lexical, _, datatype = term[1:].rpartition('"' + _XSD)
        if datatype in _BARE:
            return lexical
    return term


def expr_text(expr) -> str:
    """An expression in SPARQL syntax."""
    if isinstance(expr, ast.BinaryOp):
        return f"{_nested(expr.left)} {expr.op} {_nested(expr.right)}"
    if isinstance(expr, ast.UnaryOp):
        return f"{expr.op}{_nested(expr.arg)}"
    if isinstance(expr, ast.FunctionCall):
        return (
            f"{term_text(expr.name) if expr.name.startswith('<') else expr.name}"
            f"({', '.join(expr_text(a) for a in expr.args)})"
        )
    if isinstance(expr, ast.InList):
        options = ", ".join(expr_text(o) for o in expr.options)
        return f"{_nested(expr.expr)} {'NOT IN' if expr.negated else 'IN'} ({options})"
    if isinstance(expr, ast.Exists):
        return f"{'NOT EXISTS' if expr.negated else 'EXISTS'} {{ … }}"
    if isinstance(expr, ast.Aggregate):
        inner = "*" if expr.arg is None else expr_text(expr.arg)
        return f"{expr.name}({'DISTINCT ' if expr.distinct else ''}{inner})"
    return term_text(expr)


def _nested(expr) -> str:
    text = expr_text(expr)
    return f"({text})" if isinstance(expr, ast.BinaryOp) else text


def path_text(path) -> str:
    """A property path in SPARQL syntax.

    >>> path_text(ast.PathRepeat(ast.PathAlternative(("<p>", ast.PathInverse("<q>"))), "+"))
    '(<p>|^<q>)+'
    """
    match path:
        case str():
            return "a" if path == "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>" else path
        case ast.PathInverse(path=inner):
            return f"^{_path_nested(inner)}"
        case ast.PathSequence(parts=parts):
            return "/".join(_path_nested(p) for p in parts)
        case ast.PathAlternative(parts=parts):
            return "|".join(_path_nested(p) for p in parts)
        case ast.PathRepeat(path=inner, mod=mod):
            return f"{_path_nested(inner)}{mod}"
        case ast.PathNegated(forward=forward, inverse=inverse):
            links = [path_text(iri) for iri in forward] + [f"^{path_text(iri)}" for iri in inverse]
            return f"!({'|'.join(links)})"
    return str(path)


def _path_nested(path) -> str:
    text = path_text(path)
    return f"({text})" if isinstance(path, (ast.PathSequence, ast.PathAlternative)) else text
