"""``rsp spark`` with a DatalogMTL program: MeTeoR fact lines read by Spark Structured Streaming, fed
in micro-batches to :class:`rsp.mtl.Engine`, with the output of ``rsp mtl``.

Spark only reads the lines (and remembers each one's file and place); the driver parses them with
:func:`rsp.mtl.facts.parse_fact`, orders a micro-batch's facts by their left ends (then by file and
place) and pushes them. A fact starting before one a previous micro-batch pushed is late (dropped and
counted, or the run stops under ``--late fail``), as in ``rsp mtl``. Results leave as soon as they are
final; the end of the streams closes the model up to the horizon.
"""

from __future__ import annotations

import pyarrow as pa

from rsp.errors import Position
from rsp.spark.feed import ORDER, Feeder, Rejects, _normalise, display_path


class MtlFeeder(Feeder):
    """Feeds DatalogMTL fact lines (``P(a,b)@[1,3)``, ``P(a)@2``, timed N-Triples) to an MTL engine;
    ``emit(results)`` receives what became final after each micro-batch."""

    def __init__(self, engine, emit, source: str, *, rejects: Rejects | None = None) -> None:
        super().__init__([source], rejects or Rejects(None, None))
        self.engine = engine
        self.emit = emit

    def feed(self, table: pa.Table, batch_id: int) -> None:
        from rsp.mtl.facts import parse_fact

        table = _normalise(table, ("line", *ORDER))
        counter = self.counters[0]
        counter.lines += table.num_rows
        facts, rejected = [], []
        for row in table.to_pylist():
            line = (row["line"] or "").strip()
            if not line or line[0] in "%#":
                continue
            try:
                pred, args, iv = parse_fact(line)
            except ValueError as err:
                counter.rejected += 1
                rejected.append(
                    {
                        "file": display_path(row["file"]),
                        "stream": self.sources[0],
                        "line": line,
                        "reason": str(err),
                    }
                )
                continue
            key = tuple(row[name] if row[name] is not None else -1 for name in ORDER[2:] if name != "stream")
            facts.append((iv[0], key, pred, args, iv, row["file"]))
        self.rejects.write(batch_id, rejected)
        facts.sort(key=lambda f: (f[0], f[1]))
        engine = self.engine
        for _lo, _key, pred, args, iv, file in facts:
            late = engine.late
            results = engine.push(pred, args, iv, Position(display_path(file) or self.sources[0]))
            if engine.late != late:
                counter.late += 1
                continue
            counter.triples += 1
            if results:
                self.emit(results)

    def finish(self) -> None:
        """The end of the streams: the model up to the horizon."""
        self.emit(self.engine.finish())

    def summary(self) -> list[str]:
        return [line.replace(" triples in ", " facts in ") for line in super().summary()]


__all__ = ["MtlFeeder"]
