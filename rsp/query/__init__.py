"""Continuous queries: the C-SPARQL-like language (grammar, AST, validation) and its translation to LARS."""
