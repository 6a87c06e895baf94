"""Lateness across micro-batches under ``rsp spark --partition-by`` (rsp/spark/resident.py): the driver's
global clock (:class:`rsp.spark.resident.Clock`, the micro-batch's first element while no instant is
closed) makes the partitions' engines judge every element as one engine over the whole stream judges
it, micro-batch by micro-batch (each in time order), which is what ``rsp run`` does over the lines in the
order they arrive. Generated streams that go back in time across micro-batches (elements that move the
first instant back behind a newer one, elements older than an instant closed, keys a partition never
saw) run through the real driver (:class:`ResidentMerger`'s clock and merge) and the real partition step
(:func:`rsp.spark.resident.run_step`) in-process, over two partitions placed as Spark's hash
partitioning places the keys; the answers at every instant and the late count equal one engine's."""

from __future__ import annotations

import json
import sys
import tempfile

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

from rsp.query.translation.partition import KeyPlan  # noqa: E402
from rsp.spark import resident, resident_driver  # noqa: E402
from rsp.spark.hashing import partition_of  # noqa: E402
from rsp.spark.resident import Job  # noqa: E402

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]
GOLDEN_ROOT = GOLDEN_SPARK
EX = "http://ex.org/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
STREAM = f"<{EX}pos>"
QUERY = """REGISTER QUERY Sums AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (SUM(?s) AS ?sum)
FROM STREAM <http://ex.org/pos> [RANGE 3s STEP 1s]
WHERE { ?v ex:speed ?s }
GROUP BY ?v
"""
PARTITIONS = 2
Element = tuple[int, str, str, str]


class _Spark:
    """What the driver asks a SparkSession for when it is made: the number of shuffle partitions."""

    class conf:  # noqa: N801 - SparkSession's name
        @staticmethod
        def get(_name: str) -> str:
            return str(PARTITIONS)


class _NoRows:
    def where(self, _condition) -> list:
        return []


class _Driver(resident_driver.ResidentMerger):
    """The real driver with its Spark jobs run in-process: a micro-batch is a list of elements (in the
    order they arrive), each partition's step is :func:`rsp.spark.resident.run_step`."""

    def __init__(self, job: Job, logs: str, emit) -> None:
        super().__init__(
            _Spark(), job, "Sums", ("v", "n", "sum"), job.step, emit, lambda _row: None, logs=logs
        )

    def warm(self) -> None:
        pass  # no engine hosts, no Spark job

    def keyed(self, batch: list[Element]) -> list[Element]:
        return batch  # each element goes to its partition in _run

    def lead(self, batch: list[Element]) -> tuple | None:
        """The first element one engine takes: the first in time order, arrival order among equals."""
        if not batch:
            return None
        t, s, p, o = min(batch, key=lambda e: e[0])
        return (t, 0, s, p, o)

    def _tick_frame(self):
        return _NoRows()

    def _run(self, frame: list[Element], step: resident.Step, ticks: bool = False) -> pa.Table:
        outputs = []
        for partition in range(PARTITIONS):
            rows = [e for e in frame if partition_of(e[1], PARTITIONS) == partition]
            outputs.append(resident.run_step(self.job, step, partition, _table(rows)))
        return pa.Table.from_batches(outputs)


class _MergesLast:
    """The merge queue of :meth:`ResidentMerger.overlap` with every merge held back until the driver
    drains it: the merge as far behind Spark's jobs as it can fall, in the order the jobs ended."""

    def __init__(self, driver: _Driver) -> None:
        self.driver, self.items = driver, []

    def put(self, item) -> None:
        if item is not None:
            self.items.append(item)

    def join(self) -> None:
        items, self.items = self.items, []
        for item in items:
            self.driver._merge(*item, queued=True)


def _table(elements: list[Element]) -> pa.Table:
    """A partition's rows as keyed_lines gives them (in arrival order), with its tick row."""
    rows = [{"key": s, "time": t, "stream": 0, "s": s, "p": p, "o": o, "line": None, "file": None,
             "arrival": None} for t, s, p, o in elements]  # fmt: skip
    rows.append({"key": resident.TICK, **{name: None for name in resident.ROW_COLUMNS[1:]}})
    schema = pa.schema([("key", pa.string()), ("time", pa.int64()), ("stream", pa.int32()),
                        *((name, pa.string()) for name in ("s", "p", "o", "line", "file")),
                        ("arrival", pa.int64())])  # fmt: skip
    return pa.Table.from_pylist(rows, schema=schema)


def _partitioned(
    batches: list[list[Element]], monkeypatch, merges_last: bool = False
) -> tuple[dict[int, list[str]], int]:
    monkeypatch.setenv("RSP_SPARK_HOSTS", "0")
    monkeypatch.setattr(resident, "_REGISTRY", {})
    plan = KeyPlan("v", ((f"<{EX}speed>", 0),))
    job = Job(QUERY, "sums.rq", (STREAM,), plan, 1000)
    answers: dict[int, list[str]] = {}

    def emit(result) -> None:
        assert result.time not in answers, f"instant {result.time} written twice"
        answers[result.time] = [json.dumps(b, sort_keys=True) for b in result.bindings or []]  # in order

    with tempfile.TemporaryDirectory() as logs:
        driver = _Driver(job, logs, emit)
        if merges_last:  # the clock of each job must not wait for the merge of the job before
            driver._merging, driver._switch_interval = _MergesLast(driver), sys.getswitchinterval()
        for index, batch in enumerate(batches):
            driver(batch, index)
        driver.close()
    return answers, driver.late


