"""Exactly once across restarts (``rsp spark --checkpoint DIR``): rsp's half of the checkpoint.

Spark keeps its offsets in ``DIR/spark`` and re-runs, after a restart, the micro-batch it had planned
but not committed; it commits a micro-batch once ``foreachBatch`` returns. Before returning, rsp
commits its own state for that micro-batch in ``DIR/rsp``:

* ``log/<batch>.arrow`` (queries) or ``log/<batch>.pickle`` (LARS programs): the elements the
  micro-batch pushed into the engine, in the order pushed (validated, ordered, late ones removed);
* ``state.json``, replaced atomically last: the micro-batch id, the length of the output file after
  its results were written and synced, the logs to replay (with the newest element time of each) and
  the run's counters.

The engine's state is not serialised (its rules are compiled code): on a restart a fresh engine is
built from the same query or program and the logged elements are pushed into it again with its output
muted. That reproduces the state exactly, since the engine is deterministic. For a continuous query the
state at an instant depends only on the elements of its windows, so logs whose elements are all older
than the oldest window still needed (the last closed instant minus the longest RANGE and one STEP) are
deleted as the run goes; a LARS program may remember any part of its stream, so its log is kept whole.

A restart (same command, same ``DIR``) then truncates the output file to the committed length (results
of a micro-batch that did not commit are taken back), removes sink partitions of uncommitted
micro-batches, replays the log and skips every micro-batch Spark hands over again that was already
committed. Killed at any point, the run's output ends up exactly as an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa

from rsp.errors import RspError

STATE_VERSION = 1
QUERY_LOG_COLUMNS = ("time", "stream", "s", "p", "o")

FAULT_ENV = "RSP_SPARK_FAULT"
"""Fault injection for the kill-and-restart tests: ``POINT:BATCH`` makes the process SIGKILL itself at
POINT (``logged``: log written; ``written``: results written and synced; ``committed``: state.json
replaced) of micro-batch BATCH."""


def _fault(point: str, batch_id: int) -> None:
    wanted = os.environ.get(FAULT_ENV)
    if wanted and wanted == f"{point}:{batch_id}":
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_directory(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Checkpoint:
    """rsp's state in ``DIR/rsp`` for one run; :attr:`spark_location` is where Spark keeps its own."""

    def __init__(self, directory: str | os.PathLike, identity: dict[str, Any]) -> None:
        self.root = Path(directory)
        self.home = self.root / "rsp"
        self.logs = self.home / "log"
        self.identity = identity
        """What the run is (program file, kind, streams): a restart with another one is refused."""
        self.state: dict[str, Any] | None = None
        self._pending_log: tuple[int, int | None] | None = None
        """(micro-batch, newest element time) of the log written for the micro-batch being committed"""
        self.replaying = False
        self.output: TextIO | None = None
        self.sink_directory: str | None = None
        self.load()

    @property
    def spark_location(self) -> str:
        return str(self.root / "spark")

    @property
    def committed_batch(self) -> int:
        """The last micro-batch whose state is committed (-1 before the first)."""
        return -1 if self.state is None else self.state["batch"]

    def load(self) -> None:
        path = self.home / "state.json"
        if not path.exists():
            return
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise RspError(f"--checkpoint {self.root}: unreadable rsp state {path} ({err})") from None
        if state.get("version") != STATE_VERSION:
            raise RspError(
                f"--checkpoint {self.root}: written by another version of rsp; use a new directory"
            )
        if state.get("identity") != self.identity:
            raise RspError(
                f"--checkpoint {self.root}: it belongs to another run ({state.get('identity')}); "
                "give each query or program a checkpoint directory of its own"
            )
        self.state = state

    # -- restart ---------------------------------------------------------------------------------------
    def attach_output(self, out: TextIO) -> None:
        """Take the output handle (a file opened for appending) back to the committed length."""
        if not _is_regular_file(out):
            raise RspError(
                "--checkpoint needs --output FILE: results on a terminal or a pipe cannot be taken back "
                "after a crash"
            )
        self.output = out
        self.truncate_output()

    def truncate_output(self) -> None:
        """Cut the output back to what the last committed micro-batch left (all of it on a first run)."""
        if self.output is None:
            return
        length = 0 if self.state is None else self.state["output"]
        self.output.flush()
        os.ftruncate(self.output.fileno(), length)
        self.output.seek(0, os.SEEK_END)

    def attach_sink(self, directory: str) -> None:
        """Remove the sink partitions of micro-batches that did not commit."""
        self.sink_directory = directory
        base = Path(directory)
        if not base.is_dir():
            return
        for entry in base.iterdir():
            name, _, number = entry.name.partition("=")
            if name == "batch" and number.isdigit() and int(number) > self.committed_batch:
                shutil.rmtree(entry, ignore_errors=True)

    def logged(self) -> list[tuple[int, Path]]:
        """The committed logs in micro-batch order; logs of uncommitted micro-batches are removed."""
        if not self.logs.is_dir():
            return []
        keep = {batch for batch, _newest in self.state["logs"]} if self.state is not None else set()
        found = []
        for entry in self.logs.iterdir():
            stem = entry.name.partition(".")[0]
            if stem.isdigit() and int(stem) in keep:
                found.append((int(stem), entry))
            else:
                entry.unlink(missing_ok=True)
        return sorted(found)

    def counters(self) -> dict[str, Any]:
        return {} if self.state is None else self.state["counters"]

    # -- per micro-batch -------------------------------------------------------------------------------
    def write_query_log(self, batch_id: int, table: pa.Table) -> None:
        """The ordered elements (time, stream, s, p, o) a query micro-batch pushes."""
        if self.replaying:
            return
        self.logs.mkdir(parents=True, exist_ok=True)
        path = self.logs / f"{batch_id:012d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        self._logged(batch_id, table.column("time"))

    def write_program_log(self, batch_id: int, elements: list[tuple]) -> None:
        """The ordered (time, pred, args) elements a LARS micro-batch adds."""
        if self.replaying:
            return
        self.logs.mkdir(parents=True, exist_ok=True)
        with open(self.logs / f"{batch_id:012d}.pickle", "wb") as handle:
            pickle.dump(elements, handle, pickle.HIGHEST_PROTOCOL)
        self._logged(batch_id, None)

    def _logged(self, batch_id: int, times) -> None:
        self._pending_log = (batch_id, _max_time(times))
        _fault("logged", batch_id)

    def commit(self, batch_id: int, counters: dict[str, Any], keep_from: int | None) -> None:
        """Make micro-batch ``batch_id`` durable: sync the output, then replace ``state.json``.

        ``keep_from``: logs whose elements are all older than this time are no longer needed (None:
        keep every log)."""
        if self.output is not None:
            self.output.flush()
            os.fsync(self.output.fileno())
            length = os.lseek(self.output.fileno(), 0, os.SEEK_END)
        else:
            length = 0
        _fault("written", batch_id)
        logs = dict(self.state["logs"]) if self.state is not None else {}
        if self._pending_log is not None and self._pending_log[0] == batch_id:
            logs[batch_id] = self._pending_log[1]
        dropped = []
        if keep_from is not None:
            dropped = [b for b, newest in logs.items() if newest is not None and newest < keep_from]
            for b in dropped:
                del logs[b]
        state = {
            "version": STATE_VERSION,
            "identity": self.identity,
            "batch": batch_id,
            "output": length,
            "logs": sorted(logs.items()),
            "counters": counters,
        }
        self.home.mkdir(parents=True, exist_ok=True)
        partial = self.home / "state.json.tmp"
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, self.home / "state.json")
        _fsync_directory(self.home)
        self.state = state
        _fault("committed", batch_id)
        for b in dropped:
            for suffix in (".arrow", ".pickle"):
                (self.logs / f"{b:012d}{suffix}").unlink(missing_ok=True)


def read_query_log(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def read_program_log(path: Path) -> list[tuple]:
    with open(path, "rb") as handle:
        return pickle.load(handle)


def _max_time(times) -> int | None:
    if times is None or len(times) == 0:
        return None
    import pyarrow.compute as pc

    value = pc.max(times).as_py()
    return None if value is None else int(value)


def _is_regular_file(handle: TextIO) -> bool:
    try:
        import stat

        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False
