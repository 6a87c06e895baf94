"""Engine hosts for ``rsp spark QUERY --partition-by ?k``: one long-lived process per run and partition on
each machine that runs the partition's tasks, holding the partition's engine across micro-batches
whichever of Spark's Python workers gets the task.

Spark hands a task to whichever of its pooled Python workers is idle, so an engine kept in the worker
(:data:`rsp.spark.resident._REGISTRY`) is found by the next micro-batch only when the same worker gets
the partition again; otherwise it was rebuilt from the partition's recovery log (10 to 17 of the 20
partition tasks after the first micro-batch in ``benchmarks/spark.py`` runs on local[2]). Here the
task's worker is only a go-between: it sends the partition's rows
(Arrow IPC) over a Unix socket to the partition's host, which runs :func:`rsp.spark.resident.run_step`
on the engine it holds and sends the rows for the driver back. The first task of a partition on a
machine starts its host (``python -m rsp.spark.host_main``, in a session of its own: it outlives the worker),
unless the driver started it already (:func:`prestart`: a local master, the hosts come up while the
JVM starts);
a host serves one request at a time and exits after the run's last step, when the run's driver
process has ended (on the same machine), or when idle for ``RSP_SPARK_HOST_IDLE`` seconds (120 by
default). When a host cannot be reached (it died, a failure),
the task runs in the worker as before, with the engine rebuilt from the recovery log: the answers are
the same either way (``tests/spark/test_spark_resident.py``). ``RSP_SPARK_HOSTS=0`` keeps the engines in the
workers.

The sockets are in ``$TMPDIR/rsp-engines-<user id>/<run>/`` (a folder only its user can open).
"""

from __future__ import annotations

import os
import pickle
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa

_STARTED: list[subprocess.Popen] = []
"""The hosts this worker (or driver, :func:`prestart`) started."""
_PRESTARTED: list[str] = []
"""The run whose hosts this driver started (:func:`prestart`), until its merger takes it."""
START_WAIT = 60.0
"""Seconds a task waits for a host it started (or another task started) to listen."""


def enabled() -> bool:
    return os.environ.get("RSP_SPARK_HOSTS", "1") != "0"


SOCKET_PATH_MAX = 100
"""The longest socket path used: a Unix socket's path holds 107 bytes on Linux, 103 on macOS."""


def _home(run: str) -> Path:
    """The run's folder of sockets and logs, under the temporary folder, or under ``/tmp`` when the
    temporary folder's name is too long for a socket path in it (the driver, the tasks and the hosts
    all choose the same way)."""
    root = Path(tempfile.gettempdir()) / f"rsp-engines-{os.getuid()}"
    if len(str(root / run / "part-9999.sock")) > SOCKET_PATH_MAX and Path("/tmp").is_dir():
        root = Path("/tmp") / f"rsp-engines-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    home = root / run
    home.mkdir(mode=0o700, exist_ok=True)
    return home


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(struct.pack("!Q", len(payload)) + payload)


