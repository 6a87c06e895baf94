"""Resident partition engines for ``rsp spark QUERY --partition-by ?k``: the engines stay in Spark's
Python workers across micro-batches, and a micro-batch costs what its triples cost.

Each micro-batch (``foreachBatch``) is one Spark job:

1. the stream's lines, read by the keying tasks from the file splits Spark planned
   (:mod:`rsp.spark.splits`) or as Spark's reader gives them, are parsed and keyed in the tasks' Python
   workers (:func:`keyed_lines`: Arrow's RE2 takes the terms and time, :func:`arrow_key` the key, the subject
   or the object by predicate, as :class:`rsp.query.translation.partition.KeyPlan` says); the few lines the
   pattern did not take go to every partition under its tick key, and each partition's step parses
   them with rsp's parser (:func:`recheck_rows`), keeps the elements of the keys Spark's shuffle gives
   it (:mod:`rsp.spark.hashing`) and, in partition 0, reports the malformed ones;
2. the rows are hash-partitioned by key into ``N`` partitions (``spark.sql.shuffle.partitions``; every
   partition runs even without data, and a job Spark leaves out over an input it knows empty runs again
   with one *tick* row per partition, ``ResidentMerger._run``): the keying task packs each batch's rows
   of a partition into one Arrow IPC row under that partition's tick key (:func:`packed`, the partition
   Spark's hash gives the key, :func:`rsp.spark.hashing.partitions_of`), so Spark's shuffle moves a
   few large rows, and ``mapInArrow`` runs :func:`_step_function` on each partition's rows unpacked:
   **one engine per partition** holding all of its keys (the query partitions by ``?k``, so one engine
   over any set of keys gives the union of those keys' answers, as one engine over all of them does).
   The engine lives in a process-local registry of the Python worker, keyed by run and partition, and
   is used again by the next micro-batch when the worker that gets the partition holds it at the
   previous micro-batch; otherwise (another worker, a
   failure, a restart) it is rebuilt from the partition's *recovery log*: one Arrow file per
   micro-batch with the elements the engine took, pruned to what the windows may still need
   (``--checkpoint DIR``: under ``DIR/rsp/partitions``, else a temporary directory of the run; on a
   cluster it must be storage every executor sees);
3. every partition engine follows the stream's global clock, given by the driver with each
   micro-batch: the first instant and the last instant closed (:class:`Clock`), and the largest element
   time of the earlier micro-batches, up to which it closes instants before it takes the new
   elements. So an element older than the last instant closed is late in every partition, as for one
   engine, whether or not its partition saw data before;
4. each partition returns the answers of the instants it closed, as JSON rows, and a mark; the
   driver's :class:`rsp.spark.resident_driver.ResidentMerger` writes an instant once every partition
   has closed it (the union of their answers) — the instants up to the largest time of the earlier
   micro-batches — and at the end of the input a last job over the tick rows closes the last instants.
"""

from __future__ import annotations

import base64
import gc
import itertools
import json
import os
import pickle
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from rsp.query.translation.partition import RDF_TYPE, KeyPlan
from rsp.spark.feed import display_path, recheck_triple
from rsp.spark.hashing import partition_of
from rsp.spark.partitioned import Merger

if TYPE_CHECKING:  # PySpark is imported where a DataFrame is built: the engine hosts never do
    from pyspark.sql import Column, DataFrame

TICK = "\u0000tick"
"""Keys of the tick rows (one per partition: every partition runs in every micro-batch)."""
ROW_COLUMNS = ("key", "time", "stream", "s", "p", "o", "line", "file", "arrival")
ROW_SCHEMA = pa.schema([("key", pa.string()), ("time", pa.int64()), ("stream", pa.int32()),
                        *((name, pa.string()) for name in ("s", "p", "o", "line", "file")),
                        ("arrival", pa.int64())])  # fmt: skip
