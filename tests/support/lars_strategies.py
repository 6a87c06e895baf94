"""Hypothesis strategies for small random valid LARS programs and atom streams, for differential testing.

Predicate names come from a fixed pool: extensional ``p q r`` (the stream's) and intensional
``i1``..``i4`` (rule heads). A predicate is its name and its arity: a *signature* gives each name one or
two arities (0-2), so that ``i1/0`` and ``i1/2`` may both occur, as may ``p(a)`` and ``p(a,b)``. Each
intensional predicate (name and arity) gets a level: a rule for a level-L head reads positive atoms of
level <= L (recursion allowed) and negated atoms only of extensional or level < L predicates, so negation
is stratified (``i1(X) :- p(X), not i1.`` is, since i1/0 and i1/1 differ). Every variable of a head, a
negated atom or a comparison is bound by a positive atom or an assignment, so every rule is safe.
Streams mostly hold atoms of the signature's extensional predicates, and sometimes atoms of another
arity or of an intensional name, which only a predicate of that name and arity may read.
"""

from __future__ import annotations

from hypothesis import strategies as st

EXTENSIONAL = ("p", "q", "r")
INTENSIONAL = ("i1", "i2", "i3", "i4")
CONSTANTS: tuple[str | int, ...] = ("a", "b", "c", 0, 1, 2, 3)
STREAM_CONSTANTS = ("a", "b", "a", "b", "1", "c", "0", "2")
"""Stream arguments: mostly two symbols, so that joins match and one atom gets several derivations."""
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

Signature = dict[str, tuple[int, ...]]
"""name -> its arities (one or two of 0, 1, 2)."""
Pred = tuple[str, int]


def _term(value: str | int) -> str:
    return str(value)


def _atom(pred: str, args: list[str]) -> str:
    return f"{pred}({','.join(args)})" if args else pred


@st.composite
def signatures(draw: st.DrawFn) -> Signature:
    """One arity (mostly) or two for every name of the pool."""
    sig = {}
    for pred in EXTENSIONAL + INTENSIONAL:
        arities = draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True))
        sig[pred] = tuple(sorted(arities)) if draw(st.integers(0, 3)) == 0 else (arities[0],)
    return sig


def predicates(sig: Signature, names: tuple[str, ...]) -> list[Pred]:
    """Every (name, arity) the signature gives ``names``."""
    return [(name, arity) for name in names for arity in sig[name]]


