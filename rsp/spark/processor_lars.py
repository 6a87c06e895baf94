"""LARS programs in Spark's stateful operator (:func:`rsp.spark.programs.reason_program`): the reading of
atom lines before the shuffle (:func:`atom_tagger`) and one LARS engine per key bucket
(:class:`LarsProcessor`, on :class:`rsp.spark.processor.BucketProcessor`'s state store and worker cache).

Reading (a ``mapInPandas`` step, :func:`rsp.spark.reasoner.bounds_function` with :func:`atom_rechecker`):
rsp's parser reads every line (:func:`rsp.io.atoms.parse_line`; a triple row is the atom
``p(s, o)``); a malformed line is a ``reject`` row. An atom goes to its key's bucket
(:class:`rsp.lars.partition.AtomKeys`; unpartitioned: bucket 0), an element row of the ``ELEMENTS``
list state with ``s`` its predicate and ``p`` its arguments as JSON. A bare time line, or (partitioned)
an atom no keyed rule reads, only stretches the timeline: it goes to bucket 0 as stream 1, which no
engine takes. Partitioned, a stream atom of a predicate the program has facts of or derives is refused
(a ``reject`` row): it would belong to every key.

Time (exact: one engine over the whole stream, fed micro-batch by micro-batch, each in time order, as
``rsp lars`` reads the micro-batches' lines one after the other, each sorted by time): the timeline
starts at the first micro-batch's earliest element; the newest time point seen is held back (a later
micro-batch may still bring atoms of it) and every time point before it is evaluated, in every bucket,
with the atoms of the bucket's keys; an atom older than the newest time point of the earlier
micro-batches is late (``late`` rows; a late bare time line is nothing). The end of the input evaluates
the time point held back. Every bucket evaluates every time point from the global start, so the atoms
derived from the program's facts alone (which need no stream) are the same in each: bucket 0 writes
them, the others only the atoms of keyed predicates. The union of the buckets' atoms at a time point is
the one engine's (rsp/lars/partition.py says why).

The state: every atom taken (a program may remember any part of its stream, through recursion or
``@T``); the clock (``next`` time point, the last evaluated one in ``closed``, the newest one held back
in ``newest``, the timeline's start in ``extra``). A rebuilt engine steps through the timeline again,
muted.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pandas as pd
from pyspark.sql.types import LongType, StringType, StructField, StructType

from rsp.errors import LateElementError
from rsp.spark.processor import (
    DATA,
    RECHECK,
    REJECT,
    Bounds,
    BucketProcessor,
    BucketState,
    Runner,
    compiled,
)
from rsp.spark.reasoner import BUCKET, bounds_function

LARS_OUTPUT = StructType(
    [
        StructField("program", StringType()),
        StructField("time", LongType()),
        StructField("kind", StringType()),
        StructField("rank", LongType()),
        StructField("detail", StringType()),
        StructField("atom", StringType()),
        StructField("pred", StringType()),
        StructField("args", StringType()),
    ]
)
"""A LARS program's rows: ``program`` (its name), ``time`` (the time point), ``kind`` (``atom``; with
``instants=True`` also ``instant``, a time point evaluated, once, ``late``, a late atom dropped, and
``reject``, a line rsp could not read or a partitioned run refuses), ``rank`` (the atom's place in its
bucket's sorted atoms of the time point; a late or rejected row's order), ``detail`` (late and rejected
rows: JSON saying what and why), then the atom: ``atom`` (its text, as ``rsp lars`` writes it), ``pred``
and ``args`` (a JSON array: strings, integers, decimals)."""
TIMELINE = 1
"""The stream number of an element row that only stretches the timeline (no engine takes it)."""
STATIC_REASON = "{pred} has facts in the program: a partitioned run takes no stream atoms of it"
DERIVED_REASON = "{pred} is derived by the program's rules: a partitioned run takes no stream atoms of it"
LONG = 2**63


@dataclass(frozen=True)
class LarsJob:
    """What a bucket needs to run a LARS program (pickled with the processor and the reading step)."""

    ident: str
    """Names the job's engines in a worker's cache."""
    name: str
    """The ``program`` column."""
    text: str
    file: str
    keys: object = None
    """:class:`rsp.lars.partition.AtomKeys` (None: one bucket holds the whole stream)."""
    keyed: tuple[tuple[str, int], ...] = ()
    """Partitioned: the keyed predicates (name, arity), those the buckets other than 0 write."""
    refused: tuple[tuple[tuple[str, int], str], ...] = ()
    """Partitioned: the predicates whose stream atoms are refused, with the reason."""
    late: str = "drop"
    cache: bool = True
    impossible: bool = True


def lars_job(ident: str, name: str, text: str, file: str, partition_by: str | None, **options) -> LarsJob:
    """The job of a program (parsed and checked here, in the driver: errors before Spark starts; with
    ``partition_by``, refused with the reason unless the program partitions by that variable)."""
    from rsp.lars import parse
    from rsp.lars.model import ExtAtom
    from rsp.lars.partition import partition_keys

    checked = parse(text, file)
    if partition_by is None:
        return LarsJob(ident, name, text, file, **options)
    program = checked.program
    keys = partition_keys(program, partition_by)
    intensional = program.intensional_predicates()
    static = {f.head.atom.sig for f in program.facts} - intensional
    keyed = {b.atom.sig for r in program.proper_rules for b in r.body if isinstance(b, ExtAtom)}
    keyed -= intensional | static
    changed = True
    while changed:  # the keyed predicates, as rsp.lars.partition.partition_keys finds them
        changed = False
        for rule in program.proper_rules:
            head = rule.head.atom.sig
            if head not in keyed and any(isinstance(b, ExtAtom) and b.atom.sig in keyed for b in rule.body):
                keyed.add(head)
                changed = True
    refused = [(tuple(sig), STATIC_REASON.format(pred=sig[0])) for sig in sorted(static)]
    refused += [(tuple(sig), DERIVED_REASON.format(pred=sig[0])) for sig in sorted(intensional)]
    return LarsJob(
        ident, name, text, file, keys, tuple(sorted(tuple(s) for s in keyed)), tuple(refused), **options
    )


def bucket_of(key: str, buckets: int) -> int:
    """A key's bucket (the same in every process: no salted hash)."""
    return zlib.crc32(key.encode("utf-8")) % buckets


