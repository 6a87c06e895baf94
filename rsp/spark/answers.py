"""Answers of :func:`rsp.spark.reason` back as rsp results, micro-batch by micro-batch: for a
``foreachBatch`` writer that needs every instant in order, empty ones too (``rsp spark``'s output, a
notebook's display).

With ``instants=True`` every instant an answer belongs to comes in the same micro-batch as its
``instant`` row (rsp/spark/processor.py), so a micro-batch holds whole instants: :class:`InstantWriter`
turns one into :class:`rsp.runtime.Result` values in time order, each instant's answers in the order
``rsp run`` gives them (one bucket: the engine's; several: the answer order of
rsp/query/answers/order.py, as one engine sorts them), and hands late and rejected rows to callbacks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame


@dataclass
class Late:
    """A late element a micro-batch dropped: its time, stream number, triple and the instant already
    closed when it came."""

    time: int
    stream: int
    triple: tuple[str, str, str]
    instant: int | None


@dataclass
class Reject:
    """A line rsp could not read: its text, file (None for a socket), stream number and the reason."""

    line: str
    file: str | None
    stream: int
    reason: str

    @classmethod
    def of(cls, detail: str | dict) -> Reject:
        """A ``reject`` row's ``detail`` (JSON: line, file, reason, and the stream's number when the
        input has several)."""
        if isinstance(detail, str):
            detail = json.loads(detail)
        return cls(detail["line"], detail.get("file"), int(detail.get("stream") or 0), detail["reason"])


@dataclass
class InstantWriter:
    """Call it with each micro-batch of ``reason(…, instants=True)`` (``foreachBatch``): ``emit`` gets each
    instant's :class:`rsp.runtime.Result`, in time order; ``on_late`` and ``on_reject`` the micro-batch's
    late elements and malformed lines, before its results."""

    name: str
    form: str
    """``select``, ``construct`` or ``ask``."""
    variables: Sequence[str]
    emit: Callable[[object], None]
    ordered: bool = False
    """The answers come from several buckets: put them in the answer order one engine gives."""
    on_late: Callable[[Late], None] | None = None
    on_reject: Callable[[Reject], None] | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"instants": 0, "answers": 0, "late": 0, "rejected": 0}
    )
    read: dict[int, list[int]] = field(default_factory=dict)
    """Per stream number: the lines read (blank and comment lines left out) and the elements taken."""

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.take(batch.toPandas().to_dict("records") if not batch.isEmpty() else [])

    def take(self, rows: list[dict]) -> None:
        """One micro-batch's rows (dicts of the output's columns)."""
        instants: set[int] = set()
        answers: dict[int, list[dict]] = {}
        for row in rows:
            kind = row["kind"]
            if kind == "answer":
                answers.setdefault(int(row["time"]), []).append(row)
            elif kind == "instant":
                instants.add(int(row["time"]))
            elif kind == "late":
                self.counts["late"] += 1
                if self.on_late is not None:
                    detail = json.loads(row["detail"])
                    triple = tuple(detail["triple"])
                    self.on_late(Late(int(row["time"]), detail["stream"], triple, detail["instant"]))
            elif kind == "reject":
                self.counts["rejected"] += 1
                if self.on_reject is not None:
                    detail = json.loads(row["detail"])
                    self.on_reject(Reject.of(detail))
            elif kind == "read":
                add_read(self.read, row["detail"])
        stray = set(answers) - instants
        if stray:
            raise RuntimeError(f"answers of instants not closed in their micro-batch: {sorted(stray)}")
        for instant in sorted(instants):
            self.emit(self.result(instant, answers.get(instant, [])))

    def result(self, instant: int, rows: list[dict]):
        """An instant's result from its answer rows."""
        from rsp.runtime import Result

        self.counts["instants"] += 1
        self.counts["answers"] += len(rows)
        rows = sorted(rows, key=lambda r: r["rank"])
        if self.form == "select":
            bindings = [_binding(r["bindings"]) for r in rows]
            if self.ordered:
                from rsp.query.answers.order import in_answer_order

                bindings = in_answer_order(bindings, self.variables)
            return Result(self.name, instant, tuple(self.variables), bindings=bindings)
        if self.form == "construct":
            triples = [(r["s"], r["p"], r["o"]) for r in rows]
            return Result(self.name, instant, triples=sorted(triples) if self.ordered else triples)
        return Result(self.name, instant, boolean=bool(rows and rows[0]["boolean"]))


def add_read(read: dict[int, list[int]], detail: str, every: bool = False) -> None:
    """Add a ``read`` row's counts (lines, elements per stream number) to ``read`` (``every``: all under
    stream 0)."""
    counts = json.loads(detail)
    for key, place in (("lines", 0), ("triples", 1)):
        for stream, number in counts.get(key, {}).items():
            entry = read.setdefault(0 if every else int(stream), [0, 0])
            entry[place] += number


def _binding(value) -> dict[str, str]:
    """A ``bindings`` struct (a Row or a dict) as a solution: the bound variables only."""
    items = value.asDict() if hasattr(value, "asDict") else dict(value)
    return {name: term for name, term in items.items() if term is not None}


