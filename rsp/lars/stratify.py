"""The stratification pass: the predicate dependency graph, its strongly connected components in
evaluation order, and the refusal of negation through recursion."""

from __future__ import annotations

from dataclasses import dataclass

from rsp.errors import ProgramError
from rsp.lars.model import Program, Rule, Sig


@dataclass(frozen=True)
class Stratum:
    """Rules evaluated together: one strongly connected component of the dependency graph."""

    predicates: frozenset[Sig]
    rules: tuple[Rule, ...]
    recursive: bool


def dependency_graph(program: Program) -> dict[Sig, set[tuple[Sig, bool]]]:
    """head predicate -> {(body predicate, negated)} over the proper rules (predicates with arity)."""
    graph: dict[Sig, set[tuple[Sig, bool]]] = {}
    for rule in program.proper_rules:
        edges = graph.setdefault(rule.head.atom.sig, set())
        for lit in rule.positive_atoms():
            edges.add((lit.atom.sig, False))
        for lit in rule.negative_atoms():
            edges.add((lit.atom.sig, True))
    return graph


def components(nodes: list[Sig], succ: dict[Sig, list[Sig]]) -> list[list[Sig]]:
    """Tarjan's algorithm (iterative); components come out dependencies first."""
    index: dict[Sig, int] = {}
    low: dict[Sig, int] = {}
    on_stack: set[Sig] = set()
    stack: list[Sig] = []
    result: list[list[Sig]] = []
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
    for comp in components(nodes, succ):
        members = frozenset(comp)
        rules = tuple(r for r in program.proper_rules if r.head.atom.sig in members)
        for rule in rules:
            for lit in rule.negative_atoms():
                if lit.atom.sig in members:
                    raise ProgramError(
                        f"negation through recursion: '{rule.head.atom.sig}' depends negatively on "
                        f"'{lit.atom.sig}' in '{rule}', which depends back on it",
                        rule.origin.position,
                    )
        recursive = len(comp) > 1 or any(lit.atom.sig in members for r in rules for lit in r.positive_atoms())
        strata.append(Stratum(members, rules, recursive))
    return strata
