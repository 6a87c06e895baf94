"""Stream facts for ``rsp mtl``: MeTeoR's fact lines and N-Triples lines with a time comment.

``P(a,b)@[1,3)``, ``P(a)@2``, ``P@(0.5,inf)`` (or ``P()@(0.5,inf)``) are MeTeoR facts; ``<s> <p> <o> . # 12``
(the project's N-Triples stream lines, read with :func:`rsp.io.ntriples.parse_line`) is the fact
``<p>(<s>,<o>)@12``. Blank lines and lines starting with ``%`` or ``#`` are skipped. A dataset file may
list its facts in any order: :func:`first_out_of_order` tells from the times alone, and
:func:`in_time_order` orders the facts read.

>>> parse_fact("Pos(veh21)@[1,1]")
('Pos', ('veh21',), (1, 1, True, True))
>>> parse_fact("<http://s> <http://p> <http://o> . # 1/2")
('<http://p>', ('<http://s>', '<http://o>'), (Fraction(1, 2), Fraction(1, 2), True, True))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TextIO

from rsp.errors import Position, StreamError
from rsp.io.text import NotUtf8, check_utf8
from rsp.mtl.intervals import INF, Interval, Time, make, number

_FACT = re.compile(r"\s*([^\s(@]+)\s*(?:\(([^()]*)\))?\s*@\s*(\S+)\s*$")
_INTERVAL = re.compile(r"([\[(])\s*([^,\s]+)\s*,\s*([^,\s\])]+)\s*([\])])$")
_intervals: dict[str, Interval] = {}


def interval(text: str) -> Interval:
    """A fact's interval from its text (``[1,3)``, ``2``); raises ``ValueError`` with the reason."""
    iv = _intervals.get(text)
    if iv is not None:
        return iv
    m = _INTERVAL.match(text)
    try:
        if m is None:
            t = number(text)
            if t in (INF, -INF):
                raise ValueError
            iv = (t, t, True, True)
        else:
            lo, hi = number(m.group(2)), number(m.group(3))
            iv = make(lo, hi, m.group(1) == "[", m.group(4) == "]")
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"bad interval {text!r} (write [1,3), (0.5,inf) or a time point 2)") from None
    if iv is None:
        raise ValueError(f"empty interval {text!r}")
    if iv[0] == -INF:
        raise ValueError(f"a stream fact cannot start at -inf ({text!r})")
    if len(_intervals) < 100_000:
        _intervals[text] = iv
    return iv


def parse_fact(line: str) -> tuple[str, tuple, Interval]:
    """One fact line as ``(pred, args, interval)``; raises ``ValueError`` with the reason."""
    if line.lstrip().startswith(("<", "_:")):
        from rsp.io.ntriples import parse_line

        parsed = parse_line(line)
        if parsed is None:
            raise ValueError("no triple on this line")
        (s, p, o), comment = parsed
        if comment is None or not comment.strip():
            raise ValueError("an N-Triples line needs its time in a comment: <s> <p> <o> . # 12")
        return p, (s, o), interval(comment.strip())
    m = _FACT.match(line)
    if m is None:
        raise ValueError("not a fact (write P(a,b)@[1,3) or P(a)@2)")
    pred, args, span = m.groups()
    if args is None or not args.strip():  # P@1 and P()@1: a propositional fact
        terms: tuple = ()
    else:
        terms = tuple(args.split(","))
        if " " in args or "\t" in args:
            terms = tuple([a.strip() for a in terms])
        if "" in terms:
            raise ValueError("empty argument")
    return pred, terms, interval(span)


Fact = tuple[str, tuple, Interval, Position | None]
"""A fact read from a stream: ``(pred, args, interval, position)``."""


def left_end(line: str) -> Time | None:
    """The left end of the interval :func:`parse_fact` reads from a stripped fact line, found without
    reading the rest of the line; ``None`` when the line has no readable interval (then it is not a fact
    either: a fact's time text never holds ``@`` or ``#``, so it is the text after the line's last one).

    >>> left_end("P(a@b)@[2,3)"), left_end("<http://s> <http://p> <http://o#x> . # 1/2"), left_end("P(a)")
    (2, Fraction(1, 2), None)
    """
    _, mark, span = line.rpartition("#" if line.startswith(("<", "_:")) else "@")
    if not mark:
        return None
    try:
        return interval(span.strip())[0]
    except ValueError:
        return None


def first_out_of_order(handle: TextIO) -> int | None:
    """The number of the first line of a stream file whose fact starts before a fact above it (``None``:
    the facts come in the order of their left ends). Only the times are read, not the facts."""
    reached = None
    last = None  # the text after the last '@' of the last MeTeoR fact line: facts at one time come together
    for number_, line in enumerate(handle, 1):
        tail = line[line.rfind("@") + 1 :]
        if tail == last:  # the same time (a timed N-Triples line never ends so: its time follows a '#')
            continue
        stripped = line.strip()
        if not stripped or stripped[0] in "%#":
            continue
        lo = left_end(stripped)
        if lo is None:
            continue
        last = None if stripped.startswith(("<", "_:")) else tail
        if reached is not None and lo < reached:
            return number_
        reached = lo
    return None


def in_time_order(facts: Iterable[Fact]) -> list[Fact]:
    """A dataset's facts in the order of their left ends (stable: facts starting together keep their
    order), all held in memory: equal names and arguments are kept once, and positions (only a late fact
    would need one) are not kept."""
    names: dict[str, str] = {}
    held = []
    for pred, args, iv, _ in facts:
        pred = names.setdefault(pred, pred)
        held.append((pred, tuple([names.setdefault(a, a) for a in args]), iv, None))
    held.sort(key=_left)
    return held


def _left(fact: Fact) -> Time:
    return fact[2][0]


def read_facts(handle: TextIO, source: str, on_error=None) -> Iterator[Fact]:
    """The facts of a stream file with their positions; a bad line is a :class:`StreamError` (raised, or
    given to ``on_error`` and skipped)."""
    for number_, line in enumerate(handle, 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "%#":
            continue
        try:
            check_utf8(line)  # a byte that was not UTF-8 (the stream is read with surrogateescape)
            pred, args, iv = parse_fact(stripped)
        except NotUtf8 as err:
            error = StreamError(str(err), Position(source, number_, err.column))
            if on_error is None:
                raise error from None
            on_error(error)
            continue
        except ValueError as err:
            error = StreamError(f"{err}: {stripped[:60]}", Position(source, number_))
            if on_error is None:
                raise error from None
            on_error(error)
            continue
        yield pred, args, iv, Position(source, number_)
