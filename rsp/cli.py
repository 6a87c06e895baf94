"""The ``rsp`` command line: subcommands, output formats, and error reporting without tracebacks
(``file:line:column: message`` on stderr, exit code 2)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from rsp import __version__
from rsp.errors import Position, RspError, StreamError

LARS_EXAMPLE = """example:
  rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream --format text

program syntax (see docs/lars.md):
  q(A, B) :- [10] <> p(A, B).       % some time in the last 10 time points
  alarm :- [5] [] isSteam.           % at every time point of the last 5
  @T steam(V) :- [10] @T temp(V), V >= 100.
stream lines: '<time> <atom>' (36 a(x1,y)), a bare time, or '<s> <p> <o> . # 36'"""


class _Progress:
    """A progress line on stderr for long runs, only when stderr is a terminal and not --quiet."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.started = time.monotonic()
        self.last = self.started

    def update(self, time_point: int, atoms: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.5:
            return
        self.last = now
        rate = atoms / max(now - self.started, 1e-9)
        sys.stderr.write(f"\rtime point {time_point}, {atoms:,} atoms, {rate:,.0f} atoms/s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.last != self.started:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _cmd_lars(args: argparse.Namespace, out: TextIO) -> int:
    from rsp.engine import Engine
    from rsp.io.atoms import iter_batches
    from rsp.lars import load
    from rsp.lars.model import format_atom

    program = load(args.program)
    if not args.quiet:
        for warning in program.warnings:
            print(warning, file=sys.stderr)

    rejected = 0

    def report(error: StreamError) -> None:
        nonlocal rejected
        rejected += 1
        print(error, file=sys.stderr)

    engine = Engine(program, impossible=not args.no_impossible)

    def late(time_: int, pred: str, atom_args: tuple) -> None:
        engine.late += 1
        print(
            f"{args.stream}: late element {format_atom(pred, atom_args)} at {time_} dropped", file=sys.stderr
        )

    try:
        handle = open(args.stream, encoding="utf-8")  # noqa: SIM115 - read lazily, closed below
    except OSError as err:
        raise StreamError(f"cannot read stream: {err.strerror}", Position(args.stream)) from None
    progress = _Progress(not args.quiet)
    write = out.write
    fmt = args.format
    with handle:
        batches = iter_batches(
            handle, args.stream, on_error=report, on_late=late, grouped=not engine.needs_arrival_order
        )
        for t in engine.run_batches(batches):
            if fmt == "count":
                write(f'{{"time": {t}, "count": {engine.count()}}}\n')
            else:
                atoms = sorted(format_atom(p, a) for p, a in engine.output())
                if fmt == "jsonl":
                    write(json.dumps({"time": t, "atoms": atoms}, ensure_ascii=False) + "\n")
                else:
                    write(f"{t:>6} | {'  '.join(atoms) if atoms else '-'}\n")
            progress.update(t, engine.stream_count)
    progress.close()
    if (rejected or engine.late) and not args.quiet:
        print(
            f"{args.stream}: {rejected} malformed line(s) skipped, {engine.late} late element(s) dropped",
            file=sys.stderr,
        )
    return 0


RUN_EXAMPLE = """example:
  rsp run examples/building/hot-rooms.rq --stream examples/building/temps.nt \\
      --ontology ontologies/building.ttl --entailment rdfs --format text

stream files are N-Triples whose lines end in their time in ms:  <s> <p> <o> . # 1200
several streams:  --stream http://ex.org/temps=temps.nt --stream http://ex.org/doors=doors.nt"""


def _stream_arguments(values: list[str], query) -> list[tuple[str | None, str]]:
    """``IRI=FILE`` or ``FILE`` (only for a query with one stream) -> [(stream IRI, file)]."""
    streams = {w.stream for w in query.windows}
    pairs = []
    for value in values:
        iri, sep, path = value.rpartition("=")
        if sep and ("://" in iri or iri.startswith("<") or ":" in iri):
            pairs.append((iri if iri.startswith("<") else f"<{iri}>", path))
        else:
            if len(streams) != 1:
                raise RspError(
                    f"--stream {value}: the query reads {len(streams)} streams; write --stream IRI=FILE "
                    f"for each of {', '.join(sorted(streams))}"
                )
            pairs.append((next(iter(streams)), value))
    for iri, _path in pairs:
        if iri not in streams:
            raise RspError(
                f"--stream {iri}: the query reads no such stream (it reads {', '.join(sorted(streams))})"
            )
    return pairs


def open_query(args: argparse.Namespace, path: str, out: TextIO):
    """The engine (ontologies loaded), the registered query and its results writer for ``rsp run`` and
    ``rsp spark``; returns (engine, query, writer, [(stream IRI, source)])."""
    from rsp.io.results import make_writer
    from rsp.runtime import Engine

    engine = Engine(entailment=args.entailment, late=args.late)
    for ontology in args.ontology:
        engine.load_ontology(ontology)
    with open(path, encoding="utf-8") as handle:
        query = engine.register(handle.read(), path)
    pairs = _stream_arguments(args.stream, query.query)
    writer = make_writer(args.format, out, variables=query.variables, query_name=query.name)
    query.keep = False
    query.subscribe(writer.write)
    return engine, query, writer, pairs


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    import heapq

    from rsp.io.ntriples import LatePolicy, ReadCounters, read_triple_file

    engine, _query, writer, pairs = open_query(args, args.query, out)

    def report(error: StreamError) -> None:
        print(error, file=sys.stderr)

    counters = {path: ReadCounters() for _iri, path in pairs}
    # one reject file for every stream (each reader would truncate a path of its own)
    rejects = open(args.reject, "w", encoding="utf-8") if args.reject else None  # noqa: SIM115
    try:
        readers = []
        for order, (iri, path) in enumerate(pairs):
            batches = read_triple_file(
                path,
                on_error=report,
                on_late=report,
                counters=counters[path],
                late_policy=LatePolicy(args.late),
                reject=rejects,
            )
            readers.append(((time_, order, iri, triples) for time_, triples in batches))
        progress = _Progress(not args.quiet)
        elements = 0
        for time_, _order, iri, triples in heapq.merge(*readers):
            engine.push(triples, time_, iri)
            elements += len(triples)
            progress.update(time_, elements)
        engine.close()
        progress.close()
        writer.close()
    finally:
        if rejects is not None:
            rejects.close()
    if not args.quiet:
        for path, counter in counters.items():
            if counter.rejected or counter.late or engine.late:
                print(
                    counter.summary(path) + (f", {engine.late} late at the engine" if engine.late else ""),
                    file=sys.stderr,
                )
    return 0


def _cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    from rsp.runtime import Engine

    engine = Engine(entailment=args.entailment)
    for ontology in args.ontology:
        engine.load_ontology(ontology)
    with open(args.query, encoding="utf-8") as handle:
        query = engine.register(handle.read(), args.query)
    tr = query.translation
    out.write(f"% query {query.name}: time points are slots of {tr.slot} ms, evaluated every {tr.step} ms\n")
    for iri, pred in tr.streams.items():
        out.write(f"% stream {iri} -> {pred}(S, P, O)\n")
    for rule in query.rules():
        if rule.is_fact:
            continue
        out.write(f"{rule}    % {rule.origin}\n")
    facts = sum(1 for rule in query.rules() if rule.is_fact)
    out.write(f"% plus {facts} background fact(s): the closed static graph and ontology tables\n")
    return 0


SPARK_EXAMPLE = """examples:
  rsp spark examples/building/hot-rooms.rq --stream incoming/ --ontology ontologies/building.ttl \\
      --entailment rdfs --format text                  # until Ctrl-C; files dropped into incoming/
  rsp spark q.rq --stream http://ex.org/s=stream.nt --available-now   # what is there, then exit
  rsp spark program.lars --stream socket://127.0.0.1:9999 --sink out/ --sink-format parquet

SOURCE: a directory that receives N-Triples files, a file, or socket://HOST:PORT (see docs/spark.md)"""


def _cmd_spark(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from rsp.spark.command import run_command
    except ImportError as err:
        raise RspError(f"rsp spark needs PySpark: pip install 'rsp[spark]' ({err})") from None
    return run_command(args, out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rsp",
        description="rsp: an RDF stream reasoner — continuous queries and LARS programs over streams.",
        epilog="example:\n  rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rsp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    lars = sub.add_parser(
        "lars",
        help="run a LARS program over an atom or triple stream",
        description="Evaluate a LARS program at every time point of a stream and print its output stream.",
        epilog=LARS_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lars.add_argument("program", help="the .lars program")
    lars.add_argument(
        "--stream", required=True, help="stream file: '<time> <atom>' lines or N-Triples with '# time'"
    )
    lars.add_argument(
        "--format",
        choices=("jsonl", "count", "text"),
        default="jsonl",
        help="jsonl: {time, atoms} per time point; count: {time, count}; text: for people",
    )
    lars.add_argument("--output", "-o", help="write results to this file instead of stdout")
    lars.add_argument("--quiet", "-q", action="store_true", help="no warnings, progress or summary on stderr")
    lars.add_argument(
        "--no-impossible",
        action="store_true",
        help="switch off the impossible-derivation optimisation (results are the same)",
    )
    lars.set_defaults(handler=_cmd_lars)

    run = sub.add_parser(
        "run",
        help="run a continuous query over streams replayed from files",
        description="Register a continuous query, replay N-Triples streams through it and print its results "
        "at every evaluation instant.",
        epilog=RUN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("query", help="the query (.rq)")
    run.add_argument(
        "--stream",
        action="append",
        required=True,
        metavar="[IRI=]FILE",
        help="a stream file; IRI= names the stream when the query reads several",
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
    run.add_argument("--output", "-o", help="write results to this file instead of stdout")
    run.add_argument("--reject", metavar="FILE", help="keep the malformed lines of the stream here")
    run.add_argument(
        "--late",
        choices=("drop", "fail"),
        default="drop",
        help="elements older than the last closed instant: count and drop them, or stop",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress or summary on stderr")
    run.set_defaults(handler=_cmd_run)

    explain = sub.add_parser(
        "explain",
        help="print the LARS rules a query compiles to",
        description="Print the LARS rules a query compiles to, each with its origin "
        "(query line or W3C rule id).",
        epilog="example:\n  rsp explain examples/building/hot-rooms.rq --entailment rdfs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("query", help="the query (.rq)")
    explain.add_argument("--ontology", action="append", default=[], metavar="FILE")
    explain.add_argument("--entailment", choices=("none", "rdfs", "owlrl"), default="none")
    explain.add_argument("--output", "-o", help="write to this file instead of stdout")
    explain.set_defaults(handler=_cmd_explain)

    spark = sub.add_parser(
        "spark",
        help="run a query or LARS program over streams read by Spark Structured Streaming",
        description="Feed a continuous query (.rq) or a LARS program (.lars) from Spark Structured Streaming "
        "sources; the output is that of rsp run / rsp lars.",
        epilog=SPARK_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    spark.add_argument("program", metavar="QUERY.rq|PROGRAM.lars", help="the query or LARS program")
    spark.add_argument(
        "--stream",
        action="append",
        required=True,
        metavar="[IRI=]SOURCE",
        help="a directory, a file or socket://HOST:PORT; IRI= names the stream when the query reads several",
    )
    spark.add_argument("--ontology", action="append", default=[], metavar="FILE")
    spark.add_argument("--entailment", choices=("none", "rdfs", "owlrl"), default="none")
    spark.add_argument(
        "--format",
        choices=("jsonl", "sparql-json", "csv", "tsv", "ntriples", "text", "count"),
        default="jsonl",
        help="as for rsp run (queries) or rsp lars (programs: jsonl, count, text)",
    )
    spark.add_argument("--output", "-o", help="write results to this file instead of stdout")
    spark.add_argument("--reject", metavar="DIR", help="write malformed lines here as JSON lines")
    spark.add_argument("--late", choices=("drop", "fail"), default="drop")
    spark.add_argument(
        "--available-now", action="store_true", help="process what the sources hold now, then exit"
    )
    spark.add_argument("--trigger", metavar="INTERVAL", help="micro-batch interval, e.g. '2 seconds'")
    spark.add_argument("--max-files-per-trigger", type=int, metavar="N", help="files per micro-batch")
    spark.add_argument("--sink", metavar="DIR", help="also write results to a Spark file sink here")
    spark.add_argument("--sink-format", choices=("json", "parquet"), help="the sink's format (default json)")
    spark.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="exactly once across restarts: Spark's offsets and the engine's state are committed here "
        "per micro-batch; run again with the same DIR to resume",
    )
    spark.add_argument(
        "--partition-by",
        metavar="?VAR",
        help="run one engine per value of ?VAR on Spark's executors (refused, with the reason, when the "
        "query or program does not partition by it)",
    )
    spark.add_argument("--master", help="Spark master of a new session (default local[2])")
    spark.add_argument("--no-impossible", action="store_true", help=argparse.SUPPRESS)
    spark.add_argument("--quiet", "-q", action="store_true", help="no warnings or summary on stderr")
    spark.set_defaults(handler=_cmd_spark)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # The engine allocates many short-lived tuples and no reference cycles on its hot path: collecting
    # the youngest generation every 50,000 allocations instead of 700 saves ≈15% of a run's time.
    gc.set_threshold(50_000, 20, 100)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if getattr(args, "output", None):
            # a checkpointed rsp spark resumes its output file (truncated back to the last committed batch)
            mode = "a" if getattr(args, "checkpoint", None) else "w"
            with open(args.output, mode, encoding="utf-8") as out:
                return args.handler(args, out)
        return args.handler(args, sys.stdout)
    except RspError as err:
        print(err, file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (``rsp … | head``): stop writing, and keep Python from complaining at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:
        print(f"rsp: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
