"""Ontology and static graph loading: a file becomes a list of triples of terms in N-Triples syntax
(pyoxigraph reads Turtle, N-Triples, N3 and RDF/XML; rdflib reads JSON-LD)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pyoxigraph
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
    return its triples with terms in N-Triples syntax, literals with their lexical form as written,
    sorted; blank nodes labelled ``_:b0``, ``_:b1``, … in order of first appearance (the same file gives
    the same triples in every run).

    Turtle, N-Triples, N3 and RDF/XML are read by pyoxigraph (docs/results.md: static data loads at
    parser speed), JSON-LD by rdflib. Raises :class:`OntologyError` naming the file, the line and
    column where known, and the reason when it cannot be read.
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
    if fmt in _OXIGRAPH:
        text = path.read_text(encoding="utf-8", errors="replace")
        typed = _typed_strings(text, fmt)
        if typed is not None:
            # relative IRIs against the file's own IRI, as rdflib resolves them
            source = {"path": str(path), "base_iri": path.resolve().as_uri()}
            return _parse_oxigraph(fmt, str(path), source, text, typed)
    return _parse_rdflib(fmt, str(path), {"source": str(path)})


def parse_ontology_text(text: str, fmt: str = "turtle") -> list[Triple]:
    """:func:`load_ontology` for a string (tests, inline ontologies)."""
    typed = _typed_strings(text, fmt) if fmt in _OXIGRAPH else None
    if typed is not None:
        return _parse_oxigraph(fmt, "<string>", {"input": text}, text, typed)
    return _parse_rdflib(fmt, "<string>", {"data": text})


def _parse_rdflib(fmt: str, file: str, source: dict) -> list[Triple]:
    graph = rdflib.Graph()
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False  # keep lexical forms ("01" stays "01")
    try:
        with warnings.catch_warnings():  # rdflib's JSON-LD parser warns about its own internals
            warnings.simplefilter("ignore", DeprecationWarning)
            graph.parse(**source, format=fmt)
    except Exception as err:  # rdflib raises many unrelated types (BadSyntax, SAXParseException, …)
        reason = str(err).strip().splitlines()
        raise OntologyError(f"cannot parse as {fmt}: {' '.join(reason)[:300]}", Position(file)) from None
    finally:
        rdflib.NORMALIZE_LITERALS = normalize
    labels: dict[str, str] = {}
    triples = [
        (_rdflib_term(s, labels), _rdflib_term(p, labels), _rdflib_term(o, labels)) for s, p, o in graph
    ]
    return sorted(triples)


def _rdflib_term(term: Node, labels: dict[str, str]) -> str:
    if isinstance(term, BNode):
        return labels.setdefault(str(term), f"_:b{len(labels)}")
    return nt_term(term)


_OXIGRAPH = {
    "turtle": pyoxigraph.RdfFormat.TURTLE,
    "nt": pyoxigraph.RdfFormat.N_TRIPLES,
    "n3": pyoxigraph.RdfFormat.N3,
    "xml": pyoxigraph.RdfFormat.RDF_XML,
}
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def _typed_strings(text: str, fmt: str) -> frozenset[str] | None:
    """The lexical forms (escaped as N-Triples escapes them) the text types xsd:string in so many words
    (``"x"^^xsd:string``): pyoxigraph reads them as the plain literals they are in RDF 1.1, rsp keeps
    them as written, as it does in streams. None when that cannot be told (RDF/XML that names
    xsd:string): the file is then read by rdflib."""
    if "XMLSchema#string" not in text and ":string" not in text and ";string" not in text:
        return frozenset()
    if fmt == "xml":
        return None
    return frozenset(
        match.group(1) for match in _TYPED.finditer(text) if match.group(2).endswith(("string>", ":string"))
    )


_TYPED = re.compile(r'"((?:[^"\\\n]|\\.)*)"\^\^(<[^>]*>|[A-Za-z0-9_.-]*:[A-Za-z0-9_]+)')


def _parse_oxigraph(fmt: str, file: str, source: dict, text: str, typed: frozenset[str]) -> list[Triple]:
    """The triples pyoxigraph reads (``path=`` or ``input=`` in ``source``), as :func:`load_ontology`
    gives them: blank nodes labelled in order of first appearance (pyoxigraph names anonymous ones at
    random), literals escaped as :func:`nt_term` escapes them, language tags as written (pyoxigraph
    gives them in lower case), ``^^xsd:string`` kept on the lexical forms ``typed`` (see
    :func:`_typed_strings`)."""
    named, blank = pyoxigraph.NamedNode, pyoxigraph.BlankNode
    labels: dict[str, str] = {}
    tags: dict[str, str] = {}

    def other(term) -> str:
        if type(term) is blank:
            return labels.setdefault(term.value, f"_:b{len(labels)}")
        if not isinstance(term, pyoxigraph.Literal):  # an RDF 1.2 triple term: not an RDF 1.1 graph
            raise OntologyError(
                f"cannot read {term}: triple terms (RDF 1.2) are not supported", Position(file)
            )
        language = term.language
        if language:
            written = tags.get(language)
            if written is None:
                written = tags[language] = _written_tag(text, language)
            return f'"{_escaped(term.value)}"@{written}'
        made = str(term)
        if "\\" in made or (typed and made[-1] == '"'):
            # pyoxigraph escapes more than rsp does (tabs, control characters); it writes an
            # xsd:string literal as a plain one
            datatype = term.datatype.value
            value = _escaped(term.value)
            if datatype != _XSD_STRING:
                made = f'"{value}"^^<{datatype}>'
            elif value in typed:
                made = f'"{value}"^^<{_XSD_STRING}>'
            else:
                made = f'"{value}"'
        return made

    triples = []
    try:
        for triple in pyoxigraph.parse(**source, format=_OXIGRAPH[fmt]):
            s, o = triple.subject, triple.object
            triples.append((
                str(s) if type(s) is named else other(s),
                str(triple.predicate),
                str(o) if type(o) is named else other(o),
            ))  # fmt: skip
    except SyntaxError as err:
        reason = " ".join(str(err.msg).strip().splitlines())
        reason = re.sub(r"^Parser error at line \d+ column \d+: ", "", reason)  # the position is given once
        where = Position(file, err.lineno or 0, err.offset or 0)
        raise OntologyError(f"cannot parse as {fmt}: {reason[:300]}", where) from None
    except (OSError, ValueError) as err:
        raise OntologyError(f"cannot read as {fmt}: {err}", Position(file)) from None
    return sorted(triples)


def _escaped(value: str) -> str:
    if '"' in value or "\\" in value or "\n" in value or "\r" in value:
        return "".join(_ESCAPES.get(ch, ch) for ch in value)
    return value


def _written_tag(text: str, tag: str) -> str:
    """The language tag ``tag`` (lower case, as pyoxigraph gives it) as ``text`` first writes it."""
    found = re.search(r"(?:@|xml:lang\s*=\s*[\"'])(" + re.escape(tag) + r")\b", text, re.IGNORECASE)
    return found.group(1) if found else tag
