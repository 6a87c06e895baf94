"""The resident partition engines of ``rsp spark --partition-by`` (rsp/spark/resident.py):

* the key each line gets (:func:`rsp.spark.resident.keyed_lines`, Arrow's parse and key in the tasks;
  for the lines the pattern did not take, rsp's parser in every partition's step,
  :func:`rsp.spark.resident.recheck_rows`) equals :meth:`rsp.query.translation.partition.KeyPlan.key` of the triple
  rsp's N-Triples parser reads, on generated plans and lines (one local SparkSession), and a partition
  keeps exactly the keys Spark's hash partitioning gives it (:mod:`rsp.spark.hashing` against Spark's
  ``pmod(hash(key), n)`` on generated strings);
* a partition engine rebuilt from its recovery log (the Python worker that gets the partition does not
  hold its engine: another worker ran it, or the registry was lost) gives, micro-batch after
  micro-batch, exactly the rows of the engine that stayed resident, on generated streams and worker
  assignments (the task function run in-process, no Spark session).
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import tempfile
import time
import types
import uuid
from pathlib import Path

import pytest
from fuzzing import (
    batches_text,
    examples,
    read_batches_text,
    read_timed_triple_line,
    saved_cases,
    saved_on_failure,
    timed_triple_line,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paths import GOLDEN_SPARK

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from pyspark.sql import functions as F  # noqa: E402

from rsp.errors import RspError  # noqa: E402
from rsp.query.translation.partition import RDF_TYPE, KeyPlan  # noqa: E402
from rsp.spark import resident, resident_driver  # noqa: E402
from rsp.spark.hashing import partition_of, partitions_of, spark_hash, spark_hashes  # noqa: E402
from rsp.spark.partitioned import REJECT_KEY  # noqa: E402
from rsp.spark.resident import Job  # noqa: E402

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]
GOLDEN_ROOT = GOLDEN_SPARK

EX = "http://ex.org/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
QUERY = """REGISTER RSTREAM Slow AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?slowest) (COUNT(DISTINCT ?place) AS ?places)
FROM STREAM <http://ex.org/pos> [RANGE 3s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 20) }
GROUP BY ?v
"""
PLAN = KeyPlan("v", ((f"<{EX}at>", 0), (f"<{EX}speed>", 0)))
STEP = 1000


# -- rebuilds from the recovery log --------------------------------------------------------------------
class _Task:
    def __init__(self, partition: int) -> None:
        self.partition = partition

    def partitionId(self) -> int:  # noqa: N802 - pyspark's name
        return self.partition


def _table(elements: list[tuple[int, str, str, str]]) -> pa.RecordBatch:
    """A micro-batch's rows for one partition as the shuffle hands them to the step: keyed as
    keyed_lines keys them, packed as it packs them (one partition), then the tick row."""
    rows = [
        {"key": s, "time": t, "stream": 0, "s": s, "p": p, "o": o, "line": None, "file": None, "arrival": None}
        for t, s, p, o in elements
    ]
    tick = resident.TICK + "0"
    parts = [resident.pack_rows(pa.Table.from_pylist(rows, schema=resident.ROW_SCHEMA), [tick])] if rows else []
    parts.append(pa.RecordBatch.from_pylist([{"key": tick, "rows": None}], resident.PACKED_SCHEMA))
    return pa.Table.from_batches(parts, resident.PACKED_SCHEMA).combine_chunks().to_batches()[0]


def _drive(
    batches: list[list[tuple]],
    workers: list[int],
    monkeypatch,
    hosts: bool = False,
    kill_at: int | None = None,
    warmed: list | None = None,
    kill_mid: int | None = None,
) -> tuple[list[list[dict]], int]:
    """Micro-batches of one partition run by the task function in-process, micro-batch ``i`` by the
    Python worker ``workers[i]`` (each worker its own registry), with the clock a single engine has
    (the Clock docstring: the first instant after the first element, instants closed up to the largest
    time of the earlier micro-batches). The rows of each micro-batch, and the rebuilds counted. With
    ``hosts`` the partition's engine host holds the engine (killed before micro-batch ``kill_at``, or
    while micro-batch ``kill_mid``'s rows stream to it: after its first row).
    With ``warmed`` (a list), the run's warm-up task runs first, in the first worker, and the list
    gets the engine it left in that worker's registry (None: none there)."""
    job = Job(QUERY, "slow.rq", (f"<{EX}pos>",), PLAN, STEP)
    monkeypatch.setenv("RSP_SPARK_HOSTS", "1" if hosts else "0")  # else in the (simulated) Python workers
    run = uuid.uuid4().hex
    registries: dict[int, dict] = {}
    monkeypatch.setattr("pyspark.TaskContext.get", lambda: _Task(0))
    out, rebuilt = [], 0
    start = closed = until = previous = None
    if warmed is not None:
        monkeypatch.setattr(resident, "_REGISTRY", registries.setdefault(workers[0], {}))
        list(resident._warm_function(run, ("localhost", os.getpid()), job)(iter([])))
        warmed.append(resident._REGISTRY.get((run, 0)))
    with tempfile.TemporaryDirectory() as logs:
        for index, batch in enumerate([*batches, None]):
            worker = workers[index % len(workers)]
            monkeypatch.setattr(resident, "_REGISTRY", registries.setdefault(worker, {}))
            final = None
            if batch is None:
                last = max((t for b in batches for t, *_ in b), default=None)
                if last is None:
                    break
                final = (last // STEP + 1) * STEP
            clock = resident.Clock(start, closed, until)
            if index == kill_at:
                _kill_host(run)
            step = resident.Step(run, logs, index, previous, clock, final)
            rows_in = _table(batch or [])
            source = iter([rows_in])
            if index == kill_mid:

                def halves(rows_in=rows_in):
                    yield rows_in.slice(0, 1)
                    _kill_host(run)
                    yield rows_in.slice(1)

                source = halves()
            [got] = list(resident._step_function(job, step)(source))
            rows = got.to_pylist()
            for row in rows:
                if row["kind"] == "mark" and row["payload"]:
                    rebuilt += json.loads(row["payload"]).get("rebuilt", 0)
            out.append([{k: v for k, v in row.items() if not (row["kind"] == "mark" and k == "payload")}
                        for row in rows])  # fmt: skip
            previous = index
            times = [t for t, *_ in batch or []]
            if times and closed is None:
                first = (min(times) // STEP + 1) * STEP
                start = first if start is None else min(start, first)
            if times:
                until = max(times) if until is None else max(until, *times)
            if start is not None and until is not None and start <= until:
                closed = until // STEP * STEP
    return out, rebuilt


def test_the_warm_up_builds_the_engine_the_first_step_takes(monkeypatch) -> None:
    """The warm-up task before the first micro-batch builds the partition's engine, in the worker or
    in the partition's engine host; the first step takes that engine (in the worker: the very object,
    which then stays through every micro-batch), and the rows are those of a run without the warm-up."""
    from rsp.spark import hosts

    batches = [
        [(t, f"<{EX}bus{t % 3}>", f"<{EX}speed>", f'"{t % 25}"^^{INT}') for t in range(b * 1000, b * 1000 + 900, 150)]
        for b in range(3)
    ]  # fmt: skip
    expected, _ = _drive(batches, [0], monkeypatch)
    assert sum(row["kind"] == "result" for rows in expected for row in rows) >= 3
    warmed: list = []
    assert _drive(batches, [0], monkeypatch, warmed=warmed) == (expected, 0)
    [engine] = warmed
    assert isinstance(engine, resident.PartitionEngine)
    assert engine.batch == len(batches) - 1  # the engine of every micro-batch, not one built later
    warmed = []
    monkeypatch.setattr(hosts, "_connect", _counting(hosts._connect, connected := []))
    assert _drive(batches, [0, 1], monkeypatch, hosts=True, warmed=warmed) == (expected, 0)
    assert warmed == [None]  # the host built it, not the worker
    assert len(connected) == len(batches) + 2  # the warm-up, the micro-batches and the final step


def test_an_engine_the_warm_up_cannot_build_fails_the_first_step(monkeypatch) -> None:
    """The warm-up leaves an engine that does not build (a FROM graph an executor cannot read, say) to
    the first step, which fails with the error as before (a streaming query's failure, reported as
    such), not the warm-up's job before the query starts."""
    job = Job(QUERY.replace("FROM STREAM", "FROM <missing-graph.ttl>\nFROM STREAM"), "slow.rq",
              (f"<{EX}pos>",), PLAN, STEP)  # fmt: skip
    monkeypatch.setenv("RSP_SPARK_HOSTS", "0")
    monkeypatch.setattr(resident, "_REGISTRY", {})
    monkeypatch.setattr("pyspark.TaskContext.get", lambda: _Task(0))
    run = uuid.uuid4().hex
    [rows] = list(resident._warm_function(run, ("localhost", os.getpid()), job)(iter([])))
    assert rows.num_rows == 0 and resident._REGISTRY == {}
    with tempfile.TemporaryDirectory() as logs:
        step = resident.Step(run, logs, 0, None, resident.Clock(None, None, None))
        with pytest.raises(RspError, match="missing-graph"):
            list(resident._step_function(job, step)(iter([_table([(0, f"<{EX}bus1>", f"<{EX}speed>", '"1"')])])))


def test_a_reused_worker_settles_its_heap_when_modules_were_imported(monkeypatch) -> None:
    """``settle_heap`` (the end of every keying, step and warm-up task): in a Python worker PySpark
    reuses, a full collection then a freeze at the first call, none at the next until modules were
    imported again, and again in a forked child; nothing in a process that is no such worker (this
    one: the tests call the tasks' functions here)."""
    calls: list[str] = []
    monkeypatch.setattr(resident.gc, "collect", lambda *_: calls.append("collect") or 0)
    monkeypatch.setattr(resident.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(resident, "_SETTLED", None)
    monkeypatch.delenv("SPARK_REUSE_WORKER", raising=False)
    resident.settle_heap()
    assert calls == []
    monkeypatch.setenv("SPARK_REUSE_WORKER", "1")
    resident.settle_heap()
    resident.settle_heap()
    assert calls == ["collect", "freeze"]
    monkeypatch.setitem(sys.modules, "rsp_settle_test", types.ModuleType("rsp_settle_test"))
    resident.settle_heap()
    resident.settle_heap()
    assert calls == ["collect", "freeze"] * 2
    pid = os.getpid()
    monkeypatch.setattr(resident.os, "getpid", lambda: pid + 1)  # a child the daemon forked
    resident.settle_heap()
    assert calls == ["collect", "freeze"] * 3


def test_keying_step_and_warm_up_tasks_settle_the_heap_when_done(monkeypatch) -> None:
    """Each task function of a run settles its worker's heap once, after it has handed Spark every
    row (the keying's packed rows, the step's rows for the driver) or built the engine (the
    warm-up)."""
    events: list[str] = []
    monkeypatch.setattr(resident, "settle_heap", lambda: events.append("settled"))
    ticks = resident.tick_keys(2)
    keyed = pa.Table.from_pylist([{"key": f"<{EX}bus{i}>", "time": i} for i in range(6)], resident.ROW_SCHEMA)
    for _ in resident.packer(lambda batches: iter(batches), ticks)(iter(keyed.to_batches(max_chunksize=2))):
        events.append("rows")
    assert events == ["rows"] * 3 + ["settled"]
    job = Job(QUERY, "slow.rq", (f"<{EX}pos>",), PLAN, STEP)
    monkeypatch.setenv("RSP_SPARK_HOSTS", "0")
    monkeypatch.setattr(resident, "_REGISTRY", {})
    monkeypatch.setattr("pyspark.TaskContext.get", lambda: _Task(0))
    run = uuid.uuid4().hex
    events.clear()
    for _ in resident._warm_function(run, ("localhost", os.getpid()), job)(iter([])):
        events.append("rows")
    assert events == ["settled", "rows"] and (run, 0) in resident._REGISTRY
    events.clear()
    with tempfile.TemporaryDirectory() as logs:
        step = resident.Step(run, logs, 0, None, resident.Clock(None, None, None))
        for _ in resident._step_function(job, step)(iter([_table([(0, f"<{EX}bus1>", f"<{EX}speed>", '"1"')])])):
            events.append("rows")
    assert events == ["rows", "settled"]


def test_hosts_started_by_the_driver_are_the_ones_the_tasks_reach(monkeypatch) -> None:
    """``hosts.prestart`` (the driver, while its JVM starts) starts a host per partition; a task of the
    run reaches it and starts none; the run's name is taken once; a host started for a partition the
    run does not use exits on its own (idle). With RSP_SPARK_HOSTS=0 nothing starts."""
    import socket

    from rsp.spark import hosts

    monkeypatch.setenv("RSP_SPARK_HOSTS", "0")
    hosts.prestart(2, (socket.gethostname(), os.getpid()))
    assert hosts.prestarted() is None
    monkeypatch.setenv("RSP_SPARK_HOSTS", "1")
    monkeypatch.setenv("RSP_SPARK_HOST_IDLE", "1")
    monkeypatch.setattr(hosts, "_STARTED", [])
    hosts.prestart(2, (socket.gethostname(), os.getpid()))
    run = hosts.prestarted()
    assert run is not None and hosts.prestarted() is None
    started = list(hosts._STARTED)
    assert len(started) == 2
    for partition in (0, 1):
        sock = hosts._connect(run, partition)
        assert sock is not None
        sock.close()
        assert int((hosts._home(run) / f"part-{partition}.lock").read_text()) == started[partition].pid
    assert hosts._STARTED == started  # no task started one
    deadline = time.monotonic() + 20
    while any(host.poll() is None for host in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(host.poll() is not None for host in started)


def test_host_sockets_fit_a_long_temporary_folder(monkeypatch, tmp_path: Path) -> None:
    """Under a temporary folder whose name leaves no room for a Unix socket's path (107 bytes on Linux,
    103 on macOS), the hosts' sockets go under /tmp, and a host is reached there; a socket path that
    cannot be had is no host (the task runs the step itself) rather than an error."""
    from rsp.spark import hosts

    deep = tmp_path / ("t" * 60)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    run = uuid.uuid4().hex
    assert len(str(deep / f"rsp-engines-{os.getuid()}" / run / "part-0.sock")) > 107
    home = hosts._home(run)
    assert home.parent == Path("/tmp") / f"rsp-engines-{os.getuid()}"
    assert len(str(home / "part-9999.sock")) <= hosts.SOCKET_PATH_MAX
    monkeypatch.setenv("RSP_SPARK_HOST_IDLE", "1")
    monkeypatch.setattr(hosts, "_STARTED", [])
    sock = hosts._connect(run, 0)
    assert sock is not None
    sock.close()
    monkeypatch.setattr(hosts, "_home", lambda _run: deep)
    assert len(str(deep / "part-0.sock")) > 107 and hosts._connect(run, 0) is None
    for host in hosts._STARTED:
        host.wait(timeout=20)


def _counting(function, calls: list):
    def counted(*args, **kwargs):
        calls.append(args)
        return function(*args, **kwargs)

    return counted


def _kill_host(run: str) -> None:
    from rsp.spark import hosts

    lock = hosts._home(run) / "part-0.lock"
    pid = int(lock.read_text())
    os.kill(pid, signal.SIGKILL)
    for started in hosts._STARTED:
        if started.pid == pid:
            started.wait()  # gone before the next micro-batch (else it may take the connection and die)


def test_the_rows_stream_to_the_host_as_the_task_holds_them() -> None:
    """What a task's worker writes to its host reads back as the partition's rows: several record
    batches in order, or the table of no row when the partition has none."""
    from rsp.spark import hosts

    batches = [_table([(t, f"<{EX}bus1>", f"<{EX}speed>", f'"{t}"^^{INT}')]) for t in (0, 500, 900)]
    for sent in (batches, batches[:1], []):
        out = io.BytesIO()
        hosts._write(out, sent)
        read = pa.ipc.open_stream(out.getvalue()).read_all()
        assert read.equals(hosts.rows_table(sent))
        assert read.num_rows == sum(batch.num_rows for batch in sent)


def test_engine_host_keeps_the_engine_across_workers(monkeypatch) -> None:
    """With engine hosts, micro-batches run by different workers find the engine in the partition's
    host: no rebuild, the rows of the resident engine; a host killed (SIGKILL) between micro-batches
    is replaced by a new one that rebuilds from the log, with the same rows; one killed while a
    micro-batch's rows stream to it leaves that step to the worker, which has every row; the host exits
    after the run's last step."""
    from rsp.spark import hosts

    batches = [
        [(t, f"<{EX}bus{t % 3}>", f"<{EX}speed>", f'"{t % 25}"^^{INT}') for t in range(b * 1000, b * 1000 + 900, 150)]
        for b in range(5)
    ]  # fmt: skip
    expected, _ = _drive(batches, [0], monkeypatch)
    got, rebuilt = _drive(batches, [0, 1, 2], monkeypatch, hosts=True)
    assert (got, rebuilt) == (expected, 0)
    got, rebuilt = _drive(batches, [0, 1, 2], monkeypatch, hosts=True, kill_at=3)
    assert (got, rebuilt) == (expected, 1)
    got, rebuilt = _drive(batches, [0, 1, 2], monkeypatch, hosts=True, kill_mid=2)
    assert (got, rebuilt) == (expected, 2)  # the step in the worker, then the next host, from the log
    deadline = time.monotonic() + 10
    while any(started.poll() is None for started in hosts._STARTED) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(started.poll() is not None for started in hosts._STARTED)


def _element_rows(time: int, bus: int, speed: int, stop: int) -> list[tuple[int, str, str, str]]:
    """An element of the generated streams: a vehicle's speed and place at ``time``."""
    vehicle = f"<{EX}bus{bus}>"
    return [
        (time, vehicle, f"<{EX}speed>", f'"{speed}"^^{INT}'),
        (time, vehicle, f"<{EX}at>", f"<{EX}stop{stop}>"),
    ]


def _element(draw, time: int) -> list[tuple[int, str, str, str]]:
    return _element_rows(time, draw(st.integers(0, 3)), draw(st.integers(0, 30)), draw(st.integers(0, 2)))


@st.composite
def _streams(draw) -> tuple[list[list[tuple]], list[int]]:
    """Micro-batches of a stream (mostly forward in time, now and then an element older than the last
    instant closed: late), and the worker that runs each micro-batch."""
    batches, now = [], 0
    for _ in range(draw(st.integers(1, 6))):
        batch = []
        for _ in range(draw(st.integers(0, 5))):
            now += draw(st.sampled_from([0, 100, 400, 900, 2500]))
            back = draw(st.sampled_from([0, 0, 0, 0, 1500]))
            batch += _element(draw, max(0, now - back))
        batches.append(batch)
    workers = draw(st.lists(st.integers(0, 2), min_size=len(batches) + 1, max_size=len(batches) + 1))
    return batches, workers


def _stream_text(batches: list[list[tuple]], workers: list[int]) -> dict[str, str]:
    lines = [[timed_triple_line(e) for e in batch] for batch in batches]
    return {"query.rq": QUERY, "stream.nt": batches_text(lines, workers)}


def _read_stream_text(text: str) -> tuple[list[list[tuple]], list[int]]:
    """:func:`_stream_text` read back."""
    batches, workers = read_batches_text(text)
    return [[read_timed_triple_line(line) for line in batch] for batch in batches], workers


def _check_rebuilt(batches: list[list[tuple]], workers: list[int], monkeypatch) -> None:
    resident_rows, none = _drive(batches, [0], monkeypatch)
    moved_rows, rebuilt = _drive(batches, workers, monkeypatch)
    assert none == 0
    steps = len(batches) + (1 if any(batches) else 0)  # the final step when an element came
    assert rebuilt == sum(1 for i in range(1, steps) if workers[i] != workers[i - 1])
    assert moved_rows == resident_rows


@pytest.mark.generated
@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=_streams())
def test_rebuilt_partition_engine_equals_resident(case, monkeypatch) -> None:
    batches, workers = case
    with saved_on_failure(GOLDEN_ROOT, lambda: _stream_text(batches, workers)):
        _check_rebuilt(batches, workers, monkeypatch)


_SAVED_REBUILDS = {
    # a fixed case through the saved format (workers changing, an empty micro-batch, a late element)
    "fixed": _stream_text(
        [_element_rows(1200, 0, 7, 1) + _element_rows(1900, 1, 25, 0), [], _element_rows(300, 1, 3, 2)
         + _element_rows(4100, 2, 12, 0)],
        [0, 2, 1, 1],
    ),
    **saved_cases(GOLDEN_ROOT, "test_rebuilt_partition_engine_equals_resident"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_SAVED_REBUILDS))
def test_saved_rebuild_cases(name: str, monkeypatch) -> None:
    """The fixed case and the cases ``make fuzz`` saved, read back from their files."""
    files = _SAVED_REBUILDS[name]
    assert files["query.rq"] == QUERY
    batches, workers = _read_stream_text(files["stream.nt"])
    if name == "fixed":
        assert _stream_text(batches, workers) == files  # the format reads back as written
        assert len(workers) == len(batches) + 1 and any(batches)
    _check_rebuilt(batches, workers, monkeypatch)


def test_rebuild_after_a_lost_registry_equals_resident(monkeypatch) -> None:
    """Fixed case: the worker's registry is lost before every micro-batch after the first (a restarted
    worker), so each step rebuilds from the log; the answers are those of the resident engine, and
    they are the ones a single engine over the stream gives."""
    from rsp.runtime import Engine

    batches = [
        [(t, f"<{EX}bus{t % 3}>", f"<{EX}speed>", f'"{t % 25}"^^{INT}') for t in range(0, 2000, 250)]
        + [(t, f"<{EX}bus{t % 3}>", f"<{EX}at>", f"<{EX}stop{t % 2}>") for t in range(0, 2000, 250)],
        [],
        [(t, f"<{EX}bus{t % 4}>", f"<{EX}speed>", f'"{t % 19}"^^{INT}') for t in range(2100, 5000, 300)]
        + [(t, f"<{EX}bus{t % 4}>", f"<{EX}at>", f"<{EX}stop{t % 3}>") for t in range(2100, 5000, 300)],
        [(t, f"<{EX}bus1>", f"<{EX}speed>", '"3"^^' + INT) for t in (5200, 6100, 9000)],
    ]
    resident_rows, _ = _drive(batches, [0], monkeypatch)
    lost_rows, rebuilt = _drive(batches, [0, 1, 2, 3, 4], monkeypatch)
    assert rebuilt == len(batches)  # every micro-batch after the first, and the final step
    assert lost_rows == resident_rows
    engine = Engine()
    handle = engine.register(QUERY, "slow.rq")
    elements = sorted(e for b in batches for e in b)
    engine.push_sorted([t for t, *_ in elements], [tuple(e[1:]) for e in elements], f"<{EX}pos>")
    engine.close()
    single = {r.time: sorted(json.dumps(b, sort_keys=True) for b in r.bindings or []) for r in handle}
    got = {}
    for rows in resident_rows:
        for row in rows:
            if row["kind"] == "result":
                got.setdefault(row["instant"], []).extend(
                    json.dumps(b, sort_keys=True) for b in json.loads(row["payload"])
                )
    assert {t: sorted(b) for t, b in got.items() if b} == {t: b for t, b in single.items() if b}
    assert sum(len(b) for b in single.values()) > 10


# -- the key column ------------------------------------------------------------------------------------
PREDICATES = [f"<{EX}p>", f"<{EX}q>", f"<{EX}r>", RDF_TYPE]
CLASSES = [f"<{EX}A>", f"<{EX}B>", f"<{EX}Ç>"]
TERMS = [
    f"<{EX}a>",
    f"<{EX}b>",
    f"<{EX}é>",
    "_:x",
    '"a b"',
    '"a"@en',
    f'"7"^^{INT}',
    '"say \\"hi\\""',
    f"<{EX}b\\u0075s>",  # an escape: rsp's parser reads it, Spark's regex does not take it
    '"a . # 5"',  # the line's time comment written inside the literal
    *CLASSES,
]


@st.composite
def _plans(draw) -> KeyPlan:
    predicates = draw(st.lists(st.sampled_from(PREDICATES), unique=True))
    classes = draw(st.lists(st.sampled_from(CLASSES), unique=True))
    place = st.sampled_from([0, 2])
    return KeyPlan("k", tuple((p, draw(place)) for p in predicates), tuple((c, draw(place)) for c in classes))


@st.composite
def _lines(draw) -> str:
    s, o = draw(st.sampled_from(TERMS)), draw(st.sampled_from(TERMS))
    p = draw(st.sampled_from([*PREDICATES, RDF_TYPE, RDF_TYPE]))  # rdf:type keyed by class or predicate
    if p == RDF_TYPE and draw(st.booleans()):
        o = draw(st.sampled_from(CLASSES))
    time = draw(st.integers(0, 10**6))
    return draw(
        st.sampled_from([
            f"{s} {p} {o} . # {time}",
            f"{s}  {p}\t{o}  .   #  {time}",
            f"{s}{p}{o}. # {time}",  # no space between the terms
            f"{s} {p} {o}. # {time}",
            f"{s} {p} {o} . # {time} ms",  # a word after the time: rsp's parser takes it
            f"{s} {p} {o} <{EX}x> . # {time}",  # four terms: malformed
            f"{s} {p} {o} .",  # no time: malformed
            f"{s} {p} . # {time}",  # two terms: malformed
            f"{s} {p} {o} . # t{time}",  # a comment that is not a time
            "# a comment",
            "",
        ])
    )  # fmt: skip


def _expected_keys(plan: KeyPlan, lines: list[str]) -> list[tuple]:
    """From the definition: rsp's parser reads each line (blank and comment lines left out, malformed
    ones kept under the empty key with their reason), and a triple's key is KeyPlan.key (None: left out)."""
    from rsp.spark.feed import recheck_triple

    rows = []
    for line in lines:
        try:
            parsed = recheck_triple(line)
        except ValueError:
            rows.append((REJECT_KEY, None, None, None, None, line, True))
            continue
        if parsed is None:
            continue
        time, (s, p, o) = parsed
        key = plan.key(s, p, o)
        if key is not None:
            rows.append((key, time, s, p, o, None, False))
    return sorted(rows, key=repr)


def _keys_case(plan: KeyPlan, lines: list[str]) -> dict[str, str]:
    return {"plan.json": json.dumps({"positions": plan.positions, "classes": plan.classes}),
            "stream.nt": "".join(f"{line}\n" for line in lines)}  # fmt: skip


@pytest.mark.generated
@settings(
    max_examples=examples(2), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cases=st.lists(st.tuples(_plans(), st.lists(_lines(), min_size=1, max_size=40)), min_size=1, max_size=6)
)
@example(  # rdf:type keyed by predicate and, for one class, by class: the class comes first
    cases=[(KeyPlan("k", ((RDF_TYPE, 0), (f"<{EX}p>", 2)), ((f"<{EX}A>", 2),)),
            [f"<{EX}a> {RDF_TYPE} <{EX}A> . # 1", f"<{EX}a> {RDF_TYPE} <{EX}B> . # 2",
             f"<{EX}é> <{EX}p> <{EX}b> . # 3", f'"x" <{EX}p> <{EX}b> . # 4', f"<{EX}a> <{EX}q> <{EX}b> . # 5"])]
)
@example(  # lines the fast-path pattern leaves to rsp's parser (reported once when malformed), keyed by object and
    # class; lines holding \u0001, the separator Spark's own parse (rsp.spark.source.parse_lines) splits at
    cases=[(KeyPlan("k", ((f"<{EX}p>", 2), (f"<{EX}q>", 0)), ((f"<{EX}A>", 2),)),
            [f"<{EX}a> <{EX}p> <{EX}b>. # 1", f"<{EX}a><{EX}q><{EX}b> . # 2", f"<{EX}a> <{EX}q>\t<{EX}b> . # 3",
             f"<{EX}a>\t<{EX}q> <{EX}b> . # 4", f"<{EX}a> {RDF_TYPE} <{EX}A>. # 5",
             f"<{EX}b\\u0075s> <{EX}q> <{EX}b> . # 6", f"<{EX}a> <{EX}p> <{EX}b\\u0075s> . # 7",
             f"<{EX}a> <{EX}q> <{EX}b> . # 8", f"<{EX}a> <{EX}p> <{EX}b> . # 9 ms", f"<{EX}a> <{EX}q> . # 10",
             f"<{EX}a> <{EX}r> . # 11", f'<{EX}a> <{EX}p> "a . # 5" . # 12', f"<{EX}a> <{EX}q> <{EX}b> .",
             f"<{EX}a> {RDF_TYPE} <{EX}A> . # 13", f"<{EX}a> {RDF_TYPE} <{EX}B> . # 14",
             f'<{EX}a> <{EX}p> "x\u0001y" . # 15', f'<{EX}a> <{EX}q> "\u0001" . # 16', "x\u0001y\u0001z\u00017",
             f"<{EX}a>\u0001<{EX}q>\u0001<{EX}b>\u0001. # 17"])]
)  # fmt: skip
def test_spark_key_column_equals_key_plan(spark, cases: list[tuple[KeyPlan, list[str]]]) -> None:
    """Several plans per Spark job (a Spark job costs a second or more): case ``i``'s rows as stream ``i``."""
    _check_key_columns(spark, cases)


def _read_keys_case(files: dict[str, str]) -> tuple[KeyPlan, list[str]]:
    """:func:`_keys_case` read back."""
    plan = json.loads(files["plan.json"])
    positions = tuple((p, place) for p, place in plan["positions"])
    classes = tuple((c, place) for c, place in plan["classes"])
    return KeyPlan("k", positions, classes), files["stream.nt"].splitlines()


def test_saved_key_cases(spark) -> None:
    """The cases ``make fuzz`` saved from the test above, and a fixed one through the saved format, in
    one Spark job."""
    fixed = _keys_case(
        KeyPlan("k", ((RDF_TYPE, 0), (f"<{EX}p>", 2)), ((f"<{EX}A>", 2),)),
        [f"<{EX}a> {RDF_TYPE} <{EX}A> . # 1", f"<{EX}é> <{EX}p> <{EX}b> . # 3", "not a triple . # 4"],
    )
    saved = saved_cases(GOLDEN_ROOT, "test_spark_key_column_equals_key_plan")
    cases = [_read_keys_case(files) for files in [fixed, *saved.values()]]
    assert _keys_case(*cases[0]) == fixed  # the format reads back as written
    _check_key_columns(spark, cases)


def _check_key_columns(spark, cases: list[tuple[KeyPlan, list[str]]]) -> None:
    """The lines parsed and keyed in the tasks' Python workers (``keyed_lines``, what ``rsp spark
    --partition-by`` runs) against the definition (:func:`_expected_keys`)."""
    from functools import reduce

    frames = []
    for index, (plan, lines) in enumerate(cases):
        frame = spark.createDataFrame(
            [(line, "file:///in/s.nt", None, 0, None) for line in lines],
            "value string, file string, file_time timestamp, block long, arrival long",
        ).coalesce(1)
        frames.append(resident.keyed_lines(frame.withColumn("stream", F.lit(index)), plan, TICKS))
    keyed = _unpacked(reduce(lambda a, b: a.unionByName(b), frames).collect())
    for index, (plan, lines) in enumerate(cases):
        with saved_on_failure(GOLDEN_ROOT, lambda plan=plan, lines=lines: _keys_case(plan, lines)):
            assert _keyed_elements([r for r in keyed if r.stream == index], plan) == _expected_keys(plan, lines)


def _unpacked(packed: list) -> list:
    """The keyed rows in ``keyed_lines``' packed rows (``resident.unpacked``), each checked to be in
    the packed row of its key's partition (the one Spark's shuffle gives the key)."""
    from types import SimpleNamespace

    rows = []
    for row in packed:
        partition = TICKS.index(row.key)  # the packed row's key puts it in its partition
        batch = pa.RecordBatch.from_pylist([row.asDict()], resident.PACKED_SCHEMA)
        for inner in resident.unpacked([batch]):
            for keyed in inner.to_pylist():
                assert partition_of(keyed["key"], len(TICKS)) == partition, keyed
                rows.append(SimpleNamespace(**keyed, asDict=lambda keyed=keyed: keyed))
    return rows


def _keyed_elements(rows: list, plan: KeyPlan) -> list[tuple]:
    """One stream's keyed rows as :func:`_expected_keys` has them: each line a regex took with its key,
    and each line it did not take read by a partition's step (``recheck_rows``) as an element of that
    partition's keys, or reported (partition 0) when malformed."""
    got = [(r.key, r.time, r.s, r.p, r.o, None, False) for r in rows if r.line is None]
    unparsed = [r for r in rows if r.line is not None]
    # a line the regex did not take goes to every partition, once, under its tick key
    assert sorted(r.key for r in unparsed) == sorted(TICKS * (len(unparsed) // len(TICKS)))
    for partition, tick in enumerate(TICKS):
        table = pa.Table.from_pylist([r.asDict() for r in unparsed if r.key == tick])
        if not table.num_rows:
            continue
        elements, rejects = resident.recheck_rows(table, plan, partition, len(TICKS))
        for at, _stream, s, p, o in zip(*elements.to_pydict().values(), strict=True):
            got.append((plan.key(s, p, o), at, s, p, o, None, False))
            assert partition_of(plan.key(s, p, o), len(TICKS)) == partition
        got.extend((REJECT_KEY, None, None, None, None, r["line"], True) for r in rejects)
    return sorted(got, key=repr)


TICKS = resident.tick_keys(3)
"""Three partitions' tick keys."""


@pytest.mark.generated
@settings(
    max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.lists(
        st.one_of(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
            st.sampled_from(TERMS).map(lambda t: t + "x" * 3),
        ),
        min_size=1,
        max_size=60,
    )
)
@example(keys=["", "a", "ab", "abc", "abcd", "abcde", "é", "日本", "\U0001F600z", resident.TICK + "1"])
def test_partition_of_equals_spark_hash_partitioning(spark, keys: list[str]) -> None:
    """rsp.spark.hashing.partition_of gives a key the shuffle partition Spark's repartition(n, key)
    gives it, pmod(hash(key), n) (the hash is Spark's own Murmur3 variant), for several n."""
    frame = spark.createDataFrame([(k,) for k in keys], "k string")
    columns = [F.hash("k").alias("h"), *(F.pmod(F.hash("k"), F.lit(n)).alias(f"p{n}") for n in (1, 2, 3, 7))]
    rows = frame.select("k", *columns).collect()
    for row in rows:
        assert spark_hash(row.k) == row.h, row.k
        assert [partition_of(row.k, n) for n in (1, 2, 3, 7)] == [row.p1, row.p2, row.p3, row.p7], row.k
    for n in (1, 2, 3, 7):  # the vectorised hash the keying packs by (test_partitions_of_... below)
        assert partitions_of(pa.array(keys), n).tolist() == [getattr(row, f"p{n}") for row in rows]


KEY_TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.sampled_from(TERMS).map(lambda t: t + "x" * 3),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=250, max_size=300),  # both sides of 256 bytes
    st.sampled_from(["", "a", "ab", "abc", "abcd", "é", "\U0001F600"]).map(lambda t: t * 70),
)


@pytest.mark.generated
@settings(max_examples=examples(200), deadline=None)
@given(keys=st.lists(KEY_TEXT, min_size=0, max_size=40), cut=st.integers(0, 5))
def test_partitions_of_equals_partition_of(keys: list[str], cut: int) -> None:
    """``partitions_of`` (Spark's Murmur3 over a whole Arrow array, word by word in NumPy; keys over
    256 bytes one by one) gives each key what ``partition_of`` gives it (checked against Spark above),
    for a slice of an array and for a chunked one too; ``spark_hashes`` each key's ``spark_hash``."""
    array = pa.array(["skipped"] * cut + keys).slice(cut)  # an offset into the buffers
    assert spark_hashes(pa.array(keys)).tolist() == [spark_hash(k) for k in keys]
    chunked = pa.chunked_array([keys[: len(keys) // 2], keys[len(keys) // 2 :]], pa.string())
    for n in (1, 2, 3, 7):
        expected = [partition_of(k, n) for k in keys]
        assert partitions_of(array, n).tolist() == expected
        assert partitions_of(chunked, n).tolist() == expected


@pytest.mark.generated
@settings(max_examples=examples(200), deadline=None)
@given(
    keys=st.lists(st.one_of(KEY_TEXT, st.sampled_from(resident.tick_keys(4))), max_size=40),
    partitions=st.integers(1, 4),
)
def test_packed_rows_are_each_partitions_rows_in_order(keys: list[str], partitions: int) -> None:
    """The keying's rows as the shuffle moves them (``pack_rows``): one packed row per partition with
    rows, keyed by that partition's tick key (so Spark's hash partitioning puts it there), holding
    exactly the rows whose key Spark's hash gives that partition, in their order; ``unpacked`` gives
    them back, and a tick row of its own (no ``rows``) as a row of its key alone."""
    ticks = resident.tick_keys(partitions)
    rows = [{"key": key, "time": index, "stream": index % 2, "s": key, "line": None if index % 3 else "x"}
            for index, key in enumerate(keys)]  # fmt: skip
    table = pa.Table.from_pylist(rows, resident.ROW_SCHEMA)
    packed = resident.pack_rows(table, ticks) if rows else None
    places = [] if packed is None else packed.column("key").to_pylist()
    assert places == sorted(places, key=ticks.index)
    assert sorted(places) == sorted({ticks[partition_of(key, partitions)] for key in keys})
    for partition, tick in enumerate(ticks):
        assert partition_of(tick, partitions) == partition
        expected = [row for row in table.to_pylist() if partition_of(row["key"], partitions) == partition]
        mine = [] if tick not in places else [packed.slice(places.index(tick), 1)]
        alone = pa.RecordBatch.from_pylist([{"key": tick, "rows": None}], resident.PACKED_SCHEMA)
        got = [row for batch in resident.unpacked([*mine, alone]) for row in batch.to_pylist()]
        assert got == [*expected, {"key": tick, **dict.fromkeys(resident.ROW_COLUMNS[1:])}]


def _two_partitions(spark, monkeypatch, mark_of) -> tuple[resident_driver.ResidentMerger, resident.Step]:
    """A driver over two partitions whose step writes ``mark_of(partition, rows it got)`` as its mark
    (none when that is None) instead of running an engine, and a micro-batch's step."""

    def step_function(job, step=None):  # the driver's: each task reads its step from the job
        def run(batches):
            from pyspark import TaskContext

            rows = sum(batch.num_rows for batch in resident.unpacked(batches))
            mark = mark_of(TaskContext.get().partitionId(), rows)
            if mark is not None:
                row = {**dict.fromkeys(resident.OUT_SCHEMA.names), "kind": "mark", **mark}
                yield pa.RecordBatch.from_pylist([row], resident.OUT_SCHEMA)

        return run

    monkeypatch.setattr(resident, "_step_function", step_function)
    merger = resident_driver.ResidentMerger.__new__(resident_driver.ResidentMerger)
    merger.spark, merger.job, merger.partitions = spark, None, 2
    merger.ticks, merger._ticks = resident.tick_keys(2), None
    merger._split_frames = {}
    return merger, resident.Step("run", "logs", 0, None, resident.Clock(None, None, None), partitions=2)


def test_every_partition_runs_its_step_without_tick_rows(spark, monkeypatch) -> None:
    """A micro-batch's job (ResidentMerger._run) runs every partition's step, tick rows or not: with rows
    for one partition only, and with no rows, where Spark's optimizer leaves the job out of a frame it
    knows empty (the job then runs again over the tick rows, one per partition)."""
    merger, step = _two_partitions(spark, monkeypatch, lambda p, rows: {"instant": p, "payload": str(rows)})
    key = next(k for k in (f"<{EX}bus{i}>" for i in range(10)) if partition_of(k, 2) == 1)
    keyed = pa.Table.from_pylist([{"key": key, "time": 1, "stream": 0, "s": key, "p": f"<{EX}at>",
                                   "o": f"<{EX}stop>"}] * 3, resident.ROW_SCHEMA)  # fmt: skip
    packed = resident.pack_rows(keyed, merger.ticks).to_pylist()
    rows = spark.createDataFrame([(r["key"], r["rows"]) for r in packed], merger._tick_frame().schema)

    def marks(table: pa.Table) -> dict[int, str]:
        return {r["instant"]: r["payload"] for r in table.to_pylist() if r["kind"] == "mark"}

    assert marks(merger._run(rows, step)) == {0: "0", 1: "3"}
    assert marks(merger._run(merger._tick_frame().where(F.lit(False)), step)) == {0: "1", 1: "1"}


def test_a_job_where_some_partitions_did_not_run_is_an_error(spark, monkeypatch) -> None:
    """Partitions whose step did not run would lose their instants: refused, not merged."""
    merger, step = _two_partitions(spark, monkeypatch, lambda p, _rows: {"payload": "{}"} if p == 0 else None)
    with pytest.raises(RspError, match="1 of 2 partitions ran their step"):
        merger._run(merger._tick_frame(), step)


@pytest.mark.generated
@settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    chunks=st.lists(
        st.lists(st.one_of(st.sampled_from(TERMS), st.text(max_size=6), st.none()), max_size=30), max_size=4
    ),
    sample=st.integers(1, 40),
)
def test_a_partitions_terms_are_the_columns_values_shared_when_they_repeat(monkeypatch, chunks, sample) -> None:
    """The terms a partition engine takes (:func:`rsp.spark.resident.shared_strings`) are the column's
    values in order, nulls and all; when the sampled rows repeat, equal terms are one object."""
    monkeypatch.setattr(resident, "SHARED_SAMPLE", sample)
    column = pa.chunked_array(chunks, pa.string())
    values = column.to_pylist()
    got = resident.shared_strings(column)
    assert got == values
    head = values[:sample]
    if None not in values and len(values) > 1 and len(set(head)) * 2 <= len(head):
        firsts: dict[str, str] = {}
        assert all(firsts.setdefault(term, term) is term for term in got)
