"""SELECT answers with OPTIONAL, MINUS, FILTER (NOT) EXISTS, FILTERs, GROUP BY, aggregates and HAVING,
maintained from the engine's changes instead of recomputed over the window at each instant.

The shape kept (:func:`maintained_select` says None for any other): the WHERE group is one basic
graph pattern (its *main* pattern, first) followed by any number of ``OPTIONAL { BGP FILTER* }``,
``MINUS { BGP }`` and ``FILTER [NOT] EXISTS { BGP }`` blocks and FILTERs, where every variable a
block shares with the rest of the group is one of the main pattern's (always bound); then either a
projection of variables (DISTINCT/REDUCED allowed) or GROUP BY (expressions) with COUNT, SUM, AVG,
MIN and MAX (DISTINCT or not) in the projection and HAVING. Nothing may call NOW, RAND, BNODE, UUID or
f:timestamp; no ORDER BY, LIMIT/OFFSET, VALUES, SAMPLE or GROUP_CONCAT (their answer depends on an
order: those queries are recomputed, see docs/architecture.md).

Under that shape a main solution ``m`` gives the same output wherever the blocks stand: nothing if a
MINUS block has a partner with ``m``'s values on the shared variables (and shares one), or a NOT
EXISTS block has one (an EXISTS block none); else ``m`` merged with one partner of each OPTIONAL
block whose FILTERs hold on the merge (``m`` alone for a block with none), each output kept if the
group's other FILTERs hold on it. Each block's rows are indexed by those shared values, so a row that
appears or expires re-derives the outputs of the main solutions with its values only (and a main
row that appears or expires, its own): :class:`MaintainedOps` keeps every main solution's outputs
and hands on the difference as counts. GROUP BY keeps per group its members' count and, per
aggregate, a deletion-aware state (:class:`_Aggregate`): the count of bound values, exact integer and
decimal sums (SUM and AVG, with SPARQL's type promotion; a double or float among them sums the
group's values again, in XPath's left-to-right promotion), the count of non-numbers (which make SUM
and AVG an error), and a heap with lazy deletion for MIN and MAX, so a removed minimum is replaced by
the next one. HAVING and the projection expressions are evaluated again only for groups that changed;
a group appears with its first member and vanishes with its last (without GROUP BY the one group is
always there: COUNT gives 0 over no solutions).

The last stage (:class:`_Answer`) keeps a count per projected solution (one per solution under
DISTINCT) and its dict, built once while it is an answer (a :class:`SharedSolution` whose text the
writers keep); ISTREAM/DSTREAM are the count changes of the instant.
"""

from __future__ import annotations

from collections import Counter
from decimal import Context, Decimal
from heapq import heappop, heappush
from itertools import chain, repeat

from rsp.engine.changes import FactChanges
from rsp.io.results import SharedSolution
from rsp.query.answers.aggregates import ZERO, _sum, order_key
from rsp.query.answers.algebra import Compiled, _GroupContext, _has_aggregate
from rsp.query.answers.expr import compile_expr, compile_filter, compile_value
from rsp.query.answers.order import UNBOUND, SortedRows
from rsp.query.answers.values import DECIMAL_CONTEXT, NUM, number
from rsp.query.syntax import ast
from rsp.query.syntax.ast import TIMESTAMP, calls, volatile
from rsp.query.syntax.validate import aggregates, select_vars
from rsp.query.translation.translate import PatternTable, Translation, expr_variables, has_exists

Key = tuple  # a main row, or a projected solution as its sort key (_Answer)
KEPT_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX"})
_EXACT = Context(prec=100_000)  # decimal sums kept exactly; rounded once to DECIMAL_CONTEXT when read


def _pure(expr) -> bool:
    return not has_exists(expr) and not volatile(expr) and not calls(expr, TIMESTAMP)


def _key(solution: dict) -> Key:
    return tuple(sorted(solution.items()))


