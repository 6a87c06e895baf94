"""A result is a value when it is emitted (docs/api.md): whoever formats it, however late, in whatever
format, writes the answer of its own instant. Generated streams are pushed in random batches (one
element per call up to everything in one call, so that one call closes several instants), every
result is kept and written after the whole stream in every format, and the output must equal that of
the same queries fed one element at a time and written at once (what ``rsp run`` does)."""

from __future__ import annotations

import io

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp.io.results import make_writer
from rsp.runtime import Engine

PREFIX = "PREFIX ex: <http://ex.org/>\n"
SOURCE = "FROM STREAM <http://ex.org/s> [RANGE {range} STEP {step}]"
FORMS = {
    "all": "REGISTER QUERY All AS SELECT ?s ?o {source} WHERE {{ ?s ex:p ?o }}",
    "distinct": "REGISTER QUERY Distinct AS SELECT DISTINCT ?s {source} WHERE {{ ?s ex:p ?o }}",
    "bag": "REGISTER QUERY Bag AS SELECT ?s {source} WHERE {{ ?s ex:p ?o }}",
    "ordered": "REGISTER QUERY Ordered AS SELECT ?o ?s {source} WHERE {{ ?s ex:p ?o }} ORDER BY DESC(?o) LIMIT 3",
    "count": "REGISTER QUERY Count AS SELECT ?s (COUNT(*) AS ?n) {source} WHERE {{ ?s ex:p ?o }} GROUP BY ?s",
    "istream": "REGISTER ISTREAM Fresh AS SELECT ?s ?o {source} WHERE {{ ?s ex:p ?o }}",
    "dstream": "REGISTER DSTREAM Gone AS SELECT DISTINCT ?s {source} WHERE {{ ?s ex:p ?o }}",
    "construct": "REGISTER QUERY Built AS CONSTRUCT {{ ?o ex:of ?s }} {source} WHERE {{ ?s ex:p ?o }}",
    "ask": "REGISTER QUERY Any AS ASK {source} WHERE {{ ?s ex:p ex:o1 }}",
}
FORMATS = ("jsonl", "sparql-json", "csv", "tsv", "text")


def _register(engine: Engine, form: str, range_: str, step: str):
    text = PREFIX + FORMS[form].format(source=SOURCE.format(range=range_, step=step))
    return engine.register(text)


def _write(results, handle, fmt: str) -> str:
    out = io.StringIO()
    writer = make_writer(_format(fmt, handle), out, variables=handle.variables, query_name=handle.name)
    for result in results:
        writer.write(result)
    writer.close()
    return out.getvalue()


def _format(fmt: str, handle) -> str:
    return "ntriples" if fmt == "text" and handle.query.form.__class__.__name__ == "Construct" else fmt


@st.composite
def cases(draw: st.DrawFn):
    times = sorted(draw(st.lists(st.integers(0, 6000), min_size=1, max_size=25)))
    elements = [
        (t, (f"<http://ex.org/a{draw(st.integers(0, 3))}>", "<http://ex.org/p>", f"<http://ex.org/o{draw(st.integers(0, 3))}>"))
        for t in times
    ]
    cuts = sorted(set(draw(st.lists(st.integers(1, len(elements)), max_size=4))))
    window = draw(st.sampled_from((("1s", "1s"), ("2s", "1s"), ("1s", "500ms"), ("3s", "TUMBLING"))))
    return elements, cuts, window


def _run(forms, elements, window, cuts=None):
    """Results of each query (kept, unwritten), and what a writer at once gave, per format."""
    range_, step = window
    engine = Engine()
    handles = []
    for form in forms:
        if step == "TUMBLING":
            text = PREFIX + FORMS[form].format(source=f"FROM STREAM <http://ex.org/s> [RANGE {range_} TUMBLING]")
            handles.append(engine.register(text))
        else:
            handles.append(_register(engine, form, range_, step))
    kept = {h.name: [] for h in handles}
    at_once = {}
    for h in handles:
        h.keep = False
        h.subscribe(kept[h.name].append)
        for fmt in FORMATS:
            out = io.StringIO()
            writer = make_writer(_format(fmt, h), out, variables=h.variables, query_name=h.name)
            at_once[h.name, fmt] = (writer, out)
            h.subscribe(writer.write)
    if cuts is None:  # one element per call
        for t, triple in elements:
            engine.push([triple], t)
    else:
        bounds = [0, *cuts, len(elements)]
        for a, b in zip(bounds, bounds[1:], strict=False):
            if a < b:
                engine.push_sorted([t for t, _ in elements[a:b]], [tr for _, tr in elements[a:b]])
    engine.close()
    written = {}
    for key, (writer, out) in at_once.items():
        writer.close()
        written[key] = out.getvalue()
    return handles, kept, written


@pytest.mark.generated
@settings(max_examples=examples(150), deadline=None)
@given(cases())
def test_results_written_late_equal_results_written_at_once(case) -> None:
    elements, cuts, window = case
    forms = list(FORMS)
    _, _, reference = _run(forms, elements, window)
    handles, kept, written = _run(forms, elements, window, cuts)
    for handle in handles:
        for fmt in FORMATS:
            late = _write(kept[handle.name], handle, fmt)
            assert late == reference[handle.name, fmt], (handle.name, fmt, "written late")
            assert written[handle.name, fmt] == reference[handle.name, fmt], (handle.name, fmt, "at once")


def test_one_call_closing_five_instants_gives_each_its_own_answer() -> None:
    """The service's multi-instant case through the API: ten elements 500 ms apart in one call."""
    elements = [(i * 500, (f"<http://ex.org/a{i}>", "<http://ex.org/p>", f"<http://ex.org/o{i}>")) for i in range(10)]
    handles, kept, _ = _run(["all"], elements, ("1s", "1s"), cuts=[])
    (handle,) = handles
    lines = _write(kept[handle.name], handle, "jsonl").splitlines()
    assert len(lines) == 5
    for k, line in enumerate(lines):  # the instant at (k+1) s holds the elements of [k s, (k+1) s)
        assert f'"time": {(k + 1) * 1000}' in line
        assert f"<http://ex.org/a{2 * k}>" in line and f"<http://ex.org/a{2 * k + 1}>" in line
        assert line.count("<http://ex.org/a") == 2
