"""A query's warnings reach the user (issue 42, item 6): what the checks find that is not an error (a
STEP longer than its RANGE, a projected variable never bound) is on the handle (``warnings``), on
stderr of ``rsp run``, ``rsp explain`` and ``rsp spark`` (``--quiet`` silences it) with its position,
and in ``rsp serve``'s answer to ``POST /queries``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rsp.runtime import Engine

QUERY = """REGISTER QUERY Q AS
SELECT ?s ?x
FROM STREAM <http://ex.org/s> [RANGE 1s STEP 5s]
WHERE { ?s ?p ?o }
"""
STEP = "q.rq:3:1: warning: STEP (5000 ms) is larger than RANGE (1000 ms) on <http://ex.org/s>"
UNBOUND = "q.rq:2:11: warning: ?x is projected but the WHERE clause never binds it: it is always unbound"


def test_handles_carry_their_warnings() -> None:
    engine = Engine()
    handle = engine.register(QUERY, "q.rq")
    assert [w.split(": elements")[0] for w in handle.warnings] == [STEP, UNBOUND]
    clean = engine.register(QUERY.replace("Q AS", "R AS").replace("?s ?x", "?s").replace("5s", "1s"), "r.rq")
    assert clean.warnings == ()
    first, second = Engine().register_all(QUERY + QUERY.replace("QUERY Q", "QUERY Q2").replace("?x", "?s"), "q.rq")
    assert len(first.warnings) == 2 and len(second.warnings) == 1 and "?x" not in second.warnings[0]


@pytest.mark.parametrize("command", ["run", "explain"])
def test_commands_print_warnings_unless_quiet(tmp_path, command: str) -> None:
    query = tmp_path / "q.rq"
    query.write_text(QUERY, encoding="utf-8")
    stream = tmp_path / "s.nt"
    stream.write_text("<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # 100\n", encoding="utf-8")
    argv = [sys.executable, "-m", "rsp", command, "q.rq"] + (["--stream", "s.nt"] if command == "run" else [])
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith(STEP) for line in lines), done.stderr
    assert UNBOUND in lines
    if command == "run":
        quiet = subprocess.run(argv + ["--quiet"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert quiet.returncode == 0 and "warning" not in quiet.stderr
        assert quiet.stdout == done.stdout


def test_service_answers_with_the_warnings() -> None:
    from starlette.testclient import TestClient

    from rsp.serve.app import create_app
    from rsp.serve.service import Service

    client = TestClient(create_app(Service()))
    reply = client.post("/queries", content=QUERY)
    assert reply.status_code == 201
    body = reply.json()
    assert body["registered"] == ["Q"]
    warnings = [w.replace("<request>", "q.rq") for w in body["warnings"]]
    assert [w.split(": elements")[0] for w in warnings] == [STEP, UNBOUND]
