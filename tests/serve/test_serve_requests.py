"""``rsp serve`` facing what a new user sends: a port that cannot be had, bodies no route can read (every
route, every content type: a JSON 4xx, never a 5xx; generated bodies too), a stop by SIGTERM with a live
subscriber, late elements read by several queries, elements sent without their stream or in a type the
service does not read, and state-changing requests from another origin's web page."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT
from starlette.testclient import TestClient

from rsp.cli import main
from rsp.serve.app import create_app
from rsp.serve.service import Service

BUILDING = ROOT / "examples" / "building"
STREAM = "http://example.org/building/temperatures"
TWO = """REGISTER QUERY A AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }
REGISTER QUERY B AS SELECT ?o FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def _server(*options: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """``rsp serve`` on a free port of 127.0.0.1 in a subprocess (stderr piped), once it answers."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "rsp", "serve", "--port", str(port), *options], cwd=ROOT,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                httpx.get(base + "/queries", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield process, base
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=10)


def test_a_port_that_cannot_be_had_is_an_error_before_any_url() -> None:
    for port in ("99999", "-1", "http"):
        done = subprocess.run([sys.executable, "-m", "rsp", "serve", "--port", port], capture_output=True,
                              text=True, timeout=60, cwd=ROOT)  # fmt: skip
        assert done.returncode == 2 and "is not a TCP port (0 to 65535" in done.stderr, done.stderr
        assert "http://" not in done.stderr and "Traceback" not in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run([sys.executable, "-m", "rsp", "serve", "--port", port], capture_output=True,
                              text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr, done.stderr
    assert "http://" not in done.stderr and "Traceback" not in done.stderr


def test_sigterm_with_a_live_subscriber_stops_the_server_cleanly() -> None:
    from websockets.exceptions import ConnectionClosedOK
    from websockets.sync.client import connect

    with _server() as (process, base):
        assert httpx.post(base + "/queries", content=TWO, timeout=10).status_code == 201
        with httpx.stream("GET", base + "/queries/A/events", timeout=20) as events, \
                connect(base.replace("http", "ws") + "/queries/B/ws", open_timeout=10) as socket_:  # fmt: skip
            lines = events.iter_lines()
            assert next(lines) == ": connected"
            process.send_signal(signal.SIGTERM)
            assert [line for line in lines if line] == []  # the subscription ends as the server stops
            with pytest.raises(ConnectionClosedOK):  # the WebSocket is closed normally (code 1000)
                socket_.recv(timeout=20)
        code = process.wait(timeout=20)
        err = process.stderr.read()
    assert code == 0 and "Traceback" not in err and "CancelledError" not in err, err
    assert err.rstrip().endswith("rsp serve: stopped by SIGTERM")


def test_json_bodies_a_route_cannot_read_are_json_4xx() -> None:
    client = TestClient(create_app(Service()), raise_server_exceptions=False)
    for body in ("{oops", '{"x": 1}', "[1]", '{"iri": 5}', '"http://ex.org/s"', "{" * 100_000):
        reply = client.post("/streams", content=body, headers={"Content-Type": "application/json"})
        assert 400 <= reply.status_code < 500 and reply.json()["error"]["message"], (body[:20], reply.text)
    reply = client.post("/streams", content="{oops", headers={"Content-Type": "application/json"})
    assert reply.json()["error"]["position"] == {"source": "<request>", "line": 1, "column": 2}
    for iri in ("not an iri", "<http://ex.org/a b>", "http://ex.org/s>"):
        reply = client.post("/streams", content=iri)
        assert reply.status_code == 400 and "stream IRI" in reply.json()["error"]["message"], reply.text
    assert client.get("/streams").json() == []
    reply = client.post("/streams", content="http://ex.org/s", headers={"Content-Length": "x"})
    assert reply.status_code == 400 and reply.json()["error"]["message"]
    for time_ in ("1" * 5000, "1e3", "-1", "１"):  # more digits than Python reads as an int; not digits
        reply = client.post("/streams/advance", params={"time": time_})
        assert reply.status_code == 400 and "a time in ms" in reply.json()["error"]["message"], reply.text
    client.post("/queries", content=TWO)
    for after in ("1" * 5000, "A/x"):  # an event id resumed after: more digits than Python reads; not one
        for path in ("/queries/A/results", "/queries/A/events"):
            reply = client.get(path, params={"after": after})
            assert reply.status_code == 400 and "an event id" in reply.json()["error"]["message"], reply.text
    assert client.get("/nowhere").json()["error"]["message"] == "Not Found"
    assert client.put("/queries").status_code == 405


def test_a_late_element_read_by_two_queries_is_late_once_as_rsp_run_counts_it(tmp_path: Path) -> None:
    lines = [f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/o{t}> . # {t}\n" for t in (1000, 5000, 1500)]
    (tmp_path / "q.rq").write_text(TWO, encoding="utf-8")
    (tmp_path / "s.nt").write_text("".join(lines), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["run", str(tmp_path / "q.rq"), "--stream", str(tmp_path / "s.nt"), "--output",
                     str(tmp_path / "out")]) == 0  # fmt: skip
    run_late = err.getvalue().count("late element")
    client = TestClient(create_app(Service()))
    client.post("/queries", content=TWO)
    late = [client.post("/streams/elements", params={"stream": "http://ex.org/s"}, content=line).json()["late"]
            for line in lines]  # fmt: skip
    assert run_late == 1 and late == [0, 0, run_late]
    reply = client.post("/streams/elements", params={"stream": "http://ex.org/s"}, content=lines[1] + lines[2] * 2)
    assert reply.json()["late"] == 2  # two late elements in one request, each read by both queries
    assert reply.json()["late_lines"] == [2, 3]  # named by their lines in the request, as rsp run names them


def test_a_request_retried_after_a_restart_gets_the_same_late_lines(tmp_path: Path) -> None:
    """rsp serve --data: the answer to a request key, replayed from the log after a restart, names the
    same late lines as the first answer did."""
    first = Service(data=tmp_path / "data")
    first.register(TWO)
    early = "".join(f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # {t}\n" for t in (1000, 5000))
    late = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/o> . # 1500\n" * 2
    first.push_ntriples("http://ex.org/s", early, "k1")
    answer = first.push_ntriples("http://ex.org/s", late, "k2")
    first.close()
    assert answer["late"] == 2 and answer["late_lines"] == [1, 2]
    again = Service(data=tmp_path / "data")
    try:
        assert again.push_ntriples("http://ex.org/s", late, "k2") == answer
    finally:
        again.close()


def test_elements_without_their_stream_or_in_an_unread_type_are_refused() -> None:
    client = TestClient(create_app(Service()))
    client.post("/queries", content=TWO)
    line = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # 100\n"
    reply = client.post("/streams/elements", content=line)
    assert reply.status_code == 400 and "the parameter stream is missing" in reply.json()["error"]["message"]
    elements = {"params": {"stream": "http://ex.org/s"}}
    reply = client.post("/streams/elements", content="s,p,o\na,b,c\n", headers={"Content-Type": "text/csv"}, **elements)
    message = reply.json()["error"]["message"]
    assert reply.status_code == 415 and "application/n-triples" in message and "application/ld+json" in message
    for kind in ("text/plain", "application/x-www-form-urlencoded", "application/n-triples; charset=utf-8"):
        reply = client.post("/streams/elements", content=line, headers={"Content-Type": kind}, **elements)
        assert reply.status_code == 200 and reply.json()["elements"] == 1, (kind, reply.text)
    jsonld = {"headers": {"Content-Type": "application/ld+json"}, **elements}
    graph = {"@id": "http://ex.org/a", "http://ex.org/p": {"@id": "http://ex.org/b"}}
    cases = [{"time": 1}, {"time": True, "graph": graph}, {"time": 1, "graph": "x"},
             {"time": 1, "graph": graph, "grpah": {}}, {"time": 1, "graph": {"@id": "http://ex.org/a", "name": "x"}}]  # fmt: skip
    for case in cases:
        reply = client.post("/streams/elements", json=case, **jsonld)
        assert reply.status_code == 422 and reply.json()["errors"][0]["position"]["line"] == 1, (case, reply.text)
    assert client.get("/queries/A").json()["closed_until"] is None  # none of them was added
    reply = client.post("/streams/elements", json=[{"time": 1, "graph": graph}], **jsonld)
    assert reply.status_code == 200 and reply.json()["elements"] == 1


def test_json_ld_bodies_naming_a_remote_context_are_refused_and_nothing_is_fetched() -> None:
    """A JSON-LD body whose @context (or @import) is a URL would have the service fetch it (any URL a
    client names, while every other request waits): refused, and no request leaves the service."""
    import http.server
    import threading

    fetched: list[str] = []

    class Context(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            fetched.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/ld+json")
            self.end_headers()
            self.wfile.write(b'{"@context": {"p": "http://ex.org/p"}}')

        def log_message(self, *_args) -> None:
            pass

    remote = http.server.HTTPServer(("127.0.0.1", 0), Context)
    threading.Thread(target=remote.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{remote.server_port}/context"
    try:
        client = TestClient(create_app(Service()))
        client.post("/queries", content=TWO)
        jsonld = {"Content-Type": "application/ld+json"}
        for graph in ({"@context": url, "@id": "http://ex.org/a", "p": "x"},
                      {"@context": [{"q": "http://ex.org/q"}, url], "@id": "http://ex.org/a", "q": "x"},
                      {"@context": {"@import": url}, "@id": "http://ex.org/a", "p": "x"},
                      {"@id": "http://ex.org/a", "http://ex.org/r": {"@context": url, "p": "x"}}):  # fmt: skip
            reply = client.post("/streams/elements", params={"stream": "http://ex.org/s"}, headers=jsonld,
                                json=[{"time": 1, "graph": graph}])  # fmt: skip
            assert reply.status_code == 422 and "remote JSON-LD context" in reply.json()["errors"][0]["message"]
            reply = client.post("/graphs", headers=jsonld, json=graph)
            assert reply.status_code == 400 and "remote JSON-LD context" in reply.json()["error"]["message"]
        inline = {"@context": {"p": "http://ex.org/p"}, "@id": "http://ex.org/a", "p": "x"}
        assert client.post("/graphs", headers=jsonld, json=inline).json() == {"triples": 1}
    finally:
        remote.shutdown()
    assert fetched == []


def test_element_errors_give_the_column_of_the_term_at_fault() -> None:
    client = TestClient(create_app(Service()))
    client.post("/queries", content=TWO)
    body = "<http://ex.org/a> <http://ex.org/p> oops . # 1\n<http://ex.org/a>  <http://ex.org/p> <http://b> . # x2\n"
    reply = client.post("/streams/elements", params={"stream": "http://ex.org/s"}, content=body)
    errors = reply.json()["errors"]
    assert [e["position"]["column"] for e in errors] == [body.index("oops") + 1, body.split("\n")[1].index("x2") + 1]
    assert errors[0]["text"].startswith(f"<request>:1:{body.index('oops') + 1}: expected an IRI")


def test_other_origins_may_not_change_the_service() -> None:
    """A page the user opens elsewhere (another port is another origin) may not POST or DELETE, even a
    "simple" text/plain request; the service's own page and clients that send no Origin may."""
    client = TestClient(create_app(Service()), base_url="http://127.0.0.1:8000")
    query = (BUILDING / "hot-rooms.rq").read_text()
    for headers in ({"Origin": "http://127.0.0.1:9000", "Content-Type": "text/plain"}, {"Origin": "null"},
                    {"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site"}):  # fmt: skip
        for method, path in (("POST", "/queries"), ("POST", "/streams"), ("DELETE", "/streams"),
                             ("POST", "/streams/advance"), ("POST", "/graphs")):  # fmt: skip
            reply = client.request(method, path, content=query, headers=headers)
            assert reply.status_code == 403 and "origin" in reply.json()["error"]["message"], (headers, path)
    assert client.get("/queries").json() == []  # nothing was registered
    own = {"Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "same-origin"}
    assert client.post("/queries", content=query, headers=own).status_code == 201
    assert client.post("/streams", content="http://ex.org/s").status_code == 201  # no Origin: not a browser
    assert client.get("/queries", headers={"Origin": "http://127.0.0.1:9000"}).status_code == 200  # reading


# -- generated bodies on every route ----------------------------------------------------------------------

ROUTES = [("POST", "/queries", {}), ("POST", "/streams", {}), ("DELETE", "/streams", {"iri": STREAM}),
          ("POST", "/streams/elements", {"stream": STREAM}), ("POST", "/streams/advance", {}),
          ("POST", "/queries/HotRooms/advance", {"time": "1000"}), ("POST", "/graphs", {}),
          ("DELETE", "/queries/HotRooms", {})]  # fmt: skip
TYPES = [None, "text/plain", "application/json", "application/ld+json", "application/n-triples", "text/turtle",
         "application/rdf+xml", "application/sparql-query", "application/x-www-form-urlencoded", "text/csv",
         "multipart/form-data; boundary=x", "application/json; charset=latin-1", "\u00e9/\u00e9".encode()]  # fmt: skip


def _valid_bodies() -> list[bytes]:
    from test_serve import _jsonld_elements

    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)[:6]
    return [
        (BUILDING / "hot-rooms.rq").read_bytes(),
        "".join(lines).encode(),
        json.dumps(_jsonld_elements(BUILDING / "temperatures.nt")[:2]).encode(),
        (ROOT / "ontologies" / "building.ttl").read_bytes(),
        json.dumps({"iri": "http://ex.org/s"}).encode(),
        b"http://ex.org/s",
    ]


VALID = _valid_bodies()


@st.composite
def bodies(draw) -> bytes:
    """Random bytes, or a valid body truncated, or mutated (bytes replaced, inserted, deleted)."""
    kind = draw(st.sampled_from(["random", "truncated", "mutated"]))
    if kind == "random":
        return draw(st.binary(max_size=200))
    body = draw(st.sampled_from(VALID))
    if kind == "truncated":
        return body[: draw(st.integers(0, len(body)))]
    data = bytearray(body)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        change = draw(st.sampled_from(["replace", "insert", "delete"]))
        byte = draw(st.sampled_from([*b'{}[]<>"#.:,@\\ \n', 0, 0xFF, 0xC3, *b"0a-"]))
        if change == "insert" or at == len(data):
            data.insert(at, byte)
        elif change == "replace":
            data[at] = byte
        else:
            del data[at]
    return bytes(data)


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None)
@given(bodies(), st.sampled_from(TYPES))
def test_generated_bodies_on_every_route_are_never_a_5xx_and_always_json(body, kind) -> None:
    """One body with one content type sent to every route in turn (the query deleted last)."""
    client = TestClient(create_app(Service("rdfs")), raise_server_exceptions=False)
    assert client.post("/queries", content=(BUILDING / "hot-rooms.rq").read_text()).status_code == 201
    headers = {} if kind is None else {"Content-Type": kind}
    for method, path, params in ROUTES:
        reply = client.request(method, path, params=params, content=body, headers=headers)
        assert reply.status_code < 500, (path, reply.status_code, reply.text)
        if reply.status_code != 204:
            assert reply.headers["content-type"] == "application/json", (path, reply.headers)
            document = reply.json()
            if reply.status_code >= 400:
                assert document["error"]["message"] and document["error"]["text"], (path, document)
