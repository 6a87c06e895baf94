"""Whether a continuous query can run as one engine per value of a variable (``rsp spark --partition-by``).

A query is partitionable by ``?k`` when every stream triple can be given to exactly one partition and
no answer needs triples of two partitions: then running one engine per value of ``?k`` over the
triples with that value, and taking the union of their answers at each instant, gives exactly the
answers of one engine over the whole stream. The compiler checks, and refuses with the reason:

* every triple pattern (in every group, OPTIONAL, UNION, MINUS, EXISTS and window block) has a constant
  predicate and ``?k`` as its subject or object, always in the same place for a given predicate — so a
  stream triple's partition is the term in that place (the *key*), and triples of other predicates can
  match no pattern; a property path counts as its one-step links when it is an alternative of IRIs and
  inverse IRIs (``?k ex:p|^ex:q ?o``), and is refused otherwise: ``*``, ``+``, ``?``, a negated set
  and a sequence join or equate resources that may lie in different partitions (or match any predicate);
* the answers of different partitions are disjoint and need no combining: a SELECT whose projection
  keeps ``?k`` (``SELECT *`` does; with aggregates, ?k is then grouped by), no ORDER BY, LIMIT or OFFSET, no
  sub-SELECT, no count window ``[TRIPLES n]`` (it counts triples of every partition);
* with entailment, every background rule (RDFS or OWL 2 RL, specialised to the ontology) that derives
  a triple the query reads takes it from triples with the same key: in ``Room(x) ← Office(x)`` both are
  keyed by ``x``, so ``rdf:type ex:Office`` triples are keyed by their subject too; a range axiom that
  types the object of a subject-keyed triple with a class the query reads, a transitive property the
  query reads, or owl:sameAs (which copies triples between any two resources) crosses partitions and is
  refused with the rule's W3C id. Triples are keyed by predicate, and ``rdf:type`` triples by class, so
  axioms about classes the query never reads do not matter.

Static data (the ontology's own triples and FROM graphs, closed under the entailment regime) must not
hold a keyed triple (checked when the data is known, :meth:`KeyPlan.check_static`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from rsp.background.vocab import RDF_TYPE
from rsp.errors import Position, RspError
from rsp.lars.model import Atom, ExtAtom, Rule, Var
from rsp.query.syntax import ast

Signature = tuple[str, str | None]
"""What decides a triple's key: its predicate and, for an ``rdf:type`` triple, its class (None: any)."""


@dataclass(frozen=True)
class KeyPlan:
    """How stream triples are keyed: ``positions[predicate]`` is 0 (the subject is the key) or 2 (the
    object is), ``classes[c]`` the same for ``rdf:type c`` triples; triples of any other predicate or
    class match no pattern and derive nothing the query reads, and are left out."""

    var: str
    positions: tuple[tuple[str, int], ...]
    classes: tuple[tuple[str, int], ...] = ()

    @property
    def by_subject(self) -> list[str]:
        return [p for p, place in self.positions if place == 0]

    @property
    def by_object(self) -> list[str]:
        return [p for p, place in self.positions if place == 2]

    def place(self, p: str, o: str) -> int | None:
        """Where the key of a ``p`` triple with object ``o`` is (None: the triple is not keyed)."""
        if p == RDF_TYPE:
            for cls, place in self.classes:
                if cls == o:
                    return place
        for predicate, place in self.positions:
            if predicate == p:
                return place
        return None

    def key(self, s: str, p: str, o: str) -> str | None:
        """The partition of a stream triple (None: no pattern can match it).

        >>> KeyPlan("v", (("<http://ex.org/at>", 0),)).key("<http://ex.org/bus1>", "<http://ex.org/at>", "x")
        '<http://ex.org/bus1>'
        """
        place = self.place(p, o)
        return None if place is None else s if place == 0 else o

    def check_static(self, triples: Iterable[tuple[str, str, str]], source: str) -> None:
        """Refuse static data (ontology, FROM graphs, what entailment derives from them) that holds a
        keyed triple: it would belong to no single partition."""
        for s, p, o in sorted(triples):  # sorted: the same triple is named on every run
            if self.place(p, o) is not None:
                what = f"{p} {o}" if p == RDF_TYPE else p
                raise RspError(
                    f"--partition-by ?{self.var}: the static data ({source}) has {what} triples "
                    f"({s} {p} {o}); {what} triples are keyed by ?{self.var}, so they belong to no single "
                    "partition"
                )


def _refuse(query: ast.Query, var: str, reason: str, pos: Position | None = None) -> RspError:
    return RspError(f"--partition-by ?{var}: {reason}", pos or query.pos or Position(query.file))


