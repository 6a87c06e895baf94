"""``rsp spark``: a query (``.rq``), LARS program (``.lars``) or DatalogMTL program (``.mtl`` or ``--mtl``)
over Spark Structured Streaming sources, with the output of ``rsp run`` / ``rsp lars`` / ``rsp mtl``: a
thin command over :func:`rsp.spark.reason` (one engine per key bucket in Spark's stateful operator, one
bucket without ``--partition-by``) and :class:`rsp.spark.drive.Run`.

Without ``--available-now`` the run goes on until SIGINT (Ctrl-C) or SIGTERM (``kill``, ``timeout``,
systemd, ``docker stop``), which stop it the same way: the micro-batch in progress finishes (and, with
``--checkpoint``, commits), the input ends (the last instants are emitted, through one more
micro-batch), the summary is written and the exit code is 0. The signals are taken over from the start
of the command, so one that arrives while Spark is starting stops the run before its first micro-batch;
further signals, while the run stops and until the process exits, are ignored (SIGKILL is safe with
``--checkpoint``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import TextIO

from rsp.errors import LateElementError, RspError
from rsp.live import release_signals
from rsp.spark.source import display_path


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``rsp spark`` with parsed arguments, writing results to ``out``."""
    if args.sink_format and not args.sink:
        raise RspError("--sink-format needs --sink DIR")
    with StopSignals() as stop:
        if _is_mtl(args):
            return _run_program(args, out, stop, "mtl")
        if Path(args.program).suffix == ".lars":
            return _run_program(args, out, stop, "lars")
        return _run_query(args, out, stop)


class StopSignals:
    """SIGINT and SIGTERM, while the command runs, ask it to stop (:attr:`requested`) instead of ending
    the process: the run then stops the way the module docstring says. Only the main thread can take
    signals over; elsewhere (``rsp.cli.main`` called from a thread) nothing is installed."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def take_back(self) -> None:
        """Handle the signals again where something else took them over (a new SparkContext makes
        SIGINT cancel its jobs and raise KeyboardInterrupt)."""
        for number in self._previous:
            if signal.getsignal(number) != self._handle:
                signal.signal(number, self._handle)

    def _handle(self, _number: int, _frame) -> None:
        self.requested.set()

    def __exit__(self, *_exc) -> None:
        release_signals(self._previous, self.requested.is_set())


def _session(args: argparse.Namespace, stop: StopSignals):
    """The Spark session (a new one takes SIGINT over: the run takes it back)."""
    from rsp.spark.session import session

    spark = session(args.master)
    stop.take_back()
    return spark


def _checkpoint(args: argparse.Namespace, kind: str, out: TextIO):
    """The run's checkpoint (``--checkpoint``), its output file cut back to the last committed batch."""
    if not args.checkpoint:
        return None
    from rsp.spark.checkpoint import Checkpoint

    identity = {
        "kind": kind,
        "program": str(Path(args.program).resolve()),
        "streams": list(args.stream),
        "format": args.format,
        "entailment": args.entailment,
        "partition_by": args.partition_by,
    }
    checkpoint = Checkpoint(args.checkpoint, identity)
    checkpoint.attach_output(out)
    if args.sink:
        checkpoint.attach_sink(args.sink)
    if checkpoint.state is not None and not args.quiet:
        print(
            f"rsp spark: resuming from {args.checkpoint} after micro-batch {checkpoint.committed_batch}",
            file=sys.stderr,
        )
    return checkpoint


def _resume_writer(checkpoint, writer, form) -> None:
    """After a restart the output already has its CSV/TSV header: the new writer writes none."""
    if checkpoint is None or checkpoint.state is None:
        return
    if getattr(writer, "header", False) is None:
        kind = type(form).__name__
        writer.header = ("boolean",) if kind == "Ask" else ("subject", "predicate", "object")


