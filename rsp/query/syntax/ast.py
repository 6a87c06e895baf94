"""The query AST: frozen dataclasses for registered continuous queries (C-SPARQL / RSP-QL with LARS
window operators) and the SPARQL 1.1 subset inside WHERE. The parser builds it; the translator reads it.

Constants are strings in N-Triples syntax, prefixes and BASE already resolved: IRIs ``<http://…>``,
literals ``"54"^^<http://www.w3.org/2001/XMLSchema#double>``, ``"chat"@en``, ``"plain"`` (no datatype
written for xsd:string), numbers written bare in the query become typed literals
(``3`` → ``"3"^^<…#integer>``, ``2.5`` → ``"2.5"^^<…#decimal>``, ``1e3`` → ``"1e3"^^<…#double>``,
``true`` → ``"true"^^<…#boolean>``). ``a`` is ``<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>``.
Blank nodes in patterns (``_:b`` and ``[ … ]``) become variables whose names start with ``_`` and are
never projected by ``SELECT *``.

Every node that a user wrote carries ``pos`` (line and column in the query text; ``compare=False``) so
that errors and the origins of the translated LARS rules point back to the query.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from rsp.errors import Position

# -- terms and expressions --------------------------------------------------------------------------


@dataclass(frozen=True)
class Var:
    """``?name`` or ``$name`` (stored without the sigil)."""

    name: str

    def __str__(self) -> str:
        return f"?{self.name}"


Term = Var | str
"""A variable or a constant in N-Triples syntax."""


@dataclass(frozen=True)
class BinaryOp:
    """``left op right``: ``|| && = != < <= > >= + - * /``."""

    op: str
    left: Expr
    right: Expr
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class UnaryOp:
    """``!x``, ``-x``, ``+x``."""

    op: str
    arg: Expr
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FunctionCall:
    """A built-in call (name upper-cased: ``REGEX``, ``STR``, ``BOUND``, ``IF``, ``COALESCE``, …) or an
    IRI function / cast (name is the IRI in angle brackets, e.g. ``<…XMLSchema#integer>``)."""

    name: str
    args: tuple[Expr, ...]
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InList:
    """``expr [NOT] IN (e1, e2, …)``."""

    expr: Expr
    options: tuple[Expr, ...]
    negated: bool = False
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Exists:
    """``[NOT] EXISTS { … }`` inside an expression."""

    pattern: Group
    negated: bool = False
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Aggregate:
    """``COUNT/SUM/AVG/MIN/MAX/SAMPLE/GROUP_CONCAT([DISTINCT] expr | *)``; ``arg`` None means ``*``."""

    name: str
    arg: Expr | None
    distinct: bool = False
    separator: str = " "
    pos: Position | None = field(default=None, compare=False)


Expr = Var | str | BinaryOp | UnaryOp | FunctionCall | InList | Exists | Aggregate

# -- graph patterns ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriplePattern:
    subject: Term
    predicate: Term
    object: Term
    pos: Position | None = field(default=None, compare=False)
    graph: str | None = None
    """The window or named graph the pattern reads, when it is not its group's graph: set by
    :mod:`rsp.query.translation.conjunctive` for the patterns of a window block merged into its group."""


@dataclass(frozen=True)
class BGP:
    """Consecutive triple patterns of a group (after expanding ``;``, ``,`` and ``[ … ]``)."""

    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True)
class Filter:
    expr: Expr
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Optional:
    group: Group
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Minus:
    group: Group
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Union:
    """``{ A } UNION { B } UNION …``: two or more alternatives."""

    alternatives: tuple[Group, ...]
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Bind:
    """``BIND(expr AS ?var)``."""

    expr: Expr
    var: Var
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Values:
    """``VALUES (?a ?b) { (1 2) (UNDEF 3) }``; ``None`` in a row is UNDEF."""

    vars: tuple[Var, ...]
    rows: tuple[tuple[str | None, ...], ...]
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SubSelect:
    select: Select
    pos: Position | None = field(default=None, compare=False)


