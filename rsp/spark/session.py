"""The SparkSession rsp runs in: reused when one is active (a Spark user's own, spark-submit's), else a
quiet local one.

A new session gets ``local[2]`` (unless spark-submit already set a master, or ``master`` is given), no
UI, :data:`SHUFFLE_PARTITIONS` shuffle partitions (the key buckets of :func:`rsp.spark.reason` by
default), Arrow for the pandas hand-over, the RocksDB state store with changelog checkpointing (what
``transformWithStateInPandas`` keeps the engines' state in), the parallel garbage collector, JVM
warnings on stderr, ERROR-level logging from the first line, ``SPARK_LOCAL_IP=127.0.0.1`` and the
workers' Python set to this interpreter; ``RSP_SPARK_JAVA_OPTIONS`` adds JVM options. A local
session's tasks hand their results to the driver directly (:data:`LOCAL_RESULTS`) and its JVM talks to
the Python workers over Unix sockets (:func:`unix_sockets`; ``RSP_SPARK_UNIX_SOCKETS=0`` keeps TCP).
Under spark-submit, what its ``--conf``, ``--name`` and ``spark-defaults.conf`` set wins over these,
and of the rest only the SQL settings apply (:func:`keep_unset`).

The JVM a session launches runs in a session (and process group) of its own with SIGTERM blocked
(blocked while it is started, kept through ``exec``; with ``-Xrs`` the JVM installs no signal handlers
of its own, and the Python workers it starts inherit the mask): a signal meant for rsp (``timeout`` and
Ctrl-C signal the whole process group, systemd every process of the service) reaches only rsp, which
then stops Spark in order (rsp/cli/spark_run.py). The JVM still ends with rsp: it exits when its
standard input, a pipe from rsp, closes. Its output goes to rsp's standard error: rsp's standard output
carries the results.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from rsp.errors import RspError
from rsp.extras import require

JAVA_HELP = (
    "rsp spark needs Java 17 (or 21) to run Spark, and no 'java' was found on PATH or in JAVA_HOME. "
    "Install a JRE, e.g. 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu), "
    "'sudo dnf install java-17-openjdk-headless' (Fedora) or 'brew install openjdk@17' (macOS), "
    "or set JAVA_HOME"
)

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.pygateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.pygateway.level = error
logger.streaming.name = org.apache.spark.sql.execution.streaming
logger.streaming.level = off
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""

SHUFFLE_PARTITIONS = 2
"""A new session's ``spark.sql.shuffle.partitions``."""

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
"""The state store provider of Spark's transformWithState operator (the only one it takes)."""

LOCAL_RESULTS = {"spark.task.maxDirectResultSize": "1g", "spark.rpc.message.maxSize": "1024"}
"""A local session's tasks hand results of up to 1 GiB to the driver directly (the smaller of the two,
the second in MiB), not through the block manager and a loopback fetch."""

ARROW_BATCH_BYTES = 2**31 - 1
"""``spark.sql.execution.arrow.maxBytesPerBatch``: no byte cap on the Arrow batches Spark hands to
Python functions, which are still cut every ``maxRecordsPerBatch`` rows (10,000); below this value Spark
measures the batch's buffers after every row it writes."""

UNIX_SOCKET_NAME = len(".00000000-0000-0000-0000-000000000000.sock")
"""The length of the name Spark gives a Unix socket in its folder (a UUID)."""
SOCKET_PATH_MAX = 107 if sys.platform.startswith("linux") else 103
"""The longest path of a Unix socket (``sun_path`` less its final NUL)."""


