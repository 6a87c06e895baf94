"""rsp through Spark Structured Streaming: the golden LARS cases, the seven CSRBench queries and the building
example give the same records through ``rsp spark`` as through ``rsp lars`` / ``rsp run`` (the differential
cases: tests/spark/test_spark_parity.py); directory, file and socket sources; malformed lines to --reject;
results to a Spark sink; the Python API; Ctrl-C; JVM warnings off stdout."""

from __future__ import annotations

import importlib
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
from rsp.spark.sink import result_schema

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
    assert "4 micro-batch(es)" in err
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
    with_schema = spark.read.schema(result_schema("select")).format(fmt).load(str(sink))
    assert with_schema.count() == frame.count()
    # local files are written without Hadoop's checksum files (rsp.spark.session)
    assert list(sink.rglob("*.parquet" if fmt == "parquet" else "*.json")) and not list(sink.rglob("*.crc"))


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
    assert {row["query"] for row in rows} == {"program"}


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


def _building_engine():
    from rsp.runtime import Engine

    engine = Engine(entailment="rdfs")
    engine.load_ontology(ONTOLOGY)
    query = engine.register((BUILDING / "hot-rooms.rq").read_text(), str(BUILDING / "hot-rooms.rq"))
    query.keep = False
    results = []
    query.subscribe(lambda r: results.append({"time": r.time, "bindings": r.bindings}))
    return engine, query, results


def test_socket_source_through_the_api(tmp_path: Path, spark) -> None:
    from rsp.spark import attach, read_stream

    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    source, done = _socket_source(lines)
    engine, query, results = _building_engine()
    running = attach(
        query, read_stream(spark, source), stream_iri=TEMPS_IRI, processing_time="200 milliseconds"
    )
    feeder = running.rsp_feeder
    _wait(lambda: done.is_set() and feeder.counters[0].lines == len(lines))
    running.stop()
    engine.close()
    expected = _cli(
        tmp_path,
        "run",
        str(BUILDING / "hot-rooms.rq"),
        "--stream",
        str(BUILDING / "temperatures.nt"),
        *BUILDING_ARGS,
    )
    assert results == [
        {"time": r["time"], "bindings": r["bindings"]} for r in map(json.loads, expected.splitlines())
    ]


def test_socket_lines_without_time_take_their_arrival_time(spark) -> None:
    from rsp.spark import attach, read_stream

    lines = [
        line.split(" # ")[0] + "\n" for line in (BUILDING / "temperatures.nt").read_text().splitlines()[:60]
    ]
    before = time.time_ns() // 1_000_000
    source, done = _socket_source(lines)
    engine, _query, results = _building_engine()
    running = attach(
        engine, read_stream(spark, source), stream_iri=TEMPS_IRI, processing_time="200 milliseconds"
    )
    _wait(lambda: done.is_set() and running.rsp_feeder.counters[0].triples == len(lines))
    running.stop()
    engine.close()
    after = time.time_ns() // 1_000_000
    assert results and all(before <= r["time"] <= after + 5000 for r in results)
    assert running.rsp_feeder.counters[0].rejected == 0


