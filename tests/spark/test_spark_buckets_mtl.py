"""DatalogMTL programs in key buckets (:func:`rsp.spark.programs.reason_program` with ``kind="mtl"``,
rsp/spark/processor_mtl.py) against one engine over the whole stream, without a JVM, and once through
Spark.

The real reading step (rsp's parser, the keying, the exact bounds) and the real stateful processor run
in-process over in-memory state handles (tests/support/program_buckets.py), with the engines cached,
rebuilt from the state at every micro-batch, uncached, and with every micro-batch run twice. The reference
is one :class:`rsp.mtl.engine.Engine` fed micro-batch by micro-batch, each micro-batch's facts in the order
of their left ends (``rsp mtl`` over the micro-batches' facts one after the other, which
:func:`test_reference_is_rsp_mtl_on_streams_in_order` checks): the facts that become final in each
micro-batch (the union over the buckets) and at the end, each written with the stream's reach (its
newest left end) or the horizon, the reach after each micro-batch, the late facts and the rejected lines.
Generated cases: programs that partition by ``V`` (◇⁻, ⊟⁻, Since, ⊞⁺ heads, recursion), partitioned and
not, and any small program of tests/support/mtl_strategies.py unpartitioned, over facts with rational
times cut into micro-batches that go back in time, with a horizon or not, output predicates or not."""

from __future__ import annotations

import json
import shutil
import uuid
from fractions import Fraction
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mtl_strategies import facts as mtl_facts
from mtl_strategies import programs as mtl_programs
from paths import TEST_DATA

pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")

from program_buckets import MODES, Operator  # noqa: E402

from rsp.mtl import format_fact, parse  # noqa: E402
from rsp.mtl.engine import Engine  # noqa: E402
from rsp.mtl.facts import parse_fact  # noqa: E402
from rsp.mtl.intervals import fmt_time, number  # noqa: E402
from rsp.spark.processor_mtl import MTL_OUTPUT, MtlProcessor, fact_tagger, mtl_job  # noqa: E402

pytest_plugins = ["spark_conftest"]
RULES = [  # partitionable by V
    "A(V):-Diamondminus[0,{a}]B(V)",
    "C(V):-B(V), Boxminus[{a},{b}]D(V)",
    "E(V):-D(V)Since[0,{b}]B(V)",
    "H(V,X):-P(V,X), D(V)Since[1,{b}]B(V)",
    "Boxplus[0,{a}]F(V):-D(V), Diamondminus[1,{b}]A(V)",
    "G(V):-Diamondminus[0,1]G(V), D(V)",
    "G(V):-B(V), P(V,X)",
]


def _run(text, batches, splits, partition_by, buckets: int, mode: str, horizon=None, outputs=None):
    """The buckets' rows, read back per micro-batch (the end last): the facts with their ``time``, the
    reach reported, the late facts and the rejected lines."""
    job = mtl_job(f"p-{uuid.uuid4().hex}", "p", text, "p.mtl", partition_by, cache=mode != "uncached",
                  horizon=horizon, outputs=outputs)  # fmt: skip
    operator = Operator(job, MtlProcessor, fact_tagger, MTL_OUTPUT, buckets, mode)
    for batch, parts in zip(batches, splits, strict=True):
        operator.batch(batch, parts)
    operator.end()
    facts: list[list[str]] = [[] for _ in range(len(batches) + 1)]
    reach: list[list[str]] = [[] for _ in range(len(batches) + 1)]
    late, rejects = [], []
    read = 0
    for row, index in zip(operator.rows, operator.batches, strict=True):
        program, time, kind, _rank, detail, fact, _pred, _args, _interval = row
        assert program == "p"
        if kind in ("instant", "horizon"):
            reach[index].append(f"{kind} {time}")
        elif kind == "fact":
            facts[index].append(f"{time} {fact}")
        elif kind == "late":
            late.append(json.loads(detail)["fact"])
        elif kind == "read":  # an input partition's count of the lines it read, to bucket 0
            read += sum(json.loads(detail)["lines"].values())
        else:
            assert kind == "reject"
            rejects.append(json.loads(detail)["line"])
    assert read == sum(map(len, batches)), "every line read is counted once"
    return [sorted(f) for f in facts], reach, sorted(late), sorted(rejects)


