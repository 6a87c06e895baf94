"""LARS programs: the rule model, the ``.lars`` syntax, the checking passes and the public API.

>>> from rsp.lars import parse, run
>>> prog = parse("q(X) :- [2] <> p(X).")
>>> for t, atoms in run(prog, [(0, "p", ("a",)), (4, "p", ("b",))]):
...     print(t, atoms)
0 ['q(a)']
1 ['q(a)']
2 ['q(a)']
3 []
4 ['q(b)']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rsp.errors import Position, ProgramError
from rsp.lars.model import Program, Sig, format_atom
from rsp.lars.safety import check_safety
from rsp.lars.stratify import Stratum, stratify
from rsp.lars.windows import check_windows

if TYPE_CHECKING:
    from rsp.io.atoms import AtomStream

__all__ = ["CheckedProgram", "check", "parse", "load", "run"]


@dataclass(frozen=True)
class CheckedProgram:
    """A program that passed every check, with its strata (evaluation order) and warnings."""

    program: Program
    strata: tuple[Stratum, ...]
    warnings: tuple[str, ...]

    @property
    def intensional(self) -> frozenset[Sig]:
        """The predicates (name and arity) rules derive: what the output stream shows."""
        return frozenset(self.program.intensional_predicates())

    def __str__(self) -> str:
        return str(self.program)


def check(program: Program) -> CheckedProgram:
    """Run the passes (safety, windows, stratification); raises :class:`rsp.errors.ProgramError`."""
    check_safety(program)
    warnings = check_windows(program)
    strata = stratify(program)
    return CheckedProgram(program, tuple(strata), tuple(warnings))


def parse(text: str, source: str = "<string>") -> CheckedProgram:
    """Parse and check ``.lars`` text."""
    from rsp.lars.parser import parse_program  # imported on use: lark is not needed for cached programs

    return check(parse_program(text, source))


def load(path: str | Path, *, cache: bool = True) -> CheckedProgram:
    """Parse and check a ``.lars`` file; errors carry the file name.

    With ``cache``, a program checked before from the same text is taken from the program cache
    (:mod:`rsp.lars.cache`) instead of being parsed again.
    """
    from rsp.lars import cache as program_cache

    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProgramError(
            "cannot read program: no such file (give the path of a .lars file)", Position(source)
        ) from None
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


def _as_stream(stream):
    from rsp.io.atoms import AtomStream

    return stream if isinstance(stream, AtomStream) else AtomStream.from_elements(stream)


def run(
    program: CheckedProgram | Program | str,
    stream: AtomStream | Iterable[tuple[int, str, tuple]],
    *,
    impossible: bool = True,
) -> Iterator[tuple[int, list[str]]]:
    """Evaluate ``program`` over ``stream``; yield (t, sorted output atoms) for every time point.

    ``impossible`` switches Laser2's impossible-derivation technique on or off (results are equal).
    """
    from rsp.engine import Engine

    if isinstance(program, str):
        program = parse(program)
    elif isinstance(program, Program):
        program = check(program)
    engine = Engine(program, impossible=impossible)
    for t in engine.run(_as_stream(stream)):
        yield t, sorted(format_atom(p, a) for p, a in engine.output())