def test_a_directory_dataframe_through_the_api(tmp_path: Path, spark) -> None:
    from rsp.spark import attach, read_stream

    incoming = tmp_path / "incoming"
    incoming.mkdir()
    shutil.copy(BUILDING / "temperatures.nt", incoming / "a.nt")
    engine, query, results = _building_engine()
    running = attach(query, read_stream(spark, str(incoming)), available_now=True)
    running.awaitTermination(60)
    engine.close()
    expected = _cli(
        tmp_path,
        "run",
        str(BUILDING / "hot-rooms.rq"),
        "--stream",
        str(BUILDING / "temperatures.nt"),
        *BUILDING_ARGS,
    )
    assert [r["time"] for r in results] == [json.loads(line)["time"] for line in expected.splitlines()]
    frame = read_stream(spark, str(incoming))
    assert {"s", "p", "o", "time", "file", "line"} <= set(frame.columns)


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
    query.write_text("REGISTER QUERY Q AS\nSELECT ?s FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s] WHERE { ?s ?p ?o }\n")
    stream = tmp_path / "all.nt"
    stream.write_text("".join(lines))
    status = main(["run", str(query), "--stream", str(stream), "--late", "fail", "--output", str(tmp_path / "run.jsonl")])
    assert status == 2
    assert capsys.readouterr().err == f"{stream}:3: late element at time 1000 (instant 6000 is already closed)\n"
    status = main(["spark", str(query), "--stream", str(incoming), "--available-now", "--max-files-per-trigger", "1",
                   "--late", "fail", "--output", str(tmp_path / "out.jsonl")])  # fmt: skip
    assert status == 2
    err = capsys.readouterr().err
    assert f"{incoming / 'part-02.nt'}: late element at time 1000 (instant 6000 is already closed)" in err
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
COUNTS = re.compile(r"[\d,]+ lines, [\d,]+ triples in [\d,]+ instants, [\d,]+ rejected, [\d,]+ late")
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
    assert f"{incoming / 'part-01.nt'}: late element" in spark_err
    assert "4 micro-batch(es)" in spark_err


def test_a_local_checkpoints_logs_go_through_spark_file_system_manager(spark, tmp_path: Path) -> None:
    """A run's checkpoint on this machine's file system gets Spark's logs written through Hadoop's
    ``FileSystem`` (rsp.spark.pipeline.LOCAL_LOGS), and the run writes what ``rsp run`` writes; a
    checkpoint elsewhere keeps Spark's default. (Runs killed and started again with such checkpoints:
    tests/spark/test_spark_checkpoint.py.)"""
    from rsp.spark.pipeline import LOCAL_LOGS, local_logs_manager

    key = "spark.sql.streaming.checkpointFileManagerClass"
    assert local_logs_manager(spark, str(tmp_path / "elsewhere")) == LOCAL_LOGS[0]
    assert local_logs_manager(spark, f"file://{tmp_path}/elsewhere") == LOCAL_LOGS[0]
    assert local_logs_manager(spark, "nosuchscheme://host/checkpoint") is None
    query, stream, incoming = _sums_stream(tmp_path)
    checkpoint = tmp_path / "checkpoint"
    expected = _cli(tmp_path, "run", str(query), "--stream", f"http://ex.org/s={stream}", "--quiet")
    spark.conf.unset(key)
    try:
        got = _cli(tmp_path, "spark", str(query), "--stream", f"http://ex.org/s={incoming}", "--available-now",
                   "--max-files-per-trigger", "1", "--checkpoint", str(checkpoint), "--quiet")  # fmt: skip
        assert spark.conf.get(key) == LOCAL_LOGS[0]
    finally:
        spark.conf.unset(key)
    assert got == expected
    assert sorted(p.name for p in (checkpoint / "spark" / "commits").iterdir()) == ["0", "1", "2", "3"]


def test_the_driver_jvm_keeps_c2_for_code_ten_times_as_hot(spark) -> None:
    """A new session's JVM runs with the C2 thresholds of rsp.spark.session.C2_LATER (ten times the
    JVM's defaults), as the JVM itself reports them."""
    from rsp.spark.session import C2_LATER

    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    )
    wanted = dict(option.removeprefix("-XX:").split("=") for option in C2_LATER.split())
    assert wanted["Tier4InvocationThreshold"] == "50000"
    assert {name: bean.getVMOption(name).getValue() for name in wanted} == wanted


def test_a_local_session_hands_results_over_directly_and_caps_no_micro_batch(spark) -> None:
    """The JVM of a new local session has no cap on a collect's total (the default 1 GiB failed a
    micro-batch of ≈ 6M lines in the driver) and hands task results of up to 1 GiB to the driver in
    memory, as the running SparkContext reports its settings."""
    from rsp.spark.session import LOCAL_RESULTS

    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.maxResultSize") == "0"
    assert {name: conf.get(name) for name in LOCAL_RESULTS} == LOCAL_RESULTS
    jvm = spark.sparkContext._jvm
    direct = jvm.org.apache.spark.util.Utils.byteStringAsBytes(LOCAL_RESULTS["spark.task.maxDirectResultSize"])
    assert direct == 2**30 == int(LOCAL_RESULTS["spark.rpc.message.maxSize"]) * 2**20


