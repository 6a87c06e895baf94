"""``rsp serve``: the command that starts the HTTP service (uvicorn) on the loopback interface."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TextIO

from rsp.extras import install_hint, missing


def add_parser(sub) -> None:
    """Register ``rsp serve`` on the ``rsp`` command's subparsers."""
    serve = sub.add_parser(
        "serve",
        help="serve continuous queries over HTTP (REST, Server-Sent Events, WebSocket, a web page)",
        description="An HTTP service: register queries and streams, POST stream elements, read results "
        f"as they come (docs/serve.md). Needs {install_hint('serve')}.",
        epilog="example:\n"
        "  rsp serve --port 8000 --token secret --entailment rdfs --ontology ontologies/building.ttl\n"
        "  (then open http://127.0.0.1:8000/ ; the REST routes are in docs/serve.md)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.add_argument("--token", help="require 'Authorization: Bearer TOKEN' on requests that change state")
    serve.add_argument("--entailment", choices=("none", "rdfs", "owlrl"), default="none")
    serve.add_argument("--ontology", action="append", default=[], metavar="FILE", help="load at start")
    serve.add_argument("--max-body", type=int, default=16 * 1024 * 1024, metavar="BYTES",
                       help="largest request body taken (default 16 MiB)")  # fmt: skip
    serve.add_argument("--quiet", "-q", action="store_true", help="no access log, no query warnings")
    serve.set_defaults(handler=command)


def command(args: argparse.Namespace, _out: TextIO) -> int:
    try:
        import uvicorn

        from rsp.serve.app import create_app
        from rsp.serve.service import Service
    except ImportError as err:
        raise missing(err, "serve", "rsp serve") from None
    if args.quiet:
        logging.getLogger("rsp.serve").setLevel(logging.ERROR)
    service = Service(args.entailment)
    for path in args.ontology:
        service.engine.load_ontology(path)
    app = create_app(service, args.token, args.max_body)
    print(f"rsp serve: http://{args.host}:{args.port}/ (API: /openapi.json)", file=sys.stderr, flush=True)
    # Ctrl-C / SIGTERM: open Server-Sent Events and WebSocket subscriptions never end by themselves, so
    # the server waits for them at most 2 s before it stops
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning" if args.quiet else "info",
                timeout_graceful_shutdown=2)  # fmt: skip
    return 0
