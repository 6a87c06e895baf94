"""MQTT in and out: a live stream source ``mqtt://HOST:PORT/TOPIC`` (for ``--stream`` of ``rsp run``,
``rsp lars`` and ``rsp mtl``) and results published to a topic (``--publish``), over paho-mqtt
(the optional extra ``mqtt``: ``pip install 'rsp-reasoner[mqtt]'``).

A source subscribes at QoS 1 and reconnects with back-off when the broker goes away (each loss and
reconnect is logged on stderr); it has the interface of :class:`rsp.live.LiveSource` (a descriptor to
wait on, complete lines as they arrive), so live input's rules hold for it too: instants close on event
time, ``--idle-close`` and SIGINT / SIGTERM end them. A topic never ends by itself.

Payloads for ``rsp run`` (``kind="ntriples"``) are N-Triples lines, each with a time comment (``# ms``)
or without one (the message's arrival time, wall clock ms, is its time), or JSON-LD elements as
``POST /streams/elements`` takes them (``{"time": ms, "graph": …}`` or a list of them; without
``time``, the arrival time). A message is taken whole or not at all: a malformed one is reported with
its message number (``mqtt://HOST:PORT/TOPIC message 3:2: …``, line 2 of message 3) and skipped.
For ``rsp lars`` and ``rsp mtl`` (``kind="lines"``) payloads are lines of their stream files, passed on;
their readers' errors are placed in the message (:meth:`MqttSource.position`).

Results go out one message per result line, as ``--format jsonl`` prints them, at QoS 1; the run waits
(up to :data:`PUBLISH_WAIT` seconds) for the broker to acknowledge every one before it ends.
"""

from __future__ import annotations

import bisect
import json
import os
import select
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import unquote, urlsplit

from rsp.errors import Position, RspError, StreamError

SCHEME = "mqtt://"
DEFAULT_PORT = 1883
BACKOFF = (0.5, 30.0)
"""Seconds between reconnection attempts: the first, doubled after each failure up to the second."""
PUBLISH_WAIT = 10.0
"""Seconds the end of a run waits for the broker to acknowledge the results published."""
DRAIN_WAIT = 2.0
"""Seconds a stopping source waits for the broker to confirm its unsubscription (:meth:`MqttSource.drain`)."""
READ_PACKETS = 10_000
"""At most this many packets read from a source's socket per read, so that instants close in time."""
KEPT_SPANS = 65_536
"""How many recent messages a source remembers the lines of, to place a reader's error in its message."""
SESSION_EXPIRY = 300
"""Seconds the broker keeps a source's session (its subscription, QoS 1 messages queued while the
connection is down) after a disconnection; a restarted broker without persistence has none."""


def is_mqtt(path: str) -> bool:
    """Whether a ``--stream`` or ``--publish`` value names an MQTT topic."""
    return path.startswith(SCHEME)


@dataclass(frozen=True)
class Topic:
    """An ``mqtt://HOST[:PORT]/TOPIC`` address."""

    host: str
    port: int
    topic: str
    url: str


def parse_url(url: str, option: str = "--stream") -> Topic:
    """``mqtt://HOST[:PORT]/TOPIC`` (the topic may hold ``/`` and, for a source, MQTT wildcards, written
    ``+`` and ``%23`` for ``#``).

    >>> parse_url("mqtt://127.0.0.1:1884/sensors/temps")
    Topic(host='127.0.0.1', port=1884, topic='sensors/temps', url='mqtt://127.0.0.1:1884/sensors/temps')
    """
    if not url.startswith(SCHEME):
        raise RspError(f"{option} {url}: not an MQTT address: write mqtt://HOST:PORT/TOPIC")
    parts = urlsplit(url)
    problem = ""
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        port, problem = 0, "the port is not a number from 1 to 65535"
    topic = unquote(parts.path[1:]) if parts.path.startswith("/") else ""
    if not problem and not parts.hostname:
        problem = "no broker host"
    if not problem and not topic:
        problem = "no topic"
    if problem:
        raise RspError(
            f"{option} {url}: {problem}: write mqtt://HOST:PORT/TOPIC, e.g. mqtt://localhost:1883/sensors"
        )
    return Topic(parts.hostname, port, topic, url)