def recheck_rows(batch: pd.DataFrame, read: Callable) -> pd.DataFrame:
    """``batch`` with its RECHECK rows (a line in ``detail`` as JSON ``{line, file}``, or a triple in
    ``s``, ``p``, ``o`` at ``time``) replaced by what ``read(line, triple, time)`` makes of each: a list of
    (bucket, kind, time, stream, s, p, o, detail) rows, each keeping the row's order."""
    todo = batch["kind"] == RECHECK
    if not todo.any():
        return batch
    rows = batch[todo]
    made: dict[str, list] = {name: [] for name in batch.columns}
    columns = (BUCKET, "kind", "time", "stream", "s", "p", "o", "detail")
    for order, s, p, o, time, detail in zip(
        rows["order"].tolist(), rows["s"].tolist(), rows["p"].tolist(), rows["o"].tolist(),
        rows["time"].tolist(), rows["detail"].tolist(), strict=True,
    ):  # fmt: skip
        if isinstance(s, str) and isinstance(p, str) and isinstance(o, str):
            found = read(None, None, (s, p, o), None if time is None or pd.isna(time) else int(time))
        else:
            where = json.loads(detail)
            found = read(where.get("line") or "", where.get("file"), None, None)
        for row in found:
            for name, value in zip(columns, row, strict=True):
                made[name].append(value)
            made["order"].append(order)
            made["latest"].append(None)
    rest = batch[~todo]
    if not made["order"]:
        return rest
    made_frame = pd.DataFrame(made, columns=batch.columns)
    if rest.empty:  # pandas warns when concatenating an empty frame
        return made_frame
    return pd.concat([rest, made_frame], ignore_index=True)


def reject(line: str, file: str | None, reason: str) -> tuple:
    """A rejected line's row for bucket 0 (see :func:`recheck_rows`)."""
    detail = json.dumps({"line": line, "file": file, "reason": reason}, ensure_ascii=False)
    return (0, REJECT, None, 0, None, None, None, detail)


