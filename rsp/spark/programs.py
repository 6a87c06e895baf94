"""LARS and DatalogMTL programs as a transformation in a Spark Structured Streaming job:
:func:`reason_program` takes a streaming DataFrame of stream lines and returns a streaming DataFrame of
the program's output, one row per atom (LARS, per time point) or per fact (DatalogMTL, a maximal
interval), the engines' state in Spark's state store (:mod:`rsp.spark.processor_lars`,
:mod:`rsp.spark.processor_mtl`), as :func:`rsp.spark.reason` does for queries.

    from rsp.spark import read_stream, session
    from rsp.spark.programs import reason_program

    spark = session()
    lines = read_stream(spark, "positions/", kind="atoms")          # a column ``line``
    atoms = reason_program(lines, open("short-stops.lars").read(), file="short-stops.lars",
                           partition_by="V")
    atoms.writeStream.format("parquet").option("path", "out").option("checkpointLocation", "ck").start()
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rsp.errors import RspError
from rsp.spark.processor import END, RECHECK
from rsp.spark.reasoner import BUCKET, TAGGED, spread, use_rocksdb


def reason_program(
    frame: DataFrame,
    program: str,
    *,
    kind: str | None = None,
    file: str = "<program>",
    name: str | None = None,
    partition_by: str | None = None,
    buckets: int | None = None,
    line_column: str = "line",
    time_column: str = "time",
    order_column: str | None = None,
    late: str = "drop",
    cache: bool = True,
    instants: bool = False,
    horizon: str | int | None = None,
    outputs: Sequence[str] | None = None,
    points: Sequence | None = None,
    impossible: bool = True,
) -> DataFrame:
    """A LARS (``kind="lars"``) or DatalogMTL (``kind="mtl"``; default: by ``file``'s suffix, ``.mtl``)
    program over a streaming DataFrame of stream lines: its output as a streaming DataFrame.

    ``frame`` has the lines in ``line_column`` (``rsp lars``'s ``<time> <atom>``, bare times and timed
    N-Triples; ``rsp mtl``'s ``P(a)@[1,3)`` facts), as :func:`rsp.spark.read_stream` gives them with
    ``kind="atoms"`` (its ``file`` column names the file in a rejected line's row); rows that have the
    terms in ``s``, ``p``, ``o`` instead (``read_stream``'s N-Triples) are the atom ``p(s, o)`` at
    ``time_column``. A row with neither a line nor a triple ends the input. The program is parsed and
    checked here (errors before Spark starts). Without ``partition_by`` one engine takes the whole
    stream; with it (a variable, ``V``) the program is refused, with the reason, unless it partitions
    by that variable, and the atoms are keyed by it and spread over ``buckets`` engines (default:
    ``spark.sql.shuffle.partitions``).

    Time is the stream's own, exact as one engine fed micro-batch by micro-batch takes it, each
    micro-batch in time order (``order_column`` orders equal times, default: the order Spark hands the
    rows over): LARS — the newest time point is held back until a later one comes or the input ends,
    every time point before it is evaluated, an atom older than the newest time point of the earlier
    micro-batches is late; DatalogMTL — a fact starting before the newest left end of the earlier
    micro-batches is late, the model is final up to the newest left end after each micro-batch and up to
    the horizon (``horizon``, else the greatest time of the stream) at the end. Late elements are dropped
    (``late="fail"`` stops the query). ``cache=False`` rebuilds every engine from the state store at every
    micro-batch (the output is the same).

    The rows: :data:`rsp.spark.processor_lars.LARS_OUTPUT` or :data:`rsp.spark.processor_mtl.MTL_OUTPUT`
    (``program`` is ``name``, default ``file``'s name). Without ``instants`` only the atoms (facts),
    without the columns ``kind``, ``rank`` and ``detail``; ``instants=True`` keeps them and adds a row of
    kind ``instant`` for each time point evaluated (LARS; DatalogMTL: the newest left end after a
    micro-batch that moved it, and ``horizon`` at the end), once, one of kind ``late`` for each late
    element and one of kind ``reject`` for each malformed line (or, partitioned, each atom of a predicate
    with facts or rules in the program). ``outputs`` (DatalogMTL) names the predicates written (default:
    those the rules derive); ``points`` (DatalogMTL, one bucket) reports the atoms holding at these time
    points instead: a row of kind ``point`` (its ``time`` the point) before them. ``impossible=False``
    (LARS) is ``rsp lars --no-impossible``.
    """
    if kind is None:
        kind = "mtl" if file.endswith(".mtl") else "lars"
    if kind not in ("lars", "mtl"):
        raise RspError(f"kind={kind!r}: a program is 'lars' or 'mtl'")
    if late not in ("drop", "fail"):
        raise RspError(f"late={late!r}: the late policy is 'drop' or 'fail'")
    if kind == "lars" and (horizon is not None or outputs is not None or points is not None):
        raise RspError("horizon, outputs and points are DatalogMTL options (kind='mtl')")
    name = name or (Path(file).name if file != "<program>" else "program")
    ident = f"{name}-{uuid.uuid4().hex}"
    if kind == "lars":
        from rsp.spark.processor_lars import LARS_OUTPUT, LarsProcessor, atom_tagger, lars_job

        job = lars_job(
            ident, name, program, file, partition_by, late=late, cache=cache, impossible=impossible
        )
        schema, processor, tagger = LARS_OUTPUT, LarsProcessor, atom_tagger
        answer = "atom"
    else:
        from rsp.spark.processor_mtl import MTL_OUTPUT, MtlProcessor, fact_tagger, mtl_job

        job = mtl_job(ident, name, program, file, partition_by, late=late, cache=cache, horizon=horizon,
                      outputs=outputs, points=points)  # fmt: skip
        schema, processor, tagger = MTL_OUTPUT, MtlProcessor, fact_tagger
        answer = "fact"
    spark = frame.sparkSession
    use_rocksdb(spark)
    count = 1 if partition_by is None else buckets or int(spark.conf.get("spark.sql.shuffle.partitions"))
    rows = program_rows(frame, line_column, time_column, order_column)
    tagged, labels = spread(rows.mapInPandas(tagger(job, count), TAGGED), count)
    out = tagged.groupBy(BUCKET).transformWithStateInPandas(
        processor(job, schema, labels), schema, "Append", "None"
    )
    if instants:
        return out
    return out.where(F.col("kind") == answer).drop("kind", "rank", "detail")


def program_rows(
    frame: DataFrame, line_column: str = "line", time_column: str = "time", order_column: str | None = None
) -> DataFrame:
    """``frame``'s lines (or triples) as rows for the reading step (:data:`rsp.spark.reasoner.TAGGED`,
    kind RECHECK: the line and its file as JSON in ``detail``; an end row, kind END)."""
    columns = set(frame.columns)

    def column(name: str, cast: str = "string"):
        return F.col(name).cast(cast) if name in columns else F.lit(None).cast(cast)

    line = column(line_column)
    s, p, o = column("s"), column("p"), column("o")
    end = line.isNull() & (s.isNull() | p.isNull() | o.isNull())
    where = F.struct(line.alias("line"), column("file").alias("file"))
    order = F.col(order_column).cast("long") if order_column else F.lit(None).cast("long")
    return frame.select(
        F.lit(-1).cast("long").alias(BUCKET),
        F.when(end, F.lit(END)).otherwise(F.lit(RECHECK)).cast("int").alias("kind"),
        column(time_column, "long").alias("time"),
        order.alias("order"),
        F.lit(0).cast("long").alias("stream"),
        s.alias("s"),
        p.alias("p"),
        o.alias("o"),
        F.lit(None).cast("long").alias("latest"),
        F.when(line.isNotNull(), F.to_json(where)).alias("detail"),
    )
