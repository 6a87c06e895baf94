"""Hypothesis strategies for small non-stratified LARS programs (answer streams): even loops (choices),
choices through windows, negation of intensional atoms through ◇, □ and @, tuple windows, constraints
and, for mode clingo, odd loops. Small on purpose: the reference guesses every ground negated atom."""

from __future__ import annotations

from hypothesis import strategies as st
from lars_strategies import _atom, _ext_atom

from rsp.asp.program import find_odd_loop
from rsp.lars.parser import parse_program

EXTENSIONAL = (("p", 1), ("q", 0), ("r", 1))
INTENSIONAL = (("c1", 1), ("c2", 1), ("i1", 0), ("i2", 1))
MAX_TIME = 6


@st.composite
def _choice(draw: st.DrawFn) -> list[str]:
    """``c1(X)`` or ``c2(X)`` for every X some window shows: an even loop through negation."""
    source = draw(st.sampled_from(("[2] <> p(X)", "[#2] <> r(X)", "p(X)", "[3] @T p(X)", "[1] [] r(X)")))
    second = draw(st.sampled_from(("not c1(X)", "not [1] <> c1(X)", "not c1(X), not i1")))
    head = "@T c1(X)" if "@T" in source and draw(st.booleans()) else "c1(X)"
    return [f"{head} :- {source}, not c2(X).", f"c2(X) :- {source}, {second}."]


@st.composite
def _rule(draw: st.DrawFn, allow_odd: bool) -> str:
    head = draw(st.sampled_from(INTENSIONAL[2:] if not allow_odd else INTENSIONAL))
    bound: set[str] = set()
    preds = list(EXTENSIONAL + INTENSIONAL)
    body = [draw(_ext_atom(preds, bound, False)) for _ in range(draw(st.integers(1, 2)))]
    negatives = [draw(_ext_atom(preds, bound, True)) for _ in range(draw(st.integers(0, 2)))]
    if bound and draw(st.integers(0, 3)) == 0:
        var = sorted(bound)[0]
        body.append(f"{var} != {draw(st.sampled_from(('a', 'b', '1')))}")
    args = [draw(st.sampled_from(sorted(bound) + ["a"])) for _ in range(head[1])]
    return f"{_atom(head[0], args)} :- {', '.join(body + negatives)}."


@st.composite
def programs(draw: st.DrawFn, odd: bool = False) -> str:
    """A choice and 0-2 further rules (intensional negation allowed); with ``odd``, rules may close odd
    loops (``i1 :- …, not i1``) and there may be a constraint."""
    lines = draw(_choice())
    for _ in range(draw(st.integers(0, 2))):
        rule = draw(_rule(odd))
        if odd or find_odd_loop(parse_program("\n".join([*lines, rule]))) is None:
            lines.append(rule)
    if odd and draw(st.integers(0, 2)) == 0:  # constraints are odd loops too
        lines.append(
            draw(st.sampled_from((":- c1(a), c1(b).", ":- i1, not [2] <> q.", ":- c2(X), [#1] <> r(X).")))
        )
    if odd and draw(st.integers(0, 2)) == 0:
        lines.append(
            draw(st.sampled_from(("i1 :- not i1, [1] <> q.", "i2(X) :- c1(X), not i2(X), [2] [] q.")))
        )
    return "\n".join(lines) + "\n"


@st.composite
def streams(draw: st.DrawFn) -> list[str]:
    """Stream lines: times 0..6, at most two atoms each over {a, b}."""
    times = sorted(draw(st.lists(st.integers(0, MAX_TIME), min_size=1, max_size=5, unique=True)))
    lines = []
    for time in times:
        count = draw(st.integers(0, 2))
        if count == 0:
            lines.append(str(time))
        for _ in range(count):
            pred, arity = draw(st.sampled_from(EXTENSIONAL))
            args = [draw(st.sampled_from(("a", "b"))) for _ in range(arity)]
            lines.append(f"{time} {_atom(pred, args)}")
    return lines


@st.composite
def cases(draw: st.DrawFn, odd: bool = False) -> tuple[str, list[str]]:
    return draw(programs(odd)), draw(streams())


