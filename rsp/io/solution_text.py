"""Solutions an engine hands out unchanged while they are answers, and the per-format text writers keep
for them from one instant to the next (:class:`SolutionTexts`): a solution's text (a JSON object, a
CSV or TSV line, a text table's cells) is made when it first appears and reused while it stays in the
answer, so an instant's output is joined from kept pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


class SharedSolution(dict):
    """A solution an engine keeps unchanged while it is an answer and hands out at every instant
    (rsp/query/answers/maintained.py): writers may keep its text from one instant to the next. Never change
    one."""

    __slots__ = ()


class KeptAnswer(list):
    """A whole answer (its solutions, in order) an engine keeps between instants, whose texts it keeps
    too: ``source.kept_texts(key, make)`` gives ``make(row)`` for every row of the answer the source
    holds *now*, in order, at the cost of what changed since the last instant
    (rsp/query/answers/maintained.py).
    The list itself is the answer of its own instant and never changes; its source's texts serve it
    only while the source still holds that answer (``source.version()`` is still ``version``): formatted
    after a later instant closed, it is written from its own rows. Pickled as a list."""

    __slots__ = ("source", "version")

    def __init__(self, rows, source, version: int) -> None:
        super().__init__(rows)
        self.source = source
        self.version = version

    def current(self) -> bool:
        """Whether the source still holds this answer (its kept texts are this answer's)."""
        return self.source.version() == self.version

    def __reduce__(self):
        return (list, (list(self),))


class SolutionTexts:
    """The text of each :class:`SharedSolution` written at the last instant, for one writer.

    ``texts(context, rows, make)`` gives ``make(row)`` for every row, reusing the text of a
    SharedSolution seen at the last instant (or earlier in this one) under the same ``context`` (what
    else the text depends on: the variables, the header). Only the current instant's solutions are
    kept, so a solution that leaves the answer frees its text. The texts of a :class:`KeptAnswer` that
    is still its source's answer are kept by the source instead, for this writer and context, and cost
    what changed in the answer; an earlier instant's is written row by row.

    >>> texts = SolutionTexts()
    >>> a = SharedSolution(x="1")
    >>> texts.texts("ctx", [a, {"x": "2"}, a], lambda row: f"<{row['x']}>")
    ['<1>', '<2>', '<1>']
    >>> len(texts.kept)
    1
    """

    __slots__ = ("kept", "context")

    def __init__(self) -> None:
        self.kept: dict[int, tuple[SharedSolution, object]] = {}
        self.context: Hashable = None

    def texts(self, context: Hashable, rows: Sequence[Mapping], make: Callable[[Mapping], T]) -> list[T]:
        if type(rows) is KeptAnswer and rows.current():
            self.kept, self.context = {}, None
            return list(rows.source.kept_texts((self, context), make))
        cache = self.kept if self.context == context else {}
        kept: dict[int, tuple[SharedSolution, object]] = {}
        out = []
        append = out.append
        for row in rows:
            if type(row) is SharedSolution:
                key = id(row)
                entry = kept.get(key)
                if entry is None:
                    entry = cache.get(key)
                    if entry is None or entry[0] is not row:
                        entry = (row, make(row))
                    kept[key] = entry
                append(entry[1])
            else:
                append(make(row))
        self.kept, self.context = kept, context
        return out
