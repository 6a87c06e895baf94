"""The body atoms of a LARS program that nothing can make true: no rule derives their predicate, no fact
gives it and no atom of the stream read carried it (a typo such as ``tmp`` for ``temp``), reported as
warnings at the atom's position. A stream atom of the same name with another arity is reported by
:func:`rsp.engine.signatures.describe_other_arities` instead.

>>> from rsp.lars import parse
>>> program = parse("hot :- [3] <> tmp(V), V > 30.\\nwarm :- temp(V).", "p.lars").program
>>> for line in undefined_body_atoms(program, {("temp", 1)}):
...     print(line)
p.lars:1:8: warning: tmp/1 is read here, but no rule derives it, no fact gives it and no stream atom \
carried it: it never holds (a typo? the stream has temp/1)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from rsp.lars.model import CONSTRAINT_PRED, ExtAtom, Program, Sig


def undefined_body_atoms(program: Program, stream: Iterable[tuple[str, int]]) -> list[str]:
    """One warning per body predicate (name and arity) that no rule head, fact or stream atom (``stream``:
    the predicates the stream carried) gives, at its first body atom in program order."""
    stream = {Sig(*sig) for sig in stream}
    given = {rule.head.atom.sig for rule in program.rules} | stream
    names = {sig.name for sig in given}
    warnings = []
    reported: set[Sig] = set()
    for rule in program.rules:
        for literal in rule.body:
            if not isinstance(literal, ExtAtom):
                continue
            sig = literal.atom.sig
            if sig in given or sig in reported or sig.name in names or sig.name == CONSTRAINT_PRED:
                continue
            reported.add(sig)
            where = literal.position or rule.origin.position or rule.origin
            close = difflib.get_close_matches(sig.name, sorted(names), n=1)
            hint = ""
            if close:
                near = sorted(str(s) for s in given if s.name == close[0])
                source = "the stream has" if any(s.name == close[0] for s in stream) else "the program has"
                hint = f" (a typo? {source} {', '.join(near)})"
            warnings.append(
                f"{where}: warning: {sig} is read here, but no rule derives it, no fact gives it and no "
                f"stream atom carried it: it never holds{hint}"
            )
    return warnings
