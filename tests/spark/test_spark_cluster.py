"""``rsp spark --partition-by`` on a simulated cluster (a Spark standalone master and two one-core workers
on 127.0.0.1, benchmarks/spark_cluster.py): a small per-vehicle run gives, at every instant, the answers of
``rsp run`` (which local mode gives too: tests/spark/test_spark_partitioned.py), with the executors in other
JVMs than the driver and the partitions' engines in their Python workers' hosts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from paths import ROOT
from spark_conftest import write_parts

pytest.importorskip("pyspark")

sys.path.insert(0, str(ROOT / "benchmarks"))

import spark_cluster  # noqa: E402

from rsp.cli import main  # noqa: E402

pytestmark = [pytest.mark.spark]


# The JVMs of a short run (their start-up is most of its time): the JIT at C1 only, in the driver and the
# executors, and Spark's classes loaded without bytecode verification (together about 40 % less CPU).
NO_VERIFY = "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"
SHORT_RUN = {
    "RSP_SPARK_FAST_START": "1",
    "RSP_SPARK_JAVA_OPTIONS": NO_VERIFY,
    "PYSPARK_SUBMIT_ARGS": f"--conf 'spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1 {NO_VERIFY}' pyspark-shell",
}


def _answers(text: str) -> dict[int, Counter]:
    records = [json.loads(line) for line in text.splitlines()]
    return {r["time"]: Counter(json.dumps(b, sort_keys=True) for b in r["bindings"]) for r in records}


def test_standalone_cluster_answers_as_rsp_run(tmp_path: Path) -> None:
    import spark as bench  # benchmarks/spark.py

    query = tmp_path / "slow.rq"
    query.write_text(bench.PARTITIONED_QUERY)
    lines = bench.vehicle_lines(3000, 12)
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    write_parts(tmp_path / "in", lines, 3, ".nt")
    single = tmp_path / "single.jsonl"
    assert main(["run", str(query), "--stream", str(stream), "-q", "--output", str(single)]) == 0
    with spark_cluster.standalone() as url:
        done = subprocess.run(
            [sys.executable, "-m", "rsp", "spark", str(query), "--stream", str(tmp_path / "in"), "--partition-by",
             "?v", "--available-now", "--max-files-per-trigger", "1", "--master", url],
            capture_output=True, text=True, timeout=300, cwd=ROOT, env=dict(os.environ, **SHORT_RUN),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    expected = _answers(single.read_text())
    assert _answers(done.stdout) == expected
    assert sum(sum(c.values()) for c in expected.values()) > 20
    # the executors' tasks read the files themselves (rsp/spark/splits.py), as on local[N]
    assert "3 of 3 micro-batch(es) read by the keying tasks from Spark's file splits" in done.stderr
