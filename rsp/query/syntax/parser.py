"""The continuous query syntax: the lark grammar in ``query.lark`` and a transformer that builds the AST.

A query is a SPARQL 1.1 SELECT, CONSTRUCT or ASK query behind a REGISTER clause, with stream windows in
its dataset clause and LARS window blocks in its WHERE clause (see DESIGN.md §4)::

    REGISTER QUERY HotRooms COMPUTE EVERY 1s AS
    PREFIX ex: <http://example.org/>
    SELECT ?room FROM STREAM <http://ex.org/temps> [RANGE 10s STEP 1s] WHERE { ?room ex:hot true }

Syntax choices beyond SPARQL:

* ``REGISTER kind name [COMPUTE EVERY d] AS`` where kind is ``QUERY``, ``STREAM``, an output policy
  ``RSTREAM | ISTREAM | DSTREAM`` (RSP-QL style, e.g. ``REGISTER ISTREAM Q AS``) or a policy followed
  by ``QUERY``/``STREAM`` (``REGISTER ISTREAM STREAM Q AS``). The policy defaults to RStream. A bare
  policy registers a ``STREAM`` for CONSTRUCT (RSP-QL: the output is a stream) and a ``QUERY`` otherwise.
  The name is a word (``[A-Za-z_][A-Za-z0-9_-]*``) or an IRI in angle brackets (kept with its brackets).
  PREFIX and BASE declarations may stand before and/or after the REGISTER clause.
* Windows: ``[RANGE d STEP d]``, ``[RANGE d TUMBLING]`` (step = range), ``[TRIPLES n]`` and the
  C-SPARQL spelling ``[RANGE TRIPLES n]``. Durations are ``<number><unit>`` with unit ``ms``, ``s``,
  ``m`` (minutes), ``h`` or ``d`` (case-insensitive, decimals allowed: ``1.5s``), or ISO 8601
  ``P[nW][nD][T[nH][nM][nS]]`` (``PT10S``, ``PT1M30S``, ``PT0.5S``, ``P1D``); they become integer
  milliseconds. A duration must be positive and a whole number of milliseconds; ISO years and months
  are refused (no fixed length). ``STEP`` larger than ``RANGE`` is allowed (a sampling window: some
  elements fall in no window); :func:`rsp.query.syntax.validate.validate` warns about it.
* ``-5`` and ``+5`` are numeric literals wherever a constant is expected, and a sign directly in front of
  a number inside an expression is folded into the literal (``FILTER(?x > -5)`` compares with
  ``"-5"^^xsd:integer``); ``-?x`` is a :class:`UnaryOp`.
* Built-in function names are upper-cased in :class:`FunctionCall` (``isIRI`` → ``ISIRI``; ``isURI`` is
  the same function and becomes ``ISIRI`` too); an IRI function or cast (``xsd:integer(?x)``) keeps
  the IRI in angle brackets as its name.
* Blank nodes become variables: ``_:b`` → ``?_b``, ``[]`` and ``[ … ]`` → fresh ``?_bN`` (never clashing
  with a label used in the query). ``GROUP BY <expr>`` without ``AS`` groups by a fresh ``?_gN``.
* A nested group ``{ P }`` that only joins (triples, sub-selects, VALUES, window blocks) is spliced into
  the enclosing group (``{ SELECT … }`` becomes a :class:`SubSelect` element); any other nested group
  (one with FILTER, OPTIONAL, MINUS, BIND or UNION inside, whose scope matters) is a one-alternative
  :class:`Union`. Adjacent triple patterns form one :class:`BGP`.

:func:`parse_query` parses *and* validates (semantic errors raise :class:`QuerySyntaxError`; warnings
are dropped); :func:`parse_and_validate` returns the warnings too; :func:`parse_query_unchecked` only
parses.

This module holds the SPARQL core of the transformer and the entry points; the RSP dialect clauses and
what is resolved after the whole query is read are :mod:`rsp.query.syntax.dialects`, durations and string
escapes :mod:`rsp.query.syntax.lexical`, syntax error messages :mod:`rsp.query.syntax.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from urllib.parse import urljoin

from lark import Lark, Token, Transformer, Tree, UnexpectedInput, v_args
from lark.exceptions import VisitError

from rsp.errors import Position, QuerySyntaxError, RspError, read_source
from rsp.io.terms import XSD
from rsp.query.syntax.ast import (
    BGP,
    Aggregate,
    Ask,
    BinaryOp,
    Bind,
    Construct,
    Exists,
    Filter,
    FunctionCall,
    Group,
    InList,
    Minus,
    Modifiers,
    Optional,
    OrderCondition,
    OutputPolicy,
    PathAlternative,
    PathInverse,
    PathNegated,
    PathPattern,
    PathRepeat,
    PathSequence,
    Projection,
    Query,
    Select,
    StreamWindow,
    SubSelect,
    TriplePattern,
    UnaryOp,
    Union,
    Values,
    Var,
    WindowBlock,
)
from rsp.query.syntax.dialects import (
    DialectClauses,
    _name_of,
    _Register,
    _resolve_form,
    _resolve_steps,
)
from rsp.query.syntax.errors import _syntax_error
from rsp.query.syntax.lexical import _LOCAL_ESCAPE, _nt_string, _unescape
from rsp.query.syntax.lexical import parse_duration as parse_duration  # public here too

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"

# -- transformer ----------------------------------------------------------------------------------------

_BUILTIN_ARITY: dict[str, tuple[int, int | None]] = {
    "STR": (1, 1), "LANG": (1, 1), "LANGMATCHES": (2, 2), "DATATYPE": (1, 1), "BOUND": (1, 1),
    "SAMETERM": (2, 2), "ISIRI": (1, 1), "ISBLANK": (1, 1), "ISLITERAL": (1, 1), "ISNUMERIC": (1, 1),
    "REGEX": (2, 3), "IF": (3, 3), "COALESCE": (1, None), "STRLEN": (1, 1), "SUBSTR": (2, 3),
    "UCASE": (1, 1), "LCASE": (1, 1), "STRSTARTS": (2, 2), "STRENDS": (2, 2), "CONTAINS": (2, 2),
    "CONCAT": (0, None), "REPLACE": (3, 4), "STRBEFORE": (2, 2), "STRAFTER": (2, 2),
    "ENCODE_FOR_URI": (1, 1), "ABS": (1, 1), "ROUND": (1, 1), "CEIL": (1, 1), "FLOOR": (1, 1),
    "STRDT": (2, 2), "STRLANG": (2, 2), "IRI": (1, 1), "BNODE": (0, 1), "RAND": (0, 0), "NOW": (0, 0),
    "UUID": (0, 0), "STRUUID": (0, 0), "MD5": (1, 1), "SHA1": (1, 1), "SHA256": (1, 1), "SHA384": (1, 1),
    "SHA512": (1, 1), "YEAR": (1, 1), "MONTH": (1, 1), "DAY": (1, 1), "HOURS": (1, 1), "MINUTES": (1, 1),
    "SECONDS": (1, 1), "TIMEZONE": (1, 1), "TZ": (1, 1),
}  # fmt: skip
_BUILTIN_SYNONYMS = {"ISURI": "ISIRI", "URI": "IRI"}
_NUMBER_TYPES = {"INTEGER": f"<{XSD}integer>", "DECIMAL": f"<{XSD}decimal>", "DOUBLE": f"<{XSD}double>"}
_XSD_STRING = f"<{XSD}string>"


@dataclass(frozen=True)
class _Limit:
    value: int


@dataclass(frozen=True)
class _Offset:
    value: int


@dataclass(frozen=True)
class _Node:
    """A ``[ p o ]`` object: the fresh variable standing for it and the triples it contributes."""

    term: Var
    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True)
class _Splice:
    """A nested join-only group whose elements go straight into the enclosing group."""

    elements: tuple


_JOIN_ONLY = (BGP, PathPattern, SubSelect, Values, WindowBlock)


class _ToAst(DialectClauses, Transformer):
    """Builds AST objects from the parse tree; it resolves prefixes and BASE and names blank nodes."""

    def __init__(self, file: str, labels: set[str], name: str | None = None) -> None:
        super().__init__()
        self.file = file
        self.name = name
        self.inline_windows: list[StreamWindow] = []
        """the windows of the CQELS STREAM blocks of the query being built"""
        self.prefixes: dict[str, str] = {}
        self.base: str | None = None
        self.taken = {f"_{label}" for label in labels}
        self.counters = {"b": 0, "g": 0, "p": 0}

    # helpers ----------------------------------------------------------------------------------------
    def _pos(self, where: Token | Tree | object) -> Position:
        return Position(self.file, getattr(where, "line", 0) or 0, getattr(where, "column", 0) or 0)

    def _error(self, message: str, where: object) -> QuerySyntaxError:
        return QuerySyntaxError(message, self._pos(where))

    def _fresh(self, kind: str) -> Var:
        while True:
            self.counters[kind] += 1
            name = f"_{kind}{self.counters[kind]}"
            if name not in self.taken:
                self.taken.add(name)
                return Var(name)

    def _duration(self, token: Token) -> int:
        try:
            return parse_duration(str(token))
        except ValueError as err:
            raise self._error(str(err), token) from None

    # prologue and REGISTER --------------------------------------------------------------------------
    def prefix_decl(self, children):
        name, iri = children
        self.prefixes[str(name)[:-1]] = self._resolve(str(iri)[1:-1])
        return None

    def base_decl(self, children):
        self.base = self._resolve(str(children[0])[1:-1])
        return None

    # terms ---------------------------------------------------------------------------------------------
    def var(self, children):
        return Var(str(children[0])[1:])

    def _resolve(self, iri: str) -> str:
        return urljoin(self.base, iri) if self.base is not None else iri

    def iriref(self, children):
        return f"<{self._resolve(str(children[0])[1:-1])}>"

    def pname(self, children):
        token: Token = children[0]
        prefix, _, local = str(token).partition(":")
        if prefix not in self.prefixes:
            raise self._error(f"undeclared prefix '{prefix}:' (declare it with PREFIX {prefix}: <…>)", token)
        local = _LOCAL_ESCAPE.sub(r"\1", local)
        return f"<{self.prefixes[prefix]}{local}>"

    def rdf_type(self, children):
        return RDF_TYPE

    def string(self, children):
        token: Token = children[0]
        quote = 3 if token.type.startswith("STRING_LITERAL_LONG") else 1
        try:
            return _unescape(str(token)[quote:-quote])
        except ValueError as err:
            raise self._error(str(err), token) from None

    def rdf_literal(self, children):
        value, suffix = children
        text = _nt_string(value)
        if suffix is None:
            return text
        if isinstance(suffix, Token) and suffix.type == "LANGTAG":
            return f"{text}{suffix}"
        return text if suffix == _XSD_STRING else f"{text}^^{suffix}"

    def numeric_literal(self, children):
        token: Token = children[0]
        return f'"{token}"^^{_NUMBER_TYPES[token.type]}'

    def signed_number(self, children):
        sign, literal = children
        return f'"{sign}{literal[1:]}'

    def boolean_literal(self, children):
        return f'"{str(children[0]).lower()}"^^<{XSD}boolean>'

    def labeled_bnode(self, children):
        name = f"_{str(children[0])[2:]}"
        return Var(name)

    def anon_bnode(self, children):
        return self._fresh("b")

    def undef(self, children):
        return None

    # triples ---------------------------------------------------------------------------------------------
    def object_list(self, children):
        return tuple(children)

    def property(self, children):
        verb, objects = children
        return verb, objects

    def property_list(self, children):
        return tuple(c for c in children if c is not None)

    def _expand(self, subject, properties, pos: Position) -> list[TriplePattern | PathPattern]:
        triples: list[TriplePattern | PathPattern] = []
        for verb, objects in properties:
            for obj in objects:
                if isinstance(obj, _Node):
                    triples.extend(self._path(subject, verb, obj.term, pos))
                    triples.extend(obj.triples)
                else:
                    triples.extend(self._path(subject, verb, obj, pos))
        return triples

    def _path(self, subject, path, obj, pos: Position) -> list[TriplePattern | PathPattern]:
        """SPARQL's translation of a path between two terms (§18.2.2.4): a link (or a variable) is a
        triple pattern, ``^link`` one with its ends swapped, a sequence patterns joined by fresh
        variables; any other path is a :class:`PathPattern`."""
        if isinstance(path, (str, Var)):
            return [TriplePattern(subject, path, obj, pos)]
        if isinstance(path, PathInverse) and isinstance(path.path, str):
            return [TriplePattern(obj, path.path, subject, pos)]
        if isinstance(path, PathSequence):
            out: list[TriplePattern | PathPattern] = []
            start = subject
            for i, part in enumerate(path.parts):
                end = obj if i == len(path.parts) - 1 else self._fresh("p")
                out.extend(self._path(start, part, end, pos))
                start = end
            return out
        return [PathPattern(subject, path, obj, pos)]

    # property paths --------------------------------------------------------------------------------
    @staticmethod
    def _parts(children) -> tuple:
        return tuple(c for c in children if not isinstance(c, Token) or c.type not in ("PIPE", "SLASH"))

    def path_alternative(self, children):
        return PathAlternative(self._parts(children))

    def path_sequence(self, children):
        return PathSequence(self._parts(children))

    def path_inverse(self, children):
        inner = children[-1]
        return inner.path if isinstance(inner, PathInverse) else PathInverse(inner)

    def path_mod(self, children):
        inner, mod = children
        return PathRepeat(inner, str(mod))

    def path_one_inverse(self, children):
        return PathInverse(children[-1])

    def path_negated_set(self, children):
        members = [c for c in self._parts(children) if c is not None]
        forward = tuple(m for m in members if isinstance(m, str))
        inverse = tuple(m.path for m in members if isinstance(m, PathInverse))
        return PathNegated(forward, inverse)

    def path_negated(self, children):
        return children[-1]

    @v_args(meta=True)
    def blank_node_property_list(self, meta, children):
        node = self._fresh("b")
        return _Node(node, tuple(self._expand(node, children[0], self._pos(meta))))

    @v_args(meta=True)
    def triples_same_subject(self, meta, children):
        subject, properties = children
        pos = self._pos(meta)
        if isinstance(subject, _Node):
            return [*subject.triples, *self._expand(subject.term, properties or (), pos)]
        return self._expand(subject, properties, pos)

    def triples_block(self, children):
        patterns = [t for triples in children for t in triples]
        bgp = BGP(tuple(t for t in patterns if isinstance(t, TriplePattern)))
        paths = tuple(t for t in patterns if isinstance(t, PathPattern))
        return _Splice(((bgp,) if bgp.triples else ()) + paths) if paths else bgp

    # group patterns -------------------------------------------------------------------------------------
    def group_body(self, children):
        elements: list = []
        for child in children:
            parts = child.elements if isinstance(child, _Splice) else (child,)
            for part in parts:
                if isinstance(part, BGP) and elements and isinstance(elements[-1], BGP):
                    elements[-1] = BGP(elements[-1].triples + part.triples)
                else:
                    elements.append(part)
        return tuple(elements)

    @v_args(meta=True)
    def group_graph_pattern(self, meta, children):
        return Group(children[0], self._pos(meta))

    @v_args(meta=True)
    def sub_select_group(self, meta, children):
        return Group((SubSelect(children[0], children[0].pos),), self._pos(meta))

    @v_args(meta=True)
    def optional(self, meta, children):
        return Optional(children[0], self._pos(meta))

    @v_args(meta=True)
    def minus(self, meta, children):
        return Minus(children[0], self._pos(meta))

    @v_args(meta=True)
    def union(self, meta, children):
        if len(children) > 1:
            return Union(tuple(children), self._pos(meta))
        group: Group = children[0]
        if all(isinstance(e, _JOIN_ONLY) for e in group.elements):
            return _Splice(group.elements)
        return Union((group,), self._pos(meta))

    @v_args(meta=True)
    def filter(self, meta, children):
        return Filter(children[0], self._pos(meta))

    @v_args(meta=True)
    def bind(self, meta, children):
        expr, var = children
        return Bind(expr, var, self._pos(meta))

    @v_args(meta=True)
    def values_one(self, meta, children):
        var, *values = children
        return Values((var,), tuple((v,) for v in values), self._pos(meta))

    def values_row(self, children):
        return tuple(children)

    @v_args(meta=True)
    def values_many(self, meta, children):
        variables = tuple(c for c in children if isinstance(c, Var))
        rows = tuple(c for c in children if isinstance(c, tuple))
        for row in rows:
            if len(row) != len(variables):
                raise self._error(
                    f"VALUES row has {len(row)} value(s) but {len(variables)} variable(s) are declared", meta
                )
        return Values(variables, rows, self._pos(meta))

    # expressions --------------------------------------------------------------------------------------
    def binary(self, children):
        left, op, right = children
        return BinaryOp(str(op), left, right, self._pos(op))

    def unary(self, children):
        op, arg = children
        numeric = isinstance(arg, str) and any(arg.endswith(f"^^{t}") for t in _NUMBER_TYPES.values())
        if numeric and not arg.startswith(('"-', '"+')):
            return f'"{op}{arg[1:]}'
        return UnaryOp(str(op), arg, self._pos(op))

    def expression_list(self, children):
        return tuple(children)

    @v_args(meta=True)
    def in_list(self, meta, children):
        expr, options = children
        return InList(expr, options, False, self._pos(meta))

    @v_args(meta=True)
    def not_in_list(self, meta, children):
        expr, options = children
        return InList(expr, options, True, self._pos(meta))

    def builtin_call(self, children):
        token, *args = children
        if token.type == "UNKNOWN_FUNCTION":
            raise self._error(
                f"unknown function {token} (SPARQL 1.1 built-ins are listed in docs/queries.md; an "
                "extension function is called by its IRI)",
                token,
            )
        name = str(token).upper()
        name = _BUILTIN_SYNONYMS.get(name, name)
        low, high = _BUILTIN_ARITY[name]
        if len(args) < low or (high is not None and len(args) > high):
            wanted = f"{low}" if low == high else f"{low} to {high}" if high else f"at least {low}"
            plural = "" if wanted == "1" else "s"
            raise self._error(f"{name} takes {wanted} argument{plural}, got {len(args)}", token)
        if name == "BOUND" and not isinstance(args[0], Var):
            raise self._error("BOUND takes a variable", token)
        if name == "IRI" and self.base is not None:
            args.append(f"<{self.base}>")  # a relative IRI resolves against BASE (§17.4.2.8)
        return FunctionCall(name, tuple(args), self._pos(token))

    @v_args(meta=True)
    def function_call(self, meta, children):
        name, *args = children
        return FunctionCall(name, tuple(args), self._pos(meta))

    def aggregate(self, children):
        token, distinct, arg, separator = children
        name = str(token).upper()
        star = isinstance(arg, Token) and arg.type == "STAR"
        if star and name != "COUNT":
            raise self._error(f"only COUNT takes '*', not {name}", arg)
        if separator is not None and name != "GROUP_CONCAT":
            raise self._error(f"only GROUP_CONCAT takes a SEPARATOR, not {name}", token)
        return Aggregate(
            name,
            None if star else arg,
            distinct is not None,
            " " if separator is None else separator,
            self._pos(token),
        )

    @v_args(meta=True)
    def exists(self, meta, children):
        return Exists(children[0], False, self._pos(meta))

    @v_args(meta=True)
    def not_exists(self, meta, children):
        return Exists(children[0], True, self._pos(meta))

    # solution modifiers -------------------------------------------------------------------------------
    def group_alias(self, children):
        expr, var = children
        return Projection(var, expr)

    def group_clause(self, children):
        return tuple(self._group_item(c) for c in children)

    def _group_item(self, item) -> Projection:
        if isinstance(item, Projection):
            return item
        return Projection(item, item) if isinstance(item, Var) else Projection(self._fresh("g"), item)

    def having_clause(self, children):
        return tuple(children)

    def order_condition(self, children):
        if len(children) == 2:
            return OrderCondition(children[1], str(children[0]).upper() == "DESC")
        return OrderCondition(children[0])

    def order_clause(self, children):
        return tuple(children)

    def limit_clause(self, children):
        return _Limit(int(children[0]))

    def offset_clause(self, children):
        return _Offset(int(children[0]))

    def modifiers(self, children):
        group_by, having, order_by, *rest = children
        limit = next((c.value for c in rest if isinstance(c, _Limit)), None)
        offset = next((c.value for c in rest if isinstance(c, _Offset)), 0)
        return Modifiers(group_by or (), having or (), order_by or (), limit, offset)

    # query forms ----------------------------------------------------------------------------------------
    @v_args(meta=True)
    def select_alias(self, meta, children):
        expr, var = children
        return Projection(var, expr)

    @v_args(meta=True)
    def select_clause(self, meta, children):
        modifier, *items = children
        star = len(items) == 1 and isinstance(items[0], Token)
        projection = None if star else tuple(Projection(i, i) if isinstance(i, Var) else i for i in items)
        flag = str(modifier).upper() if modifier is not None else ""
        return projection, flag == "DISTINCT", flag == "REDUCED", self._pos(meta)

    def _select(self, clause, where: Group, modifiers: Modifiers, values: Values | None = None) -> Select:
        projection, distinct, reduced, pos = clause
        return Select(projection, where, modifiers, distinct, reduced, pos, values)

    def sub_select(self, children):
        clause, where, modifiers, values = children
        return self._select(clause, where, modifiers, values)

    def select_query(self, children):
        clause, *dataset, where, modifiers, values = children
        return self._select(clause, where, modifiers, values), dataset

    @staticmethod
    def _with_values(where: Group, values: Values | None) -> Group:
        """A trailing VALUES of a CONSTRUCT or ASK query: joined with the WHERE pattern."""
        return where if values is None else Group((*where.elements, values), where.pos)

    @v_args(meta=True)
    def construct_query(self, meta, children):
        template, *dataset, where, modifiers, values = children
        return Construct(template, self._with_values(where, values), modifiers, self._pos(meta)), dataset

    def _template(self, block, meta) -> tuple:
        if block is None:
            return ()
        if isinstance(block, _Splice):
            raise self._error("a CONSTRUCT template holds triples, not property paths", meta)
        return block.triples

    @v_args(meta=True)
    def construct_template(self, meta, children):
        return self._template(children[0], meta)

    @v_args(meta=True)
    def construct_where(self, meta, children):
        *dataset, bgp, modifiers, values = children
        triples = self._template(bgp, meta)
        where = Group((BGP(triples),) if triples else (), self._pos(meta))
        return Construct(triples, self._with_values(where, values), modifiers, self._pos(meta)), dataset

    @v_args(meta=True)
    def ask_query(self, meta, children):
        *dataset, where, values = children
        return Ask(self._with_values(where, values), self._pos(meta)), dataset

    # the whole query -----------------------------------------------------------------------------------
    @v_args(meta=True)
    def unit(self, meta, children):
        register = next((c for c in children if isinstance(c, _Register)), None)
        form, dataset = children[-1]
        if register is None:  # a bare query form (CQELS, RSP-QL and rsp-services clients register it by API)
            name = self.name or _name_of(self.file)
            register = _Register(name, None, OutputPolicy.RSTREAM, None, self._pos(meta))
        kind = register.kind or ("STREAM" if isinstance(form, Construct) else "QUERY")
        windows = tuple(d.window for d in dataset if d.window is not None) + tuple(self.inline_windows)
        self.inline_windows = []
        windows = _resolve_steps(windows, register.compute_every)
        named_graphs = tuple(d.named_graph for d in dataset if d.named_graph is not None)
        names = {w.name for w in windows if w.name is not None}
        form = _resolve_form(form, names, named_graphs, self.file)
        return Query(
            name=register.name,
            form=form,
            register=kind,
            policy=register.policy,
            compute_every=register.compute_every,
            graphs=tuple(d.graph for d in dataset if d.graph is not None),
            windows=windows,
            named_graphs=named_graphs,
            prefixes=tuple(self.prefixes.items()),
            base=self.base,
            file=self.file,
            pos=register.pos,
        )

    def start(self, children):
        queries = list(children)
        bare = [i for i, q in enumerate(queries) if q.name == (self.name or _name_of(self.file))]
        if len(bare) > 1:  # several bare queries in one file: name, name-2, …
            for n, i in enumerate(bare[1:], start=2):
                queries[i] = replace(queries[i], name=f"{queries[i].name}-{n}")
        return queries


# -- entry points -----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark.open_from_package(
        "rsp.query.syntax", "query.lark", parser="lalr", lexer="contextual", propagate_positions=True,
        maybe_placeholders=True, cache=True,
    )  # fmt: skip


def parse_queries_unchecked(text: str, file: str = "<query>", name: str | None = None) -> list[Query]:
    """Every query of ``text`` (one, or several REGISTER statements) without the checks of
    :mod:`rsp.query.syntax.validate` (syntax errors still raise). ``name`` names a query written without
    REGISTER (default: the file's name without its extension)."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, text, file) from None
    labels = {
        str(t)[2:] for t in tree.scan_values(lambda v: isinstance(v, Token) and v.type == "BLANK_NODE_LABEL")
    }
    try:
        return _ToAst(file, labels, name).transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, RspError):
            raise err.orig_exc from None
        raise