@st.composite
def _ext_atom(
    draw: st.DrawFn,
    preds: list[Pred],
    bound: set[str],
    negated: bool,
    box: bool = False,
    chosen: list[Pred] | None = None,
) -> str:
    """One extended body atom (``box``: a time-window box); a positive one adds the variables it binds
    to ``bound`` (and its predicate to ``chosen``). ``@`` windows come twice as often as the other forms:
    two of them with different sizes give one head several derivations that end at different horizons."""
    pred, arity = draw(st.sampled_from(preds))
    if chosen is not None:
        chosen.append((pred, arity))
    forms = [f for f in FORMS + (("time", "@"),) * 2 if f[0] != "tuple" or pred in EXTENSIONAL]
    if box:
        forms = [("time", "[]")]
    kind, op = draw(st.sampled_from(forms))
    usable = sorted(bound) if negated else list(DATA_VARS) + sorted(bound)
    choices = usable * 4 + [_term(c) for c in CONSTANTS]  # mostly variables, so that atoms match often
    args = [draw(st.sampled_from(choices)) for _ in range(arity)]
    parts = ["not"] if negated else []
    if kind == "time":
        # mostly short windows; long ones make one atom's derivations end at different horizons
        parts.append(f"[{draw(st.sampled_from((0, 1, 2, 3, 4, 1, 2, 3, 6, 8)))}]")
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
def _rule(draw: st.DrawFn, sig: Signature, levels: dict[Pred, int], head: Pred) -> str:
    level = levels[head]
    extensional = predicates(sig, EXTENSIONAL)
    positive_preds = extensional * 2 + [i for i in levels if levels[i] <= level]
    negative_preds = extensional + [i for i in levels if levels[i] < level]
    bound: set[str] = set()
    positives = draw(st.sampled_from((0, 1, 1, 2, 2, 3)))
    read: list[Pred] = []
    body = [draw(_ext_atom(positive_preds, bound, False, chosen=read)) for _ in range(positives)]
    if draw(st.integers(0, 3)) == 0:  # recursion: the head's own predicate, often through a box
        own = draw(_ext_atom([head], bound, False, box=draw(st.booleans()), chosen=read))
        body.append(own)
    # A head of a rule that may be recursive (it reads a predicate of its own level) takes no computed
    # value: recursion through arithmetic has an infinite model, and rsp refuses it (a test of its own).
    recursive = any(levels.get(pred, -1) == level for pred in read)
    for target in ASSIGNED_VARS[: draw(st.sampled_from((0, 0, 1, 1, 2)))]:
        body.append(f"{target} = {draw(_expression(bound))}")
        bound.add(target)
    for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
        terms = sorted(bound) * 2 + [_term(c) for c in CONSTANTS]
        left = draw(st.sampled_from(sorted(bound) or terms))
        body.append(f"{left} {draw(st.sampled_from(COMPARISON_OPS))} {draw(st.sampled_from(terms))}")
    for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
        body.append(draw(_ext_atom(negative_preds, bound, True)))
    if not body:
        body.append(draw(_ext_atom(negative_preds, bound, True)))
    body = draw(st.permutations(body))
    head_vars = sorted(bound - set(ASSIGNED_VARS)) if recursive else sorted(bound)
    args = [draw(st.sampled_from(head_vars + [_term(c) for c in CONSTANTS])) for _ in range(head[1])]
    text = _atom(head[0], args)
    if draw(st.booleans()):  # an @ head: mostly a time variable, else any bound variable or a constant
        time_vars = sorted(bound & set(TIME_VARS + ASSIGNED_VARS))
        at = draw(st.sampled_from(time_vars * 4 + sorted(bound) + [str(draw(st.integers(0, MAX_TIME)))]))
        text = f"@{at} {text}"
    return f"{text} :- {', '.join(body)}."


@st.composite
def _fact(draw: st.DrawFn, sig: Signature) -> str:
    # mostly stream predicates (tuple windows)
    pred, arity = draw(st.sampled_from(predicates(sig, EXTENSIONAL) * 2 + predicates(sig, INTENSIONAL)))
    text = _atom(pred, [_term(draw(st.sampled_from(CONSTANTS))) for _ in range(arity)])
    if draw(st.booleans()):
        text = f"@{draw(st.integers(0, MAX_TIME))} {text}"
    return text + "."


@st.composite
def programs(draw: st.DrawFn, sig: Signature | None = None) -> str:
    """The text of a small valid ``.lars`` program (1-5 rules, 0-2 background facts)."""
    if sig is None:
        sig = draw(signatures())
    levels = {pred: draw(st.integers(0, 2)) for pred in predicates(sig, INTENSIONAL)}
    heads = draw(st.lists(st.sampled_from(sorted(levels)), min_size=1, max_size=5))
    lines = [draw(_rule(sig, levels, head)) for head in heads]
    lines += draw(st.lists(_fact(sig), max_size=2))
    return "\n".join(lines) + "\n"


@st.composite
def streams(draw: st.DrawFn, sig: Signature | None = None) -> list[str]:
    """Stream file lines: non-decreasing times in 0..12, 0-6 atoms per time point (0: a bare time line).

    One stream in twenty is empty (no timeline).
    """
    if sig is None:
        sig = draw(signatures())
    if draw(st.integers(0, 19)) == 19:
        return []  # no timeline at all
    times = draw(st.lists(st.integers(0, MAX_TIME), min_size=1, max_size=10, unique=True))
    lines: list[str] = []
    extensional = predicates(sig, EXTENSIONAL)
    for time in sorted(times):
        count = draw(st.sampled_from((0, 1, 1, 2, 2, 3, 4, 6)))
        if count == 0:
            lines.append(str(time))
        for _ in range(count):
            if draw(st.integers(0, 9)) == 0:  # any name, any arity: read only by its own name/arity
                pred = draw(st.sampled_from(EXTENSIONAL + INTENSIONAL))
                arity = draw(st.integers(0, 3))
            else:
                pred, arity = draw(st.sampled_from(extensional))
            args = [draw(st.sampled_from(STREAM_CONSTANTS)) for _ in range(arity)]
            lines.append(f"{time} {_atom(pred, args)}")
    return lines


