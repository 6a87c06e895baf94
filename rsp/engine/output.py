"""The text of ``rsp lars``'s output per time point, maintained from what changed since the last one.

Formatting, sorting and JSON-encoding every atom again at each time point it holds made output cost
as much as the window holds (window-◇ with window 80: each atom written 81 times, each time rendered
anew). Here each atom's text (and its JSON string) is produced once, when the atom appears in the
output, and kept while it holds; the sorted order is kept in sorted blocks under the insertions and
deletions of each time point; a time point with no change reuses the last body as it is. What
appeared and expired is found per intensional predicate by :class:`rsp.engine.changes.FactChanges`,
at the cost of what changed; only joining the texts into the line costs what the output holds.

The record written is exactly the one the straightforward loop writes:

>>> from rsp.engine import Engine
>>> from rsp.lars import parse
>>> engine = Engine(parse("q(X) :- [1] <> p(X)."))
>>> lines = AtomLines(engine, "jsonl")
>>> engine.step(0, [("p", ("b",)), ("p", ("a",))]); lines.line(0)
'{"time": 0, "atoms": ["q(a)", "q(b)"]}\\n'
>>> engine.step(1, [("p", ("c",))]); lines.line(1)
'{"time": 1, "atoms": ["q(a)", "q(b)", "q(c)"]}\\n'
>>> engine.step(2); lines.line(2)
'{"time": 2, "atoms": ["q(c)"]}\\n'
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Collection
from itertools import chain, repeat
from json.encoder import encode_basestring

from rsp.engine.changes import FactChanges
from rsp.lars.model import format_atom

_BLOCK = 512
"""Strings per block of :class:`SortedTexts` (a block is split when it reaches twice this)."""


class SortedTexts:
    """A sorted multiset of strings under batches of insertions and deletions, in blocks.

    The strings are kept in sorted blocks (lists of at most ``2 * _BLOCK``) with the last string of
    each block in ``maxes``: an insertion or a deletion is two bisections and a memmove within one
    block, so a batch costs what changed, not what is held; :meth:`__iter__` chains the blocks. A
    batch larger than what is held rebuilds the blocks from one sort.

    >>> texts = SortedTexts()
    >>> texts.apply(["b", "a", "b"], []); list(texts)
    ['a', 'b', 'b']
    >>> texts.apply(["c"], ["b"]); list(texts)
    ['a', 'b', 'c']
    """

    __slots__ = ("blocks", "maxes", "count", "size", "_joined", "_joined_key")

    def __init__(self) -> None:
        self.blocks: list[list[str]] = []
        self.maxes: list[str] = []
        self.count: dict[str, int] = {}  # string -> how many times it is held
        self.size = 0
        self._joined: dict[int, tuple[list[str], str]] = {}  # id(block) -> (block, its joined text)
        self._joined_key: object = None

    def apply(self, added: list[str], removed: list[str]) -> None:
        """Insert ``added`` and delete ``removed`` (each string of ``removed`` is held)."""
        count = self.count
        for text in removed:
            left = count[text] - 1
            if left:
                count[text] = left
            else:
                del count[text]
        for text in added:
            count[text] = count.get(text, 0) + 1
        self.size += len(added) - len(removed)
        if len(added) + len(removed) > self.size:  # most of it changed: one sort
            self._rebuild()
            return
        for text in removed:
            self._delete(text)
        for text in added:
            self._insert(text)

    def _rebuild(self) -> None:
        order = sorted(chain.from_iterable(repeat(text, k) for text, k in self.count.items()))
        self.blocks = [order[i : i + _BLOCK] for i in range(0, len(order), _BLOCK)]
        self.maxes = [block[-1] for block in self.blocks]
        self._joined.clear()

    def joined(self, separator: str, render: Callable[[str], str] | None = None, key: object = None) -> str:
        """The strings in order (each through ``render`` if given) joined by ``separator``. Each
        block's part is kept until the block changes, so a batch costs the blocks it touched plus
        one join of the blocks' parts; ``key`` names the rendering (another key drops the parts)."""
        if key != self._joined_key:
            self._joined.clear()
            self._joined_key = key
        joined = self._joined
        parts = []
        for block in self.blocks:
            entry = joined.get(id(block))
            if entry is None or entry[0] is not block:
                text = separator.join(block if render is None else map(render, block))
                entry = joined[id(block)] = (block, text)
            parts.append(entry[1])
        return separator.join(parts)

    def _delete(self, text: str) -> None:
        maxes = self.maxes
        i = bisect_left(maxes, text)
        block = self.blocks[i]
        self._joined.pop(id(block), None)
        del block[bisect_left(block, text)]
        if not block:
            del self.blocks[i]
            del maxes[i]
        else:
            maxes[i] = block[-1]

    def _insert(self, text: str) -> None:
        maxes = self.maxes
        if not maxes:
            self.blocks.append([text])
            maxes.append(text)
            return
        i = bisect_right(maxes, text)
        if i == len(maxes):
            i -= 1
            block = self.blocks[i]
            self._joined.pop(id(block), None)
            block.append(text)
            maxes[i] = text
        else:
            block = self.blocks[i]
            self._joined.pop(id(block), None)
            insort(block, text)
        if len(block) >= 2 * _BLOCK:
            self.blocks[i : i + 1] = [block[:_BLOCK], block[_BLOCK:]]
            maxes[i : i + 1] = [block[_BLOCK - 1], block[-1]]

    def __iter__(self):
        return chain.from_iterable(self.blocks)

    def __len__(self) -> int:
        return self.size