def paho():
    """The paho-mqtt client module, or an error saying how to get it (the extra ``mqtt``)."""
    from rsp.extras import MissingExtraError, install_hint, require

    client = require("paho.mqtt.client", "mqtt", "MQTT")
    if not hasattr(client, "CallbackAPIVersion"):
        raise MissingExtraError(f"MQTT needs paho-mqtt 2.0 or later: {install_hint('mqtt')} --upgrade")
    return client


def session_properties(expiry: int = 0):
    """The CONNECT properties of an MQTT 5 client whose broker session outlives a disconnection by
    ``expiry`` seconds (default :data:`SESSION_EXPIRY`)."""
    from rsp.extras import require

    paho()
    packet_types = require("paho.mqtt.packettypes", "mqtt", "MQTT").PacketTypes
    properties = require("paho.mqtt.properties", "mqtt", "MQTT").Properties(packet_types.CONNECT)
    properties.SessionExpiryInterval = expiry or SESSION_EXPIRY
    return properties


def _client(topic: Topic, role: str):
    """A paho client for ``topic`` (MQTT 5, a session kept for :data:`SESSION_EXPIRY` seconds, back-off
    :data:`BACKOFF`); not connected yet."""
    client_module = paho()

    client = client_module.Client(
        client_module.CallbackAPIVersion.VERSION2,
        client_id=f"rsp-{role}-{uuid.uuid4().hex[:12]}",
        protocol=client_module.MQTTv5,
    )
    client.reconnect_delay_set(min_delay=BACKOFF[0], max_delay=BACKOFF[1])
    client.max_queued_messages_set(0)  # results wait (in memory) while the broker is away (65,535 at most)
    client.max_inflight_messages_set(1000)
    return client, session_properties()


class _Link:
    """The connection of a source or a publisher: its state logged on stderr, a reconnection counted."""

    def __init__(self, topic: Topic, what: str, log: TextIO | None = None) -> None:
        self.topic = topic
        self.what = what
        self.log = log if log is not None else sys.stderr
        self.connected = threading.Event()
        self.connections = 0
        self.failures = 0
        self.closing = False  # our own disconnection at the end is not logged

    def say(self, text: str) -> None:
        print(f"rsp: {self.topic.url}: {text}", file=self.log, flush=True)

    def on_connect(self, reason_code) -> bool:
        if reason_code.is_failure:
            self.say(f"the broker refused the connection ({reason_code}); retrying")
            return False
        self.connections += 1
        self.failures = 0
        self.connected.set()
        if self.connections > 1:
            self.say(f"reconnected to {self.topic.host}:{self.topic.port}")
        return True

    def on_disconnect(self, reason_code) -> None:
        self.connected.clear()
        if self.closing:
            return
        self.say(
            f"connection lost ({reason_code}); reconnecting {self.what} with back-off "
            f"({BACKOFF[0]:g} s doubling up to {BACKOFF[1]:g} s)"
        )

    def on_connect_fail(self) -> None:
        self.failures += 1
        if self.failures == 1 or self.failures % 10 == 0:
            where = f"{self.topic.host}:{self.topic.port}"
            tries = "try" if self.failures == 1 else "tries"
            self.say(f"cannot reach the broker {where} ({self.failures} {tries}); retrying")


