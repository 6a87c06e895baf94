"""DatalogMTL programs under ``rsp spark PROGRAM.mtl --partition-by V`` (rsp/spark/resident_mtl.py):

* through Spark, the short-stop program over a stream read in three micro-batches gives ``rsp mtl``'s
  facts (the lines' order aside: they leave per micro-batch);
* generated programs that partition by ``V`` (past operators, Since, Boxplus heads, recursion) over
  generated fact streams cut into micro-batches, some starting back in time, run through the real driver
  (:class:`MtlMerger`), keying (:func:`fact_keyer`) and partition step
  (:func:`rsp.spark.resident.run_step`) in-process over two partitions placed as Spark places the keys,
  micro-batches run by changing workers (engines rebuilt from the recovery log); the reference is one
  engine fed micro-batch by micro-batch, each in the order of the left ends, a fact that starts before
  the largest left end of the earlier micro-batches dropped as late, checked against ``rsp mtl`` on
  streams in order;
* programs that do not partition by ``V`` are refused at the rule, before Spark starts."""

from __future__ import annotations

import shutil
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from fuzzing import batches_text, examples, read_batches_text, saved_cases, saved_on_failure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import GOLDEN_SPARK, TEST_DATA
from spark_conftest import write_parts

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from rsp.cli import main  # noqa: E402
from rsp.mtl import format_fact, parse  # noqa: E402
from rsp.mtl.engine import Engine  # noqa: E402
from rsp.mtl.facts import parse_fact  # noqa: E402
from rsp.spark import resident, resident_mtl  # noqa: E402
from rsp.spark.hashing import partition_of  # noqa: E402

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]
DATA = TEST_DATA / "mtl"
GOLDEN_ROOT = GOLDEN_SPARK
"""Where ``make fuzz`` saves this file's disagreements (not tests/golden/mtl: its cases are single-engine
models with a horizon and an expected model, which tests/mtl/test_mtl_differential.py replays)."""
PARTITIONS = 2


def _cli(tmp_path: Path, name: str, *args: str) -> str:
    output = tmp_path / f"{name}.txt"
    assert main([*args, "--output", str(output), "--quiet"]) == 0
    return output.read_text()


def test_short_stop_partitioned_equals_rsp_mtl(tmp_path: Path, spark, no_streams_left) -> None:
    program = tmp_path / "short_stop.mtl"
    shutil.copy(DATA / "short_stop.txt", program)
    stream = DATA / "S1-head.txt"
    options = ["--format", "intervals", "--output-predicates", "ShortStop,NotPos"]
    expected = _cli(tmp_path, "mtl", "mtl", str(program), "--stream", str(stream), *options)
    assert expected.count("ShortStop(") > 0
    parts = tmp_path / "parts"
    write_parts(parts, stream.read_text().splitlines(keepends=True), 3)
    got = _cli(tmp_path, "spark", "spark", str(program), "--stream", str(parts), *options, "--partition-by", "V",
               "--max-files-per-trigger", "1", "--available-now")  # fmt: skip
    assert sorted(got.splitlines()) == sorted(expected.splitlines())


def test_programs_that_do_not_partition_are_refused(tmp_path: Path, capsys) -> None:
    program = tmp_path / "p.mtl"
    program.write_text("A(V):-B(V)\nC(V):-Diamondminus[0,2]A(V), D(X)\n")
    (tmp_path / "in").mkdir()
    args = [
        "spark",
        str(program),
        "--stream",
        str(tmp_path / "in"),
        "--partition-by",
        "V",
        "--format",
        "intervals",
    ]
    assert main(args) == 2
    assert "p.mtl:2:1: --partition-by V: the atom D(X) does not use V" in capsys.readouterr().err
    program.write_text("A(V,X):-B(V,X)\nC(V):-A(X,V)\n")
    assert main(args) == 2
    assert "--partition-by V: A has V as argument 2 here and as argument 1 at" in capsys.readouterr().err


