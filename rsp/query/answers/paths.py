"""Property-path evaluation (SPARQL 1.1 §9, §18.4) over the graph of one evaluation instant.

The translator gives a :class:`~rsp.query.syntax.ast.PathPattern` the graph predicate it reads (``g``, a named
window's ``wK``); at each instant :class:`GraphIndex` indexes that graph's triples (maintained
incrementally by the engine) and :func:`solutions` evaluates the path over it. Sequences and inverses of
links never get here (the parser turns them into triple patterns, as SPARQL's translation does).

Multiplicities follow the spec: an alternative is a union of bags, a sequence inside a path a join of
bags, a negated property set one solution per matching triple; ``P*``, ``P+`` and ``P?`` are sets
(each pair once). A zero-length path matches every subject and object of the graph (and a constant
end, in the graph or not).

>>> index = GraphIndex([("<a>", "<p>", "<b>"), ("<b>", "<p>", "<c>")])
>>> from rsp.query.syntax.ast import PathPattern, PathRepeat, Var
>>> sorted(s["y"] for s in solutions(index, PathPattern("<a>", PathRepeat("<p>", "*"), Var("y"))))
['<a>', '<b>', '<c>']
"""

from __future__ import annotations

from collections.abc import Iterable

from rsp.query.syntax import ast

Solution = dict[str, str]


class GraphIndex:
    """A graph's triples by predicate, subject and object (built once per instant and graph)."""

    def __init__(self, triples: Iterable[tuple]) -> None:
        self.out: dict[str, dict[str, list[str]]] = {}
        self.into: dict[str, dict[str, list[str]]] = {}
        self.by_subject: dict[str, list[tuple[str, str]]] = {}
        self.by_object: dict[str, list[tuple[str, str]]] = {}
        for s, p, o in triples:
            self.out.setdefault(p, {}).setdefault(s, []).append(o)
            self.into.setdefault(p, {}).setdefault(o, []).append(s)
            self.by_subject.setdefault(s, []).append((p, o))
            self.by_object.setdefault(o, []).append((p, s))
        self._nodes: list[str] | None = None

    def nodes(self) -> list[str]:
        """Every subject and object of the graph (where a zero-length path may start)."""
        if self._nodes is None:
            self._nodes = list(dict.fromkeys([*self.by_subject, *self.by_object]))
        return self._nodes


def ends(index: GraphIndex, path: ast.Path, start: str, forward: bool = True) -> list[str]:
    """The bag of y with (start, y) in the path (``forward``) or (y, start) (backward)."""
    match path:
        case str():
            table = index.out if forward else index.into
            return list(table.get(path, {}).get(start, ()))
        case ast.PathInverse(path=inner):
            return ends(index, inner, start, not forward)
        case ast.PathSequence(parts=parts):
            current = [start]
            for part in parts if forward else reversed(parts):
                current = [y for x in current for y in ends(index, part, x, forward)]
            return current
        case ast.PathAlternative(parts=parts):
            return [y for part in parts for y in ends(index, part, start, forward)]
        case ast.PathNegated(forward=excluded, inverse=excluded_inverse):
            out = []
            if excluded or not excluded_inverse:  # !(a|b): triples start p y with p not a, b
                rows = index.by_subject if forward else index.by_object
                out += [y for p, y in rows.get(start, ()) if p not in excluded]
            if excluded_inverse:  # !(^a): triples y p start with p not a
                rows = index.by_object if forward else index.by_subject
                out += [y for p, y in rows.get(start, ()) if p not in excluded_inverse]
            return out
        case ast.PathRepeat(path=inner, mod=mod):
            if mod == "?":
                return list(dict.fromkeys([start, *ends(index, inner, start, forward)]))
            seen: dict[str, None] = {start: None} if mod == "*" else {}
            frontier = [start]
            while frontier:
                following = []
                for x in frontier:
                    for y in ends(index, inner, x, forward):
                        if y not in seen:
                            seen[y] = None
                            following.append(y)
                frontier = following
            return list(seen)
    raise TypeError(f"not a property path: {path!r}")  # pragma: no cover - the parser builds no other


def _zero_length(path: ast.Path) -> bool:
    """Whether the path can match a zero-length path (then every node of the graph is a start)."""
    match path:
        case ast.PathRepeat(mod=mod, path=inner):
            return mod in "*?" or _zero_length(inner)
        case ast.PathInverse(path=inner):
            return _zero_length(inner)
        case ast.PathSequence(parts=parts):
            return all(_zero_length(p) for p in parts)
        case ast.PathAlternative(parts=parts):
            return any(_zero_length(p) for p in parts)
    return False


def _starts(index: GraphIndex, path: ast.Path) -> Iterable[str]:
    """The nodes where a pair of the path may start."""
    if isinstance(path, str):
        return index.out.get(path, {}).keys()
    return index.nodes()


def solutions(
    index: GraphIndex, pattern: ast.PathPattern, bound: list[Solution] | None = None
) -> list[Solution]:
    """The solutions of ``subject path object``. ``bound``: solutions it will be joined with; when they
    all bind the subject (or the object), the path is evaluated from those values only."""
    s, o, path = pattern.subject, pattern.object, pattern.path
    s_var = s.name if isinstance(s, ast.Var) else None
    o_var = o.name if isinstance(o, ast.Var) else None
    if s_var is None:
        found = ends(index, path, s)
        if o_var is None:
            return [{} for y in found if y == o]
        return [{o_var: y} for y in found]
    if o_var is None:
        return [{s_var: x} for x in ends(index, path, o, forward=False)]
    if bound and bound != [{}]:
        for var, forward in ((s_var, True), (o_var, False)):
            if all(var in b for b in bound):
                other = o_var if forward else s_var
                # a zero-length path between two variables starts at the graph's nodes only
                nodes = set(index.nodes()) if _zero_length(path) else None
                out = []
                for value in dict.fromkeys(b[var] for b in bound):
                    if nodes is not None and value not in nodes:
                        continue
                    for y in ends(index, path, value, forward):
                        if s_var == o_var and y != value:
                            continue
                        out.append({var: value} if s_var == o_var else {var: value, other: y})
                return out
    starts = index.nodes() if _zero_length(path) else _starts(index, path)
    out = []
    for x in list(starts):
        for y in ends(index, path, x):
            if s_var == o_var:
                if x == y:
                    out.append({s_var: x})
            else:
                out.append({s_var: x, o_var: y})
    return out
