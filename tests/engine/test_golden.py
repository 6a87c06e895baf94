"""Golden cases from the Laser, Laser2 and Ticker papers and Ticker-style corner cases, with
expected outputs worked out by hand (the reasoning is in each program's comments)."""

from __future__ import annotations

import pytest
from golden_cases import GOLDEN, case_names, expected

from rsp.engine import run
from rsp.io.atoms import read_atom_stream
from rsp.lars import load


@pytest.mark.parametrize("impossible", [True, False], ids=["impossible-on", "impossible-off"])
@pytest.mark.parametrize("name", case_names())
def test_engine_matches_golden(name: str, impossible: bool) -> None:
    program = load(GOLDEN / name / "program.lars")
    stream = read_atom_stream(GOLDEN / name / "stream.txt")
    assert list(run(program, stream, impossible=impossible)) == expected(name)


@pytest.mark.parametrize("name", case_names())
def test_naive_matches_golden(name: str) -> None:
    from lars_naive import evaluate

    program = load(GOLDEN / name / "program.lars")
    stream = read_atom_stream(GOLDEN / name / "stream.txt")
    assert evaluate(program, stream) == expected(name)


def test_golden_cases_exist() -> None:
    assert {
        "laser_join",
        "laser2_shutdown",
        "cooling",
        "ticker_caching",
        "chain",
        "tuple_windows",
        "not_window",
        "shifted_at",
        "arity_predicates",
        "several_horizons",
        "recursion_box",
    } <= set(case_names())


def test_plain_window_warns() -> None:
    program = load(GOLDEN / "plain_window" / "program.lars")
    assert len(program.warnings) == 1
    assert "window [3] over 'i'" in program.warnings[0]
    assert "plain heads" in program.warnings[0]
