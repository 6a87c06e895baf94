"""Drop a timed N-Triples stream into a directory as a sequence of files, over time (stdlib only).

The stream is cut where its time changes into ``--files`` parts of about equal size; each part is
written under a hidden name (Spark's file source skips names starting with ``.``) and then renamed,
so a reader never sees half a file, with ``--interval`` seconds between files. Files are dated in
their order: Spark takes new files by modification time.

    python examples/spark-building/feed.py incoming/                      # 8 files, one a second
    python examples/spark-building/feed.py incoming/ --files 4 --interval 0
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DEFAULT_STREAM = Path(__file__).resolve().parents[1] / "building" / "temperatures.nt"


def line_time(line: str) -> str:
    """The time comment of a stream line (the text after the last ``#``)."""
    return line.rsplit("#", 1)[-1].strip()


def parts(lines: list[str], count: int) -> list[list[str]]:
    """``lines`` cut into at most ``count`` consecutive parts, never between two lines of one time."""
    size = max(1, -(-len(lines) // count))
    out: list[list[str]] = [[]]
    for index, line in enumerate(lines):
        current = out[-1]
        if len(current) >= size and line_time(line) != line_time(lines[index - 1]):
            out.append(current := [])
        current.append(line)
    return [part for part in out if part]


def feed(directory: Path, lines: list[str], count: int, interval: float) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    chunks = parts(lines, count)
    for number, chunk in enumerate(chunks, 1):
        if number > 1 and interval > 0:
            time.sleep(interval)
        hidden = directory / f".part-{number:04d}.nt.tmp"
        hidden.write_text("".join(chunk))
        os.replace(hidden, directory / f"part-{number:04d}.nt")
        print(
            f"feed: part-{number:04d}.nt ({len(chunk)} lines, up to {line_time(chunk[-1])} ms)",
            file=sys.stderr,
        )
    return len(chunks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", type=Path, help="the directory Spark reads (created if missing)")
    parser.add_argument("--stream", type=Path, default=DEFAULT_STREAM, help="the timed N-Triples file to cut")
    parser.add_argument("--files", type=int, default=8, help="how many files to drop (default 8)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between two files (default 1)")
    args = parser.parse_args(argv)
    lines = args.stream.read_text().splitlines(keepends=True)
    feed(args.directory, lines, args.files, args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
