"""Continuous queries, the query's text: the grammar (``query.lark``), the parser and its RSP dialects, the
AST, lexical forms, syntax errors, the AST back as text, and validation."""
