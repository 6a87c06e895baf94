"""Loading the golden LARS cases in tests/golden/lars/: program.lars, stream.txt and expected.txt per folder."""

from __future__ import annotations

from paths import GOLDEN_LARS

GOLDEN = GOLDEN_LARS


def case_names() -> list[str]:
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "program.lars").exists())


def expected(name: str) -> list[tuple[int, list[str]]]:
    """expected.txt: one line per time point, ``t: atom atom …`` (sorted atoms)."""
    rows = []
    for line in (GOLDEN / name / "expected.txt").read_text().splitlines():
        time, _, atoms = line.partition(":")
        rows.append((int(time), sorted(atoms.split())))
    return rows