def _reference(text, batches, horizon=None, outputs=None):
    """One engine, each micro-batch in the order of the left ends, late facts dropped by the engine."""
    from rsp.mtl.intervals import from_unit

    engine = Engine(parse(text, "p.mtl"), horizon=None if horizon is None else number(str(horizon)),
                    outputs=outputs, late="drop")  # fmt: skip
    facts, reach, late, rejects, reached = [], [], [], [], None
    for batch in batches:
        found, parsed, before = [], [], reached
        for line in batch:
            try:
                parsed.append(parse_fact(line))
            except ValueError:
                rejects.append(line)
        for pred, args, iv in sorted(parsed, key=lambda f: f[2][0]):
            count, taken = engine.late, engine.facts_read
            found += engine.push(pred, args, iv)
            if engine.late != count:
                late.append(format_fact(pred, args, iv))
            elif engine.facts_read != taken:
                reached = iv[0] if reached is None else max(reached, iv[0])
        reach.append([f"instant {fmt_time(reached)}"] if reached is not None and reached != before else [])
        facts.append(_lines(reached, found))
    end = engine.finish()
    final = None if engine.horizon is None else from_unit(engine.horizon, engine.scale)
    facts.append(_lines(final, end))
    reach.append([] if final is None else [f"horizon {fmt_time(final)}"])
    return facts, reach, sorted(late), sorted(rejects)


def _lines(time, results) -> list[str]:
    """The facts of an engine's results, each after the time it is written with."""
    return sorted(f"{fmt_time(time)} {format_fact(p, a, iv)}" for _t, items in results for p, a, iv in items)


def _check(text, batches, splits, partitioned: bool = True, horizon=None, outputs=None) -> None:
    configs = [(None, 1)] + ([("V", 1), ("V", 3)] if partitioned else [])
    expected = _reference(text, batches, horizon, outputs)
    for partition_by, buckets in configs:
        for mode in MODES:
            got = _run(text, batches, splits, partition_by, buckets, mode, horizon, outputs)
            where = f"partition_by={partition_by}, {buckets} bucket(s), engines {mode}"
            assert got[0] == expected[0], f"facts per micro-batch, {where}"
            assert got[1] == expected[1], f"reach per micro-batch, {where}"
            assert got[2:] == expected[2:], f"late facts and rejects, {where}"


def _span(lo: Fraction, length) -> str:
    """A fact's interval; times with a third written as fractions, the others as decimals."""

    def shown(t: Fraction) -> str:
        return f"{t.numerator}/{t.denominator}" if t.denominator == 3 else fmt_time(t)

    if length == 0:
        return shown(lo)
    if length == "inf":
        return f"[{shown(lo)},inf)"
    return f"[{shown(lo)},{shown(lo + length)}]"


@st.composite
def _cases(draw):
    chosen = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=4, unique=True))
    text = "\n".join(r.format(a=draw(st.integers(1, 2)), b=draw(st.integers(2, 4))) for r in chosen) + "\n"
    batches, now = [], Fraction(0)
    for _ in range(draw(st.integers(1, 4))):
        batch = []
        for _ in range(draw(st.integers(0, 5))):
            now += draw(st.sampled_from([0, 1, 1, 2, Fraction(1, 2), Fraction(1, 3)]))
            lo = max(Fraction(0), now - draw(st.sampled_from([0, 0, 0, 3])))
            length = draw(st.sampled_from([0, 0, 1, 2, "inf"]))
            key = f"k{draw(st.integers(0, 4))}"
            atom = draw(st.sampled_from([f"B({key})", f"D({key})", f"P({key},x{draw(st.integers(0, 1))})",
                                         "Other(z)", "B(k1"]))  # fmt: skip
            batch.append(f"{atom}@{_span(lo, length)}")
        batches.append(batch)
    splits = [draw(st.lists(st.integers(0, 2), min_size=len(b), max_size=len(b))) for b in batches]
    horizon = draw(st.sampled_from([None, None, None, 3, "7/2"]))
    outputs = draw(st.sampled_from([None, None, ("A", "B", "E", "F", "G", "Other")]))
    return text, batches, splits, horizon, outputs


FIXED = (  # a fact back in time (late), one at the reach (not late), a third, a Boxplus head beyond the
    # stream, a fact no rule mentions, a malformed line
    "\n".join(r.format(a=1, b=3) for r in RULES) + "\n",
    [["B(k1)@0", "D(k2)@[1,3]", "P(k1,x0)@2"], [], ["Other(z)@4", "B(k2)@[2,4]", "D(k1)@5", "D(k1)@1/3"],
     ["D(k2)@5", "B(k1)@[16/3,6]", "B(", "D(k1)@[6,7)"]],
    [[0, 1, 2], [], [1, 0, 1, 2], [2, 0, 1, 1]],
    None,
    ("A", "B", "C", "E", "F", "Other"),
)  # fmt: skip


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases())
@example(case=FIXED)
def test_partitionable_programs_in_buckets_equal_one_engine(case) -> None:
    text, batches, splits, horizon, outputs = case
    _check(text, batches, splits, True, horizon, outputs)