"""A micro-batch's keyed rows (:data:`ROW_COLUMNS`), as the partitions' steps take them."""
PACKED_DDL = "key string, rows binary"
PACKED_SCHEMA = pa.schema([("key", pa.string()), ("rows", pa.binary())])
"""What the keying hands Spark's shuffle (:func:`packed`): per keyer batch and partition, one row of that
partition's :data:`ROW_SCHEMA` rows as an Arrow IPC stream (``rows``), keyed by the partition's tick key
so that Spark's hash partitioning puts it there; a tick row of its own has no ``rows``."""
LOG_SCHEMA = pa.schema([("time", pa.int64()), ("stream", pa.int32()), ("s", pa.string()),
                        ("p", pa.string()), ("o", pa.string())])  # fmt: skip


def key_column(plan: KeyPlan, s: Column, p: Column, o: Column) -> Column:
    """The key of a triple as a Spark SQL expression (null: no pattern can match it), in the order of
    :meth:`KeyPlan.place`: ``rdf:type`` triples by class first, then by predicate."""
    from pyspark.sql import functions as F

    key = None

    def case(condition: Column, place: int) -> None:
        nonlocal key
        value = s if place == 0 else o
        key = F.when(condition, value) if key is None else key.when(condition, value)

    for cls, place in plan.classes:
        case((p == F.lit(RDF_TYPE)) & (o == F.lit(cls)), place)
    for predicate, place in plan.positions:
        case(p == F.lit(predicate), place)
    return F.lit(None).cast("string") if key is None else key


def keyed_lines(frame: DataFrame, plan: KeyPlan, ticks: list[str]) -> DataFrame:
    """A stream's lines as Spark reads them (``value``, ``file``, ``arrival`` and ``stream``:
    :func:`rsp.spark.source.read_lines`) parsed and keyed in the tasks' Python workers: Arrow's RE2
    takes the terms and time (:func:`rsp.spark.lines.parse`, the driver's parse without
    ``--partition-by``) and :func:`arrow_key` the key. Lines it does not take go to every partition
    under its tick key, with their text, file and arrival time, for the partition's step to parse
    (:func:`recheck_rows`).

    Spark's regex parse and a Spark SQL key (:func:`key_column`), as rsp keyed before, cost more, warm
    and cold: a static job over 1M lines (read, parse, key, shuffle, ``noop`` write; four runs in one
    session) took 3.69, 1.66, 1.38, 1.31 s that way and 3.38, 1.10, 1.12, 1.07 s with this
    (docs/spark.md, *What bounds ten micro-batches*)."""
    columns = [name for name in ("value", "file", "arrival", "stream") if name in frame.columns]
    return packed(frame.select(*columns), line_keyer(plan, ticks), ticks)


def packed(frame: DataFrame, keyer, ticks: list[str]) -> DataFrame:
    """``frame`` mapped by ``keyer`` (Arrow batches in, :data:`ROW_SCHEMA` batches out) into the rows
    Spark's shuffle moves (:data:`PACKED_DDL`): each batch's rows of a partition (the partition Spark's
    hash of the key gives, :func:`rsp.spark.hashing.partitions_of`) as one Arrow IPC row under the
    partition's tick key. The shuffle then moves a few large rows per task, not one row per triple
    (each converted from Arrow, serialised, read back and converted to Arrow again in the JVM); the
    step's rows are the same, in the same order (:func:`unpacked`)."""
    return frame.mapInArrow(packer(keyer, ticks), PACKED_DDL)


def packer(keyer, ticks: list[str]):
    """The function :func:`packed` maps over ``frame``'s Arrow batches."""

    def pack(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in keyer(batches):
            if batch.num_rows:
                yield pack_rows(batch, ticks)
        settle_heap()

    return pack


def pack_rows(rows: pa.RecordBatch | pa.Table, ticks: list[str]) -> pa.RecordBatch:
    """Keyed rows (:data:`ROW_SCHEMA`) as :data:`PACKED_DDL` rows, one per partition that has rows."""
    import numpy as np

    from rsp.spark.hashing import partitions_of

    table = rows if isinstance(rows, pa.Table) else pa.Table.from_batches([rows])
    places = partitions_of(table.column("key"), len(ticks))
    # the rows in partition order, each partition's in their own order (one take, then zero-copy
    # slices, not one filter over all the rows per partition)
    table = table.take(pa.array(np.argsort(places, kind="stable")))
    keys, blobs = [], []
    start = 0
    for partition, count in enumerate(np.bincount(places, minlength=len(ticks)).tolist()):
        if not count:
            continue
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, ROW_SCHEMA) as writer:
            writer.write_table(table.slice(start, count))
        start += count
        keys.append(ticks[partition])
        blobs.append(sink.getvalue())
    return pa.RecordBatch.from_arrays([pa.array(keys, pa.string()), _binary(blobs)], schema=PACKED_SCHEMA)