class AtomLines:
    """``rsp lars``'s output lines (``jsonl`` or ``text``) for an engine, one :meth:`line` per time point.

    ``text_of(pred, args)`` renders an atom (default: :func:`format_atom`; ``text`` output passes the
    shortening one); ``predicates`` keeps the atoms of these predicates only (default: every one).
    Atoms are sorted by that text, as ``sorted(text_of(p, a) for p, a in
    engine.output())`` would sort them.
    """

    def __init__(
        self,
        engine,
        fmt: str,
        text_of: Callable[[str, tuple], str] = format_atom,
        predicates: Collection[tuple[str, int]] | None = None,
    ) -> None:
        if fmt not in ("jsonl", "text"):
            raise ValueError(f"AtomLines writes jsonl or text, not {fmt}")
        self.engine = engine
        self.fmt = fmt
        self.text_of = text_of
        shown = engine.intensional if predicates is None else predicates  # rsp lars --output-predicates
        self.preds = [(p[0], FactChanges(engine, p), {}) for p in sorted(shown)]
        self.sorted = SortedTexts()
        self.fragment: dict[str, str] = {}  # text -> its JSON string (jsonl)
        self.escaped = 0  # held texts whose JSON string is not '"' + text + '"'
        self.body: str | None = None  # the atoms part of the last line, reused while nothing changes

    def changes(self) -> tuple[list[str], list[str]]:
        """The texts of the atoms that appeared and of those that expired since the last call."""
        text_of = self.text_of
        appeared: list[str] = []
        expired: list[str] = []
        for name, changes, texts in self.preds:  # texts: args -> text while the atom holds
            new, gone = changes.update()
            if gone:
                pop = texts.pop
                expired.extend([pop(args) for args in gone])
            if new:
                for args in new:
                    text = texts[args] = text_of(name, args)
                    appeared.append(text)
        return appeared, expired

    def line(self, t: int) -> str:
        """The output line of time point ``t`` (the engine's current time point)."""
        appeared, expired = self.changes()
        if appeared or expired or self.body is None:
            self.sorted.apply(appeared, expired)
            if self.fmt == "jsonl":
                self._fragments(appeared, expired)
            self.body = self._body()
        if self.fmt == "jsonl":
            return f'{{"time": {t}, "atoms": [{self.body}]}}\n'
        return f"{t:>6} | {self.body}\n"

    def _fragments(self, appeared: list[str], expired: list[str]) -> None:
        fragment = self.fragment
        held = self.sorted.count
        for text in expired:
            if text not in held and text in fragment:  # its last copy went
                if len(fragment.pop(text)) != len(text) + 2:
                    self.escaped -= 1
        for text in appeared:
            if text not in fragment:
                encoded = fragment[text] = encode_basestring(text)
                if len(encoded) != len(text) + 2:
                    self.escaped += 1

    def _body(self) -> str:
        texts = self.sorted
        if self.fmt == "text":
            return texts.joined("  ") if texts.size else "-"
        if not texts.size:
            return ""
        if not self.escaped:  # every JSON string is the text in quotes
            return '"' + texts.joined('", "', key="quoted") + '"'
        return texts.joined(", ", self.fragment.__getitem__, key="fragments")
