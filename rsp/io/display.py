"""How queries and their results look in a notebook or a REPL: short ``repr``s, HTML tables
(``_repr_html_``) and results as tables (pandas ``DataFrame``, Arrow ``Table``); the terms as Python
values (numbers, booleans, strings) for plotting.

>>> python_value('"21.5"^^<http://www.w3.org/2001/XMLSchema#decimal>')
21.5
>>> python_value("<http://ex.org/r1>")
'http://ex.org/r1'
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from rsp.extras import require
from rsp.io.terms import XSD

_INTEGER_TYPES = (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "negativeInteger",
    "nonPositiveInteger", "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte",
)  # fmt: skip
_INTEGERS = {XSD + name for name in _INTEGER_TYPES}
_FLOATS = {f"{XSD}decimal", f"{XSD}double", f"{XSD}float"}
MAX_ROWS = 20
"""Rows an HTML table shows (the rest are counted)."""


def python_value(term: str | None):
    """An N-Triples term as a Python value: numbers and booleans as such, IRIs without brackets, blank
    nodes as ``_:label``, other literals as their text; None stays None (unbound)."""
    if term is None:
        return None
    from rsp.io.terms import decode_term

    try:
        kind, value, _language, datatype = decode_term(term)
    except ValueError:
        return term
    if kind == "bnode":
        return term
    if kind == "literal" and datatype is not None:
        try:
            if datatype in _INTEGERS:
                return int(value)
            if datatype in _FLOATS:
                return float(value)
        except ValueError:
            return value
        if datatype == f"{XSD}boolean":
            return value in ("true", "1")
    return value


def result_rows(result) -> tuple[list[str], list[list]]:
    """The columns and rows of one result (N-Triples terms): bindings, CONSTRUCT triples or a boolean."""
    if result.bindings is not None:
        variables = list(result.variables) or sorted({v for row in result.bindings for v in row})
        return variables, [[row.get(v) for v in variables] for row in result.bindings]
    if result.triples is not None:
        from rsp.io.ntriples import as_triple

        return ["subject", "predicate", "object"], [list(as_triple(t)) for t in result.triples]
    return ["boolean"], [[f"\"{str(result.boolean).lower()}\"^^<{XSD}boolean>"]]


def result_repr(result) -> str:
    """``<Result HotRooms at 10000 ms: 2 solutions (?room ?max)>``"""
    if result.bindings is not None:
        plural = "" if len(result.bindings) == 1 else "s"
        names = " ".join(f"?{v}" for v in result.variables)
        what = f"{len(result.bindings)} solution{plural}" + (f" ({names})" if names else "")
    elif result.triples is not None:
        what = f"{len(result.triples)} triple{'' if len(result.triples) == 1 else 's'}"
    else:
        what = str(result.boolean).lower()
    return f"<Result {result.query} at {result.time} ms: {what}>"


def _table(columns: list[str], rows: Iterable[list], total: int, caption: str) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{'' if v is None else html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in rows
    )
    more = f"<p>… {total - MAX_ROWS} more row(s)</p>" if total > MAX_ROWS else ""
    return (
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>{more}"
    )


def result_html(result) -> str:
    """One result as an HTML table (at most :data:`MAX_ROWS` rows)."""
    columns, rows = result_rows(result)
    return _table(columns, rows[:MAX_ROWS], len(rows), result_repr(result)[1:-1])


def handle_repr(handle) -> str:
    """``<QueryHandle HotRooms: SELECT ?room ?max, 2 windows, 7 results, last at 35000 ms>``"""
    form = type(handle.query.form).__name__.upper()
    names = " ".join(f"?{v}" for v in handle.variables)
    count = len(handle.results)
    last = f", last at {handle.results[-1].time} ms" if handle.results else ""
    windows = len(handle.query.windows)
    return (
        f"<QueryHandle {handle.name}: {form}{' ' + names if names else ''}, {windows} window"
        f"{'' if windows == 1 else 's'}, {count} result{'' if count == 1 else 's'} kept{last}>"
    )


def handle_html(handle) -> str:
    """The query's latest results as one table with a ``time`` column (the last :data:`MAX_ROWS` rows)."""
    columns, rows = results_table(handle.results)
    shown = rows[-MAX_ROWS:]
    return _table(columns, shown, len(rows), handle_repr(handle)[1:-1])


def results_table(results) -> tuple[list[str], list[list]]:
    """Every result as rows of one table: ``time`` and the result's columns (N-Triples terms)."""
    columns: list[str] | None = None
    rows: list[list] = []
    for result in results:
        names, part = result_rows(result)
        columns = columns or names
        rows.extend([result.time, *row] for row in part)
    if columns is None:
        return ["time"], []
    return ["time", *columns], rows


def to_pandas(results, terms: str = "python"):
    """The results as a pandas DataFrame, one row per solution (triple, boolean) with its ``time`` in
    ms; ``terms="python"`` turns terms into Python values (:func:`python_value`), ``"ntriples"`` keeps
    them as written. Needs pandas (the ``pandas`` extra)."""
    pd = require("pandas", "pandas", "to_pandas()")
    columns, rows = _converted(results, terms)
    return pd.DataFrame(rows, columns=columns)


def to_arrow(results, terms: str = "python"):
    """The results as a pyarrow Table (as :func:`to_pandas`). Needs pyarrow (the ``pandas`` extra)."""
    pa = require("pyarrow", "pandas", "to_arrow()")
    columns, rows = _converted(results, terms)
    data = {c: [row[i] for row in rows] for i, c in enumerate(columns)}
    try:
        return pa.table(data)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a column mixing numbers and text: keep the text
        return pa.table({c: [None if v is None else str(v) for v in vs] for c, vs in data.items()})


def _converted(results, terms: str) -> tuple[list[str], list[list]]:
    if terms not in ("python", "ntriples"):
        raise ValueError(f"terms={terms!r}: 'python' or 'ntriples'")
    columns, rows = results_table(results)
    if terms == "python":
        rows = [[row[0], *map(python_value, row[1:])] for row in rows]
    return columns, rows