def _patterns(group: ast.Group) -> Iterator[ast.TriplePattern | ast.PathPattern | ast.SubSelect]:
    for element in group.elements:
        match element:
            case ast.BGP(triples=triples):
                yield from triples
            case ast.PathPattern():
                yield element
            case ast.Optional(group=inner) | ast.Minus(group=inner) | ast.WindowBlock(group=inner):
                yield from _patterns(inner)
            case ast.Union(alternatives=alternatives):
                for alternative in alternatives:
                    yield from _patterns(alternative)
            case ast.Filter(expr=expr) | ast.Bind(expr=expr):
                for exists in _exists(expr):
                    yield from _patterns(exists.pattern)
            case ast.SubSelect():
                yield element


def _exists(expr: ast.Expr) -> Iterator[ast.Exists]:
    match expr:
        case ast.Exists():
            yield expr
        case ast.BinaryOp(left=left, right=right):
            yield from _exists(left)
            yield from _exists(right)
        case ast.UnaryOp(arg=arg):
            yield from _exists(arg)
        case ast.FunctionCall(args=args):
            for arg in args:
                yield from _exists(arg)
        case ast.InList(expr=inner, options=options):
            yield from _exists(inner)
            for option in options:
                yield from _exists(option)


def _links(path: ast.Path) -> list[tuple[str, bool]] | None:
    """The one-step links (IRI, inverted) of a path that is an alternative of IRIs and inverse IRIs;
    None for any other path (repetition, negated set, sequence)."""
    match path:
        case str():
            return [(path, False)]
        case ast.PathInverse(path=str() as iri):
            return [(iri, True)]
        case ast.PathInverse(path=ast.PathInverse(path=inner)):
            return _links(inner)
        case ast.PathAlternative(parts=parts):
            links = [_links(part) for part in parts]
            return None if None in links else [link for part in links for link in part]
    return None


def _path_triples(query: ast.Query, var: str, pattern: ast.PathPattern) -> list[ast.TriplePattern]:
    """A path pattern as the triple patterns of its links, or the refusal saying why it cannot be keyed."""
    from rsp.query.syntax.text import path_text

    links = _links(pattern.path)
    if links is None:
        reason = (
            f"the property path {path_text(pattern.path)} may join or equate resources of different "
            f"partitions (only alternatives of IRIs and ^IRIs are keyed: write the links as triple "
            f"patterns on ?{var}, or run without --partition-by)"
        )
        raise _refuse(query, var, reason, pattern.pos)
    s, o, pos = pattern.subject, pattern.object, pattern.pos
    return [ast.TriplePattern(*((o, iri, s) if back else (s, iri, o)), pos) for iri, back in links]


def partition_plan(query: ast.Query, variable: str, background: Sequence[Rule] = ()) -> KeyPlan:
    """The keying of ``query``'s stream triples by ``variable`` (``?k`` or ``k``); raises
    :class:`rsp.errors.RspError` with the reason when the query is not partitionable by it.
    ``background`` are the entailment regime's rules specialised to the static data (none without
    entailment), as :class:`rsp.runtime.QueryHandle` keeps them."""
    var = variable.removeprefix("?").removeprefix("$")
    if not var or not var.replace("_", "a").isalnum():
        raise RspError(f"--partition-by {variable}: write a variable of the query, e.g. ?vehicle")
    form = query.form
    if not isinstance(form, ast.Select):
        kind = "CONSTRUCT" if isinstance(form, ast.Construct) else "ASK"
        reason = f"{kind} answers of several partitions would have to be combined; use SELECT"
        raise _refuse(query, var, reason)
    for window in query.windows:
        if window.triples is not None:
            reason = "a [TRIPLES n] window counts the triples of every partition"
            raise _refuse(query, var, reason, window.pos)
    modifiers = form.modifiers
    if modifiers.order_by or modifiers.limit is not None or modifiers.offset:
        raise _refuse(query, var, "ORDER BY, LIMIT and OFFSET rank answers across partitions", form.pos)
    if form.projection is not None and not any(p.var.name == var for p in form.projection):
        raise _refuse(
            query, var, f"the answers must keep ?{var} (SELECT ?{var} …) so that those of different "
            "partitions never coincide", form.pos,
        )  # fmt: skip
    # (a projection that keeps ?k also groups by it: the query checks refuse ungrouped projected variables)
    keyed: dict[Signature, int] = {}
    found = False
    patterns: list[ast.TriplePattern] = []
    for pattern in _patterns(form.where):
        if isinstance(pattern, ast.SubSelect):
            raise _refuse(query, var, "a sub-SELECT may combine answers across partitions", pattern.pos)
        if isinstance(pattern, ast.PathPattern):
            patterns.extend(_path_triples(query, var, pattern))
        else:
            patterns.append(pattern)
    for pattern in patterns:
        found = True
        where = pattern.pos
        if isinstance(pattern.predicate, ast.Var):
            reason = f"the pattern with predicate ?{pattern.predicate.name} cannot be keyed"
            raise _refuse(query, var, reason, where)
        if pattern.subject == ast.Var(var):
            place = 0
        elif pattern.object == ast.Var(var):
            place = 2
        else:
            raise _refuse(query, var, f"the pattern on {pattern.predicate} does not use ?{var}", where)
        obj = pattern.object if isinstance(pattern.object, str) else None
        signature = (pattern.predicate, obj if pattern.predicate == RDF_TYPE else None)
        if _assign(keyed, signature, place) is None:
            raise _refuse(
                query, var, f"?{var} is the subject of one {_text(signature)} pattern and the object of "
                "another", where,
            )  # fmt: skip
    if not found:
        raise _refuse(query, var, "the query has no triple pattern")
    _through_rules(query, var, keyed, background)
    positions = sorted((p, place) for (p, cls), place in keyed.items() if cls is None)
    classes = sorted((cls, place) for (p, cls), place in keyed.items() if cls is not None)
    return KeyPlan(var, tuple(positions), tuple(classes))