class Reporter:
    """Late elements and malformed lines of a run: on stderr (unless ``--quiet``), malformed lines also in
    ``--reject FILE`` (JSON lines), and counted per stream for the summary."""

    def __init__(self, args: argparse.Namespace, sources: list[str]) -> None:
        self.quiet, self.sources = args.quiet, sources
        self.late = [0] * len(sources)
        self.rejected = [0] * len(sources)
        self.read: dict[int, list[int]] = {}
        """Lines read and elements taken per stream number (the writer's, shared)."""
        self.noun = "triples"
        self.reject_dir = Path(args.reject) if args.reject else None
        if self.reject_dir is not None:
            self.reject_dir.mkdir(parents=True, exist_ok=True)
        self.batch_rejects: list[dict] = []

    def on_late(self, late) -> None:
        self.late[late.stream] += 1
        if not self.quiet:
            s, p, o = late.triple
            print(
                f"{self.sources[late.stream]}: late element at time {late.time} (instant {late.instant} is "
                f"already closed), dropped: {s} {p} {o} .",
                file=sys.stderr,
            )

    def on_late_atom(self, late) -> None:
        self.late[0] += 1
        if not self.quiet:
            print(
                f"{self.sources[0]}: late element {late.atom} at {late.time} dropped (the stream had reached "
                f"{late.reached})",
                file=sys.stderr,
            )

    def on_reject(self, reject) -> None:
        self.rejected[reject.stream] += 1
        where = display_path(reject.file)
        if not self.quiet:
            print(f"{where}: {reject.reason}: {reject.line}", file=sys.stderr)
        if self.reject_dir is not None:
            row = {
                "file": where,
                "stream": self.sources[reject.stream],
                "line": reject.line,
                "reason": reject.reason,
            }
            self.batch_rejects.append(row)

    def write_rejects(self, batch_id: int) -> None:
        """The micro-batch's malformed lines to ``--reject DIR`` as ``batch-<id>.jsonl`` (written again
        whole when Spark runs the micro-batch again)."""
        rows, self.batch_rejects = self.batch_rejects, []
        if rows and self.reject_dir is not None:
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            (self.reject_dir / f"batch-{batch_id:06d}.jsonl").write_text(text, encoding="utf-8")

    def counters(self) -> dict:
        return {"late": list(self.late), "rejected": list(self.rejected), "read": self.read}

    def restore(self, counters: dict) -> None:
        self.late = list(counters.get("late", self.late))
        self.rejected = list(counters.get("rejected", self.rejected))
        self.read.update({int(k): list(v) for k, v in counters.get("read", {}).items()})

    def summary(self, run) -> None:
        if self.quiet:
            return
        for number, (source, late, rejected) in enumerate(
            zip(self.sources, self.late, self.rejected, strict=True)
        ):
            lines, taken = self.read.get(number, (0, 0))
            print(
                f"{source}: {lines:,} lines, {taken:,} {self.noun}, {rejected:,} rejected, {late:,} late",
                file=sys.stderr,
            )
        print(f"rsp spark: {run.batches} micro-batch(es) in {run.elapsed:.1f} s", file=sys.stderr)

    def close(self) -> None:
        self.batch_rejects = []


def _run_query(args: argparse.Namespace, out: TextIO, stop: StopSignals) -> int:
    from rsp.cli.common import open_query
    from rsp.spark.answers import InstantWriter
    from rsp.spark.drive import Run, query_input
    from rsp.spark.reasoner import reason
    from rsp.spark.source import Source

    _engine, query, writer, pairs = open_query(args, args.program, out)
    checkpoint = _checkpoint(args, "query", out)
    _resume_writer(checkpoint, writer, query.query.form)
    sources = [Source.parse(path) for _iri, path in pairs]
    spark = _session(args, stop)
    run = Run(spark, args.checkpoint)
    streams = [(iri, source) for (iri, _path), source in zip(pairs, sources, strict=True)]
    frame = query_input(run, streams, max_files_per_trigger=args.max_files_per_trigger)
    text = Path(args.program).read_text(encoding="utf-8")
    answers = reason(
        frame,
        text,
        file=args.program,
        ontology=args.ontology,
        entailment=args.entailment,
        partition_by=args.partition_by,
        stream_column="stream",
        late=args.late,
        instants=True,
    )
    reporter = Reporter(args, [str(source) for source in sources])
    if checkpoint is not None:
        reporter.restore(checkpoint.counters())
    form = type(query.query.form).__name__.lower()
    consumer = InstantWriter(
        query.name,
        form,
        query.variables,
        writer.write,
        ordered=args.partition_by is not None,
        on_late=reporter.on_late,
        on_reject=reporter.on_reject,
        read=reporter.read,
    )

    try:
        _drive(args, run, answers, consumer, "answer", checkpoint, reporter, out, stop)
    except LateElementError as err:  # the run stops after the instants closed before the late element
        raise LateElementError(f"{sources[0]}: {err}" if len(sources) == 1 else str(err)) from None
    writer.close()
    reporter.summary(run)
    return 0


def _drive(args, run, rows, consumer, kind: str, checkpoint, reporter: Reporter, out: TextIO, stop) -> None:
    """Run the streaming query of ``rows`` until its input ends: each micro-batch to ``consumer`` (the
    output), to ``--sink`` and, with ``--checkpoint``, committed (a micro-batch committed before a
    restart is skipped: its output was written)."""

    def each_batch(batch, batch_id: int) -> None:
        if checkpoint is not None and batch_id <= checkpoint.committed_batch:
            from rsp.spark.drive import evaluate_only

            evaluate_only(batch)  # written and committed before a restart: only the state is made again
            return
        batch = batch.persist()
        try:
            consumer(batch, batch_id)
            out.flush()
            reporter.write_rejects(batch_id)
            if args.sink:
                _sink(batch, args, batch_id, kind)
        finally:
            batch.unpersist()
        if checkpoint is not None:
            checkpoint.commit(batch_id, reporter.counters())

    try:
        run.drive(rows, each_batch, stop.requested, available_now=args.available_now, trigger=args.trigger)
    finally:
        reporter.close()


