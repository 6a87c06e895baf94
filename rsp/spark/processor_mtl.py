"""DatalogMTL programs in Spark's stateful operator (:func:`rsp.spark.programs.reason_program` with
``kind="mtl"``): the partitioning check (:func:`mtl_keys`), the reading of fact lines before the shuffle
(:func:`fact_tagger`) and one :class:`rsp.mtl.engine.Engine` per key bucket (:class:`MtlProcessor`, on
:class:`rsp.spark.processor.BucketProcessor`'s state store and worker cache).

Partitioning by ``V``: every atom of every rule, head and body (under any operator), has ``V`` among its
arguments, in the same place for a predicate; a rule that breaks this is refused at its position. A
fact then belongs to one key, a rule joins facts of one key only, and the least model is the union of
the keys' least models. A fact of a predicate no rule mentions goes to bucket 0 (it may be an output
predicate).

Reading (a ``mapInPandas`` step): rsp's parser reads every line (:func:`rsp.mtl.facts.parse_fact`; a
triple row is the fact ``p(s, o)@time``); a malformed line is a ``reject`` row, a fact that starts
beyond the horizon is nothing (as for one engine). A fact is an element row: ``time`` the floor of its
left end (the state's order), ``s`` its predicate, ``p`` its arguments as JSON, ``o`` its interval,
exact (``[1/3,2)``). Times are exact rationals, which no long holds: besides the integer bounds rows of
:func:`rsp.spark.reasoner.bounds_function`, each input partition sends every bucket its newest left end
and, for the horizon, the greatest time of its facts that start at or after any given point (a Pareto
front of (left end, greatest time) pairs), as text.

Time (exact: one engine fed micro-batch by micro-batch, each micro-batch's facts in the order of their
left ends, as ``rsp spark`` without buckets and ``rsp mtl`` over the micro-batches' facts one after the
other): a fact that starts before the newest left end of the earlier micro-batches (the stream's
*reach*) is late; after each micro-batch every bucket's model is final up to the new reach
(:meth:`rsp.mtl.engine.Engine.advance`), so a fact leaves in the micro-batch that passes its end, from
whichever bucket holds it, with ``time`` that reach. The end of the input closes every bucket's model
up to the horizon: ``horizon``, or the greatest time of the facts taken, over every bucket.

The state: every fact taken (the model may depend on any earlier fact); the reach, the greatest time and
whether the input ended in ``extra`` (JSON, exact times as text). A rebuilt engine pushes the facts
again, muted, and advances to the reach.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pandas as pd
from pyspark.sql.types import LongType, StringType, StructField, StructType

from rsp.errors import RspError
from rsp.spark.processor import BOUNDS, DATA, BucketProcessor, BucketState, Runner, compiled
from rsp.spark.processor_lars import LONG, bucket_of, recheck_rows, reject
from rsp.spark.reasoner import BUCKET, bounds_function

MTL_OUTPUT = StructType(
    [
        StructField("program", StringType()),
        StructField("time", StringType()),
        StructField("kind", StringType()),
        StructField("rank", LongType()),
        StructField("detail", StringType()),
        StructField("fact", StringType()),
        StructField("pred", StringType()),
        StructField("args", StringType()),
        StructField("interval", StringType()),
    ]
)
"""A DatalogMTL program's rows: ``program`` (its name), ``time`` (exact, as text: the reach of the stream
when the fact became final, or the horizon), ``kind`` (``fact``; with ``instants=True`` also ``instant``,
the reach after a micro-batch that moved it, ``horizon``, the model closed at the end of the input,
``late``, a late fact dropped, and ``reject``, a line rsp could not read), ``rank`` (the fact's place in
its bucket's sorted facts of the micro-batch; a late or rejected row's order), ``detail`` (late and
rejected rows: JSON saying what and why), then the fact: ``fact`` (a line of ``rsp mtl --format
intervals``), ``pred``, ``args`` (a JSON array of strings) and ``interval`` (``[1,3)``, exact)."""


@dataclass(frozen=True)
class MtlKeys:
    """Where a fact's key is: ``positions`` pairs a predicate (name and arity) with ``V``'s place."""

    var: str
    positions: tuple[tuple[tuple[str, int], int], ...]

    def key(self, pred: str, args: tuple) -> str | None:
        """The key of a fact (None: no rule mentions its predicate)."""
        for (name, arity), index in self.positions:
            if name == pred and arity == len(args):
                return str(args[index])
        return None


def mtl_keys(program, variable: str) -> MtlKeys:
    """The keying of a DatalogMTL program's facts by ``variable`` (``V`` or ``?V``); raises
    :class:`rsp.errors.RspError` at the rule that does not partition by it."""
    from rsp.mtl.model import Var, atoms_of

    var = variable.removeprefix("?")
    if not var or not (var[0].isupper() or var[0] == "_") or not var.replace("_", "a").isalnum():
        raise RspError(f"--partition-by {variable}: write a variable of the program's rules, e.g. V")
    places: dict[tuple[str, int], tuple[int, object]] = {}
    for rule in program.source.rules:
        for atom in atoms_of(rule.head) + [a for f in rule.body for a in atoms_of(f)]:
            where = [i for i, term in enumerate(atom.args) if term == Var(var)]
            if not where:
                reason = f"--partition-by {var}: the atom {atom} does not use {var}"
                raise RspError(reason, rule.origin.position)
            sig = (atom.pred, len(atom.args))
            known = places.setdefault(sig, (where[0], rule))
            if known[0] not in where:
                raise RspError(
                    f"--partition-by {var}: {atom.pred} has {var} as argument {where[0] + 1} here and as "
                    f"argument {known[0] + 1} at {known[1].origin.position}",
                    rule.origin.position,
                )
    return MtlKeys(var, tuple((sig, index) for sig, (index, _rule) in sorted(places.items())))


@dataclass(frozen=True)
class MtlJob:
    """What a bucket needs to run a DatalogMTL program (pickled with the processor and the reading step)."""

    ident: str
    name: str
    """The ``program`` column."""
    text: str
    file: str
    keys: MtlKeys | None = None
    """None: one bucket holds the whole stream."""
    outputs: tuple[str, ...] | None = None
    """The predicates written (None: those the rules derive)."""
    horizon: str | None = None
    """The model is computed up to this time (exact, as text; None: the greatest time of the stream)."""
    late: str = "drop"
    cache: bool = True
    points: tuple[str, ...] | None = None
    """Report the atoms holding at these time points (exact, as text) instead of the facts (one bucket)."""


def mtl_job(ident: str, name: str, text: str, file: str, partition_by: str | None, **options) -> MtlJob:
    """The job of a program (parsed, checked and, with ``partition_by``, its partitioning checked here,
    in the driver: errors before Spark starts)."""
    from rsp.mtl import parse
    from rsp.mtl.intervals import INF, fmt_time, number

    program = parse(text, file)
    horizon = options.pop("horizon", None)
    if horizon is not None:
        try:
            value = number(str(horizon))
        except (ValueError, ZeroDivisionError):
            raise RspError(f"horizon: not a time: {horizon!r}") from None
        if value in (INF, -INF):
            raise RspError(f"horizon: {horizon!r} is not finite")
        horizon = fmt_time(value)
    outputs = options.pop("outputs", None)
    points = options.pop("points", None)
    if points is not None:
        if partition_by is not None:
            raise RspError("points: the atoms at time points are reported without partitioning only")
        points = tuple(fmt_time(number(str(p))) for p in points)
    keys = None if partition_by is None else mtl_keys(program, partition_by)
    outputs = None if outputs is None else tuple(outputs)
    return MtlJob(ident, name, text, file, keys, outputs, horizon, points=points, **options)


class _Reach:
    """What an input partition's facts tell every bucket: their newest left end and the Pareto front of
    (left end, greatest time) pairs."""

    def __init__(self) -> None:
        self.newest = None
        self.pairs: list[tuple] = []

    def add(self, lo, hi) -> None:
        from rsp.mtl.intervals import INF

        self.newest = lo if self.newest is None or lo > self.newest else self.newest
        self.pairs.append((lo, lo if hi == INF else hi))

    def front(self) -> list[tuple]:
        """The pairs no other pair passes in both (the greatest time after any point is among them)."""
        found, best = [], None
        for lo, reach in sorted(self.pairs, key=lambda pair: pair[0], reverse=True):
            if best is None or reach > best:
                found.append((lo, reach))
                best = reach
        return found

    def rows(self, buckets: int) -> pd.DataFrame:
        from rsp.mtl.intervals import fmt_time

        front = json.dumps([[fmt_time(lo), fmt_time(reach)] for lo, reach in self.front()])
        floor = math.floor(self.newest)
        return pd.DataFrame(
            {
                BUCKET: pd.Series(range(buckets), dtype="int64"), "kind": BOUNDS, "time": floor,
                "order": 0, "stream": 0, "s": fmt_time(self.newest), "p": front, "o": None,
                "latest": floor, "detail": None,
            }
        )  # fmt: skip


def fact_rechecker(job: MtlJob, buckets: int, reach: _Reach) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The reading of fact lines (module docstring): each fact taken is also added to ``reach``."""
    from rsp.mtl.intervals import INF, fmt, number

    keys = job.keys
    horizon = None if job.horizon is None else number(job.horizon)

    def read(line: str, file: str | None, triple: tuple | None, time: int | None) -> list[tuple]:
        from rsp.mtl.facts import parse_fact

        if triple is not None:
            if time is None:
                return [reject(" ".join(triple) + " .", file, "a triple without a time")]
            s, p, o = triple
            pred, args, iv = p, (s, o), (time, time, True, True)
        else:
            text = line.strip()
            if not text or text[0] in "%#":
                return []
            try:
                pred, args, iv = parse_fact(text)
            except ValueError as err:
                return [reject(text, file, str(err))]
        lo = iv[0]
        if horizon is not None and (lo > horizon or (lo == horizon and not iv[2])):
            return []  # beyond the horizon: nothing, as for one engine
        floor = math.floor(lo)
        if not -LONG <= floor < LONG:
            return [reject(line or "", file, f"time {lo} is out of range (a 64-bit integer)")]
        reach.add(lo, iv[1] if iv[1] != INF else INF)
        key = None if keys is None else keys.key(pred, args)
        bucket = 0 if key is None else bucket_of(key, buckets)
        return [(bucket, DATA, floor, 0, pred, json.dumps(list(args), ensure_ascii=False), fmt(iv), None)]

    return lambda batch: recheck_rows(batch, read)


