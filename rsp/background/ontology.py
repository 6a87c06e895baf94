"""Ontology loading through rdflib: a file becomes a list of triples of terms in N-Triples syntax."""

from __future__ import annotations

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
        reason = str(err).strip().splitlines()
        raise OntologyError(f"cannot parse as {fmt}: {' '.join(reason)[:300]}", position) from None
    finally:
        rdflib.NORMALIZE_LITERALS = normalize
    return sorted((nt_term(s), nt_term(p), nt_term(o)) for s, p, o in graph)


def parse_ontology_text(text: str, fmt: str = "turtle") -> list[Triple]:
    """:func:`load_ontology` for a string (tests, inline ontologies)."""
    graph = rdflib.Graph()
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        graph.parse(data=text, format=fmt)
    except Exception as err:
        raise OntologyError(f"cannot parse as {fmt}: {str(err).strip()[:300]}") from None
    finally:
        rdflib.NORMALIZE_LITERALS = normalize
    return sorted((nt_term(s), nt_term(p), nt_term(o)) for s, p, o in graph)
