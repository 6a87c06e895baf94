"""A SELECT answer maintained from the engine's changes instead of rebuilt from the window each instant.

For a query whose answer is a projection of one pattern's solutions (one basic graph pattern, its
FILTERs pushed into the pattern's rule, no GROUP BY, ORDER BY, LIMIT/OFFSET, VALUES or SELECT
expressions), the answer at an instant is the pattern predicate's rows, projected, with their
multiplicities (bag semantics) or once each (DISTINCT/REDUCED). Those rows are the facts of one engine
predicate, so the answer follows what appeared and expired among them
(:class:`rsp.engine.changes.FactChanges`): each projected solution's count is kept, each solution's
dict is built once when it first appears and reused while it is an answer, and ISTREAM/DSTREAM are the
count changes of the instant: they cost what changed. RSTREAM hands over the whole answer (a list of
the kept dicts, repeated by multiplicity).

Every other query is evaluated at each instant by :mod:`rsp.query.algebra` (see
docs/architecture.md) over its patterns' solutions, which :class:`PatternSolutions` keeps the same
way: a row's solution dict is built when the row appears and dropped when it expires. The solutions
handed out are shared between instants: read them, do not change them.
"""

from __future__ import annotations

from itertools import chain, repeat

from rsp.engine.changes import FactChanges
from rsp.io.results import SharedSolution
from rsp.query import ast
from rsp.query.algebra import integer_literal
from rsp.query.translate import PatternTable, Translation

Key = tuple[str, ...]


def maintainable(query: ast.Query, translation: Translation) -> PatternTable | None:
    """The pattern table whose projected rows are the query's answer, or None if the answer needs
    more than projection (and DISTINCT) of one pattern's solutions."""
    select = query.form
    if not isinstance(select, ast.Select) or select.values is not None:
        return None
    modifiers = select.modifiers
    if modifiers.group_by or modifiers.having or modifiers.order_by or modifiers.offset:
        return None
    if modifiers.limit is not None:
        return None
    if select.projection is not None and not all(
        isinstance(item.expr, ast.Var) and item.expr.name == item.var.name for item in select.projection
    ):
        return None
    bgps = [e for e in select.where.elements if isinstance(e, ast.BGP)]
    if len(bgps) != 1:
        return None
    table = translation.tables.get(id(bgps[0]))
    if table is None or table.time_var is not None:
        return None
    pushed = {id(f) for f in table.pushed_filters}
    for element in select.where.elements:
        if element is not bgps[0] and not (isinstance(element, ast.Filter) and id(element) in pushed):
            return None
    return table


class MaintainedSelect:
    """The answer of a :func:`maintainable` SELECT, kept from the pattern predicate's changes.

    >>> from rsp.runtime import Engine
    >>> engine = Engine()
    >>> query = engine.register('''REGISTER QUERY Q AS SELECT ?s
    ...     FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?s <http://ex/p> ?o }''')
    >>> query.maintained is not None
    True
    >>> engine.push([("<http://ex/a>", "<http://ex/p>", "<http://ex/b>"),
    ...              ("<http://ex/a>", "<http://ex/p>", "<http://ex/c>")], 500)
    >>> engine.close()
    >>> [(r.time, r.bindings) for r in query]
    [(1000, [{'s': '<http://ex/a>'}, {'s': '<http://ex/a>'}])]
    """

    def __init__(self, lars, table: PatternTable, select: ast.Select, arity: int) -> None:
        names = table.variables
        if select.projection is None:
            keep = [i for i, name in enumerate(names) if not name.startswith("_")]
        else:  # a projected variable the pattern does not bind is unbound in every solution
            keep = [names.index(item.var.name) for item in select.projection if item.var.name in names]
        self.names = tuple(names[i] for i in keep)
        self.keep = tuple(keep)
        self.identity = self.keep == tuple(range(len(names)))
        self.distinct = select.distinct or select.reduced
        self.changes = FactChanges(lars, (table.pred, arity))
        self.count: dict[Key, int] = {}  # projected solution -> how many rows give it
        self.solution: dict[Key, SharedSolution] = {}  # built once, handed out while an answer

    def _key(self, row: tuple) -> Key:
        return row if self.identity else tuple(row[i] for i in self.keep)

    def update(self) -> dict[Key, int]:
        """Follow the engine to the current instant; the change of each solution's multiplicity in
        the answer (DISTINCT: +1 for a solution that became an answer, -1 for one that stopped)."""
        new, gone = self.changes.update()
        count, solution, key_of = self.count, self.solution, self._key
        delta: dict[Key, int] = {}
        for row in gone:
            key = key_of(row)
            left = count[key] - 1
            if left:
                count[key] = left
            else:
                del count[key]
            delta[key] = delta.get(key, 0) - 1
        names = self.names
        for row in new:
            key = key_of(row)
            held = count.get(key)
            if held is None:
                count[key] = 1
                if key not in solution:
                    solution[key] = SharedSolution(zip(names, key, strict=True))
            else:
                count[key] = held + 1
            delta[key] = delta.get(key, 0) + 1
        for key in [k for k in delta if k not in count]:
            solution.pop(key, None)
        if self.distinct:  # an answer iff its count is positive: the change of that
            changed = {}
            for key, d in delta.items():
                now = key in count
                before = count.get(key, 0) - d > 0
                if now != before:
                    changed[key] = 1 if now else -1
            return changed
        return delta

    def answer(self) -> list[dict[str, str]]:
        """The answer now (RSTREAM): each solution as often as it holds (once under DISTINCT)."""
        solution = self.solution
        if self.distinct or self.identity:
            return list(solution.values())
        return list(chain.from_iterable(repeat(solution[k], n) for k, n in self.count.items()))

    def change(self, delta: dict[Key, int], added: bool) -> list[dict[str, str]]:
        """ISTREAM (``added``) or DSTREAM: the solutions whose multiplicity grew (shrank), as often."""
        out: list[dict[str, str]] = []
        names = self.names
        for key, d in delta.items():
            n = d if added else -d
            if n > 0:
                found = self.solution.get(key)
                if found is None:  # DSTREAM: a solution no longer held
                    found = SharedSolution(zip(names, key, strict=True))
                out.extend(repeat(found, n))
        return out


class PatternSolutions:
    """One pattern table's solutions (a dict per row of its predicate), kept from the predicate's
    changes and listed once per instant for the algebra (:meth:`Instant.table`)."""

    def __init__(self, lars, table: PatternTable, arity: int, slot: int) -> None:
        self.table = table
        self.slot = slot
        self.changes = FactChanges(lars, (table.pred, arity))
        self.by_row: dict[tuple, dict[str, str]] = {}
        self.instant: int | None = None
        self.listed: list[dict[str, str]] = []

    def at(self, instant: int) -> list[dict[str, str]]:
        """The solutions at ``instant`` (the engine's current state); the same list for every call
        at one instant."""
        if instant == self.instant:
            return self.listed
        self.instant = instant
        new, gone = self.changes.update()
        by_row = self.by_row
        for row in gone:
            del by_row[row]
        names, time_var = self.table.variables, self.table.time_var
        for row in new:
            if time_var is None:
                by_row[row] = dict(zip(names, row, strict=True))
            else:
                solution = dict(zip(names, row[:-1], strict=True))
                solution[time_var] = integer_literal(row[-1] * self.slot)
                by_row[row] = solution
        self.listed = list(by_row.values())
        return self.listed
