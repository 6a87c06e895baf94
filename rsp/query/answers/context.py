"""What an expression reads besides its solution (:class:`EvalContext`): the instant being answered
(``NOW()``), the time of each window element (``f:timestamp``), and ``BNODE``'s labels and solution
scope. Each query owns one; the runtime sets it at every instant."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from rsp.query.answers import values as E


class EvalContext:
    """What an expression reads besides its solution: the instant being answered (``NOW()``), the
    time of each window element (``f:timestamp``), and ``BNODE``'s labels and solution scope. One per
    query, handed to the expression compilers (:func:`rsp.query.answers.expr.compile_expr` and the others) and
    set by the runtime at each instant; nothing is shared between queries or engines."""

    __slots__ = ("instant", "now", "element_time", "scope", "labels", "named")

    def __init__(self) -> None:
        self.instant: int | None = None
        """The instant being evaluated, ms since the epoch (None: the wall clock, read at the first call)."""
        self.now: E.Value | None = None
        """``NOW()``'s value at :attr:`instant`, made when first read."""
        self.element_time: Callable[[tuple[str, str, str]], int | None] | None = None
        """``f:timestamp``: ``element_time(triple)`` is the time (ms) of the latest element holding the
        triple (N-Triples terms) in a window of the query at the instant, or None."""
        self.scope = 0
        self.labels = itertools.count(1)
        self.named: dict[tuple[int, str], E.Value] = {}

    def at(self, ms: int) -> None:
        """The instant being evaluated (ms since the epoch): what ``NOW()`` returns until the next call."""
        self.instant = ms
        self.now = None

    def now_value(self) -> E.Value | None:
        """``NOW()``: the instant as an ``xsd:dateTime``; None (an expression error, so unbound) for an
        instant beyond the years 1 to 9999 that a date-time can hold (a stream's times are any integers).

        >>> context = EvalContext()
        >>> context.at(1500)
        >>> context.now_value().nt()
        '"1970-01-01T00:00:01.5Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
        >>> context.at(10**22)
        >>> context.now_value() is None
        True
        """
        if self.now is None:
            ms = self.instant
            if ms is None:
                ms = int(datetime.now(timezone.utc).timestamp() * 1000)
            try:
                moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
            except OverflowError:
                return None
            fraction = f".{ms % 1000:03d}".rstrip("0") if ms % 1000 else ""
            lexical = moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"
            self.now = E.Value(E.DATETIME, moment, lexical, E.XSD_DATETIME)
        return self.now

    def new_solution(self) -> None:
        """The next expression evaluations belong to another solution (``BNODE(str)`` gives new nodes)."""
        self.scope += 1
        if len(self.named) > 4096:
            self.named.clear()

    def blank_node(self) -> E.Value:
        return E.term_value(f"_:fn{next(self.labels)}")


WALL_CLOCK = EvalContext()
"""The context of expressions compiled without one (NOW() the wall clock when first read)."""
