"""Continuous queries, by representation: :mod:`rsp.query.syntax` (the text: grammar, parser, dialects,
AST, validation), :mod:`rsp.query.translation` (the AST as LARS rules), :mod:`rsp.query.answers` (the
answers at each instant: algebra, expressions, maintained answers, explanations), and the compile
pipeline that runs the first two and adds the background (:mod:`rsp.query.compile`)."""
