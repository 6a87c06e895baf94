"""The RSP dialect surfaces of the query syntax (DESIGN.md §12): REGISTER … [COMPUTE|COMPUTED EVERY],
the dataset clauses with their windows (C-SPARQL ``FROM [NAMED] STREAM``, RSP-QL ``FROM NAMED WINDOW …
ON``, Jasper ``FROM [NAMED] WINDOW … ON STREAM``, ``[RANGE … STEP|SLIDE …]``, ``[NOW]``, ``[TRIPLES n]``),
the window blocks in WHERE (``WINDOW w``, CQELS ``STREAM <s> [w] { … }``, ``GRAPH``) as a mixin of the
transformer of :mod:`rsp.query.syntax.parser`, and what is resolved once the whole query is read: the steps of
CQELS windows, ``WINDOW ?w`` / ``GRAPH ?g`` over the declared names, ``GRAPH <g>`` naming a window or a
static graph."""

from __future__ import annotations

import math
from copy import deepcopy
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path

from lark import v_args

from rsp.errors import Position, QuerySyntaxError
from rsp.query.syntax.ast import (
    Group,
    Minus,
    Optional,
    OutputPolicy,
    StreamWindow,
    SubSelect,
    Union,
    Values,
    Var,
    WindowBlock,
    WindowOp,
)


@dataclass(frozen=True)
class _Register:
    name: str
    kind: str | None
    policy: OutputPolicy
    compute_every: int | None
    pos: Position


@dataclass(frozen=True)
class _Dataset:
    graph: str | None = None
    window: StreamWindow | None = None
    named_graph: str | None = None


@dataclass(frozen=True)
class _GraphRef:
    """``GRAPH <g> { … }`` or ``GRAPH ?g { … }`` until the dataset is known (see :func:`_resolve_form`)."""

    target: str | Var
    group: Group
    pos: Position | None


class DialectClauses:
    """The transformer methods of the dialect clauses (mixed into :class:`rsp.query.syntax.parser._ToAst`,
    which gives ``_pos``, ``_error``, ``_duration`` and ``inline_windows``)."""

    # REGISTER ---------------------------------------------------------------------------------------
    @v_args(meta=True)
    def register(self, meta, children):
        *words, name, every = children
        policy, kind = OutputPolicy.RSTREAM, None
        for word in words:
            if word is None:
                continue
            if word.type == "POLICY":
                policy = OutputPolicy(str(word).lower())
            else:
                kind = str(word).upper()
        return _Register(str(name), kind, policy, every, self._pos(meta))

    def compute_every(self, children):
        return self._duration(children[0])

    # window blocks in WHERE ---------------------------------------------------------------------------
    def box(self, children):
        return (WindowOp.BOX, None)

    def at(self, children):
        return (WindowOp.AT, children[0])

    @v_args(meta=True)
    def window_block(self, meta, children):
        window, op, group = children  # window: an IRI, or a Var that _resolve_form expands
        op, time_var = op if op is not None else (WindowOp.DIAMOND, None)
        return WindowBlock(window, op, group, time_var, self._pos(meta))

    @v_args(meta=True)
    def stream_block(self, meta, children):
        """CQELS ``STREAM <s> [RANGE …] { P }``: a named window of its own (named after the stream, or
        ``<s>#2``… when the stream has several windows) read by a ◇ window block."""
        stream, (range_, step, triples), group = children
        pos = self._pos(meta)
        same = [w for w in self.inline_windows if w.stream == stream]
        for window in same:
            if (window.range, window.step, window.triples) == (range_, step, triples):
                return WindowBlock(window.name, WindowOp.DIAMOND, group, None, pos)
        name = stream if not same else f"{stream[:-1]}#{len(same) + 1}>"
        self.inline_windows.append(StreamWindow(stream, range_, step, triples, name, pos))
        return WindowBlock(name, WindowOp.DIAMOND, group, None, pos)

    @v_args(meta=True)
    def graph_block(self, meta, children):
        target, group = children
        return _GraphRef(target, group, self._pos(meta))

    # dataset ---------------------------------------------------------------------------------------------
    def from_graph(self, children):
        return _Dataset(graph=children[0])

    def from_named_graph(self, children):
        return _Dataset(named_graph=children[0])

    @v_args(meta=True)
    def from_named_stream(self, meta, children):
        """C-SPARQL ``FROM NAMED STREAM <s> [w]``: the named window ``<s>`` over the stream ``<s>``."""
        stream, (range_, step, triples) = children
        return _Dataset(window=StreamWindow(stream, range_, step, triples, stream, self._pos(meta)))

    @v_args(meta=True)
    def from_named_window_jasper(self, meta, children):
        name, (range_, step, triples), stream = children
        return _Dataset(window=StreamWindow(stream, range_, step, triples, name, self._pos(meta)))

    @v_args(meta=True)
    def from_window(self, meta, children):
        (range_, step, triples), stream = children
        return _Dataset(window=StreamWindow(stream, range_, step, triples, None, self._pos(meta)))

    @v_args(meta=True)
    def from_stream(self, meta, children):
        stream, (range_, step, triples) = children
        return _Dataset(window=StreamWindow(stream, range_, step, triples, None, self._pos(meta)))

    @v_args(meta=True)
    def from_named_window(self, meta, children):
        name, stream, (range_, step, triples) = children
        return _Dataset(window=StreamWindow(stream, range_, step, triples, name, self._pos(meta)))

    def sliding_window(self, children):
        return self._duration(children[0]), self._duration(children[1]), None

    def range_window(self, children):
        """CQELS ``[RANGE d]``: no slide of its own (resolved by :func:`_resolve_steps`)."""
        return self._duration(children[0]), None, None

    def now_window(self, children):
        """CQELS ``[NOW]``: the elements since the last instant (resolved by :func:`_resolve_steps`)."""
        return None, None, None

    def tumbling_window(self, children):
        width = self._duration(children[0])
        return width, width, None

    def count_window(self, children):
        count = int(children[0])
        if count <= 0:
            raise self._error("a count window needs at least one triple: [TRIPLES n] with n ≥ 1", children[0])
        return None, None, count


