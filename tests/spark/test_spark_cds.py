"""The class-data-sharing archive of the Spark driver JVM (rsp/spark/cds.py): which JVM options a
session gets, one background builder at a time, an archive the builder makes that a session maps
(checked with ``-Xshare:on``, which fails when the archive cannot be used), and a damaged archive that
is deleted while the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import ROOT

from rsp.spark import cds

QUERY = """REGISTER QUERY Count AS
SELECT (COUNT(*) AS ?n)
FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s]
WHERE { ?s <http://ex.org/p> ?o }
"""
LINES = "".join(f'<http://ex.org/e{k}> <http://ex.org/p> "{k}" . # {k * 300}\n' for k in range(10))


class _Popen:
    started: list[list[str]] = []

    def __init__(self, args, **kwargs) -> None:
        _Popen.started.append(list(args))


def test_options_map_an_archive_dump_in_the_builder_or_start_one_builder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RSP_SPARK_CDS_DIR", str(tmp_path))
    monkeypatch.delenv("RSP_SPARK_CDS", raising=False)
    monkeypatch.delenv(cds.DUMP, raising=False)
    monkeypatch.setattr(cds.subprocess, "Popen", _Popen)
    _Popen.started = []
    java = sys.executable  # any executable file names an install
    archive = cds.archive(java)
    assert archive.parent == tmp_path and archive.name.startswith("spark-")

    assert cds.java_options(java) == ""  # none yet: a builder starts, this session goes on without
    assert len(_Popen.started) == 1 and _Popen.started[0][1:3] == ["-m", "rsp.cli.spark_cds"]
    assert cds.java_options(java) == "" and len(_Popen.started) == 1  # one builder at a time (its lock)

    lock = tmp_path / f"{cds.key(java)}.lock"
    old = time.time() - cds.STALE_LOCK_S - 10
    os.utime(lock, (old, old))  # a builder that died long ago: another starts
    assert cds.java_options(java) == "" and len(_Popen.started) == 2

    archive.write_bytes(b"made")
    assert cds.java_options(java).startswith(f"-XX:SharedArchiveFile={archive} -Xshare:auto {cds.QUIET} ")
    monkeypatch.setenv(cds.DUMP, str(tmp_path / "x.part"))
    assert cds.java_options(java) == f"-XX:ArchiveClassesAtExit={tmp_path / 'x.part'} {cds.QUIET}"
    monkeypatch.setenv("RSP_SPARK_CDS", "0")
    assert cds.java_options(java) == ""
    assert len(_Popen.started) == 2


def test_a_builder_keeps_the_archives_of_other_installs_in_use(tmp_path, monkeypatch) -> None:
    """Two virtual environments share the cache: each one's builder keeps the other's archive while it
    is used (a session touches the archive it maps), and deletes one left unused for a month."""
    monkeypatch.setenv("RSP_SPARK_CDS_DIR", str(tmp_path))
    monkeypatch.delenv("RSP_SPARK_CDS", raising=False)
    monkeypatch.delenv(cds.DUMP, raising=False)
    mine, used, unused = (tmp_path / f"spark-{n}.jsa" for n in ("mine", "used", "unused"))
    for path in (mine, used, unused):
        path.write_bytes(b"made")
    month_ago = time.time() - cds.UNUSED_S - 60
    for path in (used, unused):
        os.utime(path, (month_ago, month_ago))
    monkeypatch.setattr(cds, "archive", lambda java: used)
    assert cds.java_options(sys.executable).startswith(f"-XX:SharedArchiveFile={used} ")  # touches it
    cds.clean_up(tmp_path, mine)
    assert sorted(tmp_path.iterdir()) == [mine, used]


def test_a_builder_deletes_the_archives_of_installs_that_are_gone(tmp_path) -> None:
    """An archive whose recorded PySpark folder no longer exists (a removed virtual environment or
    clone) is deleted at once with its record, one whose folder exists is kept, one without a record
    follows the month's rule; records left without an archive go too."""
    cache = tmp_path / "cache"
    cache.mkdir()
    living = tmp_path / "venv" / "pyspark"
    living.mkdir(parents=True)
    mine, gone, alive, unrecorded = (cache / f"spark-{n}.jsa" for n in ("mine", "gone", "alive", "old"))
    for path in (mine, gone, alive, unrecorded):
        path.write_bytes(b"made")
    gone.with_suffix(".install").write_text(str(tmp_path / "removed" / "pyspark"), encoding="utf-8")
    alive.with_suffix(".install").write_text(f"{living}\n", encoding="utf-8")
    (cache / "spark-orphan.install").write_text(str(living), encoding="utf-8")
    cds.clean_up(cache, mine)
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [mine.name, alive.name, "spark-alive.install", unrecorded.name]
    )
    month_ago = time.time() - cds.UNUSED_S - 60
    os.utime(unrecorded, (month_ago, month_ago))
    os.utime(alive, (month_ago, month_ago))
    cds.clean_up(cache, mine)
    assert sorted(p.name for p in cache.iterdir()) == [mine.name]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    query = tmp_path / "count.rq"
    query.write_text(QUERY, encoding="utf-8")
    stream = tmp_path / "stream"
    stream.mkdir()
    (stream / "a.nt").write_text(LINES, encoding="utf-8")
    return query, stream


def _rsp(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    merged = {**os.environ, **env}
    merged.pop("PYSPARK_GATEWAY_PORT", None)
    merged.pop("PYSPARK_GATEWAY_SECRET", None)
    return subprocess.run([sys.executable, "-m", "rsp", *args], capture_output=True, text=True,
                          env=merged, cwd=ROOT, timeout=600)  # fmt: skip


def _expected(query: Path, stream: Path) -> str:
    done = _rsp(["run", str(query), "--stream", str(stream / "a.nt"), "-q"], {})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") >= 2
    return done.stdout


@pytest.mark.spark
def test_the_builder_makes_an_archive_that_a_session_maps_and_a_damaged_one_is_left_aside(tmp_path) -> None:
    from rsp.spark import java_executable

    java = java_executable()
    if java is None:
        pytest.skip("no java")
    home = tmp_path / "cds"
    env = {"RSP_SPARK_CDS_DIR": str(home)}
    done = subprocess.run([sys.executable, "-m", "rsp.cli.spark_cds", str(home), cds.key(java)],
                          env={**os.environ, **env}, cwd=ROOT, timeout=900, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    archive = home / f"{cds.key(java)}.jsa"
    record = archive.with_suffix(".install")  # the PySpark folder it was made for
    assert sorted(home.iterdir()) == [record, archive]  # no part file, no lock left
    assert Path(record.read_text(encoding="utf-8")) == Path(cds._install())
    query, stream = _files(tmp_path)
    expected = _expected(query, stream)
    spark = ["spark", str(query), "--stream", str(stream), "--available-now", "-q"]
    # -Xshare:on (after rsp's -Xshare:auto) makes the JVM fail when it cannot map the archive
    run = _rsp(spark, {**env, "RSP_SPARK_JAVA_OPTIONS": "-Xshare:on"})
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
    # a truncated archive crashes the JVM that maps it: the run deletes it and starts Spark without
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    temp = tmp_path / "tmp"
    temp.mkdir()
    run = _rsp(spark, {**env, "TMPDIR": str(temp)})
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected  # nothing of the JVM's on rsp's standard output
    assert not archive.exists()
    assert not list(ROOT.glob("hs_err_pid*.log"))  # nor its crash report in the working directory
    assert not list(temp.glob(cds.CRASH_REPORT))  # nor, once handled, in the temporary folder
