"""The brute-force reference for answer streams of (non-stratified) Plain LARS programs.

Straight from the definition (docs/answer-streams.md): at a time point t, an answer is a set M of pairs
(atom, s) that contains the stream atoms up to t and the background facts, and equals the least set
closed under the reduct of the program's ground rules evaluated at t w.r.t. M (a negated extended atom
``not e`` is true in the reduct iff e does not hold in M). Window semantics (◇, □, @, tuple windows) are
those of the stratified reference, ``lars_naive`` (tests/oracles/lars_naive.py) (its ``_Context`` reads windows over a set of
pairs); nothing here is shared with :mod:`rsp.asp`.

Guess and check: ground the negated extended atoms over an upper bound of every answer (the least set
closed under the rules with every negation assumed true), guess the truth of each, compute the least set
closed under the rules with negations read from the guess, and keep it when it gives every negated
atom the guessed truth. Exponential in the number of ground negated atoms: small programs only.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from lars_naive import _Context, _finish, _head_pair, _time_point

from rsp.io.atoms import AtomStream
from rsp.lars.model import CONSTRAINT_PRED, Atom, ExtAtom, Program, Rule, Var, format_atom

MAX_GUESSES = 14
"""At most 2**14 guesses per time point: a case with more ground negated atoms is too big."""


class TooBig(Exception):
    """The case has too many ground negated atoms for guess and check."""


def _ground(ext: ExtAtom, sub: dict) -> ExtAtom:
    args = tuple(sub[a.name] if isinstance(a, Var) else a for a in ext.atom.args)
    time = sub[ext.time.name] if isinstance(ext.time, Var) else ext.time
    return ExtAtom(Atom(ext.atom.pred, args), ext.op, ext.window, time, False)


def _holds(ctx: _Context, ext: ExtAtom) -> bool:
    return next(ctx.matches(ext, {}), None) is not None


class _Reduct:
    """The rules evaluated at t, with negated atoms read from a guess (or all assumed true)."""

    def __init__(self, rules: list[Rule], guess: dict[ExtAtom, bool] | None) -> None:
        self.rules = rules
        self.guess = guess
        self.negated: set[ExtAtom] = set()  # ground negated atoms met (when guess is None)

    def substitutions(self, rule: Rule, ctx: _Context) -> Iterator[dict]:
        subs: list[dict] = [{}]
        for ext in rule.positive_atoms():
            subs = [new for sub in subs for new in ctx.matches(ext, sub)]
        positive_only = Rule(rule.head, tuple(b for b in rule.body if not getattr(b, "negated", False)))
        for sub in subs:
            done = _finish(positive_only, sub, ctx)  # comparisons, assignments and guards only
            if done is None:
                continue
            ok = True
            for ext in rule.negative_atoms():
                ground = _ground(ext, done)
                if self.guess is None:
                    self.negated.add(ground)
                elif self.guess[ground]:  # e holds: `not e` is false
                    ok = False
            if ok:
                yield done

    def closure(self, ctx: _Context) -> None:
        changed = True
        while changed:
            changed = False
            for rule in self.rules:
                for sub in list(self.substitutions(rule, ctx)):
                    pair = _head_pair(rule, sub, ctx)
                    if pair is not None and pair not in ctx.pairs:
                        ctx.pairs.add(pair)
                        changed = True


def answers_at(program: Program, stream: AtomStream, t: int) -> list[set[tuple[tuple, int]]]:
    """Every answer (a set of (atom, s) pairs) of ``program`` at time point ``t``."""
    facts = []
    for rule in program.facts:
        atom, time = rule.head.atom, rule.head.time
        if time is None:
            facts.append(((atom.pred, atom.args), None))
        elif _time_point(time) is not None:  # "@c p." with c not a time point holds nowhere
            facts.append(((atom.pred, atom.args), _time_point(time)))
    rules = program.proper_rules
    assert stream.start is not None
    upper = _Context(stream.start, t, stream.elements, facts)
    base = set(upper.pairs)
    assume_all = _Reduct(rules, None)
    assume_all.closure(upper)
    negated = sorted(assume_all.negated, key=str)
    if len(negated) > MAX_GUESSES:
        raise TooBig(f"{len(negated)} ground negated atoms at t={t}")
    found: list[set] = []
    for values in itertools.product((False, True), repeat=len(negated)):
        guess = dict(zip(negated, values, strict=True))
        ctx = _Context(stream.start, t, stream.elements, facts)
        ctx.pairs = set(base)
        _Reduct(rules, guess).closure(ctx)
        if all(_holds(ctx, ext) == value for ext, value in guess.items()) and ctx.pairs not in found:
            found.append(ctx.pairs)
    return found


def answers(program: Program, stream: AtomStream) -> list[tuple[int, list[set[tuple[tuple, int]]]]]:
    """For every t of the timeline, every answer at t (sets of (atom, s) pairs)."""
    if stream.start is None or stream.end is None:
        return []
    return [(t, answers_at(program, stream, t)) for t in range(stream.start, stream.end + 1)]


def _intensional(program: Program) -> set:
    return {sig for sig in program.intensional_predicates() if sig.name != CONSTRAINT_PRED}


def output(answer: set, t: int, intensional: set) -> list[str]:
    """An answer's model as printed: the intensional atoms holding at t, sorted."""
    return sorted(
        format_atom(pred, args)
        for (pred, args), s in answer
        if s == t and any(sig.name == pred and sig.arity == len(args) for sig in intensional)
    )


