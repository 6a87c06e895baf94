"""Ticker's two scenarios as examples (examples/caching: A1 time windows, A2 tuple windows;
examples/content-retrieval: B on the Abilene routers, setups B1 and B2): both answer-set modes on short
streams against the references — the stratified evaluator for the caching strategy (it is stratified),
the guess-and-check reference (tests/oracles/asp_reference.py) on a small content-retrieval stream, and mode
clingo's every model for mode tms on the generated streams."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from asp_reference import answer_streams as reference
from lars_naive import evaluate
from paths import ROOT

from rsp.asp import answer_streams, load
from rsp.io.atoms import AtomStream, read_atom_lines, read_atom_stream
from rsp.lars import load as load_stratified
from rsp.lars.parser import parse_program

EXAMPLES = ROOT / "examples"
CONTENT = EXAMPLES / "content-retrieval"


def _generator(folder: str):
    spec = importlib.util.spec_from_file_location(f"{folder}_generate", EXAMPLES / folder / "generate.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("program", ["caching.lars", "caching-tuple.lars"])
def test_caching_setups_in_both_modes_equal_the_stratified_evaluator(program: str) -> None:
    """A1 and A2 on a generated stream: the one model of each mode is the stratified semantics' answer."""
    stream = AtomStream.from_elements(_generator("caching").generate(points=60, window=3, seed=2))
    expected = [
        (t, [atoms]) for t, atoms in evaluate(load_stratified(EXAMPLES / "caching" / program), stream)
    ]
    strategies = {a for _t, models in expected for a in models[0] if a in ("lfu", "lru", "fifo", "random")}
    assert len(strategies) >= 3, "the stream moves the cache through several strategies"
    for mode in ("tms", "clingo"):
        assert (
            list(answer_streams(load(EXAMPLES / "caching" / program), stream, mode=mode, models=0))
            == expected
        )


# hand-made: levels of atla's neighbours hstn and ipls; i1 requested at atla; ipls down at 4
SMALL = [
    "0 lev(hstn,2)", "0 lev(ipls,2)", "0 cache(i1,hstn)", "1 cache(i1,ipls)", "2 req(i1,atla)",
    "3 lev(hstn,1)", "4 down(ipls)", "5 lev(hstn,2)",
]  # fmt: skip


def test_content_retrieval_against_the_reference() -> None:
    program = load(CONTENT / "content.lars")
    stream = read_atom_lines(SMALL)
    expected = reference(parse_program((CONTENT / "content.lars").read_text()), stream)
    chosen = [
        sorted(tuple(a[11:-1] for a in m if a.startswith("getFrom")) for m in models)
        for _t, models in expected
    ]
    # by hand: nothing requested at 0 and 1; at 2 either level-2 source; ipls once hstn dropped to
    # level 1 (3); hstn once ipls is down (4, 5)
    h, i = ("atla,hstn",), ("atla,ipls",)
    assert chosen == [[()], [()], [h, i], [i], [h], [h]]
    assert [len(models) for _t, models in expected] == [1, 1, 2, 1, 1, 1]
    for mode in ("tms", "clingo"):
        assert list(answer_streams(program, stream, mode=mode, models=0)) == expected


@pytest.mark.parametrize("setup, points", [("B1", 40), ("B2", 15)])
def test_content_retrieval_setups_tms_against_clingo(setup: str, points: int) -> None:
    """Generated B1 and B2 streams: tms's every model equals clingo's, tms's single model is one of them
    and stays while it is still one (inertia), and several time points have several models."""
    elements = _generator("content-retrieval").generate(setup, points, seed=3)
    stream = AtomStream.from_elements(elements)
    program = load(CONTENT / "content.lars")
    expected = list(answer_streams(program, stream, mode="clingo", models=0))
    assert sum(len(models) > 1 for _t, models in expected) >= 3
    assert list(answer_streams(program, stream, mode="tms", models=0)) == expected
    previous = None
    for t, (model,) in answer_streams(program, stream, mode="tms", models=1):
        assert model in dict(expected)[t]
        if previous in dict(expected)[t]:
            assert model == previous, f"t={t}: the previous model was dropped"
        previous = model


def test_content_generator_rebuilds_the_bundled_stream() -> None:
    done = subprocess.run(
        [sys.executable, str(CONTENT / "generate.py")], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == (CONTENT / "requests.stream").read_text()
    assert read_atom_stream(CONTENT / "requests.stream").end == 39
