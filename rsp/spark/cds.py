"""A class-data-sharing archive of the Spark driver JVM's classes, made once per Java and PySpark install,
so that later sessions start without loading and verifying those classes again (JDK 17 AppCDS).

A new Spark session spends most of its first seconds loading and verifying the classes of Spark's jars
(≈ 15,000). The JVM can dump the classes a run loaded into an archive (``-XX:ArchiveClassesAtExit``)
and map it into later runs (``-XX:SharedArchiveFile``): measured on a 2-core machine, ``rsp spark``
over a five-line stream took ≈ 6.4 s instead of ≈ 10 s (session 3.1 s instead of 5.1 s, the source's
set-up 0.7 s instead of 1.4 s, the micro-batch 2.0 s instead of 2.6 s).

How it is kept:

* The archive is ``<cache>/<key>.jsa``, where ``<cache>`` is ``$RSP_SPARK_CDS_DIR``, else
  ``$XDG_CACHE_HOME/rsp/spark-cds``, else ``~/.cache/rsp/spark-cds``, and ``<key>`` names the java
  executable (path, size, time) and the PySpark install (version, place): another Java or PySpark (another
  virtual environment) gets an archive of its own. Beside each archive, ``<key>.install`` names the
  PySpark folder it was made for; a builder deletes the other archives whose folder is gone from this
  machine (a removed virtual environment or clone: ≈ 170 MB each) and those not used for a month.
  ``RSP_SPARK_CDS=0`` turns it off.
* When there is none, the session that finds none starts a **builder** in the background (one at a
  time: a lock file) and goes on without it. The builder (``python -m rsp.cli.spark_cds``) runs two small
  ``rsp spark`` queries (one of them ``--partition-by``) on a JVM that dumps its classes when it exits,
  ends that JVM, waits for the dump and only then moves the archive into place: a session never sees a
  partial archive (a truncated one would crash the JVM).
* A session started with an archive that the JVM cannot use (another Java under the same path, say)
  goes on without it, silently (``-Xshare:auto`` and the CDS log off); one whose JVM does not start at
  all with it deletes the archive and starts again without (:func:`rsp.spark.session.session`).
* Under ``spark-submit`` rsp does not launch the JVM: no archive is used or made.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
"""No CDS messages: an archive that cannot be used is left aside silently."""
DUMP = "RSP_SPARK_CDS_DUMP"
"""Set in the builder: the file its JVM dumps its classes into when it exits."""
CRASH_REPORT = "rsp-spark-jvm-crash-*.log"
"""The fatal error report of a JVM that maps an archive, in the temporary folder (``*``: its pid)."""


UNUSED_S = 30 * 86400
"""Another install's archive not used for this long (seconds) is deleted by a builder."""
STALE_LOCK_S = 900
"""A builder's lock older than this (seconds) is taken to be left by a builder that died."""


def enabled() -> bool:
    return os.environ.get("RSP_SPARK_CDS", "1") != "0"


def folder() -> Path:
    """Where archives are kept (see the module docstring)."""
    explicit = os.environ.get("RSP_SPARK_CDS_DIR")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "rsp" / "spark-cds"


def key(java: str) -> str:
    """The archive's name for this java executable and PySpark install."""
    import pyspark

    real = os.path.realpath(java)
    stat = os.stat(real)
    text = f"{real}|{stat.st_size}|{stat.st_mtime_ns}|{pyspark.__version__}|{Path(pyspark.__file__).parent}"
    return "spark-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def archive(java: str) -> Path:
    return folder() / f"{key(java)}.jsa"


def java_options(java: str) -> str:
    """The JVM options of a new session: map the archive when there is one; in the builder, dump the
    classes at exit; otherwise start a builder (if none runs) and use none."""
    if not enabled():
        return ""
    dump = os.environ.get(DUMP)
    if dump:
        return f"-XX:ArchiveClassesAtExit={dump} {QUIET}"
    try:
        path = archive(java)
        if path.is_file():  # should the JVM die mapping it, its report goes to a temp file
            try:
                os.utime(path)  # in use: kept when another install's builder cleans up (clean_up)
            except OSError:
                pass
            crash = Path(tempfile.gettempdir()) / CRASH_REPORT.replace("*", "%p")
            return f"-XX:SharedArchiveFile={path} -Xshare:auto {QUIET} -XX:ErrorFile={crash}"
        start_builder(java)
    except OSError:  # no cache folder to be had (read-only home, …): run without
        pass
    return ""


