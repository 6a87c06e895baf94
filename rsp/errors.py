"""The error hierarchy of rsp: every user-facing error carries the source position it refers to; and the
text of a source file read whole (:func:`read_source`), whose bytes that are not UTF-8 are such an error."""

from __future__ import annotations

import os
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


def end_position(text: str) -> tuple[int, int]:
    """(line, column) just after the last character of ``text``, lines counted at "\\n" as the parsers
    (lark) count them: not at U+2028, U+0085 or the other separators ``str.splitlines`` also cuts at,
    which a quoted string may hold.

    >>> end_position("a(1).\\nb("), end_position('a("x\\u2028y").\\nb('), end_position("")
    ((2, 3), (2, 3), (1, 1))
    """
    return text.count("\n") + 1, len(text) - text.rfind("\n")


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


def read_source(path: str | os.PathLike, error: type[RspError] = RspError, what: str = "file") -> str:
    """The whole text of a program or query file; bytes that are not UTF-8 raise ``error`` at the line and
    column of the first one (``OSError`` passes through for the caller's own message)."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start].decode("utf-8", "surrogateescape")
        line = before.count("\n") + 1
        column = len(before) - before.rfind("\n")
        message = (
            f"cannot read the {what}: byte 0x{data[err.start]:02x} is not UTF-8 (save the file as UTF-8)"
        )
        raise error(message, Position(str(path), line, column)) from None
    return text[1:] if text.startswith("\ufeff") else text
