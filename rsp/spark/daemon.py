"""The Python workers' daemon of rsp's Spark sessions (``spark.python.daemon.module``): PySpark's own
(:mod:`pyspark.daemon`), started after taking Spark's copies of PySpark off the import path when they
are the PySpark installed as a package beside them.

Spark starts the daemon with ``$SPARK_HOME/python/lib/pyspark.zip``, Py4J's source zip and its core jar
on ``PYTHONPATH``, the zips first. Installed with pip, ``$SPARK_HOME`` is the ``pyspark`` package itself:
the zips hold the package's own code, but Python imports a zip's modules by compiling their source (it
keeps no bytecode for them), and PySpark's first task in every worker calls
``importlib.invalidate_caches()``, which reads each archive's directory again (the zip once for every
package imported from it, 18 of them; the jar's 5,973 entries). Py-spy over a ten-micro-batch
``rsp spark --partition-by`` run counted ≈ 3.5 s of CPU in that (the daemon's imports ≈ 1 s, the
workers' first tasks ≈ 1.6 s, their later imports ≈ 0.9 s). Without the archives, the package's compiled
modules are imported.

Only that case is changed: with a ``$SPARK_HOME`` of its own (a Spark distribution), or no PySpark
installed beside it, the path stays as Spark set it. This module imports nothing of rsp's driver side
(:mod:`rsp.spark` imports its modules when first used), so PySpark is first imported after the change.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder


def archives(path: list[str]) -> list[str]:
    """The entries of ``path`` that are archives (zips, jars) inside the ``pyspark`` package that
    ``path``'s other entries import, with Py4J importable there too: Spark's copies of what that
    package already is (``$SPARK_HOME`` is the package when PySpark is installed with pip)."""
    kept = [entry for entry in path if not entry.endswith((".zip", ".jar"))]
    package = PathFinder.find_spec("pyspark", kept)
    if package is None or not package.submodule_search_locations:
        return []
    if PathFinder.find_spec("py4j", kept) is None:
        return []
    home = os.path.realpath(list(package.submodule_search_locations)[0])
    return [
        entry for entry in path
        if entry.endswith((".zip", ".jar")) and os.path.realpath(entry).startswith(home + os.sep)
    ]  # fmt: skip


def main() -> None:
    """Run PySpark's daemon (its worker module is the first argument, as Spark passes it), with
    :func:`archives` off the import path, and forgotten: the importers finding this module made for
    them, and the modules imported from them (the standard library's ``copy`` looks for Jython's
    ``org.python.core``, which makes ``org`` a namespace package in Spark's jar)."""
    removed = archives(sys.path)
    for entry in removed:
        sys.path.remove(entry)

    def inside(place: object) -> bool:
        return isinstance(place, str) and any(place == e or place.startswith(e + os.sep) for e in removed)

    if removed:
        for key in [key for key in sys.path_importer_cache if inside(key)]:
            del sys.path_importer_cache[key]
        for name, module in list(sys.modules.items()):
            places = [place for place in (getattr(module, "__file__", None), *getattr(module, "__path__", ()))
                      if place]  # fmt: skip
            if places and all(inside(place) for place in places):
                del sys.modules[name]
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
