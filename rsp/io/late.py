"""Late stream lines, reported with their file and line: what ``rsp run`` pushes, replayed from files
(rsp/cli/run.py) or read live (rsp/live.py), goes through :class:`LateLines`, which owns the engine's
late-element hook and the words every command uses for a late element."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rsp.errors import LateElementError, Position, StreamError


def late_message(time: int, closed: int | None) -> str:
    """What a late element is told (``rsp run``, ``rsp spark``)."""
    return f"late element at time {time} (instant {closed} is already closed)"


class LateLines:
    """Pushes a batch of stream lines to an :class:`rsp.runtime.Engine` and reports each line that is
    late once (a line late for several queries too), by its own line number and, when the engine runs
    several queries, the query's name; under ``late="fail"`` the line that stopped the run is named."""

    def __init__(self, engine, report: Callable[[StreamError], None]) -> None:
        self.engine = engine
        self.report = report
        self._counters = None
        self._file = ""
        self._lines: Sequence[int] = ()
        self._time = 0
        self._reported: set[int] = set()
        self._failing = 0
        engine.on_late_element = self._late

    def push(
        self, triples, time: int, stream: str, source: str, counters, file: str, lines: Sequence[int]
    ) -> None:
        """``Engine.push`` of the batch (valid N-Triples terms) read from ``lines`` of ``file``; its late
        lines are counted in ``counters.late`` and reported."""
        self._counters, self._file, self._lines, self._time = counters, file, lines, time
        self._reported = set()
        self._failing = 0
        try:
            self.engine.push(triples, time, stream, source=source, plain=True)
        except LateElementError:  # --late fail; every instant closed before is written already
            counters.late += 1
            closed = [h.closed_until for h in self.engine.queries if h.closed_until is not None]
            position = Position(file, lines[self._failing])
            raise LateElementError(late_message(time, max(closed) if closed else None), position) from None

    def _late(self, handle, index: int) -> None:
        """Element ``index`` of the batch is late for query ``handle``."""
        if self.engine.late_policy == "fail":
            self._failing = index
            return
        if index in self._reported:  # late for another query too
            return
        self._reported.add(index)
        self._counters.late += 1
        message = late_message(self._time, handle.closed_until)
        if len(self.engine.queries) > 1:
            message += f" for query {handle.name}"
        self.report(StreamError(message + ", dropped", Position(self._file, self._lines[index])))
