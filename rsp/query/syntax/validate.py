"""Semantic checks of a parsed query: what the grammar cannot see (scopes, windows, aggregates).

:func:`validate` raises :class:`~rsp.errors.QuerySyntaxError` (with the position of the offending text)
for a query that cannot mean anything sensible, and returns warnings (``file:line:column: warning: …``)
for one that is legal but probably not what its author meant.

Errors: a query without any stream window; a named window declared twice; ``WINDOW w`` naming a window
that no ``FROM NAMED WINDOW`` declares; ``WINDOW w AT ?t`` where ``?t`` is already bound inside the block;
a non-grouped variable outside an aggregate in
an aggregate query's SELECT or HAVING; ``SELECT *`` with GROUP BY; ``(expr AS ?v)`` or ``BIND(… AS ?v)``
re-binding a variable already in scope; an aggregate inside WHERE or inside another aggregate.

Warnings: ``STEP`` larger than ``RANGE`` (elements between windows are never seen); a named window that
no ``WINDOW`` block reads; a variable in a top-level FILTER that nothing binds; a CONSTRUCT template
variable the WHERE clause never binds; a projected variable the WHERE clause never binds (it stays unbound,
as SPARQL says); HAVING reading a SELECT alias (unbound there in SPARQL, bound in Jena-based engines).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rsp.errors import Position, QuerySyntaxError
from rsp.query.syntax.ast import (
    BGP,
    Aggregate,
    Ask,
    BinaryOp,
    Bind,
    Construct,
    Exists,
    Expr,
    Filter,
    FunctionCall,
    Group,
    InList,
    Minus,
    Optional,
    PathPattern,
    Pattern,
    Query,
    Select,
    SubSelect,
    UnaryOp,
    Union,
    Values,
    Var,
    WindowBlock,
    WindowOp,
)

# -- variables in scope (SPARQL 1.1 §18.2.1) --------------------------------------------------------------


def pattern_vars(pattern: Pattern | Group) -> set[str]:
    """The variables a pattern may bind (its in-scope variables), by name."""
    return set(in_scope(pattern))


def in_scope(pattern: Pattern | Group) -> list[str]:
    """The in-scope variables of a pattern (SPARQL 1.1 §18.2.1), in the order they are first written.

    A BGP's variables; a group's, an OPTIONAL's and a UNION's are those of their parts; ``BIND(… AS ?v)``
    adds ?v; ``VALUES`` its variables; a sub-SELECT its projected variables (every in-scope variable of
    its WHERE for ``SELECT *``); ``WINDOW w AT ?t { P }`` adds ?t to P's; MINUS and FILTER (also
    ``FILTER EXISTS``) add none. Blank nodes in patterns are variables too (named ``_…``).

    >>> from rsp.query.syntax.parser import parse_query
    >>> query = parse_query('''REGISTER QUERY Q AS SELECT * FROM STREAM <http://s> [RANGE 1s STEP 1s]
    ...     WHERE { ?s ?p ?o BIND(?o + 10 AS ?z) MINUS { ?s ?q ?m } VALUES ?k { 1 } }''')
    >>> in_scope(query.form.where)
    ['s', 'p', 'o', 'z', 'k']
    """
    names: dict[str, None] = {}
    _collect(pattern, names)
    return list(names)


def _collect(pattern: Pattern | Group, names: dict[str, None]) -> None:
    match pattern:
        case Group(elements=elements):
            for element in elements:
                _collect(element, names)
        case BGP(triples=triples):
            for tp in triples:
                for term in (tp.subject, tp.predicate, tp.object):
                    if isinstance(term, Var):
                        names.setdefault(term.name, None)
        case PathPattern(subject=subject, object=obj):
            for term in (subject, obj):
                if isinstance(term, Var):
                    names.setdefault(term.name, None)
        case Optional(group=group):
            _collect(group, names)
        case Union(alternatives=alternatives):
            for alternative in alternatives:
                _collect(alternative, names)
        case Bind(var=var):
            names.setdefault(var.name, None)
        case Values(vars=variables):
            for var in variables:
                names.setdefault(var.name, None)
        case SubSelect(select=select):
            for name in select_vars(select):
                names.setdefault(name, None)
        case WindowBlock(group=group, time_var=time_var):
            _collect(group, names)
            if time_var is not None:
                names.setdefault(time_var.name, None)
        case _:  # Filter, Minus
            pass


def select_vars(select: Select) -> list[str]:
    """The variables a (sub-)SELECT returns, in order: its projection, or for ``SELECT *`` the in-scope
    variables of its WHERE (not the hidden ones of blank nodes)."""
    if select.projection is None:
        return [v for v in in_scope(select.where) if not v.startswith("_")]
    return [p.var.name for p in select.projection]


def expr_vars(expr: Expr, *, inside_aggregates: bool = True) -> list[Var]:
    """The variables of an expression in order of appearance (not those of EXISTS patterns)."""
    if isinstance(expr, Var):
        return [expr]
    if isinstance(expr, Aggregate):
        return expr_vars(expr.arg) if inside_aggregates and expr.arg is not None else []
    return [v for sub in _subexpressions(expr) for v in expr_vars(sub, inside_aggregates=inside_aggregates)]


def _subexpressions(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of an operator, call or IN list (none for the rest)."""
    match expr:
        case BinaryOp(left=left, right=right):
            return (left, right)
        case UnaryOp(arg=arg):
            return (arg,)
        case FunctionCall(args=args):
            return args
        case InList(expr=inner, options=options):
            return (inner, *options)
        case _:
            return ()


