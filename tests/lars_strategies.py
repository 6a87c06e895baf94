"""Hypothesis strategies for small random valid LARS programs and atom streams, for differential testing.

Predicates come from a fixed pool: extensional ``p q r`` (the stream's) and intensional ``i1``..``i4``
(rule heads); a *signature* gives each its arity (0-2) so that programs and streams of a case agree.
Each intensional predicate gets a level: a rule for a level-L head reads positive atoms of level <= L
(recursion allowed) and negated atoms only of extensional or level < L predicates, so negation is
stratified. Every variable of a head, a negated atom or a comparison is bound by a positive atom or an
assignment, so every rule is safe.
"""

from __future__ import annotations

from hypothesis import strategies as st

EXTENSIONAL = ("p", "q", "r")
INTENSIONAL = ("i1", "i2", "i3", "i4")
CONSTANTS: tuple[str | int, ...] = ("a", "b", "c", 0, 1, 2, 3)
DATA_VARS = ("X", "Y", "Z")
TIME_VARS = ("T", "U")
ASSIGNED_VARS = ("V", "W")
MAX_TIME = 12

# (window kind, operator): kind is None (no window), "time" ([n]) or "tuple" ([#n]).
FORMS = (
    (None, "plain"),
    (None, "@"),
    ("time", "plain"),
    ("time", "<>"),
    ("time", "[]"),
    ("time", "@"),
    ("tuple", "plain"),
    ("tuple", "<>"),
    ("tuple", "[]"),
    ("tuple", "@"),
)
COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")

Signature = dict[str, int]


def _term(value: str | int) -> str:
    return str(value)


def _atom(pred: str, args: list[str]) -> str:
    return f"{pred}({','.join(args)})" if args else pred


@st.composite
def signatures(draw: st.DrawFn) -> Signature:
    """An arity (0-2) for every predicate of the pool."""
    return {pred: draw(st.integers(0, 2)) for pred in EXTENSIONAL + INTENSIONAL}


@st.composite
def _ext_atom(draw: st.DrawFn, sig: Signature, preds: list[str], bound: set[str], negated: bool) -> str:
    """One extended body atom; a positive one adds the variables it binds to ``bound``."""
    pred = draw(st.sampled_from(preds))
    forms = [f for f in FORMS if f[0] != "tuple" or pred in EXTENSIONAL]
    kind, op = draw(st.sampled_from(forms))
    usable = sorted(bound) if negated else list(DATA_VARS) + sorted(bound)
    choices = usable * 4 + [_term(c) for c in CONSTANTS]  # mostly variables, so that atoms match often
    args = [draw(st.sampled_from(choices)) for _ in range(sig[pred])]
    parts = ["not"] if negated else []
    if kind == "time":
        parts.append(f"[{draw(st.integers(0, 4))}]")
    elif kind == "tuple":
        parts.append(f"[#{draw(st.integers(1, 4))}]")
    time = None
    if op in ("<>", "[]"):
        parts.append(op)
    elif op == "@":
        time_choices = sorted(bound) if negated else list(TIME_VARS) * 2 + sorted(bound)
        time = draw(st.sampled_from(time_choices + ["<const>"]))
        if time == "<const>":
            time = str(draw(st.integers(0, MAX_TIME)))
        parts.append(f"@{time}")
    parts.append(_atom(pred, args))
    if not negated:
        bound.update(a for a in args + [time or "0"] if a[0].isupper())
    return " ".join(parts)


@st.composite
def _expression(draw: st.DrawFn, bound: set[str]) -> str:
    operands = sorted(bound) + ["0", "1", "2"]
    left = draw(st.sampled_from(sorted(bound) or operands))
    op = draw(st.sampled_from(("+", "-", "*", "/")))
    right = draw(st.sampled_from(operands))
    return f"{left} {op} {right}"