def java_executable() -> str | None:
    """The java Spark will use: ``$JAVA_HOME/bin/java`` or ``java`` on PATH (None if neither)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def _log4j_file() -> str:
    path = Path(tempfile.gettempdir()) / "rsp-spark-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        path.write_text(_LOG4J)
    return str(path)


def unix_sockets() -> dict[str, str]:
    """The options of a local session whose JVM and Python workers talk over Unix sockets instead of
    loopback TCP, in a folder of their own, removed as this process exits. None on a platform without
    them, or with ``RSP_SPARK_UNIX_SOCKETS=0``."""
    if os.name != "posix" or os.environ.get("RSP_SPARK_UNIX_SOCKETS") == "0":
        return {}
    root = tempfile.gettempdir()
    if len(os.path.join(root, "rsp-sockets-xxxxxxxx", "x" * UNIX_SOCKET_NAME)) > SOCKET_PATH_MAX:
        root = "/tmp"
    folder = tempfile.mkdtemp(prefix="rsp-sockets-", dir=root)
    atexit.register(shutil.rmtree, folder, True)
    return {"spark.python.unix.domain.socket.enabled": "true", "spark.python.unix.domain.socket.dir": folder}


def options(master: str | None = None, app_name: str = "rsp", launch: bool = True) -> dict[str, str]:
    """The configuration of a new session (``launch``: this process starts the JVM, so the driver's
    JVM options and the master are rsp's to choose)."""
    settings = {
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.arrow.maxBytesPerBatch": str(ARROW_BATCH_BYTES),
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        "spark.sql.session.timeZone": "UTC",
        # rsp.spark.reason keeps the engines' state with transformWithState, which needs RocksDB
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
        # a micro-batch's state changes written as a changelog, not a RocksDB checkpoint of the whole
        # store (Spark uploads a snapshot now and then in the background)
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        # no call site captured per DataFrame call (a stack walk and three JVM calls each)
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        "spark.driver.maxResultSize": "0",
    }
    if not launch:
        if master is not None:
            settings["spark.master"] = master
        return settings
    java_options = (
        "-Xrs -XX:+UseParallelGC -Xlog:disable -Xlog:all=warning:stderr "
        f"-Dlog4j2.configurationFile=file:{_log4j_file()} {os.environ.get('RSP_SPARK_JAVA_OPTIONS', '')}"
    ).strip()
    settings["spark.master"] = master or "local[2]"
    settings["spark.driver.extraJavaOptions"] = java_options
    settings["spark.driver.memory"] = os.environ.get("RSP_SPARK_DRIVER_MEMORY", "2g")
    if settings["spark.master"].startswith("local"):
        settings.update(LOCAL_RESULTS)
        settings.update(unix_sockets())
    return settings


def keep_unset(settings: dict[str, str], conf) -> dict[str, str]:
    """The ``settings`` that ``conf`` (a :class:`pyspark.SparkConf`: spark-submit's ``--conf``,
    ``--name``, ``--master`` and ``spark-defaults.conf``) does not already set. Under spark-submit the
    session starts with the user's configuration and gets these of rsp's settings that Spark lets a
    running session change (the SQL ones)."""
    return {key: value for key, value in settings.items() if not conf.contains(key)}


def session(master: str | None = None, app_name: str = "rsp"):
    """The active SparkSession, or a new one configured as the module docstring says.

    ``master`` overrides the master of a new session (default: spark-submit's, else ``local[2]``).
    Raises :class:`~rsp.errors.RspError` saying how to install Java when there is none, and
    :class:`~rsp.extras.MissingExtraError` naming the ``spark`` extra when PySpark is not installed.
    """
    SparkSession = require("pyspark.sql", "spark", "rsp.spark.session()").SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    launch = "PYSPARK_GATEWAY_PORT" not in os.environ  # not under spark-submit: this process launches it
    if launch and java_executable() is None:
        raise RspError(JAVA_HELP)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = options(master, app_name, launch)
    if launch:
        _start_context(settings)
        spark = SparkSession.builder.config(map=settings).getOrCreate()
    else:  # under spark-submit: what its --conf, --name and spark-defaults.conf set is the user's choice
        builder = SparkSession.builder
        if master is not None:  # asked for by name (rsp spark --master)
            builder = builder.master(master)
        spark = builder.getOrCreate()
        for key, value in keep_unset(settings, spark.sparkContext.getConf()).items():
            if spark.conf.isModifiable(key):  # the SQL settings; the others are the cluster's
                spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


CHATTER = (
    "Streaming TransformWithStateInPandas Python worker",
    "Starting Streaming TransformWithStateInPandas",
    "WARNING: Using incubator modules: jdk.incubator.vector",
)
"""Lines PySpark's transformWithState driver worker prints for every query it starts, and the JVM's note
that Spark uses the vector API (left out of the JVM's output, which goes to stderr)."""


def _start_context(settings: dict[str, str]) -> None:
    """The SparkContext, on a JVM launched in a session of its own that ignores SIGTERM (the module
    docstring), its output copied to stderr without PySpark's per-query chatter (:data:`CHATTER`)."""
    import subprocess

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf().setAll(settings.items())
    popen = {"start_new_session": True, "stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    # SIGTERM blocked in this thread while the JVM is started: the child keeps the mask through exec, and
    # with -Xrs the JVM never unblocks it (PySpark sets its own preexec_fn, so none of ours would run); a
    # SIGTERM meant for rsp meanwhile stays pending here and is taken once unblocked
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        gateway = launch_gateway(conf, popen_kwargs=popen)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    process = getattr(gateway, "proc", None)
    if process is not None and process.stdout is not None:
        threading.Thread(
            target=_copy_output, args=(process.stdout, sys.stderr), daemon=True, name="rsp-jvm-output"
        ).start()
    SparkContext(conf=conf, gateway=gateway)


def _copy_output(stream, target) -> None:
    """The JVM's output (its Python workers' stderr too), line by line, to ``target``: stderr as it was
    when Spark started, not whatever ``sys.stderr`` is when a line comes (a caller that redirects it for
    a while, as ``contextlib.redirect_stderr`` does, would get a worker's message in what it captured).
    Blank lines and :data:`CHATTER` are left out."""
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        if not line.strip() or line.startswith(CHATTER):
            continue
        with contextlib.suppress(OSError, ValueError):
            target.write(line)
            target.flush()