def aggregates(expr: Expr) -> Iterator[Aggregate]:
    """The aggregates of an expression (outermost ones; not inside EXISTS)."""
    if isinstance(expr, Aggregate):
        yield expr
        return
    for sub in _subexpressions(expr):
        yield from aggregates(sub)


def _pattern_exprs(pattern: Pattern) -> Iterable[Expr]:
    match pattern:
        case Filter(expr=expr) | Bind(expr=expr):
            return (expr,)
        case _:
            return ()


def _sub_groups(pattern: Pattern) -> Iterable[Group]:
    match pattern:
        case Optional(group=group) | Minus(group=group) | WindowBlock(group=group):
            return (group,)
        case Union(alternatives=alternatives):
            return alternatives
        case _:
            return ()


def exists_groups(expr: Expr) -> Iterator[Group]:
    """The patterns of the EXISTS / NOT EXISTS inside an expression."""
    if isinstance(expr, Exists):
        yield expr.pattern
        return
    for sub in _subexpressions(expr):
        yield from exists_groups(sub)


# -- the checker --------------------------------------------------------------------------------------------


class _Checker:
    def __init__(self, query: Query, source: str | None) -> None:
        self.query = query
        self.source = source
        self.warnings: list[str] = []
        self.named = {w.name: w for w in query.windows if w.name is not None}
        self.graphs = set(query.named_graphs)
        self.used_windows: set[str] = set()

    def error(self, message: str, pos: Position | None) -> QuerySyntaxError:
        return QuerySyntaxError(message, pos or self.query.pos or Position(self.query.file))

    def warn(self, message: str, pos: Position | None) -> None:
        where = pos or self.query.pos or Position(self.query.file)
        self.warnings.append(f"{where}: warning: {message}")

    def var_pos(self, var: Var, after: Position | None) -> Position | None:
        """Where ``?var`` is first written at or after ``after`` (Var has no position of its own)."""
        if self.source is None or after is None or not after.line:
            return after
        lines = self.source.splitlines(keepends=True)
        offset = sum(len(line) for line in lines[: after.line - 1]) + after.column - 1
        match = re.compile(rf"[?$]{re.escape(var.name)}(?!\w)").search(self.source, offset)
        if match is None:
            return after
        line = self.source.count("\n", 0, match.start()) + 1
        column = match.start() - (self.source.rfind("\n", 0, match.start()) + 1) + 1
        return Position(after.file, line, column)

    # dataset -------------------------------------------------------------------------------------------
    def check_dataset(self) -> None:
        query = self.query
        if not query.windows:
            raise self.error(
                "the query reads no stream: add FROM STREAM <iri> [RANGE … STEP …] "
                "or FROM NAMED WINDOW w ON <iri> [RANGE … STEP …]",
                query.pos,
            )
        seen: set[str] = set()
        for window in query.windows:
            if window.name is not None:
                if window.name in seen:
                    raise self.error(f"window {window.name} is declared twice", window.pos)
                seen.add(window.name)
            if window.range is not None and window.step is not None and window.step > window.range:
                self.warn(
                    f"STEP ({window.step} ms) is larger than RANGE ({window.range} ms) on {window.stream}: "
                    "elements between two windows are never seen",
                    window.pos,
                )

    # patterns --------------------------------------------------------------------------------------------
    def check_group(self, group: Group) -> None:
        bound: set[str] = set()
        for element in group.elements:
            for expr in _pattern_exprs(element):
                for agg in aggregates(expr):
                    raise self.error(f"aggregate {agg.name} is not allowed inside WHERE", agg.pos)
                for inner in exists_groups(expr):
                    self.check_group(inner)
            match element:
                case Bind(var=var, pos=pos) if var.name in bound:
                    raise self.error(f"BIND assigns {var}, which is already bound in this group", pos)
                case WindowBlock():
                    self.check_window_block(element)
                case SubSelect(select=select):
                    self.check_select(select)
            for sub in _sub_groups(element):
                self.check_group(sub)
            bound |= pattern_vars(element)

    def check_window_block(self, block: WindowBlock) -> None:
        self.used_windows.add(block.window)
        if block.window not in self.named and block.window not in self.graphs:
            declared = ", ".join(sorted(self.named)) or "none"
            raise self.error(
                f"WINDOW {block.window} is not declared (declare it with FROM NAMED WINDOW {block.window} "
                f"ON <stream> [RANGE … STEP …]; declared windows: {declared})",
                block.pos,
            )
        if block.op is WindowOp.AT and block.time_var is not None:
            if block.time_var.name in pattern_vars(block.group):
                raise self.error(
                    f"AT {block.time_var} binds the time of each slot, but {block.time_var} is already "
                    "bound inside the window block; use a fresh variable",
                    self.var_pos(block.time_var, block.pos),
                )

    def check_top_filters(self, group: Group, at: Position | None) -> None:
        scope = pattern_vars(group)
        for element in group.elements:
            if isinstance(element, Filter):
                for var in expr_vars(element.expr):
                    if var.name not in scope:
                        self.warn(f"FILTER uses {var}, which the WHERE clause never binds", element.pos or at)
                        break

    # SELECT ------------------------------------------------------------------------------------------------
    def check_select(self, select: Select) -> None:
        self.check_group(select.where)
        self.check_top_filters(select.where, select.pos)
        scope = pattern_vars(select.where)
        mods = select.modifiers
        items = select.projection or ()
        all_exprs = [p.expr for p in items] + list(mods.having) + [o.expr for o in mods.order_by]
        for expr in all_exprs + [g.expr for g in mods.group_by]:
            for agg in aggregates(expr):
                if agg.arg is not None and any(True for _ in aggregates(agg.arg)):
                    raise self.error(f"aggregate {agg.name} contains another aggregate", agg.pos)
        for group_item in mods.group_by:
            for agg in aggregates(group_item.expr):
                raise self.error("GROUP BY cannot use an aggregate", agg.pos)
            if group_item.expr != group_item.var and group_item.var.name in scope:
                raise self.error(
                    f"GROUP BY (… AS {group_item.var}) re-binds {group_item.var}, which WHERE already binds",
                    self.var_pos(group_item.var, select.pos),
                )
        aggregated = bool(mods.group_by) or any(any(True for _ in aggregates(e)) for e in all_exprs)
        if select.projection is None:
            if aggregated:
                message = "SELECT * cannot be used with GROUP BY or aggregates; name the variables"
                raise self.error(message, select.pos)
            return
        grouped = {g.var.name for g in mods.group_by}
        defined: set[str] = set()
        for item in items:
            var = item.var
            if item.expr == var:
                if aggregated and var.name not in grouped | defined:
                    raise self.error(
                        f"{var} is neither grouped nor aggregated: add it to GROUP BY or use e.g. "
                        f"(SAMPLE({var}) AS ?…)",
                        self.var_pos(var, select.pos),
                    )
                if not aggregated and var.name not in scope | defined:  # SPARQL: it stays unbound
                    message = f"{var} is projected but the WHERE clause never binds it: it is always unbound"
                    self.warn(message, self.var_pos(var, select.pos))
            else:
                if var.name in scope or var.name in defined:
                    raise self.error(
                        f"(… AS {var}) assigns {var}, which is already bound", self.var_pos(var, select.pos)
                    )
                if aggregated:
                    self.check_grouped(item.expr, grouped | defined, select.pos, "SELECT")
            defined.add(var.name)
        if aggregated:
            for expr in mods.having:
                self.check_grouped(expr, grouped | defined, select.pos, "HAVING")
        aliases = {p.var.name for p in items if p.expr != p.var} - grouped
        for expr in mods.having:
            for var in expr_vars(expr, inside_aggregates=False):
                if var.name in aliases:
                    self.warn(
                        f"HAVING uses {var}, the name of a SELECT expression: SPARQL evaluates HAVING before "
                        f"SELECT, so {var} is unbound there, as in rsp (Jena-based engines such as C-SPARQL "
                        "read the alias instead); write the expression itself in HAVING",
                        self.var_pos(var, select.pos),
                    )
                    aliases.discard(var.name)

    def check_grouped(self, expr: Expr, allowed: set[str], at: Position | None, clause: str) -> None:
        for var in expr_vars(expr, inside_aggregates=False):
            if var.name not in allowed:
                raise self.error(
                    f"{var} is used in {clause} outside an aggregate but is not grouped: add it to GROUP BY "
                    "or aggregate it",
                    self.var_pos(var, at),
                )

    # the whole query ---------------------------------------------------------------------------------------
    def run(self) -> list[str]:
        self.check_dataset()
        match self.query.form:
            case Select() as select:
                self.check_select(select)
            case Construct(template=template, where=where, pos=pos):
                self.check_group(where)
                self.check_top_filters(where, pos)
                scope = pattern_vars(where)
                for triple in template:
                    for term in (triple.subject, triple.predicate, triple.object):
                        if isinstance(term, Var) and not term.name.startswith("_") and term.name not in scope:
                            message = f"CONSTRUCT template uses {term}, which the WHERE clause never binds"
                            self.warn(message, pos)
            case Ask(where=where, pos=pos):
                self.check_group(where)
                self.check_top_filters(where, pos)
        for name, window in self.named.items():
            if name not in self.used_windows:
                self.warn(f"named window {name} is declared but no WINDOW block reads it", window.pos)
        return self.warnings


def validate(query: Query, source: str | None = None) -> list[str]:
    """Check ``query``; raise :class:`QuerySyntaxError` on an error, return the warnings otherwise.

    ``source`` (the query text) lets messages about variables point at the variable itself rather than
    at its SELECT clause.

    >>> from rsp.query.syntax.parser import parse_query_unchecked
    >>> text = "REGISTER QUERY Q AS SELECT ?x FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?y ?p ?o }"
    >>> validate(parse_query_unchecked(text), text)
    ['<query>:1:28: warning: ?x is projected but the WHERE clause never binds it: it is always unbound']
    >>> text = "REGISTER QUERY Q AS SELECT ?o FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o BIND(1 AS ?o) }"
    >>> validate(parse_query_unchecked(text), text)
    Traceback (most recent call last):
    ...
    rsp.errors.QuerySyntaxError: <query>:1:...: BIND assigns ?o, which is already bound in this group
    """
    return _Checker(query, source).run()
