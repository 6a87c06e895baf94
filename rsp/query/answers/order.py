"""The order in which an instant's answers are handed out: one fixed order, so that the same stream
gives the same output, byte for byte, whatever the run.

SPARQL leaves the order of solutions open without ORDER BY. rsp fixes it: the answers of an instant
come sorted by their values, variable by variable in the order the answer's variables are written
(the projection, or for ``SELECT *`` the in-scope variables in the order they are first written),
each value compared by its N-Triples text, an unbound variable before any value. CONSTRUCT triples
come sorted by their N-Triples lines. With ORDER BY, its keys come first and this order breaks its
ties; LIMIT and OFFSET without ORDER BY take their slice of this order. So the output does not depend
on Python's hash seed, on how elements were batched, on an engine rebuilt from a log, or on how a
partitioned run split the keys.

Inside an instant the pattern solutions a recomputed query starts from are listed in the same order
(:class:`rsp.query.answers.maintained.PatternSolutions`), so GROUP_CONCAT, SAMPLE and sums of doubles see
their group's members in a fixed order too.

>>> rows = [{"x": "<b>"}, {"x": "<a>", "y": '"1"'}, {"x": "<a>"}]
>>> in_answer_order(rows, ("x", "y"))
[{'x': '<a>'}, {'x': '<a>', 'y': '"1"'}, {'x': '<b>'}]
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain

UNBOUND = ""
"""An unbound variable's place in a sort key: before every term (no N-Triples term is empty)."""


def answer_key(variables: Sequence[str]) -> Callable[[Mapping[str, str]], tuple[str, ...]]:
    """The sort key of a solution: its values in ``variables``' order, :data:`UNBOUND` where unbound."""
    names = tuple(variables)
    if len(names) == 1:
        (name,) = names
        return lambda solution: (solution.get(name, UNBOUND),)
    return lambda solution: tuple([solution.get(n, UNBOUND) for n in names])


def in_answer_order(solutions: Iterable[Mapping[str, str]], variables: Sequence[str]) -> list:
    """``solutions`` sorted by :func:`answer_key` (stable: equal solutions keep their order)."""
    return sorted(solutions, key=answer_key(variables))


_BLOCK = 512  # keys per block (a block splits at twice this), as rsp/engine/output.py's SortedTexts


class SortedRows:
    """Distinct keys in sorted order, each with a value, under batches of insertions and deletions, at
    the cost of what changed: the keys are kept in sorted blocks (the last key of each in ``maxes``)
    with their values in parallel blocks, so a change is two bisections and a short memmove, and
    :meth:`values` chains the blocks at C speed. A writer's texts of the values are kept in parallel
    blocks too (:meth:`texts`): made when a value comes, for each writer that asked at the last change.

    >>> rows = SortedRows()
    >>> rows.apply([(("b",), "B"), (("a",), "A")], []); rows.values()
    ['A', 'B']
    >>> rows.texts("w", str.lower)
    ['a', 'b']
    >>> rows.apply([(("c",), "C")], [("a",)]); rows.values(), rows.texts("w", str.lower)
    (['B', 'C'], ['b', 'c'])
    """

    __slots__ = ("keys", "vals", "maxes", "size", "owners", "epoch")

    def __init__(self) -> None:
        self.keys: list[list] = []
        self.vals: list[list] = []
        self.maxes: list = []
        self.size = 0
        # a writer's texts: owner -> [text blocks parallel to ``vals``, its ``make``, the epoch it last
        # asked at]
        self.owners: dict[object, list] = {}
        self.epoch = 0

    def __len__(self) -> int:
        return self.size

    def values(self) -> list:
        return list(chain.from_iterable(self.vals))

    def items(self):
        """(key, value) in key order."""
        return zip(chain.from_iterable(self.keys), chain.from_iterable(self.vals), strict=True)

    def apply(self, added: list[tuple], removed: list) -> None:
        """Insert ``added`` ((key, value), keys not held) and delete ``removed`` (keys held). A writer
        that did not ask for texts since the last change loses them (it gets them anew if it asks)."""
        self.epoch += 1
        if self.owners:
            self.owners = {o: entry for o, entry in self.owners.items() if entry[2] >= self.epoch - 1}
        self.size += len(added) - len(removed)
        if len(added) + len(removed) > self.size:  # most of it changed: one sort
            gone = set(removed)
            kept = [item for item in self.items() if item[0] not in gone] if gone else list(self.items())
            kept += added
            kept.sort(key=_first)
            self._blocks(kept)
            return
        maxes, keys, vals = self.maxes, self.keys, self.vals
        # the writers' text blocks, each with its make (one writer, the common case, in ``texts``)
        owners = [(entry[0], entry[1]) for entry in self.owners.values()]
        texts, make = owners[0] if len(owners) == 1 else (None, None)
        for key in removed:
            i = bisect_left(maxes, key)
            block = keys[i]
            j = bisect_left(block, key)
            del block[j], vals[i][j]
            if texts is not None:
                del texts[i][j]
            else:
                for blocks, _ in owners:
                    del blocks[i][j]
            if not block:
                del keys[i], vals[i], maxes[i]
                for blocks, _ in owners:
                    del blocks[i]
            elif j == len(block):
                maxes[i] = block[-1]
        for key, value in added:
            i = bisect_right(maxes, key)
            if i == len(maxes):  # after every key held (or none held): at the end of the last block
                if not maxes:
                    keys.append([])
                    vals.append([])
                    maxes.append(key)
                    for blocks, _ in owners:
                        blocks.append([])
                    i = 0
                else:
                    i -= 1
                    maxes[i] = key
                block = keys[i]
                j = len(block)
            else:
                block = keys[i]
                j = bisect_right(block, key)
            block.insert(j, key)
            vals[i].insert(j, value)
            if texts is not None:
                texts[i].insert(j, make(value))
            else:
                for blocks, owner_make in owners:
                    blocks[i].insert(j, owner_make(value))
            if len(block) >= 2 * _BLOCK:
                self._split(i)

    def texts(self, owner: object, make: Callable) -> list:
        """``make(value)`` for every value in order, kept for ``owner`` between calls (``make`` must
        give the same text for a value each time it is called for that owner)."""
        entry = self.owners.get(owner)
        if entry is None:
            entry = self.owners[owner] = [[list(map(make, block)) for block in self.vals], make, self.epoch]
        else:
            entry[2] = self.epoch
        return list(chain.from_iterable(entry[0]))

    def _split(self, i: int) -> None:
        for blocks in (self.keys, self.vals, *(entry[0] for entry in self.owners.values())):
            block = blocks[i]
            blocks[i : i + 1] = [block[:_BLOCK], block[_BLOCK:]]
        self.maxes[i : i + 1] = [self.keys[i][-1], self.keys[i + 1][-1]]

    def _blocks(self, items: list[tuple]) -> None:
        keys = [key for key, _ in items]
        vals = [value for _, value in items]
        self.keys = [keys[i : i + _BLOCK] for i in range(0, len(keys), _BLOCK)]
        self.vals = [vals[i : i + _BLOCK] for i in range(0, len(vals), _BLOCK)]
        self.maxes = [block[-1] for block in self.keys]
        self.owners = {}


def _first(item: tuple):
    return item[0]
