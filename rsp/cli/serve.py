"""``rsp serve``: the command that starts the HTTP service (uvicorn) on the loopback interface: it
binds the port itself (a port that cannot be had is an error, exit 2, before any URL is printed) and
stops cleanly on Ctrl-C or SIGTERM (live subscribers ended first, exit 0, no traceback)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

from rsp.errors import RspError
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
    serve.add_argument("--port", type=_port, default=8000,
                       help="TCP port, 0 to 65535 (default 8000; 0: any free port)")  # fmt: skip
    serve.add_argument("--token", help="require 'Authorization: Bearer TOKEN' on requests that change state")
    serve.add_argument(
        "--entailment",
        choices=("none", "rdfs", "owlrl"),
        default="none",
        help="the entailment regime of the queries registered (default: none)",
    )
    serve.add_argument("--ontology", action="append", default=[], metavar="FILE", help="load at start")
    serve.add_argument("--max-body", type=_size, default=16 * 1024 * 1024, metavar="BYTES",
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
    serve.add_argument("--subscribe", action="append", default=[], metavar="IRI=mqtt://HOST:PORT/TOPIC",
                       help="feed stream IRI from an MQTT topic (QoS 1; each message acknowledged once "
                       "the service has it, after the log's sync with --data; docs/mqtt.md); "
                       "repeatable")  # fmt: skip
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
    if args.retain < 1:
        raise RspError(f"--retain {args.retain}: at least 1 instant")
    if args.compact_bytes < 1:
        raise RspError(f"--compact-bytes {args.compact_bytes}: at least 1")
    listening = _listen(args.host, args.port)  # before anything is loaded: a port not had stops here
    try:
        service = Service(args.entailment, retain=args.retain, compact_bytes=args.compact_bytes)
        for path in args.ontology:  # before the log's registrations, as when they were first made
            service.engine.load_ontology(path)
        if args.data is not None:
            service.restore(args.data)
            print(restored_line(args.data, service.restored), file=sys.stderr, flush=True)
    except BaseException:
        listening.close()
        raise
    app = create_app(service, args.token, args.max_body, subscriptions(args.subscribe), args.data)
    host, port = listening.getsockname()[:2]
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    print(f"rsp serve: {url} (API: /openapi.json)", file=sys.stderr, flush=True)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets=None) -> None:
            # Server-Sent Events and WebSocket subscriptions never end by themselves: end them first,
            # so that the connections close as the server stops rather than being cancelled
            service.close_listeners()
            for _ in range(100):  # they see the end and leave (at most 1 s)
                if not any(service.listeners.values()):
                    break
                await asyncio.sleep(0.01)
            await super().shutdown(sockets)

    config = uvicorn.Config(app, log_level="warning" if args.quiet else "info", timeout_graceful_shutdown=2)
    stopped_by: list[str] = []
    try:
        with _signals_stop(stopped_by):
            Server(config).run(sockets=[listening])
    finally:
        service.close()
    if stopped_by:
        print(f"rsp serve: stopped by {stopped_by[0]}", file=sys.stderr)
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


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (0 to 65535; 0: any free port)")
    return int(text)


def _size(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bytes (an integer ≥ 1)")
    return int(text)


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (uvicorn listens on it); an :class:`RspError` if it cannot be."""
    listening = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except (OSError, OverflowError) as err:
        listening.close()
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RspError(f"rsp serve: cannot listen on {host}:{port}: {reason}") from None
    return listening


@contextlib.contextmanager
def _signals_stop(stopped_by: list[str]) -> Iterator[None]:
    """While the server runs, SIGINT and SIGTERM only stop it: uvicorn takes them over and, once it has
    stopped, raises the signal again for the handler it found, which is this one: it notes the signal in
    ``stopped_by`` (where Python's and rsp.cli's handlers would raise KeyboardInterrupt out of the event
    loop, a traceback)."""

    def note(number: int, _frame) -> None:
        stopped_by.append(signal.Signals(number).name)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, note)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def subscriptions(given: list[str]) -> list[tuple[str, str]]:
    """``--subscribe IRI=mqtt://HOST:PORT/TOPIC`` values as (IRI, URL) pairs, checked."""
    pairs = []
    for value in given:
        iri, sep, url = value.partition("=")
        if not sep or not iri or not url.startswith("mqtt://"):
            raise RspError(f"--subscribe {value}: give STREAM_IRI=mqtt://HOST:PORT/TOPIC")
        from rsp.mqtt import paho, parse_url

        parse_url(url, "--subscribe")
        paho()  # the extra is there, or say which one to install
        pairs.append((iri, url))
    return pairs