class _Block:
    """An OPTIONAL, MINUS or (NOT) EXISTS block's pattern rows, indexed by the main variables they share."""

    def __init__(self, kind: str, table: PatternTable, arity: int, lars, shared, conditions=()) -> None:
        self.kind = kind  # "optional", "minus", "exists", "not-exists"
        self.table = table
        self.changes = FactChanges(lars, (table.pred, arity))
        names = table.variables
        self.names = names
        self.shared = tuple(sorted(shared))
        self.at = tuple(names.index(n) for n in self.shared)
        self.conditions = conditions
        self.rows: dict[tuple, dict[tuple, dict]] = {}  # shared values -> row -> solution

    def update(self) -> set[tuple]:
        """Follow the engine; the shared values whose rows changed."""
        new, gone = self.changes.update()
        touched = set()
        rows, at, names = self.rows, self.at, self.names
        for row in gone:
            k = tuple(row[i] for i in at)
            bucket = rows[k]
            del bucket[row]
            if not bucket:
                del rows[k]
            touched.add(k)
        for row in new:
            k = tuple(row[i] for i in at)
            rows.setdefault(k, {})[row] = dict(zip(names, row, strict=True))
            touched.add(k)
        return touched


class _Heap:
    """MIN's or MAX's candidates: a heap of (order key, term) with lazy deletion (a term whose count
    fell to 0 is dropped when it reaches the top)."""

    __slots__ = ("heap", "count", "sign")

    def __init__(self, largest: bool) -> None:
        self.heap: list = []
        self.count: Counter = Counter()
        self.sign = largest

    def add(self, term: str, d: int) -> None:
        held = self.count[term]
        self.count[term] = held + d
        if held == 0 and d > 0:
            heappush(self.heap, _Largest(term) if self.sign else (order_key(term), term))
        elif held + d == 0:
            del self.count[term]

    def top(self) -> str | None:
        heap, count = self.heap, self.count
        while heap:
            entry = heap[0]
            term = entry.term if self.sign else entry[1]
            if term in count:
                return term
            heappop(heap)
        return None


class _Largest:
    """A heap entry ordered by decreasing ORDER BY key (MAX's heap is a min-heap of these)."""

    __slots__ = ("key", "term")

    def __init__(self, term: str) -> None:
        self.term = term
        self.key = (order_key(term), term)

    def __lt__(self, other: _Largest) -> bool:
        return other.key < self.key


class _Aggregate:
    """One aggregate's deletion-aware state over one group."""

    __slots__ = ("spec", "values", "objects", "bound", "nonnum", "ints", "decimals", "ranks", "heap", "rows")

    def __init__(self, spec: tuple) -> None:
        self.spec = spec  # (name, distinct, compiled argument or None, argument variables)
        name = spec[0]
        self.values: dict[str, int] = {}  # term -> multiplicity (DISTINCT, SUM and AVG)
        self.objects: dict = {}  # term -> its Value, while held
        self.bound = 0
        self.nonnum = 0
        self.ints = 0
        self.decimals = Decimal(0)
        self.ranks = [0, 0, 0, 0]
        self.heap = _Heap(name == "MAX") if name in ("MIN", "MAX") else None
        self.rows: Counter = Counter()  # COUNT(DISTINCT *): the members

    def add(self, solution: dict, key: Key, d: int) -> None:
        name, distinct, fn, names = self.spec
        if fn is None:  # COUNT(*)
            if distinct:
                n = self.rows[key] + d
                if n:
                    self.rows[key] = n
                else:
                    del self.rows[key]
            else:
                self.bound += d
            return
        value = fn(tuple(solution.get(n) for n in names))
        if value is None:  # unbound or an error: skipped
            return
        term = value.nt()
        if distinct or name == "SUM" or name == "AVG":
            values = self.values
            held = values.get(term, 0)
            n = held + d
            if n:
                values[term] = n
                self.objects[term] = value
            else:
                del values[term]
                del self.objects[term]
            if distinct:
                if held and n:
                    return
                d = 1 if held == 0 else -1  # a value that appeared in the set, or left it
        self.bound += d
        if self.heap is not None:
            self.heap.add(term, d)
        elif name == "SUM" or name == "AVG":
            if value.kind != NUM:
                self.nonnum += d
                return
            rank = value.rank
            self.ranks[rank] += d
            if rank == 0:
                self.ints += d * value.value
            elif rank == 1:
                self.decimals = _EXACT.add(self.decimals, _EXACT.multiply(Decimal(d), value.value))

    def result(self) -> str | None:
        name, distinct, fn, _ = self.spec
        if name == "COUNT":
            return number(len(self.rows) if fn is None and distinct else self.bound, 0).nt()
        if name in ("MIN", "MAX"):
            return self.heap.top()
        if name == "AVG" and not self.bound:
            return ZERO
        if self.nonnum:
            return None
        ranks = self.ranks
        if ranks[2] or ranks[3]:  # a float or double among them: summed again, in XPath's promotion,
            objects = self.objects  # in the terms' order (rsp/query/answers/order.py), whatever their history
            total = _sum(
                [objects[t] for t, n in sorted(self.values.items()) for _ in range(1 if distinct else n)]
            )
            if total is None:
                return None
        elif ranks[1]:
            total = number(DECIMAL_CONTEXT.plus(_EXACT.add(Decimal(self.ints), self.decimals)), 1)
        else:
            total = number(self.ints, 0)
        if name == "SUM":
            return total.nt()
        if total.rank >= 2:
            return number(total.value / self.bound, total.rank).nt()
        return number(DECIMAL_CONTEXT.divide(Decimal(total.value), Decimal(self.bound)), 1).nt()


