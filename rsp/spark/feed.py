"""The driver side of a Spark pipeline: micro-batches (Arrow tables of parsed lines) into an engine.

A feeder receives each micro-batch as a ``pyarrow.Table`` whose rows are the non-blank lines Spark
read, already parsed where Spark's regex could (see :mod:`rsp.spark.source`). It re-checks the
lines Spark did not take with rsp's own validators (:func:`rsp.io.ntriples.parse_line`,
:func:`rsp.io.atoms.parse_line`: they stay the authority), writes and reports the malformed ones,
orders the rest by (time, stream, source file, position in the file) and hands them to the engine.
No pyspark here: a feeder can be driven by any Arrow table, which is how it is unit-tested.

Columns a feeder reads (missing optional columns count as null):

=============  ======  ==================================================================
``s p o``      string  the triple's terms in N-Triples syntax; null when Spark did not parse
``time``       int64   the element's time (ms for queries, time point for LARS); null if none
``line``       string  the line's text (needed to re-check and reject a line)
``file``       string  the source file (URI), null for a socket
``arrival``    int64   arrival time in ms (socket sources), used for lines without a time
``stream``     int32   index of the stream (in the order the streams were given)
``file_time``  ts/int  modification time of the file; with ``block`` and ``pos``: order in a file
=============  ======  ==================================================================
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import re
import sys
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.compute as pc

from rsp.errors import LateElementError, Position, StreamError
from rsp.io import atoms as atom_lines
from rsp.io.late import late_message
from rsp.io.ntriples import ReadCounters, parse_line
from rsp.spark import lines
from rsp.spark.checkpoint import QUERY_LOG_COLUMNS, Checkpoint, read_program_log, read_query_log

CHUNK = 65536
"""Rows converted to Python objects at a time (a micro-batch of a million rows is pushed in chunks)."""

ORDER = ("time", "stream", "file_time", "file", "block", "pos")
"""The order of elements within a micro-batch: time first, then stream, file and place in the file."""

_TIME_WORD = re.compile(r"[0-9]+")
MAX_TIME = 2**63 - 1
"""The largest element time Spark's columns hold (a long, in ms)."""


def display_path(uri: str | None) -> str:
    """A file URI as Spark reports it, as a local path for people (other URIs unchanged).

    >>> display_path("file:/tmp/in%20dir/a.nt"), display_path("hdfs://nn/x.nt"), display_path(None)
    ('/tmp/in dir/a.nt', 'hdfs://nn/x.nt', '<socket>')
    """
    if uri is None:
        return "<socket>"
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def recheck_triple(line: str, arrival: int | None = None) -> tuple[int, tuple[str, str, str]] | None:
    """Time and triple of a line Spark's fast regex did not take, decided by rsp's N-Triples parser.

    ``None`` for a blank or comment line; ``ValueError`` with the reason for a malformed one. A
    line needs a ``# <ms>`` time comment unless ``arrival`` (its arrival time) is given.

    >>> recheck_triple('<http://s> <http://p> "é" . # 7')
    (7, ('<http://s>', '<http://p>', '"é"'))
    >>> recheck_triple("<http://s> <http://p> <http://o> .", arrival=1234)
    (1234, ('<http://s>', '<http://p>', '<http://o>'))
    >>> recheck_triple("<http://s> <http://p> <http://o> .")
    Traceback (most recent call last):
    ...
    ValueError: missing time comment (expected '. # <milliseconds>')
    """
    parsed = parse_line(line)
    if parsed is None:
        return None
    triple, comment = parsed
    word = comment.split(None, 1)[0] if comment and comment.strip() else ""
    if _TIME_WORD.fullmatch(word):
        if int(word) > MAX_TIME:
            raise ValueError(f"time {word} is out of range (at most {MAX_TIME} ms)")
        return int(word), triple
    if arrival is not None and not (word and word[0] in "0123456789-+"):
        return arrival, triple
    if comment is None:
        raise ValueError("missing time comment (expected '. # <milliseconds>')")
    raise ValueError(f"time comment {word!r} is not a time (milliseconds ≥ 0)")


