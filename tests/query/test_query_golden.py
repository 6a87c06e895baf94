"""Golden continuous-query cases (tests/golden/queries/, format in tests/support/query_golden.py): ``rsp run`` on
each case's files gives the answers and the late count the reference computed; the cases ``make fuzz``
saves there (``fuzz-*``) run the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from query_golden import (
    GOLDEN_QUERIES,
    case_names,
    in_answer_order,
    label_map,
    load_case,
    named_graphs,
    oracle,
    records,
    relabel,
    same_answers,
    static_triples,
)

from rsp.cli import main
from rsp.query.syntax.ast import Select
from rsp.query.syntax.parser import parse_query
from rsp.query.syntax.validate import select_vars


def _expected(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "expected.jsonl").read_text(encoding="utf-8").splitlines()]


KNOWN_DISAGREEMENTS: dict[str, str] = {
    # case name -> why rsp and the reference disagree (a strict expected failure); none today
}


def _cases() -> list:
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DISAGREEMENTS[name]))
        if name in KNOWN_DISAGREEMENTS
        else name
        for name in case_names()
    ]


@pytest.mark.parametrize("name", _cases())
def test_rsp_run_gives_the_golden_answers(name: str, capsys, tmp_path: Path) -> None:
    folder = GOLDEN_QUERIES / name
    text, case, _files, ontology = load_case(folder)
    argv = ["run", str(folder / "query.rq"), "--entailment", case["entailment"], "-o", str(tmp_path / "out")]
    files_per_stream: dict[str, int] = {}
    for iri, _file in case["streams"]:
        files_per_stream[iri] = files_per_stream.get(iri, 0) + 1
    sources = []
    for iri, file in case["streams"]:
        path = str(folder / file)
        argv += ["--stream", f"{iri}={path}"]
        # rsp run's blank-node scope of a file: its stream, or the file when the stream has several
        sources.append(iri if files_per_stream[iri] == 1 else f"{iri} {path}")
    if ontology is not None:
        argv += ["--ontology", str(ontology)]
    for iri, file in case.get("graphs", {}).items():
        argv += ["--graph", f"{iri}={folder / file}"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    prefixes = label_map(sources)
    written = [json.loads(line) for line in (tmp_path / "out").read_text().splitlines()]
    form = parse_query(text).form
    variables = select_vars(form) if isinstance(form, Select) else ()
    in_answer_order(
        written, variables, order_by=bool(getattr(form, "modifiers", None) and form.modifiers.order_by)
    )
    ours = [relabel(record, prefixes) for record in written]
    same_answers(ours, _expected(folder), ordered="ORDER BY" in text.upper())
    late = [line for line in err.splitlines() if "late element at time" in line]
    assert len(late) == case["late"], err


@pytest.mark.parametrize("name", case_names())
def test_golden_answers_are_the_references(name: str) -> None:
    """expected.jsonl and the late count are what the oracle computes from the case's files today."""
    folder = GOLDEN_QUERIES / name
    text, case, files, ontology = load_case(folder)
    answers, late = oracle(
        text, files, case["entailment"], static_triples(ontology), named_graphs(folder, case)
    )
    assert late == case["late"]
    same_answers(records(text, answers), _expected(folder), ordered="ORDER BY" in text.upper())


def test_the_defects_of_issue_13_are_golden_cases() -> None:
    assert {
        "out-of-order-is-not-late",
        "late-after-a-closed-instant",
        "triples-window-in-time-order",
        "two-streams-out-of-order",
        "blank-nodes-two-files",
        "blank-nodes-one-stream-across-elements",
        "blank-nodes-two-named-windows",
        "blank-nodes-stream-and-static-graph",
        "select-star-in-scope",
        "out-of-order-entailment",
    } <= set(case_names())
