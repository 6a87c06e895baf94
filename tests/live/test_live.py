"""Live input (rsp/live.py): ``rsp run`` and ``rsp lars`` reading standard input, pipes, FIFOs and growing
files write each instant as soon as it closes, and their output equals the replay of the same lines from
a file (the reference: ``rsp run`` / ``rsp lars`` on a file, themselves checked against the oracles);
``--idle-close`` closes the open instant after a quiet period; SIGINT and SIGTERM end a run cleanly.

The subprocess tests drive real processes the way a user's shell does: they read an instant's output
before closing the input, and signal the process while it waits for more."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import GOLDEN_LARS, GOLDEN_QUERIES, ROOT

from rsp.cli import main

BUILDING = ROOT / "examples" / "building"
QUERY = BUILDING / "hot-rooms.rq"
BUILDING_ARGS = ["--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs"]
WAIT = 20.0  # seconds a test waits for an output line before failing

TWO_STREAMS = """REGISTER QUERY Live AS
SELECT ?x (COUNT(*) AS ?n) (SUM(?v) AS ?s)
FROM STREAM <http://ex.org/a> [RANGE 2s STEP 1s]
FROM STREAM <http://ex.org/b> [RANGE 1s STEP 1s]
WHERE { ?x <http://ex.org/p> ?v }
GROUP BY ?x ORDER BY ?x
"""
ONE_STREAM = TWO_STREAMS.replace("FROM STREAM <http://ex.org/b> [RANGE 1s STEP 1s]\n", "")
LARS = """% a within the last 3 time points, b now
q(X) :- [3] <> a(X).
r(X) :- b(X), not q(X).
"""


SEPARATORS = ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
"""Characters ``str.splitlines`` cuts a line at besides the line feed and the carriage return."""


def _line(subject: int, value: int, time_: int) -> str:
    xsd = "http://www.w3.org/2001/XMLSchema#integer"
    return f'<http://ex.org/s{subject}> <http://ex.org/p> "{value}"^^<{xsd}> . # {time_}\n'


@st.composite
def stream_lines(draw) -> list[str]:
    """Timed N-Triples lines mostly in time order, some out of order (late or not), a malformed one."""
    count = draw(st.integers(1, 30))
    time_ = 0
    lines = []
    for _ in range(count):
        kind = draw(st.sampled_from(["same", "later", "later", "back", "bad", "text"]))
        if kind == "later":
            time_ += draw(st.integers(1, 1800))
        elif kind == "bad":
            lines.append(f"<http://ex.org/s1> <http://ex.org/p> oops . # {time_}\n")
            continue
        elif kind == "text":  # a literal holding a separator str.splitlines cuts at (N-Triples allows it)
            raw = draw(st.sampled_from(SEPARATORS))
            lines.append(
                f'<http://ex.org/s{draw(st.integers(0, 2))}> <http://ex.org/p> "a{raw}b" . # {time_}\n'
            )
            continue
        shown = max(0, time_ - draw(st.integers(1, 2500))) if kind == "back" else time_
        lines.append(_line(draw(st.integers(0, 2)), draw(st.integers(0, 9)), shown))
    return lines


def _writer(fd: int, pieces: list[str]) -> threading.Thread:
    """Write ``pieces`` to the pipe ``fd`` one at a time (a live source's arrivals), then close it."""

    def run() -> None:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for piece in pieces:
                handle.write(piece)
                handle.flush()
                time.sleep(0.001)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _pieces(lines: list[str], cuts: list[int]) -> list[str]:
    """The text of ``lines`` cut at the character offsets ``cuts`` (a line may arrive in two parts)."""
    text = "".join(lines)
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def _written(path: Path) -> str:
    """What a run wrote to its ``--output`` file; nothing when it wrote no file (a refused stream)."""
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _run_files(tmp: Path, command: list[str], streams: list[tuple[str, list[str]]]) -> tuple[int, str]:
    """The reference: the command over the lines written to files, its exit code and its output (a
    stream whose every line is rejected is an error: exit 2, as through a pipe)."""
    args = []
    for index, (iri, lines) in enumerate(streams):
        path = tmp / f"stream{index}.nt"
        path.write_text("".join(lines), encoding="utf-8")
        args += ["--stream", f"{iri}={path}" if iri else str(path)]
    out = tmp / "file-output"
    code = main([*command, *args, "--quiet", "--output", str(out)])
    return code, _written(out)


def _run_pipes(tmp: Path, command: list[str], streams: list[tuple[str, list[str]]], cuts) -> tuple[int, str]:
    """The command over the same lines arriving through pipes, cut into pieces: exit code and output."""
    args, threads, readers = [], [], []
    for iri, lines in streams:
        read, write = os.pipe()
        readers.append(read)
        threads.append(_writer(write, _pieces(lines, cuts)))
        args += ["--stream", f"{iri}=/dev/fd/{read}" if iri else f"/dev/fd/{read}"]
    out = tmp / "live-output"
    try:
        code = main([*command, *args, "--quiet", "--output", str(out)])
    finally:
        for thread in threads:
            thread.join(WAIT)
        for read in readers:
            os.close(read)
    return code, _written(out)


def _query_case(text: str, streams, about: str):
    def files() -> dict[str, str]:
        from query_golden import case_files, read_elements

        elements = [(iri, read_elements("".join(lines))) for iri, lines in streams]
        return case_files(text, elements, "none", None, about)

    return files


def test_pipes_equal_files_on_a_fixed_case(tmp_path: Path) -> None:
    lines_a = [_line(1, 3, 0), _line(2, 4, 500), _line(1, 5, 1500), _line(2, 1, 800), _line(1, 2, 4100)]
    lines_b = [_line(2, 7, 200), _line(1, 1, 1200), _line(2, 2, 1200), _line(1, 9, 3900)]
    query = tmp_path / "q.rq"
    query.write_text(TWO_STREAMS, encoding="utf-8")
    streams = [("http://ex.org/a", lines_a), ("http://ex.org/b", lines_b)]
    code, expected = _run_files(tmp_path, ["run", str(query)], streams)
    assert code == 0 and expected.count("\n") == 5  # instants 1000 … 5000
    assert _run_pipes(tmp_path, ["run", str(query)], streams, [7, 150, 333]) == (0, expected)


def test_a_literal_with_a_line_separator_is_one_line_from_a_pipe(tmp_path: Path) -> None:
    """U+2028, U+0085 and the other separators of str.splitlines may stand raw in an N-Triples
    literal: from a pipe as from a file, the line is one element (each was cut in two and both halves
    rejected), and a lone carriage return ends a line in both."""
    lines = [
        f'<http://ex.org/s1> <http://ex.org/p> "a{raw}b" . # {100 * k}\n' for k, raw in enumerate(SEPARATORS)
    ]
    lines.append('<http://ex.org/s2> <http://ex.org/p> "cr" . # 900\r')
    lines.append('<http://ex.org/s2> <http://ex.org/p> "crlf" . # 950\r\n')
    query = tmp_path / "q.rq"
    query.write_text(
        "REGISTER QUERY Values AS\nSELECT ?x ?v FROM STREAM <http://ex.org/a> [RANGE 2s STEP 1s]\n"
        "WHERE { ?x <http://ex.org/p> ?v }",
        encoding="utf-8",
    )
    streams = [("http://ex.org/a", lines)]
    code, expected = _run_files(tmp_path, ["run", str(query)], streams)
    assert code == 0
    values = {b["v"] for line in expected.split("\n")[:-1] for b in json.loads(line)["bindings"]}
    assert values >= {f'"a{raw}b"' for raw in SEPARATORS} | {'"cr"', '"crlf"'}, values
    assert _run_pipes(tmp_path, ["run", str(query)], streams, [5, 61, 200]) == (0, expected)


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None)
@given(stream_lines(), stream_lines(), st.lists(st.integers(0, 5000), max_size=6), st.booleans())
def test_generated_live_streams_equal_files(tmp_path_factory, lines_a, lines_b, cuts, two) -> None:
    """Live streams through pipes, their text cut anywhere, give what rsp run gives on files: instants
    close on event time only, and several streams are merged in time order."""
    tmp = tmp_path_factory.mktemp("live")
    text = TWO_STREAMS if two else ONE_STREAM
    query = tmp / "q.rq"
    query.write_text(text, encoding="utf-8")
    streams = [("http://ex.org/a", lines_a)] + ([("http://ex.org/b", lines_b)] if two else [])
    with saved_on_failure(GOLDEN_QUERIES, _query_case(text, streams, "live input equals replay")):
        # the same exit code too: a run whose every line is rejected fails alike from files and pipes
        assert _run_pipes(tmp, ["run", str(query)], streams, cuts) == _run_files(
            tmp, ["run", str(query)], streams
        )


@st.composite
def atom_lines(draw) -> list[str]:
    lines, time_ = [], 0
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["same", "later", "later", "back", "bare", "bad"]))
        if kind == "later":
            time_ += draw(st.integers(1, 4))
        if kind == "bad":
            lines.append(f"{time_} a(\n")
        elif kind == "bare":
            lines.append(f"{time_}\n")
        else:
            shown = max(0, time_ - draw(st.integers(1, 3))) if kind == "back" else time_
            lines.append(f"{shown} {draw(st.sampled_from('ab'))}({draw(st.sampled_from('xyz'))})\n")
    return lines


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None)
@given(atom_lines(), st.lists(st.integers(0, 400), max_size=5))
def test_generated_live_atoms_equal_files(tmp_path_factory, lines, cuts) -> None:
    """rsp lars over a pipe writes what it writes over the file, its text cut anywhere."""
    tmp = tmp_path_factory.mktemp("lars")
    program = tmp / "p.lars"
    program.write_text(LARS, encoding="utf-8")

    def files() -> dict[str, str]:
        from test_differential import golden_case

        return golden_case(LARS, [line.rstrip("\n") for line in lines])

    with saved_on_failure(GOLDEN_LARS, files):
        (tmp / "s.txt").write_text("".join(lines), encoding="utf-8")
        expected_out, live_out = tmp / "expected", tmp / "live"
        command = ["lars", str(program), "--quiet", "--output"]
        # the same exit code too: a stream whose every line is rejected fails alike from a file and a pipe
        expected_code = main([*command, str(expected_out), "--stream", str(tmp / "s.txt")])
        read, write = os.pipe()
        thread = _writer(write, _pieces(lines, cuts))
        try:
            assert main([*command, str(live_out), "--stream", f"/dev/fd/{read}"]) == expected_code
        finally:
            thread.join(WAIT)
            os.close(read)
        assert _written(live_out) == _written(expected_out)


