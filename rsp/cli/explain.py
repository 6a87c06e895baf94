"""``rsp explain``: the LARS rules a query compiles to, each with its origin (query line or W3C rule id)."""

from __future__ import annotations

import argparse
from typing import TextIO

from rsp.cli.common import give_graphs, load_ontology, print_warnings, read_query


def add_parser(sub) -> None:
    """Register ``rsp explain`` on the ``rsp`` command's subparsers."""
    explain = sub.add_parser(
        "explain",
        help="print the LARS rules a query compiles to",
        description="Print the LARS rules a query compiles to, each with its origin "
        "(query line or W3C rule id).",
        epilog="example:\n  rsp explain examples/building/hot-rooms.rq --entailment rdfs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("query", help="the query (.rq)")
    explain.add_argument(
        "--ontology",
        action="append",
        default=[],
        metavar="FILE",
        help="a Turtle, RDF/XML, N-Triples or JSON-LD ontology (static background knowledge); repeatable",
    )
    explain.add_argument(
        "--entailment",
        choices=("none", "rdfs", "owlrl"),
        default="none",
        help="the entailment regime the rules are compiled with (default: none)",
    )
    explain.add_argument(
        "--graph",
        action="append",
        default=[],
        metavar="IRI=FILE",
        help="the local file of a FROM / FROM NAMED graph; repeatable",
    )
    explain.add_argument("--output", "-o", help="write to this file instead of stdout")
    explain.set_defaults(handler=command)


def command(args: argparse.Namespace, out: TextIO) -> int:
    from rsp.runtime import Engine

    engine = Engine(entailment=args.entailment)
    for ontology in args.ontology:
        load_ontology(engine, ontology)
    give_graphs(engine, args.graph)
    query = engine.register(read_query(args.query), args.query)
    print_warnings([query], args)
    tr = query.translation
    out.write(f"% query {query.name}: time points are slots of {tr.slot} ms, evaluated every {tr.step} ms\n")
    for iri, pred in tr.streams.items():
        out.write(f"% stream {iri} -> {pred}(S, P, O)\n")
    for rule in query.rules():
        if rule.is_fact:
            continue
        out.write(f"{rule}    % {rule.origin}\n")
    facts = sum(1 for rule in query.rules() if rule.is_fact) + sum(
        len(rows) for _sig, rows in query.program.program.data
    )
    out.write(f"% plus {facts} background fact(s): the closed static graph and ontology tables\n")
    return 0
