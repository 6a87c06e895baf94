"""A query's clock: which evaluation instants are closed, which closes next, and the newest element.

The clock of a query is its newest element: every instant up to it, from the first instant on, is
closed. The first instant is the first one after the earliest element that came before any instant
closed; an element older than the last closed instant is late (:meth:`rsp.runtime.Engine.push`
decides); any other element joins its slot, whatever its order of arrival (DESIGN.md §3, §5).

Surfaces that feed one query from several places (``rsp spark``'s engines, one per key partition, each
seeing part of the stream) align the clock with :meth:`Clock.start_at` and :meth:`Clock.saw`, and
close instants with :meth:`rsp.runtime.Engine.advance`.

>>> closed = []
>>> clock = Clock(1000, closed.append)
>>> clock.close_before(2500); clock.saw(2500)   # the first element, at 2.5 s
>>> clock.next_instant, clock.newest, clock.closed_until
(3000, 2500, None)
>>> clock.close_before(4200); clock.saw(4200)   # closes 3 s and 4 s
>>> closed, clock.closed_until, clock.next_instant
([3000, 4000], 4000, 5000)
>>> clock.finish(); closed
[3000, 4000, 5000]
"""

from __future__ import annotations

from collections.abc import Callable


class Clock:
    """The instants of a query evaluated every ``step`` ms; ``close(instant)`` evaluates one instant
    (called in time order, with :attr:`closed_until` already set to it)."""

    __slots__ = ("step", "next_instant", "newest", "closed_until", "_close")

    def __init__(self, step: int, close: Callable[[int], None]) -> None:
        self.step = step
        self.next_instant: int | None = None
        """The next instant to close (None until the first element fixes the first instant)."""
        self.newest: int | None = None
        """The time (ms) of the newest element seen (of any stream of the query)."""
        self.closed_until: int | None = None
        """The last instant closed (None before the first)."""
        self._close = close

    def restore(self, next_instant: int | None, closed_until: int | None, newest: int | None) -> None:
        """Set the clock as it was (a surface that rebuilds a query's engine from the elements it kept,
        ``rsp spark``'s state store, sets its clock back after replaying them)."""
        self.next_instant, self.closed_until, self.newest = next_instant, closed_until, newest

    def first_after(self, time: int) -> int:
        """The first instant after ``time``: the first instant of an element at ``time``."""
        return (time // self.step + 1) * self.step

    def start_at(self, instant: int) -> None:
        """Make ``instant`` the next instant to close if none is set, or if nothing is closed yet and it
        is earlier than the one set (an older element moves the first instant back)."""
        if self.next_instant is None or (self.closed_until is None and instant < self.next_instant):
            self.next_instant = instant

    def saw(self, time: int) -> None:
        """An element at ``time`` was added (here, or in another engine of the same stream)."""
        if self.newest is None or time > self.newest:
            self.newest = time

    def closes_behind(self) -> bool:
        """Before the first instant closed, after :meth:`close_before` of an element's time: adding the
        element closes instants behind a newer element (it moved the first instant back behind it)."""
        return self.closed_until is None and self.newest is not None and self.next_instant <= self.newest

    def close_before(self, time: int) -> None:
        """Close every instant up to ``time`` (an element at ``time`` comes next); an element older than
        the first one seen, arriving while nothing is closed yet, moves the first instant back."""
        self.start_at(self.first_after(time))
        self.close_through(time)

    def close_through(self, time: int) -> None:
        """Close every instant up to ``time`` (none before the first element)."""
        next_instant = self.next_instant
        if next_instant is None:
            return
        close, step = self._close, self.step
        while next_instant <= time:
            self.closed_until = next_instant
            self.next_instant = next_instant + step
            close(next_instant)
            next_instant = self.next_instant

    def catch_up(self) -> None:
        """Close the instants the newest element has passed: only ever some after an element that moved
        the first instant back behind a newer element (otherwise that newer element closed them)."""
        if self.newest is not None:
            self.close_through(self.newest)

    def finish(self) -> None:
        """The end of the streams: close every instant up to the first one after the newest element."""
        if self.newest is not None:
            self.close_through(self.first_after(self.newest))
