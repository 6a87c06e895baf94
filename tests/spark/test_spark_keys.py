"""How Spark keys a partitioned query's triples (rsp/spark/keys.py, rsp/spark/hashing.py):

* the key each line gets — Spark's parse (:func:`rsp.spark.source.parse_lines`) and key column
  (:func:`rsp.spark.keys.key_column`) for the lines Spark's regex takes, rsp's parser
  (:func:`rsp.spark.syntax.recheck_triple`) and :meth:`KeyPlan.key` for the others — equals
  :meth:`rsp.query.translation.partition.KeyPlan.key` of the triple rsp's N-Triples parser reads, on
  generated plans and lines (one local SparkSession);
* the bucket Spark gives a key (``pmod(hash(key), n)``) is :func:`rsp.spark.hashing.partition_of`'s,
  which places the keys of the lines only rsp's parser reads, on generated strings.
"""

from __future__ import annotations

import json

import pytest
from fuzzing import examples, saved_cases, saved_on_failure
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paths import GOLDEN_SPARK

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from pyspark.sql import functions as F  # noqa: E402

from rsp.background.vocab import RDF_TYPE  # noqa: E402
from rsp.query.translation.partition import KeyPlan  # noqa: E402
from rsp.spark.hashing import partition_of, spark_hash  # noqa: E402
from rsp.spark.keys import key_column  # noqa: E402
from rsp.spark.source import parse_lines  # noqa: E402
from rsp.spark.syntax import recheck_triple  # noqa: E402

pytest_plugins = ["spark_conftest"]
pytestmark = [pytest.mark.spark]
GOLDEN_ROOT = GOLDEN_SPARK

EX = "http://ex.org/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
BUCKETS = 3
"""The buckets the keys are spread over (Spark's ``pmod(hash(key), BUCKETS)``)."""
REJECT = None
"""The key of a malformed line in the rows compared (rsp's parser reports it; it has no key)."""

# -- the key column ------------------------------------------------------------------------------------
PREDICATES = [f"<{EX}p>", f"<{EX}q>", f"<{EX}r>", RDF_TYPE]
CLASSES = [f"<{EX}A>", f"<{EX}B>", f"<{EX}Ç>"]
TERMS = [
    f"<{EX}a>",
    f"<{EX}b>",
    f"<{EX}é>",
    "_:x",
    '"a b"',
    '"a"@en',
    f'"7"^^{INT}',
    '"say \\"hi\\""',
    f"<{EX}b\\u0075s>",  # an escape: rsp's parser reads it, Spark's regex does not take it
    '"a . # 5"',  # the line's time comment written inside the literal
    *CLASSES,
]


@st.composite
def _plans(draw) -> KeyPlan:
    predicates = draw(st.lists(st.sampled_from(PREDICATES), unique=True))
    classes = draw(st.lists(st.sampled_from(CLASSES), unique=True))
    place = st.sampled_from([0, 2])
    return KeyPlan("k", tuple((p, draw(place)) for p in predicates), tuple((c, draw(place)) for c in classes))


@st.composite
def _lines(draw) -> str:
    s, o = draw(st.sampled_from(TERMS)), draw(st.sampled_from(TERMS))
    p = draw(st.sampled_from([*PREDICATES, RDF_TYPE, RDF_TYPE]))  # rdf:type keyed by class or predicate
    if p == RDF_TYPE and draw(st.booleans()):
        o = draw(st.sampled_from(CLASSES))
    time = draw(st.integers(0, 10**6))
    return draw(
        st.sampled_from([
            f"{s} {p} {o} . # {time}",
            f"{s}  {p}\t{o}  .   #  {time}",
            f"{s}{p}{o}. # {time}",  # no space between the terms
            f"{s} {p} {o}. # {time}",
            f"{s} {p} {o} . # {time} ms",  # a word after the time: rsp's parser takes it
            f"{s} {p} {o} <{EX}x> . # {time}",  # four terms: malformed
            f"{s} {p} {o} .",  # no time: malformed
            f"{s} {p} . # {time}",  # two terms: malformed
            f"{s} {p} {o} . # t{time}",  # a comment that is not a time
            "# a comment",
            "",
        ])
    )  # fmt: skip


def _expected_keys(plan: KeyPlan, lines: list[str]) -> list[tuple]:
    """From the definition: rsp's parser reads each line (blank and comment lines left out, malformed
    ones kept under the REJECT key with their text), and a triple's key is KeyPlan.key (None: left out)."""
    rows = []
    for line in lines:
        try:
            parsed = recheck_triple(line)
        except ValueError:
            rows.append((REJECT, None, None, None, None, line, True))
            continue
        if parsed is None:
            continue
        time, (s, p, o) = parsed
        key = plan.key(s, p, o)
        if key is not None:
            rows.append((key, time, s, p, o, None, False))
    return sorted(rows, key=repr)


