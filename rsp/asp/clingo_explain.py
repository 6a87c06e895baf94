"""``--explain`` in mode ``clingo``: which program rule, under which assumptions (``not x``), supports an
atom of the model printed at t. The model's atoms at every time point (``h(A, S, t)``) become facts of a
small second program holding the encoding's window definitions and, per rule, an atom ``sup(r, A, S,
vars(…))`` for every ground instance whose body holds in the model (negation read from the model); the
first instance with the atom as head is the explanation."""

from __future__ import annotations

import clingo

from rsp.asp.encoding import Encoding, _rule, _tuple_param, from_symbol
from rsp.lars.model import Atom, ExtAtom, Rule, Var, format_atom


def _variables(rule: Rule) -> list[str]:
    names: set[str] = set(rule.head.variables())
    for lit in rule.body:
        names |= lit.variables()
    return sorted(names)


def support_program(enc: Encoding) -> str:
    """The part ``explain(t, q…)``: the window definitions and one ``sup`` rule per program rule."""
    lines = [
        f"#program explain({','.join(['t', *(_tuple_param(n) for n in enc.tuple_sizes)])}).",
        "tick(t).",
        *enc.definitions,
    ]
    for r, rule in enumerate(enc.program.rules):
        if rule.is_constraint:
            continue
        text = _rule(enc, rule)  # "h(A,S,t) :- body." with the encoding's reading of every literal
        head, body = text[:-1].split(" :- ", 1)
        atom_time = head[2 : -len(",t)")]  # "A,S"
        names = [f"V{name}" for name in _variables(rule)]
        body = body.replace("now(t)", "tick(t)", 1)
        lines.append(f"sup({r},{atom_time},vars({','.join(names)})) :- {body}.")
    lines.append("#show sup/4.")
    return "\n".join(lines)


def _ground(lit: ExtAtom, binding: dict) -> ExtAtom:
    args = tuple(binding[a.name] if isinstance(a, Var) else a for a in lit.atom.args)
    time = binding[lit.time.name] if isinstance(lit.time, Var) else lit.time
    return ExtAtom(Atom(lit.atom.pred, args), lit.op, lit.window, time, False)


def supports(
    enc: Encoding,
    functions: object,
    t: int,
    params: list[int],
    model_atoms: list[clingo.Symbol],
    tuple_members: dict[int, set],
) -> list[clingo.Symbol]:
    """The ``sup(r, A, S, vars(…))`` atoms of the model whose ``h`` atoms at ``t`` are ``model_atoms``:
    every rule instance whose body holds in that model."""
    control = clingo.Control(["--warn=none"], logger=lambda _c, _m: None)
    facts = [f"{symbol}." for symbol in model_atoms]
    for n in enc.tuple_sizes:
        facts += [f"tw({n},{enc.atom_symbol(p, a)},{s})." for p, a, s in tuple_members[n]]
    control.add("base", [], enc.base + "\n" + "\n".join(facts))
    control.add("base", [], support_program(enc))
    control.ground([("base", []), ("explain", [clingo.Number(x) for x in [t, *params]])], context=functions)
    found: list[clingo.Symbol] = []
    control.solve(on_model=lambda model: found.extend(model.symbols(shown=True)))
    return found


def explain_atom(enc: Encoding, found: list[clingo.Symbol], t: int, pred: str, args: tuple) -> dict | None:
    """Why ``pred(args)`` holds at ``t`` given the model's ``sup`` atoms (:func:`supports`): the rule (and
    its origin), the premises (its positive body, ground) and the assumptions (``not x``); None if no
    rule instance supports it (and it is no background fact)."""
    wanted = enc.atom_symbol(pred, args)
    here = clingo.Number(t)
    matches = [
        (s.arguments[0].number, str(s.arguments[3]), s.arguments[3])
        for s in found
        if s.arguments[1] == wanted and s.arguments[2] == here
    ]
    if not matches:
        if any(r.head.atom.pred == pred and r.head.atom.args == args for r in enc.program.program.facts):
            return {
                "atom": format_atom(pred, args),
                "rule": "[background fact]",
                "origin": "",
                "premises": [],
                "assumptions": [],
            }
        return None
    r, _, values = min(matches, key=lambda m: (m[0], m[1]))
    rule = enc.program.rules[r]
    binding = dict(zip(_variables(rule), (from_symbol(v) for v in values.arguments), strict=True))
    return {
        "atom": format_atom(pred, args),
        "rule": str(rule),
        "origin": str(rule.origin),
        "premises": [str(_ground(lit, binding)) for lit in rule.positive_atoms()],
        "assumptions": [f"not {_ground(lit, binding)}" for lit in rule.negative_atoms()],
    }
