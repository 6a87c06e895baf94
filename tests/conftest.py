"""Test configuration: make the tests folder importable for shared helpers, and keep the program
cache (rsp.lars.cache) of this test run in a directory of its own, removed at the end."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

_CACHE = tempfile.mkdtemp(prefix="rsp-test-cache-")
os.environ["RSP_CACHE_DIR"] = _CACHE  # inherited by the rsp commands the tests start
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
