"""Live input for ``rsp run``, ``rsp lars`` and ``rsp mtl``: streams read from standard input (``-``), a
pipe, a FIFO or a growing file (``--follow``) as their lines arrive, each instant's results written and
flushed as soon as it closes, ``--idle-close`` and a clean stop on SIGINT / SIGTERM; an MQTT topic
(``mqtt://HOST:PORT/TOPIC``, rsp/mqtt.py) is read as such a source.

Instants close on event time exactly as for a file (the output equals ``rsp run``'s on the same lines):
the lines of one time wait until a line of a later time arrives (or the stream ends), and with several
streams their batches are merged in time order, so that a stream that has sent nothing yet holds the
others back. ``--idle-close SECONDS`` (off by default) lets wall time close them too: a stream quiet for
SECONDS no longer holds the others back (its waiting lines are taken as complete), and once every stream
is quiet the open instant closes; an element that then comes for a closed instant is late. A signal stops
reading: the lines read are taken as the end of the streams (the last instants are written, as at the end
of a file; ``rsp spark`` does the same), a one-line summary goes to stderr and the exit code is 0.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import stat
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

from rsp.errors import Position, StreamError
from rsp.io.ntriples import text_lines
from rsp.mqtt import is_mqtt

POLL = 0.1
"""Seconds between two looks at a followed file that has no new line."""


def is_live(path: str) -> bool:
    """Whether ``--stream`` names a live source: ``-`` (standard input), a FIFO, a character device or a
    socket; regular files are replayed (unless ``--follow``)."""
    if path == "-" or is_mqtt(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


class Stopped(Exception):
    """A stop signal arrived while rsp waited in a blocking call (opening a FIFO)."""


def _ignored(_number: int, _frame) -> None:
    """A stop signal that comes again once the command is stopping: nothing more to do."""


def release_signals(previous: dict[int, object], stopping: bool) -> None:
    """The handlers a command took the signals from, given back as it ends (and ``previous`` emptied).
    Once a signal asked it to stop (``stopping``), the process is ending and a repeated signal is
    ignored instead: ``timeout`` signals rsp and then its group, systemd every process, and one that
    came late reached the previous handler (``rsp.cli``'s raises KeyboardInterrupt) in whatever ran
    next, even the exit's clean-up (the JVM's end, its scratch folder)."""
    for number, handler in previous.items():
        signal.signal(number, _ignored if stopping else handler)
    previous.clear()


class StopSignals:
    """SIGINT and SIGTERM, while a live command runs, ask it to stop (:attr:`signal_name`) instead of
    ending the process; a pipe registered with :func:`signal.set_wakeup_fd` wakes a waiting ``select``
    at once. Only the main thread can take signals over; elsewhere nothing is installed."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.signal_name = ""
        self.blocking = False
        self._previous: dict[int, object] = {}
        self._wakeup = -1
        self.wakeup_fd: int | None = None

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            read, write = os.pipe()
            os.set_blocking(read, False)
            os.set_blocking(write, False)
            self.wakeup_fd, self._write = read, write
            self._wakeup = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
            for number in self.SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def _handle(self, number: int, _frame) -> None:
        self.signal_name = signal.Signals(number).name
        self.requested.set()
        if self.blocking:
            raise Stopped

    def __exit__(self, *_exc) -> None:
        release_signals(self._previous, self.requested.is_set())
        if self.wakeup_fd is not None:
            signal.set_wakeup_fd(self._wakeup)
            os.close(self.wakeup_fd)
            os.close(self._write)
            self.wakeup_fd = None


