"""Stream and program generators for Laser's micro-benchmarks (see ``benchmarks/README.md``).

Every scenario is a LARS program (a function of the window size ``n``) plus a seeded stream generator
that writes ``<time> <atom>`` lines for time points ``0 .. T-1`` at ``R`` atoms per time point. Data is
generated on demand into a directory (a temporary one by default) and never committed::

    python benchmarks/generate.py --scenario diamond --rate 800 --time-points 300 --window 80 --dir /tmp/b

The scenarios follow the micro-benchmarks of Laser (Bazoobandi, Beck, Urbani: "Expressive Stream
Reasoning with Laser", ISWC 2017; their ``eval.py``): window-◇, window-□, a join, many rules and the
cooling system.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

RULE_COUNT = 100
"""Number of rules (and stream predicates) of the ``rules`` scenario."""


# --- programs ---------------------------------------------------------------------------------------


def diamond_program(n: int) -> str:
    """Window-◇: every atom of the window is an answer."""
    return f"q(A,B) :- [{n}] <> p(A,B).\n"


def box_program(n: int) -> str:
    """Window-□: the atoms present at every time point of the window."""
    return f"q(A) :- [{n}] [] p(A).\n"


def join_program(n: int) -> str:
    """A two-atom join over the same window (paths of length two)."""
    return f"q(A,C) :- [{n}] <> p(A,B), [{n}] <> p(B,C).\n"


def rules_program(n: int, count: int = RULE_COUNT) -> str:
    """Many independent window-◇ rules, one per stream predicate ``pK``."""
    return "".join(f"q{k}(A,B) :- [{n}] <> p{k}(A,B).\n" for k in range(count))


def cooling_program(n: int) -> str:
    """The cooling-system program of Laser's evaluation, written in ``.lars`` syntax.

    Transcribed from Laser's ``eval.py`` (``evalCoolingSystem``): temperatures of 100 and more are
    steam, 1 to 100 (exclusive) liquid; ``alarm``/``normal`` hold when the whole window is steam/liquid;
    ``veryHot(T)``/``veryCold(T)`` name the time points with extreme readings; ``freeze`` holds when
    neither ``alarm`` nor ``normal`` does.
    """
    w = f"[{n}]"
    return (
        f"@T steam(V) :- {w} @T temp(V), V >= 100.\n"
        f"@T liquid(V) :- {w} @T temp(V), V < 100, V >= 1.\n"
        f"@T isSteam :- {w} @T steam(V).\n"
        f"@T isLiquid :- {w} @T liquid(V).\n"
        f"alarm :- {w} [] isSteam.\n"
        f"normal :- {w} [] isLiquid.\n"
        f"veryHot(T) :- {w} @T steam(V), V >= 150.\n"
        f"veryCold(T) :- {w} @T liquid(V), V = 1.\n"
        "freeze :- not alarm, not normal.\n"
    )


# --- streams ----------------------------------------------------------------------------------------
# Each generator yields, per time point, the list of atom texts at that time point (in arrival order).

Batches = Iterator[list[str]]


def diamond_stream(rate: int, time_points: int, window: int, seed: int) -> Batches:
    """Unique atoms ``p(aI,bI)``: I counts every atom of the stream (as Laser's RDFStream1)."""
    for t in range(time_points):
        base = t * rate
        yield [f"p(a{i},b{i})" for i in range(base, base + rate)]


def box_pool_size(rate: int) -> int:
    """Size of the fixed pool the □ stream draws from: ``rate`` atoms are about 90% of it."""
    return max(rate, round(rate / 0.9))


def box_stream(rate: int, time_points: int, window: int, seed: int) -> Batches:
    """``rate`` atoms ``p(cK)`` per time point, drawn from a fixed pool of ``rate/0.9`` constants.

    The first ``rate // 10`` pool atoms (the core) are present at every time point, so □ holds for them
    at every window size; the rest of each time point is a seeded random sample of the remaining pool, so
    □ also holds, for small windows, for some atoms that happened to be drawn at every point.
    """
    rng = random.Random(seed)
    pool = [f"p(c{k})" for k in range(box_pool_size(rate))]
    core_size = rate // 10
    core, rest = pool[:core_size], pool[core_size:]
    for _ in range(time_points):
        drawn = rng.sample(rest, rate - core_size)
        batch = core + drawn
        rng.shuffle(batch)
        yield batch


def join_domain(rate: int, window: int) -> int:
    """Number of constants of the join stream: ``2 * rate * (window + 1)``.

    With ``W = rate * (window + 1)`` atoms in the window over ``D`` constants the join has about
    ``W * W / D`` answers, so this domain keeps the output near ``W / 2``: it grows linearly with the
    window instead of quadratically (a fixed domain of ``2 * rate`` constants would make the join
    nearly complete: millions of answers per time point at window 80).
    """
    return 2 * rate * (window + 1)


def join_stream(rate: int, time_points: int, window: int, seed: int) -> Batches:
    """``rate`` distinct random atoms ``p(cX,cY)`` per time point over :func:`join_domain` constants."""
    rng = random.Random(seed)
    domain = join_domain(rate, window)
    randrange = rng.randrange
    for _ in range(time_points):
        seen: dict[str, None] = {}
        while len(seen) < rate:
            seen[f"p(c{randrange(domain)},c{randrange(domain)})"] = None
        yield list(seen)


def rules_stream(rate: int, time_points: int, window: int, seed: int) -> Batches:
    """Unique atoms ``pK(aI,bI)`` spread round-robin over the predicates ``p0 .. p99``."""
    for t in range(time_points):
        base = t * rate
        yield [f"p{i % RULE_COUNT}(a{i},b{i})" for i in range(base, base + rate)]


TEMP_STEPS = 20001
"""Temperatures are the decimals 0.00 .. 200.00 (as Laser's readings, random in 0 .. 200)."""


def _temperature(k: int) -> str:
    return f"{k // 100}.{k % 100:02d}"


def cooling_stream(rate: int, time_points: int, window: int, seed: int) -> Batches:
    """``rate`` readings ``temp(V)`` per time point, V uniformly random in [0, 200] with two decimals.

    Laser draws integer readings in 0 .. 200 and keeps duplicates apart with a row counter; a stream
    file is a set per time point, so readings here are decimals drawn without replacement, keeping all
    ``rate`` atoms of a time point distinct (about half are steam, 1 in 20001 is exactly 1).
    """
    rng = random.Random(seed)
    for _ in range(time_points):
        if rate <= TEMP_STEPS:
            values = rng.sample(range(TEMP_STEPS), rate)
        else:
            values = [rng.randrange(TEMP_STEPS) for _ in range(rate)]
        yield [f"temp({_temperature(k)})" for k in values]


# --- scenarios --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A benchmark scenario: its program for a window size and its stream generator."""

    name: str
    description: str
    program: Callable[[int], str]
    stream: Callable[[int, int, int, int], Batches]
    stream_depends_on_window: bool = False


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("diamond", "q(A,B) :- [n] <> p(A,B); unique atoms", diamond_program, diamond_stream),
        Scenario("box", "q(A) :- [n] [] p(A); ~90% of a fixed pool per time point", box_program, box_stream),
        Scenario(
            "join",
            "q(A,C) :- [n] <> p(A,B), [n] <> p(B,C); random atoms over 2*R*(n+1) constants",
            join_program,
            join_stream,
            stream_depends_on_window=True,
        ),
        Scenario("rules", f"{RULE_COUNT} rules qK(A,B) :- [n] <> pK(A,B); unique atoms", rules_program,
                 rules_stream),
        Scenario("cooling", "Laser's cooling system (9 rules, @, [], not); temp(V) readings",
                 cooling_program, cooling_stream),
    )
}


