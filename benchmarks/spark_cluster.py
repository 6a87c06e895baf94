"""A simulated Spark cluster on this machine: a standalone master and two one-core workers on 127.0.0.1,
started from the classes pyspark's pip package ships (``pyspark/bin/spark-class``; Java from PATH or
``JAVA_HOME``), each worker isolated where it can be (a mount namespace of its own, with a private
``/tmp``); and ``rsp spark --partition-by`` run on it against local mode.

    python benchmarks/spark_cluster.py [--elements N] [--vehicles K] [--batches B] [--repeat R]

A per-vehicle query (``GROUP BY ?v`` over a 10 s window) over N elements (2 triples each) and K
vehicles, B micro-batches, runs R rounds round robin: ``rsp run`` (one process), ``rsp spark
--partition-by ?v`` on ``local[2]``, and the same with ``--master spark://127.0.0.1:PORT`` (two
executors of one core each, one per worker). Each command is timed from start to exit, with the time
inside the streaming query from the run's summary; the output of every run must equal ``rsp run``'s byte
for byte (exit status 1 otherwise). Timings are printed, never asserted; each figure comes with the
1-minute load average before and after its run.

:class:`Cluster` (a context manager: the master, the workers, each worker isolated with a private
``/tmp`` on request, and the folder they share) is shared with tests/spark/test_spark_cluster.py, which
runs benchmarks/spark_cluster_job.py (a Spark user's job with :func:`rsp.spark.reason` in it) on it and
kills workers and drivers.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent


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


SHARED_ROOT = Path("/var/tmp")
"""Where an isolated cluster's shared folder goes (:attr:`Cluster.shared`): outside ``/tmp``, which each
of its workers has a private one of."""


def _unshare() -> list[str]:
    """The command that runs a process in a mount namespace of its own: as root, ``unshare --mount``;
    else in a user namespace of its own too, where the user is root (``--map-root-user``) and may mount
    (the kernel must allow unprivileged user namespaces)."""
    command = ["unshare", "--mount", "--propagation", "private"]
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        command[1:1] = ["--user", "--map-root-user"]
    return command


def isolation_possible() -> str | None:
    """Why workers cannot get a private ``/tmp`` here (None when they can): it takes Linux, ``unshare``
    and a tmpfs mount in a new mount namespace (tried once; without root, in a new user namespace)."""
    if not sys.platform.startswith("linux"):
        return "a private /tmp per worker needs Linux (mount namespaces)"
    if shutil.which("unshare") is None:
        return "no unshare (util-linux) on PATH"
    tried = subprocess.run(  # noqa: S603
        [*_unshare(), "sh", "-c", _PRIVATE_TMP + " && exec true"], capture_output=True, text=True
    )
    if tried.returncode != 0:
        return f"{' '.join(_unshare())} failed: {tried.stderr.strip()}"
    return None


def _kept_under_tmp() -> list[str]:
    """The folders under ``/tmp`` a worker still needs to see (this checkout, the virtual environment,
    PySpark, Python): the first level under ``/tmp`` of each, e.g. a clone in ``/tmp/clean``."""
    import pyspark

    kept = set()
    for path in (Path(__file__).resolve().parents[1], Path(sys.prefix), Path(pyspark.__file__).resolve(),
                 Path(sys.executable).resolve()):  # fmt: skip
        parts = path.parts
        if len(parts) > 2 and parts[:2] == ("/", "tmp"):
            kept.add(f"/tmp/{parts[2]}")
    return sorted(kept)


def _private_tmp() -> str:
    """The shell command that gives a process in a new mount namespace a /tmp of its own (a tmpfs), the
    folders of :func:`_kept_under_tmp` bound back into it from the /tmp of the machine."""
    steps = []
    kept = _kept_under_tmp()
    if kept:
        steps += ['keep=/var/tmp/rsp-worker-keep', 'mkdir -p "$keep"', 'mount --bind /tmp "$keep"']
    steps.append("mount -t tmpfs -o size=1g,mode=1777 rsp-worker-tmp /tmp")
    for path in kept:
        steps += [f"mkdir -p {path}", f'mount --bind "$keep/{path[5:]}" {path}']
    return " && ".join(steps)


_PRIVATE_TMP = _private_tmp()
"""The shell command that gives a process in a new mount namespace a /tmp of its own."""


def _namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


class Worker:
    """A standalone worker of a :class:`Cluster`: its JVM's process, and its own folder (``folder``:
    the work dir ``work``, Spark's local dirs ``local``, rsp's cache ``cache``, its log), used by
    nobody else. Isolated, it runs in a mount namespace of its own with a private ``/tmp`` (a tmpfs):
    its executors and their Python workers are in that namespace too, so they are all
    :meth:`processes` of the worker, and :meth:`kill` ends them all (a machine gone)."""

    def __init__(self, index: int, folder: Path) -> None:
        self.index, self.folder = index, folder
        self.process: subprocess.Popen | None = None
        self.namespace: str | None = None
        self.starts = 0
        self.log: Path | None = None

    @property
    def pid(self) -> int:
        """The worker JVM's process id (``unshare`` and ``sh`` exec into spark-class, which execs java)."""
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def processes(self) -> list[int]:
        """The process ids of the worker's JVM and, isolated, of every process in its mount namespace
        (its executors' JVMs and their Python workers)."""
        if self.process is None:
            return []
        if self.namespace is None:
            return [self.pid] if self.alive() else []
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and _namespace(int(entry.name)) == self.namespace:
                found.append(int(entry.name))
        return found

    def kill(self, signal: int = 9) -> list[int]:
        """Send ``signal`` (SIGKILL by default) to the worker's JVM and every other of its
        :meth:`processes`, the JVM first; with SIGKILL, again until none is left, and the JVM reaped. Not
        isolated: to the JVM's process group (it and its executors). The ids signalled."""
        if self.process is None:
            return []
        if self.namespace is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal)
            return [self.pid]
        signalled: list[int] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pids = sorted(self.processes(), key=lambda pid: pid != self.pid)  # the worker first
            if signal != 9:
                pids = [pid for pid in pids if pid not in signalled]
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal)
                if pid not in signalled:
                    signalled.append(pid)
            if signal != 9:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=0.1)  # reaped: no zombie left in the namespace
            if not pids and self.process.poll() is not None:
                break
        return signalled


