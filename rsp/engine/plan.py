"""Compiled plans: each rule becomes Python functions, one per semi-naive variant (the i-th reads the
delta of its i-th positive body atom, and skips at the atoms before it the facts new in the same round,
so that a derivation with several new premises is made once) plus a full variant, generated as source
code and compiled once.

A plan joins formula tables (see :mod:`rsp.engine.store`) in a greedy order — probes with the most
bound positions first — joins atoms that share no unbound variable as a product (each part's matches
collected once, not one part's join repeated inside another's), applies comparisons, assignments and
negated atoms as soon as their variables are bound, and hands each head instance with its horizon (the
minimum of its premises' horizons) to an emit function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType

from rsp.engine.store import Table
from rsp.lars.model import BinOp, Comparison, Constant, Expr, Rule, Var
from rsp.lars.safety import assignment_target

# ---------------------------------------------------------------------------------------------------
# value semantics of comparisons and arithmetic (docs/lars-semantics.md)


def _is_num(value: object) -> bool:
    return type(value) is int or type(value) is float


def op_lt(a, b) -> bool:
    if _is_num(a) != _is_num(b) or a is None or b is None:
        return False
    return a < b


def op_le(a, b) -> bool:
    if _is_num(a) != _is_num(b) or a is None or b is None:
        return False
    return a <= b


def op_gt(a, b) -> bool:
    return op_lt(b, a)


def op_ge(a, b) -> bool:
    return op_le(b, a)


def op_add(a, b):
    if _is_num(a) and _is_num(b):
        return a + b
    return None


def op_sub(a, b):
    if _is_num(a) and _is_num(b):
        return a - b
    return None


def op_mul(a, b):
    if _is_num(a) and _is_num(b):
        return a * b
    return None


def op_div(a, b):
    if not (_is_num(a) and _is_num(b)) or b == 0:
        return None
    if type(a) is int and type(b) is int:
        return a // b if a % b == 0 else a / b
    return a / b


_ARITH = {"+": "op_add", "-": "op_sub", "*": "op_mul", "/": "op_div"}
_COMPARE = {"<": "op_lt", "<=": "op_le", ">": "op_gt", ">=": "op_ge"}

RUNTIME = {
    "op_lt": op_lt,
    "op_le": op_le,
    "op_gt": op_gt,
    "op_ge": op_ge,
    "op_add": op_add,
    "op_sub": op_sub,
    "op_mul": op_mul,
    "op_div": op_div,
}


@dataclass
class Literal:
    """A body atom as the planner sees it: the table it reads and the term at each key position."""

    table: Table
    pattern: tuple[Var | Constant, ...]
    own: bool = False
    """True when the table belongs to the stratum being evaluated (it grows between a stratum's rounds,
    never during a variant: a variant emits its derivations after its loops)."""

    def variables(self) -> set[str]:
        return {p.name for p in self.pattern if isinstance(p, Var)}


@dataclass
class RulePlan:
    """The compiled variants of one rule."""

    rule: Rule
    positives: list[Literal]
    negatives: list[Literal]
    volatile: bool
    variants: list[Callable] = field(default_factory=list)
    full: Callable | None = None
    source: str = ""
    indexes: set[tuple[Table, tuple[int, ...]]] = field(default_factory=set)
    """The (table, positions) indexes its semi-naive variants probe."""


class _Gen:
    """Generates one variant's source code."""

    def __init__(
        self, plan_id: str, rule: Rule, positives: list[Literal], negatives: list[Literal], namespace: dict
    ) -> None:
        self.rule = rule
        self.positives = positives
        self.negatives = negatives
        self.ns = namespace
        self.plan_id = plan_id
        self.uses: list[tuple[Table, tuple[int, ...]]] = []
        """The (table, positions) indexes the variant probes."""
        self.lines: list[str] = []
        self.depth = 1
        self.bound: dict[str, str] = {}
        self.consts: dict[object, str] = {}
        self.key_vars: dict[str, tuple[str, ...]] = {}
        """key variable -> the rule variables it binds, in order, when it binds only new variables"""

    def const(self, value: object) -> str:
        name = self.consts.get((type(value), value))
        if name is None:
            name = f"c{len(self.consts)}"
            self.consts[(type(value), value)] = name
            self.ns[name] = value
        return name

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def term(self, term: Var | Constant) -> str:
        if isinstance(term, Var):
            return self.bound[term.name]
        return self.const(term)

    def tuple_of(self, terms: tuple) -> str:
        if not terms:
            return "()"
        return f"({', '.join(self.term(t) for t in terms)},)"

    def expr(self, expr: Expr) -> str:
        if isinstance(expr, BinOp):
            return f"{_ARITH[expr.op]}({self.expr(expr.left)}, {self.expr(expr.right)})"
        return self.term(expr)

    def bind_key(self, key: str, pattern: tuple, skip: set[int]) -> None:
        """Check constants and bound variables of ``pattern`` against ``key``; bind new variables."""
        for j, term in enumerate(pattern):
            if j in skip:
                continue
            if isinstance(term, Var):
                if term.name in self.bound:
                    self.emit(f"if {key}[{j}] != {self.bound[term.name]}: continue")
                else:
                    name = f"v_{term.name}"
                    self.emit(f"{name} = {key}[{j}]")
                    self.bound[term.name] = name
            else:
                self.emit(f"if {key}[{j}] != {self.const(term)}: continue")

    def horizon(self, table_var: str, key: str, step: int) -> None:
        self.emit(f"e = {table_var}[{key}]")
        self.min_horizon(step)

    def min_horizon(self, step: int) -> None:
        """``h<step>``: the horizon so far, lowered to ``e`` (the horizon of the fact just read)."""
        self.emit(f"h{step} = {self.h} if {self.h} < e else e")
        self.h = f"h{step}"

    def scan(self, step: int, lit: Literal, source: str | None, older: str | None = None) -> None:
        """Open a loop over the candidates of ``lit`` (delta list when ``source`` is given); ``older``:
        the name of a set of keys to skip (this round's new facts, for an atom before the delta's)."""
        tname = f"E{step}"
        self.ns[tname] = lit.table.entries
        key = f"k{step}"
        bound_pos = tuple(
            j for j, t in enumerate(lit.pattern) if not isinstance(t, Var) or t.name in self.bound
        )
        if source is not None:
            self.emit(f"for {key} in {source}:")
            self.depth += 1
            self._note_key_vars(key, lit.pattern)
            self.bind_key(key, lit.pattern, set())
        elif len(bound_pos) == len(lit.pattern):
            self.emit(f"{key} = {self.tuple_of(lit.pattern)}")
            self.emit(f"if {key} not in {tname}: continue")
            if older is not None:
                self.emit(f"if {key} in {older}: continue")
        elif bound_pos:
            iname = f"I{step}"
            self.ns[iname] = lit.table.ensure_index(bound_pos)
            self.uses.append((lit.table, bound_pos))
            values = ", ".join(self.term(lit.pattern[j]) for j in bound_pos)
            # no copy even when the table is the stratum's own: a variant hands its derivations to
            # emit after its loops, so nothing it iterates changes under it
            self.emit(f"for {key} in {iname}.get(({values},), ()):")
            self.depth += 1
            if older is not None:
                self.emit(f"if {key} in {older}: continue")
            self.bind_key(key, lit.pattern, set(bound_pos))
        else:
            self.emit(f"for {key} in {tname}:")
            self.depth += 1
            if older is not None:
                self.emit(f"if {key} in {older}: continue")
            self._note_key_vars(key, lit.pattern)
            self.bind_key(key, lit.pattern, set())
        self.horizon(tname, key, step)

    def _note_key_vars(self, key: str, pattern: tuple) -> None:
        names = tuple(t.name for t in pattern if isinstance(t, Var) and t.name not in self.bound)
        if len(names) == len(pattern) and len(set(names)) == len(names):
            self.key_vars[key] = names

    def pending_checks(self, comparisons: list[Comparison], negatives: list[Literal]) -> None:
        """Emit every comparison, assignment, guard and negated atom whose variables are now bound."""
        progress = True
        while progress:
            progress = False
            for guard in list(self.guards):
                if guard.variables() <= set(self.bound):
                    gname = f"G{len(self.ns)}"
                    self.ns[gname] = guard.test
                    self.emit(f"if not {gname}({', '.join(self.term(a) for a in guard.args)}): continue")
                    self.guards.remove(guard)
                    progress = True
            for comp in list(comparisons):
                target = assignment_target(comp, set(self.bound))
                if target is not None:
                    value = (
                        comp.right if isinstance(comp.left, Var) and comp.left.name == target else comp.left
                    )
                    name = f"v_{target}"
                    self.emit(f"{name} = {self.expr(value)}")
                    self.emit(f"if {name} is None: continue")
                    self.bound[target] = name
                    comparisons.remove(comp)
                    progress = True
                elif comp.variables() <= set(self.bound):
                    left, right = self.expr(comp.left), self.expr(comp.right)
                    if comp.op == "=":
                        cond = f"{left} == {right} and {left} is not None"
                    elif comp.op == "!=":
                        cond = f"{left} != {right} and {left} is not None and {right} is not None"
                    else:
                        cond = f"{_COMPARE[comp.op]}({left}, {right})"
                    self.emit(f"if not ({cond}): continue")
                    comparisons.remove(comp)
                    progress = True
            for lit in list(negatives):
                if lit.variables() <= set(self.bound):
                    nname = f"N{len(self.ns)}"
                    self.ns[nname] = lit.table.entries
                    self.emit(f"if {self.tuple_of(lit.pattern)} in {nname}: continue")
                    negatives.remove(lit)
                    progress = True

    def _generate_single(self, name: str, delta_index: int | None) -> bool:
        """A rule ``head :- one positive atom`` with distinct variables and nothing else becomes one
        list comprehension (the common shape of window rules); returns False for any other rule."""
        rule = self.rule
        if len(self.positives) != 1 or self.negatives or rule.comparisons() or rule.guards():
            return False
        if rule.head.time is not None:
            return False
        pattern = self.positives[0].pattern
        names = [t.name for t in pattern if isinstance(t, Var)]
        if len(names) != len(pattern) or len(set(names)) != len(names):
            return False
        position = {n: j for j, n in enumerate(names)}
        head_args = rule.head.atom.args
        if tuple(a.name if isinstance(a, Var) else None for a in head_args) == tuple(names):
            head = "k"
        else:
            head = (
                "("
                + "".join(
                    f"k[{position[a.name]}], " if isinstance(a, Var) else f"{self.const(a)}, "
                    for a in head_args
                )
                + ")"
            )
        self.ns["E"] = self.positives[0].table.entries
        source = "delta" if delta_index is not None else "list(E)"
        self.lines = [
            f"def {name}(delta, t, new=None):",
            f"    out = [({head}, E[k]) for k in {source}]",
            "    if out: emit(out)",
        ]
        return True

    def generate(self, delta_index: int | None, volatile: bool) -> str:
        name = f"variant_{self.plan_id}_{'full' if delta_index is None else delta_index}"
        if self._generate_single(name, delta_index):
            return name
        self.lines = [f"def {name}(delta, t, new=None):"]
        self.emit("h0 = t if volatile else NEVER")
        self.h = "h0"
        if delta_index:  # semi-naive without repeats: an atom before the delta's reads no new fact
            self.emit("if new is None: new = NO_NEW")
            for j in range(delta_index):
                self.emit(f"n{j} = new[{j}]")
            self.ns["NO_NEW"] = (frozenset(),) * delta_index
        self.emit("out = []")
        self.ns["volatile"] = volatile
        self.emit("for _once in ONCE:")
        self.depth += 1
        comparisons = list(self.rule.comparisons())
        negatives = list(self.negatives)
        self.guards = list(self.rule.guards())
        remaining = list(range(len(self.positives)))
        step = 0
        self.pending_checks(comparisons, negatives)
        if delta_index is not None:
            step += 1
            remaining.remove(delta_index)
            self.scan(step, self.positives[delta_index], "delta")
            self.pending_checks(comparisons, negatives)
        step = self._join(remaining, step, delta_index, comparisons, negatives)
        if (
            comparisons or negatives or self.guards
        ):  # pragma: no cover - safety guarantees everything gets bound
            raise AssertionError(f"unbound checks in {self.rule}")
        head = self.rule.head
        args = self.tuple_of(head.atom.args)
        head_vars = tuple(a.name if isinstance(a, Var) else None for a in head.atom.args)
        for key, names in self.key_vars.items():
            if names == head_vars and names:
                args = key  # the head is the key itself: no new tuple
        if head.time is None:
            self.emit(f"out.append(({args}, {self.h}))")
        else:
            self.emit(f"out.append(({args}, {self.term(head.time)}, {self.h}))")
        self.depth = 1
        self.emit(f"if out: {'emit' if head.time is None else 'emit_at'}(out)")
        self.ns["ONCE"] = (0,)
        return name

    def _join(
        self, atoms: list[int], step: int, delta_index: int | None, comparisons: list, negatives: list
    ) -> int:
        """Emit the loops that join the positive atoms ``atoms`` in greedy order; returns the last step.
        Where the atoms left fall apart into parts that share no unbound variable, the parts' matches
        are joined as a product (see :meth:`_product`)."""
        atoms = list(atoms)
        while atoms:
            best = max(atoms, key=lambda i: self._score(self.positives[i]))
            if self._score(self.positives[best])[0] < 2 and len(atoms) > 1:
                parts = self._parts(atoms, comparisons)
                if len(parts) > 1:
                    return self._product(parts, step, delta_index, comparisons, negatives)
            atoms.remove(best)
            step += 1
            older = f"n{best}" if delta_index is not None and best < delta_index else None
            self.scan(step, self.positives[best], None, older)
            self.pending_checks(comparisons, negatives)
        return step

    def _parts(self, atoms: list[int], comparisons: list) -> list[list[int]]:
        """``atoms`` grouped into parts connected by unbound variables (a comparison or guard not yet
        applied connects its variables too: an assignment binds what a later probe may use), best
        part (by :meth:`_score` of its best atom) first, except that the part of the most atoms comes
        last: the one :meth:`_product` joins in place (a part of one probe may have one match, and
        collecting a large part's matches costs a tuple each)."""
        parent: dict[str, str] = {}

        def find(name: str) -> str:
            while parent.setdefault(name, name) != name:
                name = parent[name]
            return name

        def link(names: set[str]) -> None:
            names = {n for n in names if n not in self.bound}
            if names:
                first = find(min(names))
                for n in names:
                    parent[find(n)] = first

        for i in atoms:
            link(self.positives[i].variables())
        for check in [*comparisons, *self.guards]:
            link(check.variables())
        groups: dict[str, list[int]] = {}
        for i in atoms:  # each has an unbound variable: a fully bound atom is joined before any split
            groups.setdefault(find(min(self.positives[i].variables() - set(self.bound))), []).append(i)
        parts = sorted(
            groups.values(), key=lambda part: max(self._score(self.positives[i]) for i in part), reverse=True
        )
        largest = max(parts, key=len)  # the first of the largest: emitted in place, the others collected
        parts.remove(largest)
        return [*parts, largest]

    def _product(
        self, parts: list[list[int]], step: int, delta_index: int | None, comparisons: list, negatives: list
    ) -> int:
        """Join parts that share no unbound variable without nesting one's probes in another's: the
        matches of every part but the last are collected in a list once (with their horizons), the
        last part's loops are emitted in place, and the lists are iterated inside them. Nested probes
        would repeat the inner part's whole join for each match of the outer one (CityBench's C-SPARQL
        Q9: its events, times the observations of the other stream)."""
        collected = []
        for part in parts[:-1]:
            name = f"r{step}"
            self.emit(f"{name} = []")
            depth, bound, keys, horizon = self.depth, dict(self.bound), dict(self.key_vars), self.h
            step = self._join(part, step, delta_index, comparisons, negatives)
            names = {n: v for n, v in self.bound.items() if n not in bound}
            self.emit(f"{name}.append(({''.join(v + ', ' for v in names.values())}{self.h}))")
            self.depth, self.bound, self.key_vars, self.h = depth, bound, keys, horizon
            self.emit(f"if not {name}: continue")
            collected.append((name, names))
        step = self._join(parts[-1], step, delta_index, comparisons, negatives)
        for name, names in collected:
            step += 1
            self.emit(f"for {''.join(v + ', ' for v in names.values())}e in {name}:")
            self.depth += 1
            self.min_horizon(step)
            self.bound.update(names)
            self.pending_checks(comparisons, negatives)
        return step

    def _score(self, lit: Literal) -> tuple[int, int, int, int]:
        """Join order: fully bound lookups first, then atoms joined on a variable already bound (a
        probe reaches only the matching tuples), then atoms with constants only (a probe on a constant
        such as ``rdf:type ex:Observation`` may reach a whole class), then scans. Between equals, an atom
        whose first position is bound: a triple's subject and predicate reach a few objects, where an
        object bound with ``rdf:type`` reaches a whole class (CityBench's C-SPARQL Q9 probed every
        ``?x a ?ob`` before the observation's own triples)."""
        pattern = lit.pattern
        joined = sum(1 for t in pattern if isinstance(t, Var) and t.name in self.bound)
        constants = sum(1 for t in pattern if not isinstance(t, Var))
        full = joined + constants == len(pattern)
        first = 1 if pattern and (not isinstance(pattern[0], Var) or pattern[0].name in self.bound) else 0
        return (2 if full else 1 if joined else 0, joined, constants, first)