class LiveSource:
    """One live stream source read without blocking: complete lines as they arrive.

    ``-`` is standard input; a FIFO is opened when a writer opens it (rsp waits, a signal still stops
    it); a regular file is read from its start and, with ``follow``, watched for new lines until rsp is
    stopped (``tail -f``: it never ends by itself)."""

    def __init__(self, path: str, follow: bool, stop: StopSignals) -> None:
        self.path = path
        self.name = "<stdin>" if path == "-" else path
        self.ended = False
        self.last_input = time.monotonic()
        self._partial = b""
        self._decode = None
        if path == "-":
            self.fd = sys.stdin.fileno()
            self.regular = False
        else:
            stop.blocking = True
            try:
                if stop.requested.is_set():
                    raise Stopped
                self.fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                raise no_stream_file(path) from None
            except OSError as err:
                raise StreamError(f"cannot read the stream: {err.strerror}", Position(path)) from None
            finally:
                stop.blocking = False
            mode = os.fstat(self.fd).st_mode
            if stat.S_ISDIR(mode):
                os.close(self.fd)
                raise no_stream_file(path)
            self.regular = stat.S_ISREG(mode)
        self.follow = follow and self.regular
        if not self.regular:
            os.set_blocking(self.fd, False)
        self._first = True

    def read(self) -> list[str]:
        """The complete lines available now ([] if none); at the end of the source (not of a followed
        file) the last line even without a newline, and :attr:`ended` is set."""
        chunks = []
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except InterruptedError:  # pragma: no cover - retried by Python (PEP 475)
                continue
            if not data:
                if not self.follow:
                    self.ended = True
                break
            chunks.append(data)
            if self.regular and len(data) < 1 << 16:
                break
        if not chunks and not self.ended:
            return []
        data = self._partial + b"".join(chunks)
        if self._first and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        self._first = False
        cut = data.rfind(b"\n") + 1
        if self.ended:
            cut = len(data)
        self._partial = data[cut:]
        if cut == 0:
            return []
        self.last_input = time.monotonic()
        # bytes that are not UTF-8 reach the line readers as lone surrogates: those lines are malformed
        text = data[:cut].decode("utf-8", errors="surrogateescape")
        return text_lines(text)  # as a file's lines (not str.splitlines: a literal may hold U+2028)

    def position(self, line: int) -> Position:
        """Where line ``line`` of the source (counted from 1) is."""
        return Position(self.name, line)

    def quiet_for(self) -> float:
        """Seconds since the last line came."""
        return time.monotonic() - self.last_input

    def close(self) -> None:
        if self.path != "-":
            os.close(self.fd)


def open_source(path: str, follow: bool, stop: StopSignals, kind: str = "lines"):
    """The live source ``path`` names: a :class:`LiveSource`, or for ``mqtt://HOST:PORT/TOPIC`` an
    :class:`rsp.mqtt.MqttSource` (``kind``: ``ntriples`` for ``rsp run``'s checked, time-stamped lines,
    ``lines`` for the others)."""
    if is_mqtt(path):
        from rsp.mqtt import MqttSource

        return MqttSource(path, kind)
    return LiveSource(path, follow, stop)


def drained(source) -> list[str]:
    """At a stop, what a source took and has not given yet: an MQTT topic's messages, acknowledged to
    the broker, so they are read (:meth:`rsp.mqtt.MqttSource.drain`); nothing for the others (the
    unread bytes of a pipe were never taken)."""
    drain = getattr(source, "drain", None)
    return drain() if drain is not None else []


def wait(sources: list[LiveSource], stop: StopSignals, timeout: float) -> None:
    """Wait until a source may have lines, a signal comes, or ``timeout`` seconds pass."""
    watched = [s.fd for s in sources if not s.ended and not s.regular]
    if any(s.follow and not s.ended for s in sources):
        timeout = min(timeout, POLL)
    if stop.wakeup_fd is not None:
        watched.append(stop.wakeup_fd)
    if not watched:
        time.sleep(max(timeout, 0))
        return
    ready, _w, _x = select.select(watched, [], [], max(timeout, 0))
    if stop.wakeup_fd in ready:
        try:
            os.read(stop.wakeup_fd, 64)
        except BlockingIOError:  # pragma: no cover
            pass


