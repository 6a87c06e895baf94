"""Test configuration: make the tests folder importable for shared helpers, keep the program cache
(rsp.lars.cache) of this test run in a directory of its own, removed at the end, and choose the
Hypothesis profile.

Profiles: ``ci`` (the default, what ``make test`` runs) derandomises every generated test, so each run
checks the same cases and CI is never a coin flip; ``fuzz`` (``make fuzz``, set through
``RSP_HYPOTHESIS_PROFILE=fuzz``) draws fresh cases every run. ``RSP_EXAMPLES`` sets how many cases the
differential tests generate (see tests/fuzzing.py).
"""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# The helper modules here (references, generators, golden-case tools) have no doctests; the doctest
# collection (--doctest-modules) would import each a second time as tests.<name>, and a second copy of
# query_oracle re-registers f:timestamp with rdflib against a table nobody fills (tests/test_repository.py).
collect_ignore = sorted(
    p.name for p in Path(__file__).parent.glob("*.py") if not p.name.startswith("test_") and p.name != "conftest.py"
)

_CACHE = tempfile.mkdtemp(prefix="rsp-test-cache-")
os.environ["RSP_CACHE_DIR"] = _CACHE  # inherited by the rsp commands the tests start
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("ci", derandomize=True, database=None, deadline=None, suppress_health_check=_QUIET)
settings.register_profile(
    "fuzz", derandomize=False, database=None, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.load_profile(os.environ.get("RSP_HYPOTHESIS_PROFILE", "ci"))
