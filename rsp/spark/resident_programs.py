"""Resident partition engines for ``rsp spark PROGRAM.lars --partition-by V``: a LARS program's engines on
the machinery of :mod:`rsp.spark.resident` (one engine per shuffle partition holding all of its keys,
kept across micro-batches in the engine hosts, rebuilt from the partition's recovery log, the driver's
global clock), through the interface :func:`rsp.spark.resident.run_step` calls.

* Keying (:func:`keyed_atoms`, a Python stage before the shuffle: atom lines are parsed by rsp, not by
  Spark): an atom of a keyed predicate goes to its key (:class:`rsp.lars.partition.AtomKeys`); bare time
  lines, atoms no keyed rule reads, malformed lines and stream atoms of a predicate with facts go to
  partition 0 (its tick key), which stretches the timeline with their times and reports the rejects.
* A partition's engine (:class:`ProgramPartitionEngine`): the atoms of its keys, evaluated time point by
  time point from its first atom once every partition has them: the driver's clock says the largest
  time of the earlier micro-batches (``until``), time points before it are final and evaluated, an atom
  older than it is late (counted, dropped), as :class:`rsp.spark.feed.ProgramFeeder` holds the last time
  point of a micro-batch back in one engine. Its recovery log keeps every atom (a program may remember
  any part of its stream).
* The driver (:class:`ResidentProgramMerger`): :class:`rsp.spark.resident_driver.ResidentMerger`'s jobs with
  :class:`rsp.spark.partitioned.ProgramMerger`'s output: every time point of the timeline, the union of
  the partitions' atoms and of those a local engine derives from the program's facts alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from rsp.lars.partition import AtomKeys
from rsp.spark.partitioned import ProgramMerger
from rsp.spark.resident import ROW_COLUMNS, ROW_SCHEMA, TICK, Clock, packed
from rsp.spark.resident_driver import ResidentMerger

ATOM_LOG_SCHEMA = pa.schema([("time", pa.int64()), ("pred", pa.string()), ("args", pa.string())])
"""A program partition's elements: an atom (``pred``, ``args`` as JSON) or, ``args`` null, a time point
of the timeline (a bare time line, ``pred`` null too, or an atom no keyed rule reads)."""
STATIC_REASON = "{pred} has facts in the program: a partitioned run takes no stream atoms of it"


def keyed_atoms(frame: DataFrame, keys: AtomKeys, ticks: list[str]) -> DataFrame:
    """An atom stream's lines (``read_stream(kind="atoms")``) as keyed rows (the columns of
    :func:`rsp.spark.resident.keyed_lines`, the line kept for the partition's step to read)."""
    return packed(frame.select("line", "file"), atom_keyer(keys, ticks), ticks)


def atom_keyer(keys: AtomKeys, ticks: list[str]) -> Callable[[Iterator[pa.RecordBatch]], Iterator]:
    """The function :func:`keyed_atoms` maps over the lines' Arrow batches (``line``, ``file``)."""

    def add_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from rsp.io import atoms as atom_lines

        for batch in batches:
            rows: dict[str, list] = {name: [] for name in ROW_COLUMNS}
            lines, files = batch.column("line").to_pylist(), batch.column("file").to_pylist()
            for line, file in zip(lines, files, strict=True):
                try:
                    parsed = atom_lines.parse_line(line or "")
                except ValueError:
                    key, time = ticks[0], None
                else:
                    if parsed is None:
                        continue
                    time, pred, args = parsed
                    key = None if pred is None or keys.is_static(pred, args) else keys.key(pred, args)
                    key = ticks[0] if key is None else key
                for name, value in zip(ROW_COLUMNS, (key, time, 0, None, None, None, line, file, None),
                                       strict=True):  # fmt: skip
                    rows[name].append(value)
            yield pa.RecordBatch.from_pydict(rows, schema=ROW_SCHEMA)

    return add_keys


def program_elements(job, table: pa.Table, partition: int, partitions: int) -> tuple[pa.Table, list[dict]]:
    """A program partition's elements in its keyed rows (:data:`ATOM_LOG_SCHEMA`; the lines of partition
    0's tick key are time points of the timeline or rejects) and the malformed lines."""
    from rsp.io import atoms as atom_lines

    columns: dict[str, list] = {name: [] for name in ATOM_LOG_SCHEMA.names}
    rejects: list[dict] = []
    if not table.num_rows or "line" not in table.column_names:
        return ATOM_LOG_SCHEMA.empty_table(), rejects
    keys = table.column("key").to_pylist()
    for key, line, file in zip(keys, table.column("line").to_pylist(), table.column("file").to_pylist(),
                               strict=True):  # fmt: skip
        if line is None:
            continue  # the tick row
        try:
            parsed = atom_lines.parse_line(line)
        except ValueError as err:
            rejects.append({"line": line, "file": file, "reason": str(err)})
            continue
        if parsed is None:
            continue
        time, pred, args = parsed
        if pred is not None and job.keys.is_static(pred, args):
            rejects.append({"line": line, "file": file, "reason": STATIC_REASON.format(pred=pred)})
            continue
        columns["time"].append(time)
        columns["pred"].append(pred)
        columns["args"].append(None if pred is None or key.startswith(TICK) else json.dumps(list(args)))
    return pa.table(columns, schema=ATOM_LOG_SCHEMA), rejects


