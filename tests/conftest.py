"""Test configuration: make the tests' folders importable for shared helpers, keep the program cache
(rsp.lars.cache) of this test run in a directory of its own, removed at the end, and choose the
Hypothesis profile.

Profiles: ``ci`` (the default, what ``make test`` runs) derandomises every generated test, so each run
checks the same cases and CI is never a coin flip; ``fuzz`` (``make fuzz``, set through
``RSP_HYPOTHESIS_PROFILE=fuzz``) draws fresh cases every run. ``RSP_EXAMPLES`` sets how many cases the
differential tests generate (see tests/support/fuzzing.py).
"""

import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
"""tests/: a folder per package tested (tests/asp, tests/query …), tests/project for the whole project's
checks, the references in tests/oracles, the shared tooling in tests/support, the golden cases in
tests/golden/<kind>, the inputs in tests/data."""

# Helpers and test modules import each other by their bare names (``from fuzzing import examples``,
# ``from test_query_differential import QUERIES``): the tests folder, the helpers' folders and every
# folder of test modules go on the import path (each module name is unique across them).
_FOLDERS = [TESTS, TESTS / "support", TESTS / "oracles", *sorted({p.parent for p in TESTS.glob("*/test_*.py")})]
sys.path[:0] = [str(folder) for folder in dict.fromkeys(_FOLDERS)]

# The helper modules (references, generators, golden-case tools, the fuzz and durations scripts) have no
# doctests; the doctest collection (--doctest-modules) would import each a second time under another
# name, and a second copy of query_oracle re-registers f:timestamp with rdflib against a table nobody
# fills (tests/project/test_repository.py).
collect_ignore = sorted(
    p.relative_to(TESTS).as_posix()
    for p in [*TESTS.glob("*.py"), *TESTS.glob("*/*.py")]
    if not p.name.startswith("test_") and p.name != "conftest.py"
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

DURATIONS = TESTS / "durations.json"
"""Each test file's seconds in a whole run of the suite (``make durations`` records them)."""


def pytest_collection_modifyitems(config, items) -> None:
    """Test files in the order of their recorded durations, longest first, each file's tests in their
    own order. ``make test`` hands files to its workers in this order (pytest-xdist's ``--dist loadfile
    --no-loadscope-reorder``), so that a long file does not start last while the other workers have run
    out of work; a file not recorded yet comes after the recorded ones. No test depends on another
    file's running first."""
    try:
        seconds = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    root = Path(str(config.rootpath))

    def recorded(item) -> float:
        try:
            return -float(seconds.get(Path(str(item.path)).relative_to(root).as_posix(), 0.0))
        except ValueError:  # a path outside the project
            return 0.0

    items.sort(key=recorded)  # stable: each file's tests keep their order
