"""LARS programs in key buckets (:func:`rsp.spark.programs.reason_program`, rsp/spark/processor_lars.py)
against one engine over the whole stream, without a JVM, and once through Spark.

The real reading step (rsp's parser, the keying, :func:`rsp.spark.reasoner.bounds_function`) and the real
stateful processor run in-process over in-memory state handles (tests/support/program_buckets.py), with
the engines cached, rebuilt from the state at every micro-batch, uncached, and with every micro-batch run
twice (as Spark does after a failure). The reference is ``rsp lars``'s reading of the micro-batches' lines
one after the other, each micro-batch sorted by time (:func:`rsp.io.atoms.iter_batches` and
:meth:`rsp.engine.Engine.run_batches`, the path of the command), which is one engine fed micro-batch by
micro-batch: every time point of the timeline, its atoms (the union over the buckets), each time point
reported once and in the micro-batch whose elements pass it (the newest time point waits for a later one
or the end), the late atoms and the rejected lines. Generated cases: partitionable programs (windows,
``@T``, negation, facts, recursion through keyed predicates) partitioned by ``V`` and not, over streams
going back in time, with several keys, bare time lines, atoms no rule reads, malformed lines and (refused
when partitioned) atoms of predicates with facts or rules; and any small program of
tests/support/lars_strategies.py (tuple windows, boxes) unpartitioned."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lars_strategies import cases as lars_cases
from paths import ROOT

pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")

from program_buckets import MODES, Operator  # noqa: E402

from rsp.engine import Engine  # noqa: E402
from rsp.io.atoms import iter_batches, parse_line  # noqa: E402
from rsp.lars import parse  # noqa: E402
from rsp.lars.model import format_atom  # noqa: E402
from rsp.spark.processor_lars import LARS_OUTPUT, LarsProcessor, atom_tagger, lars_job  # noqa: E402

pytest_plugins = ["spark_conftest"]
RULES = [  # partitionable by V: V in every keyed atom and every head of a rule touching stream data
    "seen(V, X) :- [{n}] <> p(V, X).",
    "fast(V) :- p(V, S), limit(L), S > L.",
    "calm(V) :- p(V, _S), not [{n}] <> alarm(V).",
    "@T noted(V) :- [{n}] @T alarm(V), not fast(V).",
    "twice(V) :- seen(V, X), seen(V, Y), X < Y.",
    "chain(V) :- alarm(V). chain(V) :- [{n}] <> chain2(V). chain2(V) :- chain(V), p(V, _X).",
    "quiet(V) :- seen(V, _X), not calm(V).",
    "always(L) :- limit(L).",
    "@T tick(L) :- [{n}] @T limit(L).",
]


def _run(text: str, batches: list[list[str]], splits: list[list[int]], partition_by, buckets: int, mode: str):
    """The buckets' rows, read back: every time point's atoms, the time points reported in each
    micro-batch (the end is the last), the late atoms' times and the rejected lines."""
    job = lars_job(f"p-{uuid.uuid4().hex}", "p", text, "p.lars", partition_by, cache=mode != "uncached")
    operator = Operator(job, LarsProcessor, atom_tagger, LARS_OUTPUT, buckets, mode)
    for batch, parts in zip(batches, splits, strict=True):
        operator.batch(batch, parts)
    operator.end()
    points: dict[int, list[str]] = {}
    reported: list[list[int]] = [[] for _ in range(len(batches) + 1)]
    late, rejects = [], []
    read = 0
    for row, index in zip(operator.rows, operator.batches, strict=True):
        program, time, kind, _rank, detail, atom, _pred, _args = row
        assert program == "p"
        if kind == "instant":
            reported[index].append(time)
            points.setdefault(time, [])
        elif kind == "atom":
            points.setdefault(time, []).append(atom)
        elif kind == "late":
            late.append(time)
        elif kind == "read":  # an input partition's count of the lines it read, to bucket 0
            read += sum(json.loads(detail)["lines"].values())
        else:
            assert kind == "reject"
            rejects.append(json.loads(detail)["line"])
    assert read == sum(map(len, batches)), "every line read is counted once"
    return {t: sorted(a) for t, a in points.items()}, reported, sorted(late), sorted(rejects)


