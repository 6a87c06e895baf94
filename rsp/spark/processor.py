"""The stateful processor behind :func:`rsp.spark.reason`: one rsp engine per key bucket, its state in
Spark's state store (``transformWithStateInPandas``, RocksDB).

Per bucket the state store keeps the elements its windows may still see (list state ``elements``) and the
engine's clock (value state ``clock``); nothing else is the truth. A worker-local cache keeps the live
engine between micro-batches while its version is the state's; another worker, a restart or a dropped
cache rebuilds it from the state (:meth:`BucketProcessor._rebuild`), with the same answers.

Time: a micro-batch's elements are taken as one engine over the whole stream takes them, micro-batch by
micro-batch, each in time order (equal times in the rows' ``order``): an element older than the last
instant closed is late; the micro-batch's first element (its *lead*) may move the first instant back,
and while nothing is closed it closes the instants behind a newer element; every instant up to the
newest element closes. Every bucket follows that one clock: each input partition sends every bucket a
*bounds* row (its earliest element, with its order, and its latest element time), so each bucket knows
the micro-batch's lead and newest element in the micro-batch itself, and closes the same instants as
every other bucket — an instant's answers, from every bucket, and its ``instant`` row (from bucket 0)
come in the micro-batch whose elements close it. An ``end`` row (the end of the input) closes every
instant up to the first one after the newest element, as :meth:`rsp.runtime.Engine.close` does."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pandas as pd
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import LongType, StringType, StructField, StructType

from rsp.errors import LateElementError
from rsp.io.late import late_message

DATA, BOUNDS, END, RECHECK, REJECT, COUNT = 0, 1, 2, 3, 4, 5
"""Row kinds: an element; an input partition's bounds (``time``: its earliest element, ``order``: that
element's order, ``latest``: its newest element's time); the end of the input; a line for rsp's parser
(before the bounds step reads it); a line rsp could not read (``detail``: JSON of the line, its file and
the reason); an input partition's count of lines and of elements per stream number (``detail``: JSON
``{"lines": {n: count}, "triples": {n: count}}``, to bucket 0, which writes it as a row of kind
``read``)."""

ELEMENTS = StructType(
    [
        StructField("oldest", LongType()),
        StructField("newest", LongType()),
        StructField("seq", LongType()),
        StructField("count", LongType()),
        StructField("rows", StringType()),
    ]
)
"""A bucket's kept elements (list state), one row per micro-batch that brought the bucket elements: their
oldest and newest time, the arrival number of the first, how many, and the elements as JSON rows
``[time, seq, stream, s, p, o]`` (``seq`` their arrival order). A micro-batch's elements are written
once, as one row, and dropped together once no window can see the newest of them; nothing is read back
while the worker's engine is current (76,000 elements of one row each cost 5 s a micro-batch to read)."""
CLOCK_STATE = StructType(
    [StructField(name, LongType()) for name in ("next", "closed", "newest", "oldest", "version", "seq")]
    + [StructField("extra", StringType())]
)
"""A bucket's clock (value state): the next instant, the last closed one, the newest element; the least
newest time of the kept micro-batches (when the first of them can be dropped); the state's version; the
next arrival number; what else its runner keeps (JSON)."""


@dataclass
class BucketState:
    """A bucket's value state (:data:`CLOCK_STATE`) as Python values."""

    next: int | None = None
    closed: int | None = None
    newest: int | None = None
    oldest: int | None = None
    version: int = 0
    seq: int = 0
    extra: str | None = None

    @classmethod
    def read(cls, value) -> BucketState:
        row = value.get() if value.exists() else None
        if row is None:
            return cls()
        *numbers, extra = row
        numbers = [None if v is None or pd.isna(v) else int(v) for v in numbers]
        return cls(*numbers, None if extra is None or pd.isna(extra) else str(extra))

    def write(self, value) -> None:
        value.update((self.next, self.closed, self.newest, self.oldest, self.version, self.seq, self.extra))


