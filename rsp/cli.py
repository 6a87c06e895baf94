"""The ``rsp`` command line: subcommands, output formats, and error reporting without tracebacks
(``file:line:column: message`` on stderr, exit code 2)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TextIO

from rsp import ENGINE_GC_THRESHOLDS, __version__
from rsp.errors import Position, ProgramError, RspError, StreamError

LARS_EXAMPLE = """example:
  rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream --format text

program syntax (see docs/lars.md):
  q(A, B) :- [10] <> p(A, B).       % some time in the last 10 time points
  alarm :- [5] [] isSteam.           % at every time point of the last 5
  @T steam(V) :- [10] @T temp(V), V >= 100.
stream lines: '<time> <atom>' (36 a(x1,y)), a bare time, or '<s> <p> <o> . # 36'"""


class _Progress:
    """Progress of a long replay on stderr: instants (or time points) done and elements per second.

    Shown on a terminal as one line rewritten in place, at most every ``interval`` seconds and only
    once the run has lasted that long; never with ``--quiet``. ``RSP_PROGRESS=1`` forces it on (one line
    per update, for logs and tests), ``RSP_PROGRESS=0`` off; ``RSP_PROGRESS_INTERVAL`` sets the interval
    in seconds (default 0.5). A forced progress ends with a summary line.
    """

    def __init__(
        self, quiet: bool, unit: str, what: str, time_unit: str = "", stream: TextIO | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        forced = os.environ.get("RSP_PROGRESS", "")
        self.forced = forced not in ("", "0")
        terminal = _is_terminal(self.stream)
        self.enabled = not quiet and (self.forced or (terminal and forced != "0"))
        self.in_place = terminal and not self.forced
        try:
            self.interval = float(os.environ.get("RSP_PROGRESS_INTERVAL", "0.5"))
        except ValueError:
            self.interval = 0.5
        self.unit, self.what, self.time_unit = unit, what, time_unit
        self.started = time.monotonic()
        self.last = self.started
        self.done = 0
        self.shown = False

    def update(self, point: int, elements: int) -> None:
        """One more instant (at ``point``, in the stream's time unit); ``elements`` read so far."""
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < self.interval:
            return
        self.last = now
        self._show(point, elements, now)

    def _show(self, point: int, elements: int, now: float) -> None:
        rate = elements / max(now - self.started, 1e-9)
        plural = "" if self.done == 1 else "s"
        text = (
            f"{self.done:,} {self.unit}{plural} done (at {point}{self.time_unit}), {elements:,} {self.what}, "
            f"{rate:,.0f} {self.what}/s"
        )
        if self.in_place:
            self.stream.write(f"\r{text}\033[K")
        else:
            self.stream.write(f"rsp: {text}\n")
        self.stream.flush()
        self.shown = True

    def close(self, point: int | None = None, elements: int = 0) -> None:
        """The end of the run: clear the terminal line, or (when forced) print a summary."""
        if not self.enabled:
            return
        if self.in_place:
            if self.shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
        elif point is not None:
            self._show(point, elements, time.monotonic())


def _is_terminal(handle: TextIO) -> bool:
    try:
        return handle.isatty()
    except (AttributeError, ValueError):
        return False


def _lars_shortener(program):
    """IRIs as prefixed names with the program's ``@prefix``es (and rdf, rdfs, xsd, owl), for text output."""
    from rsp.io.results import _Shortener

    return _Shortener(dict(program.program.prefixes))


def _short_atom(short, pred: str, args: tuple) -> str:
    """An atom for people: IRIs of its predicate and arguments shortened (``tr:x(tr:van,17)``)."""
    from rsp.lars.model import format_atom

    return format_atom(short(pred), tuple(short(a) if isinstance(a, str) else a for a in args))


def _cmd_lars(args: argparse.Namespace, out: TextIO) -> int:
    from rsp.engine import Engine
    from rsp.io.atoms import iter_batches
    from rsp.lars import load
    from rsp.lars.model import format_atom

    if args.models is not None or args.mode is not None:  # answer streams (docs/answer-streams.md)
        from rsp.asp.cli import run_lars

        return run_lars(args, out)
    if args.explain and args.format == "count":
        raise RspError("--explain needs --format jsonl or text (count prints no atoms to explain)")
    try:
        program = load(args.program)
    except ProgramError as error:  # not stratified (or a constraint): answer streams, one model each
        if not error.message.startswith("negation through recursion"):
            raise
        from rsp.asp.cli import run_lars

        return run_lars(args, out)
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

    live = args.follow or _live(args.stream)  # stdin, pipes, FIFOs, --follow: rsp/live.py
    handle = contextlib.nullcontext() if live else _open_stream(args.stream)
    short = _lars_shortener(program) if args.format == "text" else None
    lines = None
    if args.format in ("jsonl", "text") and not args.explain:
        from rsp.io.lars_output import AtomLines

        text_of = (lambda p, a: _short_atom(short, p, a)) if short else format_atom
        lines = AtomLines(engine, args.format, text_of)
    progress = _Progress(args.quiet, "time point", "atoms")
    write = out.write
    fmt = args.format
    explain = args.explain
    t = None
    with handle:
        if live:
            from rsp.live import live_atom_batches

            batches = live_atom_batches(args, out, report, late, not engine.needs_arrival_order)
        else:
            batches = iter_batches(
                handle, args.stream, on_error=report, on_late=late, grouped=not engine.needs_arrival_order
            )
        for t in engine.run_batches(batches):
            if fmt == "count":
                write(f'{{"time": {t}, "count": {engine.count()}}}\n')
            elif explain:
                _write_explained_atoms(engine, t, fmt, write)
            else:  # each atom's text made once while it holds (rsp/io/lars_output.py)
                write(lines.line(t))
            progress.update(t, engine.stream_count)
    progress.close(t, engine.stream_count)
    if not args.quiet:
        from rsp.engine.signatures import describe_other_arities

        for line in describe_other_arities(engine):
            print(f"{args.stream}: warning: {line}", file=sys.stderr)
    if (rejected or engine.late) and not args.quiet:
        print(
            f"{args.stream}: {rejected} malformed line(s) skipped, {engine.late} late element(s) dropped",
            file=sys.stderr,
        )
    return 0


def _live(path: str) -> bool:
    from rsp.live import is_live

    return is_live(path)


def _add_live_options(parser: argparse.ArgumentParser) -> None:
    """``--follow`` and ``--idle-close`` (live input, docs/cli.md#live-input)."""
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep reading a stream file as it grows (as tail does with --follow) until Ctrl-C or "
        "SIGTERM; '-' (stdin), pipes and FIFOs are always read live",
    )
    parser.add_argument(
        "--idle-close",
        type=float,
        metavar="SECONDS",
        help="live input: after SECONDS without a new line, close the open instant (default: off, "
        "instants close on event time only)",
    )