@dataclass
class ProgramWriter:
    """Call it with each micro-batch of :func:`rsp.spark.programs.reason_program` (``instants=True``,
    ``foreachBatch``): ``write`` gets ``rsp lars``'s (``kind="lars"``: ``jsonl``, ``count`` or ``text``)
    or ``rsp mtl``'s (``kind="mtl"``: ``intervals``, ``jsonl`` or ``count``; ``points``: the atoms at
    ``--points``) output text, in order; ``on_late`` and ``on_reject`` the micro-batch's late elements
    (:class:`LateAtom`) and malformed lines, before its output.

    A LARS time point's atoms come in the micro-batch of its ``instant`` row, from every bucket: its line
    has them all, sorted as ``rsp lars`` sorts them. DatalogMTL with one bucket (``ordered=False``):
    the facts in the engine's order, grouped by the time it reported them at, as ``rsp mtl`` writes them;
    with several buckets (``ordered=True``, ``intervals`` only): each micro-batch's facts sorted."""

    kind: str
    format: str
    write: Callable[[str], None]
    ordered: bool = False
    points: bool = False
    shorten: Callable[[str], str] | None = None
    """LARS ``text``: IRIs as prefixed names (rsp.cli.lars.lars_shortener)."""
    on_late: Callable[[LateAtom], None] | None = None
    on_reject: Callable[[Reject], None] | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"instants": 0, "atoms": 0, "late": 0, "rejected": 0}
    )
    read: dict[int, list[int]] = field(default_factory=dict)
    """The lines read (blank and comment lines left out) and the atoms or facts taken, under 0."""

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.take(batch.toPandas().to_dict("records") if not batch.isEmpty() else [])

    def take(self, rows: list[dict]) -> None:
        """One micro-batch's rows (dicts of the output's columns)."""
        output = []
        for row in rows:
            kind = row["kind"]
            if kind == "late":
                self.counts["late"] += 1
                if self.on_late is not None:
                    detail = json.loads(row["detail"])
                    atom = detail.get("atom") or detail.get("fact")
                    self.on_late(LateAtom(row["time"], atom, detail.get("reached")))
            elif kind == "reject":
                self.counts["rejected"] += 1
                if self.on_reject is not None:
                    self.on_reject(Reject.of(row["detail"]))
            elif kind == "read":
                add_read(self.read, row["detail"], every=True)
            else:
                output.append(row)
        if self.kind == "lars":
            self._time_points(output)
        else:
            self._facts(output)

    def _time_points(self, rows: list[dict]) -> None:
        points: set[int] = set()
        atoms: dict[int, list[dict]] = {}
        for row in rows:
            if row["kind"] == "instant":
                points.add(int(row["time"]))
            elif row["kind"] == "atom":
                atoms.setdefault(int(row["time"]), []).append(row)
        stray = set(atoms) - points
        if stray:
            raise RuntimeError(f"atoms of time points not evaluated in their micro-batch: {sorted(stray)}")
        write, fmt = self.write, self.format
        for t in sorted(points):
            held = atoms.get(t, [])
            self.counts["instants"] += 1
            self.counts["atoms"] += len(held)
            if fmt == "count":
                write(f'{{"time": {t}, "count": {len(held)}}}\n')
            elif fmt == "jsonl":
                write(
                    json.dumps({"time": t, "atoms": sorted(r["atom"] for r in held)}, ensure_ascii=False)
                    + "\n"
                )
            else:
                texts = sorted(self._short(r) for r in held)
                write(f"{t:>6} | {'  '.join(texts) if texts else '-'}\n")

    def _short(self, row: dict) -> str:
        if self.shorten is None:
            return row["atom"]
        from decimal import Decimal

        from rsp.lars.model import format_atom

        short = self.shorten
        args = json.loads(row["args"], parse_float=Decimal)
        return format_atom(short(row["pred"]), tuple(short(a) if isinstance(a, str) else a for a in args))

    def _facts(self, rows: list[dict]) -> None:
        facts = [r for r in rows if r["kind"] in ("fact", "point")]
        self.counts["atoms"] += sum(r["kind"] == "fact" for r in facts)
        self.counts["instants"] += sum(r["kind"] in ("instant", "horizon") for r in rows)
        if self.ordered:
            self.write("".join(f + "\n" for f in sorted(r["fact"] for r in facts if r["kind"] == "fact")))
            return
        groups: list[tuple[object, list[str]]] = []
        group = None
        for row in sorted(facts, key=lambda r: r["rank"]):
            detail = json.loads(row["detail"])
            if row["kind"] == "point" or detail.get("group") != group:
                group = detail.get("group")
                groups.append((detail["at"], []))
            if row["kind"] == "fact":
                groups[-1][1].append(row["fact"])
        write, fmt = self.write, self.format
        for at, texts in groups:
            if fmt == "count":
                write(f'{{"time": {json.dumps(at)}, "count": {len(texts)}}}\n')
            elif fmt == "jsonl":
                key = "atoms" if self.points else "facts"
                write(json.dumps({"time": at, key: texts}, ensure_ascii=False) + "\n")
            elif self.points:
                write("".join(f"{a}@{at}\n" for a in texts))
            else:
                write("".join(f + "\n" for f in texts))


@dataclass
class LateAtom:
    """A late atom (LARS) or fact (DatalogMTL) a micro-batch dropped: its time, text and how far the
    stream had reached."""

    time: object
    atom: str
    reached: object
