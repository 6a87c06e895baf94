"""End-to-end latency of ``rsp run`` through an MQTT broker: mosquitto on a loopback port, a producer
publishing one N-Triples line per message at a fixed rate (QoS 1), ``rsp run --stream mqtt://…/in
--publish mqtt://…/out``, and a subscriber on the results topic.

    python benchmarks/mqtt.py [--rate 10000] [--seconds 10] [--range-ms 100] [--step-ms 100] [--sensors 10]

Message i is ``<s{i mod sensors}> <value> i . # T`` with T the wall clock (ms) when it is published, so
event time is publish time. The query counts each sensor's elements in a window of ``--range-ms``
sliding every ``--step-ms`` (tumbling 100 ms by default). An instant at time t closes when the first
element after it arrives; its latency is the time from the publication of that element to the arrival
of the instant's result line at the subscriber (p50, p99, max). At the end rsp is stopped with SIGTERM
(its last instants are written, as at the end of a file) and the run checks that the subscriber
received, in order, exactly the lines ``rsp run`` writes for the same messages in a file. Needs
mosquitto and mosquitto_pub (``make mosquitto``) and the extra ``mqtt``. Exit status 0 only when every
result line was received.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

import broker as mqtt_broker  # noqa: E402 - tests/support/broker.py: mosquitto on a free port

STREAM = "http://ex.org/load"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def query_text(range_ms: int, step_ms: int) -> str:
    return f"""REGISTER QUERY Load AS
