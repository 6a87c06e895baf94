"""The corpus of continuous queries others wrote (tests/data/corpus, see its README): every query is
accepted as written, i.e. it parses, validates and translates to LARS."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp.query.expr import compile_filter
from rsp.query.parser import parse_queries
from rsp.query.text import expr_text
from rsp.query.translate import translate

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
QUERIES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("*/*.rq"))
NOT_YET: dict[str, str] = {}


def test_corpus_is_large_enough() -> None:
    assert len(QUERIES) >= 40
    dialects = {q.split("/")[0] for q in QUERIES}
    assert {"cqels", "csparql", "rspql", "jasper"} <= dialects


def test_readme_names_every_query() -> None:
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    missing = [q for q in QUERIES if f"`{q}`" not in readme]
    assert not missing, f"queries without a source line in tests/data/corpus/README.md: {missing}"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(q, marks=pytest.mark.xfail(reason=NOT_YET[q], strict=True)) if q in NOT_YET else q
        for q in QUERIES
    ],
)
def test_corpus_query_is_accepted(name: str) -> None:
    path = CORPUS / name
    queries = parse_queries(path.read_text(encoding="utf-8"), str(path))
    assert queries
    for query in queries:
        translation = translate(query, compile_filter, expr_text)
        assert translation.rules, f"{name}: {query.name} translates to no rule"