class _Group:
    __slots__ = ("keys", "members", "aggregates", "row")

    def __init__(self, keys: dict, specs: dict) -> None:
        self.keys = keys
        self.members = 0
        self.aggregates = {i: _Aggregate(spec) for i, spec in specs.items()}
        self.row: Key | None = None  # the output row now (None: none, HAVING failed)


class _Values:
    """What _GroupContext asks of an instant, answered from one group's maintained aggregates."""

    def __init__(self, compiled: Compiled) -> None:
        self.compiled = compiled
        self.group: _Group | None = None

    def aggregate(self, agg: ast.Aggregate, members) -> str | None:
        return self.group.aggregates[id(agg)].result()

    def exists_for(self, variables):
        return None


class _Answer:
    """The answer: a count per projected solution, each solution's dict built once while it holds. A
    solution's key is its sort key (rsp/query/answers/order.py): its values in the order of ``names``, the
    written variables, :data:`UNBOUND` where unbound; ``solution`` is kept in key order."""

    def __init__(self, names: tuple[str, ...], distinct: bool) -> None:
        self.names = names
        self.distinct = distinct
        self.count: dict[Key, int] = {}
        self.solution: dict[Key, SharedSolution] = {}
        self.sorted = SortedRows()  # ``solution`` in key order

    def project(self, solution: dict) -> Key:
        return tuple([solution.get(n, UNBOUND) for n in self.names])

    def _made(self, key: Key) -> SharedSolution:
        """The solution a key stands for (its bound variables)."""
        return SharedSolution((n, v) for n, v in zip(self.names, key, strict=True) if v != UNBOUND)

    def apply(self, delta: dict[Key, int]) -> dict[Key, int]:
        count, solution = self.count, self.solution
        added, removed = [], []
        for key, d in delta.items():
            held = count.get(key, 0) + d
            if held:
                count[key] = held
                if key not in solution:
                    made = solution[key] = self._made(key)
                    added.append((key, made))
            else:
                count.pop(key, None)
                if solution.pop(key, None) is not None:
                    removed.append(key)
        if added or removed:
            self.sorted.apply(added, removed)
        if self.distinct:
            changed = {}
            for key, d in delta.items():
                now = key in count
                if now != (count.get(key, 0) - d > 0):
                    changed[key] = 1 if now else -1
            return changed
        return delta

    def answer(self) -> list[dict[str, str]]:
        if self.distinct:
            return self.sorted.values()
        count = self.count
        return list(chain.from_iterable(repeat(s, count[k]) for k, s in self.sorted.items()))

    def change(self, delta: dict[Key, int], added: bool) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        sign = 1 if added else -1
        for key, n in sorted((k, d * sign) for k, d in delta.items() if d * sign > 0):  # in answer order
            found = self.solution.get(key)
            if found is None:  # DSTREAM: a solution no longer held
                found = self._made(key)
            out.extend(repeat(found, n))
        return out