def answer_streams(program: Program, stream: AtomStream) -> list[tuple[int, list[list[str]]]]:
    """For every t of the timeline, the distinct models: sorted lists of the intensional atoms holding at
    t (the answer's output), the list of models sorted."""
    intensional = _intensional(program)
    return [
        (t, sorted(list(m) for m in {tuple(output(pairs, t, intensional)) for pairs in found}))
        for t, found in answers(program, stream)
    ]


# -- inertia (docs/answer-streams.md) -----------------------------------------------------------------


def _labels(answer: set, t: int, now: int, intensional: set) -> frozenset:
    """The labels inertia reads in an answer at ``t``, as the nodes that are in: ``("now", atom)`` for
    each intensional atom holding at t, ``("at", atom, s)`` for each pair at a time point s < ``now`` (the
    next answer's past)."""
    names = {(sig.name, sig.arity) for sig in intensional}
    nodes = {("now", atom) for atom, s in answer if s == t and (atom[0], len(atom[1])) in names}
    nodes |= {("at", atom, s) for atom, s in answer if s is not None and s < now}
    return frozenset(nodes)


def keepers(previous: set, found: list[set], t: int, intensional: set) -> list[set]:
    """The answers at ``t`` that keep ``previous`` (the answer chosen at t - 1): whose labels differ from
    the previous ones only where every answer at t differs (a forced change). Inertia: when this list is
    not empty, the answer chosen at t is one of them."""
    before = _labels(previous, t - 1, t, intensional)
    changes = [_labels(answer, t, t, intensional) ^ before for answer in found]
    forced = frozenset.intersection(*changes) if changes else frozenset()
    return [answer for answer, change in zip(found, changes, strict=True) if change == forced]


def inertia_violation(
    program: Program,
    stream: AtomStream,
    printed: list[tuple[int, list[str]]],
    found_at: list[tuple[int, list[set]]] | None = None,
) -> str | None:
    """None if the models ``printed`` (one per time point, from the timeline's start) can come from
    answers chosen by inertia, else where and why not.

    The printed models do not show the whole answer chosen (its past time points), so every answer
    consistent with what was printed so far is followed: at t, the candidates are the answers at t with
    the printed output that keep some candidate of t - 1, or that follow one no answer keeps.
    ``found_at``: :func:`answers` of the program and stream, if already computed."""
    intensional = _intensional(program)
    candidates: list[set] | None = None
    for (t, found), (pt, model) in zip(found_at or answers(program, stream), printed, strict=False):
        assert t == pt, (t, pt)
        chosen = [a for a in found if output(a, t, intensional) == model]
        if not chosen:
            return f"t={t}: {model} is not a model (models: {[output(a, t, intensional) for a in found]})"
        if candidates is not None:
            allowed: list[set] = []
            for previous in candidates:
                keep = keepers(previous, found, t, intensional)
                allowed += [a for a in chosen if not keep or a in keep]
            if not allowed:
                best = [
                    output(a, t, intensional) for p in candidates for a in keepers(p, found, t, intensional)
                ]
                return f"t={t}: printed {model}, but inertia keeps the previous answer with {best}"
            chosen = allowed
        unique: list[set] = []
        for answer in chosen:
            if answer not in unique:
                unique.append(answer)
        candidates = unique
    return None
