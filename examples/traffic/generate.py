"""Generate the vehicle-position stream of the traffic example (deterministic for a given seed).

Vehicles drive east along three lanes of a street with a traffic light at x = 100. Every second each
vehicle on the street reports its position as two N-Triples lines, ``tr:x`` and ``tr:y`` (metres),
ending in the time point (seconds) as a time comment. A vehicle waits at a red light, now and then
hesitates for a second or two in traffic, and a delivery van parks for a while: standing still for
a short time or a long time, which is what the short-stops program tells apart.

    python examples/traffic/generate.py > examples/traffic/positions.nt
    python examples/traffic/generate.py --seed 7 --vehicles 20 --seconds 300 > big.nt
"""

from __future__ import annotations

import argparse
import random
import sys

TR = "http://example.org/traffic#"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
LIGHT = 100  # x of the stop line
CYCLE, RED = 20, 8  # the light is red for the first RED seconds of every CYCLE
END = 200  # vehicles leave the street here


def simulate(seed: int, vehicles: int, seconds: int) -> list[tuple[int, str, int, int]]:
    """(time, vehicle, x, y) for every vehicle on the street at every second, in time order."""
    rng = random.Random(seed)
    cars = []
    for number in range(1, vehicles + 1):
        name = "van" if number == vehicles else f"car{number}"
        cars.append(
            {
                "name": name,
                "enter": rng.randrange(0, max(1, seconds // 2)),
                "x": rng.randrange(0, 30),
                "y": 4 * rng.randrange(1, 4),
                "speed": rng.choice([4, 5, 6, 8]),
                "hold": 0,
                "parked": False,
            }
        )
    rows = []
    for t in range(seconds):
        for car in cars:
            if t < car["enter"] or car["x"] > END:
                continue
            rows.append((t, car["name"], car["x"], car["y"]))
            if car["hold"] > 0:  # hesitating or parked: stay where it is
                car["hold"] -= 1
                continue
            if car["name"] == "van" and not car["parked"] and car["x"] >= 140:
                car["parked"], car["hold"] = True, 11  # a delivery: parked for 12 seconds
                continue
            red = t % CYCLE < RED
            ahead = car["x"] + car["speed"]
            if red and car["x"] < LIGHT <= ahead:
                car["x"] = LIGHT - 1  # up to the stop line, then wait for green
                continue
            if rng.random() < 0.04:
                car["hold"] = rng.randrange(0, 2)  # a short hesitation in traffic
                continue
            car["x"] = ahead
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--vehicles", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args(argv)
    out = sys.stdout
    for t, name, x, y in simulate(args.seed, args.vehicles, args.seconds):
        vehicle = f"<{TR}{name}>"
        out.write(f'{vehicle} <{TR}x> "{x}"^^{INT} . # {t}\n')
        out.write(f'{vehicle} <{TR}y> "{y}"^^{INT} . # {t}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main())
