"""The plugin API through Spark itself: :func:`rsp.spark.reason` in a user's streaming job (local mode),
its answers written by Spark's own sinks, against ``rsp run`` on the same lines.

A stream of several files read one per micro-batch, so that windows span micro-batches and every bucket's
state has to come back from Spark's state store: the answers at every instant the job closed equal
``rsp run``'s, with one bucket and with ``partition_by`` (buckets spread over the shuffle partitions),
with the workers' engines cached and with every engine rebuilt from the state store at every
micro-batch (``cache=False``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from paths import ROOT
from spark_conftest import write_parts

pytest.importorskip("pyspark")

from rsp.errors import RspError  # noqa: E402

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]

QUERY = """REGISTER QUERY Slow AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MAX(?s) AS ?top)
FROM STREAM <http://ex.org/pos> [RANGE 3s STEP 1s]
WHERE { ?v ex:speed ?s }
GROUP BY ?v
"""


def _lines(count: int, vehicles: int) -> list[str]:
    """``count`` speed readings, one every 130 ms, of ``vehicles`` vehicles (a few lines out of order)."""
    lines = []
    for k in range(count):
        time = k * 130 - (200 if k % 17 == 5 else 0)
        value = (k * 37) % 90
        lines.append(
            f'<http://ex.org/v{k % vehicles}> <http://ex.org/speed> "{value}"^^<http://www.w3.org/2001/XMLSchema#integer> . # {time}\n'
        )
    return lines


def _rsp_run(tmp_path: Path, query: str, lines: list[str]) -> dict[int, Counter]:
    (tmp_path / "q.rq").write_text(query)
    (tmp_path / "all.nt").write_text("".join(lines))
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(tmp_path / "q.rq"), "--stream", str(tmp_path / "all.nt"), "-q"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines()]
    return {r["time"]: Counter(json.dumps(b, sort_keys=True) for b in r["bindings"]) for r in records}


def _through_spark(spark, folder: Path, query: str, **options) -> tuple[dict[int, Counter], set[int]]:
    from pyspark.sql import functions as F

    from rsp.spark import read_stream, reason

    frame = read_stream(spark, str(folder / "in"), max_files_per_trigger=1)
    answers = reason(frame, query, instants=True, **options)
    sink, checkpoint = folder / "out", folder / "checkpoint"
    flat = answers.select("time", "kind", F.to_json("bindings").alias("bindings"))
    running = (
        flat.writeStream.format("json")
        .option("path", str(sink))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    running.awaitTermination()
    assert running.exception() is None
    rows = spark.read.schema("time long, kind string, bindings string").json(str(sink)).collect()
    instants = [r.time for r in rows if r.kind == "instant"]
    assert len(instants) == len(set(instants)), "an instant reported twice"
    answers_at: dict[int, Counter] = {t: Counter() for t in instants}
    for row in rows:
        if row.kind == "answer":
            binding = {k: v for k, v in json.loads(row.bindings).items() if v is not None}
            answers_at[row.time][json.dumps(binding, sort_keys=True)] += 1
    return answers_at, set(instants)


@pytest.mark.parametrize(
    "options",
    [{}, {"partition_by": "?v", "buckets": 3}, {"partition_by": "?v", "buckets": 3, "cache": False}],
    ids=["one-bucket", "partitioned", "partitioned-rebuilt"],
)
def test_answers_through_a_spark_sink_equal_rsp_run(tmp_path: Path, spark, no_streams_left, options) -> None:
    lines = _lines(120, 5)
    expected = _rsp_run(tmp_path, QUERY, lines)
    write_parts(tmp_path / "in", lines, 4, ".nt")
    got, closed = _through_spark(spark, tmp_path, QUERY, **options)
    # the stream does not end (no end row): the instants up to the newest element are closed
    assert closed and max(closed) == max(expected) - 1000
    assert got == {t: expected[t] for t in closed}
    assert sum(sum(c.values()) for c in got.values()) > 50


def test_a_query_that_does_not_partition_is_refused_before_spark_runs(spark) -> None:
    from rsp.spark import read_stream, reason

    frame = read_stream(spark, str(ROOT / "examples" / "building"))
    text = (ROOT / "examples" / "building" / "hot-rooms.rq").read_text()
    with pytest.raises(RspError, match=r"--partition-by|partition"):
        reason(frame, text, partition_by="?nosuchvar")


def test_no_private_pyspark_or_jvm_api_in_rsp_spark() -> None:
    """rsp/spark/ reaches PySpark and the JVM through their public API only."""
    private = re.compile(r"\b_(jvm|jdf|jsparkSession|jsc|jconf|gateway|active_spark_context)\b")
    found = []
    for path in sorted((ROOT / "rsp" / "spark").glob("*.py")):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if private.search(text):
                found.append(f"{path.name}:{number}: {text.strip()}")
    assert not found, found
