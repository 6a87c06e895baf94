"""``rsp spark``: its options; the run itself (rsp/cli/spark_run.py) imports PySpark, only when used."""

from __future__ import annotations

import argparse
from typing import TextIO

from rsp.cli.common import positive_int
from rsp.extras import missing

SPARK_EXAMPLE = """examples:
  rsp spark examples/building/hot-rooms.rq --stream incoming/ --ontology ontologies/building.ttl \\
      --entailment rdfs --format text                  # until Ctrl-C; files dropped into incoming/
  rsp spark q.rq --stream http://ex.org/s=stream.nt --available-now   # what is there, then exit
  rsp spark program.lars --stream socket://127.0.0.1:9999 --sink out/ --sink-format parquet

SOURCE: a directory that receives N-Triples files, a file, or socket://HOST:PORT (see docs/spark.md)"""


def add_parser(sub) -> None:
    """Register ``rsp spark`` on the ``rsp`` command's subparsers."""
    spark = sub.add_parser(
        "spark",
        help="run a query, LARS or DatalogMTL program over streams read by Spark Structured Streaming",
        description="Run a continuous query (.rq), a LARS program (.lars) or a DatalogMTL program (.mtl) "
        "over Spark Structured Streaming sources, through rsp.spark.reason / reason_program (an engine per "
        "key bucket in Spark's stateful operator); the output is that of rsp run / rsp lars / rsp mtl.",
        epilog=SPARK_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    spark.add_argument("program", metavar="QUERY.rq|PROGRAM.lars|PROGRAM.mtl", help="the query or program")
    spark.add_argument(
        "--stream",
        action="append",
        required=True,
        metavar="[IRI=]SOURCE",
        help="a directory, a file or socket://HOST:PORT; IRI= names the stream when the query reads several",
    )
    spark.add_argument(
        "--ontology",
        action="append",
        default=[],
        metavar="FILE",
        help="a Turtle, RDF/XML, N-Triples or JSON-LD ontology (static background knowledge); repeatable",
    )
    spark.add_argument(
        "--entailment",
        choices=("none", "rdfs", "owlrl"),
        default="none",
        help="queries: the entailment regime over each window (default: none)",
    )
    spark.add_argument(
        "--format",
        choices=("jsonl", "sparql-json", "csv", "tsv", "ntriples", "text", "count", "intervals"),
        default="jsonl",
        help="as for rsp run (queries), rsp lars (programs: jsonl, count, text) or the mtl command "
        "(DatalogMTL: intervals, jsonl, count)",
    )
    spark.add_argument("--output", "-o", help="write results to this file instead of stdout")
    spark.add_argument("--reject", metavar="DIR", help="write malformed lines here as JSON lines")
    spark.add_argument(
        "--late",
        choices=("drop", "fail"),
        default="drop",
        help="elements older than the last closed instant: count and drop them, or stop",
    )
    spark.add_argument(
        "--available-now", action="store_true", help="process what the sources hold now, then exit"
    )
    spark.add_argument("--trigger", metavar="INTERVAL", help="micro-batch interval, e.g. '2 seconds'")
    spark.add_argument(
        "--max-files-per-trigger", type=positive_int, metavar="N", help="files per micro-batch (at least 1)"
    )
    spark.add_argument("--sink", metavar="DIR", help="also write results to a Spark file sink here")
    spark.add_argument("--sink-format", choices=("json", "parquet"), help="the sink's format (default json)")
    spark.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="exactly once across restarts: Spark's checkpoint (offsets, commits, the engines' state "
        "store) and the output's progress, per micro-batch; run again with the same DIR to resume (on a "
        "cluster: a folder every executor reaches, required)",
    )
    spark.add_argument(
        "--partition-by",
        metavar="?VAR",
        help="key the elements by ?VAR and spread them over spark.sql.shuffle.partitions key buckets, an "
        "engine each (refused, with the reason, when the query or program does not partition by it)",
    )
    spark.add_argument(
        "--mtl",
        action="store_true",
        help="the program is DatalogMTL, run as the mtl command does (implied by .mtl)",
    )
    spark.add_argument("--horizon", help="DatalogMTL: compute the model up to this time")
    spark.add_argument("--points", metavar="T,…|START:END[:STEP]", help="DatalogMTL: report these points")
    spark.add_argument("--output-predicates", metavar="P,Q", help="DatalogMTL: the predicates to report")
    spark.add_argument("--master", help="Spark master of a new session (default local[2])")
    spark.add_argument("--no-impossible", action="store_true", help=argparse.SUPPRESS)
    spark.add_argument("--quiet", "-q", action="store_true", help="no warnings or summary on stderr")
    spark.set_defaults(handler=command)


def command(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from rsp.cli.spark_run import run_command
    except ImportError as err:
        raise missing(err, "spark", "rsp spark") from None
    return run_command(args, out)