def live_lines(
    path: str, follow: bool, stop: StopSignals, opened: Callable[[LiveSource], None] | None = None
) -> Iterator[str]:
    """The lines of a live source one by one as they arrive, until its end or a stop signal (``rsp mtl``
    reads its facts this way); ``opened`` is given the source once open (its ``position`` places a line)."""
    source = open_source(path, follow, stop)
    if opened is not None:
        opened(source)
    try:
        while not stop.requested.is_set():
            lines = source.read()
            yield from lines
            if source.ended:
                return
            if not lines:
                wait([source], stop, 1.0)
        yield from drained(source)
    finally:
        source.close()


def no_stream_file(path: str) -> StreamError:
    """The error for a ``--stream`` path that is not a file: a directory, or nothing."""
    if os.path.isdir(path):
        return StreamError(
            "is a directory, not a stream file (give --stream a file; rsp spark reads a directory that "
            "receives stream files)",
            Position(path),
        )
    return StreamError("no such stream file (check the path given to --stream)", Position(path))


def summary(command: str, stop: StopSignals, instants: int, unit: str, elements: int, what: str) -> str:
    """The one line a stopped live run prints on stderr."""
    plural = "" if instants == 1 else "s"
    return (
        f"rsp {command}: stopped by {stop.signal_name}: {instants:,} {unit}{plural} written, "
        f"{elements:,} {what} read"
    )


def idle_timeout(args: argparse.Namespace) -> float | None:
    """``--idle-close SECONDS``, checked (None when off)."""
    value = getattr(args, "idle_close", None)
    if value is None:
        return None
    if value <= 0:
        from rsp.errors import RspError

        raise RspError(f"--idle-close {value}: give a number of seconds greater than 0")
    return value


# -- rsp run -----------------------------------------------------------------------------------------


@dataclass
class _Stream:
    """One stream of a live ``rsp run``: its batches waiting to be pushed in time order."""

    order: int
    iri: str
    source: LiveSource
    scope: str
    queue: deque = field(default_factory=deque)
    pending: list | None = None  # [time, triples, line numbers] of the time still being read
    lines: int = 0
    quiet: bool = False
    counters: object = None

    @property
    def done(self) -> bool:
        return self.source.ended or self.quiet

    def add(self, batch: tuple) -> None:
        time_, triples, numbers = batch
        if self.pending is not None and self.pending[0] == time_:
            self.pending[1].extend(triples)
            self.pending[2].extend(numbers)
            return
        if self.pending is not None:
            self.queue.append(tuple(self.pending))
        self.pending = [time_, list(triples), list(numbers)]

    def complete(self) -> None:
        """The time being read is complete (end of the source, quiet, or stop)."""
        if self.pending is not None:
            self.queue.append(tuple(self.pending))
            self.pending = None


