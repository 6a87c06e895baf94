"""Lexical forms shared by the stream readers: N-Triples terms and ``.lars`` constants as engine values.

Engine values are plain Python values (see :mod:`rsp.lars.model`): IRIs keep their angle brackets,
literals keep their N-Triples form, except numeric literals (xsd:integer, xsd:decimal, xsd:double,
xsd:float and the integer subtypes) which become ``int`` or ``float`` so that comparisons and
arithmetic work on them.
"""

from __future__ import annotations

import math
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


_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def as_term(value: object) -> str:
    """An N-Triples term for an engine value: strings are terms already, numbers and booleans become
    typed literals.

    >>> as_term(3)
    '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
    >>> as_term(False), as_term("<http://a>")
    ('"false"^^<http://www.w3.org/2001/XMLSchema#boolean>', '<http://a>')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return f'"{str(value).lower()}"^^<{XSD}boolean>'
    if isinstance(value, int):
        return f'"{value}"^^<{XSD}integer>'
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            text = "NaN" if math.isnan(value) else "INF" if value > 0 else "-INF"
        else:
            text = repr(value)
        return f'"{text}"^^<{XSD}double>'
    raise TypeError(f"not an RDF term: {value!r}")


def unescape(text: str) -> str:
    """The text of an IRI or literal body with its N-Triples escapes (``\\t``, ``\\u00e9`` …) decoded."""
    if "\\" not in text:
        return text

    def replace(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2)
        return chr(int(code, 16)) if code else _ECHARS.get(m.group(3), m.group(0))

    return _ESCAPE.sub(replace, text)


def decode_term(term: str) -> tuple[str, str, str | None, str | None]:
    """``(kind, value, language, datatype)`` of an N-Triples term; kind is ``uri``, ``bnode`` or ``literal``
    and escapes in the value are decoded.

    >>> decode_term('"a\\\\nb"@en')
    ('literal', 'a\\nb', 'en', None)
    """
    if term.startswith("<") and term.endswith(">"):
        return "uri", unescape(term[1:-1]), None, None
    if term.startswith("_:"):
        return "bnode", term[2:], None, None
    if term.startswith('"'):
        close = term.rindex('"')
        lexical, suffix = unescape(term[1:close]), term[close + 1 :]
        if suffix.startswith("@"):
            return "literal", lexical, suffix[1:], None
        if suffix.startswith("^^<") and suffix.endswith(">"):
            return "literal", lexical, None, unescape(suffix[3:-1])
        if not suffix:
            return "literal", lexical, None, None
    raise ValueError(f"not an N-Triples term: {term!r}")
