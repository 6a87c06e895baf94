"""Answer streams of LARS programs whose negation need not be stratified (the Ticker system): zero, one
or several models at every time point, computed by clingo (mode ``clingo``) or by a truth maintenance
network (mode ``tms``). Stratified programs keep :mod:`rsp.engine`; this package is for the rest.

>>> from rsp.asp import parse, answer_streams
>>> program = parse("a :- [2] <> p, not b.\\nb :- not a.")
>>> for t, models in answer_streams(program, [(0, "p", ()), (3, "q", ())], mode="clingo", models=0):
...     print(t, models)
0 [['a'], ['b']]
1 [['a'], ['b']]
2 [['a'], ['b']]
3 [['b']]
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

from rsp.asp.program import AspProgram, load, parse, prepare
from rsp.io.atoms import AtomStream

__all__ = ["AspProgram", "Mode", "answer_streams", "load", "parse", "prepare", "reasoner"]


class Mode(enum.Enum):
    """How answer streams are computed."""

    CLINGO = "clingo"
    TMS = "tms"


def reasoner(program: AspProgram, start: int, mode: Mode | str = Mode.CLINGO, models: int = 1):
    """A reasoner whose ``step(t, batch)`` gives the models at t (``models``: how many, 0 for all)."""
    mode = Mode(mode)
    if mode is Mode.CLINGO:
        from rsp.asp.clingo_mode import ClingoReasoner

        return ClingoReasoner(program, start, models)
    from rsp.asp.tms import TmsReasoner

    return TmsReasoner(program, start, models)


def answer_streams(
    program: AspProgram | str,
    stream: AtomStream | Iterable[tuple[int, str, tuple]],
    *,
    mode: Mode | str = Mode.CLINGO,
    models: int = 1,
) -> Iterator[tuple[int, list[list[str]]]]:
    """For every time point of the stream's timeline, the models (sorted lists of the intensional atoms
    holding at t; the list sorted; ``[]`` when there is no answer stream at t)."""
    if isinstance(program, str):
        program = parse(program)
    if not isinstance(stream, AtomStream):
        stream = AtomStream.from_elements(stream)
    if stream.start is None or stream.end is None:
        return
    solver = reasoner(program, stream.start, mode, models)
    expected = stream.start
    for t, batch in stream.batches():
        while expected < t:
            yield expected, solver.step(expected, [])
            expected += 1
        yield t, solver.step(t, list(batch))
        expected = t + 1
