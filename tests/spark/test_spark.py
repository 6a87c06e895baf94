"""rsp through Spark Structured Streaming: the golden LARS cases, the seven CSRBench queries and the building
example give the same records through ``rsp spark`` as through ``rsp lars`` / ``rsp run`` (the differential
cases: tests/spark/test_spark_parity.py); directory, file and socket sources; malformed lines to --reject;
results to a Spark sink; the Python API; Ctrl-C; JVM warnings off stdout."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from golden_cases import GOLDEN, case_names
from paths import ROOT
from spark_conftest import write_parts
from test_csrbench import CSRBENCH, _expected, _instants

from rsp.cli import main

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("no_streams_left")]

BUILDING = ROOT / "examples" / "building"
ONTOLOGY = BUILDING.parents[1] / "ontologies" / "building.ttl"
BUILDING_ARGS = ["--ontology", str(ONTOLOGY), "--entailment", "rdfs"]
TEMPS_IRI = "http://example.org/building/temperatures"


def _cli(tmp_path: Path, command: str, *args: str, name: str = "out") -> str:
    output = tmp_path / f"{name}-{command}.txt"
    assert main([command, *args, "--output", str(output)]) == 0
    return output.read_text()


def _same_as_run(tmp_path: Path, query: Path, stream: str, *extra: str, spark_extra=()) -> str:
    expected = _cli(tmp_path, "run", str(query), "--stream", stream, *extra, "--quiet")
    got = _cli(tmp_path, "spark", str(query), "--stream", stream, *extra, *spark_extra, "--available-now")
    assert got == expected
    return got


@pytest.mark.parametrize("name", case_names())
def test_golden_lars_cases_agree(tmp_path: Path, name: str) -> None:
    program, stream = str(GOLDEN / name / "program.lars"), str(GOLDEN / name / "stream.txt")
    expected = _cli(tmp_path, "lars", program, "--stream", stream, "--quiet")
    got = _cli(tmp_path, "spark", program, "--stream", stream, "--available-now", "--quiet")
    assert got == expected
    assert got


@pytest.mark.parametrize("number", range(1, 8))
def test_csrbench_queries_agree(tmp_path: Path, number: int) -> None:
    stream = f"http://www.cwi.nl/SRBench/observations={CSRBENCH / 'stream.nt'}"
    got = _same_as_run(tmp_path, CSRBENCH / "queries" / f"q{number}.rq", stream)
    records = [json.loads(line) for line in got.splitlines()]
    assert _instants(records) == _instants(_expected(number))


def test_building_with_rdfs_agrees(tmp_path: Path) -> None:
    got = _same_as_run(tmp_path, BUILDING / "hot-rooms.rq", str(BUILDING / "temperatures.nt"), *BUILDING_ARGS)
    assert '"query": "HotRooms"' in got


def _split(lines: list[str], parts: int) -> list[list[str]]:
    size = -(-len(lines) // parts)
    return [lines[i : i + size] for i in range(0, len(lines), size)]


def test_directory_source_reads_files_by_modification_time(tmp_path: Path, capsys) -> None:
    """Files named against their order, dated in it: Spark takes them by mtime, one per micro-batch."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    chunks = _split(lines, 4)
    now = time.time()
    for index, chunk in enumerate(chunks):
        path = incoming / f"part-{len(chunks) - index}.nt"  # part-4.nt holds the first lines
        path.write_text("".join(chunk))
        os.utime(path, (now - 100 + index, now - 100 + index))
    query = str(BUILDING / "hot-rooms.rq")
    expected = _cli(tmp_path, "run", query, "--stream", str(BUILDING / "temperatures.nt"), *BUILDING_ARGS)
    capsys.readouterr()
    got = _cli(
        tmp_path, "spark", query, "--stream", str(incoming), *BUILDING_ARGS, "--available-now",
        "--max-files-per-trigger", "1",
    )  # fmt: skip
    assert got == expected
    err = capsys.readouterr().err
    assert "5 micro-batch(es)" in err  # a file each, then the one that reads the end of the input
    assert f"{len(lines)} lines, {len(lines)} triples" in err