# -- real processes -----------------------------------------------------------------------------------


class Process:
    """``rsp …`` as a process group of its own (as a shell starts it), its output read line by line."""

    def __init__(self, *args: str, stdin=subprocess.PIPE) -> None:
        # a suite started as a background job of a script has SIGINT ignored, and a child keeps it
        # ignored (Python then installs no Ctrl-C handler): rsp starts as from a terminal instead
        ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        if ignored:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "rsp", *args],
                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                start_new_session=True,
            )  # fmt: skip
        finally:
            if ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, text: str) -> None:
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def line(self) -> str:
        """The next output line, waiting for it (the input stays open)."""
        line = self.lines.get(timeout=WAIT)
        assert line is not None, f"the output ended early; stderr: {self.proc.stderr.read()}"
        return line

    def finish(self) -> tuple[int, list[str], str]:
        """Wait for the end: exit code, the remaining output lines, stderr."""
        code = self.proc.wait(timeout=WAIT)
        rest = []
        while (line := self.lines.get(timeout=WAIT)) is not None:
            rest.append(line)
        return code, rest, self.proc.stderr.read()


def _building_lines() -> list[str]:
    return (BUILDING / "temperatures.nt").read_text(encoding="utf-8").splitlines(keepends=True)


def _rsp_run_file(lines: list[str], tmp: Path) -> list[str]:
    path = tmp / "replayed.nt"
    path.write_text("".join(lines), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(QUERY), "--stream", str(path), *BUILDING_ARGS],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.splitlines(keepends=True)


