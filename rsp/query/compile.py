"""The compile pipeline of a continuous query, one pass after the other: parse and validate
(:mod:`rsp.query.syntax.parser`, :mod:`rsp.query.syntax.validate`), translate to LARS rules
(:mod:`rsp.query.translation.translate`), add the entailment regime's background rules and the static
graphs (:mod:`rsp.background`, :func:`add_background`: the static graphs as the program's data, not a fact
rule per triple), and check the program (:func:`rsp.lars.check`:
safety, strata). The runtime (:mod:`rsp.runtime`) receives the :class:`CompiledQuery` and runs it;
nothing here runs a query.

>>> compiled = compile_text('''REGISTER QUERY Q AS SELECT ?s
...     FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s] WHERE { ?s a <http://ex.org/C> }''')
>>> compiled.query.name, compiled.translation.slot, len(compiled.warnings)
('Q', 1000, 0)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rsp.errors import Position, RspError
from rsp.lars import check
from rsp.lars.model import Atom, ExtAtom, Head, Program, Rule, Sig
from rsp.query.syntax import ast

Triple = tuple[str, str, str]
GraphLoader = Callable[[str, str], list[Triple]]
"""``load(iri, clause)``: the triples of the graph a query names with ``FROM <iri>`` (clause ``FROM``) or
``FROM NAMED <iri>`` (clause ``FROM NAMED``), blank nodes scoped to it."""


@dataclass(frozen=True)
class CompiledQuery:
    """A query ready to run: its AST, the validator's warnings, its translation, and the checked LARS
    program (query rules, background rules, static facts)."""

    query: ast.Query
    warnings: tuple[str, ...]
    translation: object
    """The translation (rsp.query.translation.translate.Translation): patterns' tables, windows, slots."""
    program: object
    """The checked LARS program (rsp.lars.CheckedProgram)."""
    hidden: frozenset[str]
    """Graph predicates only the rules read (the evaluator lets rules that feed nothing else sleep)."""
    static: tuple[Triple, ...]
    """The asserted static triples (ontologies, FROM graphs), for explanations."""
    background_rules: tuple[Rule, ...]
    """The regime's rules over the window graph ``g`` (rsp spark --partition-by checks them)."""
    static_closure: frozenset
    """The closed static graph the background rules work with."""


def compile_text(
    text: str,
    file: str = "<query>",
    name: str | None = None,
    *,
    static: Sequence[Triple] = (),
    entailment: str = "none",
    load_graph: GraphLoader | None = None,
) -> CompiledQuery:
    """Parse, validate and compile one query (a text with several: :func:`compile_all`)."""
    from rsp.query.syntax.parser import parse_and_validate

    query, warnings = parse_and_validate(text, file, name)
    return compile_query(query, warnings, static=static, entailment=entailment, load_graph=load_graph)


def compile_all(
    text: str,
    file: str = "<query>",
    name: str | None = None,
    *,
    static: Sequence[Triple] = (),
    entailment: str = "none",
    load_graph: GraphLoader | None = None,
) -> list[CompiledQuery]:
    """Every query of ``text`` (several REGISTER statements, or one bare query), compiled."""
    from rsp.query.syntax.parser import parse_all_and_validate

    return [
        compile_query(query, warnings, static=static, entailment=entailment, load_graph=load_graph)
        for query, warnings in parse_all_and_validate(text, file, name)
    ]


def compile_query(
    query: ast.Query,
    warnings: Sequence[str] = (),
    *,
    static: Sequence[Triple] = (),
    entailment: str = "none",
    load_graph: GraphLoader | None = None,
) -> CompiledQuery:
    """A validated query's translation to LARS with the background rules of ``entailment`` over the
    ``static`` triples and its FROM / FROM NAMED graphs (read by ``load_graph``), checked."""
    from rsp.query.answers.expr import compile_filter
    from rsp.query.syntax.text import expr_text
    from rsp.query.translation.conjunctive import merge_window_blocks
    from rsp.query.translation.translate import translate

    query = merge_window_blocks(query)
    translation = translate(query, compile_filter, expr_text)
    load = load_graph or _no_graphs(query.file)
    static = list(static)
    for graph in query.graphs:
        static.extend(load(graph, "FROM"))
    named = {iri: load(iri, "FROM NAMED") for iri in query.named_graphs}
    rules, facts, data, background_rules, closure = add_background(
        query, translation, entailment, static, named
    )
    program = check(Program(tuple(rules) + tuple(facts), (), query.file, data))
    # a graph's triples are read only by the rules, unless a property path reads the graph itself
    # (the answer comes from the patterns' tables): background rules that derive nothing a table
    # needs sleep (rsp/engine/relevance.py)
    graphs = {"g", *translation.graphs.values(), *translation.slot_graphs.values()}
    hidden = frozenset(graphs - {table.pred for table in translation.tables.values()})
    return CompiledQuery(
        query, tuple(warnings), translation, program, hidden, tuple(static), tuple(background_rules),
        frozenset(closure),
    )  # fmt: skip


