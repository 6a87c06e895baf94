"""Per-tick time of the answer-stream modes (rsp.asp) in the spirit of Ticker's evaluation: mode tms,
mode clingo (multi-shot) and repeated one-shot clingo solving, for several window sizes, on a
content-retrieval program with choices (each requested item is served from the cache or fetched, for as
long as it was requested in the window; a node seen down in the window serves nothing).

    python benchmarks/ticker.py [--points 300] [--windows 10,50,100] [--seed 1]

Prints µs per tick (median over the ticks after the first window) and the ratio to one-shot solving,
all modes measured in the same process run, round robin per window size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from rsp.asp import parse
from rsp.asp.clingo_mode import ClingoReasoner
from rsp.asp.tms import TmsReasoner

PROGRAM = """
here(I) :- [{w}] <> req(I), not fetch(I).
fetch(I) :- [{w}] <> req(I), not here(I).
served(I,N) :- here(I), [{w}] <> cached(I,N), not [{w}] <> down(N).
lost(I) :- here(I), not ok(I).
ok(I) :- served(I,N).
"""


def stream(points: int, seed: int) -> list[list[tuple[str, tuple]]]:
    """Per tick: a request for one of 20 items, now and then a cache entry or a node down."""
    rng = random.Random(seed)
    ticks = []
    for _ in range(points):
        batch = [("req", (f"i{rng.randrange(20)}",))]
        if rng.random() < 0.5:
            batch.append(("cached", (f"i{rng.randrange(20)}", f"n{rng.randrange(4)}")))
        if rng.random() < 0.05:
            batch.append(("down", (f"n{rng.randrange(4)}",)))
        ticks.append(batch)
    return ticks


def per_tick(make, ticks, skip: int) -> float:
    solver = make()
    times = []
    for t, batch in enumerate(ticks):
        start = time.perf_counter()
        solver.step(t, batch)
        times.append(time.perf_counter() - start)
    return statistics.median(times[skip:]) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=300)
    parser.add_argument("--windows", default="10,50,100")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    ticks = stream(args.points, args.seed)
    header = ("window", "tms µs/tick", "clingo µs/tick", "one-shot µs/tick", "one-shot/tms")
    print(" ".join(f"{h:>{n}}" for h, n in zip(header, (6, 12, 15, 17, 13), strict=True)))
    for w in (int(x) for x in args.windows.split(",")):
        program = parse(PROGRAM.format(w=w))
        skip = min(w, args.points // 2)
        makers = {
            "tms": lambda p=program: TmsReasoner(p, 0, 1),
            "clingo": lambda p=program: ClingoReasoner(p, 0, 1),
            "one-shot": lambda p=program: ClingoReasoner(p, 0, 1, incremental=False),
        }
        got = {name: per_tick(make, ticks, skip) for name, make in makers.items()}
        ratio = got["one-shot"] / got["tms"]
        print(f"{w:>6} {got['tms']:>12.0f} {got['clingo']:>15.0f} {got['one-shot']:>17.0f} {ratio:>13.1f}")


if __name__ == "__main__":
    main()
