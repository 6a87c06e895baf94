"""Explanations of answers read through count windows (``[TRIPLES n]``): each stream triple an
explanation cites comes with the stream it was read from and the times of exactly those elements of the
count window at the instant that hold it, checked against the window written from its definition
(DESIGN.md §5: the last n elements of that stream before the instant), and the cited triples give the
answer again. Fixed cases, the ``rsp run --explain`` output, and generated streams on one and two
streams."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from query_golden import GOLDEN_QUERIES, case_files

from rsp.cli import main
from rsp.runtime import Engine

EX = "http://ex.org/"
S1, S2 = f"<{EX}s1>", f"<{EX}s2>"
PREFIX = f"PREFIX ex: <{EX}>\n"


def iri(name: str) -> str:
    return f"<{EX}{name}>"


def count_window(elements: list[tuple[int, str, tuple]], stream: str, n: int, instant: int) -> list:
    """The reference: the last n elements (time, triple) of ``stream`` before ``instant``, elements in
    time order (stable for equal times, as they arrive)."""
    before = [(t, triple) for t, s, triple in elements if s == stream and t < instant]
    return before[-n:]


def _bgp_matches(patterns: list[tuple[str, str, str]], bindings: dict[str, str]) -> set[tuple]:
    """The triples the basic graph pattern instantiates to under ``bindings``."""
    return {
        tuple(bindings.get(term[1:], term) if term.startswith("?") else term for term in p) for p in patterns
    }


def check_explanations(
    text: str, elements: list[tuple[int, str, tuple]], windows: dict[str, int], patterns: list
) -> int:
    """Run the query pushing ``elements`` (time order) and check every answer's explanation against the
    reference count windows; returns how many answers were checked."""
    engine = Engine()
    handle = engine.register(text, "q.rq")
    checked = [0]

    def on_result(result) -> None:
        contents = {s: count_window(elements, s, n, result.time) for s, n in windows.items()}
        explanations = handle.explain_result(result, limit=None)
        assert len(explanations) == len({json.dumps(b, sort_keys=True) for b in result.bindings})
        for explanation in explanations:
            cited = set()
            for stream, triple, time in explanation.stream_triples():
                window = contents[stream]
                times = [t for t, held in window if held == triple]
                assert time in times, (stream, triple, time, window)
                cited.add((stream, triple))
            for stream, triple in cited:
                wanted = sorted({t for t, held in contents[stream] if held == triple})  # times, once each
                given_times = sorted(
                    t for s, tr, t in explanation.stream_triples() if (s, tr) == (stream, triple)
                )
                assert given_times == wanted, (stream, triple, given_times, wanted)
            # the cited triples are the pattern instantiated by the answer: they give it again
            assert {triple for _s, triple in cited} == _bgp_matches(patterns, explanation.answer)
            checked[0] += 1

    handle.subscribe(on_result)
    for time, stream, triple in elements:
        engine.push([triple], time, stream)
    engine.close()
    return checked[0]


ONE_STREAM = (
    "REGISTER QUERY Last AS\n" + PREFIX + "SELECT ?s ?v\n"
    f"FROM STREAM {S1} [TRIPLES 3]\n"
    "WHERE { ?s ex:v ?v }"
)


def test_repeated_triple_cites_every_element_holding_it() -> None:
    a = (iri("a"), iri("v"), '"1"')
    b = (iri("b"), iri("v"), '"2"')
    elements = [(100, S1, a), (1200, S1, b), (1500, S1, a), (2500, S1, b), (2600, S1, b), (3100, S1, a)]
    assert check_explanations(ONE_STREAM, elements, {S1: 3}, [("?s", iri("v"), "?v")]) == 7
    engine = Engine()
    handle = engine.register(ONE_STREAM, "q.rq")
    seen = {}
    handle.subscribe(lambda r: seen.update({r.time: handle.explain_result(r, limit=None)}))
    for time, stream, triple in elements:
        engine.push([triple], time, stream)
    engine.close()
    # at 2000 the window holds a@100, b@1200, a@1500: a is cited with both its elements
    [for_a] = [e for e in seen[2000] if e.answer == {"s": iri("a"), "v": '"1"'}]
    assert for_a.stream_triples() == [(S1, a, 100), (S1, a, 1500)]
    # at 3000 the last three are a@1500, b@2500, b@2600: a@100 has left the window
    [for_a] = [e for e in seen[3000] if e.answer == {"s": iri("a"), "v": '"1"'}]
    assert for_a.stream_triples() == [(S1, a, 1500)]


TWO_STREAMS = (
    "REGISTER QUERY Join AS\n" + PREFIX + "SELECT ?a ?b ?v\n"
    f"FROM NAMED WINDOW ex:w1 ON {S1} [TRIPLES 2]\n"
    f"FROM NAMED WINDOW ex:w2 ON {S2} [TRIPLES 3]\n"
    "WHERE { WINDOW ex:w1 { ?a ex:p ?b } WINDOW ex:w2 { ?b ex:q ?v } }"
)
TWO_PATTERNS = [("?a", iri("p"), "?b"), ("?b", iri("q"), "?v")]


def test_join_of_two_count_windows_names_each_stream() -> None:
    elements = [
        (100, S1, (iri("a"), iri("p"), iri("b"))),
        (300, S2, (iri("b"), iri("q"), '"7"')),
        (1100, S2, (iri("c"), iri("q"), '"8"')),
        (1300, S1, (iri("a"), iri("p"), iri("c"))),
        (2400, S1, (iri("d"), iri("p"), iri("e"))),
        (2500, S2, (iri("e"), iri("q"), '"9"')),
    ]
    assert check_explanations(TWO_STREAMS, elements, {S1: 2, S2: 3}, TWO_PATTERNS) >= 5


def test_run_explain_text_gives_the_element_times(tmp_path: Path, capsys) -> None:
    (tmp_path / "q.rq").write_text(ONE_STREAM)
    lines = [
        f'{iri("a")} {iri("v")} "1" . # 100',
        f'{iri("b")} {iri("v")} "2" . # 1200',
        f'{iri("a")} {iri("v")} "1" . # 1500',
    ]
    (tmp_path / "s.nt").write_text("\n".join(lines) + "\n")
    status = main(
        ["run", str(tmp_path / "q.rq"), "--stream", str(tmp_path / "s.nt"), "--explain", "--format", "text"]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert 'ex:a ex:v "1"  [stream ex:s1 @ 100 ms, 1500 ms, window q.rq:4:1]' in out
    assert "c0(" not in out  # the count window's own predicate is not shown as a condition
    status = main(["run", str(tmp_path / "q.rq"), "--stream", str(tmp_path / "s.nt"), "--explain"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    triples = [t for e in records[-1]["explanations"] for t in e["triples"]]
    assert {"stream": S1, "triple": f'{iri("a")} {iri("v")} "1" .', "time": 1500} in triples


_node = st.sampled_from([iri(f"n{k}") for k in range(4)])
_elements = st.lists(
    st.tuples(
        st.integers(0, 4000),
        st.sampled_from([S1, S2]),
        st.one_of(st.tuples(_node, st.just(iri("p")), _node), st.tuples(_node, st.just(iri("q")), _node)),
    ),
    min_size=1,
    max_size=14,
).map(lambda es: sorted(es, key=lambda e: e[0]))


@pytest.mark.generated
@settings(max_examples=examples(40), deadline=None)
@given(elements=_elements, n1=st.integers(1, 4), n2=st.integers(1, 4))
def test_generated_count_window_explanations(elements, n1: int, n2: int) -> None:
    text = TWO_STREAMS.replace(f"{S1} [TRIPLES 2]", f"{S1} [TRIPLES {n1}]")
    text = text.replace(f"{S2} [TRIPLES 3]", f"{S2} [TRIPLES {n2}]")
    files = [(stream, [(t, triple) for t, s, triple in elements if s == stream]) for stream in (S1, S2)]
    with saved_on_failure(
        GOLDEN_QUERIES, lambda: case_files(text, files, "none", None, "count-window explain")
    ):
        check_explanations(text, elements, {S1: n1, S2: n2}, TWO_PATTERNS)
