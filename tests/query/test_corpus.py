"""The corpus of continuous queries others wrote (tests/data/corpus, see its README): every query is
accepted as written, i.e. it parses, validates and translates to LARS; those of ``refused/`` are faulty
as written and refused with the message that names their fault."""

from __future__ import annotations

import pytest
from paths import TEST_DATA

from rsp.errors import QuerySyntaxError
from rsp.query.answers.expr import compile_filter
from rsp.query.syntax.parser import parse_queries
from rsp.query.syntax.text import expr_text
from rsp.query.translation.translate import translate

CORPUS = TEST_DATA / "corpus"
ALL = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.glob("*/*.rq"))
# refused as written: query -> what the refusal must say
REFUSED = {
    "refused/rspbaseline_rspquery.rq": (
        "32:5: WINDOW <http://streamreasoning.org/iminds/massif/tmp> is not declared",
        "declared windows: <http://streamreasoning.org/iminds/massif/smk>",
    ),
}
QUERIES = [q for q in ALL if not q.startswith("refused/")]
NOT_YET: dict[str, str] = {}


def test_corpus_is_large_enough() -> None:
    assert len(QUERIES) >= 40
    dialects = {q.split("/")[0] for q in QUERIES}
    assert {"cqels", "csparql", "rspql", "jasper"} <= dialects


def test_readme_names_every_query() -> None:
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    missing = [q for q in ALL if f"`{q}`" not in readme]
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


def test_every_refused_query_has_its_expected_refusal() -> None:
    assert sorted(REFUSED) == [q for q in ALL if q.startswith("refused/")]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_query_names_its_fault(name: str) -> None:
    path = CORPUS / name
    with pytest.raises(QuerySyntaxError) as caught:
        for query in parse_queries(path.read_text(encoding="utf-8"), str(path)):
            translate(query, compile_filter, expr_text)
    for part in REFUSED[name]:
        assert part in str(caught.value)


def test_published_now_computed_every_and_named_stream_forms_are_in_the_corpus() -> None:
    texts = {q: (CORPUS / q).read_text(encoding="utf-8") for q in QUERIES}
    assert sum("[NOW]" in t for t in texts.values()) >= 3
    assert sum("FROM NAMED STREAM" in t for t in texts.values()) >= 3
    assert any("COMPUTED EVERY" in t for t in texts.values())
