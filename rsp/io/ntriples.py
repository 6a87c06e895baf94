"""RDF streams from N-Triples: lines with optional ``# <ms>`` time comments, read lazily into timed batches.

A stream file is N-Triples where each line may end with a comment giving its event time in
milliseconds, ``<s> <p> <o> . # 1200`` (still valid N-Triples). Terms are kept exactly as written
(IRIs with their angle brackets, literals with their quotes, escapes, language tag or datatype,
blank nodes as ``_:label``); nothing is normalised.

Where times come from (``time_policy``):

* ``None`` (default): every triple line carries its time; a line without a valid time is malformed.
* :class:`FileTime` ``(ms)``: lines without a time all take ``ms`` (one file = one instant, e.g. a
  numbered file, see :func:`file_time_from_name`).
* :class:`ArrivalTime` ``(clock)``: lines without a time take ``clock()`` when they are read.

With a policy, the first triple line decides what kind of file it is: if it carries a time comment,
every line must (the policy is not used); if not, the policy times every line, and a later line
with a time comment is malformed (times are never silently mixed).

Reading is lazy (memory is one chunk of lines plus one instant's triples) and fast: each chunk of
lines is matched at once by a regex for plain well-formed lines; only lines it does not match are
validated one by one against the full N-Triples grammar (:func:`parse_line`), which also explains
why a bad line is bad.
"""

from __future__ import annotations

import enum
import io
import itertools
import operator
import os
import re
import time as _time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rsp.errors import Position, StreamError
from rsp.io.text import ERRORS, check_utf8, has_escaped

Triple = tuple[str, str, str]
"""(subject, predicate, object), each an N-Triples term string exactly as in the input."""
Batch = tuple[int, list[Triple]]
"""An instant in milliseconds and its triples in arrival order."""
ErrorHandler = Callable[[StreamError], None]

# -- the full N-Triples grammar (W3C N-Triples 1.1), used for lines the fast path does not take --------

_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_ECHAR = r"""\\[tbnrf"'\\]"""
_PN_CHARS_BASE = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_PN_CHARS_U = _PN_CHARS_BASE + "_:"
_PN_CHARS = _PN_CHARS_U + "\\-0-9\u00b7\u0300-\u036f\u203f-\u2040"

