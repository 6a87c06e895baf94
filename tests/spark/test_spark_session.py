"""rsp.spark.session under spark-submit: the user's ``--conf`` and ``--name`` win over rsp's defaults,
and rsp's defaults fill in what the user left unset (rsp/spark/session.py's keep_unset)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from rsp.spark.session import SHUFFLE_PARTITIONS, java_executable  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

JOB = """
from rsp.spark.session import session
spark = session()
for key in ("spark.sql.shuffle.partitions", "spark.app.name", "spark.sql.session.timeZone",
            "spark.sql.streaming.stateStore.providerClass"):
    print(key, spark.conf.get(key))
spark.stop()
"""


@pytest.mark.skipif(java_executable() is None, reason="Spark needs Java")
def test_spark_submit_conf_wins_over_rsp_defaults(tmp_path):
    job = tmp_path / "job.py"
    job.write_text(JOB)
    submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    mine = "3" if SHUFFLE_PARTITIONS != 3 else "5"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [str(submit), "--master", "local[1]", "--name", "mine", "--conf", f"spark.sql.shuffle.partitions={mine}",
         "--conf", "spark.ui.enabled=false", str(job)],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith("spark."))
    assert seen["spark.sql.shuffle.partitions"] == mine  # the user's --conf
    assert seen["spark.app.name"] == "mine"  # the user's --name
    assert seen["spark.sql.session.timeZone"] == "UTC"  # rsp's default where the user set nothing
    assert seen["spark.sql.streaming.stateStore.providerClass"].endswith("RocksDBStateStoreProvider")


REDIRECTED_JOB = """
import contextlib, io, time
from rsp.spark.session import session

def shout(x):
    import sys
    sys.stderr.write("rsp-marker from a Python worker\\n")
    sys.stderr.flush()
    return x

spark = session()
buffer = io.StringIO()
with contextlib.redirect_stderr(buffer):
    spark.sparkContext.parallelize([1]).map(shout).collect()
    time.sleep(2)
print("captured:", "rsp-marker" in buffer.getvalue())
spark.stop()
"""


@pytest.mark.skipif(java_executable() is None, reason="Spark needs Java")
def test_the_jvm_output_goes_to_stderr_as_it_was_when_spark_started(tmp_path):
    """A Python worker's message (the JVM's output, which rsp copies to stderr) reaches the process's
    stderr, not a ``contextlib.redirect_stderr`` that is active when it arrives: a command run in-process
    under such a redirection (the CLI robustness tests) saw PySpark's BrokenPipeError tracebacks of an
    earlier Spark test's workers as its own."""
    job = tmp_path / "job.py"
    job.write_text(REDIRECTED_JOB)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(job)], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "captured: False" in done.stdout
    assert "rsp-marker from a Python worker" in done.stderr