class MqttSource:
    """A live stream source reading an MQTT topic (see the module docstring); ``kind`` is ``ntriples``
    (``rsp run``: lines checked, stamped with the arrival time when they have no time) or ``lines``.

    The client runs in the reader's own thread, not in a thread of its own: :meth:`read` reads what the
    socket holds (up to :data:`READ_PACKETS` packets), acknowledges it and keeps the connection alive, and
    :attr:`fd` is the socket to wait on. A second Python thread would take the interpreter's lock from the
    reader at every system call of every message (four or five each): at 10,000 messages/s that cost
    about 80 µs of CPU per message, against the 18 µs the client needs alone (benchmarks/mqtt.py).
    Reconnection waits :data:`BACKOFF`, checked at each read (the reader looks at least once a second)."""

    regular = False
    follow = False

    def __init__(self, url: str, kind: str = "ntriples", log: TextIO | None = None) -> None:
        self.topic = parse_url(url)
        self.path = self.name = url
        self.kind = kind
        self.ended = False
        self.last_input = time.monotonic()
        self.messages = 0  # numbered as they arrive, from 1
        self.lines_given = 0
        self._spans: list[tuple[int, int]] = []  # (first line, message number) of the recent messages
        self.rejected = 0
        self.log = log if log is not None else sys.stderr
        self._queue: deque = deque()
        self._received = 0
        self._idle, self._never = os.pipe()  # what to wait on while there is no connection: never ready
        self._link = _Link(self.topic, "and subscribing again", self.log)
        self._client, self._properties = _client(self.topic, "source")
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_subscribe = self._on_subscribe
        self._client.on_message = self._on_message
        self._client.on_unsubscribe = self._on_unsubscribe
        self._unsubscribed = False
        self._delay = BACKOFF[0]
        self._retry_at = 0.0
        self._success = paho().MQTT_ERR_SUCCESS
        self._connect(first=True)

    @property
    def fd(self) -> int:
        """The descriptor to wait on: the broker's socket, or one never ready while disconnected."""
        sock = self._client.socket()
        return sock.fileno() if sock is not None else self._idle

    def _connect(self, first: bool = False) -> None:
        try:
            if first:
                self._client.connect(
                    self.topic.host, self.topic.port, keepalive=30, properties=self._properties
                )
            else:
                self._client.reconnect()
        except (OSError, ValueError):  # refused, unreachable, unknown host: try again after the back-off
            self._link.on_connect_fail()
            self._lost()

    def _lost(self) -> None:
        """Schedule the next connection attempt, the back-off doubled."""
        self._retry_at = time.monotonic() + self._delay
        self._delay = min(2 * self._delay, BACKOFF[1])

    def _on_connect(self, client, _userdata, _flags, reason_code, _properties) -> None:
        if self._link.on_connect(reason_code):
            self._delay = BACKOFF[0]
            client.subscribe(self.topic.topic, qos=1)

    def _on_disconnect(self, _client, _userdata, _flags, reason_code, _properties) -> None:
        self._link.on_disconnect(reason_code)
        if not self._link.closing:
            self._lost()

    def _on_subscribe(self, _client, _userdata, _mid, reason_codes, _properties) -> None:
        if any(code.is_failure for code in reason_codes):
            self._link.say(f"the broker refused the subscription ({reason_codes[0]})")
            return
        self._link.say(f"subscribed to {self.topic.topic!r} at QoS 1")

    def _on_unsubscribe(self, _client, _userdata, _mid, _reason_codes, _properties) -> None:
        self._unsubscribed = True

    def _on_message(self, _client, _userdata, message) -> None:
        self._received += 1
        self._queue.append((message.payload, time.time_ns() // 1_000_000))

    def _service(self) -> None:
        """The client's work: connect when the back-off allows, read the packets the socket holds
        (paho acknowledges each message as it is read), send what waits, keep the connection alive."""
        client = self._client
        if self._link.closing:
            return
        if client.socket() is None:
            if time.monotonic() < self._retry_at:
                return
            self._connect()
            if client.socket() is None:
                return
        for _ in range(READ_PACKETS):
            received = self._received
            if client.loop_read() != self._success or client.socket() is None:
                if client.socket() is None and self._retry_at <= time.monotonic():
                    self._lost()
                return
            if self._received == received:  # another packet, or none: go on while the socket has more
                sock = client.socket()
                if sock is None or not select.select([sock], [], [], 0)[0]:
                    break
        if client.want_write():
            client.loop_write()
        if client.loop_misc() != self._success and client.socket() is None:
            if self._retry_at <= time.monotonic():
                self._lost()

    def read(self) -> list[str]:
        """The lines of the messages received since the last call ([] if none)."""
        self._service()
        queue = self._queue
        if not queue:
            return []
        messages = list(queue)
        queue.clear()
        lines: list[str] = []
        spans = self._spans
        for payload, arrival in messages:
            self.messages += 1
            taken = self._lines(payload, arrival, self.messages)
            if taken:
                spans.append((self.lines_given + len(lines) + 1, self.messages))
                lines.extend(taken)
        if len(spans) > 2 * KEPT_SPANS:
            del spans[:KEPT_SPANS]
        self.lines_given += len(lines)
        self.last_input = time.monotonic()
        return lines

    def position(self, line: int) -> Position:
        """Where line ``line`` of the topic (counted from 1 over the lines read) came from: its message
        and the line in it (``mqtt://HOST:PORT/TOPIC message 3:2``), for the last :data:`KEPT_SPANS`
        messages at least."""
        spans = self._spans
        index = bisect.bisect_right(spans, (line, sys.maxsize)) - 1
        if index >= 0 and line <= self.lines_given:
            first, number = spans[index]
            return Position(self._where(number), line - first + 1)
        return Position(self.name, line)

    def _lines(self, payload: bytes, arrival: int, number: int) -> list[str]:
        """A message's lines, or [] (reported) when it is malformed."""
        lines, errors = message_lines(payload, arrival, self._where(number), self.kind)
        if errors:
            self._reject(number, errors)
            return []
        return lines

    def _where(self, number: int) -> str:
        return f"{self.name} message {number}"

    def _reject(self, number: int, errors: list[StreamError]) -> None:
        self.rejected += 1
        for error in errors:
            print(error, file=self.log)
        skipped = f"rsp: {self.name}: message {number} skipped (nothing of it was read)"
        print(skipped, file=self.log, flush=True)

    def quiet_for(self) -> float:
        return time.monotonic() - self.last_input

    def drain(self) -> list[str]:
        """At a stop: unsubscribe, read (and acknowledge) what the broker sent until it confirms, then
        disconnect, and give the lines of every message taken: what the broker counts as delivered is
        what the run read, no more, no less. (Closing a socket that still holds unread bytes resets the
        connection, and the broker then drops the acknowledgements it had not read yet: hence reading
        up to the confirmation, at most :data:`DRAIN_WAIT` seconds.)"""
        client = self._client
        if client.socket() is not None and not self._link.closing:
            self._unsubscribed = False
            client.unsubscribe(self.topic.topic)
            deadline = time.monotonic() + DRAIN_WAIT
            while not self._unsubscribed and time.monotonic() < deadline:
                sock = client.socket()
                if sock is None:
                    break
                select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
                self._service()
        lines = self.read()
        self._disconnect()
        return lines

    def _disconnect(self) -> None:
        if not self._link.closing:
            self._link.closing = True
            self._client.disconnect()

    def close(self) -> None:
        self._disconnect()
        os.close(self._idle)
        os.close(self._never)


def message_lines(
    payload: bytes, arrival: int, where: str, kind: str = "ntriples"
) -> tuple[list[str], list[StreamError]]:
    """A message's lines (``kind`` ``ntriples``: checked N-Triples lines with their times, the arrival
    time for those without; ``lines``: its lines as they are), or the errors that refuse it whole."""
    from rsp.io.ntriples import is_timed_line, text_lines

    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as err:
        return [], [StreamError(f"not UTF-8 text (byte {err.start + 1})", Position(where))]
    if text.startswith("\ufeff"):
        text = text[1:]
    if kind != "ntriples":
        return [line if line[-1:] == "\n" else line + "\n" for line in text_lines(text)], []
    if text.find("\n", 0, len(text) - 1) < 0 and "\r" not in text and is_timed_line(text):
        return [text if text[-1:] == "\n" else text + "\n"], []  # the common message: one timed line
    if text.lstrip()[:1] in ("{", "["):
        return jsonld_lines(text, arrival, where)
    return ntriples_lines(text_lines(text), arrival, where)


def ntriples_lines(lines: list[str], arrival: int, where: str) -> tuple[list[str], list[StreamError]]:
    """N-Triples lines of one message, each triple's ending in its time comment (``arrival`` for a line
    without one) and a line feed, blank and comment lines kept (a line keeps its number); the errors of
    the malformed lines, positioned at ``where:LINE``.

    >>> lines, errors = ntriples_lines(
    ...     ['<a:x> <a:p> "x" .', '<a:x> <a:p> 1 . # 5', '<a:x> <a:p> <a:y> . # 3'], 7, "t"
    ... )
    >>> lines
    ['<a:x> <a:p> "x" . # 7\\n', '<a:x> <a:p> <a:y> . # 3\\n']
    >>> [str(e) for e in errors]
    ["t:2: expected an IRI, blank node or literal as object, found '1'"]
    """
    from rsp.io.ntriples import is_timed_line, parse_line

    out: list[str] = []
    errors: list[StreamError] = []
    for number, line in enumerate(lines, 1):
        if is_timed_line(line):
            out.append(line if line[-1:] == "\n" else line + "\n")
            continue
        try:
            parsed = parse_line(line)
        except ValueError as err:
            errors.append(StreamError(str(err), Position(where, number)))
            continue
        if parsed is None:  # blank or a comment: kept, so that a line keeps its number in the message
            out.append(line if line[-1:] == "\n" else line + "\n")
            continue
        (s, p, o), comment = parsed
        word = comment.split(None, 1)[0] if comment and comment.strip() else ""
        if word and word[0] in "0123456789-+":
            if not word.isascii() or not word.isdigit():
                message = f"time comment {word!r} is not a time (milliseconds ≥ 0)"
                errors.append(StreamError(message, Position(where, number)))
                continue
            out.append(f"{s} {p} {o} . # {word}\n")
        else:
            out.append(f"{s} {p} {o} . # {arrival}\n")
    return out, errors


def jsonld_lines(text: str, arrival: int, where: str) -> tuple[list[str], list[StreamError]]:
    """JSON-LD elements (``{"time": ms, "graph": JSON-LD}`` or a list of them, as ``POST
    /streams/elements`` takes them; without ``time`` the arrival time) as timed N-Triples lines."""
    from rdflib import Graph

    from rsp.background.ontology import nt_term

    try:
        document = json.loads(text)
    except ValueError as err:
        return [], [StreamError(f"not JSON: {err}", Position(where))]
    items = document if isinstance(document, list) else [document]
    lines: list[str] = []
    errors: list[StreamError] = []
    for index, item in enumerate(items, 1):
        position = Position(where, index) if isinstance(document, list) else Position(where)
        stamp = item.get("time", arrival) if isinstance(item, dict) else None
        if not isinstance(stamp, int) or isinstance(stamp, bool) or stamp < 0:
            errors.append(StreamError('an element is {"time": ms ≥ 0, "graph": JSON-LD}', position))
            continue
        try:
            graph = Graph().parse(data=json.dumps(item.get("graph", {})), format="json-ld")
        except Exception as err:  # rdflib's JSON-LD parser raises many kinds of error
            errors.append(StreamError(f"not JSON-LD: {err}", position))
            continue
        triples = sorted(tuple(nt_term(t) for t in triple) for triple in graph)  # not hash order
        lines.extend(f"{s} {p} {o} . # {stamp}\n" for s, p, o in triples)
    return lines, errors


class TopicPublisher:
    """A text handle whose every complete line is published to an MQTT topic at QoS 1 (the results
    writers of ``rsp run --publish`` write to it); :meth:`close` waits for the acknowledgements."""

    def __init__(self, url: str, log: TextIO | None = None) -> None:
        self.topic = parse_url(url, "--publish")
        if any(c in self.topic.topic for c in "+#"):
            raise RspError(f"--publish {url}: a topic to publish to has no wildcard (+ or #)")
        self.log = log if log is not None else sys.stderr
        self._link = _Link(self.topic, "(results wait in memory)", self.log)
        self._client, properties = _client(self.topic, "publisher")
        self._client.on_connect = lambda _c, _u, _f, reason, _p: self._link.on_connect(reason)
        self._client.on_disconnect = lambda _c, _u, _f, reason, _p: self._link.on_disconnect(reason)
        self._client.on_connect_fail = lambda _c, _u: self._link.on_connect_fail()
        self._client.on_publish = self._on_publish
        self._partial = ""
        self.published = 0
        self.acknowledged = 0
        self.dropped = 0
        self._queue_full = paho().MQTT_ERR_QUEUE_SIZE
        self._acks = threading.Condition()
        self._client.connect_async(self.topic.host, self.topic.port, keepalive=30, properties=properties)
        self._client.loop_start()

    def _on_publish(self, _client, _userdata, _mid, _reason_code, _properties) -> None:
        with self._acks:
            self.acknowledged += 1
            self._acks.notify_all()

    def write(self, text: str) -> int:
        data = self._partial + text
        cut = data.rfind("\n") + 1
        self._partial = data[cut:]
        for line in data[:cut].splitlines():
            # while the broker is away paho keeps the message and sends it once connected again, up to
            # 65,535 waiting (MQTT's packet ids): past that a message is refused, counted in dropped
            info = self._client.publish(self.topic.topic, line.encode("utf-8"), qos=1)
            if info.rc == self._queue_full:
                self.dropped += 1
            else:
                self.published += 1
        return len(text)

    def flush(self) -> None:
        """Lines go out as they are written (paho sends them from its own thread)."""

    def close(self) -> None:
        """Wait (up to :data:`PUBLISH_WAIT` s) until the broker acknowledged every line, then disconnect;
        lines left unacknowledged are counted on stderr."""
        if self._partial:
            self.write("\n")
        deadline = time.monotonic() + PUBLISH_WAIT
        with self._acks:
            while self.acknowledged < self.published and time.monotonic() < deadline:
                self._acks.wait(max(0.0, deadline - time.monotonic()))
            unacknowledged = self.published - self.acknowledged
        if self.dropped:
            self._link.say(
                f"{self.dropped:,} result messages dropped: more than 65,535 waited for the broker"
            )
        if unacknowledged > 0:
            self._link.say(
                f"{unacknowledged:,} of {self.published:,} result messages not acknowledged by the broker "
                f"after {PUBLISH_WAIT:g} s"
            )
        self._link.closing = True
        self._client.disconnect()
        self._client.loop_stop()


@contextmanager
def publishing(url: str | None) -> Iterator[TopicPublisher | None]:
    """The publisher of ``--publish URL`` (None without one), closed at the end (its acknowledgements
    awaited, :meth:`TopicPublisher.close`), also when the run fails."""
    if not url:
        yield None
        return
    publisher = TopicPublisher(url)
    try:
        yield publisher
    finally:
        publisher.close()


def publish_results(url: str, handles) -> tuple[TopicPublisher, list]:
    """``--publish URL``: each query's results also written as jsonl lines to the topic; returns the
    publisher (to close at the end) and the writers (to close before it)."""
    from rsp.io.results import make_writer

    publisher = TopicPublisher(url)
    writers = []
    for handle in handles:
        writer = make_writer("jsonl", publisher, variables=handle.variables, query_name=handle.name)
        handle.subscribe(writer.write)
        writers.append(writer)
    return publisher, writers