@dataclass(frozen=True)
class Bounds:
    """What every bucket learns of a micro-batch: its lead (earliest element, least order among equal
    times) and its newest element's time."""

    lead_time: int
    lead_order: int
    newest: int

    @classmethod
    def of(cls, rows: pd.DataFrame) -> Bounds | None:
        if not len(rows):
            return None
        times = rows["time"].astype("int64")
        first = int(times.min())
        order = int(rows.loc[times == first, "order"].astype("int64").min())
        return cls(first, order, int(rows["latest"].astype("int64").max()))


class Runner:
    """A bucket's live engine in a worker (what a :class:`BucketProcessor` subclass makes), with the
    version of the state it is, and the rows its results made during the current call (:attr:`out`:
    tuples of the output's first columns, the rest null)."""

    version: int = 0
    out: list
    name: str
    """The ``query`` column of the runner's rows."""

    def replay(self, rows: list[tuple], state: BucketState) -> None:
        """Rebuild from the state: the kept elements ((time, seq, stream, s, p, o) of :data:`ELEMENTS`, in
        time then arrival order),
        results muted, the clock set back as ``state`` has it."""
        raise NotImplementedError

    def take(self, data: pd.DataFrame, bounds: Bounds) -> list[int]:
        """A micro-batch's elements of the bucket (``data``, in time then ``order``) as one engine over the
        stream takes them (the module docstring); returns the positions in ``data`` of the elements to
        keep (late ones are reported in :attr:`out`)."""
        raise NotImplementedError

    def finish(self) -> None:
        """The end of the input."""
        raise NotImplementedError

    def oldest_needed(self) -> int | None:
        """Elements older than this no later evaluation can see (None: keep them all)."""
        raise NotImplementedError

    def save(self, state: BucketState) -> None:
        """Write the clock (and anything else of the runner's) into ``state``."""
        raise NotImplementedError


_LIVE: dict[tuple[str, int], Runner] = {}
"""(job, bucket) -> the bucket's live engine in this worker: a cache, the state store is the truth."""
_COMPILED: dict[str, object] = {}
"""job -> what its runners share in this worker process (a compiled query, a parsed program)."""


def drop_cached_engines() -> int:
    """Forget every live engine of this worker (they are rebuilt from the state store when next needed);
    returns how many there were."""
    count = len(_LIVE)
    _LIVE.clear()
    return count


def compiled(ident: str, make):
    """What the job ``ident`` compiles once per worker process (``make()`` the first time)."""
    found = _COMPILED.get(ident)
    if found is None:
        found = _COMPILED[ident] = make()
    return found


