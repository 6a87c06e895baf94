"""``rsp serve --subscribe IRI=mqtt://…`` (rsp/serve/subscribe.py) against a real mosquitto: a topic's
messages are the stream's elements, with the results ``rsp run`` gives on the same lines; with
``--data`` a message is acknowledged to the broker only once the log has it, so a service killed with
SIGKILL at random points while a producer publishes loses no message and counts none twice."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import httpx
import pytest
from broker import Broker, publisher, require
from test_serve_durable import EXPECTED, LINES, QUERY, Server, _post

pytestmark = pytest.mark.mqtt
STREAM = "http://example.org/building/temperatures"


def _results(server: Server) -> list[str]:
    return httpx.get(server.base + "/queries/HotRooms/results", params={"after": 0}, timeout=30).text.splitlines()


def _wait_for(server: Server, count: int, timeout: float = 60) -> None:
    """Until the query has ``count`` results (every element up to the last instant arrived)."""
    deadline = time.monotonic() + timeout
    while len(_results(server)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(_results(server))} results of {count} after {timeout} s")
        time.sleep(0.1)


def _register(server: Server) -> None:
    reply = _post(server, "/queries", QUERY)
    assert reply.status_code == 201 or "registered already" in reply.text, reply.text


def test_a_topic_feeds_a_stream_of_the_service(tmp_path: Path) -> None:
    require()
    broker = Broker(tmp_path).start()
    server = Server(tmp_path / "data", "--subscribe", f"{STREAM}={broker.url('temps')}")
    try:
        server.start()
        _register(server)
        client = publisher(broker.port)
        infos = [client.publish("temps", line, qos=1) for line in LINES]
        for info in infos:
            info.wait_for_publish(10)
        client.disconnect()
        client.loop_stop()
        _wait_for(server, len(EXPECTED) - 1)  # the last instant closes at the stream's end
        _post(server, "/streams/advance", "")
        assert _results(server) == EXPECTED
    finally:
        server.stop()
        broker.stop()


@pytest.mark.parametrize("seed", range(2))
def test_killed_while_a_topic_feeds_it_it_loses_no_message_and_counts_none_twice(tmp_path: Path, seed) -> None:
    require()
    rng = random.Random(seed)
    broker = Broker(tmp_path).start()
    server = Server(tmp_path / "data", "--subscribe", f"{STREAM}={broker.url('temps')}")
    published = threading.Event()

    def publish() -> None:  # a producer at its own pace, QoS 1, whatever happens to the service
        client = publisher(broker.port, inflight=5)
        infos = []
        for line in LINES:
            infos.append(client.publish("temps", line, qos=1))
            time.sleep(rng.uniform(0, 0.01))
        for info in infos:
            info.wait_for_publish(30)
        client.disconnect()
        client.loop_stop()
        published.set()

    def fault() -> str:  # the service kills itself right after the log's sync of a message, before its ack
        return f"logged:{rng.randint(5, 60)}"

    try:
        server.start()
        _register(server)
        producer = threading.Thread(target=publish)
        producer.start()
        kills = 0
        while not published.is_set() and kills < 4:
            deadline = time.monotonic() + rng.uniform(0.3, 1.5)
            while time.monotonic() < deadline and server.process.poll() is None:
                time.sleep(0.02)
            server.kill()  # SIGKILL: messages taken and not yet acknowledged are sent again
            kills += 1
            server.start(fault())
        producer.join(60)
        server.kill()  # and once more, to start it without a fault point
        server.start()
        assert published.is_set()
        _wait_for(server, len(EXPECTED) - 1)
        _post(server, "/streams/advance", "")
        assert _results(server) == EXPECTED
        server.stop()
        server.start()
        assert f", {len(LINES)} element(s)," in server.restored[-1]  # each message once in the log
        assert kills > 0
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
        broker.stop()