CHAIN_WINDOWS = (0, 1, 2, 3, 5, 8)


@st.composite
def _chain_atom(draw: st.DrawFn, pred: Pred, bound: set[str], times: list[str], op: str | None = None) -> str:
    """A positive body atom of a chain rule: variables only (a constant now and then), through a
    plain, ◇, □ or ``@`` time window (``op``, else drawn); an ``@`` window binds a time variable, a
    new one or one an earlier ``@`` window bound."""
    name, arity = pred
    args = [draw(st.sampled_from(("X", "Y", "X", "Y", "Z", "a"))) for _ in range(arity)]
    bound.update(a for a in args if a[0].isupper())
    size = draw(st.sampled_from(CHAIN_WINDOWS))
    if op is None:
        op = draw(st.sampled_from(("plain", "<>", "[]", "@", "@", "<>")))
    atom = _atom(name, args)
    if op == "plain":
        return atom
    if op == "@":
        if times and draw(st.booleans()):  # one time variable in two @ windows of different sizes
            time = draw(st.sampled_from(times))
        else:
            time = f"T{len(times)}"
            times.append(time)
            bound.add(time)
        return f"[{size}] @{time} {atom}"
    return f"[{size}] {op} {atom}"


@st.composite
def chain_programs(draw: st.DrawFn, sig: Signature) -> str:
    """Rules that read the stream and each other's heads through windows (the shape of real programs,
    where rules fire): joins of ``@`` windows of different sizes give one head several derivations with
    different horizons, heads are read again through windows, recursion goes through boxes, and
    negation (of stream predicates) is stratified by construction."""
    stream_preds = predicates(sig, EXTENSIONAL)
    heads = draw(st.lists(st.sampled_from(predicates(sig, INTENSIONAL)), min_size=2, max_size=5))
    lines = []
    for k, head in enumerate(heads):
        readable = stream_preds + heads[:k] + ([head] if draw(st.integers(0, 2)) == 0 else [])
        bound: set[str] = set()
        times: list[str] = []
        body = [
            draw(_chain_atom(draw(st.sampled_from(readable)), bound, times))
            for _ in range(draw(st.integers(1, 3)))
        ]
        if head in readable and draw(st.booleans()):  # recursion through a box over the head itself
            body.append(draw(_chain_atom(head, bound, times, "[]")))
        if draw(st.integers(0, 4)) == 0:
            name, arity = draw(st.sampled_from(stream_preds))
            if bound or not arity:
                args = [draw(st.sampled_from(sorted(bound))) for _ in range(arity)]
                body.append(f"not [{draw(st.sampled_from(CHAIN_WINDOWS))}] <> {_atom(name, args)}")
        args = [draw(st.sampled_from(sorted(bound) + ["a"])) for _ in range(head[1])]
        text = _atom(head[0], args)
        if times and draw(st.integers(0, 2)) == 0:
            text = f"@{draw(st.sampled_from(times))} {text}"
        lines.append(f"{text} :- {', '.join(body)}.")
    return "\n".join(lines) + "\n"


