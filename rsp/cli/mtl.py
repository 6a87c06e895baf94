"""``rsp mtl``: a DatalogMTL program over a stream file of facts, results printed as they become final."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from fractions import Fraction
from time import perf_counter
from typing import TextIO

from rsp.cli.common import add_publish_option
from rsp.errors import Position, RspError, StreamError

MTL_EXAMPLE = """example:
  rsp mtl tests/data/mtl/short_stop.txt --stream tests/data/mtl/S1-head.txt --output-predicates ShortStop

program syntax (MeTeoR's, see docs/mtl.md), one rule per line:
  ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]NotPos(V)
  Boxplus[0,5]Alert(X):-Hot(X)Since[0,2]Rising(X)
stream lines: 'P(a,b)@[1,3)', 'P(a)@2', or '<s> <p> <o> . # 12' (the fact <p>(<s>,<o>)@12)"""


def add_parser(sub) -> None:
    """Register ``rsp mtl`` on the ``rsp`` command's subparsers."""
    mtl = sub.add_parser(
        "mtl",
        help="run a forward-propagating DatalogMTL program (MeTeoR syntax) over a stream of facts",
        description="Stream reasoning in DatalogMTL (MeTeoR-Str): the least model of the program over the "
        "stream, restricted to the output predicates, printed as soon as it is final.",
        epilog=MTL_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mtl.add_argument("program", help="the program: MeTeoR rules, one per line")
    mtl.add_argument(
        "--stream",
        required=True,
        help="the facts: a regular file is a dataset, read in any order; '-' (standard input), pipes and "
        "FIFOs are read live, in the order of the facts' left ends",
    )
    mtl.add_argument(
        "--follow",
        action="store_true",
        help="keep reading the stream file as it grows (as tail does with --follow) until Ctrl-C or SIGTERM",
    )
    mtl.add_argument(
        "--horizon", help="compute the model up to this time (default: the stream's last time point)"
    )
    mtl.add_argument(
        "--format",
        choices=("intervals", "jsonl", "count"),
        default="intervals",
        help="intervals: one maximal fact per line; jsonl: {time, facts} (or {time, atoms} with --points); "
        "count: {time, count}",
    )
    mtl.add_argument(
        "--points",
        metavar="T,…|START:END[:STEP]",
        help="report the atoms holding at these time points instead of maximal intervals",
    )
    mtl.add_argument(
        "--output-predicates", metavar="P,Q", help="the predicates to report (default: derived ones)"
    )
    mtl.add_argument(
        "--late",
        choices=("drop", "fail"),
        default="drop",
        help="live input (stdin, pipes, --follow): a fact starting before one already read is dropped "
        "(reported with its line) or stops the run",
    )
    mtl.add_argument("--output", "-o", help="write results to this file instead of stdout")
    mtl.add_argument("--quiet", "-q", action="store_true", help="no warnings or summary on stderr")
    mtl.add_argument(
        "--stats",
        action="store_true",
        help="at the end, on stderr: facts read, the peak number of stored intervals, seconds",
    )
    add_publish_option(mtl)
    mtl.set_defaults(handler=command)


MAX_POINTS = 1_000_000
"""At most this many ``--points`` (each is reported, and they are held in memory)."""


def _points(text: str) -> list:
    """The time points of ``--points``: ``1,2.5,4`` or ``START:END[:STEP]`` ranges; every point finite.
    An error names the column of the offending part in the option's text."""
    from rsp.mtl.intervals import INF, number

    points: list = []
    column = 1
    for part in text.split(","):
        where = Position("--points", 1, column + len(part) - len(part.lstrip()))
        column += len(part) + 1
        if not part.strip():
            continue
        try:
            fields = [number(f) for f in part.split(":")]
            if len(fields) > 3:
                raise ValueError
        except (ValueError, ZeroDivisionError):
            raise RspError(
                f"cannot read {part.strip()!r} (write 1,2.5,4 or 0:200 or 0:10:0.5)", where
            ) from None
        if any(f in (INF, -INF) for f in fields):
            raise RspError(
                f"{part.strip()!r}: points must be finite (an infinite range never ends; "
                "use --format intervals for facts holding up to inf)",
                where,
            )
        if len(fields) == 1:
            points.append(fields[0])
            continue
        t, stop = fields[0], fields[1]
        inc = fields[2] if len(fields) == 3 else 1
        if inc <= 0:
            raise RspError(f"{part.strip()!r}: the step must be positive", where)
        if t > stop:
            raise RspError(
                f"{part.strip()!r}: the range is empty (its start is after its end; write START:END)", where
            )
        if len(points) + (stop - t) / inc >= MAX_POINTS:
            raise RspError(
                f"{part.strip()!r}: more than {MAX_POINTS:,} points (use a larger step, or --format "
                "intervals for the facts as intervals)",
                where,
            )
        while t <= stop:
            points.append(t.numerator if isinstance(t, Fraction) and t.denominator == 1 else t)
            t += inc
    return points


def writer(out: TextIO, fmt: str, points: bool):
    """A function writing a batch of results (``[(time, items)]`` from :class:`rsp.mtl.Engine`) to
    ``out`` in ``fmt`` (``intervals``, ``jsonl`` or ``count``), as ``rsp mtl`` prints them (shared by
    ``rsp spark``)."""
    from rsp.mtl import format_fact
    from rsp.mtl.intervals import fmt_time
    from rsp.mtl.model import format_atom

    write = out.write

    def emit(results) -> None:
        for time, items in results:
            shown = time if isinstance(time, int) else fmt_time(time)
            if points:
                atoms = sorted(format_atom(p, a) for p, a in items)
                if fmt == "count":
                    write(f'{{"time": {json.dumps(shown)}, "count": {len(atoms)}}}\n')
                elif fmt == "jsonl":
                    write(json.dumps({"time": shown, "atoms": atoms}, ensure_ascii=False) + "\n")
                else:
                    write("".join(f"{a}@{fmt_time(time)}\n" for a in atoms))
                continue
            facts = sorted(format_fact(p, a, iv) for p, a, iv in items)
            if fmt == "count":
                write(f'{{"time": {json.dumps(shown)}, "count": {len(facts)}}}\n')
            elif fmt == "jsonl":
                write(json.dumps({"time": shown, "facts": facts}, ensure_ascii=False) + "\n")
            else:
                write("".join(f + "\n" for f in facts))

    return emit


def options(args: argparse.Namespace) -> tuple[list[str] | None, object, list | None]:
    """``--output-predicates``, ``--horizon`` and ``--points`` read (shared by ``rsp spark``)."""
    from rsp.mtl.intervals import INF, number

    outputs = None
    if args.output_predicates:
        outputs = [p.strip() for p in args.output_predicates.split(",") if p.strip()]
    horizon = None
    if args.horizon is not None:
        try:
            horizon = number(args.horizon)
        except (ValueError, ZeroDivisionError):
            raise RspError(f"--horizon: not a time: {args.horizon!r}") from None
        if horizon in (INF, -INF):
            raise RspError(
                f"--horizon {args.horizon}: the horizon must be finite (leave it out to stop at "
                "the stream's last time point)"
            )
    points = _points(args.points) if args.points else None
    return outputs, horizon, points


def nothing_read(name: str, parsed: int, rejected: int, engine, args: argparse.Namespace) -> None:
    """A run that read no fact: an error when every line was rejected or every fact starts after
    ``--horizon`` (the model would be empty), a warning when the stream is empty."""
    if parsed == 0 and rejected:
        raise StreamError(
            f"no fact was read: every line was rejected ({rejected:,} line(s)); a stream line is a fact "
            "'P(a,b)@[1,3)', 'P(a)@2' or '<s> <p> <o> . # 12'",
            Position(name),
        )
    if parsed and engine.facts_read == 0 and engine.late == 0 and args.horizon is not None:
        raise RspError(
            f"--horizon {args.horizon}: every fact of the stream starts after it, so the model on "
            f"(−∞, {args.horizon}] is empty; give a later horizon (or none: the stream's last time point)"
        )
    if parsed == 0 and not args.quiet:
        print(f"{name}: warning: the stream is empty: no fact was read from it", file=sys.stderr)


def command(args: argparse.Namespace, out: TextIO) -> int:
    """``rsp mtl``: a regular file is a dataset, reasoned over whatever the order of its facts; standard
    input, pipes, FIFOs, MQTT topics and ``--follow`` are a stream in the order of the left ends (late
    facts dropped and reported with their line, or ``--late fail``); ``--publish`` sends the results to
    an MQTT topic too."""
    from rsp.mqtt import publishing

    with publishing(args.publish) as publisher:
        return reason(args, out, publisher)


def reason(args: argparse.Namespace, out: TextIO, publisher) -> int:
    """``rsp mtl`` with its ``--publish`` topic (None without one)."""
    from rsp.cli.common import open_stream
    from rsp.live import Stopped, StopSignals, is_live, live_lines, summary
    from rsp.mqtt import is_mqtt
    from rsp.mtl import format_fact, load
    from rsp.mtl.engine import Engine
    from rsp.mtl.facts import first_out_of_order, in_time_order, read_facts
    from rsp.mtl.intervals import fmt_time

    started = perf_counter()
    program = load(args.program)
    outputs, horizon, points = options(args)
    engine = Engine(program, outputs=outputs, horizon=horizon, points=points, late=args.late)
    rejected = 0

    def report(error) -> None:
        nonlocal rejected
        rejected += 1
        if not args.quiet:
            print(error, file=sys.stderr)

    emit = writer(out, args.format, points is not None)
    if publisher is not None:  # --publish: the results as --format jsonl writes them, too
        shown, sent = emit, writer(publisher, "jsonl", points is not None)

        def emit(results) -> None:
            shown(results)
            sent(results)

    live = args.follow or is_live(args.stream)  # stdin, pipes, FIFOs, --follow (rsp/live.py)
    name = "<stdin>" if args.stream == "-" else args.stream
    sources: list = []  # the live source, once open: an MQTT topic places a line in its message
    topic = is_mqtt(args.stream)
    if topic:
        counted = report

        def report(error) -> None:
            if error.position is not None and sources:
                error = StreamError(error.message, sources[0].position(error.position.line))
            counted(error)

    with StopSignals() if live else contextlib.nullcontext() as stop:
        if live:
            handle = contextlib.closing(live_lines(args.stream, args.follow, stop, sources.append))
        else:
            with open_stream(args.stream) as scan:  # a dataset: are its facts in time order?
                unordered = first_out_of_order(scan) is not None
            handle = open_stream(args.stream)
        written = 0
        parsed = 0  # facts read from the stream (taken, late or past the horizon)
        reached = None  # the left end of the last fact the engine took
        try:
            with handle as lines:
                facts = read_facts(lines, name, report)
                if not live and unordered:  # read whole and ordered: in memory, bounded by the file
                    facts = in_time_order(facts)
                if topic:  # sources[0]: the topic, open once read from
                    facts = ((p, a, iv, sources[0].position(where.line)) for p, a, iv, where in facts)
                push = engine.push
                for pred, fact_args, iv, position in facts:
                    parsed += 1
                    taken, late = engine.facts_read, engine.late
                    results = push(pred, fact_args, iv, position)
                    if engine.late != late:
                        if not args.quiet:
                            fact = format_fact(pred, fact_args, iv)
                            message = (
                                f"late fact {fact} starting at {fmt_time(iv[0])}: "
                                f"the stream had reached {fmt_time(reached)}, dropped"
                            )
                            print(StreamError(message, position), file=sys.stderr)
                    elif engine.facts_read != taken:
                        reached = iv[0]
                    if results:
                        emit(results)
                        written += len(results)
                        if live:
                            out.flush()
        except Stopped:
            pass
        if not (live and stop.requested.is_set()):
            nothing_read(name, parsed, rejected, engine, args)
        final = engine.finish()
        emit(final)
        out.flush()
        if live and stop.requested.is_set() and not args.quiet:
            line = summary("mtl", stop, written + len(final), "result", engine.facts_read, "facts")
            print(line, file=sys.stderr)
    if not args.quiet:
        unknown = set(outputs or ()) - program.source.head_predicates() - set(engine.store)
        for pred in sorted(unknown):
            print(f"{args.program}: warning: output predicate {pred} occurs in no rule head", file=sys.stderr)
        if rejected or engine.late:
            print(
                f"{name}: {rejected} malformed line(s) skipped, {engine.late} late fact(s) dropped",
                file=sys.stderr,
            )
    if args.stats:
        print(
            f"rsp mtl: {engine.facts_read} facts read, {engine.peak_intervals} stored intervals at most, "
            f"{perf_counter() - started:.3f} s",
            file=sys.stderr,
        )
    return 0