BAD_LINES = [
    "<http://example.org/building#obs9> <http://example.org/building#madeBySensor> . # 4100\n",
    "<http://example.org/building#obs9> <http://example.org/building#madeBySensor> <http://example.org/building#t1> .\n",
    '<http://example.org/building#obs9> <http://example.org/building#note> "unterminated . # 4200\n',
]
ODD_BUT_GOOD = [  # not taken by Spark's ASCII fast path; rsp's parser accepts them
    '<http://example.org/building#obs9> <http://example.org/building#note> "température élevée"@fr . # 4300\n',
    "<http://example.org/building#obs9> <http://example.org/building#madeBySensor> <http://example.org/building#t1> . # 4300 ms\n",
]


def test_malformed_lines_go_to_reject_and_good_lines_stay(tmp_path: Path, capsys) -> None:
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.rstrip().endswith("# 4250"))
    stream = tmp_path / "in" / "temps.nt"
    stream.parent.mkdir()
    stream.write_text("".join(lines[:cut] + BAD_LINES + ODD_BUT_GOOD + lines[cut:]))
    query = str(BUILDING / "hot-rooms.rq")
    run_rejects = tmp_path / "run-rejects.nt"
    expected = _cli(
        tmp_path, "run", query, "--stream", str(stream), *BUILDING_ARGS, "--reject", str(run_rejects)
    )
    capsys.readouterr()
    rejects = tmp_path / "rejects"
    got = _cli(
        tmp_path, "spark", query, "--stream", str(stream.parent), *BUILDING_ARGS, "--available-now",
        "--reject", str(rejects),
    )  # fmt: skip
    assert got == expected
    rows = [json.loads(line) for path in sorted(rejects.iterdir()) for line in path.read_text().splitlines()]
    assert sorted(row["line"] + "\n" for row in rows) == sorted(BAD_LINES)
    assert sorted(run_rejects.read_text().splitlines(keepends=True)) == sorted(BAD_LINES)
    assert {row["file"] for row in rows} == {str(stream)}
    assert all(row["reason"] for row in rows)
    err = capsys.readouterr().err
    total = len(lines) + len(BAD_LINES) + len(ODD_BUT_GOOD)
    assert f"{total} lines, {total - len(BAD_LINES)} triples" in err
    assert f"{len(BAD_LINES)} rejected" in err
    assert "missing time comment" in err


def _records_by_instant(text: str) -> dict[int, Counter]:
    return {
        r["time"]: Counter(json.dumps(b, sort_keys=True) for b in r["bindings"])
        for r in map(json.loads, text.splitlines())
    }


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_results_to_a_spark_sink(tmp_path: Path, spark, fmt: str) -> None:
    sink = tmp_path / "sink"
    expected = _same_as_run(
        tmp_path, BUILDING / "hot-rooms.rq", str(BUILDING / "temperatures.nt"), *BUILDING_ARGS,
        spark_extra=("--sink", str(sink), "--sink-format", fmt),
    )  # fmt: skip
    frame = spark.read.format(fmt).load(str(sink))
    assert {"query", "time", "bindings", "batch"} <= set(frame.columns)
    got: dict[int, Counter] = {}
    for row in frame.collect():
        assert row["query"] == "HotRooms"
        bindings = row["bindings"]  # a map (parquet); a struct when JSON is read without a schema
        bindings = {
            k: v for k, v in (bindings.asDict() if hasattr(bindings, "asDict") else bindings).items() if v
        }
        got.setdefault(row["time"], Counter())[json.dumps(bindings, sort_keys=True)] += 1
    assert got == {t: c for t, c in _records_by_instant(expected).items() if c}
    assert list(sink.rglob("*.parquet" if fmt == "parquet" else "*.json"))


