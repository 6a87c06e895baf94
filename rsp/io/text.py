"""Stream input that may not be UTF-8: a stream is read line by line and goes on past a bad line, so
stream files and live input are decoded with ``errors="surrogateescape"`` (:data:`ERRORS`,
:func:`open_stream_text`): a byte that is not UTF-8 reaches its line's reader as a lone surrogate, and
each line reader refuses such a line through :func:`check_utf8` (a malformed line like any other:
reported with file, line and column, counted, the rest of the stream read). A program or query file is
read whole instead (:func:`rsp.errors.read_source`): a byte that is not UTF-8 refuses it.

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
