"""The W3C SPARQL 1.1 entailment-regime tests whose ``sd:entailmentRegime`` includes ``ent:RDFS``, run
through rsp as a static, one-window check.

The suite ships in rdflib's source distribution (``test/data/suites/w3c/sparql11/entailment``);
``make test`` fetches it into ``.venv/w3c/entailment`` (``RSP_W3C_ENTAILMENT`` points elsewhere). A
missing suite is a failure, never a skip.

How an entry runs (``Engine(entailment="rdfs")``):

- its data files are read with :func:`rsp.background.load_ontology` (N-Triples terms, lexical forms
  kept) and split in two: the RDFS TBox (triples whose predicate is ``rdfs:subClassOf``,
  ``rdfs:subPropertyOf``, ``rdfs:domain`` or ``rdfs:range``) becomes the engine's static graph — rsp
  specialises its entailment rules to the static closure and, by design, does not let schema triples
  arriving on a stream change them (see ``rsp/background/specialise.py``) — and every other triple is
  pushed into the stream ``<http://example.org/s>`` at time 0. The TBox goes straight into
  ``Engine.static`` (what ``Engine.load_ontology`` fills) so that blank-node labels shared by the two
  parts stay the same one node;
- its query becomes ``REGISTER QUERY T AS <query with FROM STREAM <http://example.org/s> [RANGE 1s STEP 1s]
  before WHERE>``, so the default graph at instant 1000 is the TBox plus a window holding all the
  other data;
- the answer at instant 1000 (the only instant) is compared with the ``.srx`` results: as multisets of
  solutions, literals as terms (lexical form, datatype, language; a simple literal is an xsd:string),
  blank nodes up to a bijective renaming; ASK answers as booleans.

Result: all 35 RDFS-regime entries pass. Five of them (rdfs05, rdfs11, paper-sparqldl-Q1-rdfs,
sparqldl-02, sparqldl-03) need a reflexive ``c rdfs:subClassOf c`` (rdfs10) or ``p rdfs:subPropertyOf p``
(rdfs6), which rsp produces for queries whose patterns can match them (rsp/query/translation/reflexive.py).
A known failure would go in :data:`KNOWN_FAILURES` with its reason, as a strict xfail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from paths import ROOT
from w3c_manifest import (
    ENT,
    Entry,
    read_manifest,
    read_srx,
    render,
    rsp_solutions,
    same_solutions,
    to_registered,
)

from rsp.background import load_ontology
from rsp.runtime import Engine

SUITE = Path(
    os.environ.get("RSP_W3C_ENTAILMENT") or ROOT / ".venv" / "w3c" / "entailment"
)
MANIFEST = SUITE / "manifest.ttl"
MISSING = (
    f"the W3C SPARQL 1.1 entailment suite is missing: no {MANIFEST}. Run `make test`, which fetches the "
    "suite (rdflib's source distribution, test/data/suites/w3c/sparql11/entailment), or point "
    "RSP_W3C_ENTAILMENT at an extracted copy."
)

STREAM = "<http://example.org/s>"
WINDOW = "[RANGE 1s STEP 1s]"
INSTANT = 1000

RDFS = "<http://www.w3.org/2000/01/rdf-schema#{}>".format
TBOX_PREDICATES = frozenset(RDFS(name) for name in ("subClassOf", "subPropertyOf", "domain", "range"))

EXPECTED_ENTRIES = (
    "rdf04", "rdfs01", "rdfs02", "rdfs03", "rdfs04", "rdfs05", "rdfs06", "rdfs07", "rdfs08", "rdfs09",
    "rdfs10", "rdfs11", "rdfs12", "rdfs13", "owlds01", "owlds02", "paper-sparqldl-Q1-rdfs",
    "bind01", "bind02", "bind03", "bind04", "bind05", "bind06", "bind07", "bind08",
    "sparqldl-01", "sparqldl-02", "sparqldl-03", "sparqldl-04", "sparqldl-05", "sparqldl-06",
    "sparqldl-07", "sparqldl-08", "sparqldl-09", "parent2",
)  # fmt: skip
"""The manifest entries with ent:RDFS among their regimes, in manifest order (rdflib 7.6.0's copy)."""

_REFLEXIVE = (
    "rsp deliberately omits reflexive {triple} ({rule}; rsp.background.vocab.is_noise rule 2, "
    "docs/queries.md 'Entailment'), and the expected answer {needs}"
)
KNOWN_FAILURES: dict[str, str] = {}
"""Entry name -> why rsp's answer differs from the W3C one (strict xfail)."""


def rdfs_entries() -> list[Entry]:
    return [e for e in read_manifest(MANIFEST) if str(ENT.RDFS) in e.regimes]


def _params() -> list:
    if not MANIFEST.is_file():
        return [pytest.param(None, id="suite-missing")]
    params = []
    for entry in rdfs_entries():
        marks = []
        if entry.name in KNOWN_FAILURES:
            marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[entry.name], strict=True))
        params.append(pytest.param(entry, id=entry.name, marks=marks))
    return params


def run_entry(entry: Entry):
    """rsp's result at the evaluated instant, the registered query text, and the expected results."""
    assert not entry.graph_data, f"{entry.name}: qt:graphData (named graphs) is not handled by this harness"
    triples = [triple for path in entry.data for triple in load_ontology(path)]
    text = to_registered(entry.query.read_text(encoding="utf-8"), STREAM, WINDOW)
    engine = Engine(entailment="rdfs")
    engine.static.extend(t for t in triples if t[1] in TBOX_PREDICATES)
    query = engine.register(text, str(entry.query))
    engine.push([t for t in triples if t[1] not in TBOX_PREDICATES], 0, STREAM)
    engine.close()
    results = list(query)
    assert [r.time for r in results] == [INSTANT], f"{entry.name}: evaluated at {[r.time for r in results]}"
    return results[0], text, read_srx(entry.result)


@pytest.mark.parametrize("entry", _params())
def test_w3c_rdfs_entry(entry: Entry | None) -> None:
    if entry is None:
        pytest.fail(MISSING)
    result, text, expected = run_entry(entry)
    if expected.boolean is not None:
        assert result.boolean is expected.boolean, f"{entry.name}: ASK gave {result.boolean}\n{text}"
        return
    got = rsp_solutions(result.bindings)
    assert same_solutions(expected.solutions, got), (
        f"{entry.name} ({entry.title})\n{text}\nexpected:\n{render(expected.solutions)}\ngot:\n{render(got)}"
    )


def test_w3c_rdfs_selection() -> None:
    """The selection cannot silently shrink or grow, and every known failure names a selected entry."""
    if not MANIFEST.is_file():
        pytest.fail(MISSING)
    names = tuple(e.name for e in rdfs_entries())
    assert names == EXPECTED_ENTRIES
    assert len(names) == 35
    assert set(KNOWN_FAILURES) <= set(names)