_PROGRAMS: dict[int, object] = {}


def _program(job):
    program = _PROGRAMS.get(hash(job))
    if program is None:
        from rsp.lars import parse

        program = _PROGRAMS[hash(job)] = parse(job.text, job.source)
    return program



@dataclass(frozen=True)
class ProgramJob:
    """What the executors need to run a partition's LARS engine (:mod:`rsp.spark.resident_programs`)."""

    text: str
    source: str
    keys: AtomKeys

    def partition_engine(self):
        return ProgramPartitionEngine(self)

    def elements(self, table, partition: int, partitions: int):
        return program_elements(self, table, partition, partitions)


class ProgramPartitionEngine:
    """One partition's LARS engine: the atoms of its keys, evaluated time point by time point from its
    first atom, up to the time points every partition has (the methods :func:`rsp.spark.resident.
    run_step` calls, as :class:`rsp.spark.resident.PartitionEngine` has them)."""

    def __init__(self, job) -> None:
        from rsp.engine import Engine

        self.engine = Engine(_program(job))
        self.pending: dict[int, list] = {}
        self.done: int | None = None
        self.results: list[tuple] = []
        self.batch: int | None = None
        self.late = 0

    def evaluate(self, bound: int) -> None:
        """Evaluate every time point up to ``bound`` from this partition's first atom on."""
        from rsp.lars.model import format_atom

        start = self.done + 1 if self.done is not None else min(self.pending, default=bound + 1)
        engine = self.engine
        for t in range(start, bound + 1):
            engine.step(t, self.pending.pop(t, []))
            atoms = [format_atom(p, a) for p, a in engine.output()]
            if atoms:
                self.results.append(("result", t, json.dumps(atoms), None, None, None, None))
            self.done = t

    def sync(self, clock: Clock) -> None:
        """The time points before the largest time of the earlier micro-batches are final."""
        if clock.until is not None:
            self.evaluate(clock.until - 1)

    def bound(self, clock: Clock) -> int | None:
        return None if clock.until is None else clock.until - 1

    def _add(self, table: pa.Table) -> None:
        columns = (table.column(n).to_pylist() for n in ATOM_LOG_SCHEMA.names)
        for time, pred, args in zip(*columns, strict=True):
            if args is not None:
                self.pending.setdefault(time, []).append((pred, tuple(json.loads(args))))

    def take(self, data: pa.Table, clock: Clock) -> pa.Table:
        """The micro-batch's elements of this partition: atoms older than the clock's time are late
        (counted, dropped), the others wait for their time point to be final. Returns those taken."""
        if clock.until is not None and data.num_rows:
            early = pc.less(data.column("time"), clock.until)
            self.late += pc.sum(pc.and_(early, pc.is_valid(data.column("pred")))).as_py() or 0
            data = data.filter(pc.invert(early))
        self._add(data)
        return data

    def finish(self, final: int) -> None:
        self.evaluate(final)

    def rows(self) -> list[tuple]:
        rows, self.results = self.results, []
        return rows

    def keep_from(self) -> int | None:
        return None  # a program may remember any part of its stream: the log is kept whole

    def replay_from(self, _clock: Clock) -> int | None:
        return None

    def replay(self, table: pa.Table) -> None:
        """On a rebuild: a log file's atoms, evaluated by the next :meth:`sync` (the time points the
        driver already wrote are answered again, and it leaves them out)."""
        self._add(table)


class ResidentProgramMerger(ResidentMerger, ProgramMerger):
    """The driver for a LARS program: the micro-batches' jobs of :class:`ResidentMerger` over
    :func:`keyed_atoms` rows, every time point written as :class:`ProgramMerger` writes it."""

    def __init__(self, spark, job, name: str, program, emit: Callable[[int, list[str]], None],
                 reject: Callable, logs: str | None = None) -> None:  # fmt: skip
        super().__init__(spark, job, name, program, emit, reject, logs=logs)

    def keyed(self, batch: DataFrame) -> DataFrame:
        return keyed_atoms(batch, self.job.keys, self.ticks)

    def clock(self, batch: DataFrame | None = None) -> Clock:
        return Clock(None, None, self.until)

    def _advance_clock(self, table: pa.Table) -> bool:
        """Nothing closes but time points, which follow the largest time (no first instant moves)."""
        self._advance_until(self._marks(table))
        return False

    def add(self, instant: int, answers: list) -> None:
        if self.next is not None and instant < self.next:
            return  # already written: a rebuilt engine evaluated it again
        super().add(instant, answers)


__all__ = ["ProgramPartitionEngine", "ResidentProgramMerger", "keyed_atoms", "program_elements"]
