"""Background knowledge for a stream: the static closure, computed once by running the entailment rules
through the rsp engine, and the entailment rules specialised to that closure for the streaming part.

Specialisation splits each rule body into its *schema* part (TBox patterns: the predicates of
:data:`~rsp.background.vocab.SCHEMA_PROPERTIES`, ``rdf:type`` with a class of
:data:`~rsp.background.vocab.SCHEMA_TYPES`, list helpers) and its *data* part. The schema part is
evaluated once over the closure into a table, and the rule becomes ``head :- data, table(shared vars)``
— cax-sco turns into ``g(X,rdf:type,C2) :- g(X,rdf:type,C1), g_cax_sco(C1,C2).`` with ``g_cax_sco``
the closed subclass table. A table of at most :data:`INLINE_LIMIT` rows is inlined (one rule with
constants per row instead of a join). Rules without a data part (scm-*, cls-oo, rdfs5, rdfs11) are
fully answered by the closure and do not run on streams; rules without a schema part (eq-*,
cls-nothing2) stay as they are. The list-quantified rules cls-int1, prp-spo2 and prp-key are
unrolled: one rule per intersection, chain or key of the ontology. A rule instance that an earlier
rule already makes (cax-eqc1 after scm-eqc1 made the same subclass pair for cax-sco; prp-eqp1/2
against prp-spo1; cls-int2, cls-uni against cax-sco) is dropped, so each stream triple pays for each
conclusion once.

Schema triples are read from the static closure only: TBox triples arriving on a stream (or entailed
from stream triples, e.g. owl:sameAs between classes) do not change the specialised rules.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rsp.background.rules import (
    FALSE,
    LIST_RULE,
    ONE,
    OWLRL_RULES,
    RDFS_RULES,
    TRIPLE,
    ZERO,
    EntailmentRule,
    body_literal,
    local_name,
    rename,
)
from rsp.background.vocab import (
    CHAIN,
    HAS_KEY,
    INTERSECTION_OF,
    PREFIXES,
    RDF_FIRST,
    RDF_NIL,
    RDF_REST,
    RDF_TYPE,
    SAME_AS,
    SCHEMA_PROPERTIES,
    SCHEMA_TYPES,
    THING,
    is_noise,
)
from rsp.lars.model import Atom, Comparison, ExtAtom, Head, Origin, Program, Rule, Var

Triple = tuple[str, str, str]

INLINE_LIMIT = 16
"""A schema table with at most this many rows is inlined (one rule per row, constants instead of a join).
Measured on cax-sco, 200 type triples per time point: inlined rules are ~1.5x faster up to ~10 rows, even
at ~36, and 2.3x slower at 465 rows (each rule scans the delta, the table is one hash probe)."""

_DATA_HELPERS = frozenset({"int_all", "chain", "key_agree"})


class Regime(enum.Enum):
    """The entailment regime of the background knowledge."""

    NONE = "none"
    RDFS = "rdfs"
    OWLRL = "owlrl"


def regime_rules(regime: Regime) -> tuple[EntailmentRule, ...]:
    """The rule templates of a regime, in specialisation priority order."""
    if regime is Regime.RDFS:
        return RDFS_RULES
    if regime is Regime.OWLRL:
        return (*OWLRL_RULES, LIST_RULE)
    return ()


def helper_facts(regime: Regime, pred: str) -> list[Rule]:
    """The constant helper facts (``one``/``zero``: the literals cardinality 1 and 0 are written with)."""
    if regime is not Regime.OWLRL:
        return []
    origin = Origin(source="cardinality")
    return [Rule(Head(Atom(local_name(pred, "one"), (v,))), (), origin) for v in ONE] + [
        Rule(Head(Atom(local_name(pred, "zero"), (v,))), (), origin) for v in ZERO
    ]


def is_schema(lit: Atom) -> bool:
    """Is a template body atom answered by the static closure alone (a TBox pattern or list helper)?"""
    if lit.pred != TRIPLE:
        return lit.pred not in _DATA_HELPERS
    _s, p, o = lit.args
    if isinstance(p, str) and p in SCHEMA_PROPERTIES:
        return True
    return p == RDF_TYPE and isinstance(o, str) and o in SCHEMA_TYPES


def _vars(lits: Iterable) -> set[str]:
    names: set[str] = set()
    for lit in lits:
        names |= lit.variables()
    return names


@dataclass(frozen=True)
class Split:
    """A rule body cut into its schema part, its data part and the variables the two share with the head."""

    schema: tuple
    data: tuple
    shared: tuple[str, ...]


def split(rule: EntailmentRule) -> Split:
    schema_atoms = [b for b in rule.body if isinstance(b, Atom) and is_schema(b)]
    schema_vars = _vars(schema_atoms)
    schema, data = list(schema_atoms), []
    for b in rule.body:
        if isinstance(b, Comparison):
            (schema if schema_atoms and b.variables() <= schema_vars else data).append(b)
        elif not is_schema(b):
            data.append(b)
    outside = _vars(data) | _vars(rule.heads)
    shared = tuple(sorted(schema_vars & outside))
    return Split(tuple(schema), tuple(data), shared)


def table_name(pred: str, rule_id: str) -> str:
    return f"{pred}_{rule_id.replace('-', '_')}"


# -- running rules through the engine --------------------------------------------------------------


def _facts(pred: str, rows: Iterable[tuple], source: str) -> list[Rule]:
    origin = Origin(source=source)
    return [Rule(Head(Atom(pred, tuple(row))), (), origin) for row in rows]


def _run(rules: list[Rule]) -> dict[str, set[tuple]]:
    """Evaluate a program at one time point; the facts of every predicate (background ones included)."""
    from rsp.engine import Engine
    from rsp.lars import check

    engine = Engine(check(Program(tuple(rules), source="<background>")))
    engine.step(0)
    tables: dict[str, set[tuple]] = {sig[0]: set(args) for sig, args in engine.background.items()}
    for sig, facts in engine.facts.items():
        tables.setdefault(sig[0], set()).update(facts.now)
    return tables


def closure_program(regime: Regime, asserted: Iterable[Triple], pred: str = "g") -> list[Rule]:
    """The static triples as facts of ``pred`` with the regime's rules (W3C ids as origins): the
    program whose answer at one time point is the static closure (and explains each of its triples)."""
    program = _facts(pred, asserted, "static") + helper_facts(regime, pred)
    for template in regime_rules(regime):
        program += template.lars(pred)
    return program


def static_closure(
    regime: Regime, triples: Iterable[Triple], pred: str = "g"
) -> tuple[frozenset[Triple], frozenset[tuple[str, str, str]]]:
    """The closure of ``triples`` under the regime's rules (computed by the rsp engine at one time
    point), without noise (:func:`~rsp.background.vocab.is_noise`) except asserted triples, and the
    inconsistencies found: (rule id, witness, witness)."""
    return _static_closure(regime, frozenset(map(tuple, triples)), pred)


@functools.lru_cache(maxsize=64)
def _static_closure(
    regime: Regime, triples: frozenset[Triple], pred: str
) -> tuple[frozenset[Triple], frozenset[tuple[str, str, str]]]:
    """:func:`static_closure`, computed once per regime, set of triples and predicate (each engine that
    loads an ontology closes it: the answer is the same sets)."""
    asserted = set(triples)
    if regime is Regime.NONE:
        return frozenset(asserted), frozenset()
    tables = _run(closure_program(regime, asserted, pred))
    derived = tables.get(pred, set())
    closure = asserted | {t for t in derived if not is_noise(t)}
    clashes = frozenset(
        (rid.strip('"'), a, b) for rid, a, b in tables.get(local_name(pred, FALSE), ())
    )
    return frozenset(closure), clashes


# -- specialisation --------------------------------------------------------------------------------


def _subst(term, binding: dict):
    return binding.get(term.name, term) if isinstance(term, Var) else term


def _instantiate(lit, binding: dict):
    if isinstance(lit, Atom):
        return Atom(lit.pred, tuple(_subst(a, binding) for a in lit.args))
    return Comparison(lit.op, _subst(lit.left, binding), _subst(lit.right, binding))


def _canonical(heads: Iterable[Atom], body: Iterable) -> str:
    """The text of a rule instance with its variables renamed by first appearance (to spot duplicates)."""
    names: dict[str, str] = {}

    def canon(term):
        if isinstance(term, Var):
            return names.setdefault(term.name, f"V{len(names)}")
        return term

    parts = [f"{a.pred}({','.join(map(str, map(canon, a.args)))})" for a in heads]
    parts.append(":-")
    for lit in body:
        if isinstance(lit, Atom):
            parts.append(f"{lit.pred}({','.join(map(str, map(canon, lit.args)))})")
        else:
            parts.append(f"{canon(lit.left)}{lit.op}{canon(lit.right)}")
    return " ".join(parts)


class _Specialiser:
    def __init__(self, pred: str) -> None:
        self.pred = pred
        self.rules: list[Rule] = []
        self.facts: list[Rule] = []
        self.seen: set[str] = set()

    def add(self, rule_id: str, heads: tuple, data: tuple, shared: tuple[str, ...], rows: list) -> None:
        """Emit ``heads :- data, table(shared)`` for the table rows not already made by earlier rules."""
        pred, origin = self.pred, Origin(source=rule_id)
        kept = []
        for row in rows:
            binding = dict(zip(shared, row, strict=True))
            hs = [_instantiate(h, binding) for h in heads]
            body = [_instantiate(b, binding) for b in data]
            keys = [_canonical([h], body) for h in hs]
            if all(k in self.seen for k in keys):
                continue
            self.seen.update(keys)
            kept.append((row, hs, body))
        if not kept:
            return
        if len(kept) <= INLINE_LIMIT or not shared:
            for _row, hs, body in kept:
                instance = tuple(body_literal(b, pred) for b in body if not _trivial(b))
                self.rules += [Rule(Head(rename(h, pred)), instance, origin) for h in hs]
            return
        table = table_name(pred, rule_id)
        self.facts += _facts(table, [row for row, _hs, _body in kept], rule_id)
        body = (*(body_literal(b, pred) for b in data), ExtAtom(Atom(table, tuple(Var(v) for v in shared))))
        self.rules += [Rule(Head(rename(h, pred)), body, origin) for h in heads]


def _trivial(lit) -> bool:
    return isinstance(lit, Comparison) and not lit.variables()


def _lists(closure: frozenset[Triple]) -> dict[str, list[str]]:
    """Every well-formed rdf:list of the closure: head node → elements."""
    first = {s: o for s, p, o in closure if p == RDF_FIRST}
    rest = {s: o for s, p, o in closure if p == RDF_REST}
    lists: dict[str, list[str]] = {}
    for head in first:
        items, node, seen = [], head, set()
        while node != RDF_NIL:
            if node in seen or node not in first or node not in rest:
                break
            seen.add(node)
            items.append(first[node])
            node = rest[node]
        else:
            lists[head] = items
    return lists


def _unrolled(rule_id: str, closure: frozenset[Triple]) -> list[tuple[tuple, tuple]]:
    """cls-int1, prp-spo2, prp-key: one (heads, body) instance per intersection, chain or key."""
    lists = _lists(closure)
    out = []
    if rule_id == "cls-int1":
        for c, p, lst in sorted(closure):
            members = [m for m in lists.get(lst, ()) if m != THING] if p == INTERSECTION_OF else []
            if members:
                body = tuple(Atom(TRIPLE, (Var("U"), RDF_TYPE, m)) for m in members)
                out.append(((Atom(TRIPLE, (Var("U"), RDF_TYPE, c)),), body))
    elif rule_id == "prp-spo2":
        for prop, p, lst in sorted(closure):
            chain = lists.get(lst, ()) if p == CHAIN else ()
            if chain:
                body = tuple(Atom(TRIPLE, (Var(f"U{i}"), q, Var(f"U{i + 1}"))) for i, q in enumerate(chain))
                out.append(((Atom(TRIPLE, (Var("U0"), prop, Var(f"U{len(chain)}"))),), body))
    elif rule_id == "prp-key":
        for c, p, lst in sorted(closure):
            keys = lists.get(lst, ()) if p == HAS_KEY else ()
            if keys:
                body: list = [Atom(TRIPLE, (Var("X"), RDF_TYPE, c)), Atom(TRIPLE, (Var("Y"), RDF_TYPE, c))]
                for i, q in enumerate(keys):
                    z = Var(f"Z{i}")
                    body += [Atom(TRIPLE, (Var("X"), q, z)), Atom(TRIPLE, (Var("Y"), q, z))]
                body.append(Comparison("!=", Var("X"), Var("Y")))
                out.append(((Atom(TRIPLE, (Var("X"), SAME_AS, Var("Y"))),), tuple(body)))
    return out


def specialise(
    regime: Regime, closure: frozenset[Triple], pred: str = "g"
) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    """The regime's rules specialised to a closed TBox: (stream rules over ``pred``, table facts)."""
    templates = [t for t in regime_rules(regime) if t.heads]
    splits = {t.id: split(t) for t in templates}
    table_rules = _facts(pred, closure, "static") + helper_facts(regime, pred)
    if regime is Regime.OWLRL:
        table_rules += LIST_RULE.lars(pred)
    for t in templates:
        s = splits[t.id]
        if s.schema and s.data and not t.unrolled:
            head = Atom(table_name(pred, t.id), tuple(Var(v) for v in s.shared))
            body = tuple(body_literal(b, pred) for b in s.schema)
            table_rules.append(Rule(Head(head), body, Origin(source=t.id)))
    tables = _run(table_rules)
    out = _Specialiser(pred)
    for t in templates:
        s = splits[t.id]
        if t.unrolled:
            for heads, body in _unrolled(t.id, closure):
                out.add(t.id, heads, body, (), [()])
        elif not s.data:
            continue  # answered by the static closure
        elif not s.schema:
            out.add(t.id, t.heads, s.data, (), [()])
        else:
            rows = sorted(tables.get(table_name(pred, t.id), ()))
            out.add(t.id, t.heads, s.data, s.shared, rows)
    return tuple(out.rules), tuple(out.facts)


