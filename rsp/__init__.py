"""rsp — an RDF stream reasoner: continuous queries and LARS programs over streams, run incrementally."""

__version__ = "0.1.0"
