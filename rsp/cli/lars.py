"""``rsp lars``: a LARS program over an atom or triple stream; stratified programs run on the incremental
engine (rsp/engine), the others as answer streams (rsp/cli/models.py, rsp/asp)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TextIO

from rsp.cli.common import (
    Progress,
    add_live_options,
    add_publish_option,
    idle_close_unused,
    live,
    no_time_point_read,
    open_stream,
)
from rsp.cli.lars_output import CsvAtoms, output_predicates
from rsp.cli.models import parse_models
from rsp.errors import ProgramError, RspError, StreamError

LARS_EXAMPLE = """example:
  rsp lars examples/cooling/cooling.lars --stream examples/cooling/temps.stream --format text

program syntax (see docs/lars.md):
  q(A, B) :- [10] <> p(A, B).       % some time in the last 10 time points
  alarm :- [5] [] isSteam.           % at every time point of the last 5
  @T steam(V) :- [10] @T temp(V), V >= 100.
stream lines: '<time> <atom>' (36 a(x1,y)), a bare time, or '<s> <p> <o> . # 36'"""


def add_parser(sub) -> None:
    """Register ``rsp lars`` on the ``rsp`` command's subparsers."""
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
        choices=("jsonl", "count", "text", "csv"),
        default="jsonl",
        help="jsonl: {time, atoms} per time point; count: {time, count}; text: for people; csv: a row "
        "time,predicate,arg1,… per atom and time point",
    )
    lars.add_argument(
        "--output-predicates",
        metavar="P,Q",
        help="write the atoms of these derived predicates only (default: every derived predicate)",
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
        type=parse_models,
        metavar="1|all|N",
        help="answer streams (non-stratified programs, Ticker): how many models per time point (default 1)",
    )
    lars.add_argument(
        "--mode",
        choices=("clingo", "tms"),
        help="answer-stream reasoning: clingo (default: constraints, odd loops) or tms (incremental)",
    )
    add_live_options(lars)
    add_publish_option(lars)
    lars.set_defaults(handler=command)


def command(args: argparse.Namespace, out: TextIO) -> int:
    from rsp.mqtt import publishing

    if args.publish and (args.models is not None or args.mode is not None):
        raise RspError("--publish: answer streams (--models, --mode) are not published yet")
    with publishing(args.publish) as publisher:
        return evaluate(args, out, publisher)


def evaluate(args: argparse.Namespace, out: TextIO, publisher) -> int:
    """``rsp lars`` with its ``--publish`` topic (None without one)."""
    from rsp.engine import Engine
    from rsp.io.atoms import iter_batches
    from rsp.lars import load
    from rsp.lars.model import format_atom

    if args.models is not None or args.mode is not None:  # answer streams (docs/answer-streams.md)
        from rsp.cli.models import run_models

        return run_models(args, out)
    if args.explain and args.format == "count":
        raise RspError("--explain needs --format jsonl or text (count prints no atoms to explain)")
    try:
        program = load(args.program)
    except ProgramError as error:  # not stratified (or a constraint): answer streams, one model each
        if not error.message.startswith("negation through recursion"):
            raise
        if publisher is not None:
            message = "--publish: answer streams (a program not stratified) are not published yet"
            raise RspError(message) from None
        from rsp.cli.models import run_models

        return run_models(args, out)
    if not args.quiet:
        for warning in program.warnings:
            print(warning, file=sys.stderr)
    shown = output_predicates(args.output_predicates, program.program, program.intensional)
    if args.explain and args.format == "csv":
        raise RspError("--explain needs --format jsonl or text (csv has no place for derivations)")

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

    live_input = args.follow or live(args.stream)  # stdin, pipes, FIFOs, --follow: rsp/live.py
    if not live_input:
        idle_close_unused(args)
    handle = contextlib.nullcontext() if live_input else open_stream(args.stream)
    short = lars_shortener(program) if args.format == "text" else None
    lines = None
    if args.format in ("jsonl", "text") and not args.explain:
        from rsp.engine.output import AtomLines

        text_of = (lambda p, a: short_atom(short, p, a)) if short else format_atom
        lines = AtomLines(engine, args.format, text_of, shown)
    table = CsvAtoms(out, engine.intensional if shown is None else shown) if args.format == "csv" else None
    published = None  # --publish: each time point's line as --format jsonl writes it
    if publisher is not None:
        from rsp.engine.output import AtomLines

        mine = args.format == "jsonl" and lines is not None
        published = lines if mine else AtomLines(engine, "jsonl", predicates=shown)
    progress = Progress(args.quiet, "time point", "atoms")
    write = out.write
    fmt = args.format
    explain = args.explain
    t = None
    with handle:
        if live_input:
            from rsp.live import live_atom_batches

            batches = live_atom_batches(args, out, report, late, not engine.needs_arrival_order)
        else:
            batches = iter_batches(
                handle, args.stream, on_error=report, on_late=late, grouped=not engine.needs_arrival_order
            )
        for t in engine.run_batches(batches):
            if fmt == "count":
                count = engine.count() if shown is None else sum(len(engine.holding(*p)) for p in shown)
                write(f'{{"time": {t}, "count": {count}}}\n')
            elif table is not None:
                table.write(t, shown_atoms(engine, shown))
            elif explain:
                write_explained_atoms(engine, t, fmt, write, shown)
            else:  # each atom's text made once while it holds (rsp/engine/output.py)
                line = lines.line(t)
                write(line)
            if published is not None:
                publisher.write(line if published is lines else published.line(t))
            progress.update(t, engine.stream_count)
    progress.close(t, engine.stream_count)
    no_time_point_read(args.stream, t is None, rejected, args.quiet)
    if not args.quiet:
        from rsp.engine.signatures import describe_other_arities
        from rsp.lars.undefined import undefined_body_atoms

        for line in undefined_body_atoms(program.program, engine.stream_preds):
            print(line, file=sys.stderr)
        for line in describe_other_arities(engine):
            print(f"{args.stream}: warning: {line}", file=sys.stderr)
    if (rejected or engine.late) and not args.quiet:
        print(
            f"{args.stream}: {rejected} malformed line(s) skipped, {engine.late} late element(s) dropped",
            file=sys.stderr,
        )
    return 0


def lars_shortener(program):
    """IRIs as prefixed names with the program's ``@prefix``es (and rdf, rdfs, xsd, owl), for text output."""
    from rsp.io.results import Shortener

    return Shortener(dict(program.program.prefixes))


def short_atom(short, pred: str, args: tuple) -> str:
    """An atom for people: IRIs of its predicate and arguments shortened (``tr:x(tr:van,17)``)."""
    from rsp.lars.model import format_atom

    return format_atom(short(pred), tuple(short(a) if isinstance(a, str) else a for a in args))


def shown_atoms(engine, shown) -> list[tuple[str, tuple]]:
    """The atoms that hold now, of the predicates ``shown`` (None: all)."""
    if shown is None:
        return list(engine.output())
    return [(name, args) for name, args in engine.output() if (name, len(args)) in shown]


def write_explained_atoms(engine, t: int, fmt: str, write, shown=None) -> None:
    """One time point of ``rsp lars --explain``: the atoms (of the predicates ``shown``, None: all), each
    with its derivation."""
    from rsp.engine.explain import explanation_json
    from rsp.lars.model import format_atom

    atoms = sorted(shown_atoms(engine, shown), key=lambda item: format_atom(*item))
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