def _named(code: CodeType, placeholder: str, name: str) -> CodeType:
    """``code`` and the code objects in its constants with ``placeholder`` renamed ``name`` (and their
    qualified names, which code objects have from Python 3.11 on)."""
    renamed = {}
    if hasattr(code, "co_qualname"):
        renamed["co_qualname"] = code.co_qualname.replace(placeholder, name)
    return code.replace(
        co_name=code.co_name.replace(placeholder, name),
        co_names=tuple(n.replace(placeholder, name) for n in code.co_names),
        co_consts=tuple(
            _named(c, placeholder, name) if isinstance(c, CodeType) else c for c in code.co_consts
        ),
        **renamed,
    )


@functools.lru_cache(maxsize=4096)
def _compile_template(template: str, filename: str) -> CodeType:
    return compile(template, filename, "exec")


def _compile_variant(source: str, name: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")`` for a variant's source, whose first line defines ``name``.

    The same rule compiled for another engine (each engine compiles its background program's rules
    again) differs only in the plan id in that name: the source is compiled once with the name replaced
    by a placeholder of the same length (so that every position in the code stays the same), and the
    name is put back into the code objects, which then equal the ones ``compile`` gives."""
    assert source.startswith(f"def {name}(")
    placeholder = "variant_" + "Q" * (len(name) - len("variant_"))
    template = f"def {placeholder}{source[4 + len(name) :]}"
    return _named(_compile_template(template, filename), placeholder, name)


def compile_rule(
    plan_id: str,
    rule: Rule,
    positives: list[Literal],
    negatives: list[Literal],
    emit: Callable,
    emit_at: Callable,
    never: int,
) -> RulePlan:
    """Compile ``rule`` into its variants; ``positives``/``negatives`` follow the rule's body order."""
    volatile = bool(negatives) or not positives
    plan = RulePlan(rule, positives, negatives, volatile)
    sources = []
    functions = []
    for delta_index in [*range(len(positives)), None]:
        namespace: dict = dict(RUNTIME, emit=emit, emit_at=emit_at, NEVER=never)
        gen = _Gen(plan_id, rule, positives, negatives, namespace)
        name = gen.generate(delta_index, volatile)
        source = "\n".join(gen.lines)
        sources.append(source)
        # (a NUL in the rule's text, from a term of an ontology or a program, is no file name compile takes)
        code = _compile_variant(source, name, f"<plan of {rule.origin}: {rule}>".replace("\0", "\\x00"))
        exec(code, namespace)  # noqa: S102 - the source is generated from the rule model above
        functions.append(namespace[name])
        if delta_index is not None:
            plan.indexes.update(gen.uses)
    plan.source = "\n\n".join(sources)
    plan.variants = functions[:-1]
    plan.full = functions[-1]
    return plan