def test_arrow_batches_to_python_functions_are_cut_by_rows_not_measured_by_bytes(spark) -> None:
    """The session's byte cap on Arrow batches for Python functions is the one value at which Spark does
    not measure a batch's buffers after every row (``BatchedPythonArrowInput``: ``Int.MaxValue``), so
    they are cut by rows alone."""
    from rsp.spark.session import ARROW_BATCH_BYTES

    conf = spark._jsparkSession.sessionState().conf()
    int_max = spark.sparkContext._jvm.java.lang.Integer.MAX_VALUE
    assert conf.arrowMaxBytesPerBatch() == ARROW_BATCH_BYTES == int_max
    assert conf.arrowMaxRecordsPerBatch() == 10_000


def test_a_local_sessions_python_workers_talk_to_the_jvm_over_unix_sockets(spark) -> None:
    """The session rsp launched on a local master has Spark use Unix sockets between the JVM and the
    Python workers, in a folder where a socket's path fits, and a Python function in a task runs in a
    worker that Spark told so."""
    import pyarrow as pa

    from rsp.spark.hosts import SOCKET_PATH_MAX
    from rsp.spark.session import UNIX_SOCKET_NAME

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


def test_unix_sockets_go_where_their_paths_fit(tmp_path: Path, monkeypatch) -> None:
    """Spark's local folder holds the sockets when their paths fit; else a folder of their own does (a
    path too long fails Spark's bind); none on a platform without them or when turned off."""
    import tempfile

    from rsp.spark.hosts import SOCKET_PATH_MAX

    session_module = importlib.import_module("rsp.spark.session")  # rsp.spark.session is the function
    monkeypatch.delenv("RSP_SPARK_UNIX_SOCKETS", raising=False)
    short = tempfile.mkdtemp(prefix="s", dir="/tmp")
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    try:
        options = session_module.unix_sockets(short)
        assert options == {
            "spark.python.unix.domain.socket.enabled": "true",
            "spark.python.unix.domain.socket.dir": short,
        }
        for scratch in (str(deep), None):
            own = session_module.unix_sockets(scratch)["spark.python.unix.domain.socket.dir"]
            try:
                assert own != str(deep) and os.path.isdir(own)
                assert len(os.path.join(own, "x" * session_module.UNIX_SOCKET_NAME)) <= SOCKET_PATH_MAX
            finally:
                shutil.rmtree(own, ignore_errors=True)
        monkeypatch.setenv("RSP_SPARK_UNIX_SOCKETS", "0")
        assert session_module.unix_sockets(short) == {}
        monkeypatch.delenv("RSP_SPARK_UNIX_SOCKETS")
        monkeypatch.setattr(session_module.os, "name", "nt")
        assert session_module.unix_sockets(short) == {}
    finally:
        shutil.rmtree(short, ignore_errors=True)


class _SessionChosen(Exception):
    pass


def test_a_micro_batch_of_up_to_256_mb_is_cut_into_one_task_per_core(spark, tmp_path: Path) -> None:
    """Spark cuts a scan's bytes by the cores, with splits of at most 128 MB: a 90 MB file is read by
    two even tasks on local[2] (at 32 MB it was three, the third alone after the other two), a 300 MB
    one by three. Only planned: the files are sparse."""
    for megabytes, tasks in ((90, 2), (250, 2), (300, 3)):
        path = tmp_path / f"{megabytes}.nt"
        with path.open("wb") as handle:
            handle.truncate(megabytes * 2**20)
        assert spark.read.text(str(path)).rdd.getNumPartitions() == tasks, megabytes


