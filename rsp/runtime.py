"""The continuous-query runtime and its Python API: :class:`Engine` registers queries, loads
ontologies, takes stream elements in time order, closes evaluation instants and hands each query's
results to its subscribers.

>>> engine = Engine()
>>> query = engine.register('''
...     REGISTER QUERY Hot AS
...     SELECT ?room FROM STREAM <http://ex.org/temps> [RANGE 2s STEP 1s]
...     WHERE { ?room <http://ex.org/temp> ?v FILTER(?v > 30) }''')
>>> reading = ("<http://ex.org/r1>", "<http://ex.org/temp>", '"35"^^<http://www.w3.org/2001/XMLSchema#integer>')
>>> engine.push([reading], 500)
>>> engine.close()
>>> [(r.time, r.bindings) for r in query]
[(1000, [{'room': '<http://ex.org/r1>'}])]
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from numbers import Integral
from operator import le
from pathlib import Path

from rsp.errors import LateElementError, Position, RspError, StreamError
from rsp.io.bnodes import Scopes
from rsp.io.ntriples import FAST_TERM, term_problem
from rsp.lars import check
from rsp.lars.model import Atom, ExtAtom, Head, Program, Rule
from rsp.query import ast
from rsp.query.algebra import ExpressionCache

Triple = tuple[str, str, str]


@dataclass
class Result:
    """What a query says at one evaluation instant (ms): solutions, CONSTRUCT triples or a boolean."""

    query: str
    time: int
    variables: tuple[str, ...] = ()
    bindings: list[dict[str, str]] | None = None
    triples: list[str] | None = None
    boolean: bool | None = None
    explanations: list | None = None
    """Set by :meth:`QueryHandle.explain_result` (``rsp run --explain``): one explanation per answer."""

    def __repr__(self) -> str:
        from rsp.display import result_repr

        return result_repr(self)

    def _repr_html_(self) -> str:
        """A table in a notebook (rsp/display.py)."""
        from rsp.display import result_html

        return result_html(self)


def _rename(rule: Rule, mapping: dict[str, str]) -> Rule:
    """The rule with its predicates renamed (background rules over ``g`` reused for other graphs)."""

    def atom(a: Atom) -> Atom:
        return Atom(mapping.get(a.pred, a.pred), a.args)

    body = []
    for literal in rule.body:
        if isinstance(literal, ExtAtom):
            literal = ExtAtom(atom(literal.atom), literal.op, literal.window, literal.time, literal.negated)
        body.append(literal)
    return Rule(Head(atom(rule.head.atom), rule.head.time), tuple(body), rule.origin)


_ROLES = ("subject", "predicate", "object")
_EXPECTED = {
    "subject": "an IRI or blank node in N-Triples syntax, e.g. <http://ex.org/a> or _:b1",
    "predicate": "an IRI in N-Triples syntax, e.g. <http://ex.org/p>",
    "object": "an IRI, blank node or literal in N-Triples syntax, e.g. <http://ex.org/a>, _:b1, "
    '"text", "text"@en or "30"^^<http://www.w3.org/2001/XMLSchema#integer>',
}


def _checked_time(time, where: str) -> int:
    """A timestamp given to the API: an integer number of ms (a NumPy integer too), not negative."""
    if isinstance(time, bool) or not isinstance(time, Integral):
        raise StreamError(f"{where}: the time {time!r} is not an integer number of milliseconds")
    if time < 0:
        raise StreamError(f"{where}: the time {time} is negative (the timeline starts at 0 ms)")
    return int(time)


def _checked_times(times: Sequence[int]) -> list[int]:
    """push_sorted's times: integers ≥ 0 in order (checked at C speed when they are plain ints)."""
    times = list(times)
    if set(map(type, times)) != {int} or min(times) < 0:
        times = [_checked_time(time, "push_sorted") for time in times]
    if not all(map(le, times, islice(times, 1, None))):
        i = next(i for i in range(1, len(times)) if times[i] < times[i - 1])
        raise StreamError(
            f"push_sorted: times must be in order, but element {i + 1} at {times[i]} ms comes "
            f"after one at {times[i - 1]} ms (sort them, or use push)"
        )
    return times


