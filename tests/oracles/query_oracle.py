"""The reference for continuous queries: re-materialise every window from scratch with owlrl and
evaluate the query with rdflib, instant by instant (DESIGN.md §5), independently of rsp's engine.

:func:`run_arrivals` takes the elements in the order they arrive, possibly out of time order, on
several streams and from several sources, and applies the definitions of DESIGN.md §3 and §5 literally:
which elements are late, which instants are reported, what each window holds, and blank nodes scoped to
their source (relabelled ``_:src<i>_<label>``, an RDF merge).

Only rdflib and owlrl compute answers here. The query text is rewritten into plain SPARQL: the REGISTER
and FROM STREAM / FROM NAMED WINDOW clauses are dropped and ``WINDOW w { … }`` becomes ``GRAPH w { … }``
over a dataset whose named graph w is the closure of static ∪ content(w, t).

C-SPARQL's ``f:timestamp(?s, ?p, ?o)`` is an rdflib custom function here, read from the definition
(docs/queries.md): the time of the latest element holding the triple in any window of the query at
the instant; a triple no window element holds is an error.

An error in an aggregate's argument is skipped like an unbound value (docs/queries.md): rdflib's
accumulators skip unbound values but take an error as a value (``MAX`` of an error gave the error's
message as a string, ``COUNT`` counted it), so the aggregates' expression evaluation is wrapped here to
turn an error into rdflib's "not bound" (:func:`_aggregate_eval`).
"""

from __future__ import annotations

import functools
import re
from collections import Counter

import owlrl
import rdflib
from rdflib import RDF, RDFS, BNode, Dataset, Graph, Literal, URIRef
from rdflib.plugins.sparql import aggregates as _aggregates
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.operators import register_custom_function
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.sparql import NotBoundError, Query, SPARQLError

from rsp.background.vocab import SUBCLASS, SUBPROPERTY, VOCABULARY_NAMESPACES, is_noise

XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"
TIMESTAMP = URIRef("http://larkc.eu/csparql/sparql/jena/ext#timestamp")

_element_times: dict[tuple, int] = {}
"""f:timestamp at the instant being evaluated: rdflib triple -> time of its latest window element."""


def _timestamp(s, p, o):
    time = _element_times.get((s, p, o))
    if time is None:
        raise SPARQLError(f"f:timestamp: no element in a window holds {s.n3()} {p.n3()} {o.n3()}")
    return Literal(time)


register_custom_function(TIMESTAMP, _timestamp, override=True)

_rdflib_aggregate_eval = _aggregates._eval


def _aggregate_eval(expr, ctx, *args, **kwargs):
    """rdflib's evaluation of an aggregate's argument, with an error skipped like an unbound value."""
    value = _rdflib_aggregate_eval(expr, ctx, *args, **kwargs)
    if isinstance(value, SPARQLError):
        raise NotBoundError(str(value))
    return value


_aggregates._eval = _aggregate_eval


def _set_element_times(elements) -> None:
    """The (time, N-Triples triple) elements in the windows at the instant: f:timestamp's table."""
    _element_times.clear()
    for time, triple in elements:
        for key in _graph([triple]):
            if _element_times.get(key, -1) < time:
                _element_times[key] = time


def _graph(triples) -> Graph:
    """An rdflib graph of N-Triples-string triples; blank nodes keep their labels (``_:x`` stays
    ``_:x``: the callers scope them, and the answers are compared by label)."""
    graph = Graph()
    text = "\n".join(f"{s} {p} {o} ." for s, p, o in triples)
    if text:
        labels: dict[str, BNode] = {}
        rdflib.NORMALIZE_LITERALS = False
        try:
            graph.parse(data=text, format="nt", bnode_context=labels)
        finally:
            rdflib.NORMALIZE_LITERALS = True
        if labels:
            back = {node: BNode(label) for label, node in labels.items()}
            relabelled = Graph()
            for s, p, o in graph:
                relabelled.add((back.get(s, s), p, back.get(o, o)))
            graph = relabelled
    return graph