def fact_tagger(job: MtlJob, buckets: int) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The ``mapInPandas`` function from the program's input rows (kind RECHECK or END) to the tagged
    rows the stateful operator takes, with the exact bounds rows of the input partition."""

    def tag(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        reach = _Reach()
        yield from bounds_function(buckets, fact_rechecker(job, buckets, reach))(batches)
        if reach.newest is not None:
            yield reach.rows(buckets)

    return tag


@dataclass(frozen=True)
class MtlBounds:
    """What every bucket learns of a micro-batch: its newest left end, and the Pareto front of (left end,
    greatest time) of its facts (exact)."""

    newest: object
    front: tuple[tuple, ...]

    @classmethod
    def of(cls, rows: pd.DataFrame) -> MtlBounds | None:
        from rsp.mtl.intervals import number

        exact = rows[rows["s"].map(lambda v: isinstance(v, str))]
        if not len(exact):
            return None
        newest = max(number(text) for text in exact["s"].tolist())
        front = tuple((number(lo), number(hi)) for text in exact["p"].tolist() for lo, hi in json.loads(text))
        return cls(newest, front)

    def greatest(self, reached):
        """The greatest time of the facts that start at ``reached`` or later (those not late)."""
        found = [hi for lo, hi in self.front if reached is None or lo >= reached]
        return max(found) if found else None


class MtlRunner(Runner):
    """A DatalogMTL program's engine in a bucket (bucket 0 also reports the reach and the horizon)."""

    def __init__(self, job: MtlJob, bucket: int) -> None:
        from rsp.mtl import parse
        from rsp.mtl.engine import Engine
        from rsp.mtl.intervals import number

        self.job, self.name = job, job.name
        program = compiled(job.ident, lambda: parse(job.text, job.file))
        horizon = None if job.horizon is None else number(job.horizon)
        points = None if job.points is None else [number(p) for p in job.points]
        self.engine = Engine(program, outputs=job.outputs, horizon=horizon, points=points, late=job.late)
        self.instants = bucket == 0
        self.reached = None
        self.greatest = None
        self.finished = False
        self.out = []

    def _write(self, results: list, time, kind: str | None) -> None:
        """The facts that became final (``results`` of the engine) at ``time``, after a row of ``kind``
        (bucket 0). Each fact row's ``detail`` has the time the engine reported it at (``at``: an integer
        or exact text, as ``rsp mtl --format jsonl`` writes it), its ``rank`` the engine's order (by
        ``at``, then the fact's text). With points, a row of kind ``point`` (its ``time`` the point)
        comes before the atoms holding at it (kind ``fact``, ``interval`` the point)."""
        from rsp.mtl import format_fact
        from rsp.mtl.intervals import fmt, fmt_time
        from rsp.mtl.model import format_atom

        shown, name, out = fmt_time(time), self.name, self.out
        if kind is not None and self.instants:
            out.append((name, shown, kind, 0, None))
        for at, items in results:
            rank = len(out)  # the engine's order, within the micro-batch
            detail = json.dumps({"at": at if isinstance(at, int) else fmt_time(at), "group": rank})
            if self.job.points is not None:
                point = fmt_time(at)
                out.append((name, point, "point", rank, detail))
                rank += 1
                atoms = sorted(((format_atom(p, a), p, a) for p, a in items), key=lambda atom: atom[0])
                for text, p, a in atoms:
                    args = json.dumps(list(a), ensure_ascii=False)
                    out.append((name, point, "fact", rank, detail, text, p, args, f"[{point},{point}]"))
                    rank += 1
                continue
            facts = sorted(((format_fact(p, a, iv), p, a, iv) for p, a, iv in items), key=lambda f: f[0])
            for text, p, a, iv in facts:
                args = json.dumps(list(a), ensure_ascii=False)
                out.append((name, shown, "fact", rank, detail, text, p, args, fmt(iv)))
                rank += 1

    def take(self, data: pd.DataFrame, bounds: MtlBounds) -> list[int]:
        """The micro-batch's facts of the bucket in the order of their left ends (those starting before
        the reach of the earlier micro-batches are late); then the model is final up to the new reach."""
        from rsp.mtl import format_fact
        from rsp.mtl.facts import interval
        from rsp.mtl.intervals import fmt_time

        if self.finished:
            return []
        engine, reached = self.engine, self.reached
        results: list = []
        kept: list[int] = []
        if len(data):
            orders = data["order"].astype("int64").tolist()
            facts = [
                (iv[0], orders[k], k, pred, args, iv)
                for k, (pred, args, iv) in enumerate(
                    zip(
                        data["s"].tolist(), data["p"].tolist(), map(interval, data["o"].tolist()), strict=True
                    )
                )
            ]
            facts.sort(key=lambda fact: (fact[0], fact[1]))
            for _lo, order, k, pred, args, iv in facts:
                late = engine.late
                values = tuple(json.loads(args))
                results += engine.push(pred, values, iv)
                if engine.late != late:
                    detail = {"fact": format_fact(pred, values, iv), "reached": fmt_time(reached)}
                    self.out.append((self.name, fmt_time(iv[0]), "late", order, json.dumps(detail)))
                else:
                    kept.append(k)
        greatest = bounds.greatest(reached)
        if greatest is not None:
            self.greatest = greatest if self.greatest is None else max(self.greatest, greatest)
        self.reached = bounds.newest if reached is None else max(reached, bounds.newest)
        results += engine.advance(self.reached)
        self._write(results, self.reached, "instant" if self.reached != reached else None)
        return kept

    def finish(self) -> None:
        """The end of the input: the model up to the horizon (``horizon``, or the greatest time of every
        bucket's facts), everything left."""
        if self.finished:
            return
        self.finished = True
        engine, job = self.engine, self.job
        horizon = None
        from rsp.mtl.intervals import number

        if job.horizon is not None:
            horizon = number(job.horizon)
        elif self.greatest is not None:
            horizon = self.greatest
            if job.points is not None:  # the engine's own horizon: the greatest time or the last point
                last = number(job.points[-1]) if job.points else horizon
                horizon = max(horizon, last)
            engine.horizon = engine.in_unit((horizon, horizon, True, True))[0]
        results = engine.finish()
        if horizon is not None:
            self._write(results, horizon, "horizon")

    def oldest_needed(self) -> int | None:
        return None  # the model may depend on any earlier fact

    def replay(self, rows: list[tuple], state: BucketState) -> None:
        from rsp.mtl.facts import interval
        from rsp.mtl.intervals import number

        extra = json.loads(state.extra) if state.extra else {}
        engine = self.engine
        for _time, _seq, _stream, pred, args, span in rows:
            engine.push(pred, tuple(json.loads(args)), interval(span))
        if extra.get("reached") is not None:
            self.reached = number(extra["reached"])
            engine.advance(self.reached)
        if extra.get("greatest") is not None:
            self.greatest = number(extra["greatest"])
        self.finished = bool(extra.get("finished"))

    def save(self, state: BucketState) -> None:
        from rsp.mtl.intervals import fmt_time

        state.newest = None if self.reached is None else math.floor(self.reached)
        state.extra = json.dumps(
            {
                "reached": None if self.reached is None else fmt_time(self.reached),
                "greatest": None if self.greatest is None else fmt_time(self.greatest),
                "finished": self.finished,
            }
        )


class MtlProcessor(BucketProcessor):
    """A DatalogMTL program per key bucket (module docstring)."""

    def runner(self, bucket: int) -> Runner:
        return MtlRunner(self.job, bucket)

    def bounds(self, rows: pd.DataFrame) -> MtlBounds | None:
        return MtlBounds.of(rows)
