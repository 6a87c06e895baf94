"""`rsp run` with several queries (several files, several REGISTER statements in one file), graphs named
by `FROM <http://…>` given locally with `--graph IRI=FILE`, and the refusals when a graph or a single-table
format cannot be honoured. Expected answers are worked out by hand from the streams below."""

from __future__ import annotations

import json
from pathlib import Path

from rsp.cli import main

STREAM = """\
<http://ex/a> <http://ex/p> "1" . # 100
<http://ex/b> <http://ex/p> "2" . # 1200
<http://ex/a> <http://ex/q> <http://ex/c> . # 1500
"""
TWO = """\
REGISTER QUERY A AS SELECT ?s ?o FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/p> ?o }
REGISTER QUERY B AS SELECT (COUNT(*) AS ?n) FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?s ?p ?o }
"""
LABELS_IRI = "http://host.example/labels.ttl"
GRAPH_QUERY = f"""\
PREFIX ex: <http://ex/>
REGISTER QUERY G AS SELECT ?s ?l FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] FROM <{LABELS_IRI}>
WHERE {{ ?s ex:p ?o . ?s ex:label ?l }}
"""
INT = "^^<http://www.w3.org/2001/XMLSchema#integer>"


def _files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "s.nt": STREAM,
        "two.rq": TWO,
        "g.rq": GRAPH_QUERY,
        "labels.ttl": '<http://ex/a> <http://ex/label> "A" .\n',
        "a.rq": TWO.splitlines()[0] + "\n",
        "b.rq": TWO.splitlines()[1] + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return {name: tmp_path / name for name in files}


def _run(capsys, *argv: object) -> tuple[int, list[dict], str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


# Query A at 1000 sees (0,1000]: a p "1"; at 2000 (1000,2000]: b p "2".
# Query B counts (t-2000, t]: 1 triple at 1000, 3 at 2000.
EXPECTED = [
    ("A", 1000, [{"s": "<http://ex/a>", "o": '"1"'}]),
    ("B", 1000, [{"n": f'"1"{INT}'}]),
    ("A", 2000, [{"s": "<http://ex/b>", "o": '"2"'}]),
    ("B", 2000, [{"n": f'"3"{INT}'}]),
]


def _triples(records: list[dict]) -> list[tuple]:
    return [(r["query"], r["time"], r["bindings"]) for r in records]


def test_several_register_statements_in_one_file_each_answer(capsys, tmp_path: Path) -> None:
    f = _files(tmp_path)
    code, records, _ = _run(capsys, "run", f["two.rq"], "--stream", f["s.nt"])
    assert code == 0
    assert _triples(records) == EXPECTED


def test_several_query_files_in_one_run_equal_one_file_with_both(capsys, tmp_path: Path) -> None:
    f = _files(tmp_path)
    code, records, _ = _run(capsys, "run", f["a.rq"], f["b.rq"], "--stream", f["s.nt"])
    assert code == 0
    assert _triples(records) == EXPECTED
    # each query alone gives its own records, the same as in the shared run
    code, alone, _ = _run(capsys, "run", f["b.rq"], "--stream", f["s.nt"])
    assert code == 0
    assert _triples(alone) == [e for e in EXPECTED if e[0] == "B"]


def test_remote_from_graph_given_locally_with_graph_option(capsys, tmp_path: Path) -> None:
    f = _files(tmp_path)
    code, records, _ = _run(
        capsys, "run", f["g.rq"], "--stream", f["s.nt"], "--graph", f"{LABELS_IRI}={f['labels.ttl']}"
    )
    assert code == 0
    # a has label "A" and p "1" at 1000; b (at 2000) has no label
    assert _triples(records) == [("G", 1000, [{"s": "<http://ex/a>", "l": '"A"'}]), ("G", 2000, [])]


def test_remote_from_graph_without_local_file_is_refused_naming_the_iri(capsys, tmp_path: Path) -> None:
    f = _files(tmp_path)
    code, records, err = _run(capsys, "run", f["g.rq"], "--stream", f["s.nt"])
    assert code == 2
    assert records == []
    assert f"FROM <{LABELS_IRI}>" in err  # the IRI intact, not a mangled local path
    assert "http:/host" not in err.replace("http://host", "")
    assert f"--graph {LABELS_IRI}=FILE" in err
    assert "never fetches" in err


def test_single_table_format_refuses_several_queries(capsys, tmp_path: Path) -> None:
    f = _files(tmp_path)
    code = main(["run", str(f["two.rq"]), "--stream", str(f["s.nt"]), "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "A, B" in err and "--format jsonl" in err
