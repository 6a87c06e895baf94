"""``rsp spark``: a query (``.rq``), LARS program (``.lars``) or DatalogMTL program (``.mtl`` or ``--mtl``,
rsp/spark/mtl.py) fed by Spark Structured Streaming, with the output of ``rsp run`` / ``rsp lars`` /
``rsp mtl``.

Without ``--available-now`` the run goes on until SIGINT (Ctrl-C) or SIGTERM (``kill``, ``timeout``,
systemd, ``docker stop``), which stop it the same way: the micro-batch in progress finishes (and, with
``--checkpoint``, commits), the streaming query stops, the engine closes (the last instants are
emitted), the summary is written and the exit code is 0. The signals are taken over from the start of
the command, so one that arrives while Spark is starting stops the run before its first micro-batch;
further signals, while the run stops and until the process exits, are ignored (SIGKILL is safe with
``--checkpoint``). The JVM runs in a session of its own and ignores SIGTERM, so a signal sent to the
whole process group (``timeout``, Ctrl-C in a terminal) or to every process of a service does not stop
Spark under the run's feet; the JVM still ends with rsp, when its standard input closes.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import TextIO

from rsp.errors import RspError
from rsp.live import release_signals
from rsp.spark.checkpoint import Checkpoint
from rsp.spark.feed import Feeder, ProgramFeeder, QueryFeeder, Rejects, print_error
from rsp.spark.pipeline import drive, union
from rsp.spark.session import SHUFFLE_PARTITIONS, session
from rsp.spark.sink import ResultSink
from rsp.spark.source import Source, read_lines, read_stream


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``rsp spark`` with parsed arguments, writing results to ``out``."""
    if args.sink_format and not args.sink:
        raise RspError("--sink-format needs --sink DIR")
    with StopSignals() as stop:
        if _is_mtl(args):
            return _run_mtl(args, out, stop)
        if Path(args.program).suffix == ".lars":
            return _run_program(args, out, stop)
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


def _session(args: argparse.Namespace, stop: StopSignals, engines: bool = False, parses: bool = True):
    """The Spark session (a new one takes SIGINT over: the run takes it back). ``engines``: for a run
    with ``--partition-by``, whose engine hosts start while the JVM does when the tasks will run on
    this machine (:func:`rsp.spark.hosts.prestart`). ``parses=False``: Spark only reads the lines (the
    driver parses them), see :func:`rsp.spark.session.jit_options`."""
    if engines:
        from rsp.spark.hosts import prestart_local

        prestart_local(args.master, SHUFFLE_PARTITIONS)
    spark = session(args.master, quick_exit=True, parses=parses)
    stop.take_back()
    return spark


def _checkpoint(args: argparse.Namespace, kind: str, out: TextIO) -> Checkpoint | None:
    """The run's checkpoint (``--checkpoint``), its output file cut back to the last committed batch."""
    if not args.checkpoint:
        return None
    identity = {
        "kind": kind,
        "program": str(Path(args.program).resolve()),
        "streams": list(args.stream),
        "format": args.format,
        "entailment": args.entailment,
    }
    checkpoint = Checkpoint(args.checkpoint, identity)
    checkpoint.attach_output(out)
    if checkpoint.state is not None and not args.quiet:
        print(
            f"rsp spark: resuming from {args.checkpoint} after micro-batch {checkpoint.committed_batch}",
            file=sys.stderr,
        )
    return checkpoint


def _resume_writer(checkpoint: Checkpoint | None, writer, form) -> None:
    """After a restart the output already has its CSV/TSV header: drop the one the new writer wrote."""
    if checkpoint is None or checkpoint.state is None:
        return
    checkpoint.truncate_output()
    if getattr(writer, "header", False) is None:
        kind = type(form).__name__
        writer.header = ("boolean",) if kind == "Ask" else ("subject", "predicate", "object")


