"""The jsonl writer builds each solution's text from its terms' JSON texts (rsp/io/results.py
``_solution_json``): every line must be the bytes ``json.dumps`` gives for the record DESIGN.md §7 defines,
``{"query": …, "time": …, "bindings": [{var: term, …}, …]}`` with unbound variables left out, for any
terms (quotes, backslashes, line breaks, non-ASCII, numbers, booleans) and any variable list."""

from __future__ import annotations

import io
import json

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp.io.results import JsonLinesWriter, SelectResult, SharedSolution, as_term

NAMES = ("x", "y", "é", 'q"', "a b")
TERMS = st.one_of(
    st.text(max_size=6).map(lambda s: f'"{s}"'),
    st.text(alphabet="ab/é\\\n\r\t\"'", max_size=6).map(lambda s: f"<http://e/{s}>"),
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)


def _expected(query: str, time: int, variables: tuple, rows: list[dict]) -> str:
    """The record as DESIGN.md writes it, by json.dumps of the whole record."""
    names = variables or None
    bindings = []
    for row in rows:
        keys = names if names is not None else list(row)
        binding = {}
        for v in keys:
            if row.get(v) is not None:
                text = as_term(row[v])
                binding[v] = text.replace("\n", "\\n").replace("\r", "\\r")
        bindings.append(binding)
    record = {"query": query, "time": time, "bindings": bindings}
    return json.dumps(record, ensure_ascii=False) + "\n"


@pytest.mark.generated
@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from(NAMES), max_size=4),
    st.lists(st.dictionaries(st.sampled_from(NAMES), TERMS, max_size=4), max_size=5),
    st.booleans(),
)
def test_jsonl_lines_are_json_dumps_of_the_record(variables, rows, shared) -> None:
    variables = tuple(variables)
    if shared:
        rows = [SharedSolution(row) for row in rows]
    handle = io.StringIO()
    writer = JsonLinesWriter(handle, variables=variables, query_name="Q")
    for time in (1000, 2000):  # the second instant writes shared solutions from the writer's cache
        writer.write(SelectResult("Q", time, variables, rows))
    # JSON Lines end at "\n" only: str.splitlines would also cut at U+0085, U+2028 and U+2029, which
    # json.dumps(…, ensure_ascii=False) leaves raw inside strings (found by make fuzz)
    lines = [line + "\n" for line in handle.getvalue().split("\n")[:-1]]
    assert lines == [_expected("Q", t, variables, rows) for t in (1000, 2000)]


def test_python_values_equal_in_python_keep_their_own_text() -> None:
    """0.0 and -0.0 (equal, one hash), 1, 1.0 and True: each written as its own term, not as the text of
    an equal value written before (found by make fuzz: -0.0 came out as "0.0")."""
    rows = [{"x": 0.0}, {"x": -0.0}, {"x": 1}, {"x": 1.0}, {"x": True}, {"x": -0.0}]
    handle = io.StringIO()
    writer = JsonLinesWriter(handle, variables=("x",), query_name="Q")
    writer.write(SelectResult("Q", 1000, ("x",), rows))
    assert handle.getvalue() == _expected("Q", 1000, ("x",), rows)
    assert len({json.dumps(as_term(r["x"])) for r in rows}) == len(rows) - 1
