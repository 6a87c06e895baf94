"""A registered query at run time (:class:`QueryHandle`): the stream elements it is given wait in their
time slots until the instant that reads them closes; then the LARS engine steps to it, the query's
answer is computed (kept from the engine's changes where the query allows it, rsp/query/answers/maintained.py)
and handed to the subscribers as a :class:`rsp.io.results.Result`, a value."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rsp.errors import RspError
from rsp.io.results import Result
from rsp.lars.model import Rule
from rsp.query.answers.algebra import Compiled, ExpressionCache
from rsp.query.answers.context import EvalContext
from rsp.query.syntax import ast
from rsp.runtime.clock import Clock

if TYPE_CHECKING:
    from rsp.query.compile import CompiledQuery

Triple = tuple[str, str, str]


class QueryHandle:
    """A registered query: subscribe to its results, iterate over those produced so far, explain.

    Made by :meth:`rsp.runtime.Engine.register` from a :class:`rsp.query.compile.CompiledQuery`. Its
    :attr:`clock` says which instants are closed and which closes next (:mod:`rsp.runtime.clock`)."""

    def __init__(
        self,
        compiled: CompiledQuery,
        *,
        entailment: str = "none",
        explain: bool = False,
        late: Callable[[QueryHandle, Sequence[int], Sequence[Triple], int], None] | None = None,
        engine: object = None,
    ) -> None:
        """``late(handle, times, triples, start)`` takes the elements older than an instant already closed
        (``start``: the index of the first of them in the list given); by default they are dropped.
        ``explain``: keep each element's own time while a window can hold it (exact explanations)."""
        from rsp.engine import Engine as LarsEngine

        query, translation = compiled.query, compiled.translation
        self.engine = engine
        """The :class:`rsp.runtime.Engine` that registered the query (None for a handle made alone)."""
        self.entailment = entailment
        """The entailment regime the query was compiled with (``none``, ``rdfs``, ``owlrl``)."""
        self._late = late or (lambda handle, times, triples, start: None)
        self.compiled = compiled
        self.query = query
        self.name = query.name
        self.translation = translation
        self.program = compiled.program
        self.lars = lars_engine = LarsEngine(compiled.program, hidden=set(compiled.hidden))
        """The incremental LARS engine (rsp.engine.Engine) the query runs on."""
        self.static = list(compiled.static)
        """The asserted static triples (ontologies, FROM graphs), for explanations."""
        self.background_rules = compiled.background_rules
        self.static_closure = compiled.static_closure
        self.warnings: tuple[str, ...] = compiled.warnings
        """What the query's checks found that is not an error (``file:line:column: warning: …``: a STEP
        longer than its RANGE, a projected variable the WHERE clause never binds, …)."""
        # each pattern's predicate has its variables (and the slot of an AT block) as arguments
        self._arity = {
            t.pred: len(t.variables) + (t.time_var is not None) for t in translation.tables.values()
        }
        self.results: list[Result] = []
        self._subscribers: list[Callable[[Result], None]] = []
        self.slot = translation.slot
        self.step = translation.step
        self.clock = Clock(self.step, self._close)
        """The query's instants (:class:`rsp.runtime.clock.Clock`)."""
        self._pending: dict[int, list] = {}
        self._engine_time: int | None = None
        self._previous: Counter | None = None
        self._bnodes = [0]
        self.context = EvalContext()
        """What the query's expressions read besides their solutions: NOW(), f:timestamp, BNODE()."""
        self.compilers = Compiled.for_context(self.context)
        """The expression compilers of the query's answers, bound to :attr:`context`."""
        self._expressions = ExpressionCache()
        ranges = [w.range for w in query.windows if w.range]
        self.max_range = max(ranges) if ranges else self.slot
        """The longest RANGE of the query's windows (ms): how far back an instant can see."""
        self.variables = self._variables()
        self.keep = True
        from rsp.query.answers.maintained import MaintainedConstruct, MaintainedSelect, maintainable

        table = maintainable(query, translation)
        self.maintained = None
        if table is not None:
            arity = self._arity[table.pred]
            if isinstance(query.form, ast.Select):  # RSTREAM reads the whole answer, the others its change
                whole = query.policy is ast.OutputPolicy.RSTREAM
                self.maintained = MaintainedSelect(lars_engine, table, query.form, arity, whole=whole)
            else:
                self.maintained = MaintainedConstruct(lars_engine, table, query.form, arity)
        else:  # OPTIONAL/MINUS/NOT EXISTS blocks, GROUP BY aggregates: rsp/query/answers/maintained_ops.py
            from rsp.query.answers.maintained_ops import maintained_select

            self.maintained = maintained_select(lars_engine, query, translation, self._arity)
        """The answer kept from the engine's changes (rsp/query/answers/maintained.py), when the query
        allows it."""
        self._pattern_solutions: dict = {}  # pattern predicate -> PatternSolutions (the other queries)
        # with Engine(explain=True), or for f:timestamp: each stream element's own times (ms) while a time
        # window can hold it
        from rsp.query.syntax.ast import TIMESTAMP, calls

        self._timestamps = calls(query, TIMESTAMP)
        keep = explain or self._timestamps
        self.element_times: dict[tuple, list[int]] | None = {} if keep else None
        """With ``Engine(explain=True)`` or f:timestamp: (window predicate, triple) -> the times (ms) of
        the elements holding it, while a window can hold them (None otherwise)."""
        self._element_order: deque = deque()
        # [TRIPLES n] windows, counted per stream: stream predicate -> its count windows (predicate, n),
        # the elements not yet in a closed instant (time, arrival number, triple), the last ones before
        # the last closed instant in time order (equal times in arrival order)
        self._counts: dict[str, list[tuple[str, int]]] = {}
        for count, (iri, n) in translation.counts.items():
            self._counts.setdefault(translation.streams[iri], []).append((count, n))
        self._count_new: dict[str, list] = {pred: [] for pred in self._counts}
        self._count_last = {pred: deque(maxlen=max(n for _c, n in c)) for pred, c in self._counts.items()}
        self._arrivals = 0

    def _variables(self) -> tuple[str, ...]:
        """A SELECT's result variables: its projection, or for ``SELECT *`` the in-scope variables of
        WHERE (SPARQL 1.1 §18.2.1: BIND and VALUES variables, a sub-SELECT's projection, both sides of
        OPTIONAL and UNION, not MINUS or FILTER EXISTS) in the order they are first written."""
        from rsp.query.syntax.validate import select_vars

        form = self.query.form
        return tuple(select_vars(form)) if isinstance(form, ast.Select) else ()

    def subscribe(self, callback: Callable[[Result], None]) -> None:
        """Call ``callback(result)`` for every result from now on."""
        self._subscribers.append(callback)

    @contextmanager
    def muted(self) -> Iterator[None]:
        """Within the block, results reach no subscriber (nor :attr:`results`): a surface replaying
        elements it has already answered for (``rsp spark``'s recovery) mutes them."""
        subscribers, keep = self._subscribers, self.keep
        self._subscribers, self.keep = [], False
        try:
            yield
        finally:
            self._subscribers, self.keep = subscribers, keep

    @property
    def closed_until(self) -> int | None:
        """The last instant closed (ms; None before the first)."""
        return self.clock.closed_until

    @property
    def blank_nodes_made(self) -> int:
        """How many blank nodes the query's CONSTRUCT templates have made (their labels count on from
        it: a surface restoring a query from a checkpoint sets it back)."""
        return self._bnodes[0]

    @blank_nodes_made.setter
    def blank_nodes_made(self, count: int) -> None:
        self._bnodes[0] = count

    def oldest_needed(self, after: int | None = None) -> int | None:
        """Elements older than this (ms) no window after the instant ``after`` (default: the last closed
        one) can see, nor the IStream/DStream comparison with it; None when none is closed."""
        instant = self.closed_until if after is None else after
        return None if instant is None else instant - self.max_range - self.step - self.slot

    def __iter__(self) -> Iterator[Result]:
        return iter(list(self.results))

    def __repr__(self) -> str:
        from rsp.io.display import handle_repr

        return handle_repr(self)

    def _repr_html_(self) -> str:
        """The latest results as a table in a notebook (rsp/io/display.py)."""
        from rsp.io.display import handle_html

        return handle_html(self)

    def to_pandas(self, terms: str = "python"):
        """The results kept so far as a pandas DataFrame: a ``time`` column (ms) and one column per
        variable (CONSTRUCT: subject, predicate, object; ASK: boolean), one row per solution; terms as
        Python values (numbers, strings), or ``terms="ntriples"`` as written. Needs pandas."""
        from rsp.io.display import to_pandas

        return to_pandas(self.results, terms)

    def to_arrow(self, terms: str = "python"):
        """The results kept so far as a pyarrow Table (as :meth:`to_pandas`). Needs pyarrow."""
        from rsp.io.display import to_arrow

        return to_arrow(self.results, terms)

    def rules(self) -> list[Rule]:
        """The LARS rules the query runs (query rules first, then background rules)."""
        return list(self.program.program.rules)

    # -- time -----------------------------------------------------------------------------------------
    # (rsp/runtime/clock.py: which instants close when; an element older than the last closed instant is
    # late, and Engine.push decides what happens to it)
    def _add(self, time: int, pred: str, triples: list) -> list:
        """Stream triples at ``time`` (not late: no older than the last closed instant) as atoms of the
        window predicate ``pred``; an element older than others already added joins its own slot.

        Each triple is an element, arriving in list order (DESIGN.md §3). Returns the triples that are
        late after all: when the first one moves the first instant back behind a newer element, it
        closes the instants up to that element, and the others of its time come after them."""
        clock = self.clock
        clock.close_before(time)
        rest: list = []
        if len(triples) > 1 and clock.closes_behind():
            triples, rest = triples[:1], triples[1:]
        self._add_to_slot(time // self.slot, pred, triples)
        clock.saw(time)
        if self.element_times is not None:
            self._keep_times(pred, [time] * len(triples), triples)
        if pred in self._counts:
            self._count(pred, [time] * len(triples), triples)
        clock.catch_up()
        return rest

    def _add_sorted(self, times: Sequence[int], triples: Sequence[Triple], pred: str) -> None:
        """``triples[i]`` at ``times[i]`` (times in order): :meth:`Engine.push` for each time, done a
        time slot at a time; elements older than the last closed instant go to the ``late`` callback."""
        end, slot, clock = len(times), self.slot, self.clock
        i = 0
        while i < end:
            time = times[i]
            closed = clock.closed_until
            if closed is not None and time < closed:
                stop = bisect_left(times, closed, i, end)
                self._late(self, times[i:stop], triples[i:stop], i)
                i = stop
                continue
            clock.close_before(time)
            if clock.closes_behind():
                # this element moves the first instant back behind a newer one and closes the instants
                # up to it: the elements after it, of its time too, may be late (each is an element)
                stop = i + 1
            elif clock.closed_until is None:
                stop = bisect_right(times, time, i, end)
            else:  # up to the end of the slot, or the next instant if one falls inside it (COMPUTE EVERY)
                stop = bisect_left(times, min((time // slot + 1) * slot, clock.next_instant), i, end)
            chunk = triples[i:stop]
            chunk = chunk if isinstance(chunk, list) else list(chunk)
            self._add_to_slot(time // slot, pred, chunk)
            clock.saw(times[stop - 1])
            if self.element_times is not None:
                self._keep_times(pred, times[i:stop], chunk)
            if pred in self._counts:
                self._count(pred, times[i:stop], chunk)
            clock.catch_up()
            i = stop

    def _add_to_slot(self, slot: int, pred: str, triples: list) -> None:
        """Keep ``triples`` for the engine step of their slot, per predicate, as the engine stores them
        (see rsp.engine.Engine.step)."""
        groups = self._pending.get(slot)
        if groups is None:
            self._pending[slot] = {pred: list(triples)}
        elif pred in groups:
            groups[pred].extend(triples)
        else:
            groups[pred] = list(triples)

    def _count(self, pred: str, times: Sequence[int], triples: Sequence[Triple]) -> None:
        """Elements of a stream read by ``[TRIPLES n]`` windows, numbered in arrival order."""
        start = self._arrivals
        self._arrivals += len(triples)
        self._count_new[pred].extend(zip(times, range(start, self._arrivals), triples, strict=True))

    def _count_atoms(self, instant: int, groups: dict) -> dict:
        """``groups`` (the stream atoms of the instant's time point) with the content of every count
        window at ``instant``: the last n elements of its stream before it, as if every element that is
        not late had come in time order (DESIGN.md §5)."""
        for pred, windows in self._counts.items():
            new = self._count_new[pred]
            if new:
                before = sorted(e for e in new if e[0] < instant)
                self._count_new[pred] = [e for e in new if e[0] >= instant]
                self._count_last[pred].extend((time, triple) for time, _n, triple in before)
            last = list(self._count_last[pred])
            for count, n in windows:
                groups[count] = [triple for _time, triple in last[-n:]]
        return groups

    def count_times(self, count: str, triple: Triple) -> list[int]:
        """The times (ms) of the elements holding ``triple`` in the count window ``count`` (a predicate
        of ``translation.counts``) at the last closed instant."""
        iri, n = self.translation.counts[count]
        last = list(self._count_last[self.translation.streams[iri]])[-n:]
        return [time for time, held in last if held == triple]

    def _element_time(self, triple: Triple) -> int | None:
        """f:timestamp at the last closed instant: the time of the latest element holding ``triple`` in
        a window of the query (see rsp.query.answers.builtins), or None."""
        instant, streams, found = self.closed_until, self.translation.streams, []
        counts = {(iri, n): count for count, (iri, n) in self.translation.counts.items()}
        for window in self.query.windows:
            if window.triples is not None:
                found.extend(self.count_times(counts[window.stream, window.triples], triple))
            else:
                times = self.element_times.get((streams[window.stream], triple), ())
                found.extend(t for t in times if instant - window.range <= t < instant)
        return max(found, default=None)

    def _keep_times(self, pred: str, times: Sequence[int], triples: Sequence[Triple]) -> None:
        """Engine(explain=True): remember each element's own time while a window can hold it."""
        kept, order = self.element_times, self._element_order
        for time, triple in zip(times, triples, strict=True):
            key = (pred, triple)
            kept.setdefault(key, []).append(time)
            order.append((time, key))

    def _close(self, instant: int) -> None:
        """Evaluate the instant the clock closes (its ``closed_until`` is ``instant`` already)."""
        context = self.context
        context.at(instant)  # NOW() is the instant's time
        point = instant // self.slot - 1
        if self._engine_time is None:
            first = max(0, (instant - self.max_range) // self.slot)
            self._engine_time = min(first, min(self._pending, default=first)) - 1
        lars, pending = self.lars, self._pending
        for k in range(self._engine_time + 1, point + 1):
            atoms = pending.pop(k, {})
            if k == point and self._counts:
                atoms = self._count_atoms(instant, atoms)
            lars.step(k, atoms)
        self._engine_time = max(self._engine_time, point)
        context.element_time = self._element_time if self._timestamps else None
        if self.element_times is not None:
            self._forget_elements(instant)
        self._emit(instant)

    def _forget_elements(self, instant: int) -> None:
        """Drop the kept times of elements that no window of the query can hold any more."""
        times, order = self.element_times, self._element_order
        cutoff = instant - self.max_range - self.slot
        while order and order[0][0] < cutoff:
            time, key = order.popleft()
            kept = times[key]
            kept.remove(time)  # out-of-order elements: not necessarily the first time kept
            if not kept:
                del times[key]

    def advance(self, time: int) -> None:
        """Declare that no element older than ``time`` will come for this query: close its instants up
        to ``time`` (:meth:`Engine.advance` does it for every query). Nothing closes before the first
        element, which fixes the first instant."""
        self.clock.close_through(time)

    def finish(self) -> None:
        """Close every instant up to the first one after the last element."""
        self.clock.finish()

    # -- results ---------------------------------------------------------------------------------------
    def rows(self, pred: str) -> set:
        """The rows of a pattern predicate now (the translator gives each pattern a name of its own)."""
        return self.lars.holding(pred, self._arity[pred]) if pred in self._arity else set()

    def _solutions(self, table) -> list[dict[str, str]]:
        """A pattern's solutions at the current instant, kept from its predicate's changes."""
        kept = self._pattern_solutions.get(table.pred)
        if kept is None:
            from rsp.query.answers.maintained import PatternSolutions

            kept = PatternSolutions(self.lars, table, self._arity[table.pred], self.slot)
            self._pattern_solutions[table.pred] = kept
        return kept.at(self.closed_until)

    def _emit(self, instant: int) -> None:
        from rsp.query.answers.algebra import Instant, construct
        from rsp.query.answers.order import in_answer_order

        algebra = Instant(self.translation, self.rows, self.compilers, self._expressions, self._solutions)
        form = self.query.form
        name, variables = self.name, self.variables
        if self.maintained is not None:  # kept from the engine's changes: rsp/query/answers/maintained.py
            delta = self.maintained.update()
            policy = self.query.policy
            if policy is ast.OutputPolicy.RSTREAM:
                answer = self.maintained.answer()
            else:
                answer = self.maintained.change(delta, policy is ast.OutputPolicy.ISTREAM)
            if isinstance(form, ast.Select):
                result = Result(name, instant, variables, bindings=answer)
            else:
                result = Result(name, instant, variables, triples=answer)
        elif isinstance(form, ast.Select):  # in the answer's order (rsp/query/answers/order.py)
            bindings = algebra.select(form)
            modifiers = form.modifiers
            if not (modifiers.order_by or modifiers.limit is not None or modifiers.offset):
                bindings = in_answer_order(bindings, variables)  # else algebra.modify sorted them
            result = Result(name, instant, variables, bindings=self._policy(bindings))
        elif isinstance(form, ast.Construct):
            solutions = algebra.modify(algebra.group(form.where), None, form.modifiers, False)
            triples = self._policy_triples(sorted(construct(form.template, solutions, self._bnodes)))
            result = Result(name, instant, variables, triples=triples)
        else:
            result = Result(name, instant, variables, boolean=bool(algebra.group(form.where)))
        if self.keep:
            self.results.append(result)
        for callback in self._subscribers:
            callback(result)

    # -- explanations -----------------------------------------------------------------------------------
    def explain(self, answer, time: int | None = None, *, limit: int | None = 10):
        """Why ``answer`` is an answer at the current instant (the last one closed: call this from a
        subscriber, or before pushing elements past the next instant): an
        :class:`rsp.query.answers.explain.Explanation` with the rules (and their origins) and the stream
        triples (with their timestamps in ms) that support it, or None if it is no answer now.

        ``answer`` is a solution (a dict as in ``result.bindings``), a CONSTRUCT triple (an N-Triples
        line as in ``result.triples``, or a tuple), or ``True`` for ASK; ``time``, if given, must be the
        current instant. ``limit`` caps the WHERE solutions explained (None: all of them). Exact
        timestamps need ``Engine(explain=True)``; otherwise each stream triple is placed in its time slot.

        >>> from rsp.runtime import Engine
        >>> engine = Engine(explain=True)
        >>> query = engine.register('''
        ...     REGISTER QUERY Hot AS
        ...     SELECT ?room FROM STREAM <http://ex/temps> [RANGE 2s STEP 1s]
        ...     WHERE { ?room <http://ex/temp> ?v FILTER(?v > "30") }''')
        >>> query.subscribe(lambda result: print(query.explain(result.bindings[0])))
        >>> engine.push([("<http://ex/r1>", "<http://ex/temp>", '"35"')], 500)
        >>> engine.close()
        why ?room=<http://ex/r1>:
          pattern <query>:4:13: ?room=<http://ex/r1> ?v="35"
            <http://ex/r1> <http://ex/temp> "35"  [stream <http://ex/temps> @ 500 ms, window <query>:3:18]
            FILTER(?v > "30")  [?v = "35"]
        """
        from rsp.query.answers.explain import explain_answers

        if time is not None and time != self.closed_until:
            raise RspError(
                f"query {self.name}: answers can be explained at the current instant only "
                f"({self.closed_until}), not at {time}: call explain from a subscriber"
            )
        return explain_answers(self, [answer], limit=limit)[0]

    def explain_result(self, result: Result, *, limit: int | None = 10) -> list:
        """Explanations of every distinct answer of ``result`` (the current instant's), in order (a copy of
        the result that carries them: ``dataclasses.replace(result, explanations=…)``)."""
        from rsp.query.answers.explain import explain_answers

        if result.bindings is not None:
            seen: dict[tuple, dict] = {}
            for binding in result.bindings:
                seen.setdefault(tuple(sorted(binding.items())), binding)
            answers: list = list(seen.values())
        elif result.triples is not None:
            answers = list(dict.fromkeys(result.triples))
        else:
            answers = [True] if result.boolean else []
        return [e for e in explain_answers(self, answers, limit=limit, verify=False) if e is not None]

    def _policy(self, bindings: list[dict]) -> list[dict]:
        if self.query.policy is ast.OutputPolicy.RSTREAM:
            return bindings
        return [dict(key) for key in self._change([tuple(sorted(b.items())) for b in bindings])]

    def _policy_triples(self, triples: list[str]) -> list[str]:
        if self.query.policy is ast.OutputPolicy.RSTREAM:
            return triples
        return self._change(triples)

    def _change(self, items: list) -> list:
        """IStream: what is new since the last instant; DStream: what disappeared (as multisets)."""
        current = Counter(items)
        previous = self._previous or Counter()
        self._previous = current
        change = current - previous if self.query.policy is ast.OutputPolicy.ISTREAM else previous - current
        return list(change.elements())
