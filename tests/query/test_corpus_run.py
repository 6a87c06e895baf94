"""Corpus queries run end to end (tests/data/corpus, streams in tests/data/corpus/streams): rsp's answers
at every instant against the rdflib reference of tests/oracles/query_oracle.py, which reads the query as plain
SPARQL (REGISTER and FROM STREAM / FROM NAMED WINDOW dropped, ``WINDOW w`` and CQELS ``STREAM <s> [...]``
read as ``GRAPH``, FROM <g> given as the static graph) over a dataset whose named graphs are the
windows. Fourteen queries of four dialects: bare C-SPARQL and CQELS forms, CQELS STREAM blocks (with
``[NOW]``), RSP-QL ``WINDOW ?w`` (bound, and projected by SELECT *), Jasper's ``[RANGE 5 s, SLIDE 1s] ON
STREAM``."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import query_oracle
from paths import TEST_DATA
from query_golden import read_elements

from rsp.background import load_ontology
from rsp.runtime import Engine

CORPUS = TEST_DATA / "corpus"
STREAMS = CORPUS / "streams"
WEATHER = "<http://www.insight-centre.org/dataset/SampleEventService#AarhusWeatherData0>"
TRAFFIC = "<http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData186979>"
LIKES = "<http://myexample.org/stream>"
MASSIF = "<http://streamreasoning.org/iminds/massif/stream1>"
KMAX = "<http://example.org/simpletest/test_1>"

# (corpus query, stream IRI, stream file, static graph file or None)
CASES = [
    ("cqels/citybench_Q11.rq", WEATHER, "weather.nt", None),  # CQELS STREAM [range 3s] block
    ("cqels/citybench_Q12.rq", TRAFFIC, "traffic.nt", "sensors.nt"),  # STREAM block, static join, COUNT
    ("csparql/citybench_Q12.rq", TRAFFIC, "traffic.nt", "sensors.nt"),  # bare C-SPARQL, GROUP BY/HAVING
    ("rspql/csparql2_citybench_q11.rq", WEATHER, "weather.nt", None),  # SELECT * over a named window
    ("csparql/rtgp_HelloWorldCSPARQL_1.rq", LIKES, "likes.nt", None),
    ("csparql/rtgp_HelloWorldCSPARQL_2.rq", LIKES, "likes.nt", None),  # COUNT with GROUP BY
    ("rspql/csparql2_rtgp-q1.rq", "<stream2>", "jasper_likes.nt", None),  # WINDOW ?w, ORDER BY
    ("rspql/csparql2_qOneStream.rq", "<red>", "colors.nt", None),  # WINDOW ?rw, COUNT, PT15S/PT5S
    ("rspql/csparql2_geldt_streams_article_OneStream.rq", "<https://www.gdeltproject.org/streams/article>",
     "gdelt.nt", None),  # SELECT * projects the window variable ?rw
    ("jasper/jasper_q51.rq", MASSIF, "massif.nt", None),  # [RANGE 5 s, SLIDE 1s] ON STREAM, WINDOW ?w
    ("jasper/jasper_q53.rq", MASSIF, "massif.nt", None),  # SLIDE 3s
    ("cqels/kmax_simpleSelect.rq", KMAX, "cqels_values.nt", None),  # CQELS [NOW]
    ("cqels/kmax_simpleSelectWithBindConcatStrStr.rq", KMAX, "cqels_values.nt", None),  # [NOW], BIND
    ("cqels/kmax_selectAvg.rq", KMAX, "cqels_values.nt", None),  # [NOW], AVG per group
]  # fmt: skip

_CQELS_STREAM = re.compile(r"(?i)\bSTREAM\s+(<[^>]*>)\s*\[[^\]]*\]\s*\{")


def oracle_sparql(text: str) -> str:
    """The query as plain SPARQL for rdflib: CQELS ``STREAM <s> [...] {`` reads the window named <s>."""
    text = re.sub(r"(?im)^\s*from\s+<[^>]*>\s*$", "", text)  # static graphs: in the reference's default graph
    return query_oracle.to_sparql(_CQELS_STREAM.sub(r"GRAPH \1 {", text))


def _rows(answer, ordered: bool):
    if isinstance(answer, bool) or answer is None:
        return answer
    rows = [tuple(sorted(row.items())) for row in answer]
    return rows if ordered else sorted(Counter(rows).items())


@pytest.mark.parametrize("name, stream, stream_file, static_file", CASES)
def test_corpus_query_against_the_reference(name: str, stream: str, stream_file: str, static_file) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    elements = read_elements((STREAMS / stream_file).read_text(encoding="utf-8"))
    engine = Engine()
    static = []
    if static_file is not None:
        engine.load_ontology(STREAMS / static_file)
        static = load_ontology(STREAMS / static_file)
    if static_file is not None:  # FROM <http://…> graphs: given locally, as --graph IRI=FILE does
        for iri in re.findall(r"(?im)^\s*from\s+<(http[^>]*)>", text):
            engine.add_graph(iri, STREAMS / static_file)
    handle = engine.register(text, str(CORPUS / name))
    assert list(handle.translation.streams) == [stream]
    for time, triple in elements:
        engine.push([triple], time, stream)
    engine.close()
    got = [(r.time, r.bindings if r.bindings is not None else r.boolean) for r in handle]

    windows = [(w.name, w.range, w.triples) for w in handle.query.windows]
    expected = query_oracle.run(oracle_sparql(text), windows, elements, static, "none", handle.step)
    ordered = bool(getattr(handle.query.form, "modifiers", None) and handle.query.form.modifiers.order_by)
    assert [(t, _rows(a, ordered)) for t, a in got] == [(t, _rows(a, ordered)) for t, a in expected]
    assert any(a for _t, a in got), f"{name}: no answer at any instant: the case checks nothing"
