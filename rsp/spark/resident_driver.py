"""The driver side of ``rsp spark QUERY --partition-by ?k`` (:mod:`rsp.spark.resident` is the executor
side): :class:`ResidentMerger` runs each micro-batch's Spark job over the partitions' resident engines,
with the stream's clock for every partition, and merges their answers into the instants it writes,
once every partition has closed them, on a thread of its own that follows Spark's jobs.

The executor side's functions are used through their module (``resident.keyed_lines`` and so on), the
one place a test replaces them.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.classic.dataframe import DataFrame as ClassicFrame

from rsp.errors import RspError
from rsp.spark import hosts, resident, splits
from rsp.spark.feed import admitted
from rsp.spark.partitioned import OUTPUT_SCHEMA, Merger
from rsp.spark.resident import Job


class ResidentMerger(Merger):
    """The driver: runs each micro-batch's job over the partitions' resident engines (given the batch as
    a DataFrame by :func:`rsp.spark.pipeline.start`), then merges their answers as :class:`Merger`."""

    frames = True
    _merging: queue.Queue | None = None
    """With :meth:`overlap`: the micro-batches waiting for the merge thread."""
    _failed: BaseException | None = None
    """What merging a micro-batch on that thread raised (raised again in the driver)."""
    _merge_start: int | None = None
    """The first instant as the job of the micro-batch being merged left it (see :meth:`_merge`)."""
    until: int | None = None
    """The largest element time of the micro-batches run so far (the next clock's), kept as each job
    ends: :attr:`Merger.last` follows the merge, which may still run (:meth:`overlap`)."""
    _codecs: tuple[str, ...] | None = None
    """The compression codecs' file name extensions (:func:`rsp.spark.splits.codec_extensions`)."""
    split_batches = 0
    """Micro-batches whose files the keying tasks read themselves (:meth:`keyed`)."""
    _split_session = None
    """The streaming query's session (JVM) of ``_split_frames`` (a new session: new frames)."""
    _step = None
    """The step tasks' function (:func:`rsp.spark.resident._step_function`), made once."""

    def __init__(self, spark: SparkSession, job: Job, *args, logs: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.spark = spark
        self.job = job
        self.partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or 2)
        self.ticks = resident.tick_keys(self.partitions)
        self._ticks: DataFrame | None = None
        self._split_frames: dict[int, tuple[DataFrame, DataFrame]] = {}
        """The split path's keyed frame and the job frame over it, by number of keying tasks
        (:meth:`keyed`), built once per streaming session."""
        self.run = hosts.prestarted() or uuid.uuid4().hex
        self.driver = (socket.gethostname(), os.getpid())
        self.own_logs = logs is None
        self.logs = logs or tempfile.mkdtemp(prefix="rsp-spark-partitions-")
        self.start: int | None = None
        self.closed_instant: int | None = None
        self.previous: int | None = None
        self.rebuilds = {"rebuilt": 0, "replayed": 0, "seconds": 0.0}
        self.times = {"engine": 0.0, "job": 0.0, "merge": 0.0}
        """Seconds in the partitions' steps (summed over partitions, rebuilds included), in the driver
        waiting for each micro-batch's Spark job (key, shuffle, steps, hand-over), and merging."""
        self.arrivals: list[float] = []
        """When each micro-batch reached the driver (``perf_counter``): their intervals once the JIT is
        warm are what a micro-batch costs in a long run (:meth:`summary`)."""
        self.on_close = self.finish
        self.warm()

    def warm(self) -> None:
        """Before the first micro-batch: a job over the tick rows that starts the Python workers and
        the partitions' engine hosts, imports the engine there and builds the partitions' engines
        (else ≈ 3 s of the first micro-batch at 2 partitions)."""
        rows = self._tick_frame().repartition(self.partitions, "key")
        rows.mapInArrow(resident._warm_function(self.run, self.driver, self.job), OUTPUT_SCHEMA).collect()

    def keyed(self, batch: DataFrame) -> DataFrame:
        """A micro-batch's lines parsed and keyed in the tasks (:func:`keyed_lines`): read by the tasks
        themselves from the file splits Spark planned (:mod:`rsp.spark.splits`; the splits go with the
        job as a local property, and the frame is built once per number of tasks), or as Spark read
        them (a socket, several streams, compressed files, ``RSP_SPARK_READ_SPLITS=0``)."""
        groups = None
        session = batch.sparkSession
        if os.environ.get("RSP_SPARK_READ_SPLITS", "1") != "0":
            if self._codecs is None:
                self._codecs = splits.codec_extensions(session)
            groups = splits.file_splits(batch, self._codecs)
        if groups is None:
            return resident.keyed_lines(batch, self.job.plan, self.ticks)
        self.split_batches += 1
        session.sparkContext.setLocalProperty(splits.PIECES_PROPERTY, splits.pieces_property(groups))
        if self._split_session is None or not self._split_session.equals(session._jsparkSession):
            self._split_session, self._split_frames = session._jsparkSession, {}
        built = self._split_frames.get(len(groups))
        if built is None:
            keyer = splits.splits_keyer(resident.line_keyer(self.job.plan, self.ticks))
            frame = resident.packed(splits.splits_frame(session, len(groups)), keyer, self.ticks)
            built = self._split_frames[len(groups)] = (frame, self._steps(frame))
        return built[0]

    def clock(self, batch: DataFrame | None = None) -> resident.Clock:
        """The global clock before the next micro-batch (the one of a single engine; see
        :class:`rsp.spark.resident.Clock`), with ``batch``'s first element while no instant is closed."""
        lead = None
        if batch is not None and self.closed_instant is None and self.until is not None:
            lead = self.lead(batch)
        return resident.Clock(self.start, self.closed_instant, self.until, lead)

    def lead(self, batch: DataFrame) -> tuple | None:
        """The micro-batch's first element a partition takes, ``(time, stream, s, p, o)``, in the order
        one engine takes them (time, stream, file, place in the file): one small Spark job, run only
        while no instant is closed (the first micro-batches), over the lines parsed by Spark's regex."""
        from rsp.spark.source import parse_lines

        batch = parse_lines(batch)
        key = resident.key_column(self.job.plan, F.col("s"), F.col("p"), F.col("o"))
        stream = F.col("stream") if "stream" in batch.columns else F.lit(0)
        place = [F.col(n) for n in ("file_time", "file", "block") if n in batch.columns]
        order = F.struct(F.col("time"), stream.cast("int"), *place, F.col("row"), F.col("s"), F.col("p"),
                         F.col("o"))  # fmt: skip
        rows = batch.withColumn("row", F.monotonically_increasing_id())  # in line order within a split
        row = rows.where(F.col("time").isNotNull() & key.isNotNull()).select(F.min(order).alias("m")).first()
        if row is None or row["m"] is None:
            return None
        first = row["m"]
        return (first[0], first[1], first[-3], first[-2], first[-1])

    def _tick_frame(self) -> DataFrame:
        """One row per partition, its tick key and nulls, made in the JVM (from Python rows it cost
        ≈ 0.5 s more of the warm-up: Python's rows handed over, a slower first job) and made once."""
        if self._ticks is None:
            keys = F.array(*(F.lit(key) for key in self.ticks))
            index = (F.col("id") + 1).cast("int")
            rows = self.spark.range(len(self.ticks), numPartitions=1)
            no_rows = F.lit(None).cast("binary").alias("rows")
            self._ticks = rows.select(F.element_at(keys, index).alias("key"), no_rows)
        return self._ticks

    def _steps(self, rows: DataFrame) -> DataFrame:
        """The job's frame over keyed ``rows``: hash-partitioned by key, each partition's step
        (:func:`rsp.spark.resident._step_function`, made once, its step read from the job)."""
        if self._step is None:
            self._step = resident._step_function(self.job)
        return rows.repartition(self.partitions, "key").mapInArrow(self._step, OUTPUT_SCHEMA)

    def _run(self, frame: DataFrame, step: resident.Step, ticks: bool = False) -> pa.Table:
        """One micro-batch's job: ``frame``'s keyed rows hash-partitioned by key, each partition's step
        (:func:`run_step`), the rows for the driver. Every partition runs, with data or without (the
        shuffle has ``partitions`` partitions whatever their rows), so the tick rows are added
        (``ticks``) only when no partition ran: when Spark's optimizer found the input empty and left the
        job out (no step had run, so it is run again, with the ticks).

        Adaptive query execution is off for these jobs (in the micro-batches' own session): with it,
        Spark ran the shuffle as a job of its own before the steps' job, ≈ 0.1 s more per micro-batch."""
        session = frame.sparkSession
        session.conf.set("spark.sql.adaptive.enabled", "false")  # the streaming query's own
        session.sparkContext.setLocalProperty(resident.STEP_PROPERTY, resident.step_property(step))
        kept = () if ticks else self._split_frames.values()
        built = next((job for keyed, job in kept if keyed is frame), None)
        if built is not None:  # planned afresh: a plan run twice reuses its shuffle
            job = ClassicFrame(session._jvm.org.apache.spark.sql.classic.Dataset.ofRows(
                session._jsparkSession, built._jdf.queryExecution().logical()), session)  # fmt: skip
        else:
            job = self._steps(frame.unionByName(self._tick_frame()) if ticks else frame)
        table = job.toArrow()
        ran = pc.sum(pc.equal(table.column("kind"), "mark")).as_py() or 0  # one mark per partition step
        if not ticks and not ran:
            return self._run(frame, step, ticks=True)
        if ran != self.partitions:  # a partition whose step did not run would lose its instants
            raise RspError(
                f"rsp spark --partition-by: {ran} of {self.partitions} partitions ran their step in one "
                "micro-batch's job (Spark left the others out); their answers would be lost"
            )
        return table

    def __call__(self, batch: DataFrame, batch_id: int) -> None:  # type: ignore[override]
        if self._failed is not None:
            raise self._failed
        with self.lock:
            if not admitted(self.stopping, self.checkpoint, batch_id):
                return
            self.arrivals.append(time.perf_counter())
            step = resident.Step(self.run, self.logs, batch_id, self.previous, self.clock(batch),
                                 driver=self.driver, partitions=self.partitions)  # fmt: skip
        started = time.perf_counter()
        table = self._run(self.keyed(batch), step)
        self.times["job"] += time.perf_counter() - started
        self._take_stats(table)
        with self.lock:
            self.previous = batch_id
            moved = self._advance_clock(table)
            item = (table, batch_id, self.start, moved)
        if self._merging is None:
            self._merge(*item)
        else:
            self._merging.put(item)

    def _merge(
        self, table: pa.Table, batch_id: int, start: int | None, moved: bool, queued: bool = False
    ) -> None:
        """Merge a micro-batch's answers with the timeline as its job left it: ``start``, the first
        instant then, and ``moved``, whether that job could move the first instant (nothing written
        yet). The merge may run after later jobs moved the first instant back again (:meth:`overlap`):
        their instants wait for their own answers, merged after these."""
        started = time.perf_counter()
        if moved:
            self.next = None  # written from the first instant on once an instant is final
        self._merge_start = start
        super().__call__(table, batch_id, queued)
        self.times["merge"] += time.perf_counter() - started

    def overlap(self) -> None:
        """Merge each micro-batch's answers on a thread of its own while Spark runs the next
        micro-batch's job (not with a checkpoint, whose commit must follow the merge)."""
        if self.checkpoint is not None or self._merging is not None:
            return
        self._merging = queue.Queue(maxsize=1)
        # as QueryFeeder.overlap: Spark's callback thread makes many short py4j calls while this one
        # merges; at the default 5 ms switch interval each of them waited for the merge
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, 0.0005))
        worker = threading.Thread(target=self._merge_loop, args=(self._merging,), daemon=True)
        worker.start()

    def _merge_loop(self, pending: queue.Queue) -> None:
        while True:
            item = pending.get()
            try:
                if item is None:
                    return
                if self._failed is None:
                    try:
                        self._merge(*item, queued=True)
                    except BaseException as err:  # noqa: BLE001 - raised again in the driver
                        self._failed = err
            finally:
                pending.task_done()

    def drain(self) -> None:
        """Wait until every micro-batch taken is merged; raise what merging one raised."""
        if self._merging is not None:
            self._merging.join()
        if self._failed is not None:
            raise self._failed

    def close(self) -> None:
        """End of the input: the micro-batches taken merged, then the last instants (:meth:`finish`)."""
        self.drain()
        if self._merging is not None:
            self._merging.put(None)
            self._merging = None
            sys.setswitchinterval(self._switch_interval)
        super().close()

    @staticmethod
    def _marks(table: pa.Table) -> list[dict]:
        """The partitions' marks (not the answers' rows, whose payloads are large)."""
        return table.filter(pc.equal(table.column("kind"), "mark")).to_pylist()

    def _take_stats(self, table: pa.Table) -> None:
        for row in self._marks(table):
            if row["payload"]:
                for name, value in json.loads(row["payload"]).items():
                    (self.times if name == "engine" else self.rebuilds)[name] += value

    def _advance_clock(self, table: pa.Table) -> bool:
        """The global clock after a micro-batch: a single engine's, from the partitions' first and last
        times of the elements they took. True when the first instant may have moved (nothing was
        closed before): the merge of this micro-batch writes from the first instant again."""
        marks = self._marks(table)
        firsts = [r["first"] for r in marks if r["first"] is not None]
        self._advance_until(marks)
        if not firsts:
            return False
        step = self.step
        moved = self.closed_instant is None  # nothing written yet: the first instant may still move back
        if moved:
            start = (min(firsts) // step + 1) * step
            self.start = start if self.start is None else min(self.start, start)
        until = self.until
        if self.start <= until:
            self.closed_instant = until // step * step
        return moved

    def _advance_until(self, marks: list[dict]) -> None:
        lasts = [r["last"] for r in marks if r["last"] is not None]
        if lasts:
            self.until = max(lasts) if self.until is None else max(self.until, *lasts)

    def first_instant(self, first: int) -> int:
        start = self.start if self._merge_start is None else self._merge_start
        return start if start is not None else super().first_instant(first)

    def saved(self) -> dict:
        return {
            **super().saved(),
            "start": self.start,
            "closed": self.closed_instant,
            "previous": self.previous,
        }

    def resume(self, checkpoint) -> None:
        super().resume(checkpoint)
        saved = checkpoint.counters()
        if saved:
            self.start, self.closed_instant = saved["start"], saved["closed"]
            self.previous = saved["previous"]
            self.until = self.last

    def finish(self) -> None:
        """End of the input: every partition closes its instants up to the final one."""
        self._merge_start = None  # every micro-batch merged: the timeline as it is now
        final = self.final_instant()
        if final is not None:
            batch = (self.previous or 0) + 1
            step = resident.Step(self.run, self.logs, batch, self.previous, self.clock(), final, self.driver,
                        self.partitions)  # fmt: skip
            # no data: the tick rows alone (an empty frame was a job Spark left out, then this one)
            table = self._run(self._tick_frame().where(F.lit(False)), step, ticks=True)
            self._take_stats(table)
            for row in table.to_pylist():
                if row["kind"] == "result":
                    self.add(row["instant"], json.loads(row["payload"]))
            self.flush(final)
        if self.own_logs:
            shutil.rmtree(self.logs, ignore_errors=True)

    def summary(self) -> list[str]:
        r, t = self.rebuilds, self.times
        lines = [
            *super().summary(),
            f"partitioned: {r['rebuilt']:,} partition engine rebuild(s), {r['replayed']:,} elements "
            f"replayed in {r['seconds']:.2f} s",
            f"partitioned: {t['engine']:.2f} s in the partitions' steps (summed), {t['job']:.2f} s in Spark "
            f"jobs, {t['merge']:.2f} s merging in the driver",
        ]
        if self.split_batches:
            lines.append(f"partitioned: {self.split_batches:,} of {len(self.arrivals):,} micro-batch(es) "
                         "read by the keying tasks from Spark's file splits")  # fmt: skip
        warm = warm_interval(self.arrivals)
        if warm is not None:
            lines.append(f"partitioned: {warm:.3f} s between micro-batches once warm (median from the third)")
        return lines


def warm_interval(arrivals: list[float]) -> float | None:
    """The median time from one micro-batch's arrival in the driver to the next's, from the third
    micro-batch on (the first two warm the JIT and the partitions' engines up): a micro-batch's whole
    cost in a long run, Structured Streaming's bookkeeping included. None with fewer than four.

    >>> warm_interval([0.0, 2.5, 4.0, 4.7, 5.5, 6.2]), warm_interval([0.0, 1.0, 2.0])
    (0.7, None)
    """
    if len(arrivals) < 4:
        return None
    later = arrivals[2:]
    return round(statistics.median(b - a for a, b in zip(later, later[1:], strict=False)), 6)
