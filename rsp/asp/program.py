"""The answer-set program pass: a LARS program checked for the answer-set modes (safety and windows as
for stratified programs, no stratification), with the facts both modes need about it: the predicates
read through windows and how far back, and whether it has odd loops (which the TMS mode refuses)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rsp.errors import Position, ProgramError, read_source
from rsp.lars.model import CONSTRAINT_PRED, ExtAtom, Op, Program, Rule, Sig
from rsp.lars.safety import check_safety
from rsp.lars.windows import check_windows

UNBOUNDED = -1
"""A horizon meaning "the whole history" (an ``@T`` atom without a window)."""


@dataclass(frozen=True)
class AspProgram:
    """A program checked for the answer-set modes."""

    program: Program
    warnings: tuple[str, ...]
    odd_loop: Rule | None
    """A rule on a cycle through an odd number of negations (constraints are such), or None."""

    @property
    def rules(self) -> list[Rule]:
        return self.program.proper_rules

    @property
    def intensional(self) -> frozenset[Sig]:
        """What the output shows: predicates rules derive (constraints' reserved head left out)."""
        return frozenset(s for s in self.program.intensional_predicates() if s.name != CONSTRAINT_PRED)

    def horizon(self, sig: Sig) -> int:
        """How many time points back a stream atom of ``sig`` may still be read (UNBOUNDED: forever)."""
        far = 0
        for rule in self.rules:
            for lit in rule.body:
                if not isinstance(lit, ExtAtom) or lit.atom.sig != sig:
                    continue
                window = lit.window
                if window is None:
                    if lit.op is Op.AT:
                        return UNBOUNDED
                elif not window.tuple_based and lit.op is not Op.PLAIN:
                    far = max(far, window.size)
        return far

    def __str__(self) -> str:
        return str(self.program)


def _edges(program: Program) -> dict[Sig, list[tuple[Sig, bool, Rule]]]:
    graph: dict[Sig, list[tuple[Sig, bool, Rule]]] = {}
    for rule in program.proper_rules:
        out = graph.setdefault(rule.head.atom.sig, [])
        for lit in rule.body:
            if isinstance(lit, ExtAtom):
                out.append((lit.atom.sig, lit.negated, rule))
    return graph


def find_odd_loop(program: Program) -> Rule | None:
    """A rule on a cycle of the predicate dependency graph through an odd number of negations.

    A program without one (call-consistent) has an answer at every time point; per strongly connected
    component, predicates get a parity (negations on a path from the component's root) and an edge that
    contradicts the parities closes an odd cycle.
    """
    from rsp.lars.stratify import components

    graph = _edges(program)
    nodes = sorted(graph)
    succ = {h: sorted({b for b, _, _ in edges if b in graph}) for h, edges in graph.items()}
    for comp in components(nodes, succ):
        members = set(comp)
        parity: dict[Sig, bool] = {comp[0]: False}
        todo = [comp[0]]
        while todo:
            head = todo.pop()
            for body, negated, _ in graph.get(head, ()):
                if body in members and body not in parity:
                    parity[body] = parity[head] ^ negated
                    todo.append(body)
        for head in comp:
            for body, negated, rule in graph.get(head, ()):
                if body in members and parity[body] != parity[head] ^ negated:
                    return rule
    return None


def prepare(program: Program) -> AspProgram:
    """Check ``program`` for the answer-set modes; raises :class:`rsp.errors.ProgramError`."""
    check_safety(program)
    warnings = check_windows(program)
    return AspProgram(program, tuple(warnings), find_odd_loop(program))


def parse(text: str, source: str = "<string>") -> AspProgram:
    """Parse ``.lars`` text and check it for the answer-set modes (negation need not be stratified)."""
    from rsp.lars.parser import parse_program

    return prepare(parse_program(text, source))


def load(path: str | Path) -> AspProgram:
    """Parse and check a ``.lars`` file for the answer-set modes."""
    try:
        text = read_source(path, ProgramError, "program")
    except OSError as err:
        raise ProgramError(f"cannot read program: {err.strerror}", Position(str(path))) from None
    return parse(text, str(path))
