"""The DatalogMTL program cache: normalised programs kept on disk, so that running a program file again
skips the grammar (importing lark and parsing: about a tenth of ``rsp mtl`` on the Hackathon's S1).

It shares its mechanism with the ``.lars`` program cache (:mod:`rsp.programcache`): an entry is a pickled
:class:`rsp.mtl.normalise.Normalised` filed under the program's path in the ``mtl`` folder of the same
directory (``$RSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/rsp`` or ``~/.cache/rsp``; ``RSP_CACHE_DIR=`` turns it
off), stored with the program's exact text and a fingerprint of the code that produced it (rsp's version,
the Python version, the modification times of ``rsp.mtl``'s files and of ``rsp/errors.py``); any difference
is a miss. Programs with errors are never stored, and an entry that cannot be read or written is ignored.
"""

from __future__ import annotations

import os

from rsp.programcache import ProgramCache, directory

__all__ = ["directory", "get", "put", "CACHE"]

_HERE = os.path.dirname(__file__)
CACHE = ProgramCache("mtl", (_HERE, os.path.join(os.path.dirname(_HERE), "errors.py")))
get = CACHE.get
put = CACHE.put
