"""Evaluation of the SPARQL algebra above basic graph patterns, at an evaluation instant, over the
solution tables the engine maintains: joins, OPTIONAL, UNION, MINUS, FILTER, BIND, VALUES,
sub-SELECT, EXISTS, and the solution modifiers (GROUP BY and aggregates, HAVING, projection,
DISTINCT, ORDER BY, OFFSET, LIMIT), CONSTRUCT templates and ASK.

Solutions are dicts from variable name (no ``?``) to a term in N-Triples syntax; a bag is a list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from rsp.io.terms import XSD
from rsp.query.answers.context import EvalContext
from rsp.query.answers.order import in_answer_order
from rsp.query.answers.paths import GraphIndex
from rsp.query.answers.paths import solutions as path_solutions
from rsp.query.syntax import ast
from rsp.query.syntax.validate import aggregates, select_vars
from rsp.query.translation.translate import PatternTable, Translation, expr_variables

XSD_INTEGER = f"<{XSD}integer>"

Solution = dict[str, str]


def integer_literal(value: int) -> str:
    return f'"{value}"^^{XSD_INTEGER}'


def _compatible(a: Solution, b: Solution) -> bool:
    for key, value in a.items():
        other = b.get(key)
        if other is not None and other != value:
            return False
    return True


def values_rows(values: ast.Values) -> list[Solution]:
    """A VALUES block's rows as solutions (UNDEF leaves the variable unbound)."""
    return [
        {v.name: value for v, value in zip(values.vars, row, strict=True) if value is not None}
        for row in values.rows
    ]


def _visible(solutions: list[Solution]) -> list[str]:
    """The variables the solutions bind, but those of blank nodes, in name order."""
    return sorted({k for s in solutions for k in s if not k.startswith("_")})


def join(left: list[Solution], right: list[Solution]) -> list[Solution]:
    """The SPARQL join of two bags (hash join on the variables bound on both sides everywhere)."""
    if not left or not right:
        return []
    if left == [{}]:
        return list(right)
    if right == [{}]:
        return list(left)
    left_vars = set.intersection(*(set(s) for s in left))
    right_vars = set.intersection(*(set(s) for s in right))
    shared_any = set().union(*(set(s) for s in left)) & set().union(*(set(s) for s in right))
    keys = sorted(left_vars & right_vars)
    if shared_any <= set(keys):
        index: dict[tuple, list[Solution]] = {}
        for s in right:
            index.setdefault(tuple(s[k] for k in keys), []).append(s)
        out = []
        for s in left:
            for match in index.get(tuple(s[k] for k in keys), ()):
                out.append({**s, **match})
        return out
    return [{**a, **b} for a in left for b in right if _compatible(a, b)]


def left_join(left: list[Solution], right: list[Solution], condition: Callable[[Solution], bool]) -> list:
    out = []
    for a in left:
        matched = False
        for b in right:
            if _compatible(a, b):
                merged = {**a, **b}
                if condition(merged):
                    out.append(merged)
                    matched = True
        if not matched:
            out.append(a)
    return out


def minus(left: list[Solution], right: list[Solution]) -> list[Solution]:
    out = []
    for a in left:
        removed = any(_compatible(a, b) and set(a) & set(b) for b in right)
        if not removed:
            out.append(a)
    return out


@dataclass
class Compiled:
    """Expression compilers supplied by :mod:`rsp.query.answers.expr` (kept as parameters for testing),
    bound to
    the query's evaluation context (:class:`rsp.query.answers.context.EvalContext`), which they read."""

    compile_expr: Callable
    compile_filter: Callable
    aggregate: Callable
    order_key: Callable
    context: EvalContext = field(default_factory=EvalContext)

    @classmethod
    def for_context(cls, context: EvalContext) -> Compiled:
        """The compilers of :mod:`rsp.query.answers.expr` and :mod:`rsp.query.answers.aggregates` bound to
        ``context``."""
        from rsp.query.answers.aggregates import compile_aggregate, order_key
        from rsp.query.answers.expr import compile_expr, compile_filter

        return cls(
            partial(compile_expr, context=context),
            partial(compile_filter, context=context),
            partial(compile_aggregate, context=context),
            order_key,
            context,
        )


class ExpressionCache:
    """A query's compiled expressions and aggregates, kept from one instant to the next (keyed by the
    AST node, which lives as long as the query); their EXISTS calls go to the current instant."""

    def __init__(self) -> None:
        self.functions: dict[tuple, Callable] = {}
        self.instant: Instant | None = None


