"""The RDFS and OWL 2 RL entailment rules as data: each a template named by its W3C rule id, with body
triple patterns and head triple patterns over an abstract triple predicate.

Patterns are written the way the W3C tables write them, one string per triple (``"?x rdf:type ?c"``);
``name(?a, ?b)`` is a helper atom (list membership and list traversal, see :data:`LIST_HELPERS`),
``?a != ?b`` a comparison. :meth:`EntailmentRule.lars` instantiates a template as LARS rules over a
concrete triple predicate: ``triple`` becomes that name and a helper ``h`` becomes ``<pred>_h``.

Rules that detect an inconsistency (their W3C head is ``false``) derive ``false("<rule id>", a, b)``
instead (``<pred>_false``): the clash is reported with two witnesses, nothing else follows from it.

Departures from the W3C text, all to avoid reflexive noise (see :func:`rsp.background.vocab.is_noise`):
eq-trans, prp-fp, prp-ifp, prp-key, cls-maxc2, cls-maxqc3 and cls-maxqc4 do not derive ``x owl:sameAs
x``; eq-rep-s and eq-rep-o do not rewrite owl:sameAs triples (what they would make from them is what
eq-sym and eq-trans make, plus reflexive triples); eq-ref, prp-ap, cls-thing, cls-nothing1, the
dt-* rules and the axiomatic or reflexive RDFS rules (rdf1, rdfs1, rdfs4a/b, rdfs6, rdfs8, rdfs10,
rdfs12, rdfs13) are left out. scm-cls, scm-op and scm-dp are kept for the static closure (scm-hv,
scm-svf* and scm-avf* need their reflexive triples), whose noise is then dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rsp.background.vocab import expand
from rsp.lars.model import Atom, Comparison, ExtAtom, Head, Origin, Rule, Term, Var

TRIPLE = "triple"
"""The abstract triple predicate of the templates."""
FALSE = "false"
"""The helper predicate of inconsistencies: ``false(rule_id, a, b)``."""

_HELPER = re.compile(r"^(\w+)\((.*)\)$")


def _term(token: str) -> Term:
    if token.startswith("?"):
        return Var(token[1:].upper())
    return expand(token)


def pattern(text: str) -> Atom | Comparison:
    """Parse one pattern: ``"?s ?p ?o"``, ``"helper(?a, ?b)"`` or ``"?a != ?b"``."""
    text = text.strip()
    m = _HELPER.match(text)
    if m is not None:
        return Atom(m.group(1), tuple(_term(t.strip()) for t in m.group(2).split(",")))
    tokens = text.split()
    if len(tokens) == 3 and tokens[1] in ("!=", "="):
        return Comparison(tokens[1], _term(tokens[0]), _term(tokens[2]))
    if len(tokens) != 3:
        raise ValueError(f"not a triple pattern: {text!r}")
    return Atom(TRIPLE, tuple(_term(t) for t in tokens))


def local_name(pred: str, name: str) -> str:
    """The concrete predicate of template predicate ``name`` when triples live in ``pred``."""
    return pred if name == TRIPLE else f"{pred}_{name}"


def rename(atom: Atom, pred: str) -> Atom:
    """Instantiate a template atom for triple predicate ``pred``."""
    return Atom(local_name(pred, atom.pred), atom.args)


def body_literal(lit: Atom | Comparison, pred: str) -> ExtAtom | Comparison:
    """Instantiate a template body literal: an atom becomes a plain extended atom, a comparison stays."""
    if isinstance(lit, Atom):
        return ExtAtom(rename(lit, pred))
    return lit


@dataclass(frozen=True)
class EntailmentRule:
    """One W3C entailment rule: ``body → heads`` over :data:`TRIPLE`, plus the helper rules that
    traverse rdf:lists for it (``helpers``, as (body, head) templates)."""

    id: str
    body: tuple[Atom | Comparison, ...]
    heads: tuple[Atom, ...]
    text: str
    helpers: tuple[tuple[tuple[Atom | Comparison, ...], Atom], ...] = ()
    unrolled: bool = False
    """List-quantified (cls-int1, prp-spo2, prp-key): on streams it is unrolled, one rule per list."""
    statement: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.id}: {self.statement or self.text}"

    def lars(self, pred: str) -> list[Rule]:
        """The rule (one LARS rule per head) and its helpers over triple predicate ``pred``."""
        origin = Origin(source=self.id)
        rules = [
            Rule(Head(rename(head, pred)), tuple(body_literal(b, pred) for b in body), origin)
            for body, head in self.helpers
        ]
        body = tuple(body_literal(b, pred) for b in self.body)
        rules += [Rule(Head(rename(h, pred)), body, origin) for h in self.heads]
        return rules


def rule(
    rule_id: str,
    body: list[str],
    heads: list[str],
    helpers: tuple = (),
    unrolled: bool = False,
    statement: str = "",
) -> EntailmentRule:
    """Build a template from W3C-style pattern strings."""
    text = f"{' . '.join(body)} → {' . '.join(heads)}"
    parsed_helpers = tuple(
        (tuple(pattern(b) for b in hbody), pattern(hhead)) for hbody, hhead in helpers
    )
    return EntailmentRule(
        rule_id,
        tuple(pattern(b) for b in body),
        tuple(pattern(h) for h in heads),
        text,
        parsed_helpers,
        unrolled,
        statement,
    )


def clash(rule_id: str, body: list[str], a: str, b: str, **kwargs) -> EntailmentRule:
    """An inconsistency rule: derives ``false("<rule_id>", a, b)``."""
    return rule(rule_id, body, [f'{FALSE}("{rule_id}", {a}, {b})'], **kwargs)


# -- rdf:lists -------------------------------------------------------------------------------------

LIST_HELPERS = (
    (("?l rdf:first ?x",), "member(?l, ?x)"),
    (("?l rdf:rest ?l2", "member(?l2, ?x)"), "member(?l, ?x)"),
)
"""``member(l, x)``: x is an element of the rdf:list l (the W3C tables' LIST[l, x1, …, xn])."""

ONE = tuple(
    f'"1"^^{expand("xsd:" + t)}'
    for t in ("nonNegativeInteger", "integer", "int", "long", "short", "byte", "positiveInteger",
              "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte")
)  # fmt: skip
ZERO = tuple(v.replace('"1"', '"0"') for v in ONE if "positiveInteger" not in v)
"""The literals a cardinality restriction of 1 (of 0) is written with: helper facts ``one``/``zero``."""


# -- RDFS (RDF 1.1 Semantics, section 9.2.1) -------------------------------------------------------

RDFS_RULES = (
    rule("rdfs2", ["?p rdfs:domain ?c", "?x ?p ?y"], ["?x rdf:type ?c"]),
    rule("rdfs3", ["?p rdfs:range ?c", "?x ?p ?y"], ["?y rdf:type ?c"]),
    rule("rdfs5", ["?p rdfs:subPropertyOf ?q", "?q rdfs:subPropertyOf ?r"], ["?p rdfs:subPropertyOf ?r"]),
    rule("rdfs7", ["?p rdfs:subPropertyOf ?q", "?x ?p ?y"], ["?x ?q ?y"]),
    rule("rdfs9", ["?c rdfs:subClassOf ?d", "?x rdf:type ?c"], ["?x rdf:type ?d"]),
    rule("rdfs11", ["?c rdfs:subClassOf ?d", "?d rdfs:subClassOf ?e"], ["?c rdfs:subClassOf ?e"]),
)

# -- OWL 2 RL (OWL 2 Profiles, section 4.3, tables 4-7 and 9) --------------------------------------

EQUALITY = (
    rule("eq-sym", ["?x owl:sameAs ?y"], ["?y owl:sameAs ?x"]),
    rule("eq-trans", ["?x owl:sameAs ?y", "?y owl:sameAs ?z", "?x != ?z"], ["?x owl:sameAs ?z"]),
    rule("eq-rep-s", ["?s owl:sameAs ?s2", "?s ?p ?o", "?p != owl:sameAs"], ["?s2 ?p ?o"]),
    rule("eq-rep-p", ["?p owl:sameAs ?p2", "?s ?p ?o"], ["?s ?p2 ?o"]),
    rule("eq-rep-o", ["?o owl:sameAs ?o2", "?s ?p ?o", "?p != owl:sameAs"], ["?s ?p ?o2"]),
    clash("eq-diff1", ["?x owl:sameAs ?y", "?x owl:differentFrom ?y"], "?x", "?y"),
    clash(
        "eq-diff2",
        ["?x rdf:type owl:AllDifferent", "?x owl:members ?l", "member(?l, ?y)", "member(?l, ?z)",
         "?y != ?z", "?y owl:sameAs ?z"],
        "?y", "?z",
    ),  # fmt: skip
    clash(
        "eq-diff3",
        ["?x rdf:type owl:AllDifferent", "?x owl:distinctMembers ?l", "member(?l, ?y)",
         "member(?l, ?z)", "?y != ?z", "?y owl:sameAs ?z"],
        "?y", "?z",
    ),  # fmt: skip
)

PROPERTIES = (
    rule("prp-dom", ["?p rdfs:domain ?c", "?x ?p ?y"], ["?x rdf:type ?c"]),
    rule("prp-rng", ["?p rdfs:range ?c", "?x ?p ?y"], ["?y rdf:type ?c"]),
    rule(
        "prp-fp",
        ["?p rdf:type owl:FunctionalProperty", "?x ?p ?y1", "?x ?p ?y2", "?y1 != ?y2"],
        ["?y1 owl:sameAs ?y2"],
    ),
    rule(
        "prp-ifp",
        ["?p rdf:type owl:InverseFunctionalProperty", "?x1 ?p ?y", "?x2 ?p ?y", "?x1 != ?x2"],
        ["?x1 owl:sameAs ?x2"],
    ),
    clash("prp-irp", ["?p rdf:type owl:IrreflexiveProperty", "?x ?p ?x"], "?x", "?p"),
    rule("prp-symp", ["?p rdf:type owl:SymmetricProperty", "?x ?p ?y"], ["?y ?p ?x"]),
    clash("prp-asyp", ["?p rdf:type owl:AsymmetricProperty", "?x ?p ?y", "?y ?p ?x"], "?x", "?y"),
    rule("prp-trp", ["?p rdf:type owl:TransitiveProperty", "?x ?p ?y", "?y ?p ?z"], ["?x ?p ?z"]),
    rule("prp-spo1", ["?p1 rdfs:subPropertyOf ?p2", "?x ?p1 ?y"], ["?x ?p2 ?y"]),
    rule(
        "prp-spo2",
        ["?p owl:propertyChainAxiom ?l", "chain(?l, ?u, ?w)"],
        ["?u ?p ?w"],
        helpers=(
            (("?p owl:propertyChainAxiom ?l",), "chain_list(?l)"),
            (("chain_list(?l)", "?l rdf:rest ?l2"), "chain_list(?l2)"),
            (("chain_list(?l)", "?l rdf:first ?p", "?l rdf:rest rdf:nil", "?u ?p ?v"), "chain(?l, ?u, ?v)"),
            (
                ("chain_list(?l)", "?l rdf:first ?p", "?l rdf:rest ?l2", "?u ?p ?v", "chain(?l2, ?v, ?w)"),
                "chain(?l, ?u, ?w)",
            ),
        ),
        unrolled=True,
        statement="?p owl:propertyChainAxiom (?p1 … ?pn) . ?u0 ?p1 ?u1 . … . ?u(n-1) ?pn ?un → ?u0 ?p ?un",
    ),
    rule("prp-eqp1", ["?p1 owl:equivalentProperty ?p2", "?x ?p1 ?y"], ["?x ?p2 ?y"]),
    rule("prp-eqp2", ["?p1 owl:equivalentProperty ?p2", "?x ?p2 ?y"], ["?x ?p1 ?y"]),
    clash("prp-pdw", ["?p1 owl:propertyDisjointWith ?p2", "?x ?p1 ?y", "?x ?p2 ?y"], "?x", "?y"),
    clash(
        "prp-adp",
        ["?x rdf:type owl:AllDisjointProperties", "?x owl:members ?l", "member(?l, ?p1)",
         "member(?l, ?p2)", "?p1 != ?p2", "?u ?p1 ?y", "?u ?p2 ?y"],
        "?u", "?y",
    ),  # fmt: skip
    rule("prp-inv1", ["?p1 owl:inverseOf ?p2", "?x ?p1 ?y"], ["?y ?p2 ?x"]),
    rule("prp-inv2", ["?p1 owl:inverseOf ?p2", "?x ?p2 ?y"], ["?y ?p1 ?x"]),
    rule(
        "prp-key",
        ["?c owl:hasKey ?l", "?x rdf:type ?c", "?y rdf:type ?c", "key_agree(?l, ?x, ?y)", "?x != ?y"],
        ["?x owl:sameAs ?y"],
        helpers=(
            (("?c owl:hasKey ?l",), "key_list(?l)"),
            (("key_list(?l)", "?l rdf:rest ?l2"), "key_list(?l2)"),
            (
                ("key_list(?l)", "?l rdf:first ?p", "?l rdf:rest rdf:nil", "?x ?p ?z", "?y ?p ?z"),
                "key_agree(?l, ?x, ?y)",
            ),
            (
                ("key_list(?l)", "?l rdf:first ?p", "?l rdf:rest ?l2", "?x ?p ?z", "?y ?p ?z",
                 "key_agree(?l2, ?x, ?y)"),
                "key_agree(?l, ?x, ?y)",
            ),  # fmt: skip
        ),
        unrolled=True,
        statement="?c owl:hasKey (?p1 … ?pn) . ?x rdf:type ?c . ?x ?pi ?zi (each i) . ?y rdf:type ?c . "
        "?y ?pi ?zi (each i) → ?x owl:sameAs ?y",
    ),
    clash(
        "prp-npa1",
        ["?x owl:sourceIndividual ?i1", "?x owl:assertionProperty ?p", "?x owl:targetIndividual ?i2",
         "?i1 ?p ?i2"],
        "?i1", "?i2",
    ),  # fmt: skip
    clash(
        "prp-npa2",
        ["?x owl:sourceIndividual ?i", "?x owl:assertionProperty ?p", "?x owl:targetValue ?lt",
         "?i ?p ?lt"],
        "?i", "?lt",
    ),  # fmt: skip
)

CLASSES = (
    clash("cls-nothing2", ["?x rdf:type owl:Nothing"], "?x", "owl:Nothing"),
    rule(
        "cls-int1",
        ["?c owl:intersectionOf ?l", "int_all(?u, ?l)"],
        ["?u rdf:type ?c"],
        helpers=(
            (("?c owl:intersectionOf ?l",), "int_list(?l)"),
            (("int_list(?l)", "?l rdf:rest ?l2"), "int_list(?l2)"),
            (("int_list(?l)", "?l rdf:first ?c", "?l rdf:rest rdf:nil", "?u rdf:type ?c"), "int_all(?u, ?l)"),
            (
                ("int_list(?l)", "?l rdf:first ?c", "?l rdf:rest ?l2", "?u rdf:type ?c", "int_all(?u, ?l2)"),
                "int_all(?u, ?l)",
            ),
        ),
        unrolled=True,
        statement="?c owl:intersectionOf (?c1 … ?cn) . ?y rdf:type ?ci (each i) → ?y rdf:type ?c",
    ),
    rule("cls-int2", ["?c owl:intersectionOf ?l", "member(?l, ?ci)", "?y rdf:type ?c"], ["?y rdf:type ?ci"]),
    rule("cls-uni", ["?c owl:unionOf ?l", "member(?l, ?ci)", "?y rdf:type ?ci"], ["?y rdf:type ?c"]),
    clash("cls-com", ["?c1 owl:complementOf ?c2", "?x rdf:type ?c1", "?x rdf:type ?c2"], "?x", "?c1"),
    rule(
        "cls-svf1",
        ["?x owl:someValuesFrom ?y", "?x owl:onProperty ?p", "?u ?p ?v", "?v rdf:type ?y"],
        ["?u rdf:type ?x"],
    ),
    rule(
        "cls-svf2",
        ["?x owl:someValuesFrom owl:Thing", "?x owl:onProperty ?p", "?u ?p ?v"],
        ["?u rdf:type ?x"],
    ),
    rule(
        "cls-avf",
        ["?x owl:allValuesFrom ?y", "?x owl:onProperty ?p", "?u rdf:type ?x", "?u ?p ?v"],
        ["?v rdf:type ?y"],
    ),
    rule("cls-hv1", ["?x owl:hasValue ?y", "?x owl:onProperty ?p", "?u rdf:type ?x"], ["?u ?p ?y"]),
    rule("cls-hv2", ["?x owl:hasValue ?y", "?x owl:onProperty ?p", "?u ?p ?y"], ["?u rdf:type ?x"]),
    clash(
        "cls-maxc1",
        ["?x owl:maxCardinality ?n", "zero(?n)", "?x owl:onProperty ?p", "?u rdf:type ?x", "?u ?p ?y"],
        "?u", "?x",
    ),  # fmt: skip
    rule(
        "cls-maxc2",
        ["?x owl:maxCardinality ?n", "one(?n)", "?x owl:onProperty ?p", "?u rdf:type ?x", "?u ?p ?y1",
         "?u ?p ?y2", "?y1 != ?y2"],
        ["?y1 owl:sameAs ?y2"],
    ),  # fmt: skip
    clash(
        "cls-maxqc1",
        ["?x owl:maxQualifiedCardinality ?n", "zero(?n)", "?x owl:onProperty ?p", "?x owl:onClass ?c",
         "?u rdf:type ?x", "?u ?p ?y", "?y rdf:type ?c"],
        "?u", "?x",
    ),  # fmt: skip
    clash(
        "cls-maxqc2",
        ["?x owl:maxQualifiedCardinality ?n", "zero(?n)", "?x owl:onProperty ?p",
         "?x owl:onClass owl:Thing", "?u rdf:type ?x", "?u ?p ?y"],
        "?u", "?x",
    ),  # fmt: skip
    rule(
        "cls-maxqc3",
        ["?x owl:maxQualifiedCardinality ?n", "one(?n)", "?x owl:onProperty ?p", "?x owl:onClass ?c",
         "?u rdf:type ?x", "?u ?p ?y1", "?y1 rdf:type ?c", "?u ?p ?y2", "?y2 rdf:type ?c", "?y1 != ?y2"],
        ["?y1 owl:sameAs ?y2"],
    ),  # fmt: skip
    rule(
        "cls-maxqc4",
        ["?x owl:maxQualifiedCardinality ?n", "one(?n)", "?x owl:onProperty ?p",
         "?x owl:onClass owl:Thing", "?u rdf:type ?x", "?u ?p ?y1", "?u ?p ?y2", "?y1 != ?y2"],
        ["?y1 owl:sameAs ?y2"],
    ),  # fmt: skip
    rule("cls-oo", ["?c owl:oneOf ?l", "member(?l, ?y)"], ["?y rdf:type ?c"]),
)

CLASS_AXIOMS = (
    rule("cax-sco", ["?c1 rdfs:subClassOf ?c2", "?x rdf:type ?c1"], ["?x rdf:type ?c2"]),
    rule("cax-eqc1", ["?c1 owl:equivalentClass ?c2", "?x rdf:type ?c1"], ["?x rdf:type ?c2"]),
    rule("cax-eqc2", ["?c1 owl:equivalentClass ?c2", "?x rdf:type ?c2"], ["?x rdf:type ?c1"]),
    clash("cax-dw", ["?c1 owl:disjointWith ?c2", "?x rdf:type ?c1", "?x rdf:type ?c2"], "?x", "?c1"),
    clash(
        "cax-adc",
        ["?x rdf:type owl:AllDisjointClasses", "?x owl:members ?l", "member(?l, ?c1)", "member(?l, ?c2)",
         "?c1 != ?c2", "?z rdf:type ?c1", "?z rdf:type ?c2"],
        "?z", "?c1",
    ),  # fmt: skip
)

SCHEMA = (
    rule(
        "scm-cls",
        ["?c rdf:type owl:Class"],
        ["?c rdfs:subClassOf ?c", "?c owl:equivalentClass ?c", "?c rdfs:subClassOf owl:Thing",
         "owl:Nothing rdfs:subClassOf ?c"],
    ),  # fmt: skip
    rule("scm-sco", ["?c1 rdfs:subClassOf ?c2", "?c2 rdfs:subClassOf ?c3"], ["?c1 rdfs:subClassOf ?c3"]),
    rule("scm-eqc1", ["?c1 owl:equivalentClass ?c2"], ["?c1 rdfs:subClassOf ?c2", "?c2 rdfs:subClassOf ?c1"]),
    rule("scm-eqc2", ["?c1 rdfs:subClassOf ?c2", "?c2 rdfs:subClassOf ?c1"], ["?c1 owl:equivalentClass ?c2"]),
    rule(
        "scm-op",
        ["?p rdf:type owl:ObjectProperty"],
        ["?p rdfs:subPropertyOf ?p", "?p owl:equivalentProperty ?p"],
    ),
    rule(
        "scm-dp",
        ["?p rdf:type owl:DatatypeProperty"],
        ["?p rdfs:subPropertyOf ?p", "?p owl:equivalentProperty ?p"],
    ),
    rule(
        "scm-spo",
        ["?p1 rdfs:subPropertyOf ?p2", "?p2 rdfs:subPropertyOf ?p3"],
        ["?p1 rdfs:subPropertyOf ?p3"],
    ),
    rule(
        "scm-eqp1",
        ["?p1 owl:equivalentProperty ?p2"],
        ["?p1 rdfs:subPropertyOf ?p2", "?p2 rdfs:subPropertyOf ?p1"],
    ),
    rule(
        "scm-eqp2",
        ["?p1 rdfs:subPropertyOf ?p2", "?p2 rdfs:subPropertyOf ?p1"],
        ["?p1 owl:equivalentProperty ?p2"],
    ),
    rule("scm-dom1", ["?p rdfs:domain ?c1", "?c1 rdfs:subClassOf ?c2"], ["?p rdfs:domain ?c2"]),
    rule("scm-dom2", ["?p2 rdfs:domain ?c", "?p1 rdfs:subPropertyOf ?p2"], ["?p1 rdfs:domain ?c"]),
    rule("scm-rng1", ["?p rdfs:range ?c1", "?c1 rdfs:subClassOf ?c2"], ["?p rdfs:range ?c2"]),
    rule("scm-rng2", ["?p2 rdfs:range ?c", "?p1 rdfs:subPropertyOf ?p2"], ["?p1 rdfs:range ?c"]),
    rule(
        "scm-hv",
        ["?c1 owl:hasValue ?i", "?c1 owl:onProperty ?p1", "?c2 owl:hasValue ?i", "?c2 owl:onProperty ?p2",
         "?p1 rdfs:subPropertyOf ?p2"],
        ["?c1 rdfs:subClassOf ?c2"],
    ),  # fmt: skip
    rule(
        "scm-svf1",
        ["?c1 owl:someValuesFrom ?y1", "?c1 owl:onProperty ?p", "?c2 owl:someValuesFrom ?y2",
         "?c2 owl:onProperty ?p", "?y1 rdfs:subClassOf ?y2"],
        ["?c1 rdfs:subClassOf ?c2"],
    ),  # fmt: skip
    rule(
        "scm-svf2",
        ["?c1 owl:someValuesFrom ?y", "?c1 owl:onProperty ?p1", "?c2 owl:someValuesFrom ?y",
         "?c2 owl:onProperty ?p2", "?p1 rdfs:subPropertyOf ?p2"],
        ["?c1 rdfs:subClassOf ?c2"],
    ),  # fmt: skip
    rule(
        "scm-avf1",
        ["?c1 owl:allValuesFrom ?y1", "?c1 owl:onProperty ?p", "?c2 owl:allValuesFrom ?y2",
         "?c2 owl:onProperty ?p", "?y1 rdfs:subClassOf ?y2"],
        ["?c1 rdfs:subClassOf ?c2"],
    ),  # fmt: skip
    rule(
        "scm-avf2",
        ["?c1 owl:allValuesFrom ?y", "?c1 owl:onProperty ?p1", "?c2 owl:allValuesFrom ?y",
         "?c2 owl:onProperty ?p2", "?p1 rdfs:subPropertyOf ?p2"],
        ["?c2 rdfs:subClassOf ?c1"],
    ),  # fmt: skip
    rule("scm-int", ["?c owl:intersectionOf ?l", "member(?l, ?ci)"], ["?c rdfs:subClassOf ?ci"]),
    rule("scm-uni", ["?c owl:unionOf ?l", "member(?l, ?ci)"], ["?ci rdfs:subClassOf ?c"]),
)

OWLRL_RULES = CLASS_AXIOMS + PROPERTIES + CLASSES + EQUALITY + SCHEMA
"""Ordered so that when two rules make the same derivation from a stream triple (cax-eqc1 and cax-sco
after scm-eqc1), the specialiser keeps the first one: the general rules come first."""

LIST_RULE = EntailmentRule(
    "rdf-list",
    (),
    (),
    "LIST[?l, ?x1, …, ?xn] → member(?l, ?xi)",
    tuple((tuple(pattern(b) for b in body), pattern(head)) for body, head in LIST_HELPERS),
)
"""List membership, shared by the list rules (not a W3C rule: the tables write LIST[…])."""


def rules_by_id(rules: tuple[EntailmentRule, ...]) -> dict[str, EntailmentRule]:
    return {r.id: r for r in rules}