def _run_partitioned(args: argparse.Namespace, out: TextIO, stop: StopSignals) -> int:
    """``--partition-by ?k``: one engine per key on the executors (see :mod:`rsp.spark.partitioned`)."""
    from rsp.cli.common import open_query
    from rsp.query.translation.partition import partition_plan
    from rsp.spark.resident import Job
    from rsp.spark.resident_driver import ResidentMerger

    checkpoint = _checkpoint(args, "query --partition-by", out)
    engine, query, writer, pairs = open_query(args, args.program, out)
    _resume_writer(checkpoint, writer, query.query.form)
    plan = partition_plan(query.query, args.partition_by, query.background_rules)
    plan.check_static(query.static_closure, "--ontology and FROM graphs")
    sources = [Source.parse(path) for _iri, path in pairs]
    spark = _session(args, stop, engines=True)
    text = Path(args.program).read_text(encoding="utf-8")
    streams = tuple(i for i, _ in pairs)
    job = Job(text, args.program, streams, plan, query.step, args.entailment, tuple(engine.static))
    sink = ResultSink(spark, args.sink, args.sink_format or "json", "select") if args.sink else None

    def emit(result) -> None:
        writer.write(result)
        if sink is not None:
            sink.add(result)

    reject, after = _merger_callbacks(args, args.stream[0], sink)
    logs = None if checkpoint is None else str(checkpoint.home / "partitions")
    merger = ResidentMerger(spark, job, query.name, query.variables, query.step, emit, reject, logs=logs)
    merger.after_batch.append(after)
    _resume(args, merger, checkpoint)
    # the lines as Spark reads them: the tasks parse and key them (rsp.spark.resident.keyed_lines)
    frames = [
        read_lines(spark, source, max_files_per_trigger=args.max_files_per_trigger) for source in sources
    ]
    _drive(args, merger, union(frames), checkpoint, stop)
    writer.close()
    _summary(args, merger, "")
    return 0


def _merger_callbacks(args: argparse.Namespace, stream: str, sink: ResultSink | None):
    """For a partitioned run's merger: ``reject`` collects the malformed lines the keys report, ``after``
    writes them (stderr, ``--reject``) and the sink's rows at the end of each micro-batch."""
    rejects = Rejects(args.reject, print_error)
    collected: list[dict] = []

    def reject(row: dict) -> None:
        collected.append({**row, "stream": stream})

    def after(batch_id: int) -> None:
        rejects.write(batch_id, list(collected))
        collected.clear()
        if sink is not None:
            sink.write(batch_id)

    return reject, after


def _resume(args: argparse.Namespace, consumer, checkpoint: Checkpoint | None) -> None:
    """Checkpoint a feeder or merger: drop the sink partitions of uncommitted micro-batches and take
    rsp's committed state back (nothing without ``--checkpoint``)."""
    if checkpoint is None:
        return
    if args.sink:
        checkpoint.attach_sink(args.sink)
    consumer.resume(checkpoint)


def _time_point_record(t: int, fmt: str, atoms: list[str], count: int) -> str:
    """One time point of a LARS program's output as ``rsp lars`` writes it (jsonl, count or text)."""
    if fmt == "count":
        return f'{{"time": {t}, "count": {count}}}\n'
    if fmt == "jsonl":
        return json.dumps({"time": t, "atoms": atoms}, ensure_ascii=False) + "\n"
    return f"{t:>6} | {'  '.join(atoms) if atoms else '-'}\n"


def _run_program_partitioned(args: argparse.Namespace, out: TextIO, source: Source, stop: StopSignals) -> int:
    """``--partition-by V`` for a LARS program: resident partition engines on the executors
    (:mod:`rsp.spark.resident_programs`)."""
    from rsp.lars import load
    from rsp.lars.partition import partition_keys
    from rsp.spark.resident_programs import ProgramJob, ResidentProgramMerger

    checkpoint = _checkpoint(args, "lars --partition-by", out)
    program = load(args.program)
    keys = partition_keys(program.program, args.partition_by)
    fmt = args.format if args.format in ("jsonl", "count", "text") else None
    if fmt is None:
        raise RspError(f"--format {args.format}: a LARS program writes jsonl, count or text")
    if not args.quiet:
        for warning in program.warnings:
            print(warning, file=sys.stderr)
    spark = _session(args, stop, engines=True)
    sink = ResultSink(spark, args.sink, args.sink_format or "json", "lars") if args.sink else None
    name = Path(args.program).stem
    job = ProgramJob(Path(args.program).read_text(encoding="utf-8"), args.program, keys)

    def emit(t: int, atoms: list[str]) -> None:
        out.write(_time_point_record(t, fmt, atoms, len(atoms)))
        if sink is not None:
            sink.add_atoms(name, t, atoms)
        out.flush()

    reject, after = _merger_callbacks(args, str(source), sink)
    logs = None if checkpoint is None else str(checkpoint.home / "partitions")
    merger = ResidentProgramMerger(spark, job, name, program, emit, reject, logs=logs)
    merger.after_batch.append(after)
    _resume(args, merger, checkpoint)
    frame = read_stream(spark, source, kind="atoms", max_files_per_trigger=args.max_files_per_trigger)
    _drive(args, merger, frame, checkpoint, stop)
    _summary(args, merger, "")
    return 0


