"""Continuous queries, a validated query as LARS rules over triple predicates: the translation, reflexive
RDFS triples, and whether a query partitions by a variable."""
