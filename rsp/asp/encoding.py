"""LarsToAsp (Ticker's Alg. 1): a LARS program as an ASP program for clingo, one part per time point.

``h(A, S, t)`` says the LARS atom A (a clingo term ``l<k>(args)``, one name per predicate and arity)
holds at time point S in the answer at t. Each rule becomes, in the part ``step(t, …)`` grounded once
for time point t, a rule whose body reads ``h`` atoms and window atoms of time t. Rules on a cycle
through negation and constraints are guarded by the external ``now(t)``: releasing it after the tick
switches them off; the others read the fact ``tick(t)`` and stay, harmless, each old tick's atoms
carrying their own t (Ticker's Alg. 2: older ticks are never grounded again). Stream atoms are facts
``in(A, S)`` added when they arrive (the step reads them only in ``[t - history, t]``, so they need no
switching off); the elements in a tuple window ``[#n]`` are externals ``tw(n, A, S)``, switched on
when they enter and released when they leave. Comparisons and arithmetic call Python (``@cmp``,
``@ar``) so they keep rsp's semantics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import clingo

from rsp.asp.program import UNBOUNDED, AspProgram
from rsp.asp.values import arith, compare
from rsp.lars.model import BinOp, Comparison, Constant, Expr, ExtAtom, Op, Rule, Sig, Var

# -- constants <-> clingo symbols -----------------------------------------------------------------------


def to_symbol(value: Constant) -> clingo.Symbol:
    """ints as numbers (when clingo's 32 bits hold them), text as strings, decimals as ``real("…")``."""
    if isinstance(value, int) and -(2**31) <= value < 2**31:
        return clingo.Number(value)
    if isinstance(value, int):
        return clingo.Function("big", [clingo.String(str(value))])
    if isinstance(value, float):
        return clingo.Function("real", [clingo.String(repr(value))])
    return clingo.String(value)


def from_symbol(symbol: clingo.Symbol) -> Constant:
    if symbol.type is clingo.SymbolType.Number:
        return symbol.number
    if symbol.type is clingo.SymbolType.String:
        return symbol.string
    text = symbol.arguments[0].string
    return int(text) if symbol.name == "big" else float(text)


def _text(value: Constant) -> str:
    """A constant written in clingo's syntax."""
    symbol = to_symbol(value)
    if symbol.type is clingo.SymbolType.String:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")  # type: ignore[union-attr]
        return f'"{escaped}"'
    if symbol.type is clingo.SymbolType.Number:
        return str(value)
    return f'{symbol.name}("{symbol.arguments[0].string}")'


class Functions:
    """The Python functions the encoding calls while grounding (clingo's context object)."""

    def cmp(self, op: clingo.Symbol, left: clingo.Symbol, right: clingo.Symbol) -> clingo.Symbol:
        return clingo.Number(int(compare(op.string, from_symbol(left), from_symbol(right))))

    def ar(self, op: clingo.Symbol, left: clingo.Symbol, right: clingo.Symbol) -> list[clingo.Symbol]:
        got = arith(op.string, from_symbol(left), from_symbol(right))
        return [] if got is None else [to_symbol(got)]


# -- the encoding ---------------------------------------------------------------------------------------


@dataclass
class Encoding:
    """The ASP text of a program and the tables to read models back."""

    program: AspProgram
    start: int
    names: dict[Sig, str] = field(default_factory=dict)
    sigs: dict[str, Sig] = field(default_factory=dict)
    tuple_sizes: list[int] = field(default_factory=list)
    aux: dict[tuple, str] = field(default_factory=dict)
    definitions: list[str] = field(default_factory=list)
    history: int = 0  # how many points back the step reads stream atoms (UNBOUNDED: all)
    guarded: frozenset[Sig] = frozenset()  # heads whose rules only hold while now(t) does
    base: str = ""
    step: str = ""
    inputs: str = ""

    def name(self, sig: Sig) -> str:
        if sig not in self.names:
            self.names[sig] = f"l{len(self.names)}"
            self.sigs[self.names[sig]] = sig
        return self.names[sig]

    def term(self, sig: Sig, args: tuple) -> str:
        name = self.name(sig)
        return f"{name}({','.join(args)})" if args else name

    def atom_symbol(self, pred: str, args: tuple) -> clingo.Symbol:
        name = self.name(Sig(pred, len(args)))
        return clingo.Function(name, [to_symbol(a) for a in args])

    def decode(self, symbol: clingo.Symbol) -> tuple[Sig, tuple]:
        return self.sigs[symbol.name], tuple(from_symbol(a) for a in symbol.arguments)


def _var(name: str) -> str:
    return f"V{name}"


def _term_text(term) -> str:
    return _var(term.name) if isinstance(term, Var) else _text(term)


def _expr(expr: Expr) -> str:
    if isinstance(expr, BinOp):
        return f'@ar("{expr.op}",{_expr(expr.left)},{_expr(expr.right)})'
    return _term_text(expr)


def _tuple_param(n: int) -> str:
    return f"q{n}"


def encode(program: AspProgram, start: int) -> Encoding:
    """LarsToAsp: the parts ``base``, ``input(a, s)``, ``twin(n, a, s)`` and ``step(t, q…)``."""
    enc = Encoding(program, start)
    sizes = sorted(
        {
            lit.window.size
            for rule in program.rules
            for lit in rule.body
            if isinstance(lit, ExtAtom) and lit.window is not None and lit.window.tuple_based
        }
    )
    enc.tuple_sizes = sizes
    horizons = [program.horizon(sig) for sig in _read_sigs(program)]
    enc.history = UNBOUNDED if UNBOUNDED in horizons else max(horizons, default=0)
    enc.guarded = _unstratified(program)
    rules_text = [_rule(enc, rule) for rule in program.rules]
    lo = f"{start}" if enc.history == UNBOUNDED else f"t-{enc.history}"
    step = [
        "#external now(t).",
        "tick(t).",
        f"h(A,S,t) :- tick(t), in(A,S), S = {lo}..t.",
        f"h(A,S,t) :- tick(t), fact(A), S = {lo}..t, S >= {start}.",
        f"h(A,S,t) :- tick(t), tfact(A,S), S >= {start}, S <= t.",
        *enc.definitions,
        *rules_text,
    ]
    for sig in sorted(program.intensional):
        args = tuple(f"X{i}" for i in range(sig.arity))
        step.append(f"#show {enc.term(sig, args)} : h({enc.term(sig, args)},t,t), now(t).")
    params = ",".join(["t", *(_tuple_param(n) for n in sizes)])
    facts = []
    for rule in program.program.facts:
        atom = enc.term(rule.head.atom.sig, tuple(_text(a) for a in rule.head.atom.args))  # type: ignore[arg-type]
        if rule.head.time is None:
            facts.append(f"fact({atom}).")
        else:
            facts.append(f"tfact({atom},{_text(rule.head.time)}).")  # type: ignore[arg-type]
    enc.base = "\n".join(["#show.", *facts])
    enc.step = f"#program step({params}).\n" + "\n".join(step)
    enc.inputs = "#program input(a,s).\nin(a,s).\n#program twin(n,a,s).\n#external tw(n,a,s)."
    return enc


def _unstratified(program: AspProgram) -> frozenset[Sig]:
    """Predicates on a cycle through negation: their rules (and constraints) carry the external
    ``now(t)``, switched off after the tick, since old ticks' choices, odd loops and constraints must not
    constrain later answers. The other rules read ``tick(t)``, a fact: the grounder evaluates their
    stratified part as in one-shot solving, and old ticks' copies, each over its own t, are harmless."""
    from rsp.asp.program import _edges
    from rsp.lars.stratify import components

    graph = _edges(program.program)
    succ = {h: sorted({b for b, _, _ in edges if b in graph}) for h, edges in graph.items()}
    marked: set[Sig] = set()
    for comp in components(sorted(graph), succ):
        members = set(comp)
        if any(neg and body in members for head in comp for body, neg, _ in graph[head]):
            marked |= members
    return frozenset(marked)


def _read_sigs(program: AspProgram) -> set[Sig]:
    return {lit.atom.sig for rule in program.rules for lit in rule.body if isinstance(lit, ExtAtom)}


def _window_atom(enc: Encoding, ext: ExtAtom) -> str:
    """The ASP atom (an h atom or an auxiliary window atom of time t) for a (non-negated) extended atom."""
    sig = ext.atom.sig
    args = tuple(_term_text(a) for a in ext.atom.args)
    atom = enc.term(sig, args)
    window, op = ext.window, ext.op
    time = _term_text(ext.time) if ext.time is not None else None
    if window is None:
        return f"h({atom},t,t)" if op is Op.PLAIN else f"h({atom},{time},t)"
    if not window.tuple_based and op is Op.PLAIN:
        return f"h({atom},t,t)"
    xs = tuple(f"X{i}" for i in range(sig.arity))
    generic = enc.term(sig, xs)
    key = (window.tuple_based, window.size, op, sig)
    n = window.size
    if window.tuple_based:
        vis = enc.aux.get((True, n, "vis", sig))
        if vis is None:
            vis = enc.aux[(True, n, "vis", sig)] = f"tv{len(enc.aux)}"
            q = _tuple_param(n)
            enc.definitions += [
                f"{vis}({generic},S,t) :- tick(t), tw({n},{generic},S).",
                f"{vis}({generic},S,t) :- tick(t), fact({generic}), S = {q}..t.",
                f"{vis}({generic},S,t) :- tick(t), tfact({generic},S), S >= {q}, S <= t.",
            ]
        if op is Op.PLAIN:
            return f"{vis}({atom},t,t)"
        if op is Op.AT:
            return f"{vis}({atom},{time},t)"
    name = enc.aux.get(key)
    if name is None:
        name = enc.aux[key] = f"w{len(enc.aux)}"
        if window.tuple_based:
            vis = enc.aux[(True, n, "vis", sig)]
            if op is Op.DIAMOND:
                enc.definitions.append(f"{name}({generic},t) :- tick(t), {vis}({generic},S,t).")
            else:  # box: every point of [q, t]
                q = _tuple_param(n)
                enc.definitions += [
                    f"{name}({generic},t) :- tick(t), {vis}({generic},t,t), not {name}_gap({generic},t).",
                    f"{name}_gap({generic},t) :- tick(t), {vis}({generic},t,t), S = {q}..t, "
                    f"not {vis}({generic},S,t).",
                ]
        elif op is Op.DIAMOND:
            enc.definitions.append(f"{name}({generic},t) :- tick(t), h({generic},S,t), S >= t-{n}.")
        elif op is Op.BOX:
            enc.definitions += [
                f"{name}({generic},t) :- tick(t), h({generic},t,t), not {name}_gap({generic},t).",
                f"{name}_gap({generic},t) :- tick(t), h({generic},t,t), S = t-{n}..t, S >= {enc.start}, "
                f"not h({generic},S,t).",
            ]
        else:  # [n] @T
            enc.definitions.append(f"{name}({generic},S,t) :- tick(t), h({generic},S,t), S >= t-{n}.")
    if op is Op.AT:
        return f"{name}({atom},{time},t)"
    return f"{name}({atom},t)"


def _rule(enc: Encoding, rule: Rule) -> str:
    body = ["now(t)" if rule.is_constraint or rule.head.atom.sig in enc.guarded else "tick(t)"]
    bound: set[str] = set()
    for lit in rule.positive_atoms():
        body.append(_window_atom(enc, lit))
        bound |= lit.variables()
    pending = list(rule.comparisons())
    while pending:  # assignments in an order that binds before use, as the safety pass checks
        for comp in pending:
            target = _assignment(comp, bound)
            if target is not None or comp.variables() <= bound:
                break
        else:
            raise AssertionError(f"unsafe rule reached the encoding: {rule}")
        pending.remove(comp)
        if target is not None:
            body.append(f"{_var(target[0])} = {_expr(target[1])}")
            bound.add(target[0])
        else:
            body.append(f'@cmp("{comp.op}",{_expr(comp.left)},{_expr(comp.right)}) = 1')
    if rule.guards():
        raise ValueError("guards (compiled filters) have no ASP encoding")
    negative = rule.negative_atoms()
    if rule.is_constraint:
        body += [f"not {_window_atom(enc, lit)}" for lit in negative[:-1]]
        return f":- {', '.join(body)}."
    body += [f"not {_window_atom(enc, lit)}" for lit in negative]
    head = rule.head
    atom = enc.term(head.atom.sig, tuple(_term_text(a) for a in head.atom.args))
    if head.time is None:
        return f"h({atom},t,t) :- {', '.join(body)}."
    time = _term_text(head.time)
    return f"h({atom},{time},t) :- {', '.join(body)}, {time} >= {enc.start}, {time} <= t."


def _assignment(comp: Comparison, bound: set[str]) -> tuple[str, Expr] | None:
    from rsp.lars.safety import assignment_target

    target = assignment_target(comp, bound)
    if target is None:
        return None
    other = comp.right if isinstance(comp.left, Var) and comp.left.name == target else comp.left
    return target, other