def _one_engine(batches: list[list[Element]]) -> tuple[dict[int, list[str]], int]:
    """One engine over the stream, each micro-batch pushed in time order (rsp spark without
    --partition-by, and rsp run over the lines in that order)."""
    from rsp.runtime import Engine

    engine = Engine()
    handle = engine.register(QUERY, "sums.rq")
    for batch in batches:
        for t, s, p, o in sorted(batch, key=lambda e: e[0]):
            engine.push([(s, p, o)], t, STREAM, plain=True)
    engine.close()
    answers = {r.time: [json.dumps(b, sort_keys=True) for b in r.bindings or []] for r in handle}
    return answers, engine.late


def _element(key: int, time: int, value: int) -> Element:
    return (time, f"<{EX}bus{key}>", f"<{EX}speed>", f'"{value}"^^{INT}')


@st.composite
def _batches(draw) -> list[list[Element]]:
    """Micro-batches going forward in time, now and then far back (before the first instant, behind an
    instant closed), over keys some of which appear late in the stream."""
    batches, now, value = [], draw(st.integers(0, 4000)), 0
    for _ in range(draw(st.integers(1, 6))):
        batch = []
        for _ in range(draw(st.integers(0, 4))):
            now += draw(st.sampled_from([0, 150, 400, 900, 1700]))
            back = draw(st.sampled_from([0, 0, 0, 700, 1500, 3000]))
            value += 1
            batch.append(_element(draw(st.integers(0, 4)), max(0, now - back), value))
        batches.append(batch)
    return batches


def _text(batches: list[list[Element]]) -> dict[str, str]:
    lines = [[timed_triple_line(e) for e in batch] for batch in batches]
    return {"query.rq": QUERY, "stream.nt": batches_text(lines)}


SHARED = [  # the case of test_spark_partitioned.py's lateness test: 2500 moves the first instant back
    [_element(0, 3775, 0)], [_element(1, 2500, 1)], [_element(0, 5500, 2), _element(0, 6000, 3)],
    [_element(2, 4900, 4)], [_element(0, 3100, 5)], [_element(0, 7000, 6)],
]  # fmt: skip
BEHIND = [  # the first element of the second micro-batch closes 3000 behind 3775: 2600 (another key) and
    # the second element at 2500 come after it and are late
    [_element(0, 3775, 0)], [_element(1, 2500, 1), _element(3, 2500, 2), _element(2, 2600, 3)],
    [_element(4, 4100, 4)],
]  # fmt: skip


@pytest.mark.generated
@settings(max_examples=examples(80), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(batches=_batches())
@example(batches=SHARED)
@example(batches=BEHIND)
def test_partitioned_lateness_equals_one_engine(batches, monkeypatch, spark) -> None:
    """(``spark``: the driver's last job builds a Spark SQL expression.) The same with the driver's
    merges held back behind Spark's jobs (:meth:`ResidentMerger.overlap`, here as late as they can be)."""
    with saved_on_failure(GOLDEN_ROOT, lambda: _text(batches)):
        expected, late = _one_engine(batches)
        for merges_last in (False, True):
            got, got_late = _partitioned(batches, monkeypatch, merges_last)
            assert got == expected, f"merges held back: {merges_last}"
            assert got_late == late, f"merges held back: {merges_last}"


def _read_batches(text: str) -> list[list[Element]]:
    """The micro-batches of a saved case's stream.nt (:func:`_text`'s format)."""
    return [[read_timed_triple_line(line) for line in batch] for batch in read_batches_text(text)[0]]


SAVED = saved_cases(GOLDEN_ROOT, "test_partitioned_lateness_equals_one_engine")


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_cases(name: str, monkeypatch, spark) -> None:
    """The shrunk cases ``make fuzz`` found, kept (fuzz-1ccaa5b6f4: a merge held back behind the job
    that moved the first instant back wrote that instant before its answers were merged)."""
    files = SAVED[name]
    assert files["query.rq"] == QUERY
    batches = _read_batches(files["stream.nt"])
    expected, late = _one_engine(batches)
    for merges_last in (False, True):
        got, got_late = _partitioned(batches, monkeypatch, merges_last)
        assert got == expected, f"merges held back: {merges_last}"
        assert got_late == late, f"merges held back: {merges_last}"


def test_fixed_cases_reach_the_corners() -> None:
    """The fixed cases do what their comments say under one engine (the reference's own check)."""
    answers, late = _one_engine(SHARED)
    assert late == 2 and 3000 in answers and answers[3000]
    answers, late = _one_engine(BEHIND)
    assert late == 2 and len(answers[3000]) == 1
