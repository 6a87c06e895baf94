"""The N-Triples fast path (the ASCII subset of :mod:`rsp.io.ntriples`) as regular expressions Java runs
(Spark SQL's ``regexp_replace``/``rlike``), written with constructs Java and Python read alike (classes
written out, ``\\x{…}``, ``\\z``, ``(?:…)``), and the recheck of the lines they do not take.

A line the pattern takes is a line :func:`rsp.io.ntriples.parse_line` takes, with the same terms and
time (``tests/spark/test_spark_syntax.py`` checks it against rsp's parser on generated lines); lines it
does not take go to rsp's parser (:func:`recheck_triple`) in the reading step, which decides and explains.
"""

from __future__ import annotations

import string
from collections.abc import Callable


def char_class(allowed: str, non_ascii: bool = False) -> str:
    r"""A regex class of the ASCII characters in ``allowed`` listed one by one, plus every non-ASCII
    character when ``non_ascii``.

    Java compiles single characters into one bit-set lookup per character, while ranges and negations
    (``[^\x00-\x20<>]``) become a chain of predicate calls. Spark's ``regexp_replace`` also compares the
    whole pattern with the previous row's, so the class is written short: printable characters as
    themselves. Parsing the Spark benchmark's lines took ≈ 10 % less time than with ranges.

    >>> print(char_class("b-a"), char_class("]\t", non_ascii=True))
    [\-ab] [\x09\]\x{80}-\x{10FFFF}]
    """
    chars = "".join(
        f"\\{c}" if c in "\\[]^-&" else c if " " < c < "\x7f" else f"\\x{ord(c):02X}"
        for c in sorted(set(allowed))
    )
    return f"[{chars}\\x{{80}}-\\x{{10FFFF}}]" if non_ascii else f"[{chars}]"


_ASCII = "".join(map(chr, range(0x80)))
_LETTER = char_class(string.ascii_letters)
_ALNUM = string.ascii_letters + string.digits
_SCHEME = char_class(_ALNUM + "+.-")
_IRI_CHAR = char_class([c for c in _ASCII if c > " " and c not in '<>"{}|^`\\'], non_ascii=True)
_STRING_CHAR = char_class([c for c in _ASCII if c not in '"\\\n\r'], non_ascii=True)
_IRI = f"<{_LETTER}{_SCHEME}*:{_IRI_CHAR}*>"
_BNODE = f"_:{char_class(_ALNUM + '_')}(?:{char_class(_ALNUM + '_.-')}*{char_class(_ALNUM + '_-')})?"
_LANGUAGE = f"@{_LETTER}+(?:-{char_class(_ALNUM)}+)*"
_LITERAL = f'"{_STRING_CHAR}*(?:\\\\[tbnrf"\'\\\\]{_STRING_CHAR}*)*"(?:{_LANGUAGE}|\\^\\^{_IRI})?'
_SUBJECT = f"{_IRI}|{_BNODE}"
_OBJECT = f"{_IRI}|{_BNODE}|{_LITERAL}"


def triple(group: Callable[[str, str], str]) -> str:
    """The line pattern with its four groups (subject ``s``, predicate ``p``, object ``o``, the time
    ``t`` of a ``# <ms>`` comment) written by ``group(name, body)``."""
    return (
        rf"^[ \t]*{group('s', _SUBJECT)}[ \t]*{group('p', _IRI)}[ \t]*"
        rf"{group('o', _OBJECT)}[ \t]*\.[ \t]*"
        rf"(?:#[ \t]*{group('t', '[0-9]+')}[ \t\r]*\z|(?:#[^\r\n]*)?\r?\z)"
    )


TRIPLE = triple(lambda _name, body: f"({body})")
"""A plain well-formed N-Triples line, groups 1-3 the terms, 4 the ``# <ms>`` time if there is one
(as Spark runs it)."""
TIME = r"#[ \t]*([0-9]+)[ \t\r]*\z"
"""The ``# <ms>`` time comment at the end of a line."""
ATOM_TIME = r"^[ \t]*(-?[0-9]+)"
"""The leading time of an atom-stream line (``36 a(x1,y)``)."""
_NOT_LINE_END = r"[^\n\r\x{85}\x{2028}\x{2029}]"
"""Java's ``.`` (any character but its line terminators), which RE2's ``.`` (all but ``\n``) is not."""
NTRIPLES_BLANK = rf"^\x{{FEFF}}?[ \t\r]*(#{_NOT_LINE_END}*)?\z"
"""A blank or comment line of an N-Triples stream (Spark drops them): a byte order mark only at the start,
as rsp's parser takes it."""
ATOMS_BLANK = r"^[ \t\r\x{FEFF}]*([%#].*)?\z"


MAX_TIME = 2**63 - 1
"""The largest time (ms) a stream line may give: Spark's long."""


def recheck_triple(line: str, arrival: int | None = None) -> tuple[int, tuple[str, str, str]] | None:
    """Time and triple of a line the fast path did not take, decided by rsp's N-Triples parser.

    ``None`` for a blank or comment line; ``ValueError`` with the reason for a malformed one. A
    line needs a ``# <ms>`` time comment unless ``arrival`` (its arrival time) is given.

    >>> recheck_triple('<http://s> <http://p> "é" . # 7')
    (7, ('<http://s>', '<http://p>', '"é"'))
    >>> recheck_triple("<http://s> <http://p> <http://o> .", arrival=1234)
    (1234, ('<http://s>', '<http://p>', '<http://o>'))
    >>> recheck_triple("<http://s> <http://p> <http://o> .")
    Traceback (most recent call last):
    ...
    ValueError: missing time comment (expected '. # <milliseconds>')
    """
    from rsp.io.ntriples import parse_line

    parsed = parse_line(line)
    if parsed is None:
        return None
    triple, comment = parsed
    word = comment.split(None, 1)[0] if comment and comment.strip() else ""
    if word.isascii() and word.isdigit():
        if int(word) > MAX_TIME:
            raise ValueError(f"time {word} is out of range (at most {MAX_TIME} ms)")
        return int(word), triple
    if arrival is not None and not (word and word[0] in "0123456789-+"):
        return arrival, triple
    if comment is None:
        raise ValueError("missing time comment (expected '. # <milliseconds>')")
    raise ValueError(f"time comment {word!r} is not a time (milliseconds ≥ 0)")
