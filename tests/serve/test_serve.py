"""``rsp serve`` (rsp/serve/): queries registered over HTTP give, for elements POSTed to their stream,
the results ``rsp run`` gives on the same stream file (the reference); bad elements refuse the whole
request with positioned JSON errors; the token guards every change; live results arrive by WebSocket
and, on a real uvicorn server, by Server-Sent Events."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import GOLDEN_QUERIES, ROOT
from starlette.testclient import TestClient
from test_live import ONE_STREAM, _query_case, stream_lines

from rsp.cli import main
from rsp.serve.app import create_app
from rsp.serve.service import Service

BUILDING = ROOT / "examples" / "building"
STREAM = "http://example.org/building/temperatures"


@functools.cache
def _expected(fmt: str = "jsonl") -> list[dict]:
    """The reference: rsp run on the example's stream file."""
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(BUILDING / "hot-rooms.rq"), "--stream",
         str(BUILDING / "temperatures.nt"), "--ontology", str(ROOT / "ontologies" / "building.ttl"),
         "--entailment", "rdfs", "--format", fmt], capture_output=True, text=True, check=True, cwd=ROOT,
        timeout=60,
    )  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def _client(token: str | None = None, **options) -> TestClient:
    service = Service("rdfs")
    service.engine.load_ontology(ROOT / "ontologies" / "building.ttl")
    return TestClient(create_app(service, token, **options))


def test_posted_elements_give_rsp_runs_results() -> None:
    client = _client()
    reply = client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text())
    assert reply.status_code == 201 and reply.json() == {"registered": ["HotRooms"], "warnings": []}
    assert client.get("/streams").json() == [STREAM]
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    with client.websocket_connect("/queries/HotRooms/ws") as live:
        for start in range(0, len(lines), 7):  # batches of 7 lines, as a feeder would send them
            reply = client.post("/streams/elements", params={"stream": STREAM}, content="".join(lines[start:start + 7]))
            assert reply.status_code == 200, reply.text
        first = json.loads(live.receive_text())
    expected = _expected()
    # instants close as elements come; the last ones close when the stream ends (rsp run's end of file)
    assert client.post("/streams/advance").json() == {"closed_until": {"HotRooms": expected[-1]["time"]}}
    got = [json.loads(line) for line in client.get("/queries/HotRooms/results").text.splitlines()]
    assert got == expected and first == expected[0]
    assert client.get("/queries").json()[0]["name"] == "HotRooms"
    assert client.delete("/queries/HotRooms").status_code == 204
    assert client.get("/queries/HotRooms").status_code == 404


def test_a_bad_element_refuses_the_whole_request_with_positions() -> None:
    client = _client()
    client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text())
    body = '<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # 100\n<http://ex.org/a> <http://ex.org/p> oops . # 200\n'
    reply = client.post("/streams/elements", params={"stream": STREAM}, content=body)
    assert reply.status_code == 422
    error = reply.json()["errors"][0]
    assert error["position"] == {"source": "<request>", "line": 2, "column": len("<http://ex.org/a> <http://ex.org/p> ") + 1}
    assert "expected an IRI, blank node or literal as object" in error["message"]
    assert client.get("/queries/HotRooms").json()["closed_until"] is None  # nothing was added
    reply = client.post("/queries", content="REGISTER QUERY Q AS SELECT ?x WHERE {")
    assert reply.status_code == 400 and reply.json()["error"]["position"]["line"] == 1


