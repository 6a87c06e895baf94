"""Continuous queries, a query's answers at each instant: the SPARQL algebra over the engine's tables,
expressions and their values, built-in functions, aggregates, property paths, answers maintained from the
engine's changes, their order, and explanations."""
