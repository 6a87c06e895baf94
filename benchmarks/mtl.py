"""rsp mtl benchmarks: ShortStop on the Hackathon streams (µs per fact, facts/s, peak RSS of the whole
``rsp mtl`` run), and Algorithm 6's promise (peak stored intervals and RSS when the same stream's
timestamps are 100× denser, for a program without punctual intervals).

    python benchmarks/mtl.py                     # S1 (benchmarks/data/mtl/S1.txt), 3 rounds
    python benchmarks/mtl.py --stream S2=PATH    # another stream too

Each run is a separate ``rsp mtl`` process (so the figures include start-up and parsing), round robin.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "data" / "mtl" / "short_stop.txt"


def _run(program: Path, stream: Path, *extra: str) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) and output lines of one ``rsp mtl`` process."""
    code = (
        "import resource, sys\nfrom rsp.cli import main\nstatus = main(sys.argv[1:])\n"
        "sys.stderr.write(f'RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\nsys.exit(status)"
    )
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, "mtl", str(program), "--stream", str(stream), *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - started
    rss = int(proc.stderr.rsplit("RSS ", 1)[1])
    return wall, rss, len(proc.stdout.splitlines())


def _lines(path: Path) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip())


def shortstop(streams: dict[str, Path], rounds: int) -> None:
    print("ShortStop (rsp mtl, whole process):")
    header = f"{'stream':<8}{'facts':>9}{'wall s':>9}{'µs/fact':>10}{'facts/s':>11}"
    print(header + f"{'peak RSS MiB':>14}{'ShortStop':>11}")
    results: dict[str, list] = {name: [] for name in streams}
    for _ in range(rounds):
        for name, path in streams.items():
            results[name].append(_run(PROGRAM, path, "--output-predicates", "ShortStop"))
    for name, path in streams.items():
        n = _lines(path)
        wall = min(r[0] for r in results[name])
        rss = max(r[1] for r in results[name]) / 1024
        print(
            f"{name:<8}{n:>9,}{wall:>9.2f}{wall / n * 1e6:>10.1f}{n / wall:>11,.0f}{rss:>14.1f}"
            f"{results[name][0][2]:>11,}"
        )


def _density_stream(path: Path, points: int, density: int) -> None:
    """``points`` time units of sensor facts for 50 sensors, ``density`` facts per sensor per unit."""
    with open(path, "w", encoding="utf-8") as out:
        for k in range(points * density):
            t = k / density
            for s in range(50):
                if (k + s) % 7:
                    out.write(f"Hot(s{s})@{t:g}\n")


def density(rounds: int) -> None:
    program_text = "Warm(X):-Diamondminus[0,2]Hot(X)\nAlarm(X):-Boxminus[1,3]Warm(X)\n"
    from rsp.mtl import parse
    from rsp.mtl.engine import Engine
    from rsp.mtl.facts import parse_fact

    assert not parse(program_text).punctual
    print("\nAlgorithm 6's promise: 20 time units, timestamps 1x and 100x denser (no punctual interval):")
    print(f"{'density':<9}{'facts':>10}{'peak stored intervals':>23}")
    with tempfile.TemporaryDirectory() as tmp:
        for dens in (1, 100):
            path = Path(tmp) / f"d{dens}.txt"
            _density_stream(path, 20, dens)
            engine = Engine(parse(program_text))
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    engine.push(*parse_fact(line))
            engine.finish()
            print(f"{dens:<9}{engine.facts_read:>10,}{engine.peak_intervals:>23,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stream", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    streams = {"S1": ROOT / "benchmarks" / "data" / "mtl" / "S1.txt"}
    for item in args.stream:
        name, _, path = item.partition("=")
        streams[name] = Path(path)
    shortstop(streams, args.rounds)
    density(args.rounds)


if __name__ == "__main__":
    main()