def test_the_token_guards_changes_and_bodies_are_limited() -> None:
    client = _client(token="s3cret", max_body=1000)
    assert client.post("/streams", content="http://ex.org/s").status_code == 401
    ok = client.post("/streams", content="http://ex.org/s", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 201 and client.get("/streams").json() == ["http://ex.org/s"]
    big = client.post("/streams/elements", params={"stream": "http://ex.org/s"}, content="x" * 2000,
                      headers={"Authorization": "Bearer s3cret"})  # fmt: skip
    assert big.status_code == 413
    assert client.get("/openapi.json").json()["openapi"].startswith("3.")
    assert "<svg" in client.get("/").text


def test_a_real_server_pushes_results_by_server_sent_events(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "rsp", "serve", "--port", str(port), "--quiet", "--entailment", "rdfs",
         "--ontology", str(ROOT / "ontologies" / "building.ttl")], cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(base + "/queries", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        httpx.post(base + "/queries", content=(BUILDING / "hot-rooms.rq").read_text(), timeout=10)
        expected = _expected()
        with httpx.stream("GET", base + "/queries/HotRooms/events", timeout=20) as events:
            lines = events.iter_lines()
            assert next(lines) == ": connected"
            text = (BUILDING / "temperatures.nt").read_text()
            httpx.post(base + "/streams/elements", params={"stream": STREAM}, content=text, timeout=10)
            data = []
            for line in lines:
                if line.startswith("data: "):
                    data.append(json.loads(line[6:]))
                    if len(data) == len(expected) - 1:  # the last instant closes at the stream's end
                        break
        assert data == expected[:-1]
    finally:
        server.terminate()
        server.wait(timeout=10)


def _jsonld_elements(path: Path) -> list[dict]:
    """The stream file's elements as ``POST /streams/elements`` takes JSON-LD: one ``{"time", "graph"}``
    per time, the graph written by rdflib's JSON-LD serialiser (not by rsp)."""
    from rdflib import Graph

    by_time: dict[int, list[str]] = {}
    for line in path.read_text().splitlines():
        triple, _hash, time_ = line.rpartition("#")
        by_time.setdefault(int(time_), []).append(triple.strip())
    elements = []
    for time_, triples in by_time.items():
        graph = Graph().parse(data="\n".join(triples) + "\n", format="nt")
        elements.append({"time": time_, "graph": json.loads(graph.serialize(format="json-ld"))})
    return elements


def test_jsonld_elements_and_a_posted_ontology_give_rsp_runs_results() -> None:
    """The ontology comes by POST /graphs (not at start) and the elements as JSON-LD; both result
    formats equal rsp run's (--format jsonl and --format sparql-json)."""
    from rdflib import Graph

    client = TestClient(create_app(Service("rdfs")))
    ontology = (ROOT / "ontologies" / "building.ttl").read_text()
    reply = client.post("/graphs", content=ontology, headers={"Content-Type": "text/turtle"})
    assert reply.status_code == 201 and reply.json() == {"triples": len(Graph().parse(data=ontology, format="turtle"))}
    assert client.post("/graphs", content="x", headers={"Content-Type": "text/csv"}).status_code == 415
    bad_graph = client.post("/graphs", content="<a> <b> .", headers={"Content-Type": "text/turtle"})
    assert bad_graph.status_code == 400 and "error" in bad_graph.json()
    client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text())
    elements = _jsonld_elements(BUILDING / "temperatures.nt")
    total = 0
    for start in range(0, len(elements), 10):
        reply = client.post("/streams/elements", params={"stream": STREAM}, json=elements[start:start + 10],
                            headers={"Content-Type": "application/ld+json"})  # fmt: skip
        assert reply.status_code == 200, reply.text
        total += reply.json()["elements"]
    assert total == len((BUILDING / "temperatures.nt").read_text().splitlines())
    client.post("/streams/advance")
    jsonl = [json.loads(line) for line in client.get("/queries/HotRooms/results").text.splitlines()]
    assert jsonl == _expected()
    reply = client.get("/queries/HotRooms/results", params={"format": "sparql-json"})
    assert [json.loads(line) for line in reply.text.splitlines()] == _expected("sparql-json")
    assert client.get("/queries/HotRooms/results", params={"format": "csv"}).status_code == 400


def test_a_bad_jsonld_element_refuses_the_whole_request() -> None:
    client = _client()
    client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text())
    good = _jsonld_elements(BUILDING / "temperatures.nt")[0]
    body = [good, {"time": -5, "graph": {}}, {"time": 7, "graph": {"@context": 5}}]
    reply = client.post("/streams/elements", params={"stream": STREAM}, json=body,
                        headers={"Content-Type": "application/ld+json"})  # fmt: skip
    assert reply.status_code == 422
    errors = reply.json()["errors"]
    assert [e["position"]["line"] for e in errors] == [2, 3]  # the element's index in the list
    assert "time" in errors[0]["message"] and "JSON-LD" in errors[1]["message"]
    assert client.get("/queries/HotRooms").json()["closed_until"] is None  # the good one was not added
    reply = client.post("/streams/elements", params={"stream": STREAM}, content="[{",
                        headers={"Content-Type": "application/ld+json"})  # fmt: skip
    assert reply.status_code == 400 and reply.json()["error"]["position"]["line"] == 1


def test_streams_are_deleted_and_unknown_ones_refused() -> None:
    client = _client()
    assert client.post("/streams", json={"iri": "http://ex.org/s"}).status_code == 201
    assert client.post("/streams", content="<http://ex.org/t>").status_code == 201
    assert client.get("/streams").json() == ["http://ex.org/s", "http://ex.org/t"]
    assert client.delete("/streams", params={"iri": "<http://ex.org/s>"}).status_code == 204
    assert client.get("/streams").json() == ["http://ex.org/t"]
    line = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # 100\n"
    reply = client.post("/streams/elements", params={"stream": "http://ex.org/s"}, content=line)
    assert reply.status_code == 404 and "no stream http://ex.org/s" in reply.json()["error"]["message"]
    assert client.delete("/streams", params={"iri": "http://ex.org/s"}).status_code == 404
    # a registered stream no query reads takes elements and drops them
    reply = client.post("/streams/elements", params={"stream": "http://ex.org/t"}, content=line)
    assert reply.json() == {"stream": "http://ex.org/t", "elements": 1, "late": 0, "late_lines": []}


