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

from rsp.programcache import ProgramCache, directory

__all__ = ["directory", "get", "put", "CACHE"]

CACHE = ProgramCache("programs", (os.path.dirname(__file__),))
get = CACHE.get
put = CACHE.put
