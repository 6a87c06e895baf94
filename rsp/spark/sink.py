"""Results into a Spark file sink: one row per solution (or triple, atom), written per micro-batch.

Rows of one micro-batch go to ``DIR/batch=<id>/`` (JSON lines or Parquet), replacing what a retried
micro-batch may have left there, so ``spark.read.json(DIR)`` / ``spark.read.parquet(DIR)`` sees every
row once, with ``batch`` as a partition column. Columns by kind of result:

===========  =====================================================================================
SELECT       ``query`` string, ``time`` long (instant, ms), ``bindings`` map<string,string> (terms in
             N-Triples syntax; unbound variables absent)
CONSTRUCT    ``query``, ``time``, ``triple`` string (an N-Triples statement)
ASK          ``query``, ``time``, ``boolean``
LARS         ``query`` (the program's name), ``time`` (time point), ``atom`` string
===========  =====================================================================================

Instants without any solution write no row.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.types import (
    BooleanType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

FORMATS = ("json", "parquet")


def result_schema(kind: str) -> StructType:
    """The sink's schema for ``select``, ``construct``, ``ask`` or ``lars`` results (to read JSON back
    with a map, not an inferred struct: ``spark.read.schema(result_schema("select")).json(DIR)``)."""
    value = {
        "select": StructField("bindings", MapType(StringType(), StringType(), True), False),
        "construct": StructField("triple", StringType(), False),
        "ask": StructField("boolean", BooleanType(), False),
        "lars": StructField("atom", StringType(), False),
    }[kind]
    return StructType(
        [StructField("query", StringType(), False), StructField("time", LongType(), False), value]
    )


class ResultSink:
    """Collects result rows during a micro-batch and writes them when it ends (:meth:`write`)."""

    def __init__(self, spark: SparkSession, directory: str, fmt: str, kind: str) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"sink format {fmt!r}: expected one of {', '.join(FORMATS)}")
        self.spark = spark
        self.directory = directory.rstrip("/")
        self.format = fmt
        self.schema = result_schema(kind)
        self.rows: list[tuple] = []
        self.written = 0

    def add(self, result) -> None:
        """Subscriber for :class:`rsp.runtime.Result` objects."""
        if result.bindings is not None:
            self.rows.extend((result.query, result.time, b) for b in result.bindings)
        elif result.triples is not None:
            self.rows.extend((result.query, result.time, t) for t in result.triples)
        elif result.boolean is not None:
            self.rows.append((result.query, result.time, result.boolean))

    def add_atoms(self, name: str, time: int, atoms: list[str]) -> None:
        """The output atoms of a LARS program at one time point."""
        self.rows.extend((name, time, atom) for atom in atoms)

    def write(self, batch_id: int) -> None:
        """Write the rows collected since the last call as micro-batch ``batch_id``."""
        if not self.rows:
            return
        rows, self.rows = self.rows, []
        frame = self.spark.createDataFrame(rows, self.schema).coalesce(1)
        frame.write.mode("overwrite").format(self.format).save(f"{self.directory}/batch={batch_id}")
        self.written += len(rows)
