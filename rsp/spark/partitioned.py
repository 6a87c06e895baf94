"""Scale-out (``rsp spark QUERY --partition-by ?k``, ``rsp spark PROGRAM --partition-by V``): what the
driver and the executors share.

* :class:`Job` and :class:`ProgramJob` — what the executors need to run a query's or a LARS program's
  partition engines, which run on the resident machinery of :mod:`rsp.spark.resident` (programs:
  :mod:`rsp.spark.resident_programs`, keyed by :func:`rsp.lars.partition.partition_keys`);
* :class:`Merger` — the driver side: holds each instant's answers until every partition has closed
  it, then writes the instant, the union of their answers, with the writer of ``rsp run``
  (:class:`ProgramMerger` for programs: every time point of the timeline, the partitions' atoms and
  those a local engine derives from the program's facts alone).

The answers of different keys are disjoint and their union at every instant is what one engine gives
(``tests/spark/test_spark_partitioned.py`` compares them with ``rsp run`` and ``rsp lars``).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable

from rsp.spark.feed import admitted

OUTPUT_SCHEMA = "kind string, instant long, payload string, watermark long, first long, last long, late long"
REJECT_KEY = ""


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
        :class:`rsp.spark.resident_driver.ResidentMerger`'s own thread, which a stop does not skip)."""
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
        """Emit an instant: the keys' answers in the answer's order, as ``rsp run`` gives them
        (rsp/query/answers/order.py: each key's come sorted, so this merges sorted runs)."""
        from rsp.query.answers.order import in_answer_order
        from rsp.runtime import Result

        bindings = in_answer_order(bindings, self.variables)
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
