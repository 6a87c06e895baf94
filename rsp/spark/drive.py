"""Running a streaming query of rsp's answers to its end: what ``rsp spark`` (and a notebook that wants a
stream's last instants) does around :func:`rsp.spark.reason`.

The streams of a run are the user's sources and a *control* source, a folder of JSON files Spark reads
as any file source: a file holding ``{"time": 0}`` is an end row (its ``s``, ``p``, ``o`` null), which
closes the last instants in every bucket (rsp/spark/processor.py). :class:`Run` starts the query with a
``foreachBatch`` writer, waits for the input to be read (``available_now``) or for a stop request, then
drops an end file into the control folder and runs the query once more, until a micro-batch has read it,
so that the last instants come out through the same checkpoint and writer.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import LongType, StructField, StructType

from rsp.errors import LateElementError, RspError, StreamError

CONTROL = StructType([StructField("time", LongType())])
"""The control files' rows."""


STOPPED = "rsp: the run was asked to stop before this micro-batch"
"""What a micro-batch that starts after a stop raises (the streaming query ends there, the micro-batch not
committed: the end of the input, or a restart from the checkpoint, takes it again)."""


class Run:
    """One run of a streaming query over ``checkpoint`` (a folder of Spark's checkpoint and the control
    files: a temporary one, removed at the end, when None; on a cluster the folder must be one every
    executor reaches, so None is refused)."""

    def __init__(self, spark: SparkSession, checkpoint: str | None = None) -> None:
        master = spark.sparkContext.master
        if checkpoint is None and not master.startswith("local"):
            raise RspError(
                f"a run on {master} needs a checkpoint folder that the driver and every executor can reach "
                "(--checkpoint DIR on a shared file system): the executors read the run's end file and "
                "keep the engines' state there"
            )
        self.spark = spark
        self.temporary = checkpoint is None
        root = Path(tempfile.mkdtemp(prefix="rsp-spark-run-")) if checkpoint is None else Path(checkpoint)
        self.root = root
        self.control = root / "control"
        self.control.mkdir(parents=True, exist_ok=True)
        self.batches = 0
        self.elapsed = 0.0
        self._query: StreamingQuery | None = None

    @property
    def spark_location(self) -> str:
        """Where Spark keeps the query's offsets, commits and state."""
        return str(self.root / "spark")

    def control_frame(self) -> DataFrame:
        """The control source (a streaming DataFrame with a ``time`` column)."""
        return self.spark.readStream.schema(CONTROL).json(str(self.control))

    def end_input(self) -> None:
        """Drop an end file into the control folder (written aside, then renamed into place)."""
        name = f"end-{uuid.uuid4().hex}.json"
        partial = self.control.parent / f".{name}.tmp"
        partial.write_text(json.dumps({"time": 0}) + "\n", encoding="utf-8")
        partial.replace(self.control / name)

    def drive(
        self,
        answers: DataFrame,
        each_batch: Callable[[DataFrame, int], None],
        stop: threading.Event,
        *,
        available_now: bool = False,
        trigger: str | None = None,
        end: bool = True,
    ) -> None:
        """Run ``answers`` into ``each_batch`` until the input is read (``available_now``) or ``stop`` is
        set; then, with ``end``, end the input and run once more until the last instants are out. A
        micro-batch's failure is raised as an rsp error (:func:`failure`)."""
        started = time.monotonic()

        def counted(batch: DataFrame, batch_id: int) -> None:
            if stop.is_set() and not ending:  # a micro-batch that starts after the stop: not taken
                raise RuntimeError(STOPPED)
            if ending and _read_control(self._query, self.control.resolve().as_posix()):
                raise RuntimeError(STOPPED)  # the input has ended: nothing after it is taken
            each_batch(batch, batch_id)
            self.batches += 1

        ending = False
        try:
            if stop.is_set():
                return  # stopped while Spark started: no micro-batch, not even the end's
            self._run(answers, counted, stop, available_now=available_now, trigger=trigger)
            ending = True
            if end:
                self.end_input()
                self._run(answers, counted, None, available_now=False, trigger=None, until_end=True)
        finally:
            self.elapsed = time.monotonic() - started
            if self.temporary:
                shutil.rmtree(self.root, ignore_errors=True)

    def _run(
        self, answers, each_batch, stop, *, available_now: bool, trigger: str | None, until_end: bool = False
    ) -> None:
        """One streaming query: until its input is read (``available_now``), ``stop`` is set, or
        (``until_end``) a micro-batch has read the control folder's end file."""
        writer = answers.writeStream.foreachBatch(each_batch).option(
            "checkpointLocation", self.spark_location
        )
        if available_now:
            writer = writer.trigger(availableNow=True)
        elif trigger:
            writer = writer.trigger(processingTime=trigger)
        query: StreamingQuery = writer.start()
        self._query = query
        try:
            while query.isActive and (stop is None or not stop.is_set()):
                query.awaitTermination(0.2)
                if until_end and _read_control(query, self.control.resolve().as_posix()):
                    break
        except StreamingQueryException as err:
            if STOPPED not in str(err):
                raise failure(err) from None
        finally:
            if query.isActive:
                _stop_between_batches(query)
        exception = query.exception()
        if exception is not None and STOPPED not in str(exception):
            raise failure(exception)


