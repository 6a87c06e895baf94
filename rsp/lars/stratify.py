"""The stratification pass: the predicate dependency graph, its strongly connected components in
evaluation order, and the refusal of negation through recursion."""

from __future__ import annotations

from dataclasses import dataclass

from rsp.errors import ProgramError
from rsp.lars.model import Program, Rule


@dataclass(frozen=True)
class Stratum:
    """Rules evaluated together: one strongly connected component of the dependency graph."""

    predicates: frozenset[str]
    rules: tuple[Rule, ...]
    recursive: bool


def dependency_graph(program: Program) -> dict[str, set[tuple[str, bool]]]:
    """head predicate -> {(body predicate, negated)} over the proper rules."""
    graph: dict[str, set[tuple[str, bool]]] = {}
    for rule in program.proper_rules:
        edges = graph.setdefault(rule.head.atom.pred, set())
        for lit in rule.positive_atoms():
            edges.add((lit.atom.pred, False))
        for lit in rule.negative_atoms():
            edges.add((lit.atom.pred, True))
    return graph


def _components(nodes: list[str], succ: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative); components come out dependencies first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(succ.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                result.append(comp)
    return result


def stratify(program: Program) -> list[Stratum]:
    """The strata of ``program`` in evaluation order; raises on negation through recursion."""
    graph = dependency_graph(program)
    nodes = sorted(graph)
    succ = {head: sorted({pred for pred, _ in edges if pred in graph}) for head, edges in graph.items()}
    strata = []
    for comp in _components(nodes, succ):
        members = frozenset(comp)
        rules = tuple(r for r in program.proper_rules if r.head.atom.pred in members)
        for rule in rules:
            for lit in rule.negative_atoms():
                if lit.atom.pred in members:
                    raise ProgramError(
                        f"negation through recursion: '{rule.head.atom.pred}' depends negatively on "
                        f"'{lit.atom.pred}' in '{rule}', which depends back on it",
                        rule.origin.position,
                    )
        recursive = len(comp) > 1 or any(
            lit.atom.pred in members for r in rules for lit in r.positive_atoms()
        )
        strata.append(Stratum(members, rules, recursive))
    return strata
