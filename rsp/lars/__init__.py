"""LARS programs: the rule model, the ``.lars`` syntax, the checking passes and the public API (the
incremental engine that runs them is :mod:`rsp.engine`, with :func:`rsp.engine.run`).

>>> from rsp.lars import parse
>>> print(parse("q(X) :- [2] <> p(X)."))
q(X) :- [2] <> p(X).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rsp.errors import Position, ProgramError, read_source
from rsp.lars.model import Program, Sig
from rsp.lars.safety import check_safety
from rsp.lars.stratify import Stratum, stratify
from rsp.lars.windows import check_windows

__all__ = ["CheckedProgram", "check", "parse", "load"]


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
        text = read_source(path, ProgramError, "program")
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
