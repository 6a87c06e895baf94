"""The window pass: tuple windows over intensional predicates are refused, and windows over predicates
that only plain heads derive (so they see just the current time point) are reported as warnings."""

from __future__ import annotations

from rsp.errors import ProgramError
from rsp.lars.model import Op, Program


def check_windows(program: Program) -> list[str]:
    """Raise on a tuple window over an intensional predicate; return warnings for the user."""
    intensional = program.intensional_predicates()
    at_heads = {r.head.atom.sig for r in program.rules if r.head.time is not None}
    fact_preds = {r.head.atom.sig for r in program.facts} | program.data_predicates()
    warnings: list[str] = []
    for rule in program.proper_rules:
        for lit in rule.body:
            window = getattr(lit, "window", None)
            if window is None:
                continue
            pred = lit.atom.sig
            if window.tuple_based and pred in intensional:
                raise ProgramError(
                    f"tuple window {window} over '{pred.name}', which rules derive: tuple windows count "
                    "stream atoms only (use a time window such as [n] instead)",
                    rule.origin.position,
                )
            if (
                not window.tuple_based
                and pred in intensional
                and pred not in at_heads
                and pred not in fact_preds
                and window.size > 0
                and lit.op is not Op.PLAIN
            ):
                warnings.append(
                    f"{rule.origin}: warning: window {window} over '{pred.name}', which only plain heads "
                    "derive: a plain head holds at the current time point only, so the window sees just that "
                    f"point (derive '{pred.name}' with an @T head to place it in the past)"
                )
    return warnings
