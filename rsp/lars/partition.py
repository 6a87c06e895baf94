"""Whether a LARS program can run as one engine per value of a variable (``rsp spark --partition-by V``).

A program is partitionable by the variable ``V`` (the same name in every rule that touches stream data)
when every stream atom can be given to exactly one partition and no rule instance needs atoms of two
partitions. Predicates are *keyed* when their atoms depend on the stream: the stream's own predicates
(used in bodies, defined by no rule and without facts) and every predicate a rule derives from keyed
atoms; predicates with facts are the program's static data. The check:

* in every rule with a keyed body atom, ``V`` is an argument of every keyed body atom (positive or
  negated), always at the same place for a predicate — the atom's *key* is the argument there — and of
  the head, whose predicate is keyed at the place of ``V``;
* such a rule has a positive keyed body atom (so ``V`` is bound by the partition's own data);
* no tuple window ``[#n]`` over a keyed predicate (it counts atoms of every partition), and no box
  ``[n] []`` over one (near the start of the timeline it depends on where the whole stream starts,
  which a partition whose atoms come later does not know);
* no fact of a keyed predicate (a fact holds in every partition, but the atoms it would join with or
  be negated against are in one).

Then a rule instance only uses keyed atoms with one key, so each partition derives exactly the keyed
atoms with its key; atoms derived from facts alone hold in every partition; the output at a time point
is the union of the partitions'.
"""

from __future__ import annotations

from dataclasses import dataclass

from rsp.errors import Position, RspError
from rsp.lars.model import ExtAtom, Op, Program, Rule, Sig, Var


@dataclass(frozen=True)
class AtomKeys:
    """Where the key of a stream atom is: ``positions`` pairs a predicate (name and arity) with the
    argument index of its key; atoms of other predicates are read by no keyed rule."""

    var: str
    positions: tuple[tuple[Sig, int], ...]
    static: tuple[Sig, ...] = ()
    """Predicates with facts: the program's own data, never keyed (a stream atom of one is refused)."""

    def key(self, pred: str, args: tuple) -> str | None:
        """The partition of a stream atom (None: no rule reads it).

        >>> keys = AtomKeys("V", ((Sig("pos", 2), 0),))
        >>> keys.key("pos", ("bus1", 3)), keys.key("pos", ("bus1",))
        ('bus1', None)
        """
        sig = (pred, len(args))
        for known, index in self.positions:
            if known == sig:
                return str(args[index])
        return None

    def is_static(self, pred: str, args: tuple) -> bool:
        """Whether a stream atom belongs to a predicate the program has facts of."""
        return (pred, len(args)) in self.static


def _refuse(program: Program, var: str, reason: str, rule: Rule | None = None) -> RspError:
    position = rule.origin.position if rule is not None and rule.origin.position else Position(program.source)
    return RspError(f"--partition-by {var}: {reason}", position)


def partition_keys(program: Program, variable: str) -> AtomKeys:
    """The keying of ``program``'s stream atoms by ``variable``; raises :class:`rsp.errors.RspError`
    with the reason (at the rule concerned) when the program is not partitionable by it."""
    var = variable.removeprefix("?")
    if not var or not (var[0].isupper() or var[0] == "_") or not var.replace("_", "a").isalnum():
        raise RspError(f"--partition-by {variable}: write a variable of the program's rules, e.g. V")
    rules = program.proper_rules
    intensional = program.intensional_predicates()
    static = {f.head.atom.sig for f in program.facts} - intensional
    stream = {b.atom.sig for r in rules for b in r.body if isinstance(b, ExtAtom)} - intensional - static
    keyed = set(stream)
    changed = True
    while changed:
        changed = False
        for rule in rules:
            if rule.head.atom.sig not in keyed and any(
                isinstance(b, ExtAtom) and b.atom.sig in keyed for b in rule.body
            ):
                keyed.add(rule.head.atom.sig)
                changed = True
    key_var = Var(var)
    positions: dict[Sig, int] = {}

    def place(pred: Sig, args: tuple, rule: Rule, where: str) -> None:
        if key_var not in args:
            raise _refuse(program, var, f"{where} {pred.name}(…) does not use {var}", rule)
        index = args.index(key_var)
        known = positions.setdefault(pred, index)
        if known != index and (known >= len(args) or args[known] != key_var):
            reason = f"{var} is argument {known + 1} of {pred.name} in one rule and {index + 1} in another"
            raise _refuse(program, var, reason, rule)

    for rule in rules:
        atoms = [b for b in rule.body if isinstance(b, ExtAtom) and b.atom.sig in keyed]
        if not atoms:
            continue
        if not any(not b.negated for b in atoms):
            raise _refuse(program, var, "a rule with only negated keyed atoms cannot bind its key", rule)
        for literal in atoms:
            if literal.window is not None and literal.window.tuple_based:
                reason = f"a tuple window over {literal.atom.pred} counts the atoms of every partition"
                raise _refuse(program, var, reason, rule)
            if literal.op is Op.BOX:
                reason = (
                    f"[n] [] {literal.atom.pred} is false in the first time points of the whole stream's "
                    "timeline, which a partition does not know"
                )
                raise _refuse(program, var, reason, rule)
            place(literal.atom.sig, literal.atom.args, rule, "the body atom")
        place(rule.head.atom.sig, rule.head.atom.args, rule, "the head")
    for fact in program.facts:
        if fact.head.atom.sig in keyed:
            raise _refuse(
                program, var, f"the fact {fact.head.atom} is of a keyed predicate: it would hold in every "
                "partition, but the atoms it meets are in one", fact,
            )  # fmt: skip
    if not positions:
        raise _refuse(program, var, "no rule reads the stream")
    keyed_stream = tuple(sorted((p, i) for p, i in positions.items() if p in stream))
    return AtomKeys(var, keyed_stream, tuple(sorted(static)))
