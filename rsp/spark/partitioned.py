"""Scale-out (``rsp spark QUERY --partition-by ?k``, ``rsp spark PROGRAM --partition-by V``): what the
driver and the executors share, and the LARS programs' path.

* :class:`Job` — what the executors need to run a query's partition engines (the query itself runs
  on the resident engines of :mod:`rsp.spark.resident`);
* :class:`Merger` — the driver side: holds each instant's answers until every partition (key) has
  closed it, then writes the instant, the union of their answers, with the writer of ``rsp run``
  (:class:`rsp.spark.resident.ResidentMerger` for queries, :class:`ProgramMerger` for programs);
* LARS programs (the second half of the module), checked by :func:`rsp.lars.partition.partition_keys`:
  a ``mapInPandas`` step keys the atom lines, ``groupBy(key).applyInPandasWithState`` runs one
  :class:`rsp.engine.Engine` per key (its state in Spark's state store a JSON log of the key's atoms;
  the engine kept in the executor's Python worker and rebuilt from the log when the worker does not
  hold it), every time point is an instant, the answers are atoms (their union, plus the atoms a local
  engine derives from the program's facts alone), and the watermark lags the largest time seen by one
  time point; at the end of the input the keys' states are read back with Spark's state data source
  and finished on the executors (:func:`finish`).

The answers of different keys are disjoint and their union at every instant is what one engine gives
(``tests/test_spark_partitioned.py`` compares them with ``rsp run`` and ``rsp lars``).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout

from rsp.lars.partition import AtomKeys
from rsp.query.partition import KeyPlan
from rsp.spark.feed import admitted, display_path

OUTPUT_SCHEMA = "kind string, instant long, payload string, watermark long, first long, last long, late long"
STATE_SCHEMA = "state string"
REJECT_KEY = ""


@dataclass(frozen=True)
class Job:
    """What the executors need to run a key's engine (pickled with the functions)."""

    query: str
    file: str
    streams: tuple[str, ...]
    plan: KeyPlan
    step: int
    """The query's STEP (ms)."""
    entailment: str = "none"
    ontology: tuple[tuple[str, str, str], ...] = ()
    """The triples of ``--ontology`` (shipped with the job; FROM graphs are read where the query runs)."""

    def partition_engine(self):
        """A partition's engine (:class:`rsp.spark.resident.PartitionEngine`)."""
        from rsp.spark.resident import PartitionEngine

        return PartitionEngine(self)

    def elements(self, table, partition: int, partitions: int):
        """The partition's elements in its keyed rows, and the malformed lines it reports."""
        from rsp.spark.resident import query_elements

        return query_elements(self, table, partition, partitions)


_ENGINES: dict[tuple[int, str], ProgramKeyEngine] = {}
"""Engines kept in an executor's Python worker between micro-batches, by (job, key)."""


def _engine(job: ProgramJob, key: str, saved: dict | None) -> ProgramKeyEngine:
    """The key's engine: the worker's own if it is at the saved state's version, else rebuilt."""
    kind = ProgramKeyEngine
    cached = _ENGINES.get((hash(job), key))
    if saved is None:
        engine = kind(job)
    elif cached is not None and cached.version == saved["version"]:
        engine = cached
    else:
        engine = kind.restore(job, saved)
    _ENGINES[(hash(job), key)] = engine
    return engine


