"""Lexical forms shared by the stream readers: N-Triples terms and ``.lars`` constants as engine values.

Engine values are plain Python values (see :mod:`rsp.lars.model`): IRIs keep their angle brackets,
literals keep their N-Triples form, except numeric literals (xsd:integer, xsd:decimal, xsd:double,
xsd:float and the integer subtypes) which become ``int`` or ``float`` so that comparisons and
arithmetic work on them.
"""

from __future__ import annotations

import re

XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER_TYPES = {
    f"<{XSD}{name}>"
    for name in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedInt",
        "unsignedLong",
        "unsignedShort",
        "unsignedByte",
    )
}
_FLOAT_TYPES = {f"<{XSD}decimal>", f"<{XSD}double>", f"<{XSD}float>"}

IRI = r"<[^<>\"{}|^`\\\x00-\x20]*>"
BNODE = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_\-.]*[A-Za-z0-9_\-])?"
STRING = r'"(?:[^"\\\n\r]|\\.)*"'
LITERAL = rf"{STRING}(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^{IRI})?"
NUMBER = r"-?[0-9]+(?:\.[0-9]+)?"
SYMBOL = r"[a-z][A-Za-z0-9_]*"

_TRIPLE = re.compile(
    rf"\s*({IRI}|{BNODE})\s*({IRI})\s*({IRI}|{BNODE}|{LITERAL})\s*\.\s*(?:#\s*(\S*)\s*(.*))?$"
)
_TYPED = re.compile(rf"({STRING})\^\^({IRI})$")


def literal_value(text: str) -> str | int | float:
    """The engine value of an N-Triples object term: a number for numeric literals, else the text."""
    if text[0] != '"' or "^^" not in text:
        return text
    m = _TYPED.match(text)
    if m is None:
        return text
    lexical, datatype = m.group(1)[1:-1], m.group(2)
    try:
        if datatype in _INTEGER_TYPES:
            return int(lexical)
        if datatype in _FLOAT_TYPES:
            return float(lexical)
    except ValueError:
        return text
    return text


def match_triple(line: str) -> re.Match[str] | None:
    """Match one N-Triples line, optionally ending in ``# comment``; groups: s, p, o, comment word, rest."""
    return _TRIPLE.match(line)


def explain_bad_triple(line: str) -> str:
    """A short reason why ``line`` is not a valid N-Triples statement."""
    stripped = line.strip()
    if stripped.count('"') % 2 == 1:
        return "unterminated string literal"
    if re.search(r"<[^<>\s]*(\s|$)", stripped):
        return "unterminated IRI"
    if not stripped.split("#")[0].rstrip().endswith("."):
        return "statement does not end with '.'"
    return "not an N-Triples statement (expected <subject> <predicate> <object> .)"
