"""Stream sources in Spark: a directory that receives files, one file, or a socket, read as lines and
parsed by Spark SQL regexes into the columns :func:`rsp.spark.reason` takes (:func:`read_stream`).

The regexes are Java ports of rsp's own fast path (:mod:`rsp.io.ntriples`): a strict subset of
N-Triples, so a line they accept is a line :func:`rsp.io.ntriples.parse_line` accepts. Lines they
do not take keep null terms and their text: the reading step before the engines' shuffle reads them with
rsp's parser (:func:`rsp.spark.syntax.recheck_triple`), which decides and explains.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from rsp.errors import RspError
from rsp.spark.syntax import (  # noqa: F401 - TRIPLE and the classes: this module's names before
    ATOM_TIME,
    ATOMS_BLANK,
    NTRIPLES_BLANK,
    TIME,
    TRIPLE,
    char_class,
)

_SEP = "\u0001"


@dataclass(frozen=True)
class Source:
    """Where a stream comes from: ``kind`` is ``directory``, ``file`` or ``socket``.

    >>> Source.parse("socket://127.0.0.1:9999")
    Source(kind='socket', path=None, host='127.0.0.1', port=9999)
    """

    kind: str
    path: str | None = None
    host: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> Source:
        """``socket://HOST:PORT``, a directory, or a file (which must exist)."""
        if text.startswith("socket://"):
            m = re.fullmatch(r"socket://([^:/]+):([0-9]+)/?", text)
            if m is None:
                raise RspError(f"--stream {text}: write a socket source as socket://HOST:PORT")
            return cls("socket", host=m.group(1), port=int(m.group(2)))
        if "://" in text and not text.startswith("file://"):
            return cls("directory", path=text)  # hdfs://, s3a://: a directory on a cluster file system
        path = Path(text.removeprefix("file://"))
        if path.is_dir():
            return cls("directory", path=str(path.resolve()))
        if path.is_file():
            return cls("file", path=str(path.resolve()))
        raise RspError(f"--stream {text}: no such file or directory (nor socket://HOST:PORT)")

    def __str__(self) -> str:
        return f"socket://{self.host}:{self.port}" if self.kind == "socket" else str(self.path)


def _lines(spark: SparkSession, source: Source, max_files_per_trigger: int | None) -> DataFrame:
    """Raw lines with where they come from: value, file, file_time, block, arrival."""
    if source.kind == "socket":
        raw = (
            spark.readStream.format("socket")
            .option("host", source.host)
            .option("port", source.port)
            .option("includeTimestamp", True)
            .load()
        )
        return raw.select(
            "value",
            F.lit(None).cast("string").alias("file"),
            F.lit(None).cast("timestamp").alias("file_time"),
            F.lit(None).cast("long").alias("block"),
            F.unix_millis("timestamp").alias("arrival"),
        )
    reader = spark.readStream.format("text")
    path = source.path
    if source.kind == "file":  # the file source reads directories: the file's own, filtered to it
        reader = reader.option("pathGlobFilter", glob.escape(Path(path).name))
        path = str(Path(path).parent)
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", max_files_per_trigger)
    return reader.load(path).select(
        "value",
        F.col("_metadata.file_path").alias("file"),
        F.col("_metadata.file_modification_time").alias("file_time"),
        F.col("_metadata.file_block_start").alias("block"),
        F.lit(None).cast("long").alias("arrival"),
    )


def _group(pattern: str, index: int) -> Column:
    value = F.regexp_extract("value", pattern, index)
    return F.when(value != "", value)


