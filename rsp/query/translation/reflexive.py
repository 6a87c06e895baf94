"""Reflexive RDFS triples on demand: ``c rdfs:subClassOf c`` (rdfs10) and ``p rdfs:subPropertyOf p``
(rdfs6) hold for every class and property, so rsp produces them only for queries whose patterns can
match them (a variable predicate, or rdfs:subClassOf / rdfs:subPropertyOf), where leaving them out
would change an answer."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rsp.background.vocab import RDF_TYPE, SUBCLASS, SUBPROPERTY, VOCABULARY_NAMESPACES, expand
from rsp.lars.model import Atom, ExtAtom, Guard, Head, Origin, Rule, Var
from rsp.query.syntax import ast

DOMAIN = expand("rdfs:domain")
RANGE = expand("rdfs:range")


def triple_patterns(group: ast.Group) -> Iterator[ast.TriplePattern]:
    """Every triple pattern of a group, nested groups, EXISTS and sub-SELECTs included."""
    from rsp.query.syntax.validate import exists_groups

    for element in group.elements:
        if isinstance(element, ast.BGP):
            yield from element.triples
        elif isinstance(element, (ast.Optional, ast.Minus, ast.WindowBlock)):
            yield from triple_patterns(element.group)
        elif isinstance(element, ast.Union):
            for alternative in element.alternatives:
                yield from triple_patterns(alternative)
        elif isinstance(element, ast.SubSelect):
            yield from triple_patterns(element.select.where)
        elif isinstance(element, (ast.Filter, ast.Bind)):
            for inner in exists_groups(element.expr):
                yield from triple_patterns(inner)


def observes_reflexive(query: ast.Query) -> bool:
    """Whether some pattern of the query can match a reflexive subclass or subproperty triple (a
    property path: through one of its IRIs, a negated property set, or a zero-length step, which
    matches every node of the graph)."""
    return any(
        isinstance(t.predicate, ast.Var) or t.predicate in (SUBCLASS, SUBPROPERTY)
        for t in triple_patterns(query.form.where)
    ) or any(_path_observes(p.path) for p in path_patterns(query.form.where))


def path_patterns(group: ast.Group) -> Iterator[ast.PathPattern]:
    """Every property-path pattern of a group, nested groups, EXISTS and sub-SELECTs included."""
    from rsp.query.syntax.validate import exists_groups

    for element in group.elements:
        if isinstance(element, ast.PathPattern):
            yield element
        elif isinstance(element, (ast.Optional, ast.Minus, ast.WindowBlock)):
            yield from path_patterns(element.group)
        elif isinstance(element, ast.Union):
            for alternative in element.alternatives:
                yield from path_patterns(alternative)
        elif isinstance(element, ast.SubSelect):
            yield from path_patterns(element.select.where)
        elif isinstance(element, (ast.Filter, ast.Bind)):
            for inner in exists_groups(element.expr):
                yield from path_patterns(inner)


def _path_observes(path: ast.Path) -> bool:
    match path:
        case str():
            return path in (SUBCLASS, SUBPROPERTY)
        case ast.PathNegated():
            return True
        case ast.PathRepeat(path=inner, mod=mod):
            return mod in "*?" or _path_observes(inner)
        case ast.PathInverse(path=inner):
            return _path_observes(inner)
        case ast.PathSequence(parts=parts) | ast.PathAlternative(parts=parts):
            return any(_path_observes(p) for p in parts)
    return False


def _user_term(term: str) -> bool:
    return term.startswith("<") and not term.startswith(VOCABULARY_NAMESPACES)


def static_reflexive(closure: Iterable[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """rdfs10 and rdfs6 over the static closure: the classes and properties it mentions."""
    classes: set[str] = set()
    properties: set[str] = set()
    for s, p, o in closure:
        properties.add(p)
        if p == RDF_TYPE:
            classes.add(o)
        elif p == SUBCLASS:
            classes.update((s, o))
        elif p == SUBPROPERTY:
            properties.update((s, o))
        elif p in (DOMAIN, RANGE):
            classes.add(o)
            properties.add(s)
    out = {(c, SUBCLASS, c) for c in classes if _user_term(c)}
    out.update((p, SUBPROPERTY, p) for p in properties if _user_term(p))
    return out


def stream_rules(pred: str) -> list[Rule]:
    """rdfs10 and rdfs6 for triples that arrive on streams (only for user classes and properties)."""
    C, P, X, Y = Var("C"), Var("P"), Var("X"), Var("Y")
    user = Guard(_user_term, (C,), "user class")
    user_property = Guard(_user_term, (P,), "user property")
    return [
        Rule(
            Head(Atom(pred, (C, SUBCLASS, C))),
            (ExtAtom(Atom(pred, (X, RDF_TYPE, C))), user),
            Origin(source="rdfs10"),
        ),
        Rule(
            Head(Atom(pred, (P, SUBPROPERTY, P))),
            (ExtAtom(Atom(pred, (X, P, Y))), user_property),
            Origin(source="rdfs6"),
        ),
    ]