def _text(signature: Signature) -> str:
    predicate, cls = signature
    return predicate if cls is None else f"{predicate} {cls}"


def _overlap(a: Signature, b: Signature) -> bool:
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1])


def _assign(keyed: dict[Signature, int], signature: Signature, place: int) -> bool | None:
    """Key ``signature`` at ``place``: True if new, False if known, None if it clashes with a key of an
    overlapping signature at another place."""
    for other, other_place in keyed.items():
        if _overlap(signature, other) and other_place != place:
            return None
    if signature in keyed:
        return False
    keyed[signature] = place
    return True


def _atom_signature(atom: Atom) -> Signature | None:
    """The signature of a triple atom ``g(S, P, O)`` (None: a variable predicate, any triple)."""
    _s, p, o = atom.args
    if isinstance(p, Var):
        return None
    return (p, o if p == RDF_TYPE and not isinstance(o, Var) else None)


def _through_rules(query: ast.Query, var: str, keyed: dict[Signature, int], rules: Sequence[Rule]) -> None:
    """Key the premises of every rule that derives a keyed triple by the same resource as the triple
    (so each partition derives what it needs from its own triples), to a fixpoint; refuse a rule whose
    premise cannot carry that key, or that would key a signature in two places."""
    triple_rules = [r for r in rules if r.head.atom.pred == "g" and len(r.head.atom.args) == 3]
    changed = True
    while changed:
        changed = False
        for rule in triple_rules:
            head, name = rule.head.atom, rule.origin.source or "a background rule"
            if name in _WHAT:
                name = f"{name} ({_WHAT[name]})"
            derives = _atom_signature(head)  # None: a variable predicate, any triple
            for signature, place in list(keyed.items()):
                if derives is not None and not _overlap(derives, signature):
                    continue
                key = head.args[place]
                derived = f"{name} derives {_text(signature)} triples (keyed by their {_ROLE[place]})"
                if not isinstance(key, Var):
                    raise _refuse(query, var, f"{derived} about the constant {key}")
                for literal in rule.body:
                    atom = literal.atom if isinstance(literal, ExtAtom) else literal
                    if not isinstance(atom, Atom) or atom.pred != "g" or len(atom.args) != 3:
                        continue  # comparisons, tables of the ontology
                    premise = _atom_signature(atom)
                    if premise is None:
                        raise _refuse(query, var, f"{derived} from triples of any predicate")
                    places = [i for i in (0, 2) if atom.args[i] == key]
                    if not places:
                        reason = f"{derived} from {_text(premise)} triples that do not carry that key"
                        raise _refuse(query, var, reason)
                    assigned = _assign(keyed, premise, places[0])
                    if assigned is None:
                        raise _refuse(
                            query, var, f"{derived} from {_text(premise)} triples, which would then be keyed "
                            f"by their {_ROLE[places[0]]} and also by their {_ROLE[2 - places[0]]}",
                        )  # fmt: skip
                    changed = changed or assigned


_ROLE = {0: "subject", 2: "object"}
_WHAT = {
    "rdfs2": "a domain axiom",
    "rdfs3": "a range axiom",
    "prp-dom": "a domain axiom",
    "prp-rng": "a range axiom",
    "prp-trp": "a transitive property",
    "prp-inv1": "an inverse property",
    "prp-inv2": "an inverse property",
    "prp-symp": "a symmetric property",
    "eq-rep-s": "owl:sameAs",
    "eq-rep-p": "owl:sameAs",
    "eq-rep-o": "owl:sameAs",
}
"""What the rules whose refusal needs a word of explanation stand for."""
