"""``rsp run``: continuous queries over N-Triples streams replayed from files (or read live:
rsp/live.py), each instant's results written as they close."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from rsp.cli.common import (
    Progress,
    add_live_options,
    add_publish_option,
    idle_close_unused,
    live,
    open_queries,
    tagged,
)
from rsp.errors import RspError, StreamError

RUN_EXAMPLE = """example:
  rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \\
      --ontology ontologies/building.ttl --entailment rdfs --format text

why an answer came out (rules with their origins, stream triples with their times):
  rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \\
      --ontology ontologies/building.ttl --entailment rdfs --format text --explain

stream files are N-Triples whose lines end in their time in ms:  <s> <p> <o> . # 1200
several streams:  --stream http://ex.org/temps=temps.nt --stream http://ex.org/doors=doors.nt"""


def add_parser(sub) -> None:
    """Register ``rsp run`` on the ``rsp`` command's subparsers."""
    run = sub.add_parser(
        "run",
        help="run a continuous query over streams replayed from files",
        description="Register a continuous query, replay N-Triples streams through it and print its results "
        "at every evaluation instant.",
        epilog=RUN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "query",
        nargs="+",
        help="the query files (.rq); a file may hold several REGISTER statements, each query has its own "
        "results (the query field or the text header names it)",
    )
    run.add_argument(
        "--stream",
        action="append",
        required=True,
        metavar="[IRI=]FILE",
        help="a stream file ('-': standard input; pipes, FIFOs and mqtt://HOST:PORT/TOPIC are read live); "
        "IRI= names the stream when the query reads several",
    )
    run.add_argument(
        "--ontology",
        action="append",
        default=[],
        metavar="FILE",
        help="an ontology or static graph (Turtle, RDF/XML, N-Triples, JSON-LD); repeatable",
    )
    run.add_argument(
        "--entailment",
        choices=("none", "rdfs", "owlrl"),
        default="none",
        help="the entailment regime over each window (default: none)",
    )
    run.add_argument(
        "--format",
        choices=("jsonl", "sparql-json", "csv", "tsv", "ntriples", "text"),
        default="jsonl",
        help="output format (default: jsonl, one record per instant)",
    )
    run.add_argument(
        "--graph",
        action="append",
        default=[],
        metavar="IRI=FILE",
        help="the local file of a graph the query names with FROM <IRI> or FROM NAMED <IRI> (rsp never "
        "fetches IRIs); repeatable",
    )
    run.add_argument("--output", "-o", help="write results to this file instead of stdout")
    run.add_argument("--reject", metavar="FILE", help="keep the malformed lines of the stream here")
    run.add_argument(
        "--late",
        choices=("drop", "fail"),
        default="drop",
        help="elements older than the last closed instant: count and drop them, or stop",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no warnings, progress or summary on stderr")
    run.add_argument(
        "--explain",
        action="store_true",
        help="with each instant's answers, why they came out: the rules (query line or W3C rule id) and "
        "the stream triples (with their times in ms) they rest on (formats jsonl, sparql-json, text)",
    )
    add_publish_option(run)
    add_live_options(run)
    run.set_defaults(handler=command)


def command(args: argparse.Namespace, out: TextIO) -> int:
    if args.explain and args.format not in ("jsonl", "sparql-json", "text"):
        raise RspError(f"--explain needs --format jsonl, sparql-json or text, not {args.format}")
    if args.publish:
        from rsp.mqtt import parse_url

        parse_url(args.publish, "--publish")
    engine, handles, writers, pairs = open_queries(args, args.query, out)
    if not args.publish:
        return run(args, out, engine, handles, writers, pairs)
    from rsp.mqtt import publish_results

    publisher, published = publish_results(args.publish, handles)
    try:
        return run(args, out, engine, handles, writers + published, pairs)
    finally:
        publisher.close()


def run(args: argparse.Namespace, out: TextIO, engine, handles, writers, pairs) -> int:
    """``rsp run`` once its queries are registered (:func:`rsp.cli.common.open_queries`)."""
    import heapq

    from rsp.io.checks import RunChecks
    from rsp.io.late import LateLines
    from rsp.io.ntriples import ReadCounters, read_triple_file
    from rsp.io.text import ERRORS
    from rsp.live import no_stream_file

    query = handles[0]
    if args.follow or any(live(path) for _iri, path in pairs):  # stdin, pipes, FIFOs: rsp/live.py
        from rsp.live import run_query_live

        return run_query_live(args, engine, handles, writers, pairs, out)
    idle_close_unused(args)
    for _iri, path in pairs:
        if not os.path.isfile(path):
            raise no_stream_file(path)

    def report(error: StreamError) -> None:
        print(error, file=sys.stderr)

    counters = [ReadCounters() for _pair in pairs]
    # blank nodes are scoped to their file: a stream given by one file is that file's scope under the
    # stream's IRI (as in the API and rsp spark); a stream given by several files has one scope per file
    files_per_stream: dict[str, int] = {}
    for iri, _path in pairs:
        files_per_stream[iri] = files_per_stream.get(iri, 0) + 1
    sources = [iri if files_per_stream[iri] == 1 else f"{iri} {path}" for iri, path in pairs]
    late = LateLines(engine, report)  # late lines reported with their file and line
    # one reject file for every stream (each reader would truncate a path of its own)
    rejects = open(args.reject, "w", encoding="utf-8", errors=ERRORS) if args.reject else None  # noqa: SIM115
    try:
        readers = []
        for order, (_iri, path) in enumerate(pairs):
            # the reader judges no lateness (late_policy=None): the query's last closed instant does
            batches = read_triple_file(
                path,
                on_error=report,
                counters=counters[order],
                late_policy=None,
                reject=rejects,
                numbered=True,
            )
            readers.append(tagged(batches, order))
        progress = Progress(args.quiet, "instant", "triples", " ms")
        query.subscribe(lambda result: progress.update(result.time, elements))
        elements = 0
        checks = RunChecks(args.entailment, len(args.ontology), handles)
        # each file is read in its own order; the files are merged by the times of the batches read next
        for time_, order, triples, lines in heapq.merge(*readers):
            elements += len(triples)
            checks.see(triples)
            iri, path = pairs[order]
            late.push(triples, time_, iri, sources[order], counters[order], path, lines)
        engine.close()
        progress.close(query.closed_until, elements)
        for writer in writers:
            writer.close()
    finally:
        if rejects is not None:
            rejects.close()
    if not args.quiet:
        for (_iri, path), counter in zip(pairs, counters, strict=True):
            if counter.rejected or counter.late:
                advice = ""
                if counter.rejected and not args.reject:
                    advice = " (the rejected lines were skipped: --reject FILE keeps them to fix and replay)"
                print(counter.summary(path) + advice, file=sys.stderr)
    warnings = checks.finish([(path, counter) for (_iri, path), counter in zip(pairs, counters, strict=True)])
    if not args.quiet:
        for warning in warnings:
            print(warning, file=sys.stderr)
    return 0
