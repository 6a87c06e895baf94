"""Stream facts for ``rsp mtl``: MeTeoR's fact lines and N-Triples lines with a time comment.

``P(a,b)@[1,3)``, ``P(a)@2``, ``P@(0.5,inf)`` are MeTeoR facts; ``<s> <p> <o> . # 12`` (the project's
N-Triples stream lines, read with :func:`rsp.io.ntriples.parse_line`) is the fact ``<p>(<s>,<o>)@12``.
Blank lines and lines starting with ``%`` or ``#`` are skipped.

>>> parse_fact("Pos(veh21)@[1,1]")
('Pos', ('veh21',), (1, 1, True, True))
>>> parse_fact("<http://s> <http://p> <http://o> . # 1/2")
('<http://p>', ('<http://s>', '<http://o>'), (Fraction(1, 2), Fraction(1, 2), True, True))
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TextIO

from rsp.errors import Position, StreamError
from rsp.mtl.intervals import INF, Interval, make, number

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
    if args is None:
        terms: tuple = ()
    else:
        terms = tuple(args.split(","))
        if " " in args or "\t" in args:
            terms = tuple([a.strip() for a in terms])
        if "" in terms:
            raise ValueError("empty argument")
    return pred, terms, interval(span)


def read_facts(handle: TextIO, source: str, on_error=None) -> Iterator[tuple[str, tuple, Interval, Position]]:
    """The facts of a stream file with their positions; a bad line is a :class:`StreamError` (raised, or
    given to ``on_error`` and skipped)."""
    for number_, line in enumerate(handle, 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "%#":
            continue
        try:
            pred, args, iv = parse_fact(stripped)
        except ValueError as err:
            error = StreamError(f"{err}: {stripped[:60]}", Position(source, number_))
            if on_error is None:
                raise error from None
            on_error(error)
            continue
        yield pred, args, iv, Position(source, number_)
