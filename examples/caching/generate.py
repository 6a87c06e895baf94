"""Streams for the caching-strategy example (Ticker's scenario A: setup A1 reads them with time windows,
caching.lars, A2 with tuple windows, caching-tuple.lars).

    python examples/caching/generate.py [--points 60] [--window 3] [--seed 1]

One ``alpha(V)`` reading per time point (how often items are requested again). As in Ticker's generator
the traffic keeps a regime for twice the window size, then draws a new one: high (V in 18..30), middling
(12..17), low (0..11) or unsettled (any value); while it is low, ``rtm50`` (real-time traffic) is seen
now and then. One atom per line, ``time atom``.
"""

from __future__ import annotations

import argparse
import random

REGIMES = {"high": (18, 30), "mid": (12, 17), "low": (0, 11), "random": (0, 30)}


def generate(points: int = 60, window: int = 3, seed: int = 1) -> list[tuple[int, str, tuple]]:
    """The stream as (time, predicate, arguments)."""
    rng = random.Random(seed)
    regime, until = "random", 0
    out: list[tuple[int, str, tuple]] = []
    for t in range(points):
        if t >= until:
            regime, until = rng.choice(sorted(REGIMES)), t + 2 * window
        low, high = REGIMES[regime]
        out.append((t, "alpha", (rng.randint(low, high),)))
        if regime == "low" and rng.random() < 2 / window:
            out.append((t, "rtm50", ()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=60)
    parser.add_argument("--window", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for t, pred, values in generate(args.points, args.window, args.seed):
        print(f"{t} {pred}({','.join(str(v) for v in values)})" if values else f"{t} {pred}")


if __name__ == "__main__":
    main()
