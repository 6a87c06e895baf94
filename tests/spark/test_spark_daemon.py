"""The Python workers' daemon of rsp's Spark sessions (rsp/spark/daemon.py) and the package's lazy
imports (rsp/spark/__init__.py):

* Spark's copies of PySpark (its zips and core jar under ``$SPARK_HOME``) leave the workers' import path
  when ``$SPARK_HOME`` is the PySpark package installed beside them, and only then (fake installs);
* in rsp's session, a task's PySpark is the installed package and no importer of an archive is left to
  read its directory again (a real Spark job);
* the engine hosts' modules import no PySpark; every name ``rsp.spark`` exports still resolves.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
import zipfile
from pathlib import Path

import pytest
from paths import ROOT

from rsp.spark import daemon

pytest_plugins = ["spark_conftest"]


def _archive(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pyspark/__init__.py", "")
    return str(path)


def _package(site: Path, name: str) -> Path:
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text("", encoding="utf-8")
    return site / name


def _pip_install(tmp_path: Path) -> tuple[str, list[str]]:
    """A pip-like install: ``site/pyspark`` holding ``python/lib``'s zips and ``jars``, ``site/py4j``."""
    site = tmp_path / "site"
    home = _package(site, "pyspark")
    _package(site, "py4j")
    copies = [
        _archive(home / "python" / "lib" / "pyspark.zip"),
        _archive(home / "python" / "lib" / "py4j-0.10.9.9-src.zip"),
        _archive(home / "jars" / "spark-core_2.13-4.3.0.jar"),
    ]
    return str(site), copies


def test_spark_copies_of_the_installed_package_leave_the_path(tmp_path: Path) -> None:
    site, copies = _pip_install(tmp_path)
    other = _archive(tmp_path / "elsewhere" / "deps.zip")  # a user's own archive stays
    path = [*copies, other, str(tmp_path / "work"), site]
    assert daemon.archives(path) == copies
    assert daemon.archives([copies[0], copies[1], site]) == copies[:2]


def test_a_spark_distribution_keeps_its_own_copies(tmp_path: Path) -> None:
    site, _ = _pip_install(tmp_path)
    home = tmp_path / "spark-4.3.0"  # $SPARK_HOME of a distribution, not the package
    zips = [_archive(home / "python" / "lib" / "pyspark.zip"),
            _archive(home / "python" / "lib" / "py4j-0.10.9.9-src.zip")]  # fmt: skip
    assert daemon.archives([*zips, site]) == []


def test_without_pyspark_or_py4j_beside_them_the_copies_stay(tmp_path: Path) -> None:
    site, copies = _pip_install(tmp_path)
    bare = tmp_path / "bare"
    bare.mkdir()
    assert daemon.archives([*copies, str(bare)]) == []  # the zips are the only PySpark
    (Path(site) / "py4j" / "__init__.py").unlink()
    (Path(site) / "py4j").rmdir()
    assert daemon.archives([*copies, site]) == []  # the package, but its Py4J is only in the zip


def test_the_daemon_forgets_the_copies_before_pyspark_starts(tmp_path: Path, monkeypatch) -> None:
    site, copies = _pip_install(tmp_path)
    other = _archive(tmp_path / "elsewhere" / "deps.zip")
    started = []

    def manager() -> None:
        started.append((list(sys.path), dict(sys.path_importer_cache), dict(sys.modules)))

    monkeypatch.setattr(sys, "path", [*copies, other, site])
    inside_jar = copies[2] + os.sep + "org"
    cache = {entry: None for entry in [*copies, other]}
    cache[inside_jar] = None  # an importer inside the jar
    monkeypatch.setattr(sys, "path_importer_cache", cache)
    # what the standard library's ``copy`` leaves when Spark's jar is on the path (Jython's org.python)
    namespace = types.ModuleType("org")
    namespace.__path__ = [inside_jar]
    monkeypatch.setitem(sys.modules, "org", namespace)
    ours = types.ModuleType("deps")
    ours.__file__ = other + os.sep + "deps.py"
    monkeypatch.setitem(sys.modules, "deps", ours)
    monkeypatch.setitem(sys.modules, "rsp_not_importable", None)  # how Python marks an import that failed
    monkeypatch.setitem(sys.modules, "pyspark", types.SimpleNamespace(__path__=[]))
    monkeypatch.setitem(sys.modules, "pyspark.daemon", types.SimpleNamespace(manager=manager))
    daemon.main()
    [(path, importers, modules)] = started
    assert path == [other, site]
    assert other in importers and not [key for key in importers if key.startswith(tuple(copies))]
    assert "org" not in modules and modules["deps"] is ours and "os" in modules
    assert "rsp_not_importable" in modules


@pytest.mark.spark
def test_a_task_of_rsps_session_imports_the_installed_pyspark(spark) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyspark

    assert spark.conf.get("spark.python.daemon.module") == "rsp.spark.daemon"

    def where(batches):
        import sys
        import zipimport

        import pyarrow as pa
        import pyspark

        for _ in batches:
            pass
        zips = [
            key for key, value in sys.path_importer_cache.items() if isinstance(value, zipimport.zipimporter)
        ]
        yield pa.RecordBatch.from_pylist([{"module": pyspark.__file__, "zips": "|".join(zips)}])

    rows = spark.range(2, numPartitions=2).mapInArrow(where, "module string, zips string").collect()
    package = str(Path(pyspark.__file__).resolve())
    assert len(rows) == 2
    for row in rows:
        assert str(Path(row["module"]).resolve()) == package  # not pyspark.zip/pyspark/__init__.py
        assert [zip_ for zip_ in row["zips"].split("|") if zip_.startswith(str(Path(package).parent))] == []
    del pa


def test_the_engine_hosts_modules_import_no_pyspark() -> None:
    """Nor rdflib: the job they unpickle names rsp.query.translation.partition, which takes a constant of
    rsp.background (whose ontology module, imported when first asked for, imports rdflib)."""
    code = (
        "import sys, rsp.spark, rsp.spark.daemon, rsp.spark.hosts, rsp.spark.partitioned; "
        "from rsp.spark.resident import run_step; import rsp.runtime; "
        "print(sorted(m for m in ('pyspark', 'pandas', 'py4j', 'rdflib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_name_rsp_spark_exports_resolves() -> None:
    pytest.importorskip("pyspark")
    import rsp.spark
    import rsp.spark.session  # the module named as the function the package exports

    for name in rsp.spark.__all__:
        value = getattr(rsp.spark, name)
        assert callable(value) and value.__name__ == name
    assert set(rsp.spark.__all__) <= set(dir(rsp.spark))
    with pytest.raises(AttributeError, match="no_such_name"):
        rsp.spark.no_such_name  # noqa: B018
