"""Streams of ``rsp serve`` fed from MQTT topics (``rsp serve --subscribe IRI=mqtt://HOST:PORT/TOPIC``).

Each message is one request to the service: its lines (N-Triples with or without a time comment — the
arrival time then — or JSON-LD elements, as :func:`rsp.mqtt.message_lines` reads them) are pushed to the
stream whole, or the message is refused whole (logged). A message is acknowledged to the broker (QoS 1,
paho's manual acknowledgement) only once the service has it: with ``--data``, after the write-ahead
log's sync, so the broker keeps and sends again what the service did not make durable. With ``--data``
the client's identity derives from the folder, the stream and the topic, and its session is resumed
after a restart (the broker keeps the messages published meanwhile, for
:data:`rsp.mqtt.SESSION_EXPIRY` seconds); a message the broker sends again (its DUP flag set: it was
delivered and not acknowledged before a crash) that the log already holds is acknowledged and not added
twice (the log keeps each message's digest as its request key).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections import deque

from rsp.errors import RspError

logger = logging.getLogger("rsp.serve")


class Subscription:
    """Stream ``iri`` of ``service`` fed from the topic ``url`` until :meth:`close`."""

    def __init__(self, service, iri: str, url: str, identity: str | None = None) -> None:
        from rsp.mqtt import paho, parse_url, session_properties

        self.service, self.iri, self.url = service, iri, url
        self.topic = parse_url(url, "--subscribe")
        client_module = paho()

        digest = hashlib.sha256(f"{identity}|{iri}|{url}".encode()).hexdigest()[:16] if identity else None
        self.client = client_module.Client(
            client_module.CallbackAPIVersion.VERSION2,
            client_id=f"rsp-serve-{digest}" if digest else "",
            protocol=client_module.MQTTv5,
            manual_ack=True,
        )
        self.client.reconnect_delay_set(min_delay=0.5, max_delay=30)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = self._on_disconnect
        self._properties = session_properties()
        self._resume = digest is not None
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self.messages = 0
        self.connected = threading.Event()

    def start(self) -> None:
        """Connect and take messages (call in the service's event loop)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._task = self._loop.create_task(self._take())
        topic = self.topic
        self.client.connect_async(
            topic.host, topic.port, keepalive=30, clean_start=not self._resume, properties=self._properties
        )
        self.client.loop_start()

    def _on_connect(self, client, _userdata, flags, reason_code, _properties) -> None:
        if reason_code.is_failure:
            logger.warning(f"rsp serve: {self.url}: the broker refused the connection ({reason_code})")
            return
        self.connected.set()
        resumed = " (session resumed)" if getattr(flags, "session_present", False) else ""
        logger.warning(f"rsp serve: {self.url}: connected{resumed}; stream <{self.iri}> at QoS 1")
        client.subscribe(self.topic.topic, qos=1)

    def _on_disconnect(self, _client, _userdata, _flags, reason_code, _properties) -> None:
        self.connected.clear()
        if reason_code.value != 0:
            logger.warning(f"rsp serve: {self.url}: connection lost ({reason_code}); reconnecting")

    def _on_message(self, _client, _userdata, message) -> None:
        arrival = time.time_ns() // 1_000_000
        with self._lock:
            self._queue.append((message.payload, message.mid, message.qos, message.dup, arrival))
        self._loop.call_soon_threadsafe(self._wake.set)

    async def _take(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            with self._lock:
                messages = list(self._queue)
                self._queue.clear()
            for message in messages:
                while not await self._push(*message):
                    await asyncio.sleep(1)  # the log cannot be written now: not acknowledged, tried again

    async def _push(self, payload: bytes, mid: int, qos: int, dup: bool, arrival: int) -> bool:
        """The message given to the service (or refused as malformed, logged), then acknowledged; False
        when the service could not keep it (the log cannot be written)."""
        from rsp.mqtt import message_lines

        self.messages += 1
        where = f"{self.url} message {self.messages}"
        lines, errors = message_lines(payload, arrival, where)
        key = "mqtt " + hashlib.sha256(self.url.encode() + b"\0" + payload).hexdigest()[:32]
        async with self.service.lock:
            try:
                if errors:
                    for error in errors:
                        logger.error(f"{error}; the message is skipped")
                elif lines:
                    self.service.push_ntriples(self.iri, "".join(lines), key, again=not dup)
            except RspError as err:
                from rsp.serve.journal import JournalError

                if isinstance(err, JournalError):
                    logger.error(f"{err}: {where} is not acknowledged, tried again")
                    return False
                logger.error(f"{where}: {err}; the message is skipped")
        if qos:
            self.client.ack(mid, qos)
        return True

    def close(self) -> None:
        """Stop taking messages and disconnect (what was not acknowledged the broker sends again)."""
        if self._task is not None:
            self._task.cancel()
        self.client.disconnect()
        self.client.loop_stop()