def _run_query(args: argparse.Namespace, out: TextIO, stop: StopSignals) -> int:
    from rsp.cli.common import open_query

    if args.partition_by:
        return _run_partitioned(args, out, stop)
    checkpoint = _checkpoint(args, "query", out)
    engine, query, writer, pairs = open_query(args, args.program, out)
    _resume_writer(checkpoint, writer, query.query.form)
    sources = [Source.parse(path) for _iri, path in pairs]
    spark = _session(args, stop, parses=False)  # Spark reads the lines, the driver parses them (below)
    feeder = QueryFeeder(
        engine,
        [iri for iri, _path in pairs],
        [str(source) for source in sources],
        rejects=Rejects(args.reject, print_error),
        on_late=print_error,
        plain=True,  # rows of read_lines: terms taken by the fast-path regex or re-checked by rsp's parser
    )
    if args.sink:
        form = query.query.form
        kind = type(form).__name__.lower()
        sink = ResultSink(spark, args.sink, args.sink_format or "json", kind)
        query.subscribe(sink.add)
        feeder.after_batch.append(sink.write)
    _resume(args, feeder, checkpoint)
    # one engine, in the driver, which receives every line anyway: Spark reads them, the driver parses
    # them (rsp/spark/lines.py: Arrow's regex engine, off the GIL)
    frames = [
        read_lines(spark, source, max_files_per_trigger=args.max_files_per_trigger) for source in sources
    ]
    _drive(args, feeder, union(frames), checkpoint, stop)
    writer.close()
    _summary(args, feeder, "")
    return 0


def _run_program(args: argparse.Namespace, out: TextIO, stop: StopSignals) -> int:
    from rsp.engine import Engine
    from rsp.lars import load
    from rsp.lars.model import format_atom

    if len(args.stream) != 1:
        raise RspError("a LARS program reads one stream: give one --stream SOURCE")
    source = Source.parse(args.stream[0].rpartition("=")[2] if "=" in args.stream[0] else args.stream[0])
    if args.partition_by:
        return _run_program_partitioned(args, out, source, stop)
    checkpoint = _checkpoint(args, "lars", out)
    program = load(args.program)
    if not args.quiet:
        for warning in program.warnings:
            print(warning, file=sys.stderr)
    engine = Engine(program, impossible=not args.no_impossible)
    fmt = args.format if args.format in ("jsonl", "count", "text") else None
    if fmt is None:
        raise RspError(f"--format {args.format}: a LARS program writes jsonl, count or text")
    spark = _session(args, stop)
    sink = ResultSink(spark, args.sink, args.sink_format or "json", "lars") if args.sink else None
    name = Path(args.program).stem

    def emit(t: int) -> None:
        if fmt == "count":
            out.write(_time_point_record(t, fmt, [], engine.count()))
        else:
            atoms = sorted(format_atom(p, a) for p, a in engine.output())
            out.write(_time_point_record(t, fmt, atoms, len(atoms)))
            if sink is not None:
                sink.add_atoms(name, t, atoms)
        out.flush()

    def late(time_: int, pred: str, atom_args: tuple) -> None:
        print(f"{source}: late element {format_atom(pred, atom_args)} at {time_} dropped", file=sys.stderr)

    feeder = ProgramFeeder(engine, emit, str(source), rejects=Rejects(args.reject, print_error), on_late=late)
    if sink is not None:
        feeder.after_batch.append(sink.write)
    _resume(args, feeder, checkpoint)
    frame = read_stream(spark, source, kind="atoms", max_files_per_trigger=args.max_files_per_trigger)
    _drive(args, feeder, frame, checkpoint, stop)
    _summary(args, feeder, "")
    return 0


def _summary(args: argparse.Namespace, feeder: Feeder, engine_late: str) -> None:
    if args.quiet:
        return
    for line in feeder.summary():
        print(line + engine_late, file=sys.stderr)
    elapsed = getattr(feeder, "elapsed", 0.0)
    print(f"rsp spark: {feeder.batches} micro-batch(es) in {elapsed:.1f} s", file=sys.stderr)


