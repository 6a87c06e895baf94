"""``rsp serve``: the command that starts the HTTP service (uvicorn) on the loopback interface."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TextIO

from rsp.errors import RspError


def add_parser(sub) -> None:
    """Register ``rsp serve`` on the ``rsp`` command's subparsers."""
    serve = sub.add_parser(
        "serve",
        help="serve continuous queries over HTTP (REST, Server-Sent Events, WebSocket, a web page)",
        description="An HTTP service: register queries and streams, POST stream elements, read results "
        "as they come (docs/serve.md). Needs pip install 'rsp[serve]'.",
        epilog="example:\n"
        "  rsp serve --port 8000 --token secret --entailment rdfs --ontology ontologies/building.ttl\n"
        "  (then open http://127.0.0.1:8000/ ; the REST routes are in docs/serve.md)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.add_argument("--token", help="require 'Authorization: Bearer TOKEN' on requests that change state")
    serve.add_argument(
        "--entailment",
        choices=("none", "rdfs", "owlrl"),
        default="none",
        help="the entailment regime of the queries registered (default: none)",
    )
    serve.add_argument("--ontology", action="append", default=[], metavar="FILE", help="load at start")
    serve.add_argument("--max-body", type=int, default=16 * 1024 * 1024, metavar="BYTES",
                       help="largest request body taken (default 16 MiB)")  # fmt: skip
    serve.add_argument("--data", metavar="DIR",
                       help="keep what the service acknowledges in DIR's write-ahead log, synced before each "
                       "2xx, and restore it from there at start (default: in memory only)")  # fmt: skip
    serve.add_argument("--retain", type=int, default=1000, metavar="N",
                       help="instants each query keeps for subscribers resuming after an event id "
                       "(Last-Event-ID, ?after=; default 1000)")  # fmt: skip
    serve.add_argument("--compact-bytes", type=int, default=64 * 1024 * 1024, metavar="BYTES",
                       help="with --data: rewrite the log without what no window or retained instant "
                       "needs once it is over BYTES and twice its size after the last rewrite "
                       "(default 64 MiB)")  # fmt: skip
    serve.add_argument("--quiet", "-q", action="store_true", help="no access log, no query warnings")
    serve.set_defaults(handler=command)


def command(args: argparse.Namespace, _out: TextIO) -> int:
    try:
        import uvicorn

        from rsp.serve.app import create_app
        from rsp.serve.service import Service
    except ImportError as err:
        raise RspError(f"rsp serve needs pip install 'rsp[serve]' ({err})") from None
    if args.quiet:
        logging.getLogger("rsp.serve").setLevel(logging.ERROR)
    if args.retain < 1:
        raise RspError(f"--retain {args.retain}: at least 1 instant")
    if args.compact_bytes < 1:
        raise RspError(f"--compact-bytes {args.compact_bytes}: at least 1")
    service = Service(args.entailment, retain=args.retain, compact_bytes=args.compact_bytes)
    for path in args.ontology:  # before the log's registrations, as when they were first made
        service.engine.load_ontology(path)
    if args.data is not None:
        service.restore(args.data)
        print(restored_line(args.data, service.restored), file=sys.stderr, flush=True)
    app = create_app(service, args.token, args.max_body)
    print(f"rsp serve: http://{args.host}:{args.port}/ (API: /openapi.json)", file=sys.stderr, flush=True)
    # Ctrl-C / SIGTERM: open Server-Sent Events and WebSocket subscriptions never end by themselves, so
    # the server waits for them at most 2 s before it stops
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning" if args.quiet else "info",
                    timeout_graceful_shutdown=2)  # fmt: skip
    finally:
        service.close()
    return 0


def restored_line(data: str, counts: dict) -> str:
    """The line ``rsp serve --data`` starts with: what the log gave back."""
    if not counts.get("records"):
        return f"rsp serve: a new data folder {data}"
    cut = f"; cut {counts['cut']} bytes of a torn last record" if counts.get("cut") else ""
    return (
        f"rsp serve: restored from {data}: {counts['queries']} query registration(s), {counts['graphs']} "
        f"graph(s), {counts['elements']} element(s), {counts['records']} record(s){cut}"
    )
