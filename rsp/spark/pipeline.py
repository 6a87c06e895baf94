"""Wiring a parsed streaming DataFrame to a feeder: ``foreachBatch`` with Arrow hand-over.

Each micro-batch gets a row position (``monotonically_increasing_id``: increasing within a file
split, so lines keep their order), is collected to the driver as an Arrow table (``toArrow``; lines the
driver parses are parsed as their record batches arrive, :func:`collect_parsed`) and given to the
feeder, which orders and pushes it into the engine.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
from py4j.protocol import Py4JError
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import TimestampType

from rsp.errors import LateElementError, RspError, StreamError
from rsp.spark import lines
from rsp.spark.checkpoint import Checkpoint
from rsp.spark.feed import Feeder, QueryFeeder, Rejects, Stopped, print_error

COLUMNS = ("value", "s", "p", "o", "time", "line", "file", "file_time", "block", "arrival", "stream")
"""The columns handed to a feeder, of those the frame has (``value``: lines the driver parses)."""


def start(
    feeder: Feeder,
    frame: DataFrame,
    *,
    available_now: bool = False,
    processing_time: str | None = None,
    checkpoint: str | None = None,
    name: str | None = None,
    local_logs: bool = False,
) -> StreamingQuery:
    """Start the streaming query that hands each micro-batch of ``frame`` to ``feeder``.

    ``checkpoint`` is Spark's checkpoint location (default: a temporary one, removed when the query
    stops); ``available_now`` processes what is there and stops; ``processing_time`` (``"1 second"``)
    sets the trigger interval (default: as soon as the previous micro-batch is done). ``local_logs``
    (a session of rsp's own): when the checkpoint is on this machine's file system, Spark writes its
    logs there through :data:`LOCAL_LOGS` (:func:`local_logs_manager`).
    """
    own = getattr(feeder, "columns", None)  # a consumer of other rows than parsed lines takes its own
    wanted = list(own) if own else [c for c in COLUMNS if c in frame.columns]

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        if feeder.stopping and feeder.checkpoint is None:
            return
        if getattr(feeder, "frames", False):  # a consumer that runs its own job over the micro-batch
            feeder(batch, batch_id)
            return
        if own:
            feeder(batch.select(*wanted).toArrow(), batch_id)
            return
        frame = batch.select(*wanted, F.monotonically_increasing_id().alias("pos"))
        # lines for the driver to parse: parsed as they arrive (else the feeder parses them)
        feeder(collect_parsed(frame) if "value" in wanted else frame.toArrow(), batch_id)

    writer = frame.writeStream.foreachBatch(each_batch)
    if name:
        writer = writer.queryName(name)
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif processing_time:
        writer = writer.trigger(processingTime=processing_time)
    temporary = None
    if checkpoint is None:
        temporary = checkpoint = tempfile.mkdtemp(prefix="rsp-spark-checkpoint-")
        # rsp spark removes it when the query stops (cleanup); a query attached through the API, which
        # its caller stops, leaves it to the end of the process
        atexit.register(shutil.rmtree, temporary, ignore_errors=True)
    if local_logs:
        manager = local_logs_manager(frame.sparkSession, checkpoint)
        if manager is not None:
            frame.sparkSession.conf.set("spark.sql.streaming.checkpointFileManagerClass", manager)
    query = writer.option("checkpointLocation", checkpoint).start()
    if temporary is not None:
        feeder.temporary = temporary
    return query


LOCAL_LOGS = (
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager",  # before Spark 4.1
)
"""Spark's checkpoint file manager through Hadoop's ``FileSystem`` (the newer package first). Spark's
default goes through ``FileContext``: with it, a micro-batch's offset, commit and source logs took
≈ 15, 22-58 and 15-36 ms, through ``FileSystem`` ≈ 4-11, 7-14 and 5-16 ms (Spark's event log, ten
micro-batches of 20 lines, the fifth on; docs/spark.md, *Session settings*). Both write a log aside
and rename it into place; on the local file system the rename replaces atomically, which a remote
file system's ``FileSystem`` rename need not do, so it is used for local checkpoints alone."""


def local_logs_manager(spark, location: str) -> str | None:
    """The class of :data:`LOCAL_LOGS` this Spark has, when ``location`` (a checkpoint) resolves to this
    machine's file system (a path without a scheme resolves against Hadoop's default file system);
    else None, and Spark's default stays."""
    jvm = spark.sparkContext._jvm
    try:
        path = jvm.org.apache.hadoop.fs.Path(location)
        system = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        if system.getUri().getScheme() != "file":
            return None
    except Exception:  # noqa: BLE001 - no file system for its scheme: Spark says so as the query starts
        return None
    for name in LOCAL_LOGS:
        try:
            jvm.java.lang.Class.forName(name)
        except Exception:  # noqa: BLE001 - not in this Spark
            continue
        return name
    return None


def collect_parsed(frame: DataFrame) -> pa.Table:
    """A frame of lines (``value``, :func:`rsp.spark.source.read_lines`) collected to the driver as an
    Arrow table with the lines parsed (:func:`rsp.spark.lines.parse`), each record batch parsed on a
    thread as soon as it arrives, while Spark still reads and sends the rest.

    ``toArrow()`` hands a micro-batch over only once all of it arrived: over 1M lines in one
    micro-batch the parse then came after the collect (≈ 0.9 s on two threads); parsed on arrival, the
    run took ≈ 0.6 s less (three rounds round robin). This speaks PySpark's own protocol (the JVM's
    ``collectAsArrowToPython``: the record batches as the JVM sends them, then their order in the
    frame); where this PySpark has no such call, the frame is collected with ``toArrow()`` and the
    feeder parses it.
    """
    try:
        from pyspark.errors.exceptions.captured import unwrap_spark_exception
        from pyspark.serializers import UTF8Deserializer, read_int
        from pyspark.util import _create_local_socket

        serve = frame._jdf.collectAsArrowToPython
    except (ImportError, AttributeError):  # another PySpark: the feeder parses the collected lines
        return frame.toArrow()
    port, secret, server = serve()
    parts = []
    with ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="rsp-parse") as pool:
        sockfile, sock = _create_local_socket((port, secret))
        try:
            reader = pa.ipc.open_stream(sockfile)
            for batch in reader:
                parts.append(pool.submit(lines.parse, pa.Table.from_batches([batch])))
            count = read_int(sockfile)
            failure = UTF8Deserializer().loads(sockfile) if count == -1 else None
            order = [read_int(sockfile) for _ in range(max(count, 0))]
        except Exception:
            with unwrap_spark_exception():
                server.getResult()  # what failed in the JVM, if that is what cut the stream short
            raise
        finally:
            sockfile.close()
            sock.close()
        with unwrap_spark_exception():
            server.getResult()  # raises what failed in the JVM
        if failure is not None:
            raise RuntimeError(f"rsp spark: collecting a micro-batch failed: {failure}")
        tables = [parts[index].result() for index in order]
    return pa.concat_tables(tables) if tables else lines.parse(reader.schema.empty_table())


