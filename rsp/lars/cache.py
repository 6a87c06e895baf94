"""The program cache: checked ``.lars`` programs kept on disk, so that running a program file again
skips the grammar (importing lark and parsing: about a quarter of a short run's start-up), in the way
CPython keeps bytecode in ``__pycache__``.

An entry is a pickled :class:`rsp.lars.CheckedProgram` filed under the program's path, stored with the
program's exact text and a fingerprint of the code that produced it (rsp's version, the Python version,
and the modification times of the files of ``rsp.lars``); any difference is a miss and the file is
parsed again. Programs with errors are never stored. The directory is ``$RSP_CACHE_DIR``, else
``$XDG_CACHE_HOME/rsp`` or ``~/.cache/rsp``; ``RSP_CACHE_DIR=`` (set and empty) turns the cache off.
The cache never makes a run fail: an entry that cannot be read or written is ignored.
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rsp.lars import CheckedProgram

_fingerprint: tuple | None = None


def directory() -> Path | None:
    """Where entries are kept, or None when the cache is off."""
    configured = os.environ.get("RSP_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rsp"


def fingerprint() -> tuple:
    """rsp's version, the Python version and the modification times of ``rsp/lars``'s source files."""
    global _fingerprint
    if _fingerprint is None:
        from rsp import __version__

        here = os.path.dirname(__file__)
        stamps = sorted(
            (entry.name, entry.stat().st_mtime_ns)
            for entry in os.scandir(here)
            if entry.name.endswith((".py", ".lark"))
        )
        _fingerprint = (__version__, sys.version, tuple(stamps))
    return _fingerprint


def _entry(folder: Path, path: str) -> Path:
    resolved = os.path.abspath(path)
    return folder / "programs" / f"{zlib.crc32(resolved.encode('utf-8', 'surrogatepass')):08x}.pickle"


def get(path: str, text: str) -> CheckedProgram | None:
    """The cached program for ``path`` if it was stored from exactly ``text`` by this code."""
    folder = directory()
    if folder is None:
        return None
    try:
        with open(_entry(folder, path), "rb") as handle:
            stored_path, stored_text, stamp, program = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a missing, partial or foreign entry is a miss
        return None
    if stored_path != os.path.abspath(path) or stored_text != text or stamp != fingerprint():
        return None
    return program


def put(path: str, text: str, program: CheckedProgram) -> None:
    """Store ``program`` (checked from ``text``) for ``path``; written atomically, failures ignored."""
    folder = directory()
    if folder is None:
        return
    target = _entry(folder, path)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        entry = (os.path.abspath(path), text, fingerprint(), program)
        with open(partial, "wb") as handle:
            pickle.dump(entry, handle, pickle.HIGHEST_PROTOCOL)
        os.replace(partial, target)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is not an error
        try:
            os.unlink(partial)
        except OSError:
            pass
