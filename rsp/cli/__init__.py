"""The ``rsp`` command line, never imported by the library: one module per command (``run``, ``lars``,
``mtl``, ``explain``, ``serve``, ``spark``), what they share (:mod:`rsp.cli.common`), and :func:`main`,
which prints errors without tracebacks (``file:line:column: message`` on stderr, exit code 2)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from rsp import ENGINE_GC_THRESHOLDS, __version__
from rsp.cli import explain, lars, mtl, run, serve, spark
from rsp.cli.common import Progress
from rsp.cli.parser import Parser
from rsp.errors import RspError


def build_parser() -> Parser:
    parser = Parser(
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
    for command in (lars, run, mtl, serve, explain, spark):
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    gc.set_threshold(*ENGINE_GC_THRESHOLDS)  # see there
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    stopped_by = interrupt_on_sigterm()
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


def interrupt_on_sigterm() -> list[str]:
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


__all__ = ["Progress", "build_parser", "interrupt_on_sigterm", "main"]