class Rejects:
    """Malformed lines: counted, reported (``on_error``) and written as JSON lines to a directory.

    Each micro-batch with malformed lines writes ``DIR/batch-<id>.jsonl``, one object per line:
    ``{"file": …, "stream": …, "line": …, "reason": …}`` (readable with ``spark.read.json(DIR)``).
    """

    def __init__(self, directory: str | os.PathLike | None, on_error: Callable[[StreamError], None] | None):
        self.directory = Path(directory) if directory is not None else None
        self.on_error = on_error
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    def write(self, batch_id: int, rows: Sequence[dict]) -> None:
        if not rows:
            return
        if self.on_error is not None:
            for row in rows:
                self.on_error(StreamError(f"{row['reason']}: {row['line']!r}", Position(row["file"])))
        if self.directory is not None:
            path = self.directory / f"batch-{batch_id:06d}.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _column(table: pa.Table, name: str, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    if name in table.column_names:
        return table.column(name)
    return pa.nulls(table.num_rows, type_)


def _normalise(table: pa.Table, names: Sequence[str]) -> pa.Table:
    """The table with exactly the columns a feeder uses, missing ones as nulls, in fixed types."""
    types = {
        "s": pa.string(),
        "p": pa.string(),
        "o": pa.string(),
        "time": pa.int64(),
        "line": pa.string(),
        "file": pa.string(),
        "arrival": pa.int64(),
        "stream": pa.int32(),
        "file_time": pa.int64(),
        "block": pa.int64(),
        "pos": pa.int64(),
    }
    columns = []
    for name in names:
        column = _column(table, name, types[name])
        if name == "file_time" and pa.types.is_timestamp(column.type):
            column = pc.cast(column, pa.timestamp("us")).cast(pa.int64())
        columns.append(pc.cast(column, types[name]))
    return pa.table(columns, names=list(names))


class Stopped(RuntimeError):
    """Raised for a micro-batch that arrives after the run began to stop, when checkpointing: Spark then
    does not commit it, and a restart processes it."""

    MESSAGE = "rsp: the run is stopping; this micro-batch stays uncommitted"

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def admitted(stopping: bool, checkpoint: Checkpoint | None, batch_id: int) -> bool:
    """Whether a consumer of micro-batches processes this one: not once its run is stopping (with a
    checkpoint it raises :class:`Stopped`, so that Spark leaves the micro-batch uncommitted), and not a
    micro-batch committed before a restart (Spark hands it over again)."""
    if stopping:
        if checkpoint is not None:
            raise Stopped()
        return False
    return checkpoint is None or batch_id > checkpoint.committed_batch


