"""Exactly once across restarts (``rsp spark --checkpoint DIR``): a run killed with SIGKILL, then started
again with the same command, leaves exactly the output of an uninterrupted run — no instant missing, none
twice. The uninterrupted reference is ``rsp run`` / ``rsp lars`` over the same lines (equal to an
uninterrupted ``rsp spark`` run by the parity tests in test_spark.py).

The kills: at fixed points of a micro-batch (fault injection, ``RSP_SPARK_FAULT=POINT:BATCH``: after the
results were written but before rsp's state was committed, and after the commit but before Spark
committed the micro-batch), and from outside at whatever moment the run has reached. Each run at a fixed
point is killed at both, one after the other: killed after writing, started again and killed after
committing, started again to the end (every ``rsp spark`` costs a JVM start, the most of these tests'
time).

The ``rsp`` commands start their JVM for short runs (:data:`SHORT_RUN`): these runs are mostly JVM
start-up."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import ROOT
from spark_conftest import write_parts
from test_spark import SUM_QUERY, XSD, out_of_order_parts

from rsp.spark.checkpoint import FAULT_ENV, STATE_VERSION

pytestmark = pytest.mark.spark

BUILDING = ROOT / "examples" / "building"
QUERY = BUILDING / "hot-rooms.rq"
BUILDING_ARGS = ["--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs"]
COOLING = ROOT / "examples" / "cooling" / "cooling.lars"


NO_VERIFY = "-XX:TieredStopAtLevel=1 -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"
SHORT_RUN = {
    # the JIT at C1 only, Spark's classes loaded without bytecode verification: less CPU for a short run
    "RSP_SPARK_JAVA_OPTIONS": f"{os.environ.get('RSP_SPARK_JAVA_OPTIONS', '')} {NO_VERIFY}".strip(),
}


def _rsp(*args: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rsp", *args],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, **SHORT_RUN, **(env or {})},
        cwd=ROOT,
    )  # fmt: skip


def _state(checkpoint: Path) -> dict:
    return json.loads((checkpoint / "rsp" / "state.json").read_text())


def _spark_args(program: Path, source: Path, checkpoint: Path, output: Path, *extra: str) -> list[str]:
    return [
        "spark", str(program), "--stream", str(source), *extra, "--checkpoint", str(checkpoint),
        "--output", str(output), "--max-files-per-trigger", "1",
    ]  # fmt: skip


def _resumed(run: subprocess.CompletedProcess, args: list[str], committed: int) -> bool:
    return f"resuming from {args[args.index('--checkpoint') + 1]} after micro-batch {committed}" in run.stderr


def _killed_twice(args: list[str], checkpoint: Path, output: Path, batch: int) -> None:
    """Micro-batch ``batch`` of the run killed after its results were written (state not committed: they
    are taken back and the micro-batch is redone), then, started again, killed after rsp committed it
    (Spark had not: it hands the micro-batch over again, and the next start skips it)."""
    written = _rsp(*args, "--available-now", env={FAULT_ENV: f"written:{batch}"})
    assert written.returncode == -signal.SIGKILL, written.stderr
    assert _state(checkpoint)["batch"] == batch - 1
    assert output.stat().st_size > _state(checkpoint)["output"]  # micro-batch `batch`'s results were written
    committed = _rsp(*args, "--available-now", env={FAULT_ENV: f"committed:{batch}"})
    assert committed.returncode == -signal.SIGKILL, committed.stderr
    assert _resumed(committed, args, batch - 1)
    assert _state(checkpoint)["batch"] == batch
    assert output.stat().st_size == _state(checkpoint)["output"]


COUNTS = re.compile(
    r"([\d,]+) lines, [\d,]+ (?:triples|atoms)(?: in [\d,]+ instants)?, ([\d,]+) rejected, ([\d,]+) late"
)


def _restart_and_compare(
    args: list[str], output: Path, expected: str, committed: int, lines: int, late: int
) -> None:
    """Started again to the end: the output is ``expected``, and the counts of the summary (taken back
    from the checkpoint) those of one run over the ``lines``, with ``late`` elements dropped (a
    micro-batch taken twice would count its lines twice, and its elements as late the second time;
    its results, of instants already closed, would not show it)."""
    again = _rsp(*args, "--available-now")
    assert again.returncode == 0, again.stderr
    assert _resumed(again, args, committed)
    assert output.read_text() == expected
    assert COUNTS.findall(again.stderr) == [(f"{lines:,}", "0", f"{late:,}")], again.stderr


def test_query_killed_inside_a_micro_batch_resumes_exactly(tmp_path: Path) -> None:
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    source, checkpoint, output = tmp_path / "in", tmp_path / "ck", tmp_path / "out.jsonl"
    write_parts(source, lines, 5)
    reference = _rsp("run", str(QUERY), "--stream", str(BUILDING / "temperatures.nt"), *BUILDING_ARGS, "-q")
    assert reference.returncode == 0 and reference.stdout.count("\n") > 3
    args = _spark_args(QUERY, source, checkpoint, output, *BUILDING_ARGS)
    _killed_twice(args, checkpoint, output, 2)
    _restart_and_compare(args, output, reference.stdout, 2, len(lines), 0)


def test_out_of_order_stream_killed_resumes_as_rsp_run(tmp_path: Path) -> None:
    """Files that each start before the newest time of the one before: late elements and elements out
    of order but not late in every micro-batch. Killed in micro-batch 2 and started again, the output
    is rsp run's over the lines in the order they arrive (the log holds what the engine took, and the
    replay takes it all again)."""
    query = tmp_path / "sums.rq"
    query.write_text(SUM_QUERY)
    parts = out_of_order_parts(5)
    lines = [line for part in parts for line in part]
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    reference = _rsp("run", str(query), "--stream", f"http://ex.org/s={stream}")
    assert reference.returncode == 0 and "late element" in reference.stderr
    source, checkpoint, output = tmp_path / "in", tmp_path / "ck", tmp_path / "out.jsonl"
    write_parts(source, lines, len(parts), ".nt")
    args = _spark_args(query, source, checkpoint, output)
    args[args.index("--stream") + 1] = f"http://ex.org/s={source}"
    _killed_twice(args, checkpoint, output, 2)
    _restart_and_compare(
        args, output, reference.stdout, 2, len(lines), reference.stderr.count(": late element")
    )


def test_lars_program_killed_from_outside_resumes_exactly(tmp_path: Path) -> None:
    """SIGKILL from outside while the run streams (a micro-batch every half second), then a restart."""
    temps = [60, 70, 85, 95, 101, 104, 99, 97, 102, 106, 90, 80, 75, 101, 103, 104, 70, 60]
    lines = [f"{t} temp({temps[t % len(temps)]})\n" for t in range(120)]
    stream = tmp_path / "temps.stream"
    stream.write_text("".join(lines))
    reference = _rsp("lars", str(COOLING), "--stream", str(stream))
    assert reference.returncode == 0 and '"atoms": [' in reference.stdout
    source, checkpoint, output = tmp_path / "in", tmp_path / "ck", tmp_path / "out.jsonl"
    write_parts(source, lines, 8)
    args = _spark_args(COOLING, source, checkpoint, output)
    run = subprocess.Popen(
        [sys.executable, "-m", "rsp", *args, "--trigger", "500 milliseconds"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, **SHORT_RUN},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and run.poll() is None:
            state = checkpoint / "rsp" / "state.json"
            if state.exists() and _state(checkpoint)["batch"] >= 2:
                break
            time.sleep(0.05)
        assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
        run.send_signal(signal.SIGKILL)
        run.wait(30)
    finally:
        if run.poll() is None:
            run.kill()
        if run.stderr:
            run.stderr.close()
    committed = _state(checkpoint)["batch"]
    assert 2 <= committed < 7  # killed mid-stream
    _restart_and_compare(args, output, reference.stdout, committed, len(lines), 0)


def test_checkpoint_refuses_another_run_and_a_pipe(tmp_path: Path) -> None:
    """A checkpoint belongs to one run; results on stdout cannot be taken back, so --output is needed."""
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)[:20]
    source, checkpoint = tmp_path / "in", tmp_path / "ck"
    write_parts(source, lines, 1)
    piped = _rsp(
        "spark", str(QUERY), "--stream", str(source), *BUILDING_ARGS, "--checkpoint", str(checkpoint)
    )
    assert piped.returncode == 2 and "--checkpoint needs --output FILE" in piped.stderr
    (checkpoint / "rsp").mkdir(parents=True)
    for version, refusal in ((STATE_VERSION, "belongs to another run"), (STATE_VERSION - 1, "another version")):
        (checkpoint / "rsp" / "state.json").write_text(
            json.dumps({"version": version, "identity": {"kind": "lars"}, "batch": 0, "output": 0,
                        "counters": {}})
        )  # fmt: skip
        other = _rsp(
            *_spark_args(QUERY, source, checkpoint, tmp_path / "o.jsonl", *BUILDING_ARGS), "--available-now"
        )
        assert other.returncode == 2 and refusal in other.stderr


PER_VEHICLE = """REGISTER QUERY Slow AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?slowest)
FROM STREAM <http://ex.org/pos> [RANGE 5s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 20) }
GROUP BY ?v
"""


def _answers(text: str) -> list[tuple[int, list[str]]]:
    """Each record's instant and answers, in the order written (the order within an instant is the
    partitions'; an instant written twice shows)."""
    records = [json.loads(line) for line in text.splitlines()]
    return [(r["time"], sorted(json.dumps(b, sort_keys=True) for b in r["bindings"])) for r in records]


