"""``rsp lars … --models …/--mode …``: answer streams on the command line (rsp/cli/lars.py hands
non-stratified programs over), with the output formats of docs/answer-streams.md."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from rsp.errors import RspError, StreamError


def parse_models(text: str) -> int:
    """``1``, ``all`` (0: every model) or a positive count."""
    if text == "all":
        return 0
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 1, all or a positive number, not {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected 1, all or a positive number, not {text!r}")
    return count


def run_models(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``args.program`` over ``args.stream`` in an answer-set mode and write the models per tick."""
    from rsp.asp import Mode, load, reasoner
    from rsp.io.atoms import iter_batches
    from rsp.lars.model import format_atom

    models = 1 if args.models is None else args.models
    mode = Mode(args.mode or "clingo")
    if args.explain and args.format == "count":
        raise RspError("--explain needs --format jsonl or text (count prints no atoms to explain)")
    if args.format == "csv":
        raise RspError(
            "--format csv writes the one answer of a stratified program; answer streams (--models, --mode, "
            "or a program with negation through recursion) are written as jsonl, count or text"
        )
    program = load(args.program)
    if not args.quiet:
        for warning in program.warnings:
            print(warning, file=sys.stderr)
    from rsp.cli.lars_output import output_predicates

    shown = output_predicates(getattr(args, "output_predicates", None), program.program, program.intensional)
    rejected = late = 0

    def report(error: StreamError) -> None:
        nonlocal rejected
        rejected += 1
        print(error, file=sys.stderr)

    def on_late(time_: int, pred: str, atom_args: tuple) -> None:
        nonlocal late
        late += 1
        print(
            f"{args.stream}: late element {format_atom(pred, atom_args)} at {time_} dropped", file=sys.stderr
        )

    from rsp.cli.common import idle_close_unused, open_stream

    idle_close_unused(args)  # (answer streams read their stream file to its end)
    solver = None
    expected = None
    carried: set[tuple[str, int]] = set()  # the stream's predicates (name and arity)
    with open_stream(args.stream) as handle:
        for t, batch in iter_batches(handle, args.stream, on_error=report, on_late=on_late):
            carried.update((pred, len(atom_args)) for pred, atom_args in batch)
            if solver is None:
                solver = reasoner(program, t, mode, models)
                solver.explaining = bool(args.explain)
                expected = t
            while expected < t:  # time points without data are ticks too
                _write(out, args, expected, _kept(solver.step(expected, []), shown), solver, models)
                expected += 1
            _write(out, args, t, _kept(solver.step(t, list(batch)), shown), solver, models)
            expected = t + 1
    if (rejected or late) and not args.quiet:
        print(
            f"{args.stream}: {rejected} malformed line(s) skipped, {late} late element(s) dropped",
            file=sys.stderr,
        )
    from rsp.cli.common import no_time_point_read
    from rsp.lars.undefined import undefined_body_atoms

    no_time_point_read(args.stream, solver is None, rejected, args.quiet)
    if not args.quiet:
        for line in undefined_body_atoms(program.program, carried):
            print(line, file=sys.stderr)
    return 0


def _kept(found: list[list[str]], shown) -> list[list[str]]:
    """Each model's atoms of the predicates ``shown`` (None: all); models alike once filtered stay
    apart (each is an answer stream of its own)."""
    if shown is None:
        return found
    from rsp.cli.lars_output import atom_name

    names = {sig.name for sig in shown}
    return [[atom for atom in model if atom_name(atom) in names] for model in found]


def _write(
    out: TextIO, args: argparse.Namespace, t: int, found: list[list[str]], solver, models: int
) -> None:
    fmt = args.format
    if fmt == "count":
        out.write(json.dumps({"time": t, "count": len(found)}) + "\n")
        return
    explanations = None
    if args.explain and found:
        from rsp.asp.tms import TmsReasoner, explain
        from rsp.io.atoms import parse_line

        explanations = []
        for atom in found[0]:
            parsed = parse_line(f"{t} {atom}")
            if parsed is None or parsed[1] is None:
                continue
            if isinstance(solver, TmsReasoner):
                explanations.append(explain(solver, parsed[1], parsed[2]))
            else:  # mode clingo: the rule instances whose bodies hold in the model printed
                explanations.append(solver.explain(found[0], parsed[1], parsed[2]))
    if fmt == "jsonl":
        if models == 1 and found:
            record: dict = {"time": t, "atoms": found[0]}
        else:
            record = {"time": t, "models": found}
        if explanations is not None:
            record["explanations"] = [e for e in explanations if e is not None]
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    if not found:
        out.write(f"{t:>6} | no answer stream\n")
    else:
        shown = ["  ".join(m) if m else "-" for m in found]
        out.write(
            f"{t:>6} | {shown[0] if len(shown) == 1 else '  ||  '.join('{' + s + '}' for s in shown)}\n"
        )
    for e in explanations or ():
        if e is None:
            continue
        out.write(f"         {e['atom']}  by {e['rule']}  ({e['origin']})\n")
        for premise in e["premises"]:
            out.write(f"           {premise}\n")
        for assumption in e["assumptions"]:
            out.write(f"           {assumption}  [assumption]\n")