@st.composite
def horizon_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """One atom, many derivations ending at different horizons, read again through windows: a rule
    joins ``@`` and ◇ windows of different sizes over two unary stream predicates (time variables
    shared or not, projected away or kept in an ``@`` head), and rules read its head through ◇, □, ``@``
    and plain atoms. Dense, repetitive streams (two constants) make the derivations overlap."""
    body, data, times = [], [], []
    for _ in range(draw(st.sampled_from((2, 3, 2, 1)))):  # a join: one atom's delta meets many others
        var = draw(st.sampled_from(("X", "Y", "Z")))
        data.append(var)
        atom = f"{draw(st.sampled_from(('c', 'v')))}({var})"
        size = draw(st.sampled_from((2, 8, 1, 3, 5)))
        if draw(st.integers(0, 2)) == 0:
            body.append(f"[{size}] <> {atom}")
        else:
            time = draw(st.sampled_from(("T1", "T2", "T3")))
            times.append(time)
            body.append(f"[{size}] @{time} {atom}")
    kept = sorted(set(data)) if draw(st.booleans()) else sorted({v for v in data if draw(st.booleans())})
    head = _atom("h0", kept)
    if times and draw(st.integers(0, 2)) == 0:
        head = f"@{draw(st.sampled_from(times))} {head}"
    lines = [f"{head} :- {', '.join(body)}."]
    args = ",".join(f"A{i}" for i in range(len(kept)))
    h0 = _atom("h0", args.split(",") if args else [])
    readers = ["<>", *draw(st.lists(st.sampled_from(("plain", "[]", "@", "<>")), max_size=2))]
    for k, reader in enumerate(readers):
        size = draw(st.sampled_from((1, 0, 3, 5)))
        if reader == "plain":
            lines.append(f"h{k + 5} :- {h0}.")
        elif reader == "@":
            lines.append(f"h{k + 5}(T) :- [{size}] @T {h0}.")
        else:
            lines.append(f"h{k + 5} :- [{size}] {reader} {h0}.")
    stream = []
    for time in sorted(draw(st.lists(st.integers(0, 20), min_size=3, max_size=8, unique=True))):
        for _ in range(draw(st.sampled_from((2, 3, 1, 2)))):
            stream.append(
                f"{time} {draw(st.sampled_from(('c', 'v')))}({draw(st.sampled_from(('x1', 'x2')))})"
            )
    stream.append(str(draw(st.integers(21, 30))))
    return "\n".join(lines) + "\n", stream


@st.composite
def recursion_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Recursion through a box: ``h`` is derived from the stream and, in the same stratum, from
    ``[n] [] h`` (so whether the box holds at t is known only at the stratum's fixpoint), and read by a
    later stratum through a box and a diamond."""
    arity = draw(st.integers(0, 2))
    terms = ("X", "Y", "a", "X")

    def h(choices: tuple[str, ...]) -> str:
        return _atom("h", [draw(st.sampled_from(choices)) for _ in range(arity)])

    base = draw(st.sampled_from(("c(X)", "[2] <> c(X)", "[3] @T c(X)", "c(X), [1] <> d(Y)")))
    lines = [f"{h(('X', 'a') if 'Y' not in base else ('X', 'Y', 'a'))} :- {base}."]
    for _ in range(draw(st.integers(1, 2))):
        own_args = [draw(st.sampled_from(terms)) for _ in range(arity)]
        bound = {a for a in own_args if a[0].isupper()}
        extras = ["", ", d(X)", ", [2] <> d(Y)"] + ([", X = X"] if "X" in bound else [])
        extra = draw(st.sampled_from(extras))
        bound |= {v for v in ("X", "Y") if f"d({v})" in extra}
        body = f"[{draw(st.sampled_from((0, 1, 2, 4)))}] [] {_atom('h', own_args)}{extra}"
        lines.append(f"{h(tuple(sorted(bound)) + ('a',))} :- {body}.")
    lines.append(f"g :- [{draw(st.sampled_from((0, 1, 3)))}] [] {h(('X', 'a'))}.")
    lines.append(f"k :- [2] <> {h(('X', 'a'))}, not g.")
    stream = []
    for time in sorted(draw(st.lists(st.integers(0, 12), min_size=2, max_size=8, unique=True))):
        for _ in range(draw(st.sampled_from((1, 2, 0)))):
            stream.append(f"{time} {draw(st.sampled_from(('c', 'd')))}({draw(st.sampled_from(('a', 'b')))})")
        if not stream or not stream[-1].startswith(f"{time} "):
            stream.append(str(time))
    return "\n".join(lines) + "\n", stream


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A program and a stream: any small program or a chain of rules over one signature, a program
    whose atoms have several derivations with different horizons, or recursion through a box."""
    family = draw(st.integers(0, 3))
    if family == 0:
        return draw(horizon_cases())
    if family == 1:
        return draw(recursion_cases())
    sig = draw(signatures())
    program = draw(st.one_of(programs(sig), chain_programs(sig)))
    return program, draw(streams(sig))
