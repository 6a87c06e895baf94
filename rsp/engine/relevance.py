"""Which rules can matter to what is read of a program's facts: the rules that may sleep while the
rules that read every fact of a predicate cannot fire (:class:`rsp.engine.evaluator.Engine`'s
``hidden`` predicates).

A continuous query reads its patterns' predicates, never the window graph ``g`` itself. Of the
background rules over ``g``, only those whose head can match a body atom of a rule that matters do:
under OWL 2 RL, ``prp-dom``, ``prp-rng`` and ``cax-sco`` derive ``rdf:type`` triples that a query
over ``ex:isIn`` never reads, however often they fire. Matching is on constants: the head
``g(X, rdf:type, C)`` matches no body atom ``g(X, ex:isIn, Y)``, and the body atoms of a rule that
matters are needed with the constants the match binds (``prp-trp``'s head matched by ``g(_, ex:isIn,
_)`` needs ``g(_, ex:isIn, _)`` twice).

A rule with a positive body atom over a hidden predicate whose every argument is a variable reads
any of its facts (OWL 2 RL's ``eq-rep-s``: ``g(S2, P, O) :- g(S, owl:sameAs, S2), g(S, P, O)``), so
it would make every rule over that predicate matter. Relevance is therefore computed without such
rules, the *wakers*: it holds while none of them can fire (their other body atoms have no fact,
e.g. no ``owl:sameAs`` triple), and the engine wakes every sleeping rule, evaluated once over all
the facts, when one of them can.

>>> from rsp.lars import parse
>>> program = parse('''
... g(X, type, c) :- g(X, in, Y).
... g(X, in, Z) :- g(X, in, Y), g(Y, in, Z).
... g(Y, P, O) :- g(X, same, Y), g(X, P, O).
... q(X, Y) :- g(X, in, Y).''')
>>> sleeping, wakers = relevance(program.program.proper_rules, {"g"})
>>> [str(rule) for rule in sleeping]
['g(X,type,c) :- g(X,in,Y).']
>>> [str(rule) for rule in wakers]
['g(Y,P,O) :- g(X,same,Y), g(X,P,O).']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rsp.lars.model import Atom, ExtAtom, Rule, Sig, Var

Pattern = tuple[Sig, tuple[object, ...]]
"""A needed atom: its predicate and, per argument, a constant or :data:`ANY`."""


class _Any:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()
"""Any term at this argument."""


def _body_atoms(rule: Rule) -> list[ExtAtom]:
    return [lit for lit in rule.body if isinstance(lit, ExtAtom)]


def reads_any(rule: Rule, hidden: Iterable[str]) -> bool:
    """Whether a positive body atom of ``rule`` over a hidden predicate has only variables."""
    names = set(hidden)
    return any(
        not lit.negated and lit.atom.pred in names and all(isinstance(a, Var) for a in lit.atom.args)
        for lit in _body_atoms(rule)
    )


def _match(head: Atom, needed: tuple[object, ...]) -> dict[Var, object] | None:
    """The constants a head's variables take to match a needed atom, or None if it cannot match."""
    binding: dict[Var, object] = {}
    for term, want in zip(head.args, needed, strict=True):
        if want is ANY:
            continue
        if isinstance(term, Var):
            if binding.setdefault(term, want) != want:
                return None
        elif term != want:
            return None
    return binding


def _pattern(atom: Atom, binding: dict[Var, object]) -> Pattern:
    return atom.sig, tuple(binding.get(a, ANY) if isinstance(a, Var) else a for a in atom.args)


def relevance(rules: Sequence[Rule], hidden: Iterable[str]) -> tuple[list[Rule], list[Rule]]:
    """(the rules with a hidden head predicate that matter to no other predicate while no waker
    fires, the wakers): every atom of a predicate that is not hidden is needed, and so are the body
    atoms, with the constants the match binds, of a rule whose head matches a needed atom."""
    names = set(hidden)
    wakers = [rule for rule in rules if reads_any(rule, names)]
    waking = {id(rule) for rule in wakers}
    by_head: dict[Sig, list[Rule]] = {}
    for rule in rules:
        if id(rule) not in waking:
            by_head.setdefault(rule.head.atom.sig, []).append(rule)
    needed: set[Pattern] = set()
    work: list[Pattern] = []

    def need(pattern: Pattern) -> None:
        if pattern not in needed:
            needed.add(pattern)
            work.append(pattern)

    for sig in by_head:
        if sig.name not in names:
            need((sig, (ANY,) * sig.arity))
    matters: set[int] = set()
    while work:
        sig, args = work.pop()
        for rule in by_head.get(sig, ()):
            binding = _match(rule.head.atom, args)
            if binding is None:
                continue
            matters.add(id(rule))
            for lit in _body_atoms(rule):
                need(_pattern(lit.atom, binding))
    sleeping = [
        rule for rule in rules
        if id(rule) not in waking and id(rule) not in matters and rule.head.atom.pred in names
    ]  # fmt: skip
    return sleeping, wakers


__all__ = ["ANY", "reads_any", "relevance"]
