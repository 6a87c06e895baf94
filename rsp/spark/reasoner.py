"""rsp as a transformation in a Spark Structured Streaming job: :func:`reason` takes a streaming DataFrame
of triples with an event time and returns a streaming DataFrame of answers, one row per answer. The
user's job chooses the sink, the trigger and the checkpoint; the engines' state lives in Spark's state
store (:mod:`rsp.spark.processor`), so exactly once comes from Spark's checkpoint and the sink.

    from rsp.spark import reason, session

    spark = session()
    triples = spark.readStream.table("readings")            # columns s, p, o, time (ms or a timestamp)
    answers = reason(triples, open("hot-rooms.rq").read(), ontology=["building.ttl"], entailment="rdfs")
    answers.writeStream.format("parquet").option("path", "out").option("checkpointLocation", "ck").start()

The rows on their way to the stateful operator (:data:`TAGGED`) carry their bucket and kind; a
``mapInPandas`` step (:func:`bounds_function`) numbers them, reads the lines Spark's fast path did not
take with rsp's parser, and sends every bucket its input partition's bounds.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pandas as pd
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame
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
from rsp.spark.processor import BOUNDS, COUNT, DATA, END, RECHECK, REJECT, QueryJob, QueryProcessor

BUCKET = "_rsp_bucket"
TAGGED = StructType(
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
        StructField("detail", StringType()),
    ]
)
"""The rows the stateful operator takes: bucket, kind (rsp.spark.processor's ``DATA``, ``BOUNDS``,
``END``, ``REJECT``), time, order, stream number, terms, ``latest`` (bounds rows), ``detail`` (JSON of a
rejected line)."""
_TAGGED = TAGGED


def output_schema(form: str, variables: Sequence[str]) -> StructType:
    """The answers' columns: ``query`` (its name), ``time`` (the instant, ms), ``kind`` (``answer``; with
    ``instants=True`` also ``instant``, the instant closed, ``late``, a late element dropped, and
    ``reject``, a line rsp could not read), ``rank`` (the answer's place in its bucket's answer of the
    instant; a late or rejected row's order), ``detail`` (late and rejected rows: JSON saying what and
    why), then ``bindings`` (SELECT: a struct of the variables' N-Triples terms, null where unbound),
    ``s``, ``p``, ``o`` (CONSTRUCT) or ``boolean`` (ASK)."""
    fields = [
        StructField("query", StringType()),
        StructField("time", LongType()),
        StructField("kind", StringType()),
        StructField("rank", LongType()),
        StructField("detail", StringType()),
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
    in ``stream_column``. A frame of :func:`rsp.spark.read_stream` also has ``line`` (the text of a line
    Spark's fast path did not take: rsp's parser reads it, a malformed one is a ``reject`` row), ``file``
    and ``arrival`` (a socket line's arrival time, its time when it has none). ``ontology`` are files
    loaded in the driver (shipped with the job) under ``entailment``. Without ``partition_by`` one engine
    answers the whole stream; with it (``?k``) the query is refused, with the reason, unless its answers
    partition by that variable, and the triples are keyed by it and spread over ``buckets`` engines
    (default: ``spark.sql.shuffle.partitions``).

    Time is the stream's own: each micro-batch is taken as one engine over the whole stream takes it,
    in time order (``order_column`` orders equal times, default: the order Spark hands the rows over),
    and every instant up to its newest element closes, in every bucket: an instant's answers come in the
    micro-batch whose elements pass it. An element older than the last instant closed is late (dropped;
    ``late="fail"`` stops the query). A row whose ``s``, ``p``, ``o`` (and ``line``) are null ends the
    input: every instant up to the first one after the newest element closes (``rsp spark
    --available-now`` sends one last). ``cache=False`` rebuilds every engine from the state store at every
    micro-batch (the answers are the same). ``instants=True`` keeps the columns ``kind``, ``rank`` and
    ``detail`` and adds a row of kind ``instant`` for each instant closed, once, one of kind ``late`` for
    each late element and one of kind ``reject`` for each malformed line (a writer that needs every
    instant, empty ones too, such as ``rsp spark``, reads them).
    """
    from rsp.query.syntax.parser import parse_and_validate
    from rsp.runtime import Engine

    if late not in ("drop", "fail"):
        raise RspError(f"late={late!r}: the late policy is 'drop' or 'fail'")
    engine = Engine(entailment=entailment)
    for path in ontology:
        engine.load_ontology(path)
    parsed, warnings = parse_and_validate(query, file)
    compiled = engine.compile(parsed, warnings, file)
    streams = tuple(compiled.translation.streams)
    form = type(parsed.form).__name__.lower()
    variables = engine.register_compiled(compiled).variables
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
    spark = frame.sparkSession
    use_rocksdb(spark)
    if partition_by is None and buckets not in (None, 1):
        raise RspError(f"buckets={buckets}: a query without partition_by runs in one bucket")
    count = 1 if partition_by is None else buckets or int(spark.conf.get("spark.sql.shuffle.partitions"))
    plan = None
    if partition_by is not None:
        from rsp.query.translation.partition import partition_plan

        plan = partition_plan(parsed, partition_by, compiled.background_rules)
        plan.check_static(compiled.static_closure, "the ontology and FROM graphs")
    rows, labels = spread(
        triple_rows(frame, streams, plan, count, time_column, stream_column, order_column), count
    )
    schema = output_schema(form, variables)
    answers = rows.groupBy(BUCKET).transformWithStateInPandas(
        QueryProcessor(job, schema, labels), schema, "Append", "None"
    )
    if instants:
        return answers
    return answers.where(F.col("kind") == "answer").drop("kind", "rank", "detail")


def triple_rows(
    frame: DataFrame,
    streams: tuple[str, ...],
    plan,
    count: int,
    time_column: str = "time",
    stream_column: str | None = None,
    order_column: str | None = None,
) -> DataFrame:
    """``frame``'s triples as :data:`TAGGED` rows for ``count`` buckets: keyed by ``plan``
    (:class:`rsp.query.translation.partition.KeyPlan`; None: all in bucket 0), lines to recheck and end
    rows tagged, then numbered and bounded by :func:`bounds_function`."""
    s, p, o = F.col("s"), F.col("p"), F.col("o")
    columns = set(frame.columns)
    line = F.col("line") if "line" in columns else F.lit(None).cast("string")
    if plan is not None:
        from rsp.spark.keys import key_column

        key = key_column(plan, s, p, o)
        bucket = F.pmod(F.hash(key), F.lit(count)).cast("long")
    else:
        key, bucket = F.lit("").cast("string"), F.lit(0).cast("long")
    time = F.col(time_column)
    if isinstance(frame.schema[time_column].dataType, TimestampType):
        time = F.unix_millis(time)
    if "arrival" in columns:
        time = F.coalesce(time.cast("long"), F.col("arrival").cast("long"))
    stream = _stream_numbers(streams, F.col(stream_column) if stream_column else None)
    order = F.col(order_column).cast("long") if order_column else F.lit(None).cast("long")
    end = s.isNull() & p.isNull() & o.isNull() & line.isNull()
    recheck = line.isNotNull()
    where = F.struct(
        line.alias("line"),
        (F.col("file") if "file" in columns else F.lit(None).cast("string")).alias("file"),
        (F.col("arrival").cast("long") if "arrival" in columns else F.lit(None).cast("long")).alias(
            "arrival"
        ),
    )
    kind = F.when(end, F.lit(END)).when(recheck, F.lit(RECHECK)).otherwise(F.lit(DATA))
    rows = frame.select(
        F.when(end | recheck, F.lit(-1)).otherwise(bucket).cast("long").alias(BUCKET),
        kind.cast("int").alias("kind"),
        F.when(~recheck, time).cast("long").alias("time"),
        order.alias("order"),
        stream.alias("stream"),
        F.when(~recheck, s).alias("s"),
        F.when(~recheck, p).alias("p"),
        F.when(~recheck, o).alias("o"),
        F.lit(None).cast("long").alias("latest"),
        F.when(recheck, F.to_json(where)).alias("detail"),
    ).where(
        end
        | (recheck & (F.col("stream") >= 0))
        | (F.col("time").isNotNull() & (F.col("stream") >= 0) & key.isNotNull())
    )
    return rows.mapInPandas(bounds_function(count, _rechecker(plan, count)), TAGGED)


def spread(rows: DataFrame, buckets: int) -> tuple[DataFrame, list[int]]:
    """``rows`` with each bucket number replaced by its label (:func:`rsp.spark.hashing.bucket_labels`),
    so that Spark's grouping puts bucket ``i`` in partition ``i`` of the stateful operator (modulo
    ``spark.sql.shuffle.partitions``): every partition, and so every executor core, gets its share of
    the buckets. Returns the labels, for the processor to read the buckets back."""
    from rsp.spark.hashing import bucket_labels

    partitions = int(rows.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    labels = bucket_labels(buckets, partitions)
    table = F.array(*[F.lit(label).cast("long") for label in labels])
    return rows.withColumn(BUCKET, F.element_at(table, F.col(BUCKET).cast("int") + 1)), labels


def use_rocksdb(spark) -> None:
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


def _stream_numbers(streams: tuple[str, ...], column: Column | None) -> Column:
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


def _rechecker(plan, buckets: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The function that reads the rows to recheck (kind RECHECK: the line, its file and arrival time
    in ``detail``) with rsp's parser: a triple goes to its key's bucket (Spark's hash, as for the rows
    Spark keyed; dropped when no pattern can match it), a blank or comment line is dropped, a malformed
    one becomes a REJECT row for bucket 0 (``detail``: the line, the file and the reason)."""

    def recheck(batch: pd.DataFrame) -> pd.DataFrame:
        from rsp.spark.hashing import partition_of
        from rsp.spark.syntax import recheck_triple

        todo = batch["kind"] == RECHECK
        if not todo.any():
            return batch
        fixed = []
        for index, row in batch[todo].iterrows():
            where = json.loads(row["detail"])
            try:
                parsed = recheck_triple(where["line"] or "", where.get("arrival"))
            except ValueError as err:
                stream = row["stream"]
                detail = {
                    "line": where["line"],
                    "file": where.get("file"),
                    "stream": 0 if stream is None or pd.isna(stream) else int(stream),
                    "reason": str(err),
                }
                fixed.append(
                    (index, 0, REJECT, None, None, None, None, json.dumps(detail, ensure_ascii=False))
                )
                continue
            if parsed is None:
                continue
            time, (s, p, o) = parsed
            if plan is None:
                bucket = 0
            else:
                key = plan.key(s, p, o)
                if key is None:
                    continue
                bucket = partition_of(key, buckets)
            fixed.append((index, bucket, DATA, time, s, p, o, None))
        rest = batch[~todo]
        if not fixed:
            return rest
        update = batch.loc[[f[0] for f in fixed]].copy()
        for name, position in (
            (BUCKET, 1),
            ("kind", 2),
            ("time", 3),
            ("s", 4),
            ("p", 5),
            ("o", 6),
            ("detail", 7),
        ):
            update[name] = [f[position] for f in fixed]
        if rest.empty:  # pandas warns when concatenating an empty frame
            return update
        return pd.concat([rest, update]).sort_index()

    return recheck


def bounds_function(
    buckets: int, recheck: Callable[[pd.DataFrame], pd.DataFrame] | None = None
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The mapInPandas function that numbers an input partition's rows in their order where no order was
    given, reads the lines to recheck (``recheck``), and sends every bucket the partition's bounds
    (rsp.spark.processor): its earliest element (time, order) and its newest element's time; an end row
    goes to every bucket."""

    def add_bounds(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        context = TaskContext.get()
        base = (context.partitionId() if context is not None else 0) << 40
        seen = 0
        lead: tuple[int, int] | None = None
        latest: int | None = None
        ended: pd.DataFrame | None = None
        lines: dict[int, int] = {}
        triples: dict[int, int] = {}
        for batch in batches:
            if not len(batch):
                continue
            if "detail" not in batch.columns:
                batch["detail"] = None
            numbers = pd.Series(range(base + seen, base + seen + len(batch)), index=batch.index)
            batch["order"] = batch["order"].fillna(numbers).astype("int64")
            seen += len(batch)
            _count(lines, batch[batch["kind"].isin((DATA, RECHECK))])
            if recheck is not None:
                batch = recheck(batch)
            _count(triples, batch[batch["kind"] == DATA])
            ends = batch["kind"] == END
            if ends.any():
                ended = batch[ends].head(1)
                batch = batch[~ends]
            data = batch[batch["kind"] == DATA]
            if len(data):
                times = data["time"].astype("int64")
                low = int(times.min())
                order = int(data.loc[times == low, "order"].min())
                if lead is None or (low, order) < lead:
                    lead = (low, order)
                high = int(times.max())
                latest = high if latest is None or high > latest else latest
            if len(batch):
                yield batch
        everyone = pd.Series(range(buckets), dtype="int64")
        if lines:
            counted = _to_all(everyone.head(1), COUNT, 0, 0, None)
            counted["detail"] = json.dumps({"lines": lines, "triples": triples})
            yield counted
        if lead is not None:
            yield _to_all(everyone, BOUNDS, lead[0], lead[1], latest)
        if ended is not None:
            yield _to_all(everyone, END, int(ended["time"].fillna(0).iloc[0]), 0, None)

    return add_bounds


def _count(counts: dict[int, int], rows: pd.DataFrame) -> None:
    """Add ``rows`` to ``counts`` by stream number."""
    if len(rows):
        for stream, number in rows["stream"].fillna(0).astype("int64").value_counts().items():
            counts[int(stream)] = counts.get(int(stream), 0) + int(number)


def _to_all(buckets: pd.Series, kind: int, time: int, order: int, latest: int | None) -> pd.DataFrame:
    """One row of ``kind`` for every bucket."""
    return pd.DataFrame(
        {
            BUCKET: buckets,
            "kind": kind,
            "time": time,
            "order": order,
            "stream": 0,
            "s": None,
            "p": None,
            "o": None,
            "latest": latest,
            "detail": None,
        }
    )
