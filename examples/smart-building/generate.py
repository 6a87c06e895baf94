"""Write the heat-detector stream of the smart-building example (no randomness: the schedule below).

Every second in which a detector senses its space above the comfort limit, it streams one triple,
``<detector> sn:detects sn:overheating`` (ACME detectors say ``acme:raises`` instead), at a time in ms.

    python examples/smart-building/generate.py > examples/smart-building/detections.nt
"""

from __future__ import annotations

import sys

SN = "http://example.org/sensors#"
B = "http://example.org/building2#"
ACME = "http://example.org/acme#"

# detector -> (property it streams, the seconds in which it senses overheating)
SCHEDULE = {
    "hd101": (f"{SN}detects", [range(12, 20)]),  # office 101: 8 s, never 10 in a row
    "hd102": (f"{SN}detects", [range(30, 53)]),  # office 102: hot for 23 s
    "hd201": (f"{ACME}raises", [range(15, 45)]),  # the server room: hot for 30 s
    "hd301": (f"{ACME}raises", [range(22, 34), range(35, 48)]),  # lab 3: one cool second at 34
    "hd401": (f"{SN}detects", [range(5, 41)]),  # the corridor: hot, but a corridor is not a room
}


def elements() -> list[tuple[int, str]]:
    rows = []
    for index, (detector, (prop, spans)) in enumerate(SCHEDULE.items()):
        for span in spans:
            for second in span:
                rows.append((second * 1000 + 150 * index, f"<{B}{detector}> <{prop}> <{SN}overheating> ."))
    return sorted(rows)


def main() -> int:
    for time, triple in elements():
        sys.stdout.write(f"{triple} # {time}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