SELECT ?sensor (COUNT(*) AS ?n)
FROM STREAM <{STREAM}> [RANGE {range_ms}ms STEP {step_ms}ms]
WHERE {{ ?sensor <http://ex.org/value> ?v }}
GROUP BY ?sensor ORDER BY ?sensor
"""


class Subscriber:
    """The results topic's messages, each with the wall time (s) it arrived."""

    def __init__(self, port: int, topic: str) -> None:
        import paho.mqtt.client as mqtt

        self.received: list[tuple[float, str]] = []
        self.ready = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-subscriber")
        self.client.on_connect = lambda c, *_a: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *_a: self.ready.set()
        self.client.on_message = lambda _c, _u, m: self.received.append((time.time(), m.payload.decode()))
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not self.ready.wait(10):
            raise RuntimeError("the subscriber could not subscribe")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def publish(
    port: int, topic: str, rate: int, seconds: float, sensors: int
) -> tuple[list[str], list[float], float]:
    """Publish ``rate * seconds`` messages paced at ``rate``/s through ``mosquitto_pub -l`` (one message a
    line, QoS 1: a Python client does not reach 10,000 messages/s on a busy 2-core machine); returns the
    lines, the times they were handed to it and the time (s) until it had published them all."""
    program = shutil.which("mosquitto_pub")
    if program is None:
        raise SystemExit(
            "benchmarks/mqtt.py: no mosquitto_pub: make mosquitto installs it (mosquitto-clients)"
        )
    command = [program, "-h", "127.0.0.1", "-p", str(port), "-t", topic, "-q", "1", "-l"]
    producer = subprocess.Popen(command, stdin=subprocess.PIPE)
    lines: list[str] = []
    stamps: list[float] = []
    total = int(rate * seconds)
    start = time.time()
    last_ms = 0
    batch = max(1, rate // 1000)  # handed over every millisecond or so
    for first in range(0, total, batch):
        due = start + first / rate
        now = time.time()
        if due > now:
            time.sleep(due - now)
            now = time.time()
        ms = max(last_ms, int(now * 1000))
        last_ms = ms
        chunk = [
            f'<http://ex.org/s{i % sensors}> <http://ex.org/value> "{i}"^^<{XSD_INTEGER}> . # {ms}'
            for i in range(first, min(total, first + batch))
        ]
        producer.stdin.write(("\n".join(chunk) + "\n").encode())
        producer.stdin.flush()
        lines.extend(chunk)
        stamps.extend([now] * len(chunk))
    producer.stdin.close()
    producer.wait(120)
    return lines, stamps, time.time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=10_000, help="messages per second (default 10000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to publish (default 10)")
    parser.add_argument("--range-ms", type=int, default=100, help="the window's RANGE in ms (default 100)")
    parser.add_argument("--step-ms", type=int, default=100, help="the window's STEP in ms (default 100)")
    parser.add_argument("--sensors", type=int, default=10, help="distinct subjects (default 10)")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds to wait for the last results")
    args = parser.parse_args(argv)
    reason = mqtt_broker.missing()
    if reason:
        print(f"benchmarks/mqtt.py: {reason}", file=sys.stderr)
        return 2
    print("$ python benchmarks/mqtt.py " + shlex.join(argv if argv is not None else sys.argv[1:]))
    with tempfile.TemporaryDirectory(prefix="rsp-mqtt-bench-") as folder:
        tmp = Path(folder)
        broker = mqtt_broker.Broker(tmp, packets=False)  # no packet logged: every one would cost it time
        broker.start()
        query = tmp / "load.rq"
        query.write_text(query_text(args.range_ms, args.step_ms), encoding="utf-8")
        command = [sys.executable, "-m", "rsp", "run", str(query), "--stream", broker.url("in")]
        command += ["--publish", broker.url("out"), "--output", os.devnull, "--idle-close", "1"]
        rsp = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        errors: list[str] = []
        reader = threading.Thread(target=lambda: errors.extend(rsp.stderr), daemon=True)
        reader.start()
        subscriber = None
        try:
            print("$ " + shlex.join(["rsp", *command[3:]]))
            deadline = time.monotonic() + 30
            while not any("subscribed to" in line for line in errors) and time.monotonic() < deadline:
                time.sleep(0.05)
            subscriber = Subscriber(broker.port, "out")
            lines, stamps, acknowledged = publish(broker.port, "in", args.rate, args.seconds, args.sensors)
            elapsed = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
            # the reference: rsp run over the same lines in a file
            stream = tmp / "stream.nt"
            stream.write_text("\n".join(lines) + "\n", encoding="utf-8")
            reference = subprocess.run(
                [sys.executable, "-m", "rsp", "run", str(query), "--stream", str(stream), "--quiet"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()
            # every instant: the last one once the stream is quiet for a second (--idle-close 1)
            deadline = time.monotonic() + args.grace
            while len(subscriber.received) < len(reference) and time.monotonic() < deadline:
                time.sleep(0.1)
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            rsp.terminate()
            rsp.wait(args.grace)
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = used.ru_utime + used.ru_stime - children.ru_utime - children.ru_stime
            reader.join(args.grace)
            time.sleep(0.5)
        finally:
            if rsp.poll() is None:
                rsp.kill()
            if subscriber is not None:
                subscriber.close()
            broker.stop()
    times = [int(t.split("# ")[1]) for t in lines]
    latencies = []
    for arrived, payload in subscriber.received:
        instant = json.loads(payload)["time"]
        closer = bisect.bisect_right(times, instant)  # the first element after the instant closes it
        if closer < len(times):
            latencies.append((arrived - stamps[closer]) * 1000)
    received = [payload for _arrived, payload in subscriber.received]
    print(
        f"rsp run through mosquitto: {len(lines):,} messages in {elapsed:.2f} s "
        f"({len(lines) / max(elapsed, 1e-9):,.0f}/s, target {args.rate:,}/s; the last acknowledged by the "
        f"broker after {acknowledged:.2f} s), {len(received):,} result lines"
    )
    if latencies:
        ordered = sorted(latencies)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        print(
            f"  publish → result line latency over {len(ordered)} instants: "
            f"p50 {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms, max {ordered[-1]:.1f} ms"
        )
    print(f"  rsp's CPU time {cpu:.2f} s: {cpu / len(lines) * 1e6:.1f} µs per message (with its start)")
    load = os.getloadavg()
    print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    if received != reference:
        pairs = zip(received, reference, strict=False)
        first = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(received), len(reference)))
        print(
            f"  FAILED: the subscriber received {len(received)} lines, rsp run on the file writes "
            f"{len(reference)}; the first difference at line {first + 1}"
        )
        print("".join(errors), file=sys.stderr)
        return 1
    print(f"  every result line received in order: {len(received)} lines equal rsp run's on the same file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
