"""Static graphs and ontologies read by pyoxigraph (issue 44, item 2): the same triples as rdflib reads
(terms in rsp's N-Triples form: lexical forms and language tags as written, rsp's escapes), in every
format, blank nodes labelled in order of first appearance so that one file gives one list of triples
in every run, and parse errors with the file, line and column."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import rdflib
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT
from rdflib.compare import isomorphic

from rsp.background import load_ontology
from rsp.background.ontology import OntologyError, nt_term, parse_ontology_text

FILES = sorted(
    path
    for pattern in ("ontologies/*.ttl", "tests/data/ontologies/*", "examples/*/*.ttl", "docs/examples/*.ttl")
    for path in ROOT.glob(pattern)
    if path.suffix in (".ttl", ".nt", ".rdf", ".owl", ".n3")
)
FORMATS = {"turtle": ".ttl", "nt": ".nt", "xml": ".rdf", "n3": ".n3"}


def rdflib_reading(path: Path, fmt: str) -> rdflib.Graph:
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        return rdflib.Graph().parse(str(path), format=fmt)
    finally:
        rdflib.NORMALIZE_LITERALS = normalize


def as_graph(triples) -> rdflib.Graph:
    normalize = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        return rdflib.Graph().parse(data="".join(f"{s} {p} {o} .\n" for s, p, o in triples), format="nt")
    finally:
        rdflib.NORMALIZE_LITERALS = normalize


def same_reading(ours: list, reference: rdflib.Graph) -> None:
    """The same graph up to blank-node labels, and the same term texts (rsp's form) where no blank node is."""
    assert len(ours) == len(reference)
    assert isomorphic(as_graph(ours), reference)
    ground = sorted(
        (nt_term(s), nt_term(p), nt_term(o))
        for s, p, o in reference
        if not isinstance(s, rdflib.BNode) and not isinstance(o, rdflib.BNode)
    )
    assert sorted(t for t in ours if t[0][0] != "_" and t[2][0] != "_") == ground


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_graphs_read_as_rdflib_reads_them(path: Path) -> None:
    fmt = {".ttl": "turtle", ".nt": "nt", ".rdf": "xml", ".owl": "xml", ".n3": "n3"}[path.suffix]
    same_reading(load_ontology(path), rdflib_reading(path, fmt))


IRIS = st.sampled_from([rdflib.URIRef(f"http://example.org/g#{n}") for n in ("a", "b", "c", "p", "q")])
BLANKS = st.sampled_from([rdflib.BNode(f"n{i}") for i in range(3)])
LEXICAL = st.text(alphabet=st.sampled_from(list('ab01 "\\\n\r\té-') + ["\u2028"]), max_size=6)
LITERALS = st.one_of(
    st.builds(lambda v: rdflib.Literal(v), LEXICAL),
    st.builds(
        lambda v, lang: rdflib.Literal(v, lang=lang), LEXICAL, st.sampled_from(["en", "en-GB", "de-CH-1996"])
    ),
    st.builds(
        lambda v, dt: rdflib.Literal(v, datatype=dt, normalize=False),
        st.sampled_from(["01", "1", "-0", "1.50", "abc"]),
        st.sampled_from(
            [
                rdflib.XSD.integer,
                rdflib.XSD.decimal,
                rdflib.XSD.string,
                rdflib.URIRef("http://example.org/g#dt"),
            ]
        ),
    ),
)


@st.composite
def graphs(draw) -> rdflib.Graph:
    graph = rdflib.Graph()
    for _ in range(draw(st.integers(1, 8))):
        subject = draw(st.one_of(IRIS, BLANKS))
        graph.add((subject, draw(IRIS), draw(st.one_of(IRIS, BLANKS, LITERALS))))
    return graph


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None)
@given(graphs(), st.sampled_from(sorted(FORMATS)))
def test_generated_graphs_read_as_rdflib_reads_them(graph: rdflib.Graph, fmt: str) -> None:
    """Every format, written by rdflib, read back as rdflib reads it: blank nodes, escapes, language
    tags in mixed case, lexical forms (``01``) kept."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"g{FORMATS[fmt]}"
        # rdflib writes Turtle and N3 with bare numbers (01) and reads them back rewritten (as 1), where
        # the lexical form is the number as written: they are written here as N-Triples (which both
        # include); the repository's Turtle files above hold the rest of their syntax
        graph.serialize(str(path), format="xml" if fmt == "xml" else "nt", encoding="utf-8")
        same_reading(load_ontology(path), rdflib_reading(path, fmt))


def test_one_file_gives_the_same_triples_in_every_reading() -> None:
    """Anonymous blank nodes (``[ … ]``, lists) get labels from their order in the file, not at random."""
    text = "@prefix ex: <http://example.org/g#> .\nex:a ex:p [ ex:q ( 1 2 ) ] , [ ex:r ex:b ] .\n"
    first, second = parse_ontology_text(text), parse_ontology_text(text)
    assert first == second
    assert {t for triple in first for t in triple if t.startswith("_:")} == {f"_:b{i}" for i in range(4)}


def test_a_parse_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text('@prefix ex: <http://example.org/g#> .\nex:a ex:p "unterminated .\n', encoding="utf-8")
    with pytest.raises(OntologyError) as error:
        load_ontology(path)
    assert str(error.value).startswith(f"{path}:2:11: cannot parse as turtle:")
