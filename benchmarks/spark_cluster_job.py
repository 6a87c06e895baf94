"""The driver of a Spark user's streaming job with rsp in it, for a cluster: :func:`rsp.spark.reason` over
the N-Triples files of a directory, its answers written by Spark's file sink (JSON lines), exactly once
through the checkpoint and the sink. tests/spark/test_spark_cluster.py runs it as a subprocess, so that
it can kill it.

    python benchmarks/spark_cluster_job.py --master spark://HOST:PORT --input DIR \\
        --query Q.rq --sink DIR --checkpoint DIR [--partition-by ?v] [--query …] \\
        [--max-files-per-trigger N] [--cores N] [--probe FILE]

Each ``--query`` is a streaming query of its own, with the ``--sink``, ``--checkpoint`` and
``--partition-by`` (``-``: none) given in the same place (the first, second … of each); all run at once
in this driver, over the same input, read with :func:`rsp.spark.read_stream`, ``--max-files-per-trigger``
files (1) per micro-batch, with an ``availableNow`` trigger: the job ends once every file there was at
its start is answered. Run again with the same checkpoints and sinks, it goes on where the last run
committed. The answers have ``instants=True`` (a row of kind ``instant`` marks each instant closed).

``--cores N`` asks the cluster for N cores (``spark.cores.max``) and has Spark's scheduler wait (60 s at
most) until all of them have registered (``spark.scheduler.minRegisteredResourcesRatio``) before the
first job, so that the state store's partitions are spread over the executors from the first
micro-batch. ``--probe FILE`` first runs two small jobs: tasks that write a file to ``/tmp``, then tasks
that list the ``/tmp`` they see; it writes as JSON what each executor saw (its mount namespace, the device
of its ``/tmp``, its working directory and local dirs, the probe files in its ``/tmp``) and what the
driver sees: the evidence that the workers share no temporary folder with each other or the driver. The
last line on standard output is a JSON summary of the run (seconds, and each query's micro-batches).

Only public APIs: Spark options go in through ``PYSPARK_SUBMIT_ARGS`` (the executors' JVM options, the
cores), the session is :func:`rsp.spark.session` (a Spark user's own would do as well).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
import uuid
from pathlib import Path

EXECUTOR_OPTIONS = (
    "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC "
    "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"
)
"""The executors' JVMs of a short run: the JIT at C1 only, and Spark's classes loaded unverified (start-up
is most of such a short run's time)."""


def _probe_tasks(token: str):
    def namespace() -> str:
        return os.readlink("/proc/self/ns/mnt")

    def write(index, _rows):
        number = namespace().strip("mnt:[]")
        Path(f"/tmp/rsp-probe-{token}-{number}-{index}").write_text(str(os.getpid()))
        time.sleep(0.3)  # long enough for the other executor to take tasks too
        yield index

    def look(_index, _rows):
        time.sleep(0.3)
        yield {
            "namespace": namespace(),
            "tmp_device": os.stat("/tmp").st_dev,
            "cwd": os.getcwd(),
            "local_dirs": os.environ.get("SPARK_LOCAL_DIRS") or os.environ.get("SPARK_EXECUTOR_DIRS"),
            "tmp_files": sorted(p.name for p in Path("/tmp").glob(f"rsp-probe-{token}-*")),
        }

    return write, look


def probe(spark, partitions: int = 6) -> dict:
    """What the executors and the driver see of ``/tmp`` (see the module docstring)."""
    token = uuid.uuid4().hex[:12]
    write, look = _probe_tasks(token)
    context = spark.sparkContext
    context.parallelize(range(partitions), partitions).mapPartitionsWithIndex(write).collect()
    executors = context.parallelize(range(partitions), partitions).mapPartitionsWithIndex(look).collect()
    return {
        "token": token,
        "executors": executors,
        "driver": {
            "namespace": os.readlink("/proc/self/ns/mnt"),
            "tmp_device": os.stat("/tmp").st_dev,
            "cwd": os.getcwd(),
            "tmp_files": sorted(p.name for p in Path("/tmp").glob(f"rsp-probe-{token}-*")),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--query", required=True, type=Path, action="append")
    parser.add_argument("--sink", required=True, action="append")
    parser.add_argument("--checkpoint", required=True, action="append")
    parser.add_argument("--partition-by", action="append", help="a variable, or - for none")
    parser.add_argument("--max-files-per-trigger", type=int, default=1)
    parser.add_argument("--cores", type=int, default=0)
    parser.add_argument("--probe", type=Path)
    args = parser.parse_args(argv)
    keys = args.partition_by or ["-"] * len(args.query)
    if not len(args.query) == len(args.sink) == len(args.checkpoint) == len(keys):
        parser.error("give each --query its --sink, --checkpoint (and --partition-by, when any has one)")
    conf = {"spark.executor.extraJavaOptions": EXECUTOR_OPTIONS}
    if args.cores:  # the scheduler starts once the cluster has given the application every core
        conf |= {
            "spark.cores.max": str(args.cores),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
        }
    submit = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
    os.environ["PYSPARK_SUBMIT_ARGS"] = " ".join(
        [*(f"--conf {shlex.quote(f'{key}={value}')}" for key, value in conf.items()), submit]
    )
    from rsp.spark import read_stream, reason, session

    began = time.monotonic()
    spark = session(args.master, app_name="rsp-cluster-job")
    if args.probe:
        args.probe.write_text(json.dumps(probe(spark)))
    running = []
    for query, sink, checkpoint, key in zip(args.query, args.sink, args.checkpoint, keys, strict=True):
        frame = read_stream(spark, args.input, max_files_per_trigger=args.max_files_per_trigger)
        answers = reason(
            frame, query.read_text(), file=str(query), partition_by=None if key == "-" else key, instants=True
        )
        writer = (
            answers.writeStream.format("json").option("path", sink).option("checkpointLocation", checkpoint)
        )
        running.append(writer.trigger(availableNow=True).start())
    started = time.monotonic() - began
    print(f"started after {started:.1f} s", file=sys.stderr, flush=True)
    for stream in running:
        stream.awaitTermination()
    summary = {"seconds": round(time.monotonic() - began, 1), "started": round(started, 1), "queries": []}
    for stream in running:
        progress = stream.recentProgress
        summary["queries"].append(
            {
                "batches": [p["batchId"] for p in progress],
                "rows": sum(p["numInputRows"] for p in progress),
                "ms": [p["durationMs"].get("triggerExecution") for p in progress],
                "first": progress[0]["durationMs"] if progress else None,
            }
        )
    print(json.dumps(summary), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