# -- property paths (SPARQL 1.1 §9) --------------------------------------------------------------------
# A path is an IRI (a link, in N-Triples syntax) or one of the classes below. The parser rewrites a path
# between two terms as SPARQL's translation does (§18.2.2.4): a link is a triple pattern, ``^iri`` a
# triple pattern with its ends swapped, ``P/Q`` two patterns joined by a fresh variable ``?_pN``; what
# remains (``|``, ``*``, ``+``, ``?``, ``!``, and inverses of those) is a :class:`PathPattern`.


@dataclass(frozen=True)
class PathInverse:
    """``^P``."""

    path: Path


@dataclass(frozen=True)
class PathSequence:
    """``P1 / P2 / …``."""

    parts: tuple[Path, ...]


@dataclass(frozen=True)
class PathAlternative:
    """``P1 | P2 | …``."""

    parts: tuple[Path, ...]


@dataclass(frozen=True)
class PathRepeat:
    """``P*`` (``mod`` ``"*"``), ``P+`` or ``P?``."""

    path: Path
    mod: str


@dataclass(frozen=True)
class PathNegated:
    """``!(iri1 | … | ^iri2 | …)``: ``forward`` the IRIs, ``inverse`` those written with ``^``."""

    forward: tuple[str, ...]
    inverse: tuple[str, ...]


Path = str | PathInverse | PathSequence | PathAlternative | PathRepeat | PathNegated


@dataclass(frozen=True)
class PathPattern:
    """``subject path object`` for a path that is not a plain triple pattern (see above)."""

    subject: Term
    path: Path
    object: Term
    pos: Position | None = field(default=None, compare=False)


class WindowOp(enum.Enum):
    """How a named window block reads its window: ◇ (default), □ (BOX) or @ (AT ?t)."""

    DIAMOND = "diamond"
    BOX = "box"
    AT = "at"


@dataclass(frozen=True)
class WindowBlock:
    """``WINDOW w { P }``, ``WINDOW w BOX { P }``, ``WINDOW w AT ?t { P }``; also what the dialects'
    ``STREAM <s> [RANGE …] { P }`` (CQELS) and ``GRAPH <g> { P }`` (a named window or a ``FROM NAMED``
    static graph) become. ``WINDOW ?w`` and ``GRAPH ?g`` become a :class:`Union` over the names, each
    alternative the block joined with ``VALUES ?w { <name> }``."""

    window: str
    op: WindowOp
    group: Group
    time_var: Var | None = None
    pos: Position | None = field(default=None, compare=False)


Pattern = BGP | PathPattern | Filter | Optional | Minus | Union | Bind | Values | SubSelect | WindowBlock


@dataclass(frozen=True)
class Group:
    """``{ … }``: its elements in the order written (filters apply to the whole group, as in SPARQL)."""

    elements: tuple[Pattern, ...]
    pos: Position | None = field(default=None, compare=False)


# -- queries ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    """One SELECT item: ``?x`` (expr is the Var itself) or ``(expr AS ?x)``."""

    var: Var
    expr: Expr


@dataclass(frozen=True)
class OrderCondition:
    expr: Expr
    descending: bool = False


@dataclass(frozen=True)
class Modifiers:
    """GROUP BY / HAVING / ORDER BY / LIMIT / OFFSET."""

    group_by: tuple[Projection, ...] = ()
    having: tuple[Expr, ...] = ()
    order_by: tuple[OrderCondition, ...] = ()
    limit: int | None = None
    offset: int = 0


@dataclass(frozen=True)
class Select:
    """``SELECT [DISTINCT|REDUCED] (* | items) WHERE {…} modifiers``; ``projection`` None is ``*``."""

    projection: tuple[Projection, ...] | None
    where: Group
    modifiers: Modifiers = Modifiers()
    distinct: bool = False
    reduced: bool = False
    pos: Position | None = field(default=None, compare=False)
    values: Values | None = None
    """the trailing ``VALUES`` clause, joined after GROUP BY / HAVING and before the SELECT expressions"""