def _open_stream(path: str) -> TextIO:
    """The stream file, opened for lazy reading; a missing or unreadable file is a StreamError."""
    try:
        return open(path, encoding="utf-8")  # noqa: SIM115 - read lazily, closed by the caller
    except FileNotFoundError:
        raise StreamError("no such stream file (check the path given to --stream)", Position(path)) from None
    except OSError as err:
        raise StreamError(f"cannot read the stream file: {err.strerror}", Position(path)) from None


def _write_explained_atoms(engine, t: int, fmt: str, write) -> None:
    """One time point of ``rsp lars --explain``: the atoms, each with its derivation."""
    from rsp.engine.explain import explanation_json
    from rsp.lars.model import format_atom

    atoms = sorted(engine.output(), key=lambda item: format_atom(*item))
    derivations = [engine.explain(pred, args) for pred, args in atoms]
    texts = [format_atom(p, a) for p, a in atoms]
    if fmt == "jsonl":
        record = {
            "time": t,
            "atoms": texts,
            "explanations": [explanation_json(d) for d in derivations if d is not None],
        }
        write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    write(f"{t:>6} | {'  '.join(texts) if texts else '-'}\n")
    for derivation in derivations:
        if derivation is not None:
            write("".join(f"         {line}\n" for line in derivation.lines()))


