"""Where the tests' files are, for every test and helper whatever its folder: the repository root, the
tests folder, its helpers' folders, the golden cases (one folder per kind under ``tests/golden/``) and
the inputs (``tests/data``)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
"""tests/: conftest.py, the fuzz driver, the recorded durations, and a folder per package tested."""
ROOT = TESTS.parent
"""The repository root."""
SUPPORT = TESTS / "support"
"""Shared test tooling: generators (strategies), golden-case loaders, fuzzing support, this module."""
ORACLES = TESTS / "oracles"
"""The reference evaluators written from the definitions (and the tests of the naive LARS one)."""
TEST_DATA = TESTS / "data"
"""Inputs the tests read: ontologies, the query corpus, CSRBench, DatalogMTL programs, sample queries."""

GOLDEN_CASES = TESTS / "golden"
"""Golden cases, one folder per kind:"""
GOLDEN_LARS = GOLDEN_CASES / "lars"
"""LARS programs with hand-worked outputs (tests/support/golden_cases.py)."""
GOLDEN_ASP = GOLDEN_CASES / "asp"
"""Answer streams of non-stratified LARS programs (tests/asp/)."""
GOLDEN_MTL = GOLDEN_CASES / "mtl"
"""DatalogMTL programs (tests/mtl/)."""
GOLDEN_QUERIES = GOLDEN_CASES / "queries"
"""Continuous queries with the reference's answers (tests/support/query_golden.py)."""
GOLDEN_SPARK = GOLDEN_CASES / "spark"
"""Cases ``make fuzz`` found in the partitioned Spark pipeline (tests/spark/)."""
