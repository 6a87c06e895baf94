"""``rsp serve --data DIR`` (rsp/serve/journal.py, rsp/serve/service.py): what the service acknowledged
survives the process. A service restarted on its folder has the same queries, graphs, windows and
results as one that never stopped (the reference: ``rsp run`` on the same stream); a torn last record
is cut; a second service on the folder is refused; a request sent again with its key adds nothing; a
subscriber resumes after its last event id and gets every later instant once. The fault test kills the
service with SIGKILL at random points of a producer's stream and restarts it."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT

from rsp.serve.journal import Journal, JournalError, encode
from rsp.serve.service import FAULT_ENV, Service

BUILDING = ROOT / "examples" / "building"
STREAM = "http://example.org/building/temperatures"
QUERY = (BUILDING / "hot-rooms.rq").read_text()
LINES = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)


def _expected() -> list[str]:
    """The reference: ``rsp run`` on the example's stream file, one jsonl line per instant."""
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(BUILDING / "hot-rooms.rq"), "--stream",
         str(BUILDING / "temperatures.nt"), "--ontology", str(ROOT / "ontologies" / "building.ttl"),
         "--entailment", "rdfs", "--format", "jsonl"], capture_output=True, text=True, check=True, cwd=ROOT,
        timeout=120,
    )  # fmt: skip
    return done.stdout.splitlines()


EXPECTED = _expected()


def _service(data: Path, **options) -> Service:
    service = Service("rdfs", **options)
    service.engine.load_ontology(ROOT / "ontologies" / "building.ttl")
    service.restore(data)
    return service


def _lines(service: Service) -> list[str]:
    return service.results("HotRooms", after=-1)


def _cuts(rng: random.Random, count: int) -> list[list[str]]:
    """LINES in consecutive requests of random sizes."""
    batches, start = [], 0
    while start < len(LINES):
        size = rng.randint(1, count)
        batches.append(LINES[start : start + size])
        start += size
    return batches