def write_stream(batches: Batches, path: Path) -> int:
    """Write ``<time> <atom>`` lines (a bare time line for an empty time point); return the atom count."""
    total = 0
    with path.open("w", encoding="utf-8") as out:
        for t, batch in enumerate(batches):
            if batch:
                prefix = f"{t} "
                out.write(prefix + f"\n{prefix}".join(batch) + "\n")
                total += len(batch)
            else:
                out.write(f"{t}\n")
    return total


@dataclass(frozen=True)
class Case:
    """Generated files for one benchmark case."""

    scenario: str
    rate: int
    time_points: int
    window: int
    program: Path
    stream: Path
    atoms: int


def generate(
    scenario: str, rate: int, time_points: int, window: int, directory: Path | str, seed: int = 1
) -> Case:
    """Write the program and stream of one case into ``directory`` (reusing an existing stream file)."""
    spec = SCENARIOS[scenario]
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / f"{scenario}-w{window}.lars"
    program.write_text(spec.program(window), encoding="utf-8")
    tag = f"-w{window}" if spec.stream_depends_on_window else ""
    stream = directory / f"{scenario}-r{rate}-t{time_points}{tag}-s{seed}.stream"
    if stream.exists():
        atoms = count_atoms(stream)
    else:
        partial = stream.with_suffix(".partial")
        atoms = write_stream(spec.stream(rate, time_points, window, seed), partial)
        partial.replace(stream)
    return Case(scenario, rate, time_points, window, program, stream, atoms)


def count_atoms(path: Path) -> int:
    """Number of atom lines (not bare time lines) of a stream file."""
    with path.open("rb") as handle:
        return sum(1 for line in handle if b" " in line.strip())


def main(argv: list[str] | None = None) -> int:
    """Command line: write one case's program and stream and print their paths."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="diamond")
    parser.add_argument("--rate", type=int, default=800, help="atoms per time point (default 800)")
    parser.add_argument("--time-points", type=int, default=300, help="number of time points (default 300)")
    parser.add_argument("--window", type=int, default=80, help="window size n (default 80)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", default=None, help="output directory (default: a new temporary directory)")
    args = parser.parse_args(argv)
    directory = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="rsp-bench-"))
    case = generate(args.scenario, args.rate, args.time_points, args.window, directory, args.seed)
    print(f"program {case.program}")
    print(f"stream  {case.stream}  ({case.atoms} atoms, {case.time_points} time points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