def test_a_session_captures_no_call_sites_and_imports_pysparks_helpers_while_the_jvm_starts(
    spark, monkeypatch
) -> None:
    """A new session turns PySpark's DataFrame debugging off (a stack walk and JVM calls for every
    DataFrame call) and Spark's order-independent checksum of shuffled rows, and imports the helpers
    PySpark's first JVM call needs (pandas among them) on a thread before it launches the JVM."""
    from pyspark.core.context import SparkContext
    from pyspark.errors.utils import is_debugging_enabled

    session_module = importlib.import_module("rsp.spark.session")  # rsp.spark.session: the function
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"
    assert is_debugging_enabled() is False
    # nor a checksum of every shuffled row (the keying's packed rows are the same on a retry)
    assert spark.conf.get("spark.sql.shuffle.orderIndependentChecksum.enabled") == "false"
    imported: list[str] = []

    def launch(*_args, **_kwargs):  # the import's thread is started before; it runs at once
        deadline = time.monotonic() + 10
        while not imported and time.monotonic() < deadline:
            time.sleep(0.01)
        raise _SessionChosen(list(imported))

    monkeypatch.setattr(session_module, "_import_quietly", imported.append)
    monkeypatch.setattr("pyspark.java_gateway.launch_gateway", launch)
    monkeypatch.setattr(SparkContext, "_gateway", None)
    with pytest.raises(_SessionChosen) as raised:
        session_module._start_shielded_context({"spark.master": "local[1]"})
    assert raised.value.args[0] == ["pyspark.testing.utils"]


@pytest.mark.parametrize(
    ("extra", "parses"),
    [((), False), (("--partition-by", "?sensor"), True)],
    ids=["driver-parses", "partitioned"],
)
def test_a_query_whose_driver_parses_gets_a_jvm_at_c1(monkeypatch, tmp_path: Path, extra, parses) -> None:
    """Without --partition-by the JVM only reads the lines (the driver parses them): rsp spark asks for
    a session whose JIT stays at C1; with it the tasks parse, and the session keeps C2. The options
    follow, and RSP_SPARK_FAST_START, when set, decides for every session."""
    from argparse import Namespace

    from rsp.cli import build_parser
    from rsp.cli import spark_run as command
    from rsp.spark.session import C1_ONLY, C2_LATER, jit_options

    chosen: dict = {}

    def fake_session(master, quick_exit=False, parses=True):
        chosen.update(master=master, parses=parses)
        raise _SessionChosen

    monkeypatch.setattr(command, "session", fake_session)
    from rsp.spark import hosts

    monkeypatch.setattr(hosts, "prestart_local", lambda _master, _partitions: None)
    query = BUILDING / "hot-rooms.rq"
    if extra:
        query = tmp_path / "per-sensor.rq"
        query.write_text(
            "REGISTER QUERY PerSensor AS SELECT ?sensor (COUNT(?v) AS ?n)\n"
            f"FROM STREAM <{TEMPS_IRI}> [RANGE 10s STEP 5s]\n"
            "WHERE { ?sensor <http://example.org/building/temperature> ?v } GROUP BY ?sensor\n"
        )
    args: Namespace = build_parser().parse_args(
        ["spark", str(query), "--stream", str(tmp_path), *BUILDING_ARGS, *extra]
    )
    with open(os.devnull, "w", encoding="utf-8") as out, pytest.raises(_SessionChosen):
        command.run_command(args, out)
    assert chosen == {"master": None, "parses": parses}
    monkeypatch.delenv("RSP_SPARK_FAST_START", raising=False)
    assert jit_options(parses=chosen["parses"]) == (C2_LATER if parses else C1_ONLY)
    for value, options in (("1", C1_ONLY), ("0", C2_LATER)):
        monkeypatch.setenv("RSP_SPARK_FAST_START", value)
        assert jit_options(parses=False) == jit_options(parses=True) == options