class Feeder:
    """What every feeder shares: a lock held while a micro-batch is processed, stop and counters.

    With a :class:`rsp.spark.checkpoint.Checkpoint` (:meth:`resume`), every micro-batch logs what it
    pushes and commits rsp's state before returning, micro-batches committed before a restart are
    skipped, and a stopping run leaves the micro-batch it refuses uncommitted.

    Without one, :meth:`overlap` lets Spark prepare the next micro-batch while the engine works on this
    one: a call only queues the table (at most one waiting) for a thread of the feeder's own, which
    processes micro-batches in order; :meth:`stop` and :meth:`close` first let every queued one through.
    """

    def __init__(self, sources: Sequence[str], rejects: Rejects) -> None:
        self.sources = list(sources)
        self.rejects = rejects
        self.counters = [ReadCounters() for _ in self.sources]
        self.lock = threading.Lock()
        self.stopping = False
        self.batches = 0
        self.last_batch: int | None = None
        self.closed = False
        self.after_batch: list[Callable[[int], None]] = []
        """Called with the batch id after each micro-batch (e.g. to write its results to a sink)."""
        self.checkpoint: Checkpoint | None = None
        self._queue: queue.Queue | None = None
        self._failed: BaseException | None = None

    def overlap(self) -> None:
        """Process micro-batches on a thread of their own (see the class docstring; not with a
        checkpoint, whose commit must follow the processing)."""
        if self.checkpoint is not None or self._queue is not None:
            return
        self._queue = queue.Queue(maxsize=1)
        # The engine's thread is busy in Python while Spark's callback thread makes many short py4j
        # calls, each waiting for the GIL: at the default 5 ms switch interval a micro-batch's hand-over
        # waited for the engine to finish; 0.5 ms lets the two overlap.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, 0.0005))
        threading.Thread(target=self._work, name="rsp-engine", daemon=True).start()

    def _work(self) -> None:
        pending = self._queue
        while True:
            item = pending.get()
            try:
                if item is None:
                    return
                if self._failed is None:
                    try:
                        self._process(*item)
                    except BaseException as err:  # noqa: BLE001 - raised again to Spark and the driver
                        self._failed = err
            finally:
                pending.task_done()

    def drain(self) -> None:
        """Wait until every queued micro-batch is processed; raise what processing one raised."""
        if self._queue is not None:
            self._queue.join()
        if self._failed is not None:
            raise self._failed

    def __call__(self, table: pa.Table, batch_id: int) -> None:
        """Process one micro-batch (skipped once :meth:`stop` was called: the run is ending)."""
        if self._queue is not None:
            if self._failed is not None:
                raise self._failed
            if not self.stopping:
                self._queue.put((table, batch_id))
            return
        self._process(table, batch_id)

    def _process(self, table: pa.Table, batch_id: int) -> None:
        with self.lock:
            checkpoint = self.checkpoint
            if not admitted(self.stopping and self._queue is None, checkpoint, batch_id):
                return
            self.batches += 1
            self.last_batch = batch_id
            self.feed(table, batch_id)
            for callback in self.after_batch:
                callback(batch_id)
            if checkpoint is not None:
                checkpoint.commit(batch_id, self.saved_counters(), self.keep_from())

    def resume(self, checkpoint: Checkpoint) -> None:
        """Checkpoint from now on; after a restart, rebuild the engine's state from the committed log
        (results muted) and take the committed counters back."""
        with self.lock:
            self.checkpoint = checkpoint
            logs = checkpoint.logged()
            if logs:
                checkpoint.replaying = True
                try:
                    self.replay(logs)
                finally:
                    checkpoint.replaying = False
            saved = checkpoint.counters()
            if saved:
                self.restore_counters(saved)
            if checkpoint.state is not None:
                self.last_batch = checkpoint.committed_batch

    def replay(self, logs: list) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def saved_counters(self) -> dict:
        """What a restart takes back as it was (the replay rebuilds the engine, not these)."""
        return {"read": [dataclasses.asdict(c) for c in self.counters], "batches": self.batches}

    def restore_counters(self, saved: dict) -> None:
        self.counters = [ReadCounters(**c) for c in saved["read"]]
        self.batches = saved["batches"]

    def keep_from(self) -> int | None:
        """Logged elements older than this time are no longer needed after a restart (None: all are)."""
        return None

    def feed(self, table: pa.Table, batch_id: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def stop(self) -> None:
        """Wait for the micro-batch in progress (and the queued ones), then ignore any later one."""
        if self._queue is not None:
            self.stopping = True
            self.drain()
            return
        with self.lock:
            self.stopping = True

    def close(self) -> None:
        """End of the streams: let the engine emit its last instants (once), then run
        :attr:`after_batch` for them as one more batch."""
        self.drain()
        if self._queue is not None:
            sys.setswitchinterval(self._switch_interval)
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self.finish()
            final = 0 if self.last_batch is None else self.last_batch + 1
            for callback in self.after_batch:
                callback(final)

    def finish(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _stream(self, index: int | None) -> int:
        return 0 if index is None else index

    def summary(self) -> list[str]:
        """One line per stream for the run's summary on stderr."""
        return [counter.summary(source) for source, counter in zip(self.sources, self.counters, strict=True)]


class QueryFeeder(Feeder):
    """Feeds triples to a continuous-query runtime (:class:`rsp.runtime.Engine`), stream by stream.

    ``streams`` are the stream IRIs (``<…>``) by stream index; ``sources`` their names for people.
    Each micro-batch arrives at once: its elements are put in order (:func:`in_order`) and handed to
    :meth:`rsp.runtime.Engine.push_sorted`, which decides, query by query, what is late, as for
    ``rsp run``: an element older than the last instant the query closed (its clock is its newest
    element, from this or an earlier micro-batch) is late; any other joins every window that covers
    its time, however far out of order it comes. Late elements are counted per stream and reported
    (``on_late``, a :class:`rsp.errors.StreamError` naming the element's file, time and the closed
    instant) and dropped, or under the engine's ``late="fail"`` raised as a
    :class:`rsp.errors.LateElementError` (the instants closed before are already out). The feeder
    takes over the engine's :attr:`~rsp.runtime.Engine.on_late` (and calls the one it had).

    ``plain=True`` says the terms are valid N-Triples already (rows of :func:`rsp.spark.read_stream`,
    or lines of :func:`rsp.spark.source.read_lines`, which the feeder parses with :mod:`rsp.spark.lines`:
    the fast-path regex takes a subset of what rsp's parser takes, and rsp re-checks the rest), so the
    engine does not check them again; rows of any other DataFrame are checked by the engine.
    """

    def __init__(
        self,
        engine,
        streams: Sequence[str | None],
        sources: Sequence[str] | None = None,
        *,
        rejects: Rejects | None = None,
        on_late: Callable[[StreamError], None] | None = None,
        plain: bool = False,
    ) -> None:
        super().__init__(sources or [s or "<stream>" for s in streams], rejects or Rejects(None, None))
        self.engine = engine
        self.streams = list(streams)
        self.on_late = on_late
        self.plain = plain
        self.last_time: list[int | None] = [None] * len(self.streams)
        """The time of the last element pushed on each stream (a run of one time continues across
        micro-batches: ``instants`` counts runs of one time, as ``rsp run``'s reader does)."""
        self._pushing: _Pushing | None = None
        self._replaying = False
        self._engine_on_late = getattr(engine, "on_late", None)
        engine.on_late = self._engine_late

    def feed(self, table: pa.Table, batch_id: int) -> None:
        if "value" in table.column_names:  # lines as Spark read them (rsp.spark.source.read_lines)
            table = lines.parse(table)
        table = _normalise(table, ("s", "p", "o", "line", "arrival", *ORDER))
        for index, count in _counts(table.column("stream")):
            self.counters[index].lines += count
        good = pc.and_(
            pc.and_(pc.is_valid(table.column("s")), pc.is_valid(table.column("time"))),
            pc.and_(pc.is_valid(table.column("p")), pc.is_valid(table.column("o"))),
        )
        fixed, rejected = [], []
        bad = table.num_rows - (pc.sum(good).as_py() or 0)  # lines Spark or Arrow did not take
        for row in table.filter(pc.invert(good)).to_pylist() if bad else ():
            try:
                parsed = recheck_triple(row["line"] or "", row["arrival"])
            except ValueError as err:
                index = self._stream(row["stream"])
                self.counters[index].rejected += 1
                rejected.append(
                    {
                        "file": display_path(row["file"]),
                        "stream": self.sources[index],
                        "line": row["line"],
                        "reason": str(err),
                    }
                )
                continue
            if parsed is not None:
                row["time"], (row["s"], row["p"], row["o"]) = parsed
                fixed.append(row)
        self.rejects.write(batch_id, rejected)
        if bad:
            table = table.filter(good)
        if fixed:
            table = pa.concat_tables([table, pa.Table.from_pylist(fixed, schema=table.schema)])
        table = in_order(table)
        late = self._push(table, self.plain)
        if self.checkpoint is not None:
            logged = table.select(list(QUERY_LOG_COLUMNS))
            if late:  # what every query dropped as late stays out of the log (see _push)
                taken = [True] * table.num_rows
                for row in late:
                    taken[row] = False
                logged = logged.filter(pa.array(taken, pa.bool_()))
            self.checkpoint.write_query_log(batch_id, logged)

    def _push(self, table: pa.Table, plain: bool) -> list[int]:
        """Push the (ordered) elements into the engine, a run of one stream at a time in chunks of
        :data:`CHUNK` rows; returns the rows that every query reading their stream found late.

        Only what the engine took is logged for a restart: replayed into a fresh engine, those
        elements are all taken again (an engine that saw fewer elements has closed no later instant),
        whereas a late element replayed after logs of old micro-batches were deleted could find the
        query's first instant not yet closed and join a window it never joined."""
        times_column, late = table.column("time"), []
        for first, stop, index in _stream_runs(table.column("stream")):
            counter, stream = self.counters[index], self.streams[index]
            for start in range(first, stop, CHUNK):
                size = min(CHUNK, stop - start)
                times = times_column.slice(start, size).to_pylist()
                columns = (table.column(name).slice(start, size).to_pylist() for name in "spo")
                counter.triples += size
                counter.instants += _runs(times_column.slice(start, size))
                if times[0] == self.last_time[index]:
                    counter.instants -= 1  # the run of one time goes on from the last chunk
                self.last_time[index] = times[-1]
                pushing = self._pushing = _Pushing(index, table, start, times)
                try:
                    self.engine.push_sorted(times, list(zip(*columns, strict=True)), stream, plain=plain)
                except LateElementError as err:
                    raise self._fail(pushing, err) from None
                finally:
                    self._pushing = None
                late.extend(pushing.late_rows(self._readers(stream)))
        return late

    def _readers(self, stream: str | None) -> int:
        """How many of the engine's queries read ``stream`` (each decides lateness on its own)."""
        queries = getattr(self.engine, "queries", ())
        if stream is None:
            return len(queries)
        iri = stream if stream.startswith("<") else f"<{stream}>"
        return sum(iri in handle.translation.streams for handle in queries)

    def _engine_late(self, time: int, triple: tuple) -> None:
        """The engine's :attr:`~rsp.runtime.Engine.on_late`: a pushed element a query found late."""
        if self._replaying:  # a restart pushes the log again: reported and counted the first time
            return
        pushing = self._pushing
        if pushing is not None:  # (None: an element pushed into the engine by someone else)
            row = pushing.locate(time)
            self.counters[pushing.index].late += 1
            if self.on_late is not None:
                message = late_message(time, self._closed(pushing.index, time)) + ", dropped"
                self.on_late(StreamError(message, self._position(pushing, row)))
        if self._engine_on_late is not None:
            self._engine_on_late(time, triple)

    def _fail(self, pushing: _Pushing, error: LateElementError) -> LateElementError:
        """``late="fail"``: the element the engine refused, counted, with its file, as ``rsp run``
        names it (the engine stops at the first late element: nothing after it was pushed)."""
        self.counters[pushing.index].late += 1
        if error.time is None or error.instant is None:
            return LateElementError(error.message, Position(self.sources[pushing.index]))
        time, closed = error.time, error.instant
        return LateElementError(
            late_message(time, closed),
            self._position(pushing, pushing.first(time)),
            time=time,
            instant=closed,
        )

    def _closed(self, index: int, time: int) -> int | None:
        """The last closed instant of a query that found an element at ``time`` on stream ``index`` late."""
        stream = self.streams[index]
        iri = None if stream is None else (stream if stream.startswith("<") else f"<{stream}>")
        for handle in getattr(self.engine, "queries", ()):
            closed = handle.closed_until
            if (iri is None or iri in handle.translation.streams) and closed is not None and time < closed:
                return closed
        return None

    def _position(self, pushing: _Pushing, row: int) -> Position:
        """Where a pushed row comes from: its file (the stream's source for a socket)."""
        file = pushing.table.column("file")[pushing.start + row].as_py()
        return Position(display_path(file) if file is not None else self.sources[pushing.index])

    def replay(self, logs: list) -> None:
        with ExitStack() as muted:
            for handle in getattr(self.engine, "queries", ()):
                muted.enter_context(handle.muted())
            self._replaying = True
            try:
                for _batch, path in logs:
                    self._push(read_query_log(path), plain=True)  # the log holds elements checked once
            finally:
                self._replaying = False

    def saved_counters(self) -> dict:
        saved = super().saved_counters()
        saved["last_time"] = list(self.last_time)
        saved["engine_late"] = self.engine.late
        saved["bnodes"] = [handle.blank_nodes_made for handle in getattr(self.engine, "queries", ())]
        return saved

    def restore_counters(self, saved: dict) -> None:
        super().restore_counters(saved)
        # (a checkpoint of an earlier rsp has "newest": its feeder pushed each stream in time order)
        self.last_time = list(saved["last_time"] if "last_time" in saved else saved["newest"])
        self.engine.late = saved["engine_late"]
        for handle, count in zip(getattr(self.engine, "queries", ()), saved["bnodes"], strict=False):
            handle.blank_nodes_made = count

    def keep_from(self) -> int | None:
        """The oldest time a window after the last closed instant (or the IStream/DStream comparison with
        it) can see: that instant minus the longest RANGE, one STEP and one slot."""
        oldest = None
        for handle in getattr(self.engine, "queries", ()):
            needed = handle.oldest_needed()
            if needed is None:
                return None
            oldest = needed if oldest is None else min(oldest, needed)
        return oldest

    def finish(self) -> None:
        """Close the engine, so the last instants are computed and emitted."""
        self.engine.close()


@dataclasses.dataclass
class _Pushing:
    """The chunk of a micro-batch being pushed: its stream, rows ``start…`` of ``table`` and their
    times, and the rows queries found late (``counts[row]``: how many queries)."""

    index: int
    table: pa.Table
    start: int
    times: list[int]
    counts: dict[int, int] = dataclasses.field(default_factory=dict)
    _next: int = 0

    def locate(self, time: int) -> int:
        """The row of the next late element, at ``time``, reported by the engine.

        A query finds late whole runs of one time, in order (``Engine.push_sorted`` goes through the
        times in order and decides per time), so the element is the next row of that time; when
        there is none, the engine went on with the next query, and its late elements start again."""
        row = bisect_left(self.times, time, self._next)
        if row == len(self.times) or self.times[row] != time:
            row = self.first(time)
        self._next = row + 1
        self.counts[row] = self.counts.get(row, 0) + 1
        return row

    def first(self, time: int) -> int:
        """The first row at ``time``."""
        return bisect_left(self.times, time)

    def late_rows(self, readers: int) -> list[int]:
        """The rows (of the table) that ``readers`` queries, all those reading the stream, found late."""
        return [self.start + row for row, count in self.counts.items() if count >= readers]


def in_order(table: pa.Table) -> pa.Table:
    """The table's rows in :data:`ORDER` (the table itself when they already are, as they usually come
    from one file: checking is a few vectorised comparisons, sorting a million rows takes a second).

    >>> t = pa.table({name: [1, 0] if name == "pos" else [0, 0] for name in ORDER})
    >>> in_order(t).column("pos").to_pylist(), in_order(in_order(t)).column("pos").to_pylist()
    ([0, 1], [0, 1])
    >>> t = pa.table({name: [500, 0] if name == "time" else [None, 0] for name in ORDER})
    >>> in_order(t).column("time").to_pylist()
    [0, 500]
    """
    n = table.num_rows
    if n < 2:
        return table
    ordered = None  # lexicographic (before ≤ after) of consecutive rows, built from the last key up
    for name in reversed(ORDER):
        column = table.column(name)
        if column.null_count == n:  # all null (one stream, a socket's file): no order to check
            continue
        if pa.types.is_timestamp(column.type):
            column = column.cast(pa.int64())
        before, after = column.slice(0, n - 1), column.slice(1)
        if ordered is None:
            ordered = pc.less_equal(before, after)
        else:  # Kleene logic: a pair decided by an earlier key does not care about a null in a later one
            ordered = pc.or_kleene(pc.less(before, after), pc.and_kleene(pc.equal(before, after), ordered))
    # a pair that only a null decides (a line without a file among lines with one) is not known: sorted
    if ordered is None or pc.all(ordered, skip_nulls=False).as_py() is True:
        return table
    return table.sort_by([(name, "ascending") for name in ORDER])


def _runs(times: pa.ChunkedArray) -> int:
    """The runs of one time in ``times`` (ordered, as a run of one stream's rows is: their distinct
    times), counted by comparing neighbours (``count_distinct`` hashed every time: ≈ 0.1 s of a
    million rows).

    >>> _runs(pa.chunked_array([[1, 1, 2], [2, 5]])), _runs(pa.chunked_array([[7]]))
    (3, 1)
    """
    n = len(times)
    if n < 2:
        return n
    return 1 + (pc.sum(pc.not_equal(times.slice(1), times.slice(0, n - 1))).as_py() or 0)


def _counts(column: pa.ChunkedArray) -> list[tuple[int, int]]:
    """(stream index, rows) for each stream in the column (null: stream 0)."""
    if column.null_count == len(column):
        return [(0, len(column))] if len(column) else []
    counts = pc.value_counts(pc.fill_null(column, 0))
    return [(item["values"], item["counts"]) for item in counts.to_pylist()]


def _stream_runs(column: pa.ChunkedArray) -> list[tuple[int, int, int]]:
    """The runs of rows of one stream, as (first row, row after the last, stream index); null: stream 0.

    >>> _stream_runs(pa.chunked_array([[None, None]], pa.int32()))
    [(0, 2, 0)]
    >>> _stream_runs(pa.chunked_array([[0, 0, 1, 1, 0]], pa.int32()))
    [(0, 2, 0), (2, 4, 1), (4, 5, 0)]
    """
    n = len(column)
    if n == 0:
        return []
    if column.null_count == n:
        return [(0, n, 0)]
    streams = pc.fill_null(column, 0)
    changes = pc.indices_nonzero(pc.not_equal(streams.slice(1), streams.slice(0, n - 1))).to_pylist()
    starts = [0, *(i + 1 for i in changes)]
    ends = [*starts[1:], n]
    indices = pc.take(streams, pa.array(starts, pa.int64())).to_pylist()
    return list(zip(starts, ends, indices, strict=True))


class ProgramFeeder(Feeder):
    """Feeds atom-stream lines (``<time> <atom>``, bare times, timed N-Triples) to a LARS engine.

    Every line is parsed in the driver by :func:`rsp.io.atoms.parse_line` (Spark only timestamps and
    orders lines); the engine steps through every time point from the first to the last one, like
    ``rsp lars``. The last time point of a micro-batch is held back until a later time arrives or the
    stream closes, since more atoms of that time may come in the next micro-batch.
    ``emit(t)`` is called after each time point is evaluated.
    """

    def __init__(
        self,
        engine,
        emit: Callable[[int], None],
        source: str,
        *,
        rejects: Rejects | None = None,
        on_late: Callable[[int, str, tuple], None] | None = None,
    ) -> None:
        super().__init__([source], rejects or Rejects(None, None))
        self.engine = engine
        self.emit = emit
        self.on_late = on_late
        self.pending: tuple[int, list] | None = None

    def feed(self, table: pa.Table, batch_id: int) -> None:
        table = _normalise(table, ("line", *ORDER))
        counter = self.counters[0]
        counter.lines += table.num_rows
        elements, rejected = [], []
        for row in table.to_pylist():
            try:
                parsed = atom_lines.parse_line(row["line"] or "")
            except ValueError as err:
                counter.rejected += 1
                rejected.append(
                    {
                        "file": display_path(row["file"]),
                        "stream": self.sources[0],
                        "line": row["line"],
                        "reason": str(err),
                    }
                )
                continue
            if parsed is not None:
                key = tuple(
                    row[name] if row[name] is not None else -1 for name in ORDER[2:] if name != "stream"
                )
                elements.append((parsed[0], key, parsed[1], parsed[2]))
        self.rejects.write(batch_id, rejected)
        elements.sort(key=lambda e: (e[0], e[1]))
        ordered = [(time, pred, args) for time, _key, pred, args in elements]
        if self.checkpoint is not None:
            self.checkpoint.write_program_log(batch_id, ordered)
        for time, pred, args in ordered:
            self._add(time, pred, args)

    def replay(self, logs: list) -> None:
        emit, self.emit = self.emit, lambda t: None
        try:
            for _batch, path in logs:
                for time, pred, args in read_program_log(path):
                    self._add(time, pred, args)
        finally:
            self.emit = emit

    def saved_counters(self) -> dict:
        saved = super().saved_counters()
        saved["engine_late"] = self.engine.late
        return saved

    def restore_counters(self, saved: dict) -> None:
        super().restore_counters(saved)
        self.engine.late = saved["engine_late"]

    def summary(self) -> list[str]:
        return [line.replace(" triples in ", " atoms in ") for line in super().summary()]

    def _add(self, time: int, pred: str | None, args: tuple) -> None:
        pending = self.pending
        if pending is not None and time < pending[0]:
            if pred is not None:
                self.counters[0].late += 1
                self.engine.late += 1
                if self.on_late is not None:
                    self.on_late(time, pred, args)
            return
        if pending is None or time > pending[0]:
            self._flush()
            self.pending = pending = (time, [])
            self.counters[0].instants += 1
        if pred is not None:
            pending[1].append((pred, args))
            self.counters[0].triples += 1

    def _flush(self) -> None:
        if self.pending is None:
            return
        batch, self.pending = self.pending, None
        for t in self.engine.run_batches([batch]):
            self.emit(t)

    def finish(self) -> None:
        """Evaluate the time point held back."""
        self._flush()


def print_error(error: StreamError, stream: TextIO | None = None) -> None:
    """Report a stream error on stderr, like ``rsp run`` does."""
    print(error, file=stream or sys.stderr)
