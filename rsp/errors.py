"""The error hierarchy of rsp: every user-facing error carries the source position it refers to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Position:
    """A place in a source text: file name (may be ``<string>``), 1-based line and column."""

    file: str = "<string>"
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line and self.column:
            return f"{self.file}:{self.line}:{self.column}"
        if self.line:
            return f"{self.file}:{self.line}"
        return self.file


class RspError(Exception):
    """Base class of every error rsp reports to a user; ``str(err)`` is ``file:line:column: message``."""

    def __init__(self, message: str, position: Position | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        if self.position is None:
            return self.message
        return f"{self.position}: {self.message}"


class ProgramError(RspError):
    """A LARS program that cannot be parsed or is refused (unsafe, unstratifiable, tuple window misuse)."""


class QuerySyntaxError(RspError):
    """A continuous query that cannot be parsed or is semantically invalid."""


class StreamError(RspError):
    """A stream element that cannot be read (bad line, late element under the fail policy)."""


class LateElementError(StreamError):
    """An element older than the last instant a query closed, under the fail policy (``late="fail"``):
    ``time`` is the element's time and ``instant`` the closed instant (ms), when known."""

    def __init__(
        self,
        message: str,
        position: Position | None = None,
        *,
        time: int | None = None,
        instant: int | None = None,
    ) -> None:
        super().__init__(message, position)
        self.time = time
        self.instant = instant
