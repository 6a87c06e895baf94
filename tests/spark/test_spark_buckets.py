"""The key buckets of :func:`rsp.spark.reason` against one engine over the whole stream, without a JVM.

The real bounds function (:func:`rsp.spark.reasoner.bounds_function`, the ``mapInPandas`` step that
sends every bucket its input partition's bounds) and the real stateful processor
(:class:`rsp.spark.processor.QueryProcessor`) run in-process over in-memory state handles that behave
as Spark's state store does: each micro-batch's state is a new version; a micro-batch Spark runs again
(a task retried, a worker lost) starts from the version before it, whatever the worker's cache holds.

The reference is one engine over the stream, each micro-batch pushed in time order (``rsp spark``
without buckets, and ``rsp run`` over the lines in that order). Generated streams go back in time
across micro-batches (elements that move the first instant back behind a newer one, elements older
than an instant closed, keys a bucket never saw), over input partitions split every way; the answers at
every instant, the instants reported (each once) and the late elements equal the reference's, with the
engines cached, rebuilt from the state at every micro-batch, and with micro-batches run twice."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from fuzzing import (
    batches_text,
    examples,
    read_batches_text,
    read_timed_triple_line,
    saved_cases,
    saved_on_failure,
    timed_triple_line,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paths import GOLDEN_SPARK

pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")

from program_buckets import Store  # noqa: E402

from rsp.spark import processor as P  # noqa: E402
from rsp.spark.reasoner import BUCKET, bounds_function, output_schema  # noqa: E402

GOLDEN_ROOT = GOLDEN_SPARK
EX = "http://ex.org/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
STREAM = f"<{EX}pos>"
QUERY = """REGISTER QUERY Sums AS
PREFIX ex: <http://ex.org/>
SELECT ?v (COUNT(?s) AS ?n) (SUM(?s) AS ?sum)
FROM STREAM <http://ex.org/pos> [RANGE 3s STEP 1s]
WHERE { ?v ex:speed ?s }
GROUP BY ?v
"""
Element = tuple[int, str, str, str]


def _job(cache: bool = True, ident: str = "sums") -> P.QueryJob:
    return P.QueryJob(
        ident=ident, name="Sums", text=QUERY, file="sums.rq", streams=(STREAM,), step=1000, cache=cache
    )


def _bucket_of(subject: str, buckets: int) -> int:
    return int(subject.removeprefix(f"<{EX}bus").removesuffix(">")) % buckets


def _tagged(batch: list[Element], parts: list[int], buckets: int) -> pd.DataFrame:
    """A micro-batch's rows as the bounds step gives them to the stateful operator: each element in the
    input partition ``parts[i]``, its order its place in the micro-batch."""
    frames = []
    for part in sorted(set(parts)):
        rows = [(i, e) for i, e in enumerate(batch) if parts[i] == part]
        frame = pd.DataFrame(
            {
                BUCKET: [_bucket_of(e[1], buckets) for _i, e in rows],
                "kind": P.DATA,
                "time": [e[0] for _i, e in rows],
                "order": [i for i, _e in rows],
                "stream": 0,
                "s": [e[1] for _i, e in rows],
                "p": [e[2] for _i, e in rows],
                "o": [e[3] for _i, e in rows],
                "latest": None,
            }
        )
        frames += list(bounds_function(buckets)(iter([frame])))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _end(buckets: int) -> pd.DataFrame:
    frame = pd.DataFrame(
        {BUCKET: [-1], "kind": [P.END], "time": [0], "order": [0], "stream": [0], "s": [None], "p": [None],
         "o": [None], "latest": [None]}
    )  # fmt: skip
    return pd.concat(list(bounds_function(buckets)(iter([frame]))), ignore_index=True)


class _Spark:
    """The stateful operator over ``buckets`` buckets: per micro-batch, each bucket with rows called
    once, from the state the micro-batch before committed."""

    def __init__(self, buckets: int, mode: str) -> None:
        self.buckets, self.mode = buckets, mode
        self.job = _job(cache=mode != "uncached", ident=f"sums-{mode}-{buckets}")
        self.stores: dict[int, Store] = {}
        self.rows: list[list] = []
        P.drop_cached_engines()

    def batch(self, frame: pd.DataFrame) -> None:
        committed = copy.deepcopy(self.stores)
        if self.mode == "replayed":  # run once, throw the output and the state away, run again
            self._run(frame, keep=False)
            self.stores = copy.deepcopy(committed)
        self._run(frame, keep=True)

    def _run(self, frame: pd.DataFrame, keep: bool) -> None:
        schema = output_schema("select", ("v", "n", "sum"))
        for bucket, rows in frame.groupby(BUCKET, sort=True):
            if self.mode == "rebuilt":
                P.drop_cached_engines()
            store = self.stores.setdefault(int(bucket), Store())
            processor = P.QueryProcessor(self.job, schema)
            processor.init(store)
            out = list(processor.handleInputRows((int(bucket),), iter([rows.drop(columns=[BUCKET])]), None))
            if keep:
                self.rows += [row for part in out for row in part.values.tolist()]


def _buckets(batches: list[list[Element]], splits: list[list[int]], buckets: int, mode: str):
    spark = _Spark(buckets, mode)
    for batch, parts in zip(batches, splits, strict=True):
        frame = _tagged(batch, parts, buckets)
        if len(frame):
            spark.batch(frame)
    spark.batch(_end(buckets))
    answers: dict[int, list[str]] = {}
    instants: list[int] = []
    late = read = 0
    for query, time, kind, _rank, _detail, bindings in spark.rows:
        assert query == "Sums"
        if kind == "instant":
            instants.append(time)
        elif kind == "late":
            late += 1
        elif kind == "read":  # an input partition's count of its elements, to bucket 0
            read += sum(json.loads(_detail)["triples"].values())
        else:
            answers.setdefault(time, []).append(
                json.dumps({k: v for k, v in bindings.items() if v}, sort_keys=True)
            )
    assert len(instants) == len(set(instants)), "an instant reported twice"
    assert read == sum(map(len, batches)), "every element read is counted once"
    return {t: sorted(answers.get(t, [])) for t in instants}, late


def _one_engine(batches: list[list[Element]]) -> tuple[dict[int, list[str]], int]:
    """One engine over the stream, each micro-batch pushed in time order (arrival order among equals)."""
    from rsp.runtime import Engine

    engine = Engine()
    handle = engine.register(QUERY, "sums.rq")
    for batch in batches:
        for t, s, p, o in sorted(batch, key=lambda e: e[0]):
            engine.push([(s, p, o)], t, STREAM, plain=True)
    engine.close()
    answers = {r.time: sorted(json.dumps(b, sort_keys=True) for b in r.bindings or []) for r in handle}
    return answers, engine.late


def _element(key: int, time: int, value: int) -> Element:
    return (time, f"<{EX}bus{key}>", f"<{EX}speed>", f'"{value}"^^{INT}')


@st.composite
def _batches(draw) -> list[list[Element]]:
    """Micro-batches going forward in time, now and then far back (before the first instant, behind an
    instant closed), over keys some of which appear late in the stream."""
    batches, now, value = [], draw(st.integers(0, 4000)), 0
    for _ in range(draw(st.integers(1, 6))):
        batch = []
        for _ in range(draw(st.integers(0, 4))):
            now += draw(st.sampled_from([0, 150, 400, 900, 1700]))
            back = draw(st.sampled_from([0, 0, 0, 700, 1500, 3000]))
            value += 1
            batch.append(_element(draw(st.integers(0, 4)), max(0, now - back), value))
        batches.append(batch)
    return batches


def _text(batches: list[list[Element]]) -> dict[str, str]:
    lines = [[timed_triple_line(e) for e in batch] for batch in batches]
    return {"query.rq": QUERY, "stream.nt": batches_text(lines)}


SHARED = [  # 2500 moves the first instant back
    [_element(0, 3775, 0)], [_element(1, 2500, 1)], [_element(0, 5500, 2), _element(0, 6000, 3)],
    [_element(2, 4900, 4)], [_element(0, 3100, 5)], [_element(0, 7000, 6)],
]  # fmt: skip
BEHIND = [  # the first element of the second micro-batch closes 3000 behind 3775: 2600 (another key) and
    # the second element at 2500 come after it and are late
    [_element(0, 3775, 0)], [_element(1, 2500, 1), _element(3, 2500, 2), _element(2, 2600, 3)],
    [_element(4, 4100, 4)],
]  # fmt: skip
MODES = ("cached", "rebuilt", "uncached", "replayed")


def _check(batches: list[list[Element]], splits: list[list[int]]) -> None:
    expected, late = _one_engine(batches)
    for buckets in (1, 3):
        for mode in MODES:
            got, got_late = _buckets(batches, splits, buckets, mode)
            assert got == expected, f"{buckets} bucket(s), engines {mode}"
            assert got_late == late, f"{buckets} bucket(s), engines {mode}"


def _splits(batches: list[list[Element]], draw=None) -> list[list[int]]:
    """Each element's input partition: drawn, or alternating over two."""
    if draw is None:
        return [[i % 2 for i in range(len(batch))] for batch in batches]
    return [draw(st.lists(st.integers(0, 2), min_size=len(b), max_size=len(b))) for b in batches]


