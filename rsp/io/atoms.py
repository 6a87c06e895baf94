"""Atom streams for LARS programs: ``<time> <atom>`` lines, bare time lines, N-Triples with time comments.

A stream is read into :class:`AtomStream`: the elements in arrival order and the timeline, which runs
from the first to the last time in the file. Malformed lines are reported to a callback with their
file and line, counted, and skipped; the rest of the stream is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rsp.errors import Position, StreamError
from rsp.io.terms import NUMBER, STRING, SYMBOL, explain_bad_triple, literal_value, match_triple
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

    def mark(self, time: int) -> None:
        """Extend the timeline to include ``time``."""
        if self.start is None or time < self.start:
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
        for bound in (start, end):
            if bound is not None:
                stream.mark(bound)
        return stream

    def __str__(self) -> str:
        return "\n".join(f"{t} {format_atom(p, a)}" for t, p, a in self.elements)


def _constant(token: str) -> Constant:
    if token[0].isdigit() or (token[0] == "-" and len(token) > 1):
        return float(token) if "." in token else int(token)
    return token


def parse_atom_text(text: str) -> tuple[str, tuple[Constant, ...]]:
    """Parse a ground atom such as ``a(x1,y)``, ``alarm`` or ``temp(101)``; raises ValueError."""
    m = re.match(r"\s*([^\s(]+)\s*(?:\((.*)\))?\s*$", text)
    if m is None or not _PRED.match(m.group(1)):
        raise ValueError(f"not an atom: {text.strip()!r}")
    return m.group(1), _parse_args(m.group(2))


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


def read_atom_lines(
    lines: Iterable[str], source: str = "<stream>", on_error: ErrorHandler | None = None
) -> AtomStream:
    """Read stream lines; each malformed line goes to ``on_error`` (default: raise) and is skipped."""
    stream = AtomStream()
    elements = stream.elements
    for number, line in enumerate(lines, 1):
        try:
            parsed = parse_line(line)
        except ValueError as err:
            error = StreamError(str(err), Position(source, number))
            if on_error is None:
                raise error from None
            stream.rejected += 1
            on_error(error)
            continue
        if parsed is None:
            continue
        time, pred, args = parsed
        if pred is not None:
            elements.append((time, pred, args))
        stream.mark(time)
    return stream


def read_atom_stream(path: str | Path, on_error: ErrorHandler | None = None) -> AtomStream:
    """Read a stream file (see the module docstring)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle:
            return read_atom_lines(handle, str(path), on_error)
    except OSError as err:
        raise StreamError(f"cannot read stream: {err.strerror}", Position(str(path))) from None