# -- generated, in-process -----------------------------------------------------------------------------
RULES = [
    "A(V):-Diamondminus[0,{a}]B(V)",
    "C(V):-B(V), Boxminus[{a},{b}]D(V)",
    "E(V):-D(V)Since[0,{b}]B(V)",
    "H(V,X):-P(V,X), D(V)Since[1,{b}]B(V)",
    "Boxplus[0,{a}]F(V):-D(V), Diamondminus[1,{b}]A(V)",
    "G(V):-Diamondminus[0,1]G(V), D(V)",
    "G(V):-B(V), P(V,X)",
]


class _Spark:
    class conf:  # noqa: N801 - SparkSession's name
        @staticmethod
        def get(_name: str) -> str:
            return str(PARTITIONS)


class _NoRows:
    def where(self, _condition) -> pa.Table:
        return resident_mtl.ROW_SCHEMA.empty_table()


class _Driver(resident_mtl.MtlMerger):
    """The real driver, its Spark jobs run in-process (micro-batch ``i`` by worker ``workers[i]``)."""

    def __init__(self, job, logs: str, emit, workers: list[int], monkeypatch) -> None:
        super().__init__(_Spark(), job, "p", emit, lambda _row: None, logs=logs)
        self.workers, self.registries, self.monkeypatch, self.calls = workers, {}, monkeypatch, 0

    def warm(self) -> None:
        pass

    def keyed(self, batch: list[str]) -> pa.Table:
        lines = pa.RecordBatch.from_pydict({"line": batch, "file": [None] * len(batch)})
        return pa.Table.from_batches(list(resident_mtl.fact_keyer(self.job.keys, self.ticks)(iter([lines]))))

    def _tick_frame(self):
        return _NoRows()

    def _run(self, frame, step: resident.Step, ticks: bool = False) -> pa.Table:
        worker = self.workers[self.calls % len(self.workers)]
        self.calls += 1
        self.monkeypatch.setattr(resident, "_REGISTRY", self.registries.setdefault(worker, {}))
        outputs = []
        for partition in range(PARTITIONS):
            mask = [partition_of(k, PARTITIONS) == partition for k in frame.column("key").to_pylist()]
            rows = frame.filter(pa.array(mask, pa.bool_()))
            tick = pa.Table.from_pylist([{"key": self.ticks[partition]}], schema=resident_mtl.ROW_SCHEMA)
            outputs.append(resident.run_step(self.job, step, partition, pa.concat_tables([rows, tick])))
        return pa.Table.from_batches(outputs)


def _partitioned(
    text: str, batches: list[list[str]], workers: list[int], monkeypatch
) -> tuple[list[str], int]:
    monkeypatch.setenv("RSP_SPARK_HOSTS", "0")
    keys = resident_mtl.mtl_keys(parse(text, "p.mtl"), "V")
    job = resident_mtl.MtlJob(text, "p.mtl", keys, None, None, "drop")
    out: list[str] = []
    with tempfile.TemporaryDirectory() as logs:
        driver = _Driver(job, logs, out.extend, workers, monkeypatch)
        for index, batch in enumerate(batches):
            driver(batch, index)
        driver.close()
    return sorted(out), driver.late


def _reference(text: str, batches: list[list[str]]) -> tuple[list[str], int]:
    """One engine, each micro-batch in the order of the left ends, late facts dropped by the engine."""
    engine = Engine(parse(text, "p.mtl"), late="drop")
    found = []
    for batch in batches:
        facts = sorted((parse_fact(line) for line in batch), key=lambda f: f[2][0])
        for pred, args, iv in facts:
            found.extend(engine.push(pred, args, iv))
    found.extend(engine.finish())
    return sorted(format_fact(p, a, iv) for _t, items in found for p, a, iv in items), engine.late


