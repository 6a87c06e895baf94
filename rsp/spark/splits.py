"""A file source's micro-batch read by the keying tasks themselves: the file splits Spark planned for the
micro-batch (:func:`file_splits`, taken from the batch's own plan in the driver), one keying task per
split group (:func:`splits_frame`), each reading its byte ranges with Hadoop's line rules
(:func:`split_lines`, :func:`read_group`) instead of taking the lines from the JVM's text reader. The
groups come with the micro-batch's job as a Spark local property (:data:`PIECES_PROPERTY`), so that
the job's DataFrame is built once and only planned again for each micro-batch.

What it saves (``rsp spark QUERY --partition-by ?k``): the JVM no longer decodes the lines into rows,
adds the file's path to each, converts them to Arrow and hands them over a socket to the Python worker,
and that code is no longer compiled cold in the first micro-batches. Measured with a static job per
100k-line file (read, key, pack, shuffle; five rounds of ten files alternating, docs/spark.md): JVM
reading 3.4–4.2 s, tasks reading 2.7–3.5 s over the ten files once warm, and less CPU.

It applies to one stream read from plain files the Python workers can open (``file:`` URIs, no
compression codec's extension); other sources (sockets, several streams, ``hdfs://``, compressed files)
keep the JVM's reader, and so does a micro-batch whose plan is not one file scan (``None``).

Hadoop's rules, which Spark's text source follows and these keep: a split ``[start, start + length)``
owns the lines that start after ``start`` (from 0 for the file's first split) and at or before its end,
read to their end in the next split if need be; a line ends at ``\\n``, ``\\r\\n`` or ``\\r``; the file's
last line needs no terminator. Lines are not decoded (the JVM's reader does not check their UTF-8
either).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:  # PySpark is imported where a DataFrame is built: the Python workers need pyarrow only
    from pyspark.sql import DataFrame

CHUNK = 4 << 20
"""Bytes a task reads at a time (then to the end of the line): one Arrow batch of lines each."""
LINES_SCHEMA = pa.schema([("value", pa.string()), ("file", pa.string()), ("arrival", pa.int64())])
"""The columns :func:`read_group` gives, as :func:`rsp.spark.source.read_lines` has them for a file."""


@dataclass(frozen=True)
class Piece:
    """A byte range of a file: ``uri`` as Spark's ``_metadata.file_path`` gives it, ``path`` the local
    path a worker opens."""

    uri: str
    path: str
    start: int
    length: int


def split_lines(path: str, start: int, length: int, chunk: int = CHUNK) -> Iterator[pa.Array]:
    """The lines a split of a file owns (Hadoop's rules, see the module), as string arrays of at most
    about ``chunk`` bytes each, in order."""
    end = start + length
    with open(path, "rb") as handle:
        if start:
            handle.seek(start)
            _through_line_end(handle)  # the line through the start is the previous split's
        position = handle.tell()
        while position <= end:
            data = handle.read(min(chunk, end - position + 1))
            if not data:
                return
            if data[-1] == CR:
                if handle.peek(1)[:1] == b"\n":
                    data += handle.read(1)  # a "\r\n" cut after its "\r"
            elif data[-1] != LF:
                data += _through_line_end(handle)  # the last line started in the split: read to its end
            position += len(data)
            yield lines_of(data)


CR, LF = 13, 10


def _through_line_end(handle) -> bytes:
    """The bytes of ``handle`` up to the end of the line, its terminator included (to the file's end
    when no terminator follows)."""
    read = []
    while True:
        block = handle.peek(1 << 16)
        if not block:
            return b"".join(read)
        ends = [i for i in (block.find(b"\n"), block.find(b"\r")) if i >= 0]
        if not ends:
            read.append(handle.read(len(block)))
            continue
        cut = min(ends)
        read.append(handle.read(cut + 1))
        if block[cut] == CR and handle.peek(1)[:1] == b"\n":
            read.append(handle.read(1))
        return b"".join(read)


def lines_of(data: bytes) -> pa.Array:
    """The lines of ``data`` (ending at a line's end or the file's), without their terminators.

    >>> lines_of(b"a\\nb\\r\\nc\\rd").to_pylist()
    ['a', 'b', 'c', 'd']
    >>> lines_of(b"a\\n\\n").to_pylist()
    ['a', '']
    """
    text = pa.array([data], pa.binary()).view(pa.string())  # not decoded, as the JVM's reader
    if b"\r" in data:
        lines = pc.split_pattern_regex(text, r"\r\n|\r|\n").values
    else:
        lines = pc.split_pattern(text, "\n").values
    if data.endswith((b"\n", b"\r")):
        lines = lines.slice(0, len(lines) - 1)  # the empty piece after the last terminator
    return lines


PIECES_PROPERTY = "rsp.pieces"
"""The Spark local property a micro-batch's job carries its splits in (:func:`pieces_property`)."""


def pieces_property(groups: list[list[Piece]]) -> str:
    """The groups of :func:`file_splits` as the text of :data:`PIECES_PROPERTY` (JSON): task ``i`` of the
    keying stage reads group ``i``."""
    return json.dumps([[[p.uri, p.path, p.start, p.length] for p in group] for group in groups])


def read_group(group: Iterable[list]) -> Iterator[pa.RecordBatch]:
    """A group's pieces (``[uri, path, start, length]``) read in order into batches of
    :data:`LINES_SCHEMA` (``arrival`` null: files have none)."""
    for uri, path, start, length in group:
        for lines in split_lines(path, start, length):
            n = len(lines)
            file = pa.repeat(pa.scalar(uri, pa.string()), n)
            yield pa.RecordBatch.from_arrays([lines, file, pa.nulls(n, pa.int64())], schema=LINES_SCHEMA)


def splits_keyer(keyer):
    """``keyer`` (Arrow batches of lines in, keyed rows out: :func:`rsp.spark.resident.line_keyer`) over
    the lines of the group its task reads: the group of the task's partition in its job's
    :data:`PIECES_PROPERTY` (the task's own input, one row of :func:`splits_frame`, says nothing)."""

    def read_and_key(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        for _ in batches:
            pass
        context = TaskContext.get()
        groups = json.loads(context.getLocalProperty(PIECES_PROPERTY))
        return keyer(read_group(groups[context.partitionId()]))

    return read_and_key


def file_splits(batch: DataFrame, compressed: tuple[str, ...]) -> list[list[Piece]] | None:
    """The micro-batch's splits as Spark planned them, grouped by task (its ``FilePartition``s), when
    the batch is one file scan of files the Python workers can read: ``file:`` URIs whose names end in
    none of ``compressed`` (:func:`codec_extensions`). None otherwise, and for a micro-batch without
    files. ``foreachBatch`` hands the micro-batch over as a plan over the RDD Spark built for it, whose
    lineage ends in the scan."""
    plan = batch._jdf.queryExecution().analyzed()
    if plan.getClass().getSimpleName() != "LogicalRDD":
        return None
    return scan_splits(plan.rdd(), compressed)


def scan_splits(rdd, compressed: tuple[str, ...]) -> list[list[Piece]] | None:
    """:func:`file_splits` of a JVM RDD: its lineage's one leaf must be a file scan."""
    leaves: list = []
    pending = [rdd]
    while pending:
        rdd = pending.pop()
        dependencies = rdd.dependencies()
        if not dependencies.length():
            leaves.append(rdd)
        pending.extend(dependencies.apply(i).rdd() for i in range(dependencies.length()))
    if len(leaves) != 1 or leaves[0].getClass().getSimpleName() != "FileScanRDD":
        return None
    groups = []
    partitions = leaves[0].filePartitions()
    for index in range(partitions.length()):
        pieces = []
        for file in partitions.apply(index).files():
            uri = file.filePath().urlEncoded()
            parts = urlsplit(uri)
            if parts.scheme != "file" or parts.netloc or uri.lower().endswith(compressed):
                return None
            # as Spark's _metadata.file_path has it (Hadoop's Path: "file:/x", not "file:///x")
            pieces.append(Piece("file:" + parts.path, unquote(parts.path), file.start(), file.length()))
        if pieces:
            groups.append(pieces)
    return groups or None


def codec_extensions(spark) -> tuple[str, ...]:
    """The file name extensions of Hadoop's compression codecs in ``spark``'s configuration (a file named
    so is decompressed by Spark's text reader), lower case."""
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    classes = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory.getCodecClasses(conf)
    new = jvm.org.apache.hadoop.util.ReflectionUtils.newInstance
    return tuple(sorted({str(new(cls, conf).getDefaultExtension()).lower() for cls in classes}))


def splits_frame(spark, tasks: int) -> DataFrame:
    """The keying stage's input for ``tasks`` groups: one row in each of ``tasks`` partitions, made in
    the JVM (what a task reads comes with its job: :func:`splits_keyer`)."""
    return spark.range(tasks, numPartitions=tasks)


__all__ = [
    "Piece", "codec_extensions", "file_splits", "pieces_property", "read_group", "split_lines", "splits_frame"
]