def cleanup(feeder: Feeder) -> None:
    """Remove the temporary checkpoint of a stopped query."""
    temporary = getattr(feeder, "temporary", None)
    if temporary:
        shutil.rmtree(temporary, ignore_errors=True)


def attach(
    target,
    frame: DataFrame,
    *,
    stream_iri: str | None = None,
    time_column: str = "time",
    s: str = "s",
    p: str = "p",
    o: str = "o",
    late: str | None = None,
    reject: str | None = None,
    report: bool = True,
    available_now: bool = False,
    processing_time: str | None = None,
    checkpoint: str | None = None,
) -> StreamingQuery:
    """Feed a streaming DataFrame of triples into a continuous-query engine; returns the query.

    ``target`` is an :class:`rsp.runtime.Engine` or one of its registered queries (a
    :class:`rsp.runtime.QueryHandle`); results reach the query's subscribers as instants close.
    ``frame`` has the terms (N-Triples syntax) in columns ``s``, ``p``, ``o`` and the element time in
    ``time_column``: milliseconds (integer) or a timestamp. It may be :func:`rsp.spark.read_stream`'s
    output, in which case lines Spark could not parse are re-checked by rsp and malformed ones are
    reported on stderr (``report``) and written to ``reject`` (a directory). ``stream_iri`` names the
    stream when the queries read several. The engine decides which elements are late, as for
    ``Engine.push`` (see :class:`rsp.spark.QueryFeeder`); ``late`` (``"drop"`` or ``"fail"``), if
    given, sets the engine's late policy. Call ``engine.close()`` after stopping the query to emit
    the last instants.

    >>> # query = engine.register(text); q = attach(query, spark.readStream.…); q.stop(); engine.close()
    """
    engine = getattr(target, "engine", target)
    if late is not None:
        if late not in ("drop", "fail"):
            raise ValueError(f"late={late!r}: the late policy is 'drop' or 'fail'")
        engine.late_policy = late
    columns = [F.col(s).alias("s"), F.col(p).alias("p"), F.col(o).alias("o")]
    time = F.col(time_column)
    if isinstance(frame.schema[time_column].dataType, TimestampType):
        time = F.unix_millis(time)
    columns.append(time.cast("long").alias("time"))
    columns.extend(F.col(c) for c in COLUMNS[4:] if c in frame.columns and c != "time")
    rejects = Rejects(reject, print_error if report else None)
    feeder = QueryFeeder(engine, [stream_iri], [stream_iri or "<stream>"], rejects=rejects)
    query = start(
        feeder,
        frame.select(*columns),
        available_now=available_now,
        processing_time=processing_time,
        checkpoint=checkpoint,
    )
    query.rsp_feeder = feeder  # type: ignore[attr-defined]
    return query


