"""rsp's Spark plugin (:func:`rsp.spark.reason`) on a cluster that behaves like one, with faults (issue
43, item 4).

The cluster (benchmarks/spark_cluster.py, :class:`spark_cluster.Cluster` with ``isolated=True``): a
standalone master and two one-core workers on this machine, each worker started by the test in a mount
namespace of its own with a private ``/tmp`` (a tmpfs), its own work dir, ``SPARK_LOCAL_DIRS`` and rsp
cache: nothing an executor writes to a local path is seen by the other worker or the driver
(:func:`test_workers_share_no_temporary_folder` checks it). What the driver and the workers share is one
folder outside ``/tmp`` (:attr:`Cluster.shared`), which holds the input files and every job's
checkpoints and sinks, as a cluster's distributed file system would.

The job (benchmarks/spark_cluster_job.py, run as a subprocess so that a test can kill it): the input
files read one per micro-batch (``read_stream``), ``reason(..., instants=True)``, its rows written by
Spark's file sink (JSON), ``availableNow``. What the sink committed (the files its ``_spark_metadata``
log names, as Spark's own readers of a file sink take it: a file a failed attempt left is no output) is
compared with ``rsp run`` over the same lines: at every instant the sink marks closed (a row of kind
``instant``), the multiset of bindings must be ``rsp run``'s at that instant, each instant marked once
and every instant of ``rsp run`` up to the last marked one marked. No answer of these queries repeats a
binding within an instant, so any row the sink holds twice fails a test (and is reported as such).

The stream is long enough for a window (10 s, a step of 1 s) to span two to three input files, so that an
instant's answers depend on elements of earlier micro-batches: state lost in a fault shows as smaller
counts; and in its second file only one vehicle moves (:data:`QUIET`), so that a key bucket gets no
element while its instants close: an engine rebuilt with a wrong clock closes them again. The faults
come while the third micro-batch runs, whose engines are then rebuilt from the state store. Checked by
breaking it (by hand in a copy of the tree, not part of the tests): with the engines rebuilt from the
state store without their kept elements, both fault tests failed (instants of 10 s and on without
answers) and the fault-free ones passed; with the engines rebuilt without the clock the state store
keeps (the last instant closed), both fault tests failed (instants 5 s to 9 s marked twice) and the
fault-free ones passed.

These tests need Linux, ``unshare`` and Java 17, and a mount namespace and a tmpfs mount per worker:
as root, or without it in a user namespace of the worker's own where the kernel allows unprivileged
ones. They are skipped without them, unless ``RSP_REQUIRE_CLUSTER=1`` (``make test``) makes that a
failure. Marked ``spark`` and ``cluster``; about 3 minutes on 2 cores (2.7 on a quiet machine, 3.3 beside
other jobs), most of it the start of each application (its JVMs and Python workers), four in all."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest
from paths import ROOT

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

sys.path.insert(0, str(ROOT / "benchmarks"))

import spark_cluster  # noqa: E402 - benchmarks/spark_cluster.py
from spark_cluster_job import EXECUTOR_OPTIONS as JOB_JVM  # noqa: E402 - benchmarks/spark_cluster_job.py

from rsp.cli import main  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

JOB = ROOT / "benchmarks" / "spark_cluster_job.py"

SHORT_RUN = {  # the driver's JVM as the executors' (spark_cluster_job.py): start-up is most of a short run
    "RSP_SPARK_JAVA_OPTIONS": f"{os.environ.get('RSP_SPARK_JAVA_OPTIONS', '')} {JOB_JVM}".strip(),
}

XSD_INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"

QUERIES = {
    # partitioned by ?v (the per-vehicle query of benchmarks/spark.py): one engine per key bucket
    "PerVehicle": """REGISTER QUERY PerVehicle AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?slowest) (COUNT(DISTINCT ?place) AS ?places)
FROM STREAM <http://ex.org/pos> [RANGE 10s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 20) }
GROUP BY ?v
""",
    # not partitionable by ?v (vehicles grouped by their places): one engine for the whole stream
    "PerStop": """REGISTER QUERY PerStop AS
