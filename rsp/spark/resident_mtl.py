"""``rsp spark PROGRAM.mtl --partition-by V``: a DatalogMTL program's engines on the resident machinery of
:mod:`rsp.spark.resident` (one :class:`rsp.mtl.engine.Engine` per shuffle partition holding all of its
keys, kept across micro-batches in the engine hosts, rebuilt from the partition's recovery log).

* Partitioning (:func:`mtl_keys`): every atom of every rule, head and body (under any operator), has
  ``V`` among its arguments, in the same place for a predicate; a rule that breaks this is refused at
  its position. Facts then belong to one key (``V``'s place in their predicate) and a rule only joins
  facts of one key, so the least model is the union of the keys' least models, and one engine over
  any set of keys gives that set's part of it.
* Keying (:func:`keyed_facts`, a Python stage before the shuffle: rsp parses the fact lines): a fact of
  a keyed predicate goes to its key; facts of predicates no rule mentions and malformed lines go to
  partition 0 (its tick key), which keeps the former and reports the latter.
* Lateness: the driver's clock is the largest left end of the earlier micro-batches (the partitions
  report theirs); a fact that starts before it is late in every partition (counted, dropped, or the
  run stops under ``--late fail``), as for one engine fed micro-batch by micro-batch
  (:class:`rsp.spark.mtl.MtlFeeder`).
* Output (``--format intervals``): a fact of a derived predicate is final in its partition's engine as
  in one engine's; the driver writes, after each micro-batch, the facts the partitions made final
  (sorted), and at the end of the input every partition closes its model up to the stream's horizon
  (the largest time over all partitions, or ``--horizon``). The facts are ``rsp mtl``'s; the order of
  the lines may differ (they leave per micro-batch, not per slice of one engine).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from rsp.errors import LateElementError, RspError
from rsp.spark.resident import ROW_COLUMNS, ROW_SCHEMA, Clock, packed
from rsp.spark.resident_driver import ResidentMerger

LINE_SCHEMA = pa.schema([("time", pa.int64()), ("line", pa.string())])
"""A partition's facts: the floor of the left end (the recovery log's order) and the fact's line."""


@dataclass(frozen=True)
class MtlKeys:
    """Where a fact's key is: ``positions`` pairs a predicate (name and arity) with ``V``'s place."""

    var: str
    positions: tuple[tuple[tuple[str, int], int], ...]

    def key(self, pred: str, args: tuple) -> str | None:
        """The key of a fact (None: no rule mentions its predicate)."""
        for (name, arity), index in self.positions:
            if name == pred and arity == len(args):
                return str(args[index])
        return None


def mtl_keys(program, variable: str) -> MtlKeys:
    """The keying of a DatalogMTL program's facts by ``variable`` (``V`` or ``?V``); raises
    :class:`rsp.errors.RspError` at the rule that does not partition by it."""
    from rsp.mtl.model import Var, atoms_of

    var = variable.removeprefix("?")
    if not var or not (var[0].isupper() or var[0] == "_") or not var.replace("_", "a").isalnum():
        raise RspError(f"--partition-by {variable}: write a variable of the program's rules, e.g. V")
    places: dict[tuple[str, int], tuple[int, object]] = {}
    for rule in program.source.rules:
        for atom in atoms_of(rule.head) + [a for f in rule.body for a in atoms_of(f)]:
            where = [i for i, term in enumerate(atom.args) if term == Var(var)]
            if not where:
                reason = f"--partition-by {var}: the atom {atom} does not use {var}"
                raise RspError(reason, rule.origin.position)
            sig = (atom.pred, len(atom.args))
            known = places.setdefault(sig, (where[0], rule))
            if known[0] not in where:
                raise RspError(
                    f"--partition-by {var}: {atom.pred} has {var} as argument {where[0] + 1} here and as "
                    f"argument {known[0] + 1} at {known[1].origin.position}",
                    rule.origin.position,
                )
    return MtlKeys(var, tuple((sig, index) for sig, (index, _rule) in sorted(places.items())))


@dataclass(frozen=True)
class MtlJob:
    """What the executors need to run a partition's DatalogMTL engine (pickled with the functions)."""

    text: str
    source: str
    keys: MtlKeys
    outputs: tuple[str, ...] | None
    horizon: object
    late: str

    def partition_engine(self) -> MtlPartitionEngine:
        return MtlPartitionEngine(self)

    def elements(self, table: pa.Table, partition: int, partitions: int) -> tuple[pa.Table, list[dict]]:
        return fact_elements(table)


