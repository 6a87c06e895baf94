"""Generated differential tests of ``rsp run`` itself against the query reference (tests/oracles/query_oracle.py).

tests/query/test_query_differential.py pushes each element through the Python API; here the same generated
stream files (out of order, lines of one time, late lines, several files and streams, blank nodes) are
written to disk and replayed by the command, with one or two queries per run, so that what only the
command does is checked too: how it reads and batches lines, merges files, reports late lines (each late
line once, with its own line number, whatever the number of queries) and writes each query's results.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
import query_oracle
import test_query_differential as qd
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT
from query_golden import (
    GOLDEN_QUERIES,
    case_files,
    label_map,
    oracle,
    records,
    relabel,
    same_answers,
    step_of,
)

from rsp.cli import main
from rsp.query.syntax.parser import parse_query

QUERIES = {f"one/{name}": text for name, text in qd.ONE_STREAM.items()} | {
    f"two/{name}": text for name, text in qd.TWO_STREAMS.items()
}


def _late_lines(texts: list[str], files: list[tuple[str, list]]) -> set[tuple[int, int]]:
    """(file index, line index) of every line late for at least one of the queries (DESIGN.md §3)."""
    arrivals = query_oracle.merged([elements for _iri, elements in files])
    times = [time for _index, time, _triple in arrivals]
    # the line of each arrival: the files are each read in their own order
    seen = [0] * len(files)
    lines = []
    for index, _time, _triple in arrivals:
        lines.append((index, seen[index]))
        seen[index] += 1
    late: set[tuple[int, int]] = set()
    for text in texts:
        read = _streams(text)  # a query's clock sees the streams it reads only
        mine = [i for i, (index, _t, _x) in enumerate(arrivals) if files[index][0] in read]
        late_indices, _first, _last = query_oracle.timeline(
            [times[i] for i in mine], step_of(parse_query(text))
        )
        late |= {lines[mine[i]] for i in late_indices}
    return late


def _streams(text: str) -> set[str]:
    return {w.stream for w in parse_query(text).windows}


def check_run(texts: list[str], files: list[tuple[str, list]], regime: str) -> None:
    """``rsp run`` of the queries (named T, U) over the files equals the reference query by query."""
    texts = [
        text.replace("REGISTER QUERY T ", f"REGISTER QUERY {name} ", 1)
        for text, name in zip(texts, "TU", strict=False)
    ]
    per_stream: dict[str, int] = {}
    for iri, _elements in files:
        per_stream[iri] = per_stream.get(iri, 0) + 1
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        argv = [
            "run",
            "--entailment",
            regime,
            "--ontology",
            str(ROOT / qd.ONTOLOGY_PATH),
            "-o",
            str(tmp / "out"),
        ]
        for i, text in enumerate(texts):
            (tmp / f"q{i}.rq").write_text(text, encoding="utf-8")
            argv.insert(1 + i, str(tmp / f"q{i}.rq"))
        sources = []
        for i, (iri, elements) in enumerate(files):
            path = tmp / f"stream{i}.nt"
            path.write_text("".join(f"{s} {p} {o} . # {t}\n" for t, (s, p, o) in elements), encoding="utf-8")
            argv += ["--stream", f"{iri.strip('<>')}={path}"]
            sources.append(iri if per_stream[iri] == 1 else f"{iri} {path}")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(argv) == 0, err.getvalue()
        written = [json.loads(line) for line in (tmp / "out").read_text(encoding="utf-8").splitlines()]
        names = [str(tmp / f"stream{i}.nt") for i in range(len(files))]
    about = "found by make fuzz (tests/cli/test_cli_differential.py); expected answers from tests/oracles/query_oracle.py"
    for text, name in zip(texts, "TU", strict=False):
        mine = [i for i, (iri, _elements) in enumerate(files) if iri in _streams(text)]
        read = [files[i] for i in mine]

        def case(text: str = text, read: list = read) -> dict[str, str]:
            return case_files(text, read, regime, qd.ONTOLOGY_PATH, about)

        with saved_on_failure(GOLDEN_QUERIES, case):
            expected, _late = oracle(text, read, regime, qd._STATIC)
            prefixes = label_map([sources[i] for i in mine])  # the reference numbers the files it reads
            ours = [relabel(r, prefixes) for r in written if r.get("query", name) == name]
            for record in ours:
                record.pop("query", None)
            same_answers(ours, records(text, expected), ordered=False)
    reported = set()
    for line in err.getvalue().splitlines():
        if "late element at time" in line:
            path, number = line.split(":")[:2]
            reported.add((names.index(path), int(number) - 1))
    assert reported == _late_lines(texts, files), err.getvalue()


@pytest.mark.generated
@settings(max_examples=examples(25), deadline=None)
@given(
    st.lists(qd.stream_file(st.sampled_from([False, False, True])), min_size=2, max_size=3),
    st.lists(st.sampled_from(sorted(QUERIES)), min_size=1, max_size=2),
    qd.REGIMES,
)
def test_generated_rsp_run_equals_the_reference(files, names: list[str], regime: str) -> None:
    """One or two queries per run over two or three stream files on the streams A and B (all on A when
    every query reads A alone)."""
    # a query of one stream reads A only (rsp run refuses a stream no query reads)
    two = any(name.startswith("two/") for name in names)
    streams = [qd.A_STREAM, qd.B_STREAM, qd.A_STREAM] if two else [qd.A_STREAM] * 3
    check_run([QUERIES[name] for name in names], list(zip(streams, files, strict=False)), regime)


def test_two_queries_and_late_lines_of_one_time() -> None:
    """A fixed case of what the generated test reaches: two lines at 0 after one at 2000 (the second is
    late), a late line at 500, two queries of different steps, one file."""
    a = qd.element(1, 0, 1)
    b = qd.element(2, 1, 3)
    elements = [(2000, a), (0, b), (0, qd.element(1, 2, 4)), (500, b), (2500, qd.element(0, 3, 1))]
    check_run([QUERIES["one/bgp-entailment"], QUERIES["one/step-500ms"]], [(qd.A_STREAM, elements)], "rdfs")
