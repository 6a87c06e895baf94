"""MeTeoR (PyPI ``meteor-reasoner``) as the baseline and second opinion of ``rsp mtl``: its batch
materialisation, and a MeTeoR-Str-style stream reasoner built from MeTeoR's own window functions.

    python benchmarks/meteor.py batch PROGRAM STREAM [--target P]    # materialise, print P's facts
    python benchmarks/meteor.py stream PROGRAM STREAM --target P     # stream out P(a)@t per data point

Each command prints its results one per line and, last on stderr, ``RSS <KiB>`` (the process's peak).

The stream driver follows the loop of the paper's repository (wdimmy/StreamReasoningWithDatalogMTL,
``meteor_str_stream_reasoning.py``), written anew here without its logging: the data are loaded with
MeTeoR's parser, grouped by time point; at each point t_next the new facts join the window, MeTeoR's
naive immediate-consequence operator is applied until nothing new appears in (t, t_next], the target
predicate's atoms are streamed out at the data points up to t_next, and the window is cut to
(t_next − t_Π, t_next]. As there, every data interval is taken as a time point (its midpoint) and
results are given at the data's time points. ``meteor-reasoner`` is in the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import resource
import sys
from collections import defaultdict

MODE = "naive"


def _load(program_path: str, stream_path: str):
    from meteor_reasoner.utils.loader import load_dataset, load_program

    with open(program_path, encoding="utf-8") as handle:
        program = load_program([line for line in handle.read().splitlines() if line.strip()])
    with open(stream_path, encoding="utf-8") as handle:
        data = load_dataset([line for line in handle.read().splitlines() if line.strip()])
    return program, data


def batch(program_path: str, stream_path: str) -> dict:
    """MeTeoR's materialisation of the whole stream to its fixpoint: ``{pred: {entity: [Interval]}}``."""
    from meteor_reasoner.materialization.materialize import materialize

    program, data = _load(program_path, stream_path)
    with contextlib.redirect_stdout(io.StringIO()):  # materialize prints each iteration
        materialize(data, program, mode=MODE, K=10**9)
    return data


def stream(program_path: str, stream_path: str, target: str):
    """MeTeoR-Str's stream reasoning; yields ``P(a)@t`` strings of the target predicate as they go out."""
    import decimal

    from meteor_reasoner.classes.atom import Atom
    from meteor_reasoner.classes.interval import Interval
    from meteor_reasoner.materialization.index_build import build_index
    from meteor_reasoner.materialization.t_operator import naive_immediate_consequence_operator
    from meteor_reasoner.stream.utils import (
        add_fact_to_window,
        add_streams,
        get_maximum_rational_number,
        trim_window,
    )

    program, data = _load(program_path, stream_path)
    arrivals: dict = defaultdict(list)  # time point -> atoms starting there
    for predicate, entities in data.items():
        for entity, intervals in entities.items():
            for iv in intervals:
                arrivals[(iv.left_value + iv.right_value) // 2].append(Atom(predicate, entity))
    points = sorted(arrivals)
    width = decimal.Decimal(get_maximum_rational_number(program))
    window: dict = defaultdict(lambda: defaultdict(list))
    t = points[0] - 1 if points else 0
    out_at = 0
    for t_next in points:
        add_streams(window, arrivals[t_next], t_next)
        index = build_index(window)
        fresh = Interval(t, t_next, True, False)  # (t, t_next]: derive only here
        while add_fact_to_window(
            window, naive_immediate_consequence_operator(D=window, rules=program, D_index=index), fresh
        ):
            pass
        due = []
        while out_at < len(points) and points[out_at] <= t_next:
            due.append(points[out_at])
            out_at += 1
        for entity, intervals in window.get(target, {}).items():
            for iv in intervals:
                for p in due:
                    if (iv.left_value < p < iv.right_value) or (
                        (p == iv.left_value and not iv.left_open)
                        or (p == iv.right_value and not iv.right_open)
                    ):
                        yield f"{target}({','.join(str(e) for e in entity)})@{p}"
        t = t_next
        window = trim_window(window, Interval(t - width, t, True, False))


def _fact(predicate: str, entity, iv) -> str:
    args = ",".join(str(e) for e in entity)
    return f"{predicate}({args})@{iv}" if args != "nan" else f"{predicate}@{iv}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("batch", "stream"))
    parser.add_argument("program")
    parser.add_argument("stream")
    parser.add_argument("--target", help="the predicate to print (batch: default all derived ones)")
    args = parser.parse_args(argv)
    write = sys.stdout.write
    if args.mode == "batch":
        model = batch(args.program, args.stream)
        for predicate, entities in model.items():
            if args.target and predicate != args.target:
                continue
            for entity, intervals in entities.items():
                for iv in intervals:
                    write(_fact(predicate, entity, iv) + "\n")
    else:
        if not args.target:
            parser.error("stream needs --target")
        for line in stream(args.program, args.stream, args.target):
            write(line + "\n")
    sys.stdout.flush()
    sys.stderr.write(f"RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
