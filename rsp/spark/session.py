"""The SparkSession rsp runs in: reused when one is active, else a quiet local one tuned for a fast start.

A new session gets ``local[2]`` (unless spark-submit already set a master), no UI, 2 shuffle
partitions, Arrow for pandas/Arrow hand-over, the parallel garbage collector, JVM warnings on stderr,
ERROR-level logging from the first line, ``SPARK_LOCAL_IP=127.0.0.1`` and the workers' Python set to
this interpreter, and the JIT's C2 tier kept for code ten times as hot as by default
(:data:`C2_LATER`), or the JIT at C1 alone for a JVM that only reads lines (:func:`jit_options`;
``RSP_SPARK_FAST_START=1`` or ``0`` chooses either for every session); ``RSP_SPARK_JAVA_OPTIONS`` adds
JVM options. A collect's total has no cap, and a local session's tasks hand their results to the
driver directly (:data:`LOCAL_RESULTS`), and its JVM talks to the Python workers over Unix sockets
(:func:`unix_sockets`; ``RSP_SPARK_UNIX_SOCKETS=0`` keeps Spark's TCP). The JVM maps an archive of
the classes it loads, made once in the background (:mod:`rsp.spark.cds`; ``RSP_SPARK_CDS=0`` turns it
off). PySpark's DataFrame debugging (a call site recorded for every DataFrame call) is off, and the
helpers PySpark's first JVM call imports (pandas among them) are imported on a thread while the JVM
starts.

The JVM rsp launches runs in a session (and process group) of its own and ignores SIGTERM, as PySpark
already makes it ignore SIGINT: a signal meant for rsp (``timeout`` and Ctrl-C signal the whole process
group, systemd every process of the service) reaches only rsp, which then stops Spark in order (see
rsp/cli/spark_run.py). The JVM still ends with rsp: it exits when its standard input, a pipe from
rsp, closes; the command line's local sessions end it at once as rsp exits instead (``quick_exit``,
:func:`_quick_exit`). Its standard output is rsp's standard error: rsp's own carries the results.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from rsp.errors import RspError

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
"""


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


C2_LATER = (
    "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000 "
    "-XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000"
)
"""The JIT's C2 tier for code ten times as hot as by default: Spark plans every micro-batch with code
(Catalyst's analyzer and optimizer) that got hot enough for C2 one micro-batch after another, and C2's
compiler thread took up to a core from the tasks; the parsing loops reach these thresholds within a
micro-batch. See docs/spark.md, *Session settings*."""

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
"""The state store provider of Spark's transformWithState operator (the only one it takes)."""

LOCAL_RESULTS = {"spark.task.maxDirectResultSize": "1g", "spark.rpc.message.maxSize": "1024"}
"""A local session's tasks hand results of up to 1 GiB to the driver directly (the smaller of the two,
the second in MiB). By default a result above 1 MiB was stored in the block manager and fetched by the
driver over a loopback connection: a 1M-line micro-batch is ≈ 170 MiB of Arrow batches, and handed over
directly the one-file run of ``benchmarks/spark.py --throughput`` took 0.4–1.7 s less (three rounds
round robin, docs/spark.md, *Session settings*)."""

ARROW_BATCH_BYTES = 2**31 - 1
"""``spark.sql.execution.arrow.maxBytesPerBatch``: no byte cap on the Arrow batches Spark hands to
Python functions (``mapInArrow``: the partitions' steps, the lines' and atom streams' keying), which are
still cut every ``maxRecordsPerBatch`` rows (10,000). Below this value Spark measures the batch's
buffers after every row it writes (``ArrowWriter.sizeInBytes`` over each column); round robin, three
rounds, ``rsp spark --partition-by`` over 1M triples: one micro-batch 6.7 → 6.1 s best in the query,
ten 9.1 → 8.4 s, faster in every round (docs/spark.md, *Session settings*)."""

UNIX_SOCKET_NAME = len(".00000000-0000-0000-0000-000000000000.sock")
"""The length of the name Spark gives a Unix socket in its folder (a UUID)."""