RUN_EXAMPLE = """example:
  rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \\
      --ontology ontologies/building.ttl --entailment rdfs --format text

why an answer came out (rules with their origins, stream triples with their times):
  rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \\
      --ontology ontologies/building.ttl --entailment rdfs --format text --explain

stream files are N-Triples whose lines end in their time in ms:  <s> <p> <o> . # 1200
several streams:  --stream http://ex.org/temps=temps.nt --stream http://ex.org/doors=doors.nt"""


def _stream_arguments(values: list[str], query, what: str = "FILE") -> list[tuple[str | None, str]]:
    """``IRI=FILE`` or ``FILE`` (only for a query with one stream) -> [(stream IRI, file)]; every stream
    the query reads must be given (``what`` names a source in the messages)."""
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
                    f"for each of {', '.join(sorted(streams))}",
                    Position(query.file),
                )
            pairs.append((next(iter(streams)), value))
    for iri, _path in pairs:
        if iri not in streams:
            raise RspError(
                f"--stream {iri}=…: the query reads no such stream; name one of its FROM STREAM IRIs: "
                f"{', '.join(sorted(streams))}",
                Position(query.file),
            )
    given = {iri for iri, _path in pairs}
    for window in query.windows:
        if window.stream not in given:  # it would stay empty: every answer over it would be silently wrong
            clause = "FROM STREAM" if window.name is None else f"FROM NAMED WINDOW {window.name} ON"
            raise RspError(
                f"{clause} {window.stream}: no --stream gives this stream; add --stream "
                f"{window.stream[1:-1]}={what}",
                window.pos or Position(query.file),
            )
    return pairs


def _tagged(batches, order: int):
    """(time, order, triples, line numbers) for each batch of one stream file's reader."""
    for time_, triples, lines in batches:
        yield time_, order, triples, lines


def open_query(args: argparse.Namespace, path: str, out: TextIO):
    """The engine (ontologies loaded), the registered query and its results writer for ``rsp run`` and
    ``rsp spark``; returns (engine, query, writer, [(stream IRI, source)])."""
    from rsp.io.results import make_writer
    from rsp.runtime import Engine

    explain = getattr(args, "explain", False)
    engine = Engine(entailment=args.entailment, late=args.late, explain=explain)
    for ontology in args.ontology:
        _load_ontology(engine, ontology)
    _give_graphs(engine, getattr(args, "graph", []))
    query = engine.register(_read_query(path), path)
    _print_warnings([query], args)
    source = "SOURCE" if getattr(args, "command", "run") == "spark" else "FILE"
    pairs = _stream_arguments(args.stream, query.query, source)
    prefixes = None
    if args.format == "text":
        prefixes = {}
        for ontology in args.ontology:
            prefixes.update(_declared_prefixes(ontology))
        prefixes.update(query.query.prefixes)
    writer = make_writer(
        args.format, out, variables=query.variables, query_name=query.name, prefixes=prefixes
    )
    query.keep = False
    if explain:

        def write(result) -> None:
            writer.write(replace(result, explanations=query.explain_result(result)))

        query.subscribe(write)
    else:
        query.subscribe(writer.write)
    return engine, query, writer, pairs


def _print_warnings(handles, args: argparse.Namespace) -> None:
    """The registered queries' warnings on stderr (``file:line:column: warning: …``), unless --quiet."""
    if not getattr(args, "quiet", False):
        for handle in handles:
            for warning in handle.warnings:
                print(warning, file=sys.stderr)


def _give_graphs(engine, values: list[str]) -> None:
    """``--graph IRI=FILE``: the local file of a FROM / FROM NAMED graph."""
    for value in values:
        iri, sep, path = value.rpartition("=")
        if not sep or not iri:
            raise RspError(
                f"--graph {value}: write --graph IRI=FILE, e.g. --graph http://ex.org/rooms=rooms.ttl "
                "(the IRI as the query's FROM or FROM NAMED writes it)"
            )
        if not os.path.isfile(path):
            raise RspError(f"--graph {value}: no such file {path}")
        engine.add_graph(iri, path)