PREFIX ex: <http://ex.org/>
SELECT ?place (COUNT(?s) AS ?n) (MAX(?s) AS ?fastest) (COUNT(DISTINCT ?v) AS ?vehicles)
FROM STREAM <http://ex.org/pos> [RANGE 10s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place FILTER(?s >= 30) }
GROUP BY ?place
""",
}

ELEMENTS, VEHICLES, STRIDE, FILES = 1200, 12, 25, 6
"""Up to 1,200 elements (2 triples each) of 12 vehicles, one every 25 ms: 30 s of stream, 30 instants,
in 6 files of 5 s each read one per micro-batch, so a 10 s window spans two to three of them."""

QUIET = (5_000, 10_000)
"""In the second file only ``bus0`` moves: the key bucket(s) without it get no element in the second
micro-batch while its instants close (every bucket closes the instants the micro-batch passes), so
that an engine rebuilt after it must take its clock from the state store, not from its newest element."""

KILL_AFTER = 2
"""The micro-batches committed before a fault (the other files are still to be read)."""


def vehicle_lines(elements: int = ELEMENTS, vehicles: int = VEHICLES, stride: int = STRIDE) -> list[str]:
    """Per-vehicle positions (benchmarks/spark.py's ``vehicle_lines``, one element every ``stride`` ms
    and 8 places): a vehicle's speed and its place; none but ``bus0``'s in :data:`QUIET`."""
    lines = []
    for k in range(elements):
        v, t = (k * 7919) % vehicles, k * stride
        if v != 0 and QUIET[0] <= t < QUIET[1]:
            continue
        lines.append(f'<http://ex.org/bus{v}> <http://ex.org/speed> "{k * 31 % 40}"^^{XSD_INTEGER} . # {t}\n')
        lines.append(f"<http://ex.org/bus{v}> <http://ex.org/at> <http://ex.org/stop{k * 13 % 8}> . # {t}\n")
    return lines


# -- the cluster, the input, the references ----------------------------------------------------------


@pytest.fixture(scope="module")
def standalone():
    """The isolated cluster (skipped where it cannot be made; a failure with ``RSP_REQUIRE_CLUSTER=1``,
    as ``make test`` sets)."""
    from rsp.spark import java_executable

    why = "no java: Spark tests need a JRE 17 (apt-get install openjdk-17-jre-headless)"
    if java_executable() is not None:
        why = spark_cluster.isolation_possible()
        why = why and f"no isolated workers here: {why}"
    if why is not None:
        if os.environ.get("RSP_REQUIRE_CLUSTER"):
            pytest.fail(f"RSP_REQUIRE_CLUSTER is set: {why}")
        pytest.skip(why)
    with spark_cluster.Cluster(isolated=True) as cluster:
        yield cluster


@pytest.fixture
def cluster(standalone):
    """The module's cluster with both workers up (a worker a test killed is started again); a job the
    test left running is killed at the end."""
    standalone.ensure_workers()
    yield standalone
    while Job.started:
        job = Job.started.pop()
        if job.running():
            with contextlib.suppress(AssertionError):
                job.kill_driver()


@pytest.fixture(scope="module")
def data(standalone) -> dict:
    """The input files in the shared folder, and ``rsp run``'s answers to each query over the same lines."""
    lines = vehicle_lines()
    folder = standalone.shared / "input"
    folder.mkdir()
    span = ELEMENTS * STRIDE // FILES
    parts: list[list[str]] = [[] for _ in range(FILES)]
    for line in lines:
        parts[int(line.rsplit("# ", 1)[1]) // span].append(line)
    now = time.time()
    for index, part in enumerate(parts):  # dated in order: Spark's file source takes files by their time
        path = folder / f"part-{index:02d}.nt"
        path.write_text("".join(part))
        os.utime(path, (now - 100 + index, now - 100 + index))
    stream = standalone.shared / "all.nt"
    stream.write_text("".join(lines))
    expected = {}
    for name, text in QUERIES.items():
        query = standalone.shared / f"{name}.rq"
        query.write_text(text)
        out = standalone.shared / f"{name}.jsonl"
        assert main(["run", str(query), "--stream", str(stream), "-q", "--output", str(out)]) == 0
        expected[name] = _reference(out.read_text())
    return {"input": folder, "expected": expected}


def _key(bindings: dict) -> str:
    return json.dumps({k: v for k, v in bindings.items() if v is not None}, sort_keys=True)


def _reference(text: str) -> dict[int, Counter]:
    """``rsp run``'s JSON lines: instant -> multiset of bindings."""
    answers = {}
    for line in text.splitlines():
        record = json.loads(line)
        answers[record["time"]] = Counter(_key(b) for b in record["bindings"])
    return answers


# -- a job ---------------------------------------------------------------------------------------------


class Output:
    """One query of a job: its checkpoint and sink, and its reference answers."""

    def __init__(self, folder: Path, query: str, expected: dict[int, Counter]) -> None:
        self.query, self.expected = query, expected
        self.checkpoint, self.sink = folder / query / "checkpoint", folder / query / "sink"

    def batches(self, log: str) -> set[int]:
        """The micro-batches the checkpoint's ``offsets`` or ``commits`` log holds, or the sink's log."""
        folder = self.sink / "_spark_metadata" if log == "sink" else self.checkpoint / log
        try:
            return {int(p.name.split(".")[0]) for p in folder.iterdir() if p.name[0].isdigit()}
        except FileNotFoundError:
            return set()

    def committed(self) -> tuple[list[dict], list[Path]]:
        """The rows of the files the sink's log commits, and the files in the sink it does not."""
        files: set[Path] = set()
        for entry in (self.sink / "_spark_metadata").iterdir():
            if not entry.name[0].isdigit() or entry.name.endswith(".tmp"):
                continue
            lines = entry.read_text().splitlines()
            assert lines[0] == "v1", entry
            for line in lines[1:]:
                record = json.loads(line)
                assert record.get("action", "add") == "add", record
                files.add(Path(urllib.parse.unquote(urllib.parse.urlparse(record["path"]).path)))
        rows = []
        for path in sorted(files):
            rows += [json.loads(line) for line in path.read_text().splitlines() if line]
        strays = [p for p in self.sink.glob("part-*") if p not in files]
        return rows, strays


class Job:
    """A run of benchmarks/spark_cluster_job.py against the cluster, one streaming query for each of
    ``queries`` (its name in :data:`QUERIES`, its partition variable or None), their checkpoints and sinks
    in the shared folder under ``name``; started again, it goes on from the checkpoints."""

    started: list[Job] = []
    """The jobs started (the ``cluster`` fixture kills those still running after a test)."""

    def __init__(self, cluster, data: dict, name: str, queries: list[tuple[str, str | None]]) -> None:
        self.folder = cluster.shared / name
        self.folder.mkdir()
        self.outputs = [Output(self.folder, query, data["expected"][query]) for query, _ in queries]
        self.args = ["--master", cluster.url, "--input", str(data["input"]), "--cores", "2"]
        for (query, key), output in zip(queries, self.outputs, strict=True):
            self.args += ["--query", str(cluster.shared / f"{query}.rq"), "--sink", str(output.sink),
                          "--checkpoint", str(output.checkpoint), "--partition-by", key or "-"]  # fmt: skip
        self.process: subprocess.Popen | None = None
        self.runs = 0

    def start(self, *extra: str) -> None:
        self.runs += 1
        Job.started.append(self)
        self.log = self.folder / f"driver-{self.runs}.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(  # noqa: S603
                [sys.executable, str(JOB), *self.args, *extra],
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **SHORT_RUN},
            )  # fmt: skip

    def wait(self, timeout: float = 180) -> dict:
        """Wait for the run to end; it must succeed. Its summary (the job's last line)."""
        assert self.process is not None
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"the job ran over {timeout} s:\n{self.tail()}") from None
        assert code == 0, f"the job failed ({code}):\n{self.tail()}"
        return json.loads(self.log.read_text().strip().splitlines()[-1])

    def run(self, *extra: str) -> dict:
        self.start(*extra)
        return self.wait()

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def tail(self, size: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-size:]

    def wait_until(self, ready, timeout: float = 120, poll: float = 0.005) -> None:
        """Poll until ``ready()``; the job must still be running."""
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.running(), f"the job ended first:\n{self.tail()}"
            assert time.monotonic() < deadline, f"not reached after {timeout} s:\n{self.tail()}"
            time.sleep(poll)

    def kill_driver(self) -> None:
        """SIGKILL the driver: its Python process, its JVM and whatever they started (a driver machine
        gone), all at once."""
        assert self.process is not None
        tree = _descendants(self.process.pid)
        assert tree, "the driver has no JVM"
        for pid in (self.process.pid, *tree):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in tree):
            assert time.monotonic() < deadline, "the driver's processes outlived SIGKILL"
            time.sleep(0.05)


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (state, parent …), None when gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _descendants(pid: int) -> list[int]:
    """The ids of the processes ``pid`` started, and theirs, …"""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        todo += children
    return found