class BucketProcessor(StatefulProcessor):
    """A runner per key bucket, its elements and clock in the state store (module docstring). Subclasses
    say how to make a runner (:meth:`runner`); ``job`` has ``ident`` and ``cache``."""

    def __init__(self, job, output: StructType, labels: Sequence[int] | None = None) -> None:
        self.job = job
        self.columns = [f.name for f in output.fields]
        self.index = None if labels is None else {label: i for i, label in enumerate(labels)}
        """The bucket of each grouping value (:func:`rsp.spark.hashing.bucket_labels`); None: the value is
        the bucket."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.elements = handle.getListState("elements", ELEMENTS)
        self.state = handle.getValueState("clock", CLOCK_STATE)

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        frame = pd.concat(list(rows), ignore_index=True)
        bucket = int(key[0])
        out = self._step(bucket if self.index is None else self.index[bucket], frame)
        if out:
            width = len(self.columns)
            yield pd.DataFrame([list(r) + [None] * (width - len(r)) for r in out], columns=self.columns)

    def close(self) -> None:
        pass

    def runner(self, bucket: int) -> Runner:
        """A new, empty runner for ``bucket``."""
        raise NotImplementedError

    def bounds(self, rows: pd.DataFrame):
        """What the micro-batch's bounds rows tell every bucket (what :meth:`Runner.take` is given; a
        subclass whose times are not integers reads more of the rows)."""
        return Bounds.of(rows)

    def _step(self, bucket: int, frame: pd.DataFrame) -> list:
        job = self.job
        state = BucketState.read(self.state)
        live = _LIVE.get((job.ident, bucket)) if job.cache else None
        if live is None or live.version != state.version:
            live = self.runner(bucket)
            live.out = []
            if self.elements.exists():
                rows = [tuple(row) for part in self.elements.get() for row in json.loads(part[4])]
                live.replay(sorted(rows, key=lambda r: (r[0], r[1])), state)
            else:
                live.replay([], state)
            live.out = []
        kind = frame["kind"]
        rejected = frame[kind == REJECT]
        for order, detail in zip(rejected["order"].tolist(), rejected["detail"].tolist(), strict=True):
            live.out.append((live.name, None, "reject", int(order), detail))
        for detail in frame.loc[kind == COUNT, "detail"].tolist():  # an input partition's lines, to bucket 0
            live.out.append((live.name, None, "read", 0, detail))
        bounds = self.bounds(frame[kind == BOUNDS])
        if bounds is not None:
            data = frame[kind == DATA]
            if len(data):
                data = data.sort_values(["time", "order"], kind="stable").reset_index(drop=True)
            kept = live.take(data, bounds)
            if kept:
                self._keep(data, kept, state)
        if (kind == END).any():
            live.finish()
        self._save(bucket, live, state)
        rows, live.out = live.out, []
        return rows

    def _keep(self, data: pd.DataFrame, kept: list[int], state: BucketState) -> None:
        times = data["time"].astype("int64").tolist()
        streams = data["stream"].astype("int64").tolist()
        s, p, o = data["s"].tolist(), data["p"].tolist(), data["o"].tolist()
        seq = state.seq
        rows = [(times[k], seq + m, streams[k], s[k], p[k], o[k]) for m, k in enumerate(kept)]
        newest = max(times[k] for k in kept)
        text = json.dumps(rows, ensure_ascii=False)
        self.elements.appendList([(min(times[k] for k in kept), newest, seq, len(rows), text)])
        state.seq = seq + len(kept)
        state.oldest = newest if state.oldest is None else min(state.oldest, newest)

    def _save(self, bucket: int, live: Runner, state: BucketState) -> None:
        """Drop the micro-batches of elements no window can see any more (a micro-batch's elements go
        together, once the newest of them is too old), keep the clock, and keep the runner in the worker's
        cache under the state's new version."""
        needed = live.oldest_needed()
        if needed is not None and state.oldest is not None and state.oldest < needed:
            parts = list(self.elements.get()) if self.elements.exists() else []
            kept = [tuple(part) for part in parts if part[1] >= needed]
            if kept:
                self.elements.put(kept)
                state.oldest = min(part[1] for part in kept)
            else:
                self.elements.clear()
                state.oldest = None
        live.save(state)
        state.version += 1
        state.write(self.state)
        live.version = state.version
        if self.job.cache:
            _LIVE[(self.job.ident, bucket)] = live


@dataclass(frozen=True)
class QueryJob:
    """What a bucket needs to run its query (pickled with the processor)."""

    ident: str
    """Names the job's engines in a worker's cache."""
    name: str
    """The query's name (the ``query`` column)."""
    text: str
    file: str
    streams: tuple[str, ...]
    """The stream IRIs, in the order of the rows' ``stream`` numbers."""
    step: int
    entailment: str = "none"
    static: tuple[tuple[str, str, str], ...] = ()
    late: str = "drop"
    cache: bool = True