def read_stream(
    spark: SparkSession,
    source: str | Source,
    *,
    kind: str = "ntriples",
    max_files_per_trigger: int | None = None,
) -> DataFrame:
    """The streaming DataFrame of a source's lines, parsed and timestamped by Spark.

    ``kind`` is ``ntriples`` (stream files with ``# <ms>`` time comments) or ``atoms`` (LARS
    ``<time> <atom>`` lines). Blank and comment lines are left out. Columns:

    * ``s``, ``p``, ``o`` — the terms (N-Triples syntax), null where the fast regex did not take the
      line (always null for ``atoms``: rsp's parser reads atoms);
    * ``time`` — from the ``# <ms>`` comment (or the leading time of an atom line), else null;
    * ``line`` — the text of a line Spark did not fully parse (null for the others; always the text
      for ``atoms``);
    * ``file`` — the source file's URI (null for a socket);
    * ``file_time``, ``block`` — the file's modification time and the start of the file split the line
      is in (with the row position, the order of lines within a micro-batch);
    * ``arrival`` — arrival time in ms for socket lines (Spark's ``includeTimestamp``), else null.
    """
    if isinstance(source, str):
        source = Source.parse(source)
    return parse_lines(_lines(spark, source, max_files_per_trigger), kind)


def parse_lines(lines: DataFrame, kind: str = "ntriples") -> DataFrame:
    """Raw lines (``value``, ``file``, ``file_time``, ``block``, ``arrival``: a stream or a static
    frame) parsed and timestamped as :func:`read_stream` describes (N-Triples lines keep a ``stream``
    column)."""
    if kind == "ntriples":
        # one regex pass per line: a matching line is rewritten to 's^Ap^Ao^Atime' and split. The rewrite
        # and the split are columns of their own, so that the (costly) regex runs once per line, not once
        # per use.
        rewritten = F.regexp_replace("value", TRIPLE, f"$1{_SEP}$2{_SEP}$3{_SEP}$4")
        # a line that starts with "<" is no blank or comment line: the regex is not run on it (Java's
        # find() tried the anchored pattern at every position of every line: ≈ 6 % of the JVM's samples)
        value = F.col("value")
        content = lines.where(value.startswith("<") | ~value.rlike(NTRIPLES_BLANK))
        split = content.select("*", rewritten.alias("_rewritten"))
        split = split.select("*", F.split("_rewritten", _SEP).alias("f"))
        fields = F.col("f")
        # the pattern took the line when the rewrite differs from it (a rewrite puts a separator right
        # after the subject, where the line has a space, a tab or the predicate's "<"), and each term is
        # free of the separator when the rewrite splits in four (a search of the whole line for the
        # separator took ≈ 6 % of the JVM's samples)
        parsed = (F.size(fields) == 4) & (F.col("_rewritten") != value)
        # a time too large for a long is null (the line goes to rsp's parser, which rejects it), not an error
        s, time = F.when(parsed, fields[0]), F.when(parsed, F.nullif(fields[3], F.lit(""))).try_cast("long")
        return split.select(
            s.alias("s"),
            F.when(parsed, fields[1]).alias("p"),
            F.when(parsed, fields[2]).alias("o"),
            time.alias("time"),
            F.when(s.isNull() | time.isNull(), F.col("value")).alias("line"),
            "file",
            "file_time",
            "block",
            "arrival",
            *(["stream"] if "stream" in lines.columns else []),  # a union of sources with a stream column
        )
    if kind == "atoms":
        time = F.coalesce(_group(ATOM_TIME, 1), _group(TIME, 1)).try_cast("long")
        value = F.col("value")  # a line that starts with a digit (its time) is no blank or comment line
        starts = F.substring(value, 1, 1).isin(*"0123456789")
        return lines.where(starts | ~value.rlike(ATOMS_BLANK)).select(
            *(F.lit(None).cast("string").alias(name) for name in "spo"),
            time.alias("time"),
            F.col("value").alias("line"),
            "file",
            "file_time",
            "block",
            "arrival",
        )
    raise RspError(f"unknown stream kind {kind!r} (expected ntriples or atoms)")


def display_path(uri: str | None) -> str:
    """A file URI as Spark reports it (a rejected line's ``file``), as a local path for people (other
    URIs unchanged; a socket's lines have none).

    >>> display_path("file:/tmp/in%20dir/a.nt"), display_path("hdfs://nn/x.nt"), display_path(None)
    ('/tmp/in dir/a.nt', 'hdfs://nn/x.nt', '<socket>')
    """
    from urllib.parse import unquote, urlparse

    if uri is None:
        return "<socket>"
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