def _checked_triples(triples: Iterable, times: Sequence[int], where: str) -> list[Triple]:
    """Triples given to the API as N-Triples strings (rdflib terms are written out): every term checked
    for its place; :class:`StreamError` names the first bad triple, its position and what is expected.

    Most terms come back within a call: each distinct term is checked once per role (first with the
    reader's fast regular expressions, then with the full grammar, which also says what is wrong)."""
    out: list[Triple] = []
    subjects: set[str] = set()
    predicates: set[str] = set()
    objects: set[str] = set()
    fast_subject, fast_predicate, fast_object = (FAST_TERM[role] for role in _ROLES)
    for index, triple in enumerate(triples):
        if type(triple) is not tuple or len(triple) != 3:
            triple = _as_triple(triple, index, times, where)
        s, p, o = triple
        if type(s) is not str or type(p) is not str or type(o) is not str:
            triple = s, p, o = tuple(
                term if type(term) is str else _written(term, _at(index, times, where), role)
                for role, term in zip(_ROLES, triple, strict=True)
            )
        if s not in subjects:
            if fast_subject(s) is None:
                _check_term(s, "subject", index, times, where)
            subjects.add(s)
        if p not in predicates:
            if fast_predicate(p) is None:
                _check_term(p, "predicate", index, times, where)
            predicates.add(p)
        if o not in objects:
            if fast_object(o) is None:
                _check_term(o, "object", index, times, where)
            objects.add(o)
        out.append(triple)
    return out


def _check_term(term: str, role: str, index: int, times: Sequence[int], where: str) -> None:
    """The full check of a term the fast expressions did not take (non-ASCII, or wrong)."""
    problem = term_problem(term, role)
    if problem is not None:
        at = _at(index, times, where)
        raise StreamError(f"{at}: bad {role} {term!r}: {problem} (expected {_EXPECTED[role]})")


def _at(index: int, times: Sequence[int], where: str) -> str:
    return f"{where}: triple {index + 1} at {times[index if len(times) > 1 else 0]} ms"


def _as_triple(triple, index: int, times: Sequence[int], where: str) -> tuple:
    """A triple given as another sequence of three terms, as a tuple; anything else is refused."""
    at = _at(index, times, where)
    if isinstance(triple, str) or not isinstance(triple, Sequence):
        raise StreamError(f"{at}: expected a (subject, predicate, object) tuple, got {triple!r}")
    if len(triple) != 3:
        raise StreamError(
            f"{at}: {tuple(triple)!r} has {len(triple)} terms, not 3 (subject, predicate, object)"
        )
    return tuple(triple)


def _written(term, at: str, role: str) -> str:
    """An rdflib term in N-Triples syntax; anything else that is not a string is refused."""
    if isinstance(term, str) and hasattr(term, "n3"):
        from rsp.background.ontology import nt_term

        try:
            return nt_term(term)
        except TypeError:
            pass
    raise StreamError(f"{at}: the {role} {term!r} is not an RDF term (expected {_EXPECTED[role]})")


_REMOTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _resolve_graph(iri: str, query_file: str, given: dict[str, str], clause: str = "FROM") -> Path:
    """The file of a FROM <g> / FROM NAMED <g> graph: the one given for the IRI (``--graph IRI=FILE``,
    :meth:`Engine.add_graph`), else a file: IRI, an absolute path or a path relative to the query. A
    remote IRI (``http://…``) without a file given is refused: rsp never fetches IRIs."""
    text = iri[1:-1] if iri.startswith("<") else iri
    if text in given:
        return Path(given[text])
    if _REMOTE.match(text) and not text.startswith("file://"):
        raise RspError(
            f"{clause} <{text}>: rsp never fetches IRIs; give the graph as a local file with "
            f'--graph {text}=FILE (Python: engine.add_graph("{text}", path))',
            Position(query_file),
        )
    if text.startswith("file://"):
        text = text[len("file://") :]
    path = Path(text)
    if not path.is_absolute() and query_file not in ("<query>", "<string>"):
        path = Path(query_file).parent / path
    return path