@st.composite
def _any_program(draw):
    """Any small program over facts in micro-batches, each in any order, starting back in time."""
    text = draw(mtl_programs())
    batches = [[line for _lo, line in draw(mtl_facts())] for _ in range(draw(st.integers(1, 3)))]
    splits = [draw(st.lists(st.integers(0, 1), min_size=len(b), max_size=len(b))) for b in batches]
    return text, batches, splits, draw(st.sampled_from([None, None, 2, "3/2"]))


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_any_program())
def test_any_program_in_one_bucket_equals_one_engine(case) -> None:
    text, batches, splits, horizon = case
    _check(text, batches, splits, False, horizon)


def test_the_fixed_case_reaches_the_corners() -> None:
    text, batches, _splits, horizon, outputs = FIXED
    facts, reach, late, rejects = _reference(text, batches, horizon, outputs)
    assert late == ["D(k1)@[1/3,1/3]"] and rejects == ["B("]
    assert reach == [["instant 2"], [], ["instant 5"], ["instant 6"], ["horizon 7"]]
    assert any("Other(z)@[4,4]" in f for f in facts[2]) and facts[4]


def test_programs_that_do_not_partition_are_refused() -> None:
    from rsp.errors import RspError

    with pytest.raises(RspError, match="p.mtl:2:1: --partition-by V: the atom D\\(X\\) does not use V"):
        mtl_job("x", "p", "A(V):-B(V)\nC(V):-Diamondminus[0,2]A(V), D(X)\n", "p.mtl", "V")
    with pytest.raises(RspError, match="--partition-by V: A has V as argument 2 here and as argument 1 at"):
        mtl_job("x", "p", "A(V,X):-B(V,X)\nC(V):-A(X,V)\n", "p.mtl", "V")


def test_reference_is_rsp_mtl_on_streams_in_order(tmp_path: Path) -> None:
    """On a stream in the order of its left ends the reference's facts are ``rsp mtl``'s."""
    from rsp.cli import main

    text = "\n".join(r.format(a=1, b=3) for r in RULES) + "\n"
    lines = [f"{atom}(k{t % 3}{',x0' if atom == 'P' else ''})@{t}" for t in range(0, 30) for atom in "BDP"
             if (t * 7 + ord(atom)) % 3]  # fmt: skip
    program, stream, output = tmp_path / "p.mtl", tmp_path / "s.txt", tmp_path / "out.txt"
    program.write_text(text)
    stream.write_text("\n".join(lines) + "\n")
    assert main(["mtl", str(program), "--stream", str(stream), "--output", str(output), "-q"]) == 0
    facts, _reach, late, _rejects = _reference(text, [lines[:20], lines[20:]])
    assert late == []
    assert sorted(f.split(" ", 1)[1] for batch in facts for f in batch) == sorted(
        output.read_text().splitlines()
    )
    assert len(output.read_text().splitlines()) > 20


# -- through Spark ---------------------------------------------------------------------------------------
@pytest.mark.spark
def test_short_stop_through_spark_equals_rsp_mtl(tmp_path: Path, spark, no_streams_left) -> None:
    """The short-stop program partitioned by V over three buckets, its facts read in three micro-batches
    through Spark's file source and the RocksDB state store, then ended: ``rsp mtl``'s facts."""
    from spark_conftest import write_parts
    from test_spark_buckets_lars import _drive

    from rsp.cli import main
    from rsp.spark import read_stream
    from rsp.spark.programs import reason_program

    program = TEST_DATA / "mtl" / "short_stop.txt"
    stream = TEST_DATA / "mtl" / "S1-head.txt"
    output = tmp_path / "mtl.txt"
    options = ["--output-predicates", "ShortStop,NotPos"]
    assert main(["mtl", str(program), "--stream", str(stream), *options, "-q", "--output", str(output)]) == 0
    expected = sorted(output.read_text().splitlines())
    assert sum(line.startswith("ShortStop(") for line in expected) > 0
    write_parts(tmp_path / "in", stream.read_text().splitlines(keepends=True), 3)
    (tmp_path / "control").mkdir()
    lines = read_stream(spark, str(tmp_path / "in"), kind="atoms", max_files_per_trigger=1)
    control = spark.readStream.schema("line string, file string").json(str(tmp_path / "control"))
    frame = lines.select("line", "file").unionByName(control)
    rows = reason_program(frame, program.read_text(), kind="mtl", file=str(program), partition_by="V",
                          buckets=3, outputs=["ShortStop", "NotPos"], instants=True)  # fmt: skip
    got = _drive(rows, tmp_path)
    assert {row["kind"] for row in got} == {"fact", "instant", "horizon", "read"}
    assert sorted(row["fact"] for row in got if row["kind"] == "fact") == expected
    assert len({row["batch"] for row in got if row["kind"] == "fact"}) >= 3
    shutil.rmtree(tmp_path / "in")