def _drive(
    args: argparse.Namespace, feeder: Feeder, frame, checkpoint: Checkpoint | None, stop: StopSignals
) -> None:
    """:func:`rsp.spark.pipeline.drive` with the run's options."""
    drive(feeder, frame, checkpoint, stop.requested, available_now=args.available_now, trigger=args.trigger)


def _run_mtl(args: argparse.Namespace, out: TextIO, stop: StopSignals) -> int:
    """``rsp spark`` for a DatalogMTL program (rsp/spark/mtl.py)."""
    from rsp.cli.mtl import options, writer
    from rsp.mtl import load
    from rsp.mtl.engine import Engine
    from rsp.spark.mtl import MtlFeeder

    if len(args.stream) != 1:
        raise RspError("a DatalogMTL program reads one stream: give one --stream SOURCE")
    if args.partition_by:
        source = Source.parse(args.stream[0].rpartition("=")[2] if "=" in args.stream[0] else args.stream[0])
        return _run_mtl_partitioned(args, out, stop, source)
    for option, value in (("--checkpoint", args.checkpoint), ("--sink", args.sink)):
        if value:
            raise RspError(f"{option} is not supported with a DatalogMTL program yet")
    fmt = args.format if args.format in ("intervals", "jsonl", "count") else None
    if fmt is None:
        raise RspError(f"--format {args.format}: a DatalogMTL program writes intervals, jsonl or count")
    source = Source.parse(args.stream[0].rpartition("=")[2] if "=" in args.stream[0] else args.stream[0])
    program = load(args.program)
    outputs, horizon, points = options(args)
    engine = Engine(program, outputs=outputs, horizon=horizon, points=points, late=args.late)
    write = writer(out, fmt, points is not None)

    def emit(results) -> None:
        write(results)
        out.flush()

    spark = _session(args, stop)
    feeder = MtlFeeder(engine, emit, str(source), rejects=Rejects(args.reject, print_error))
    frame = read_stream(spark, source, kind="atoms", max_files_per_trigger=args.max_files_per_trigger)
    _drive(args, feeder, frame, None, stop)
    _summary(args, feeder, "")
    if not args.quiet:
        unknown = set(outputs or ()) - program.source.head_predicates() - set(engine.store)
        for pred in sorted(unknown):
            print(f"{args.program}: warning: output predicate {pred} occurs in no rule head", file=sys.stderr)
    return 0


def _is_mtl(args: argparse.Namespace) -> bool:
    """Whether ``rsp spark``'s program is DatalogMTL: ``--mtl``, or a ``.mtl`` file."""
    return bool(getattr(args, "mtl", False)) or Path(args.program).suffix == ".mtl"


def _run_mtl_partitioned(args: argparse.Namespace, out: TextIO, stop: StopSignals, source: Source) -> int:
    """``rsp spark PROGRAM.mtl --partition-by V`` (rsp/spark/resident_mtl.py)."""
    from rsp.cli.mtl import options
    from rsp.mtl import load
    from rsp.spark.resident_mtl import MtlJob, MtlMerger, mtl_keys

    if args.format != "intervals":
        raise RspError(f"--format {args.format}: a DatalogMTL program with --partition-by writes intervals")
    if args.points or args.checkpoint or args.sink:
        option = "--points" if args.points else "--checkpoint" if args.checkpoint else "--sink"
        raise RspError(f"{option} is not supported with a DatalogMTL program and --partition-by yet")
    program = load(args.program)
    keys = mtl_keys(program, args.partition_by)
    outputs, horizon, _points = options(args)
    text = Path(args.program).read_text(encoding="utf-8")
    job = MtlJob(text, args.program, keys, None if outputs is None else tuple(outputs), horizon, args.late)
    spark = _session(args, stop, engines=True)

    def emit(lines: list[str]) -> None:
        out.write("".join(line + "\n" for line in lines))
        out.flush()

    reject, after = _merger_callbacks(args, str(source), None)
    merger = MtlMerger(spark, job, Path(args.program).stem, emit, reject)
    merger.after_batch.append(after)
    frame = read_stream(spark, source, kind="atoms", max_files_per_trigger=args.max_files_per_trigger)
    _drive(args, merger, frame, None, stop)
    _summary(args, merger, "")
    return 0
