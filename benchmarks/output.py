"""``rsp lars`` with its answers written, whole process, on Laser's micro-benchmarks (issue 15).

    python benchmarks/output.py [--before DIR] [--format jsonl] [--repeat K] [--quick] [--data DIR]

For each of ◇, □, join and cooling (window 80, 800 atoms per time point, 300 time points: the case of
Laser's paper), one subprocess runs ``rsp lars PROGRAM --stream FILE --format jsonl -q`` and writes
its output to a file; the wall time of the whole process (start, parse, evaluation, every line
written) is divided by the stream's atoms. Printed beside it: Laser's ``evaluate()`` with its answers
on this machine kind (its stated figures, µs per atom: 65 / 38 / 192 / 121), ``--format count`` (the
engine without output text), and the least CPython loop (``benchmarks/minimal.py``, window-◇ counts).
With ``--before DIR`` (a worktree of older code: ``git worktree add /tmp/rsp-before-15 HEAD``) the
same commands run from that tree too, in the same round robin, and their outputs are compared byte
for byte with this tree's. Best of ``--repeat`` rounds; timings are reported, never asserted: the exit
status is 1 only when a run fails or two outputs differ.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (a sibling script)

LASER_US = {"diamond": 65.0, "box": 38.0, "join": 192.0, "cooling": 121.0}
"""Laser's evaluate() with its answers, µs per atom, window 80, 800 atoms per time point (issue 15)."""


def _run(cmd: list[str], cwd: Path, out: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(cwd))
    start = time.perf_counter()
    with out.open("wb") as sink:
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=sink, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr.decode()[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="a tree of older code to time in the same round robin")
    parser.add_argument("--format", default="jsonl", choices=("jsonl", "text"))
    parser.add_argument("--scenario", action="append", choices=sorted(LASER_US))
    parser.add_argument("--repeat", type=int, default=3, help="rounds (best kept, default 3)")
    parser.add_argument("--rate", type=int, default=800)
    parser.add_argument("--window", type=int, default=80)
    parser.add_argument("--time-points", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="100 time points, one round")
    parser.add_argument("--data", type=Path, help="keep the streams here (default: a temporary dir)")
    args = parser.parse_args(argv)
    if args.quick:
        args.time_points, args.repeat = 100, 1
    data = args.data or Path(tempfile.mkdtemp(prefix="rsp-output-"))
    scenarios = args.scenario or list(LASER_US)
    cases = {s: generate.generate(s, args.rate, args.time_points, args.window, data) for s in scenarios}
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    best: dict[tuple[str, str], float] = {}

    def keep(key: tuple[str, str], seconds: float) -> None:
        best[key] = min(seconds, best.get(key, seconds))

    python = sys.executable
    for _round in range(args.repeat):
        for name, case in cases.items():
            lars = ["lars", str(case.program), "--stream", str(case.stream), "-q"]
            for label, tree in trees.items():
                cmd = [python, "-m", "rsp", *lars, "--format", args.format]
                keep((name, label), _run(cmd, tree, data / f"{name}.{label}.out"))
            count = [python, "-m", "rsp", *lars, "--format", "count"]
            keep((name, "count"), _run(count, ROOT, data / "count.out"))
            if name == "diamond":
                minimal = [python, str(HERE / "minimal.py"), str(case.stream), "--window", str(args.window)]
                keep((name, "minimal"), _run(minimal, ROOT, data / "minimal.out"))
    differ = [n for n in cases if "before" in trees and not filecmp.cmp(
        data / f"{n}.after.out", data / f"{n}.before.out", shallow=False)]

    def us(name: str, label: str) -> str:
        seconds = best.get((name, label))
        return "-" if seconds is None else f"{seconds * 1e6 / cases[name].atoms:.2f}"

    print(f"rsp lars --format {args.format}, whole process, µs per atom (best of {args.repeat}; "
          f"window {args.window}, {args.rate} atoms/time point, {args.time_points} time points)")
    head = f"{'scenario':<9} {'Laser':>7} {'before':>8} {'after':>8} {'count':>7} {'minimal':>8} " \
           f"{'Laser/after':>12} {'before/after':>13}"
    print(head)
    for name in cases:
        after = best[(name, "after")] * 1e6 / cases[name].atoms
        before = best.get((name, "before"))
        gain = f"{before / best[(name, 'after')]:.1f}x" if before else "-"
        print(f"{name:<9} {LASER_US[name]:>7.0f} {us(name, 'before'):>8} {after:>8.2f} "
              f"{us(name, 'count'):>7} {us(name, 'minimal'):>8} {LASER_US[name] / after:>11.1f}x {gain:>13}")
    if differ:
        print(f"OUTPUTS DIFFER between before and after: {', '.join(differ)}")
    elif "before" in trees:
        print("outputs of before and after: identical, byte for byte")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