def check_answers(output: Output, min_instants: int = 25) -> dict:
    """The sink's committed rows against ``rsp run`` (see the module docstring); a summary."""
    rows, strays = output.committed()
    expected = output.expected
    assert all(n == 1 for counter in expected.values() for n in counter.values()), "the reference repeats"
    kinds = Counter(r["kind"] for r in rows)
    assert not {"late", "reject"} & set(kinds), f"late or rejected elements: {kinds}"  # others: bookkeeping
    assert {r["query"] for r in rows} == {output.query}
    instants = Counter(r["time"] for r in rows if r["kind"] == "instant")
    twice = sorted(t for t, n in instants.items() if n > 1)
    assert not twice, f"instants marked more than once: {twice}"
    last = max(instants)
    assert sorted(instants) == sorted(t for t in expected if t <= last), (
        "instants marked differ from rsp run's"
    )
    assert len(instants) >= min_instants, f"only {len(instants)} instants closed"
    answers: dict[int, Counter] = {t: Counter() for t in instants}
    for row in rows:
        if row["kind"] == "answer":
            answers.setdefault(row["time"], Counter())[_key(row["bindings"])] += 1
    unmarked = sorted(set(answers) - set(instants))
    assert not unmarked, f"answers at instants never marked closed: {unmarked}"
    repeated = {(t, b): n for t, counter in answers.items() for b, n in counter.items() if n > 1}
    assert not repeated, f"rows the sink holds more than once: {repeated}"
    differ = {t: (answers[t], expected[t]) for t in sorted(instants) if answers[t] != expected[t]}
    assert not differ, (
        f"{len(differ)} instant(s) differ from rsp run, the first: {next(iter(differ.items()))}"
    )
    total = sum(sum(c.values()) for c in answers.values())
    assert total >= 2 * len(instants)
    return {"query": output.query, "instants": len(instants), "answers": total, "strays": len(strays)}