def _binary(buffers: list[pa.Buffer]) -> pa.Array:
    """A binary array of the buffers (joined once, not copied into Python bytes first)."""
    sizes = [buffer.size for buffer in buffers]
    offsets = pa.array([0, *itertools.accumulate(sizes)], pa.int32()).buffers()[1]
    data = pa.py_buffer(b"".join(buffers)) if len(buffers) != 1 else buffers[0]
    return pa.Array.from_buffers(pa.binary(), len(buffers), [None, offsets, data])


def unpacked(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The keyed rows (:data:`ROW_SCHEMA`) of a partition's :data:`PACKED_DDL` rows, in order: each
    ``rows`` stream read without a copy, a tick row (no ``rows``) as a row of its key alone."""
    for batch in batches:
        keys, blobs = batch.column(0), batch.column(1)
        for index in range(batch.num_rows):
            blob = blobs[index]
            if blob.is_valid:
                yield from pa.ipc.open_stream(blob.as_buffer()).read_all().to_batches()
            else:
                yield pa.RecordBatch.from_pylist([{"key": keys[index].as_py()}], ROW_SCHEMA)


def line_keyer(plan: KeyPlan, ticks: list[str]):
    """The function :func:`keyed_lines` maps over the lines' Arrow batches."""

    def add_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from rsp.spark.lines import parse

        for batch in batches:
            table = parse(pa.Table.from_batches([batch]))  # blank and comment lines left out
            if table.num_rows:
                yield from keyed_table(table, plan, ticks).to_batches()

    return add_keys


def keyed_table(table: pa.Table, plan: KeyPlan, ticks: list[str]) -> pa.Table:
    """Parsed lines (``s``, ``p``, ``o``, ``time``, ``line``, ``file``, ``arrival``, maybe ``stream``)
    as :data:`ROW_SCHEMA` rows: a taken line under its key (none: no pattern can match it, left out), a
    line not taken (``line`` set) once under each tick key."""
    n = table.num_rows
    s, p, o, time, line = (table.column(name).combine_chunks() for name in ("s", "p", "o", "time", "line"))
    stream = (table.column("stream").combine_chunks().cast(pa.int32()) if "stream" in table.column_names
              else pa.repeat(pa.scalar(0, pa.int32()), n))  # fmt: skip
    key = arrow_key(plan, s, p, o)
    unparsed = line.is_valid()
    no_text, no_arrival = pa.nulls(n, pa.string()), pa.nulls(n, pa.int64())
    taken = pa.table([key, time, stream, s, p, o, no_text, no_text, no_arrival], schema=ROW_SCHEMA)
    parts = [taken.filter(pc.and_(pc.invert(unparsed), key.is_valid()))]
    if pc.any(unparsed).as_py():
        file, arrival = (table.column(name).combine_chunks() for name in ("file", "arrival"))
        rest = pa.table([key, time, stream, s, p, o, line, file, arrival], schema=ROW_SCHEMA).filter(unparsed)
        parts.extend(rest.set_column(0, "key", pa.repeat(pa.scalar(tick, pa.string()), rest.num_rows))
                     for tick in ticks)  # fmt: skip
    return pa.concat_tables(parts)


def arrow_key(plan: KeyPlan, s: pa.Array, p: pa.Array, o: pa.Array) -> pa.Array:
    """:func:`key_column` over Arrow arrays of terms: the first case of the plan that holds gives the key
    (null: none holds)."""
    conditions, values = [], []
    for cls, place in plan.classes:
        conditions.append(pc.and_(pc.equal(p, RDF_TYPE), pc.equal(o, cls)))
        values.append(s if place == 0 else o)
    for predicate, place in plan.positions:
        conditions.append(pc.equal(p, predicate))
        values.append(s if place == 0 else o)
    if not conditions:
        return pa.nulls(len(s), pa.string())
    names = [str(index) for index in range(len(conditions))]
    cases = pa.StructArray.from_arrays([pc.fill_null(c, False) for c in conditions], names)
    return pc.case_when(cases, *values)


def recheck_rows(
    table: pa.Table, plan: KeyPlan, partition: int, partitions: int
) -> tuple[pa.Table, list[dict]]:
    """The lines Spark's regex did not take (rows with a ``line``), as every partition receives them,
    parsed by rsp: the elements of this partition's keys (the partition Spark's shuffle gives the key,
    :func:`rsp.spark.hashing.partition_of`), as ``time, stream, s, p, o`` rows, and the malformed lines
    (``line, file, reason``), which partition 0 alone reports."""
    elements: dict[str, list] = {name: [] for name in LOG_SCHEMA.names}
    rejects = []
    lines = table.select(["stream", "line", "file", "arrival"]).to_pylist()
    for row in lines:
        try:
            parsed = recheck_triple(row["line"], row["arrival"])
        except ValueError as err:
            if partition == 0:
                rejects.append({"line": row["line"], "file": row["file"], "reason": str(err)})
            continue
        if parsed is None:
            continue
        time, triple = parsed
        key = plan.key(*triple)
        if key is None or partition_of(key, partitions) != partition:
            continue
        for name, value in zip(elements, (time, row["stream"], *triple), strict=True):
            elements[name].append(value)
    return pa.table(elements, schema=LOG_SCHEMA), rejects


def query_elements(job: Job, table: pa.Table, partition: int, partitions: int) -> tuple[pa.Table, list[dict]]:
    """A query partition's elements in a micro-batch's keyed rows (:data:`LOG_SCHEMA`; the tick row left
    out, the lines Spark's regex did not take parsed by :func:`recheck_rows`) and the malformed lines."""
    if not table.num_rows or "time" not in table.column_names:
        return LOG_SCHEMA.empty_table(), []
    unparsed = pc.is_valid(table.column("line")) if "line" in table.column_names else None
    data = table.filter(pc.invert(pc.starts_with(table.column("key"), TICK)))
    data = data.select(LOG_SCHEMA.names).cast(LOG_SCHEMA)
    if unparsed is None or not pc.any(unparsed).as_py():
        return data, []
    rechecked, rejects = recheck_rows(table.filter(unparsed), job.plan, partition, partitions)
    return pa.concat_tables([data, rechecked]), rejects


@dataclass(frozen=True)
class Job:
    """What the executors need to run a key's engine (pickled with the functions)."""

    query: str
    file: str
    streams: tuple[str, ...]
    plan: KeyPlan
    step: int
    """The query's STEP (ms)."""
    entailment: str = "none"
    ontology: tuple[tuple[str, str, str], ...] = ()
    """The triples of ``--ontology`` (shipped with the job; FROM graphs are read where the query runs)."""

    def partition_engine(self):
        """A partition's engine (:class:`PartitionEngine`)."""
        return PartitionEngine(self)

    def elements(self, table, partition: int, partitions: int):
        """The partition's elements in its keyed rows, and the malformed lines it reports."""
        return query_elements(self, table, partition, partitions)


@dataclass(frozen=True)
class Clock:
    """The stream's clock before a micro-batch, as one engine over the whole stream has it: ``start``
    the first instant (None before any element), ``closed`` the last closed instant (None before one
    closed), ``until`` the largest element time of the earlier micro-batches (instants up to it close)."""

    start: int | None
    closed: int | None
    until: int | None
    lead: tuple | None = None
    """While no instant is closed: the micro-batch's first element over every partition, ``(time,
    stream, s, p, o)`` in the order one engine takes them (``ResidentMerger.lead``; None: not
    known, or an instant is closed). An element that moves the first instant back behind a newer one
    closes the instants up to that one, in every partition, and the elements after it older than them
    are late."""


@dataclass(frozen=True)
class Step:
    """What one micro-batch's task needs besides the :class:`Job` (pickled with the function)."""

    run: str
    logs: str
    batch: int
    previous: int | None
    """The micro-batch the partition's engine must have taken last (None: none before)."""
    clock: Clock
    final: int | None = None
    """At the end of the input: close the instants up to this one (no data comes)."""
    driver: tuple[str, int] | None = None
    """The driver's host name and process id (an engine host on its machine exits when it is gone)."""
    partitions: int = 1
    """The number of shuffle partitions (where Spark puts a key: :func:`rsp.spark.hashing.partition_of`)."""


class PartitionEngine:
    """One partition's engine: the query over every key the partition holds."""

    def __init__(self, job: Job) -> None:
        from rsp.runtime import Engine

        self.job = job
        self.engine = Engine(entailment=job.entailment)
        self.engine.static.extend(job.ontology)
        self.handle = self.engine.register(job.query, job.file)
        self.handle.keep = False
        self.results: list = []
        self.handle.subscribe(self.results.append)
        self.batch: int | None = None

    def sync(self, clock: Clock) -> None:
        """Follow the global clock: the first instant (moved back as one engine moves it, while nothing
        is closed) and the instants closed up to the largest time of the earlier micro-batches."""
        h = self.handle
        start = clock.closed if clock.closed is not None else clock.start
        if start is not None:
            h.clock.start_at(start)
        if clock.until is not None:
            h.clock.saw(clock.until)  # the stream's newest element, of any partition
            self.engine.advance(clock.until)

    def lead(self, lead: tuple | None, data: pa.Table) -> tuple[pa.Table, pa.Table]:
        """What the micro-batch's first element (``lead``, over every partition) does while no instant is
        closed, as one engine over the stream does it: when it moves the first instant back behind the
        newest element, it alone is taken (here, if this partition holds it) and the instants up to the
        newest element close, in every partition. ``data``: the partition's elements in time order.
        Returns the element taken (no row or one) and the rest of ``data``."""
        h = self.handle
        none = data.slice(0, 0)
        newest = h.clock.newest
        if lead is None or h.closed_until is not None or newest is None:
            return none, data
        time, stream, *triple = lead
        first = h.clock.first_after(time)
        start = first if h.clock.next_instant is None else min(h.clock.next_instant, first)
        if start > newest:
            return none, data  # nothing closes behind it: it is taken as any element
        same = pc.and_(pc.equal(data.column("time"), time), pc.equal(data.column("stream"), stream))
        for name, value in zip(("s", "p", "o"), triple, strict=True):
            same = pc.and_(same, pc.equal(data.column(name), value))
        found = pc.indices_nonzero(same)
        if not len(found):  # another partition holds it: the instants close here too
            h.clock.start_at(start)
            self.engine.advance(newest)
            return none, data
        index = found[0].as_py()
        self.push([time], [stream], [tuple(triple)])
        return data.slice(index, 1), pa.concat_tables([data.slice(0, index), data.slice(index + 1)])

    def push(self, times: list[int], streams: list[int], triples: list[tuple[str, str, str]]) -> None:
        """Elements in time order (then stream): each run of one stream in one call."""
        i, end = 0, len(times)
        while i < end:
            j = i + 1
            while j < end and streams[j] == streams[i]:
                j += 1
            self.engine.push_sorted(times[i:j], triples[i:j], self.job.streams[streams[i]], plain=True)
            i = j

    def keep_from(self) -> int | None:
        """Elements older than this no window after the last closed instant can see (None: all needed)."""
        return self.handle.oldest_needed()

    def replay_from(self, clock: Clock) -> int | None:
        """On a rebuild: the logged elements older than this no window after ``clock`` can see."""
        return None if clock.closed is None else self.handle.oldest_needed(clock.closed)

    def replay(self, table: pa.Table) -> None:
        """On a rebuild: a recovery log file's elements taken again."""
        triples = list(zip(*(shared_strings(table.column(n)) for n in ("s", "p", "o")), strict=True))
        self.push(table.column("time").to_pylist(), table.column("stream").to_pylist(), triples)

    @property
    def late(self) -> int:
        return self.engine.late

    def bound(self, clock: Clock) -> int | None:
        """The instants this partition has closed, for the driver: those up to the clock's time."""
        return clock.until

    def finish(self, final: int) -> None:
        """The end of the input: close the instants up to ``final``."""
        self.engine.advance(final)

    def take(self, data: pa.Table, clock: Clock) -> pa.Table:
        """A micro-batch's elements of this partition (:data:`LOG_SCHEMA` rows) after :meth:`sync`: the
        micro-batch's first element (:meth:`lead`), then those not late, pushed in time order. Returns
        the elements taken (the recovery log's rows)."""
        if not data.num_rows and clock.lead is None:
            return LOG_SCHEMA.empty_table()
        data = data.sort_by([("time", "ascending"), ("stream", "ascending")])
        lead, data = self.lead(clock.lead, data)
        closed = self.handle.closed_until
        if closed is not None:  # late for every engine: not pushed, counted, not logged
            taken = data.filter(pc.greater_equal(data.column("time"), closed))
            self.engine.late += data.num_rows - taken.num_rows
            data = taken
        if data.num_rows:
            times = data.column("time").to_pylist()
            triples = list(zip(*(shared_strings(data.column(n)) for n in ("s", "p", "o")), strict=True))
            self.push(times, data.column("stream").to_pylist(), triples)
        return pa.concat_tables([lead, data]) if lead.num_rows else data

    def rows(self) -> list[tuple]:
        rows = [
            ("result", r.time, json.dumps(r.bindings or []), None, None, None, None) for r in self.results
        ]
        self.results.clear()
        return rows


SHARED_SAMPLE = 10_000
"""Rows of a column :func:`shared_strings` looks at to decide whether its terms repeat."""


def shared_strings(column: pa.ChunkedArray | pa.Array) -> list:
    """A column of terms as Python strings, one object per distinct term when the terms repeat (at most
    one distinct term in two among the first :data:`SHARED_SAMPLE` rows): Arrow's dictionary encoding,
    then the distinct terms converted once. Quicker to make than one object per row (three columns of
    500k triples over 1,000 vehicles: 0.135 s against 0.215 s), and the engine hashes each term once (a
    string keeps its hash). Terms that do not repeat, or a column with nulls, are converted row by row
    (encoding 500k distinct literals took 0.07 s more than converting them, and sharing them 0.4 s).
    Round robin, three rounds, ``rsp spark --partition-by ?v`` over 1M triples in one micro-batch: 6.3 →
    5.5 s best in the query, faster in every round; ten micro-batches within noise. The engine in the
    driver (``rsp spark`` without ``--partition-by``) converts row by row: on the throughput benchmark's
    stream (distinct subjects and objects) sharing was slower.

    >>> shared_strings(pa.chunked_array([["<a>", "<b>"], ["<a>", "<a>"]]))
    ['<a>', '<b>', '<a>', '<a>']
    >>> shared_strings(pa.array(["<a>", None, "<a>"]))
    ['<a>', None, '<a>']
    """
    if column.null_count or len(column) < 2:
        return column.to_pylist()
    sample = column.slice(0, SHARED_SAMPLE)
    if pc.count_distinct(sample).as_py() * 2 > len(sample):
        return column.to_pylist()
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column)
    return list(map(encoded.dictionary.to_pylist().__getitem__, encoded.indices.to_pylist()))


