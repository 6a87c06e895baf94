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

from rsp.spark.feed import ProgramFeeder, QueryFeeder, Rejects, recheck_triple
from rsp.spark.pipeline import attach, start
from rsp.spark.session import java_executable, session
from rsp.spark.sink import ResultSink
from rsp.spark.source import Source, read_stream

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
