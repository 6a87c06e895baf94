"""rsp on Apache Spark: continuous queries and programs as transformations of a Spark user's own
streaming DataFrames (:func:`reason`), one engine per key bucket inside Spark's stateful operator, its
state in Spark's state store; the answers a streaming DataFrame for any of Spark's sinks.

    from rsp.spark import read_stream, reason, session

    spark = session()                      # or your own SparkSession
    triples = read_stream(spark, "incoming/")   # or any streaming DataFrame with s, p, o, time
    answers = reason(triples, open("hot-rooms.rq").read(), ontology=["building.ttl"], entailment="rdfs")
    answers.writeStream.format("parquet").option("path", "out/").option("checkpointLocation", "ck/").start()

LARS and DatalogMTL programs likewise: :func:`reason_program` over a DataFrame of stream lines.

PySpark is imported only when a name that needs it is first asked for (PEP 562): importing a module of
the package does not import PySpark, pandas and the rest with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rsp.lazy import lazy_exports

# imported now, not when first asked for: importing the module ``rsp.spark.session`` would otherwise make
# the package's ``session`` that module (it imports no PySpark: the session starts it)
from rsp.spark.session import java_executable, session

_EXPORTS = {
    "reason": "rsp.spark.reasoner",
    "reason_program": "rsp.spark.programs",
    "ProgramWriter": "rsp.spark.answers",
    "output_schema": "rsp.spark.reasoner",
    "InstantWriter": "rsp.spark.answers",
    "Run": "rsp.spark.drive",
    "Source": "rsp.spark.source",
    "read_stream": "rsp.spark.source",
}
"""Where each name of the package comes from, imported when first asked for."""

if TYPE_CHECKING:
    from rsp.spark.answers import InstantWriter, ProgramWriter
    from rsp.spark.drive import Run
    from rsp.spark.programs import reason_program
    from rsp.spark.reasoner import output_schema, reason
    from rsp.spark.source import Source, read_stream


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, extra="spark")

__all__ = [
    "InstantWriter",
    "ProgramWriter",
    "Run",
    "Source",
    "java_executable",
    "output_schema",
    "read_stream",
    "reason",
    "reason_program",
    "session",
]
