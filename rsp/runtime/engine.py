"""The continuous-query runtime's entry point (:class:`Engine`): it registers queries (compiled by
rsp/query/compile.py), loads ontologies and static graphs, takes stream elements and hands them to
each query that reads their stream; an element older than an instant a query has closed is late
(counted, then dropped or refused: ``late``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rsp.errors import LateElementError, Position, RspError, StreamError
from rsp.io.bnodes import Scopes
from rsp.query.syntax import ast
from rsp.runtime.checks import checked_time, checked_times, checked_triples
from rsp.runtime.handle import QueryHandle

if TYPE_CHECKING:
    from rsp.query.compile import CompiledQuery

Triple = tuple[str, str, str]


class Engine:
    """Registers continuous queries and feeds them stream elements in time order.

    ``entailment`` is ``none``, ``rdfs`` or ``owlrl``; ``late`` is ``drop`` (count and skip elements
    older than the last closed instant) or ``fail`` (raise :class:`rsp.errors.StreamError`).
    ``explain=True`` keeps each stream element's own timestamp while a window can hold it, so that
    :meth:`QueryHandle.explain` gives exact times (it costs a dict entry per element in the windows).
    """

    def __init__(self, entailment: str = "none", late: str = "drop", *, explain: bool = False) -> None:
        if late not in ("drop", "fail"):
            raise ValueError(f"late={late!r}: the late policy is 'drop' or 'fail'")
        self.entailment = entailment
        self.late_policy = late
        self.explain = explain
        self.static: list[Triple] = []
        self.queries: list[QueryHandle] = []
        self.late = 0
        self.on_late: Callable[[int, Triple], None] | None = None
        """Called with (time, triple) for every late element dropped."""
        self.on_late_element: Callable[[QueryHandle, int], None] | None = None
        """Called for every late element with the query it is late for and its index in the list given to
        :meth:`push` or :meth:`push_sorted` (under ``late="fail"``, for the first one only, before the
        error): a reader reports late lines by their own positions this way (rsp/io/late.py)."""
        self.scopes = Scopes()
        """The blank-node scope of every source (:mod:`rsp.io.bnodes`)."""
        self._graphs = 0
        self.closed = False
        """True once :meth:`close` ended the streams: nothing more can be pushed."""
        self.graph_files: dict[str, str] = {}
        """IRI (without brackets) -> local file of a FROM / FROM NAMED graph (:meth:`add_graph`)"""

    def add_graph(self, iri: str, path: str | Path) -> None:
        """Give the graph a query names with ``FROM <iri>`` or ``FROM NAMED <iri>`` as a local file (rsp
        never fetches IRIs); use it before registering the query."""
        self.graph_files[iri[1:-1] if iri.startswith("<") else iri] = str(path)

    def load_ontology(self, path: str | Path, *, source: str | None = None) -> int:
        """Load an ontology or static graph (Turtle, RDF/XML, N-Triples, JSON-LD); returns its size.
        Load ontologies before registering the queries that use them. Its blank nodes are its own: no
        other graph or stream shares them; their labels derive from ``source`` (default: the path), so
        a graph given again under the same name in another run gets the same labels."""
        from rsp.background import load_ontology

        triples = self._static_graph(load_ontology(path), path if source is None else source)
        self.static.extend(triples)
        return len(triples)

    def _static_graph(self, triples: list[Triple], path: str | Path) -> list[Triple]:
        """A static graph's triples with blank nodes in a scope of their own (one per graph loaded)."""
        self._graphs += 1
        return self.scopes.relabel(triples, f"graph {self._graphs} {path}")

    def register(self, text: str, file: str = "<query>", name: str | None = None) -> QueryHandle:
        """Parse, check and compile a query; its results flow from the next pushed element on.

        ``name`` names a query written without REGISTER (a bare SELECT, CONSTRUCT or ASK); by default it
        is the file's name without its extension. A text with several queries: :meth:`register_all`.
        What the checks find that is not an error is in the handle's :attr:`~QueryHandle.warnings`.

        >>> engine = Engine()
        >>> query = engine.register('''REGISTER QUERY Q AS SELECT ?s ?x
        ...     FROM STREAM <http://ex.org/s> [RANGE 1s STEP 5s] WHERE { ?s ?p ?o }''')
        >>> len(query.warnings)  # the first: STEP (5000 ms) is larger than RANGE (1000 ms) …
        2
        >>> print(query.warnings[1])
        <query>:1:31: warning: ?x is projected but the WHERE clause never binds it: it is always unbound
        """
        from rsp.query.syntax.parser import parse_and_validate

        query, warnings = parse_and_validate(text, file, name)
        return self.register_compiled(self.compile(query, warnings, file))

    def register_all(self, text: str, file: str = "<query>", name: str | None = None) -> list[QueryHandle]:
        """Register every query of ``text`` (several REGISTER statements, or one bare query); each has its
        own results, told apart by their ``query`` field, and its own :attr:`~QueryHandle.warnings`."""
        from rsp.query.syntax.parser import parse_all_and_validate

        pairs = parse_all_and_validate(text, file, name)
        taken = {handle.name for handle in self.queries}
        for query, _warnings in pairs:
            if query.name in taken:
                message = f"a query called {query.name} is registered already"
                raise RspError(message, query.pos or Position(file))
        compiled = [self.compile(query, warnings, file) for query, warnings in pairs]
        return [self.register_compiled(c) for c in compiled]

    def compile(self, query: ast.Query, warnings: Sequence[str] = (), file: str = "<query>") -> CompiledQuery:
        """A parsed and validated query compiled (rsp/query/compile.py) with this engine's entailment
        regime, static graphs and graph files; nothing is registered."""
        from rsp.query.compile import compile_query

        def load(iri: str, clause: str) -> list[Triple]:
            return self._load_graph(iri, file, clause)

        return compile_query(query, warnings, static=self.static, entailment=self.entailment, load_graph=load)

    def register_compiled(self, compiled: CompiledQuery) -> QueryHandle:
        """Run a compiled query: its results flow from the next pushed element on."""
        handle = QueryHandle(
            compiled, entailment=self.entailment, explain=self.explain, late=self._late, engine=self
        )
        self.queries.append(handle)
        return handle

    def _load_graph(self, iri: str, file: str, clause: str) -> list[Triple]:
        from rsp.background import load_ontology as load_graph
        from rsp.query.compile import resolve_graph

        path = resolve_graph(iri, file, self.graph_files, clause)
        if not path.exists():
            given = iri[1:-1] in self.graph_files
            where = f"--graph {iri[1:-1]}={path}" if given else f"no such local file {path}"
            raise RspError(
                f"{clause} {iri}: {where} does not exist (rsp never fetches IRIs; give the graph with "
                f"--graph {iri[1:-1]}=FILE)",
                Position(file),
            )
        return self._static_graph(load_graph(path), path)

    def push(
        self,
        triples: Iterable[Triple],
        time: int,
        stream: str | None = None,
        *,
        source: str | None = None,
        plain: bool = False,
    ) -> None:
        """Add stream elements with timestamp ``time`` (ms) to ``stream`` (default: the only stream
        the registered queries read).

        Terms are strings in N-Triples syntax (``<http://…>``, ``_:b``, ``"30"^^<…#integer>``) or rdflib
        terms; a malformed term, or a triple that is not three terms, is refused with a
        :class:`~rsp.errors.StreamError` naming the triple, the position and what is expected (nothing
        of the call is added then). ``plain=True`` says the terms are valid N-Triples strings already and
        skips that check (rsp's own readers, which validated their lines).

        Each triple is an element (DESIGN.md §3), arriving in list order. Elements need not come in
        time order: an element older than the last instant a query closed is late for it (counted in
        :attr:`late`, then dropped or, with ``late="fail"``, raised); any other element joins every
        window that covers its time, as if it had come in order. So when the first triple, before any
        instant closed, moves the first instant back behind a newer element, the instants up to that
        element close, and the other triples of the call, older than them, are late.

        Blank nodes are scoped to ``source`` (any string naming where the elements come from; by
        default the stream): ``_:n`` pushed from two sources is two nodes, from one source one node.
        """
        self._check_open("push")
        preds = self._stream_preds(stream)
        if plain:
            triples = triples if isinstance(triples, list) else list(triples)
        else:
            time = checked_time(time, "push")
            triples = checked_triples(triples, [time], "push")
        if triples and self.scopes.blank(triples):  # the scope's name is made only when needed
            triples = self.scopes.relabel(triples, self._source(stream, source))
        for handle, pred in zip(self.queries, preds, strict=True):
            if pred is None:
                continue
            if handle.closed_until is not None and time < handle.closed_until:
                self._late(handle, [time] * len(triples), triples)
                continue
            rest = handle._add(time, pred, triples)
            if rest:
                self._late(handle, [time] * len(rest), rest, len(triples) - len(rest))

    def push_sorted(
        self,
        times: Sequence[int],
        triples: Sequence[Triple],
        stream: str | None = None,
        *,
        source: str | None = None,
        plain: bool = False,
    ) -> None:
        """Add many stream elements at once: ``triples[i]`` at ``times[i]`` ms, the times in order.

        The same as :meth:`push` for each run of equal times (each triple an element, in list
        order, as there), with less work per element (a bulk
        reader's entry point: ``rsp spark`` hands micro-batches over this way), except that late
        elements reach :attr:`on_late` query by query. Terms are strings in N-Triples syntax, checked
        as by :meth:`push` unless ``plain``; times out of order are refused.

        >>> engine = Engine()
        >>> query = engine.register('''REGISTER QUERY N AS SELECT (COUNT(*) AS ?n)
        ...     FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }''')
        >>> triples = [("<http://ex.org/a>", "<http://ex.org/p>", f"<http://ex.org/{o}>") for o in "bcd"]
        >>> engine.push_sorted([100, 200, 1500], triples)
        >>> engine.close()
        >>> [(r.time, r.bindings[0]["n"][:3]) for r in query]
        [(1000, '"2"'), (2000, '"1"')]
        """
        if len(times) != len(triples):
            raise ValueError(f"push_sorted: {len(times)} times for {len(triples)} triples")
        self._check_open("push_sorted")
        preds = self._stream_preds(stream)
        if not triples:
            return
        if not plain:
            times = checked_times(times)
            triples = checked_triples(triples, times, "push_sorted")
        triples = self.scopes.relabel(
            triples if isinstance(triples, list) else list(triples), self._source(stream, source)
        )
        for handle, pred in zip(self.queries, preds, strict=True):
            if pred is not None:
                handle._add_sorted(times, triples, pred)

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise StreamError(f"{call} after close(): the streams have ended (make a new Engine to go on)")

    def _stream_preds(self, stream: str | None) -> list[str | None]:
        """The predicate each registered query reads ``stream`` through (None: it does not read it); a
        stream that no query reads is an error, as elements pushed there would be lost without a word."""
        preds = [self._window_pred(handle, stream) for handle in self.queries]
        if not any(pred is not None for pred in preds):
            if not self.queries:
                raise StreamError("no query is registered: register the queries before pushing elements")
            read = sorted({iri for handle in self.queries for iri in handle.translation.streams})
            shown = str(stream) if str(stream).startswith("<") else f"<{stream}>"
            raise StreamError(
                f"no registered query reads the stream {shown}: the queries read {', '.join(read)}"
            )
        return preds

    def _source(self, stream: str | None, source: str | None) -> str:
        """The blank-node scope of pushed elements: ``source`` if given, else the stream's IRI."""
        if source is not None:
            return str(source)
        if stream is None:
            streams = {iri for handle in self.queries for iri in handle.translation.streams}
            return streams.pop() if len(streams) == 1 else "<>"
        return stream if stream.startswith("<") else f"<{stream}>"

    @staticmethod
    def _window_pred(handle: QueryHandle, stream: str | None) -> str | None:
        """The predicate a query reads ``stream`` through (None: the query does not read it)."""
        streams = handle.translation.streams
        if stream is None:
            if len(streams) != 1:
                raise StreamError(f"query {handle.name} reads several streams: say which one")
            return next(iter(streams.values()))
        return streams.get(stream if stream.startswith("<") else f"<{stream}>")

    def _late(
        self, handle: QueryHandle, times: Sequence[int], triples: Sequence[Triple], start: int = 0
    ) -> None:
        """Elements older than an instant ``handle`` already closed: counted, then the policy.
        ``start``: the index of the first of them in the list given to push / push_sorted."""
        self.late += len(triples)
        if self.on_late_element is not None:
            for index in range(start, start + (1 if self.late_policy == "fail" else len(triples))):
                self.on_late_element(handle, index)
        if self.late_policy == "fail":
            raise LateElementError(
                f"late element at {times[0]}: instant {handle.closed_until} is already closed",
                time=times[0],
                instant=handle.closed_until,
            )
        if self.on_late is not None:
            for time, triple in zip(times, triples, strict=True):
                self.on_late(time, triple)

    def advance(self, time: int) -> None:
        """Declare that no element older than ``time`` will come: close the instants up to it."""
        self._check_open("advance")
        for handle in self.queries:
            handle.advance(time)

    def close(self) -> None:
        """End of the streams: close every instant up to the first one after the last element. Nothing
        can be pushed afterwards (:class:`~rsp.errors.StreamError`); closing again does nothing."""
        if self.closed:
            return
        self.closed = True
        for handle in self.queries:
            handle.finish()