class Instant:
    """The algebra at one evaluation instant: ``rows(pred)`` gives a table's current tuples."""

    def __init__(
        self,
        translation: Translation,
        rows: Callable[[str], set],
        compiled: Compiled,
        cache: ExpressionCache | None = None,
        solutions: Callable[[PatternTable], list[Solution]] | None = None,
    ) -> None:
        self.translation = translation
        self.rows = rows
        self.solutions = solutions
        """When given: a pattern table's solutions, kept from one instant to the next by the caller
        (rsp/query/answers/maintained.py); the list and its dicts are only read here."""
        self.compiled = compiled
        self._exists_cache: dict[int, tuple[list[Solution], list[ast.Filter]]] = {}
        self._graphs: dict[str, GraphIndex] = {}
        self.cache = cache if cache is not None else ExpressionCache()
        self.cache.instant = self

    # -- expressions over dict solutions ------------------------------------------------------------
    def _compiled(self, expr, variables: tuple[str, ...], as_filter: bool) -> Callable:
        key = (id(expr), variables, as_filter)
        fn = self.cache.functions.get(key)
        if fn is None:
            compiler = self.compiled.compile_filter if as_filter else self.compiled.compile_expr
            fn = compiler(expr, variables, self.exists_for(variables))
            self.cache.functions[key] = fn
        return fn

    def _variables(self, expr, solution: Solution) -> tuple[str, ...]:
        return tuple(sorted(set(solution) | expr_variables(expr)))

    def test(self, expr, solution: Solution) -> bool:
        variables = self._variables(expr, solution)
        return self._compiled(expr, variables, True)(tuple(solution.get(v) for v in variables))

    def value(self, expr, solution: Solution) -> str | None:
        variables = self._variables(expr, solution)
        return self._compiled(expr, variables, False)(tuple(solution.get(v) for v in variables))

    def aggregate(self, agg: ast.Aggregate, members: list[Solution]) -> str | None:
        names = set(expr_variables(agg))
        for member in members:
            names.update(member)
        variables = tuple(sorted(names))
        key = (id(agg), variables, "aggregate")
        fn = self.cache.functions.get(key)
        if fn is None:
            fn = self.compiled.aggregate(agg, variables, self.exists_for(variables))
            self.cache.functions[key] = fn
        return fn([tuple(m.get(v) for v in variables) for m in members])

    def exists_for(self, variables: tuple[str, ...]) -> Callable:
        """The EXISTS callback for expressions compiled over ``variables`` (it answers at whichever
        instant is current when it is called)."""
        cache = self.cache
        return lambda node, values: cache.instant._exists(node, values, variables)

    def _exists(self, node: ast.Exists, values: tuple, variables: tuple[str, ...] = ()) -> bool:
        """SPARQL's EXISTS: the pattern with the outer solution substituted has a solution. The
        pattern's FILTERs may use outer variables, so they are tested on each inner solution merged
        with the outer one; the rest of the pattern is evaluated once per instant."""
        entry = self._exists_cache.get(id(node))
        if entry is None:
            elements = node.pattern.elements
            filters = [e for e in elements if isinstance(e, ast.Filter)]
            rest = ast.Group(tuple(e for e in elements if not isinstance(e, ast.Filter)))
            entry = self._exists_cache[id(node)] = (self.group(rest), filters)
        solutions, filters = entry
        outer = dict(zip(variables, values, strict=False)) if variables else {}
        outer = {k: v for k, v in outer.items() if v is not None}
        for solution in solutions:
            if _compatible(outer, solution) and (
                not filters or all(self.test(f.expr, {**solution, **outer}) for f in filters)
            ):
                return True
        return False

    # -- patterns -----------------------------------------------------------------------------------
    def table(self, table: PatternTable) -> list[Solution]:
        if self.solutions is not None:
            return self.solutions(table)
        names = table.variables
        out = []
        slot = self.translation.slot
        for row in sorted(self.rows(table.pred)):  # a fixed order (rsp/query/answers/order.py)
            if table.time_var is None:
                out.append(dict(zip(names, row, strict=True)))
            else:
                solution = dict(zip(names, row[:-1], strict=True))
                solution[table.time_var] = integer_literal(row[-1] * slot)
                out.append(solution)
        return out

    def group(self, group: ast.Group) -> list[Solution]:
        tables = self.translation.tables
        result: list[Solution] = [{}]
        pushed = set()
        filters = []
        for element in group.elements:
            if isinstance(element, ast.BGP):
                table = tables[id(element)]
                pushed.update(id(f) for f in table.pushed_filters)
                result = join(result, self.table(table))
            elif isinstance(element, ast.PathPattern):
                graph = tables[id(element)].pred
                index = self._graphs.get(graph)
                if index is None:
                    index = self._graphs[graph] = GraphIndex(sorted(self.rows(graph)))  # a fixed order
                result = join(result, path_solutions(index, element, result))
            elif isinstance(element, ast.Filter):
                filters.append(element)
            elif isinstance(element, ast.Optional):
                inner = [e for e in element.group.elements if not isinstance(e, ast.Filter)]
                conditions = [e for e in element.group.elements if isinstance(e, ast.Filter)]
                right = self.group(ast.Group(tuple(inner)))
                result = left_join(
                    result, right, lambda s, c=conditions: all(self.test(f.expr, s) for f in c)
                )
            elif isinstance(element, ast.Minus):
                result = minus(result, self.group(element.group))
            elif isinstance(element, ast.Union):
                union: list[Solution] = []
                for alternative in element.alternatives:
                    union.extend(self.group(alternative))
                result = join(result, union)
            elif isinstance(element, ast.Bind):
                name = element.var.name
                extended = []
                for s in result:
                    self.compiled.context.new_solution()
                    value = self.value(element.expr, s)
                    extended.append({**s, name: value} if value is not None else dict(s))
                result = extended
            elif isinstance(element, ast.Values):
                result = join(result, values_rows(element))
            elif isinstance(element, ast.SubSelect):
                result = join(result, self.select(element.select))
            elif isinstance(element, ast.WindowBlock):
                if element.op is ast.WindowOp.DIAMOND:
                    result = join(result, self.group(element.group))
                else:
                    result = join(result, self.table(tables[id(element)]))
            else:  # pragma: no cover - the parser builds no other element
                raise TypeError(f"unexpected pattern {element!r}")
        for f in filters:
            if id(f) not in pushed:
                result = [s for s in result if self.test(f.expr, s)]
        return result

    # -- queries ------------------------------------------------------------------------------------
    def select(self, select: ast.Select) -> list[Solution]:
        solutions = self.group(select.where)
        return self.modify(
            solutions,
            select.projection,
            select.modifiers,
            select.distinct or select.reduced,
            select.values,
            select_vars(select),
        )

    def modify(
        self,
        solutions: list[Solution],
        projection,
        modifiers: ast.Modifiers,
        distinct: bool,
        values: ast.Values | None = None,
        variables: list[str] | None = None,
    ) -> list:
        """The solution modifiers; ``values`` (a trailing VALUES clause) is joined after grouping and
        HAVING, before the SELECT expressions (§18.2.4.1). Before ORDER BY, LIMIT and OFFSET the
        solutions are put in the answer's order (rsp/query/answers/order.py) by ``variables``, the written
        ones: ORDER BY's ties and a slice without ORDER BY do not depend on how they were found."""
        aggregated = (
            bool(modifiers.group_by)
            or any(_has_aggregate(p.expr) for p in projection or ())
            or any(_has_aggregate(h) for h in modifiers.having)
        )
        if aggregated:
            solutions = self._aggregate(solutions, projection or (), modifiers)
            if values is not None:
                solutions = join(solutions, values_rows(values))
        else:
            if values is not None:
                solutions = join(solutions, values_rows(values))
            expressions = [
                item
                for item in projection or ()
                if not (isinstance(item.expr, ast.Var) and item.expr.name == item.var.name)
            ]
            if expressions:
                extended = []
                for s in solutions:
                    self.compiled.context.new_solution()  # BNODE("x"): one node within a solution
                    s = dict(s)
                    for item in expressions:
                        value = self.value(item.expr, s)
                        if value is not None:
                            s[item.var.name] = value
                    extended.append(s)
                solutions = extended
        if modifiers.order_by or modifiers.limit is not None or modifiers.offset:
            if variables is None:
                variables = (
                    [p.var.name for p in projection] if projection is not None else _visible(solutions)
                )
            solutions = in_answer_order(solutions, variables)
        if modifiers.order_by:
            key = self.compiled.order_key
            for condition in reversed(modifiers.order_by):
                solutions = sorted(
                    solutions,
                    key=lambda s, c=condition: key(self.value(c.expr, s)),
                    reverse=condition.descending,
                )
        if projection is not None:
            names = [p.var.name for p in projection]
            solutions = [{n: s[n] for n in names if n in s} for s in solutions]
        else:
            solutions = [{k: v for k, v in s.items() if not k.startswith("_")} for s in solutions]
        if distinct:
            seen = set()
            unique = []
            for s in solutions:
                key = tuple(sorted(s.items()))
                if key not in seen:
                    seen.add(key)
                    unique.append(s)
            solutions = unique
        end = None if modifiers.limit is None else modifiers.offset + modifiers.limit
        return solutions[modifiers.offset : end]

    def _aggregate(self, solutions: list[Solution], projection, modifiers: ast.Modifiers) -> list:
        groups: dict[tuple, list[Solution]] = {}
        keys = modifiers.group_by
        if not keys:
            # one group, also over no solutions (COUNT gives 0); GROUP BY over no solutions makes no
            # group (§18.5 Group), so an empty window gives no row (see tests/query/test_w3c_sparql.py)
            groups[()] = solutions
        else:
            for s in solutions:
                key = tuple(self.value(k.expr, s) for k in keys)
                groups.setdefault(key, []).append(s)
        out = []
        for key, members in groups.items():
            row: Solution = {}
            for k, value in zip(keys, key, strict=True):
                if value is not None:
                    row[k.var.name] = value
            context = _GroupContext(self, members, row)
            self.compiled.context.new_solution()
            if not all(context.test(h) for h in modifiers.having):
                continue
            for item in projection:
                value = context.value(item.expr)
                if value is not None:
                    row[item.var.name] = value
            out.append(row)
        return out


