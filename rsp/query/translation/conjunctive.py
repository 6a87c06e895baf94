"""The pass that puts a group's window blocks into its basic graph pattern: a CQELS
``STREAM <s> [RANGE …] { P }`` block, a ``WINDOW w { P }`` or a ``GRAPH <g> { P }`` read by ◇ and holding
only triple patterns (and FILTERs over their own variables) is a join like any other of its group, so
its triple patterns join the group's basic graph pattern, each pattern marked with the graph it reads
(:attr:`rsp.query.syntax.ast.TriplePattern.graph`). The group then compiles to one rule, as the
C-SPARQL ``FROM STREAM … WHERE { P }`` form of the same query does: the engine keeps its solutions
incrementally (the static graph indexed once, window triples probed against it by the variables they
bind, rsp/engine/plan.py) and the answer is maintained from the rule's changes
(rsp/query/answers/maintained.py), instead of the solutions of the static patterns and of each block
being joined again at each instant.

Only consecutive elements are merged (a run of basic graph patterns, such blocks and FILTERs): SPARQL
joins them in any order, OPTIONAL, MINUS and BIND depend on what stands before them, and keeping the
patterns' order keeps the order ``SELECT *`` lists the variables in. A block's FILTERs become FILTERs
of the group: they read only variables its patterns bind, bound in every solution, so filtering the
join is filtering the block. Blocks with BOX or AT, with other elements (OPTIONAL, UNION, …), with
FILTERs that use EXISTS, f:timestamp or a function whose value changes per call (RAND, BNODE, …), are
left as they are.

>>> from rsp.query.syntax.parser import parse_and_validate
>>> query, _ = parse_and_validate('''SELECT ?s ?o WHERE { ?s a <http://ex/C> .
...     STREAM <http://ex/s> [RANGE 2s] { ?s <http://ex/p> ?o FILTER(?o > 3) } }''')
>>> [type(e).__name__ for e in merge_window_blocks(query).form.where.elements]
['BGP', 'Filter']
>>> [t.graph for t in merge_window_blocks(query).form.where.elements[0].triples]
[None, '<http://ex/s>']
"""

from __future__ import annotations

from dataclasses import replace

from rsp.query.syntax import ast
from rsp.query.syntax.ast import TIMESTAMP, calls, volatile
from rsp.query.syntax.validate import exists_groups, expr_vars


def merge_window_blocks(query: ast.Query) -> ast.Query:
    """``query`` with the ◇ window blocks of its groups merged into their basic graph patterns (see the
    module docstring); the same query object when nothing merges."""
    form = query.form
    where = _group(form.where)
    if where is form.where:
        return query
    return replace(query, form=replace(form, where=where))


def _group(group: ast.Group) -> ast.Group:
    elements = [_element(e) for e in group.elements]
    out: list[ast.Pattern | list] = []  # a list: a run of mergeable elements
    lifted: list[ast.Filter] = []
    run: list | None = None
    for element in elements:
        merged = _mergeable(element)
        if merged is not None:
            if run is None:
                run = []
                out.append(run)
            run.append((element, merged[0]))
            lifted.extend(merged[1])
        elif isinstance(element, ast.Filter):
            out.append(element)
        else:
            run = None
            out.append(element)
    result: list[ast.Pattern] = []
    for item in out:
        if not isinstance(item, list):
            result.append(item)
        elif len(item) == 1 and isinstance(item[0][0], ast.BGP):
            result.append(item[0][0])
        else:
            result.append(ast.BGP(tuple(t for _element, triples in item for t in triples)))
    result.extend(lifted)
    same = len(result) == len(group.elements)
    if same and all(a is b for a, b in zip(result, group.elements, strict=True)):
        return group
    return ast.Group(tuple(result), group.pos)


def _element(element: ast.Pattern) -> ast.Pattern:
    """The element with the groups inside it merged."""
    match element:
        case ast.Optional(group=inner) | ast.Minus(group=inner) | ast.WindowBlock(group=inner):
            merged = _group(inner)
            return element if merged is inner else replace(element, group=merged)
        case ast.Union(alternatives=alternatives):
            merged = tuple(_group(a) for a in alternatives)
            if all(a is b for a, b in zip(merged, alternatives, strict=True)):
                return element
            return replace(element, alternatives=merged)
        case ast.SubSelect(select=select):
            where = _group(select.where)
            return element if where is select.where else replace(element, select=replace(select, where=where))
    return element


def _mergeable(element: ast.Pattern) -> tuple[tuple[ast.TriplePattern, ...], list[ast.Filter]] | None:
    """The triple patterns (each marked with the graph it reads) and FILTERs a basic graph pattern or a
    mergeable window block puts into its group's pattern; None for any other element."""
    if isinstance(element, ast.BGP):
        return element.triples, []
    if not isinstance(element, ast.WindowBlock) or element.op is not ast.WindowOp.DIAMOND:
        return None
    triples: list[ast.TriplePattern] = []
    filters: list[ast.Filter] = []
    for inner in element.group.elements:
        if isinstance(inner, ast.BGP):
            graph = element.window
            triples.extend(t if t.graph is not None else replace(t, graph=graph) for t in inner.triples)
        elif isinstance(inner, ast.Filter):
            filters.append(inner)
        else:
            return None
    if not triples:
        return None
    bound = {t.name for triple in triples for t in (triple.subject, triple.predicate, triple.object)
             if isinstance(t, ast.Var)}  # fmt: skip
    for f in filters:
        if (
            next(iter(exists_groups(f.expr)), None) is not None
            or volatile(f.expr)
            or calls(f.expr, TIMESTAMP)
            or not {v.name for v in expr_vars(f.expr)} <= bound
        ):
            return None
    return tuple(triples), filters