@st.composite
def _cases(draw) -> tuple[str, list[list[str]], list[int]]:
    chosen = draw(st.lists(st.sampled_from(RULES), min_size=1, max_size=4, unique=True))
    text = "\n".join(r.format(a=draw(st.integers(1, 2)), b=draw(st.integers(2, 4))) for r in chosen) + "\n"
    batches, now = [], 0
    for _ in range(draw(st.integers(1, 4))):
        batch = []
        for _ in range(draw(st.integers(0, 5))):
            now += draw(st.sampled_from([0, 1, 1, 2, Fraction(1, 2)]))
            lo = max(0, now - draw(st.sampled_from([0, 0, 0, 3])))
            length = draw(st.sampled_from([0, 0, 1, 2]))
            key = f"k{draw(st.integers(0, 4))}"
            atom = draw(st.sampled_from([f"B({key})", f"D({key})", f"P({key},x{draw(st.integers(0, 1))})",
                                         "Other(z)"]))  # fmt: skip
            batch.append(f"{atom}@[{lo},{lo + length}]" if length else f"{atom}@{lo}")
        batches.append(batch)
    workers = draw(st.lists(st.integers(0, 2), min_size=len(batches) + 1, max_size=len(batches) + 1))
    return text, batches, workers


def _files(text: str, batches: list[list[str]], workers: list[int]) -> dict[str, str]:
    return {"program.txt": text, "stream.txt": batches_text(batches, workers, "%")}


def _read_files(files: dict[str, str]) -> tuple[str, list[list[str]], list[int]]:
    """:func:`_files` read back."""
    return files["program.txt"], *read_batches_text(files["stream.txt"], "%")


def _check(text: str, batches: list[list[str]], workers: list[int], monkeypatch) -> None:
    expected, late = _reference(text, batches)
    got, got_late = _partitioned(text, batches, workers, monkeypatch)
    assert got == expected
    assert got_late == late


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(case=_cases())
def test_partitioned_mtl_equals_one_engine(case, monkeypatch, spark) -> None:
    """(``spark``: the driver's last job builds a Spark SQL expression.)"""
    text, batches, workers = case
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(text, batches, workers)):
        _check(text, batches, workers, monkeypatch)


SAVED = saved_cases(GOLDEN_ROOT, "test_partitioned_mtl_equals_one_engine")
FIXED = _files(  # through the saved format: workers changing, intervals, a fact no rule reads
    "\n".join(r.format(a=1, b=3) for r in RULES) + "\n",
    [["B(k1)@0", "D(k2)@[1,3]", "P(k1,x0)@2"], [], ["Other(z)@4", "B(k2)@[2,4]", "D(k1)@5"]],
    [0, 2, 1, 1],
)


@pytest.mark.parametrize("name", ["fixed", *sorted(SAVED)])
def test_saved_cases(name: str, monkeypatch, spark) -> None:
    """The fixed case and the cases ``make fuzz`` saved, read back from their files."""
    files = FIXED if name == "fixed" else SAVED[name]
    text, batches, workers = _read_files(files)
    if name == "fixed":
        assert _files(text, batches, workers) == files  # the format reads back as written
    _check(text, batches, workers, monkeypatch)


def test_reference_is_rsp_mtl_on_streams_in_order(tmp_path: Path) -> None:
    text = "\n".join(r.format(a=1, b=3) for r in RULES) + "\n"
    lines = [f"{atom}(k{t % 3}{',x0' if atom == 'P' else ''})@{t}" for t in range(0, 30) for atom in "BDP"
             if (t * 7 + ord(atom)) % 3]  # fmt: skip
    program, stream = tmp_path / "p.mtl", tmp_path / "s.txt"
    program.write_text(text)
    stream.write_text("\n".join(lines) + "\n")
    expected = _cli(tmp_path, "mtl", "mtl", str(program), "--stream", str(stream), "--format", "intervals")
    got, late = _reference(text, [lines[:20], lines[20:]])
    assert late == 0
    assert got == sorted(expected.splitlines())
    assert len(got) > 20
