"""The builder of ``rsp spark``'s class-data archive (rsp/spark/cds.py), a process of its own that the
Spark session starts in the background: ``python -m rsp.cli.spark_cds FOLDER KEY``."""

from __future__ import annotations

import sys
from pathlib import Path

from rsp.cli import main
from rsp.spark import cds

if __name__ == "__main__":
    sys.exit(0 if cds.build(Path(sys.argv[1]), sys.argv[2], main) else 1)