class QueryRunner(Runner):
    """A continuous query's engine in a bucket (bucket 0 also reports the instants)."""

    def __init__(self, job: QueryJob, instants: bool) -> None:
        from rsp.query.compile import compile_text
        from rsp.runtime import Engine

        self.job, self.instants, self.name = job, instants, job.name
        query = compiled(
            job.ident, lambda: compile_text(job.text, job.file, static=job.static, entailment=job.entailment)
        )
        self.engine = Engine(entailment=job.entailment, late=job.late)
        self.handle = self.engine.register_compiled(query)
        self.handle.keep = False
        self.handle.subscribe(self._result)
        self.out = []

    def _result(self, result) -> None:
        out, name, time = self.out, result.query, result.time
        if self.instants:
            out.append((name, time, "instant", 0, None))
        if result.bindings is not None:
            out += [(name, time, "answer", rank, None, dict(b)) for rank, b in enumerate(result.bindings)]
        elif result.triples is not None:
            from rsp.io.ntriples import as_triple

            out += [
                (name, time, "answer", rank, None, *as_triple(t)) for rank, t in enumerate(result.triples)
            ]
        else:
            out.append((name, time, "answer", 0, None, bool(result.boolean)))

    def replay(self, rows: list[tuple], state: BucketState) -> None:
        engine, handle, streams = self.engine, self.handle, self.job.streams
        with handle.muted():
            for stream, run in itertools.groupby(rows, key=lambda r: r[2]):
                run = list(run)
                times, triples = [r[0] for r in run], [(r[3], r[4], r[5]) for r in run]
                engine.push_sorted(times, triples, streams[stream], plain=True)
            if state.closed is not None:
                handle.advance(state.closed)
        handle.clock.restore(state.next, state.closed, state.newest)
        handle.blank_nodes_made = int(state.extra or 0)
        engine.late = 0

    def take(self, data: pd.DataFrame, bounds: Bounds) -> list[int]:
        """The lead (here, or the instants it closes when another bucket holds it), the bucket's
        elements in time order, then the instants up to the micro-batch's newest element."""
        clock = self.handle.clock
        times = data["time"].astype("int64").tolist() if len(data) else []
        orders = data["order"].astype("int64").tolist() if len(data) else []
        if not (times and times[0] == bounds.lead_time and orders[0] == bounds.lead_order):
            clock.close_before(bounds.lead_time)
            clock.saw(bounds.lead_time)
            if clock.closes_behind():
                clock.catch_up()
        kept = self._push(data, times, orders) if times else []
        clock.saw(bounds.newest)
        clock.catch_up()
        return kept

    def _push(self, data: pd.DataFrame, times: list, orders: list) -> list[int]:
        """The bucket's elements in time order, each run of one stream in one call; late ones reported
        (``late`` rows: the element's time and order)."""
        engine, handle, streams, name = self.engine, self.handle, self.job.streams, self.job.name
        stream_of = data["stream"].astype("int64").tolist()
        triples = list(zip(data["s"].tolist(), data["p"].tolist(), data["o"].tolist(), strict=True))
        late: dict[int, int | None] = {}

        def judged(_handle, index: int) -> None:
            late[index] = handle.closed_until

        engine.on_late_element = judged
        kept: list[int] = []
        try:
            i, n = 0, len(times)
            while i < n:
                j = i + 1
                while j < n and stream_of[j] == stream_of[i]:
                    j += 1
                late.clear()
                try:
                    engine.push_sorted(times[i:j], triples[i:j], streams[stream_of[i]], plain=True)
                except LateElementError as err:  # late="fail": which element, as rsp run says it
                    k = i + min(late, default=0)
                    s, p, o = triples[k]
                    raise LateElementError(
                        f"{late_message(times[k], err.instant)} in {streams[stream_of[k]]}: {s} {p} {o} .",
                        time=times[k],
                        instant=err.instant,
                    ) from None
                for k in range(i, j):
                    if k - i in late:
                        detail = {"stream": stream_of[k], "triple": list(triples[k]), "instant": late[k - i]}
                        self.out.append((name, times[k], "late", orders[k], json.dumps(detail)))
                    else:
                        kept.append(k)
                i = j
        finally:
            engine.on_late_element = None
        return kept

    def finish(self) -> None:
        self.handle.finish()

    def oldest_needed(self) -> int | None:
        return self.handle.oldest_needed()

    def save(self, state: BucketState) -> None:
        clock = self.handle.clock
        state.next, state.closed, state.newest = clock.next_instant, clock.closed_until, clock.newest
        state.extra = str(self.handle.blank_nodes_made)


class QueryProcessor(BucketProcessor):
    """A continuous query per key bucket; bucket 0 also reports the instants (module docstring)."""

    def runner(self, bucket: int) -> Runner:
        return QueryRunner(self.job, instants=bucket == 0)
