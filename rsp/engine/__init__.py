"""The incremental engine: annotated formula tables, compiled semi-naive plans, expiry by horizon; and
:func:`run`, a LARS program over a stream of atoms.

>>> from rsp.engine import run
>>> for t, atoms in run("q(X) :- [2] <> p(X).", [(0, "p", ("a",)), (4, "p", ("b",))]):
...     print(t, atoms)
0 ['q(a)']
1 ['q(a)']
2 ['q(a)']
3 []
4 ['q(b)']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rsp.engine.evaluator import Engine
from rsp.io.atoms import AtomStream
from rsp.lars import CheckedProgram, check, parse
from rsp.lars.model import Program, format_atom

__all__ = ["Engine", "run"]


def run(
    program: CheckedProgram | Program | str,
    stream: AtomStream | Iterable[tuple[int, str, tuple]],
    *,
    impossible: bool = True,
) -> Iterator[tuple[int, list[str]]]:
    """Evaluate ``program`` over ``stream``; yield (t, sorted output atoms) for every time point.

    ``impossible`` switches Laser2's impossible-derivation technique on or off (results are equal).
    """
    if isinstance(program, str):
        program = parse(program)
    elif isinstance(program, Program):
        program = check(program)
    engine = Engine(program, impossible=impossible)
    if not isinstance(stream, AtomStream):
        stream = AtomStream.from_elements(stream)
    for t in engine.run(stream):
        yield t, sorted(format_atom(p, a) for p, a in engine.output())