def remove_crash_reports(path: str) -> None:
    """Delete the reports of JVMs that crashed mapping the archive at ``path`` (a damaged one, which
    the session deletes and starts without: nothing is left to report)."""
    for report in Path(tempfile.gettempdir()).glob(CRASH_REPORT):
        try:
            if path in report.read_text(encoding="utf-8", errors="replace"):
                report.unlink()
        except OSError:
            pass


def start_builder(java: str) -> bool:
    """Start the background builder of this install's archive unless one runs; True if started."""
    home = folder()
    home.mkdir(parents=True, exist_ok=True)
    name = key(java)
    lock = home / f"{name}.lock"
    try:
        if time.time() - lock.stat().st_mtime > STALE_LOCK_S:
            lock.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
    try:
        descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    os.close(descriptor)
    env = {key_: value for key_, value in os.environ.items() if not key_.startswith("PYSPARK_GATEWAY")}
    subprocess.Popen(  # noqa: S603 - this interpreter, this module
        [sys.executable, "-m", "rsp.cli.spark_cds", str(home), name],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env=env,
    )  # fmt: skip
    return True


_QUERY = """REGISTER QUERY Warm AS
SELECT ?s (COUNT(?o) AS ?n) (MIN(?o) AS ?least)
FROM STREAM <http://ex.org/s> [RANGE 2s STEP 1s]
WHERE { ?s <http://ex.org/p> ?o }
GROUP BY ?s
"""


def build(home: Path, name: str, rsp_main: Callable[[list[str]], int]) -> bool:
    """Make ``home/name.jsa`` (see the module docstring) by running ``rsp_main`` (the ``rsp`` command's
    main, given by the builder rsp/cli/spark_cds.py) on two small queries; True when it was made."""
    home.mkdir(parents=True, exist_ok=True)
    final = home / f"{name}.jsa"
    part = home / f"{name}.{os.getpid()}.part"
    os.environ[DUMP] = str(part)
    made = False
    try:
        with tempfile.TemporaryDirectory(prefix="rsp-spark-cds-") as work:
            query = Path(work) / "warm.rq"
            query.write_text(_QUERY, encoding="utf-8")
            stream = Path(work) / "stream"
            stream.mkdir()
            lines = [f'<http://ex.org/e{k % 3}> <http://ex.org/p> "{k}" . # {k * 400}\n' for k in range(12)]
            (stream / "a.nt").write_text("".join(lines), encoding="utf-8")
            common = ["spark", str(query), "--stream", str(stream), "--available-now", "-q",
                      "-o", os.devnull]  # fmt: skip
            if rsp_main([*common]) != 0 or rsp_main([*common, "--partition-by", "?s"]) != 0:
                return False
        made = _end_jvm() == 0 and part.is_file() and part.stat().st_size > 0
        if made:
            clean_up(home, final)
            os.replace(part, final)
            (home / f"{name}.install").write_text(_install(), encoding="utf-8")
        return made
    finally:
        if not made:
            part.unlink(missing_ok=True)
        (home / f"{name}.lock").unlink(missing_ok=True)


def _install() -> str:
    """The PySpark folder of this install (what ``<key>.install`` records)."""
    import pyspark

    return str(Path(pyspark.__file__).parent)


def clean_up(home: Path, keep: Path) -> None:
    """Delete the other installs' archives (several virtual environments share the folder) whose PySpark
    folder, recorded beside them, is gone, and those no session mapped for :data:`UNUSED_S` (a session
    touches the archive it maps); with each its ``.install`` record, and records left without archive."""
    unused = time.time() - UNUSED_S
    for other in home.glob("*.jsa"):
        if other == keep:
            continue
        record = other.with_suffix(".install")
        try:
            gone = record.is_file() and not Path(record.read_text(encoding="utf-8").strip()).is_dir()
            if gone or other.stat().st_mtime < unused:
                other.unlink(missing_ok=True)
                record.unlink(missing_ok=True)
        except OSError:  # another builder's at the same time, or unreadable: left alone
            pass
    for record in home.glob("*.install"):
        if not record.with_suffix(".jsa").exists():
            record.unlink(missing_ok=True)


def _end_jvm() -> int | None:
    """Stop Spark and wait for the JVM this process launched to exit (its archive written); its exit
    code (None: no JVM of ours)."""
    from pyspark.core.context import SparkContext

    gateway = SparkContext._gateway
    context = SparkContext._active_spark_context
    if context is not None:
        context.stop()
    proc = getattr(gateway, "proc", None)
    if proc is None:
        return None
    proc.stdin.close()  # the JVM exits when its standard input closes
    return proc.wait(timeout=600)