@pytest.mark.generated
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=_batches(), data=st.data())
@example(batches=SHARED, data=None)
@example(batches=BEHIND, data=None)
def test_partitioned_lateness_equals_one_engine(batches, data) -> None:
    with saved_on_failure(GOLDEN_ROOT, lambda: _text(batches)):
        _check(batches, _splits(batches, None if data is None else data.draw))


def _read_batches(text: str) -> list[list[Element]]:
    """The micro-batches of a saved case's stream.nt (:func:`_text`'s format)."""
    return [[read_timed_triple_line(line) for line in batch] for batch in read_batches_text(text)[0]]


SAVED = saved_cases(GOLDEN_ROOT, "test_partitioned_lateness_equals_one_engine")


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_cases(name: str) -> None:
    """The shrunk cases ``make fuzz`` found in the pipeline before this one, kept."""
    files = SAVED[name]
    assert files["query.rq"] == QUERY
    batches = _read_batches(files["stream.nt"])
    _check(batches, _splits(batches))


def test_fixed_cases_reach_the_corners() -> None:
    """The fixed cases do what their comments say under one engine (the reference's own check), and
    every bucket mode sees the instants the reference closes."""
    answers, late = _one_engine(SHARED)
    assert late == 2 and 3000 in answers and answers[3000]
    answers, late = _one_engine(BEHIND)
    assert late == 2 and len(answers[3000]) == 1
    got, _late = _buckets(BEHIND, _splits(BEHIND), 3, "rebuilt")
    assert Counter(len(v) for v in got.values())[1] >= 1


def test_the_state_is_the_truth() -> None:
    """A bucket's engine rebuilt from the state store after every micro-batch answers as the cached one:
    the state store keeps what the windows need (and no more than they can see)."""
    batches = [[_element(k, t, t) for k in range(3)] for t in range(0, 20000, 700)]
    splits = _splits(batches)
    cached, _ = _buckets(batches, splits, 2, "cached")
    rebuilt, _ = _buckets(batches, splits, 2, "rebuilt")
    assert cached == rebuilt == _one_engine(batches)[0]
    spark = _Spark(2, "cached")
    for batch, parts in zip(batches, splits, strict=True):
        spark.batch(_tagged(batch, parts, 2))
    for store in spark.stores.values():  # a 3 s window: what those after 19 s may see (from 14 s), not 20 s
        times = [row[0] for part in store.lists["elements"].rows for row in json.loads(part[4])]
        assert times and min(times) >= 14000
