"""Temporal LUBM-like streams for the paper's Π_nr and Π_r (tests/data/mtl/meteor_nonrecursive.txt,
meteor_recursive.txt), and ``rsp mtl`` over them: µs per fact, facts/s and peak RSS of the whole
process, at N facts and at 10×N, with the peak number of intervals the engine stored (``--stats``):
peak RSS should follow the model, not the stream's length. (Π_r's model itself grows: its recursion
keeps every person who was once a full professor alive at every later time point, until the
population is exhausted.)

    python benchmarks/mtl_lubm.py                       # 1M and 10M facts, both programs
    python benchmarks/mtl_lubm.py --facts 100000 --longer 10

The paper's LUBM data sets are not public files, so the generator draws facts over the predicates
the programs read — ``a1:Lecturer(p)``, ``a1:FullProfessor(p)``, ``a1:doctoralDegreeFrom(p,u)``,
``a1:University(u)`` — for a fixed population (people ``ID<k>``, universities ``Univ<k>``, as LUBM
names them), punctual and in time order, ``--rate`` facts per time unit. A fixed seed makes every
stream the prefix of the longer ones.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    "Π_nr": (ROOT / "tests" / "data" / "mtl" / "meteor_nonrecursive.txt", "a1:AssociateProfessorCandidate"),
    "Π_r": (ROOT / "tests" / "data" / "mtl" / "meteor_recursive.txt", "a1:Scientist"),
}
_RSS = (
    "import resource, sys\nfrom rsp.cli import main\nstatus = main(sys.argv[1:])\nsys.stdout.flush()\n"
    "sys.stderr.write(f'RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\nsys.exit(status)"
)


def generate(
    path: Path,
    facts: int,
    *,
    people: int = 20_000,
    universities: int = 200,
    rate: int = 10_000,
    seed: int = 7,
) -> None:
    """Write ``facts`` punctual LUBM-like facts to ``path``, ``rate`` per time unit, in time order."""
    rng = random.Random(seed)
    kinds = ("a1:Lecturer", "a1:FullProfessor", "a1:doctoralDegreeFrom", "a1:University")
    weights = (3, 2, 3, 2)
    with open(path, "w", encoding="utf-8") as out:
        write = out.write
        for i in range(facts):
            t = i // rate
            kind = rng.choices(kinds, weights)[0]
            p = f"ID{rng.randrange(people)}"
            u = f"Univ{rng.randrange(universities)}"
            if kind == "a1:doctoralDegreeFrom":
                write(f"{kind}({p},{u})@[{t},{t}]\n")
            elif kind == "a1:University":
                write(f"{kind}({u})@[{t},{t}]\n")
            else:
                write(f"{kind}({p})@[{t},{t}]\n")


def _process(argv: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) and peak stored intervals of one ``rsp mtl … --stats`` process."""
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    rss = int(proc.stderr.rsplit("RSS ", 1)[1])
    stored = int(re.search(r"(\d+) stored intervals at most", proc.stderr).group(1))
    return wall, rss, stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--longer", type=int, default=10, help="the long stream is this many times longer")
    parser.add_argument("--rate", type=int, default=10_000, help="facts per time unit")
    args = parser.parse_args()
    sizes = (args.facts, args.facts * args.longer)
    print(f"rsp mtl on temporal LUBM-like streams ({args.rate} facts per time unit), whole process:")
    header = f"{'program':<8}{'facts':>12}{'wall s':>9}{'µs/fact':>10}{'facts/s':>11}{'peak RSS MiB':>14}"
    print(header + f"{'peak stored intervals':>23}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"lubm-{n}.txt"
            generate(path, n, rate=args.rate)
            for name, (program, target) in PROGRAMS.items():
                argv = [sys.executable, "-c", _RSS, "mtl", str(program), "--stream", str(path)]
                argv += ["--output-predicates", target, "--format", "count", "--stats"]
                wall, rss, stored = _process(argv)
                row = f"{name:<8}{n:>12,}{wall:>9.1f}{wall / n * 1e6:>10.1f}{n / wall:>11,.0f}"
                print(row + f"{rss / 1024:>14.1f}{stored:>23,}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