_REGISTRY: dict[tuple[str, int], PartitionEngine] = {}
"""The engines a Python worker holds between micro-batches, by (run, partition); one run at a time."""


def _log_dir(step: Step, partition: int) -> Path:
    return Path(step.logs) / f"part-{partition}"


def _log_files(folder: Path) -> list[tuple[int, int, Path]]:
    """(micro-batch, largest time, path) of a partition's recovery log files, in micro-batch order."""
    files = []
    if folder.is_dir():
        for path in folder.iterdir():
            if path.suffix == ".arrow" and "-" in path.stem:
                batch, _, last = path.stem.partition("-")
                files.append((int(batch), int(last), path))
    return sorted(files)


def _rebuild(job, step: Step, partition: int) -> tuple[PartitionEngine, int]:
    """The partition's engine after micro-batch ``step.previous``, from its recovery log: the logged
    elements taken again (output dropped), then the clock of this micro-batch. Returns it and the
    number of elements replayed."""
    engine = job.partition_engine()
    replayed = 0
    keep_from = engine.replay_from(step.clock)
    if step.previous is not None:
        for batch, _last, path in _log_files(_log_dir(step, partition)):
            if batch > step.previous:
                continue  # written by a micro-batch that was never committed
            with pa.OSFile(str(path), "rb") as handle:
                table = pa.ipc.open_file(handle).read_all()
            if keep_from is not None:  # what no window after the last closed instant can see
                table = table.filter(pc.greater_equal(table.column("time"), keep_from))
            engine.replay(table)
            replayed += table.num_rows
    engine.batch = step.previous
    return engine, replayed


