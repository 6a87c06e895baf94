"""SELECT and CONSTRUCT answers maintained from the engine's changes instead of rebuilt each instant.

For a query whose answer is a projection of one pattern's solutions (one basic graph pattern, its
FILTERs pushed into the pattern's rule, no GROUP BY, ORDER BY, LIMIT/OFFSET, VALUES or SELECT
expressions), the answer at an instant is the pattern predicate's rows, projected, with their
multiplicities (bag semantics) or once each (DISTINCT/REDUCED). Those rows are the facts of one engine
predicate, so the answer follows what appeared and expired among them
(:class:`rsp.engine.changes.FactChanges`): each projected solution's count is kept, each solution's
dict is built once when it first appears and reused while it is an answer, and ISTREAM/DSTREAM are the
count changes of the instant: they cost what changed. RSTREAM hands over the whole answer (a list of
the kept dicts, repeated by multiplicity); when each solution is there once (DISTINCT, or every
variable projected), as a :class:`KeptAnswer` whose writers' texts are kept here in the answer's
order and follow its changes, so that writing the answer joins kept texts and makes only the new
ones. A CONSTRUCT over such a pattern, without blank nodes in its template, keeps each row's triples
and a count per triple (:class:`MaintainedConstruct`).

Every other query is evaluated at each instant by :mod:`rsp.query.answers.algebra` (see
docs/architecture.md) over its patterns' solutions, which :class:`PatternSolutions` keeps the same
way: a row's solution dict is built when the row appears and dropped when it expires. The solutions
handed out are shared between instants: read them, do not change them.
"""

from __future__ import annotations

from itertools import chain, repeat

from rsp.engine.changes import FactChanges
from rsp.io.results import SharedSolution
from rsp.io.solution_text import KeptAnswer
from rsp.query.answers.algebra import integer_literal
from rsp.query.answers.order import SortedRows
from rsp.query.syntax import ast
from rsp.query.syntax.validate import select_vars
from rsp.query.translation.translate import PatternTable, Translation

Key = tuple[str, ...]


def maintainable(query: ast.Query, translation: Translation) -> PatternTable | None:
    """The pattern table whose rows give the query's answer by projection (and DISTINCT), or by
    instantiating a CONSTRUCT template without blank nodes; None if the answer needs more."""
    form = query.form
    if isinstance(form, ast.Select):
        if form.values is not None or (
            form.projection is not None
            and not all(isinstance(i.expr, ast.Var) and i.expr.name == i.var.name for i in form.projection)
        ):
            return None
    elif isinstance(form, ast.Construct):
        terms = [t for triple in form.template for t in (triple.subject, triple.predicate, triple.object)]
        if any(isinstance(term, ast.Var) and term.name.startswith("_") for term in terms):
            return None  # blank nodes: fresh ones per solution and instant
    else:
        return None
    if form.modifiers != ast.Modifiers():
        return None
    select = form
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


