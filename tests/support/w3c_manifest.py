"""Helpers for running W3C SPARQL test-suite entries through rsp: read a manifest, turn a SPARQL query
into a registered continuous query, read the expected .srx results, and compare solution multisets
with blank nodes matched up to renaming."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import rdflib
from rdflib.collection import Collection
from rdflib.namespace import RDF, XSD

MF = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
ENT = rdflib.Namespace("http://www.w3.org/ns/entailment/")

# A term as compared: ("iri", text, "", ""), ("bnode", label, "", ""), ("literal", lexical, datatype, lang).
Term = tuple[str, str, str, str]
Solution = frozenset[tuple[str, Term]]


@dataclass(frozen=True)
class Entry:
    """One manifest entry: ``name`` is the local name of the entry IRI (``rdfs01``)."""

    name: str
    title: str
    query: Path
    data: tuple[Path, ...]
    graph_data: tuple[Path, ...]
    result: Path
    regimes: frozenset[str] = field(default_factory=frozenset)


def _values(graph: rdflib.Graph, node, pred) -> list:
    """The objects of ``node pred``, RDF lists expanded (``sd:entailmentRegime ( ent:RDFS ent:D )``)."""
    out = []
    for value in graph.objects(node, pred):
        if value == RDF.nil or graph.value(value, RDF.first) is not None:
            out.extend(Collection(graph, value))
        else:
            out.append(value)
    return out


def _path(node) -> Path:
    """A ``file:`` IRI (relative IRIs in the manifest resolve against the manifest's own file IRI)."""
    return Path(url2pathname(urlparse(str(node)).path))


def read_manifest(path: Path) -> list[Entry]:
    """The QueryEvaluationTest entries of a manifest, in manifest order. Regimes are collected from
    the action and from the data nodes (a regime may be attached to one data file)."""
    graph = rdflib.Graph()
    graph.parse(str(path), format="turtle", publicID=path.resolve().as_uri())
    entries = []
    for manifest in graph.subjects(RDF.type, MF.Manifest):
        for node in _values(graph, manifest, MF.entries):
            if (node, RDF.type, MF.QueryEvaluationTest) not in graph:
                continue
            action = graph.value(node, MF.action)
            data = _values(graph, action, QT.data)
            regimes = {str(r) for r in _values(graph, action, SD.entailmentRegime)}
            for d in data:
                regimes.update(str(r) for r in _values(graph, d, SD.entailmentRegime))
            entries.append(
                Entry(
                    name=str(node).rsplit("#", 1)[-1],
                    title=str(graph.value(node, MF.name)),
                    query=_path(graph.value(action, QT.query)),
                    data=tuple(_path(d) for d in data),
                    graph_data=tuple(_path(d) for d in _values(graph, action, QT.graphData)),
                    result=_path(graph.value(node, MF.result)),
                    regimes=frozenset(regimes),
                )
            )
    return entries


# -- queries ---------------------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"""(?P<iri><[^<>"{}|^`\\\s]*>)|(?P<string>'''.*?'''|\"\"\".*?\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<comment>\#[^\n]*)|(?P<form>\b(?:SELECT|ASK|CONSTRUCT|DESCRIBE)\b)|(?P<where>\bWHERE\b)|(?P<brace>\{)""",
    re.IGNORECASE | re.DOTALL,
)


def to_registered(text: str, stream: str, window: str = "[RANGE 1s STEP 1s]", name: str = "T") -> str:
    """A SPARQL SELECT/ASK query as an rsp registered query reading ``stream``:
    ``REGISTER QUERY T AS`` before it and ``FROM STREAM <stream> [window]`` before its WHERE clause
    (or before its group pattern when the query omits the WHERE keyword). Comments before that point are dropped;
    IRIs and strings are skipped when looking for the keywords."""
    pieces, position, seen_form = [], 0, None
    insert_at = None
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            pieces.append(text[position : match.start()])
            position = match.end()
            continue
        if kind == "form" and seen_form is None:
            seen_form = match.group().upper()
            if seen_form in ("CONSTRUCT", "DESCRIBE"):
                raise NotImplementedError(f"{seen_form} queries are not handled by this harness")
        elif kind in ("where", "brace") and seen_form is not None:
            insert_at = match.start()
            break
    if insert_at is None:
        raise ValueError(f"no WHERE clause found in query:\n{text}")
    pieces.append(text[position:insert_at])
    head = "".join(pieces)
    return f"REGISTER QUERY {name} AS\n{head}FROM STREAM {stream} {window}\n{text[insert_at:]}"


# -- terms and results -------------------------------------------------------------------------------------
_STRING = str(XSD.string)


