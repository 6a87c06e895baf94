"""Spark's stateful operator in-process, without a JVM, for the program processors
(tests/spark/test_spark_buckets_lars.py, tests/spark/test_spark_buckets_mtl.py), as
tests/spark/test_spark_buckets.py has it for queries: the real reading step (the ``mapInPandas``
function of :mod:`rsp.spark.processor_lars` / :mod:`rsp.spark.processor_mtl`) over each input partition
of a micro-batch, then the real processor per bucket over in-memory state handles that behave as
Spark's state store does (each micro-batch's state a new version; a micro-batch run again starts from
the version before it, whatever the worker's cache holds).

Modes: ``cached`` (engines kept in the worker between micro-batches), ``rebuilt`` (every cached engine
dropped before each bucket's call: rebuilt from the state), ``uncached`` (the job's ``cache=False``),
``replayed`` (each micro-batch run once, its output and state thrown away, and run again, as Spark
does after a failure)."""

from __future__ import annotations

import copy
import json
import warnings

import pandas as pd

from rsp.spark import processor as P
from rsp.spark.reasoner import BUCKET

MODES = ("cached", "rebuilt", "uncached", "replayed")


class _List:
    def __init__(self) -> None:
        self.rows: list = []

    def exists(self) -> bool:
        return bool(self.rows)

    def get(self):
        return iter(list(self.rows))

    def put(self, rows) -> None:
        self.rows = list(rows)

    def appendList(self, rows) -> None:  # noqa: N802 - PySpark's name
        self.rows.extend(tuple(r) for r in rows)

    def clear(self) -> None:
        self.rows = []


class _Value:
    def __init__(self) -> None:
        self.value = None

    def exists(self) -> bool:
        return self.value is not None

    def get(self):
        return self.value

    def update(self, value) -> None:
        self.value = tuple(value)

    def clear(self) -> None:
        self.value = None


class Store:
    """One bucket's state, as a StatefulProcessorHandle hands it out (its list and value states, each
    micro-batch's copy taken by the caller, as Spark's state store versions them)."""

    def __init__(self) -> None:
        self.lists: dict[str, _List] = {}
        self.values: dict[str, _Value] = {}

    def getListState(self, name, _schema):  # noqa: N802
        return self.lists.setdefault(name, _List())

    def getValueState(self, name, _schema):  # noqa: N802
        return self.values.setdefault(name, _Value())


def input_rows(lines: list[str | None], orders: list[int]) -> pd.DataFrame:
    """One input partition's rows as :func:`rsp.spark.programs.program_rows` makes them: a line (None:
    an end row) and its order."""
    end = [line is None for line in lines]
    return pd.DataFrame(
        {
            BUCKET: -1,
            "kind": [P.END if e else P.RECHECK for e in end],
            "time": pd.Series([None] * len(lines), dtype="float64"),  # a nullable long, as Arrow hands it
            "order": orders,
            "stream": 0,
            "s": None,
            "p": None,
            "o": None,
            "latest": None,
            "detail": [None if e else json.dumps({"line": line}) for line, e in zip(lines, end, strict=True)],
        }
    )


class Operator:
    """The stateful operator over ``buckets`` buckets running ``processor(job, schema)``; ``tagger(job,
    buckets)`` is the reading step. :attr:`rows` collects the output, :attr:`batches` the index of the
    micro-batch each row came in."""

    def __init__(self, job, processor, tagger, schema, buckets: int, mode: str) -> None:
        self.job, self.processor, self.tagger, self.schema = job, processor, tagger, schema
        self.buckets, self.mode = buckets, mode
        self.stores: dict[int, Store] = {}
        self.rows: list[list] = []
        self.batches: list[int] = []
        self.count = 0
        P.drop_cached_engines()

    def batch(self, lines: list[str], parts: list[int]) -> None:
        """A micro-batch: ``lines[i]`` read by input partition ``parts[i]``."""
        frames = []
        for part in sorted(set(parts)):  # each row numbered by its place in the micro-batch
            mine = [i for i in range(len(lines)) if parts[i] == part]
            half = len(mine) // 2  # in two pandas batches, as Arrow may hand them over
            pieces = [input_rows([lines[i] for i in ids], ids) for ids in (mine[:half], mine[half:]) if ids]
            frames += list(self.tagger(self.job, self.buckets)(iter(pieces)))
        self._run([f for f in frames if len(f)])

    def end(self) -> None:
        self._run(list(self.tagger(self.job, self.buckets)(iter([input_rows([None], [0])]))))

    def _run(self, frames: list[pd.DataFrame]) -> None:
        if frames:
            with warnings.catch_warnings():  # columns all null in some frames (as Spark's are)
                warnings.simplefilter("ignore", FutureWarning)
                frame = pd.concat(frames, ignore_index=True)
            committed = copy.deepcopy(self.stores)
            if self.mode == "replayed":
                self._buckets(frame, keep=False)
                self.stores = copy.deepcopy(committed)
            self._buckets(frame, keep=True)
        self.count += 1

    def _buckets(self, frame: pd.DataFrame, keep: bool) -> None:
        for bucket, rows in frame.groupby(BUCKET, sort=True):
            if self.mode == "rebuilt":
                P.drop_cached_engines()
            store = self.stores.setdefault(int(bucket), Store())
            processor = self.processor(self.job, self.schema)
            processor.init(store)
            out = list(processor.handleInputRows((int(bucket),), iter([rows.drop(columns=[BUCKET])]), None))
            if keep:
                for part in out:
                    for row in part.values.tolist():
                        self.rows.append(row)
                        self.batches.append(self.count)