def test_the_driver_drops_the_blank_and_comment_lines_sparks_regex_finds(spark) -> None:
    """The blank-line pattern means the same to Java (Spark's rlike, as before the driver dropped them)
    and to RE2 (the driver's parse): line terminators other than \\n inside a comment, a byte order
    mark, white space before a comment."""
    from pyspark.sql import functions as F

    from rsp.spark import lines
    from rsp.spark.syntax import NTRIPLES_BLANK

    texts = ["", " ", "\t\r", "\ufeff", "\ufeff # c", "#", "  # a comment", "# \u2028 x", "#\x85", "#\u2029",
             "x # y", "\u2028", " \ufeffx", '<http://ex.org/a> <http://ex.org/p> "x" . # 5', "# é <a> ."]  # fmt: skip
    frame = spark.createDataFrame([(text, index) for index, text in enumerate(texts)], "value string, pos long")
    java = [row["pos"] for row in frame.where(~F.col("value").rlike(NTRIPLES_BLANK)).orderBy("pos").collect()]
    driver = lines.parse(frame.toArrow()).column("pos").to_pylist()
    assert driver == java
    dot = r"^[ \t\r\x{FEFF}]*(#.*)?\z"  # the pattern written with Java's ".", as Spark ran it before
    assert [row["pos"] for row in frame.where(~F.col("value").rlike(dot)).orderBy("pos").collect()] == java
    assert java == [7, 8, 9, 10, 11, 12, 13]  # comments with \u2028, \x85 or \u2029 end where Java's "." ends


def test_lines_parsed_as_they_arrive_are_the_lines_collected_then_parsed(spark, tmp_path: Path) -> None:
    """collect_parsed (each record batch parsed on arrival, PySpark's own collect protocol) gives the
    table that collecting the lines with toArrow and parsing them gives, in order, for a frame of many
    record batches and partitions, for an empty one, and without that protocol (the lines come back
    unparsed, for the feeder); a job that fails raises the JVM's error."""
    from pyspark.sql import functions as F

    from rsp.spark import lines
    from rsp.spark.pipeline import collect_parsed

    def generated(start: int, end: int):  # one partition of lines
        line = F.format_string('<http://ex.org/e%d> <http://ex.org/p> "%d" . # %d', "id", "id", "id")
        return spark.range(start, end, 1, 1).select(line.alias("value"))

    odd = ['<http://ex.org/e7> <http://ex.org/p> "7" . # 7 ms', "not a triple"]  # for rsp's parser
    parts = [generated(0, 30_000), generated(30_000, 31_000), generated(31_000, 62_000),
             spark.createDataFrame([(line,) for line in odd], "value string").coalesce(1)]  # fmt: skip
    frame = parts[0].unionByName(parts[1]).unionByName(parts[2]).unionByName(parts[3])
    frame = frame.select("value", F.monotonically_increasing_id().alias("pos"))
    expected = lines.parse(frame.toArrow())  # in the order of the partitions, as toArrow puts them
    got = collect_parsed(frame)
    assert got.num_rows == 62_002 and got.equals(expected)
    assert got.column("line").drop_null().to_pylist() == odd
    empty = collect_parsed(frame.where("value = ''"))
    assert empty.num_rows == 0 and {"s", "p", "o", "time", "line", "pos"} <= set(empty.column_names)
    assert collect_parsed(frame.where("value = ''")).column_names == expected.column_names

    class Elsewhere:  # a PySpark without the JVM's collectAsArrowToPython
        _jdf = object()

        def toArrow(self):
            return frame.toArrow()

    assert collect_parsed(Elsewhere()).column_names == ["value", "pos"]
    failing = frame.select("value", "pos", F.raise_error(F.lit("rsp-test-failure")).alias("x"))
    with pytest.raises(Exception, match="rsp-test-failure"):
        collect_parsed(failing.select("value", "pos", F.col("x").cast("string").alias("x")))


