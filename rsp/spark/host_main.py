"""An engine host's process (rsp/spark/hosts.py): ``python -m rsp.spark.host_main HOME PARTITION RUN
[DRIVER-HOST DRIVER-PID]`` serves one partition's steps (:func:`rsp.spark.resident.run_step`) on the
engine it keeps, one request at a time."""

from __future__ import annotations

import gc
import os
import pickle
import socket
import sys
import time
import traceback
from pathlib import Path

import pyarrow as pa

from rsp import ENGINE_GC_THRESHOLDS
from rsp.spark.hosts import STREAM_BUFFER, _gone, _ipc, _receive, _send
from rsp.spark.resident import prepare, run_step


def serve(home: Path, partition: int, run: str, driver: tuple[str, int] | None = None) -> None:
    """The host's loop: one request at a time until the run's last step or ``RSP_SPARK_HOST_IDLE``
    seconds without one."""
    import rsp.runtime  # noqa: F401 - the engine, imported before the first step comes

    pa.array([0])  # pyarrow imports pandas at its first conversion of Python objects (≈ 0.2 s): now
    # as the command line's engine: over ten micro-batches of the Spark benchmark, a host's collections
    # took 0.15 s with Python's thresholds and 0.01-0.07 s with these
    gc.set_threshold(*ENGINE_GC_THRESHOLDS)

    path = home / f"part-{partition}.sock"
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    idle = float(os.environ.get("RSP_SPARK_HOST_IDLE", "120"))
    server.settimeout(min(idle, 2.0))
    since = time.monotonic()
    try:
        while True:
            try:
                sock, _ = server.accept()
            except TimeoutError:
                if time.monotonic() - since > idle or _gone(driver):
                    return
                continue
            since = time.monotonic()
            with sock:
                sock.settimeout(None)
                try:
                    request = pickle.loads(_receive(sock))  # noqa: S301 - from our own tasks
                    if request[0] == "warm":  # started before the first micro-batch (see warm)
                        driver = request[1]
                        try:
                            prepare(request[2], run, partition)
                        except Exception:  # noqa: BLE001 - the first step builds it and fails with the error
                            _send(sock, b"error")
                        else:
                            _send(sock, b"ok")
                        continue
                    job, step, part = request
                    driver = step.driver
                    with sock.makefile("rb", buffering=STREAM_BUFFER) as incoming:
                        table = pa.ipc.open_stream(incoming).read_all()  # as the task streams it
                except (OSError, EOFError, pa.ArrowInvalid):  # the task's worker died mid-stream
                    continue
                try:
                    reply, status = _ipc(run_step(job, step, part, table)), b"ok"
                except Exception:  # noqa: BLE001 - reported to the task, which fails with it
                    reply, status = traceback.format_exc().encode(), b"error"
                try:
                    _send(sock, status)
                    _send(sock, reply)
                except OSError:
                    pass
            if step.final is not None:
                return  # the run's last step: the engine is done
    finally:
        server.close()
        path.unlink(missing_ok=True)
        (home / f"part-{partition}.lock").unlink(missing_ok=True)
        log = home / f"part-{partition}.log"
        if log.exists() and not log.stat().st_size:
            log.unlink()
        try:
            home.rmdir()
        except OSError:
            pass


if __name__ == "__main__":
    started_by = (sys.argv[4], int(sys.argv[5])) if len(sys.argv) > 5 else None
    serve(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], started_by)
