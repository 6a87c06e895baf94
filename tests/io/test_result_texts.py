"""Every result format joins a SELECT instant from each solution's kept text (rsp/io/solution_text.py):
the output must be byte for byte what the writer writes row by row from scratch (``cached = False``,
the code every format had before), over generated instants that hand out the same SharedSolution
objects again (kept texts reused), repeat them (bags), mix them with plain dicts (never kept), change
the variables (kept texts dropped) and use terms with quotes, commas, tabs, line breaks, non-ASCII,
language tags, datatypes, blank nodes and Python numbers and booleans."""

from __future__ import annotations

import io

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp.io.results import AskResult, SelectResult, SharedSolution, make_writer

FORMATS = ["jsonl", "sparql-json", "csv", "tsv", "text"]
NAMES = ("x", "y", "é", "long_name")
XSD = "http://www.w3.org/2001/XMLSchema#"


def _literal(text: str) -> str:
    return (
        '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    )


TERMS = st.one_of(
    st.text(alphabet="ab/é,#_", min_size=1, max_size=5).map(lambda s: f"<http://ex.org/{s}>"),
    st.text(alphabet='ab ,é"\t\n\r\\;', max_size=6).map(_literal),
    st.tuples(st.text(alphabet="ab,\t", max_size=4), st.sampled_from(["en", "fr-BE"])).map(
        lambda t: f"{_literal(t[0])}@{t[1]}"
    ),
    st.tuples(st.integers(-20, 200), st.sampled_from(["integer", "decimal", "double"])).map(
        lambda t: f'"{t[0]}"^^<{XSD}{t[1]}>'
    ),
    st.sampled_from(["_:b1", "_:node7", f'"true"^^<{XSD}boolean>']),
    st.integers(-5, 5),
    st.booleans(),
)
SOLUTIONS = st.dictionaries(st.sampled_from(NAMES), TERMS, max_size=4)


def _write(format: str, instants, variables, prefixes, cached: bool) -> str:
    handle = io.StringIO()
    writer = make_writer(format, handle, variables=variables, query_name="Q", prefixes=prefixes)
    writer.cached = cached
    for time, columns, rows in instants:
        writer.write(SelectResult("Q", time, columns, rows))
    writer.write(AskResult("Q", 99_000, True)) if format != "csv" and format != "tsv" else None
    return handle.getvalue()


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(
    st.sampled_from(FORMATS),
    st.lists(SOLUTIONS, min_size=1, max_size=6),
    st.lists(
        st.tuples(
            st.lists(st.tuples(st.integers(0, 9), st.booleans()), max_size=8),
            st.sampled_from([(), ("x", "y"), ("y", "é", "x"), ("long_name",)]),
        ),
        min_size=1,
        max_size=5,
    ),
    st.booleans(),
    st.booleans(),
)
def test_kept_texts_write_the_same_bytes(format, pool, picks, fixed_columns, prefixed) -> None:
    shared = [SharedSolution(s) for s in pool]
    instants = []
    for i, (choices, columns) in enumerate(picks):
        rows = [shared[k % len(shared)] if keep else dict(pool[k % len(pool)]) for k, keep in choices]
        instants.append((1000 * (i + 1), ("x", "y") if fixed_columns else columns, rows))
    variables = ("x", "y") if fixed_columns else None
    prefixes = {"ex": "http://ex.org/"} if prefixed else None
    assert _write(format, instants, variables, prefixes, cached=True) == _write(
        format, instants, variables, prefixes, cached=False
    )


@pytest.mark.parametrize("format", FORMATS)
def test_a_kept_solution_is_not_written_again(format: str, monkeypatch) -> None:
    """A SharedSolution written at the last instant keeps its text: no row is rebuilt for it."""
    import rsp.io.results as results

    a = SharedSolution(x="<http://ex.org/a>", y='"1"')
    b = SharedSolution(x="_:b", y='"a,\tb"@en')
    handle = io.StringIO()
    writer = make_writer(format, handle, variables=("x", "y"), query_name="Q")
    writer.select(1000, [a, b, a])
    made = []
    for name in ("_row", "_solution_json"):  # every format makes a solution's text through one of them
        original = getattr(results, name)
        monkeypatch.setattr(results, name, lambda v, s, f=original: made.append(s) or f(v, s))
    maker = results._solution_json_maker  # or through the maker of _solution_json for its variables

    def counted_maker(variables):
        make = maker(variables)
        return lambda s: made.append(s) or make(s)

    monkeypatch.setattr(results, "_solution_json_maker", counted_maker)
    writer.select(2000, [b, a])
    assert made == []
    writer.select(3000, [SharedSolution(a), b])  # an equal solution, another object: made once
    assert made == [a]
    lines = handle.getvalue()
    assert lines.count("3000") >= 1 and lines.count("a,") >= 3
