"""What ``rsp lars`` writes beyond its atom lines: ``--output-predicates`` (the derived predicates a user
asked for, checked against the program) and ``--format csv`` (a row per atom and time point)."""

from __future__ import annotations

import csv
from collections.abc import Collection, Iterable
from typing import TextIO

from rsp.cli.parser import did_you_mean
from rsp.errors import RspError
from rsp.lars.model import Program, Sig


def output_predicates(value: str | None, program: Program, derived: Collection[Sig]) -> frozenset[Sig] | None:
    """The predicates ``--output-predicates p,q`` names (every arity of each name), or None (all).

    A name may be written as in the program: ``p``, a prefixed name (``ex:p``, with the program's
    ``@prefix``) or an IRI (``<http://…>``). A name that no rule of the program derives is an error,
    with the closest derived names, or, for a predicate the program only reads, the reason.

    >>> from rsp.lars import parse
    >>> checked = parse("hot(X) :- [3] <> temp(X), X > 30.\\nalarm :- hot(X).")
    >>> sorted(output_predicates("alarm", checked.program, checked.intensional))
    [Sig(name='alarm', arity=0)]
    >>> output_predicates("hott", checked.program, checked.intensional)
    Traceback (most recent call last):
    rsp.errors.RspError: --output-predicates hott: the program derives no predicate hott (did you mean hot?)
    """
    if value is None:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise RspError(
            "--output-predicates: give the names of derived predicates, e.g. --output-predicates p,q"
        )
    prefixes = dict(program.prefixes)
    by_name: dict[str, set[Sig]] = {}
    for sig in derived:
        by_name.setdefault(sig.name, set()).add(Sig(*sig))
    read = {lit.atom.sig.name for rule in program.rules for lit in rule.body if hasattr(lit, "atom")}
    read |= {rule.head.atom.sig.name for rule in program.rules if rule.is_fact}
    kept: set[Sig] = set()
    for name in names:
        full = _expanded(name, prefixes)
        if full in by_name:
            kept |= by_name[full]
            continue
        known = sorted(by_name)
        if full in read:
            reason = f"{name} is read from the stream or given by facts, no rule derives it"
            raise RspError(f"--output-predicates {name}: {reason} (the derived ones: {', '.join(known)})")
        raise RspError(
            f"--output-predicates {name}: the program derives no predicate {name}{did_you_mean(name, known)}"
        )
    return frozenset(kept)


def _expanded(name: str, prefixes: dict[str, str]) -> str:
    """``ex:p`` as the program stores it (``<http://…p>``), ``http://…`` as ``<http://…>``."""
    if name.startswith("<"):
        return name
    prefix, colon, local = name.partition(":")
    if colon and prefix in prefixes:
        return f"<{prefixes[prefix]}{local}>"
    if colon and local.startswith("//"):
        return f"<{name}>"
    return name


def atom_name(text: str) -> str:
    """The predicate of an atom's text (``p(a,b)`` → ``p``, ``<http://x>(1)`` → ``<http://x>``)."""
    if text.startswith("<"):
        return text[: text.index(">") + 1]
    return text.partition("(")[0]


def csv_value(term) -> str:
    """A term as a CSV cell: a string's text without its quotes, an IRI without its brackets (as the
    SPARQL CSV format writes them), numbers and names as the program writes them."""
    if isinstance(term, bool):
        return "true" if term else "false"
    if isinstance(term, str):
        if len(term) >= 2 and term[0] == '"' and term[-1] == '"':
            return term[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        if len(term) >= 2 and term[0] == "<" and term[-1] == ">":
            return term[1:-1]
    return str(term)


class CsvAtoms:
    """``rsp lars --format csv``: the header ``time,predicate,arg1,…,argN`` (N: the largest arity of
    the predicates written), then, for every time point, a row per atom that holds, in the order of
    the jsonl output; a time point without atoms writes no row."""

    def __init__(self, out: TextIO, predicates: Iterable[Sig]) -> None:
        self.writer = csv.writer(out, lineterminator="\n")
        width = max((sig.arity for sig in predicates), default=0)
        self.writer.writerow(["time", "predicate", *(f"arg{i}" for i in range(1, width + 1))])
        self.width = width

    def write(self, t: int, atoms: Iterable[tuple[str, tuple]]) -> None:
        """The rows of time point ``t``: ``atoms`` as (predicate, args), sorted as the output sorts them."""
        from rsp.lars.model import format_atom

        pad = [""] * self.width
        rows = sorted(atoms, key=lambda atom: format_atom(*atom))
        self.writer.writerows(
            [t, csv_value(pred), *(csv_value(a) for a in args), *pad[len(args) :]] for pred, args in rows
        )