def parse_query_unchecked(text: str, file: str = "<query>", name: str | None = None) -> Query:
    """Parse a query without the semantic checks of :mod:`rsp.query.syntax.validate` (syntax errors still
    raise)."""
    return _one(parse_queries_unchecked(text, file, name), file)


def _one(queries: list[Query], file: str) -> Query:
    if len(queries) != 1:
        names = ", ".join(q.name for q in queries)
        raise QuerySyntaxError(
            f"the text holds {len(queries)} queries ({names}); register them with Engine.register_all "
            "(rsp run takes them all)",
            Position(file),
        )
    return queries[0]


def parse_all_and_validate(
    text: str, file: str = "<query>", name: str | None = None
) -> list[tuple[Query, list[str]]]:
    """Parse and check every query of ``text``; each with the validator's warnings (errors raise)."""
    from rsp.query.syntax.validate import validate

    queries = parse_queries_unchecked(text, file, name)
    seen: set[str] = set()
    for query in queries:
        if query.name in seen:
            raise QuerySyntaxError(f"two queries are called {query.name}", query.pos or Position(file))
        seen.add(query.name)
    return [(query, list(query.warnings) + validate(query, text)) for query in queries]


def parse_and_validate(text: str, file: str = "<query>", name: str | None = None) -> tuple[Query, list[str]]:
    """Parse and check a query; returns it with the validator's warnings (errors raise)."""
    pairs = parse_all_and_validate(text, file, name)
    _one([q for q, _w in pairs], file)
    return pairs[0]


