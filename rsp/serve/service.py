"""The state behind ``rsp serve``: one :class:`rsp.runtime.Engine`, its registered queries and streams,
each query's recent results and the live subscribers they are pushed to. No HTTP here: the routes of
:mod:`rsp.serve.app` call these methods, as a notebook calls the engine.

With a data folder (``rsp serve --data DIR``) every change a request makes — a query registered or
deleted, a stream, a graph, elements, an instant closed — is a record of the service's write-ahead log
(:mod:`rsp.serve.journal`), synced before the method returns, so before the service answers 2xx. A
service started on an existing folder replays the log into a new engine: the same queries, graphs,
windows and results, every result an event with its id (query and instant) that a subscriber resumes
after. Elements sent again with the ``key`` of a request already logged are not added twice."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import tempfile
from collections import deque
from pathlib import Path

from rsp.errors import Position, RspError, StreamError

RECENT = 100
"""Results each query keeps for ``GET /queries/{name}/results``."""

RETAIN = 1000
"""Instants each query keeps for subscribers that resume after an event id (``rsp serve --retain``)."""

FAULT_ENV = "RSP_SERVE_FAULT"
"""Fault injection for the kill tests: ``POINT:N`` makes the process SIGKILL itself the Nth time a
request reaches POINT (``logged``: its elements synced to the log, not yet in the engine; ``pushed``: in
the engine, not yet answered)."""

_faults: dict[str, int] = {}


def _fault(point: str) -> None:
    wanted = os.environ.get(FAULT_ENV)
    if wanted and wanted.startswith(point + ":"):
        _faults[point] = _faults.get(point, 0) + 1
        if str(_faults[point]) == wanted.split(":", 1)[1]:
            os.kill(os.getpid(), signal.SIGKILL)


COMPACT_BYTES = 64 * 1024 * 1024
"""The smallest log that is compacted (``rsp serve --compact-bytes``)."""

KEYS = 100_000
"""Request keys remembered for retries (``Idempotency-Key``): the newest this many."""


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

    def __init__(
        self,
        entailment: str = "none",
        data: str | Path | None = None,
        retain: int = RETAIN,
        compact_bytes: int = COMPACT_BYTES,
    ) -> None:
        from rsp.runtime import Engine

        self.engine = Engine(entailment=entailment)
        self.streams: set[str] = set()
        self.recent: dict[str, deque] = {}
        self.history: dict[str, deque] = {}
        """Each query's last ``retain`` results, for subscribers resuming after an event id."""
        self.retain = retain
        self.listeners: dict[str, set[asyncio.Queue]] = {}
        self.lock = asyncio.Lock()
        self.compact_bytes = compact_bytes
        """The log is compacted when it grows over this, and over twice its size after the last time."""
        self._compact_at = compact_bytes
        self._retain_from: dict[str, int] = {}
        self._late: set[tuple[int, int]] = set()
        """The (batch, index) of each element late for some query in the request pushed now: an element
        late for two queries is one late element, as ``rsp run`` counts it."""
        self._batch = 0
        self.engine.on_late_element = lambda _handle, index: self._late.add((self._batch, index))
        self.answered: dict[str, dict] = {}
        """The answer to each request key logged (the newest :data:`KEYS`)."""
        self.graphs = 0
        """Graphs loaded by requests (``POST /graphs``)."""
        self.journal = None
        self.restored: dict[str, int] = {}
        """What the log gave back at start (``rsp serve --data``): records, queries, elements, cut bytes."""
        self._entailment = entailment
        if data is not None:
            self.restore(data)

    # -- queries --------------------------------------------------------------------------------------
    def handles(self) -> dict:
        return {handle.name: handle for handle in self.engine.queries}

    # -- the write-ahead log ----------------------------------------------------------------------------
    def restore(self, data: str | Path) -> None:
        """Open the write-ahead log in ``data`` (made if missing; refused if another service holds it)
        and replay it: :attr:`restored` says what came back. Load the ontologies given at start first."""
        from rsp.serve.journal import Journal, JournalError

        data, entailment = Path(data), self._entailment
        self.journal = Journal(data)
        try:
            counts = {"records": 0, "queries": 0, "graphs": 0, "elements": 0}
            replay = {"register": self._replay_register,
                      "delete": lambda r: self.delete(r["name"], log=False),
                      "stream": lambda r: self.add_stream(r["iri"], log=False),
                      "unstream": lambda r: self.delete_stream(r["iri"], log=False),
                      "graph": lambda r: self.load(r["text"], r["suffix"], log=False),
                      "push": self._replay_push,
                      "advance": lambda r: self.advance(r.get("time"), r.get("name"), log=False),
                      "keys": lambda r: self.answered.update(r["answered"]),
                      "retain": lambda r: self._retain_from.__setitem__(r["name"], r["from"])}  # fmt: skip
            first = True
            for record in self.journal.records():
                counts["records"] += 1
                op = record.get("op")
                if first:
                    first = False
                    if op == "start" and record.get("entailment") != entailment:
                        raise JournalError(
                            f"--data {data} was written by a service with --entailment "
                            f"{record.get('entailment')}: start it with the same, or give another folder"
                        )
                    if op == "start":
                        continue
                if op not in replay:
                    raise JournalError(f"--data {data}: record {counts['records']} is not rsp's ({op!r})")
                try:
                    replay[op](record)
                except RspError:  # refused when it was made too (and answered 4xx): the same again
                    continue
                counts["queries"] += op == "register"
                counts["graphs"] += op == "graph"
                counts["elements"] += sum(len(batch[1]) for batch in record["batches"]) if op == "push" else 0
            if first:
                self.journal.append([{"op": "start", "entailment": entailment}])
            counts["cut"] = self.journal.cut
            self.restored = counts
            self._retain_from.clear()
            self._compact_at = max(self.compact_bytes, 2 * self.journal.size())
        except BaseException:
            self.journal.close()
            raise

    def compact(self) -> None:
        """Rewrite the log with only what a restart still needs (:mod:`rsp.serve.compaction`)."""
        from rsp.serve.compaction import compact, horizons

        queries = []
        for handle in self.engine.queries:
            kept = self.history.get(handle.name)
            oldest = kept[0].time if kept else handle.closed_until
            queries.append((handle.name, handle.query, oldest))
        needed, retained = horizons(queries)
        self.journal.rewrite(compact(list(self.journal.records()), needed, retained, dict(self.answered)))
        self._compact_at = max(self.compact_bytes, 2 * self.journal.size())

    def _log(self, record: dict) -> None:
        """Make ``record`` durable (no-op without a data folder); raises
        :class:`~rsp.serve.journal.JournalError` when it cannot be written."""
        if self.journal is not None:
            self.journal.append([record])

    def _replay_register(self, record: dict) -> None:
        self.register(record["text"], record.get("name"), log=False)

    def _replay_push(self, record: dict) -> None:
        # (time, triples, lines): the lines where the request had the triples (a log written before they
        # were logged has none, and its late elements are counted but not named)
        batches = [(time, [tuple(t) for t in triples], *rest) for time, triples, *rest in record["batches"]]
        answer = self._push(record["stream"], batches)
        self._remember(record.get("key"), answer)

    def _remember(self, key: str | None, answer: dict) -> None:
        if key is None:
            return
        self.answered[key] = answer
        if len(self.answered) > KEYS:
            del self.answered[next(iter(self.answered))]

    def close(self) -> None:
        """Release the data folder (the log is synced after every request already)."""
        if self.journal is not None:
            self.journal.close()

    # -- queries (continued) ------------------------------------------------------------------------
    def register(self, text: str, name: str | None = None, *, log: bool = True) -> list:
        """Register the queries of ``text`` (their handles, each with its ``warnings``); their streams are
        registered too."""
        if log:  # logged first: a request the engine refuses is refused again when the log is replayed
            self._log({"op": "register", "text": text, "name": name})
        handles = self.engine.register_all(text, "<request>", name)
        for handle in handles:
            handle.keep = False
            self.recent[handle.name] = deque(maxlen=RECENT)
            self.history[handle.name] = deque(maxlen=self.retain)
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

    def delete(self, name: str, *, log: bool = True) -> None:
        handle = self.handle(name)
        if log:
            self._log({"op": "delete", "name": name})
        self.engine.queries.remove(handle)
        del self.recent[name]
        self.history.pop(name, None)
        for listener in self.listeners.pop(name, ()):
            listener.put_nowait(None)

    def _publish(self, handle, result) -> None:
        if self._retain_from and result.time < self._retain_from.get(handle.name, result.time):
            return  # replaying a compacted log: an instant before the retained ones, from partial windows
        self.recent[handle.name].append(result)
        self.history[handle.name].append(result)
        for listener in self.listeners.get(handle.name, ()):
            listener.put_nowait(result)

    def results(self, name: str, fmt: str = "jsonl", after: int | None = None) -> list[str]:
        """The query's last :data:`RECENT` results as lines, or, ``after`` an instant, every result kept
        (:attr:`history`) for a later instant."""
        handle = self.handle(name)
        chosen = self.recent[name] if after is None else self.since(name, after)[0]
        return [result_line(r, handle.variables, fmt) for r in chosen]

    def since(self, name: str, after: int) -> tuple[list, int | None]:
        """The results kept for instants after ``after``, and the oldest instant kept when results after
        ``after`` may be missing (older than the retention), else None."""
        kept = self.history[name]
        results = [r for r in kept if r.time > after]
        oldest = kept[0].time if kept else None
        gap = oldest if kept and len(kept) == kept.maxlen and oldest > after and results else None
        return results, gap

    def listen(self, name: str, after: int | None = None) -> asyncio.Queue:
        """A queue of the query's results from now on; ``after`` an instant, first those kept for later
        instants (nothing in between is lost: no other task runs between the two)."""
        self.handle(name)
        queue: asyncio.Queue = asyncio.Queue()
        if after is not None:
            for result in self.since(name, after)[0]:
                queue.put_nowait(result)
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
    def add_stream(self, iri: str, *, log: bool = True) -> str:
        """Register stream ``iri`` (with or without angle brackets); returns it without them. An IRI
        that is not absolute or not one term is refused (and not logged)."""
        from rsp.io.ntriples import term_problem

        iri = _bare(iri)
        problem = term_problem(f"<{iri}>", "subject")
        if problem is not None:
            raise RspError(f"the stream IRI {iri[:80]!r} is refused: {problem}")
        if log:
            self._log({"op": "stream", "iri": iri})
        self.streams.add(iri)
        return iri

    def delete_stream(self, iri: str, *, log: bool = True) -> None:
        iri = _bare(iri)
        if iri not in self.streams:
            raise NotFound(f"no stream {iri} (GET /streams lists them)")
        if log:
            self._log({"op": "unstream", "iri": iri})
        self.streams.discard(iri)

    def push_ntriples(self, iri: str, text: str, key: str | None = None, *, again: bool = False) -> dict:
        """N-Triples lines ending in ``# <ms>`` for stream ``iri``: all of them, or none if a line is bad
        (a :class:`StreamError` per bad line, positioned in the request body). ``key`` names the
        request: sent again with a key already answered, nothing is added and the first answer is
        returned — unless ``again`` (a new request whose key may have been seen: added and kept)."""
        from rsp.io.ntriples import read_triple_batches, text_lines

        if key is not None and key in self.answered and not again:
            return self.answered[key]
        iri = self._stream(iri)
        errors: list[StreamError] = []
        lines = text_lines(text)
        batches = list(
            read_triple_batches(lines, "<request>", on_error=errors.append, late_policy=None, numbered=True)
        )
        if errors:
            raise BadElements(errors)
        return self._push_logged(iri, batches, key)

    def _push_logged(self, iri: str, batches, key: str | None) -> dict:
        self._log({"op": "push", "stream": iri, "batches": batches, "key": key})
        _fault("logged")
        answer = self._push(iri, batches)
        self._remember(key, answer)
        _fault("pushed")
        if self.journal is not None and self.journal.size() > self._compact_at:
            try:
                self.compact()
            except RspError as err:  # the request is logged and applied: a failed rewrite changes nothing
                import logging

                logging.getLogger("rsp.serve").warning(f"{err}; the log stays as it was")
                self._compact_at = 2 * self.journal.size()
        return answer

    def push_jsonld(self, iri: str, document, key: str | None = None) -> dict:
        """JSON-LD elements: a list of ``{"time": ms, "graph": <JSON-LD>}`` (or one such object); an
        element with no graph, other keys, or a graph that gives no triple (keys that are neither IRIs
        nor in a ``@context``) is refused, with its index in the list as its line."""
        from rdflib import Graph

        from rsp.background.ontology import nt_term

        if key is not None and key in self.answered:
            return self.answered[key]
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
        return self._push_logged(iri, batches, key)

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
        for self._batch, (time_, triples, *_lines) in enumerate(batches):
            count += len(triples)
            if read:
                self.engine.push(triples, time_, f"<{iri}>", plain=True)
        lines = sorted({batches[b][2][i] for b, i in self._late if len(batches[b]) > 2})
        return {"stream": iri, "elements": count, "late": len(self._late), "late_lines": lines}

    def advance(self, time: int | None = None, name: str | None = None, *, log: bool = True) -> dict:
        """Close instants no element will come for any more: up to ``time`` (ms), or, without it, the
        end of the stream as ``rsp run`` has it at the end of its files (every instant up to the first
        one after the last element); for query ``name`` or for all. Elements older than an instant
        closed are late afterwards. Returns each query's last closed instant."""
        handles = [self.handle(name)] if name is not None else list(self.engine.queries)
        if log:
            self._log({"op": "advance", "time": time, "name": name})
        for handle in handles:
            if time is None:
                handle.finish()
            else:
                handle.advance(time)
        return {handle.name: handle.closed_until for handle in handles}

    def load(self, text: str, suffix: str, *, log: bool = True) -> int:
        """An ontology or static graph for the queries registered from now on (JSON-LD with its contexts
        in the text: a remote one is refused)."""
        if suffix == ".jsonld":
            try:
                remote = remote_contexts(json.loads(text))
            except (ValueError, RecursionError):
                remote = []  # not JSON: the parser says where
            if remote:
                raise RspError(_remote_message(remote), Position("<request>"))
        if log:  # logged first, as a registration
            self._log({"op": "graph", "text": text, "suffix": suffix})
        self.graphs += 1  # the graph's name in the service: the same after a restart
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"graph{suffix}"
            path.write_text(text, encoding="utf-8")
            return self.engine.load_ontology(path, source=f"<request graph {self.graphs}>")


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
