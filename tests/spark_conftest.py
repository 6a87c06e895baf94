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
