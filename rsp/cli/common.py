"""What the ``rsp`` commands share: progress on stderr, stream arguments (``--stream [IRI=]FILE``),
query files, ontologies (``--ontology``) and graphs (``--graph``) with their messages, live input's
options, and the set-up of a run: an engine with its queries registered and a results writer each
(:func:`open_query`, :func:`open_queries`; ``rsp run`` and ``rsp spark`` use them)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import replace
from typing import TextIO

from rsp.errors import Position, RspError, StreamError, read_source


class Progress:
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
        terminal = is_terminal(self.stream)
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


def is_terminal(handle: TextIO) -> bool:
    try:
        return handle.isatty()
    except (AttributeError, ValueError):
        return False


def live(path: str) -> bool:
    from rsp.live import is_live

    return is_live(path)


def positive_seconds(text: str) -> float:
    """An option's number of seconds (argparse ``type``): finite and greater than 0, else refused."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds greater than 0, not {text!r}")
    return value


def positive_int(text: str) -> int:
    """An option's count (argparse ``type``): a whole number of at least 1, else refused."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return value


def idle_close_unused(args: argparse.Namespace) -> None:
    """``--idle-close`` given for input that is not live (files read to their end): a warning, as the
    option changes nothing then."""
    if getattr(args, "idle_close", None) is not None and not getattr(args, "quiet", False):
        print(
            "rsp: warning: --idle-close has no effect on files read to their end (it is for live input: "
            "--follow, '-', pipes and FIFOs)",
            file=sys.stderr,
        )


def add_live_options(parser: argparse.ArgumentParser) -> None:
    """``--follow`` and ``--idle-close`` (live input, docs/cli.md#live-input)."""
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep reading a stream file as it grows (as tail does with --follow) until Ctrl-C or "
        "SIGTERM; '-' (stdin), pipes and FIFOs are always read live",
    )
    parser.add_argument(
        "--idle-close",
        type=positive_seconds,
        metavar="SECONDS",
        help="live input: after SECONDS without a new line, close the open instant (default: off, "
        "instants close on event time only)",
    )


def add_publish_option(parser: argparse.ArgumentParser) -> None:
    """``--publish mqtt://HOST:PORT/TOPIC`` (docs/mqtt.md#publishing-results)."""
    parser.add_argument(
        "--publish",
        metavar="mqtt://HOST:PORT/TOPIC",
        help="also publish the results to an MQTT topic, one message per line as --format jsonl writes "
        "them, at QoS 1 (needs the extra 'mqtt')",
    )


def no_time_point_read(stream: str, empty: bool, rejected: int, quiet: bool) -> None:
    """``rsp lars`` (either engine) read no time point: an error when every line was rejected (the
    stream is not a LARS stream), a warning when the stream is empty."""
    name = "<stdin>" if stream == "-" else stream
    if empty and rejected:
        raise StreamError(
            f"no element was read: every line was rejected ({rejected:,} line(s)); a stream line is "
            "'<time> <atom>' (36 temp(120)), a bare time, or '<s> <p> <o> . # 36'",
            Position(name),
        )
    if empty and not quiet:
        print(f"{name}: warning: the stream is empty: no time point was read from it", file=sys.stderr)


def open_stream(path: str) -> TextIO:
    """The stream file, opened for lazy reading (bytes that are not UTF-8 make their lines malformed:
    :mod:`rsp.io.text`); a missing or unreadable file is a StreamError."""
    from rsp.io.text import open_stream_text

    try:
        return open_stream_text(path)
    except (FileNotFoundError, IsADirectoryError):
        from rsp.live import no_stream_file

        raise no_stream_file(path) from None
    except OSError as err:
        raise StreamError(f"cannot read the stream file: {err.strerror}", Position(path)) from None


def stream_arguments(values: list[str], query, what: str = "FILE") -> list[tuple[str | None, str]]:
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
    given_twice = _given_twice(pairs)
    if given_twice is not None:
        raise RspError(given_twice, Position(query.file))
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


def _given_twice(pairs: list[tuple[str | None, str]]) -> str | None:
    """Why the ``--stream`` arguments are refused when one file is given twice for one stream (each
    element would be read twice, counts and aggregates changed) or standard input twice; None if not."""
    seen: dict[tuple[str | None, str], str] = {}
    stdin = 0
    for iri, path in pairs:
        if path == "-":
            stdin += 1
            if stdin > 1:
                return "--stream -: standard input is given twice (it can be read once)"
            continue
        key = (iri, os.path.realpath(path))
        if key in seen:
            return (
                f"--stream {path}: the file is given twice for the stream {iri} (as {seen[key]} before): "
                "each of its elements would be read twice; give it once"
            )
        seen[key] = path
    return None


def tagged(batches, order: int):
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
        load_ontology(engine, ontology)
    give_graphs(engine, getattr(args, "graph", []))
    query = engine.register(read_query(path), path)
    print_warnings([query], args)
    source = "SOURCE" if getattr(args, "command", "run") == "spark" else "FILE"
    pairs = stream_arguments(args.stream, query.query, source)
    prefixes = None
    if args.format == "text":
        prefixes = {}
        for ontology in args.ontology:
            prefixes.update(declared_prefixes(ontology))
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


def print_warnings(handles, args: argparse.Namespace) -> None:
    """The registered queries' warnings on stderr (``file:line:column: warning: …``), unless --quiet."""
    if not getattr(args, "quiet", False):
        for handle in handles:
            for warning in handle.warnings:
                print(warning, file=sys.stderr)


def give_graphs(engine, values: list[str]) -> None:
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
        load_ontology(engine, ontology)
    give_graphs(engine, args.graph)
    handles = [handle for path in paths for handle in engine.register_all(read_query(path), path)]
    print_warnings(handles, args)
    if len(handles) > 1 and args.format in ("csv", "tsv"):
        names = ", ".join(h.name for h in handles)
        raise RspError(
            f"--format {args.format} writes one table, but {len(handles)} queries are registered ({names}): "
            "use --format jsonl or text (each record names its query), or run them one at a time"
        )
    windows = [w for handle in handles for w in handle.query.windows]
    pairs = stream_arguments(args.stream, SimpleNamespace(windows=windows, file=paths[0]))
    prefixes = None
    if args.format == "text":
        prefixes = {}
        for ontology in args.ontology:
            prefixes.update(declared_prefixes(ontology))
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


def load_ontology(engine, path: str) -> None:
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


def read_query(path: str) -> str:
    """The text of a query file; bytes that are not UTF-8 are an error at their line and column."""
    try:
        return read_source(path, RspError, "query file")
    except FileNotFoundError:
        raise RspError("no such query file (give the path of a .rq file)", Position(path)) from None
    except OSError as err:
        raise RspError(f"cannot read the query file: {err.strerror}", Position(path)) from None


_PREFIX_LINE = re.compile(
    r"^\s*(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>", re.IGNORECASE | re.MULTILINE
)


def declared_prefixes(path: str) -> dict[str, str]:
    """The ``@prefix``/``PREFIX`` declarations of a Turtle-like file (none for other formats)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(1_000_000)
    except (OSError, UnicodeDecodeError):
        return {}
    return {prefix or "": namespace for prefix, namespace in _PREFIX_LINE.findall(text)}