def _shape(select: ast.Select, translation: Translation):
    """The main table, the blocks (kind, table, filters) and the group's other FILTERs, or None."""
    elements = select.where.elements
    tables = translation.tables
    rest = [e for e in elements if not isinstance(e, ast.Filter)]
    if not rest or not isinstance(rest[0], ast.BGP):
        return None
    main = tables.get(id(rest[0]))
    if main is None or main.time_var is not None:
        return None
    blocks: list[tuple[str, PatternTable, tuple]] = []

    def inner(group: ast.Group, conditions_allowed: bool):
        bgps = [e for e in group.elements if isinstance(e, ast.BGP)]
        filters = tuple(e for e in group.elements if isinstance(e, ast.Filter))
        if len(bgps) != 1 or len(bgps) + len(filters) != len(group.elements):
            return None
        table = tables.get(id(bgps[0]))
        if table is None or table.time_var is not None:
            return None
        if not all(_pure(f.expr) for f in filters):
            return None
        if not conditions_allowed and not all(f in table.pushed_filters for f in filters):
            return None
        return table, filters

    for element in rest[1:]:
        kind = (
            "optional"
            if isinstance(element, ast.Optional)
            else "minus"
            if isinstance(element, ast.Minus)
            else None
        )
        if kind is None:
            return None
        found = inner(element.group, kind == "optional")
        if found is None:
            return None
        blocks.append((kind, found[0], found[1]))
    filters = []
    for element in elements:
        if not isinstance(element, ast.Filter):
            continue
        expr = element.expr
        if isinstance(expr, ast.Exists):
            found = inner(expr.pattern, False)
            if found is None:
                return None
            blocks.append(("not-exists" if expr.negated else "exists", found[0], found[1]))
        elif _pure(expr):
            if element not in main.pushed_filters:
                filters.append(element)
        else:
            return None
    # every variable a block shares with the rest of the group is the main pattern's
    main_vars = set(main.variables)
    block_vars = [set(t.variables) | {v for f in fs for v in expr_variables(f.expr)} for _, t, fs in blocks]
    for i, vars_i in enumerate(block_vars):
        for j, vars_j in enumerate(block_vars):
            if i != j and not (vars_i & vars_j) <= main_vars:
                return None
    return main, blocks, filters


def maintained_select(lars, query: ast.Query, translation: Translation, arity: dict) -> MaintainedOps | None:
    """The maintained answer of a SELECT of the shape described in the module docstring, or None."""
    select = query.form
    if not isinstance(select, ast.Select) or select.values is not None:
        return None
    modifiers = select.modifiers
    if modifiers.order_by or modifiers.limit is not None or modifiers.offset:
        return None
    shape = _shape(select, translation)
    if shape is None:
        return None
    projection = select.projection
    aggregated = (
        bool(modifiers.group_by)
        or any(_has_aggregate(p.expr) for p in projection or ())
        or any(_has_aggregate(h) for h in modifiers.having)
    )
    exprs = [p.expr for p in projection or ()] + list(modifiers.having) + [g.expr for g in modifiers.group_by]
    if not all(_pure(e) for e in exprs):
        return None
    if aggregated:
        if projection is None:
            return None
        for expr in exprs:
            for agg in aggregates(expr):
                if agg.name.upper() not in KEPT_AGGREGATES or (agg.arg is not None and not _pure(agg.arg)):
                    return None
    elif projection is not None and not all(
        isinstance(p.expr, ast.Var) and p.expr.name == p.var.name for p in projection
    ):
        return None
    main, blocks, filters = shape
    return MaintainedOps(lars, select, main, blocks, filters, aggregated, arity)