def unix_sockets(scratch: str | None = None) -> dict[str, str]:
    """The options of a local session whose JVM and Python workers (and the driver's collects) talk over
    Unix sockets instead of loopback TCP, in ``scratch`` (Spark's local folder, removed with it), or in a
    folder of their own, removed as this process exits, when there is none or its sockets' paths would
    be too long (:data:`rsp.spark.hosts.SOCKET_PATH_MAX`). None on a platform without them, or with
    ``RSP_SPARK_UNIX_SOCKETS=0``.

    Over TCP, a partition's step task waited ≈ 40 ms for the rows of a small micro-batch (the worker's
    read of the JVM's batches, timed in the worker; over a Unix socket 0.3-10 ms): ten micro-batches of
    20 lines with ``--partition-by`` went from 4.2 to 3.9 s in the query, best of three rounds round
    robin (docs/spark.md, *Session settings*)."""
    from rsp.spark.hosts import SOCKET_PATH_MAX

    if os.name != "posix" or os.environ.get("RSP_SPARK_UNIX_SOCKETS") == "0":
        return {}
    folder = scratch
    if folder is None or len(os.path.join(folder, "x" * UNIX_SOCKET_NAME)) > SOCKET_PATH_MAX:
        root = tempfile.gettempdir()
        if len(os.path.join(root, "rsp-sockets-xxxxxxxx", "x" * UNIX_SOCKET_NAME)) > SOCKET_PATH_MAX:
            root = "/tmp"
        folder = tempfile.mkdtemp(prefix="rsp-sockets-", dir=root)
        atexit.register(shutil.rmtree, folder, True)
    return {"spark.python.unix.domain.socket.enabled": "true", "spark.python.unix.domain.socket.dir": folder}


SHUFFLE_PARTITIONS = 2
"""A new session's ``spark.sql.shuffle.partitions`` (the partitions of ``--partition-by``)."""


C1_ONLY = "-XX:TieredStopAtLevel=1"
"""The JIT's C1 tier alone: for a JVM that only reads lines (the driver parses them), see
:func:`jit_options`."""


def jit_options(parses: bool = True) -> str:
    """The JIT options of a JVM rsp launches: :data:`C2_LATER` for a JVM whose tasks do more than read
    lines (``--partition-by``: the shuffle and the Arrow hand-over to the steps, atom streams' times; C2
    makes those loops about twice as fast, and with the lines keyed in the Python workers the JVM at C1
    alone was still slower: 9.8 against 9.2 s in the query, docs/spark.md), else
    :data:`C1_ONLY`, which starts faster and leaves the cores to the driver. ``RSP_SPARK_FAST_START``
    decides instead when set: ``1`` C1 only, ``0`` C2 as for parsing.

    Without ``--partition-by`` a query's JVM only reads the lines and hands them over; over 1M triples
    in one file, four rounds round robin, the best wall time went from 9.77 s (C2) to 8.72 s (C1 only),
    ``rsp run`` 5.47 s (docs/spark.md, *Session settings*).
    """
    chosen = os.environ.get("RSP_SPARK_FAST_START", "")
    c1 = chosen == "1" if chosen in ("0", "1") else not parses
    return C1_ONLY if c1 else C2_LATER