class Cluster:
    """A Spark standalone master and workers on 127.0.0.1, every one a JVM of this process's started
    from pyspark's ``spark-class``.

    ``isolated``: each worker in a mount namespace of its own with a private ``/tmp``, its own work dir,
    local dirs (``SPARK_LOCAL_DIRS``) and rsp cache, so that nothing a worker's executor writes to a
    local path is seen by the other worker or the driver: what the workers and the driver share is
    :attr:`shared` (a folder outside ``/tmp``, under :data:`SHARED_ROOT`), where a job's input,
    checkpoint and sink go. Use as a context manager (everything stopped and removed at the end)."""

    def __init__(
        self,
        workers: int = 2,
        cores: int = 1,
        memory: str = "1g",
        timeout: float = 90,
        isolated: bool = False,
    ) -> None:
        self.cores, self.memory, self.timeout, self.isolated = cores, memory, timeout, isolated
        if isolated:
            why = isolation_possible()
            if why is not None:
                raise RuntimeError(f"spark standalone: cannot isolate the workers: {why}")
        self.base = Path(
            tempfile.mkdtemp(prefix="rsp-spark-standalone-", dir=SHARED_ROOT if isolated else None)
        )
        self.shared = self.base / "shared"
        """The folder the driver and every worker reach (the input, checkpoints and sinks of jobs)."""
        self.shared.mkdir()
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.home = _spark_home()
        self.env = dict(os.environ, SPARK_HOME=str(self.home), SPARK_LOCAL_IP="127.0.0.1",
                        SPARK_NO_DAEMONIZE="1", SPARK_LOG_DIR=str(self.base), SPARK_DAEMON_MEMORY="256m",
                        SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1")  # fmt: skip
        self.env.setdefault("PYSPARK_PYTHON", sys.executable)
        self.master: subprocess.Popen | None = None
        self.workers = [Worker(index, self.base / f"worker-{index}") for index in range(workers)]

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """The master, then every worker; returns once all have registered with the master."""
        master_log = self.base / "master.log"
        with master_log.open("wb") as log:
            self.master = subprocess.Popen(  # noqa: S603 - pyspark's own launcher
                [str(self.home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master", "--host",
                 "127.0.0.1", "--port", str(self.port), "--webui-port", str(_free_port())],
                stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True,
            )  # fmt: skip
        _wait_for(
            master_log, r"Starting Spark master at|I have been elected leader", 1, self.timeout, self.master
        )
        for worker in self.workers:
            self._launch(worker)
        for worker in self.workers:
            self._registered(worker)

    def start_worker(self, index: int) -> Worker:
        """Start worker ``index`` again (after :meth:`Worker.kill`), with fresh folders; returns once it
        has registered with the master."""
        worker = self.workers[index]
        if worker.alive():
            return worker
        self._launch(worker)
        self._registered(worker)
        return worker

    def ensure_workers(self) -> None:
        """Every worker running and registered (the ones killed started again)."""
        dead = [worker for worker in self.workers if not worker.alive()]
        for worker in dead:
            worker.kill()  # what may be left of it
            self._launch(worker)
        for worker in dead:
            self._registered(worker)

    def _launch(self, worker: Worker) -> None:
        shutil.rmtree(worker.folder, ignore_errors=True)
        for name in ("work", "local", "cache"):
            (worker.folder / name).mkdir(parents=True)
        worker.starts += 1
        worker.log = worker.folder / "worker.log"
        folder = worker.folder
        env = dict(self.env, SPARK_WORKER_DIR=str(folder / "work"), SPARK_LOCAL_DIRS=str(folder / "local"),
                   RSP_CACHE_DIR=str(folder / "cache"), XDG_CACHE_HOME=str(folder / "cache"))  # fmt: skip
        command = [str(self.home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker", self.url,
                   "--host", "127.0.0.1", "--cores", str(self.cores), "--memory", self.memory,
                   "--webui-port", str(_free_port()), "--work-dir", str(worker.folder / "work")]  # fmt: skip
        if self.isolated:  # a mount namespace of its own, with a private /tmp, then exec spark-class
            env["TMPDIR"] = "/tmp"
            command = [*_unshare(), "sh", "-c", _PRIVATE_TMP + ' && exec "$@"', "sh", *command]
        with worker.log.open("wb") as log:
            worker.process = subprocess.Popen(  # noqa: S603
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                cwd=worker.folder,
            )
        worker.namespace = None

    def _registered(self, worker: Worker) -> None:
        assert worker.process is not None and worker.log is not None
        _wait_for(worker.log, r"Successfully registered with master", 1, self.timeout, worker.process)
        if self.isolated:
            worker.namespace = _namespace(worker.pid)
            if worker.namespace is None or worker.namespace == _namespace(os.getpid()):
                raise RuntimeError(
                    f"spark standalone: worker {worker.index} is not in a mount namespace of its own"
                )

    def stop(self) -> None:
        """Every worker (with its executors) and the master stopped, the folders removed."""
        for worker in self.workers:
            if worker.process is None:
                continue
            worker.kill(15)
            try:
                worker.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            worker.kill(9)
            worker.process.wait()
        if self.master is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.master.pid, 15)
            try:
                self.master.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.master.pid, 9)
                self.master.wait()
        shutil.rmtree(self.base, ignore_errors=True)


QUERY = """REGISTER QUERY Slow AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?slowest) (COUNT(DISTINCT ?place) AS ?places)
FROM STREAM <http://ex.org/pos> [RANGE 10s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 20) }
GROUP BY ?v
"""
"""Per vehicle over the last 10 s: how many slow readings, the slowest, at how many places (the
partitioned query of benchmarks/spark.py)."""


def vehicle_lines(elements: int, vehicles: int) -> list[str]:
    """Every ms one of ``vehicles`` vehicles reports its speed and place."""
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    lines = []
    for k in range(elements):
        v = (k * 7919) % vehicles
        lines.append(f'<http://ex.org/bus{v}> <http://ex.org/speed> "{k * 31 % 40}"^^{integer} . # {k}\n')
        lines.append(f"<http://ex.org/bus{v}> <http://ex.org/at> <http://ex.org/stop{k * 13 % 50}> . # {k}\n")
    return lines


SUMMARY = re.compile(r"(\d+) micro-batch\(es\) in ([0-9.]+) s")
"""The summary line ``rsp spark`` writes to stderr (the time in the streaming query)."""


def timed(command: list[str], output: Path, timeout: float = 3600) -> dict:
    """``python -m rsp COMMAND…``, its stdout to ``output``: wall time, the time in the streaming query
    (when it says), exit code, the 1-minute load average before and after."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with output.open("wb") as sink:
        done = subprocess.run([sys.executable, "-m", "rsp", *command], stdout=sink, stderr=subprocess.PIPE,  # noqa: S603
                              timeout=timeout, check=False, cwd=HERE.parent)  # fmt: skip
    result = {"wall": time.perf_counter() - start, "returncode": done.returncode,
              "load": (load, os.getloadavg()[0])}  # fmt: skip
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode:
        result["error"] = " | ".join(stderr.strip().splitlines()[-3:])
    found = SUMMARY.search(stderr)
    if found:
        result["query_s"] = float(found.group(2))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=50_000, help="elements (2 triples each)")
    parser.add_argument("--vehicles", type=int, default=100)
    parser.add_argument("--batches", type=int, default=4, help="files, read one per micro-batch")
    parser.add_argument("--repeat", type=int, default=1, help="rounds, round robin")
    args = parser.parse_args(argv)
    isolated = isolation_possible() is None
    with Cluster(isolated=isolated) as cluster:
        data = cluster.shared
        query = data / "slow.rq"
        query.write_text(QUERY)
        lines = vehicle_lines(args.elements, args.vehicles)
        (data / "vehicles.nt").write_text("".join(lines))
        folder, size, now = data / "vehicles", -(-len(lines) // args.batches), time.time()
        folder.mkdir()
        for index in range(args.batches):  # dated in order: Spark takes new files by modification time
            path = folder / f"part-{index:03d}.nt"
            path.write_text("".join(lines[index * size : (index + 1) * size]))
            os.utime(path, (now - 1000 + index, now - 1000 + index))
        spark = ["spark", str(query), "--stream", str(folder), "--available-now", "--max-files-per-trigger",
                 "1", "--partition-by", "?v"]  # fmt: skip
        commands = {
            "rsp run": ["run", str(query), "--stream", str(data / "vehicles.nt"), "-q"],
            "rsp spark --partition-by ?v, local[2]": [*spark, "--master", "local[2]"],
            f"rsp spark --partition-by ?v, standalone 2 x 1 core{', isolated' if isolated else ''}": [
                *spark, "--master", cluster.url],
        }  # fmt: skip
        print(f"{len(lines):,} triples, {args.vehicles} vehicles, {args.batches} micro-batches; "
              f"{os.cpu_count()} cores on this machine", flush=True)  # fmt: skip
        best: dict[str, dict] = {}
        outputs: dict[str, bytes] = {}
        for round_ in range(args.repeat):
            for number, (name, command) in enumerate(commands.items()):
                output = data / f"output-{number}.jsonl"
                if "--master" in command and not command[command.index("--master") + 1].startswith("local"):
                    # on a cluster the checkpoint (Spark's, and the end file rsp spark drops in it) must be
                    # where the executors see it too: without one rsp spark takes a local temporary folder
                    command = [*command, "--checkpoint", str(data / f"checkpoint-{number}-{round_}")]
                run = timed(command, output)
                outputs[name] = output.read_bytes()
                if name not in best or run["wall"] < best[name]["wall"]:
                    best[name] = run
    reference = outputs["rsp run"]
    bad = []
    print(f"{'command':<62} {'wall s':>8} {'query s':>8} {'triples/s (query)':>18} {'load':>11}  output")
    for name, run in best.items():
        same = run["returncode"] == 0 and outputs[name] == reference
        if not same:
            bad.append(name)
        query_s = run.get("query_s")
        rate = f"{len(lines) / query_s:,.0f}" if query_s else "-"
        load = f"{run['load'][0]:.1f}->{run['load'][1]:.1f}"
        in_query = f"{query_s:.1f}" if query_s else "-"
        print(f"{name:<62} {run['wall']:>8.1f} {in_query:>8} {rate:>18} {load:>11}  "
              f"{'= rsp run' if same else 'DIFFERS ' + str(run.get('error', ''))}")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