_IRIREF = re.compile(rf"""<(?:[^\x00-\x20<>"{{}}|^`\\]|{_UCHAR})*>""")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BNODE = re.compile(rf"_:[{_PN_CHARS_U}0-9](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?")
_STRING = re.compile(rf""""(?:[^"\\\n\r]|{_ECHAR}|{_UCHAR})*\"""")
_LANGTAG = re.compile(r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*")
_ESCAPE = re.compile(rf"{_ECHAR}|{_UCHAR}")
_BAD_IRI_CHAR = re.compile(r"""[\x00-\x20<"{}|^`\\]""")
_TIME_WORD = re.compile(r"[0-9]+")
_WS = " \t"

# -- the fast path: an ASCII subset of the grammar, one regex over a whole chunk of lines ---------------

_F_IRI = r"""<[A-Za-z][A-Za-z0-9+.\-]*:[^\x00-\x20<>"{}|^`\\]*>"""
_F_BNODE = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
_F_LITERAL = (
    r'"[^"\\\n\r]*(?:\\[tbnrf"\'\\][^"\\\n\r]*)*"' + rf"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^{_F_IRI})?"
)
_F_TRIPLE = (
    rf"[ \t]*({_F_IRI}|{_F_BNODE})[ \t]*({_F_IRI})[ \t]*({_F_IRI}|{_F_BNODE}|{_F_LITERAL})[ \t]*\.[ \t]*"
)
_F_TIMED = _F_TRIPLE + r"#[ \t]*([0-9]+)[ \t\r]*"
_F_PLAIN = _F_TRIPLE + r"\r?"
# In a chunk, each match starts at a line start and takes the line's newline (much faster than '$').
_TIMED_BLOCK = re.compile(rf"(?m:^){_F_TIMED}\n")
_PLAIN_BLOCK = re.compile(rf"(?m:^){_F_PLAIN}\n")
_TIMED_LINE = re.compile(rf"{_F_TIMED}\n?")
_PLAIN_LINE = re.compile(rf"{_F_PLAIN}\n?")
_fourth = operator.itemgetter(3)


class LineError(ValueError):
    """A line that is not N-Triples: the reason, and ``column``, the 1-based column where it goes wrong."""

    def __init__(self, reason: str, column: int) -> None:
        super().__init__(reason)
        self.column = column


def parse_line(line: str) -> tuple[Triple, str | None] | None:
    """Validate one N-Triples line: ``((s, p, o), comment)`` or ``None`` for a blank or comment line.

    ``comment`` is the text after a trailing ``#`` (``None`` without one). Raises :class:`LineError` (a
    ``ValueError``) with a short reason and the column of the term or token at fault for a line that is
    not N-Triples.

    >>> parse_line('<http://s> <http://p> "a\\\\tb"@en-GB . # 1200')
    (('<http://s>', '<http://p>', '"a\\\\tb"@en-GB'), ' 1200')
    >>> parse_line("<http://s> <http://p> <http://o>")
    Traceback (most recent call last):
    ...
    rsp.io.ntriples.LineError: missing final '.'
    >>> try:
    ...     parse_line("<http://s> <http://p> oops .")
    ... except ValueError as err:
    ...     print(err.column, err)
    23 expected an IRI, blank node or literal as object, found 'oops'
    """
    end = len(line)
    while end and line[end - 1] in "\r\n":
        end -= 1
    line = line[:end]
    check_utf8(line)  # a byte that was not UTF-8 (NotUtf8, a ValueError with the column)
    pos = _skip(line, 1 if line.startswith("\ufeff") else 0)
    if pos == len(line) or line[pos] == "#":
        return None

    def term(at: int, role: str) -> tuple[str, int]:
        try:
            return _term(line, at, role)
        except ValueError as err:
            raise LineError(str(err), at + 1) from None

    s, pos = term(pos, "subject")
    p, pos = term(_skip(line, pos), "predicate")
    o, pos = term(_skip(line, pos), "object")
    pos = _skip(line, pos)
    if pos == len(line) or line[pos] == "#":
        raise LineError("missing final '.'", pos + 1)
    if line[pos] != ".":
        raise LineError(f"expected '.' after the object, found {_snippet(line, pos)}", pos + 1)
    pos = _skip(line, pos + 1)
    if pos == len(line):
        return (s, p, o), None
    if line[pos] != "#":
        raise LineError(f"unexpected text after '.': {_snippet(line, pos)}", pos + 1)
    return (s, p, o), line[pos + 1 :]


def _skip(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in _WS:
        pos += 1
    return pos


def _snippet(line: str, pos: int) -> str:
    text = line[pos:].split(None, 1)[0] if line[pos:].strip() else line[pos:]
    return repr(text[:30] + ("…" if len(text) > 30 else ""))


def _term(line: str, pos: int, role: str) -> tuple[str, int]:
    """The term of the given role starting at ``pos`` and the position after it; ValueError if bad."""
    if pos == len(line) or line[pos] in "#.":
        raise ValueError(f"missing {role}")
    first = line[pos]
    if first == "<":
        return _iri(line, pos, role)
    if first == "_" and role != "predicate":
        m = _BNODE.match(line, pos)
        if m is None:
            raise ValueError(f"bad blank node label {_snippet(line, pos)}")
        return m.group(), m.end()
    if first == '"' and role == "object":
        m = _STRING.match(line, pos)
        if m is None:
            raise ValueError(_string_problem(line, pos))
        end = m.end()
        if line.startswith("^^", end):
            if not line.startswith("<", end + 2):
                raise ValueError("datatype after '^^' must be an IRI in angle brackets")
            _iri(line, end + 2, "datatype")
            end = _IRIREF.match(line, end + 2).end()
        elif line.startswith("@", end):
            tag = _LANGTAG.match(line, end)
            if tag is None:
                raise ValueError(f"bad language tag {_snippet(line, end)}")
            end = tag.end()
        return line[pos:end], end
    raise ValueError(f"expected {_KINDS[role]} as {role}, found {_snippet(line, pos)}")


_KINDS = {"subject": "an IRI or blank node", "predicate": "an IRI", "object": "an IRI, blank node or literal"}
_STARTS = {"subject": "<_", "predicate": "<", "object": '<_"'}
_WHAT = {"<": "an IRI", "_": "a blank node", '"': "a literal"}
FAST_TERM = {
    "subject": re.compile(f"{_F_IRI}|{_F_BNODE}").fullmatch,
    "predicate": re.compile(_F_IRI).fullmatch,
    "object": re.compile(f"{_F_IRI}|{_F_BNODE}|{_F_LITERAL}").fullmatch,
}
"""Role -> ``fullmatch`` of the fast path's term expression (ASCII subset): a match is a valid term."""


def term_problem(term: str, role: str) -> str | None:
    """Why ``term`` is not one N-Triples term that can be the ``role`` (``subject``, ``predicate`` or
    ``object``) of a triple; None when it is.

    >>> term_problem('"30"^^<http://www.w3.org/2001/XMLSchema#integer>', "object") is None
    True
    >>> term_problem('"30', "object"), term_problem("http://ex.org/r1", "subject")
    ('unterminated string literal', 'an IRI is written in angle brackets: <http://ex.org/r1>')
    >>> term_problem('"a"', "subject"), term_problem("<a>", "predicate")
    ('a literal cannot be the subject', "relative IRI '<a>' (N-Triples IRIs must be absolute)")
    """
    if FAST_TERM[role](term) is not None:  # the common ASCII forms, at C speed
        return None
    if not term:
        return "empty term"
    first = term[0]
    if first not in _STARTS[role]:
        if first in _WHAT:
            return f"{_WHAT[first]} cannot be the {role}"
        if _SCHEME.match(term) and _BAD_IRI_CHAR.search(term) is None:
            return f"an IRI is written in angle brackets: <{term}>"
        return f"expected {_KINDS[role]}, found {_snippet(term, 0)}"
    try:
        _value, end = _term(term, 0, role)
    except ValueError as err:
        return str(err)
    if end != len(term):
        return f"unexpected text after the term: {_snippet(term, end)}"
    return None


def _iri(line: str, pos: int, role: str) -> tuple[str, int]:
    m = _IRIREF.match(line, pos)
    if m is None:
        close = line.find(">", pos)
        inner = line[pos + 1 : close] if close >= 0 else line[pos + 1 :]
        bad = _BAD_IRI_CHAR.search(inner)
        if close < 0 or bad is None or (bad.group() in " \t" and "<" in inner[bad.start() :]):
            raise ValueError(f"unterminated IRI in {role}")
        if bad.group() == "\\":
            raise ValueError(f"bad escape in IRI {_snippet(line, pos)}")
        if bad.group() in " \t":
            raise ValueError(f"space in IRI {_snippet(line, pos)}")
        raise ValueError(f"invalid character {bad.group()!r} in IRI {_snippet(line, pos)}")
    if _SCHEME.match(line, pos + 1) is None:
        raise ValueError(f"relative IRI {m.group()!r} (N-Triples IRIs must be absolute)")
    return m.group(), m.end()


def _string_problem(line: str, pos: int) -> str:
    i = pos + 1
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            escape = _ESCAPE.match(line, i)
            if escape is None:
                return f"bad escape {line[i : i + 2]!r} in string literal"
            i = escape.end()
            continue
        if ch in "\r\n":
            break
        i += 1
    return "unterminated string literal"


# -- time policies, late policy, counters ---------------------------------------------------------------


@dataclass(frozen=True)
class FileTime:
    """Lines without a time comment all take ``time`` (ms): the whole file is one instant."""

    time: int


def _wall_clock_ms() -> int:
    return _time.time_ns() // 1_000_000


@dataclass(frozen=True)
class ArrivalTime:
    """Lines without a time comment take ``clock()`` (ms, default: the wall clock) when they are read.

    The reader reads ``chunk`` lines at a time; for a live source (pipe, socket) pass ``chunk=1`` so
    each line is stamped as it arrives.
    """

    clock: Callable[[], int] = _wall_clock_ms


TimePolicy = FileTime | ArrivalTime


class LatePolicy(enum.Enum):
    """What to do with an element older than the newest time already read."""

    DROP = "drop"
    """Count and report it (``on_late``), then skip it."""
    FAIL = "fail"
    """Raise a :class:`~rsp.errors.StreamError` with its position."""


@dataclass
class ReadCounters:
    """What a reader has seen so far; pass one in to read it during or after reading."""

    lines: int = 0
    triples: int = 0
    rejected: int = 0
    late: int = 0
    timestamps: int = 0
    """The times read: each run of lines with one time (not the query's evaluation instants)."""

    def summary(self, source: str = "") -> str:
        """One line for people, e.g. ``s.nt: 12 lines, 10 triples at 3 timestamps, 1 rejected, 1 late``.

        >>> ReadCounters(12, 10, 1, 1, 3).summary("s.nt")
        's.nt: 12 lines, 10 triples at 3 timestamps, 1 rejected, 1 late'
        """
        prefix = f"{source}: " if source else ""
        return (
            f"{prefix}{self.lines:,} lines, {self.triples:,} triples at {self.timestamps:,} timestamps, "
            f"{self.rejected:,} rejected, {self.late:,} late"
        )


class _Rejects:
    """The reject file: every malformed line verbatim (bytes that were not UTF-8 written back as they
    came), opened (and truncated) when reading starts."""

    def __init__(self, target: TextIO | str | os.PathLike | None) -> None:
        self.owned = isinstance(target, (str, os.PathLike))
        self.handle: TextIO | None = (
            target if not self.owned else open(target, "w", encoding="utf-8", errors=ERRORS)
        )

    def write(self, line: str) -> None:
        if self.handle is not None:
            self.handle.write(line if line.endswith("\n") else line + "\n")

    def close(self) -> None:
        if self.handle is None:
            return
        if self.owned:
            self.handle.close()
        else:
            self.handle.flush()


_TIMED, _UNTIMED, _UNKNOWN = "timed", "untimed", "unknown"


def read_triple_batches(
    lines: Iterable[str],
    source: str = "<stream>",
    *,
    time_policy: TimePolicy | None = None,
    on_error: ErrorHandler | None = None,
    on_late: ErrorHandler | None = None,
    late_policy: LatePolicy | None = LatePolicy.DROP,
    reject: TextIO | str | os.PathLike | None = None,
    counters: ReadCounters | None = None,
    chunk: int = 4096,
    numbered: bool = False,
) -> Iterator[Batch]:
    """Read N-Triples stream lines lazily; yield ``(time_ms, [(s, p, o), …])`` per instant in arrival order.

    ``lines`` is any iterable of lines (an open file, a list; trailing newlines optional) and
    ``source`` the name used in error positions. Times come from the lines' ``# <ms>`` comments or
    from ``time_policy`` (see the module docstring). Consecutive lines with the same time form one
    batch; reading a later time closes every earlier instant.

    * A malformed line (bad term, unterminated literal or IRI, missing final ``.``, a time comment
      that is not a time) is counted, written verbatim to ``reject`` (an open text handle or a path,
      truncated when reading starts) and reported to ``on_error`` as a
      :class:`~rsp.errors.StreamError` at ``Position(source, line)``; then reading goes on. Without
      ``on_error`` the error is raised (strict reading).
    * An element older than the newest time read is late: counted, then under
      :attr:`LatePolicy.DROP` reported to ``on_late`` (if given) and skipped, under
      :attr:`LatePolicy.FAIL` raised as a :class:`~rsp.errors.StreamError`. With ``late_policy=None``
      the reader judges no lateness: every line is passed on in file order, a line out of order
      starting a batch of its own, for the consumer to judge (``rsp run``: the query's last closed
      instant decides, DESIGN.md §3); ``timestamps`` then counts runs of lines with one time.
    * ``counters`` (a :class:`ReadCounters`) is updated as lines are read.
    * ``numbered=True`` yields ``(time_ms, triples, line_numbers)``: the line of each triple.

    >>> lines = ["<http://a> <http://p> 1 . # 0", "<http://a> <http://p> \\"1\\" . # 0"]
    >>> lines.append("_:b <http://p> <http://c> . # 5")
    >>> errors = []
    >>> list(read_triple_batches(lines, "s.nt", on_error=errors.append))
    [(0, [('<http://a>', '<http://p>', '"1"')]), (5, [('_:b', '<http://p>', '<http://c>')])]
    >>> [str(e) for e in errors]
    ["s.nt:1:23: expected an IRI, blank node or literal as object, found '1'"]
    """
    if counters is None:
        counters = ReadCounters()
    fixed = time_policy.time if isinstance(time_policy, FileTime) else None
    clock = time_policy.clock if isinstance(time_policy, ArrivalTime) else None
    mode = _TIMED if time_policy is None else _UNKNOWN
    current: int | None = None
    batch: list[Triple] = []
    numbers: list[int] = []
    rejects = _Rejects(reject)

    def malformed(line: str, number: int, reason: str, column: int = 0) -> None:
        counters.rejected += 1
        rejects.write(line)
        error = StreamError(reason, Position(source, number, column))
        if on_error is None:
            raise error
        on_error(error)

    def late(time: int, number: int) -> None:
        counters.late += 1
        message = f"late element at time {time} (stream already at {current})"
        if late_policy is LatePolicy.FAIL:
            raise StreamError(message, Position(source, number))
        if on_late is not None:
            on_late(StreamError(message + ", dropped", Position(source, number)))

    def push(time: int, triples: list[Triple], number: int) -> Batch | None:
        """Add the triples of one time read from lines number, number+1, …; returns a closed batch."""
        nonlocal current, batch, numbers
        if time == current:
            batch.extend(triples)
            counters.triples += len(triples)
            if numbered:
                numbers.extend(range(number, number + len(triples)))
            return None
        if late_policy is not None and current is not None and time < current:
            for offset in range(len(triples)):
                late(time, number + offset)
            return None
        done = None if current is None else closed()
        current, batch = time, triples
        counters.triples += len(triples)
        if numbered:
            numbers = list(range(number, number + len(triples)))
        return done

    def closed() -> Batch:
        return (current, batch, numbers) if numbered else (current, batch)

    def one_line(line: str, number: int) -> tuple[int, Triple] | None:
        """The time and triple of one line the chunk regex did not take (None: skipped)."""
        nonlocal mode
        fast = None
        if mode != _UNKNOWN and not has_escaped(line):  # (a line with one goes to parse_line, which says why)
            fast = (_TIMED_LINE if mode == _TIMED else _PLAIN_LINE).fullmatch(line)
        if fast is not None:
            if mode == _TIMED:
                return int(fast.group(4)), fast.group(1, 2, 3)
            return (fixed if clock is None else clock()), fast.group(1, 2, 3)
        try:
            parsed = parse_line(line)
        except ValueError as err:  # LineError and any other with the column at fault
            malformed(line, number, str(err), getattr(err, "column", 0))
            return None
        if parsed is None:
            return None
        triple, comment = parsed
        word = comment.split(None, 1)[0] if comment and comment.strip() else ""
        # the column of the time word (of the line's end when there is no comment)
        end = len(line.rstrip("\r\n"))
        column = end + 1 if comment is None else end - len(comment.lstrip(" \t")) + 1
        if mode == _UNKNOWN:
            mode = _TIMED if word and word[0] in "0123456789-+" else _UNTIMED
        if mode == _TIMED:
            if comment is None:
                malformed(line, number, "missing time comment (expected '. # <milliseconds>')", column)
                return None
            if not _TIME_WORD.fullmatch(word):
                malformed(line, number, f"time comment {word!r} is not a time (milliseconds ≥ 0)", column)
                return None
            return int(word), triple
        if _TIME_WORD.fullmatch(word):
            malformed(line, number, "time comment in a stream whose first triple has none", column)
            return None
        return (fixed if clock is None else clock()), triple

    try:
        iterator = iter(lines)
        number = 0
        while True:
            block = list(itertools.islice(iterator, chunk))
            if not block:
                break
            counters.lines += len(block)
            text = _chunk_text(block)
            if has_escaped(text):  # a byte that was not UTF-8: its line is malformed (parse_line says why)
                pass
            elif mode == _TIMED:
                found = _TIMED_BLOCK.findall(text)
                if len(found) == len(block):
                    start = number + 1
                    for time_text, group in itertools.groupby(found, _fourth):
                        triples = [t[:3] for t in group]
                        done = push(int(time_text), triples, start)
                        start += len(triples)
                        if done is not None:
                            counters.timestamps += 1
                            yield done
                    number += len(block)
                    continue
            elif mode == _UNTIMED and clock is None:
                found = _PLAIN_BLOCK.findall(text)
                if len(found) == len(block):
                    done = push(fixed, found, number + 1)
                    if done is not None:
                        counters.timestamps += 1
                        yield done
                    number += len(block)
                    continue
            for line in block:
                number += 1
                parsed = one_line(line, number)
                if parsed is not None:
                    done = push(parsed[0], [parsed[1]], number)
                    if done is not None:
                        counters.timestamps += 1
                        yield done
        if current is not None:
            counters.timestamps += 1
            yield closed()
    finally:
        rejects.close()


def is_timed_line(line: str) -> bool:
    """Whether ``line`` is one well-formed triple ending in a time comment (``. # ms``), as the readers'
    fast path takes it; False does not mean malformed (:func:`parse_line` tells).

    >>> is_timed_line('<a:s> <a:p> "x" . # 12\\n'), is_timed_line("<a:s> <a:p> <a:o> .")
    (True, False)
    """
    return _TIMED_LINE.fullmatch(line) is not None


def _chunk_text(block: list[str]) -> str:
    """The lines of a chunk as one text in which every line ends with a newline."""
    text = "".join(block) if block[0][-1:] == "\n" else "\n".join(block)
    return text if text[-1:] == "\n" else text + "\n"


def text_lines(text: str) -> list[str]:
    """The lines of ``text`` as a file opened in text mode gives them (:func:`read_triple_file`): cut
    at "\\n", "\\r\\n" and "\\r" only, each ending in "\\n". Not ``str.splitlines``, which also cuts at
    U+0085, U+2028, U+2029 and other separators a literal may hold raw (N-Triples forbids only the
    line feed and the carriage return in one).

    >>> text_lines('<a> <p> "x\\u2028y" . # 1\\r\\n<b> <p> "z" .')
    ['<a> <p> "x\\u2028y" . # 1\\n', '<b> <p> "z" .']
    """
    return io.StringIO(text, newline=None).readlines()


def read_triple_file(path: str | os.PathLike, **options) -> Iterator[Batch]:
    """Read a stream file lazily (UTF-8); ``options`` as for :func:`read_triple_batches`."""
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8-sig", errors=ERRORS)  # bytes not UTF-8: bad lines
    except OSError as err:
        raise StreamError(f"cannot read stream: {err.strerror}", Position(str(path))) from None
    with handle:
        yield from read_triple_batches(handle, str(path), **options)


def file_time_from_name(path: str | os.PathLike) -> int | None:
    """The instant (ms) a numbered file name stands for: the last number in its name, if any.

    >>> file_time_from_name("in/stream_0001200.nt")
    1200
    >>> file_time_from_name("stream.nt") is None
    True
    """
    numbers = re.findall(r"[0-9]+", Path(path).name.split(".")[0])
    return int(numbers[-1]) if numbers else None


def as_triple(triple: tuple[str, str, str] | str) -> tuple[str, str, str]:
    """A triple given as ``(s, p, o)`` or as an N-Triples line ``<s> <p> <o> .``, as ``(s, p, o)``."""
    if not isinstance(triple, str):
        return triple
    parsed = parse_line(triple)
    if parsed is None:
        raise ValueError(f"not an N-Triples statement: {triple!r}")
    return parsed[0]
