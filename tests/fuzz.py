"""``make fuzz MINUTES=30``: run the generated differential tests with fresh random cases, round after
round, until the time is up; every disagreement found is saved, shrunk, as a golden case.

Each round is one pytest run of the tests marked ``generated`` under the Hypothesis profile ``fuzz``
(fresh seeds) with ``RSP_EXAMPLES`` cases per test: 600 in the first round, so that every generated test
runs even on a slow machine, then as many as fit the time left (measured on the round before). A failing test leaves its shrunk case in a pending
folder (tests/support/fuzzing.py); after the round it is moved to the golden folder the test named, as
``fuzz-<hash>``, where ``make test`` picks it up. A failure that leaves no golden case (a test without
``saved_on_failure``) is printed with the case Hypothesis found, and the round's whole pytest report is
kept in a temporary file whose path is printed. The exit code is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_ROUND = 600
"""Cases per test in the first round (twice make test's): every generated test runs at least once."""
MAX_EXAMPLES = 20_000


def _collect(pending_root: Path) -> list[Path]:
    """Move every pending case to its golden folder; returns the new golden case folders."""
    saved = []
    for pending in sorted(p for p in pending_root.iterdir() if p.is_dir()):
        files = sorted(f for f in pending.iterdir() if not f.name.startswith("."))
        if not files:
            continue
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        golden_root = Path((pending / ".golden-root").read_text(encoding="utf-8"))
        target = golden_root / f"fuzz-{digest.hexdigest()[:10]}"
        error = (pending / ".error").read_text(encoding="utf-8").strip()
        if not target.exists():
            target.mkdir(parents=True)
            for f in files:
                shutil.copy(f, target / f.name)
            (target / "SOURCE").write_text(
                f"Found by make fuzz ({pending.name}), shrunk by Hypothesis.\nFailure: {error}\n",
                encoding="utf-8",
            )
            saved.append(target)
            shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
            print(f"  disagreement saved: {shown}\n    {error.splitlines()[-1]}")
        shutil.rmtree(pending)
    return saved


def failing_cases(lines: list[str], limit: int = 30) -> list[str]:
    """The generated cases of a pytest report's failures, as Hypothesis prints them: from "Falsifying
    example" or "Failing test case" on, while the lines are the failure's (``E`` lines), up to its
    ``@reproduce_failure`` line if any, at most ``limit`` lines each. What a failure that left no golden
    case needs to be replayed."""
    out: list[str] = []
    taking = 0
    for line in lines:
        if "Falsifying example" in line or "Failing test case" in line:
            taking = limit
        elif taking and not line.startswith("E "):
            taking = 0
        if taking:
            out.append(line)
            taking -= 1
            if "reproduce_failure" in line:
                taking = 0
    return out


def next_examples(examples: int, took: float, left: float) -> int | None:
    """Cases per test for the next round: as many as fit ``left`` seconds (with a margin), given that a
    round of ``examples`` took ``took`` seconds; None when fewer than half a first round would fit."""
    fit = int(examples * 0.85 * left / max(took, 1.0))
    return None if fit < FIRST_ROUND // 2 else min(fit, MAX_EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=30.0, help="total time to fuzz (default 30)")
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        help="cases per test per round (default: 600 in the first round, then as many as fit the time left)",
    )
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (e.g. a test file)")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.minutes * 60
    pending_root = Path(tempfile.mkdtemp(prefix="rsp-fuzz-"))
    examples = args.examples or FIRST_ROUND
    env = dict(os.environ, RSP_HYPOTHESIS_PROFILE="fuzz", RSP_FUZZ_DIR=str(pending_root))
    command = [sys.executable, "-m", "pytest", "-q", "-rf", "-m", "generated", "-p", "no:cacheprovider"]
    command += args.pytest_args or ["tests"]
    saved: list[Path] = []
    failed: list[str] = []  # failures that left no golden case (a test without saved_on_failure)
    rounds = 0
    try:
        while time.monotonic() < deadline - 10:
            rounds += 1
            started = time.monotonic()
            left = deadline - started
            print(
                f"== fuzz round {rounds}: {examples} cases per test, {left / 60:.1f} min left",
                flush=True,
            )
            env["RSP_EXAMPLES"] = str(examples)
            try:
                done = subprocess.run(
                    command, cwd=ROOT, env=env, timeout=left, capture_output=True, text=True
                )
                lines = done.stdout.strip().splitlines()
                print(f"  {(lines[-1:] or ['(no output)'])[0]}", flush=True)
            except subprocess.TimeoutExpired:
                print("  time is up (round cut short: not every generated test ran)", flush=True)
                lines, done = [], None
            found = _collect(pending_root)
            saved += found
            if done is not None and done.returncode != 0 and not found:
                failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))] or lines[-20:]
                failed += failures
                print("\n".join(f"  {line}" for line in failures), flush=True)
                print("\n".join(f"    {line}" for line in failing_cases(lines)), flush=True)
                report = Path(tempfile.gettempdir()) / f"rsp-fuzz-round-{rounds}-{os.getpid()}.txt"
                report.write_text(done.stdout, encoding="utf-8")
                print(f"  the round's whole report: {report}", flush=True)
            if done is not None and args.examples is None:
                # the next round: as many cases as fit the time left (a round's time grows with them)
                examples = next_examples(examples, time.monotonic() - started, deadline - time.monotonic())
                if examples is None:
                    break  # too little time left for a round that reaches every test
    finally:
        shutil.rmtree(pending_root, ignore_errors=True)
    print(f"== {rounds} round(s); {len(saved)} disagreement(s) saved as golden cases", end="")
    print(f", {len(failed)} other failure(s) (see above)" if failed else "")
    return 1 if saved or failed else 0


if __name__ == "__main__":
    sys.exit(main())
