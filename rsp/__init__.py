"""rsp — an RDF stream reasoner: continuous queries and LARS programs over streams, run incrementally.

``rsp.Engine`` is the continuous-query engine (:class:`rsp.runtime.Engine`), imported on first use so that
``rsp lars`` does not pay for the query machinery.
"""

__version__ = "0.1.0"
__all__ = ["Engine", "__version__"]


def __getattr__(name: str):
    if name == "Engine":
        from rsp.runtime import Engine

        return Engine
    raise AttributeError(f"module 'rsp' has no attribute {name!r}")
