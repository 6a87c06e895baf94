"""Query results per evaluation instant and the writers that print them (jsonl, SPARQL JSON, CSV, TSV, …).

A result (:class:`Result`) is one query's answer at one instant: a bag of solutions, CONSTRUCT triples
or an ASK boolean. Terms are N-Triples strings
(``<iri>``, ``_:b``, ``"lex"``, ``"lex"@en``, ``"lex"^^<dt>``) exactly as the engine holds them; a
variable absent from a solution is unbound. Each writer writes one record per call and flushes, so a
consumer sees every instant as soon as it is computed.

>>> import sys
>>> writer = make_writer("jsonl", sys.stdout, variables=["x"], query_name="Q")
>>> writer.select(5000, [{"x": "<http://ex.org/a>"}, {}])
{"query": "Q", "time": 5000, "bindings": [{"x": "<http://ex.org/a>"}, {}]}
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import TextIO

from rsp.errors import RspError
from rsp.io.ntriples import as_triple
from rsp.io.solution_text import SharedSolution as SharedSolution  # made by rsp/query/maintained*.py
from rsp.io.solution_text import SolutionTexts
from rsp.io.terms import XSD, as_term, decode_term

Term = str
"""An RDF term in N-Triples syntax."""
Triple = tuple[Term, Term, Term]


@dataclass(frozen=True)
class Result:
    """What a query says at one evaluation instant (``time``, ms): the solutions of a SELECT
    (``bindings``: a bag, duplicates kept, over ``variables``), the triples of a CONSTRUCT (``triples``:
    N-Triples lines, or ``(s, p, o)`` tuples) or the answer of an ASK (``boolean``); exactly one of the
    three is set. A value: made when the instant closes, never changed afterwards, whoever holds it and
    however late it is written (with ``--explain``, :func:`dataclasses.replace` gives a copy with its
    ``explanations``, one per distinct answer: see :mod:`rsp.query.answers.explain`)."""

    query: str
    time: int
    variables: tuple[str, ...] = ()
    bindings: Sequence[Mapping[str, Term]] | None = None
    triples: Sequence[Triple | str] | None = None
    boolean: bool | None = None
    explanations: Sequence | None = None

    def __repr__(self) -> str:
        from rsp.io.display import result_repr

        return result_repr(self)

    def _repr_html_(self) -> str:
        """A table in a notebook (rsp/io/display.py)."""
        from rsp.io.display import result_html

        return result_html(self)


def SelectResult(  # noqa: N802 (a constructor by another name)
    query: str, time: int, variables: Sequence[str], rows: Sequence[Mapping[str, Term]] = (),
    explanations: Sequence | None = None,
) -> Result:  # fmt: skip
    """A SELECT's :class:`Result`: ``rows`` are its bindings."""
    return Result(query, time, tuple(variables), bindings=rows, explanations=explanations)


def ConstructResult(  # noqa: N802
    query: str, time: int, triples: Sequence[Triple | str] = (), explanations: Sequence | None = None
) -> Result:
    """A CONSTRUCT's :class:`Result`."""
    return Result(query, time, triples=triples, explanations=explanations)


def AskResult(query: str, time: int, value: bool, explanations: Sequence | None = None) -> Result:  # noqa: N802
    """An ASK's :class:`Result`."""
    return Result(query, time, boolean=bool(value), explanations=explanations)


def as_result(value: object) -> Result:
    """A :class:`Result` from a result-like object (a dataclass or record of one's own with ``query``,
    ``time`` and one of ``bindings`` (+ ``variables``), ``triples`` or ``boolean``)."""
    if type(value) is Result:
        return value
    query, time = value.query, value.time  # type: ignore[attr-defined]
    explanations = getattr(value, "explanations", None)
    if getattr(value, "boolean", None) is not None:
        return Result(query, time, boolean=bool(value.boolean), explanations=explanations)  # type: ignore[attr-defined]
    if getattr(value, "triples", None) is not None:
        return Result(query, time, triples=list(value.triples), explanations=explanations)  # type: ignore[attr-defined]
    variables = tuple(getattr(value, "variables", None) or ())
    bindings = getattr(value, "bindings", None) or []
    return Result(query, time, variables, bindings=bindings, explanations=explanations)