# -- the public result -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Background:
    """The background knowledge of a stream program under one regime, over triple predicate ``pred``."""

    regime: Regime
    pred: str
    closure: frozenset[Triple]
    """The closed static triples (asserted ones plus non-noise entailments)."""
    rules: tuple[Rule, ...]
    """The entailment rules specialised to the closed TBox, each with ``Origin(source=<W3C id>)``."""
    facts: tuple[Rule, ...]
    """The helper tables of the specialised rules (``g_cax_sco(C, D).`` …)."""
    inconsistencies: frozenset[tuple[str, str, str]]
    """Clashes in the static closure: (rule id, witness, witness)."""

    @property
    def false_pred(self) -> str:
        """The predicate of stream inconsistencies: ``<pred>_false("<rule id>", a, b)``."""
        return local_name(self.pred, FALSE)

    def closure_facts(self) -> tuple[Rule, ...]:
        """The static closure as background facts ``g(s, p, o).``"""
        return tuple(_facts(self.pred, sorted(self.closure), "static closure"))

    def program(self, rules: Iterable[Rule] = ()) -> Program:
        """A program holding the closure, the tables, the specialised rules and ``rules``."""
        return Program((*self.closure_facts(), *self.facts, *self.rules, *rules), source="<background>")

    def render(self) -> str:
        """The specialised rules with their W3C ids and the size of each table, for ``rsp explain``."""
        lines = [f"% background: {self.regime.value}, {len(self.closure)} static triples"]
        sizes: dict[str, int] = {}
        for fact in self.facts:
            sizes[fact.head.atom.pred] = sizes.get(fact.head.atom.pred, 0) + 1
        for name, size in sizes.items():
            lines.append(f"% table {name}: {size} rows")
        texts = [_abbreviate(str(r)) for r in self.rules]
        width = max(map(len, texts), default=0)
        lines += [f"{text:<{width}}  % {r.origin}" for text, r in zip(texts, self.rules, strict=True)]
        return "\n".join(lines)