def open_queries(args: argparse.Namespace, paths: list[str], out: TextIO):
    """``rsp run`` with one or more query files (each may hold several REGISTER statements): the engine,
    the registered queries, a results writer per query (all writing to ``out``), and [(stream IRI,
    file)] for the streams they read."""
    from types import SimpleNamespace

    from rsp.io.results import make_writer
    from rsp.runtime import Engine

    engine = Engine(entailment=args.entailment, late=args.late, explain=args.explain)
    for ontology in args.ontology:
        _load_ontology(engine, ontology)
    _give_graphs(engine, args.graph)
    handles = [handle for path in paths for handle in engine.register_all(_read_query(path), path)]
    _print_warnings(handles, args)
    if len(handles) > 1 and args.format in ("csv", "tsv"):
        names = ", ".join(h.name for h in handles)
        raise RspError(
            f"--format {args.format} writes one table, but {len(handles)} queries are registered ({names}): "
            "use --format jsonl or text (each record names its query), or run them one at a time"
        )
    windows = [w for handle in handles for w in handle.query.windows]
    pairs = _stream_arguments(args.stream, SimpleNamespace(windows=windows, file=paths[0]))
    prefixes = None
    if args.format == "text":
        prefixes = {}
        for ontology in args.ontology:
            prefixes.update(_declared_prefixes(ontology))
        for handle in handles:
            prefixes.update(handle.query.prefixes)
    writers = []
    for handle in handles:
        writer = make_writer(
            args.format, out, variables=handle.variables, query_name=handle.name, prefixes=prefixes
        )
        handle.keep = False
        if args.explain:

            def write(result, handle=handle, writer=writer) -> None:
                writer.write(replace(result, explanations=handle.explain_result(result)))

            handle.subscribe(write)
        else:
            handle.subscribe(writer.write)
        writers.append(writer)
    return engine, handles, writers, pairs


_AT_LINE = re.compile(r"\bline (\d+)\b|:(\d+):\d+: ")


def _load_ontology(engine, path: str) -> None:
    """``engine.load_ontology(path)`` with the error naming the line (when the parser gave one) and
    what to do."""
    try:
        engine.load_ontology(path)
    except RspError as err:
        position = err.position or Position(path)
        if "no such file" in err.message:
            raise type(err)("no such ontology file (check the path given to --ontology)", position) from None
        match = _AT_LINE.search(err.message)
        if match and not position.line:
            position = Position(position.file, int(match.group(1) or match.group(2)))
        hint = (
            "fix the file, or give --ontology a Turtle (.ttl), RDF/XML (.rdf, .owl), N-Triples (.nt) "
            "or JSON-LD (.jsonld) file"
        )
        raise type(err)(f"{err.message} ({hint})", position) from None