def test_lars_results_to_a_spark_sink(tmp_path: Path, spark) -> None:
    program, stream = str(GOLDEN / "cooling" / "program.lars"), str(GOLDEN / "cooling" / "stream.txt")
    sink = tmp_path / "sink"
    expected = _cli(tmp_path, "lars", program, "--stream", stream)
    _cli(tmp_path, "spark", program, "--stream", stream, "--available-now", "--sink", str(sink), "-q")
    rows = spark.read.json(str(sink)).collect()
    got = sorted((row["time"], row["atom"]) for row in rows)
    assert got == sorted(
        (r["time"], atom) for r in map(json.loads, expected.splitlines()) for atom in r["atoms"]
    )
    assert {row["program"] for row in rows} == {"program"}


def _serve(lines: list[str], ready: threading.Event, port: list[int], done: threading.Event) -> None:
    """A one-connection TCP server on 127.0.0.1: sends the lines slowly, then closes."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(30)
        port.append(server.getsockname()[1])
        ready.set()
        connection, _ = server.accept()
        with connection:
            for i in range(0, len(lines), 50):
                connection.sendall("".join(lines[i : i + 50]).encode())
                time.sleep(0.05)
        done.set()


def _socket_source(lines: list[str]) -> tuple[str, threading.Event]:
    ready, done, port = threading.Event(), threading.Event(), []
    threading.Thread(target=_serve, args=(lines, ready, port, done), daemon=True).start()
    assert ready.wait(10)
    return f"socket://127.0.0.1:{port[0]}", done


def _wait(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the stream to be processed"
        time.sleep(0.1)


def _building_answers(spark, frame, **options):
    """hot-rooms.rq over ``frame`` through :func:`rsp.spark.reason`, its results collected by an
    :class:`rsp.spark.InstantWriter` (``foreachBatch``) as ``rsp run --format jsonl`` records."""
    from rsp.spark import InstantWriter, reason

    results: list[dict] = []
    query = BUILDING / "hot-rooms.rq"
    answers = reason(frame, query.read_text(), file=str(query), ontology=[str(ONTOLOGY)], entailment="rdfs",
                     instants=True, **options)  # fmt: skip
    writer = InstantWriter(
        "HotRooms",
        "select",
        ["room", "temp"],
        lambda r: results.append({"time": r.time, "bindings": r.bindings}),
    )
    return answers.writeStream.foreachBatch(writer), results, writer


def test_socket_source_through_the_api(tmp_path: Path, spark) -> None:
    """A socket's lines through read_stream and reason, written by foreachBatch: rsp run's records up to
    the newest element (a later instant stays open while no end row comes)."""
    from rsp.spark import read_stream

    query = BUILDING / "hot-rooms.rq"
    expected = _cli(
        tmp_path, "run", str(query), "--stream", str(BUILDING / "temperatures.nt"), *BUILDING_ARGS
    )
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    newest = max(int(line.rsplit("#", 1)[1]) for line in lines)
    records = [{"time": r["time"], "bindings": r["bindings"]} for r in map(json.loads, expected.splitlines())]
    closed = [r for r in records if r["time"] <= newest]
    source, done = _socket_source(lines)
    writer, results, _counts = _building_answers(spark, read_stream(spark, source))
    running = writer.trigger(processingTime="200 milliseconds").start()
    try:
        _wait(lambda: done.is_set() and len(results) >= len(closed), 90)
    finally:
        running.stop()
    assert len(closed) > 2 and results == closed


def test_socket_lines_without_time_take_their_arrival_time(spark) -> None:
    """Socket lines without a time comment are elements at their arrival time (ms): a query with 100 ms
    windows over lines sent for about a second closes instants between the socket's start and the end
    of the test, each with answers."""
    from rsp.spark import InstantWriter, read_stream, reason

    lines = [line.split(" # ")[0] + "\n" for line in (BUILDING / "temperatures.nt").read_text().splitlines()]
    query = f"REGISTER QUERY Arrivals AS SELECT ?s FROM STREAM <{TEMPS_IRI}> [RANGE 100ms STEP 100ms] WHERE {{ ?s ?p ?o }}"
    before = time.time_ns() // 1_000_000
    source, done = _socket_source(lines * 3)
    answers = reason(read_stream(spark, source), query, instants=True)
    results: list = []
    writer = InstantWriter("Arrivals", "select", ["s"], results.append)
    running = answers.writeStream.foreachBatch(writer).trigger(processingTime="200 milliseconds").start()
    try:
        _wait(lambda: done.is_set() and len(results) >= 3, 90)
    finally:
        running.stop()
    after = time.time_ns() // 1_000_000
    assert all(before <= r.time <= after for r in results)
    assert sum(bool(r.bindings) for r in results) >= 2


def test_a_directory_dataframe_through_the_api(tmp_path: Path, spark) -> None:
    """A directory through read_stream, an end row from a second source, reason, foreachBatch: rsp run's
    records, every instant."""
    from rsp.spark import read_stream

    incoming, control = tmp_path / "incoming", tmp_path / "control"
    incoming.mkdir()
    control.mkdir()
    shutil.copy(BUILDING / "temperatures.nt", incoming / "a.nt")
    (control / "end.json").write_text('{"time": 0}\n')
    triples = read_stream(spark, str(incoming))
    assert {"s", "p", "o", "time", "file", "line"} <= set(triples.columns)
    frame = triples.unionByName(
        spark.readStream.schema("time long").json(str(control)), allowMissingColumns=True
    )
    writer, results, _counts = _building_answers(spark, frame)
    writer.trigger(availableNow=True).start().awaitTermination(120)
    expected = _cli(tmp_path, "run", str(BUILDING / "hot-rooms.rq"), "--stream", str(BUILDING / "temperatures.nt"),
                    *BUILDING_ARGS)  # fmt: skip
    assert results == [
        {"time": r["time"], "bindings": r["bindings"]} for r in map(json.loads, expected.splitlines())
    ]


def test_ctrl_c_stops_cleanly_and_flushes_the_last_instants(tmp_path: Path, capsys) -> None:
    """Without --available-now, rsp spark runs until SIGINT, then stops, closes the engine, exits 0."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    shutil.copy(BUILDING / "temperatures.nt", incoming / "a.nt")
    query = str(BUILDING / "hot-rooms.rq")
    expected = _cli(tmp_path, "run", query, "--stream", str(BUILDING / "temperatures.nt"), *BUILDING_ARGS)
    output = tmp_path / "spark.txt"

    def interrupt() -> None:
        _wait(lambda: output.exists() and output.stat().st_size > 0)
        signal.raise_signal(signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    code = main(
        [
            "spark",
            query,
            "--stream",
            str(incoming),
            *BUILDING_ARGS,
            "--trigger",
            "200 milliseconds",
            "--output",
            str(output),
        ]
    )
    assert code == 0
    assert output.read_text() == expected


def test_a_late_element_under_late_fail_stops_the_run_with_its_reason(tmp_path: Path, capsys) -> None:
    """The engine works on its own thread while Spark prepares the next micro-batch: an error it raises
    (a late element under --late fail) still ends the run with exit code 2, the reason and its file,
    after the instants closed before it, as rsp run over the lines in the order they arrive."""
    incoming = tmp_path / "in"
    line = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # {}\n"
    lines = [line.format(ms) for ms in (5000, 6000, 1000)]
    write_parts(incoming, lines, 3, ".nt")
    query = tmp_path / "q.rq"
    query.write_text(
        "REGISTER QUERY Q AS\nSELECT ?s FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s] WHERE { ?s ?p ?o }\n"
    )
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    status = main(
        [
            "run",
            str(query),
            "--stream",
            str(stream),
            "--late",
            "fail",
            "--output",
            str(tmp_path / "run.jsonl"),
        ]
    )
    assert status == 2
    assert (
        capsys.readouterr().err == f"{stream}:3: late element at time 1000 (instant 6000 is already closed)\n"
    )
    status = main(["spark", str(query), "--stream", str(incoming), "--available-now", "--max-files-per-trigger", "1",
                   "--late", "fail", "--output", str(tmp_path / "out.jsonl")])  # fmt: skip
    assert status == 2
    err = capsys.readouterr().err
    assert f"{incoming}: late element at time 1000 (instant 6000 is already closed)" in err
    assert "Traceback" not in err and "ERROR" not in err
    assert (tmp_path / "out.jsonl").read_text() == (tmp_path / "run.jsonl").read_text()
    assert [json.loads(r)["time"] for r in (tmp_path / "run.jsonl").read_text().splitlines()] == [6000]


# issue 13, defect 4: a micro-batch is a set of elements arriving together (taken in time order), and the
# engine decides what is late, as in rsp run over the lines in the order they arrive
SUM_QUERY = """REGISTER QUERY Sums AS
SELECT (COUNT(?v) AS ?n) (SUM(?v) AS ?sum)
FROM STREAM <http://ex.org/s> [RANGE 3s STEP 1s]
WHERE { ?e <http://ex.org/v> ?v }
"""


def out_of_order_parts(parts: int, per_part: int = 12) -> list[list[str]]:
    """``parts`` micro-batches of lines, each in time order, each starting well before the newest time
    of the one before (by 2.5 s with 3 s windows and 1 s steps): the first elements of every part after
    the first are late, the others out of order but not late. Element k has the value k."""
    out, k = [], 0
    for part in range(parts):
        start = 0 if part == 0 else part * 3000 - 2500
        times = [start + i * 3900 // per_part for i in range(per_part)]
        out.append([f'<http://ex.org/e{k + i}> <http://ex.org/v> "{k + i}"^^<{XSD}integer> . # {t}\n'
                    for i, t in enumerate(times)])  # fmt: skip
        k += per_part
    return out


XSD = "http://www.w3.org/2001/XMLSchema#"
COUNTS = re.compile(
    r"([\d,]+) lines, ([\d,]+) triples(?: at [\d,]+ timestamps)?, ([\d,]+) rejected, ([\d,]+) late"
)
"""rsp run's summary of a stream and rsp spark's (which counts no time points: it reads no stream in order)."""
LATE = re.compile(r"late element at time \d+ \(instant \d+ is already closed\), dropped")


def _sums_stream(tmp_path: Path) -> tuple[Path, Path, Path]:
    """SUM_QUERY, and four out-of-order parts as one file and as a folder of four files."""
    parts = out_of_order_parts(4)
    lines = [line for part in parts for line in part]
    query = tmp_path / "sums.rq"
    query.write_text(SUM_QUERY)
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    incoming = tmp_path / "in"
    write_parts(incoming, lines, len(parts), ".nt")
    return query, stream, incoming


def test_out_of_order_and_late_elements_across_micro_batches_as_rsp_run(tmp_path: Path, capsys) -> None:
    """Four files, one per micro-batch: the records, the late elements reported (time and closed
    instant) and the counts are rsp run's over the lines in the order they arrive."""
    query, stream, incoming = _sums_stream(tmp_path)
    capsys.readouterr()
    expected = _cli(tmp_path, "run", str(query), "--stream", f"http://ex.org/s={stream}")
    run_err = capsys.readouterr().err
    got = _cli(tmp_path, "spark", str(query), "--stream", f"http://ex.org/s={incoming}", "--available-now",
               "--max-files-per-trigger", "1")  # fmt: skip
    spark_err = capsys.readouterr().err
    assert got == expected
    assert LATE.findall(spark_err) == LATE.findall(run_err) and LATE.findall(run_err)
    assert COUNTS.findall(spark_err) == COUNTS.findall(run_err) and len(COUNTS.findall(run_err)) == 1
    assert f"{incoming}: late element" in spark_err
    assert "5 micro-batch(es)" in spark_err


def test_a_checkpointed_run_commits_each_micro_batch_in_sparks_checkpoint(tmp_path: Path) -> None:
    """A run with --checkpoint writes what ``rsp run`` writes, and Spark's checkpoint (under
    ``DIR/spark``) holds a commit for each micro-batch: four input files, the end's, and the batch
    that read the end file. (Runs killed and started again: tests/spark/test_spark_checkpoint.py.)"""
    query, stream, incoming = _sums_stream(tmp_path)
    checkpoint = tmp_path / "checkpoint"
    expected = _cli(tmp_path, "run", str(query), "--stream", f"http://ex.org/s={stream}", "--quiet")
    got = _cli(tmp_path, "spark", str(query), "--stream", f"http://ex.org/s={incoming}", "--available-now",
               "--max-files-per-trigger", "1", "--checkpoint", str(checkpoint), "--quiet")  # fmt: skip
    assert got == expected
    commits = sorted(int(p.name) for p in (checkpoint / "spark" / "commits").iterdir() if p.name.isdigit())
    assert commits[:4] == [0, 1, 2, 3] and commits == list(range(len(commits)))


def test_a_local_session_hands_results_over_directly_and_caps_no_micro_batch(spark) -> None:
    """The JVM of a new local session has no cap on a collect's total (the default 1 GiB failed a
    micro-batch of ≈ 6M lines in the driver) and hands task results of up to 1 GiB to the driver in
    memory, as the running SparkContext reports its settings."""
    from rsp.spark.session import LOCAL_RESULTS

    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.maxResultSize") == "0"
    assert {name: conf.get(name) for name in LOCAL_RESULTS} == LOCAL_RESULTS
    assert (
        LOCAL_RESULTS["spark.task.maxDirectResultSize"]
        == "1g"
        == f"{int(LOCAL_RESULTS['spark.rpc.message.maxSize']) // 1024}g"
    )


def test_arrow_batches_to_python_functions_are_cut_by_rows_not_measured_by_bytes(spark) -> None:
    """The session's byte cap on Arrow batches for Python functions is the one value at which Spark does
    not measure a batch's buffers after every row (``BatchedPythonArrowInput``: ``Int.MaxValue``), so
    they are cut by rows alone."""
    from rsp.spark.session import ARROW_BATCH_BYTES

    assert spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch") == str(ARROW_BATCH_BYTES)
    assert ARROW_BATCH_BYTES == 2**31 - 1  # Scala's Int.MaxValue
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "10000"


def test_a_local_sessions_python_workers_talk_to_the_jvm_over_unix_sockets(spark) -> None:
    """The session rsp launched on a local master has Spark use Unix sockets between the JVM and the
    Python workers, in a folder where a socket's path fits, and a Python function in a task runs in a
    worker that Spark told so."""
    import pyarrow as pa

    from rsp.spark.session import SOCKET_PATH_MAX, UNIX_SOCKET_NAME

    conf = spark.sparkContext.getConf()
    assert conf.get("spark.python.unix.domain.socket.enabled") == "true"
    folder = conf.get("spark.python.unix.domain.socket.dir")
    assert os.path.isdir(folder)
    assert len(os.path.join(folder, "x" * UNIX_SOCKET_NAME)) <= SOCKET_PATH_MAX

    def told(batches):
        for _batch in batches:
            pass
        told = os.environ.get("PYTHON_UNIX_DOMAIN_ENABLED", "")  # Scala's "True", which pyspark lowers
        yield pa.RecordBatch.from_pydict({"unix": [told.lower()]})

    rows = spark.range(1, numPartitions=1).mapInArrow(told, "unix string").collect()
    assert [row.unix for row in rows] == ["true"]


def test_a_micro_batch_of_up_to_256_mb_is_cut_into_one_task_per_core(spark, tmp_path: Path) -> None:
    """Spark cuts a scan's bytes by the cores, with splits of at most 128 MB: a 90 MB file is read by
    two even tasks on local[2] (at 32 MB it was three, the third alone after the other two), a 300 MB
    one by three. Only planned: the files are sparse."""
    for megabytes, tasks in ((90, 2), (250, 2), (300, 3)):
        path = tmp_path / f"{megabytes}.nt"
        with path.open("wb") as handle:
            handle.truncate(megabytes * 2**20)
        assert spark.read.text(str(path)).rdd.getNumPartitions() == tasks, megabytes
