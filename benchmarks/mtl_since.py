"""Memory and time of ``Since`` against the stream's length and the density of its timestamps: the
engine's stored intervals (peak) and µs per fact for streams of 300, 3,000 and 30,000 facts, with a
timestamp every 1, 0.1 and 0.01 time units. docs/mtl.md promises memory bounded by the program and the
objects, never by the stream's past, and (no punctual interval in the program) independent of how dense
the timestamps are: each program's column of stored intervals should be flat.

    python benchmarks/mtl_since.py                      # every program, length and spacing
    python benchmarks/mtl_since.py --lengths 300,3000   # shorter streams only
    PYTHONPATH=/tmp/rsp-before python benchmarks/mtl_since.py --lengths 300,3000
                                                        # an earlier rsp (git archive REV rsp | tar -x -C DIR)

In process (no start-up): the facts are built as tuples and pushed into :class:`rsp.mtl.Engine`; the
time is that of ``push`` and ``finish``, best of ``--rounds``. The programs (one object ``a``):

- ``inf``: ``C(X):-D(X)Since[0,inf)B(X)``, ``D(a)@[0,inf)`` then a point ``B(a)@t`` every step;
- ``bounded``: ``C(X):-Diamondminus[0,2]B(X)`` and ``F(X):-C(X)Since[0,3]B(X)``, a point ``B(a)`` every step;
- ``open-nested``: ``F(X):-(Diamondminus[0,2]B(X))Since(1/2,3)B(X)``, a point ``B(a)`` every step, and
  ``G(X):-E(X)Since(1,inf)B(X)`` with ``E(a)`` on ``[t, t+step/2)`` every step (gaps: the left breaks);
- ``pairs``: ``C(X):-D(X)Since[0,inf)B(Y), D(X)`` and ``F(X):-D(X)Since(1/2,3]B(Y), B(X)`` (left sides
  whose variable the right side lacks: split at 0 and evaluated per pair), the stream of ``inf``.
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

from rsp.mtl import parse
from rsp.mtl.engine import Engine

PROGRAMS = {
    "inf": "C(X):-D(X)Since[0,inf)B(X)",
    "bounded": "C(X):-Diamondminus[0,2]B(X)\nF(X):-C(X)Since[0,3]B(X)",
    "open-nested": "F(X):-(Diamondminus[0,2]B(X))Since(1/2,3)B(X)\nG(X):-E(X)Since(1,inf)B(X)",
    "pairs": "C(X):-D(X)Since[0,inf)B(Y), D(X)\nF(X):-D(X)Since(1/2,3]B(Y), B(X)",
}


def _time(k: int, spacing: Fraction):
    t = k * spacing
    return t.numerator if t.denominator == 1 else t


def stream(name: str, facts: int, spacing: Fraction) -> list[tuple]:
    """``facts`` facts of program ``name``'s stream, one time step every ``spacing``."""
    out: list[tuple] = []
    if name in ("inf", "pairs"):
        out.append(("D", ("a",), (0, float("inf"), True, False)))
    k = 0
    while len(out) < facts:
        t = _time(k, spacing)
        out.append(("B", ("a",), (t, t, True, True)))
        if name == "open-nested" and len(out) < facts:
            half = t + spacing / 2
            out.append(("E", ("a",), (t, half.numerator if half.denominator == 1 else half, True, False)))
        k += 1
    return out


def stored(engine: Engine) -> int:
    """The intervals the engine holds now (``stored_intervals()``, or its store for an older rsp)."""
    if hasattr(engine, "stored_intervals"):
        return engine.stored_intervals()
    return sum(len(ivs) for table in engine.store.values() for ivs in table.values())


def measure(name: str, facts: list[tuple], rounds: int) -> tuple[float, int, int, int]:
    """Best seconds over ``rounds``, peak and final stored intervals, and the output facts."""
    program = parse(PROGRAMS[name])
    best = float("inf")
    for _ in range(rounds):
        engine = Engine(program)
        outputs = 0
        started = time.perf_counter()
        for pred, args, iv in facts:
            for _, batch in engine.push(pred, args, iv):
                outputs += len(batch)
        for _, batch in engine.finish():
            outputs += len(batch)
        best = min(best, time.perf_counter() - started)
    return best, engine.peak_intervals, stored(engine), outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="300,3000,30000", help="stream lengths (facts), comma-separated")
    parser.add_argument("--spacings", default="1,1/10,1/100", help="time between timestamps, comma-separated")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="of: " + ", ".join(PROGRAMS))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    spacings = [Fraction(x) for x in args.spacings.split(",")]
    import rsp

    print(f"rsp from {rsp.__path__[0]}; Python {sys.version.split()[0]}; best of {args.rounds}")
    header = f"{'program':<13}{'facts':>8}{'spacing':>9}{'peak stored':>13}{'stored at end':>15}"
    print(header + f"{'outputs':>9}{'wall s':>9}{'µs/fact':>9}")
    for name in args.programs.split(","):
        for spacing in spacings:
            for n in lengths:
                facts = stream(name, n, spacing)
                wall, peak, end, outputs = measure(name, facts, args.rounds)
                row = f"{name:<13}{n:>8,}{float(spacing):>9g}{peak:>13,}{end:>15,}{outputs:>9,}"
                print(row + f"{wall:>9.3f}{wall / n * 1e6:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
