"""A query in a notebook (rsp/io/display.py): readable reprs, HTML tables, results as pandas / Arrow tables
whose rows are the results' solutions, terms turned into the Python values rdflib gives them, and the
example notebook (examples/notebook/) executed from start to end."""

from __future__ import annotations

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import GOLDEN_QUERIES, ROOT

from rsp.io.display import python_value
from rsp.runtime import Engine

XSD = "http://www.w3.org/2001/XMLSchema#"
QUERY = """REGISTER QUERY Hot AS
SELECT ?room ?v FROM STREAM <http://ex.org/temps> [RANGE 2s STEP 1s]
WHERE { ?room <http://ex.org/temp> ?v FILTER(?v > 30) } ORDER BY ?room ?v
"""


def _reading(room: str, value: str, datatype: str = "integer") -> tuple[str, str, str]:
    return f"<http://ex.org/{room}>", "<http://ex.org/temp>", f'"{value}"^^<{XSD}{datatype}>'


def _engine_with_results():
    engine = Engine()
    query = engine.register(QUERY)
    engine.push([_reading("r1", "35"), _reading("r2", "20")], 500)
    engine.push([_reading("r2", "31.5", "decimal")], 1500)
    engine.close()
    return query


def test_reprs_say_what_a_query_and_a_result_hold() -> None:
    query = _engine_with_results()
    first, second = query.results
    assert repr(first) == "<Result Hot at 1000 ms: 1 solution (?room ?v)>"
    assert repr(second) == "<Result Hot at 2000 ms: 2 solutions (?room ?v)>"
    assert repr(query) == "<QueryHandle Hot: SELECT ?room ?v, 1 window, 2 results kept, last at 2000 ms>"


def test_html_tables_hold_every_row_escaped() -> None:
    query = _engine_with_results()
    table = query.results[1]._repr_html_()
    assert table.count("<tr>") == 3  # header and two solutions
    assert "&lt;http://ex.org/r2&gt;" in table and "<th>room</th>" in table
    whole = query._repr_html_()
    assert whole.count("<tr>") == 4 and "<th>time</th>" in whole


def test_to_pandas_rows_are_the_solutions() -> None:
    query = _engine_with_results()
    frame = query.to_pandas()
    assert list(frame.columns) == ["time", "room", "v"]
    expected = [
        (result.time, row["room"][1:-1], python_value(row["v"])) for result in query.results for row in result.bindings
    ]
    assert list(frame.itertuples(index=False, name=None)) == expected == [
        (1000, "http://ex.org/r1", 35), (2000, "http://ex.org/r1", 35), (2000, "http://ex.org/r2", 31.5)
    ]  # fmt: skip
    written = query.to_pandas(terms="ntriples")
    assert written["v"].tolist() == [row["v"] for r in query.results for row in r.bindings]
    assert query.to_arrow().to_pylist() == frame.to_dict("records")
    with pytest.raises(ValueError, match="'python' or 'ntriples'"):
        query.to_pandas(terms="rdflib")


def test_construct_and_ask_results_as_tables() -> None:
    engine = Engine()
    construct = engine.register(QUERY.replace("Hot AS\nSELECT ?room ?v", "C AS\nCONSTRUCT { ?room a <http://ex.org/Hot> }")
                                .replace(" ORDER BY ?room ?v", ""))  # fmt: skip
    ask = engine.register(QUERY.replace("Hot AS\nSELECT ?room ?v", "A AS\nASK").replace(" ORDER BY ?room ?v", ""))
    engine.push([_reading("r1", "35")], 500)
    engine.close()
    assert construct.to_pandas().values.tolist() == [
        [1000, "http://ex.org/r1", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "http://ex.org/Hot"]
    ]
    assert ask.to_pandas().values.tolist() == [[1000, True]]
    assert repr(ask.results[0]) == "<Result A at 1000 ms: true>"


LEXICAL = {
    "integer": st.integers(-(10**12), 10**12).map(str),
    "int": st.integers(-(2**31), 2**31 - 1).map(str),
    "decimal": st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    "double": st.floats(allow_nan=False, allow_infinity=False).map(repr),
    "boolean": st.sampled_from(["true", "false", "1", "0"]),
    "string": st.text(alphabet=st.characters(codec="utf-8", exclude_characters='"\\\n\r'), max_size=8),
}


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(sorted(LEXICAL)).flatmap(lambda t: st.tuples(st.just(t), LEXICAL[t])))
def test_python_values_are_rdflibs(case) -> None:
    """The reference: rdflib's Literal(...).toPython() for the same typed literal."""
    from rdflib import Literal, URIRef

    datatype, lexical = case
    term = f'"{lexical}"^^<{XSD}{datatype}>'
    with saved_on_failure(GOLDEN_QUERIES, lambda: {"term.txt": term + "\n"}):
        expected = Literal(lexical, datatype=URIRef(XSD + datatype)).toPython()
        got = python_value(term)
        if datatype == "decimal":
            expected = float(expected)
        elif datatype == "string":
            expected = str(expected)
        assert got == expected and type(got) is type(expected)


def test_the_example_notebook_runs() -> None:
    """examples/notebook/hot-rooms.ipynb, executed afresh: no error, the table and the plot come out."""
    import nbclient
    import nbformat

    path = ROOT / "examples" / "notebook" / "hot-rooms.ipynb"
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    texts = [o.get("data", {}).get("text/plain", "") for o in outputs]
    assert "8 results kept, last at 40000 ms" in texts[1]
    assert "http://example.org/building#r102" in outputs[2]["data"]["text/html"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