def _clean(term: object) -> Term:
    """The term in N-Triples syntax, re-escaping raw line breaks a computed literal may contain."""
    text = as_term(term)
    if "\n" in text or "\r" in text:
        text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text


def _triple_line(triple: Triple | str) -> str:
    s, p, o = as_triple(triple)
    return f"{_clean(s)} {_clean(p)} {_clean(o)} ."


def _term_json(term: object) -> str:
    """The JSON string of a term's N-Triples text; ``json.dumps(text, ensure_ascii=False)`` without its
    dispatch. A string term's is kept (:func:`_str_json`: a term recurs in many solutions); a Python
    value's is made each time, as values equal in Python can have different texts (``0.0`` and
    ``-0.0``, one hash, one cache entry).

    >>> [_term_json(v) == json.dumps(as_term(v), ensure_ascii=False) for v in (0.0, -0.0, "<a>", "<a>")]
    [True, True, True, True]
    """
    if type(term) is str:
        text = _STR_JSON.get(term)
        return text if text is not None else _str_json(term)
    return encode_basestring(_clean(term))


@functools.lru_cache(maxsize=1 << 10)
def _name_json(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


_STR_JSON: dict[str, str] = {}
"""The JSON text of string terms (:func:`_str_json`), cleared when it reaches ``_STR_JSON_SIZE``."""
_STR_JSON_SIZE = 1 << 16


def _str_json(term: str) -> str:
    """:func:`_term_json` of a string term, kept in ``_STR_JSON`` (a plain dict: the generated makers
    of :func:`_solution_json_maker` look it up without a call)."""
    text = encode_basestring(_clean(term))
    if len(_STR_JSON) >= _STR_JSON_SIZE:
        _STR_JSON.clear()
    _STR_JSON[term] = text
    return text


@functools.lru_cache(maxsize=1 << 8)
def _solution_json_maker(variables: tuple[str, ...]) -> Callable[[Mapping[str, object]], str]:
    """:func:`_solution_json` for these variables: one generated function that, when every variable
    is bound to a string, joins the constant parts (each name's JSON text) with each term's kept JSON
    text; any other solution takes the general loop.

    >>> make = _solution_json_maker(("x", "y"))
    >>> rows = [{"x": "<http://a>", "y": '"1"'}, {"y": '"1"'}, {"x": 1}]
    >>> all(make(r) == json.dumps(_row(("x", "y"), r), ensure_ascii=False) for r in rows)
    True
    """
    heads = tuple((v, _name_json(v) + ": ") for v in dict.fromkeys(variables))
    term_json = _term_json

    def general(solution: Mapping[str, object]) -> str:
        parts = []
        for v, head in heads:
            value = solution.get(v)
            if value is not None:
                try:
                    parts.append(head + term_json(value))
                except TypeError:  # not hashable: no cache
                    parts.append(head + json.dumps(_clean(value), ensure_ascii=False))
        return "{" + ", ".join(parts) + "}"

    if not heads:
        return general
    lines = ["def make(solution):"]
    lines += [f"    v{i} = solution.get({v!r})" for i, (v, _) in enumerate(heads)]
    lines.append("    if " + " and ".join(f"type(v{i}) is str" for i in range(len(heads))) + ":")
    for i in range(len(heads)):
        lines.append(f"        t{i} = kept.get(v{i})")
        lines.append(f"        if t{i} is None: t{i} = text(v{i})")
    pieces = []
    for i, (_, head) in enumerate(heads):
        pieces += [repr(("{" if i == 0 else ", ") + head), f"t{i}"]
    lines.append("        return " + " + ".join(pieces) + " + '}'")
    lines.append("    return general(solution)")
    namespace = {"kept": _STR_JSON, "text": _str_json, "general": general}
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from the variables' names (repr)
    return namespace["make"]


def _solution_json(variables: Sequence[str], solution: Mapping[str, object]) -> str:
    """``json.dumps(_row(variables, solution), ensure_ascii=False)``, from each term's JSON text.

    >>> row = {"x": "<http://a>", "y": 'say "hi"\u00e9', "z": None}
    >>> _solution_json(("x", "y", "z"), row) == json.dumps(_row(("x", "y", "z"), row), ensure_ascii=False)
    True
    """
    return _solution_json_maker(tuple(variables or solution))(solution)


def _row(variables: Sequence[str], solution: Mapping[str, object]) -> dict[str, Term]:
    """The solution's bound variables in projection order (all of them when no order is known)."""
    names = variables or list(solution)
    return {v: _clean(solution[v]) for v in names if v in solution and solution[v] is not None}


# -- writers ---------------------------------------------------------------------------------------------


class ResultWriter:
    """Writes results to a text handle, one instant per :meth:`write`, flushing after each.

    ``variables`` and ``query_name`` describe the query when known in advance: they fill the CSV/TSV
    header before the first instant and serve the shortcuts :meth:`select`, :meth:`construct`, :meth:`ask`.
    ``prefixes`` (prefix -> namespace IRI) lets the ``text`` format write IRIs as prefixed names.
    """

    def __init__(
        self,
        handle: TextIO,
        *,
        variables: Sequence[str] | None = None,
        query_name: str = "",
        prefixes: Mapping[str, str] | None = None,
    ) -> None:
        self.handle = handle
        self.variables = tuple(variables) if variables is not None else None
        self.query_name = query_name
        self.prefixes = dict(prefixes) if prefixes is not None else None
        self._texts = SolutionTexts()

    cached = True
    """Join a SELECT instant from each solution's kept text (:class:`SolutionTexts`); False writes
    every row from scratch (the same bytes: tests/io/test_result_texts.py compares the two)."""

    def _plain_select(self, result: Result) -> bool:
        return self.cached and result.bindings is not None and result.explanations is None

    def write(self, result: Result) -> None:
        """Write one query's result at one instant (or a result-like object: :func:`as_result`), flush."""
        self._write(result if type(result) is Result else as_result(result))
        self.handle.flush()

    def _write(self, result: Result) -> None:
        raise NotImplementedError

    def select(self, time: int, rows: Sequence[Mapping[str, Term]]) -> None:
        self.write(SelectResult(self.query_name, time, self.variables or (), rows))

    def construct(self, time: int, triples: Sequence[Triple]) -> None:
        self.write(ConstructResult(self.query_name, time, triples))

    def ask(self, time: int, value: bool) -> None:
        self.write(AskResult(self.query_name, time, value))

    def close(self) -> None:
        """Finish the output (the handle stays open: it belongs to the caller)."""
        self.handle.flush()


class JsonLinesWriter(ResultWriter):
    """``jsonl``: ``{"query": …, "time": …, "bindings"|"triples"|"boolean": …}`` per query per instant."""

    def _write(self, result: Result) -> None:
        if self._plain_select(result):  # the record json.dumps writes
            head = json.dumps({"query": result.query, "time": result.time}, ensure_ascii=False)[:-1]
            variables = tuple(result.variables)
            if variables:
                make = _solution_json_maker(variables)
            else:  # each row its own names
                make = functools.partial(_solution_json, variables)
            texts = self._texts.texts(variables, result.bindings, make)
            # three writes: the joined answer is not copied once more into one line
            write = self.handle.write
            write(f'{head}, "bindings": [')
            write(", ".join(texts))
            write("]}\n")
            return
        record: dict[str, object] = {"query": result.query, "time": result.time}
        if result.bindings is not None:
            record["bindings"] = [_row(result.variables, row) for row in result.bindings]
        elif result.triples is not None:
            record["triples"] = [_triple_line(t) for t in result.triples]
        else:
            record["boolean"] = bool(result.boolean)
        if result.explanations is not None:
            record["explanations"] = [e.to_json() for e in result.explanations]
        self.handle.write(json.dumps(record, ensure_ascii=False) + "\n")


_SPO = ("subject", "predicate", "object")


def _select_view(result: Result) -> tuple[tuple[str, ...], list[dict[str, Term]]]:
    """Variables and rows of a result; CONSTRUCT triples read as solutions of ?subject ?predicate ?object."""
    if result.triples is not None:
        return _SPO, [dict(zip(_SPO, map(_clean, as_triple(t)), strict=True)) for t in result.triples]
    variables = _view_variables(result)
    return variables, [_row(variables, row) for row in result.bindings]


def _view_variables(result: Result) -> tuple[str, ...]:
    """A SELECT result's columns: its variables, or those its solutions bind when it names none."""
    return tuple(result.variables) or tuple(dict.fromkeys(v for row in result.bindings for v in row))


class SparqlJsonWriter(ResultWriter):
    """``sparql-json``: a SPARQL 1.1 Query Results JSON document per instant, one per line, with ``query``
    and ``time`` added; CONSTRUCT triples are given as bindings of ``subject``, ``predicate``, ``object``."""

    def _write(self, result: Result) -> None:
        if self._plain_select(result):  # the record below, each solution's object text kept
            variables = _view_variables(result)
            head = {"query": result.query, "time": result.time, "head": {"vars": list(variables)}}
            texts = self._texts.texts(
                variables, result.bindings, lambda row: _sparql_json_solution(variables, row)
            )
            opening = json.dumps(head, ensure_ascii=False)[:-1]
            write = self.handle.write  # three writes, as JsonLinesWriter's
            write(f'{opening}, "results": {{"bindings": [')
            write(", ".join(texts))
            write("]}}\n")
            return
        record: dict[str, object] = {"query": result.query, "time": result.time}
        if result.boolean is not None:
            record["head"] = {}
            record["boolean"] = bool(result.boolean)
        else:
            variables, rows = _select_view(result)
            record["head"] = {"vars": list(variables)}
            record["results"] = {"bindings": [{v: _json_term(t) for v, t in row.items()} for row in rows]}
        if result.explanations is not None:
            record["explanations"] = [e.to_json() for e in result.explanations]
        self.handle.write(json.dumps(record, ensure_ascii=False) + "\n")


@functools.lru_cache(maxsize=1 << 16)
def _json_term_text(term: Term) -> str:
    """The JSON text of a term's SPARQL JSON object (made once per term)."""
    return json.dumps(_json_term(term), ensure_ascii=False)


def _sparql_json_solution(variables: Sequence[str], solution: Mapping[str, object]) -> str:
    """``json.dumps({v: _json_term(t) for v, t in _row(variables, solution).items()})``, from kept texts."""
    row = _row(variables, solution)
    return "{" + ", ".join(f"{_name_json(v)}: {_json_term_text(t)}" for v, t in row.items()) + "}"


def _json_term(term: Term) -> dict[str, str]:
    kind, value, language, datatype = decode_term(term)
    out = {"type": kind, "value": value}
    if language is not None:
        out["xml:lang"] = language
    if datatype is not None:
        out["datatype"] = datatype
    return out


class _TableWriter(ResultWriter):
    """CSV and TSV: a leading ``time`` column, then one column per variable; the header is written once."""

    def __init__(self, handle: TextIO, **options) -> None:
        super().__init__(handle, **options)
        self.header: tuple[str, ...] | None = None
        if self.variables:  # a SELECT's columns are known now; CONSTRUCT and ASK have their own
            self._header(self.variables)

    def _header(self, columns: tuple[str, ...]) -> None:
        if self.header is None:
            self.header = columns
            self._line(["time", *(self._name(c) for c in columns)])

    def _write(self, result: Result) -> None:
        if result.boolean is not None:
            self._header(("boolean",))
            self._line([str(result.time), "true" if result.boolean else "false"])
            return
        if self._plain_select(result):  # each solution's line after the time column kept
            variables = _view_variables(result)
            self._header(variables)
            header = self.header

            def make(solution: Mapping[str, object]) -> str:
                row = _row(variables, solution)
                return self._rest([self._value(row[v]) if v in row else "" for v in header])

            time = str(result.time)
            texts = self._texts.texts((variables, header), result.bindings, make)
            self.handle.write("".join([time + text for text in texts]))
            return
        variables, rows = _select_view(result)
        self._header(variables)
        for row in rows:
            self._line([str(result.time), *(self._value(row[v]) if v in row else "" for v in self.header)])

    def _name(self, variable: str) -> str:
        raise NotImplementedError

    def _value(self, term: Term) -> str:
        raise NotImplementedError

    def _line(self, fields: list[str]) -> None:
        raise NotImplementedError

    def _rest(self, fields: list[str]) -> str:
        """The text :meth:`_line` writes for a row after its time column (line end included)."""
        raise NotImplementedError


class CsvWriter(_TableWriter):
    """``csv``: SPARQL 1.1 CSV results (plain values: IRIs without brackets, literals' lexical forms,
    blank nodes ``_:b``; CRLF line ends; quoting as RFC 4180) with a leading ``time`` column.
    Open the handle with ``newline=""``."""

    def __init__(self, handle: TextIO, **options) -> None:
        self._csv = csv.writer(handle, lineterminator="\r\n")
        self._buffer = io.StringIO()
        self._row_csv = csv.writer(self._buffer, lineterminator="\r\n")
        super().__init__(handle, **options)

    def _name(self, variable: str) -> str:
        return variable

    def _value(self, term: Term) -> str:
        kind, value, _, _ = decode_term(term)
        return "_:" + value if kind == "bnode" else value

    def _line(self, fields: list[str]) -> None:
        self._csv.writerow(fields)

    def _rest(self, fields: list[str]) -> str:
        buffer = self._buffer
        buffer.seek(0)
        buffer.truncate()
        self._row_csv.writerow(["0", *fields])  # a time field is never quoted
        return buffer.getvalue()[1:]


class TsvWriter(_TableWriter):
    """``tsv``: SPARQL 1.1 TSV results (``?x`` headers, terms in N-Triples syntax, tabs and line breaks
    escaped) with a leading ``time`` column."""

    def _name(self, variable: str) -> str:
        return "?" + variable

    def _value(self, term: Term) -> str:
        return term.replace("\t", "\\t") if "\t" in term else term

    def _line(self, fields: list[str]) -> None:
        self.handle.write("\t".join(fields) + "\n")

    def _rest(self, fields: list[str]) -> str:
        return "".join(["\t" + field for field in fields]) + "\n"


class NTriplesWriter(ResultWriter):
    """``ntriples``: CONSTRUCT triples, each ending in a ``# time`` comment, so the output is itself an
    rsp stream. Instants without triples write nothing."""

    def _write(self, result: Result) -> None:
        if result.triples is None:
            raise RspError(f"query {result.query}: the ntriples output format needs a CONSTRUCT query")
        self.handle.writelines(f"{_triple_line(t)} # {result.time}\n" for t in result.triples)


class TextWriter(ResultWriter):
    """``text``: a table per instant for people — a heading with the query and the instant, then one
    aligned column per variable. With ``prefixes``, IRIs are written as prefixed names and numbers and
    booleans as in Turtle (``4``, ``30.8``, ``true``). Bold headings only on a terminal (``colour``
    None: when the handle is a terminal and ``NO_COLOR`` is not set). Explanations (``--explain``)
    follow each instant's table as indented derivation trees."""

    def __init__(self, handle: TextIO, *, colour: bool | None = None, **options) -> None:
        super().__init__(handle, **options)
        if colour is None:
            colour = _is_terminal(handle) and not os.environ.get("NO_COLOR")
        self.colour = colour
        self._names = Shortener(self.prefixes) if self.prefixes is not None else None

    def _bold(self, text: str) -> str:
        return f"\033[1m{text}\033[0m" if self.colour else text

    def _dim(self, text: str) -> str:
        return f"\033[2m{text}\033[0m" if self.colour else text

    def term(self, term: Term) -> str:
        """A term as this writer shows it (a prefixed name when a prefix covers the IRI)."""
        return self._names(term) if self._names is not None else term

    def _triple(self, triple: Triple) -> str:
        if self._names is None:
            return _triple_line(triple)
        return " ".join(self.term(_clean(t)) for t in triple) + " ."

    def _write(self, result: Result) -> None:
        title = f"{result.query or 'query'} @ {result.time} ms"
        if result.boolean is not None:
            lines = [f"{self._bold(title)}: {'true' if result.boolean else 'false'}"]
        elif result.triples is not None:
            lines = [f"{self._bold(title)}: {_count(len(result.triples), 'triple')}"]
            lines += [f"  {self._triple(as_triple(t))}" for t in result.triples]
        elif self._plain_select(result):  # each solution's cells and line kept
            variables = _view_variables(result)
            lines = [f"{self._bold(title)}: {_count(len(result.bindings), 'solution')}"]
            if result.bindings:
                lines += self._kept_table(variables, result.bindings)
        else:
            variables, rows = _select_view(result)
            lines = [f"{self._bold(title)}: {_count(len(rows), 'solution')}"]
            if rows:
                lines += self._table(variables, rows)
        for explanation in result.explanations or ():
            text = explanation.lines(self.term)
            lines += ["  " + self._bold(text[0]), *("  " + self._dim(line) for line in text[1:])]
        self.handle.write("\n".join(lines) + "\n\n")

    def _kept_table(self, variables: tuple[str, ...], solutions: Sequence[Mapping[str, Term]]) -> list[str]:
        """:meth:`_table` from each solution's kept cells; a row's line is kept while the widths stay."""

        def make(solution: Mapping[str, object]) -> list:
            row = _row(variables, solution)
            return [[self.term(row[v]) if v in row else "" for v in variables], None, None]

        entries = self._texts.texts(variables, solutions, make)
        widths = [len(v) for v in variables]
        for cells, _, _ in entries:
            for i, cell in enumerate(cells):
                if len(cell) > widths[i]:
                    widths[i] = len(cell)
        fixed = tuple(widths)
        out = []
        for entry in entries:
            if entry[1] != fixed:
                entry[1] = fixed
                line = "  ".join(t.ljust(w) for t, w in zip(entry[0], widths, strict=True))
                entry[2] = "  " + line.rstrip()
            out.append(entry[2])
        header = "  " + "  ".join(t.ljust(w) for t, w in zip(variables, widths, strict=True)).rstrip()
        rule = "  " + "  ".join("-" * w for w in widths)
        return ["  " + self._bold(header.strip()), rule, *out]

    def _table(self, variables: Sequence[str], rows: list[dict[str, Term]]) -> list[str]:
        cells = [[self.term(row[v]) if v in row else "" for v in variables] for row in rows]
        widths = [max(len(v), *(len(r[i]) for r in cells)) for i, v in enumerate(variables)]

        def line(texts: Sequence[str]) -> str:
            return "  " + "  ".join(t.ljust(w) for t, w in zip(texts, widths, strict=True)).rstrip()

        rule = "  " + "  ".join("-" * w for w in widths)
        return ["  " + self._bold(line(variables).strip()), rule, *(line(r) for r in cells)]


STANDARD_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": XSD,
    "owl": "http://www.w3.org/2002/07/owl#",
}
"""Prefixes the ``text`` format knows without being told (a query's own PREFIXes take precedence)."""

