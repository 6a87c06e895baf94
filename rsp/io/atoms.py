"""Atom streams for LARS programs: ``<time> <atom>`` lines, bare time lines, N-Triples with time comments.

A stream is read into :class:`AtomStream`: the elements in arrival order and the timeline, which runs
from the first to the last time in the file. Malformed lines are reported to a callback with their
file and line, counted, and skipped; the rest of the stream is read.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rsp.errors import Position, StreamError
from rsp.io.terms import NUMBER, STRING, SYMBOL, explain_bad_triple, literal_value, match_triple
from rsp.io.text import ERRORS, NotUtf8, check_utf8
from rsp.lars.model import Constant, format_atom

Element = tuple[int, str, tuple[Constant, ...]]
"""One stream atom: (time, predicate, arguments)."""

_TIME_LINE = re.compile(r"\s*(-?[0-9]+)\s*(?:[%#].*)?$")
_ATOM_LINE = re.compile(r"\s*(-?[0-9]+)\s+([^\s(]+)\s*(?:\((.*)\))?\s*\.?\s*(?:%.*)?$")
_PRED = re.compile(rf"{SYMBOL}|<[^<>\s]+>$")
_ARG = re.compile(rf"\s*({STRING}|<[^<>\"\s]+>|{NUMBER}|[A-Za-z_][A-Za-z0-9_\-]*)\s*(?:,|$)")


@dataclass
class AtomStream:
    """Stream atoms in arrival order plus the timeline [start, end] (``None`` for an empty stream)."""

    elements: list[Element] = field(default_factory=list)
    start: int | None = None
    end: int | None = None
    rejected: int = 0
    late: int = 0

    def mark(self, time: int) -> None:
        """Extend the timeline to ``time``; it starts at the first time read (a later, smaller time
        is a late element, not a new start)."""
        if self.start is None:
            self.start = time
        if self.end is None or time > self.end:
            self.end = time

    def add(self, time: int, pred: str, args: tuple[Constant, ...] = ()) -> None:
        self.elements.append((time, pred, tuple(args)))
        self.mark(time)

    @classmethod
    def from_elements(
        cls, elements: Iterable[Element], start: int | None = None, end: int | None = None
    ) -> AtomStream:
        """Build a stream from (time, pred, args) triples; the timeline covers them and ``start``/``end``."""
        stream = cls()
        for time, pred, args in elements:
            stream.add(time, pred, args)
        if start is not None:
            stream.start = start if stream.start is None else min(start, stream.start)
            stream.end = start if stream.end is None else stream.end
        if end is not None:
            stream.mark(end)
        return stream

    def __str__(self) -> str:
        return "\n".join(f"{t} {format_atom(p, a)}" for t, p, a in self.elements)

    def batches(self, on_late: LateHandler | None = None) -> Iterator[Batch]:
        """The elements as batches per time point (see :func:`iter_batches`), timeline ends included."""
        batcher = _Batcher(on_late)
        if self.start is not None:
            batcher.add(self.start, None, ())
        for element in self.elements:
            done = batcher.add(*element)
            if done is not None:
                yield done
        if self.end is not None and self.end != batcher.time:
            done = batcher.add(self.end, None, ())
            if done is not None:
                yield done
        done = batcher.finish()
        if done is not None:
            yield done


def _constant(token: str) -> Constant:
    if token[0].isdigit() or (token[0] == "-" and len(token) > 1):
        return float(token) if "." in token else int(token)
    return token


def _parse_args(text: str | None) -> tuple[Constant, ...]:
    if text is None or not text.strip():
        return ()
    if '"' not in text:
        parts = [p.strip() for p in text.split(",")]
        if all(parts) and all(_ARG.fullmatch(p) for p in parts):
            return tuple(_constant(p) for p in parts)
        raise ValueError(f"bad argument list ({text})")
    args: list[Constant] = []
    pos = 0
    while pos < len(text):
        m = _ARG.match(text, pos)
        if m is None:
            raise ValueError(f"bad argument at {text[pos:]!r}")
        args.append(_constant(m.group(1)))
        pos = m.end()
    return tuple(args)


_FAST_LINE = re.compile(r"([0-9]+)[ \t]+([a-z][A-Za-z0-9_]*)(?:\(([a-z0-9][A-Za-z0-9_,]*)\))?\s*$")


def parse_line(line: str) -> tuple[int, str | None, tuple[Constant, ...]] | None:
    """Parse one stream line into (time, pred, args); pred is None for a bare time line.

    Returns ``None`` for blank and comment lines; raises ValueError with a reason for malformed ones.

    >>> parse_line("36 a(x1,y)")
    (36, 'a', ('x1', 'y'))
    >>> parse_line('<http://s> <http://p> "v" . # 7')
    (7, '<http://p>', ('<http://s>', '"v"'))
    """
    fast = _FAST_LINE.match(line)
    if fast is not None:
        time, pred, text = fast.groups()
        if text is None:
            return int(time), pred, ()
        parts = text.split(",")
        if all(parts) and all(p[0] > "9" or p.isdigit() for p in parts):
            return int(time), pred, tuple(int(p) if p[0] <= "9" else p for p in parts)
    check_utf8(line)  # a byte that was not UTF-8 (NotUtf8, a ValueError with the column)
    stripped = line.strip()
    if not stripped or stripped[0] == "%" or (stripped[0] == "#"):
        return None
    if stripped[0] in "<_":
        m = match_triple(stripped)
        if m is None:
            raise ValueError(explain_bad_triple(stripped))
        s, p, o, comment, rest = m.groups()
        if comment is None:
            raise ValueError("N-Triples line without a time comment (write '<s> <p> <o> . # 36')")
        try:
            time = int(comment)
        except ValueError:
            raise ValueError(f"time comment {comment!r} is not an integer time") from None
        return time, p, (literal_value(s), literal_value(o))
    m = _TIME_LINE.match(stripped)
    if m is not None:
        return int(m.group(1)), None, ()
    m = _ATOM_LINE.match(stripped)
    if m is None:
        raise ValueError("expected '<time> <atom>', a bare time, or an N-Triples line with a time comment")
    pred = m.group(2)
    if not _PRED.match(pred):
        raise ValueError(f"bad predicate {pred!r}")
    return int(m.group(1)), pred, _parse_args(m.group(3))


ErrorHandler = Callable[[StreamError], None]
LateHandler = Callable[[int, str, tuple], None]
Batch = tuple[int, "list[tuple[str, tuple[Constant, ...]]] | dict[str, list[tuple[Constant, ...]]]"]
"""A time point and its stream atoms: (pred, args) in arrival order, or grouped ``{pred: [args, ...]}``."""

_FAST_ARG = r"(?:[a-z][A-Za-z0-9_]*|-?[0-9]+(?:\.[0-9]+)?)"
_FAST_BLOCK = re.compile(
    rf"^([0-9]+)[ \t]+([a-z][A-Za-z0-9_]*)\(({_FAST_ARG}(?:,{_FAST_ARG})*)\)[ \t]*$",
    re.MULTILINE,
)
_SYMBOLIC_BLOCK = re.compile(
    r"^([0-9]+)[ \t]+([a-z][A-Za-z0-9_]*)\(([a-z][A-Za-z0-9_]*(?:,[a-z][A-Za-z0-9_]*)*)\)[ \t]*$",
    re.MULTILINE,
)
_NUMERIC_ARG = re.compile(r"(?:^|,)-?[0-9]")
_MAX_FIXED_ARITY = 8


@functools.lru_cache(maxsize=_MAX_FIXED_ARITY)
def _fixed_arity_block(arity: int) -> tuple[re.Pattern, Callable[[Iterable[tuple]], Iterable[tuple]]]:
    """A block pattern for lines ``<time> <pred>(s1,...,sk)`` of symbolic arguments with a fixed arity
    k, capturing each argument, and the function that turns its matches into argument tuples in C
    (``itemgetter`` for k >= 2, ``zip`` for k = 1)."""
    symbol = "([a-z][A-Za-z0-9_]*)"
    pattern = re.compile(
        rf"^([0-9]+)[ \t]+([a-z][A-Za-z0-9_]*)\({','.join([symbol] * arity)}\)[ \t]*$", re.MULTILINE
    )
    if arity == 1:
        return pattern, lambda matches: zip(map(_third, matches))
    pick = operator.itemgetter(*range(2, arity + 2))
    return pattern, lambda matches: map(pick, matches)


def _fast_constant(text: str) -> Constant:
    """A constant matched by the fast path: a symbol, an integer or a decimal."""
    if text[0] > "9":
        return text
    return float(text) if "." in text else int(text)


_first = operator.itemgetter(0)
_time_pred = operator.itemgetter(0, 1)
_third = operator.itemgetter(2)
_split_args = operator.methodcaller("split", ",")


class _Batcher:
    """Groups (time, pred, args) elements into batches per time point; older elements are late."""

    __slots__ = ("time", "atoms", "on_late", "late")

    def __init__(self, on_late: LateHandler | None) -> None:
        self.time: int | None = None
        self.atoms: list = []
        self.on_late = on_late
        self.late = 0

    def add(self, time: int, pred: str | None, args: tuple) -> Batch | None:
        """Add one element; returns the finished batch of the previous time point, if any."""
        if time == self.time:
            if pred is not None:
                self.atoms.append((pred, args))
            return None
        return self._start(time, [] if pred is None else [(pred, args)], ((pred, args),))

    def add_many(self, time: int, atoms: list) -> Batch | None:
        """Add the atoms of one time point (in arrival order); like :meth:`add`."""
        if time == self.time:
            self.atoms.extend(atoms)
            return None
        return self._start(time, atoms, atoms)

    def finish(self) -> Batch | None:
        return None if self.time is None else (self.time, self.atoms)

    def _start(self, time: int, atoms, elements) -> Batch | None:
        """Begin the batch of a new time point with ``atoms``, or count ``elements`` late."""
        if self.time is not None and time < self.time:
            for pred, args in elements:
                if pred is not None:  # a late bare time line marks nothing
                    self.late += 1
                    if self.on_late is not None:
                        self.on_late(time, pred, args)
            return None
        done = None if self.time is None else (self.time, self.atoms)
        self.time = time
        self.atoms = atoms
        return done


class _GroupedBatcher(_Batcher):
    """A :class:`_Batcher` whose batches hold a time point's atoms per predicate, ``{pred: [args, ...]}``
    (arrival order within each predicate): the form the engine stores them in, built without a
    (pred, args) pair per atom. Only for engines that do not count atoms across predicates (no tuple
    windows): the interleaving of predicates within a time point is not kept."""

    __slots__ = ()

    def add(self, time: int, pred: str | None, args: tuple) -> Batch | None:
        if time == self.time:
            if pred is not None:
                rows = self.atoms.get(pred)
                if rows is None:
                    self.atoms[pred] = [args]
                else:
                    rows.append(args)
            return None
        return self._start(time, {} if pred is None else {pred: [args]}, ((pred, args),))

    def add_rows(self, time: int, pred: str, rows: list[tuple]) -> Batch | None:
        """Add the atoms ``pred(args)`` for each args in ``rows``, all at ``time``; like :meth:`add`."""
        if time == self.time:
            known = self.atoms.get(pred)
            if known is None:
                self.atoms[pred] = rows
            else:
                known.extend(rows)
            return None
        return self._start(time, {pred: rows}, [(pred, args) for args in rows])

    def add_many(self, time: int, atoms: list) -> Batch | None:
        done = None
        for pred, args in atoms:
            finished = self.add(time, pred, args)
            if finished is not None:
                done = finished
        return done


def iter_batches(
    lines: Iterable[str],
    source: str = "<stream>",
    on_error: ErrorHandler | None = None,
    on_late: LateHandler | None = None,
    chunk: int = 4096,
    grouped: bool = False,
) -> Iterator[Batch]:
    """Read stream lines lazily and yield one batch per time point present in the input.

    Memory stays bounded by one chunk of lines and one time point's atoms, whatever the stream's
    length. Malformed lines go to ``on_error`` (default: raise); elements older than the time point
    being read go to ``on_late`` and are dropped. Time points without any line are not yielded (the
    engine fills the gaps of the timeline). With ``grouped``, a batch's atoms are a dict
    ``{pred: [args, ...]}`` instead of a list of (pred, args) in arrival order (see
    :meth:`rsp.engine.Engine.step`: for engines that need no arrival order across predicates).

    >>> [b for b in iter_batches(["0 p(a)", "0 p(1)", "2", "3 q"])]
    [(0, [('p', ('a',)), ('p', (1,))]), (2, []), (3, [('q', ())])]
    """
    batcher = _GroupedBatcher(on_late) if grouped else _Batcher(on_late)
    add = batcher.add
    numeric = _NUMERIC_ARG.search
    iterator = iter(lines)
    number = 0
    fixed_arity = grouped  # try the fixed-arity pattern until a block does not fit it
    while True:
        block = list(itertools.islice(iterator, chunk))
        if not block:
            break
        text = "".join(block)
        if fixed_arity:
            first = block[0]
            arity = first.count(",") + 1 if "(" in first else 0
            if 1 <= arity <= _MAX_FIXED_ARITY:
                pattern, rows_of = _fixed_arity_block(arity)
                found = pattern.findall(text)
                if len(found) == len(block):
                    add_rows = batcher.add_rows
                    for (time_text, pred), group in itertools.groupby(found, _time_pred):
                        done = add_rows(int(time_text), pred, list(rows_of(group)))
                        if done is not None:
                            yield done
                    number += len(block)
                    continue
            fixed_arity = False
        symbolic = True
        found = _SYMBOLIC_BLOCK.findall(text)
        if len(found) != len(block):
            symbolic = False
            found = _FAST_BLOCK.findall(text)
        if symbolic and grouped and len(found) == len(block):
            add_rows = batcher.add_rows
            for (time_text, pred), group in itertools.groupby(found, _time_pred):
                done = add_rows(int(time_text), pred, list(map(tuple, map(_split_args, map(_third, group)))))
                if done is not None:
                    yield done
            number += len(block)
            continue
        if symbolic and len(found) == len(block):
            for time_text, group in itertools.groupby(found, _first):
                atoms = [(pred, tuple(a.split(","))) for _t, pred, a in group]
                done = batcher.add_many(int(time_text), atoms)
                if done is not None:
                    yield done
            number += len(block)
            continue
        if len(found) == len(block):
            current_text, current, current_time = None, batcher.atoms, batcher.time
            for time_text, pred, arg_text in found:
                if not symbolic and numeric(arg_text):
                    args = tuple(map(_fast_constant, arg_text.split(",")))
                else:
                    args = tuple(arg_text.split(","))
                if time_text == current_text:
                    if grouped:
                        add(current_time, pred, args)
                    else:
                        current.append((pred, args))
                    continue
                done = add(int(time_text), pred, args)
                if done is not None:
                    yield done
                if batcher.time == int(time_text):  # not late: later lines of this time go straight in
                    current_text, current, current_time = time_text, batcher.atoms, batcher.time
            number += len(block)
            continue
        for line in block:
            number += 1
            try:
                parsed = parse_line(line)
            except ValueError as err:
                column = err.column if isinstance(err, NotUtf8) else 0
                error = StreamError(str(err), Position(source, number, column))
                if on_error is None:
                    raise error from None
                on_error(error)
                continue
            if parsed is not None:
                done = add(*parsed)
                if done is not None:
                    yield done
    done = batcher.finish()
    if done is not None:
        yield done


def read_atom_lines(
    lines: Iterable[str],
    source: str = "<stream>",
    on_error: ErrorHandler | None = None,
    on_late: LateHandler | None = None,
) -> AtomStream:
    """Read stream lines into memory (see :func:`iter_batches` for errors and late elements)."""
    stream = AtomStream()

    def rejected(error: StreamError) -> None:
        if on_error is None:
            raise error
        stream.rejected += 1
        on_error(error)

    def late(time: int, pred: str, args: tuple) -> None:
        stream.late += 1
        if on_late is not None:
            on_late(time, pred, args)

    elements = stream.elements
    for time, atoms in iter_batches(lines, source, rejected, late):
        stream.mark(time)
        elements.extend((time, pred, args) for pred, args in atoms)
    return stream


def read_atom_stream(path: str | Path, on_error: ErrorHandler | None = None) -> AtomStream:
    """Read a stream file (see the module docstring)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8", errors=ERRORS) as handle:  # bytes not UTF-8: bad lines
            return read_atom_lines(handle, str(path), on_error)
    except OSError as err:
        raise StreamError(f"cannot read stream: {err.strerror}", Position(str(path))) from None
