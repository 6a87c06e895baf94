"""Exactly once across restarts for ``rsp spark --checkpoint DIR --output FILE``: the output file's half.

Spark keeps the query's offsets, commits and the engines' state (its state store) in ``DIR/spark``; after
a restart it runs again the micro-batch it had planned but not committed, from the state of the one
before. A micro-batch's answers are written by ``foreachBatch`` in the driver, so before Spark commits it
``rsp spark`` writes them, syncs the output file and replaces ``DIR/rsp/state.json`` (the micro-batch's
id, the output file's length and the run's counters). A restart cuts the output back to the committed
length (the answers of a micro-batch that did not commit are taken back) and skips every micro-batch
Spark hands over again that was already committed. Killed at any point, the run's output ends up exactly
as an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, TextIO

from rsp.errors import RspError

STATE_VERSION = 2

FAULT_ENV = "RSP_SPARK_FAULT"
"""Fault injection for the kill-and-restart tests: ``POINT:BATCH`` makes the process SIGKILL itself at
POINT (``written``: results written and synced; ``committed``: state.json replaced) of micro-batch
BATCH."""


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
    """rsp's state in ``DIR/rsp`` for one run (Spark's is in ``DIR/spark``)."""

    def __init__(self, directory: str | os.PathLike, identity: dict[str, Any]) -> None:
        self.root = Path(directory)
        self.home = self.root / "rsp"
        self.identity = identity
        """What the run is (program file, kind, streams): a restart with another one is refused."""
        self.state: dict[str, Any] | None = None
        self.output: TextIO | None = None
        self.load()

    @property
    def committed_batch(self) -> int:
        """The last micro-batch whose output is committed (-1 before the first)."""
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

    def attach_output(self, out: TextIO) -> None:
        """Take the output handle (a file opened for appending) back to the committed length."""
        if not _is_regular_file(out):
            raise RspError(
                "--checkpoint needs --output FILE: results on a terminal or a pipe cannot be taken back "
                "after a crash"
            )
        self.output = out
        length = 0 if self.state is None else self.state["output"]
        out.flush()
        os.ftruncate(out.fileno(), length)
        out.seek(0, os.SEEK_END)

    def attach_sink(self, directory: str) -> None:
        """Remove the sink partitions of micro-batches that did not commit."""
        base = Path(directory)
        if not base.is_dir():
            return
        for entry in base.iterdir():
            name, _, number = entry.name.partition("=")
            if name == "batch" and number.isdigit() and int(number) > self.committed_batch:
                shutil.rmtree(entry, ignore_errors=True)

    def counters(self) -> dict[str, Any]:
        return {} if self.state is None else self.state["counters"]

    def commit(self, batch_id: int, counters: dict[str, Any]) -> None:
        """Make micro-batch ``batch_id`` durable: sync the output, then replace ``state.json``."""
        length = 0
        if self.output is not None:
            self.output.flush()
            os.fsync(self.output.fileno())
            length = os.lseek(self.output.fileno(), 0, os.SEEK_END)
        _fault("written", batch_id)
        state = {
            "version": STATE_VERSION,
            "identity": self.identity,
            "batch": batch_id,
            "output": length,
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


def _is_regular_file(handle: TextIO) -> bool:
    try:
        import stat

        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False