def _sink(batch, args: argparse.Namespace, batch_id: int, kind: str) -> None:
    """The micro-batch's answers (atoms, facts) into ``--sink DIR`` as the partition ``batch=<id>``
    (written again whole when Spark runs the micro-batch again: exactly once)."""
    from rsp.spark.drive import write_batch

    write_batch(batch, kind, f"{args.sink.rstrip('/')}/batch={batch_id}", args.sink_format or "json")


def _run_program(args: argparse.Namespace, out: TextIO, stop: StopSignals, kind: str) -> int:
    """A LARS (``kind="lars"``) or DatalogMTL program over one stream (:func:`rsp.spark.programs.
    reason_program`), written as ``rsp lars`` / ``rsp mtl`` write it."""
    from rsp.spark.answers import ProgramWriter
    from rsp.spark.drive import Run, program_input
    from rsp.spark.programs import reason_program
    from rsp.spark.source import Source

    what = "LARS" if kind == "lars" else "DatalogMTL"
    if len(args.stream) != 1:
        raise RspError(f"a {what} program reads one stream: give one --stream SOURCE")
    formats = ("jsonl", "count", "text") if kind == "lars" else ("intervals", "jsonl", "count")
    if args.format not in formats:
        raise RspError(f"--format {args.format}: a {what} program writes {', '.join(formats)}")
    if args.ontology or args.entailment != "none":
        raise RspError(f"--ontology and --entailment are for queries, not a {what} program")
    options: dict = {}
    shorten = None
    points = None
    if kind == "lars":
        if args.horizon or args.points or args.output_predicates:
            raise RspError("--horizon, --points and --output-predicates are for DatalogMTL programs")
        from rsp.lars import load

        program = load(args.program)  # errors at their position, before Spark starts
        options["impossible"] = not args.no_impossible
        if args.format == "text":
            from rsp.cli.lars import lars_shortener

            shorten = lars_shortener(program)
        warnings = program.warnings
    else:
        from rsp.cli.mtl import options as mtl_options
        from rsp.mtl import load

        program = load(args.program)
        outputs, horizon, points = mtl_options(args)
        if args.partition_by and args.format != "intervals":
            raise RspError(
                f"--format {args.format}: a DatalogMTL program with --partition-by writes intervals"
            )
        if args.partition_by and points is not None:
            raise RspError("--points: a DatalogMTL program with --partition-by reports facts, not points")
        options.update(outputs=outputs, horizon=args.horizon, points=points)
        warnings = []
    if not args.quiet:
        for warning in warnings:
            print(warning, file=sys.stderr)
    source = Source.parse(args.stream[0].rpartition("=")[2] if "=" in args.stream[0] else args.stream[0])
    checkpoint = _checkpoint(args, kind, out)
    spark = _session(args, stop)
    run = Run(spark, args.checkpoint)
    frame = program_input(run, source, max_files_per_trigger=args.max_files_per_trigger)
    text = Path(args.program).read_text(encoding="utf-8")
    rows = reason_program(
        frame,
        text,
        kind=kind,
        file=args.program,
        name=Path(args.program).stem,
        partition_by=args.partition_by,
        late=args.late,
        instants=True,
        **options,
    )
    reporter = Reporter(args, [str(source)])
    if checkpoint is not None:
        reporter.restore(checkpoint.counters())
    consumer = ProgramWriter(
        kind,
        args.format,
        out.write,
        ordered=args.partition_by is not None,
        points=points is not None,
        shorten=shorten,
        on_late=reporter.on_late_atom,
        on_reject=reporter.on_reject,
        read=reporter.read,
    )
    reporter.noun = "atoms" if kind == "lars" else "facts"
    _drive(args, run, rows, consumer, "atom" if kind == "lars" else "fact", checkpoint, reporter, out, stop)
    reporter.summary(run)
    if kind == "mtl" and not args.quiet and outputs:
        unknown = set(outputs) - program.source.head_predicates()
        for pred in sorted(unknown):
            print(f"{args.program}: warning: output predicate {pred} occurs in no rule head", file=sys.stderr)
    return 0


def _is_mtl(args: argparse.Namespace) -> bool:
    """Whether ``rsp spark``'s program is DatalogMTL: ``--mtl``, or a ``.mtl`` file."""
    return bool(getattr(args, "mtl", False)) or Path(args.program).suffix == ".mtl"
