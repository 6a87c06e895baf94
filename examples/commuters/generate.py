"""Generate the stream of the commuters example (deterministic for a given seed).

Trains run along Como - Monza - Milano Porta Garibaldi - Milano Centrale (and back). While a train
stands at a platform it reports ``<train> ex:isIn <platform>`` every 5 s; a commuter on board pings
``<commuter> ex:onBoard <train>`` every 10 s (a ticket check). Times are in ms.

    python examples/commuters/generate.py > examples/commuters/stream.nt
"""

from __future__ import annotations

import argparse
import random
import sys

EX = "http://example.org/t#"
STATIONS = ["comoSG", "monzaStation", "garibaldi", "centrale"]
DWELL, TRAVEL = 20, 15  # seconds at a station, between stations


def timetable(start: int, backwards: bool, platform: int) -> list[tuple[str, int, int]]:
    """(platform, arrival s, departure s) for one run along the line."""
    stops = list(reversed(STATIONS)) if backwards else STATIONS
    rows, t = [], start
    for station in stops:
        rows.append((f"{station}-{platform}", t, t + DWELL))
        t += DWELL + TRAVEL
    return rows


def simulate(seed: int, commuters: int) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    trains = {
        "r11": timetable(0, False, 1),
        "r12": timetable(30, False, 1),
        "r21": timetable(5, True, 2),
    }
    rows = []
    for train, stops in trains.items():
        for platform, arrive, depart in stops:
            for second in range(arrive, depart, 5):
                rows.append((second * 1000 + 10, f"<{EX}{train}> <{EX}isIn> <{EX}{platform}> ."))
    names = sorted(trains)
    for number in range(1, commuters + 1):
        train = rng.choice(names)
        stops = trains[train]
        first = rng.randrange(0, len(stops) - 1)
        last = rng.randrange(first + 1, len(stops))
        board, leave = stops[first][1], stops[last][1]  # boards at one station, leaves at a later one
        offset = rng.randrange(0, 10)
        for second in range(board + offset, leave, 10):
            rows.append(
                (second * 1000 + 500 + number, f"<{EX}commuter{number}> <{EX}onBoard> <{EX}{train}> .")
            )
    return sorted(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=2010)
    parser.add_argument("--commuters", type=int, default=15)
    args = parser.parse_args(argv)
    for time, triple in simulate(args.seed, args.commuters):
        sys.stdout.write(f"{triple} # {time}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