_LOCAL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_-])?")
_TURTLE_NUMBER = {
    "integer": re.compile(r"[+-]?[0-9]+"),
    "decimal": re.compile(r"[+-]?[0-9]*\.[0-9]+"),
    "boolean": re.compile(r"true|false"),
}


class Shortener:
    """Writes IRIs as prefixed names (the longest namespace that leaves a valid local name) and
    integer, decimal and boolean literals as Turtle writes them.

    >>> short = Shortener({"ex": "http://ex.org/"})
    >>> short("<http://ex.org/a>"), short('"4"^^<http://www.w3.org/2001/XMLSchema#integer>')
    ('ex:a', '4')
    >>> short('"x"^^<http://www.w3.org/2001/XMLSchema#string>'), short("<http://other.org/b>")
    ('"x"^^xsd:string', '<http://other.org/b>')
    """

    def __init__(self, prefixes: Mapping[str, str]) -> None:
        names = {**STANDARD_PREFIXES, **prefixes}
        by_namespace: dict[str, str] = {}
        for prefix, namespace in names.items():
            if namespace and namespace not in by_namespace:
                by_namespace[namespace] = prefix
        self.namespaces = sorted(by_namespace.items(), key=lambda item: -len(item[0]))

    def iri(self, iri: str) -> str:
        for namespace, prefix in self.namespaces:
            if iri.startswith(namespace):
                local = iri[len(namespace) :]
                if not local or _LOCAL.fullmatch(local):
                    return f"{prefix}:{local}"
        return f"<{iri}>"

    def __call__(self, term: Term) -> str:
        if term.startswith("<") and term.endswith(">"):
            return self.iri(term[1:-1])
        if term.startswith('"') and term.endswith(">") and '"^^<' in term:
            lexical, _, datatype = term.rpartition("^^<")
            datatype = datatype[:-1]
            if datatype.startswith(XSD):
                pattern = _TURTLE_NUMBER.get(datatype[len(XSD) :])
                if pattern is not None and pattern.fullmatch(lexical[1:-1]):
                    return lexical[1:-1]
            return f"{lexical}^^{self.iri(datatype)}"
        return term