def _dict_maker(names: tuple[str, ...]):
    """``row -> {names[0]: row[0], …}`` as one dict literal (a third of ``dict(zip(names, row))``).

    >>> _dict_maker(("x", "y"))(("<a>", "<b>"))
    {'x': '<a>', 'y': '<b>'}
    """
    items = ", ".join(f"{name!r}: row[{i}]" for i, name in enumerate(names))
    namespace: dict = {}
    exec(f"def solution(row):\n    return {{{items}}}", namespace)  # noqa: S102 - names are variables
    return namespace["solution"]


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

    def __init__(
        self, lars, table: PatternTable, select: ast.Select, arity: int, *, whole: bool = True
    ) -> None:
        names = table.variables
        if select.projection is None:
            keep = [i for i, name in enumerate(names) if not name.startswith("_")]
        else:  # a projected variable the pattern does not bind is unbound in every solution
            keep = [names.index(item.var.name) for item in select.projection if item.var.name in names]
        # the answer's order (rsp/query/answers/order.py): a key's values follow the written variables' order,
        # so keys sort as the solutions do (a row is its own key, ``identity``, when the pattern's
        # variables are all written, in that order)
        kept = {names[i] for i in keep}
        keep = [names.index(v) for v in select_vars(select) if v in kept]
        self.names = tuple(names[i] for i in keep)
        self.keep = tuple(keep)
        self.identity = self.keep == tuple(range(len(names)))
        self.distinct = select.distinct or select.reduced
        self.changes = FactChanges(lars, (table.pred, arity))
        self.count: dict[Key, int] = {}  # projected solution -> how many rows give it (not kept when
        # every variable is projected: see _update_rows)
        self.rows = 0  # the rows ``count`` counts
        self.solution: dict[Key, SharedSolution] = {}  # built once, handed out while an answer
        self.sorted = SortedRows()  # RSTREAM: ``solution`` in the answer's order, and writers' texts
        self.added: list[Key] = []  # keys put into ``solution`` by the last update
        self.dropped: list[Key] = []  # keys taken out of it
        self._dict = _dict_maker(self.names) if self.identity else None
        self.whole = whole
        """The whole answer is read at each instant (RSTREAM). When not (ISTREAM, DSTREAM), and every
        variable is projected, no solution is kept: the dicts of what changed are made when asked for."""

    def _key(self, row: tuple) -> Key:
        return row if self.identity else tuple(row[i] for i in self.keep)

    def update(self) -> dict[Key, int] | None:
        """Follow the engine to the current instant; the change of each solution's multiplicity in
        the answer (DISTINCT: +1 for a solution that became an answer, -1 for one that stopped), or
        None when every variable is projected: each row is then a solution held once, and ``added``
        and ``dropped`` say what changed."""
        new, gone = self.changes.update()
        count, solution, key_of = self.count, self.solution, self._key
        added: list[Key] = []
        self.added, self.dropped = added, []
        if self.identity:
            self._update_rows(new, gone)
            return None
        delta: dict[Key, int]
        if gone and len(gone) == self.rows:  # every row went (a tumbling window's step): all at once
            delta = {key: -n for key, n in count.items()}
            count.clear()
        else:
            delta = {}
            for row in gone:
                key = key_of(row)
                left = count[key] - 1
                if left:
                    count[key] = left
                else:
                    del count[key]
                delta[key] = delta.get(key, 0) - 1
        self.rows += len(new) - len(gone)
        names = self.names
        for row in new:
            key = key_of(row)
            held = count.get(key)
            if held is None:
                count[key] = 1
                if key not in solution:
                    solution[key] = SharedSolution(zip(names, key, strict=True))
                    added.append(key)
            else:
                count[key] = held + 1
            delta[key] = delta.get(key, 0) + 1
        dropped = self.dropped
        for key in [k for k in delta if k not in count]:
            if solution.pop(key, None) is not None:
                dropped.append(key)
        if self.whole and (added or dropped):
            self.sorted.apply([(key, solution[key]) for key in added], dropped)
        if self.distinct:  # an answer iff its count is positive: the change of that
            changed = {}
            for key, d in delta.items():
                now = key in count
                before = count.get(key, 0) - d > 0
                if now != before:
                    changed[key] = 1 if now else -1
            return changed
        return delta

    def _update_rows(self, new, gone) -> None:
        """:meth:`update` when every variable is projected: a solution is a row, held once (the rows
        that appeared are not held, those that went are), so ``count`` stays empty. Each solution is a
        plain dict made by a literal (:func:`_dict_maker`): untracked by the garbage collector, as its
        values are strings, and a third of the cost of a :class:`SharedSolution`; its texts are kept
        by :meth:`kept_texts` (RSTREAM), and ISTREAM/DSTREAM write each solution once anyway."""
        if not self.whole:  # ISTREAM/DSTREAM: what changed, sorted and its dicts made when handed out
            self.added, self.dropped = new, gone
        elif new or gone:  # RSTREAM: the solutions in order, nothing else kept
            self.sorted.apply(list(zip(new, map(self._dict, new), strict=True)), list(gone))

    def answer(self) -> list[dict[str, str]]:
        """The answer now (RSTREAM): each solution as often as it holds (once under DISTINCT), in the
        answer's order (rsp/query/answers/order.py)."""
        if self.identity and not self.whole:  # asked although not kept: made from the rows held
            return [self._dict(row) for row in sorted(self.changes.held)]
        if self.distinct or self.identity:  # each solution once
            return KeptAnswer(self.sorted.values(), self, self.sorted.epoch)
        count = self.count
        return list(chain.from_iterable(repeat(s, count[k]) for k, s in self.sorted.items()))

    def version(self) -> int:
        """Which answer :meth:`kept_texts` gives texts of: it changes whenever the answer does."""
        return self.sorted.epoch

    def kept_texts(self, key: object, make):
        """``make(solution)`` for each solution of :meth:`answer` (each once), in its order, kept for
        ``key`` (a writer and what its texts depend on) from one instant to the next: made only for the
        solutions new since the last instant that key asked at (all of them when it skipped one)."""
        return self.sorted.texts(key, make)

    def change(self, delta: dict[Key, int] | None, added: bool) -> list[dict[str, str]]:
        """ISTREAM (``added``) or DSTREAM: the solutions whose multiplicity grew (shrank), as often;
        ``delta`` is what the last :meth:`update` returned."""
        if delta is None:  # every variable projected (and not RSTREAM): the rows that appeared (went)
            return list(map(self._dict, sorted(self.added if added else self.dropped)))
        out: list[dict[str, str]] = []
        names, solution = self.names, self.solution
        sign = 1 if added else -1
        for key, d in sorted((k, d * sign) for k, d in delta.items() if d * sign > 0):  # keys sort as answers
            found = solution.get(key)
            if found is None:  # DSTREAM: a solution no longer held
                found = SharedSolution(zip(names, key, strict=True))
            out.extend(repeat(found, d))
        return out


