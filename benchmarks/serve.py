"""Load test of ``rsp serve``: a server on 127.0.0.1, stream elements POSTed in batches at a fixed rate
for a fixed time, two Server-Sent Events subscribers, every element accounted for.

    python benchmarks/serve.py [--rate 20000] [--seconds 60] [--batch-ms 100] [--sensors 10]

The stream: element i is ``<s{i mod sensors}> <value> i`` at ``i * 1000 / rate`` ms, so event time
keeps pace with wall time; a batch holds the elements of ``--batch-ms`` of event time and is POSTed when
its time has come (at once if the server is behind). The query counts the elements of each sensor in a
tumbling 1 s window, so the counts of all instants add up to the number of elements sent. At the end the
stream's end is POSTed (``/streams/advance``), and the run checks that both subscribers received exactly
the results ``rsp run`` gives on the same stream written to a file, that every POST was taken whole with
no late element, and that the counts add up.

Prints the rate reached, the latency from the POST of the batch that closes an instant to that instant's
event at each subscriber (p50, p99, max), the server's CPU time per element and, as the baseline
measured in the same run, ``rsp run``'s CPU time per element on the same file (and their ratio), and
the load average. Bounded: it sends ``rate * seconds`` elements, waits at most ``--grace`` seconds for
the last results, then stops the server. Exit status 0 only when everything is accounted for.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
STREAM = "http://ex.org/load"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
QUERY = f"""REGISTER QUERY Load AS
SELECT ?sensor (COUNT(*) AS ?n)
FROM STREAM <{STREAM}> [RANGE 1s STEP 1s]
WHERE {{ ?sensor <http://ex.org/value> ?v }}
GROUP BY ?sensor ORDER BY ?sensor
"""


def batch_text(start: int, stop: int, rate: int, sensors: int) -> str:
    """Elements ``start`` … ``stop - 1`` as timed N-Triples lines."""
    value = f"^^<{XSD_INTEGER}> . # "
    return "".join(
        f'<http://ex.org/s{i % sensors}> <http://ex.org/value> "{i}"{value}{i * 1000 // rate}\n'
        for i in range(start, stop)
    )


class Subscriber(threading.Thread):
    """Reads a query's Server-Sent Events: each result with the time (perf_counter) it arrived."""

    def __init__(self, base: str, final: int, deadline: float) -> None:
        super().__init__(daemon=True)
        self.base, self.final, self.deadline = base, final, deadline
        self.received: list[tuple[float, dict]] = []
        self.ready = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.stream("GET", self.base + "/queries/Load/events", timeout=30) as events:
                for line in events.iter_lines():
                    if line.startswith(": connected"):
                        self.ready.set()
                    elif line.startswith("data: "):
                        record = json.loads(line[6:])
                        self.received.append((time.perf_counter(), record))
                        if record["time"] >= self.final or time.perf_counter() > self.deadline:
                            return
        except BaseException as err:  # reported by the main thread
            self.error = err
            self.ready.set()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(rate: int, seconds: float, batch_ms: int, sensors: int, grace: float, data: bool = False) -> dict:
    """One load test (``data``: the server keeps its write-ahead log in a temporary folder); prints
    its report and returns its figures (``failures`` empty when everything was accounted for)."""
    total = int(rate * seconds)
    last_time = (total - 1) * 1000 // rate
    final = (last_time // 1000 + 1) * 1000  # the last instant: the first after the last element
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    folder = tempfile.TemporaryDirectory(prefix="rsp-serve-load-")
    durable = ["--data", str(Path(folder.name) / "data")] if data else []
    server = subprocess.Popen(
        [sys.executable, "-m", "rsp", "serve", "--port", str(port), "--quiet", *durable], cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    stream_file = Path(folder.name) / "stream.nt"
    failures: list[str] = []
    try:
        client = httpx.Client(base_url=base, timeout=60)
        for _ in range(300):
            try:
                client.get("/queries")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        client.post("/queries", content=QUERY).raise_for_status()
        deadline = time.perf_counter() + seconds + grace
        subscribers = [Subscriber(base, final, deadline) for _ in range(2)]
        for subscriber in subscribers:
            subscriber.start()
            subscriber.ready.wait(30)
        cpu_before = _cpu_seconds(server.pid)
        closes: dict[int, float] = {}  # instant -> perf_counter when the POST closing it started
        accepted = late = behind = 0
        per_batch = max(1, rate * batch_ms // 1000)
        start = time.perf_counter()
        with open(stream_file, "w", encoding="utf-8") as file:
            for k, first in enumerate(range(0, total, per_batch)):
                stop = min(total, first + per_batch)
                text = batch_text(first, stop, rate, sensors)
                file.write(text)
                wait = start + k * batch_ms / 1000 - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                elif wait < -0.01:
                    behind += 1
                sent = time.perf_counter()
                reply = client.post("/streams/elements", params={"stream": STREAM}, content=text)
                if reply.status_code != 200:
                    failures.append(f"POST of elements {first}…: {reply.status_code} {reply.text[:200]}")
                    break
                accepted += reply.json()["elements"]
                late += reply.json()["late"]
                newest = (stop - 1) * 1000 // rate
                for instant in range(1000, newest + 1, 1000):  # instants up to the newest element close
                    closes.setdefault(instant, sent)
        elapsed = time.perf_counter() - start
        sent = time.perf_counter()
        client.post("/streams/advance").raise_for_status()  # the end of the stream
        for instant in range(1000, final + 1, 1000):
            closes.setdefault(instant, sent)
        for subscriber in subscribers:
            subscriber.join(max(0.0, deadline - time.perf_counter()) + 1)
        cpu_server = _cpu_seconds(server.pid) - cpu_before
        load = os.getloadavg()

        query_file = Path(folder.name) / "load.rq"
        query_file.write_text(QUERY, encoding="utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, "-m", "rsp", "run", str(query_file), "--stream", f"{STREAM}={stream_file}"],
            capture_output=True, text=True, cwd=ROOT, timeout=max(600, 10 * seconds),
        )  # fmt: skip
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_run = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        if done.returncode != 0:
            failures.append(f"rsp run failed: {done.stderr[-500:]}")
        expected = [json.loads(line) for line in done.stdout.splitlines()]

        latencies: list[float] = []
        for number, subscriber in enumerate(subscribers, 1):
            if subscriber.error is not None:
                failures.append(f"subscriber {number}: {subscriber.error!r}")
            got = [record for _at, record in subscriber.received]
            if got != expected:
                failures.append(f"subscriber {number}: {len(got)} results, not rsp run's {len(expected)}")
            latencies += [(at - closes[r["time"]]) * 1000 for at, r in subscriber.received]
        counted = sum(int(b["n"].split('"')[1]) for r in expected for b in r["bindings"])
        if accepted != total or late:
            failures.append(f"{accepted} elements taken of {total} sent, {late} late")
        if counted != total:
            failures.append(f"the windows counted {counted} elements of {total} sent")

        figures = {"data": data, "elements_per_s": total / elapsed, "failures": failures}
        if latencies:
            figures |= {"p50_ms": statistics.median(latencies), "p99_ms": _percentile(latencies, 0.99)}
        if data:
            journal = Path(folder.name) / "data" / "journal"
            figures["disk_bytes_per_element"] = journal.stat().st_size / total
        print(f"rsp serve{' --data' if data else ''} load test: {total} elements in {-(-total // per_batch)} "
              f"POSTs of {per_batch} (one per {batch_ms} ms of event time), {sensors} sensors, "
              "2 SSE subscribers")  # fmt: skip
        print(f"  sent in {elapsed:.2f} s: {total / elapsed:,.0f} elements/s (target {rate:,}/s); "
              f"{behind} POSTs started late (server behind)")  # fmt: skip
        if latencies:
            p50 = statistics.median(latencies)
            print(f"  POST → SSE latency over {len(latencies)} events: p50 {p50:.1f} ms, "
                  f"p99 {_percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms")  # fmt: skip
        print(f"  server CPU {cpu_server:.2f} s: {cpu_server / total * 1e6:.1f} µs/element; baseline "
              f"rsp run on the same file (start-up included) {cpu_run:.2f} s: {cpu_run / total * 1e6:.1f} "
              "µs/element "
              f"(ratio serve/run {cpu_server / cpu_run if cpu_run else float('nan'):.2f})")  # fmt: skip
        if data:
            print(f"  write-ahead log: {figures['disk_bytes_per_element']:.1f} bytes/element on disk")
        print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
        if failures:
            for failure in failures:
                print("  FAILED: " + failure)
            return figures
        print(f"  every element accounted for: {len(expected)} instants to both subscribers equal rsp run's, "
              f"counts add up to {total}")  # fmt: skip
        return figures
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        folder.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=20000, help="elements per second (default 20000)")
    parser.add_argument("--seconds", type=float, default=60, help="how long to send (default 60)")
    parser.add_argument("--batch-ms", type=int, default=100, help="event time per POST (default 100 ms)")
    parser.add_argument("--sensors", type=int, default=10, help="distinct subjects (default 10)")
    parser.add_argument("--grace", type=float, default=60, help="seconds to wait for the last results")
    parser.add_argument("--durable", action="store_true",
                        help="without and with --data, round robin: throughput, latency, disk, "
                        "restart")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3, help="--durable: rounds (medians reported)")
    parser.add_argument("--restart-ranges", default="1,10,60",
                        help="--durable: window ranges (s) whose restart time is measured")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.durable:
        figures = run(args.rate, args.seconds, args.batch_ms, args.sensors, args.grace)
        return 1 if figures["failures"] else 0
    from serve_durable import compare

    ranges = [int(r) for r in args.restart_ranges.split(",") if r]
    return compare(run, args.rate, args.seconds, args.batch_ms, args.sensors, args.grace, args.repeat, ranges)


if __name__ == "__main__":
    sys.exit(main())