def rdflib_term(term) -> Term:
    if isinstance(term, rdflib.URIRef):
        return ("iri", str(term), "", "")
    if isinstance(term, rdflib.BNode):
        return ("bnode", str(term), "", "")
    if isinstance(term, rdflib.Literal):
        if term.language:
            return ("literal", str(term), "", term.language.lower())
        return ("literal", str(term), str(term.datatype) if term.datatype else _STRING, "")
    raise TypeError(f"not an RDF term: {term!r}")


_NT_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_NT_LITERAL = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<([^>]*)>)?$', re.DOTALL)


def _unescape(text: str) -> str:
    def one(m: re.Match) -> str:
        s = m.group()
        if s[1] in "uU":
            return chr(int(s[2:], 16))
        return _NT_ESCAPES[s[1]]

    return re.sub(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", one, text)


def nt_term(text: str) -> Term:
    """A term written in N-Triples syntax (as rsp writes results)."""
    if text.startswith("<") and text.endswith(">"):
        return ("iri", _unescape(text[1:-1]), "", "")
    if text.startswith("_:"):
        return ("bnode", text[2:], "", "")
    m = _NT_LITERAL.match(text)
    if m is None:
        raise ValueError(f"not an N-Triples term: {text!r}")
    lexical, lang, datatype = m.groups()
    if lang:
        return ("literal", _unescape(lexical), "", lang.lower())
    return ("literal", _unescape(lexical), datatype or _STRING, "")


@dataclass
class Expected:
    """A query's expected answer: ``solutions`` (SELECT) or ``boolean`` (ASK)."""

    variables: tuple[str, ...] = ()
    solutions: list[Solution] | None = None
    boolean: bool | None = None


def read_srx(path: Path) -> Expected:
    """Expected results from a SPARQL XML results file (lexical forms kept: ``"01"`` stays ``"01"``)."""
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        with open(path, "rb") as source:
            result = rdflib.query.Result.parse(source, format="xml")
    finally:
        rdflib.NORMALIZE_LITERALS = normalize
    if result.type == "ASK":
        return Expected(boolean=bool(result.askAnswer))
    solutions = [
        frozenset((str(var), rdflib_term(value)) for var, value in row.items() if value is not None)
        for row in result.bindings
    ]
    return Expected(tuple(str(v) for v in result.vars or ()), solutions)


def rsp_solutions(bindings: list[dict[str, str]]) -> list[Solution]:
    return [frozenset((var, nt_term(value)) for var, value in row.items()) for row in bindings]


def _bnodes(solutions: list[Solution]) -> set[str]:
    return {t[1] for s in solutions for _, t in s if t[0] == "bnode"}


def same_solutions(expected: list[Solution], actual: list[Solution]) -> bool:
    """Equal as multisets of solutions, blank nodes up to a bijective renaming (the labels in a results
    file are local to it)."""
    if len(expected) != len(actual):
        return False
    if not _bnodes(expected) and not _bnodes(actual):
        return Counter(expected) == Counter(actual)
    if len(_bnodes(expected)) != len(_bnodes(actual)):
        return False
    remaining = list(actual)

    def match(i: int, mapping: dict[str, str], used: set[str]) -> bool:
        if i == len(expected):
            return True
        row = expected[i]
        for j, candidate in enumerate(remaining):
            if candidate is None or dict(candidate).keys() != dict(row).keys():
                continue
            new, new_used, ok = dict(mapping), set(used), True
            other = dict(candidate)
            for var, term in row:
                got = other[var]
                if term[0] != "bnode" or got[0] != "bnode":
                    ok = term == got
                elif term[1] in new:
                    ok = new[term[1]] == got[1]
                elif got[1] in new_used:
                    ok = False
                else:
                    new[term[1]] = got[1]
                    new_used.add(got[1])
                if not ok:
                    break
            if ok:
                remaining[j] = None
                if match(i + 1, new, new_used):
                    return True
                remaining[j] = candidate
        return False

    return match(0, {}, set())


def show(term: Term) -> str:
    kind, text, datatype, lang = term
    if kind == "iri":
        return f"<{text}>"
    if kind == "bnode":
        return f"_:{text}"
    if lang:
        return f'"{text}"@{lang}'
    return f'"{text}"' if datatype == _STRING else f'"{text}"^^<{datatype}>'


def render(solutions: list[Solution]) -> str:
    rows = sorted("{" + ", ".join(f"?{v}={show(t)}" for v, t in sorted(s)) + "}" for s in solutions)
    return "\n".join(f"  {row}" for row in rows) or "  (no solutions)"
