"""What the runtime's Python API checks of what it is given: timestamps (integer ms, not negative, in
order where they must be) and triples (three terms in N-Triples syntax, or rdflib terms, each in its
place); a :class:`rsp.errors.StreamError` names the first bad one, its position and what is expected."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from numbers import Integral
from operator import le

from rsp.errors import StreamError
from rsp.io.ntriples import FAST_TERM, term_problem

Triple = tuple[str, str, str]


_ROLES = ("subject", "predicate", "object")
_EXPECTED = {
    "subject": "an IRI or blank node in N-Triples syntax, e.g. <http://ex.org/a> or _:b1",
    "predicate": "an IRI in N-Triples syntax, e.g. <http://ex.org/p>",
    "object": "an IRI, blank node or literal in N-Triples syntax, e.g. <http://ex.org/a>, _:b1, "
    '"text", "text"@en or "30"^^<http://www.w3.org/2001/XMLSchema#integer>',
}


def checked_time(time, where: str) -> int:
    """A timestamp given to the API: an integer number of ms (a NumPy integer too), not negative."""
    if isinstance(time, bool) or not isinstance(time, Integral):
        raise StreamError(f"{where}: the time {time!r} is not an integer number of milliseconds")
    if time < 0:
        raise StreamError(f"{where}: the time {time} is negative (the timeline starts at 0 ms)")
    return int(time)


def checked_times(times: Sequence[int]) -> list[int]:
    """push_sorted's times: integers ≥ 0 in order (checked at C speed when they are plain ints)."""
    times = list(times)
    if set(map(type, times)) != {int} or min(times) < 0:
        times = [checked_time(time, "push_sorted") for time in times]
    if not all(map(le, times, islice(times, 1, None))):
        i = next(i for i in range(1, len(times)) if times[i] < times[i - 1])
        raise StreamError(
            f"push_sorted: times must be in order, but element {i + 1} at {times[i]} ms comes "
            f"after one at {times[i - 1]} ms (sort them, or use push)"
        )
    return times


def checked_triples(triples: Iterable, times: Sequence[int], where: str) -> list[Triple]:
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