def closure(triples, regime: str) -> set[tuple[str, str, str]]:
    """owlrl's closure of ``triples`` (N-Triples strings) without the noise rsp does not produce."""
    graph = _graph(triples)
    if regime == "rdfs":
        owlrl.DeductiveClosure(owlrl.RDFS_Semantics).expand(graph)
        _rdfs10(graph)
    elif regime == "owlrl":
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
    result = {(s.n3(), p.n3(), o.n3()) for s, p, o in graph}
    original = {tuple(t) for t in triples}
    return {t for t in result if t in original or not is_noise(t) or (regime == "rdfs" and _reflexive(t))}


def _rdfs10(graph: Graph) -> None:
    """owlrl's RDFS leaves out rdfs10 (``c a rdfs:Class`` ⟹ ``c rdfs:subClassOf c``) and applies rdfs6
    only to properties used as predicates, where the W3C RDFS entailment (and its SPARQL test suite)
    also types the subjects and objects of subPropertyOf and the subjects of domain/range through the
    axiomatic triples: add both reflexive rules for every class and property of the closed graph."""
    classes = set(graph.objects(None, RDF.type)) | set(graph.subjects(RDFS.subClassOf, None))
    classes |= set(graph.objects(None, RDFS.subClassOf)) | set(graph.objects(None, RDFS.domain))
    classes |= set(graph.objects(None, RDFS.range)) | set(graph.subjects(RDF.type, RDFS.Class))
    properties = set(graph.predicates()) | set(graph.subjects(RDFS.subPropertyOf, None))
    properties |= set(graph.objects(None, RDFS.subPropertyOf)) | set(graph.subjects(RDFS.domain, None))
    properties |= set(graph.subjects(RDFS.range, None)) | set(graph.subjects(RDF.type, RDF.Property))
    for c in classes:
        graph.add((c, RDFS.subClassOf, c))
    for p in properties:
        graph.add((p, RDFS.subPropertyOf, p))


def _reflexive(triple) -> bool:
    """rdfs10 / rdfs6 about a user class or property: rsp gives them to queries that can see them."""
    s, p, o = triple
    return (
        s == o
        and p in (SUBCLASS, SUBPROPERTY)
        and s.startswith("<")
        and not s.startswith(VOCABULARY_NAMESPACES)
    )


_CQELS_STREAM = re.compile(r"(?i)\bSTREAM\s+(<[^>]*>)\s*\[[^\]]*\]\s*\{")


def to_sparql(text: str) -> str:
    """Plain SPARQL from a registered query: REGISTER, FROM STREAM, FROM NAMED STREAM / WINDOW and
    FROM NAMED <g> lines dropped (the caller gives the dataset), ``WINDOW w {`` and CQELS ``STREAM <s>
    [...] {`` (the window named <s>, the query's only one on <s>) read as ``GRAPH``."""
    text = re.sub(r"(?im)^\s*REGISTER\s+[^\n]*?\bAS\b", "", text)
    text = re.sub(r"(?im)^\s*FROM\s+(STREAM|NAMED\s+WINDOW|NAMED\s+STREAM)[^\n]*\n", "", text)
    text = re.sub(r"(?im)^\s*FROM\s+NAMED\s+<[^>]*>\s*\n", "", text)
    text = _CQELS_STREAM.sub(r"GRAPH \1 {", text)
    return re.sub(r"(?i)\bWINDOW\s+(\S+)\s*\{", r"GRAPH \1 {", text)


def canonical_number(term: str | None) -> str | None:
    """A literal of xsd:integer, decimal, float or double in its XSD canonical lexical form (rsp writes
    computed numbers so, rdflib its own way: ``"28"`` for a decimal, ``"55.0"`` for a double); any
    other term as it is. Answers are compared through it, so numbers compare by datatype and value."""
    if term is None or not term.startswith('"'):
        return term
    from rsp.query.answers.expr import NUM, RANK_TYPES, format_number, term_value

    v = term_value(term)
    if v.kind != NUM or v.dt != RANK_TYPES[v.rank]:
        return term
    return f'"{format_number(v.value, v.rank)}"^^{v.dt}'


