"""rsp mtl benchmarks against MeTeoR in the same run: ShortStop on the Hackathon streams (µs per fact,
facts/s, peak RSS of the whole process: ``rsp mtl``, MeTeoR's batch materialisation and MeTeoR-Str's
stream reasoning, benchmarks/meteor.py), their answers compared, and Algorithm 6's promise (peak stored
intervals and RSS when the same stream's timestamps are 100× denser, for a program without punctual
intervals).

    python benchmarks/mtl.py                     # S1 (benchmarks/data/mtl/S1.txt), 3 rounds
    python benchmarks/mtl.py --stream S2=PATH/S2.txt   # another stream too (Hackathon S2, not vendored)
    python benchmarks/mtl.py --no-meteor         # rsp mtl alone
    python benchmarks/mtl.py --before /tmp/rsp-before   # also an earlier rsp (its ``rsp`` package's parent)

``--before DIR`` runs ``rsp mtl`` a second time from the ``rsp`` package in DIR (e.g. ``git archive
REV rsp | tar -x -C DIR``) in the same rounds, so that before/after figures share the machine's load.

Each run is a separate process (so the figures include start-up and parsing), round robin: every round
runs each system once on each stream. MeTeoR-Str is slow, so it runs ``--str-rounds`` times (default 1).
MeTeoR is PyPI ``meteor-reasoner`` (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "data" / "mtl" / "short_stop.txt"
METEOR = Path(__file__).resolve().parent / "meteor.py"
_RSS = (
    "import resource, sys\nfrom rsp.cli import main\nstatus = main(sys.argv[1:])\nsys.stdout.flush()\n"
    "sys.stderr.write(f'RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\nsys.exit(status)"
)


def _process(argv: list[str], before: str | None = None) -> tuple[float, int, list[str]]:
    """Wall seconds, peak RSS (KiB) and output lines of one process that ends by printing ``RSS n``
    (with ``before``: importing ``rsp`` from that directory instead of this checkout)."""
    env = cwd = None
    if before is not None:
        env = {**os.environ, "PYTHONPATH": before}
        cwd = before  # ``python -c`` puts the working directory first on sys.path
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=True, env=env, cwd=cwd)
    wall = time.perf_counter() - started
    rss = int(proc.stderr.rsplit("RSS ", 1)[1])
    return wall, rss, proc.stdout.splitlines()


def _run(program: Path, stream: Path, *extra: str, before: str | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) and output lines of one ``rsp mtl`` process."""
    wall, rss, lines = _process(
        [sys.executable, "-c", _RSS, "mtl", str(program), "--stream", str(stream), *extra], before
    )
    return wall, rss, len(lines)


def _lines(path: Path) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip())


def _systems(meteor: bool, before: str | None = None) -> dict[str, callable]:
    def rsp(path: Path, before: str | None = None) -> tuple[float, int, list[str]]:
        argv = [sys.executable, "-c", _RSS, "mtl", str(PROGRAM), "--stream", str(path)]
        return _process([*argv, "--output-predicates", "ShortStop"], before)

    systems = {"rsp mtl": rsp}
    if before is not None:
        systems["rsp before"] = lambda path: rsp(path, before)
    if meteor:
        systems["MeTeoR batch"] = lambda path: _process(
            [sys.executable, str(METEOR), "batch", str(PROGRAM), str(path), "--target", "ShortStop"]
        )
        systems["MeTeoR-Str"] = lambda path: _process(
            [sys.executable, str(METEOR), "stream", str(PROGRAM), str(path), "--target", "ShortStop"]
        )
    return systems


_MEMBER = re.compile(r"^(.*)@\[(\d+),(\d+)\]$")


def _points_of(intervals: list[str]) -> set[str]:
    """``P(a)@t`` for every integer t of punctual-or-integer closed intervals ``P(a)@[l,r]``."""
    out = set()
    for line in intervals:
        m = _MEMBER.match(line)
        if m is None:
            raise ValueError(f"not an integer closed interval: {line}")
        out.update(f"{m.group(1)}@{t}" for t in range(int(m.group(2)), int(m.group(3)) + 1))
    return out