def _name_of(file: str) -> str:
    """The name of a query without REGISTER: its file's name without the extension (``Q`` for text)."""
    if file.startswith("<"):
        return "Q"
    return Path(file).stem or "Q"


def _resolve_steps(windows: tuple[StreamWindow, ...], every: int | None) -> tuple[StreamWindow, ...]:
    """Give CQELS ``[RANGE d]`` and ``[NOW]`` windows a step: CQELS evaluates at every arrival, rsp at the
    query's instants, every COMPUTE EVERY, or the gcd of the other windows' STEPs, or else every second
    (or the gcd of the range and a second, for ranges that are no whole number of seconds). ``[NOW]``
    holds the elements since the last instant: ``[RANGE step STEP step]``."""
    steps = [w.step for w in windows if w.step is not None]
    base = every or (reduce(math.gcd, steps) if steps else None)
    out = []
    for w in windows:
        if w.step is None and w.triples is None:
            if w.range is None:  # [NOW]
                step = base or 1000
                w = replace(w, range=step, step=step)
            else:
                w = replace(w, step=base or math.gcd(w.range, 1000))
        out.append(w)
    return tuple(out)


def _resolve_form(form, windows: set[str], graphs: tuple[str, ...], file: str):
    """The query form with its GRAPH, WINDOW ?w and GRAPH ?g blocks resolved (see :class:`WindowBlock`)."""
    where = _resolve_group(form.where, windows, graphs, file)
    return replace(form, where=where)


def _resolve_group(group: Group, windows: set[str], graphs: tuple[str, ...], file: str) -> Group:
    return Group(tuple(_resolve_element(e, windows, graphs, file) for e in group.elements), group.pos)


def _resolve_element(element, windows: set[str], graphs: tuple[str, ...], file: str):
    def sub(group: Group) -> Group:
        return _resolve_group(group, windows, graphs, file)

    def at(pos: Position | None) -> Position:
        return Position(file, pos.line, pos.column) if pos is not None else Position(file)

    match element:
        case Optional(group=group) | Minus(group=group):
            return replace(element, group=sub(group))
        case Union(alternatives=alternatives):
            return replace(element, alternatives=tuple(sub(a) for a in alternatives))
        case SubSelect(select=select):
            return replace(element, select=replace(select, where=sub(select.where)))
        case WindowBlock(window=Var() as var):
            if not windows:
                raise QuerySyntaxError(
                    f"WINDOW {var} ranges over the named windows, but the query declares none (declare one "
                    "with FROM NAMED WINDOW <w> ON <stream> [RANGE … STEP …])",
                    at(element.pos),
                )
            inner, pos = sub(element.group), element.pos
            return _ranging(var, sorted(windows), lambda w: replace(element, window=w, group=inner), pos)
        case WindowBlock():
            return replace(element, group=sub(element.group))
        case _GraphRef(target=Var() as var):
            names = sorted(set(graphs) | windows)
            if not names:
                raise QuerySyntaxError(
                    f"GRAPH {var} ranges over the named graphs, but the query declares none (declare them "
                    "with FROM NAMED <g>, FROM NAMED STREAM <s> […] or FROM NAMED WINDOW <w> ON <s> […])",
                    at(element.pos),
                )
            inner = sub(element.group)
            pos = element.pos
            return _ranging(var, names, lambda g: WindowBlock(g, WindowOp.DIAMOND, inner, None, pos), pos)
        case _GraphRef(target=name):
            if name not in windows and name not in graphs:
                declared = ", ".join(sorted(set(graphs) | windows)) or "none"
                raise QuerySyntaxError(
                    f"GRAPH {name} names no graph of the query: declare it with FROM NAMED {name} (a static "
                    f"graph, given with --graph {name[1:-1]}=FILE) or FROM NAMED WINDOW {name} ON <stream> "
                    f"[RANGE … STEP …] (declared: {declared})",
                    at(element.pos),
                )
            return WindowBlock(name, WindowOp.DIAMOND, sub(element.group), None, element.pos)
        case _:
            return element


def _ranging(var: Var, names: list[str], block, pos: Position | None) -> Union:
    """``WINDOW ?w { P }`` / ``GRAPH ?g { P }``: the union over the names of P read there, joined with
    ``?w`` bound to the name. Each alternative has its own copy of P: the translation gives each pattern
    node a solution table of its own (keyed by the node), and one shared node would read one graph only."""
    alternatives = tuple(
        Group((deepcopy(block(name)), Values((var,), ((name,),), pos)), pos) for name in names
    )
    return Union(alternatives, pos)
