"""Is rsp's Spark plugin worth its cores? Throughput per core of :func:`rsp.spark.reason` against ``rsp run``
on the same stream, partitioned and not, and against the Spark path of an older tree, round robin in one
run (issue 43, item 5).

    python benchmarks/spark.py [--elements N] [--keys K] [--batches B] [--repeat R] [--cores C]
                               [--before DIR] [--no-job] [--data DIR] [--quick]
    python benchmarks/spark.py --profile [--elements N] [--keys K] [--batches B] [--partition-by ?v]

The stream: N elements (200,000 by default, 400,000 triples), one per ms, each a vehicle's speed and place
(``vehicle_lines``), K vehicles (1,000); the query (``PARTITIONED_QUERY``) groups by vehicle over a
``[RANGE 10s STEP 1s]`` window, so every instant has an answer per vehicle. ``rsp run`` reads it as one
file; Spark as B files (8) taken one per micro-batch (``--available-now --max-files-per-trigger 1``).

The commands, each a subprocess timed from start to exit, R rounds (3) round robin, the order rotated
each round; every command writes its answers to a file, as its user would:

* ``rsp run`` — one engine, one core;
* ``rsp spark --partition-by ?v`` — the command over the plugin, the vehicles' engines in key buckets
  (``spark.sql.shuffle.partitions`` of them) in Spark's stateful operator, on ``local[C]`` (C = 2);
* ``plugin job --partition-by ?v`` — a Spark user's own job (:func:`job` below, this file with
  ``--job``): ``read_stream`` → ``reason`` → ``writeStream.format("parquet")``, its checkpoint, trigger
  ``availableNow``: no driver-side writer;
* ``rsp spark`` — the same command, not partitioned: one bucket, one engine;
* with ``--before DIR`` (a worktree of the code before issue 43: ``git worktree add --detach
  /tmp/rsp-verify 921a648``) its ``rsp spark --partition-by ?v`` and ``rsp spark``, run from that tree.

Outputs: every ``rsp spark``'s output file must equal ``rsp run``'s byte for byte; the job's Parquet
answers must equal ``rsp run``'s at every instant it closed (a job that never ends its input leaves the
last instants open). Figures, medians over the rounds: wall time; time in the streaming query (from the
command's summary, without the JVM's and session's start); triples per second per core (``rsp run``:
triples ÷ wall, one core; Spark: triples ÷ time in the query ÷ C); and the ratio of ``rsp run``'s per-core
throughput to each command's, taken within each round (the machine's speed drifts), the median of the
rounds (the goal for the partitioned plugin: ≤ 3); where the command says what a
micro-batch costs once warm (the job; the older tree's partitioned ``rsp spark``: the median from the
third micro-batch on), the same per core from it. Each run's 1-minute load average
before and after is kept (the machine is shared: compare ratios within one run). Results go to
``benchmarks/results/*-spark.json``. Timings are reported, never asserted: the exit status is 1 only
when a run fails or an output differs.

``--profile`` runs ``rsp run`` and then the partitioned plugin job once in this process, on a session with
Spark's UI on (its REST API gives each stage's and task's times) and the stateful processor wrapped in
timers (the state handles' calls; the rest of a bucket's call is the engine and the pandas around it),
and prints where each micro-batch's time goes: ``addBatch`` and planning; the stage that reads, parses,
tags and shuffles the lines; the stateful stage, task by task: the time to its first bucket call, each
call's list-state reads, appends and rewrites, engine, hand-over to pandas and answers, whether its
engine was rebuilt from the state store (the worker's cache missed), the time after the last call; the
state store's commit; then medians from the second micro-batch on. Before it, the same steps before the
stateful operator over one micro-batch's file as batch jobs (read, + parse, + tag, + shuffle).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

XSD_INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"

PARTITIONED_QUERY = """REGISTER QUERY Slow AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (MIN(?s) AS ?slowest) (COUNT(DISTINCT ?place) AS ?places)
FROM STREAM <http://ex.org/pos> [RANGE 10s STEP 1s]
WHERE { ?v ex:speed ?s . ?v ex:at ?place FILTER(?s < 20) }
GROUP BY ?v
"""
"""Per vehicle over the last 10 s: how many slow readings, the slowest, at how many places."""


def vehicle_lines(elements: int, vehicles: int) -> list[str]:
    """Per-vehicle positions: every ms one vehicle reports its speed and place (a partitionable stream)."""
    lines = []
    for k in range(elements):
        v = (k * 7919) % vehicles
        lines.append(f'<http://ex.org/bus{v}> <http://ex.org/speed> "{k * 31 % 40}"^^{XSD_INTEGER} . # {k}\n')
        lines.append(f"<http://ex.org/bus{v}> <http://ex.org/at> <http://ex.org/stop{k * 13 % 50}> . # {k}\n")
    return lines


def write_files(directory: Path, lines: list[str], parts: int) -> list[Path]:
    """The lines as ``parts`` files dated in order (Spark takes new files by modification time)."""
    directory.mkdir(parents=True, exist_ok=True)
    size = -(-len(lines) // parts)
    now = time.time()
    paths = []
    for index in range(parts):
        path = directory / f"part-{index:03d}.nt"
        with path.open("w") as handle:
            handle.writelines(lines[index * size : (index + 1) * size])
        os.utime(path, (now - 1000 + index, now - 1000 + index))
        paths.append(path)
    return paths


SUMMARY = re.compile(r"(\d+) micro-batch\(es\) in ([0-9.]+) s")
"""The summary line of ``rsp spark`` (both trees) and of :func:`job`."""
WARM = re.compile(r"([0-9.]+) s (?:a micro-batch|between micro-batches) once warm")
"""What a micro-batch costs once warm, where the summary says it (:func:`job`; the older tree's
partitioned ``rsp spark``): the median interval from the third micro-batch on."""
"""The summary line of ``rsp spark`` (both trees) and of :func:`job`."""


def timed(command: list[str], tree: Path, output: Path, timeout: float = 3600) -> dict[str, Any]:
    """Run ``command`` (a Python module or script and its arguments) with ``tree`` first on the path and
    as working directory, stdout to ``output``: wall time, time in the streaming query (the summary),
    exit code, and the load average before and after."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with output.open("wb") as sink:
        done = subprocess.run([sys.executable, *command], cwd=tree, env=env, stdout=sink,  # noqa: S603
                              stderr=subprocess.PIPE, timeout=timeout, check=False)  # fmt: skip
    wall = time.perf_counter() - start
    stderr = done.stderr.decode("utf-8", "replace")
    result: dict[str, Any] = {"wall": wall, "returncode": done.returncode, "load": [load, os.getloadavg()[0]]}
    if done.returncode:
        result["error"] = stderr.strip().splitlines()[-3:]
    m = SUMMARY.search(stderr)
    if m:
        result["batches"], result["query_s"] = int(m.group(1)), float(m.group(2))
    m = WARM.search(stderr)
    if m:
        result["warm_s"] = float(m.group(1))
    return result