def _engine(job, step: Step, partition: int) -> tuple[PartitionEngine, dict]:
    """The partition's engine at micro-batch ``step.previous``: the worker's own, or rebuilt."""
    for other in [k for k in _REGISTRY if k[0] != step.run]:
        del _REGISTRY[other]  # a finished (or other) run's engines
    engine = _REGISTRY.pop((step.run, partition), None)
    stats: dict = {}
    if engine is None or engine.batch != step.previous:
        started = time.perf_counter()
        engine, replayed = _rebuild(job, step, partition)
        if step.previous is not None:  # not the partition's first micro-batch
            stats = {"rebuilt": 1, "replayed": replayed, "seconds": time.perf_counter() - started}
    engine.results.clear()
    return engine, stats


def _keep(step: Step, partition: int, engine: PartitionEngine) -> None:
    """Keep the engine in the worker for the next micro-batch (a module function: the task's own
    function is pickled by value, with a copy of the module's globals)."""
    engine.batch = step.batch
    _REGISTRY[(step.run, partition)] = engine


def _write_log(step: Step, partition: int, table: pa.Table, keep_from: int | None) -> None:
    """The elements this micro-batch's engine took, as the partition's recovery log file; files only
    older elements than the windows still need are deleted."""
    folder = _log_dir(step, partition)
    folder.mkdir(parents=True, exist_ok=True)
    for batch, last, path in _log_files(folder):
        if batch >= step.batch or (keep_from is not None and last < keep_from):
            path.unlink(missing_ok=True)  # a retried micro-batch's file, or one no window needs
    if table.num_rows:
        last = pc.max(table.column("time")).as_py()
        final = folder / f"{step.batch:012d}-{last}.arrow"
        partial = folder / f".{final.name}.{os.getpid()}"
        with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(partial, final)


