"""Syntax error messages of the query parser: what was found, what the grammar accepts there (the
terminals that really advance the LALR parser, described in words), and what to write instead for SPARQL
features rsp does not support (SERVICE, SPARQL Update, DESCRIBE)."""

from __future__ import annotations

from copy import copy

from lark import Token, UnexpectedInput
from lark.exceptions import UnexpectedCharacters, UnexpectedToken

from rsp.errors import Position, QuerySyntaxError, end_position

_PUNCTUATION = {
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "DOT": "'.'", "COMMA": "','", "SEMICOLON": "';'", "EQUAL": "'='", "STAR": "'*'", "BANG": "'!'",
    "OR": "'||'", "AND": "'&&'", "REL_OP": "a comparison", "SLASH": "'/'",
    "SIGN": "'+' or '-'", "__ANON_0": "'^^'", "A": "'a'", "VAR": "a variable", "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name", "PNAME_NS": "a prefix", "NAME": "a query name", "DURATION": "a duration",
    "INTEGER": "an integer", "DECIMAL": "a decimal", "DOUBLE": "a double", "STRING_LITERAL1": "a string",
    "STRING_LITERAL2": "a string", "STRING_LITERAL_LONG1": "a string", "STRING_LITERAL_LONG2": "a string",
    "LANGTAG": "a language tag", "BLANK_NODE_LABEL": "a blank node", "ANON": "a blank node",
    "BUILTIN": "a function", "AGGREGATE": "an aggregate", "POLICY": "RSTREAM/ISTREAM/DSTREAM",
    "KIND": "QUERY or STREAM", "$END": "end of input", "CARET": "'^'", "PIPE": "'|'",
    "PATH_PLUS": "'+'", "PATH_QMARK": "'?'", "UNKNOWN_FUNCTION": "a function",
}  # fmt: skip


def _describe(name: str) -> str:
    if name in _PUNCTUATION:
        return _PUNCTUATION[name]
    bare = name.lstrip("_")
    return bare if bare.isalpha() else name


def _describe_expected(expected: set[str]) -> str:
    names = sorted({_describe(e) for e in expected})
    if not names:
        return ""
    if len(names) > 12:
        names = names[:12] + ["…"]
    return "; expected " + ", ".join(names)


def _accepted(state) -> set[str]:
    """The terminals that really advance the parser from ``state`` (LALR tables over-approximate)."""
    if state is None or not hasattr(state, "parse_conf"):
        return set()
    conf = copy(state.parse_conf)
    conf.callbacks = {}
    accepted = set()
    for name in state.parse_conf.parse_table.states[state.position]:
        if not name.isupper():
            continue
        trial = state.copy(deepcopy_values=False)
        trial.parse_conf = conf
        try:
            trial.feed_token(Token(name, ""), name == "$END")
        except UnexpectedInput:
            continue
        accepted.add(name)
    return accepted


def _expected(err: UnexpectedInput) -> set[str]:
    if isinstance(err, UnexpectedToken):
        try:
            return set(err.accepts) or set(err.expected)
        except Exception:  # noqa: BLE001 - the interactive parser is a nicety; fall back to the table
            return set(err.expected)
    if isinstance(err, UnexpectedCharacters):
        return _accepted(err.state) or set(err.allowed or ())
    return set(getattr(err, "expected", ()) or ())


_UPDATE = "SPARQL Update is not supported: a continuous query is a SELECT, CONSTRUCT or ASK"
_UNSUPPORTED = {
    "SERVICE": "SERVICE is not supported (rsp never fetches anything): load the data with FROM <file> "
    "or --ontology",
    **{word: _UPDATE for word in ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "WITH")},
    "DESCRIBE": "DESCRIBE is not supported: write a CONSTRUCT with the triples you want",
}
"""Tokens that start a SPARQL feature rsp does not support, with what to write instead."""


def _syntax_error(err: UnexpectedInput, text: str, file: str) -> QuerySyntaxError:
    line, column = err.line, err.column
    expected = _describe_expected(_expected(err))
    if isinstance(err, UnexpectedCharacters):
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        message = f"unexpected character {char!r}{expected}"
        if char in _UNSUPPORTED:
            message = f"unexpected character {char!r}: {_UNSUPPORTED[char]}"
    elif isinstance(err, UnexpectedToken) and err.token.type != "$END":
        shown = str(err.token)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        message = f"unexpected '{shown}'{expected}"
        unsupported = _UNSUPPORTED.get(str(err.token).upper())
        if unsupported is not None:
            message = f"unexpected '{shown}': {unsupported}"
        elif err.token.type == "IRIREF" and "REL_OP" in _expected(err):
            message += " (this was read as an IRI: put spaces around '<' and '>' in comparisons)"
    else:
        line, column = end_position(text.rstrip())
        hint = " (is a '}' missing?)" if "RBRACE" in _expected(err) else ""
        message = f"unexpected end of query{expected}{hint}"
    return QuerySyntaxError(message, Position(file, line, column))