@st.composite
def choose_one(draw: st.DrawFn) -> tuple[str, list[str]]:
    """ "Choose exactly one" (Ticker's content retrieval: ``get(I,N) :- …, not nget(I,N).
    nget(I,N) :- get(I,M), …, M != N.``) among up to three candidates seen through windows, sometimes
    with a rule reading the choice through a window or a constraint on it. Predicate-level this is an odd
    loop; ground, with three candidates, too (get(a) -not- nget(a) - get(b) -not- … - get(a)), yet it
    always has answers."""
    item = draw(st.sampled_from(("[2] <> req(I)", "[#2] <> req(I)", "req(I)", "[3] [] req(I)")))
    node = draw(st.sampled_from(("[3] <> has(N)", "[#3] <> has(N)", "[1] @T has(N)", "has(N)")))
    lines = [
        f"get(I,N) :- {item}, {node}, not nget(I,N).",
        f"nget(I,N) :- get(I,M), {node}, M != N.",
    ]
    extra = draw(
        st.sampled_from(("", "served(I) :- [2] <> get(I,N).", "moved(I) :- get(I,N), not [1] <> get(I,N)."))
    )
    if extra:
        lines.append(extra)
    if draw(st.integers(0, 3)) == 0:
        lines.append(
            draw(
                st.sampled_from(
                    (":- get(I,c).", ":- get(a,N), [1] <> down(N).", ":- get(I,N), [2] <> down(N).")
                )
            )
        )
    times = sorted(draw(st.lists(st.integers(0, MAX_TIME), min_size=1, max_size=5, unique=True)))
    stream = []
    for time in times:
        atoms = draw(
            st.lists(
                st.one_of(
                    st.sampled_from(("req(a)", "req(b)")),
                    st.sampled_from(("has(a)", "has(b)", "has(c)")),
                    st.just("down(a)"),
                ),
                max_size=3,
            )
        )
        stream += [f"{time} {atom}" for atom in atoms] or [str(time)]
    return "\n".join(lines) + "\n", stream


@st.composite
def past_choices(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Choices made at past time points (``@T`` heads over ``[n] @T a(X)``: the label of ``h1(x)`` at s is
    chosen again at every tick while s is in the window), a rule that may force one side *now* (so that
    the choice at that point opens again at the next tick, as in issue 41's case), and a rule that reads
    the choices through a larger window under a guard that is out while the force holds: the window
    node's old label may then rest on a choice that just left, on the tick a forced one opens again.
    What inertia must keep includes past time points, not only the atoms now."""
    n = draw(st.integers(1, 2))
    # the plain time window twice as often as the tuple window
    source = draw(st.sampled_from((f"[{n}] @T a(X)", f"[{n}] @T a(X)", f"[#{n}] @T a(X)")))
    force = draw(
        st.sampled_from(("h1(X) :- [#1] @T a(X).", "h1(X) :- a(X), b(X).", "h2(X) :- a(X), b(X).", ""))
    )
    wide = st.integers(n + 1, n + 2)
    guard = draw(st.sampled_from(("h1(X)", "[1] [] h1(X)", f"[{draw(st.integers(0, 2))}] <> h1(X)")))
    others = (
        f"h0(X) :- [{draw(wide)}] @T h1(X), not [1] <> b(X).",
        f"g :- [{draw(wide)}] <> h2(X), not [1] <> h1(X).",
        f"g :- [#{draw(wide)}] <> h1(X), not h0(X).",
        f"@T h0(X) :- [{draw(wide)}] @T a(X), not [3] <> h0(X), not @T h2(X).",
    )
    lines = [
        f"@T h2(X) :- {source}, not @T h1(X).",
        f"@T h1(X) :- {source}, not @T h2(X).",
        *([force] if force else []),
        f"h0(X) :- [{draw(wide)}] <> h2(X), not {guard}.",
        *([draw(st.sampled_from(others))] if draw(st.integers(0, 3)) == 0 else []),
    ]
    objects = ("x1", "x2") if draw(st.integers(0, 3)) == 0 else ("x1",)
    stream = []
    for time in range(MAX_TIME + 1):  # dense: choices at neighbouring points
        atoms = [f"{p}({o})" for o in objects for p in ("a", "b") if draw(st.booleans())]
        stream += [f"{time} {atom}" for atom in atoms] or [str(time)]
    return "\n".join(lines) + "\n", stream
