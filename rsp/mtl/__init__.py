"""DatalogMTL stream reasoning (the MeTeoR-Str system): MeTeoR's syntax, the forward-propagation check
and normal form, and a streaming engine that reports results as soon as they are final.

>>> from rsp.mtl import parse, run
>>> program = parse("Alarm(X):-Boxminus[0,2]Hot(X)\\nWarm(X):-Diamondminus[0,1]Hot(X)")
>>> for time, facts in run(program, ["Hot(a)@[0,3]", "Hot(b)@1", "Hot(b)@2", "Hot(c)@[5,6)"]):
...     print(time, facts)
5 ['Alarm(a)@[2,3]', 'Warm(a)@[0,4]', 'Warm(b)@[1,3]']
6 ['Warm(c)@[5,6]']

(The first results leave when ``Hot(c)`` arrives at 5: the model before 5 is final then. With
``Boxminus[0,2]``, the punctual facts of ``b`` at 1 and 2 are not enough: the box needs ``Hot(b)``
at every rational of ``[t−2, t]``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from rsp.errors import Position, ProgramError, read_source
from rsp.mtl.engine import Engine
from rsp.mtl.facts import parse_fact
from rsp.mtl.intervals import Interval, fmt
from rsp.mtl.model import Program, format_atom
from rsp.mtl.normalise import Normalised, normalise

__all__ = ["Engine", "Normalised", "load", "parse", "run", "format_fact"]


def parse(text: str, source: str = "<string>") -> Normalised:
    """Parse, check (forward propagation, safety) and normalise MeTeoR rule text."""
    from rsp.mtl.syntax import parse_program

    return normalise(parse_program(text, source))


def load(path: str | Path, *, cache: bool = True) -> Normalised:
    """:func:`parse` a program file; errors carry the file name. With ``cache``, a program normalised
    before from the same text comes from the program cache (:mod:`rsp.mtl.cache`) without lark."""
    from rsp.mtl import cache as program_cache

    source = str(path)
    try:
        text = read_source(path, ProgramError, "program")
    except FileNotFoundError:
        raise ProgramError("cannot read program: no such file", Position(source)) from None
    except OSError as err:
        raise ProgramError(f"cannot read program: {err.strerror}", Position(source)) from None
    if cache:
        program = program_cache.get(source, text)
        if program is not None:
            return program
    program = parse(text, source)
    if cache:
        program_cache.put(source, text, program)
    return program


def format_fact(pred: str, args: tuple, iv: Interval) -> str:
    """``P(a,b)@[1,3)``."""
    return f"{format_atom(pred, args)}@{fmt(iv)}"


def run(
    program: Normalised | Program | str,
    facts: Iterable[str | tuple],
    *,
    horizon=None,
    points: Iterable | None = None,
    outputs: Iterable[str] | None = None,
) -> Iterator[tuple[object, list[str]]]:
    """Evaluate ``program`` over ``facts`` (fact strings ``P(a)@[1,2)`` or ``(pred, args, interval)``
    tuples, in the order of their left ends); yield ``(time, sorted facts)`` as they become final:
    maximal intervals ``P(a)@[1,3)``, or with ``points`` the atoms holding at each point."""
    if isinstance(program, str):
        program = parse(program)
    elif isinstance(program, Program):
        program = normalise(program)
    engine = Engine(program, outputs=outputs, horizon=horizon, points=points)
    for fact in facts:
        pred, args, iv = parse_fact(fact) if isinstance(fact, str) else fact
        yield from _shown(engine.push(pred, args, iv), points is not None)
    yield from _shown(engine.finish(), points is not None)


def _shown(results: list, points: bool) -> Iterator[tuple[object, list[str]]]:
    for time, items in results:
        if points:
            yield time, sorted(format_atom(p, a) for p, a in items)
        else:
            yield time, sorted(format_fact(p, a, iv) for p, a, iv in items)