def commands(data: Path, args: argparse.Namespace) -> dict[str, tuple[list[str], Path, int]]:
    """Name -> (the command after ``python``, the tree it runs from, the cores it uses)."""
    query, single, directory = data / "slow.rq", data / "vehicles.nt", data / "vehicles"
    master = f"local[{args.cores}]"
    spark = ["-m", "rsp", "spark", str(query), "--stream", str(directory), "--available-now",
             "--max-files-per-trigger", "1", "--master", master]  # fmt: skip
    by_key = ["--partition-by", "?v"]
    job_args = [str(HERE / "spark.py"), "--job", "--query", str(query), "--stream", str(directory),
                "--sink", str(data / "job-sink"), "--master", master]  # fmt: skip
    runs: dict[str, tuple[list[str], Path, int]] = {
        "rsp run": (["-m", "rsp", "run", str(query), "--stream", str(single), "-q"], ROOT, 1),
        "rsp spark --partition-by ?v": ([*spark, *by_key], ROOT, args.cores),
    }
    if not args.no_job:
        runs["plugin job --partition-by ?v (Parquet)"] = ([*job_args, *by_key], ROOT, args.cores)
    runs["rsp spark (one bucket)"] = (spark, ROOT, args.cores)
    if args.before:
        before = Path(args.before).resolve()
        runs["before: rsp spark --partition-by ?v"] = ([*spark, *by_key], before, args.cores)
        runs["before: rsp spark (engine in the driver)"] = (spark, before, args.cores)
    return runs