def run_query_live(args: argparse.Namespace, engine, handles, writers, pairs, out: TextIO) -> int:
    """``rsp run`` over live sources (see the module docstring); ``engine``, ``handles``, ``writers`` and
    ``pairs`` as :func:`rsp.cli.open_queries` returns them."""
    from rsp.io.checks import RunChecks
    from rsp.io.late import LateLines
    from rsp.io.ntriples import ReadCounters, read_triple_batches
    from rsp.io.text import ERRORS

    idle = idle_timeout(args)
    per_stream: dict[str, int] = {}
    for iri, _path in pairs:
        per_stream[iri] = per_stream.get(iri, 0) + 1
    rejects = open(args.reject, "w", encoding="utf-8", errors=ERRORS) if args.reject else None  # noqa: SIM115
    instants: set[int] = set()  # the instants written: several queries' results at one instant count once
    for handle in handles:
        handle.subscribe(lambda result: instants.add(result.time))
    streams: list[_Stream] = []
    elements = 0

    def report(error: StreamError) -> None:
        where = error.position
        source = topics.get(where.file) if where is not None and where.line else None
        if source is not None:  # a line of an MQTT topic: placed in its message
            error = StreamError(error.message, source.position(where.line))
        print(error, file=sys.stderr)

    topics: dict[str, object] = {}  # the MQTT sources by name
    late = LateLines(engine, report)  # late lines reported with their file and line, as rsp run does
    checks = RunChecks(args.entailment, len(args.ontology), handles)

    def push(stream: _Stream, batch: tuple) -> None:
        nonlocal elements
        time_, triples, numbers = batch
        elements += len(triples)
        checks.see(triples)
        late.push(triples, time_, stream.iri, stream.scope, stream.counters, stream.source.name, numbers)

    def release() -> None:
        """Push the complete batches whose turn has come (the merge of ``rsp run`` over files)."""
        while True:
            waiting = [s for s in streams if s.queue]
            if not waiting:
                break
            first = min(waiting, key=lambda s: (s.queue[0][0], s.order))
            head = (first.queue[0][0], first.order)
            # another open stream whose next batch (the time it is reading) may come first holds it back
            if any(
                not other.queue
                and not other.done
                and (other.pending is None or (other.pending[0], other.order) < head)
                for other in streams
                if other is not first
            ):
                break
            push(first, first.queue.popleft())
        for handle in handles:  # no element older than every open stream's time can come any more
            read = [s for s in streams if s.iri in handle.translation.streams and not s.done]
            if read and all(s.pending is not None and not s.queue for s in read):
                handle.advance(min(s.pending[0] for s in read))

    def feed(stream: _Stream, lines: list[str]) -> None:
        offset = stream.lines
        stream.lines += len(lines)

        def error(err: StreamError) -> None:
            line = (err.position.line if err.position else 0) + offset
            at = stream.source.position(line)
            column = err.position.column if err.position else 0
            report(StreamError(err.message, Position(at.file, at.line, column)))

        for time_, triples, numbers in read_triple_batches(
            lines,
            stream.source.name,
            on_error=error,
            counters=stream.counters,
            late_policy=None,
            reject=rejects,
            numbered=True,
        ):
            stream.add((time_, triples, [n + offset for n in numbers]))

    with StopSignals() as stop:
        try:
            for order, (iri, path) in enumerate(pairs):
                source = open_source(path, args.follow, stop, "ntriples")
                if is_mqtt(path):
                    topics[source.name] = source
                scope = iri if per_stream[iri] == 1 else f"{iri} {path}"
                streams.append(_Stream(order, iri, source, scope, counters=ReadCounters()))
            idle_closed = False
            while not stop.requested.is_set() and not all(s.source.ended for s in streams):
                got = False
                for stream in streams:
                    if stream.source.ended:
                        continue
                    lines = stream.source.read()
                    if lines:
                        got = True
                        stream.quiet = idle_closed = False
                        feed(stream, lines)
                    if stream.source.ended:
                        stream.complete()
                now = time.monotonic()
                quieted = False
                if idle is not None:
                    for stream in streams:
                        if not stream.done and now - stream.source.last_input >= idle:
                            stream.quiet = quieted = True
                            stream.complete()
                release()
                if quieted and not idle_closed and all(s.done for s in streams):
                    for handle in handles:  # every stream quiet: the open instant closes (more may come)
                        handle.finish()
                    idle_closed = True
                out.flush()
                if not got and not all(s.source.ended for s in streams):
                    timeout = 1.0
                    if idle is not None:
                        quiet_in = [idle - (now - s.source.last_input) for s in streams if not s.done]
                        timeout = min([timeout, *quiet_in])
                    wait([s.source for s in streams], stop, timeout)
            for stream in streams:  # stopped: what an MQTT topic acknowledged is read too
                lines = drained(stream.source)
                if lines:
                    feed(stream, lines)
        except Stopped:
            pass
        finally:
            for stream in streams:
                stream.source.close()
        for stream in streams:
            stream.complete()
            stream.quiet = True
        release()
        engine.close()
        for writer in writers:
            writer.close()
        out.flush()
        if rejects is not None:
            rejects.close()
        if stop.requested.is_set() and not args.quiet:
            print(summary("run", stop, len(instants), "instant", elements, "triples"), file=sys.stderr)
    if not args.quiet:
        for stream in streams:
            counter = stream.counters
            if counter.rejected or counter.late:
                print(counter.summary(stream.source.name), file=sys.stderr)
    if not stop.requested.is_set():  # (a run stopped by a signal ends as the user wanted)
        for warning in checks.finish([(stream.source.name, stream.counters) for stream in streams]):
            if not args.quiet:
                print(warning, file=sys.stderr)
    return 0


