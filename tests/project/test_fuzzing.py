"""The fuzzing support: make test's generated tests are derandomised, and under make fuzz a failing
case is saved, as the last (shrunk) case that failed, into a golden folder with its reference output."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from fuzzing import saved_on_failure
from hypothesis import settings
from paths import TESTS


def _fuzz_driver():
    spec = importlib.util.spec_from_file_location("fuzz_driver", TESTS / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_test_runs_the_same_cases_every_time() -> None:
    if os.environ.get("RSP_HYPOTHESIS_PROFILE", "ci") == "ci":
        assert settings.default.derandomize is True
        assert settings.default.database is None


def test_a_failure_is_saved_only_under_make_fuzz(tmp_path: Path, monkeypatch) -> None:
    golden = tmp_path / "golden"
    monkeypatch.delenv("RSP_FUZZ_DIR", raising=False)
    with pytest.raises(AssertionError), saved_on_failure(golden, lambda: {"program.lars": "p."}):
        raise AssertionError("disagreement")
    assert not golden.exists() and list(tmp_path.iterdir()) == []

    pending = tmp_path / "pending"
    monkeypatch.setenv("RSP_FUZZ_DIR", str(pending))
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_generated (call)")
    for text in ("first failing case", "shrunk case"):  # Hypothesis replays the shrunk case last
        with (
            pytest.raises(AssertionError),
            saved_on_failure(golden, lambda text=text: {"program.lars": text}),
        ):
            raise AssertionError("engine and reference disagree")
    with saved_on_failure(golden, lambda: {"program.lars": "a passing case"}):
        pass  # nothing is written when the check passes

    saved = _fuzz_driver()._collect(pending)
    assert len(saved) == 1 and saved[0].parent == golden and saved[0].name.startswith("fuzz-")
    assert (saved[0] / "program.lars").read_text() == "shrunk case"
    source = (saved[0] / "SOURCE").read_text()
    assert "test_generated" in source and "AssertionError: engine and reference disagree" in source
    assert list(pending.iterdir()) == []  # moved, not copied


def test_fuzz_rounds_fit_the_time_left() -> None:
    """A round that took 10 min with 600 cases and 20 min left: the next has about 1,000 cases; with
    2 min left, none (it would be cut short before every generated test ran)."""
    driver = _fuzz_driver()
    assert driver.next_examples(600, 600.0, 1200.0) == 1020
    assert driver.next_examples(600, 600.0, 120.0) is None
    assert driver.next_examples(600, 1.0, 100_000.0) == driver.MAX_EXAMPLES


def test_a_failure_without_a_golden_case_shows_its_generated_case() -> None:
    """make fuzz prints the case Hypothesis found for a failing test that saves no golden case (the
    jsonl writer's -0.0 was reported as a bare FAILED line), up to its @reproduce_failure line."""
    report = [
        "E       assert ['a'] == ['b']",
        "E       Failing test case: test_x(",
        "E           rows=[{'x': -0.0}],",
        "E       )",
        "E       You can reproduce this test case by temporarily adding @reproduce_failure('6', b'AA') as a",
        "E       decorator on your test function",
        "FAILED tests/test_x.py::test_x",
    ]
    assert _fuzz_driver().failing_cases(report) == report[1:5]
    assert _fuzz_driver().failing_cases(report[:1]) == []
    # without a @reproduce_failure line: the case's E lines, not what follows them
    plain = [*report[1:4], "", "/tmp/test_x.py:7: AssertionError", "FAILED tests/test_x.py::test_x"]
    assert _fuzz_driver().failing_cases(plain) == report[1:4]
