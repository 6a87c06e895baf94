"""Background knowledge: RDFS and OWL 2 RL rules as data named by W3C rule id, ontology loading, the
static closure computed once, and the rules specialised to it for streams.

Public API:

- :func:`load_ontology` ``(path) -> list[tuple[str, str, str]]``: Turtle, N-Triples, N3, RDF/XML or
  JSON-LD by extension, terms in N-Triples syntax (lexical forms kept); :class:`OntologyError`
  (``file: reason``) on a bad file.
- :class:`Regime`: ``NONE``, ``RDFS``, ``OWLRL``.
- :func:`background_program` ``(regime, static_triples, pred="g") -> Background`` with ``closure``
  (closed static triples), ``rules`` (LARS rules over ``pred``, specialised, ``origin.source`` the W3C id),
  ``facts`` (their helper tables), ``inconsistencies``, ``program(extra_rules)`` and ``render()``.

>>> sco, typ = "<http://www.w3.org/2000/01/rdf-schema#subClassOf>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
>>> bg = background_program(Regime.OWLRL, [("<A>", sco, "<B>")])
>>> print(bg.rules[0])
g(X,<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>,<B>) :- g(X,<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>,<A>).
>>> bg.rules[0].origin.source
'cax-sco'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rsp.background.specialise import Background, Regime, background_program, static_closure
from rsp.lazy import lazy_exports

if TYPE_CHECKING:
    from rsp.background.ontology import OntologyError, load_ontology, parse_ontology_text

_ONTOLOGY = {
    name: "rsp.background.ontology" for name in ("OntologyError", "load_ontology", "parse_ontology_text")
}
"""The names of :mod:`rsp.background.ontology`, imported when first asked for (PEP 562): it imports
rdflib (≈ 50 ms), which a query without ontology or graphs, and the Spark workers that unpickle a
partitioned job, do not need."""

__getattr__, __dir__ = lazy_exports(__name__, _ONTOLOGY)

__all__ = [
    "Background",
    "OntologyError",
    "Regime",
    "background_program",
    "load_ontology",
    "parse_ontology_text",
    "static_closure",
]