# -- rsp lars ----------------------------------------------------------------------------------------


def live_atom_batches(
    args: argparse.Namespace,
    out: TextIO,
    report: Callable[[StreamError], None],
    late: Callable[[int, str, tuple], None],
    grouped: bool,
) -> Iterator[tuple[int, object]]:
    """The batches of ``rsp lars``'s live source (``args.stream``), as :func:`rsp.io.atoms.iter_batches`
    gives them for a file: one per time point, yielded once a later time point's line arrives (or the
    source ends, or it is quiet for ``--idle-close`` seconds). The output is flushed before each wait;
    a stop signal ends the batches (with the one-line summary)."""
    from rsp.io.atoms import iter_batches

    idle = idle_timeout(args)
    pending: list | None = None  # [time, atoms] of the time point still being read
    last: int | None = None  # the last time point yielded
    first: int | None = None
    lines_read = atoms_read = 0

    def merge(time_: int, atoms) -> tuple | None:
        """Add a batch read; returns the batch it completes, if any."""
        nonlocal pending
        if pending is not None and time_ == pending[0]:
            if isinstance(atoms, dict):
                for pred, rows in atoms.items():
                    pending[1].setdefault(pred, []).extend(rows)
            else:
                pending[1].extend(atoms)
            return None
        bound = pending[0] if pending is not None else last
        if bound is not None and (time_ < bound or (pending is None and time_ == bound)):
            items = atoms.items() if isinstance(atoms, dict) else [(p, [a]) for p, a in atoms]
            for pred, rows in items:
                for row in rows:
                    late(time_, pred, row)
            return None
        done = tuple(pending) if pending is not None else None
        pending = [time_, {p: list(r) for p, r in atoms.items()} if isinstance(atoms, dict) else list(atoms)]
        return done

    with StopSignals() as stop:
        try:
            source = open_source(args.stream, args.follow, stop)
        except Stopped:
            source = None
        try:
            while source is not None and not source.ended:
                stopping = stop.requested.is_set()  # then a last look: what a topic acknowledged
                lines = drained(source) if stopping else source.read()
                ready = []
                if lines:
                    offset = lines_read
                    lines_read += len(lines)

                    def error(err: StreamError, offset: int = offset) -> None:
                        line = (err.position.line if err.position else 0) + offset
                        at = source.position(line)
                        column = err.position.column if err.position else 0
                        report(StreamError(err.message, Position(at.file, at.line, column)))

                    for time_, atoms in iter_batches(lines, source.name, error, late, grouped=grouped):
                        atoms_read += sum(map(len, atoms.values())) if isinstance(atoms, dict) else len(atoms)
                        done = merge(time_, atoms)
                        if done is not None:
                            ready.append(done)
                elif idle is not None and pending is not None and source.quiet_for() >= idle:
                    ready.append(tuple(pending))
                    pending = None
                for batch in ready:
                    first = batch[0] if first is None else first
                    last = batch[0]
                    yield batch
                if stopping:
                    break
                out.flush()
                if not lines and not source.ended:
                    timeout = 1.0
                    if idle is not None and pending is not None:
                        timeout = max(0.0, min(timeout, idle - (time.monotonic() - source.last_input)))
                    wait([source], stop, timeout)
        finally:
            if source is not None:
                source.close()
        if pending is not None:
            first = pending[0] if first is None else first
            last = pending[0]
            yield tuple(pending)
        out.flush()
        if stop.requested.is_set() and not args.quiet:
            points = 0 if first is None else last - first + 1
            print(summary("lars", stop, points, "time point", atoms_read, "atoms"), file=sys.stderr)