def _keys_case(plan: KeyPlan, lines: list[str]) -> dict[str, str]:
    return {"plan.json": json.dumps({"positions": plan.positions, "classes": plan.classes}),
            "stream.nt": "".join(f"{line}\n" for line in lines)}  # fmt: skip


@pytest.mark.generated
@settings(
    max_examples=examples(2), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cases=st.lists(st.tuples(_plans(), st.lists(_lines(), min_size=1, max_size=40)), min_size=1, max_size=6)
)
@example(  # rdf:type keyed by predicate and, for one class, by class: the class comes first
    cases=[
        (
            KeyPlan("k", ((RDF_TYPE, 0), (f"<{EX}p>", 2)), ((f"<{EX}A>", 2),)),
            [
                f"<{EX}a> {RDF_TYPE} <{EX}A> . # 1",
                f"<{EX}a> {RDF_TYPE} <{EX}B> . # 2",
                f"<{EX}é> <{EX}p> <{EX}b> . # 3",
                f'"x" <{EX}p> <{EX}b> . # 4',
                f"<{EX}a> <{EX}q> <{EX}b> . # 5",
            ],
        )
    ]
)
@example(  # lines the fast-path pattern leaves to rsp's parser (reported once when malformed), keyed by object and
    # class; lines holding \u0001, the separator Spark's own parse (rsp.spark.source.parse_lines) splits at
    cases=[(KeyPlan("k", ((f"<{EX}p>", 2), (f"<{EX}q>", 0)), ((f"<{EX}A>", 2),)),
            [f"<{EX}a> <{EX}p> <{EX}b>. # 1", f"<{EX}a><{EX}q><{EX}b> . # 2", f"<{EX}a> <{EX}q>\t<{EX}b> . # 3",
             f"<{EX}a>\t<{EX}q> <{EX}b> . # 4", f"<{EX}a> {RDF_TYPE} <{EX}A>. # 5",
             f"<{EX}b\\u0075s> <{EX}q> <{EX}b> . # 6", f"<{EX}a> <{EX}p> <{EX}b\\u0075s> . # 7",
             f"<{EX}a> <{EX}q> <{EX}b> . # 8", f"<{EX}a> <{EX}p> <{EX}b> . # 9 ms", f"<{EX}a> <{EX}q> . # 10",
             f"<{EX}a> <{EX}r> . # 11", f'<{EX}a> <{EX}p> "a . # 5" . # 12', f"<{EX}a> <{EX}q> <{EX}b> .",
             f"<{EX}a> {RDF_TYPE} <{EX}A> . # 13", f"<{EX}a> {RDF_TYPE} <{EX}B> . # 14",
             f'<{EX}a> <{EX}p> "x\u0001y" . # 15', f'<{EX}a> <{EX}q> "\u0001" . # 16', "x\u0001y\u0001z\u00017",
             f"<{EX}a>\u0001<{EX}q>\u0001<{EX}b>\u0001. # 17"])]
)  # fmt: skip
def test_spark_key_column_equals_key_plan(spark, cases: list[tuple[KeyPlan, list[str]]]) -> None:
    """Several plans per Spark job (a Spark job costs a second or more): case ``i``'s rows as stream ``i``."""
    _check_key_columns(spark, cases)


def _read_keys_case(files: dict[str, str]) -> tuple[KeyPlan, list[str]]:
    """:func:`_keys_case` read back."""
    plan = json.loads(files["plan.json"])
    positions = tuple((p, place) for p, place in plan["positions"])
    classes = tuple((c, place) for c, place in plan["classes"])
    return KeyPlan("k", positions, classes), files["stream.nt"].splitlines()


def test_saved_key_cases(spark) -> None:
    """The cases ``make fuzz`` saved from the test above, and a fixed one through the saved format, in
    one Spark job."""
    fixed = _keys_case(
        KeyPlan("k", ((RDF_TYPE, 0), (f"<{EX}p>", 2)), ((f"<{EX}A>", 2),)),
        [f"<{EX}a> {RDF_TYPE} <{EX}A> . # 1", f"<{EX}é> <{EX}p> <{EX}b> . # 3", "not a triple . # 4"],
    )
    saved = saved_cases(GOLDEN_ROOT, "test_spark_key_column_equals_key_plan")
    cases = [_read_keys_case(files) for files in [fixed, *saved.values()]]
    assert _keys_case(*cases[0]) == fixed  # the format reads back as written
    _check_key_columns(spark, cases)


