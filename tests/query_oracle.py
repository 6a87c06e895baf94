"""The reference for continuous queries: re-materialise every window from scratch with owlrl and
evaluate the query with rdflib, instant by instant (DESIGN.md §5), independently of rsp's engine.

Only rdflib and owlrl compute answers here. The query text is rewritten into plain SPARQL: the REGISTER
and FROM STREAM / FROM NAMED WINDOW clauses are dropped and ``WINDOW w { … }`` becomes ``GRAPH w { … }``
over a dataset whose named graph w is the closure of static ∪ content(w, t).
"""

from __future__ import annotations

import re
from collections import Counter

import owlrl
import rdflib
from rdflib import RDF, RDFS, Dataset, Graph, URIRef

from rsp.background.vocab import SUBCLASS, SUBPROPERTY, VOCABULARY_NAMESPACES, is_noise

XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"


def _graph(triples) -> Graph:
    graph = Graph()
    text = "\n".join(f"{s} {p} {o} ." for s, p, o in triples)
    if text:
        rdflib.NORMALIZE_LITERALS = False
        try:
            graph.parse(data=text, format="nt")
        finally:
            rdflib.NORMALIZE_LITERALS = True
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


def to_sparql(text: str) -> str:
    """Plain SPARQL from a registered query (REGISTER/FROM STREAM dropped, WINDOW → GRAPH)."""
    text = re.sub(r"(?im)^\s*REGISTER\s+[^\n]*?\bAS\b", "", text)
    text = re.sub(r"(?im)^\s*FROM\s+(STREAM|NAMED\s+WINDOW)[^\n]*\n", "", text)
    return re.sub(r"(?i)\bWINDOW\s+(\S+)\s*\{", r"GRAPH \1 {", text)


def _n3(term) -> str | None:
    return None if term is None else term.n3()


def answer(sparql: str, default: set, named: dict[str, set]):
    """The rdflib answer over a dataset: bindings (list of dicts), CONSTRUCT triples, or a boolean."""
    dataset = Dataset()
    for triple in default:
        dataset.default_graph.add(triple)
    for name, triples in named.items():
        graph = dataset.graph(URIRef(name[1:-1]))
        for triple in triples:
            graph.add(triple)
    result = dataset.query(sparql)
    if result.type == "ASK":
        return bool(result.askAnswer)
    if result.type == "CONSTRUCT":
        return sorted(f"{s.n3()} {p.n3()} {o.n3()} ." for s, p, o in result.graph)
    return [{str(var): _n3(row[var]) for var in result.vars if row[var] is not None} for row in result]


def _terms(triples):
    graph = _graph(triples)
    return set(graph)


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
        for name, size, count in windows:
            if count is not None:
                content = [t for tau, t in elements if tau < instant][-count:]
            else:
                content = [t for tau, t in elements if instant - size <= tau < instant]
            if name is None:
                default.update(content)
            else:
                named.setdefault(name, set()).update(content)
        default_graph = _terms(closure(set(static) | default, regime))
        named_graphs = {n: _terms(closure(set(static) | c, regime)) for n, c in named.items()}
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
            rows = answer(inner_sparql, _terms(closure(set(static) | content, regime)), {})
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
