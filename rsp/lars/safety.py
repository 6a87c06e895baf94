"""The safety pass: every head, negated and arithmetic variable must be bound by a positive body atom
(or by an assignment ``V = expr`` whose expression is bound), and no value computed by arithmetic may flow
back into the predicates it came from (recursion through arithmetic has an infinite model:
``n(0). n(V) :- n(X), V = X + 1.``)."""

from __future__ import annotations

from rsp.errors import ProgramError
from rsp.lars.model import BinOp, Comparison, ExtAtom, Op, Program, Rule, Sig, Var, expr_variables


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
    _check_arithmetic_recursion(program)


def computed_variables(rule: Rule) -> set[str]:
    """Variables whose value arithmetic computes (``V = X + 1``, or copied from such a variable): values
    that need not occur in the data."""
    bound: set[str] = set()
    for atom in rule.positive_atoms():
        bound |= atom.variables()
    computed: set[str] = set()
    changed = True
    while changed:
        changed = False
        for comp in rule.comparisons():
            target = assignment_target(comp, bound)
            if target is None:
                continue
            bound.add(target)
            changed = True
            other = comp.right if isinstance(comp.left, Var) and comp.left.name == target else comp.left
            if isinstance(other, BinOp) or expr_variables(other) & computed:
                computed.add(target)
    return computed


def _check_arithmetic_recursion(program: Program) -> None:
    """Refuse a rule that puts a computed value into a predicate its body depends on recursively: the
    model would grow without end (rsp, like Datalog, needs a finite model at each time point)."""
    from rsp.lars.stratify import components  # stratify imports nothing from here: no cycle

    succ: dict[Sig, set[Sig]] = {}
    for rule in program.proper_rules:
        edges = succ.setdefault(rule.head.atom.sig, set())
        edges |= {lit.atom.sig for lit in rule.positive_atoms() + rule.negative_atoms()}
    component: dict[Sig, int] = {}
    for number, members in enumerate(components(sorted(succ), {k: sorted(v) for k, v in succ.items()})):
        component.update(dict.fromkeys(members, number))
    for rule in program.proper_rules:
        head = rule.head.atom
        computed = computed_variables(rule) & head.variables()
        if not computed:
            continue
        here = component[head.sig]
        loop = [
            lit.atom
            for lit in rule.positive_atoms()
            if component.get(lit.atom.sig) == here and not _strictly_earlier(lit, rule)
        ]
        if loop:
            names = ", ".join(sorted(computed))
            raise ProgramError(
                f"recursion through arithmetic in '{rule}': {names} computed by arithmetic flows into "
                f"{head.sig} while '{loop[0]}' depends on {head.sig}, so the model may never stop "
                f"growing; compute the value outside the recursion",
                rule.origin.position,
            )


def _strictly_earlier(lit: ExtAtom, rule: Rule) -> bool:
    """Whether the rule reads ``lit`` only at time points before its ``@T`` head's: ``@U`` with
    ``U = T - c`` (c > 0), ``T = U + c`` or ``U < T``. A value computed from it then moves forward in
    time, and the finite timeline bounds how often it can grow (``@T n(V,N) :- @U n(V,M), U = T - 1,
    N = M + 1.`` counts, and stops). Rules elsewhere in the recursion that copy values back in time are
    not followed: a program doing both is not caught here."""
    head_time, time = rule.head.time, lit.time
    if lit.op is not Op.AT or not isinstance(head_time, Var) or not isinstance(time, Var):
        return False
    t, u = head_time.name, time.name

    for comp in rule.comparisons():
        left, right, op = comp.left, comp.right, comp.op
        names = (left.name if isinstance(left, Var) else None, right.name if isinstance(right, Var) else None)
        if op == "<" and names == (u, t) or op == ">" and names == (t, u):
            return True
        if op == "=":
            for a, b in ((left, right), (right, left)):
                if isinstance(a, Var) and (
                    a.name == u and _shifted(b, t, "-") or a.name == t and _shifted(b, u, "+")
                ):
                    return True
    return False


def _shifted(expr: object, base: str, op: str) -> bool:
    """Whether ``expr`` is ``base op c`` with c a positive integer."""
    if (
        not isinstance(expr, BinOp)
        or expr.op != op
        or not isinstance(expr.left, Var)
        or expr.left.name != base
    ):
        return False
    c = expr.right
    return isinstance(c, int) and not isinstance(c, bool) and c > 0
