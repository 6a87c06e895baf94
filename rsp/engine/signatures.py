"""Predicates as name and arity at the engine's edge: stream atoms arrive named, the engine keys every
table by :class:`rsp.lars.model.Sig`; atoms whose name the program uses only with other arities are
read by no rule, and are reported (``rsp lars`` prints them).

>>> group_by_sig({"p": [("a",), ("a", "b")], "q": [()]})
{('p', 1): [('a',)], ('p', 2): [('a', 'b')], ('q', 0): [()]}
"""

from __future__ import annotations

from rsp.lars.model import ExtAtom, Program, Sig


def group_by_sig(groups: dict[str, list[tuple]]) -> dict[Sig, list[tuple]]:
    """Stream atoms given per predicate name, keyed by predicate (name and arity) instead: a name's
    rows usually share one arity (one C-level check); rows of several arities are split."""
    out: dict = {}
    for name, rows in groups.items():
        if not rows:
            continue
        arities = set(map(len, rows))
        if len(arities) == 1:
            out[(name, arities.pop())] = rows
            continue
        for args in rows:
            sig = (name, len(args))
            bucket = out.get(sig)
            if bucket is None:
                out[sig] = [args]
            else:
                bucket.append(args)
    return out


def program_sigs(program: Program) -> set[Sig]:
    """Every predicate (name and arity) of the program's rules and facts, heads and body atoms."""
    sigs = program.data_predicates()
    for rule in program.rules:
        sigs.add(rule.head.atom.sig)
        sigs.update(lit.atom.sig for lit in rule.body if isinstance(lit, ExtAtom))
    return sigs


def describe_other_arities(engine) -> list[str]:
    """One line per predicate of the stream that the program never reads because it uses the name
    only with other arities (e.g. the stream has ``s(x1)``, the program reads ``s``), from
    :attr:`rsp.engine.Engine.other_arity`."""
    lines = []
    for (name, arity), count in sorted(engine.other_arity.items()):
        used = sorted(str(sig) for sig in engine._program_sigs if sig[0] == name)
        lines.append(
            f"{count} stream atom(s) of {name}/{arity} matched no rule: the program uses {name} as "
            f"{', '.join(used)} (a predicate is its name and its arity)"
        )
    return lines
