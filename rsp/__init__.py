"""rsp — an RDF stream reasoner: continuous queries and LARS programs over RDF streams, evaluated incrementally."""

__version__ = "0.1.0"
