"""The write-ahead log of ``rsp serve --data DIR``: what the service acknowledged, on disk before the 2xx.

``DIR/journal`` is a sequence of records, each ``length (4 bytes) · CRC-32 (4 bytes) · JSON`` (the
length and checksum of the JSON's UTF-8 bytes, big-endian). :meth:`Journal.append` writes a request's
records and syncs the file (one ``fsync`` per request) before the service answers; a write that fails
(a full disk, a folder made read-only) is taken back, so the file never holds half a record that a
later one follows. On start, :meth:`Journal.records` reads the records back in order; a tail that is
not a whole record with its checksum (a crash in the middle of a write) is cut at the last whole
record, and :attr:`Journal.cut` says how many bytes went. :meth:`Journal.rewrite` replaces the file by
a shorter one with the same meaning (compaction), atomically: a new file, synced, renamed over the old.

``DIR/lock`` is held (``flock``) while the journal is open: a second service given the same folder is
refused with the first one's process id. What the records mean is :mod:`rsp.serve.service`'s business.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from rsp.errors import RspError

HEADER = struct.Struct(">II")
"""A record's length and CRC-32."""

MAX_RECORD = 1 << 30
"""A length larger than this is a torn or foreign header, not a record."""


class JournalError(RspError):
    """The journal cannot be opened or written (another service holds it, a read-only or full disk)."""


def encode(record: dict) -> bytes:
    """One record's bytes: header and JSON."""
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return HEADER.pack(len(data), zlib.crc32(data)) + data


def _fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """The log in ``directory`` (made if missing), locked for this process until :meth:`close`."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise JournalError(f"--data {self.directory}: cannot make the folder ({err.strerror})") from None
        self.path = self.directory / "journal"
        self.cut = 0
        """Bytes of a torn tail cut off when the journal was read (0: none)."""
        self._lock = self._take_lock()
        try:
            self._file = open(self.path, "ab")  # noqa: SIM115 - open for the journal's life
        except OSError as err:
            self._release()
            message = f"--data {self.directory}: cannot write {self.path} ({err.strerror})"
            raise JournalError(message) from None

    def _take_lock(self) -> int:
        import fcntl

        lock = self.directory / "lock"
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise JournalError(
                f"--data {self.directory}: cannot write in the folder ({err.strerror}); the service needs "
                "a folder it can write"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            os.close(fd)
            raise JournalError(
                f"--data {self.directory} is in use by another rsp serve (pid {holder}): one service per "
                "folder; stop it or give another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        return fd

    def _release(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = -1

    def records(self) -> Iterator[dict]:
        """The whole records in order; a torn tail is cut off the file (:attr:`cut`)."""
        with open(self.path, "rb") as file:
            data = file.read()
        offset = 0
        while offset < len(data):
            if offset + HEADER.size > len(data):
                break
            length, crc = HEADER.unpack_from(data, offset)
            start, end = offset + HEADER.size, offset + HEADER.size + length
            if length > MAX_RECORD or end > len(data):
                break
            body = data[start:end]
            if zlib.crc32(body) != crc:
                break
            try:
                record = json.loads(body.decode("utf-8"))
            except ValueError:
                break
            yield record
            offset = end
        if offset < len(data):
            self.cut = len(data) - offset
            self._file.truncate(offset)
            self._file.flush()
            os.fsync(self._file.fileno())

    def size(self) -> int:
        """The journal's bytes on disk."""
        return self._file.tell() if not self._file.closed else self.path.stat().st_size

    def append(self, records: list[dict]) -> None:
        """Write ``records`` and sync them to disk: durable when this returns. A failure takes the
        partial write back and raises :class:`JournalError` (the records are not in the journal)."""
        if not records:
            return
        data = b"".join(encode(record) for record in records)
        start = self._file.tell()
        try:
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as err:
            self._take_back(start)
            raise JournalError(f"the journal in {self.directory} cannot be written: {err.strerror}") from None

    def _take_back(self, start: int) -> None:
        import contextlib

        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(OSError):
            os.truncate(self.path, start)
        try:
            self._file = open(self.path, "ab")  # noqa: SIM115
        except OSError:
            self._file = open(os.devnull, "ab")  # noqa: SIM115 - a folder gone read-only: later writes fail

    def rewrite(self, records: Iterable[dict]) -> None:
        """Replace the journal by ``records`` (compaction), atomically; on failure the old one stays."""
        new = self.directory / "journal.new"
        try:
            with open(new, "wb") as file:
                for record in records:
                    file.write(encode(record))
                file.flush()
                os.fsync(file.fileno())
            self._file.close()
            os.replace(new, self.path)
            _fsync_directory(self.directory)
        except OSError as err:
            import contextlib

            with contextlib.suppress(OSError):
                new.unlink()
            if self._file.closed:
                self._file = open(self.path, "ab")  # noqa: SIM115
            message = f"the journal in {self.directory} cannot be compacted: {err.strerror}"
            raise JournalError(message) from None
        self._file = open(self.path, "ab")  # noqa: SIM115

    def close(self) -> None:
        """Close the file and release the folder."""
        if not self._file.closed:
            self._file.close()
        self._release()
