"""The state behind ``rsp serve``: one :class:`rsp.runtime.Engine`, its registered queries and streams,
each query's recent results and the live subscribers they are pushed to. No HTTP here: the routes of
:mod:`rsp.serve.app` call these methods, as a notebook calls the engine."""

from __future__ import annotations

import asyncio
import io
import json
import tempfile
from collections import deque
from pathlib import Path

from rsp.errors import Position, RspError, StreamError

RECENT = 100
"""Results each query keeps for ``GET /queries/{name}/results``."""


class NotFound(RspError):
    """A query or stream the service does not have."""


def result_line(result, variables, fmt: str = "jsonl") -> str:
    """One result as ``rsp run`` writes it (``jsonl`` or ``sparql-json``), without the newline."""
    from rsp.io.results import make_writer

    out = io.StringIO()
    make_writer(fmt, out, variables=variables, query_name=result.query).write(result)
    return out.getvalue().rstrip("\n")


class Service:
    """Queries, streams and results of one ``rsp serve``."""

    def __init__(self, entailment: str = "none") -> None:
        from rsp.runtime import Engine

        self.engine = Engine(entailment=entailment)
        self.streams: set[str] = set()
        self.recent: dict[str, deque] = {}
        self.listeners: dict[str, set[asyncio.Queue]] = {}
        self.lock = asyncio.Lock()
        self._late: set[tuple[int, int]] = set()
        """The (batch, index) of each element late for some query in the request pushed now: an element
        late for two queries is one late element, as ``rsp run`` counts it."""
        self._batch = 0
        self.engine.on_late_element = lambda _handle, index: self._late.add((self._batch, index))

    # -- queries --------------------------------------------------------------------------------------
    def handles(self) -> dict:
        return {handle.name: handle for handle in self.engine.queries}

    def register(self, text: str, name: str | None = None) -> list:
        """Register the queries of ``text`` (their handles, each with its ``warnings``); their streams are
        registered too."""
        handles = self.engine.register_all(text, "<request>", name)
        for handle in handles:
            handle.keep = False
            self.recent[handle.name] = deque(maxlen=RECENT)
            self.listeners[handle.name] = set()
            handle.subscribe(lambda result, handle=handle: self._publish(handle, result))
            self.streams.update(w.stream[1:-1] for w in handle.query.windows)
        return handles

    def describe(self, handle) -> dict:
        """What ``GET /queries/{name}`` says of a query; ``group_by``: the projected variables it groups
        by (the web page draws a series per group)."""
        modifiers = getattr(handle.query.form, "modifiers", None)
        grouped = [p.var.name for p in modifiers.group_by] if modifiers is not None else []
        return {
            "name": handle.name,
            "form": type(handle.query.form).__name__.lower(),
            "variables": list(handle.variables),
            "group_by": [name for name in grouped if name in handle.variables],
            "streams": sorted({w.stream[1:-1] for w in handle.query.windows}),
            "closed_until": handle.closed_until,
            "results": f"/queries/{handle.name}/results",
            "events": f"/queries/{handle.name}/events",
        }

    def handle(self, name: str):
        handle = self.handles().get(name)
        if handle is None:
            raise NotFound(f"no query called {name} (GET /queries lists them)")
        return handle

    def delete(self, name: str) -> None:
        handle = self.handle(name)
        self.engine.queries.remove(handle)
        del self.recent[name]
        for listener in self.listeners.pop(name, ()):
            listener.put_nowait(None)

    def _publish(self, handle, result) -> None:
        self.recent[handle.name].append(result)
        for listener in self.listeners.get(handle.name, ()):
            listener.put_nowait(result)

    def results(self, name: str, fmt: str = "jsonl") -> list[str]:
        handle = self.handle(name)
        return [result_line(r, handle.variables, fmt) for r in self.recent[name]]

    def listen(self, name: str) -> asyncio.Queue:
        self.handle(name)
        queue: asyncio.Queue = asyncio.Queue()
        self.listeners[name].add(queue)
        return queue

    def unlisten(self, name: str, queue: asyncio.Queue) -> None:
        self.listeners.get(name, set()).discard(queue)

    def close_listeners(self) -> None:
        """End every live subscription (the service stops)."""
        for listeners in self.listeners.values():
            for listener in listeners:
                listener.put_nowait(None)

    # -- streams and static data ------------------------------------------------------------------------
    def add_stream(self, iri: str) -> str:
        """Register stream ``iri`` (with or without angle brackets); returns it without them. An IRI
        that is not absolute or not one term is refused."""
        from rsp.io.ntriples import term_problem

        iri = _bare(iri)
        problem = term_problem(f"<{iri}>", "subject")
        if problem is not None:
            raise RspError(f"the stream IRI {iri[:80]!r} is refused: {problem}")
        self.streams.add(iri)
        return iri

    def delete_stream(self, iri: str) -> None:
        iri = _bare(iri)
        if iri not in self.streams:
            raise NotFound(f"no stream {iri} (GET /streams lists them)")
        self.streams.discard(iri)

    def push_ntriples(self, iri: str, text: str) -> dict:
        """N-Triples lines ending in ``# <ms>`` for stream ``iri``: all of them, or none if a line is bad
        (a :class:`StreamError` per bad line, positioned in the request body)."""
        from rsp.io.ntriples import read_triple_batches, text_lines

        iri = self._stream(iri)
        errors: list[StreamError] = []
        lines = text_lines(text)
        batches = list(
            read_triple_batches(lines, "<request>", on_error=errors.append, late_policy=None, numbered=True)
        )
        if errors:
            raise BadElements(errors)
        return self._push(iri, batches)

    def push_jsonld(self, iri: str, document) -> dict:
        """JSON-LD elements: a list of ``{"time": ms, "graph": <JSON-LD>}`` (or one such object); an
        element with no graph, other keys, or a graph that gives no triple (keys that are neither IRIs
        nor in a ``@context``) is refused, with its index in the list as its line."""
        from rdflib import Graph

        from rsp.background.ontology import nt_term

        iri = self._stream(iri)
        items = document if isinstance(document, list) else [document]
        batches, errors = [], []
        for index, item in enumerate(items, 1):
            where = Position("<request>", index)
            shape = _element_problem(item)
            if shape is not None:
                message = f'{shape}: an element is {{"time": ms ≥ 0, "graph": JSON-LD}}'
                errors.append(StreamError(message, where))
                continue
            remote = remote_contexts(item["graph"])
            if remote:
                errors.append(StreamError(_remote_message(remote), where))
                continue
            try:
                graph = Graph().parse(data=json.dumps(item["graph"]), format="json-ld")
            except Exception as err:  # rdflib's JSON-LD parser raises many kinds of error
                errors.append(StreamError(f"not JSON-LD: {err}", where))
                continue
            if not len(graph):
                message = "the graph gives no triple (are its keys IRIs, or in a @context?)"
                errors.append(StreamError(message, where))
                continue
            triples = sorted(tuple(nt_term(t) for t in triple) for triple in graph)
            batches.append((item["time"], triples, [index] * len(triples)))
        if errors:
            raise BadElements(errors)
        return self._push(iri, batches)

    def _stream(self, iri: str) -> str:
        iri = _bare(iri)
        if iri not in self.streams:
            raise NotFound(f"no stream {iri}: register it (POST /streams) or a query reading it")
        return iri

    def _push(self, iri: str, batches) -> dict:
        """Push ``(time, triples, lines)`` batches (``lines``: where each triple is in the request: its
        line, or its element's index in a JSON-LD list); the late ones are counted once each and named
        by their lines (``late_lines``), as ``rsp run`` reports late lines."""
        count = 0
        read = any(f"<{iri}>" in h.translation.streams for h in self.engine.queries)
        self._late.clear()
        for self._batch, (time_, triples, _lines) in enumerate(batches):
            count += len(triples)
            if read:
                self.engine.push(triples, time_, f"<{iri}>", plain=True)
        lines = sorted({batches[batch][2][index] for batch, index in self._late})
        return {"stream": iri, "elements": count, "late": len(self._late), "late_lines": lines}

    def advance(self, time: int | None = None, name: str | None = None) -> dict:
        """Close instants no element will come for any more: up to ``time`` (ms), or, without it, the
        end of the stream as ``rsp run`` has it at the end of its files (every instant up to the first
        one after the last element); for query ``name`` or for all. Elements older than an instant
        closed are late afterwards. Returns each query's last closed instant."""
        handles = [self.handle(name)] if name is not None else list(self.engine.queries)
        for handle in handles:
            if time is None:
                handle.finish()
            else:
                handle.advance(time)
        return {handle.name: handle.closed_until for handle in handles}

    def load(self, text: str, suffix: str) -> int:
        """An ontology or static graph for the queries registered from now on (JSON-LD with its contexts
        in the text: a remote one is refused)."""
        if suffix == ".jsonld":
            try:
                remote = remote_contexts(json.loads(text))
            except (ValueError, RecursionError):
                remote = []  # not JSON: the parser says where
            if remote:
                raise RspError(_remote_message(remote), Position("<request>"))
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"graph{suffix}"
            path.write_text(text, encoding="utf-8")
            return self.engine.load_ontology(path)


