"""Reading what a user gives as text (programs, queries, stream files, pipes) when it may not be UTF-8.

A program or query file is read whole (:func:`read_source`): bytes that are not UTF-8 make it a
:class:`~rsp.errors.RspError` naming the line and column of the first one, never a ``UnicodeDecodeError``.
A stream is read line by line and goes on past a bad line: stream files and live input are decoded with
``errors="surrogateescape"`` (:data:`ERRORS`, :func:`open_stream_text`), so that a byte that is not
UTF-8 reaches its line's reader as a lone surrogate, and each line reader refuses such a line through
:func:`check_utf8` (a malformed line like any other: reported with file, line and column, counted, the
rest of the stream read).

>>> check_utf8("<http://s> <p> 1 .")
>>> try:
...     check_utf8(b'<http://s> "caf\\xe9"'.decode("utf-8", ERRORS))
... except NotUtf8 as err:
...     print(err.column, err)
16 byte 0xe9 is not UTF-8 (save the file as UTF-8)
"""

from __future__ import annotations

import os
import re
from typing import TextIO

from rsp.errors import Position, RspError

ERRORS = "surrogateescape"
"""How stream input is decoded: bytes that are not UTF-8 become lone surrogates U+DC80…U+DCFF."""

_ESCAPED = re.compile("[\udc80-\udcff]")


class NotUtf8(ValueError):
    """A stream line holding a byte that is not UTF-8; ``column`` (1-based) is where in the line."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


def check_utf8(line: str) -> None:
    """Raise :class:`NotUtf8` when ``line`` (decoded with :data:`ERRORS`) held a byte that is not UTF-8."""
    found = _ESCAPED.search(line)
    if found is not None:
        column = found.start() + 1
        byte = ord(found.group()) - 0xDC00
        raise NotUtf8(f"byte 0x{byte:02x} is not UTF-8 (save the file as UTF-8)", column)


def has_escaped(text: str) -> bool:
    """Whether ``text`` (decoded with :data:`ERRORS`) holds a byte that was not UTF-8; fast on ASCII."""
    return not text.isascii() and _ESCAPED.search(text) is not None


def open_stream_text(path: str | os.PathLike, encoding: str = "utf-8") -> TextIO:
    """A stream file opened for reading line by line with :data:`ERRORS` (the caller closes it)."""
    return open(path, encoding=encoding, errors=ERRORS)  # noqa: SIM115 - read lazily, closed by the caller


def read_source(path: str | os.PathLike, error: type[RspError] = RspError, what: str = "file") -> str:
    """The whole text of a program or query file; bytes that are not UTF-8 raise ``error`` at the line and
    column of the first one (``OSError`` passes through for the caller's own message)."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start].decode("utf-8", ERRORS)
        line = before.count("\n") + 1
        column = len(before) - before.rfind("\n")
        message = (
            f"cannot read the {what}: byte 0x{data[err.start]:02x} is not UTF-8 (save the file as UTF-8)"
        )
        raise error(message, Position(str(path), line, column)) from None
    return text[1:] if text.startswith("\ufeff") else text
