"""Values for the answer-set modes: comparisons, arithmetic and time points of LARS constants
(docs/lars-semantics.md, "Comparisons and arithmetic"), and the evaluation of a rule's comparisons."""

from __future__ import annotations

from rsp.lars.model import BinOp, Comparison, Constant, Expr, Var, expr_variables


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def time_point(value: object) -> int | None:
    """The integer time point ``value`` denotes, or None."""
    if is_number(value) and float(value).is_integer():  # type: ignore[arg-type]
        return int(value)  # type: ignore[arg-type]
    return None


def arith(op: str, left: Constant, right: Constant) -> Constant | None:
    """``left op right`` on numbers; None for a non-number or a division by zero."""
    if not (is_number(left) and is_number(right)):
        return None
    if op == "+":
        return left + right  # type: ignore[operator]
    if op == "-":
        return left - right  # type: ignore[operator]
    if op == "*":
        return left * right  # type: ignore[operator]
    if right == 0:
        return None
    if isinstance(left, int) and isinstance(right, int):
        quotient, rest = divmod(left, right)
        if rest == 0:
            return quotient
    return left / right  # type: ignore[operator]


def compare(op: str, left: Constant, right: Constant) -> bool:
    """Numbers numerically; a number and a non-number are never equal nor ordered; text otherwise."""
    if is_number(left) != is_number(right):
        return op == "!="
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if not is_number(left):
        left, right = str(left), str(right)
    if op == "<":
        return left < right  # type: ignore[operator]
    if op == "<=":
        return left <= right  # type: ignore[operator]
    if op == ">":
        return left > right  # type: ignore[operator]
    return left >= right  # type: ignore[operator]


def value(expr: Expr, binding: dict[str, Constant]) -> Constant | None:
    if isinstance(expr, Var):
        return binding[expr.name]
    if isinstance(expr, BinOp):
        left, right = value(expr.left, binding), value(expr.right, binding)
        if left is None or right is None:
            return None
        return arith(expr.op, left, right)
    return expr


def apply_comparisons(comparisons: list[Comparison], binding: dict[str, Constant]) -> dict | None:
    """Run the assignments and tests of a rule on a binding of its positive atoms' variables: the
    extended binding, or None when a test fails or an expression has no value."""
    pending = list(comparisons)
    binding = dict(binding)
    while pending:
        for comp in pending:
            target = _target(comp, binding)
            if target is not None or comp.variables() <= binding.keys():
                break
        else:
            raise AssertionError("unsafe comparison reached the answer-set modes")
        pending.remove(comp)
        if target is not None:
            got = value(target[1], binding)
            if got is None:
                return None
            binding[target[0]] = got
            continue
        left, right = value(comp.left, binding), value(comp.right, binding)
        if left is None or right is None or not compare(comp.op, left, right):
            return None
    return binding


def _target(comp: Comparison, binding: dict) -> tuple[str, Expr] | None:
    if comp.op != "=":
        return None
    for side, other in ((comp.left, comp.right), (comp.right, comp.left)):
        if isinstance(side, Var) and side.name not in binding and expr_variables(other) <= binding.keys():
            return side.name, other
    return None