class QueryHandle:
    """A registered query: subscribe to its results, iterate over those produced so far, explain."""

    def __init__(self, engine: Engine, query: ast.Query, translation, program, lars_engine) -> None:
        self.engine = engine
        self.query = query
        self.name = query.name
        self.translation = translation
        self.program = program
        self.lars = lars_engine
        # each pattern's predicate has its variables (and the slot of an AT block) as arguments
        self._arity = {
            t.pred: len(t.variables) + (t.time_var is not None) for t in translation.tables.values()
        }
        self.results: list[Result] = []
        self._subscribers: list[Callable[[Result], None]] = []
        self.slot = translation.slot
        self.step = translation.step
        self._pending: dict[int, list] = {}
        self._engine_time: int | None = None
        self._next_instant: int | None = None
        self._last_element: int | None = None
        self.closed_until: int | None = None
        self._previous: Counter | None = None
        self._bnodes = [0]
        self._expressions = ExpressionCache()
        ranges = [w.range for w in query.windows if w.range]
        self._max_range = max(ranges) if ranges else self.slot
        self.variables = self._variables()
        self.keep = True
        self.warnings: tuple[str, ...] = ()
        """What the query's checks found that is not an error (``file:line:column: warning: …``: a STEP
        longer than its RANGE, a projected variable the WHERE clause never binds, …)."""
        from rsp.query.maintained import MaintainedConstruct, MaintainedSelect, maintainable

        table = maintainable(query, translation)
        self.maintained = None
        if table is not None:
            arity = self._arity[table.pred]
            if isinstance(query.form, ast.Select):  # RSTREAM reads the whole answer, the others its change
                whole = query.policy is ast.OutputPolicy.RSTREAM
                self.maintained = MaintainedSelect(lars_engine, table, query.form, arity, whole=whole)
            else:
                self.maintained = MaintainedConstruct(lars_engine, table, query.form, arity)
        else:  # OPTIONAL/MINUS/NOT EXISTS blocks, GROUP BY aggregates: rsp/query/maintained_ops.py
            from rsp.query.maintained_ops import maintained_select

            self.maintained = maintained_select(lars_engine, query, translation, self._arity)
        """The answer kept from the engine's changes (rsp/query/maintained.py), when the query allows it."""
        self._pattern_solutions: dict = {}  # pattern predicate -> PatternSolutions (the other queries)
        # with Engine(explain=True), or for f:timestamp: each stream element's own times (ms) while a time
        # window can hold it
        from rsp.query.builtins import TIMESTAMP, calls

        self._timestamps = calls(query, TIMESTAMP)
        keep = engine.explain or self._timestamps
        self._element_times: dict[tuple, list[int]] | None = {} if keep else None
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
        from rsp.query.validate import select_vars

        form = self.query.form
        return tuple(select_vars(form)) if isinstance(form, ast.Select) else ()

    def subscribe(self, callback: Callable[[Result], None]) -> None:
        """Call ``callback(result)`` for every result from now on."""
        self._subscribers.append(callback)

    def __iter__(self) -> Iterator[Result]:
        return iter(list(self.results))

    def __repr__(self) -> str:
        from rsp.display import handle_repr

        return handle_repr(self)

    def _repr_html_(self) -> str:
        """The latest results as a table in a notebook (rsp/display.py)."""
        from rsp.display import handle_html

        return handle_html(self)

    def to_pandas(self, terms: str = "python"):
        """The results kept so far as a pandas DataFrame: a ``time`` column (ms) and one column per
        variable (CONSTRUCT: subject, predicate, object; ASK: boolean), one row per solution; terms as
        Python values (numbers, strings), or ``terms="ntriples"`` as written. Needs pandas."""
        from rsp.display import to_pandas

        return to_pandas(self.results, terms)

    def to_arrow(self, terms: str = "python"):
        """The results kept so far as a pyarrow Table (as :meth:`to_pandas`). Needs pyarrow."""
        from rsp.display import to_arrow

        return to_arrow(self.results, terms)

    def rules(self) -> list[Rule]:
        """The LARS rules the query runs (query rules first, then background rules)."""
        return list(self.program.program.rules)

    # -- time -----------------------------------------------------------------------------------------
    # The clock of a query is its newest element: every instant up to it, from the first instant on, is
    # closed. The first instant is the first one after the earliest element that came before any instant
    # closed; an element older than the last closed instant is late (Engine.push decides); any other
    # element joins its slot, whatever its order of arrival (DESIGN.md §3, §5).
    def _add(self, time: int, pred: str, triples: list) -> list:
        """Stream triples at ``time`` (not late: no older than the last closed instant) as atoms of the
        window predicate ``pred``; an element older than others already added joins its own slot.

        Each triple is an element, arriving in list order (DESIGN.md §3). Returns the triples that are
        late after all: when the first one moves the first instant back behind a newer element, it
        closes the instants up to that element, and the others of its time come after them."""
        self._close_before(time)
        rest: list = []
        if len(triples) > 1 and self._closes_behind():
            triples, rest = triples[:1], triples[1:]
        self._add_to_slot(time // self.slot, pred, triples)
        self._seen(time)
        if self._element_times is not None:
            self._keep_times(pred, [time] * len(triples), triples)
        if pred in self._counts:
            self._count(pred, [time] * len(triples), triples)
        self._catch_up()
        return rest

    def _closes_behind(self) -> bool:
        """Before the first instant closed, after :meth:`_close_before` of an element's time: adding the
        element closes instants behind a newer element (it moved the first instant back behind it)."""
        return (
            self.closed_until is None
            and self._last_element is not None
            and (self._next_instant <= self._last_element)
        )

    def _add_sorted(self, times: Sequence[int], triples: Sequence[Triple], pred: str) -> None:
        """``triples[i]`` at ``times[i]`` (times in order): :meth:`Engine.push` for each time, done a
        time slot at a time; elements older than the last closed instant go to :meth:`Engine._late`."""
        end, slot = len(times), self.slot
        i = 0
        while i < end:
            time = times[i]
            if self.closed_until is not None and time < self.closed_until:
                stop = bisect_left(times, self.closed_until, i, end)
                self.engine._late(self, times[i:stop], triples[i:stop], i)
                i = stop
                continue
            self._close_before(time)
            if self._closes_behind():
                # this element moves the first instant back behind a newer one and closes the instants
                # up to it: the elements after it, of its time too, may be late (each is an element)
                stop = i + 1
            elif self.closed_until is None:
                stop = bisect_right(times, time, i, end)
            else:  # up to the end of the slot, or the next instant if one falls inside it (COMPUTE EVERY)
                stop = bisect_left(times, min((time // slot + 1) * slot, self._next_instant), i, end)
            chunk = triples[i:stop]
            chunk = chunk if isinstance(chunk, list) else list(chunk)
            self._add_to_slot(time // slot, pred, chunk)
            self._seen(times[stop - 1])
            if self._element_times is not None:
                self._keep_times(pred, times[i:stop], chunk)
            if pred in self._counts:
                self._count(pred, times[i:stop], chunk)
            self._catch_up()
            i = stop

    def _seen(self, time: int) -> None:
        """An element at ``time`` was added: the last instant is the first one after the newest element
        (another stream's element may be older, if no instant closed after it yet)."""
        if self._last_element is None or time > self._last_element:
            self._last_element = time

    def _close_before(self, time: int) -> None:
        """Close every instant up to ``time`` (an element at ``time`` comes next).

        The first instant is the first one after the earliest element that came before any instant
        closed: an element older than the first one seen, arriving while nothing is closed yet, moves the
        first instant back (DESIGN.md §5)."""
        first = (time // self.step + 1) * self.step
        if self._next_instant is None or (self.closed_until is None and first < self._next_instant):
            self._next_instant = first
        self._close_through(time)

    def _close_through(self, time: int) -> None:
        while self._next_instant <= time:
            self._close(self._next_instant)
            self._next_instant += self.step

    def _catch_up(self) -> None:
        """Close the instants the newest element has passed: only ever some after an element that moved
        the first instant back behind a newer element (otherwise that newer element closed them)."""
        if self._next_instant <= self._last_element:
            self._close_through(self._last_element)

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
        a window of the query (see rsp.query.builtins), or None."""
        instant, streams, found = self.closed_until, self.translation.streams, []
        counts = {(iri, n): count for count, (iri, n) in self.translation.counts.items()}
        for window in self.query.windows:
            if window.triples is not None:
                found.extend(self.count_times(counts[window.stream, window.triples], triple))
            else:
                times = self._element_times.get((streams[window.stream], triple), ())
                found.extend(t for t in times if instant - window.range <= t < instant)
        return max(found, default=None)

    def _keep_times(self, pred: str, times: Sequence[int], triples: Sequence[Triple]) -> None:
        """Engine(explain=True): remember each element's own time while a window can hold it."""
        kept, order = self._element_times, self._element_order
        for time, triple in zip(times, triples, strict=True):
            key = (pred, triple)
            kept.setdefault(key, []).append(time)
            order.append((time, key))

    def _close(self, instant: int) -> None:
        from rsp.query.builtins import set_element_times, set_now

        set_now(instant)  # NOW() is the instant's time
        point = instant // self.slot - 1
        if self._engine_time is None:
            first = max(0, (instant - self._max_range) // self.slot)
            self._engine_time = min(first, min(self._pending, default=first)) - 1
        lars, pending = self.lars, self._pending
        for k in range(self._engine_time + 1, point + 1):
            atoms = pending.pop(k, {})
            if k == point and self._counts:
                atoms = self._count_atoms(instant, atoms)
            lars.step(k, atoms)
        self._engine_time = max(self._engine_time, point)
        self.closed_until = instant
        set_element_times(self._element_time if self._timestamps else None)
        if self._element_times is not None:
            self._forget_elements(instant)
        self._emit(instant)

    def _forget_elements(self, instant: int) -> None:
        """Drop the kept times of elements that no window of the query can hold any more."""
        times, order = self._element_times, self._element_order
        cutoff = instant - self._max_range - self.slot
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
        while self._next_instant is not None and self._next_instant <= time:
            self._close(self._next_instant)
            self._next_instant += self.step

    def finish(self) -> None:
        """Close every instant up to the first one after the last element."""
        if self._last_element is None:
            return
        last = (self._last_element // self.step + 1) * self.step
        while self._next_instant is not None and self._next_instant <= last:
            self._close(self._next_instant)
            self._next_instant += self.step

    # -- results ---------------------------------------------------------------------------------------
    def _rows(self, pred: str) -> set:
        """The rows of a pattern predicate now (the translator gives each pattern a name of its own)."""
        return self.lars.holding(pred, self._arity[pred]) if pred in self._arity else set()

    def _solutions(self, table) -> list[dict[str, str]]:
        """A pattern's solutions at the current instant, kept from its predicate's changes."""
        kept = self._pattern_solutions.get(table.pred)
        if kept is None:
            from rsp.query.maintained import PatternSolutions

            kept = PatternSolutions(self.lars, table, self._arity[table.pred], self.slot)
            self._pattern_solutions[table.pred] = kept
        return kept.at(self.closed_until)

    def _emit(self, instant: int) -> None:
        from rsp.query.algebra import Instant, construct
        from rsp.query.order import in_answer_order

        algebra = Instant(
            self.translation, self._rows, self.engine.compiled, self._expressions, self._solutions
        )
        form = self.query.form
        result = Result(self.name, instant, self.variables)
        if self.maintained is not None:  # kept from the engine's changes: rsp/query/maintained.py
            delta = self.maintained.update()
            policy = self.query.policy
            if policy is ast.OutputPolicy.RSTREAM:
                answer = self.maintained.answer()
            else:
                answer = self.maintained.change(delta, policy is ast.OutputPolicy.ISTREAM)
            if isinstance(form, ast.Select):
                result.bindings = answer
            else:
                result.triples = answer
        elif isinstance(form, ast.Select):  # in the answer's order (rsp/query/order.py)
            bindings = algebra.select(form)
            modifiers = form.modifiers
            if not (modifiers.order_by or modifiers.limit is not None or modifiers.offset):
                bindings = in_answer_order(bindings, self.variables)  # else algebra.modify sorted them
            result.bindings = self._policy(bindings)
        elif isinstance(form, ast.Construct):
            solutions = algebra.modify(algebra.group(form.where), None, form.modifiers, False)
            result.triples = self._policy_triples(sorted(construct(form.template, solutions, self._bnodes)))
        else:
            result.boolean = bool(algebra.group(form.where))
        if self.keep:
            self.results.append(result)
        for callback in self._subscribers:
            callback(result)

    # -- explanations -----------------------------------------------------------------------------------
    def explain(self, answer, time: int | None = None, *, limit: int | None = 10):
        """Why ``answer`` is an answer at the current instant (the last one closed: call this from a
        subscriber, or before pushing elements past the next instant): an
        :class:`rsp.query.explain.Explanation` with the rules (and their origins) and the stream
        triples (with their timestamps in ms) that support it, or None if it is no answer now.

        ``answer`` is a solution (a dict as in ``result.bindings``), a CONSTRUCT triple (an N-Triples
        line as in ``result.triples``, or a tuple), or ``True`` for ASK; ``time``, if given, must be the
        current instant. ``limit`` caps the WHERE solutions explained (None: all of them). Exact
        timestamps need ``Engine(explain=True)``; otherwise each stream triple is placed in its time slot.

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
        from rsp.query.explain import explain_answers

        if time is not None and time != self.closed_until:
            raise RspError(
                f"query {self.name}: answers can be explained at the current instant only "
                f"({self.closed_until}), not at {time}: call explain from a subscriber"
            )
        return explain_answers(self, [answer], limit=limit)[0]

    def explain_result(self, result: Result, *, limit: int | None = 10) -> list:
        """Explanations of every distinct answer of ``result`` (the current instant's), in order."""
        from rsp.query.explain import explain_answers

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


class Engine:
    """Registers continuous queries and feeds them stream elements in time order.

    ``entailment`` is ``none``, ``rdfs`` or ``owlrl``; ``late`` is ``drop`` (count and skip elements
    older than the last closed instant) or ``fail`` (raise :class:`rsp.errors.StreamError`).
    ``explain=True`` keeps each stream element's own timestamp while a window can hold it, so that
    :meth:`QueryHandle.explain` gives exact times (it costs a dict entry per element in the windows).
    """

    def __init__(self, entailment: str = "none", late: str = "drop", *, explain: bool = False) -> None:
        from rsp.query.aggregates import compile_aggregate, order_key
        from rsp.query.algebra import Compiled
        from rsp.query.expr import compile_expr, compile_filter

        if late not in ("drop", "fail"):
            raise ValueError(f"late={late!r}: the late policy is 'drop' or 'fail'")
        self.entailment = entailment
        self.late_policy = late
        self.explain = explain
        self.static: list[Triple] = []
        self.queries: list[QueryHandle] = []
        self.late = 0
        self.on_late: Callable[[int, Triple], None] | None = None
        # rsp run's hook: (query, index of the late element in the list given to push / push_sorted)
        self._late_at: Callable[[QueryHandle, int], None] | None = None
        self.compiled = Compiled(compile_expr, compile_filter, compile_aggregate, order_key)
        self.scopes = Scopes()
        """The blank-node scope of every source (:mod:`rsp.io.bnodes`)."""
        self._graphs = 0
        self.graph_files: dict[str, str] = {}
        """IRI (without brackets) -> local file of a FROM / FROM NAMED graph (:meth:`add_graph`)"""

    def add_graph(self, iri: str, path: str | Path) -> None:
        """Give the graph a query names with ``FROM <iri>`` or ``FROM NAMED <iri>`` as a local file (rsp
        never fetches IRIs); use it before registering the query."""
        self.graph_files[iri[1:-1] if iri.startswith("<") else iri] = str(path)

    def load_ontology(self, path: str | Path) -> int:
        """Load an ontology or static graph (Turtle, RDF/XML, N-Triples, JSON-LD); returns its size.
        Load ontologies before registering the queries that use them. Its blank nodes are its own: no
        other graph or stream shares them."""
        from rsp.background import load_ontology

        triples = self._static_graph(load_ontology(path), path)
        self.static.extend(triples)
        return len(triples)

    def _static_graph(self, triples: list[Triple], path: str | Path) -> list[Triple]:
        """A static graph's triples with blank nodes in a scope of their own (one per graph loaded)."""
        self._graphs += 1
        return self.scopes.relabel(triples, f"graph {self._graphs} {path}")

    def register(self, text: str, file: str = "<query>", name: str | None = None) -> QueryHandle:
        """Parse, check and compile a query; its results flow from the next pushed element on.

        ``name`` names a query written without REGISTER (a bare SELECT, CONSTRUCT or ASK); by default it
        is the file's name without its extension. A text with several queries: :meth:`register_all`.
        What the checks find that is not an error is in the handle's :attr:`~QueryHandle.warnings`.

        >>> engine = Engine()
        >>> query = engine.register('''REGISTER QUERY Q AS SELECT ?s ?x
        ...     FROM STREAM <http://ex.org/s> [RANGE 1s STEP 5s] WHERE { ?s ?p ?o }''')
        >>> len(query.warnings)  # the first: STEP (5000 ms) is larger than RANGE (1000 ms) …
        2
        >>> print(query.warnings[1])
        <query>:1:31: warning: ?x is projected but the WHERE clause never binds it: it is always unbound
        """
        from rsp.query.parser import parse_and_validate

        query, warnings = parse_and_validate(text, file, name)
        handle = self._register(query, file)
        handle.warnings = tuple(warnings)
        return handle

    def register_all(self, text: str, file: str = "<query>", name: str | None = None) -> list[QueryHandle]:
        """Register every query of ``text`` (several REGISTER statements, or one bare query); each has its
        own results, told apart by their ``query`` field, and its own :attr:`~QueryHandle.warnings`."""
        from rsp.query.parser import parse_all_and_validate

        pairs = parse_all_and_validate(text, file, name)
        taken = {handle.name for handle in self.queries}
        for query, _warnings in pairs:
            if query.name in taken:
                message = f"a query called {query.name} is registered already"
                raise RspError(message, query.pos or Position(file))
        handles = []
        for query, warnings in pairs:
            handle = self._register(query, file)
            handle.warnings = tuple(warnings)
            handles.append(handle)
        return handles

    def _load_graph(self, iri: str, file: str, clause: str) -> list[Triple]:
        from rsp.background import load_ontology as load_graph

        path = _resolve_graph(iri, file, self.graph_files, clause)
        if not path.exists():
            given = iri[1:-1] in self.graph_files
            where = f"--graph {iri[1:-1]}={path}" if given else f"no such local file {path}"
            raise RspError(
                f"{clause} {iri}: {where} does not exist (rsp never fetches IRIs; give the graph with "
                f"--graph {iri[1:-1]}=FILE)",
                Position(file),
            )
        return self._static_graph(load_graph(path), path)

    def _register(self, query: ast.Query, file: str) -> QueryHandle:
        from rsp.background import Regime, background_program
        from rsp.engine import Engine as LarsEngine
        from rsp.query.expr import compile_filter
        from rsp.query.reflexive import observes_reflexive, static_reflexive, stream_rules
        from rsp.query.text import expr_text
        from rsp.query.translate import slot_rule, translate

        translation = translate(query, compile_filter, expr_text)
        static = list(self.static)
        for graph in query.graphs:
            static.extend(self._load_graph(graph, file, "FROM"))
        named = {iri: self._load_graph(iri, file, "FROM NAMED") for iri in query.named_graphs}
        regime = Regime(self.entailment)
        background = background_program(regime, static, pred="g")
        rules = list(translation.rules)
        facts: list[Rule] = list(background.facts)
        graph_preds = set(translation.graphs.values())
        closure = set(background.closure)
        background_rules = list(background.rules)
        if regime is Regime.RDFS and observes_reflexive(query):
            closure |= static_reflexive(closure)
            background_rules.extend(stream_rules("g"))
        for iri, pred in translation.named_graphs.items():  # static: their closure is computed once
            graph_preds.discard(pred)
            named_closure = set(background_program(regime, static + named[iri], pred="g").closure)
            if regime is Regime.RDFS and observes_reflexive(query):
                named_closure |= static_reflexive(named_closure)
            facts.extend(Rule(Head(Atom(pred, triple))) for triple in named_closure)
        for pred in sorted(graph_preds):
            rules.extend(_rename(r, {"g": pred}) for r in background_rules)
            facts.extend(Rule(Head(Atom(pred, triple))) for triple in closure)
        for name, slot_pred in translation.slot_graphs.items():
            size = translation.windows[name][0].range // translation.slot - 1
            for rule in background_rules:
                copy = slot_rule(rule, "g", slot_pred, size)
                if copy is not None:
                    rules.append(copy)
            facts.extend(Rule(Head(Atom(slot_pred, triple))) for triple in closure)
        program = check(Program(tuple(rules) + tuple(facts), (), file))
        # a graph's triples are read only by the rules, unless a property path reads the graph itself
        # (the answer comes from the patterns' tables): background rules that derive nothing a table
        # needs sleep (rsp/engine/relevance.py)
        graphs = {"g", *translation.graphs.values(), *translation.slot_graphs.values()}
        hidden = graphs - {table.pred for table in translation.tables.values()}
        handle = QueryHandle(self, query, translation, program, LarsEngine(program, hidden=hidden))
        handle.static = static  # the asserted static triples (ontologies, FROM graphs), for explanations
        # the entailment regime's rules over the window graph g and the closed static graph they work
        # with (rsp spark --partition-by checks them)
        handle.background_rules = tuple(background_rules)
        handle.static_closure = frozenset(closure)
        self.queries.append(handle)
        return handle

    def push(
        self,
        triples: Iterable[Triple],
        time: int,
        stream: str | None = None,
        *,
        source: str | None = None,
        plain: bool = False,
    ) -> None:
        """Add stream elements with timestamp ``time`` (ms) to ``stream`` (default: the only stream
        the registered queries read).

        Terms are strings in N-Triples syntax (``<http://…>``, ``_:b``, ``"30"^^<…#integer>``) or rdflib
        terms; a malformed term, or a triple that is not three terms, is refused with a
        :class:`~rsp.errors.StreamError` naming the triple, the position and what is expected (nothing
        of the call is added then). ``plain=True`` says the terms are valid N-Triples strings already and
        skips that check (rsp's own readers, which validated their lines).

        Each triple is an element (DESIGN.md §3), arriving in list order. Elements need not come in
        time order: an element older than the last instant a query closed is late for it (counted in
        :attr:`late`, then dropped or, with ``late="fail"``, raised); any other element joins every
        window that covers its time, as if it had come in order. So when the first triple, before any
        instant closed, moves the first instant back behind a newer element, the instants up to that
        element close, and the other triples of the call, older than them, are late.

        Blank nodes are scoped to ``source`` (any string naming where the elements come from; by
        default the stream): ``_:n`` pushed from two sources is two nodes, from one source one node.
        """
        if plain:
            triples = triples if isinstance(triples, list) else list(triples)
        else:
            time = _checked_time(time, "push")
            triples = _checked_triples(triples, [time], "push")
        if triples and self.scopes.blank(triples):  # the scope's name is made only when needed
            triples = self.scopes.relabel(triples, self._source(stream, source))
        for handle in self.queries:
            pred = self._window_pred(handle, stream)
            if pred is None:
                continue
            if handle.closed_until is not None and time < handle.closed_until:
                self._late(handle, [time] * len(triples), triples)
                continue
            rest = handle._add(time, pred, triples)
            if rest:
                self._late(handle, [time] * len(rest), rest, len(triples) - len(rest))

    def push_sorted(
        self,
        times: Sequence[int],
        triples: Sequence[Triple],
        stream: str | None = None,
        *,
        source: str | None = None,
        plain: bool = False,
    ) -> None:
        """Add many stream elements at once: ``triples[i]`` at ``times[i]`` ms, the times in order.

        The same as :meth:`push` for each run of equal times (each triple an element, in list
        order, as there), with less work per element (a bulk
        reader's entry point: ``rsp spark`` hands micro-batches over this way), except that late
        elements reach :attr:`on_late` query by query. Terms are strings in N-Triples syntax, checked
        as by :meth:`push` unless ``plain``; times out of order are refused.

        >>> engine = Engine()
        >>> query = engine.register('''REGISTER QUERY N AS SELECT (COUNT(*) AS ?n)
        ...     FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }''')
        >>> triples = [("<http://ex.org/a>", "<http://ex.org/p>", f"<http://ex.org/{o}>") for o in "bcd"]
        >>> engine.push_sorted([100, 200, 1500], triples)
        >>> engine.close()
        >>> [(r.time, r.bindings[0]["n"][:3]) for r in query]
        [(1000, '"2"'), (2000, '"1"')]
        """
        if len(times) != len(triples):
            raise ValueError(f"push_sorted: {len(times)} times for {len(triples)} triples")
        if not triples:
            return
        if not plain:
            times = _checked_times(times)
            triples = _checked_triples(triples, times, "push_sorted")
        triples = self.scopes.relabel(
            triples if isinstance(triples, list) else list(triples), self._source(stream, source)
        )
        for handle in self.queries:
            pred = self._window_pred(handle, stream)
            if pred is not None:
                handle._add_sorted(times, triples, pred)

    def _source(self, stream: str | None, source: str | None) -> str:
        """The blank-node scope of pushed elements: ``source`` if given, else the stream's IRI."""
        if source is not None:
            return str(source)
        if stream is None:
            streams = {iri for handle in self.queries for iri in handle.translation.streams}
            return streams.pop() if len(streams) == 1 else "<>"
        return stream if stream.startswith("<") else f"<{stream}>"

    @staticmethod
    def _window_pred(handle: QueryHandle, stream: str | None) -> str | None:
        """The predicate a query reads ``stream`` through (None: the query does not read it)."""
        streams = handle.translation.streams
        if stream is None:
            if len(streams) != 1:
                raise StreamError(f"query {handle.name} reads several streams: say which one")
            return next(iter(streams.values()))
        return streams.get(stream if stream.startswith("<") else f"<{stream}>")

    def _late(
        self, handle: QueryHandle, times: Sequence[int], triples: Sequence[Triple], start: int = 0
    ) -> None:
        """Elements older than an instant ``handle`` already closed: counted, then the policy.
        ``start``: the index of the first of them in the list given to push / push_sorted."""
        self.late += len(triples)
        if self._late_at is not None:
            for index in range(start, start + (1 if self.late_policy == "fail" else len(triples))):
                self._late_at(handle, index)
        if self.late_policy == "fail":
            raise LateElementError(
                f"late element at {times[0]}: instant {handle.closed_until} is already closed",
                time=times[0],
                instant=handle.closed_until,
            )
        if self.on_late is not None:
            for time, triple in zip(times, triples, strict=True):
                self.on_late(time, triple)

    def advance(self, time: int) -> None:
        """Declare that no element older than ``time`` will come: close the instants up to it."""
        for handle in self.queries:
            handle.advance(time)

    def close(self) -> None:
        """End of the streams: close every instant up to the first one after the last element."""
        for handle in self.queries:
            handle.finish()
