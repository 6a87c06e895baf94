"""Differential tests: rsp's background reasoning (static ontology closed once, ABox streamed through
the specialised rules) against owlrl's closure of the union, on small ontologies written for this
(tests/data/ontologies: SOSA-style sensors, transport with a transitive isIn, a family), after
removing the noise of :func:`rsp.background.vocab.is_noise` from both sides."""

from __future__ import annotations

import pytest
from paths import TEST_DATA
from test_background import clean, owlrl_closure, stream_closure

from rsp.background import Regime, background_program, load_ontology
from rsp.background.vocab import RDF_TYPE, SCHEMA_PROPERTIES

DATA = TEST_DATA / "ontologies"
NAMES = ["sensors", "transport", "family"]
REGIMES = [Regime.RDFS, Regime.OWLRL]


def _inputs(name: str):
    return load_ontology(DATA / f"{name}.ttl"), load_ontology(DATA / f"{name}.stream.ttl")


@pytest.mark.parametrize("regime", REGIMES, ids=lambda r: r.value)
@pytest.mark.parametrize("name", NAMES)
def test_stream_closure_matches_owlrl(name, regime):
    tbox, abox = _inputs(name)
    triples, _clashes = stream_closure(regime, tbox, abox)
    reference = clean(owlrl_closure(regime, tbox + abox))
    ours = clean(triples)
    assert ours == reference, f"rsp-only {sorted(ours - reference)[:5]}, owlrl {sorted(reference - ours)[:5]}"
    assert not set(triples) - ours - set(tbox) - set(abox)  # and rsp makes no noise of its own
    assert len(ours - set(tbox) - set(abox)) > 10  # the example does entail something


@pytest.mark.parametrize("regime", REGIMES, ids=lambda r: r.value)
@pytest.mark.parametrize("name", NAMES)
def test_static_closure_matches_owlrl(name, regime):
    tbox, abox = _inputs(name)
    background = background_program(regime, tbox + abox)
    assert clean(background.closure) == clean(owlrl_closure(regime, tbox + abox))


@pytest.mark.parametrize("name", NAMES)
def test_stream_data_alone(name):
    """The same ABox streamed against an ontology holding only its TBox part (no static individuals)."""
    tbox, abox = _inputs(name)
    schema = [t for t in tbox if not _is_individual_data(t)]
    data = [t for t in tbox if _is_individual_data(t)] + abox
    triples, _ = stream_closure(Regime.OWLRL, schema, data)
    assert clean(triples) == clean(owlrl_closure(Regime.OWLRL, schema + data))


def _is_individual_data(triple) -> bool:
    """ABox: neither a schema predicate, nor a type from the OWL vocabulary, nor about a blank node."""
    s, p, o = triple
    if s.startswith("_:") or p in SCHEMA_PROPERTIES:
        return False
    return not (p == RDF_TYPE and o.startswith("<http://www.w3.org/2002/07/owl#"))


def test_family_inconsistency_reported():
    tbox, abox = _inputs("family")
    _triples, clashes = stream_closure(Regime.OWLRL, tbox, abox + [
        ("<http://example.org/family#x>", "<http://example.org/family#hasSibling>", "<http://example.org/family#x>")])
    assert ("prp-irp", "<http://example.org/family#x>", "<http://example.org/family#hasSibling>") in clashes
