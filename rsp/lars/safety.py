"""The safety pass: every head, negated and arithmetic variable must be bound by a positive body atom
(or by an assignment ``V = expr`` whose expression is bound)."""

from __future__ import annotations

from rsp.errors import ProgramError
from rsp.lars.model import Comparison, Program, Rule, Var, expr_variables


def bound_variables(rule: Rule) -> set[str]:
    """Variables bound by the positive body atoms and, transitively, by assignments."""
    bound: set[str] = set()
    for atom in rule.positive_atoms():
        bound |= atom.variables()
    changed = True
    while changed:
        changed = False
        for comp in rule.comparisons():
            target = assignment_target(comp, bound)
            if target is not None:
                bound.add(target)
                changed = True
    return bound


def assignment_target(comp: Comparison, bound: set[str]) -> str | None:
    """The variable ``comp`` assigns when evaluated with ``bound`` known, or None if it only tests."""
    if comp.op != "=":
        return None
    for side, other in ((comp.left, comp.right), (comp.right, comp.left)):
        if isinstance(side, Var) and side.name not in bound:
            if expr_variables(other) <= bound:
                return side.name
    return None


def check_safety(program: Program) -> None:
    """Raise :class:`ProgramError` at the first unsafe rule, naming the unbound variables."""
    for rule in program.rules:
        bound = bound_variables(rule)
        problems: list[str] = []
        unbound_head = sorted(rule.head.variables() - bound)
        if unbound_head:
            problems.append(f"head variable(s) {', '.join(unbound_head)} not bound by a positive body atom")
        for atom in rule.negative_atoms():
            missing = sorted(atom.variables() - bound)
            if missing:
                problems.append(
                    f"variable(s) {', '.join(missing)} of '{atom}' not bound by a positive body atom"
                )
        for comp in rule.comparisons():
            missing = sorted(comp.variables() - bound)
            if missing:
                problems.append(
                    f"variable(s) {', '.join(missing)} of '{comp}' not bound by a positive body atom"
                )
        for guard in rule.guards():
            missing = sorted(guard.variables() - bound)
            if missing:
                problems.append(
                    f"variable(s) {', '.join(missing)} of '{guard}' not bound by a positive body atom"
                )
        if problems:
            raise ProgramError(f"unsafe rule '{rule}': {'; '.join(problems)}", rule.origin.position)