def _reference(text: str, batches: list[list[str]], refused: set):
    """``rsp lars`` over the micro-batches' lines, each micro-batch sorted by time (``refused``: the
    predicates whose stream atoms a partitioned run refuses, left out)."""
    engine = Engine(parse(text, "p.lars"))
    lines, rejects, reported, reached, next_point = [], [], [], None, None
    for batch in batches:
        kept = []
        for line in batch:
            try:
                parsed = parse_line(line)
            except ValueError:
                rejects.append(line)
                continue
            if parsed is None:
                continue
            if parsed[1] is not None and (parsed[1], len(parsed[2])) in refused:
                rejects.append(line)
                continue
            kept.append((parsed[0], line))
        kept.sort(key=lambda item: item[0])
        lines += [line for _t, line in kept]
        if kept:
            next_point = kept[0][0] if next_point is None else next_point
            reached = kept[-1][0] if reached is None else max(reached, kept[-1][0])
        reported.append([] if reached is None else list(range(next_point, reached)))
        next_point = next_point if reached is None else max(next_point, reached)
    reported.append([] if reached is None else list(range(next_point, reached + 1)))
    late: list[int] = []
    points = {}
    for t in engine.run_batches(iter_batches(lines, on_late=lambda time, _p, _a: late.append(time))):
        points[t] = sorted(format_atom(p, a) for p, a in engine.output())
    return points, reported, sorted(late), sorted(rejects)


def _refused(text: str) -> set:
    job = lars_job("x", "p", text, "p.lars", "V")
    return {sig for sig, _reason in job.refused}


def _check(text: str, batches: list[list[str]], splits: list[list[int]], partitioned: bool = True) -> None:
    configs = [(None, 1)] + ([("V", 1), ("V", 3)] if partitioned else [])
    for partition_by, buckets in configs:
        expected = _reference(text, batches, _refused(text) if partition_by else set())
        for mode in MODES:
            got = _run(text, batches, splits, partition_by, buckets, mode)
            where = f"partition_by={partition_by}, {buckets} bucket(s), engines {mode}"
            assert got[0] == expected[0], f"atoms, {where}"
            assert got[1] == expected[1], f"time points per micro-batch, {where}"
            assert got[2:] == expected[2:], f"late atoms and rejects, {where}"


@st.composite
def _cases(draw) -> tuple[str, list[list[str]], list[list[int]]]:
    rules = [RULES[0], *draw(st.lists(st.sampled_from(RULES[1:]), max_size=3, unique=True))]
    text = f"limit({draw(st.integers(5, 25))}).\n" + "\n".join(
        r.format(n=draw(st.integers(0, 4))) for r in rules
    )
    batches, now = [], draw(st.integers(0, 5))
    for _ in range(draw(st.integers(1, 5))):
        batch = []
        for _ in range(draw(st.integers(0, 6))):
            now += draw(st.sampled_from([0, 0, 1, 1, 2, 4]))
            t = max(0, now - draw(st.sampled_from([0, 0, 0, 0, 2, 5])))
            key = f"bus{draw(st.integers(0, 4))}"
            batch.append(draw(st.sampled_from([
                f"{t} p({key},{draw(st.integers(0, 30))})", f"{t} p({key},{draw(st.integers(0, 30))})",
                f"{t} alarm({key})", f"{t}", f"{t} other(x)", f"{t} limit(3)", f"{t} seen({key},1)",
                f"{t} p({key}", "% a comment",
            ])))  # fmt: skip
        batches.append(batch)
    splits = [draw(st.lists(st.integers(0, 2), min_size=len(b), max_size=len(b))) for b in batches]
    return text, batches, splits


FIXED = (  # facts-only atoms from the first time point on (before any key's atom), atoms back in time (late
    # behind 6, not late at 6, the time point held back), refused and malformed lines, a bare time line
    # that stretches the timeline
    "limit(12).\n" + "\n".join(r.format(n=2) for r in RULES),
    [["4 p(bus1,5)", "3", "4 alarm(bus2)"], [], ["6 p(bus1,13)", "6 other(x)"],
     ["5 p(bus2,20)", "6 alarm(bus1)", "7 limit(3)", "8 seen(bus1,1)", "8 p(", "10 p(bus3,14)", "12"]],
    [[0, 1, 1], [], [1, 0], [0, 1, 2, 0, 1, 2, 1]],
)  # fmt: skip


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases())
@example(case=FIXED)
def test_partitionable_programs_in_buckets_equal_one_engine(case) -> None:
    _check(*case)


