"""The order of test files for make test's workers: tests/durations.py reads a JUnit report into each
file's seconds, and tests/conftest.py puts the recorded files first, longest first, each file's tests
in their own order."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import conftest
import durations
from paths import ROOT

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.oracles.test_naive" name="test_a" time="1.5"/>
<testcase classname="tests.spark.test_spark" name="test_b" time="4.25"/>
<testcase classname="tests.oracles.test_naive" name="test_c" time="2.0"/>
<testcase classname="tests.spark.test_spark.TestSomething" name="test_d" time="0.25"/>
<testcase classname="rsp.query.answers.values" name="rsp.query.answers.values.term_value" time="0.05"/>
<testcase classname="tests.gone_file" name="test_e" time="9"/>
</testsuite></testsuites>
"""


def test_a_report_gives_each_files_seconds_longest_first(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(REPORT, encoding="utf-8")
    found = durations.durations(report)
    assert list(found.items()) == [("tests/spark/test_spark.py", 4.5), ("tests/oracles/test_naive.py", 3.5),
                                   ("rsp/query/answers/values.py", 0.1)]  # fmt: skip
    assert durations.source_file("tests.gone_file") is None


def test_recorded_files_come_first_longest_first_each_files_tests_in_order(tmp_path: Path, monkeypatch) -> None:
    recorded = tmp_path / "durations.json"
    recorded.write_text(json.dumps({"tests/test_b.py": 10.0, "tests/test_c.py": 30.0}), encoding="utf-8")
    monkeypatch.setattr(conftest, "DURATIONS", recorded)
    names = ["test_a.py::one", "test_b.py::one", "test_c.py::one", "test_b.py::two", "test_a.py::two",
             "test_c.py::two"]  # fmt: skip
    items = [SimpleNamespace(path=ROOT / "tests" / name.split("::")[0], nodeid=name) for name in names]
    conftest.pytest_collection_modifyitems(SimpleNamespace(rootpath=ROOT), items)
    assert [item.nodeid for item in items] == ["test_c.py::one", "test_c.py::two", "test_b.py::one",
                                               "test_b.py::two", "test_a.py::one", "test_a.py::two"]  # fmt: skip


def test_every_recorded_file_exists() -> None:
    """A file renamed or removed since the durations were recorded (``make durations`` again)."""
    recorded = json.loads(conftest.DURATIONS.read_text(encoding="utf-8"))
    assert recorded and not [path for path in recorded if not (ROOT / path).is_file()]