@pytest.mark.parametrize("extra", [(), ("--partition-by", "?s")], ids=["driver-parses", "spark-parses"])
def test_a_time_too_large_for_a_long_is_a_rejected_line(tmp_path: Path, capsys, extra) -> None:
    """A time comment beyond 2^63 - 1 ms fits no Spark column: the line is rejected with the reason (it
    stopped the whole run before, Spark's cast failing), whether Arrow (one engine) or Spark
    (--partition-by) parses the lines, and the others give rsp run's answers over them."""
    query = tmp_path / "q.rq"
    query.write_text(
        "REGISTER QUERY N AS SELECT ?s (COUNT(*) AS ?n) FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] "
        "WHERE { ?s <http://ex.org/p> ?o } GROUP BY ?s"
    )
    good = [f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # {t}\n" for t in (1000, 2500)]
    huge = [f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # {t}\n" for t in (2**63, 10**30)]
    (tmp_path / "good.nt").write_text("".join(good))
    stream = tmp_path / "in" / "s.nt"
    stream.parent.mkdir()
    stream.write_text(good[0] + huge[0] + good[1] + huge[1])
    expected = _cli(tmp_path, "run", str(query), "--stream", str(tmp_path / "good.nt"), "--quiet")
    capsys.readouterr()
    got = _cli(tmp_path, "spark", str(query), "--stream", str(stream), "--available-now", *extra)
    assert got == expected
    err = capsys.readouterr().err
    assert f"time {2**63} is out of range" in err and f"time {10**30} is out of range" in err
    if not extra:  # the partitioned run has no summary line per stream
        assert "4 lines, 2 triples in 2 instants, 2 rejected, 0 late" in err


QUICK_EXIT_PROBE = """
import sys
from rsp.cli import main
code = main(sys.argv[1:])
from pyspark.core.context import SparkContext
jvm = SparkContext._jvm
print("PROBE", SparkContext._gateway.proc.pid, jvm.java.lang.System.getProperty("java.io.tmpdir"),
      SparkContext._active_spark_context.getConf().get("spark.local.dir"), file=sys.stderr, flush=True)
sys.exit(code)
"""


@pytest.mark.parametrize("extra", [(), ("--partition-by", "?s")], ids=["one-engine", "partitioned"])
def test_the_command_ends_its_jvm_at_once_and_leaves_no_scratch_files(tmp_path: Path, extra) -> None:
    """rsp spark ends the local JVM it launched as it exits instead of leaving it ≈ 0.6 s of Spark's
    shutdown hooks: the JVM is gone when the command's process has ended, its scratch folder (Spark's
    local dir and the JVM's temporary folder, one folder) is removed, nothing of Spark's is left in the
    temporary folder, nothing is reported on stderr, and the results are rsp run's."""
    import subprocess
    import sys

    query = tmp_path / "count.rq"
    query.write_text(
        "REGISTER QUERY N AS SELECT ?s (COUNT(*) AS ?n) FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] "
        "WHERE { ?s <http://ex.org/p> ?o } GROUP BY ?s"
    )
    stream = tmp_path / "s.nt"
    line = "<http://ex.org/a{}> <http://ex.org/p> <http://ex.org/b> . # {}\n"
    stream.write_text("".join(line.format(i % 3, i * 400) for i in range(9)))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    args = ["spark", str(query), "--stream", str(stream), "--available-now", *extra]
    with (tmp_path / "err.txt").open("w") as err:
        done = subprocess.run([sys.executable, "-c", QUICK_EXIT_PROBE, *args], stdout=subprocess.PIPE,
                              stderr=err, text=True, timeout=240, env=env, cwd=ROOT)  # fmt: skip
    stderr = (tmp_path / "err.txt").read_text()
    assert done.returncode == 0, stderr
    pid, tmpdir, local_dir = re.search(r"PROBE (\d+) (\S+) (\S+)", stderr).groups()
    with pytest.raises(ProcessLookupError):  # ended and reaped by rsp: not still running its hooks
        os.kill(int(pid), 0)
    assert tmpdir == local_dir and Path(local_dir).parent == temp
    assert not Path(local_dir).exists()
    spark_files = ("spark-", "blockmgr-", "rsp-spark-local-")
    assert not [p.name for p in temp.iterdir() if p.name.startswith(spark_files)]
    assert "Traceback" not in stderr and "Exception" not in stderr, stderr
    assert done.stdout == _cli(tmp_path, "run", str(query), "--stream", str(stream), "--quiet")


def test_jvm_warnings_stay_off_the_results(tmp_path: Path) -> None:
    """The JVM writes its warnings to stdout by default, where rsp spark writes results: a new session
    sends them to stderr (here the one about large pages, on a machine without them)."""
    import subprocess
    import sys

    from rsp.spark import java_executable

    probe = subprocess.run([java_executable(), "-XX:+UseLargePages", "-version"], capture_output=True, text=True)
    warning = "UseLargePages disabled"
    query = tmp_path / "count.rq"
    query.write_text(
        "REGISTER QUERY N AS SELECT (COUNT(*) AS ?n) FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] "
        "WHERE { ?s ?p ?o }"
    )
    stream = tmp_path / "s.nt"
    stream.write_text("<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # 10\n")
    env = {**os.environ, "RSP_SPARK_JAVA_OPTIONS": "-XX:+UseLargePages"}
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "spark", str(query), "--stream", str(stream), "--available-now"],
        capture_output=True, text=True, timeout=240, env=env, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == _cli(tmp_path, "run", str(query), "--stream", str(stream), "--quiet")
    if warning in probe.stdout:  # the JVM warns here (no large pages): the warning went to stderr
        assert warning in done.stderr


ATTACH_AND_STOP = """
import shutil, sys
from pathlib import Path
from rsp.runtime import Engine
from rsp.spark import attach, read_stream, session

incoming, ontology, query_file = (Path(a) for a in sys.argv[1:4])
engine = Engine(entailment="rdfs")
engine.load_ontology(ontology)
query = engine.register(query_file.read_text(), str(query_file))
running = attach(query, read_stream(session(), str(incoming)), available_now=True)
running.awaitTermination(120)
running.stop()
engine.close()
print(len(list(query)))
"""


def test_a_query_attached_through_the_api_leaves_no_temporary_checkpoint(tmp_path: Path) -> None:
    """attach() without a checkpoint gives Spark a temporary one; the caller stops the query, and the
    temporary folder is gone when the process ends (rsp spark removes its own when the query stops)."""
    import subprocess
    import sys

    incoming, scratch = tmp_path / "incoming", tmp_path / "tmp"
    incoming.mkdir()
    scratch.mkdir()
    shutil.copy(BUILDING / "temperatures.nt", incoming / "a.nt")
    done = subprocess.run(
        [sys.executable, "-c", ATTACH_AND_STOP, str(incoming), str(ONTOLOGY), str(BUILDING / "hot-rooms.rq")],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, TMPDIR=str(scratch)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 0  # the query answered
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("rsp-spark-checkpoint-")]


def test_a_file_is_cut_into_even_tasks_and_small_files_share_one(tmp_path: Path, spark) -> None:
    """The session counts a file's opening as 8 KB, not Spark's 4 MB: a 1 MB file is read by as many
    tasks as the session has cores, cut evenly (with 4 MB it was one task, and a 10 MB file was cut
    7 + 3 MB on 2 cores); forty small files are read by a few tasks, not one per eight files."""
    cores = spark.sparkContext.defaultParallelism
    line = '<http://ex.org/s> <http://ex.org/p> "o" . # 1\n'
    big = tmp_path / "big.nt"
    big.write_text(line * (1_000_000 // len(line)))
    sizes = spark.read.text(str(big)).rdd.glom().map(len).collect()
    assert len(sizes) == cores
    assert max(sizes) - min(sizes) <= 0.05 * max(sizes)
    small = tmp_path / "small"
    small.mkdir()
    for index in range(40):
        (small / f"{index:02d}.nt").write_text(line * 10)
    frame = spark.read.text(str(small))
    assert frame.count() == 400
    assert frame.rdd.getNumPartitions() <= cores