def _n3(term) -> str | None:
    return None if term is None else term.n3()


@functools.lru_cache(maxsize=256)
def _prepared(sparql: str) -> Query:
    """``sparql`` parsed and translated as ``Dataset.query`` does it (with a new dataset's prefixes), once
    per text: the oracle asks one query at every instant."""
    return translateQuery(parseQuery(sparql), None, dict(Dataset().namespaces()))


def answer(sparql: str, default: set, named: dict[str, set]):
    """The rdflib answer over a dataset: bindings (list of dicts), CONSTRUCT triples, or a boolean."""
    dataset = Dataset()
    for triple in default:
        dataset.default_graph.add(triple)
    for name, triples in named.items():
        graph = dataset.graph(URIRef(name[1:-1]))
        for triple in triples:
            graph.add(triple)
    result = dataset.query(_prepared(sparql))
    if result.type == "ASK":
        return bool(result.askAnswer)
    if result.type == "CONSTRUCT":
        return sorted(f"{s.n3()} {p.n3()} {o.n3()} ." for s, p, o in result.graph)
    return [{str(var): _n3(row[var]) for var in result.vars if row[var] is not None} for row in result]


def _terms(triples):
    graph = _graph(triples)
    return set(graph)


@functools.lru_cache(maxsize=4096)
def _closed(triples: frozenset, regime: str) -> frozenset:
    """The rdflib triples of the closure of ``triples``, computed once per set of triples and regime: a
    window's content often recurs from one instant, or one generated case, to the next."""
    return frozenset(_terms(closure(triples, regime)))