def test_advance_closes_instants_and_later_older_elements_are_late() -> None:
    client = _client(token="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text(), headers=auth)
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    early = [line for line in lines if int(line.rpartition("#")[2]) < 15000]
    client.post("/streams/elements", params={"stream": STREAM}, content="".join(early), headers=auth)
    assert client.get("/queries/HotRooms").json()["closed_until"] == 10000  # the newest element: 14750
    assert client.post("/streams/advance", params={"time": "12000"}).status_code == 401
    assert client.post("/streams/advance", params={"time": "soon"}, headers=auth).status_code == 400
    reply = client.post("/queries/HotRooms/advance", params={"time": "14999"}, headers=auth)
    assert reply.json() == {"closed_until": {"HotRooms": 10000}}  # the next instant is 15000
    reply = client.post("/queries/HotRooms/advance", params={"time": "15000"}, headers=auth)
    assert reply.json() == {"closed_until": {"HotRooms": 15000}}
    got = [json.loads(line) for line in client.get("/queries/HotRooms/results").text.splitlines()]
    assert got == [r for r in _expected() if r["time"] <= 15000]
    older = '<http://ex.org/o> <http://ex.org/p> "1" . # 14999\n'
    reply = client.post("/streams/elements", params={"stream": STREAM}, content=older, headers=auth)
    assert reply.json()["late"] == 1
    assert client.post("/queries/Nope/advance", headers=auth).status_code == 404


@pytest.mark.generated
@settings(max_examples=examples(25), deadline=None)
@given(stream_lines(), st.lists(st.integers(1, 40), max_size=6), st.lists(st.integers(0, 1500), max_size=8))
def test_generated_requests_and_advances_equal_rsp_run(tmp_path_factory, lines, cuts, advances) -> None:
    """Elements POSTed in any batches, out of order (late or not), with advances to times no later
    element is older than, and the end of the stream by POST /streams/advance: rsp run's results on the
    same lines in one file, and the same number of late elements."""
    lines = [line for line in lines if "oops" not in line]  # a bad line refuses its request: not here
    if not lines:
        return
    tmp = tmp_path_factory.mktemp("serve")
    query = tmp / "q.rq"
    query.write_text(ONE_STREAM, encoding="utf-8")
    streams = [("http://ex.org/a", lines)]
    with saved_on_failure(GOLDEN_QUERIES, _query_case(ONE_STREAM, streams, "rsp serve equals rsp run")):
        (tmp / "s.nt").write_text("".join(lines), encoding="utf-8")
        warnings = io.StringIO()
        with contextlib.redirect_stderr(warnings):
            assert main(["run", str(query), "--stream", f"http://ex.org/a={tmp / 's.nt'}", "--output", str(tmp / "out")]) == 0
        expected = [json.loads(line) for line in (tmp / "out").read_text().splitlines()]
        client = TestClient(create_app(Service()))
        assert client.post("/queries", content=ONE_STREAM).status_code == 201
        bounds = sorted({0, len(lines), *(c % (len(lines) + 1) for c in cuts)})
        times = [int(line.rpartition("#")[2]) for line in lines]
        late, late_lines = 0, []
        for index, (start, stop) in enumerate(zip(bounds, bounds[1:], strict=False)):
            reply = client.post("/streams/elements", params={"stream": "http://ex.org/a"},
                                content="".join(lines[start:stop]))  # fmt: skip
            assert reply.status_code == 200, reply.text
            late += reply.json()["late"]
            late_lines += [start + line for line in reply.json()["late_lines"]]  # lines of the whole stream
            if index < len(advances) and stop < len(lines):  # no later element is older than the advance
                client.post("/streams/advance", params={"time": max(0, min(times[stop:]) - advances[index])})
        client.post("/streams/advance")
        got = [json.loads(line) for line in client.get("/queries/Live/results").text.splitlines()]
        assert got == expected
        assert late == warnings.getvalue().count("late element")
        assert late_lines == [int(n) for n in re.findall(r":(\d+): late element", warnings.getvalue())]



MULTI = """REGISTER QUERY Pairs AS SELECT ?s ?o
FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex.org/p> ?o }
"""
MULTI_LINES = [f"<http://ex.org/a{i}> <http://ex.org/p> <http://ex.org/o{i}> . # {i * 500}\n" for i in range(10)]


def _multi_expected(tmp_path: Path) -> list[dict]:
    """rsp run on the ten elements (500 ms apart): five instants, each with its own two elements."""
    (tmp_path / "q.rq").write_text(MULTI, encoding="utf-8")
    (tmp_path / "s.nt").write_text("".join(MULTI_LINES), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "rsp", "run", "q.rq", "--stream", "s.nt"], cwd=tmp_path,
                          capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    expected = [json.loads(line) for line in done.stdout.splitlines()]
    assert [len(e["bindings"]) for e in expected] == [2] * 5
    return expected


def test_one_request_closing_several_instants_gives_each_instant_its_answer(tmp_path: Path) -> None:
    """Issue 42's case: every element in ONE request closes four instants at once; each WebSocket event
    and each stored result carries the answer of its own instant (read after all of them closed)."""
    expected = _multi_expected(tmp_path)
    client = TestClient(create_app(Service()))
    assert client.post("/queries", content=MULTI).status_code == 201
    with client.websocket_connect("/queries/Pairs/ws") as live:
        reply = client.post("/streams/elements", params={"stream": "http://ex.org/s"}, content="".join(MULTI_LINES))
        assert reply.status_code == 200, reply.text
        client.post("/streams/advance")
        events = [json.loads(live.receive_text()) for _ in expected]
    got = [json.loads(line) for line in client.get("/queries/Pairs/results").text.splitlines()]
    assert events == expected and got == expected


def test_server_sent_events_read_late_carry_their_own_instants(tmp_path: Path) -> None:
    """The same through a real server's Server-Sent Events, the events read only after every instant
    closed."""
    expected = _multi_expected(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "rsp", "serve", "--port", str(port), "--quiet"], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(base + "/queries", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        httpx.post(base + "/queries", content=MULTI, timeout=10)
        with httpx.stream("GET", base + "/queries/Pairs/events", timeout=20) as events:
            lines = events.iter_lines()
            assert next(lines) == ": connected"
            httpx.post(base + "/streams/elements", params={"stream": "http://ex.org/s"},
                       content="".join(MULTI_LINES), timeout=10)  # fmt: skip
            httpx.post(base + "/streams/advance", timeout=10)
            data = []
            for line in lines:
                if line.startswith("data: "):
                    data.append(json.loads(line[6:]))
                    if len(data) == len(expected):
                        break
        assert data == expected
    finally:
        server.terminate()
        server.wait(timeout=10)


KEPT = """REGISTER QUERY Kept AS
SELECT DISTINCT ?x ?v
FROM STREAM <http://ex.org/a> [RANGE 2s STEP 1s]
WHERE { ?x <http://ex.org/p> ?v }
"""
"""A query whose answers the engine keeps with their texts (each solution once: rsp/io/solution_text.py)."""


@pytest.mark.generated
@settings(max_examples=examples(25), deadline=None)
@given(stream_lines(), st.lists(st.integers(1, 40), max_size=6))
def test_generated_requests_read_late_equal_rsp_run(tmp_path_factory, lines, cuts) -> None:
    """Elements POSTed in any batches (one request may close many instants), the WebSocket's events read
    only after the stream ended, and the stored results: each instant's own answer, as rsp run gives it."""
    lines = [line for line in lines if "oops" not in line]
    if not lines:
        return
    tmp = tmp_path_factory.mktemp("serve")
    (tmp / "q.rq").write_text(KEPT, encoding="utf-8")
    streams = [("http://ex.org/a", lines)]
    with saved_on_failure(GOLDEN_QUERIES, _query_case(KEPT, streams, "rsp serve read late equals rsp run")):
        (tmp / "s.nt").write_text("".join(lines), encoding="utf-8")
        with contextlib.redirect_stderr(io.StringIO()):
            assert (
                main(["run", str(tmp / "q.rq"), "--stream", str(tmp / "s.nt"), "--output", str(tmp / "out")])
                == 0
            )
        # records split at line feeds only: a literal may hold a character str.splitlines cuts at
        expected = [json.loads(line) for line in (tmp / "out").read_text().split("\n") if line]
        client = TestClient(create_app(Service()))
        assert client.post("/queries", content=KEPT).status_code == 201
        bounds = sorted({0, len(lines), *(c % (len(lines) + 1) for c in cuts)})
        with client.websocket_connect("/queries/Kept/ws") as live:
            for start, stop in zip(bounds, bounds[1:], strict=False):
                reply = client.post("/streams/elements", params={"stream": "http://ex.org/a"},
                                    content="".join(lines[start:stop]))  # fmt: skip
                assert reply.status_code == 200, reply.text
            client.post("/streams/advance")
            events = [json.loads(live.receive_text()) for _ in expected]
        got = [json.loads(line) for line in client.get("/queries/Kept/results").text.split("\n") if line]
        assert events == expected
        assert got == expected[-100:]  # the service keeps the last 100 results
