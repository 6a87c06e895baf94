"""The one local SparkSession the Spark tests share (a pytest plugin: ``pytest_plugins = ["spark_conftest"]``).

Starting Spark takes seconds; every Spark test reuses this session, and ``rsp spark`` run in-process
(``rsp.cli.main``) picks it up as the active session. Streaming queries a test leaves running are
stopped after it."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="session")
def spark():
    from rsp.spark import java_executable, session

    if java_executable() is None:
        pytest.skip("no java: Spark tests need a JRE 17 (apt-get install openjdk-17-jre-headless)")
    spark = session()
    yield spark
    spark.stop()


@pytest.fixture
def no_streams_left(spark):
    """Stop every streaming query a test started, whatever happened in it."""
    yield spark
    for query in spark.streams.active:
        query.stop()


def write_parts(directory, lines: list[str], parts: int, suffix: str = ".txt") -> None:
    """The lines as ``parts`` files in a new ``directory``, dated in order (Spark's file source takes
    new files by modification time, not by name)."""
    import os
    import time

    directory.mkdir()
    size = -(-len(lines) // parts)
    now = time.time()
    for index in range(parts):
        path = directory / f"part-{index:02d}{suffix}"
        path.write_text("".join(lines[index * size : (index + 1) * size]))
        os.utime(path, (now - 100 + index, now - 100 + index))