def add_background(query: ast.Query, translation, entailment: str, static: list[Triple], named: dict):
    """The pass that adds the entailment regime: the query's rules with the background rules over each
    graph predicate (the window graph ``g``, GRAPH blocks, time slots) and the closed static graphs as
    data (:attr:`rsp.lars.model.Program.data`). Returns (rules, facts, data, the regime's rules over
    ``g``, the closure of the static graph)."""
    from rsp.background import Regime, background_program
    from rsp.query.translation.reflexive import observes_reflexive, static_reflexive, stream_rules
    from rsp.query.translation.translate import slot_rule

    regime = Regime(entailment)
    background = background_program(regime, static, pred="g")
    rules = list(translation.rules)
    facts: list[Rule] = list(background.facts)
    data: list[tuple[Sig, frozenset]] = []
    graph_preds = set(translation.graphs.values())
    closure = set(background.closure)
    background_rules = list(background.rules)
    if regime is Regime.RDFS and observes_reflexive(query):
        closure |= static_reflexive(closure)
        background_rules.extend(stream_rules("g"))
    for iri, pred in translation.named_graphs.items():  # static: their closure is computed once
        graph_preds.discard(pred)
        named_closure = set(background_program(regime, static + named[iri], pred="g").closure)
        if regime is Regime.RDFS and observes_reflexive(query):
            named_closure |= static_reflexive(named_closure)
        data.append((Sig(pred, 3), frozenset(named_closure)))
    for pred in sorted(graph_preds):
        rules.extend(_rename(r, {"g": pred}) for r in background_rules)
    for name, slot_pred in translation.slot_graphs.items():
        size = translation.windows[name][0].range // translation.slot - 1
        for rule in background_rules:
            copy = slot_rule(rule, "g", slot_pred, size)
            if copy is not None:
                rules.append(copy)
    if closure:  # one set of triples, held by every graph predicate a rule or a table reads
        rows = frozenset(closure)
        read = {t.pred for t in translation.tables.values()}  # property paths read a graph's rows
        read.update(lit.atom.pred for rule in rules for lit in rule.body if isinstance(lit, ExtAtom))
        holders = sorted(graph_preds) + sorted(translation.slot_graphs.values())
        # (a CQELS query whose patterns all stand in STREAM blocks never reads the default graph)
        data.extend((Sig(pred, 3), rows) for pred in holders if pred in read)
    return rules, facts, tuple(data), background_rules, closure


def _rename(rule: Rule, mapping: dict[str, str]) -> Rule:
    """The rule with its predicates renamed (background rules over ``g`` reused for other graphs)."""

    def atom(a: Atom) -> Atom:
        return Atom(mapping.get(a.pred, a.pred), a.args)

    body = []
    for literal in rule.body:
        if isinstance(literal, ExtAtom):
            literal = ExtAtom(atom(literal.atom), literal.op, literal.window, literal.time, literal.negated)
        body.append(literal)
    return Rule(Head(atom(rule.head.atom), rule.head.time), tuple(body), rule.origin)


def _no_graphs(file: str) -> GraphLoader:
    def load(iri: str, clause: str) -> list[Triple]:
        message = f"{clause} {iri}: no graph loader given (Engine.add_graph gives graphs)"
        raise RspError(message, Position(file))

    return load


_REMOTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def resolve_graph(iri: str, query_file: str, given: dict[str, str], clause: str = "FROM") -> Path:
    """The file of a FROM <g> / FROM NAMED <g> graph: the one given for the IRI (``--graph IRI=FILE``,
    :meth:`rsp.runtime.Engine.add_graph`), else a file: IRI, an absolute path or a path relative to the
    query. A remote IRI (``http://…``) without a file given is refused: rsp never fetches IRIs."""
    text = iri[1:-1] if iri.startswith("<") else iri
    if text in given:
        return Path(given[text])
    if _REMOTE.match(text) and not text.startswith("file://"):
        raise RspError(
            f"{clause} <{text}>: rsp never fetches IRIs; give the graph as a local file with "
            f'--graph {text}=FILE (Python: engine.add_graph("{text}", path))',
            Position(query_file),
        )
    if text.startswith("file://"):
        text = text[len("file://") :]
    path = Path(text)
    if not path.is_absolute() and query_file not in ("<query>", "<string>"):
        path = Path(query_file).parent / path
    return path