def prepare(data: Path, elements: int, keys: int, batches: int) -> int:
    """Write the query, the stream as one file and as ``batches`` files; returns the triples."""
    (data / "slow.rq").write_text(PARTITIONED_QUERY)
    lines = vehicle_lines(elements, keys)
    with (data / "vehicles.nt").open("w") as handle:
        handle.writelines(lines)
    write_files(data / "vehicles", lines, batches)
    return len(lines)


def run_rounds(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every command ``args.repeat`` times, round robin, the order rotated each round; outputs checked."""
    triples = prepare(data, args.elements, args.keys, args.batches)
    runs = commands(data, args)
    names = list(runs)
    outputs = data / "outputs"
    outputs.mkdir(exist_ok=True)
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    print(f"spark benchmark: {triples:,} triples, {args.keys:,} keys, {args.batches} micro-batches, "
          f"{args.repeat} round(s) of {len(names)} commands ...", file=sys.stderr, flush=True)  # fmt: skip
    for r in range(args.repeat):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            command, tree, _cores = runs[name]
            shutil.rmtree(data / "job-sink", ignore_errors=True)
            out = outputs / f"{slug(name)}.{r}.out"
            done = timed(command, tree, out)
            done["same_output"] = same_output(name, out, outputs / f"{slug('rsp run')}.0.out", data)
            rounds[name].append(done)
            took = f"{done['query_s']:.1f} s in query, " if "query_s" in done else ""
            flags = ("" if done["same_output"] else ", OUTPUT DIFFERS") + (
                ", FAILED" if done["returncode"] else ""
            )
            load = done["load"][0]
            print(f"  round {r + 1}: {name}: {took}{done['wall']:.1f} s wall, load {load:.1f}{flags}",
                  file=sys.stderr, flush=True)  # fmt: skip
    return summarise(rounds, runs, triples, args.batches)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def same_output(name: str, out: Path, reference: Path, data: Path) -> bool:
    """A command's output against ``rsp run``'s (which runs first in round 1)."""
    if name == "rsp run":
        return out.stat().st_size > 0
    if not reference.exists():
        return False
    if name.startswith("plugin job"):
        return job_matches(data / "job-sink", reference)
    return out.read_bytes() == reference.read_bytes()


def job_matches(sink: Path, reference: Path) -> bool:
    """The job's Parquet answers equal ``rsp run``'s at every instant up to the last one it wrote (an
    instant closes in the micro-batch whose elements pass it; the input never ends, so the last instants
    stay open), and it wrote all but the last few."""
    import pyarrow.parquet as pq

    files = sorted((sink / "answers").glob("*.parquet")) if (sink / "answers").exists() else []
    if not files:
        return False
    rows = [row for path in files for row in pq.read_table(path).to_pylist()]
    got: dict[int, list] = {}
    for row in rows:
        binding = {k: v for k, v in row["bindings"].items() if v is not None}
        got.setdefault(int(row["time"]), []).append(sorted(binding.items()))
    expected: dict[int, list] = {}
    for line in reference.read_text().splitlines():
        result = json.loads(line)
        expected[int(result["time"])] = [sorted(b.items()) for b in result.get("bindings", [])]
    last = max(got)
    if any(t > last for t in got) or last < max(expected) - 2000:
        return False
    return all(sorted(got.get(t, [])) == sorted(answers) for t, answers in expected.items() if t <= last)


def summarise(
    rounds: dict[str, list[dict[str, Any]]], runs: dict, triples: int, batches: int
) -> dict[str, Any]:
    """Medians over the rounds, per core, and each command's ratio to ``rsp run`` per core (once warm too,
    where the command says what a micro-batch then costs)."""
    report: dict[str, Any] = {}
    for name, done in rounds.items():
        cores = runs[name][2]
        ok = [d for d in done if not d["returncode"]]
        same = all(d["same_output"] for d in done)
        entry: dict[str, Any] = {
            "cores": cores,
            "rounds": done,
            "same_output": same,
            "failed": len(done) - len(ok),
        }
        if ok:
            entry["wall"] = statistics.median(d["wall"] for d in ok)
            queried = [d["query_s"] for d in ok if "query_s" in d]
            entry["query_s"] = statistics.median(queried) if queried else None
            seconds = entry["query_s"] if entry["query_s"] is not None else entry["wall"]
            entry["per_core"] = triples / seconds / cores
            entry["wall_per_core"] = triples / entry["wall"] / cores
            entry["us_per_triple_core"] = seconds * cores / triples * 1e6
            warm = [d["warm_s"] for d in ok if "warm_s" in d]
            if warm:
                entry["warm_s"] = statistics.median(warm)
                entry["warm_per_core"] = triples / batches / entry["warm_s"] / cores
        report[name] = entry
    # each round's ratio against that round's rsp run (the machine's speed drifts between rounds)
    base_rounds = rounds["rsp run"]
    for name, entry in report.items():
        cores, ratios, wall_ratios, warm_ratios = runs[name][2], [], [], []
        for mine, base in zip(rounds[name], base_rounds, strict=True):
            if mine["returncode"] or base["returncode"]:
                continue
            base_rate = triples / base["wall"]
            ratios.append(base_rate / (triples / mine.get("query_s", mine["wall"]) / cores))
            wall_ratios.append(base_rate / (triples / mine["wall"] / cores))
            if "warm_s" in mine:
                warm_ratios.append(base_rate / (triples / batches / mine["warm_s"] / cores))
        if ratios:
            entry["ratios"], entry["ratio"] = ratios, statistics.median(ratios)
            entry["wall_ratio"] = statistics.median(wall_ratios)
        if warm_ratios:
            entry["warm_ratios"], entry["warm_ratio"] = warm_ratios, statistics.median(warm_ratios)
    return report


def print_report(report: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    print(
        f"\n== rsp on Spark per core: {meta['triples']:,} triples, {meta['keys']:,} keys, "
        f"{meta['batches']} micro-batches, local[{meta['cores']}], median of {meta['repeat']} round(s) =="
    )
    print(
        f"{'command':<42} {'wall s':>7} {'query s':>8} {'triples/s/core':>15} {'µs/triple·core':>15} "
        f"{'÷ rsp run':>9} {'(wall)':>7}  output"
    )
    bad = []
    for name, run in report.items():
        if "wall" not in run:
            print(f"{name:<42} FAILED")
            bad.append(name)
            continue
        query = f"{run['query_s']:.1f}" if run.get("query_s") is not None else "-"
        ratio = f"{run['ratio']:.1f}" if "ratio" in run else "-"
        wall_ratio = f"{run['wall_ratio']:.1f}" if "wall_ratio" in run else "-"
        print(
            f"{name:<42} {run['wall']:>7.1f} {query:>8} {run['per_core']:>15,.0f} "
            f"{run['us_per_triple_core']:>15.1f} {ratio:>9} {wall_ratio:>7}  "
            f"{'same' if run['same_output'] else 'DIFFERS'}"
        )
        each = ", ".join(f"{d.get('query_s', d['wall']):.1f}" for d in run["rounds"])
        loads = ", ".join(f"{d['load'][0]:.1f}→{d['load'][1]:.1f}" for d in run["rounds"])
        ratios = ", ".join(f"{r:.1f}" for r in run.get("ratios", []))
        print(f"{'':<42} rounds: {each} s (÷ rsp run {ratios}); load {loads}")
        if "warm_ratio" in run:
            print(f"{'':<42} once warm: {run['warm_s']:.2f} s a micro-batch, {run['warm_per_core']:,.0f} "
                  f"triples/s per core = rsp run ÷ {run['warm_ratio']:.1f} (rounds' median)")  # fmt: skip
        if run["failed"] or not run["same_output"]:
            bad.append(name)
    print(
        "(÷ rsp run: rsp run's triples/s on one core over the command's per core, time in the streaming "
        "query, in the same round, median of the rounds; (wall): the same over the whole process; goal for "
        "the partitioned plugin: ≤ 3)"
    )
    return bad


# ---------------------------------------------------------------------------------------------------
# A Spark user's job with the plugin in it (--job), and the instrumented run (--profile)


def job(args: argparse.Namespace, processor=None) -> dict[str, Any]:
    """``read_stream`` → ``reason`` → Parquet under ``--sink`` (its checkpoint beside it), trigger
    ``availableNow``, one file per micro-batch; prints ``plugin job: N micro-batch(es) in X s`` and the
    median time of a micro-batch from the third on (Spark's ``triggerExecution``)."""
    from rsp.spark import read_stream, reason, session

    spark = session(args.master)
    frame = read_stream(spark, args.stream, max_files_per_trigger=1)
    answers = reason(frame, Path(args.query).read_text(), file=args.query, partition_by=args.partition_by)
    sink = Path(args.sink)
    started = time.monotonic()
    query = (
        answers.writeStream.format("parquet")
        .option("path", str(sink / "answers"))
        .option("checkpointLocation", str(sink / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    elapsed = time.monotonic() - started
    progress = [p for p in query.recentProgress if p.numInputRows]
    each = [p.durationMs.get("triggerExecution", 0) / 1000 for p in progress]
    warm = f", {statistics.median(each[2:]):.2f} s a micro-batch once warm" if len(each) > 2 else ""
    print(f"plugin job: {len(progress)} micro-batch(es) in {elapsed:.1f} s{warm}", file=sys.stderr)
    return {"elapsed": elapsed, "progress": query.recentProgress}


def timed_processor():
    """rsp's query processor with its state handles timed, one JSON line per bucket call appended to
    ``$RSP_BENCH_PROFILE`` (a class of this module: Spark ships it to the workers by value)."""
    import rsp.spark.reasoner as reasoner

    base = reasoner.QueryProcessor

    class Timed:
        def __init__(self, inner, totals: dict, name: str) -> None:
            self._inner, self._totals, self._name = inner, totals, name

        def __getattr__(self, attr):
            method = getattr(self._inner, attr)
            if not callable(method):
                return method

            def call(*a, **k):
                start = time.perf_counter()
                result = method(*a, **k)
                rows = None
                if attr == "get" and self._name == "list":
                    result = list(result)  # the iterator fetches as it is read: read it here
                    rows = len(result)
                elif attr in ("put", "appendList"):
                    rows = len(a[0])
                key = f"{self._name}.{attr}"
                self._totals[key] = self._totals.get(key, 0.0) + time.perf_counter() - start
                if rows is not None:
                    self._totals[key + ".rows"] = self._totals.get(key + ".rows", 0) + rows
                return iter(result) if attr == "get" and self._name == "list" else result

            return call

    class Handle:
        def __init__(self, handle, totals: dict) -> None:
            self.handle, self.totals = handle, totals

        def getListState(self, *a, **k):
            return Timed(self.handle.getListState(*a, **k), self.totals, "list")

        def getValueState(self, *a, **k):
            return Timed(self.handle.getValueState(*a, **k), self.totals, "value")

    def task() -> dict:
        from pyspark import TaskContext

        context = TaskContext.get()
        return {"pid": os.getpid(), "partition": context.partitionId() if context else None,
                "stage": context.stageId() if context else None}  # fmt: skip

    def write(record: dict) -> None:
        with open(os.environ["RSP_BENCH_PROFILE"], "a") as handle:
            handle.write(json.dumps(record) + "\n")

    class Profiled(base):
        def init(self, handle) -> None:
            self.totals: dict = {}
            write({"init": time.time(), **task()})
            super().init(Handle(handle, self.totals))

        def runner(self, bucket: int):
            """A new engine: the worker had none of the bucket's current state (rebuilt from the store)."""
            start = time.perf_counter()
            made = super().runner(bucket)
            self.totals["rebuilt"] = self.totals.get("rebuilt", 0) + 1
            self.totals["runner_s"] = self.totals.get("runner_s", 0.0) + time.perf_counter() - start
            return made

        def handleInputRows(self, key, rows, timerValues):
            self.totals.clear()
            start = time.time()
            t0 = time.perf_counter()
            frames = list(rows)
            t1 = time.perf_counter()
            out = list(super().handleInputRows(key, iter(frames), timerValues))
            t2 = time.perf_counter()
            yield from out
            t3 = time.perf_counter()
            write({**task(), "bucket": int(key[0]), "rows_in": sum(len(f) for f in frames),
                   "rows_out": sum(len(f) for f in out), "input_s": t1 - t0, "call_s": t2 - t1,
                   "output_s": t3 - t2, "at": start, "end": time.time(), **self.totals})  # fmt: skip

    reasoner.QueryProcessor = Profiled


def stage_times(spark, data: Path, partition_by: str | None, buckets: int) -> list[tuple[str, float]]:
    """The plan's steps before the stateful operator, over one micro-batch's file as a batch job (Spark's
    ``noop`` sink, best of three): the lines read; parsed (``parse_lines``, what ``read_stream`` does);
    keyed, tagged and bounded (``triple_rows``, what ``reason`` does before its stateful operator); then
    shuffled by bucket and sorted within the partitions, as the stateful operator's input is."""
    from pyspark.sql import functions as F

    from rsp.query.compile import compile_text
    from rsp.query.syntax.parser import parse_and_validate
    from rsp.query.translation.partition import partition_plan
    from rsp.spark.reasoner import BUCKET, triple_rows
    from rsp.spark.source import parse_lines

    text = (data / "slow.rq").read_text()
    parsed, _warnings = parse_and_validate(text, "slow.rq")
    compiled = compile_text(text, "slow.rq")
    plan = partition_plan(parsed, partition_by, compiled.background_rules) if partition_by else None
    path = str(sorted((data / "vehicles").iterdir())[0])
    lines = spark.read.text(path).select(
        "value",
        F.col("_metadata.file_path").alias("file"),
        F.col("_metadata.file_modification_time").alias("file_time"),
        F.col("_metadata.file_block_start").alias("block"),
        F.lit(None).cast("long").alias("arrival"),
    )
    parsed_lines = parse_lines(lines)
    tagged = triple_rows(parsed_lines, tuple(compiled.translation.streams), plan, buckets)
    shuffled = tagged.repartition(int(spark.conf.get("spark.sql.shuffle.partitions")), BUCKET)
    steps = [("read the lines", lines), ("+ parse (Spark SQL regex)", parsed_lines),
             ("+ key, tag and bound (mapInPandas)", tagged),
             ("+ shuffle by bucket, sort", shuffled.sortWithinPartitions(BUCKET))]  # fmt: skip
    times = []
    for name, frame in steps:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            frame.write.format("noop").mode("overwrite").save()
            best = min(best, time.perf_counter() - start)
        times.append((name, best))
    return times


def profiled_session(master: str):
    """A session as :func:`rsp.spark.session` makes it, with Spark's UI on (its REST API tells each stage's
    and task's times)."""
    from pyspark.sql import SparkSession

    from rsp.spark.session import options

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = {**options(master), "spark.ui.enabled": "true", "spark.ui.port": "0"}
    spark = SparkSession.builder.config(map=settings).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rest(spark, path: str):
    """A document of Spark's monitoring REST API about this application."""
    import urllib.request

    context = spark.sparkContext
    url = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - the driver's own UI
        return json.load(answer)


def _epoch(text: str) -> float:
    """A time of Spark's REST API (``2026-11-28T14:15:07.539GMT``) in seconds since the epoch."""
    moment = _dt.datetime.strptime(text.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")
    return moment.replace(tzinfo=_dt.timezone.utc).timestamp()


def _stage(spark, stage: int) -> dict[str, Any]:
    info = rest(spark, f"stages/{stage}")[0]
    wall = _epoch(info["completionTime"]) - _epoch(info["submissionTime"])
    return {"wall": wall, "run": info["executorRunTime"] / 1000, "cpu": info["executorCpuTime"] / 1e9,
            "tasks": rest(spark, f"stages/{stage}/{info['attemptId']}/taskList")}  # fmt: skip


PARTS = ("list.get", "list.appendList", "list.put", "engine", "input_s", "output_s")


def profile(args: argparse.Namespace) -> int:
    """``--profile``: the partitioned plugin job, instrumented (module docstring)."""
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="rsp-spark-bench-"))
    data.mkdir(parents=True, exist_ok=True)
    log = data / "profile.jsonl"
    log.unlink(missing_ok=True)
    shutil.rmtree(data / "job-sink", ignore_errors=True)
    os.environ["RSP_BENCH_PROFILE"] = str(log)
    try:
        triples = prepare(data, args.elements, args.keys, args.batches)
        args.query, args.stream = str(data / "slow.rq"), str(data / "vehicles")
        args.sink, args.master = str(data / "job-sink"), f"local[{args.cores}]"
        load = os.getloadavg()[0]
        reference = timed(["-m", "rsp", "run", args.query, "--stream", str(data / "vehicles.nt"), "-q"], ROOT,
                          data / "run.out")  # fmt: skip
        spark = profiled_session(args.master)
        timed_processor()
        done = job(args)
        records = [json.loads(line) for line in log.read_text().splitlines()]
        stateful = sorted({r["stage"] for r in records if r.get("stage") is not None})
        stages = {stage: _stage(spark, stage) for stage in stateful}
        before = {stage: _stage(spark, stage - 1) for stage in stateful}
        buckets = int(spark.conf.get("spark.sql.shuffle.partitions"))
        steps = stage_times(spark, data, args.partition_by, buckets)
    finally:
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)
    per_batch = triples / args.batches
    run_s = reference["wall"] * per_batch / triples
    after = os.getloadavg()[0]
    print(f"\n== where the plugin's time goes: {triples:,} triples, {args.keys:,} keys, {args.batches} "
          f"micro-batches of {per_batch:,.0f} triples, partition_by={args.partition_by}, {buckets} "
          f"buckets, local[{args.cores}], load {load:.1f}→{after:.1f} ==")  # fmt: skip
    print(f"rsp run, whole process: {reference['wall']:.2f} s ({reference['wall'] / triples * 1e6:.1f} µs "
          f"a triple; {run_s:.2f} s for a micro-batch's triples); the plugin job: {done['elapsed']:.1f} s "
          "in the streaming query")  # fmt: skip
    print("the steps before the stateful operator over one micro-batch's file, as a batch job (best of 3):")
    for name, seconds in steps:
        print(f"    {name:<38} {seconds:6.2f} s")
    progress = [p for p in done["progress"] if p.numInputRows]
    calls = [r for r in records if "bucket" in r]
    summary: dict[str, list[float]] = {}
    for index, (p, stage) in enumerate(zip(progress, stateful, strict=False)):
        add, planning = p.durationMs.get("addBatch", 0) / 1000, p.durationMs.get("queryPlanning", 0) / 1000
        commit = p.stateOperators[0].commitTimeMs / 1000 if p.stateOperators else 0.0
        pre, main_stage = before[stage], stages[stage]
        figures = dict.fromkeys((*PARTS, "calls", "to_first", "after"), 0.0)
        figures.update(addBatch=add, planning=planning, commit=commit, before=pre["wall"],
                       stateful=main_stage["wall"])  # fmt: skip
        print(f"micro-batch {p.batchId} ({p.numInputRows:,} lines): addBatch {add:.2f} s, planning "
              f"{planning:.2f} s, state store commit {commit:.2f} s")  # fmt: skip
        for number, name, info in ((stage - 1, "read, parse, tag, shuffle write", pre),
                                   (stage, "the stateful operator", main_stage)):  # fmt: skip
            print(f"    stage {number}, {name}: {info['wall']:.2f} s ({len(info['tasks'])} tasks, "
                  f"{info['run']:.2f} s run, JVM CPU {info['cpu']:.2f} s)")  # fmt: skip
        for task in sorted(main_stage["tasks"], key=lambda t: t["partitionId"]):
            mine = [c for c in calls if c["stage"] == stage and c["partition"] == task["partitionId"]]
            print(f"        task partition {task['partitionId']}: {_task(task, mine, figures)}")
        if index >= 1:  # the first micro-batch starts the workers: left out of the medians
            for key, value in figures.items():
                summary.setdefault(key, []).append(value)
    if summary:
        m = {key: statistics.median(values) for key, values in summary.items()}
        print(f"medians from the second micro-batch on (rsp run: {run_s:.2f} s for a micro-batch's "
              f"triples): addBatch {m['addBatch']:.2f} s + planning {m['planning']:.2f} s; stage before the "
              f"shuffle {m['before']:.2f} s; stateful stage {m['stateful']:.2f} s: to the first bucket call "
              f"{m['to_first']:.2f} s, the calls {m['calls']:.2f} s (list state read {m['list.get']:.2f} s, "
              f"appended {m['list.appendList']:.2f} s, rewritten {m['list.put']:.2f} s, engine and pandas "
              f"{m['engine']:.2f} s, rows to pandas {m['input_s']:.2f} s, answers out "
              f"{m['output_s']:.2f} s), after the last call {m['after']:.2f} s; state store commit "
              f"{m['commit']:.2f} s (tasks summed)")  # fmt: skip
    rebuilt = sum(1 for c in calls if c.get("rebuilt"))
    print(f"engines made new: {rebuilt} of {len(calls)} bucket calls (the first of each bucket included): "
          "a bucket whose task lands on another Python worker than its last one is rebuilt from the "
          "state store")  # fmt: skip
    placed = {c["bucket"]: c["partition"] for c in calls}
    if len(set(placed.values())) < len(placed):
        print(f"bucket -> task partition: {placed}: buckets that share a partition run one after the "
              "other in one task")  # fmt: skip
    return 0


STATE_CALLS = ("list.get", "list.appendList", "list.put", "list.exists", "value.get", "value.exists",
               "value.update")  # fmt: skip


def _task(task: dict, mine: list[dict], figures: dict[str, float]) -> str:
    """A stateful task's time: to its first bucket call, in the calls (what of it the state store, the
    engine, pandas took), after the last; added to ``figures``."""
    took = task["duration"] / 1000
    if not mine:
        return f"{took:.2f} s, no bucket"
    for call in mine:
        call["engine"] = call["call_s"] - sum(call.get(k, 0.0) for k in STATE_CALLS)
    part = {key: sum(c.get(key, 0.0) for c in mine) for key in PARTS}
    launch = _epoch(task["launchTime"])
    first, last = min(c["at"] for c in mine), max(c["end"] for c in mine)
    spans = {"calls": sum(c["end"] - c["at"] for c in mine), "to_first": first - launch,
             "after": launch + took - last}  # fmt: skip
    for key, value in (*part.items(), *spans.items()):
        figures[key] += value
    rows = sum(c.get("list.get.rows", 0) for c in mine)
    figures["rebuilt"] = figures.get("rebuilt", 0) + sum(c.get("rebuilt", 0) for c in mine)
    buckets = ", ".join(str(c["bucket"]) + (" (rebuilt)" if c.get("rebuilt") else "") for c in mine)
    return (f"{took:.2f} s = {spans['to_first']:.2f} s to the first bucket call + buckets {buckets}: "
            f"{spans['calls']:.2f} s [list state read {part['list.get']:.2f} s ({rows:,} rows), appended "
            f"{part['list.appendList']:.2f} s, rewritten {part['list.put']:.2f} s; engine and pandas "
            f"{part['engine']:.2f} s; rows to pandas {part['input_s']:.2f} s; answers out "
            f"{part['output_s']:.2f} s] + {spans['after']:.2f} s after the last call (worker "
            f"{', '.join(str(p) for p in sorted({c['pid'] for c in mine}))})")  # fmt: skip


# ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=200_000, help="stream elements (2 triples each)")
    parser.add_argument("--keys", type=int, default=1000, help="vehicles (the partitioning keys)")
    parser.add_argument("--batches", type=int, default=8, help="files, one per micro-batch")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, round robin (medians reported)")
    parser.add_argument("--cores", type=int, default=2, help="Spark's local[N]")
    parser.add_argument("--before", help="a tree of older code whose rsp spark runs in the same rounds")
    parser.add_argument("--no-job", action="store_true", help="leave the plugin job out")
    parser.add_argument("--quick", action="store_true", help="40,000 elements, 4 micro-batches, one round")
    parser.add_argument("--data", help="directory for generated data, kept (default: a temporary one)")
    parser.add_argument("--results", default=str(HERE / "results"), help="directory for the JSON results")
    parser.add_argument("--profile", action="store_true", help="where the plugin's time goes (one run)")
    parser.add_argument("--partition-by", default="?v", help="--profile and --job: the key (- for none)")
    parser.add_argument("--job", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--query", help=argparse.SUPPRESS)
    parser.add_argument("--stream", help=argparse.SUPPRESS)
    parser.add_argument("--sink", help=argparse.SUPPRESS)
    parser.add_argument("--master", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.partition_by == "-":
        args.partition_by = None
    if args.quick:
        args.elements, args.batches, args.repeat = 40_000, 4, 1
    if args.job:
        job(args)
        return 0
    if args.profile:
        return profile(args)
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="rsp-spark-bench-"))
    data.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    try:
        report = run_rounds(data, args)
    finally:
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)
    meta = {
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load": [load[0], os.getloadavg()[0]],
        "triples": args.elements * 2,
        "keys": args.keys,
        "batches": args.batches,
        "cores": args.cores,
        "repeat": args.repeat,
        "before": args.before,
    }
    bad = print_report(report, meta)
    print(f"load average before/after the whole run: {meta['load'][0]:.1f} / {meta['load'][1]:.1f}")
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-spark.json"
    path.write_text(json.dumps({**meta, "runs": report}, indent=2))
    print(f"results written to {path}")
    if bad:
        print("FAILED: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
