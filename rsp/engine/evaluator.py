"""The incremental LARS evaluator: feeds stream atoms into annotated formula tables, evaluates the
compiled rule plans stratum by stratum with semi-naive deltas, expires what passed its horizon, and
answers what holds at each time point (docs/lars-semantics.md is the contract)."""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from rsp.engine.plan import Literal, RulePlan, compile_rule
from rsp.engine.relevance import relevance
from rsp.engine.signatures import group_by_sig, program_sigs
from rsp.engine.store import NEVER, ExpiryQueue, FactTable, RunTracker, Table
from rsp.errors import StreamError
from rsp.io.atoms import AtomStream
from rsp.lars.model import Constant, ExtAtom, Op, Rule, Sig, Var

FormulaKey = tuple[Sig, Op, int | None, bool]
"""(predicate with its arity, operator, window size or None, tuple-based)."""


def formula_key(lit: ExtAtom) -> FormulaKey:
    """Normalise an extended atom to the formula table it reads (``[n] p`` is plain ``p``)."""
    window = lit.window
    sig = lit.atom.sig
    if window is not None and window.tuple_based:
        return (sig, lit.op, window.size, True)
    if lit.op is Op.PLAIN:
        return (sig, Op.PLAIN, None, False)
    return (sig, lit.op, None if window is None else window.size, False)


def formula_pattern(lit: ExtAtom) -> tuple[Var | Constant, ...]:
    """The terms at each key position of the formula table: the arguments, then T for ``@T``."""
    if lit.op is Op.AT:
        return (*lit.atom.args, lit.time)
    return lit.atom.args


def _guards(plan: RulePlan) -> list[tuple[dict, tuple]]:
    """For each positive body atom with constants (``g(S, owl:sameAs, S2)``) whose table already has
    an index on exactly those positions: (that index, the constants). While one of them has no entry,
    no fact matches that atom, so the rule derives nothing: OWL 2 RL's ``eq-rep-*`` rules cost one
    lookup per step while no owl:sameAs holds. (No index is created for this: it would cost per fact.)"""
    guards = []
    for lit in plan.positives:
        positions = tuple(i for i, term in enumerate(lit.pattern) if not isinstance(term, Var))
        index = lit.table.indexes.get(positions) if positions else None
        if index is not None:
            guards.append((index, tuple(lit.pattern[i] for i in positions)))
    return guards


def _first_constant(pattern: tuple) -> tuple[int, object] | None:
    """(position, value) of the first constant of a body atom's key pattern, or None."""
    for j, term in enumerate(pattern):
        if not isinstance(term, Var):
            return j, term
    return None


_NONE_NEW: frozenset = frozenset()


def _round_new(news: dict, table: Table, start: dict, end: dict) -> frozenset:
    """The keys of ``table``'s delta in this round (``start`` to ``end``), as a set made once per round.
    Semi-naive evaluation without repeats: the variant of the i-th atom skips, at the atoms before it,
    the facts new in the round, so a derivation with several new premises is made once, by the variant
    of its first new one (CityBench's C-SPARQL Q9 made each of its rows up to eight times per instant)."""
    found = news.get(table)
    if found is None:
        s, e = start[table], end[table]
        found = frozenset(table.delta[s:e]) if e > s else _NONE_NEW
        news[table] = found
    return found


def _delta_view(delta: list[tuple], constant: tuple[int, object] | None) -> list[tuple]:
    """The keys of a round's delta that can match an atom with this first constant: the variants of
    every rule with the same constant there (OWL 2 RL's rules over one triple table: ``rdf:type``,
    ``ex:isIn`` …) share one pass over the delta instead of each skipping the others' keys."""
    if constant is None:
        return delta
    j, value = constant
    return [key for key in delta if key[j] == value]


@dataclass
class PerTimeFormula:
    """A □ or tuple-window formula: recomputed at every time point it is needed (horizon t)."""

    key: FormulaKey
    table: Table
    computed_at: int | None = None
    off_until: int = -(1 << 62)


