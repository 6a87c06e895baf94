"""Per-tick time of the answer-stream modes (rsp.asp) on Ticker's two scenarios, as in the paper's
evaluation: mode tms, mode clingo (multi-shot) and repeated one-shot clingo solving, for several window
sizes and timeline lengths.

    python benchmarks/ticker.py [--scenarios A1,A2,B1,B2] [--windows 10,50,100] [--points 200] [--seed 1]

Scenarios (examples/caching and examples/content-retrieval, with their generators): A1 the caching
strategy with time windows, A2 with tuple windows; B1 and B2 content retrieval on the 11 Abilene routers
(light and heavy load; several models). The programs' windows are scaled to the window size w. Prints
µs per tick (median over the ticks after the first window) and the ratio of one-shot solving to each
mode; all measured in the same process run, the three modes round robin per scenario and window size.
Larger runs: ``--windows 300,1000,3000 --points 3000``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

from rsp.asp import parse
from rsp.asp.clingo_mode import ClingoReasoner
from rsp.asp.tms import TmsReasoner
from rsp.io.atoms import AtomStream

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _generator(folder: str):
    spec = importlib.util.spec_from_file_location(f"{folder}_generate", EXAMPLES / folder / "generate.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def program(scenario: str, w: int) -> str:
    """The scenario's program with its windows scaled to w."""
    if scenario == "A1":
        text = (EXAMPLES / "caching" / "caching.lars").read_text()
        return text.replace("[3]", f"[{w}]").replace("[6]", f"[{2 * w}]")
    if scenario == "A2":
        text = (EXAMPLES / "caching" / "caching-tuple.lars").read_text()
        return text.replace("[#4]", f"[#{w + 1}]").replace("[#7]", f"[#{2 * w + 1}]").replace("[3]", f"[{w}]")
    return (EXAMPLES / "content-retrieval" / "content.lars").read_text().replace("[10]", f"[{w}]")


def ticks(scenario: str, w: int, points: int, seed: int) -> list[list[tuple[str, tuple]]]:
    if scenario in ("A1", "A2"):
        elements = _generator("caching").generate(points, w, seed)
    else:
        elements = _generator("content-retrieval").generate(scenario, points, seed)
    stream = AtomStream.from_elements(elements)
    by_time: dict[int, list] = {t: list(batch) for t, batch in stream.batches()}
    return [by_time.get(t, []) for t in range(points)]


def per_tick(solver, batches, skip: int) -> float:
    times = []
    for t, batch in enumerate(batches):
        start = time.perf_counter()
        solver.step(t, batch)
        times.append(time.perf_counter() - start)
    return statistics.median(times[skip:]) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="A1,A2,B1,B2")
    parser.add_argument("--windows", default="10,50,100")
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--modes", default="tms,clingo,one-shot")
    args = parser.parse_args()
    modes = args.modes.split(",")
    ratios = ("one-shot/tms", "one-shot/clingo")
    header = ("scenario", "window", "points", *(f"{m} µs/tick" for m in modes), *ratios)
    print(" ".join(f"{h:>16}" for h in header))
    for scenario in args.scenarios.split(","):
        for w in (int(x) for x in args.windows.split(",")):
            prepared = parse(program(scenario, w))
            batches = ticks(scenario, w, args.points, args.seed)
            skip = min(w, args.points // 2)
            makers = {
                "tms": lambda p=prepared: TmsReasoner(p, 0, 1),
                "clingo": lambda p=prepared: ClingoReasoner(p, 0, 1),
                "one-shot": lambda p=prepared: ClingoReasoner(p, 0, 1, incremental=False),
            }
            got = {m: per_tick(makers[m](), batches, skip) for m in modes}
            ratios = [
                f"{got['one-shot'] / got[m]:.1f}" if "one-shot" in got and m in got else "-"
                for m in ("tms", "clingo")
            ]
            cells = [scenario, str(w), str(args.points), *(f"{got[m]:.0f}" for m in modes), *ratios]
            print(" ".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