def _receive(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = sock.recv(min(left, 1 << 20))
            if not chunk:
                raise EOFError("engine host closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    (size,) = struct.unpack("!Q", exactly(8))
    return exactly(size)


def _ipc(table: pa.Table | pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write(table)
    return sink.getvalue().to_pybytes()


def _table(payload: bytes) -> pa.Table:
    return pa.ipc.open_stream(payload).read_all()


def _start(home: Path, partition: int, run: str, driver: tuple[str, int] | None = None) -> None:
    """Start the partition's host unless another task is starting it (a lock file decides); with the
    run's ``driver``, the host exits when that process has ended even before its first request."""
    lock = home / f"part-{partition}.lock"
    try:
        descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError:  # another task starts it (or the folder went with a finished run)
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    command = [sys.executable, "-m", "rsp.spark.host_main", str(home), str(partition), run]
    command += [str(part) for part in driver or ()]
    with open(home / f"part-{partition}.log", "ab") as log:
        host = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command,
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True,
        )  # fmt: skip
    _STARTED.append(host)
    os.write(descriptor, str(host.pid).encode())
    os.close(descriptor)


def _dead(lock: Path) -> bool:
    """Whether the lock names a host process that is gone (killed: its socket and lock stay)."""
    try:
        pid = int(lock.read_text() or "0")
    except (OSError, ValueError):
        return False
    if not pid:
        return False  # being started
    for host in _STARTED:
        host.poll()  # reap the hosts this worker started (a dead child stays a zombie until then)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    try:  # a zombie (started by another worker, not reaped yet) counts as dead
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _connect(run: str, partition: int) -> socket.socket | None:
    """A connection to the partition's host, started if needed (None: it does not come up)."""
    home = _home(run)
    path = home / f"part-{partition}.sock"
    deadline = time.monotonic() + START_WAIT
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            lock = home / f"part-{partition}.lock"
            if lock.exists() and _dead(lock):
                lock.unlink(missing_ok=True)
            if not lock.exists():
                _start(home, partition, run)
        except OSError:
            sock.close()
            return None  # a socket this machine cannot have (say, a path still too long)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)


def step(job, step, partition: int, batches: Iterable[pa.RecordBatch], run_step: Callable) -> pa.RecordBatch:
    """One partition's part of a micro-batch (``run_step``: :func:`rsp.spark.resident.run_step`), run by
    the partition's host, or here when no host answers. The rows, once Spark handed them all to the
    worker, go to the host as one Arrow IPC stream written straight to the socket (:func:`_write`)."""
    received: list[pa.RecordBatch] = []
    if enabled():
        sock = _connect(step.run, partition)
        if sock is not None:
            try:
                with sock:
                    _send(sock, pickle.dumps((job, step, partition)))
                    received.extend(batches)
                    with sock.makefile("wb", buffering=STREAM_BUFFER) as out:
                        _write(out, received)
                    status = _receive(sock)
                    reply = _receive(sock)
            except (OSError, EOFError):
                pass  # the host died mid-step: the step runs here (the engine rebuilt from the log)
            else:
                if status == b"error":
                    raise RuntimeError("rsp spark: the partition's engine host failed:\n" + reply.decode())
                return _table(reply).to_batches()[0]
    received.extend(batches)  # all of them, unless the host was reached
    return run_step(job, step, partition, rows_table(received))


STREAM_BUFFER = 1 << 20
"""Bytes gathered before a write to a host's socket (and read at once from it)."""


def rows_table(batches: list[pa.RecordBatch]) -> pa.Table:
    """A partition's rows as one table (a table of no row without any batch)."""
    return pa.Table.from_batches(batches) if batches else pa.table({"key": pa.array([], pa.string())})


def _write(out, batches: list[pa.RecordBatch]) -> None:
    """The rows to ``out`` as one Arrow IPC stream, batch by batch (the host reads it as it comes).

    Serialised into one buffer first, copied into bytes and sent as one message (copied twice more
    as the host received it), the rows of a 500k-row partition took ≈ 0.5 s of the task before the
    host could start. Written as they come from the JVM instead, small micro-batches got slower
    (≈ 30 ms a task: the worker's writes and the host's reads took turns with the JVM on 2 cores)."""
    if not batches:  # the schema of a table of no row
        with pa.ipc.new_stream(out, rows_table([]).schema):
            return
    with pa.ipc.new_stream(out, batches[0].schema) as writer:
        for batch in batches:
            writer.write_batch(batch)


def warm(run: str, partition: int, driver: tuple[str, int], job) -> bool:
    """Start the partition's host (or reach it) before the run's first micro-batch, telling it the
    driver (it exits when the driver is gone, as after a step) and having it build the partition's
    engine (:func:`rsp.spark.resident.prepare`). Returns whether a host took it."""
    sock = _connect(run, partition)
    if sock is None:
        return False
    try:
        with sock:
            _send(sock, pickle.dumps(("warm", driver, job)))
            return _receive(sock) == b"ok"  # the engine is built (else the task builds it)
    except (OSError, EOFError):
        return False


def _gone(driver: tuple[str, int] | None) -> bool:
    """Whether the run's driver process, on this machine, has ended (killed: its hosts go too)."""
    if driver is None or driver[0] != socket.gethostname():
        return False
    try:
        os.kill(driver[1], 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def prestart(partitions: int, driver: tuple[str, int]) -> None:
    """In the driver, before its Spark session starts, when the tasks will run on this machine (a local
    master): start the engine hosts of a new run's partitions ``0 … partitions - 1`` now, while the JVM
    starts, instead of in the warm-up's tasks (a host takes ≈ 1 s to come up). The run's merger takes
    the run's name (:func:`prestarted`); a host of a partition the session does not have exits when
    the driver has ended."""
    if not enabled():
        return
    run = uuid.uuid4().hex
    home = _home(run)
    for partition in range(partitions):
        _start(home, partition, run, driver)
    _PRESTARTED.append(run)


def prestarted() -> str | None:
    """The run :func:`prestart` started hosts for (taken once), else None."""
    return _PRESTARTED.pop() if _PRESTARTED else None


def prestart_local(master: str | None, partitions: int) -> None:
    """Start the partitions' engine hosts now if the new session will be local: no session yet, not
    under spark-submit (which launched the JVM), a ``local`` master or none given."""
    from pyspark.sql import SparkSession

    if "PYSPARK_GATEWAY_PORT" in os.environ or SparkSession.getActiveSession() is not None:
        return
    if master is not None and not master.startswith("local"):
        return
    prestart(partitions, (socket.gethostname(), os.getpid()))
