"""The building example fed through Spark from a directory that receives files, end to end.

Starts ``rsp spark examples/building/hot-rooms.rq --stream DIR …`` on a fresh directory, starts the
feeder (feed.py) dropping the building stream into it file by file (Spark takes one file per
micro-batch), prints the results as they come,
and once the last file's data has been answered stops rsp spark with Ctrl-C (SIGINT), which lets it
emit the final instants. The output is that of ``rsp run`` on the same stream.

    python examples/spark-building/run.py                       # text tables, 8 files one a second
    python examples/spark-building/run.py --format jsonl --files 4 --interval 0.5
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
QUERY = ROOT / "examples" / "building" / "hot-rooms.rq"
STREAM = ROOT / "examples" / "building" / "temperatures.nt"
ONTOLOGY = ROOT / "ontologies" / "building.ttl"
INSTANT = re.compile(r'"time": (\d+)|@ (\d+) ms')


def last_closed_instant(query: Path, stream: Path) -> int:
    """The last instant the data closes before the end of the stream: a multiple of the query's STEP
    (in s) at or before the last element's time (the instant after it is emitted when rsp spark stops)."""
    step = int(re.search(r"STEP (\d+)s", query.read_text()).group(1)) * 1000
    last = int(stream.read_text().splitlines()[-1].rsplit("#", 1)[-1])
    return last // step * step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--format", default="text", help="rsp's output format (default text)")
    parser.add_argument("--files", default="8", help="files the feeder drops (default 8)")
    parser.add_argument("--interval", default="1", help="seconds between two files (default 1)")
    parser.add_argument("--timeout", type=float, default=180, help="give up after this many seconds")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rsp-spark-building-"))
    try:
        return run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> int:
    incoming, results = work / "incoming", work / "results.txt"
    incoming.mkdir()
    spark = subprocess.Popen(
        [
            sys.executable, "-m", "rsp", "spark", str(QUERY), "--stream", str(incoming),
            "--ontology", str(ONTOLOGY), "--entailment", "rdfs", "--format", args.format,
            "--max-files-per-trigger", "1", "--output", str(results),
        ]
    )  # fmt: skip
    feeder = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "feed.py"),
            str(incoming),
            "--files",
            args.files,
            "--interval",
            args.interval,
        ]
    )
    last = last_closed_instant(QUERY, STREAM)
    deadline = time.monotonic() + args.timeout
    shown = 0

    def show() -> bool:
        """Print what rsp spark wrote since the last call; True once the last closed instant is out."""
        nonlocal shown
        text = results.read_text() if results.exists() else ""
        sys.stdout.write(text[shown:])
        sys.stdout.flush()
        shown = len(text)
        times = [int(a or b) for a, b in INSTANT.findall(text)]
        return bool(times) and max(times) >= last

    try:
        while not (show() and feeder.poll() is not None):
            if spark.poll() is not None or time.monotonic() > deadline:
                feeder.kill()
                spark.kill()
                print("run.py: rsp spark stopped before answering the whole stream", file=sys.stderr)
                return 1
            time.sleep(0.2)
        spark.send_signal(signal.SIGINT)  # Ctrl-C: finish the micro-batch, close the engine, exit 0
    except KeyboardInterrupt:  # Ctrl-C reached rsp spark too: it stops the same way
        feeder.kill()
    code = spark.wait(timeout=60)
    show()
    return code


if __name__ == "__main__":
    sys.exit(main())
