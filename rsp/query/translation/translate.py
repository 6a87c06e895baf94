"""Translation of a query AST into a LARS program over triple predicates.

Time: the engine's time points are *slots* of ``slot`` ms, the gcd of every RANGE, STEP and COMPUTE EVERY
of the query, so an element at τ ms lies at time point ⌊τ/slot⌋. The instant t (a multiple of the
evaluation step) is evaluated at time point t/slot − 1, where a window ``[n] <>`` with
n = RANGE/slot − 1 covers exactly the slots of [t − RANGE, t): the RSP-QL window of the instant.

Predicates:
- ``s0, s1, …`` one per stream IRI: the stream elements ``sK(S, P, O)`` (extensional);
- ``c0, c1, …`` one per ``[TRIPLES n]`` window: its content, the last n elements of its stream before
  the instant, counted per stream (DESIGN.md §5); the runtime keeps each stream's last elements and
  gives them as atoms at the instant's time point, so that two streams' count windows never count
  each other's elements (a LARS tuple window counts every stream atom);
- ``g`` the default graph: every ``FROM STREAM`` window, the static graphs and ontologies, closed
  under the entailment regime (background rules over ``g``); ``w0, w1, …`` the same for each
  ``FROM NAMED WINDOW`` (``WINDOW w { … }`` blocks read it);
- ``n0, n1, …`` one per ``FROM NAMED <g>`` static graph (``GRAPH <g> { … }`` blocks read it): facts,
  the closure of the static graphs, the ontologies and g;
- ``ws0, …`` per-slot graphs for ``WINDOW w BOX``/``AT`` blocks: the elements of one slot placed at their
  slot with ``@T``, closed under the per-slot copies of the background rules;
- ``b0, b1, …`` one per basic graph pattern: its solutions, every variable of the pattern in the head
  (so the set of head tuples is the bag of solutions); FILTERs of a group that holds only that pattern
  become guards of its rule; ``box0``/``at0`` read a block's per-slot solutions through ⊞□ and ⊞@.

The SPARQL algebra above basic graph patterns (OPTIONAL, UNION, MINUS, BIND, VALUES, sub-SELECT,
the remaining FILTERs and the solution modifiers) is evaluated when results are emitted, over the
solution tables the engine maintains (see :mod:`rsp.query.answers.algebra`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import reduce

from rsp.errors import Position, QuerySyntaxError
from rsp.lars.model import Atom, ExtAtom, Guard, Head, Op, Origin, Rule, Var, Window
from rsp.query.syntax import ast
from rsp.query.syntax.ast import volatile
from rsp.query.syntax.validate import exists_groups, expr_vars

TRIPLE_VARS = (Var("S"), Var("P"), Var("O"))


@dataclass(frozen=True)
class PatternTable:
    """Where the engine keeps the solutions of a pattern: a predicate and its variables in order.

    ``time_var`` (AT blocks) is the extra last head argument holding the slot (a time point)."""

    pred: str
    variables: tuple[str, ...]
    time_var: str | None = None
    pushed_filters: tuple[ast.Filter, ...] = ()


@dataclass
class Translation:
    """A query compiled to LARS: the program, time granularity, stream and pattern predicates."""

    query: ast.Query
    rules: list[Rule] = field(default_factory=list)
    slot: int = 1000
    step: int = 1000
    streams: dict[str, str] = field(default_factory=dict)
    graphs: dict[str | None, str] = field(default_factory=dict)
    """window name (None: the default graph) or FROM NAMED graph IRI -> graph predicate"""
    named_graphs: dict[str, str] = field(default_factory=dict)
    """FROM NAMED static graph IRI -> its graph predicate (facts: the closure of static ∪ the graph)"""
    slot_graphs: dict[str, str] = field(default_factory=dict)
    tables: dict[int, PatternTable] = field(default_factory=dict)
    """id(AST node) -> its solution table, for BGP and BOX/AT window blocks"""
    windows: dict[str | None, list[ast.StreamWindow]] = field(default_factory=dict)
    counts: dict[str, tuple[str, int]] = field(default_factory=dict)
    """count-window predicate (``c0``, …) -> (stream IRI, n) of a ``[TRIPLES n]`` window"""


def _gcd(values: list[int]) -> int:
    return reduce(math.gcd, values) if values else 1000


def _origin(query: ast.Query, pos: Position | None, what: str) -> Origin:
    if pos is not None:
        return Origin(Position(query.file, pos.line, pos.column), source=what)
    return Origin(None, source=f"{query.file}: {what}")


def _error(query: ast.Query, pos: Position | None, message: str) -> QuerySyntaxError:
    position = Position(query.file, pos.line, pos.column) if pos is not None else Position(query.file)
    return QuerySyntaxError(message, position)


def _term(term: ast.Term):
    return Var(_var_name(term.name)) if isinstance(term, ast.Var) else term


def _var_name(name: str) -> str:
    """LARS variables must start with an uppercase letter or '_'."""
    return "V_" + name


def pattern_variables(triples: tuple[ast.TriplePattern, ...]) -> tuple[str, ...]:
    """The variables of triple patterns in order of first appearance."""
    seen: dict[str, None] = {}
    for triple in triples:
        for term in (triple.subject, triple.predicate, triple.object):
            if isinstance(term, ast.Var):
                seen.setdefault(term.name, None)
    return tuple(seen)


def expr_variables(expr) -> set[str]:
    """Variables an expression reads (EXISTS patterns excluded)."""
    return {var.name for var in expr_vars(expr)}


def has_exists(expr) -> bool:
    return next(iter(exists_groups(expr)), None) is not None


class Translator:
    """Builds a :class:`Translation`; ``filter_compiler(expr, variables)`` turns a FILTER expression
    into a Python test over the values of ``variables`` (see :mod:`rsp.query.answers.expr`)."""

    def __init__(self, query: ast.Query, filter_compiler, expr_text) -> None:
        self.query = query
        self.compile_filter = filter_compiler
        self.expr_text = expr_text
        self.out = Translation(query)
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        name = f"{prefix}{self.counter}"
        self.counter += 1
        return name

    # -- windows and graphs -----------------------------------------------------------------------
    def translate(self) -> Translation:
        query, out = self.query, self.out
        if not query.windows:
            raise _error(
                query, query.pos, "the query reads no stream: add FROM STREAM <iri> [RANGE … STEP …]"
            )
        durations = [w.range for w in query.windows if w.range] + [w.step for w in query.windows if w.step]
        steps = [w.step for w in query.windows if w.step]
        if query.compute_every:
            durations.append(query.compute_every)
        out.slot = _gcd(durations)
        out.step = query.compute_every or (_gcd(steps) if steps else out.slot)
        for window in query.windows:
            if window.stream not in out.streams:
                out.streams[window.stream] = f"s{len(out.streams)}"
            out.windows.setdefault(window.name, []).append(window)
        named = 0
        for name, windows in out.windows.items():
            if name is None:
                pred = "g"
            else:
                pred, named = f"w{named}", named + 1
            out.graphs[name] = pred
            for window in windows:
                out.rules.append(self._window_rule(pred, window))
        if None not in out.graphs:
            out.graphs[None] = "g"  # FROM <g> and ontologies only: the default graph is static
        for iri in query.named_graphs:
            if iri in out.graphs:
                raise _error(query, query.pos, f"{iri} names both a window and a FROM NAMED graph")
            out.graphs[iri] = out.named_graphs[iri] = f"n{len(out.named_graphs)}"
        self._group(query.form.where, out.graphs[None])
        return out

    def _window_rule(self, pred: str, window: ast.StreamWindow) -> Rule:
        if window.triples is not None:  # the runtime gives the window's content at the instant
            count = f"c{len(self.out.counts)}"
            self.out.counts[count] = (window.stream, window.triples)
            body = ExtAtom(Atom(count, TRIPLE_VARS))
        else:
            stream = self.out.streams[window.stream]
            body = ExtAtom(Atom(stream, TRIPLE_VARS), Op.DIAMOND, Window(window.range // self.out.slot - 1))
        return Rule(Head(Atom(pred, TRIPLE_VARS)), (body,), _origin(self.query, window.pos, "window"))

    def _slot_graph(self, name: str, pos) -> tuple[str, int]:
        """The per-slot graph of a named window (created on first use) and its window in slots."""
        windows = self.out.windows.get(name)
        if not windows:
            raise _error(
                self.query, pos, f"WINDOW {name} is not declared (use FROM NAMED WINDOW {name} ON …)"
            )
        window = windows[0]
        if window.triples is not None:
            raise _error(self.query, pos, "BOX and AT need a time window (RANGE … STEP …), not [TRIPLES n]")
        size = window.range // self.out.slot - 1
        pred = self.out.slot_graphs.get(name)
        if pred is None:
            pred = self.out.slot_graphs[name] = f"ws{len(self.out.slot_graphs)}"
            stream = self.out.streams[window.stream]
            T = Var("T")
            body = ExtAtom(Atom(stream, TRIPLE_VARS), Op.AT, Window(size), T)
            self.out.rules.append(
                Rule(Head(Atom(pred, TRIPLE_VARS), T), (body,), _origin(self.query, window.pos, "slot"))
            )
        return pred, size

    # -- patterns ---------------------------------------------------------------------------------
    def _group(self, group: ast.Group, graph: str) -> None:
        """Give every BGP (and BOX/AT block) of ``group`` its solution table, recursively."""
        elements = group.elements
        bgps = [e for e in elements if isinstance(e, ast.BGP)]
        filters = [e for e in elements if isinstance(e, ast.Filter)]
        only_bgp = len(bgps) == 1 and len(bgps) + len(filters) == len(elements)
        for element in elements:
            if isinstance(element, ast.BGP):
                pushable = ()
                if only_bgp:
                    names = set(pattern_variables(element.triples))
                    pushable = tuple(
                        f
                        for f in filters
                        if not has_exists(f.expr) and not volatile(f.expr) and expr_variables(f.expr) <= names
                    )
                self._bgp(element, graph, pushable)
            elif isinstance(element, ast.PathPattern):
                # a property path reads the graph itself, evaluated at each instant (rsp.query.answers.paths)
                self.out.tables[id(element)] = PatternTable(graph, ("s", "p", "o"))
            elif isinstance(element, (ast.Optional, ast.Minus)):
                self._group(element.group, graph)
            elif isinstance(element, ast.Union):
                for alternative in element.alternatives:
                    self._group(alternative, graph)
            elif isinstance(element, ast.SubSelect):
                self._group(element.select.where, graph)
            elif isinstance(element, ast.WindowBlock):
                self._window_block(element)
            elif isinstance(element, ast.Filter):
                self._exists_patterns(element.expr, graph)
            elif isinstance(element, ast.Bind):
                self._exists_patterns(element.expr, graph)

    def _exists_patterns(self, expr, graph: str) -> None:
        if isinstance(expr, ast.Exists):
            self._group(expr.pattern, graph)
        elif isinstance(expr, ast.BinaryOp):
            self._exists_patterns(expr.left, graph)
            self._exists_patterns(expr.right, graph)
        elif isinstance(expr, ast.UnaryOp):
            self._exists_patterns(expr.arg, graph)
        elif isinstance(expr, ast.FunctionCall):
            for arg in expr.args:
                self._exists_patterns(arg, graph)

    def _guards(self, filters: tuple[ast.Filter, ...]) -> list[Guard]:
        guards = []
        for f in filters:
            names = sorted(expr_variables(f.expr))
            compiled = self.compile_filter(f.expr, names)  # takes the tuple of values

            def test(*values, compiled=compiled) -> bool:
                return compiled(values)

            guards.append(Guard(test, tuple(Var(_var_name(n)) for n in names), self.expr_text(f.expr)))
        return guards

    def _bgp_body(self, bgp: ast.BGP, graph: str, at: tuple[Var, int] | None) -> list:
        body = []
        for triple in bgp.triples:
            pred = graph if triple.graph is None else self.out.graphs[triple.graph]
            atom = Atom(pred, (_term(triple.subject), _term(triple.predicate), _term(triple.object)))
            if at is None:
                body.append(ExtAtom(atom))
            else:
                time, size = at
                body.append(ExtAtom(atom, Op.AT, Window(size), time))
        return body

    def _bgp(self, bgp: ast.BGP, graph: str, pushed: tuple[ast.Filter, ...]) -> None:
        names = pattern_variables(bgp.triples)
        pred = self.fresh("b")
        pos = bgp.triples[0].pos if bgp.triples else None
        if bgp.triples:
            body = self._bgp_body(bgp, graph, None) + self._guards(pushed)
            head = Head(Atom(pred, tuple(Var(_var_name(n)) for n in names)))
            self.out.rules.append(Rule(head, tuple(body), _origin(self.query, pos, "pattern")))
        self.out.tables[id(bgp)] = PatternTable(pred, names, None, pushed)

    def _window_block(self, block: ast.WindowBlock) -> None:
        if block.op is ast.WindowOp.DIAMOND:
            graph = self.out.graphs.get(block.window)
            if graph is None:
                raise _error(
                    self.query,
                    block.pos,
                    f"WINDOW {block.window} is not declared (use FROM NAMED WINDOW … ON …)",
                )
            self._group(block.group, graph)
            return
        elements = block.group.elements
        bgps = [e for e in elements if isinstance(e, ast.BGP)]
        filters = [e for e in elements if isinstance(e, ast.Filter)]
        if (
            len(bgps) != 1
            or len(bgps) + len(filters) != len(elements)
            or any(has_exists(f.expr) for f in filters)
        ):
            raise _error(
                self.query,
                block.pos,
                f"WINDOW … {block.op.value.upper()} blocks may hold triple patterns and FILTERs only",
            )
        bgp = bgps[0]
        graph, size = self._slot_graph(block.window, block.pos)
        names = pattern_variables(bgp.triples)
        if block.time_var is not None and block.time_var.name in names:
            raise _error(self.query, block.pos, f"?{block.time_var.name} is already bound inside the block")
        T = Var("T")
        inner = self.fresh("b")
        head_vars = tuple(Var(_var_name(n)) for n in names)
        body = self._bgp_body(bgp, graph, (T, size)) + self._guards(tuple(filters))
        origin = _origin(self.query, block.pos, f"window {block.op.value}")
        self.out.rules.append(Rule(Head(Atom(inner, head_vars), T), tuple(body), origin))
        if block.op is ast.WindowOp.BOX:
            pred = self.fresh("box")
            body = (ExtAtom(Atom(inner, head_vars), Op.BOX, Window(size)),)
            self.out.rules.append(Rule(Head(Atom(pred, head_vars)), body, origin))
            self.out.tables[id(block)] = PatternTable(pred, names)
        else:
            pred = self.fresh("at")
            body = (ExtAtom(Atom(inner, head_vars), Op.AT, Window(size), T),)
            self.out.rules.append(Rule(Head(Atom(pred, (*head_vars, T))), body, origin))
            self.out.tables[id(block)] = PatternTable(pred, names, block.time_var.name)


def slot_rule(rule: Rule, graph: str, slot_graph: str, size: int) -> Rule | None:
    """The per-slot copy of a background rule over ``graph``: every ``graph`` atom becomes
    ``[size] @T slot_graph(…)`` and the head ``@T slot_graph(…)``; None if the rule reads no graph atom."""
    if rule.head.atom.pred != graph:
        return None
    T = Var("T_slot")
    body = []
    touched = False
    for literal in rule.body:
        if isinstance(literal, ExtAtom) and literal.atom.pred == graph:
            if literal.op is not Op.PLAIN or literal.window is not None:
                return None
            atom = Atom(slot_graph, literal.atom.args)
            body.append(ExtAtom(atom, Op.AT, Window(size), T, literal.negated))
            touched = True
        else:
            body.append(literal)
    if not touched:
        return None
    return Rule(Head(Atom(slot_graph, rule.head.atom.args), T), tuple(body), rule.origin)


def translate(query: ast.Query, filter_compiler, expr_text) -> Translation:
    """Translate ``query`` (see the module docstring)."""
    return Translator(query, filter_compiler, expr_text).translate()
