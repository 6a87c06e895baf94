"""N-Triples lines parsed in the driver with Arrow's regex engine (RE2, vectorised, off the GIL).

``rsp spark`` without ``--partition-by`` runs one engine in the driver, which receives every line of
a micro-batch anyway. There Spark only reads the lines; the driver takes the terms and time out of them,
on as many threads as there are cores for a large micro-batch:

* a line of the canonical form ``S P O . # T`` (:data:`rsp.spark.syntax.CANONICAL`: one space between
  the parts, as stream writers put them) is recognised by one automaton pass and split at its spaces;
* any other line goes through :data:`rsp.spark.syntax.TRIPLE_NAMED`, the pattern Spark runs in the
  partitioned path, by Arrow's ``extract_regex`` (its groups cost ≈ 7 times the automaton pass: RE2
  runs its backtracker over the line to place them).

Blank and comment lines are dropped (:data:`rsp.spark.syntax.NTRIPLES_BLANK`, looked for only among the
lines the pattern does not take). Lines it does not take keep null terms and their text in ``line``, as
:func:`rsp.spark.source.parse_lines` leaves them: the feeder re-checks them with rsp's parser.

Measured on 1M lines of the Spark benchmark (2 cores): Spark's regex parse took ≈ 1.4 s more of a cold
micro-batch than reading the lines alone; the pattern's groups took 1.3 µs a line on one thread, the
canonical split 0.40 µs. ``rsp spark`` parses each record batch as it arrives
(:func:`rsp.spark.pipeline.collect_parsed`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

from rsp.spark.syntax import CANONICAL, NTRIPLES_BLANK, TIME_DIGITS, TRIPLE_NAMED

THREADED_ROWS = 100_000
"""A micro-batch of at least this many lines is parsed in slices on several threads."""


def parse(table: pa.Table) -> pa.Table:
    """``table`` with its ``value`` column (the lines) replaced by ``s``, ``p``, ``o``, ``time`` and
    ``line``, the other columns kept, without the blank and comment lines' rows: a line the pattern
    takes with a time has its terms and time and a null ``line``; any other keeps its text in ``line``
    (its time null) for rsp's parser.

    >>> t = parse(pa.table({"value": ['<http://a> <http://p> "x" . # 7', "<a:> <b:> <c:> .", "x"]}))
    >>> t.column("s").to_pylist(), t.column("time").to_pylist(), t.column("line").to_pylist()
    (['<http://a>', '<a:>', None], [7, None, None], [None, '<a:> <b:> <c:> .', 'x'])
    >>> parse(pa.table({"value": [" # a comment", "x", "", "\ufeff"], "pos": [0, 1, 2, 3]})).to_pydict()
    {'s': [None], 'p': [None], 'o': [None], 'time': [None], 'line': ['x'], 'pos': [1]}
    """
    values = table.column("value")
    slices = _slices(values)
    if len(slices) == 1:
        parsed = [_parse(slices[0])]
    else:
        with ThreadPoolExecutor(len(slices)) as pool:
            parsed = list(pool.map(_parse, slices))
    columns = {
        name: pa.chunked_array([part[i] for part in parsed], parsed[0][i].type)
        for i, name in enumerate(("s", "p", "o", "time", "line"))
    }
    rest = {name: table.column(name) for name in table.column_names if name != "value"}
    result = pa.table({**columns, **rest})
    blank = pa.chunked_array([part[5] for part in parsed], pa.bool_())
    return result.filter(pc.invert(blank)) if pc.any(blank).as_py() else result


def _slices(values: pa.ChunkedArray) -> list[pa.Array]:
    whole = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    threads = min(os.cpu_count() or 1, 8) if len(whole) >= THREADED_ROWS else 1
    size = -(-len(whole) // threads) if len(whole) else 0
    return [whole.slice(i * size, size) for i in range(threads)] if size else [whole]


def _parse(values: pa.Array) -> tuple[pa.Array, ...]:
    """Terms, time, not-taken text and blank mask of one slice of lines (Arrow releases the GIL as it
    works): canonical lines split, the others by the pattern's groups (module docstring)."""
    canonical = pc.fill_null(pc.match_substring_regex(values, CANONICAL), False)
    taken = pc.sum(canonical).as_py() or 0
    if taken == len(values):
        return (*_split(values), pa.nulls(len(values), pa.string()), pc.invert(canonical))
    if taken == 0:
        return _extract(values)
    # a slice of both kinds: each parsed its own way, then put back in place
    other = pc.invert(canonical)
    split = (*_split(values.filter(canonical)), pa.nulls(taken, pa.string()), pa.nulls(taken, pa.bool_()))
    columns = []
    for mine, theirs in zip(split, _extract(values.filter(other)), strict=True):
        column = pc.replace_with_mask(pa.nulls(len(values), theirs.type), canonical, mine.cast(theirs.type))
        columns.append(pc.replace_with_mask(column, other, theirs))
    columns[5] = pc.fill_null(columns[5], False)
    return tuple(columns)


def _split(values: pa.Array) -> tuple[pa.Array, ...]:
    """Subject, predicate, object and time of canonical lines."""
    parts = pc.split_pattern(values, " ", max_splits=2)
    rest = pc.list_element(parts, 2)
    tail = pc.split_pattern(rest, " . # ", max_splits=1, reverse=True)
    time = pc.cast(pc.list_element(tail, 1), pa.int64())
    return pc.list_element(parts, 0), pc.list_element(parts, 1), pc.list_element(tail, 0), time


def _extract(values: pa.Array) -> tuple[pa.Array, ...]:
    """Terms, time, not-taken text and blank mask of any lines, by the pattern's groups."""
    found = pc.extract_regex(values, TRIPLE_NAMED)  # null where the line does not match
    s, p, o, digits = (pc.struct_field(found, name) for name in ("s", "p", "o", "t"))
    length = pc.utf8_length(digits)
    timed = pc.and_(pc.greater(length, 0), pc.less_equal(length, TIME_DIGITS))  # null: no match
    time = pc.cast(pc.if_else(timed, digits, pa.scalar(None, pa.string())), pa.int64())
    line = pc.if_else(pc.is_valid(time), pa.scalar(None, pa.string()), values)
    # blank or comment: only a line the pattern did not take can be one (null elsewhere: not looked at)
    blank = pc.fill_null(pc.match_substring_regex(line, NTRIPLES_BLANK), False)
    return s, p, o, time, line, blank
