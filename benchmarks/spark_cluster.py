"""A simulated Spark cluster on this machine: a standalone master and two one-core workers on 127.0.0.1,
started from the classes pyspark's pip package ships (``pyspark/bin/spark-class``; Java from PATH or
``JAVA_HOME``), and the partitioned benchmark query run on it against local mode.

    python benchmarks/spark_cluster.py [--elements N] [--vehicles K] [--batches B] [--repeat R]

The per-vehicle query of ``benchmarks/spark.py`` (``GROUP BY ?v`` over a 10 s window) over N elements
(2 triples each) and K vehicles, B micro-batches, runs R rounds round robin: ``rsp run`` (one process),
``rsp spark --partition-by ?v`` on ``local[2]``, and the same with ``--master spark://127.0.0.1:PORT``
(two executors of one core each, one per worker). Each command is timed from start to exit, with the
time inside the streaming query from the run's summary; the answers of every run must equal ``rsp
run``'s at every instant (exit status 1 otherwise). Timings are printed, never asserted; each figure
comes with the 1-minute load average before and after its run.

:func:`standalone` (a context manager: the master URL, the cluster stopped at the end) is shared with
``tests/spark/test_spark_cluster.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import spark as bench  # noqa: E402 - benchmarks/spark.py, beside this file


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(path: Path, pattern: str, count: int, timeout: float, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        if len(re.findall(pattern, text)) >= count:
            return
        if process.poll() is not None:
            raise RuntimeError(f"spark standalone: {path.name} ended:\n{text[-2000:]}")
        time.sleep(0.2)
    raise RuntimeError(f"spark standalone: no {pattern!r} x{count} in {path} after {timeout:.0f} s")


@contextlib.contextmanager
def standalone(workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 90) -> Iterator[str]:
    """A standalone master and ``workers`` workers of ``cores`` cores on 127.0.0.1, each a JVM of this
    process's; yields the master URL once every worker has registered, stops them all at the end."""
    home = _spark_home()
    work = Path(tempfile.mkdtemp(prefix="rsp-spark-standalone-"))
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
               SPARK_LOG_DIR=str(work), SPARK_WORKER_DIR=str(work / "worker"),
               SPARK_DAEMON_MEMORY="256m", SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1")  # fmt: skip
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    spark_class = str(home / "bin" / "spark-class")
    processes: list[subprocess.Popen] = []
    try:
        master_log = work / "master.log"
        with master_log.open("wb") as log:
            master = subprocess.Popen(  # noqa: S603 - pyspark's own launcher
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(_free_port())],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )  # fmt: skip
        processes.append(master)
        _wait_for(master_log, r"Starting Spark master at|I have been elected leader", 1, timeout, master)
        for index in range(workers):
            with (work / f"worker-{index}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(  # noqa: S603
                        [
                            spark_class,
                            "org.apache.spark.deploy.worker.Worker",
                            url,
                            "--host",
                            "127.0.0.1",
                            "--cores",
                            str(cores),
                            "--memory",
                            memory,
                            "--webui-port",
                            str(_free_port()),
                            "--work-dir",
                            str(work / f"worker-{index}"),
                        ],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                    )  # fmt: skip
                )
        _wait_for(master_log, r"Registering worker", workers, timeout, master)
        yield url
    finally:
        for process in reversed(processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 15)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)
                process.wait()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=50_000, help="elements (2 triples each)")
    parser.add_argument("--vehicles", type=int, default=100)
    parser.add_argument("--batches", type=int, default=4, help="files, read one per micro-batch")
    parser.add_argument("--repeat", type=int, default=1, help="rounds, round robin")
    args = parser.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="rsp-bench-cluster-"))
    try:
        query = data / "slow.rq"
        query.write_text(bench.PARTITIONED_QUERY)
        lines = bench.vehicle_lines(args.elements, args.vehicles)
        single = data / "vehicles.nt"
        single.write_text("".join(lines))
        bench.write_files(data / "vehicles", lines, args.batches)
        spark = ["spark", str(query), "--stream", str(data / "vehicles"), "--available-now",
                 "--max-files-per-trigger", "1", "--partition-by", "?v"]  # fmt: skip
        print(f"{len(lines):,} triples, {args.vehicles} vehicles, {args.batches} micro-batches; "
              f"{os.cpu_count()} cores on this machine", flush=True)  # fmt: skip
        with standalone() as url:
            commands = {
                "rsp run": ["run", str(query), "--stream", str(single), "-q"],
                "rsp spark --partition-by ?v, local[2]": spark,
                "rsp spark --partition-by ?v, standalone 2 x 1 core": [*spark, "--master", url],
            }
            best: dict[str, dict] = {}
            for _ in range(args.repeat):
                for name, command in commands.items():
                    run = bench.timed(command)
                    if name not in best or run["wall"] < best[name]["wall"]:
                        best[name] = run
        reference = best["rsp run"]["stdout"]
        bad = []
        print(f"{'command':<52} {'wall s':>8} {'query s':>8} {'triples/s (query)':>18} {'load':>11}  answers")
        for name, run in best.items():
            same = run.get("returncode") == 0 and bench.same_answers(reference, run["stdout"])
            if not same:
                bad.append(name)
            query_s = run.get("query_s")
            rate = f"{len(lines) / query_s:,.0f}" if query_s else "-"
            load = f"{run['load'][0]:.1f}->{run['load'][1]:.1f}"
            print(f"{name:<52} {run['wall']:>8.1f} {query_s or 0:>8.1f} {rate:>18} {load:>11}  "
                  f"{'= rsp run' if same else 'DIFFER: ' + str(run.get('error'))}")  # fmt: skip
        return 1 if bad else 0
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