def _first_instant_lines(lines: list[str]) -> int:
    """How many lines hold the times up to the first line of 10 s or later (closing instant 10000)."""
    return next(i for i, line in enumerate(lines) if int(line.rsplit("# ", 1)[1]) >= 10_000) + 1


def test_stdin_instants_come_out_before_the_input_ends(tmp_path: Path) -> None:
    lines = _building_lines()
    expected = _rsp_run_file(lines, tmp_path)
    cut = _first_instant_lines(lines)
    rsp = Process("run", str(QUERY), "--stream", "-", *BUILDING_ARGS)
    rsp.send("".join(lines[:cut]))
    assert [rsp.line(), rsp.line()] == expected[:2]  # instants 5000 and 10000, input still open
    rsp.send("".join(lines[cut:]))
    rsp.proc.stdin.close()
    code, rest, stderr = rsp.finish()
    assert (code, stderr) == (0, "")
    assert expected[:2] + rest == expected


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_a_live_run_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM: the lines read are the
    end of the stream, the last instants are written, one summary line, exit code 0, no traceback."""
    lines = _building_lines()
    cut = _first_instant_lines(lines)
    expected = _rsp_run_file(lines[:cut], tmp_path)
    rsp = Process("run", str(QUERY), "--stream", "-", *BUILDING_ARGS)
    rsp.send("".join(lines[:cut]))
    first = [rsp.line(), rsp.line()]
    os.killpg(rsp.proc.pid, sig)
    code, rest, stderr = rsp.finish()
    assert code == 0
    assert first + rest == expected
    assert stderr.splitlines() == [
        f"rsp run: stopped by {sig.name}: {len(expected)} instants written, {cut} triples read"
    ]


def test_a_fifo_is_read_live(tmp_path: Path) -> None:
    lines = _building_lines()
    expected = _rsp_run_file(lines, tmp_path)
    cut = _first_instant_lines(lines)
    fifo = tmp_path / "stream.fifo"
    os.mkfifo(fifo)
    rsp = Process("run", str(QUERY), "--stream", str(fifo), *BUILDING_ARGS, stdin=subprocess.DEVNULL)
    with open(fifo, "w", encoding="utf-8") as writer:  # opens once rsp opened it for reading
        writer.write("".join(lines[:cut]))
        writer.flush()
        assert [rsp.line(), rsp.line()] == expected[:2]
        writer.write("".join(lines[cut:]))
    code, rest, stderr = rsp.finish()
    assert (code, stderr) == (0, "")
    assert expected[:2] + rest == expected


def _wait_blocked_opening_the_fifo(pid: int, timeout: float = 60) -> None:
    """Until the process handles SIGTERM and waits in the kernel for a FIFO's writer (Linux's /proc)."""
    deadline = time.monotonic() + timeout
    status, wchan = Path(f"/proc/{pid}/status"), Path(f"/proc/{pid}/wchan")
    while time.monotonic() < deadline:
        caught = next(
            (line.split()[1] for line in status.read_text().splitlines() if line.startswith("SigCgt")), "0"
        )
        waiting = any(word in wchan.read_text() for word in ("fifo", "partner")) or _syscall(pid)
        if int(caught, 16) >> (signal.SIGTERM - 1) & 1 and waiting:
            return
        time.sleep(0.02)
    raise AssertionError("rsp never waited for the FIFO's writer")


def _syscall(pid: int) -> str:
    """'fifo' when the process is in an open(2) of a FIFO by what /proc tells (wchan can be 0 there)."""
    try:
        number = Path(f"/proc/{pid}/syscall").read_text().split()[0]
    except (OSError, IndexError):
        return ""
    return "fifo" if number in ("2", "257", "56") else ""  # open, openat on x86-64; openat on arm64


def test_a_signal_stops_rsp_waiting_for_a_fifo_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "stream.fifo"
    os.mkfifo(fifo)
    rsp = Process("run", str(QUERY), "--stream", str(fifo), *BUILDING_ARGS, stdin=subprocess.DEVNULL)
    _wait_blocked_opening_the_fifo(rsp.proc.pid)  # not a fixed sleep: a loaded machine starts rsp slowly
    os.killpg(rsp.proc.pid, signal.SIGTERM)
    code, rest, stderr = rsp.finish()
    assert (code, rest) == (0, [])
    assert stderr == "rsp run: stopped by SIGTERM: 0 instants written, 0 triples read\n"


def test_follow_reads_a_growing_file(tmp_path: Path) -> None:
    lines = _building_lines()
    cut = _first_instant_lines(lines)
    expected = _rsp_run_file(lines, tmp_path)
    growing = tmp_path / "growing.nt"
    growing.write_text("".join(lines[:cut]), encoding="utf-8")
    rsp = Process(
        "run", str(QUERY), "--stream", str(growing), "--follow", *BUILDING_ARGS, stdin=subprocess.DEVNULL
    )
    assert [rsp.line(), rsp.line()] == expected[:2]
    with open(growing, "a", encoding="utf-8") as handle:
        handle.write("".join(lines[cut:]))
    # instants up to the last line's time come out while the file stays open for more
    ends = [line for line in expected if '"time": 30000' in line or '"time": 35000' in line]
    got = [rsp.line() for _ in range(len(expected) - 3)]
    assert expected[:2] + got == expected[:-1] and ends
    os.killpg(rsp.proc.pid, signal.SIGTERM)
    code, rest, stderr = rsp.finish()
    assert code == 0 and expected[:2] + got + rest == expected
    assert stderr.startswith("rsp run: stopped by SIGTERM:")


def test_idle_close_reports_a_quiet_stream(tmp_path: Path) -> None:
    """One reading at 1.2 s, then nothing: without --idle-close no instant closes; with it, the instant
    of 5 s (the query steps every 5 s) comes out after the quiet period, the input still open."""
    line = _building_lines()[0].replace("# 0", "# 1200")
    rsp = Process("run", str(QUERY), "--stream", "-", "--idle-close", "0.3", *BUILDING_ARGS)
    rsp.send(line)
    started = time.monotonic()
    assert rsp.line().startswith('{"query": "HotRooms", "time": 5000')
    assert time.monotonic() - started >= 0.3
    rsp.send(_building_lines()[1].replace("# 0", "# 3000"))  # for a closed instant: late
    rsp.proc.stdin.close()
    code, rest, stderr = rsp.finish()
    assert (code, rest) == (0, [])
    assert "<stdin>:2: late element at time 3000 (instant 5000 is already closed), dropped" in stderr


def test_lars_writes_each_time_point_as_it_closes() -> None:
    rsp = Process("lars", "examples/cooling/cooling.lars", "--stream", "-", "--format", "jsonl")
    lines = (ROOT / "examples" / "cooling" / "temps.stream").read_text(encoding="utf-8").splitlines(True)
    expected = subprocess.run(
        [sys.executable, "-m", "rsp", "lars", "examples/cooling/cooling.lars", "--stream",
         "examples/cooling/temps.stream"], capture_output=True, text=True, cwd=ROOT, check=True, timeout=60,
    ).stdout.splitlines(keepends=True)  # fmt: skip
    first_time = int(lines[0].split()[0])
    later = next(i for i, line in enumerate(lines) if int(line.split()[0]) > first_time)
    rsp.send("".join(lines[: later + 1]))
    assert rsp.line() == expected[0]
    os.killpg(rsp.proc.pid, signal.SIGINT)
    code, rest, stderr = rsp.finish()
    assert code == 0
    assert stderr.startswith("rsp lars: stopped by SIGINT:") and stderr.count("\n") == 1
    assert "Traceback" not in stderr and len(rest) >= 1


def test_mtl_reads_stdin_live(tmp_path: Path) -> None:
    """rsp mtl writes the facts that are final while its input is still open, and stops on SIGTERM."""
    program, stream = "tests/data/mtl/short_stop.txt", ROOT / "tests" / "data" / "mtl" / "S1-head.txt"
    args = ["mtl", program, "--output-predicates", "ShortStop", "--format", "jsonl"]
    lines = stream.read_text(encoding="utf-8").splitlines(keepends=True)
    prefix = tmp_path / "prefix.txt"
    prefix.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    expected = subprocess.run(
        [sys.executable, "-m", "rsp", *args, "--stream", str(prefix)],
        capture_output=True, text=True, cwd=ROOT, check=True, timeout=60,
    ).stdout.splitlines(keepends=True)  # fmt: skip
    assert len(expected) >= 2
    rsp = Process(*args, "--stream", "-")
    rsp.send(prefix.read_text(encoding="utf-8"))
    assert rsp.line() == expected[0]  # before the input ends
    time.sleep(0.5)  # the rest of the text sent is read (one pipe buffer)
    os.killpg(rsp.proc.pid, signal.SIGTERM)
    code, rest, stderr = rsp.finish()
    assert code == 0 and [expected[0], *rest] == expected
    assert stderr.startswith("rsp mtl: stopped by SIGTERM:") and stderr.count("\n") == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_replay_without_a_traceback(tmp_path: Path, sig: signal.Signals) -> None:
    """A replay of files (not live input) stopped by Ctrl-C or SIGTERM: one line on stderr, exit 130."""
    stream = tmp_path / "long.stream"
    stream.write_text("".join(f"{t} a(x{t % 7})\n" for t in range(600_000)), encoding="utf-8")
    rsp = Process("lars", "examples/cooling/cooling.lars", "--stream", str(stream), stdin=subprocess.DEVNULL)
    rsp.line()  # it is running
    os.killpg(rsp.proc.pid, sig)
    code, _rest, stderr = rsp.finish()
    assert (code, stderr) == (130, f"rsp lars: stopped by {sig.name} before the end of the input\n")


def test_a_stream_whose_every_line_is_rejected_fails_alike_from_a_file_and_a_pipe(tmp_path: Path) -> None:
    """The case make fuzz found with fresh seeds: no element read is an error (exit 2), from a pipe as
    from a file, and neither writes an answer."""
    query = tmp_path / "q.rq"
    query.write_text(ONE_STREAM, encoding="utf-8")
    streams = [("http://ex.org/a", ["<http://ex.org/s> <http://ex.org/p> oops . # 5\n"])]
    assert _run_files(tmp_path, ["run", str(query)], streams) == (2, "")
    assert _run_pipes(tmp_path, ["run", str(query)], streams, [3]) == (2, "")
