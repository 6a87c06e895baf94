"""LARS programs under ``rsp spark PROGRAM --partition-by V`` on the resident partition engines
(rsp/spark/resident_programs.py): generated partitionable programs (windows ◇ and @, negation, facts,
comparisons, recursion through keyed predicates) over generated atom streams cut into micro-batches,
some going back in time, run through the real driver (:class:`ResidentProgramMerger`), the real keying
(:func:`atom_keyer`) and the real partition step (:func:`rsp.spark.resident.run_step`) in-process over
two partitions placed as Spark's hash partitioning places the keys, with the micro-batches run by
changing workers (engines rebuilt from the recovery log). The reference is written from the definitions:
every time point from the first to the last, each evaluated by one LARS engine over the atoms that are
not late (an atom older than the largest time of the earlier micro-batches is late); on streams in time
order it is checked against ``rsp lars`` itself. ``test_spark_partitioned.py`` runs programs through
Spark."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from fuzzing import batches_text, examples, read_batches_text, saved_cases, saved_on_failure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import GOLDEN_SPARK

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from rsp.cli import main  # noqa: E402
from rsp.engine import Engine  # noqa: E402
from rsp.io.atoms import parse_line  # noqa: E402
from rsp.lars import parse  # noqa: E402
from rsp.lars.model import format_atom  # noqa: E402
from rsp.lars.partition import partition_keys  # noqa: E402
from rsp.spark import resident, resident_programs  # noqa: E402
from rsp.spark.hashing import partition_of  # noqa: E402
from rsp.spark.resident_programs import ProgramJob  # noqa: E402

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]
GOLDEN_ROOT = GOLDEN_SPARK
PARTITIONS = 2
RULES = [  # partitionable by V: V in every keyed atom and every head of a rule touching stream data
    "seen(V, X) :- [{n}] <> p(V, X).",
    "fast(V) :- p(V, S), limit(L), S > L.",
    "calm(V) :- p(V, _S), not [{n}] <> alarm(V).",
    "@T noted(V) :- [{n}] @T alarm(V), not fast(V).",
    "twice(V) :- seen(V, X), seen(V, Y), X < Y.",
    "chain(V) :- alarm(V). chain(V) :- [{n}] <> chain2(V). chain2(V) :- chain(V), p(V, _X).",
    "quiet(V) :- seen(V, _X), not calm(V).",
    "always(L) :- limit(L).",
]


class _Driver(resident_programs.ResidentProgramMerger):
    """The real driver, its Spark jobs run in-process (micro-batch ``i`` by worker ``workers[i]``)."""

    def __init__(self, job: ProgramJob, program, logs: str, emit, workers: list[int], monkeypatch) -> None:
        super().__init__(_Spark(), job, "p", program, emit, lambda _row: None, logs=logs)
        self.workers, self.registries, self.monkeypatch, self.calls = workers, {}, monkeypatch, 0

    def warm(self) -> None:
        pass  # no engine hosts, no Spark job

    def keyed(self, batch: list[str]) -> pa.Table:
        lines = pa.RecordBatch.from_pydict({"line": batch, "file": [None] * len(batch)})
        return pa.Table.from_batches(
            list(resident_programs.atom_keyer(self.job.keys, self.ticks)(iter([lines])))
        )

    def _tick_frame(self):
        return _NoRows()

    def _run(self, frame, step: resident.Step, ticks: bool = False) -> pa.Table:
        worker = self.workers[self.calls % len(self.workers)]
        self.calls += 1
        self.monkeypatch.setattr(resident, "_REGISTRY", self.registries.setdefault(worker, {}))
        outputs = []
        for partition in range(PARTITIONS):
            rows = frame.filter(pa.array([partition_of(k, PARTITIONS) == partition for k in
                                          frame.column("key").to_pylist()], pa.bool_()))  # fmt: skip
            rows = pa.concat_tables([rows, _tick(self.ticks[partition])])
            outputs.append(resident.run_step(self.job, step, partition, rows))
        return pa.Table.from_batches(outputs)


class _Spark:
    """What the driver asks a SparkSession for when it is made: the number of shuffle partitions."""

    class conf:  # noqa: N801 - SparkSession's name
        @staticmethod
        def get(_name: str) -> str:
            return str(PARTITIONS)


class _NoRows:
    def where(self, _condition) -> pa.Table:
        return resident_programs.ROW_SCHEMA.empty_table()


def _tick(key: str) -> pa.Table:
    return pa.Table.from_pylist([{"key": key}], schema=resident_programs.ROW_SCHEMA)


def _partitioned(
    text: str, batches: list[list[str]], workers: list[int], monkeypatch
) -> tuple[list[str], int]:
    monkeypatch.setenv("RSP_SPARK_HOSTS", "0")
    program = parse(text, "p.lars")
    job = ProgramJob(text, "p.lars", partition_keys(program.program, "V"))
    out: list[str] = []

    def emit(t: int, atoms: list[str]) -> None:
        out.append(json.dumps({"time": t, "atoms": atoms}))

    with tempfile.TemporaryDirectory() as logs:
        driver = _Driver(job, program, logs, emit, workers, monkeypatch)
        for index, batch in enumerate(batches):
            driver(batch, index)
        driver.close()
    return out, driver.late


def _reference(text: str, batches: list[list[str]]) -> tuple[list[str], int]:
    """Every time point from the first time to the last, one engine, late atoms (older than the largest
    time of the earlier micro-batches) left out."""
    engine = Engine(parse(text, "p.lars"))
    kept: dict[int, list] = {}
    until, late = None, 0
    for batch in batches:
        parsed = [e for e in (parse_line(line) for line in batch) if e is not None]
        for time, pred, args in parsed:
            if until is not None and time < until:
                late += pred is not None
                continue
            atoms = kept.setdefault(time, [])
            if pred is not None:
                atoms.append((pred, args))
        times = [t for t, _p, _a in parsed]
        if times:
            until = max(times) if until is None else max(until, *times)
    out = []
    if kept:
        for t in range(min(kept), max(kept) + 1):
            engine.step(t, kept.get(t, []))
            out.append(
                json.dumps({"time": t, "atoms": sorted(format_atom(p, a) for p, a in engine.output())})
            )
    return out, late


@st.composite
def _cases(draw) -> tuple[str, list[list[str]], list[int]]:
    rules = [RULES[0], *draw(st.lists(st.sampled_from(RULES[1:]), max_size=3, unique=True))]
    text = f"limit({draw(st.integers(5, 25))}).\n" + "\n".join(
        r.format(n=draw(st.integers(0, 4))) for r in rules
    )
    batches, now = [], draw(st.integers(0, 5))
    for _ in range(draw(st.integers(1, 5))):
        batch = []
        for _ in range(draw(st.integers(0, 6))):
            now += draw(st.sampled_from([0, 0, 1, 1, 2, 4]))
            t = max(0, now - draw(st.sampled_from([0, 0, 0, 0, 2])))
            key = f"bus{draw(st.integers(0, 4))}"
            batch.append(draw(st.sampled_from([f"{t} p({key},{draw(st.integers(0, 30))})", f"{t} alarm({key})",
                                               f"{t}", f"{t} other(x)"])))  # fmt: skip
        batches.append(batch)
    workers = draw(st.lists(st.integers(0, 2), min_size=len(batches) + 1, max_size=len(batches) + 1))
    return text, batches, workers


def _files(text: str, batches: list[list[str]], workers: list[int]) -> dict[str, str]:
    return {"program.lars": text, "stream.txt": batches_text(batches, workers, "%")}


def _read_files(files: dict[str, str]) -> tuple[str, list[list[str]], list[int]]:
    """:func:`_files` read back."""
    return files["program.lars"], *read_batches_text(files["stream.txt"], "%")


def _check(text: str, batches: list[list[str]], workers: list[int], monkeypatch) -> None:
    expected, late = _reference(text, batches)
    got, got_late = _partitioned(text, batches, workers, monkeypatch)
    assert got == expected
    assert got_late == late


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(case=_cases())
def test_partitioned_program_equals_one_engine(case, monkeypatch, spark) -> None:
    """(``spark``: the driver's last job builds a Spark SQL expression.)"""
    text, batches, workers = case
    with saved_on_failure(GOLDEN_ROOT, lambda: _files(text, batches, workers)):
        _check(text, batches, workers, monkeypatch)


def _saved_cases() -> dict[str, dict[str, str]]:
    return saved_cases(GOLDEN_ROOT, "test_partitioned_program_equals_one_engine")


_FIXED = _files(  # through the saved format: workers changing, a bare time line, an atom no rule reads
    "limit(12).\n" + "\n".join(r.format(n=2) for r in RULES),
    [["2 p(bus1,5)", "3 alarm(bus2)"], [], ["3", "6 p(bus1,13)", "6 other(x)"]],
    [0, 1, 2, 0],
)


@pytest.mark.parametrize("name", ["fixed", *_saved_cases()])
def test_saved_cases(name: str, monkeypatch, spark) -> None:
    """The fixed case and the cases ``make fuzz`` saved, read back from their files."""
    files = _FIXED if name == "fixed" else _saved_cases()[name]
    text, batches, workers = _read_files(files)
    if name == "fixed":
        assert _files(text, batches, workers) == files  # the format reads back as written
    _check(text, batches, workers, monkeypatch)


def test_reference_is_rsp_lars_on_streams_in_order(tmp_path: Path) -> None:
    """The reference above writes what ``rsp lars`` writes on a stream in time order."""
    text = "limit(12).\n" + "\n".join(r.format(n=2) for r in RULES)
    lines = [f"{t} p(bus{t % 3},{(t * 7) % 30})" if t % 4 else f"{t} alarm(bus{t % 5})" for t in range(2, 40)]
    lines[10:10] = ["12", "12 other(x)"]
    program, stream, output = tmp_path / "p.lars", tmp_path / "s.txt", tmp_path / "out.jsonl"
    program.write_text(text)
    stream.write_text("\n".join(lines) + "\n")
    assert main(["lars", str(program), "--stream", str(stream), "-q", "--output", str(output)]) == 0
    expected, late = _reference(text, [lines[:15], lines[15:]])
    assert late == 0
    assert output.read_text().splitlines() == expected
    assert sum(len(json.loads(line)["atoms"]) for line in expected) > 40