@dataclass(frozen=True)
class Construct:
    template: tuple[TriplePattern, ...]
    where: Group
    modifiers: Modifiers = Modifiers()
    pos: Position | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Ask:
    where: Group
    pos: Position | None = field(default=None, compare=False)


QueryForm = Select | Construct | Ask


@dataclass(frozen=True)
class StreamWindow:
    """A window over a stream: ``FROM STREAM <s> [RANGE ω STEP β]`` (``name`` None: merged into the
    default graph) or ``FROM NAMED WINDOW w ON <s> [RANGE … STEP …]`` (``name`` is w).

    Durations are in milliseconds; ``TUMBLING`` gives ``step == range``; ``[TRIPLES n]`` sets
    ``triples`` (a count window: ``range`` and ``step`` are None).
    """

    stream: str
    range: int | None
    step: int | None
    triples: int | None = None
    name: str | None = None
    pos: Position | None = field(default=None, compare=False)


class OutputPolicy(enum.Enum):
    """RStream (the whole answer at each instant), IStream (what is new), DStream (what disappeared)."""

    RSTREAM = "rstream"
    ISTREAM = "istream"
    DSTREAM = "dstream"


@dataclass(frozen=True)
class Query:
    """A registered continuous query.

    ``register`` is ``"QUERY"`` or ``"STREAM"`` (``REGISTER STREAM`` turns CONSTRUCT results into a
    stream); ``compute_every`` is ``COMPUTE EVERY`` in ms (None when absent); ``graphs`` are the
    ``FROM <g>`` static graphs (IRIs as written, resolved against BASE); ``windows`` every
    ``FROM STREAM`` and ``FROM NAMED WINDOW`` in order (then the windows of CQELS ``STREAM <s> […]``
    blocks, named after their stream); ``source`` the query text (for messages).
    """

    name: str
    form: QueryForm
    register: str = "QUERY"
    policy: OutputPolicy = OutputPolicy.RSTREAM
    compute_every: int | None = None
    graphs: tuple[str, ...] = ()
    windows: tuple[StreamWindow, ...] = ()
    named_graphs: tuple[str, ...] = ()
    """``FROM NAMED <g>`` static named graphs, read with ``GRAPH <g> { … }`` (a :class:`WindowBlock`)"""
    warnings: tuple[str, ...] = ()
    """what the parser noticed about dialect constructs (the validator adds its own)"""
    prefixes: tuple[tuple[str, str], ...] = ()
    base: str | None = None
    file: str = "<query>"
    pos: Position | None = field(default=None, compare=False)


# -- what an expression calls -----------------------------------------------------------------------

TIMESTAMP = "<http://larkc.eu/csparql/sparql/jena/ext#timestamp>"
"""C-SPARQL's ``f:timestamp(?s, ?p, ?o)``: the time of the window element holding a triple."""

VOLATILE = frozenset({"NOW", "RAND", "UUID", "STRUUID", "BNODE", TIMESTAMP})
"""Functions whose value is not a function of their arguments (a FILTER using one is never pushed into
a LARS rule, whose derivations outlive the instant; see rsp.query.translation.translate)."""


def calls(node, name: str) -> bool:
    """Whether a query (or any part of its AST) calls the function ``name`` anywhere."""
    if isinstance(node, FunctionCall) and node.name == name:
        return True
    if isinstance(node, (tuple, list)):
        return any(calls(item, name) for item in node)
    if _is_expr(node):
        return any(calls(getattr(node, f), name) for f in node.__dataclass_fields__)
    return False


def volatile(expr: Expr) -> bool:
    """Whether an expression calls NOW, RAND, UUID, STRUUID or BNODE (anywhere inside)."""
    if isinstance(expr, FunctionCall):
        return expr.name in VOLATILE or any(volatile(a) for a in expr.args)
    return any(volatile(child) for child in getattr(expr, "__dict__", {}).values() if _is_expr(child))


def _is_expr(value) -> bool:
    return not isinstance(value, (str, tuple, type(None), bool)) and hasattr(value, "__dataclass_fields__")