def atom_rechecker(job: LarsJob, buckets: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The reading of atom lines (module docstring), for :func:`rsp.spark.reasoner.bounds_function`."""
    keys, refused = job.keys, dict(job.refused)

    def read(line: str, file: str | None, triple: tuple | None, time: int | None) -> list[tuple]:
        from rsp.io.atoms import parse_line
        from rsp.io.terms import literal_value

        if triple is not None:
            if time is None:
                return [reject(" ".join(triple) + " .", file, "a triple without a time")]
            s, p, o = triple
            pred, args = p, (literal_value(s), literal_value(o))
        else:
            try:
                parsed = parse_line(line)
            except ValueError as err:
                return [reject(line, file, str(err))]
            if parsed is None:
                return []
            time, pred, args = parsed
        if not -LONG <= time < LONG:
            return [reject(line, file, f"time {time} is out of range (a 64-bit integer)")]
        if pred is None:
            return [(0, DATA, time, TIMELINE, None, None, None, None)]
        text = json.dumps(list(args), ensure_ascii=False)
        if keys is None:
            return [(0, DATA, time, 0, pred, text, None, None)]
        why = refused.get((pred, len(args)))
        if why is not None:
            return [reject(line if triple is None else " ".join(triple) + " .", file, why)]
        key = keys.key(pred, args)
        if key is None:
            return [(0, DATA, time, TIMELINE, pred, text, None, None)]
        return [(bucket_of(key, buckets), DATA, time, 0, pred, text, None, None)]

    return lambda batch: recheck_rows(batch, read)


def atom_tagger(job: LarsJob, buckets: int) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The ``mapInPandas`` function from the program's input rows (kind RECHECK or END) to the tagged
    rows the stateful operator takes."""
    return bounds_function(buckets, atom_rechecker(job, buckets))


class LarsRunner(Runner):
    """A LARS program's engine in a bucket (bucket 0 also reports the time points, and the atoms no key
    derives)."""

    def __init__(self, job: LarsJob, bucket: int) -> None:
        from rsp.engine import Engine
        from rsp.lars import parse

        self.job, self.name = job, job.name
        program = compiled(job.ident, lambda: parse(job.text, job.file))
        self.engine = Engine(program, impossible=job.impossible)
        self.instants = bucket == 0
        self.only = None if bucket == 0 or job.keys is None else frozenset(job.keyed)
        self.pending: dict[int, list] = {}
        self.start: int | None = None
        self.done: int | None = None
        self.newest: int | None = None
        self.muted = False
        self.out = []

    def _evaluate(self, bound: int) -> None:
        """Every time point from the next one up to ``bound``."""
        from rsp.lars.model import format_atom

        first = self.start if self.done is None else self.done + 1
        if first is None:
            return
        engine, pending, only, name = self.engine, self.pending, self.only, self.name
        for t in range(first, bound + 1):
            engine.step(t, pending.pop(t, []))
            self.done = t
            if self.muted:
                continue
            if self.instants:
                self.out.append((name, t, "instant", 0, None))
            atoms = [
                (format_atom(p, a), p, a) for p, a in engine.output() if only is None or (p, len(a)) in only
            ]
            atoms.sort(key=lambda atom: atom[0])
            self.out += [
                (name, t, "atom", rank, None, text, p, json.dumps(list(a), ensure_ascii=False))
                for rank, (text, p, a) in enumerate(atoms)
            ]

    def take(self, data: pd.DataFrame, bounds: Bounds) -> list[int]:
        """The micro-batch's atoms of the bucket, in time order: those older than the newest time point
        of the earlier micro-batches are late, the others wait for their time point; then every time
        point before the newest one (of every bucket) is evaluated."""
        if self.start is None:
            self.start = bounds.lead_time
        reached = self.newest
        kept: list[int] = []
        if len(data):
            times = data["time"].astype("int64").tolist()
            orders = data["order"].astype("int64").tolist()
            streams = data["stream"].astype("int64").tolist()
            preds, args = data["s"].tolist(), data["p"].tolist()
            pending = self.pending
            for k, t in enumerate(times):
                pred = preds[k]
                if reached is not None and t < reached:
                    if isinstance(pred, str):
                        self._late(t, orders[k], pred, args[k], reached)
                    continue
                if streams[k] == 0 and isinstance(pred, str):
                    pending.setdefault(t, []).append((pred, tuple(json.loads(args[k]))))
                    kept.append(k)
        self.newest = bounds.newest if reached is None else max(reached, bounds.newest)
        self._evaluate(self.newest - 1)
        return kept

    def _late(self, time: int, order: int, pred: str, args: str, reached: int) -> None:
        from rsp.lars.model import format_atom

        atom = format_atom(pred, tuple(json.loads(args)))
        if self.job.late == "fail":
            raise LateElementError(
                f"late element {atom} at {time}: the stream had reached {reached}", time=time, instant=reached
            )
        detail = json.dumps({"atom": atom, "reached": reached}, ensure_ascii=False)
        self.out.append((self.name, time, "late", order, detail))

    def finish(self) -> None:
        if self.newest is not None:
            self._evaluate(self.newest)

    def oldest_needed(self) -> int | None:
        return None  # a program may remember any part of its stream (recursion, @T)

    def replay(self, rows: list[tuple], state: BucketState) -> None:
        extra = json.loads(state.extra) if state.extra else {}
        self.start = extra.get("start")
        pending = self.pending
        for time, _seq, _stream, pred, args, _o in rows:
            pending.setdefault(int(time), []).append((pred, tuple(json.loads(args))))
        if state.closed is not None:
            self.muted = True
            try:
                self._evaluate(state.closed)
            finally:
                self.muted = False
        self.newest = state.newest

    def save(self, state: BucketState) -> None:
        state.next = self.start if self.done is None else self.done + 1
        state.closed, state.newest = self.done, self.newest
        state.extra = None if self.start is None else json.dumps({"start": self.start})


class LarsProcessor(BucketProcessor):
    """A LARS program per key bucket (module docstring)."""

    def runner(self, bucket: int) -> Runner:
        return LarsRunner(self.job, bucket)
