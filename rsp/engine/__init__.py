"""The incremental engine: annotated formula tables, compiled semi-naive plans, expiry by horizon."""

from rsp.engine.evaluator import Engine

__all__ = ["Engine"]
