"""SIGTERM stops ``rsp spark`` as cleanly as Ctrl-C (SIGINT): the micro-batch in progress finishes, the
engine closes and writes its last instants, the summary is printed, the exit code is 0, and nothing else
is on stderr. With ``--checkpoint``, the same command run again continues where the stopped run ended:
its output is then exactly ``rsp run``'s over the whole stream, no instant missing and none twice.

The signals are sent the ways a user's tools send them: Ctrl-C in a terminal and ``timeout`` signal the
whole process group; systemd (``KillMode=control-group``) signals every process of the service, the JVM
included; ``kill PID`` and ``docker stop`` signal rsp alone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from itertools import groupby
from pathlib import Path

import pytest
from paths import ROOT
from spark_conftest import write_parts

pytestmark = pytest.mark.spark

BUILDING = ROOT / "examples" / "building"
QUERY = BUILDING / "hot-rooms.rq"
BUILDING_ARGS = ["--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs"]
SUMMARY = re.compile(r"rsp spark: (\d+) micro-batch\(es\) in \d+\.\d s")
PARTS = 8


def _long_stream(path: Path, copies: int = 4) -> list[str]:
    """The building stream, then again ``copies - 1`` times 40 s later each (160 s, 32 instants of the
    query), its observations renamed per copy; written to ``path``, returned as lines."""
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    out = []
    for copy in range(copies):
        for line in lines:
            triple, _, ms = line.rpartition("# ")
            triple = re.sub(r"#obs(\d+)>", rf"#obs\1-{copy}>", triple)
            out.append(f"{triple}# {int(ms) + 40_000 * copy}\n")
    path.write_text("".join(out))
    return out


def _rsp(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rsp", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def _start(*args: str) -> subprocess.Popen:
    """``rsp spark`` as a process group of its own, as a shell starts a command."""
    return subprocess.Popen(
        [sys.executable, "-m", "rsp", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
    )  # fmt: skip


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc), the JVM and whatever it started."""
    found, pending = [], [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found.extend(children)
            pending.extend(children)
    return found


def _send(run: subprocess.Popen, number: signal.Signals, to: str) -> None:
    if to == "group":  # Ctrl-C in a terminal, timeout
        os.killpg(run.pid, number)
    elif to == "every process":  # systemd's default KillMode: rsp, the JVM, Spark's Python workers
        for pid in [run.pid, *_descendants(run.pid)]:
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass
    else:  # kill PID, docker stop
        run.send_signal(number)


def _catches(pid: int, number: signal.Signals) -> bool:
    """Whether the process has a handler for the signal (SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    return bool(caught >> (number - 1) & 1)


def _committed(checkpoint: Path) -> int:
    state = checkpoint / "rsp" / "state.json"
    return json.loads(state.read_text())["batch"] if state.exists() else -1


def _stopped_cleanly(run: subprocess.Popen) -> tuple[str, int]:
    """Wait for the run to end; it must exit 0 with no traceback and end with its summary. Returns its
    stderr and the number of micro-batches the summary counts."""
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert "Traceback" not in err and "Exception" not in err and "Error" not in err, err
    lines = err.strip().splitlines()
    assert len([line for line in lines if SUMMARY.search(line)]) == 1, err
    summary = SUMMARY.fullmatch(lines[-1])
    assert summary, f"the last line on stderr is not the summary: {err}"
    return err, int(summary.group(1))


def _instants(text: str) -> list[dict]:
    """The output's records, each a whole JSON line of the query at one instant, in time order."""
    assert text == "" or text.endswith("\n"), "the output ends inside a record"
    records = [json.loads(line) for line in text.splitlines()]
    assert all(set(r) == {"query", "time", "bindings"} and r["query"] == "HotRooms" for r in records)
    times = [r["time"] for r in records]
    assert times == sorted(set(times)), times
    return records


@pytest.mark.parametrize(
    "number, to",
    [(signal.SIGTERM, "every process"), (signal.SIGINT, "group")],
    ids=["SIGTERM-to-every-process", "SIGINT-to-the-group"],
)
def test_a_signal_mid_stream_stops_cleanly_and_a_restart_continues_exactly(
    tmp_path: Path, number: signal.Signals, to: str
) -> None:
    lines = _long_stream(tmp_path / "stream.nt")
    reference = _rsp("run", str(QUERY), "--stream", str(tmp_path / "stream.nt"), *BUILDING_ARGS, "-q")
    assert reference.returncode == 0, reference.stderr
    expected = _instants(reference.stdout)
    assert len(expected) == 32 and sum(1 for r in expected if r["bindings"]) >= 8
    # whole instants per file, so that the instants a stopped run closes are those of the whole stream
    instants = [list(group) for _t, group in groupby(lines, key=lambda line: line.rsplit("#", 1)[1])]
    per_part = -(-len(instants) // PARTS)
    parts = ["".join(sum(instants[i : i + per_part], [])) for i in range(0, len(instants), per_part)]
    source, checkpoint, output = tmp_path / "in", tmp_path / "ck", tmp_path / "out.jsonl"
    write_parts(source, parts, len(parts))
    args = [
        "spark", str(QUERY), "--stream", str(source), *BUILDING_ARGS, "--checkpoint", str(checkpoint),
        "--output", str(output), "--max-files-per-trigger", "1",
    ]  # fmt: skip
    run = _start(*args, "--trigger", "1 second")
    try:
        deadline = time.monotonic() + 180
        while run.poll() is None and _committed(checkpoint) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.poll() is None, run.communicate()[1]
        assert _committed(checkpoint) >= 2, "no micro-batch committed in 180 s"
        if to == "every process":  # the JVM too, as systemd does: it must not stop under the run
            assert _descendants(run.pid)
            run.send_signal(number)  # and rsp twice, as timeout does (to rsp, then to its group)
        _send(run, number, to)
        err, batches = _stopped_cleanly(run)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    committed = _committed(checkpoint)
    assert batches == committed + 1 and committed < len(parts) - 1, err  # stopped mid-stream
    stopped = _instants(output.read_text())
    assert stopped == expected[: len(stopped)]  # every instant written is whole and right, up to the stop
    again = _rsp(*args, "--available-now")
    assert again.returncode == 0, again.stderr
    assert f"resuming from {checkpoint} after micro-batch {committed}" in again.stderr
    assert output.read_text() == reference.stdout  # no instant lost, none twice


def test_sigterm_while_spark_starts_stops_before_the_first_micro_batch(tmp_path: Path) -> None:
    """A signal that arrives while the JVM is starting, before the streaming query: no micro-batch,
    exit 0, nothing but the summary on stderr."""
    source = tmp_path / "in"
    write_parts(source, (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True), 2)
    output = tmp_path / "out.jsonl"
    run = _start("spark", str(QUERY), "--stream", str(source), *BUILDING_ARGS, "--output", str(output))
    try:
        deadline = time.monotonic() + 60
        while run.poll() is None and not _descendants(run.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert _descendants(run.pid), "rsp spark never started its JVM"
        assert _catches(run.pid, signal.SIGTERM), "rsp spark does not handle SIGTERM while Spark starts"
        _send(run, signal.SIGTERM, "rsp")
        _err, batches = _stopped_cleanly(run)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert batches == 0
    assert output.read_text() == ""


def _stop_signal_classes():
    from rsp import live
    from rsp.cli import spark_run as command

    return [live.StopSignals, command.StopSignals]


@pytest.mark.parametrize("stop_signals", _stop_signal_classes(), ids=["live", "spark"])
def test_a_signal_repeated_after_the_stop_is_ignored_until_the_exit(stop_signals) -> None:
    """``timeout`` signals rsp, then its group; systemd signals every process: rsp may get the signal
    twice, the second late. Once a command stops on a signal, a late one must not reach ``rsp.cli``'s
    handler (KeyboardInterrupt), which raised it in the exit's clean-up (a traceback on stderr, the JVM's
    scratch folder left). Without a stop, the command gives the signals back as it found them."""
    from rsp.cli import interrupt_on_sigterm

    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        interrupt_on_sigterm()  # rsp.cli's handler: SIGTERM raises KeyboardInterrupt
        with stop_signals() as stop:
            pass
        with pytest.raises(KeyboardInterrupt):  # given back: no stop was asked for
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        with stop_signals() as stop:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)  # the handler runs in this thread, at the next instruction
            assert stop.requested.is_set()
        for number in (signal.SIGTERM, signal.SIGINT):
            try:
                os.kill(os.getpid(), number)  # late: ignored, the process goes on
                time.sleep(0.01)
            except KeyboardInterrupt:  # caught here: it would end the whole test session
                pytest.fail(f"a {signal.Signals(number).name} after the stop raised KeyboardInterrupt")
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