@pytest.mark.parametrize("seed", range(4))
def test_a_restarted_service_goes_on_as_one_that_never_stopped(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    batches = _cuts(rng, 40)
    stop = rng.randrange(1, len(batches))  # restart after this many requests
    first = _service(tmp_path / "data")
    first.register(QUERY)
    for batch in batches[:stop]:
        first.push_ntriples(STREAM, "".join(batch))
    before = _lines(first)
    first.close()
    second = _service(tmp_path / "data")
    assert second.restored["queries"] == 1
    assert second.restored["elements"] == sum(map(len, batches[:stop]))
    assert _lines(second) == before  # the same instants, regenerated from the log
    for batch in batches[stop:]:
        second.push_ntriples(STREAM, "".join(batch))
    second.advance()
    assert _lines(second) == EXPECTED
    second.close()


def test_a_torn_last_record_is_cut_at_the_last_whole_one(tmp_path: Path) -> None:
    service = _service(tmp_path / "data")
    service.register(QUERY)
    service.push_ntriples(STREAM, "".join(LINES[:100]))
    before = _lines(service)
    service.close()
    journal = tmp_path / "data" / "journal"
    whole = journal.stat().st_size
    record = encode({"op": "push", "stream": STREAM, "batches": [[99999, [["<a>", "<b>", "<c>"]]]], "key": None})
    for torn in (record[:3], record[:11], record[:-1], record[:-1] + b"X"):  # a crash mid-write, or a bad byte
        with open(journal, "ab") as file:
            file.write(torn)
        again = _service(tmp_path / "data")
        assert again.restored["cut"] == len(torn)
        assert _lines(again) == before
        again.close()
        assert journal.stat().st_size == whole  # cut back, the next records follow the whole ones


def test_a_second_service_on_the_folder_is_refused(tmp_path: Path) -> None:
    first = _service(tmp_path / "data")
    with pytest.raises(JournalError, match=f"in use by another rsp serve \\(pid {os.getpid()}\\)"):
        _service(tmp_path / "data")
    first.close()
    _service(tmp_path / "data").close()  # released


def test_a_folder_of_another_entailment_is_refused(tmp_path: Path) -> None:
    _service(tmp_path / "data").close()
    other = Service("none")
    with pytest.raises(JournalError, match="--entailment rdfs"):
        other.restore(tmp_path / "data")


def test_a_request_sent_again_with_its_key_adds_nothing(tmp_path: Path) -> None:
    service = _service(tmp_path / "data")
    service.register(QUERY)
    first = service.push_ntriples(STREAM, "".join(LINES[:50]), key="batch-1")
    again = service.push_ntriples(STREAM, "".join(LINES[:50]), key="batch-1")
    assert again == first
    service.close()
    restarted = _service(tmp_path / "data")
    assert restarted.push_ntriples(STREAM, "".join(LINES[:50]), key="batch-1") == first  # across a restart
    assert restarted.restored["elements"] == 50
    restarted.push_ntriples(STREAM, "".join(LINES[50:]), key="batch-2")
    restarted.advance()
    assert _lines(restarted) == EXPECTED
    restarted.close()


def test_a_full_disk_refuses_the_request_and_keeps_nothing_of_it(tmp_path: Path, monkeypatch) -> None:
    service = _service(tmp_path / "data")
    service.register(QUERY)
    service.push_ntriples(STREAM, "".join(LINES[:50]))
    size = (tmp_path / "data" / "journal").stat().st_size
    real = os.fsync

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(JournalError, match="No space left"):
        service.push_ntriples(STREAM, "".join(LINES[50:100]))
    monkeypatch.setattr(os, "fsync", real)
    assert (tmp_path / "data" / "journal").stat().st_size == size
    service.push_ntriples(STREAM, "".join(LINES[50:]))  # sent again once there is room
    service.advance()
    assert _lines(service) == EXPECTED
    service.close()
    restarted = _service(tmp_path / "data")
    assert _lines(restarted) == EXPECTED
    restarted.close()


def test_a_read_only_folder_is_refused_at_start(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root writes anywhere: make the folder a file's place instead
        (tmp_path / "data").write_text("not a folder")
    else:
        (tmp_path / "data").mkdir(mode=0o555)
    with pytest.raises(JournalError, match="--data"):
        Journal(tmp_path / "data")


def test_a_subscriber_resumes_after_its_last_instant(tmp_path: Path) -> None:
    service = _service(tmp_path / "data", retain=5)
    service.register(QUERY)
    service.push_ntriples(STREAM, "".join(LINES))
    service.advance()
    instants = [json.loads(line)["time"] for line in EXPECTED]
    after = instants[-3]
    assert service.results("HotRooms", after=after) == EXPECTED[-2:]
    queue = service.listen("HotRooms", after)
    assert [queue.get_nowait().time for _ in range(queue.qsize())] == instants[-2:]
    assert service.since("HotRooms", instants[0])[1] == instants[-5]  # older than the retention: a gap
    service.close()


# -- the fault test: a real server killed with SIGKILL at random points -------------------------------


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``rsp serve --data`` in a subprocess, started again on the same folder and port after a kill."""

    def __init__(self, data: Path, *extra: str) -> None:
        self.data, self.port, self.extra = data, _port(), extra
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.fault: str | None = None
        self.restored: list[str] = []

    def start(self, fault: str | None = None) -> None:
        env = dict(os.environ)
        env.pop(FAULT_ENV, None)
        self.fault = fault
        if fault:
            env[FAULT_ENV] = fault
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rsp", "serve", "--port", str(self.port), "--quiet", "--entailment", "rdfs",
             "--ontology", str(ROOT / "ontologies" / "building.ttl"), "--data", str(self.data), *self.extra],
            cwd=ROOT, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.restored.append(self.process.stderr.readline().strip())
        for _ in range(300):
            try:
                httpx.get(self.base + "/queries", timeout=1)
                return
            except httpx.TransportError:
                if self.fault and self.process.poll() is not None:
                    return  # it killed itself at its fault point already: the test restarts it
                time.sleep(0.05)
        raise AssertionError("the service did not start")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process.stderr.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.process.stderr.close()


def _post(server: Server, path: str, content: str, key: str | None = None, **params) -> httpx.Response | None:
    """The answer, or None when the service died before answering."""
    headers = {"Idempotency-Key": key} if key else {}
    try:
        return httpx.post(server.base + path, content=content, params=params, headers=headers, timeout=30)
    except httpx.TransportError:
        return None


def _drain(server: Server, last: str | None, seen: list[tuple[str, str]]) -> str | None:
    """Read the query's events from the one after ``last`` until none comes for a while (SSE,
    ``Last-Event-ID``); returns the last id seen."""
    headers = {"Last-Event-ID": last} if last else {}
    try:
        with httpx.stream("GET", server.base + "/queries/HotRooms/events", headers=headers,
                          timeout=httpx.Timeout(10, read=1.5)) as events:  # fmt: skip
            event_id = None
            for line in events.iter_lines():
                if line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: ") and event_id is not None:
                    seen.append((event_id, line[6:]))
                    last, event_id = event_id, None
    except (httpx.ReadTimeout, httpx.RemoteProtocolError):
        pass
    return last


@pytest.mark.parametrize("seed", range(2))
def test_killed_at_random_points_it_loses_nothing_acknowledged(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    batches = _cuts(rng, 60)
    server = Server(tmp_path / "data")

    def fault() -> str:  # the service kills itself in the middle of a request now and then
        return f"{rng.choice(['logged', 'pushed'])}:{rng.randint(1, 4)}" if rng.random() < 0.7 else ""

    server.start(fault())
    seen: list[tuple[str, str]] = []
    last = "HotRooms/0"  # the subscriber wants every instant (the first one is later than 0)
    registered = False
    acknowledged = 0
    kills = 0
    try:
        index = 0
        while index < len(batches):
            if not registered:
                reply = _post(server, "/queries", QUERY)
                registered = reply is not None and (
                    reply.status_code == 201 or "registered already" in reply.text
                )
                continue
            killer = None
            if rng.random() < 0.3:  # SIGKILL while the request may be anywhere in the service
                killer = threading.Timer(rng.uniform(0, 0.05), server.kill)
                killer.start()
            reply = _post(server, "/streams/elements", "".join(batches[index]), key=f"b{index}", stream=STREAM)
            if killer is not None:
                killer.join()
            if reply is None or killer is not None or server.process.poll() is not None:
                kills += 1
                server.kill()
                server.start(fault())
                last = _drain(server, last, seen)
            if reply is not None and reply.status_code == 200:
                assert reply.json()["elements"] == len(batches[index])
                acknowledged += len(batches[index])
                index += 1
            elif reply is not None:
                raise AssertionError(reply.text)
            if rng.random() < 0.2:
                last = _drain(server, last, seen)
        assert acknowledged == len(LINES)
        while _post(server, "/streams/advance", "") is None:
            server.start()
        last = _drain(server, last, seen)
        server.stop()
        server.start()
        assert f", {len(LINES)} element(s)," in server.restored[-1]  # every element once in the log
        assert httpx.get(server.base + "/health").json() == {"status": "ok"}
        ready = httpx.get(server.base + "/ready").json()
        assert ready["ready"] and ready["durable"] and ready["restored"]["elements"] == len(LINES)
        last = _drain(server, last, seen)  # after the last instant: nothing more
    finally:
        if server.process.poll() is None:
            server.stop()
    assert kills > 0 or len(batches) < 4
    ids = [event_id for event_id, _ in seen]
    assert len(ids) == len(set(ids)), "an instant came twice"
    assert [data for _, data in seen] == EXPECTED



# -- compaction: the log bounded by the windows and the retention --------------------------------------


def _long_stream(rounds: int, rng: random.Random) -> list[str]:
    """The example's stream ``rounds`` times, each 40 s later (its observations renamed per round), its
    lines shuffled a little (elements out of time order within a few lines)."""
    lines = []
    for round_ in range(rounds):
        for line in LINES:
            body, stamp = line.rsplit("# ", 1)
            body = body.replace("#obs", f"#r{round_}obs")
            lines.append(f"{body}# {int(stamp) + 40_000 * round_}\n")
    for index in range(len(lines) - 1):
        if rng.random() < 0.1:
            lines[index], lines[index + 1] = lines[index + 1], lines[index]
    return lines


@pytest.mark.generated
@settings(max_examples=examples(4), deadline=None)
@given(st.integers(0, 2**32))
def test_a_compacted_log_restores_what_the_whole_log_does(tmp_path_factory, seed: int) -> None:
    """Two services, one compacting its log often (a few KB) and one never, take the same requests and
    advances; restarted, each has the same queries, the same retained instants, and then gives the same
    instants for the rest of the stream. The compacted log stays bounded as the stream grows."""
    tmp_path = tmp_path_factory.mktemp("compaction")
    rng = random.Random(seed)
    lines = _long_stream(12, rng)
    retain = rng.choice([1, 3, 8])
    small = _service(tmp_path / "small", retain=retain, compact_bytes=4096)
    whole = _service(tmp_path / "whole", retain=retain, compact_bytes=1 << 40)
    for service in (small, whole):
        service.register(QUERY)
    istream = QUERY.replace("REGISTER QUERY HotRooms AS", "REGISTER ISTREAM QUERY NewHot AS")
    for service in (small, whole):  # ISTREAM compares each instant with the one before
        service.register(istream)
    stop = rng.randrange(2 * len(lines) // 3, len(lines))
    start, sizes, newest = 0, [], 0
    while start < stop:
        size = rng.randint(1, 30)
        text = "".join(lines[start : min(stop, start + size)])
        for service in (small, whole):
            service.push_ntriples(STREAM, text, key=f"k{start}")
        newest = max(newest, max(int(line.rsplit("# ", 1)[1]) for line in lines[start : min(stop, start + size)]))
        if rng.random() < 0.1:  # a watermark a little behind the newest element
            for service in (small, whole):
                service.advance(max(0, newest - rng.randint(0, 3000)))
        start += size
        sizes.append((small.journal.size(), whole.journal.size()))
    names = [handle.name for handle in whole.engine.queries]
    kept = {name: whole.results(name, after=-1) for name in names}
    for service in (small, whole):
        service.close()
    third = len(sizes) // 3
    middle, last = sizes[third : 2 * third], sizes[2 * third :]
    assert max(s for s, _ in last) <= 1.3 * max(s for s, _ in middle)  # bounded: it does not grow on
    assert last[-1][1] >= 1.4 * middle[-1][1]  # while the whole log does
    small, whole = (_service(tmp_path / name, retain=retain, compact_bytes=4096) for name in ("small", "whole"))
    for name in names:
        assert small.results(name, after=-1) == kept[name][-retain:]
        recent = small.results(name)  # the recent results: from the retained instants on, none from partial windows
        assert len(recent) >= min(retain, len(kept[name])) and recent == whole.results(name)[-len(recent) :]
        assert whole.results(name, after=-1)[-retain:] == kept[name][-retain:]
    first = "".join(lines[: lines.index(lines[0]) + 1])
    retried = [service.push_ntriples(STREAM, first, key="k0") for service in (small, whole)]
    assert retried[0] == retried[1] and retried[0]["elements"] > 0  # the first answer, nothing added again
    assert small.restored["elements"] < whole.restored["elements"]
    for index in range(stop, len(lines), 25):
        text = "".join(lines[index : index + 25])
        answers = [service.push_ntriples(STREAM, text) for service in (small, whole)]
        assert answers[0] == answers[1]
    for service in (small, whole):
        service.advance()
    for name in names:
        after = kept[name][-1] if kept[name] else None
        instant = json.loads(after)["time"] if after else -1
        assert small.results(name, after=instant) == whole.results(name, after=instant)
    small.close()
    whole.close()


def _tmpfs(disk: Path, options: str) -> Path:
    """``disk`` made and a tmpfs mounted on it with ``options`` (root only: skipped otherwise, failed
    under RSP_REQUIRE_TMPFS=1, as make test sets); the caller unmounts it."""
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        if os.environ.get("RSP_REQUIRE_TMPFS"):
            raise AssertionError(f"cannot mount a tmpfs: {mounted.stderr.decode()}")
        pytest.skip(f"mounting a tmpfs needs root: {mounted.stderr.decode().strip()}")
    return disk


def test_a_full_disk_answers_503_and_keeps_every_acknowledged_element(tmp_path: Path) -> None:
    """A real server with its log on a 160 KiB tmpfs: requests once the disk is full get 503 and
    leave nothing behind; killed and started again there, it has exactly the acknowledged elements."""
    disk = _tmpfs(tmp_path / "disk", "size=160k")
    server = Server(disk / "data")
    try:
        server.start()
        assert _post(server, "/queries", QUERY).status_code == 201
        taken, refused = [], 0
        for round_ in range(40):  # the example's stream again and again, each 40 s later, until the disk is full
            lines = [
                f"{line.rsplit('# ', 1)[0].replace('#obs', f'#r{round_}obs')}# {int(line.rsplit('# ', 1)[1]) + 40_000 * round_}\n"
                for line in LINES
            ]
            reply = _post(server, "/streams/elements", "".join(lines), stream=STREAM)
            if reply.status_code == 503:
                assert "No space left" in reply.json()["error"]["message"]
                refused += 1
                if refused == 3:
                    break
                continue
            assert reply.status_code == 200, reply.text
            assert refused == 0  # nothing is taken after the disk filled up
            taken.extend(lines)
        assert refused == 3 and taken
        before = httpx.get(server.base + "/queries/HotRooms/results", params={"after": 0}).text
        server.kill()
        server.start()
        assert f", {len(taken)} element(s)," in server.restored[-1]
        assert httpx.get(server.base + "/queries/HotRooms/results", params={"after": 0}).text == before
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
        subprocess.run(["umount", str(disk)], check=False)


def test_a_compaction_that_cannot_be_written_fails_no_request(tmp_path: Path, monkeypatch) -> None:
    service = _service(tmp_path / "data", compact_bytes=2048)
    service.register(QUERY)
    real = os.replace

    def full(source, target) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    for start in range(0, len(LINES), 40):  # every push over the threshold tries to compact, and fails
        assert service.push_ntriples(STREAM, "".join(LINES[start : start + 40]))["elements"] > 0
    monkeypatch.setattr(os, "replace", real)
    service.advance()
    assert _lines(service) == EXPECTED
    service.close()
    assert _lines(_service(tmp_path / "data")) == EXPECTED


def test_a_read_only_file_system_is_refused_at_start_with_a_message(tmp_path: Path) -> None:
    """``rsp serve --data`` on a read-only mount (what root cannot write either) exits 2 with a message,
    before it prints its address."""
    disk = _tmpfs(tmp_path / "ro", "ro,size=64k")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rsp", "serve", "--port", str(_port()), "--data", str(disk / "data")],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )  # fmt: skip
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    assert done.returncode == 2, done.stderr
    assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr
    assert "http://" not in done.stderr
