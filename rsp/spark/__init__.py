"""Apache Spark as a way to feed rsp: the only package that imports pyspark.

Spark stays at the edge: a source (:func:`read_stream`, Structured Streaming over a directory, a
file or a socket, lines parsed and timestamped by Spark SQL) and a ``foreachBatch`` sink
(:func:`attach`) that hands each micro-batch to the engine in the driver as an Arrow table.

    from rsp.runtime import Engine
    from rsp.spark import attach, read_stream, session

    spark = session()                      # or your own SparkSession
    engine = Engine(entailment="rdfs")
    query = engine.register(open("hot-rooms.rq").read())
    query.subscribe(print)
    running = attach(query, read_stream(spark, "incoming/"), stream_iri="http://ex.org/temps")
    running.awaitTermination()             # … until stopped
    engine.close()                         # emit the last instants
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rsp.lazy import lazy_exports

# imported now, not when first asked for: importing the module ``rsp.spark.session`` would otherwise make
# the package's ``session`` that module (it imports no PySpark: the session starts it)
from rsp.spark.session import java_executable, session

_EXPORTS = {
    "ProgramFeeder": "rsp.spark.feed",
    "QueryFeeder": "rsp.spark.feed",
    "Rejects": "rsp.spark.feed",
    "recheck_triple": "rsp.spark.feed",
    "attach": "rsp.spark.pipeline",
    "start": "rsp.spark.pipeline",
    "ResultSink": "rsp.spark.sink",
    "Source": "rsp.spark.source",
    "read_stream": "rsp.spark.source",
}
"""Where each name of the package comes from, imported when first asked for (PEP 562): importing a
module of the package (the engine hosts' :mod:`rsp.spark.hosts`, the workers' :mod:`rsp.spark.daemon`)
does not import PySpark, pandas and the rest of the driver's side with it."""

if TYPE_CHECKING:
    from rsp.spark.feed import ProgramFeeder, QueryFeeder, Rejects, recheck_triple
    from rsp.spark.pipeline import attach, start
    from rsp.spark.sink import ResultSink
    from rsp.spark.source import Source, read_stream


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ProgramFeeder",
    "QueryFeeder",
    "Rejects",
    "ResultSink",
    "Source",
    "attach",
    "java_executable",
    "read_stream",
    "recheck_triple",
    "session",
    "start",
]