def _read_query(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise RspError("no such query file (give the path of a .rq file)", Position(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else "not UTF-8 text"
        raise RspError(f"cannot read the query file: {reason}", Position(path)) from None


_PREFIX_LINE = re.compile(
    r"^\s*(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>", re.IGNORECASE | re.MULTILINE
)


def _declared_prefixes(path: str) -> dict[str, str]:
    """The ``@prefix``/``PREFIX`` declarations of a Turtle-like file (none for other formats)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(1_000_000)
    except (OSError, UnicodeDecodeError):
        return {}
    return {prefix or "": namespace for prefix, namespace in _PREFIX_LINE.findall(text)}


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    import heapq

    from rsp.io.late import LateLines
    from rsp.io.ntriples import ReadCounters, read_triple_file

    if args.explain and args.format not in ("jsonl", "sparql-json", "text"):
        raise RspError(f"--explain needs --format jsonl, sparql-json or text, not {args.format}")
    engine, handles, writers, pairs = open_queries(args, args.query, out)
    query = handles[0]
    if args.follow or any(_live(path) for _iri, path in pairs):  # stdin, pipes, FIFOs: rsp/live.py
        from rsp.live import run_query_live

        return run_query_live(args, engine, handles, writers, pairs, out)
    for _iri, path in pairs:
        if not os.path.isfile(path):
            raise StreamError("no such stream file (check the path given to --stream)", Position(path))

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
    rejects = open(args.reject, "w", encoding="utf-8") if args.reject else None  # noqa: SIM115
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
            readers.append(_tagged(batches, order))
        progress = _Progress(args.quiet, "instant", "triples", " ms")
        query.subscribe(lambda result: progress.update(result.time, elements))
        elements = 0
        # each file is read in its own order; the files are merged by the times of the batches read next
        for time_, order, triples, lines in heapq.merge(*readers):
            elements += len(triples)
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
    return 0


def _cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    from rsp.runtime import Engine

    engine = Engine(entailment=args.entailment)
    for ontology in args.ontology:
        _load_ontology(engine, ontology)
    _give_graphs(engine, args.graph)
    query = engine.register(_read_query(args.query), args.query)
    _print_warnings([query], args)
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


def _parse_models(text: str) -> int:
    """``--models``, read by rsp.asp.cli (imported on use: the other commands do not need rsp.asp)."""
    from rsp.asp.cli import parse_models

    return parse_models(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rsp",
        description="rsp: an RDF stream reasoner — continuous queries and LARS programs over streams.",
        epilog="examples:\n"
        "  rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream\n"
        "  rsp run examples/building/hot-rooms.rq --stream examples/building/temperatures.nt \\\n"
        "      --ontology ontologies/building.ttl --entailment rdfs --format text\n"
        "  rsp explain examples/building/hot-rooms.rq --entailment rdfs\n\n"
        "rsp COMMAND --help shows each command's options and a further example.",
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
        "--stream",
        required=True,
        help="stream file ('-': standard input, or a FIFO): '<time> <atom>' lines or N-Triples with '# time'",
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
        "--explain",
        action="store_true",
        help="with each time point's atoms, their derivations: the rules (with their source lines) and "
        "the stream atoms (with their time points) they rest on",
    )
    lars.add_argument(
        "--no-impossible",
        action="store_true",
        help="switch off the impossible-derivation optimisation (results are the same)",
    )
    lars.add_argument(
        "--models",
        type=_parse_models,
        metavar="1|all|N",
        help="answer streams (non-stratified programs, Ticker): how many models per time point (default 1)",
    )
    lars.add_argument(
        "--mode",
        choices=("clingo", "tms"),
        help="answer-stream reasoning: clingo (default: constraints, odd loops) or tms (incremental)",
    )
    _add_live_options(lars)
    lars.set_defaults(handler=_cmd_lars)

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
        help="a stream file ('-': standard input; pipes and FIFOs are read live); IRI= names the stream "
        "when the query reads several",
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
    _add_live_options(run)
    run.set_defaults(handler=_cmd_run)

    from rsp.mtl.cli import add_parser as add_mtl_parser

    add_mtl_parser(sub)

    from rsp.serve.cli import add_parser as add_serve_parser

    add_serve_parser(sub)

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
    explain.add_argument("--graph", action="append", default=[], metavar="IRI=FILE",
                         help="the local file of a FROM / FROM NAMED graph; repeatable")
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
        choices=("jsonl", "sparql-json", "csv", "tsv", "ntriples", "text", "count", "intervals"),
        default="jsonl",
        help="as for rsp run (queries), rsp lars (programs: jsonl, count, text) or the mtl command "
        "(DatalogMTL: intervals, jsonl, count)",
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
    spark.set_defaults(handler=_cmd_spark)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    gc.set_threshold(*ENGINE_GC_THRESHOLDS)  # see there
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    stopped_by = _interrupt_on_sigterm()
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
    except KeyboardInterrupt:  # a replay stopped before its end (live input stops in rsp/live.py)
        print(f"rsp {args.command}: stopped by {stopped_by[0]} before the end of the input", file=sys.stderr)
        return 130


def _interrupt_on_sigterm() -> list[str]:
    """SIGTERM stops a command as Ctrl-C does (KeyboardInterrupt, in the main thread only); the list
    returned names the signal that came."""
    import signal
    import threading

    stopped_by = ["SIGINT"]
    if threading.current_thread() is threading.main_thread():

        def stop(_number, _frame) -> None:
            stopped_by[0] = "SIGTERM"
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
    return stopped_by


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