def _count(n: int, noun: str) -> str:
    return f"no {noun}s" if n == 0 else f"1 {noun}" if n == 1 else f"{n} {noun}s"


def _is_terminal(handle: TextIO) -> bool:
    try:
        return handle.isatty()
    except (AttributeError, ValueError):
        return False


WRITERS: dict[str, type[ResultWriter]] = {
    "jsonl": JsonLinesWriter,
    "sparql-json": SparqlJsonWriter,
    "csv": CsvWriter,
    "tsv": TsvWriter,
    "ntriples": NTriplesWriter,
    "text": TextWriter,
}
"""Output format names (as for ``--format``) and their writers."""


def make_writer(
    format: str,
    handle: TextIO,
    *,
    variables: Iterable[str] | None = None,
    query_name: str = "",
    prefixes: Mapping[str, str] | None = None,
) -> ResultWriter:
    """A writer of ``format`` (one of :data:`WRITERS`) to ``handle``; ``variables`` is the projection of a
    SELECT query (header of csv/tsv), ``query_name`` the name used by the shortcut methods, ``prefixes``
    the prefixed names the ``text`` format may use."""
    try:
        cls = WRITERS[format]
    except KeyError:
        raise RspError(f"unknown output format {format!r} (expected one of {', '.join(WRITERS)})") from None
    columns = None if variables is None else tuple(variables)
    return cls(handle, variables=columns, query_name=query_name, prefixes=prefixes)