def shortstop(
    streams: dict[str, Path], rounds: int, str_rounds: int, meteor: bool, before: str | None = None
) -> None:
    systems = _systems(meteor, before)
    results: dict[tuple[str, str], list] = {}
    for k in range(rounds):
        for name, path in streams.items():
            for system, call in systems.items():
                if system == "MeTeoR-Str" and k >= str_rounds:
                    continue
                results.setdefault((name, system), []).append(call(path))
    print(f"ShortStop, whole process, best of {rounds} round(s) (MeTeoR-Str: {min(rounds, str_rounds)}):")
    header = f"{'stream':<8}{'system':<14}{'facts':>9}{'wall s':>9}{'µs/fact':>10}{'facts/s':>11}"
    print(header + f"{'peak RSS MiB':>14}{'answers':>9}{'rsp faster':>12}")
    for name, path in streams.items():
        n = _lines(path)
        rsp_wall = min(r[0] for r in results[(name, "rsp mtl")])
        for system in systems:
            runs = results[(name, system)]
            wall = min(r[0] for r in runs)
            rss = max(r[1] for r in runs) / 1024
            ratio = f"{wall / rsp_wall:>11.1f}x" if system != "rsp mtl" else f"{'':>12}"
            row = f"{name:<8}{system:<14}{n:>9,}{wall:>9.2f}{wall / n * 1e6:>10.1f}{n / wall:>11,.0f}"
            print(row + f"{rss:>14.1f}{len(runs[0][2]):>9,}{ratio}")
        if meteor:
            _compare(name, results, path)


def _compare(name: str, results: dict, path: Path) -> None:
    """rsp's maximal intervals against MeTeoR's materialisation, and rsp's intervals at the data's time
    points against MeTeoR-Str's streamed points."""
    ours = sorted(results[(name, "rsp mtl")][0][2])
    batch = sorted(results[(name, "MeTeoR batch")][0][2])
    streamed = set(results[(name, "MeTeoR-Str")][0][2])
    data_points = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                data_points.add(line.strip().rsplit("@", 1)[1].strip("[]").split(",")[0])
    at_points = {p for p in _points_of(ours) if p.rsplit("@", 1)[1] in data_points}
    print(
        f"  {name}: rsp's ShortStop intervals {'equal' if ours == batch else 'DIFFER FROM'} MeTeoR batch's "
        f"({len(ours):,} / {len(batch):,}); at the data's time points "
        f"{'equal' if at_points == streamed else 'DIFFER FROM'} MeTeoR-Str's "
        f"({len(at_points):,} / {len(streamed):,})"
    )


def _density_stream(path: Path, points: int, density: int) -> None:
    """``points`` time units of sensor facts for 50 sensors, ``density`` facts per sensor per unit."""
    with open(path, "w", encoding="utf-8") as out:
        for k in range(points * density):
            t = k / density
            for s in range(50):
                if (k + s) % 7:
                    out.write(f"Hot(s{s})@{t:g}\n")


def density(rounds: int, before: str | None = None) -> None:
    program_text = "Warm(X):-Diamondminus[0,2]Hot(X)\nAlarm(X):-Boxminus[1,3]Warm(X)\n"
    from rsp.mtl import parse
    from rsp.mtl.engine import Engine
    from rsp.mtl.facts import parse_fact

    assert not parse(program_text).punctual
    print("\nAlgorithm 6's promise: 20 time units, timestamps 1x and 100x denser (no punctual interval):")
    header = f"{'density':<9}{'facts':>10}{'peak stored intervals':>23}{'wall s':>9}{'µs/fact':>9}"
    print(header + f"{'peak RSS MiB':>14}" + (f"{'before s':>10}{'before MiB':>12}" if before else ""))
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "warm.txt"
        program.write_text(program_text)
        for dens in (1, 100):
            path = Path(tmp) / f"d{dens}.txt"
            _density_stream(path, 20, dens)
            engine = Engine(parse(program_text))
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    engine.push(*parse_fact(line))
            engine.finish()
            runs, old = [], []
            for _ in range(rounds):
                runs.append(_run(program, path, "--format", "count"))
                if before:
                    old.append(_run(program, path, "--format", "count", before=before))
            wall, rss = min(r[0] for r in runs), max(r[1] for r in runs) / 1024
            n = engine.facts_read
            row = f"{dens:<9}{n:>10,}{engine.peak_intervals:>23,}{wall:>9.2f}{wall / n * 1e6:>9.1f}"
            row += f"{rss:>14.1f}"
            if before:
                row += f"{min(r[0] for r in old):>10.2f}{max(r[1] for r in old) / 1024:>12.1f}"
            print(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stream", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--str-rounds", type=int, default=1, help="rounds of MeTeoR-Str (slow)")
    parser.add_argument("--no-meteor", action="store_true", help="rsp mtl alone")
    parser.add_argument("--no-density", action="store_true", help="skip the density check")
    parser.add_argument("--before", metavar="DIR", help="also run the rsp package found in DIR")
    args = parser.parse_args()
    streams = {"S1": ROOT / "benchmarks" / "data" / "mtl" / "S1.txt"}
    for item in args.stream:
        name, _, path = item.partition("=")
        streams[name] = Path(path).resolve()
    before = str(Path(args.before).resolve()) if args.before else None
    shortstop(streams, args.rounds, args.str_rounds, not args.no_meteor, before)
    if not args.no_density:
        density(args.rounds, before)


if __name__ == "__main__":
    main()