OUT_SCHEMA = pa.schema([("kind", pa.string()), ("instant", pa.int64()), ("payload", pa.string()),
                        ("watermark", pa.int64()), ("first", pa.int64()), ("last", pa.int64()),
                        ("late", pa.int64())])  # fmt: skip


def run_step(job, step: Step, partition: int, table: pa.Table) -> pa.RecordBatch:
    """One partition's part of a micro-batch (its keyed rows, tick row included): rejects reported,
    the engine (resident or rebuilt) brought to the clock, the elements taken and logged; the answers
    it made final and its mark, as rows for the driver. ``job``: a query's :class:`Job` or a program's
    (:mod:`rsp.spark.resident_programs`), which gives the partition's elements
    (``job.elements(table, partition, partitions)``) and its engine (``job.partition_engine()``, with
    the methods of :class:`PartitionEngine`)."""
    data, rejects = job.elements(table, partition, step.partitions)
    rows: list[tuple] = []
    for row in rejects:
        payload = {"file": display_path(row["file"]), "line": row["line"], "reason": row["reason"]}
        rows.append(("reject", None, json.dumps(payload), None, None, None, None))
    started = time.perf_counter()
    engine, stats = _engine(job, step, partition)
    engine.sync(step.clock)
    late = engine.late
    first = last = None
    taken = None
    if step.final is not None:
        engine.finish(step.final)
    else:
        taken = engine.take(data, step.clock)
        if taken.num_rows:
            first, last = pc.min(taken.column("time")).as_py(), pc.max(taken.column("time")).as_py()
    rows.extend(engine.rows())
    if taken is not None:
        _write_log(step, partition, taken, engine.keep_from())
        _keep(step, partition, engine)
    stats["engine"] = time.perf_counter() - started
    report = getattr(engine, "report", None)  # what a kind of engine tells its driver besides its mark
    if report is not None:
        stats.update(report())
    mark = json.dumps(stats)
    rows.append(("mark", None, mark, engine.bound(step.clock), first, last, engine.late - late))
    return pa.RecordBatch.from_pylist(
        [dict(zip(Merger.columns, row, strict=True)) for row in rows], OUT_SCHEMA
    )