def _parse(line: str):
    """``(pred, args, interval)`` of a fact line, None for a blank or comment line (ValueError: bad)."""
    from rsp.mtl.facts import parse_fact

    text = line.strip()
    if not text or text[0] in "%#":
        return None
    return parse_fact(text)


def keyed_facts(frame: DataFrame, keys: MtlKeys, ticks: list[str]) -> DataFrame:
    """Fact lines (``read_stream(kind="atoms")``) as keyed rows (the columns of
    :func:`rsp.spark.resident.keyed_lines`, the line kept for the partition's step)."""
    return packed(frame.select("line", "file"), fact_keyer(keys, ticks), ticks)


def fact_keyer(keys: MtlKeys, ticks: list[str]) -> Callable[[Iterator[pa.RecordBatch]], Iterator]:
    """The function :func:`keyed_facts` maps over the lines' Arrow batches (``line``, ``file``)."""

    def add_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows: dict[str, list] = {name: [] for name in ROW_COLUMNS}
            lines, files = batch.column("line").to_pylist(), batch.column("file").to_pylist()
            for line, file in zip(lines, files, strict=True):
                try:
                    parsed = _parse(line or "")
                except ValueError:
                    key = ticks[0]
                else:
                    if parsed is None:
                        continue
                    key = keys.key(parsed[0], parsed[1])
                    key = ticks[0] if key is None else key
                for name, value in zip(ROW_COLUMNS, (key, None, 0, None, None, None, line, file, None),
                                       strict=True):  # fmt: skip
                    rows[name].append(value)
            yield pa.RecordBatch.from_pydict(rows, schema=ROW_SCHEMA)

    return add_keys


def fact_elements(table: pa.Table) -> tuple[pa.Table, list[dict]]:
    """A partition's facts in its keyed rows (:data:`LINE_SCHEMA`) and the malformed lines (only in
    partition 0's rows)."""
    import math

    times, kept, rejects = [], [], []
    if table.num_rows and "line" in table.column_names:
        lines, files = table.column("line").to_pylist(), table.column("file").to_pylist()
        for line, file in zip(lines, files, strict=True):
            if line is None:
                continue  # the tick row
            try:
                parsed = _parse(line)
            except ValueError as err:
                rejects.append({"line": line.strip(), "file": file, "reason": str(err)})
                continue
            if parsed is not None:
                lo = parsed[2][0]
                times.append(math.floor(lo) if abs(lo) != math.inf else (-(2**62) if lo < 0 else 2**62))
                kept.append(line.strip())
    return pa.table({"time": pa.array(times, pa.int64()), "line": pa.array(kept, pa.string())}), rejects


_PROGRAMS: dict[int, object] = {}


def _program(job: MtlJob):
    program = _PROGRAMS.get(hash(job))
    if program is None:
        from rsp.mtl import parse

        program = _PROGRAMS[hash(job)] = parse(job.text, job.source)
    return program


def _text(value) -> str | None:
    return None if value is None else str(value)