def test_partitioned_run_killed_inside_a_micro_batch_resumes_exactly(tmp_path: Path) -> None:
    """--partition-by with --checkpoint: the partitions' recovery logs (under the checkpoint) rebuild the
    engines, rsp's state holds the answers held back by the driver; killed between writing and
    committing, then after committing."""
    query = tmp_path / "slow.rq"
    query.write_text(PER_VEHICLE)
    lines = []
    for k in range(120):
        vehicle, t = k * 7 % 5, k * 250
        lines.append(
            f'<http://ex.org/bus{vehicle}> <http://ex.org/speed> "{k * 13 % 30}"^^<{XSD}integer> . # {t}\n'
        )
        lines.append(f"<http://ex.org/bus{vehicle}> <http://ex.org/at> <http://ex.org/stop{k % 3}> . # {t}\n")
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    reference = _rsp("run", str(query), "--stream", str(stream), "-q")
    assert reference.returncode == 0 and sum(len(bindings) for _, bindings in _answers(reference.stdout)) > 20
    source, checkpoint, output = tmp_path / "in", tmp_path / "ck", tmp_path / "out.jsonl"
    write_parts(source, lines, 4)
    args = _spark_args(query, source, checkpoint, output, "--partition-by", "?v")
    _killed_twice(args, checkpoint, output, 1)
    again = _rsp(*args, "--available-now")
    assert again.returncode == 0, again.stderr
    assert _resumed(again, args, 1)
    # micro-batch 1, committed, not taken again (its elements would be late then): every line once
    assert COUNTS.findall(again.stderr) == [(f"{len(lines):,}", "0", "0")], again.stderr
    assert "late element" not in again.stderr
    assert _answers(output.read_text()) == _answers(reference.stdout)