class MaintainedOps:
    """The answer of a SELECT with OPTIONAL/MINUS/(NOT) EXISTS/FILTER blocks and GROUP BY aggregates,
    kept from its patterns' changes (see the module docstring); :meth:`update`, :meth:`answer` and
    :meth:`change` as in :class:`rsp.query.answers.maintained.MaintainedSelect`."""

    def __init__(
        self, lars, select: ast.Select, main, blocks, filters, aggregated: bool, arity: dict
    ) -> None:
        self.compiled = Compiled(compile_expr, compile_filter, None, order_key)
        self.main_changes = FactChanges(lars, (main.pred, arity[main.pred]))
        self.main_names = main.variables
        main_vars = set(main.variables)
        self.blocks = []
        for kind, table, conditions in blocks:
            shared = set(table.variables) & main_vars
            conds = tuple(f.expr for f in conditions) if kind == "optional" else ()
            self.blocks.append(_Block(kind, table, arity[table.pred], lars, shared, conds))
        self.positions = [tuple(main.variables.index(n) for n in b.shared) for b in self.blocks]
        self.filters = tuple(f.expr for f in filters)
        self.plain = not self.blocks and not self.filters  # a row's one output is its own solution
        self.main: dict[tuple, dict] = {}  # main row -> its solution
        self.by_block: list[dict[tuple, set]] = [{} for _ in self.blocks]  # shared values -> main rows
        self.outputs: dict[tuple, list[Key]] = {}  # main row -> the keys of its outputs
        self.solution_of: dict[Key, dict] = {}  # output key -> solution (while some main row gives it)
        self.held: Counter = Counter()  # output key -> multiplicity
        self._tests: dict = {}
        self.aggregated = aggregated
        projection = select.projection
        self.answer_stage = _Answer(tuple(select_vars(select)), select.distinct or select.reduced)
        if aggregated:
            modifiers = select.modifiers
            self.group_by = modifiers.group_by
            # GROUP BY ?a ?b: a group's key is those variables' values, read straight from the solution
            plain = all(isinstance(g.expr, ast.Var) for g in self.group_by)
            self._group_vars = tuple(g.expr.name for g in self.group_by) if plain else None
            self.having = modifiers.having
            self.projection = projection
            self.specs: dict[int, tuple] = {}
            for expr in [p.expr for p in projection] + list(modifiers.having):
                for agg in aggregates(expr):
                    self._spec(agg)
            self.groups: dict[tuple, _Group] = {}
            self.context = _Values(self.compiled)
            if not self.group_by:  # one group, also over no solutions
                self.groups[()] = _Group({}, self.specs)
            self._first = not self.group_by

    def _spec(self, agg: ast.Aggregate) -> None:
        name = agg.name.upper()
        if agg.arg is None:
            self.specs[id(agg)] = (name, agg.distinct, None, ())
        else:
            names = tuple(sorted(expr_variables(agg.arg)))
            self.specs[id(agg)] = (name, agg.distinct, compile_value(agg.arg, names), names)

    # -- expressions -----------------------------------------------------------------------------------
    def _test(self, expr, solution: dict) -> bool:
        names = tuple(sorted(set(solution) | expr_variables(expr)))
        fn = self._tests.get((id(expr), names))
        if fn is None:
            fn = self._tests[(id(expr), names)] = compile_filter(expr, names)
        return fn(tuple(solution.get(n) for n in names))

    def _value(self, expr, solution: dict):
        names = tuple(sorted(set(solution) | expr_variables(expr)))
        fn = self._tests.get((id(expr), names, "value"))
        if fn is None:
            fn = self._tests[(id(expr), names, "value")] = compile_expr(expr, names)
        return fn(tuple(solution.get(n) for n in names))

    # -- the pattern part ------------------------------------------------------------------------------
    def _outputs(self, m: dict, row: tuple) -> list[dict]:
        """The group's solutions that main solution ``m`` gives now."""
        outs = [m]
        for block, at in zip(self.blocks, self.positions, strict=True):
            partners = block.rows.get(tuple(row[j] for j in at))
            kind = block.kind
            if kind == "minus":
                if partners and block.shared:
                    return []
            elif kind == "not-exists":
                if partners:
                    return []
            elif kind == "exists":
                if not partners:
                    return []
            else:
                extended = []
                for a in outs:
                    matched = False
                    for b in (partners or {}).values():
                        merged = {**a, **b}
                        if all(self._test(c, merged) for c in block.conditions):
                            extended.append(merged)
                            matched = True
                    if not matched:
                        extended.append(a)
                outs = extended
        if self.filters:
            outs = [s for s in outs if all(self._test(f, s) for f in self.filters)]
        return outs

    def _pattern_delta(self) -> Counter:
        """Follow the engine; the change of each group solution's multiplicity."""
        new, gone = self.main_changes.update()
        touched = [block.update() for block in self.blocks]
        main, names, positions = self.main, self.main_names, self.positions
        delta: Counter = Counter()
        solution_of, outputs = self.solution_of, self.outputs
        for row in gone:
            del main[row]
            for index, at in zip(self.by_block, positions, strict=True):
                k = tuple(row[j] for j in at)
                bucket = index[k]
                bucket.discard(row)
                if not bucket:
                    del index[k]
            for key in outputs.pop(row, ()):
                delta[key] -= 1
        for row in new:
            main[row] = dict(zip(names, row, strict=True))
            for index, at in zip(self.by_block, positions, strict=True):
                index.setdefault(tuple(row[j] for j in at), set()).add(row)
        dirty: set[tuple] = set(new)
        for index, keys in zip(self.by_block, touched, strict=True):
            for k in keys:
                dirty.update(index.get(k, ()))
        for row in dirty:
            before = outputs.get(row, ())
            after = []
            for s in self._outputs(main[row], row):
                key = _key(s)
                solution_of.setdefault(key, s)
                after.append(key)
            if after == list(before):
                continue
            for key in before:
                delta[key] -= 1
            for key in after:
                delta[key] += 1
            if after:
                outputs[row] = after
            else:
                outputs.pop(row, None)
        return self._held(delta)

    def _held(self, delta: Counter) -> Counter:
        """``delta`` without its zeros, after updating each group solution's multiplicity in ``held``."""
        held = self.held
        for key, d in list(delta.items()):
            if not d:
                del delta[key]
                continue
            n = held[key] + d
            if n:
                held[key] = n
            else:
                del held[key]
        return delta

    # -- grouping --------------------------------------------------------------------------------------
    def _plain_changes(self) -> tuple[list[tuple[dict, Key, int]], bool]:
        """For an aggregate over a group that is its main pattern alone (:attr:`plain`; without
        aggregates such a SELECT is :class:`rsp.query.answers.maintained.MaintainedSelect`'s): the
        solutions of
        the rows that went and came, as (solution, key, ±1), the key being the row itself (a row gives one
        solution, no other row the same), so no row is looked at again. With ``True`` when every row went
        at once (a tumbling window's step, or a window that empties): the groups then start afresh, and
        the rows that went are not taken out one by one."""
        new, gone = self.main_changes.update()
        main, names = self.main, self.main_names
        changes: list[tuple[dict, Key, int]] = []
        fresh = bool(gone) and len(gone) == len(main)  # FactChanges: gone ⊆ the rows held, no repeats
        if fresh:
            main.clear()
        else:
            for row in gone:
                changes.append((main.pop(row), row, -1))
        for row in new:
            s = main[row] = dict(zip(names, row, strict=True))
            changes.append((s, row, 1))
        return changes, fresh

    def _group_delta(self, delta: Counter) -> dict[Key, int]:
        solution_of = self.solution_of
        return self._group_changes([(solution_of[key], key, d) for key, d in delta.items()], False)

    def _group_changes(self, changes: list[tuple[dict, Key, int]], fresh: bool) -> dict[Key, int]:
        """Apply the group solutions' changes ``(solution, key, d)`` to their groups (``fresh``: every
        group emptied first); the change of each output row's multiplicity."""
        touched: dict[tuple, _Group] = {}
        if self._first:
            touched[()] = self.groups[()]
            self._first = False
        groups = self.groups
        if fresh:
            specs = self.specs
            for gk, group in groups.items():
                group.members = 0
                group.aggregates = {i: _Aggregate(spec) for i, spec in specs.items()}
                touched[gk] = group
        group_vars = self._group_vars
        for s, key, d in changes:
            if group_vars is not None:  # variables alone (or no GROUP BY): as _value gives them
                gk = tuple(map(s.get, group_vars))
            else:
                gk = tuple(self._value(g.expr, s) for g in self.group_by)
            group = groups.get(gk)
            if group is None:
                keys = {g.var.name: v for g, v in zip(self.group_by, gk, strict=True) if v is not None}
                group = groups[gk] = _Group(keys, self.specs)
            group.members += d
            for agg in group.aggregates.values():
                agg.add(s, key, d)
            touched[gk] = group
        out: dict[Key, int] = {}
        context = self.context
        project = self.answer_stage.project
        for gk, group in touched.items():
            row = None
            if group.members or not self.group_by:
                context.group = group
                keys = dict(group.keys)
                evaluation = _GroupContext(context, (), keys)
                self.compiled.context.new_solution()
                if all(evaluation.test(h) for h in self.having):
                    for item in self.projection:
                        value = evaluation.value(item.expr)
                        if value is not None:
                            keys[item.var.name] = value
                    row = project(keys)
            else:
                del groups[gk]
            if row != group.row:
                if group.row is not None:
                    out[group.row] = out.get(group.row, 0) - 1
                if row is not None:
                    out[row] = out.get(row, 0) + 1
                group.row = row
        return {k: d for k, d in out.items() if d}

    # -- the answer ------------------------------------------------------------------------------------
    def update(self) -> dict[Key, int]:
        """Follow the engine to the current instant; the change of each answer's multiplicity."""
        if self.aggregated and self.plain:
            return self.answer_stage.apply(self._group_changes(*self._plain_changes()))
        delta = self._pattern_delta()
        if self.aggregated:
            projected = self._group_delta(delta)
        else:
            projected: dict[Key, int] = {}
            project = self.answer_stage.project
            for key, d in delta.items():
                p = project(self.solution_of[key])
                projected[p] = projected.get(p, 0) + d
            projected = {k: d for k, d in projected.items() if d}
        for key in [k for k in delta if k not in self.held]:
            self.solution_of.pop(key, None)
        return self.answer_stage.apply(projected)

    def answer(self) -> list[dict[str, str]]:
        return self.answer_stage.answer()

    def change(self, delta: dict[Key, int], added: bool) -> list[dict[str, str]]:
        return self.answer_stage.change(delta, added)
