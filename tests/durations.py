"""Record each test file's seconds from a JUnit XML report of a whole run into tests/durations.json,
which tests/conftest.py reads to hand the longest files out first (``make durations`` runs the suite
and this).

Usage: ``python tests/durations.py REPORT.xml``.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).with_name("durations.json")


def source_file(classname: str) -> str | None:
    """The project file a JUnit ``classname`` (``tests.query.test_x``, ``tests.query.test_x.TestY``, ``rsp.query.answers.values``
    for a doctest) comes from, relative to the project's root."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = Path(*parts[:end]).with_suffix(".py")
        if (ROOT / path).is_file():
            return path.as_posix()
    return None


def durations(report: Path) -> dict[str, float]:
    """Seconds per file, summed over its tests, longest first."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        path = source_file(case.get("classname", ""))
        if path is not None:
            seconds[path] += float(case.get("time") or 0)
    return {path: round(value, 1) for path, value in sorted(seconds.items(), key=lambda item: -item[1])}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = durations(Path(argv[0]))
    if not found:
        print(f"{argv[0]}: no test cases", file=sys.stderr)
        return 1
    OUT.write_text(json.dumps(found, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(found)} files, {sum(found.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
