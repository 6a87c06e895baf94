"""Streams for the content-retrieval example (Ticker's scenario B) on the 11 Abilene routers.

    python examples/content-retrieval/generate.py [--setup B1|B2] [--points 40] [--seed 1]

Per time point: requests for items at random routers, routers caching random items, routers whose
quality level moves one step (1..3), and now and then a router seen down. Setup B1: 3 items, one
request per time point, rare down signals; B2: 20 items, three requests per time point, caching twice
as often, more down signals (many more candidate sources, so many more models). One atom per line,
``time atom``, every time point present (a line with the time alone when nothing happens).
"""

from __future__ import annotations

import argparse
import random

ROUTERS = ("atla", "chin", "dnvr", "hstn", "ipls", "kscy", "losa", "nycm", "snva", "sttl", "wash")
SETUPS = {  # items, requests per time point, chance a router caches an item, level changes, down signals
    "B1": (3, 1, 0.15, 0.05, 0.01),
    "B2": (20, 3, 0.30, 0.05, 0.03),
}


def generate(setup: str = "B1", points: int = 40, seed: int = 1) -> list[tuple[int, str, tuple]]:
    """The stream as (time, predicate, arguments)."""
    items, requests, p_cache, p_level, p_down = SETUPS[setup]
    rng = random.Random(seed)
    level = {n: rng.randint(1, 3) for n in ROUTERS}
    out: list[tuple[int, str, tuple]] = [(0, "lev", (n, level[n])) for n in ROUTERS]
    for t in range(points):
        for n in ROUTERS:
            if t > 0 and rng.random() < p_level:
                level[n] = min(3, max(1, level[n] + rng.choice((-1, 1))))
                out.append((t, "lev", (n, level[n])))
            if rng.random() < p_cache:
                out.append((t, "cache", (f"i{rng.randint(1, items)}", n)))
            if rng.random() < p_down:
                out.append((t, "down", (n,)))
        for _ in range(requests):
            out.append((t, "req", (f"i{rng.randint(1, items)}", rng.choice(ROUTERS))))
    return out


def lines(elements: list[tuple[int, str, tuple]], points: int) -> list[str]:
    seen = {t for t, _, _ in elements}
    rows = [f"{t} {pred}({','.join(str(a) for a in args)})" for t, pred, args in elements]
    rows += [str(t) for t in range(points) if t not in seen]
    return sorted(rows, key=lambda row: int(row.split()[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=sorted(SETUPS), default="B1")
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for row in lines(generate(args.setup, args.points, args.seed), args.points):
        print(row)


if __name__ == "__main__":
    main()
