"""The DatalogMTL program cache: normalised programs kept on disk, so that running a program file again
skips the grammar (importing lark and parsing: about a tenth of ``rsp mtl`` on the Hackathon's S1).

It works as the ``.lars`` program cache (:mod:`rsp.lars.cache`, not imported here: that would import
``rsp.lars``): an entry is a pickled :class:`rsp.mtl.normalise.Normalised` filed under the program's
path in the ``mtl`` folder of the same directory (``$RSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/rsp`` or
``~/.cache/rsp``; ``RSP_CACHE_DIR=`` turns it off), stored with the program's exact text and a
fingerprint of the code that produced it (rsp's version, the Python version, the modification times
of ``rsp.mtl``'s files and of ``rsp/errors.py``); any difference is a miss. Programs with errors are
never stored, and an entry that cannot be read or written is ignored.
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rsp.mtl.normalise import Normalised

_fingerprint: tuple | None = None


def directory() -> Path | None:
    """Where entries are kept, or None when the cache is off."""
    configured = os.environ.get("RSP_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rsp"


def fingerprint() -> tuple:
    """rsp's version, the Python version and the modification times of the code a program's model
    depends on."""
    global _fingerprint
    if _fingerprint is None:
        from rsp import __version__

        here = os.path.dirname(__file__)
        stamps = [
            (entry.name, entry.stat().st_mtime_ns)
            for entry in os.scandir(here)
            if entry.name.endswith((".py", ".lark"))
        ]
        errors = os.path.join(os.path.dirname(here), "errors.py")
        stamps.append(("errors.py", os.stat(errors).st_mtime_ns))
        _fingerprint = (__version__, sys.version, tuple(sorted(stamps)))
    return _fingerprint


def _entry(folder: Path, path: str) -> Path:
    resolved = os.path.abspath(path)
    return folder / "mtl" / f"{zlib.crc32(resolved.encode('utf-8', 'surrogatepass')):08x}.pickle"


def get(path: str, text: str) -> Normalised | None:
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


def put(path: str, text: str, program: Normalised) -> None:
    """Store ``program`` (normalised from ``text``) for ``path``; written atomically, failures ignored."""
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