def _state_stores(worker) -> set[int]:
    """The partitions whose state store the worker's executor holds (RocksDB folders in its local dirs,
    named ``StateStoreId(opId=0,partId=N,name=default)…``)."""
    found = set()
    for _folder, names, _files in os.walk(worker.folder / "local"):  # folders going as it walks: no error
        found |= {
            int(name.split("partId=")[1].split(",")[0]) for name in names if name.startswith("StateStoreId")
        }
    return found


def _checkpointed_state(output: Output) -> dict[int, int]:
    """Partition -> the bytes of its state changelogs in the checkpoint (a partition without keys writes
    a few dozen bytes per micro-batch; with both buckets of a run, kilobytes)."""
    sizes: dict[int, int] = {}
    for path in (output.checkpoint / "state" / "0").glob("*/*.changelog"):
        with contextlib.suppress(OSError, ValueError):
            sizes[int(path.parent.name)] = sizes.get(int(path.parent.name), 0) + path.stat().st_size
    return sizes


# -- the tests -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fault_free(standalone, data) -> dict:
    """One run without faults of both queries at once, ``PerVehicle`` with ``partition_by="?v"`` and
    ``PerStop`` without, probing the workers' ``/tmp`` first."""
    standalone.ensure_workers()
    job = Job(standalone, data, "fault-free", [("PerVehicle", "?v"), ("PerStop", None)])
    probe = job.folder / "probe.json"
    summary = job.run("--probe", str(probe))
    return {"job": job, "summary": summary, "probe": json.loads(probe.read_text())}


def test_workers_share_no_temporary_folder(cluster, fault_free) -> None:
    """The isolation the other tests rely on: each worker's executor sees a ``/tmp`` of its own (another
    mount namespace, another device), where a file its task wrote is visible to it and to no one else:
    not to the other worker's executor, not to the driver; their working and local dirs differ too. The
    workers' processes (each one's JVM, executor and Python workers) are known, to be killed."""
    probe = fault_free["probe"]
    driver = probe["driver"]
    executors = {e["namespace"]: e for e in probe["executors"]}
    assert len(executors) == 2, "the probe's tasks ran on one executor only"
    assert driver["namespace"] not in executors
    devices = {e["tmp_device"] for e in executors.values()}
    assert len(devices) == 2 and driver["tmp_device"] not in devices
    assert driver["tmp_files"] == [], "a file a task wrote to /tmp is visible to the driver"
    for namespace, seen in executors.items():
        assert seen["tmp_files"], "a task's file is not visible to its own executor"
        mine = f"-{namespace.strip('mnt:[]')}-"
        assert all(mine in name for name in seen["tmp_files"]), "a worker sees the other's /tmp"
    assert len({e["cwd"] for e in executors.values()}) == 2
    assert len({e["local_dirs"] for e in executors.values()}) == 2
    assert not any(e["cwd"].startswith(str(cluster.shared)) for e in executors.values())
    assert {w.namespace for w in cluster.workers} == set(executors)
    for worker in cluster.workers:
        assert worker.pid in worker.processes()


