"""Ontology loading through rdflib: a file becomes a list of triples of terms in N-Triples syntax."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import rdflib
from rdflib.term import BNode, Literal, Node, URIRef

from rsp.errors import Position, RspError

Triple = tuple[str, str, str]

FORMATS = {
    ".ttl": "turtle",
    ".turtle": "turtle",
    ".n3": "n3",
    ".nt": "nt",
    ".ntriples": "nt",
    ".rdf": "xml",
    ".owl": "xml",
    ".xml": "xml",
    ".jsonld": "json-ld",
    ".json": "json-ld",
}
"""File extension → rdflib parser name."""


class OntologyError(RspError):
    """An ontology file that cannot be read: ``file: reason``."""


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}


def nt_term(term: Node) -> str:
    """A term in N-Triples syntax as rsp writes it: ``<iri>``, ``_:label``, ``"lexical"@lang`` or
    ``"lexical"^^<datatype>`` (lexical form kept, full datatype IRI, no xsd:string shorthand).

    >>> from rdflib import Literal, URIRef, XSD
    >>> nt_term(Literal("01", datatype=XSD.integer, normalize=False))
    '"01"^^<http://www.w3.org/2001/XMLSchema#integer>'
    >>> nt_term(Literal('say "hi"\\n', lang="en")), nt_term(URIRef("http://ex.org/a"))
    ('"say \\\\"hi\\\\"\\\\n"@en', '<http://ex.org/a>')
    """
    if isinstance(term, URIRef):
        return f"<{term}>"
    if isinstance(term, BNode):
        return f"_:{term}"
    if isinstance(term, Literal):
        text = "".join(_ESCAPES.get(ch, ch) for ch in str(term))
        if term.language:
            return f'"{text}"@{term.language}'
        if term.datatype is not None:
            return f'"{text}"^^<{term.datatype}>'
        return f'"{text}"'
    raise TypeError(f"not an RDF term: {term!r}")


def load_ontology(path: str | Path) -> list[Triple]:
    """Read an ontology (Turtle, N-Triples, N3, RDF/XML, JSON-LD, chosen by the file extension) and
    return its triples with terms in N-Triples syntax, literals with their lexical form as written.

    Raises :class:`OntologyError` naming the file and the reason when it cannot be read.
    """
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    position = Position(str(path))
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise OntologyError(f"unknown ontology format {path.suffix or '(no extension)'!r} (known: {known})",
                            position)  # fmt: skip
    if not path.is_file():
        raise OntologyError("no such file", position)
    graph = rdflib.Graph()
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False  # keep lexical forms ("01" stays "01")
    try:
        with warnings.catch_warnings():  # rdflib's JSON-LD parser warns about its own internals
            warnings.simplefilter("ignore", DeprecationWarning)
            graph.parse(str(path), format=fmt)
    except Exception as err:  # rdflib raises many unrelated types (BadSyntax, SAXParseException, …)
        located = locate_bad_syntax(str(err), path.read_bytes())
        if located is not None:
            why, line, column = located
            raise OntologyError(f"cannot parse as {fmt}: {why}", Position(str(path), line, column)) from None
        reason = str(err).strip().splitlines()
        raise OntologyError(f"cannot parse as {fmt}: {' '.join(reason)[:300]}", position) from None
    finally:
        rdflib.NORMALIZE_LITERALS = normalize
    return sorted((nt_term(s), nt_term(p), nt_term(o)) for s, p, o in graph)


_BAD_SYNTAX = re.compile(
    r"^at line (?P<line>\d+) of <[^>]*>:\s*Bad syntax \((?P<why>.*)\) at \^ in:\s*"
    r"\"(?:\.\.\.)?(?P<before>b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\")"
    r"\^(?P<after>b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\")(?:\.\.\.)?\"\s*$",
    re.DOTALL,
)


def locate_bad_syntax(message: str, data: bytes) -> tuple[str, int, int] | None:
    r"""(reason, line, column) of a Turtle/N3 syntax error from rdflib's message, or None for another
    message. rdflib's message shows the text around the error (as Python bytes literals) and a line
    number that it miscounts after multi-line strings; the place is found again by that text in the
    file (the occurrence nearest rdflib's line).

    >>> data = b"@prefix ex: <http://e/> .\nex:a ex:b ex:c .\nex:a ex:b .\n"
    >>> found = repr(data[30:52]) + "^" + repr(data[52:])
    >>> message = f'at line 9 of <>:\nBad syntax (objectList expected) at ^ in:\n"...{found}"'
    >>> locate_bad_syntax(message, data)
    ('objectList expected', 3, 10)
    """
    match = _BAD_SYNTAX.match(message.strip())
    if match is None:
        return None
    try:
        before, after = ast.literal_eval(match["before"]), ast.literal_eval(match["after"])
    except (ValueError, SyntaxError):
        return None
    reported = int(match["line"])
    # rdflib cuts the excerpt from the UTF-8 bytes at a character index: an occurrence's byte offset
    # in the file is the error's character offset in its text
    text = data.decode("utf-8", errors="replace")
    context = before + after
    offsets = []
    start = data.find(context)
    while start >= 0:
        offsets.append(start + len(before))
        start = data.find(context, start + 1)
    offsets = [at for at in offsets if at <= len(text)]
    if not offsets:
        return None
    offset = min(offsets, key=lambda at: abs(text.count("\n", 0, at) + 1 - reported))
    return match["why"], text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def parse_ontology_text(text: str, fmt: str = "turtle") -> list[Triple]:
    """:func:`load_ontology` for a string (tests, inline ontologies)."""
    graph = rdflib.Graph()
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        graph.parse(data=text, format=fmt)
    except Exception as err:
        located = locate_bad_syntax(str(err), text.encode("utf-8"))
        if located is not None:
            why, line, column = located
            raise OntologyError(f"cannot parse as {fmt}: {why}", Position("<string>", line, column)) from None
        raise OntologyError(f"cannot parse as {fmt}: {str(err).strip()[:300]}") from None
    finally:
        rdflib.NORMALIZE_LITERALS = normalize
    return sorted((nt_term(s), nt_term(p), nt_term(o)) for s, p, o in graph)