STEP_PROPERTY = "rsp.step"
"""The Spark local property a micro-batch's job carries its :class:`Step` in (:func:`step_property`)."""


def step_property(step: Step) -> str:
    """``step`` as the text of :data:`STEP_PROPERTY` (pickled, base64)."""
    return base64.b64encode(pickle.dumps(step)).decode("ascii")


def _step_function(job: Job, step: Step | None = None):
    """The step tasks' function: each partition's rows through its engine (:func:`rsp.spark.hosts.step`).
    Without ``step``, each task reads it from its job's :data:`STEP_PROPERTY`, so that one function (and
    one plan of the job) serves every micro-batch."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        from rsp.spark import hosts

        context = TaskContext.get()
        this = step
        if this is None:  # the job's (the driver's one function for every micro-batch)
            this = pickle.loads(base64.b64decode(context.getLocalProperty(STEP_PROPERTY)))
        yield hosts.step(job, this, context.partitionId(), unpacked(batches), run_step)
        settle_heap()

    return run


_SETTLED: tuple[int, int] | None = None
"""The process whose heap :func:`settle_heap` settled last (a forked child settles its own) and how many
modules it had imported then."""


def settle_heap() -> None:
    """In a Python worker PySpark reuses (``SPARK_REUSE_WORKER``, its default), at the end of a task
    (and of the warm-up): when modules were imported since the last time (the first task, a new kind of
    task), a full collection, then every object alive moved out of the cyclic garbage collector's reach
    (``gc.freeze``). Elsewhere (a test calling a task's function in its own process), nothing.

    PySpark's daemon runs a full ``gc.collect()`` after every task of a reused worker, and over the
    ≈ 95,000 objects of the modules a worker imports (PySpark, pyarrow, NumPy, rsp) it took 35–97 ms a
    task, four tasks a micro-batch. Frozen, they are no longer scanned. Frozen objects are still freed
    when no longer referenced; only a reference cycle among them that later becomes garbage stays, and
    settling after a collection, only when modules were imported, bounds that to what a few tasks
    held."""
    global _SETTLED
    if not os.environ.get("SPARK_REUSE_WORKER") or _SETTLED == (os.getpid(), len(sys.modules)):
        return
    gc.collect()
    gc.freeze()
    _SETTLED = (os.getpid(), len(sys.modules))


def tick_keys(partitions: int) -> list[str]:
    """One key per hash partition (Spark's ``repartition(n, key)`` puts a row in partition
    ``pmod(hash(key), n)``, :func:`rsp.spark.hashing.partition_of`): the tick rows that make every
    partition run."""
    found: dict[int, str] = {}
    for index in range(64 * partitions):
        key = f"{TICK}{index}"
        found.setdefault(partition_of(key, partitions), key)
    if len(found) < partitions:
        raise RuntimeError("rsp spark: no tick key found for every partition")
    return [found[p] for p in range(partitions)]


def prepare(job, run: str, partition: int) -> None:
    """Before the run's first micro-batch: the partition's engine built (the query compiled, ≈ 0.1 s
    the first step does not spend), as the first step would build it, with no micro-batch taken."""
    if (run, partition) not in _REGISTRY:
        engine = job.partition_engine()
        engine.batch = None
        _REGISTRY[(run, partition)] = engine


def _warm_function(run: str, driver: tuple[str, int], job):
    def warm(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Import the engine in the Python worker, start (or reach) the partition's engine host and
        build the partition's engine there (or here, without hosts)."""
        from pyspark import TaskContext

        import rsp.runtime  # noqa: F401 - imported now, not in the first micro-batch
        from rsp.spark import hosts

        for _ in batches:
            pass
        partition = TaskContext.get().partitionId()
        if not hosts.enabled() or not hosts.warm(run, partition, driver, job):
            try:
                prepare(job, run, partition)
            except Exception:  # noqa: BLE001, S110 - the first step builds it and fails with the error,
                pass  # reported as any step's failure is
        settle_heap()
        yield pa.RecordBatch.from_pylist([], OUT_SCHEMA)

    return warm


__all__ = ["Clock", "key_column", "keyed_lines"]