def _reject_rows(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The malformed lines sent under the empty key, as ``reject`` rows for the driver."""
    rows = []
    for frame in frames:
        for row in frame.itertuples(index=False):
            payload = {"file": display_path(row.file), "line": row.line, "reason": row.reason}
            rows.append(("reject", None, json.dumps(payload), None, None, None, None))
    return pd.DataFrame(rows, columns=list(Merger.columns))


def _finish_key(job: ProgramJob, final: int):
    """Close every time point up to ``final`` of each key whose state is given (the end of the input)."""

    def finish_key(frame: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for text in frame["state"]:
            rows.extend(ProgramKeyEngine.restore(job, json.loads(text)).finish(final))
        return pd.DataFrame(rows, columns=list(Merger.columns))

    return finish_key


class Merger:
    """The driver side: holds each instant's answers until every key has closed it, then emits the
    instant (the union of the keys' answers) as one :class:`rsp.runtime.Result`. It is driven like a
    feeder (:func:`rsp.spark.pipeline.start`): called with each micro-batch's rows as an Arrow table."""

    columns = ("kind", "instant", "payload", "watermark", "first", "last", "late")
    checkpoint = None

    def __init__(
        self, name: str, variables: tuple[str, ...], step: int, emit: Callable, reject: Callable,
        on_close: Callable[[], None] | None = None,
    ) -> None:  # fmt: skip
        """``emit`` takes each instant's :class:`rsp.runtime.Result`; ``reject`` each malformed line."""
        self.name = name
        self.on_close = on_close
        self.stopping = False
        self.closed = False
        self.answers = 0
        self.after_batch: list[Callable[[int], None]] = []
        self.variables = variables
        self.step = step
        self.emit = emit
        self.reject = reject
        self.pending: dict[int, list] = defaultdict(list)
        self.first: int | None = None
        self.last: int | None = None
        self.next: int | None = None
        self.late = 0
        self.batches = 0
        self.lock = threading.Lock()

    def __call__(self, table, batch_id: int, queued: bool = False) -> None:
        """Merge a micro-batch's rows (``queued``: one taken before the run began to stop, merged on
        :class:`rsp.spark.resident.ResidentMerger`'s own thread, which a stop does not skip)."""
        with self.lock:
            checkpoint = self.checkpoint
            if not admitted(self.stopping and not queued, checkpoint, batch_id):
                return
            self.batches += 1
            bound = None
            for row in table.to_pylist():
                kind = row["kind"]
                if kind == "result":
                    self.add(row["instant"], json.loads(row["payload"]))
                elif kind == "mark":
                    if row["watermark"] is not None and row["watermark"] >= 0:
                        bound = row["watermark"] if bound is None else max(bound, row["watermark"])
                    if row["first"] is not None:
                        self.first = row["first"] if self.first is None else min(self.first, row["first"])
                    if row["last"] is not None:
                        self.last = row["last"] if self.last is None else max(self.last, row["last"])
                    self.late += row["late"] or 0
                else:
                    self.reject(json.loads(row["payload"]))
            if bound is not None:
                self.flush(bound)
            for callback in self.after_batch:
                callback(batch_id)
            if checkpoint is not None:
                checkpoint.commit(batch_id, self.saved(), None)

    def saved(self) -> dict:
        """What a restart needs besides Spark's own state: the answers held back and the timeline."""
        return {
            "pending": [[instant, list(answers)] for instant, answers in sorted(self.pending.items())],
            "first": self.first, "last": self.last, "next": self.next, "late": self.late,
            "batches": self.batches, "answers": self.answers,
        }  # fmt: skip

    def resume(self, checkpoint) -> None:
        """Commit rsp's side of every micro-batch in ``checkpoint`` (a :class:`rsp.spark.checkpoint.
        Checkpoint`); after a restart, take the held-back answers and the timeline back."""
        self.checkpoint = checkpoint
        saved = checkpoint.counters()
        if not saved:
            return
        for instant, answers in saved["pending"]:
            self.add(instant, answers)
        self.first, self.last, self.late = saved["first"], saved["last"], saved["late"]
        self.batches, self.answers = saved["batches"], saved["answers"]
        self.restore_next(saved["next"])

    def restore_next(self, instant: int | None) -> None:
        self.next = instant

    def stop(self) -> None:
        with self.lock:
            self.stopping = True

    def close(self) -> None:
        """End of the input: finish the keys' last instants (``on_close``) and write them."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if self.on_close is not None:
                self.on_close()
            for callback in self.after_batch:
                callback(self.batches)

    def summary(self) -> list[str]:
        line = f"partitioned: {self.answers:,} answers"
        return [line + (f", {self.late:,} late elements dropped" if self.late else "")]

    def add(self, instant: int, answers: list) -> None:
        """A key's answers at an instant."""
        self.pending[instant].extend(answers)

    def flush(self, bound: int) -> None:
        """Write every instant up to ``bound`` (each key has closed them)."""
        if self.first is None:
            return
        if self.next is None:
            self.next = self.first_instant(self.first)
        while self.next <= bound:
            self.write(self.next, self.pending.pop(self.next, []))
            self.next += self.step

    def first_instant(self, first: int) -> int:
        """The first instant after the first element (as :class:`rsp.runtime.QueryHandle` has it)."""
        return (first // self.step + 1) * self.step

    def write(self, instant: int, bindings: list) -> None:
        from rsp.runtime import Result

        self.answers += len(bindings)
        self.emit(Result(self.name, instant, self.variables, bindings=bindings))

    def final_instant(self) -> int | None:
        return None if self.last is None else (self.last // self.step + 1) * self.step


class ProgramMerger(Merger):
    """The driver side for a LARS program: every time point of the timeline, the union of the keys'
    output atoms and those derived from the program's facts alone (a local engine without stream)."""

    def __init__(self, name: str, program, emit: Callable[[int, list[str]], None], reject: Callable) -> None:
        from rsp.engine import Engine

        super().__init__(name, (), 1, emit, reject)
        self.static = Engine(program)

    def add(self, instant: int, answers: list) -> None:
        self.pending.setdefault(instant, set()).update(answers)

    def first_instant(self, first: int) -> int:
        return first

    def restore_next(self, instant: int | None) -> None:
        """Bring the local engine of the facts-only atoms to where the written time points left it."""
        self.next = instant
        if instant is not None and self.first is not None:
            for t in range(self.first, instant):
                self.static.step(t)

    def write(self, instant: int, atoms) -> None:
        from rsp.lars.model import format_atom

        self.static.step(instant)
        found = set(atoms) | {format_atom(p, a) for p, a in self.static.output()}
        self.answers += len(found)
        self.emit(instant, sorted(found))

    def final_instant(self) -> int | None:
        return self.last


# -- LARS programs ------------------------------------------------------------------------------------
ATOM_SCHEMA = "key string, time long, atom string, line string, file string, reason string"
ATOM_COLUMNS = ["key", "time", "atom", "line", "file", "reason"]
TIMELINE_KEY = "\u0000timeline"
"""Bare time lines and atoms no keyed rule reads: they only stretch the timeline."""


@dataclass(frozen=True)
class ProgramJob:
    """What the executors need to run a key's LARS engine."""

    text: str
    source: str
    keys: AtomKeys


def _keyed_atoms(keys: AtomKeys) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    from rsp.io import atoms as atom_lines

    def add_keys(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for frame in frames:
            rows = []
            for row in frame.itertuples(index=False):
                try:
                    parsed = atom_lines.parse_line(row.line or "")
                except ValueError as err:
                    rows.append((REJECT_KEY, None, None, row.line, row.file, str(err)))
                    continue
                if parsed is None:
                    continue
                time, pred, args = parsed
                if pred is not None and keys.is_static(pred, args):
                    reason = f"{pred} has facts in the program: a partitioned run takes no stream atoms of it"
                    rows.append((REJECT_KEY, None, None, row.line, row.file, reason))
                    continue
                key = keys.key(pred, args) if pred is not None else None
                if key is None:
                    rows.append((TIMELINE_KEY, time, None, None, None, None))
                else:
                    rows.append((key, time, json.dumps([pred, list(args)]), None, None, None))
            yield pd.DataFrame(rows, columns=ATOM_COLUMNS)

    return add_keys


class ProgramKeyEngine:
    """The LARS engine of one key: its atoms, evaluated time point by time point once they are final."""

    def __init__(self, job: ProgramJob) -> None:
        from rsp.engine import Engine

        self.engine = Engine(_program(job))
        self.log: list[list] = []
        self.pending: dict[int, list] = {}
        self.done: int | None = None
        self.version = 0

    @classmethod
    def restore(cls, job: ProgramJob, saved: dict) -> ProgramKeyEngine:
        engine = cls(job)
        engine.add(saved["log"], log=False)
        engine.log = saved["log"]
        if saved["done"] is not None:
            engine.evaluate(saved["done"])
        engine.version = saved["version"]
        return engine

    def add(self, elements: list[list], log: bool = True) -> None:
        for time, pred, args in elements:
            self.pending.setdefault(time, []).append((pred, tuple(args)))
        if log:
            self.log.extend(elements)

    def evaluate(self, bound: int) -> list[tuple]:
        """Evaluate every time point up to ``bound`` from this key's first atom on; their output atoms."""
        from rsp.lars.model import format_atom

        rows = []
        start = self.done + 1 if self.done is not None else min(self.pending, default=bound + 1)
        for t in range(start, bound + 1):
            self.engine.step(t, self.pending.pop(t, []))
            atoms = [format_atom(p, a) for p, a in self.engine.output()]
            if atoms:
                rows.append(("result", t, json.dumps(atoms), None, None, None, None))
            self.done = t
        return rows

    def saved(self) -> dict:
        return {"version": self.version, "log": self.log, "done": self.done}

    def finish(self, final: int) -> list[tuple]:
        """Evaluate the time points up to ``final``; their output rows."""
        return self.evaluate(final)


_PROGRAMS: dict[int, object] = {}


def _program(job: ProgramJob):
    program = _PROGRAMS.get(hash(job))
    if program is None:
        from rsp.lars import parse

        program = _PROGRAMS[hash(job)] = parse(job.text, job.source)
    return program


def _run_program_key(job: ProgramJob):
    def run_key(key: tuple, frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
        (name,) = key
        columns = list(Merger.columns)
        if name == REJECT_KEY:
            yield _reject_rows(frames)
            return
        data = pd.concat(list(frames), ignore_index=True) if not state.hasTimedOut else None
        # the largest time of the earlier micro-batches: times below it are final (the event time is one
        # after the atom's and the watermark's delay is one, so Spark drops exactly the late atoms)
        watermark = state.getCurrentWatermarkMs()
        rows: list[tuple] = []
        first = last = None
        if data is not None and len(data):
            first, last = int(data["time"].min()), int(data["time"].max())
        if name == TIMELINE_KEY:
            rows.append(("mark", None, "", watermark - 1, first, last, 0))
            yield pd.DataFrame(rows, columns=columns)
            return
        saved = json.loads(state.get[0]) if state.exists else None
        engine = _engine(job, name, saved)
        if data is not None and len(data):
            data = data.sort_values("time", kind="stable")
            elements = [[int(t), *json.loads(a)] for t, a in zip(data["time"], data["atom"], strict=True)]
            engine.add(elements)
        own = max(engine.pending, default=None)
        bound = max(watermark, own if own is not None else watermark) - 1
        rows.extend(engine.evaluate(bound))
        rows.append(("mark", None, "", watermark - 1, first, last, 0))
        engine.version += 1
        state.update((json.dumps(engine.saved()),))
        done = engine.done if engine.done is not None else watermark
        state.setTimeoutTimestamp(max(done + 1, watermark))
        yield pd.DataFrame(rows, columns=columns)

    return run_key


def keyed_atom_stream(frame: DataFrame, job: ProgramJob) -> DataFrame:
    """The stream of per-key output atoms and marks for an atom stream (``read_stream(kind="atoms")``)."""
    keyed = frame.select("line", "file").mapInPandas(_keyed_atoms(job.keys), ATOM_SCHEMA)
    keyed = keyed.withColumn("ts", F.timestamp_millis(F.col("time") + 1)).withWatermark("ts", "1 millisecond")
    return keyed.groupBy("key").applyInPandasWithState(
        _run_program_key(job), OUTPUT_SCHEMA, STATE_SCHEMA, "append", GroupStateTimeout.EventTimeTimeout
    )


def finish(spark: SparkSession, checkpoint: str, job: ProgramJob, merger: Merger) -> None:
    """After the streaming query stopped: close the last time points of every key still in the state
    store, on the executors, and write them."""
    final = merger.final_instant()
    if final is None:
        return
    try:
        states = spark.read.format("statestore").load(checkpoint)
    except Exception:  # noqa: BLE001 - no state was ever written (no key kept any)
        states = None
    if states is not None and not states.isEmpty():
        frame = states.select(F.col("key.key").alias("key"), F.col("value.groupState.state").alias("state"))
        answers = frame.groupBy("key").applyInPandas(_finish_key(job, final), OUTPUT_SCHEMA).toArrow()
        for row in answers.to_pylist():
            merger.add(row["instant"], json.loads(row["payload"]))
    merger.flush(final)
