"""Program caches on disk, shared by :mod:`rsp.lars.cache` and :mod:`rsp.mtl.cache`: a program checked
once is pickled under its path with its exact text and a fingerprint of the code that produced it (rsp's
version, the Python version, the modification times of the given source files); any difference is a
miss. The directory is ``$RSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/rsp`` or ``~/.cache/rsp``;
``RSP_CACHE_DIR=`` (set and empty) turns caching off. A cache never makes a run fail: an entry that
cannot be read or written is ignored. Only the standard library is imported here (start-up matters)."""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from pathlib import Path
from typing import Any


def directory() -> Path | None:
    """Where entries are kept, or None when caching is off."""
    configured = os.environ.get("RSP_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rsp"


class ProgramCache:
    """Entries in the folder ``kind`` of :func:`directory`, fingerprinted by ``sources``: directories
    (their ``.py`` and ``.lark`` files) or single files."""

    def __init__(self, kind: str, sources: tuple[str, ...]) -> None:
        self.kind = kind
        self.sources = sources
        self._fingerprint: tuple | None = None

    def fingerprint(self) -> tuple:
        if self._fingerprint is None:
            from rsp import __version__

            stamps = []
            for source in self.sources:
                if os.path.isdir(source):
                    stamps += [
                        (entry.name, entry.stat().st_mtime_ns)
                        for entry in os.scandir(source)
                        if entry.name.endswith((".py", ".lark"))
                    ]
                else:
                    stamps.append((os.path.basename(source), os.stat(source).st_mtime_ns))
            self._fingerprint = (__version__, sys.version, tuple(sorted(stamps)))
        return self._fingerprint

    def _entry(self, folder: Path, path: str) -> Path:
        resolved = os.path.abspath(path)
        return folder / self.kind / f"{zlib.crc32(resolved.encode('utf-8', 'surrogatepass')):08x}.pickle"

    def get(self, path: str, text: str) -> Any | None:
        """The cached program for ``path`` if it was stored from exactly ``text`` by this code."""
        folder = directory()
        if folder is None:
            return None
        try:
            with open(self._entry(folder, path), "rb") as handle:
                stored_path, stored_text, stamp, program = pickle.load(handle)
        except Exception:  # noqa: BLE001 - a missing, partial or foreign entry is a miss
            return None
        if stored_path != os.path.abspath(path) or stored_text != text or stamp != self.fingerprint():
            return None
        return program

    def put(self, path: str, text: str, program: Any) -> None:
        """Store ``program`` (checked from ``text``) for ``path``; written atomically, failures ignored."""
        folder = directory()
        if folder is None:
            return
        target = self._entry(folder, path)
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            entry = (os.path.abspath(path), text, self.fingerprint(), program)
            with open(partial, "wb") as handle:
                pickle.dump(entry, handle, pickle.HIGHEST_PROTOCOL)
            os.replace(partial, target)
        except Exception:  # noqa: BLE001 - a cache that cannot be written is not an error
            try:
                os.unlink(partial)
            except OSError:
                pass
