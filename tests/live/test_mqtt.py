"""MQTT in and out (rsp/mqtt.py) against a real broker (tests/support/broker.py: mosquitto on a loopback
port): ``rsp run --stream mqtt://…`` writes what ``rsp run`` writes for the same lines in a file (byte
for byte with time comments; without them, with the arrival times the run reports), a broker restart
loses nothing published after the reconnection, a malformed message is reported with its number and
skipped, and ``--publish`` delivers every result line in order. The reference is ``rsp run`` on a file,
itself checked against the oracles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import broker as mqtt_broker
import pytest
from paths import ROOT

from rsp.cli import main

pytestmark = pytest.mark.mqtt

BUILDING = ROOT / "examples" / "building"
QUERY = BUILDING / "hot-rooms.rq"
STREAM = BUILDING / "temperatures.nt"
BUILDING_ARGS = ["--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs"]
WAIT = 30.0  # seconds a test waits for the run to catch up before failing

ARRIVALS = """REGISTER QUERY Arrivals AS
PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>
SELECT ?s ?v ?t
FROM STREAM <http://ex.org/a> [RANGE 1000s STEP 200ms]
WHERE { ?s <http://ex.org/p> ?v BIND(f:timestamp(?s, <http://ex.org/p>, ?v) AS ?t) }
ORDER BY ?t ?s
"""


@pytest.fixture
def broker(tmp_path):
    mqtt_broker.require()
    running = mqtt_broker.Broker(tmp_path).start()
    try:
        yield running
    finally:
        running.stop()


class Run:
    """An ``rsp`` process whose stdout and stderr are collected as they come."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rsp", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._collect, args=(self.process.stdout, self.out), daemon=True),
            threading.Thread(target=self._collect, args=(self.process.stderr, self.err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _collect(stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line)

    def wait_for(self, condition, what: str) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if condition():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail(
            f"{what}: not within {WAIT:g} s; stderr:\n{''.join(self.err)}\nstdout:\n{''.join(self.out)}"
        )

    def stderr_count(self, text: str) -> int:
        return sum(text in line for line in self.err)

    def stop(self) -> tuple[str, str]:
        """SIGTERM, as a service manager stops it; returns (stdout, stderr) once it has ended."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(WAIT)
        for reader in self._readers:
            reader.join(WAIT)
        return "".join(self.out), "".join(self.err)


def file_run(tmp_path: Path, query: Path, lines: list[str], *extra: str) -> str:
    """What ``rsp run`` writes for ``lines`` in a stream file."""
    stream = tmp_path / "reference.nt"
    stream.write_text(
        "".join(line if line.endswith("\n") else line + "\n" for line in lines), encoding="utf-8"
    )
    out = tmp_path / "reference.jsonl"
    assert main(["run", str(query), "--stream", str(stream), *extra, "--quiet", "--output", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def chunks(lines: list[str], sizes=(1, 3, 1, 5, 2)) -> list[str]:
    """The lines as message payloads of a few lines each (a message may hold several lines)."""
    payloads, start, turn = [], 0, 0
    while start < len(lines):
        size = sizes[turn % len(sizes)]
        payloads.append("".join(lines[start : start + size]))
        start, turn = start + size, turn + 1
    return payloads


def subscribed(run: Run, times: int = 1):
    return lambda: run.stderr_count("subscribed to") >= times


def test_timed_lines_from_a_topic_equal_the_file_run(broker, tmp_path):
    lines = STREAM.read_text(encoding="utf-8").splitlines(keepends=True)
    expected = file_run(tmp_path, QUERY, lines, *BUILDING_ARGS)
    run = Run("run", str(QUERY), *BUILDING_ARGS, "--stream", broker.url("temps"), "--idle-close", "2")
    run.wait_for(subscribed(run), "rsp run subscribed")
    mqtt_broker.publish_all(broker.port, "temps", chunks(lines))
    run.wait_for(lambda: "".join(run.out) == expected, "every instant of the file run written")
    out, err = run.stop()
    assert run.process.returncode == 0, err
    assert out == expected
    assert "Traceback" not in err


def test_lines_without_time_take_their_arrival_time(broker, tmp_path):
    """Untimed N-Triples lines and untimed JSON-LD elements are stamped with the arrival time of their
    message (wall clock ms): the run's answers are those of the same lines in a file with those times."""
    query = tmp_path / "arrivals.rq"
    query.write_text(ARRIVALS, encoding="utf-8")
    payloads = []
    for message in range(8):
        if message == 5:  # a JSON-LD element without a time, as POST /streams/elements takes them
            graph = {"@id": "http://ex.org/s5", "http://ex.org/p": [{"@value": 50}, {"@value": 51}]}
            payloads.append(json.dumps([{"graph": graph}]))
            continue
        payloads.append(
            "".join(
                f'<http://ex.org/s{message}> <http://ex.org/p> "{message * 10 + k}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
                for k in range(2)
            )
        )
    run = Run("run", str(query), "--stream", f"http://ex.org/a={broker.url('plain')}", "--idle-close", "2")
    run.wait_for(subscribed(run), "rsp run subscribed")
    before = time.time_ns() // 1_000_000
    mqtt_broker.publish_all(broker.port, "plain", payloads, pause=0.05)
    after = time.time_ns() // 1_000_000

    run.wait_for(lambda: "<http://ex.org/s7>" in "".join(run.out), "the last message's triples answered")
    out, err = run.stop()  # the stop writes the last instants, as at the end of a file
    assert run.process.returncode == 0, err
    stamps: dict[tuple[str, str], int] = {}  # (subject, object) -> the time the run gave it
    for record in map(json.loads, out.splitlines()):
        for row in record["bindings"]:
            stamps[(row["s"], row["v"])] = int(row["t"].split('"')[1])
    assert len(stamps) == 16
    per_message = [
        sorted({t for (s, _v), t in stamps.items() if s == f"<http://ex.org/s{m}>"}) for m in range(8)
    ]
    assert all(len(times) == 1 for times in per_message), per_message  # one arrival time per message
    times = [times[0] for times in per_message]
    assert times == sorted(times) and before - 1000 <= times[0] and times[-1] <= after + 1000
    timed = [
        f"{s} <http://ex.org/p> {v} . # {t}\n"
        for (s, v), t in sorted(stamps.items(), key=lambda i: (i[1], i[0]))
    ]
    assert out == file_run(tmp_path, query, timed)


def test_a_broker_restart_loses_nothing_published_after_the_reconnection(broker, tmp_path):
    lines = STREAM.read_text(encoding="utf-8").splitlines(keepends=True)
    expected = file_run(tmp_path, QUERY, lines, *BUILDING_ARGS)
    payloads = chunks(lines)
    half = len(payloads) // 2
    run = Run("run", str(QUERY), *BUILDING_ARGS, "--stream", broker.url("temps"), "--idle-close", "2")
    run.wait_for(subscribed(run), "rsp run subscribed")
    mqtt_broker.publish_all(broker.port, "temps", payloads[:half])
    # every message of the first half acknowledged by rsp (QoS 1) before the broker goes away
    run.wait_for(
        lambda: broker.logged("Received PUBACK from rsp-source") >= half, "the first half acknowledged"
    )
    broker.stop()
    run.wait_for(lambda: run.stderr_count("connection lost") >= 1, "the loss logged")
    time.sleep(1.0)  # a reconnection attempt or two fails while the broker is down
    broker.start()
    run.wait_for(lambda: run.stderr_count("reconnected to") >= 1, "the reconnection logged")
    run.wait_for(subscribed(run, 2), "subscribed again")
    mqtt_broker.publish_all(broker.port, "temps", payloads[half:])
    run.wait_for(lambda: "".join(run.out) == expected, "every instant of the file run written")
    out, err = run.stop()
    assert run.process.returncode == 0, err
    assert out == expected
    assert "Traceback" not in err


def test_a_malformed_message_is_reported_with_its_number_and_skipped(broker, tmp_path):
    lines = STREAM.read_text(encoding="utf-8").splitlines(keepends=True)
    good = chunks(lines)
    bad = [
        lines[40] + "<http://ex.org/s> <http://ex.org/p> oops .\n",  # one bad line: the whole message goes
        b"\xff\xfe not UTF-8\n",
        '[{"time": "soon", "graph": {}}]',
        "<http://ex.org/s> <http://ex.org/p> <http://ex.org/o> . # 12x\n",
        "{not json",
    ]
    payloads = good[:3] + bad + good[3:]
    expected = file_run(tmp_path, QUERY, lines, *BUILDING_ARGS)
    run = Run("run", str(QUERY), *BUILDING_ARGS, "--stream", broker.url("temps"), "--idle-close", "2")
    run.wait_for(subscribed(run), "rsp run subscribed")
    mqtt_broker.publish_all(broker.port, "temps", payloads)
    run.wait_for(lambda: "".join(run.out) == expected, "every instant of the good messages written")
    out, err = run.stop()
    assert run.process.returncode == 0, err
    assert out == expected
    assert "Traceback" not in err
    url = broker.url("temps")
    for number in range(4, 9):
        assert f"rsp: {url}: message {number} skipped" in err
    assert f"{url} message 4:2: expected an IRI, blank node or literal as object, found 'oops'" in err
    assert f"{url} message 5: not UTF-8 text" in err
    assert f'{url} message 6:1: an element is {{"time": ms ≥ 0, "graph": JSON-LD}}' in err
    assert f"{url} message 7:1: time comment '12x' is not a time" in err
    assert f"{url} message 8: not JSON" in err
    assert "message 3 skipped" not in err and "message 9 skipped" not in err


class Subscriber:
    """A test client subscribed (at QoS 1) to a topic: the payloads it received, in order."""

    def __init__(self, port: int, topic: str) -> None:
        import paho.mqtt.client as mqtt

        self.received: list[str] = []
        ready = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"test-subscriber-{topic}")
        self.client.on_subscribe = lambda *_args: ready.set()
        self.client.on_message = lambda _c, _u, message: self.received.append(message.payload.decode("utf-8"))
        self.client.on_connect = lambda c, *_args: c.subscribe(topic, qos=1)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert ready.wait(10), "the test subscriber could not subscribe"

    def wait_for(self, count: int) -> list[str]:
        deadline = time.monotonic() + WAIT
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # nothing more comes
        return self.received

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_publish_delivers_every_result_line_in_order(broker, tmp_path):
    subscriber = Subscriber(broker.port, "results")
    received = subscriber.received
    try:
        out = tmp_path / "out.jsonl"
        command = [
            "run",
            str(QUERY),
            *BUILDING_ARGS,
            "--stream",
            str(STREAM),
            "--quiet",
            "--output",
            str(out),
        ]
        assert main([*command, "--publish", broker.url("results")]) == 0
        lines = out.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 8
        assert subscriber.wait_for(len(lines)) == lines
        assert received == lines
    finally:
        subscriber.close()


def test_lars_publishes_its_jsonl_lines_whatever_it_prints(broker, tmp_path):
    program = ROOT / "examples" / "cooling" / "cooling.lars"
    stream = ROOT / "examples" / "cooling" / "temps.stream"
    out = tmp_path / "file.jsonl"
    assert main(["lars", str(program), "--stream", str(stream), "--quiet", "--output", str(out)]) == 0
    expected = out.read_text(encoding="utf-8").splitlines()
    subscriber = Subscriber(broker.port, "cooling-out")
    try:
        text = tmp_path / "text.txt"
        command = ["lars", str(program), "--stream", str(stream), "--format", "text", "--output", str(text)]
        assert main([*command, "--quiet", "--publish", broker.url("cooling-out")]) == 0
        assert subscriber.wait_for(len(expected)) == expected
        assert text.read_text(encoding="utf-8").startswith("     0 |")  # the output keeps its format
    finally:
        subscriber.close()


def test_mtl_reads_a_topic_and_publishes_its_results(broker, tmp_path):
    """``rsp mtl`` over a topic equals ``rsp mtl`` over the same facts from a pipe (a live stream), and
    ``--publish`` sends its lines as ``--format jsonl`` writes them."""
    program = ROOT / "tests" / "data" / "mtl" / "short_stop.txt"
    facts = (ROOT / "tests" / "data" / "mtl" / "S1-head.txt").read_text(encoding="utf-8")
    command = ["mtl", str(program), "--output-predicates", "ShortStop", "--format", "jsonl"]
    expected = subprocess.run(
        [sys.executable, "-m", "rsp", *command, "--stream", "-"], input=facts, capture_output=True, text=True
    ).stdout
    assert expected.count("\n") > 5
    subscriber = Subscriber(broker.port, "stops")
    try:
        run = Run(*command, "--stream", broker.url("facts"), "--publish", broker.url("stops"))
        run.wait_for(subscribed(run), "rsp mtl subscribed")
        payloads = chunks(facts.splitlines(keepends=True), (40, 7, 100))
        payloads[2] = "Pos(veh21@[1\n" + payloads[2]  # message 3, line 1: skipped, placed in its message
        mqtt_broker.publish_all(broker.port, "facts", payloads)
        # rsp mtl has no --idle-close: every message taken (acknowledged), then the stop ends the stream
        acknowledged = lambda: broker.logged("Received PUBACK from rsp-source") >= len(payloads)  # noqa: E731
        run.wait_for(acknowledged, "every message acknowledged")
        out, err = run.stop()
        assert run.process.returncode == 0, err
        assert out == expected
        assert subscriber.wait_for(expected.count("\n")) == expected.splitlines()
        url = broker.url("facts")
        assert f"{url} message 3:1: not a fact (write P(a,b)@[1,3) or P(a)@2): Pos(veh21@[1" in err, err
    finally:
        subscriber.close()


def test_answer_streams_refuse_publish(capsys):
    program = ROOT / "examples" / "cooling" / "cooling.lars"
    stream = ROOT / "examples" / "cooling" / "temps.stream"
    code = main(["lars", str(program), "--stream", str(stream), "--models", "all", "--publish", "mqtt://h/t"])
    assert code == 2
    assert "--publish: answer streams (--models, --mode) are not published yet" in capsys.readouterr().err


def test_lars_reads_a_topic(broker, tmp_path):
    """``rsp lars`` over a topic whose messages are lines of a LARS stream file."""
    program = ROOT / "examples" / "cooling" / "cooling.lars"
    stream = ROOT / "examples" / "cooling" / "temps.stream"
    out = tmp_path / "file.jsonl"
    assert main(["lars", str(program), "--stream", str(stream), "--quiet", "--output", str(out)]) == 0
    expected = out.read_text(encoding="utf-8")
    run = Run("lars", str(program), "--stream", broker.url("cooling"), "--idle-close", "2")
    run.wait_for(subscribed(run), "rsp lars subscribed")
    payloads = chunks(stream.read_text(encoding="utf-8").splitlines(True))
    payloads.insert(3, "7 temp((\n")  # message 4, a malformed line: skipped, placed in its message
    payloads[6] = payloads[6] + "oops\n"  # message 7, line 2 (after its one good line)
    mqtt_broker.publish_all(broker.port, "cooling", payloads)
    run.wait_for(lambda: "".join(run.out) == expected, "every time point of the file run written")
    output, err = run.stop()
    assert output == expected, err
    bad = "expected '<time> <atom>', a bare time, or an N-Triples line with a time comment"
    url = broker.url("cooling")
    assert f"{url} message 4:1: {bad}" in err and f"{url} message 7:2: {bad}" in err, err
    assert f"{url}: 2 malformed line(s) skipped" in err


def test_without_paho_the_error_names_the_extra(monkeypatch, capsys):
    for name in ("paho", "paho.mqtt", "paho.mqtt.client"):
        monkeypatch.setitem(sys.modules, name, None)  # import paho.mqtt.client raises ImportError
    code = main(["run", str(QUERY), "--stream", "mqtt://127.0.0.1:1/temps", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "pip install 'rsp-reasoner[mqtt]'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("mqtt://127.0.0.1:1883", "no topic"),
        ("mqtt://:1883/t", "no broker host"),
        ("mqtt://127.0.0.1:http/t", "the port is not a number"),
    ],
)
def test_a_bad_address_is_explained(url, problem, capsys):
    assert main(["run", str(QUERY), "--stream", url, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--stream {url}: {problem}" in err and "mqtt://HOST:PORT/TOPIC" in err
    assert main(["run", str(QUERY), "--stream", str(STREAM), "--quiet", "--publish", url]) == 2
    err = capsys.readouterr().err
    assert f"--publish {url}: {problem}" in err and "mqtt://HOST:PORT/TOPIC" in err


def test_publish_takes_only_an_mqtt_topic(capsys):
    assert main(["run", str(QUERY), "--stream", str(STREAM), "--quiet", "--publish", "results.jsonl"]) == 2
    assert (
        "--publish results.jsonl: not an MQTT address: write mqtt://HOST:PORT/TOPIC"
        in capsys.readouterr().err
    )


def test_a_stop_reads_every_message_already_acknowledged(broker):
    """The source acknowledges a message (QoS 1) as it reads it from the socket, and gives it in the same
    read; a stop (SIGINT, SIGTERM) reads what the socket holds (:func:`rsp.live.drained`), gives all of it
    and acknowledges nothing more: what the broker counts as delivered is exactly what the run read."""
    from rsp.live import drained
    from rsp.mqtt import MqttSource

    source = MqttSource(broker.url("late"), log=open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    try:
        deadline = time.monotonic() + WAIT
        while broker.logged("Sending SUBACK to rsp-source") < 1 and time.monotonic() < deadline:
            assert source.read() == []
            time.sleep(0.05)
        lines = [f"<http://ex.org/s> <http://ex.org/p> <http://ex.org/o{i}> . # {i}\n" for i in range(50)]
        mqtt_broker.publish_all(broker.port, "late", lines)
        # the broker sends what its in-flight window allows (20 messages) and waits for their PUBACKs
        while broker.logged("Sending PUBLISH to rsp-source") < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        assert broker.logged("Received PUBACK from rsp-source") == 0  # nothing read, nothing acknowledged
        taken = drained(source)  # never read before the stop
        assert 20 <= len(taken) <= len(lines) and taken == lines[: len(taken)]
        time.sleep(0.5)
        assert broker.logged("Received PUBACK from rsp-source") == len(taken)
        assert source.read() == []
    finally:
        source.close()


def test_an_unreachable_broker_is_retried_and_a_signal_still_stops_the_run(tmp_path):
    mqtt_broker.require()
    url = f"mqtt://127.0.0.1:{mqtt_broker.free_port()}/temps"  # nothing listens there
    run = Run("run", str(QUERY), *BUILDING_ARGS, "--stream", url)
    run.wait_for(lambda: run.stderr_count("cannot reach the broker") >= 1, "the failure logged")
    out, err = run.stop()
    assert run.process.returncode == 0, err
    assert (
        f"rsp: {url}: cannot reach the broker 127.0.0.1:{url.split(':')[2].split('/')[0]} (1 try); retrying"
        in err
    )
    assert "rsp run: stopped by SIGTERM: 0 instants written, 0 triples read" in err
    assert out == "" and "Traceback" not in err


def test_results_that_cannot_wait_for_the_broker_are_counted(monkeypatch, capsys):
    """While the broker is away, results wait in memory up to 65,535 (MQTT's packet ids); past that
    each one is refused, and the end of the run says how many."""
    mqtt_broker.require()
    import rsp.mqtt

    monkeypatch.setattr(rsp.mqtt, "PUBLISH_WAIT", 0.2)
    url = f"mqtt://127.0.0.1:{mqtt_broker.free_port()}/out"  # nothing listens there
    publisher = rsp.mqtt.TopicPublisher(url)
    publisher.write('{"time": 0}\n' * 70_000)
    publisher.close()
    assert (publisher.published, publisher.dropped) == (65_535, 70_000 - 65_535)
    err = capsys.readouterr().err
    assert f"rsp: {url}: 4,465 result messages dropped: more than 65,535 waited for the broker" in err
    assert f"rsp: {url}: 65,535 of 65,535 result messages not acknowledged by the broker after 0.2 s" in err


def test_a_late_element_is_placed_in_its_message(broker, tmp_path):
    lines = STREAM.read_text(encoding="utf-8").splitlines(keepends=True)
    late = lines[0]  # time 0, once instants after it have closed
    first = chunks(lines[:160])
    payloads = [*first, "# a comment line first\n" + late, *chunks(lines[160:])]
    expected = file_run(tmp_path, QUERY, [*lines[:160], late, *lines[160:]], *BUILDING_ARGS)
    run = Run("run", str(QUERY), *BUILDING_ARGS, "--stream", broker.url("temps"), "--idle-close", "2")
    run.wait_for(subscribed(run), "rsp run subscribed")
    mqtt_broker.publish_all(broker.port, "temps", payloads)
    run.wait_for(lambda: "".join(run.out) == expected, "every instant of the file run written")
    out, err = run.stop()
    assert out == expected, err
    message = f"{broker.url('temps')} message {len(first) + 1}:2: late element at time 0 (instant "
    assert message in err and "is already closed), dropped" in err, err


def test_results_wait_for_an_absent_broker_and_go_out_once_it_is_back(tmp_path):
    """A broker with persistence keeps the test subscriber's session over its restart, so whatever the
    order in which the two clients come back, every result the publisher wrote while the broker was
    away must reach the subscriber, after the one written before, in order."""
    mqtt_broker.require()
    import paho.mqtt.client as mqtt

    from rsp.mqtt import TopicPublisher

    broker = mqtt_broker.Broker(tmp_path, persistence=True).start()
    received: list[str] = []
    subscriber = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-kept", clean_session=False)
    subscriber.reconnect_delay_set(min_delay=0.1, max_delay=0.5)
    subscriber.on_connect = lambda c, *_args: c.subscribe("out", qos=1)
    subscriber.on_message = lambda _c, _u, message: received.append(message.payload.decode("utf-8"))
    try:
        subscriber.connect("127.0.0.1", broker.port)
        subscriber.loop_start()
        deadline = time.monotonic() + WAIT
        while broker.logged("Sending SUBACK to test-kept") < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        publisher = TopicPublisher(broker.url("out"), log=open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
        publisher.write('{"time": 1}\n')
        while received != ['{"time": 1}'] and time.monotonic() < deadline:
            time.sleep(0.05)
        broker.stop(graceful=True)
        publisher.write('{"time": 2}\n{"time": 3}\n')  # waits in memory
        time.sleep(1.0)
        broker.start()
        publisher.close()  # waits until the broker acknowledged them
        assert (publisher.published, publisher.acknowledged, publisher.dropped) == (3, 3, 0)
        while len(received) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert received == ['{"time": 1}', '{"time": 2}', '{"time": 3}']
    finally:
        subscriber.disconnect()
        subscriber.loop_stop()
        broker.stop()


def test_a_source_resumes_its_session_after_a_lost_connection(broker):
    """The source asks the broker to keep its session (its subscription, the QoS 1 messages queued for
    it) and resumes it when it reconnects: messages published while its connection was down arrive."""
    import re

    from rsp.mqtt import MqttSource

    relay = mqtt_broker.Relay(broker.port)
    source = MqttSource(f"mqtt://127.0.0.1:{relay.port}/kept", log=open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    try:
        deadline = time.monotonic() + WAIT
        got: list[str] = []
        while broker.logged("Sending SUBACK to rsp-source") < 1 and time.monotonic() < deadline:
            got += source.read()
            time.sleep(0.05)
        name = re.search(r"as (rsp-source-\w+) ", broker.log.read_text(encoding="utf-8")).group(1)
        relay.cut()  # the source sees it at its next read and waits 0.5 s before it reconnects
        got += source.read()
        lines = [f"<http://ex.org/s> <http://ex.org/p> <http://ex.org/o{i}> . # {i}\n" for i in range(20)]
        mqtt_broker.publish_all(broker.port, "kept", lines)  # queued for the session meanwhile
        while broker.logged(f"Sending CONNACK to {name}") < 2 and time.monotonic() < deadline:
            got += source.read()
            time.sleep(0.05)
        log = broker.log.read_text(encoding="utf-8")
        assert re.search(rf"as {name} \(p5, c0, ", log), "the reconnection does not ask to resume"
        assert f"Sending CONNACK to {name} (1, 0)" in log, "the session was not present"
        while len(got) < len(lines) and time.monotonic() < deadline:
            got += source.read()
            time.sleep(0.05)
        assert got == lines
    finally:
        source.close()
        relay.close()