def test_partitioned_answers_as_rsp_run(fault_free) -> None:
    """``partition_by="?v"`` on the cluster, no faults: at every closed instant the answers of ``rsp
    run``, none twice."""
    print(check_answers(fault_free["job"].outputs[0]), fault_free["summary"])


def test_unpartitioned_answers_as_rsp_run(fault_free) -> None:
    """One engine for the whole stream (no ``partition_by``) on the cluster, no faults: at every closed
    instant the answers of ``rsp run``, none twice."""
    print(check_answers(fault_free["job"].outputs[1]))


def test_worker_killed_mid_stream(cluster, data) -> None:
    """A worker killed with SIGKILL (its JVM, its executor, their Python workers: every process of its
    mount namespace) while a micro-batch runs, after two were committed and with files left to read: its
    partitions go to the other worker's executor, which loads their state from the checkpoint; the run
    ends normally, and the sink holds exactly ``rsp run``'s answers at every closed instant, none lost,
    none twice. The worker killed is one that held the engines' state (the state store partition with
    the most state in the checkpoint has its instance in the worker's local dirs), and the other
    worker's executor holds that partition afterwards."""
    job = Job(cluster, data, "worker-killed", [("PerVehicle", "?v")])
    output = job.outputs[0]
    job.start()
    job.wait_until(
        lambda: (
            len(output.batches("commits")) >= KILL_AFTER
            and bool(output.batches("offsets") - output.batches("commits"))
            and any(_state_stores(w) for w in cluster.workers)
        )
    )
    held = {w.index: _state_stores(w) for w in cluster.workers}
    sizes = _checkpointed_state(output)
    assert sizes, "no state in the checkpoint after two micro-batches"
    busiest = max(sizes, key=sizes.get)  # the partition with the engines' state
    assert sizes[busiest] > 1000, f"no partition has state yet: {sizes}"
    holders = [w for w in cluster.workers if busiest in held[w.index]]
    assert holders, f"no worker holds partition {busiest}'s state store: {held}"
    victim = holders[0]
    survivor = next(w for w in cluster.workers if w is not victim)
    committed = sorted(output.batches("commits"))
    killed = victim.kill()
    assert victim.process.poll() is not None and not victim.processes()
    taken: set[int] = set()
    while job.running():
        taken |= _state_stores(survivor)
        time.sleep(0.05)
    run = job.wait()
    assert busiest in taken, f"the state of partition {busiest} never moved to the other worker"
    assert len(committed) < FILES
    print(check_answers(output), run, {"killed": killed, "held": held, "state bytes": sizes,
                                       "committed before": committed})  # fmt: skip


def test_driver_killed_and_restarted(cluster, data) -> None:
    """The driver (its Python process, its JVM and what they started) killed with SIGKILL mid-stream,
    after two micro-batches were committed, while the third runs and before the sink has its output;
    then the same job started again on the same checkpoints: it goes on from there, the micro-batch in
    flight run again by engines rebuilt from the state store (the one that got no element in the second
    micro-batch included), and both queries' sinks hold exactly ``rsp run``'s answers at every closed
    instant, none lost, none twice."""
    job = Job(cluster, data, "driver-killed", [("PerVehicle", "?v"), ("PerStop", None)])
    output = job.outputs[0]
    job.start()
    job.wait_until(lambda: len(output.batches("commits")) >= KILL_AFTER)
    time.sleep(0.3)  # into the next micro-batch's tasks
    job.wait_until(lambda: bool(output.batches("offsets") - output.batches("sink")))
    job.kill_driver()
    before = {
        o.query: {name: sorted(o.batches(name)) for name in ("offsets", "commits", "sink")}
        for o in job.outputs
    }
    assert len(before["PerVehicle"]["commits"]) < FILES, "the run had ended before the kill"
    run = job.run()
    print([check_answers(o) for o in job.outputs], run, before)