def parse_queries(text: str, file: str = "<query>", name: str | None = None) -> list[Query]:
    """Parse and check every query of ``text`` (several REGISTER statements, or one bare query).

    >>> [q.name for q in parse_queries('''SELECT ?s WHERE { STREAM <http://ex.org/s> [RANGE 3s] { ?s ?p ?o } }
    ...     REGISTER QUERY Second AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s]
    ...     WHERE { ?s ?p ?o }''', "q1.rq")]
    ['q1', 'Second']
    """
    return [query for query, _warnings in parse_all_and_validate(text, file, name)]


def parse_query(text: str, file: str = "<query>", name: str | None = None) -> Query:
    """Parse and check a registered continuous query (warnings are dropped; see :func:`parse_and_validate`).

    >>> q = parse_query('''REGISTER QUERY Q AS SELECT ?s
    ...   FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?s a <http://ex.org/C> }''')
    >>> q.name, q.windows[0].range, q.windows[0].step
    ('Q', 10000, 1000)
    """
    return parse_and_validate(text, file, name)[0]


def parse_query_file(path: str | Path) -> Query:
    """Parse and check a query file; errors carry the file name."""
    path = Path(path)
    try:
        text = read_source(path, QuerySyntaxError, "query")
    except OSError as err:
        raise QuerySyntaxError(f"cannot read query: {err.strerror}", Position(str(path))) from None
    return parse_query(text, str(path))