class _AggregateError(Exception):
    """An aggregate evaluated to an error inside a larger expression."""


class _GroupContext:
    """Evaluates expressions with aggregates over one group: aggregates are computed first and the
    expression is then evaluated with them as constants."""

    def __init__(self, instant: Instant, members: list[Solution], keys: Solution) -> None:
        self.instant = instant
        self.members = members
        self.keys = keys

    def _substitute(self, expr):
        if isinstance(expr, ast.Aggregate):
            value = self.instant.aggregate(expr, self.members)
            if value is None:
                raise _AggregateError
            return value
        if isinstance(expr, ast.BinaryOp):
            return ast.BinaryOp(expr.op, self._substitute(expr.left), self._substitute(expr.right), expr.pos)
        if isinstance(expr, ast.UnaryOp):
            return ast.UnaryOp(expr.op, self._substitute(expr.arg), expr.pos)
        if isinstance(expr, ast.FunctionCall):
            return ast.FunctionCall(expr.name, tuple(self._substitute(a) for a in expr.args), expr.pos)
        return expr

    def value(self, expr) -> str | None:
        if isinstance(expr, ast.Aggregate):
            return self.instant.aggregate(expr, self.members)
        if isinstance(expr, ast.Var):
            return self.keys.get(expr.name)
        try:
            substituted = self._substitute(expr)
        except _AggregateError:  # an aggregate in the expression is an error: so is the expression
            return None
        variables = tuple(sorted(self.keys))
        fn = self.instant.compiled.compile_expr(substituted, variables, self.instant.exists_for(variables))
        return fn(tuple(self.keys[k] for k in sorted(self.keys)))

    def test(self, expr) -> bool:
        try:
            substituted = self._substitute(expr)
        except _AggregateError:
            return False
        variables = tuple(sorted(self.keys))
        fn = self.instant.compiled.compile_filter(substituted, variables, self.instant.exists_for(variables))
        return fn(tuple(self.keys[k] for k in sorted(self.keys)))


def _has_aggregate(expr) -> bool:
    return next(aggregates(expr), None) is not None


def construct(
    template: tuple[ast.TriplePattern, ...], solutions: list[Solution], counter: list[int]
) -> list[str]:
    """Instantiate a CONSTRUCT template: one triple per solution and template triple whose terms are
    all bound and valid (blank-node variables are fresh per solution); a set, in first-seen order."""
    out: dict[str, None] = {}
    for solution in solutions:
        fresh: dict[str, str] = {}
        for triple in template:
            terms = []
            for term in (triple.subject, triple.predicate, triple.object):
                if isinstance(term, ast.Var):
                    value = solution.get(term.name)
                    if value is None and term.name.startswith("_"):
                        value = fresh.get(term.name)
                        if value is None:
                            counter[0] += 1
                            value = fresh[term.name] = f"_:c{counter[0]}"
                    term = value
                terms.append(term)
            s, p, o = terms
            if s is None or p is None or o is None or s.startswith('"') or not p.startswith("<"):
                continue
            out[f"{s} {p} {o} ."] = None
    return list(out)