@st.composite
def _any_program(draw) -> tuple[str, list[list[str]], list[list[int]]]:
    """Any small program over its stream cut into micro-batches, each shuffled, some lines moved to a later
    micro-batch (back in time)."""
    text, lines = draw(lars_cases())
    cuts = sorted(draw(st.lists(st.integers(0, len(lines)), max_size=3)))
    batches = [lines[a:b] for a, b in zip([0, *cuts], [*cuts, len(lines)], strict=True)]
    for index in range(len(batches) - 1):
        if batches[index] and draw(st.booleans()):
            batches[index + 1].append(batches[index].pop(draw(st.integers(0, len(batches[index]) - 1))))
    batches = [draw(st.permutations(batch)) for batch in batches]
    splits = [draw(st.lists(st.integers(0, 1), min_size=len(b), max_size=len(b))) for b in batches]
    return text, batches, splits


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_any_program())
def test_any_program_in_one_bucket_equals_one_engine(case) -> None:
    _check(*case, partitioned=False)


def test_the_fixed_case_reaches_the_corners() -> None:
    """The fixed case does what its comment says under the reference."""
    text, batches, _splits = FIXED
    points, reported, late, rejects = _reference(text, batches, _refused(text))
    assert min(points) == 3 and max(points) == 12
    assert all("always(12)" in points[t] for t in points)
    assert "chain(bus1)" in points[6] and "calm(bus2)" not in points[5]
    assert reported == [[3], [], [4, 5], list(range(6, 12)), [12]]
    assert late == [5] and sorted(rejects) == ["7 limit(3)", "8 p(", "8 seen(bus1,1)"]
    assert _reference(text, batches, set())[3] == ["8 p("]


def test_refused_programs_and_atoms() -> None:
    """A program that does not partition by the variable is refused with the reason, at its rule."""
    from rsp.errors import RspError

    with pytest.raises(RspError, match=r"p.lars:1:1: --partition-by V: .*tuple window"):
        lars_job("x", "p", "q(V) :- [#3] <> p(V).\n", "p.lars", "V")


# -- through Spark ---------------------------------------------------------------------------------------
@pytest.mark.spark
def test_traffic_through_spark_equals_rsp_lars(tmp_path: Path, spark, no_streams_left) -> None:
    """examples/traffic partitioned by V over three buckets, read in three micro-batches through Spark's
    file source and the RocksDB state store, then ended: ``rsp lars``'s output, time point by time
    point."""
    from spark_conftest import write_parts

    from rsp.cli import main
    from rsp.spark import read_stream
    from rsp.spark.programs import reason_program

    program = ROOT / "examples" / "traffic" / "short-stops.lars"
    stream = ROOT / "examples" / "traffic" / "positions.nt"
    output = tmp_path / "lars.jsonl"
    assert main(["lars", str(program), "--stream", str(stream), "-q", "--output", str(output)]) == 0
    expected = [json.loads(line) for line in output.read_text().splitlines()]
    write_parts(tmp_path / "in", stream.read_text().splitlines(keepends=True), 3, ".nt")
    (tmp_path / "control").mkdir()
    lines = read_stream(spark, str(tmp_path / "in"), kind="atoms", max_files_per_trigger=1)
    control = spark.readStream.schema("line string, file string").json(str(tmp_path / "control"))
    frame = lines.select("line", "file").unionByName(control)
    rows = reason_program(frame, program.read_text(), file=str(program), partition_by="V", buckets=3,
                          instants=True)  # fmt: skip
    got = _drive(rows, tmp_path)
    points: dict[int, list[str]] = {}
    batches = {}
    read = sum(sum(json.loads(row["detail"])["lines"].values()) for row in got if row["kind"] == "read")
    content = [
        line for line in stream.read_text().splitlines() if line.strip() and line.lstrip()[0] not in "#%"
    ]
    assert read == len(content)  # blank and comment lines left out by read_stream
    for row in (row for row in got if row["kind"] != "read"):
        assert row["kind"] in ("instant", "atom"), row
        points.setdefault(row["time"], [])
        if row["kind"] == "atom":
            points[row["time"]].append(row["atom"])
        else:
            assert row["time"] not in batches, "a time point reported twice"
            batches[row["time"]] = row["batch"]
    assert [{"time": t, "atoms": sorted(points[t])} for t in sorted(points)] == expected
    assert len(set(batches.values())) >= 3  # the time points came out micro-batch by micro-batch


def _drive(rows, tmp_path: Path) -> list[dict]:
    """Run ``rows`` over the input there is (available now), then drop an end row into the control folder
    and run again from the checkpoint: every row, with its micro-batch."""
    got: list[dict] = []

    def collect(batch, batch_id: int) -> None:
        got.extend({**row.asDict(), "batch": batch_id} for row in batch.collect())

    for _run in range(2):
        query = (
            rows.writeStream.foreachBatch(collect)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        assert query.exception() is None
        (tmp_path / "control" / "end.json").write_text("{}\n")
    shutil.rmtree(tmp_path / "checkpoint")
    return got
