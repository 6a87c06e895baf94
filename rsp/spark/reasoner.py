"""rsp as a transformation in a Spark Structured Streaming job: :func:`reason` takes a streaming DataFrame
of triples with an event time and returns a streaming DataFrame of answers, one row per answer. The
user's job chooses the sink, the trigger and the checkpoint; the engines' state lives in Spark's state
store (:mod:`rsp.spark.processor`), so exactly once comes from Spark's checkpoint and the sink.

    from rsp.spark import reason, session

    spark = session()
    triples = spark.readStream.table("readings")            # columns s, p, o, time (ms or a timestamp)
    answers = reason(triples, open("hot-rooms.rq").read(), ontology=["building.ttl"], entailment="rdfs")
    answers.writeStream.format("parquet").option("path", "out").option("checkpointLocation", "ck").start()
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd
from pyspark import TaskContext
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from rsp.errors import RspError
from rsp.spark.processor import BOUNDS, DATA, END, QueryJob, QueryProcessor

BUCKET = "_rsp_bucket"
_TAGGED = StructType(
    [
        StructField(BUCKET, LongType()),
        StructField("kind", IntegerType()),
        StructField("time", LongType()),
        StructField("order", LongType()),
        StructField("stream", LongType()),
        StructField("s", StringType()),
        StructField("p", StringType()),
        StructField("o", StringType()),
        StructField("latest", LongType()),
    ]
)


def output_schema(form: str, variables: Sequence[str]) -> StructType:
    """The answers' columns: ``query`` (its name), ``time`` (the instant, ms), ``kind`` (``answer``; with
    ``instants=True`` also ``instant``, the instant closed, and ``late``, a late element dropped: ``time``
    its time, ``rank`` its order), ``rank`` (the answer's place in its bucket's answer of the instant),
    then ``bindings`` (SELECT: a struct of the variables' N-Triples terms, null where unbound), ``s``,
    ``p``, ``o`` (CONSTRUCT) or ``boolean`` (ASK)."""
    fields = [
        StructField("query", StringType()),
        StructField("time", LongType()),
        StructField("kind", StringType()),
        StructField("rank", LongType()),
    ]
    if form == "select":
        fields.append(StructField("bindings", StructType([StructField(v, StringType()) for v in variables])))
    elif form == "construct":
        fields += [StructField(name, StringType()) for name in ("s", "p", "o")]
    else:
        fields.append(StructField("boolean", BooleanType()))
    return StructType(fields)


def reason(
    frame: DataFrame,
    query: str,
    *,
    file: str = "<query>",
    ontology: Sequence[str | Path] = (),
    entailment: str = "none",
    partition_by: str | None = None,
    buckets: int | None = None,
    time_column: str = "time",
    stream_column: str | None = None,
    order_column: str | None = None,
    late: str = "drop",
    cache: bool = True,
    instants: bool = False,
) -> DataFrame:
    """A continuous query over a streaming DataFrame of triples: its answers as a streaming DataFrame.

    ``frame`` has the terms (N-Triples syntax) in columns ``s``, ``p``, ``o`` and the event time in
    ``time_column`` (integer ms or a timestamp); with a query that reads several streams, the stream's IRI
    in ``stream_column``. ``ontology`` are files loaded in the driver (shipped with the job) under
    ``entailment``. Without ``partition_by`` one engine answers the whole stream; with it (``?k``) the
    query is refused, with the reason, unless its answers partition by that variable, and the triples
    are keyed by it and spread over ``buckets`` engines (default: ``spark.sql.shuffle.partitions``).

    Time is the stream's own: each micro-batch is taken as one engine over the whole stream takes it,
    in time order (``order_column`` orders equal times, default: the order Spark hands the rows over),
    and every instant up to its newest element closes, in every bucket: an instant's answers come in the
    micro-batch whose elements pass it. An element older than the last instant closed is late (dropped;
    ``late="fail"`` stops the query). A row whose ``s``, ``p`` and ``o`` are null ends the input: every
    instant up to the first one after the newest element closes (``rsp spark --available-now`` sends one
    last). ``cache=False`` rebuilds every engine from the state store at every micro-batch (the answers
    are the same). ``instants=True`` adds a row of kind ``instant`` for each instant closed, once, and one
    of kind ``late`` for each late element (a writer that needs every instant, empty ones too, such as
    ``rsp spark``, reads them).
    """
    from rsp.runtime import Engine

    if late not in ("drop", "fail"):
        raise RspError(f"late={late!r}: the late policy is 'drop' or 'fail'")
    engine = Engine(entailment=entailment)
    for path in ontology:
        engine.load_ontology(path)
    from rsp.query.syntax.parser import parse_and_validate

    parsed, warnings = parse_and_validate(query, file)
    compiled = engine.compile(parsed, warnings, file)
    streams = tuple(compiled.translation.streams)
    form = type(parsed.form).__name__.lower()
    handle_variables = engine.register_compiled(compiled).variables
    job = QueryJob(
        ident=f"{parsed.name}-{uuid.uuid4().hex}",
        name=parsed.name,
        text=query,
        file=file,
        streams=streams,
        step=compiled.translation.step,
        entailment=entailment,
        static=tuple(engine.static),
        late=late,
        cache=cache,
    )
    schema = output_schema(form, handle_variables)
    spark = frame.sparkSession
    _use_rocksdb(spark)
    count = buckets or int(spark.conf.get("spark.sql.shuffle.partitions"))
    s, p, o = F.col("s"), F.col("p"), F.col("o")
    if partition_by is not None:
        from rsp.query.translation.partition import partition_plan
        from rsp.spark.resident import key_column

        plan = partition_plan(parsed, partition_by, compiled.background_rules)
        plan.check_static(compiled.static_closure, "the ontology and FROM graphs")
        key = key_column(plan, s, p, o)
        bucket = F.pmod(F.hash(key), F.lit(count)).cast("long")
        frame = frame.where(key.isNotNull() | (s.isNull() & p.isNull() & o.isNull()))
    else:
        bucket = F.lit(0).cast("long")
    time = F.col(time_column)
    if isinstance(frame.schema[time_column].dataType, TimestampType):
        time = F.unix_millis(time)
    stream = _stream_numbers(streams, F.col(stream_column) if stream_column else None)
    order = F.col(order_column).cast("long") if order_column else F.lit(None).cast("long")
    end = s.isNull() & p.isNull() & o.isNull()
    rows = frame.select(
        F.when(end, F.lit(-1)).otherwise(bucket).cast("long").alias(BUCKET),
        F.when(end, F.lit(END)).otherwise(F.lit(DATA)).cast("int").alias("kind"),
        time.cast("long").alias("time"),
        order.alias("order"),
        stream.alias("stream"),
        s,
        p,
        o,
        F.lit(None).cast("long").alias("latest"),
    ).where(F.col("time").isNotNull() & ((F.col("stream") >= 0) | end))
    tagged = rows.mapInPandas(_bounds_function(count), _TAGGED)
    answers = tagged.groupBy(BUCKET).transformWithStateInPandas(
        QueryProcessor(job, schema), schema, "Append", "None"
    )
    if instants:
        return answers
    return answers.where(F.col("kind") == "answer").drop("kind", "rank")


def _use_rocksdb(spark) -> None:
    """transformWithState keeps its state in RocksDB only: a session that names no provider (Spark's
    default is the HDFS-backed one) is given it; one that names another is refused."""
    from rsp.spark.session import ROCKSDB

    key = "spark.sql.streaming.stateStore.providerClass"
    provider = spark.conf.get(key, None)
    if provider in (None, "", "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"):
        spark.conf.set(key, ROCKSDB)
    elif provider != ROCKSDB:
        raise RspError(
            f"{key} is {provider}: rsp.spark.reason keeps its state with transformWithState, "
            f"which needs {ROCKSDB}"
        )


def _stream_numbers(streams: tuple[str, ...], column) -> object:
    """A row's stream as its number in ``streams`` (-1: a stream the query does not read)."""
    if len(streams) == 1 and column is None:
        return F.lit(0).cast("long")
    if column is None:
        raise RspError(
            f"the query reads {len(streams)} streams: give stream_column, the column of each row's stream IRI"
        )
    iri = F.when(column.startswith("<"), column).otherwise(F.concat(F.lit("<"), column, F.lit(">")))
    number = F.lit(-1).cast("long")
    for index, name in reversed(list(enumerate(streams))):
        number = F.when(iri == F.lit(name), F.lit(index).cast("long")).otherwise(number)
    return number


def _bounds_function(buckets: int):
    """The mapInPandas function that numbers an input partition's rows in their order where no order was
    given, and sends every bucket the partition's bounds (rsp.spark.processor): its earliest element
    (time, order) and its newest element's time; an end row goes to every bucket."""

    def add_bounds(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        context = TaskContext.get()
        base = (context.partitionId() if context is not None else 0) << 40
        seen = 0
        lead: tuple[int, int] | None = None
        latest: int | None = None
        ended: pd.DataFrame | None = None
        for batch in batches:
            if not len(batch):
                continue
            numbers = pd.Series(
                range(base + seen, base + seen + len(batch)), index=batch.index, dtype="int64"
            )
            batch["order"] = batch["order"].fillna(numbers).astype("int64")
            seen += len(batch)
            ends = batch["kind"] == END
            if ends.any():
                ended = batch[ends].head(1)
                batch = batch[~ends]
                if not len(batch):
                    continue
            times = batch["time"].astype("int64")
            low = int(times.min())
            order = int(batch.loc[times == low, "order"].min())
            if lead is None or (low, order) < lead:
                lead = (low, order)
            high = int(times.max())
            latest = high if latest is None or high > latest else latest
            yield batch
        everyone = pd.Series(range(buckets), dtype="int64")
        if lead is not None:
            yield pd.DataFrame(
                {
                    BUCKET: everyone,
                    "kind": BOUNDS,
                    "time": lead[0],
                    "order": lead[1],
                    "stream": 0,
                    "s": None,
                    "p": None,
                    "o": None,
                    "latest": latest,
                }
            )
        if ended is not None:
            yield pd.DataFrame(
                {
                    BUCKET: everyone,
                    "kind": END,
                    "time": int(ended["time"].iloc[0]),
                    "order": 0,
                    "stream": 0,
                    "s": None,
                    "p": None,
                    "o": None,
                    "latest": None,
                }
            )

    return add_bounds