class MaintainedConstruct:
    """The triples of a :func:`maintainable` CONSTRUCT, kept from the pattern predicate's changes: each
    row's triples made once, a count per triple of the rows that give it (the answer is a set)."""

    def __init__(self, lars, table: PatternTable, construct: ast.Construct, arity: int) -> None:
        self.names = table.variables
        self.template = construct.template
        self.changes = FactChanges(lars, (table.pred, arity))
        self.lines_of: dict[tuple, tuple[str, ...]] = {}
        self.count: dict[str, int] = {}  # triple line -> how many rows give it
        self.sorted = SortedRows()  # the lines of ``count`` in order

    def _lines(self, row: tuple) -> tuple[str, ...]:
        solution = dict(zip(self.names, row, strict=True))
        out = []
        for triple in self.template:
            terms = [
                solution.get(term.name) if isinstance(term, ast.Var) else term
                for term in (triple.subject, triple.predicate, triple.object)
            ]
            s, p, o = terms
            if s is None or p is None or o is None or s.startswith('"') or not p.startswith("<"):
                continue  # as rsp.query.answers.algebra.construct: an unbound or invalid term makes no triple
            out.append(f"{s} {p} {o} .")
        return tuple(out)

    def update(self) -> dict[str, int]:
        """Follow the engine to the current instant; +1 for a triple that became an answer, -1 for one
        that stopped being one."""
        new, gone = self.changes.update()
        count, lines_of = self.count, self.lines_of
        touched: dict[str, int] = {}
        for row in gone:
            for line in lines_of.pop(row):
                left = count[line] - 1
                if left:
                    count[line] = left
                else:
                    del count[line]
                touched[line] = touched.get(line, 0) - 1
        for row in new:
            lines = lines_of[row] = self._lines(row)
            for line in lines:
                count[line] = count.get(line, 0) + 1
                touched[line] = touched.get(line, 0) + 1
        changed = {}
        for line, d in touched.items():
            now = line in count
            if now != (count.get(line, 0) - d > 0):
                changed[line] = 1 if now else -1
        if changed:
            self.sorted.apply([(line, line) for line, d in changed.items() if d > 0],
                              [line for line, d in changed.items() if d < 0])  # fmt: skip
        return changed

    def answer(self) -> list[str]:
        """The triples now, in order (rsp/query/answers/order.py)."""
        return self.sorted.values()

    def change(self, delta: dict[str, int], added: bool) -> list[str]:
        return sorted(line for line, d in delta.items() if (d > 0) == added)


class PatternSolutions:
    """One pattern table's solutions (a dict per row of its predicate), kept from the predicate's
    changes and listed once per instant for the algebra (:meth:`Instant.table`), in row order
    (rsp/query/answers/order.py): whatever their arrival, so the operators above see a fixed order."""

    def __init__(self, lars, table: PatternTable, arity: int, slot: int) -> None:
        self.table = table
        self.slot = slot
        self.changes = FactChanges(lars, (table.pred, arity))
        self.by_row = SortedRows()  # row -> its solution
        self.instant: int | None = None
        self.listed: list[dict[str, str]] = []

    def at(self, instant: int) -> list[dict[str, str]]:
        """The solutions at ``instant`` (the engine's current state); the same list for every call
        at one instant."""
        if instant == self.instant:
            return self.listed
        self.instant = instant
        new, gone = self.changes.update()
        if not new and not gone:
            return self.listed
        names, time_var = self.table.variables, self.table.time_var
        if time_var is None:
            made = [(row, dict(zip(names, row, strict=True))) for row in new]
        else:
            made = []
            for row in new:
                solution = dict(zip(names, row[:-1], strict=True))
                solution[time_var] = integer_literal(row[-1] * self.slot)
                made.append((row, solution))
        self.by_row.apply(made, list(gone))
        self.listed = self.by_row.values()
        return self.listed