_NAMESPACES = re.compile("<(" + "|".join(re.escape(ns) for ns in PREFIXES.values()) + r")([A-Za-z_][\w-]*)>")
_PREFIX_OF = {ns: prefix for prefix, ns in PREFIXES.items()}


def _abbreviate(text: str) -> str:
    """Write the rdf:, rdfs:, owl: and xsd: IRIs of a rule as prefixed names (for people)."""
    return _NAMESPACES.sub(lambda m: f"{_PREFIX_OF[m.group(1)]}:{m.group(2)}", text)


def background_program(regime: Regime, static_triples: Iterable[Triple], pred: str = "g") -> Background:
    """Close the static triples once and specialise the regime's rules to them.

    >>> sco = "<http://www.w3.org/2000/01/rdf-schema#subClassOf>"
    >>> bg = background_program(Regime.RDFS, [("<A>", sco, "<B>"), ("<B>", sco, "<C>")])
    >>> ("<A>", sco, "<C>") in bg.closure
    True
    >>> print(bg.render())  # no domain, range or subproperty axioms: rdfs9 is the only stream rule
    % background: rdfs, 3 static triples
    g(X,rdf:type,<B>) :- g(X,rdf:type,<A>).  % rdfs9
    g(X,rdf:type,<C>) :- g(X,rdf:type,<A>).  % rdfs9
    g(X,rdf:type,<C>) :- g(X,rdf:type,<B>).  % rdfs9
    """
    closure, clashes = static_closure(regime, static_triples, pred)
    rules, facts = specialise(regime, closure, pred) if regime is not Regime.NONE else ((), ())
    return Background(regime, pred, closure, rules, facts, clashes)