def run(query_text: str, windows, elements, static, regime: str, step: int):
    """Answers at every instant.

    ``windows``: [(name or None, range_ms or None, triples_n or None)] (all over one stream);
    ``elements``: [(time_ms, (s, p, o))] in time order; ``static``: triples; ``step`` the evaluation period.
    """
    if not elements:
        return []
    sparql = to_sparql(query_text)
    first, last = elements[0][0], elements[-1][0]
    instant = (first // step + 1) * step
    out = []
    while instant <= (last // step + 1) * step:
        default: set = set()
        named: dict[str, set] = {}
        held = []
        for name, size, count in windows:
            if count is not None:
                timed = [(tau, t) for tau, t in elements if tau < instant][-count:]
            else:
                timed = [(tau, t) for tau, t in elements if instant - size <= tau < instant]
            held.extend(timed)
            content = [t for _tau, t in timed]
            if name is None:
                default.update(content)
            else:
                named.setdefault(name, set()).update(content)
        default_graph = _closed(frozenset(static).union(default), regime)
        named_graphs = {n: _closed(frozenset(static).union(c), regime) for n, c in named.items()}
        _set_element_times(held)
        out.append((instant, answer(sparql, default_graph, named_graphs)))
        instant += step
    return out


def run_slots(
    inner_sparql: str,
    size: int,
    slot: int,
    elements,
    static,
    regime: str,
    step: int,
    op: str,
    time_var: str = "t",
):
    """BOX / AT blocks: evaluate the block's pattern slot by slot (each slot's elements plus the
    static graph, closed) and combine: BOX keeps solutions of every slot of the window, AT tags each
    solution with its slot's start time."""
    first, last = elements[0][0], elements[-1][0]
    instant = (first // step + 1) * step
    out = []
    while instant <= (last // step + 1) * step:
        per_slot = []
        start = max(0, instant - size)
        for slot_start in range(start, instant, slot):
            content = {t for tau, t in elements if slot_start <= tau < slot_start + slot}
            rows = answer(inner_sparql, _closed(frozenset(static).union(content), regime), {})
            per_slot.append((slot_start, rows))
        if op == "box":
            keys = [Counter(tuple(sorted(r.items())) for r in rows) for _s, rows in per_slot]
            common = set(keys[0]) if keys else set()
            for k in keys[1:]:
                common &= set(k)
            result = [dict(k) for k in sorted(common)]
        else:
            result = [{**r, time_var: f'"{s}"^^{XSD_INT}'} for s, rows in per_slot for r in rows]
        out.append((instant, result))
        instant += step
    return out


# -- elements in arrival order: late elements, instants, several streams, blank nodes (DESIGN.md §3, §5) --


def merged(files):
    """The arrival order of stream files replayed together (``rsp run`` with several ``--stream``s,
    docs/cli.md): each file in its own line order; the next element is the next one of the file whose
    next element has the smallest time, the first such file on a tie. ``files`` are lists of
    ``(time, triple)``; returns ``(file index, time, triple)`` in arrival order."""
    positions = [0] * len(files)
    out = []
    while True:
        best = None
        for index, elements in enumerate(files):
            if positions[index] < len(elements) and (
                best is None or elements[positions[index]][0] < files[best][positions[best]][0]
            ):
                best = index
        if best is None:
            return out
        time, triple = files[best][positions[best]]
        positions[best] += 1
        out.append((best, time, triple))


def timeline(times, step: int):
    """For times in arrival order: (the indices of the late ones, the first instant, the last instant).

    An instant t closes when an element at t or later arrives; the first instant is the first one
    after the earliest element that arrived before any instant closed; an element older than the last
    closed instant is late; the last instant is the first one after the newest element."""
    closed = first = newest = None
    late = set()
    for index, time in enumerate(times):
        if closed is not None and time < closed:
            late.add(index)
            continue
        newest = time if newest is None else max(newest, time)
        if closed is None:
            candidate = (time // step + 1) * step
            first = candidate if first is None else min(first, candidate)
        if newest >= first:
            closed = newest // step * step
    last = None if newest is None else (newest // step + 1) * step
    return late, first, last


def scoped(triple, source: int):
    """The triple with its blank nodes in the scope of source number ``source`` (``_:src<i>_<label>``)."""
    return tuple(f"_:src{source}_{term[2:]}" if term.startswith("_:") else term for term in triple)


def run_arrivals(query_text: str, windows, arrivals, static, regime: str, step: int, graphs=None):
    """Answers at every instant, and how many elements were late.

    ``graphs``: the static named graphs ``{IRI: triples}`` of ``FROM NAMED <g>``: named graph g is the
    closure of static ∪ g's triples.
    ``windows``: [(name or None, stream, range_ms or None, triples_n or None)];
    ``arrivals``: [(time_ms, stream, source number, (s, p, o))] in arrival order.
    A ``[TRIPLES n]`` window holds the last n elements before t in time order, elements of one time in
    arrival order (as if every element that is not late had come in time order).
    """
    late, first, last = timeline([a[0] for a in arrivals], step)
    if first is None:
        return [], len(late)
    kept = [(a[0], a[1], scoped(a[3], a[2])) for i, a in enumerate(arrivals) if i not in late]
    kept.sort(key=lambda element: element[0])  # stable: one time's elements stay in arrival order
    sparql = to_sparql(query_text)
    static_named = {iri: _closed(frozenset(static).union(g), regime) for iri, g in (graphs or {}).items()}
    out = []
    for instant in range(first, last + 1, step):
        default: set = set()
        named: dict[str, set] = {}
        held = []
        for name, stream, size, count in windows:
            if count is not None:
                timed = [(tau, t) for tau, s, t in kept if s == stream and tau < instant][-count:]
            else:
                timed = [(tau, t) for tau, s, t in kept if s == stream and instant - size <= tau < instant]
            held.extend(timed)
            content = [t for _tau, t in timed]
            if name is None:
                default.update(content)
            else:
                named.setdefault(name, set()).update(content)
        default_graph = _closed(frozenset(static).union(default), regime)
        named_graphs = {n: _closed(frozenset(static).union(c), regime) for n, c in named.items()}
        named_graphs.update(static_named)
        _set_element_times(held)
        out.append((instant, answer(sparql, default_graph, named_graphs)))
    return out, len(late)
