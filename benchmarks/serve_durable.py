"""``python benchmarks/serve.py --durable``: what ``rsp serve --data`` costs (issue 46, item 5).

Round robin in one run: the load test of benchmarks/serve.py without and with ``--data`` (each round
both, in turn), medians of elements/s and POST → SSE latency p50/p99, the ratio of throughputs, and the
write-ahead log's bytes per element. Then the restart time against the window's size: for each RANGE,
a service with ``--data`` and ``--compact-bytes 1 MiB`` takes a stream at 20,000 elements/s of event
time for 120 s of event time (1,000-element requests, as fast as it answers), is stopped, and is
started again on its folder; the time until it answers is the restart, with the log's size then.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
STREAM = "http://ex.org/load"


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(data: Path, port: int, *extra: str) -> tuple[subprocess.Popen, float]:
    began = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "rsp", "serve", "--port", str(port), "--quiet", "--data", str(data), *extra],
        cwd=ROOT, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(6000):
        try:
            httpx.get(f"http://127.0.0.1:{port}/queries", timeout=1)
            return server, time.perf_counter() - began
        except httpx.TransportError:
            time.sleep(0.01)
    raise RuntimeError("the service did not start")


def restart(range_s: int, rate: int = 20_000, seconds: int = 120, per_request: int = 1000) -> dict:
    """Restart time and log size of a service whose query has a ``range_s`` window."""
    from serve import batch_text

    with tempfile.TemporaryDirectory(prefix="rsp-serve-restart-") as folder:
        data, port = Path(folder) / "data", _port()
        server, _ = _start(data, port, "--compact-bytes", str(1 << 20), "--retain", "10")
        query = (f"REGISTER QUERY Load AS SELECT ?sensor (COUNT(*) AS ?n) FROM STREAM <{STREAM}> "
                 f"[RANGE {range_s}s STEP 1s] WHERE {{ ?sensor <http://ex.org/value> ?v }} "
                 "GROUP BY ?sensor")  # fmt: skip
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
        client.post("/queries", content=query).raise_for_status()
        total = rate * seconds
        for first in range(0, total, per_request):
            text = batch_text(first, min(total, first + per_request), rate, 10)
            client.post("/streams/elements", params={"stream": STREAM}, content=text).raise_for_status()
        server.terminate()
        server.wait(timeout=30)
        size = (data / "journal").stat().st_size
        server, took = _start(data, port)
        server.terminate()
        server.wait(timeout=30)
        return {"range_s": range_s, "elements": total, "journal_bytes": size, "restart_s": took}


def compare(run, rate, seconds, batch_ms, sensors, grace, repeat: int, ranges: list[int]) -> int:
    rounds: dict[bool, list[dict]] = {False: [], True: []}
    for number in range(repeat):
        for data in (False, True):
            print(f"-- round {number + 1}, {'with' if data else 'without'} --data")
            # a server behind its rate sends for longer than `seconds`: the subscribers wait that long too
            figures = run(rate, seconds, batch_ms, sensors, max(grace, 20 * seconds + 120), data)
            if figures["failures"]:
                return 1
            rounds[data].append(figures)

    def median(data: bool, key: str) -> float:
        return statistics.median(f[key] for f in rounds[data] if key in f)

    print(f"\nrsp serve with and without --data, {repeat} rounds round robin, medians:")
    print("| | elements/s | p50 ms | p99 ms | log bytes/element |")
    print("|---|---:|---:|---:|---:|")
    for data in (False, True):
        disk = f"{median(True, 'disk_bytes_per_element'):.1f}" if data else "–"
        print(f"| {'--data DIR' if data else 'in memory'} | {median(data, 'elements_per_s'):,.0f} | "
              f"{median(data, 'p50_ms'):.1f} | {median(data, 'p99_ms'):.1f} | {disk} |")  # fmt: skip
    ratio = median(True, "elements_per_s") / median(False, "elements_per_s")
    print(f"throughput with --data / without: {ratio:.2f} (goal ≥ 0.75)")
    print("\nrestart time against the window (120 s of event time at 20,000 elements/s, "
          "--compact-bytes 1 MiB):")
    print("| RANGE | log bytes at restart | restart s |")
    print("|---:|---:|---:|")
    for range_s in ranges:
        figures = restart(range_s)
        print(f"| {range_s} s | {figures['journal_bytes']:,} | {figures['restart_s']:.2f} |")
    return 0
