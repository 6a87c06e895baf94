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

    __slots__ = ("now", "element_time", "scope", "labels", "named")

    def __init__(self) -> None:
        self.now: E.Value | None = None
        """``NOW()``: the instant being evaluated (None: the wall clock, read at the first call)."""
        self.element_time: Callable[[tuple[str, str, str]], int | None] | None = None
        """``f:timestamp``: ``element_time(triple)`` is the time (ms) of the latest element holding the
        triple (N-Triples terms) in a window of the query at the instant, or None."""
        self.scope = 0
        self.labels = itertools.count(1)
        self.named: dict[tuple[int, str], E.Value] = {}

    def at(self, ms: int) -> None:
        """The instant being evaluated (ms since the epoch): what ``NOW()`` returns until the next call."""
        moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
        fraction = f".{ms % 1000:03d}".rstrip("0") if ms % 1000 else ""
        lexical = moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"
        self.now = E.Value(E.DATETIME, moment, lexical, E.XSD_DATETIME)

    def now_value(self) -> E.Value:
        if self.now is None:
            self.at(int(datetime.now(timezone.utc).timestamp() * 1000))
        return self.now  # type: ignore[return-value]

    def new_solution(self) -> None:
        """The next expression evaluations belong to another solution (``BNODE(str)`` gives new nodes)."""
        self.scope += 1
        if len(self.named) > 4096:
            self.named.clear()

    def blank_node(self) -> E.Value:
        return E.term_value(f"_:fn{next(self.labels)}")


WALL_CLOCK = EvalContext()
"""The context of expressions compiled without one (NOW() the wall clock when first read)."""
