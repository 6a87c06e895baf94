"""The RDF, RDFS, OWL and XSD terms the background rules use, in N-Triples syntax, and the noise filter.

Terms are written as rsp writes them everywhere (``<http://…>``). :func:`expand` turns the prefixed
names of the rule tables (``rdfs:subClassOf``) into those terms.
"""

from __future__ import annotations

from rsp.io.terms import XSD

PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": XSD,
}


def expand(name: str) -> str:
    """``rdfs:subClassOf`` → ``<http://www.w3.org/2000/01/rdf-schema#subClassOf>``; ``<…>`` unchanged."""
    if name.startswith("<") or name.startswith('"'):
        return name
    prefix, _, local = name.partition(":")
    return f"<{PREFIXES[prefix]}{local}>"


RDF_TYPE = expand("rdf:type")
RDF_FIRST = expand("rdf:first")
RDF_REST = expand("rdf:rest")
RDF_NIL = expand("rdf:nil")
SUBCLASS = expand("rdfs:subClassOf")
SUBPROPERTY = expand("rdfs:subPropertyOf")
DOMAIN = expand("rdfs:domain")
RANGE = expand("rdfs:range")
SAME_AS = expand("owl:sameAs")
EQ_CLASS = expand("owl:equivalentClass")
EQ_PROPERTY = expand("owl:equivalentProperty")
THING = expand("owl:Thing")
RESOURCE = expand("rdfs:Resource")
INTERSECTION_OF = expand("owl:intersectionOf")
CHAIN = expand("owl:propertyChainAxiom")
HAS_KEY = expand("owl:hasKey")

SCHEMA_PROPERTIES = frozenset(
    expand(name)
    for name in (
        "rdfs:subClassOf", "rdfs:subPropertyOf", "rdfs:domain", "rdfs:range",
        "owl:equivalentClass", "owl:equivalentProperty", "owl:inverseOf", "owl:onProperty",
        "owl:onClass", "owl:someValuesFrom", "owl:allValuesFrom", "owl:hasValue",
        "owl:maxCardinality", "owl:maxQualifiedCardinality", "owl:intersectionOf", "owl:unionOf",
        "owl:oneOf", "owl:complementOf", "owl:disjointWith", "owl:propertyDisjointWith",
        "owl:propertyChainAxiom", "owl:hasKey", "owl:members", "owl:distinctMembers",
        "owl:sourceIndividual", "owl:assertionProperty", "owl:targetIndividual", "owl:targetValue",
        "rdf:first", "rdf:rest",
    )
)  # fmt: skip
"""Predicates of TBox triples: a body pattern with one of them is looked up in the static closure."""

SCHEMA_TYPES = frozenset(
    expand(name)
    for name in (
        "owl:FunctionalProperty", "owl:InverseFunctionalProperty", "owl:IrreflexiveProperty",
        "owl:SymmetricProperty", "owl:AsymmetricProperty", "owl:TransitiveProperty",
        "owl:AllDifferent", "owl:AllDisjointProperties", "owl:AllDisjointClasses",
        "owl:Class", "owl:ObjectProperty", "owl:DatatypeProperty",
    )
)  # fmt: skip
"""Classes whose ``rdf:type`` triples are TBox triples (``?p rdf:type owl:TransitiveProperty``)."""

VOCABULARY_NAMESPACES = tuple(f"<{ns}" for ns in PREFIXES.values())

NOISE_TYPES = frozenset(
    expand(name)
    for name in (
        "rdfs:Resource", "rdfs:Class", "rdf:Property", "rdfs:Literal", "rdfs:Datatype", "rdf:List",
        "rdfs:ContainerMembershipProperty", "owl:Thing",
    )
)  # fmt: skip
_REFLEXIVE = frozenset({SAME_AS, SUBCLASS, SUBPROPERTY, EQ_CLASS, EQ_PROPERTY})
_TOP_SCHEMA = frozenset({SUBCLASS, DOMAIN, RANGE})


def is_noise(triple: tuple[str, str, str]) -> bool:
    """True for the entailed triples rsp deliberately does not produce (they hold for every graph or
    follow from the axiomatic triples, and no query is interested in them):

    1. a literal subject (generalised RDF: ``"5"^^xsd:integer rdf:type xsd:integer``, dt-type*);
    2. reflexive ``x owl:sameAs x``, ``c rdfs:subClassOf c``, ``p rdfs:subPropertyOf p``,
       ``c owl:equivalentClass c``, ``p owl:equivalentProperty p`` (eq-ref, scm-cls, scm-op, scm-dp,
       rdfs6, rdfs10);
    3. a subject in the rdf:, rdfs:, owl: or xsd: namespace (axiomatic triples, prp-ap, cls-thing,
       cls-nothing1, ``owl:Nothing rdfs:subClassOf c`` from scm-cls);
    4. ``x rdf:type T`` for T in rdfs:Resource, rdfs:Class, rdf:Property, rdfs:Literal, rdfs:Datatype,
       rdf:List, rdfs:ContainerMembershipProperty, owl:Thing (rdf1, rdfs4a/b, rdfs domain/range axioms);
    5. ``c rdfs:subClassOf T``, ``p rdfs:domain T``, ``p rdfs:range T`` with T owl:Thing or
       rdfs:Resource (scm-cls, rdfs8 and what scm-dom1/scm-rng1 make of them).

    Asserted triples are never removed from a closure, noise or not.
    """
    s, p, o = triple
    if s.startswith('"'):
        return True
    if s == o and p in _REFLEXIVE:
        return True
    if s.startswith(VOCABULARY_NAMESPACES):
        return True
    if p == RDF_TYPE and o in NOISE_TYPES:
        return True
    return p in _TOP_SCHEMA and (o == THING or o == RESOURCE)