def _check_key_columns(spark, cases: list[tuple[KeyPlan, list[str]]]) -> None:
    """The lines parsed by Spark (``parse_lines``) and keyed by ``key_column`` in one Spark job, each
    case's rows as a stream of its own, against the definition (:func:`_expected_keys`)."""
    from functools import reduce

    frames = []
    for index, (plan, lines) in enumerate(cases):
        frame = spark.createDataFrame(
            [(line, "file:///in/s.nt", None, 0, None) for line in lines],
            "value string, file string, file_time timestamp, block long, arrival long",
        ).coalesce(1)
        parsed = parse_lines(frame)
        key = key_column(plan, F.col("s"), F.col("p"), F.col("o"))
        frames.append(
            parsed.select(
                F.lit(index).alias("stream"),
                key.alias("key"),
                F.pmod(F.hash(key), F.lit(BUCKETS)).alias("bucket"),
                "s", "p", "o", "time", "line",
            )
        )  # fmt: skip
    rows = reduce(lambda a, b: a.unionByName(b), frames).collect()
    for index, (plan, lines) in enumerate(cases):
        with saved_on_failure(GOLDEN_ROOT, lambda plan=plan, lines=lines: _keys_case(plan, lines)):
            assert _keyed_elements([r for r in rows if r.stream == index], plan) == _expected_keys(
                plan, lines
            )


def _keyed_elements(rows: list, plan: KeyPlan) -> list[tuple]:
    """One stream's rows as :func:`_expected_keys` has them: each line Spark's regex took (a time and no
    ``line``) with the key Spark's key column gives it (left out when null: no pattern can match it),
    each line it did not take read by rsp's parser (``recheck_triple``) and keyed by KeyPlan.key, or
    reported when malformed. Wherever Spark parsed the terms, its key is KeyPlan.key's, and a key's
    bucket (Spark's hash) is the one ``partition_of`` gives the keys rsp's parser reads."""
    got = []
    for r in rows:
        if r.s is not None:
            assert r.key == plan.key(r.s, r.p, r.o), r
        if r.key is not None:
            assert r.bucket == partition_of(r.key, BUCKETS), r
        if r.line is None:
            assert None not in (r.s, r.p, r.o, r.time), r
            if r.key is not None:
                got.append((r.key, r.time, r.s, r.p, r.o, None, False))
            continue
        try:
            parsed = recheck_triple(r.line)
        except ValueError:
            got.append((REJECT, None, None, None, None, r.line, True))
            continue
        if parsed is not None:
            time, (s, p, o) = parsed
            if plan.key(s, p, o) is not None:
                got.append((plan.key(s, p, o), time, s, p, o, None, False))
    return sorted(got, key=repr)


# -- Spark's hash partitioning -------------------------------------------------------------------------
@pytest.mark.generated
@settings(
    max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.lists(
        st.one_of(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
            st.sampled_from(TERMS).map(lambda t: t + "x" * 3),
        ),
        min_size=1,
        max_size=60,
    )
)
@example(keys=["", "a", "ab", "abc", "abcd", "abcde", "é", "日本", "\U0001f600z", "\u0000tick1"])
def test_partition_of_equals_spark_hash_partitioning(spark, keys: list[str]) -> None:
    """rsp.spark.hashing.partition_of gives a key the shuffle partition Spark's repartition(n, key)
    gives it, pmod(hash(key), n) (the hash is Spark's own Murmur3 variant), for several n."""
    frame = spark.createDataFrame([(k,) for k in keys], "k string")
    columns = [F.hash("k").alias("h"), *(F.pmod(F.hash("k"), F.lit(n)).alias(f"p{n}") for n in (1, 2, 3, 7))]
    rows = frame.select("k", *columns).collect()
    assert [row.k for row in rows] == keys
    for row in rows:
        assert spark_hash(row.k) == row.h, row.k
        assert [partition_of(row.k, n) for n in (1, 2, 3, 7)] == [row.p1, row.p2, row.p3, row.p7], row.k


@pytest.mark.parametrize(("buckets", "partitions"), [(2, 2), (3, 2), (4, 4), (8, 8), (5, 3)])
def test_bucket_labels_spread_the_buckets_over_the_operators_partitions(
    spark, buckets: int, partitions: int
) -> None:
    """The stateful operator groups by the bucket's label, in partition ``pmod(hash(label), n)`` as Spark
    computes it for a long: bucket i lands in partition i mod n (the bucket numbers themselves do not:
    0 and 1 both hash to partition 1 of 2)."""
    from rsp.spark.hashing import bucket_labels, spark_hash_long

    labels = bucket_labels(buckets, partitions)
    assert len(set(labels)) == buckets
    frame = spark.createDataFrame([(v,) for v in [*labels, 0, 1, -1, 2**40, -(2**62)]], "v long")
    rows = frame.select(
        "v", F.hash("v").alias("h"), F.pmod(F.hash("v"), F.lit(partitions)).alias("p")
    ).collect()
    for row in rows:
        assert spark_hash_long(row.v) == row.h, row.v
    assert [row.p for row in rows[:buckets]] == [i % partitions for i in range(buckets)]
    assert {row.p for row in rows if row.v in (0, 1)} == {1} or partitions != 2