def session(master: str | None = None, app_name: str = "rsp", quick_exit: bool = False, parses: bool = True):
    """The active SparkSession, or a new one configured as the module docstring says.

    ``master`` overrides the master of a new session (default: spark-submit's, else ``local[2]``).
    ``quick_exit`` (the command line's sessions): a local JVM rsp launches is ended at once when this
    process exits, see :func:`_quick_exit`. ``parses=False``: the JVM's tasks will only read lines, not
    parse them (its JIT then stays at C1, :func:`jit_options`). Raises :class:`~rsp.errors.RspError`
    saying how to install Java when there is none.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if java_executable() is None:
        raise RspError(JAVA_HELP)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    options = {
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
        "spark.sql.session.timeZone": "UTC",
        # rsp.spark.reason keeps the engines' state with transformWithState, which needs RocksDB
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
        # no call site captured per DataFrame call (a stack walk and three JVM calls each, and the first
        # imports IPython): ≈ 0.07 s of the set-up of a query's DataFrames
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        "spark.sql.execution.arrow.maxBytesPerBatch": str(ARROW_BATCH_BYTES),
        # no order-independent checksum of every shuffled row (XXH64 over each row, to notice a map task
        # whose retry wrote other rows): --partition-by's keying writes the same packed rows for the same
        # lines, and it cost ≈ 2.5 % of the ten-micro-batch run (docs/spark.md, *Session settings*)
        "spark.sql.shuffle.orderIndependentChecksum.enabled": "false",
        # the Python workers import the installed PySpark's compiled modules, not Spark's zips of its
        # source (rsp/spark/daemon.py): ≈ 3.5 s of CPU over a --partition-by run
        "spark.python.daemon.module": "rsp.spark.daemon",
    }
    launch = "PYSPARK_GATEWAY_PORT" not in os.environ  # not under spark-submit: we launch the JVM
    if launch:
        # the throughput collector: on 2 cores G1's concurrent threads took CPU the parsing needed;
        # the JVM's own warnings to stderr, since its stdout is rsp's (the results)
        java_options = (
            f"-XX:+UseParallelGC {jit_options(parses)} -Xlog:disable -Xlog:all=warning:stderr "
            f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
        )
        from rsp.spark import cds  # here: the builder (rsp/cli/spark_cds.py) must not find it imported

        shared = cds.java_options(java_executable() or "java")  # the classes' archive (rsp/spark/cds.py)
        java_options = f"{java_options} {shared} {os.environ.get('RSP_SPARK_JAVA_OPTIONS', '')}".strip()
        options["spark.master"] = master or "local[2]"
        local = options["spark.master"].startswith("local")
        options["spark.driver.extraJavaOptions"] = java_options
        options["spark.driver.memory"] = os.environ.get("RSP_SPARK_DRIVER_MEMORY", "2g")
        # Spark cuts a micro-batch's bytes by the cores first and caps a split at this: up to 256 MB a
        # micro-batch gets one even task per core (at 32 MB, a 90 MB one got three tasks on two cores,
        # the third ran alone after the other two)
        options["spark.sql.files.maxPartitionBytes"] = "128m"
        # a file counts its size plus this when Spark cuts a micro-batch's files into tasks: with the
        # default (4 MB), a 10 MB file was cut 7 MB + 3 MB on 2 cores (one task waited for the other),
        # and small files went 8 to a task; now the cut is even and small files share tasks
        options["spark.sql.files.openCostInBytes"] = "8k"
        # (Hadoop's checksummed LocalFileSystem stays: the RocksDB state store of transformWithState
        # takes no other for file: paths)
        # without --partition-by every micro-batch is collected to the driver, which holds it anyway: no
        # cap on the results' total (Spark's 1 GiB failed a micro-batch of ≈ 6M lines, ≈ 170 MiB of Arrow
        # batches per 1M lines)
        options["spark.driver.maxResultSize"] = "0"
        if local:
            # a task's results go to the driver in memory, not through the block manager (which the
            # driver then fetched from over a loopback connection): see LOCAL_RESULTS
            options.update(LOCAL_RESULTS)
        quick = quick_exit and local and _quick_exit_possible()
        if quick:  # every scratch file of the JVM in one folder, which rsp removes (see _quick_exit)
            options["spark.local.dir"] = tempfile.mkdtemp(prefix="rsp-spark-local-")
            java_options = f"{java_options} -Djava.io.tmpdir={options['spark.local.dir']}"
            options["spark.driver.extraJavaOptions"] = java_options
        if local:
            options.update(unix_sockets(options.get("spark.local.dir")))
    elif master is not None:
        options["spark.master"] = master
    if launch:
        _start_shielded_context(options)
        if quick:
            atexit.register(_quick_exit, options["spark.local.dir"])
    spark = SparkSession.builder.config(map=options).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _quick_exit_possible() -> bool:
    """Whether this process has no JVM yet (the session will launch one, with the folders given here),
    Spark's scratch files would all be in ``spark.local.dir`` (``SPARK_LOCAL_DIRS`` and a cluster
    manager's folders take precedence over it), no class archive is being made (the JVM writes it as it
    exits normally, :mod:`rsp.spark.cds`), and the temporary folder's name can be given to the JVM as
    it is."""
    from pyspark.core.context import SparkContext

    from rsp.spark import cds

    if SparkContext._gateway is not None:
        return False
    if any(os.environ.get(name) for name in ("SPARK_LOCAL_DIRS", "LOCAL_DIRS", "MESOS_SANDBOX", cds.DUMP)):
        return False
    return not any(c.isspace() or c in "'\"\\" for c in tempfile.gettempdir())  # a plain JVM option


def _quick_exit(local_dir: str) -> None:
    """End the JVM rsp launched at once and remove its scratch folder, as this process exits.

    A JVM left to end on its own (it exits when its standard input closes) ran Spark's shutdown hooks:
    ≈ 0.6 s of stopping the context's services one by one, which the command's caller waited for (the
    JVM holds rsp's standard error). By then the run has written its results, its sink and its
    checkpoint; what the hooks would still do is delete Spark's scratch files, all in ``local_dir``.
    """
    from pyspark.core.context import SparkContext

    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    if process is not None and process.poll() is None:
        _let_go(SparkContext._active_spark_context, gateway)
        process.kill()
        process.wait()
    shutil.rmtree(local_dir, ignore_errors=True)


def _let_go(context, gateway) -> None:
    """Keep this process's side of the JVM's connections from reporting the JVM's end as an error: the
    accumulator server's handler (the JVM's connection to it closes) and py4j's finalizer thread (which
    would tell the gone JVM to release objects this process drops as it exits)."""
    from py4j.clientserver import SHUTDOWN_FINALIZER_WORKER

    server = getattr(context, "_accumulatorServer", None)
    if server is not None:
        server.server_shutdown = True
        server.handle_error = lambda *_args: None
    pending = getattr(getattr(gateway, "_gateway_client", None), "finalizer_deque", None)
    if pending is not None:
        pending.append(SHUTDOWN_FINALIZER_WORKER)  # taken next: the worker ends before other requests


_POPEN = {"start_new_session": True, "stdout": 2}
"""The JVM in a session of its own, its standard output on rsp's standard error: rsp's standard output
carries the results, and nothing the JVM prints (a fatal error's report, say) may land there."""


def _import_quietly(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a head start only: the import that needs it says what is wrong
        pass


def _start_shielded_context(options: dict[str, str]) -> None:
    """The SparkContext, on a JVM started in a session of its own that ignores SIGTERM (see the module
    docstring); nothing when this process already has a JVM (the builder then reuses it)."""
    from pyspark import SparkConf
    from pyspark.core.context import SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf().setAll(options.items())
    # PySpark's first call into the JVM imports its test helpers, and with them pandas (≈ 0.15 s of one
    # core while the JVM waits): imported here, while the JVM starts
    threading.Thread(target=_import_quietly, args=("pyspark.testing.utils",), daemon=True).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs=_POPEN)
    except Exception:
        java_options = options.get("spark.driver.extraJavaOptions", "").split()
        shared = [o for o in java_options if o.startswith("-XX:SharedArchiveFile=")]
        if not shared:
            raise
        # a JVM that does not start with the classes' archive (damaged): without it, and it is deleted
        from rsp.spark import cds

        for option in shared:
            archive = option.partition("=")[2]
            Path(archive).unlink(missing_ok=True)
            cds.remove_crash_reports(archive)
        options["spark.driver.extraJavaOptions"] = " ".join(o for o in java_options if o not in shared)
        conf = SparkConf().setAll(options.items())
        gateway = launch_gateway(conf, popen_kwargs=_POPEN)
    context = SparkContext(conf=conf, gateway=gateway)
    signals = context._jvm.sun.misc
    signals.Signal.handle(signals.Signal("TERM"), signals.SignalHandler.SIG_IGN)