@dataclass
class StratumPlan:
    predicates: frozenset[Sig]
    recursive: bool
    plans: list[RulePlan] = field(default_factory=list)
    per_time: list[PerTimeFormula] = field(default_factory=list)
    own_boxes: list[PerTimeFormula] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    awake: list[RulePlan] = field(default_factory=list)
    """The plans evaluated: all of them, less those asleep."""
    asleep: list[RulePlan] = field(default_factory=list)
    """Plans that matter to no predicate read from outside while no waker can fire (see
    :meth:`Engine._sleep_unneeded`)."""


class Engine:
    """Evaluates a checked LARS program over a stream, one time point at a time.

    >>> from rsp.lars import parse
    >>> engine = Engine(parse("q(X) :- [2] <> p(X)."))
    >>> engine.step(0, [("p", ("a",))]); sorted(engine.output())
    [('q', ('a',))]
    >>> engine.step(3, []); sorted(engine.output())
    []

    ``hidden`` names predicates whose facts only the program's rules read (a query's window graph
    ``g``): rules that derive nothing another predicate needs sleep (see :meth:`_sleep_unneeded`), so
    :meth:`output` and :meth:`holding` may miss facts of hidden predicates, never of the others.
    """

    def __init__(self, program, *, impossible: bool = True, hidden: Iterable[str] = ()) -> None:
        self.checked = program
        self.impossible = impossible
        self.queue = ExpiryQueue()
        self.t: int | None = None
        self.t1: int | None = None
        self.late = 0
        prog = program.program
        self.intensional = frozenset(program.intensional)
        self.at_head_preds = {r.head.atom.sig for r in prog.proper_rules if r.head.time is not None}
        # every table below is keyed by predicate (name and arity: a Sig or an equal plain tuple)
        self.background: dict[Sig, set[tuple]] = {}
        self.timed: dict[Sig, list[tuple[int, tuple]]] = {}
        self._pending: list[tuple[int, int, Sig, tuple, int]] = []
        self._seq = itertools.count()
        for fact in prog.facts:
            pred, args = fact.head.atom.sig, fact.head.atom.args
            if fact.head.time is None:
                self.background.setdefault(pred, set()).add(args)
            else:
                self._pending.append((fact.head.time, next(self._seq), pred, args, NEVER))
                self.timed.setdefault(pred, []).append((fact.head.time, args))
        for pred, rows in prog.data:
            self.background.setdefault(pred, set()).update(rows)
        heapq.heapify(self._pending)
        self._timed_facts = {item[1] for item in self._pending}

        self.tables: dict[FormulaKey, Table] = {}
        self.readers: dict[Sig, list[tuple[Op, int | None, Table]]] = {}
        self.per_time: dict[FormulaKey, PerTimeFormula] = {}
        self.facts: dict[Sig, FactTable] = {p: FactTable(p, self.queue) for p in self.intensional}
        self.runs: dict[Sig, RunTracker] = {}
        self.reach: dict[Sig, int] = {}
        self.recent: deque = deque(maxlen=1)
        self.stream_count = 0
        self.stream_preds: set[Sig] = set()
        self._off_preds: dict[Sig, int] = {}
        self._rules_of: dict[Sig, list[RulePlan]] = {}
        self._shared_cells: dict[Sig, list] = {}
        self._at_readers_now: dict[Sig, list[tuple[int | None, Table]]] = {}
        self._program_sigs = program_sigs(prog)
        self._program_names = {sig[0] for sig in self._program_sigs}
        self.other_arity: dict[Sig, int] = {}
        """Stream atoms whose name the program uses, but only with other arities, counted per
        predicate: no rule reads them (``p(a)`` is not ``p/2``), which is most likely a mistake."""
        tuple_sizes = [0]
        self.strata: list[StratumPlan] = []
        for stratum in program.strata:
            sp = StratumPlan(stratum.predicates, stratum.recursive)
            for rule in stratum.rules:
                sp.plans.append(self._compile(rule, sp, tuple_sizes))
            self.strata.append(sp)
        self.recent = deque(maxlen=max(tuple_sizes))
        self.all_tables = list(self.tables.values())
        self._logged: list[FactTable] = []  # fact tables whose insertions are logged (log_insertions)
        self.aliases: dict[str, Table] = {}
        for sp in self.strata:
            for plan in list(sp.plans):
                if self._alias(plan):
                    sp.plans.remove(plan)
            for plan in sp.plans:
                plan.guards = _guards(plan)
                plan.filters = [_first_constant(lit.pattern) for lit in plan.positives]
                plan.wakes = False
            sp.awake = sp.plans
        self._sleep_unneeded(frozenset(hidden))
        self._sleep_guarded_indexes()
        self.shared: set[Sig] = set()
        """Intensional predicates whose ``now`` facts are their plain formula table (see :meth:`_share`)."""
        for pred in self.facts:
            self._share(pred)

    def _alias(self, plan: RulePlan) -> bool:
        """A predicate defined only by ``q(X…) :- F(X…)`` (one body formula, same distinct variables in
        the same order, no other condition) and read by no rule holds exactly the formula's instances
        with their horizons: let q's facts *be* the formula table instead of copying every instance."""
        rule = plan.rule
        head = rule.head
        if head.time is not None or len(plan.positives) != 1 or plan.negatives or rule.comparisons():
            return False
        if rule.guards():
            return False
        literal = plan.positives[0]
        if literal.pattern != head.atom.args or len(set(literal.pattern)) != len(literal.pattern):
            return False
        if not all(isinstance(term, Var) for term in literal.pattern):
            return False
        pred = head.atom.sig
        if len(self._rules_of[pred]) != 1 or pred in self.background or self.readers.get(pred):
            return False
        if any(key[0] == pred for key in self.tables) or literal.table in self._at_tables():
            return False
        self.facts[pred].now = literal.table.entries
        self.aliases[pred] = literal.table
        return True

    def _sleep_unneeded(self, hidden: frozenset[str]) -> None:
        """Rules with a hidden head predicate that matter to no other predicate while no *waker* can
        fire (:func:`rsp.engine.relevance.relevance`: OWL 2 RL's ``prp-dom``/``cax-sco`` under a query
        that reads no ``rdf:type``, while ``eq-rep-*`` find no ``owl:sameAs``) sleep: they cost nothing
        per step. When the guards of a waker of their stratum first hold (:meth:`_evaluate`), they wake
        and are evaluated once over all the facts (:meth:`_wake`), then semi-naively as any rule: the
        facts they would have derived by then are exactly those, with their horizons, since a fact's
        horizon is the largest over its derivations from facts that still hold. A waker that no guard
        can switch off (a rule reading every fact of ``g`` unconditionally), or wakers in two strata (a
        query pattern ``?s ?p ?o`` beside OWL 2 RL's ``eq-rep-*``), leave every rule awake."""
        if not hidden:
            return
        plan_of = {id(plan.rule): (sp, plan) for sp in self.strata for plan in sp.plans}
        sleeping, wakers = relevance(self.checked.program.proper_rules, hidden)
        waking: set[int] = set()  # strata (by id) that have a waker
        for rule in wakers:
            found = plan_of.get(id(rule))
            if found is None or not found[1].guards:
                return
            waking.add(id(found[0]))
        if len(waking) > 1:  # a waker outside the stratum would come too late to wake its sleepers
            return
        for rule in wakers:
            plan_of[id(rule)][1].wakes = True
        for rule in sleeping:
            found = plan_of.get(id(rule))
            if found is not None and (not wakers or id(found[0]) in waking):
                found[0].asleep.append(found[1])
        for sp in self.strata:
            if sp.asleep:
                asleep = {id(plan) for plan in sp.asleep}
                sp.awake = [plan for plan in sp.plans if id(plan) not in asleep]

    def _wake(self, sp: StratumPlan, t: int) -> None:
        """A waker of the stratum can fire: its sleeping plans are evaluated once over all the facts
        (their derivations until now), then stay awake."""
        asleep, sp.asleep, sp.awake = sp.asleep, [], sp.plans
        for plan in asleep:
            for table, positions in plan.sleeping:
                table.wake(positions)
            plan.sleeping = []
            plan.full(None, t)

    def _sleep_guarded_indexes(self) -> None:
        """Indexes that only guarded rules probe (OWL 2 RL's ``eq-rep-*`` reading a triple table by
        subject, property or object) are not kept while the guards fail: each plan wakes its own
        before its first variant runs (:meth:`_evaluate`). Indexes a guard reads stay awake."""
        plans = [plan for sp in self.strata for plan in sp.plans]
        guard_indexes = {id(index) for plan in plans for index, _consts in plan.guards}
        asleep = {id(plan) for sp in self.strata for plan in sp.asleep}  # wake their own (see _wake)
        users: dict[tuple, list[RulePlan]] = {}
        for plan in plans:
            plan.sleeping = []
            for table, positions in plan.indexes:
                users.setdefault((table, positions), []).append(plan)
        for (table, positions), readers in users.items():
            if id(table.indexes[positions]) in guard_indexes:
                continue
            if all(id(plan) in asleep or (plan.guards and not plan.volatile) for plan in readers):
                table.sleep(positions)
                for plan in readers:
                    plan.sleeping.append((table, positions))

    def _share(self, pred: Sig) -> None:
        """A predicate read only plainly (``p(X…)`` in bodies, no window) and derived by no ``@T`` head:
        its facts that hold now are exactly its plain formula table's entries with their horizons, so
        the two are one dict, filled once per derivation and expired once. (Stream atoms and ``@c``
        facts of the predicate go to the table with horizon t and to the fixed facts at t: the atoms
        holding at t, and every count, stay the same.)"""
        readers = self.readers.get(pred)
        if pred in self.aliases or pred in self.at_head_preds or not readers or len(readers) != 1:
            return
        op, _size, table = readers[0]
        if op is not Op.PLAIN:
            return
        self.facts[pred].now = table.entries
        self.aliases[pred] = table
        self.shared.add(pred)
        self._shared_cells[pred][0] = table

    def _at_tables(self) -> set[Table]:
        return {table for key, table in self.tables.items() if key[1] is Op.AT}

    # -- compilation -------------------------------------------------------------------------------
    def _table(self, lit: ExtAtom, tuple_sizes: list[int]) -> tuple[Table, PerTimeFormula | None]:
        key = formula_key(lit)
        table = self.tables.get(key)
        pred, op, size, tuple_based = key
        if table is None:
            table = self.tables[key] = Table(f"{lit}", self.queue)
            if tuple_based or op is Op.BOX:
                self.per_time[key] = PerTimeFormula(key, table)
                if tuple_based:
                    tuple_sizes.append(size)
                elif pred not in self.intensional:
                    self.runs.setdefault(pred, RunTracker(self.queue))
            else:
                self.readers.setdefault(pred, []).append((op, size, table))
                if op is Op.AT:
                    self._at_readers_now.setdefault(pred, []).append((size, table))
            reach = 0 if op is Op.PLAIN else (NEVER if size is None else size)
            self.reach[pred] = max(self.reach.get(pred, 0), reach)
        return table, self.per_time.get(key)

    def _compile(self, rule: Rule, sp: StratumPlan, tuple_sizes: list[int]) -> RulePlan:
        positives, negatives = [], []
        boxes, plain_preds = [], []
        for lit in rule.body:
            if not isinstance(lit, ExtAtom):
                continue
            table, per_time = self._table(lit, tuple_sizes)
            own = lit.atom.sig in sp.predicates
            literal = Literal(table, formula_pattern(lit), own)
            (negatives if lit.negated else positives).append(literal)
            if table not in sp.tables:
                sp.tables.append(table)
            if per_time is not None and per_time not in sp.per_time:
                sp.per_time.append(per_time)
                if own and lit.op is Op.BOX:
                    sp.own_boxes.append(per_time)
            if not lit.negated:
                if lit.op is Op.BOX and not per_time.key[3]:
                    boxes.append(per_time)
                elif lit.op is Op.PLAIN and lit.atom.sig in self.intensional and not own:
                    plain_preds.append(lit.atom.sig)
        head = rule.head.atom.sig
        facts = self.facts[head]
        plan = compile_rule(
            f"r{id(rule)}",
            rule,
            positives,
            negatives,
            self._emitter(head, facts),
            self._at_emitter(head, facts),
            NEVER,
        )
        plan.boxes = boxes
        plan.plain_preds = plain_preds
        self._rules_of.setdefault(head, []).append(plan)
        return plan

    def _emitter(self, pred: Sig, facts: FactTable):
        readers = self.readers.setdefault(pred, [])
        shared = self._shared_cells.setdefault(pred, [None])  # the plain table, once _share decides

        def emit(derived: list[tuple[tuple, int]]) -> None:
            if shared[0] is not None:
                shared[0].update_pairs(derived)
                return
            grown = facts.add_now_many(derived, bool(readers))
            if grown and readers:
                t = self.t
                for op, _size, table in readers:
                    if op is Op.AT:
                        table.update_many([(*args, t) for args, _h in grown], t)
                    else:
                        table.update_pairs(grown)

        return emit

    def _at_emitter(self, pred: Sig, facts: FactTable):
        def emit_at(derived: list[tuple[tuple, object, int]]) -> None:
            t, t1 = self.t, self.t1
            for args, time, horizon in derived:
                if type(time) is not int:
                    if type(time) is float and time.is_integer():
                        time = int(time)
                    else:
                        continue
                if time < t1:
                    continue
                if time > t:
                    if horizon >= time:
                        heapq.heappush(self._pending, (time, next(self._seq), pred, args, horizon))
                    continue
                if facts.add_fixed(args, time, horizon):
                    self._feed_fixed(pred, args, time, horizon)

        return emit_at

    # -- feeding facts into formula tables ----------------------------------------------------------
    def _feed_now(self, pred: Sig, args: tuple, horizon: int) -> None:
        t = self.t
        for op, _size, table in self.readers.get(pred, ()):
            if op is Op.AT:
                table.update((*args, t), t)
            else:
                table.update(args, horizon)

    def _feed_fixed(self, pred: Sig, args: tuple, time: int, horizon: int) -> None:
        t = self.t
        for op, size, table in self.readers.get(pred, ()):
            if op is Op.PLAIN:
                if time == t:
                    table.update(args, t)
                continue
            valid = horizon if size is None or time + size > horizon else time + size
            if valid >= t:
                table.update((*args, time) if op is Op.AT else args, valid)

    @property
    def needs_arrival_order(self) -> bool:
        """Whether the program counts stream atoms across predicates (tuple windows): then
        :meth:`step` must be given a time point's atoms as a list in arrival order, not grouped."""
        return bool(self.recent.maxlen)

    def _add_stream_atoms(self, atoms: list[tuple[str, tuple]], counted: bool = True) -> None:
        """Add the stream atoms (name, args) of the current time point (in arrival order) to every table."""
        if counted and self.recent.maxlen:
            t = self.t
            self.recent.extend([(t, (pred, len(args)), args) for pred, args in atoms])
        groups: dict[Sig, list[tuple]] = {}
        for pred, args in atoms:
            sig = (pred, len(args))
            rows = groups.get(sig)
            if rows is None:
                groups[sig] = [args]
            else:
                rows.append(args)
        self._add_stream_groups(groups, counted)

    def _add_stream_groups(self, groups: dict[Sig, list[tuple]], counted: bool = True) -> None:
        """Add the stream atoms of the current time point, given per predicate (name and arity), to
        every table."""
        t = self.t
        if counted:
            self.stream_count += sum(map(len, groups.values()))
        for pred, rows in groups.items():
            if pred not in self._program_sigs and pred[0] in self._program_names:
                self.other_arity[pred] = self.other_arity.get(pred, 0) + len(rows)
            self.stream_preds.add(pred)
            tracker = self.runs.get(pred)
            if tracker is not None:
                for args in rows:
                    tracker.add(args, t)
            facts = self.facts.get(pred)
            if facts is not None:
                reach = self.reach.get(pred, 0)
                for args in rows:
                    facts.add_fixed(args, t, NEVER if reach >= NEVER else t + reach)
            for op, size, table in self.readers.get(pred, ()):
                if op is Op.PLAIN:
                    table.update_many(rows, t)
                elif op is Op.AT:
                    table.update_many([(*args, t) for args in rows], NEVER if size is None else t + size)
                else:
                    table.update_many(rows, t + size)

    # -- time --------------------------------------------------------------------------------------
    def step(self, t: int, atoms: Iterable[tuple[str, tuple]] | dict[str, list[tuple]] = ()) -> None:
        """Advance the clock to ``t`` (later than the last step), add the stream atoms at ``t`` in
        arrival order, and evaluate the program at ``t``.

        ``atoms`` are (pred, args) pairs in arrival order, or a dict ``{pred: [args, ...]}`` (arrival
        order per predicate; cheaper to build, see ``iter_batches(grouped=True)``), which is exact
        unless :attr:`needs_arrival_order`. An atom belongs to the predicate of its name *and* arity:
        ``p(a)`` is read only by body atoms ``p(X)``, never by ``p`` or ``p(X,Y)``.
        """
        if self.t is not None and t <= self.t:
            raise StreamError(f"time {t} is not after the last evaluated time {self.t}")
        first = self.t1 is None
        if first:
            self.t1 = t
        self.t = t
        self.queue.expire_before(t)
        for table in self.all_tables:
            if table.delta:
                table.delta.clear()
        for facts in self._logged:
            facts.fresh.clear()
        if first:
            for pred, rows in self.background.items():
                facts = self.facts.get(pred)
                for args in rows:
                    if facts is not None and pred not in self.shared:
                        facts.add_now(args, NEVER)
                    self._feed_now(pred, args, NEVER)
        self._reinject_at(t)
        pending = self._pending
        while pending and pending[0][0] <= t:
            time, seq, pred, args, horizon = heapq.heappop(pending)
            if time < self.t1:
                continue
            if seq in self._timed_facts:
                if time == t:
                    self._add_stream_groups({pred: [args]}, counted=False)
            elif horizon >= t:
                self.facts[pred].add_fixed(args, time, horizon)
                self._feed_fixed(pred, args, time, horizon)
        if isinstance(atoms, dict):
            groups = group_by_sig(atoms)
            if self.recent.maxlen:
                self.recent.extend([(t, sig, args) for sig, rows in groups.items() for args in rows])
            self._add_stream_groups(groups)
        elif atoms:
            self._add_stream_atoms(atoms if isinstance(atoms, list) else list(atoms))
        for sp in self.strata:
            self._evaluate(sp, t)

    def _reinject_at(self, t: int) -> None:
        """``@T`` readers see atoms that hold at the evaluation time (plain-head facts, background
        facts) at T = t: give them that instance at every time point."""
        for pred, readers in self._at_readers_now.items():
            facts = self.facts.get(pred)
            background = self.background.get(pred, ())
            for size, table in readers:
                for args in background:
                    table.update((*args, t), NEVER if size is None else t + size)
                if facts is not None:
                    for args in facts.now:
                        if args not in background:
                            table.update((*args, t), t)

    # -- per-time formulas (□ and tuple windows) -----------------------------------------------------
    def _compute(self, formula: PerTimeFormula, t: int, again: bool = False, final: bool = True) -> None:
        """Fill the table of a □ or tuple-window formula at t. ``final`` says whether the facts of its
        predicate at t are complete (its stratum is done): only then may an empty predicate switch the
        formula off for the next time points (impossible derivations, see :meth:`_switch_off`)."""
        if formula.computed_at == t and not again:
            return
        formula.computed_at = t
        pred, op, size, tuple_based = formula.key
        if tuple_based:
            self._compute_tuple(formula, pred, op, size, t)
            return
        if self.impossible and formula.off_until >= t:
            return
        table = formula.table
        lo = max(self.t1, t - size)
        background = self.background.get(pred, ())
        found = bool(background)
        for args in background:
            table.update(args, t)
        tracker = self.runs.get(pred)
        if tracker is not None:
            start = tracker.start
            for args in tracker.current(t):
                found = True
                if start[args] <= lo:
                    table.update(args, t)
        else:
            facts = self.facts[pred]
            for args in facts.at_current(t):
                found = True
                if all(facts.holds_at(args, s) for s in range(lo, t)):
                    table.update(args, t)
        if not found and final:
            self._switch_off(formula, t)

    def _switch_off(self, formula: PerTimeFormula, t: int) -> None:
        """The predicate of ``[n] [] p`` has no atom at t (and its atoms at t are final): the box fails
        at t..t+n, so rules that need it are off until then. Not for predicates that ``@T`` heads
        derive, which can place atoms at t later."""
        if formula.key[0] not in self.at_head_preds:
            formula.off_until = t + formula.key[2]

    def _holds_some(self, pred: Sig, t: int) -> bool:
        """Whether some atom of ``pred`` holds at t (background, stream or derived)."""
        if self.background.get(pred):
            return True
        tracker = self.runs.get(pred)
        if tracker is not None:
            return bool(tracker.current(t))
        facts = self.facts.get(pred)
        return facts is not None and bool(facts.now or t in facts.by_time)

    def _compute_tuple(self, formula: PerTimeFormula, pred: Sig, op: Op, size: int, t: int) -> None:
        table = formula.table
        recent = self.recent
        window = list(recent)[-size:] if size else []
        start = window[0][0] if size and self.stream_count >= size else self.t1
        background = self.background.get(pred, ())
        # facts placed at a time point (@c p.) are visible in the window when c lies in its range
        timed = [(c, pred, args) for c, args in self.timed.get(pred, ()) if start <= c <= t]
        if timed:
            window = window + timed
        if op is Op.BOX:
            times: dict[tuple, set[int]] = {}
            for time, p, args in window:
                if p == pred:
                    times.setdefault(args, set()).add(time)
            span = t - start + 1
            for args, seen in times.items():
                if len(seen) == span:
                    table.update(args, t)
            for args in background:
                table.update(args, t)
            return
        for time, p, args in window:
            if p != pred:
                continue
            if op is Op.DIAMOND:
                table.update(args, t)
            elif op is Op.AT:
                table.update((*args, time), t)
            elif time == t:
                table.update(args, t)
        for args in background:
            if op is Op.AT:
                for s in range(start, t + 1):
                    table.update((*args, s), t)
            else:
                table.update(args, t)

    # -- strata ------------------------------------------------------------------------------------
    def _rule_off(self, plan: RulePlan, t: int) -> bool:
        for formula in plan.boxes:
            if formula.off_until >= t:
                return True
        for pred in plan.plain_preds:
            if self._off_preds.get(pred) == t:
                return True
        return False

    def _evaluate(self, sp: StratumPlan, t: int) -> None:
        own = sp.own_boxes
        for formula in sp.per_time:
            # a box over the stratum's own predicate is computed again as the fixpoint grows: whether
            # its predicate is empty at t is known only at the end (see _finish_own_boxes)
            self._compute(formula, t, final=formula not in own)
        plans = sp.awake
        if self.impossible:
            plans = [p for p in plans if not self._rule_off(p, t)]
            if not plans and not sp.asleep:
                for pred in sp.predicates:
                    facts = self.facts[pred]
                    if (
                        not facts.now
                        and t not in facts.by_time
                        and pred not in self.stream_preds
                        and pred not in self.background
                    ):
                        self._off_preds[pred] = t
                return
        start = {table: 0 for table in sp.tables}
        first = True
        woke = False
        while True:
            end = {table: len(table.delta) for table in start}
            views: dict[tuple, list] = {}  # (table, first constant of the atom) -> this round's delta
            news: dict[Table, frozenset] = {}  # table -> the keys of this round's delta, as a set
            for plan in plans:
                if plan.wakes and sp.asleep and all(consts in index for index, consts in plan.guards):
                    self._wake(sp, t)  # before a volatile waker's first full evaluation too
                    woke = True
                if first and plan.volatile:
                    plan.full(None, t)
                    continue
                if plan.guards and not all(consts in index for index, consts in plan.guards):
                    continue  # a body atom with constants has no fact: no variant can derive anything
                if plan.sleeping:
                    for table, positions in plan.sleeping:
                        table.wake(positions)
                    plan.sleeping = []
                for i, lit in enumerate(plan.positives):
                    table = lit.table
                    s, e = start[table], end[table]
                    if e > s:
                        view = views.get((table, plan.filters[i]))
                        if view is None:
                            view = _delta_view(table.delta[s:e], plan.filters[i])
                            views[(table, plan.filters[i])] = view
                        if view:
                            if i:  # the atoms before the i-th read no fact new in this round
                                new = tuple(_round_new(news, p.table, start, end) for p in plan.positives[:i])
                                plan.variants[i](view, t, new)
                            else:
                                plan.variants[i](view, t)
            start = end
            first = False
            if woke:  # the woken plans take part from the next round on
                woke = False
                plans = [p for p in sp.awake if not (self.impossible and self._rule_off(p, t))]
            if not sp.recursive:
                return
            for formula in own:
                self._compute(formula, t, again=True, final=False)
            if all(len(table.delta) == start[table] for table in start):
                break
        if self.impossible:
            self._finish_own_boxes(own, t)

    def _finish_own_boxes(self, own: list[PerTimeFormula], t: int) -> None:
        """At the stratum's fixpoint the atoms of its predicates at t are final: a box over one that
        has none at t switches off (an earlier decision would miss atoms the fixpoint derives later)."""
        for formula in own:
            if not self._holds_some(formula.key[0], t):
                self._switch_off(formula, t)

    # -- answers -----------------------------------------------------------------------------------
    def output(self) -> Iterator[tuple[str, tuple]]:
        """The intensional atoms ``(name, args)`` that hold at the current time point."""
        t = self.t
        for pred in sorted(self.intensional):
            name = pred[0]
            for args in self.facts[pred].at_current(t):
                yield name, args

    def log_insertions(self, pred: Sig) -> list[tuple]:
        """The args stored as new among the facts of ``pred`` (intensional) during the current time
        point, in order, possibly with repeats; emptied when time advances, like a table's delta."""
        table = self.aliases.get(pred)
        if table is not None:  # the facts are this formula table, which logs them already
            return table.delta
        facts = self.facts[pred]
        if facts.fresh is None:
            facts.fresh = []
            self._logged.append(facts)
        return facts.fresh

    def holding(self, name: str, arity: int) -> set[tuple]:
        """The arguments of the atoms of ``name/arity`` that hold now (intensional predicates only)."""
        facts = self.facts.get((name, arity))
        return facts.at_current(self.t) if facts is not None else set()

    def explain(self, pred: str, args: tuple, time: int | None = None):
        r"""The derivation of ``pred(args)`` at ``time`` (default: now) in the current answer, or None.

        >>> from rsp.lars import parse
        >>> engine = Engine(parse("i(X) :- [2] <> p(X).\nh(X) :- i(X)."))
        >>> engine.step(0, [("p", ("a",))]); engine.step(1)
        >>> print(engine.explain("h", ("a",)))
        h(a) @ 1  by h(X) :- i(X).  (<string>:2:1)
          i(a) @ 1
            i(a) @ 1  by i(X) :- [2] <> p(X).  (<string>:1:1)
              [2] <> p(a) @ 0
        """
        from rsp.engine.explain import Explainer

        return Explainer(self).explain(pred, tuple(args), time)

    def count(self) -> int:
        """How many intensional atoms hold at the current time point."""
        t = self.t
        return sum(facts.count_at(t) for facts in self.facts.values())

    def run(self, stream: AtomStream, on_late=None) -> Iterator[int]:
        """Evaluate every time point of the stream's timeline, yielding each after its evaluation.

        Elements older than the time point being read are late: counted in :attr:`late`, passed to
        ``on_late`` and dropped.
        """

        def late(time: int, pred: str, args: tuple) -> None:
            self.late += 1
            if on_late is not None:
                on_late(time, pred, args)

        return self.run_batches(stream.batches(late))

    def run_batches(self, batches: Iterable[tuple[int, list]]) -> Iterator[int]:
        """Evaluate every time point from the first batch's time to the last one's, yielding each
        after its evaluation; time points between batches are evaluated without new atoms."""
        step = self.step
        for time, atoms in batches:
            if self.t is not None:
                for gap in range(self.t + 1, time):
                    step(gap)
                    yield gap
            step(time, atoms)
            yield time