@st.composite
def _rule(draw: st.DrawFn, sig: Signature, levels: dict[str, int], head: str) -> str:
    level = levels[head]
    positive_preds = list(EXTENSIONAL) * 2 + [i for i in INTENSIONAL if levels[i] <= level]
    negative_preds = list(EXTENSIONAL) + [i for i in INTENSIONAL if levels[i] < level]
    bound: set[str] = set()
    positives = draw(st.sampled_from((0, 1, 1, 2, 2, 3)))
    body = [draw(_ext_atom(sig, positive_preds, bound, False)) for _ in range(positives)]
    for target in ASSIGNED_VARS[: draw(st.sampled_from((0, 0, 1, 1, 2)))]:
        body.append(f"{target} = {draw(_expression(bound))}")
        bound.add(target)
    for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
        terms = sorted(bound) * 2 + [_term(c) for c in CONSTANTS]
        left = draw(st.sampled_from(sorted(bound) or terms))
        body.append(f"{left} {draw(st.sampled_from(COMPARISON_OPS))} {draw(st.sampled_from(terms))}")
    for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
        body.append(draw(_ext_atom(sig, negative_preds, bound, True)))
    if not body:
        body.append(draw(_ext_atom(sig, negative_preds, bound, True)))
    body = draw(st.permutations(body))
    args = [draw(st.sampled_from(sorted(bound) + [_term(c) for c in CONSTANTS])) for _ in range(sig[head])]
    text = _atom(head, args)
    if draw(st.booleans()):  # an @ head: mostly a time variable, else any bound variable or a constant
        time_vars = sorted(bound & set(TIME_VARS + ASSIGNED_VARS))
        at = draw(st.sampled_from(time_vars * 4 + sorted(bound) + [str(draw(st.integers(0, MAX_TIME)))]))
        text = f"@{at} {text}"
    return f"{text} :- {', '.join(body)}."


@st.composite
def _fact(draw: st.DrawFn, sig: Signature) -> str:
    pred = draw(st.sampled_from(EXTENSIONAL * 2 + INTENSIONAL))  # mostly stream predicates (tuple windows)
    text = _atom(pred, [_term(draw(st.sampled_from(CONSTANTS))) for _ in range(sig[pred])])
    if draw(st.booleans()):
        text = f"@{draw(st.integers(0, MAX_TIME))} {text}"
    return text + "."


@st.composite
def programs(draw: st.DrawFn, sig: Signature | None = None) -> str:
    """The text of a small valid ``.lars`` program (1-5 rules, 0-2 background facts)."""
    if sig is None:
        sig = draw(signatures())
    levels = {pred: draw(st.integers(0, 2)) for pred in INTENSIONAL}
    heads = draw(st.lists(st.sampled_from(INTENSIONAL), min_size=1, max_size=5))
    lines = [draw(_rule(sig, levels, head)) for head in heads]
    lines += draw(st.lists(_fact(sig), max_size=2))
    return "\n".join(lines) + "\n"


@st.composite
def streams(draw: st.DrawFn, sig: Signature | None = None) -> list[str]:
    """Stream file lines: non-decreasing times in 0..12, 0-4 atoms per time point (0: a bare time line).

    One stream in twenty is empty (no timeline).
    """
    if sig is None:
        sig = draw(signatures())
    if draw(st.integers(0, 19)) == 19:
        return []  # no timeline at all
    times = draw(st.lists(st.integers(0, MAX_TIME), min_size=1, max_size=8, unique=True))
    lines: list[str] = []
    for time in sorted(times):
        count = draw(st.integers(0, 4))
        if count == 0:
            lines.append(str(time))
        for _ in range(count):
            pred = draw(st.sampled_from(EXTENSIONAL))
            args = [_term(draw(st.sampled_from(CONSTANTS))) for _ in range(sig[pred])]
            lines.append(f"{time} {_atom(pred, args)}")
    return lines


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A program and a stream over the same signature."""
    sig = draw(signatures())
    return draw(programs(sig)), draw(streams(sig))