def _stop_between_batches(query: StreamingQuery, patience: float = 600.0) -> None:
    """Stop ``query`` once the micro-batch in progress, if any, has finished (stopping it in the middle
    interrupts Spark's threads mid-task: the micro-batch is lost and Spark logs errors); the next one,
    if Spark starts it, ends the query (:data:`STOPPED`)."""
    deadline = time.monotonic() + patience
    try:
        while query.isActive and query.status.get("isTriggerActive") and time.monotonic() < deadline:
            query.awaitTermination(0.05)
    except StreamingQueryException as err:  # it ended: the caller reads query.exception()
        if STOPPED not in str(err):
            raise failure(err) from None
    query.stop()


def _read_control(query: StreamingQuery | None, folder: str) -> bool:
    """Whether a finished micro-batch of ``query`` read rows of the control ``folder``."""
    if query is None:
        return False
    for progress in query.recentProgress:
        for source in progress.sources:
            if source.description.endswith(folder + "]") and source.numInputRows:
                return True
    return False


def failure(exception) -> Exception:
    """An error raised in a micro-batch (a late element under ``late="fail"``, …) as an rsp error; a
    closed output pipe (``rsp spark … | head``) stays a BrokenPipeError, which the command line ends
    quietly."""
    text = str(exception)
    if "BrokenPipeError" in text:
        return BrokenPipeError(text.splitlines()[0] if text else "")
    for line in text.splitlines():
        for name, kind in (
            ("LateElementError: ", LateElementError),
            ("StreamError: ", StreamError),
            ("RspError: ", StreamError),
        ):
            if name in line:
                return kind(line.split(name, 1)[1].strip())
    causes = [line for line in text.splitlines() if re.match(r"[\w.]+(Error|Exception): ", line)]
    cause = causes[-1] if causes else (text.splitlines() or [""])[0]
    return RspError(f"the Spark streaming query failed: {cause}")


def query_input(run: Run, streams: Sequence[tuple[str, object]], *, max_files_per_trigger: int | None = None):
    """The streaming DataFrame ``rsp spark`` gives a query: each ``(stream IRI, source)`` read with
    :func:`rsp.spark.source.read_stream` and named in a ``stream`` column, and the run's control source
    (its end row)."""
    from pyspark.sql import functions as F

    from rsp.spark.source import read_stream

    frames = [
        read_stream(run.spark, source, max_files_per_trigger=max_files_per_trigger).withColumn(
            "stream", F.lit(iri)
        )
        for iri, source in streams
    ]
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame.unionByName(run.control_frame(), allowMissingColumns=True)


def program_input(run: Run, source, *, max_files_per_trigger: int | None = None):
    """The streaming DataFrame ``rsp spark`` gives a LARS or DatalogMTL program: the source's lines
    (``line``, ``file``) and the run's control source (its end row)."""
    from rsp.spark.source import read_stream

    lines = read_stream(run.spark, source, kind="atoms", max_files_per_trigger=max_files_per_trigger)
    return lines.select("line", "file").unionByName(run.control_frame(), allowMissingColumns=True)


def write_batch(batch, kind: str, path: str, fmt: str = "json") -> None:
    """A micro-batch's rows of ``kind`` (``answer``, ``atom``, ``fact``) without ``kind`` and ``detail``,
    written whole to ``path`` (a micro-batch run again writes it again: exactly once)."""
    from pyspark.sql import functions as F

    batch.where(F.col("kind") == kind).drop("kind", "detail").write.mode("overwrite").format(fmt).save(path)


def evaluate_only(batch) -> None:
    """Run a micro-batch's plan and drop its rows (its output was written before a restart): Spark's
    stateful operator still commits the micro-batch's state, as Spark checks it does."""
    batch.write.format("noop").mode("overwrite").save()