def union(frames: Sequence[DataFrame]) -> DataFrame:
    """Several streams as one DataFrame, each row tagged with its stream's index."""
    tagged = [frame.withColumn("stream", F.lit(index).cast("int")) for index, frame in enumerate(frames)]
    result = tagged[0]
    for frame in tagged[1:]:
        result = result.unionByName(frame)
    return result


def drive(
    feeder: Feeder,
    frame,
    checkpoint: Checkpoint | None,
    stop: threading.Event,
    *,
    available_now: bool = False,
    trigger: str | None = None,
) -> None:
    """Run the streaming query over ``frame`` into ``feeder`` until its data is processed
    (``available_now``) or ``stop`` is set (none is started when it already is), then close the feeder:
    its last instants are emitted. A micro-batch's failure is raised as an rsp error (:func:`failure`)."""
    started = time.monotonic()
    if checkpoint is None and hasattr(feeder, "overlap"):
        feeder.overlap()  # Spark prepares the next micro-batch while the engine works on this one
    query = None
    try:
        if not stop.is_set():
            query = start(
                feeder,
                frame,
                available_now=available_now,
                processing_time=trigger,
                checkpoint=None if checkpoint is None else checkpoint.spark_location,
                name=None,
                local_logs=True,
            )
            try:
                while query.isActive and not stop.is_set():
                    query.awaitTermination(0.2)
            except StreamingQueryException as err:
                raise failure(err) from None
        feeder.stop()
        if query is not None:
            query.stop()
            exception = query.exception()
            if exception is not None and not (feeder.stopping and Stopped.MESSAGE in str(exception)):
                raise failure(exception)
        try:
            feeder.close()
        except Py4JError as err:  # the Spark job that closes the keys' last instants (--partition-by)
            raise failure(err) from None
    finally:
        if query is not None and query.isActive:
            query.stop()
        cleanup(feeder)
    feeder.elapsed = time.monotonic() - started


def failure(exception) -> Exception:
    """An error raised in a micro-batch (a late element under --late fail, …) as an rsp error; a closed
    output pipe (``rsp spark … | head``) stays a BrokenPipeError, which the command line ends quietly."""
    text = str(exception)
    if "BrokenPipeError" in text:
        return BrokenPipeError(text.splitlines()[0] if text else "")
    for line in text.splitlines():
        for name, kind in (("LateElementError: ", LateElementError), ("StreamError: ", StreamError),
                           ("RspError: ", StreamError)):  # fmt: skip
            if name in line:
                return kind(line.split(name, 1)[1].strip())
    causes = [line for line in text.splitlines() if re.match(r"[\w.]+(Error|Exception): ", line)]
    cause = causes[-1] if causes else (text.splitlines() or [""])[0]
    return RspError(f"the Spark streaming query failed: {cause}")
