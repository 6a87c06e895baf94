"""``rsp serve`` (rsp/serve/): queries registered over HTTP give, for elements POSTed to their stream,
the results ``rsp run`` gives on the same stream file (the reference); bad elements refuse the whole
request with positioned JSON errors; the token guards every change; live results arrive by WebSocket
and, on a real uvicorn server, by Server-Sent Events."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from rsp.serve.app import create_app
from rsp.serve.service import Service

ROOT = Path(__file__).resolve().parents[1]
BUILDING = ROOT / "examples" / "building"
STREAM = "http://example.org/building/temperatures"


def _expected() -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(BUILDING / "hot-rooms.rq"), "--stream",
         str(BUILDING / "temperatures.nt"), "--ontology", str(ROOT / "ontologies" / "building.ttl"),
         "--entailment", "rdfs"], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def _client(token: str | None = None, **options) -> TestClient:
    service = Service("rdfs")
    service.engine.load_ontology(ROOT / "ontologies" / "building.ttl")
    return TestClient(create_app(service, token, **options))


def test_posted_elements_give_rsp_runs_results() -> None:
    client = _client()
    reply = client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text())
    assert reply.status_code == 201 and reply.json() == {"registered": ["HotRooms"]}
    assert client.get("/streams").json() == [STREAM]
    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    with client.websocket_connect("/queries/HotRooms/ws") as live:
        for start in range(0, len(lines), 7):  # batches of 7 lines, as a feeder would send them
            reply = client.post("/streams/elements", params={"stream": STREAM}, content="".join(lines[start:start + 7]))
            assert reply.status_code == 200, reply.text
        first = json.loads(live.receive_text())
    expected = _expected()
    # instants close as elements come; the last ones close when the stream ends (rsp run's end of file)
    client.app.state.service.engine.close()
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
    assert error["position"] == {"source": "<request>", "line": 2, "column": 0}
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