class MtlPartitionEngine:
    """One partition's DatalogMTL engine (the methods :func:`rsp.spark.resident.run_step` calls)."""

    def __init__(self, job: MtlJob) -> None:
        from rsp.mtl.engine import Engine

        self.job = job
        self.engine = Engine(_program(job), outputs=job.outputs, horizon=job.horizon, late="drop")
        self.results: list[str] = []
        self.batch: int | None = None
        self.late = 0

    def sync(self, clock: Clock) -> None:
        pass  # a fact is final or not by its own engine's frontier

    def bound(self, clock: Clock) -> int:
        return 0  # the driver writes what the partitions made final after every micro-batch

    def _results(self, results: list) -> None:
        from rsp.mtl import format_fact

        for _time, items in results:
            self.results.extend(format_fact(p, a, iv) for p, a, iv in items)

    def take(self, data: pa.Table, clock: Clock) -> pa.Table:
        """The micro-batch's facts of this partition in the order of their left ends (then arrival):
        those that start before the clock's time (the largest left end of the earlier micro-batches)
        are late; the others are pushed. Returns those taken."""
        read = None if clock.until is None else Fraction(clock.until)
        facts = []
        for index, line in enumerate(data.column("line").to_pylist()):
            pred, args, iv = _parse(line)
            facts.append((iv[0], index, pred, args, iv))
        facts.sort(key=lambda f: (f[0], f[1]))
        taken = []
        for lo, index, pred, args, iv in facts:
            if read is not None and lo < read:
                self.late += 1
                if self.job.late == "fail":
                    raise LateElementError(
                        f"late fact {line_of(pred, args, iv)} starting at {lo}: the stream had reached "
                        f"{clock.until} (facts must come in the order of their left ends)"
                    )
                continue
            self._results(self.engine.push(pred, args, iv))
            taken.append(index)
        return data.take(pa.array(sorted(taken), pa.int64())) if len(taken) < data.num_rows else data

    def report(self) -> dict:
        """The largest left end and the largest time this engine read (exact, as text) for the driver."""
        from rsp.mtl.intervals import INF, from_unit

        e = self.engine
        return {
            "read": _text(None if e.read_lo is None else from_unit(e.read_lo, e.scale)),
            "greatest": _text(None if e.greatest == -INF else from_unit(e.greatest, e.scale)),
        }

    def finish(self, final) -> None:
        """The end of the input: the model up to ``final`` (the stream's horizon), everything left."""
        e = self.engine
        if self.job.horizon is None and final is not None:
            e.horizon = e.in_unit((Fraction(final), Fraction(final), True, True))[0]
        self._results(e.finish())

    def rows(self) -> list[tuple]:
        if not self.results:
            return []
        lines, self.results = sorted(self.results), []
        return [("result", 0, json.dumps(lines), None, None, None, None)]

    def keep_from(self) -> int | None:
        return None  # the model may depend on any earlier fact: the log is kept whole

    def replay_from(self, _clock: Clock) -> int | None:
        return None

    def replay(self, table: pa.Table) -> None:
        self.take(table, Clock(None, None, None))


def line_of(pred: str, args: tuple, iv) -> str:
    from rsp.mtl import format_fact

    return format_fact(pred, args, iv)


class MtlMerger(ResidentMerger):
    """The driver for a DatalogMTL program: :class:`ResidentMerger`'s jobs over :func:`keyed_facts`
    rows; after each micro-batch the facts the partitions made final are written (``emit(lines)``)."""

    def __init__(self, spark, job: MtlJob, name: str, emit: Callable[[list[str]], None], reject: Callable,
                 logs: str | None = None) -> None:  # fmt: skip
        super().__init__(spark, job, name, (), 1, lambda _result: None, reject, logs=logs)
        self.write_lines = emit
        self.lines: list[str] = []
        self.read: Fraction | None = None
        self.greatest: Fraction | None = None

    def keyed(self, batch: DataFrame) -> DataFrame:
        return keyed_facts(batch, self.job.keys, self.ticks)

    def clock(self, batch: DataFrame | None = None) -> Clock:
        return Clock(None, None, self.read)

    def _take_stats(self, table: pa.Table) -> None:
        for row in table.filter(pc.equal(table.column("kind"), "mark")).to_pylist():
            stats = json.loads(row["payload"] or "{}")
            for name, value in stats.items():
                if name in ("read", "greatest"):
                    if value is not None:
                        value = Fraction(value)
                        old = getattr(self, name)
                        setattr(self, name, value if old is None else max(old, value))
                else:
                    (self.times if name == "engine" else self.rebuilds)[name] += value

    def _advance_clock(self, table: pa.Table) -> bool:
        return False  # the facts are written per micro-batch (flush): no timeline of instants

    def add(self, instant: int, answers: list) -> None:
        self.lines.extend(answers)

    def flush(self, bound: int) -> None:
        if self.lines:
            lines, self.lines = sorted(self.lines), []
            self.answers += len(lines)
            self.write_lines(lines)

    def final_instant(self):
        return self.job.horizon if self.job.horizon is not None else self.greatest

    def saved(self) -> dict:
        return {**super().saved(), "read": _text(self.read), "greatest": _text(self.greatest)}

    def summary(self) -> list[str]:
        return [line.replace(" answers", " facts") for line in super().summary()]


__all__ = ["MtlJob", "MtlKeys", "MtlMerger", "MtlPartitionEngine", "fact_keyer", "keyed_facts", "mtl_keys"]