class BadElements(RspError):
    """Elements refused: the request added nothing."""

    def __init__(self, errors: list[StreamError]) -> None:
        super().__init__(f"{len(errors)} bad element(s); nothing of the request was added")
        self.errors = errors


def remote_contexts(document) -> list[str]:
    """The documents a JSON-LD parser would fetch to read ``document``: the ``@context`` values (or
    members of a list of them) that are IRIs, and ``@import``s. The service refuses them: fetching
    would make it request any URL a client names, and wait for it with every other request."""
    found: list[str] = []
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in ("@context", "@import"):
                    for context in value if isinstance(value, list) else [value]:
                        (found.append if isinstance(context, str) else stack.append)(context)
                else:
                    stack.append(value)
    return sorted(set(found))


def _remote_message(remote: list[str]) -> str:
    return (f"a remote JSON-LD context is not fetched by the service ({remote[0][:80]}): put the context "
            "itself in the body")  # fmt: skip


def _element_problem(item) -> str | None:
    """What is wrong with the shape of one JSON-LD element (None: nothing)."""
    if not isinstance(item, dict):
        return f"element {json.dumps(item)[:40]} is not an object"
    time = item.get("time")
    if type(time) is not int or time < 0:  # not bool, which is an int in Python
        return f'"time": {json.dumps(time)[:40]} is not a time in ms ≥ 0'
    if "graph" not in item:
        return 'no "graph"'
    if not isinstance(item["graph"], (dict, list)):
        return '"graph" is not a JSON-LD object or list'
    other = sorted(set(item) - {"time", "graph"})
    return f"unknown key(s) {', '.join(map(json.dumps, other))}" if other else None


def _bare(iri: str) -> str:
    return iri[1:-1] if iri.startswith("<") and iri.endswith(">") else iri
