"""Hypothesis strategies for small random DatalogMTL programs and fact streams, for the differential tests
of rsp.mtl against the naive evaluator (tests/oracles/mtl_naive.py).

Programs are one to three rules in MeTeoR's syntax over unary predicates ``A B C D`` (the stream's, and
heads ``P Q A``), the propositional (0-ary) predicates ``Go`` and ``On`` (written ``Go`` or ``Go()``, in
bodies, heads and facts) and the binary ``E``, whose second argument ``Y`` is a variable bound in the body
beside ``X``. Body literals nest ``Diamondminus``, ``Boxminus`` and ``Since`` (two levels deep, with
parentheses where the grammar needs them and sometimes where it does not: ``(A(X))Since[0,1]B(X)``,
``((Diamondminus[0,4]Go)Since[1,1]B(X))Since[1,1]B(X)``, ``Go Since[0,1]B(X)``); heads may be under
``Boxplus``. Every rule is safe: a variable of a ``Since``'s left side is on its right side too or bound
elsewhere in the body (by ``E(X,Y)``, or by a unary atom over ``X`` drawn beside the other literals: then
``A(Y)Since[0,1]B(X)``, ``Go Since(0,1]A(Y)`` and nested or parenthesised forms of them are drawn), and a
head variable is in the body. Such a Since with 0 in its range stands in a rule body, under
``Diamondminus`` or on the right of a Since, never under ``Boxminus`` or on the left of a Since, which rsp
mtl refuses (docs/mtl.md). Intervals have the bounds 0, 1/2, 1, 3/2, 2 (open or closed) or ``inf``.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

BOUNDS = [0, Fraction(1, 2), 1, Fraction(3, 2), 2]
UNARY = ["A", "B", "C", "D"]
PROPOSITIONS = ["Go", "On"]
CONSTANTS = ["a", "b"]


def num(x) -> str:
    """A bound as MeTeoR writes it: ``1``, ``0.5``."""
    return str(float(x)).removesuffix(".0") if x != int(x) else str(int(x))


@st.composite
def intervals(draw, allow_inf: bool = True, zero: bool = True) -> str:
    """An interval; with ``zero`` false, one that does not hold 0."""
    a = draw(st.sampled_from(BOUNDS))
    choices = [b for b in BOUNDS if b >= a and (zero or b > 0)] + (["inf"] if allow_inf else [])
    b = draw(st.sampled_from(choices))
    left = draw(st.sampled_from("[(")) if a != b else "["
    if a == 0 and not zero:
        left = "("
    right = draw(st.sampled_from("])")) if a != b and b != "inf" else ("]" if b != "inf" else ")")
    if b == "inf":
        return f"{left}{num(a)},inf)"
    return f"{left}{num(a)},{num(b)}{right}"


# A formula is drawn as (text, the variables it binds, the variables it uses, kind): it binds those
# outside the left sides of its Sinces; kind "atom0" for a propositional atom written bare (it needs a
# space or '()' before a following Since), "unary" for an operator chain ending in one, "since" for a
# Since (parenthesised wherever an operand is expected), "other" otherwise. ``free``: the variables the
# rule binds elsewhere, which a Since's left side may use without its right side; ``guarded``: under
# Boxminus or on the left of a Since, where such a Since must not hold 0 in its range.


@st.composite
def _formulas(
    draw, depth: int, var: str, free: frozenset[str] = frozenset(), guarded: bool = False
) -> tuple[str, set[str], set[str], str]:
    kinds = ["atom", "atom", "prop"] + (["dia", "box", "since", "since"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "atom":
        return f"{draw(st.sampled_from(UNARY))}({var})", {var}, {var}, "other"
    if kind == "prop":
        name = draw(st.sampled_from(PROPOSITIONS))
        if draw(st.booleans()):
            return f"{name}()", set(), set(), "other"
        return name, set(), set(), "atom0"
    if kind in ("dia", "box"):
        op = "Diamondminus" if kind == "dia" else "Boxminus"
        text, binds, uses, sub = draw(_formulas(depth - 1, var, free, guarded or kind == "box"))
        if sub == "since" or draw(st.integers(0, 5)) == 0:
            text, sub = f"({text})", "other"
        kind = "unary" if sub in ("atom0", "unary") else "other"
        return f"{op}{draw(intervals())}{text}", binds, uses, kind
    right, binds, ruses, rkind = draw(_formulas(depth - 1, var, free, guarded))
    lvar = draw(st.sampled_from(sorted({var} | free)))  # the left side may use a variable bound elsewhere
    left, _, luses, lkind = draw(_formulas(depth - 1, lvar, free, True))
    extra = luses - ruses
    if not extra <= free:  # the left side's variables must be on the right too, or bound elsewhere
        left, luses, lkind, extra = draw(st.sampled_from(PROPOSITIONS)), set(), "atom0", set()
    if rkind == "since" or draw(st.integers(0, 5)) == 0:
        right = f"({right})"
    if lkind == "since" or draw(st.integers(0, 5)) == 0:
        left = f"({left})"
    elif lkind in ("atom0", "unary"):
        left += draw(st.sampled_from([" ", "()"])) if lkind == "atom0" else " "
    rho = draw(intervals(zero=not (extra and guarded)))
    return f"{left}Since{rho}{right}", binds, ruses | luses, "since"


@st.composite
def literals(draw, var: str = "X", free: frozenset[str] = frozenset()) -> tuple[str, set[str]]:
    """A body literal over the variable ``var`` (or none), whose Sinces' left sides may use the variables
    ``free`` (bound elsewhere in the body): text and the variables it binds."""
    text, binds, _, _ = draw(_formulas(2, var, free))
    return text, binds


@st.composite
def programs(draw) -> str:
    rules = []
    for _ in range(draw(st.integers(1, 3))):
        # a second variable Y, bound by E(X,Y), used elsewhere in the body; an atom over X beside the others
        pair = draw(st.integers(0, 3)) == 0
        binder = draw(st.integers(0, 2)) == 0
        free = frozenset(({"X", "Y"} if pair else set()) | ({"X"} if binder else set()))
        body = [draw(literals("X", free)) for _ in range(draw(st.integers(1, 2)))]
        if pair:
            body.append(("E(X,Y)", {"X", "Y"}))
            body.append(draw(literals("Y", free)))
        if binder:
            body.append((f"{draw(st.sampled_from(UNARY))}(X)", {"X"}))
        if draw(st.booleans()):  # recursion through a derived predicate (body[0] is never a binder)
            head_pred = draw(st.sampled_from(["P", "Q", "Go"]))
            derived = f"{head_pred}(X)" if head_pred != "Go" else draw(st.sampled_from(["Go", "Go()"]))
            body[0] = (f"Diamondminus{draw(intervals())}{derived}", {"X"} if head_pred != "Go" else set())
        body = draw(st.permutations(body))
        bound = {v for _, binds in body for v in binds}
        if "X" in bound and draw(st.integers(0, 3)) != 0:
            head = f"{draw(st.sampled_from(['P', 'Q', 'A']))}(X)"
        else:
            head = draw(st.sampled_from(["Go", "Go()", "On"]))
        if draw(st.integers(0, 3)) == 0:
            head = f"Boxplus{draw(intervals(allow_inf=False))}{head}"
        rules.append(f"{head}:-{', '.join(text for text, _ in body)}")
    return "\n".join(rules)


@st.composite
def facts(draw) -> list[tuple[Fraction, str]]:
    """Stream facts with their left ends, in no particular order."""
    out = []
    for _ in range(draw(st.integers(1, 6))):
        lo = draw(st.sampled_from([Fraction(k, 2) for k in range(0, 9)]))
        length = draw(st.sampled_from([0, 0, Fraction(1, 2), 1, 2, "inf"]))
        kind = draw(st.sampled_from(["unary", "unary", "unary", "prop", "binary"]))
        if kind == "unary":
            atom = f"{draw(st.sampled_from(UNARY))}({draw(st.sampled_from(CONSTANTS))})"
        elif kind == "prop":
            atom = draw(st.sampled_from(PROPOSITIONS)) + draw(st.sampled_from(["", "()"]))
        else:
            atom = f"E({draw(st.sampled_from(CONSTANTS))},{draw(st.sampled_from(CONSTANTS))})"
        if length == 0:
            span = f"[{num(lo)},{num(lo)}]"
        elif length == "inf":
            span = f"{draw(st.sampled_from('[('))}{num(lo)},inf)"
        else:
            span = f"{draw(st.sampled_from('[('))}{num(lo)},{num(lo + length)}{draw(st.sampled_from('])'))}"
        out.append((lo, f"{atom}@{span}"))
    return out


@st.composite
def streams(draw) -> list[str]:
    """Stream facts in the order of their left ends."""
    drawn = draw(facts())
    drawn.sort(key=lambda f: f[0])
    return [f for _, f in drawn]
