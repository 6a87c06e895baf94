"""The HTTP routes of ``rsp serve`` (Starlette): each parses a request into a call of
:class:`rsp.serve.service.Service` and writes its answer; errors are JSON with rsp's positioned
messages, whatever the request (a body no route can read is a 4xx, never a 5xx). Requests that change
state are refused from another origin's web page (``Origin``) and need the bearer token if one is set;
request bodies are limited in size."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from rsp.errors import Position, RspError
from rsp.serve.journal import JournalError
from rsp.serve.service import BadElements, NotFound, Service, result_line

MAX_BODY = 16 * 1024 * 1024
"""Bytes a request body may hold (``rsp serve --max-body``)."""

FORMATS = ("jsonl", "sparql-json")

JSON_TYPES = ("application/json", "application/ld+json")
TEXT_TYPES = ("", "text/plain", "application/x-www-form-urlencoded")
"""Content types taken as plain text: none, ``text/plain`` and curl's default for ``--data-binary``."""
ELEMENT_TYPES = ("application/n-triples", *TEXT_TYPES, *JSON_TYPES)
"""What ``POST /streams/elements`` takes: N-Triples (also as plain text) or JSON-LD."""

logger = logging.getLogger("rsp.serve")
"""The service's own messages (a registered query's warnings); ``rsp serve --quiet`` keeps only errors."""


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _error_json(err: Exception) -> dict:
    if isinstance(err, RspError):
        error: dict = {"message": err.message}
        if err.position is not None:
            error["position"] = {"source": err.position.file, "line": err.position.line,
                                 "column": err.position.column}  # fmt: skip
        error["text"] = str(err)
        return {"error": error}
    return {"error": {"message": str(err), "text": str(err)}}


def create_app(
    service: Service | None = None,
    token: str | None = None,
    max_body: int = MAX_BODY,
    subscriptions: Sequence[tuple[str, str]] = (),
    identity: str | None = None,
) -> Starlette:
    """The ASGI application (``uvicorn.run(create_app())``). ``subscriptions``: (stream IRI, MQTT topic
    URL) pairs fed from the broker while the application runs (:mod:`rsp.serve.subscribe`; ``identity``,
    the data folder, makes their broker sessions outlive a restart)."""
    service = service if service is not None else Service()

    async def body(request: Request) -> str:
        if request.method not in ("GET", "HEAD"):
            refuse_other_origins(request)
            if token is not None and request.headers.get("authorization", "") != f"Bearer {token}":
                raise HttpError(401, "this request changes the service: send 'Authorization: Bearer TOKEN'")
        size = request.headers.get("content-length")
        if size is not None and not (size.isascii() and size.isdigit()):
            raise HttpError(400, f"Content-Length {size!r} is not a number of bytes")
        if size is not None and int(size) > max_body:
            raise HttpError(413, f"the request body has {size} bytes; at most {max_body} are taken")
        data = b""
        async for chunk in request.stream():
            data += chunk
            if len(data) > max_body:
                raise HttpError(413, f"the request body is over {max_body} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise HttpError(400, "the request body is not UTF-8 text") from None

    def route(handler):
        async def wrapped(request: Request) -> Response:
            try:
                text = await body(request)
                async with service.lock:
                    return await handler(request, text)
            except HttpError as err:
                return JSONResponse({"error": {"message": str(err), "text": str(err)}}, err.status)
            except NotFound as err:
                return JSONResponse(_error_json(err), 404)
            except JournalError as err:  # nothing of the request was kept: the client sends it again
                return JSONResponse(_error_json(err), 503)
            except BadElements as err:
                errors = [_error_json(e)["error"] for e in err.errors]
                summary = _error_json(RspError(err.message))["error"]
                return JSONResponse({"error": summary, "errors": errors}, 422)
            except RspError as err:
                return JSONResponse(_error_json(err), 400)

        return wrapped

    async def list_queries(request: Request, _text: str) -> Response:
        return JSONResponse([service.describe(h) for h in service.engine.queries])

    async def add_query(request: Request, text: str) -> Response:
        handles = service.register(text, request.query_params.get("name"))
        warnings = [warning for handle in handles for warning in handle.warnings]
        for warning in warnings:  # the service's log too (rsp serve --quiet leaves them out)
            logger.warning(warning)
        return JSONResponse({"registered": [h.name for h in handles], "warnings": warnings}, 201)

    async def one_query(request: Request, _text: str) -> Response:
        name = request.path_params["name"]
        if request.method == "DELETE":
            service.delete(name)
            return Response(status_code=204)
        return JSONResponse(service.describe(service.handle(name)))

    async def results(request: Request, _text: str) -> Response:
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in FORMATS:
            raise HttpError(400, f"format={fmt}: one of {', '.join(FORMATS)}")
        lines = service.results(request.path_params["name"], fmt, _after(request))
        return PlainTextResponse("".join(line + "\n" for line in lines), media_type="application/x-ndjson")

    async def streams(request: Request, text: str) -> Response:
        if request.method == "POST":
            wanted = 'give the stream IRI as the body, or {"iri": IRI}'
            if _content_type(request) in JSON_TYPES or text.lstrip().startswith("{"):
                document = _json(text)
                if not isinstance(document, dict) or not isinstance(document.get("iri"), str):
                    raise HttpError(400, f"{wanted}: the JSON body has no string \"iri\"")
                iri = document["iri"].strip()
            else:
                iri = text.strip()
            if not iri:
                raise HttpError(400, wanted)
            return JSONResponse({"registered": service.add_stream(iri)}, 201)
        return JSONResponse(sorted(service.streams))

    async def one_stream(request: Request, _text: str) -> Response:
        service.delete_stream(request.query_params.get("iri", ""))
        return Response(status_code=204)

    async def elements(request: Request, text: str) -> Response:
        iri = request.query_params.get("stream", "").strip()
        if not iri:
            raise HttpError(400, "the parameter stream is missing: POST /streams/elements?stream=IRI "
                                 "(GET /streams lists the streams)")  # fmt: skip
        key = request.headers.get("idempotency-key")
        kind = _content_type(request)
        if kind not in ELEMENT_TYPES:
            accepted = "application/n-triples or text/plain (N-Triples lines ending in '# <ms>') or " \
                       "application/ld+json (JSON-LD)"  # fmt: skip
            raise HttpError(415, f"Content-Type {kind}: stream elements are {accepted}")
        if kind in JSON_TYPES:
            return JSONResponse(service.push_jsonld(iri, _json(text), key))
        return JSONResponse(service.push_ntriples(iri, text, key))

    async def advance(request: Request, _text: str) -> Response:
        time = request.query_params.get("time")
        try:
            if time is not None and not (time.isascii() and time.isdigit()):
                raise ValueError
            ms = None if time is None else int(time)
        except ValueError:  # not digits, or more than Python reads as an int (4300)
            shown = time if len(time) <= 40 else time[:40] + "…"
            raise HttpError(400, f"time={shown}: a time in ms, an integer ≥ 0") from None
        closed = service.advance(ms, request.path_params.get("name"))
        return JSONResponse({"closed_until": closed})

    async def graphs(request: Request, text: str) -> Response:
        kind = _content_type(request) or "text/turtle"
        suffix = {"text/turtle": ".ttl", "application/rdf+xml": ".rdf", "application/n-triples": ".nt",
                  "application/ld+json": ".jsonld"}.get(kind)  # fmt: skip
        if suffix is None:
            raise HttpError(415, f"Content-Type {kind}: send Turtle, RDF/XML, N-Triples or JSON-LD")
        return JSONResponse({"triples": service.load(text, suffix)}, 201)

    async def events(request: Request) -> Response:
        name = request.path_params["name"]
        fmt = request.query_params.get("format", "jsonl")
        try:
            handle = service.handle(name)
            after = _after(request)
        except (NotFound, HttpError) as err:
            return JSONResponse(_error_json(err), getattr(err, "status", 404))
        gap = service.since(name, after)[1] if after is not None else None
        queue = service.listen(name, after)

        async def stream():
            try:
                yield ": connected\n\n"
                if gap is not None:  # instants between `after` and the oldest kept are gone
                    yield f"event: gap\ndata: {json.dumps({'after': after, 'oldest': gap})}\n\n"
                while True:
                    result = await queue.get()
                    if result is None:
                        return
                    line = result_line(result, handle.variables, fmt)
                    yield f"event: result\nid: {_event_id(name, result.time)}\ndata: {line}\n\n"
            finally:
                service.unlisten(name, queue)

        headers = {"Cache-Control": "no-cache"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def socket(websocket: WebSocket) -> None:
        name = websocket.path_params["name"]
        await websocket.accept()
        try:
            handle = service.handle(name)
            after = _after(websocket)
        except (NotFound, HttpError) as err:
            await websocket.send_json(_error_json(err))
            await websocket.close(code=4404 if isinstance(err, NotFound) else 4400)
            return
        queue = service.listen(name, after)
        try:
            while True:
                result = await queue.get()
                if result is None:  # the query was deleted, or the service stops: a normal close
                    await websocket.close()
                    break
                await websocket.send_text(result_line(result, handle.variables))
        except (WebSocketDisconnect, asyncio.CancelledError):
            pass
        finally:
            service.unlisten(name, queue)

    async def health(_request: Request) -> Response:
        """Liveness: the process answers."""
        return JSONResponse({"status": "ok"})

    async def ready(_request: Request) -> Response:
        """Readiness: the service answers only once its log is replayed, so it is ready when it answers;
        with what the log gave back."""
        durable = service.journal is not None
        return JSONResponse({"ready": True, "durable": durable, "queries": len(service.engine.queries),
                             "restored": service.restored if durable else None})  # fmt: skip

    async def openapi(_request: Request) -> Response:
        from rsp.serve.openapi import description

        return JSONResponse(description())

    async def page(_request: Request) -> Response:
        from importlib.resources import files

        return Response(files("rsp.serve").joinpath("page.html").read_text(encoding="utf-8"),
                        media_type="text/html")  # fmt: skip

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/queries", route(list_queries), methods=["GET"]),
        Route("/queries", route(add_query), methods=["POST"]),
        Route("/queries/{name}", route(one_query), methods=["GET", "DELETE"]),
        Route("/queries/{name}/results", route(results), methods=["GET"]),
        Route("/queries/{name}/advance", route(advance), methods=["POST"]),
        Route("/queries/{name}/events", events, methods=["GET"]),
        WebSocketRoute("/queries/{name}/ws", socket),
        Route("/streams", route(streams), methods=["GET", "POST"]),
        Route("/streams", route(one_stream), methods=["DELETE"]),
        Route("/streams/elements", route(elements), methods=["POST"]),
        Route("/streams/advance", route(advance), methods=["POST"]),
        Route("/graphs", route(graphs), methods=["POST"]),
    ]
    async def http_error(_request: Request, err: Exception) -> Response:
        assert isinstance(err, HTTPException)  # noqa: S101 (Starlette's own: no such route or method)
        return JSONResponse({"error": {"message": err.detail, "text": err.detail}}, err.status_code,
                            headers=err.headers)  # fmt: skip

    async def internal_error(_request: Request, err: Exception) -> Response:
        message = f"internal error ({type(err).__name__}): please report it with the request"
        return JSONResponse({"error": {"message": message, "text": message}}, 500)

    handlers = {HTTPException: http_error, Exception: internal_error}
    @contextlib.asynccontextmanager
    async def lifespan(_app):
        from rsp.serve.subscribe import Subscription

        running = []
        try:
            for iri, url in subscriptions:
                service.add_stream(iri, log=False)
                subscription = Subscription(service, _bare_iri(iri), url, identity)
                subscription.start()
                running.append(subscription)
            yield
        finally:
            for subscription in running:
                subscription.close()

    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan if subscriptions else None)
    app.state.service = service
    return app


def refuse_other_origins(request: Request) -> None:
    """A request that changes state sent by a web page of another origin (its ``Origin`` header is not
    this service's own, or ``Sec-Fetch-Site`` says it is not same-origin) is refused (403): any page the
    user opens could otherwise POST to the service in the background, even with no CORS (a "simple"
    ``text/plain`` POST). Clients that are not browsers send neither header and are not concerned."""
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    site = request.headers.get("sec-fetch-site", "")
    if (origin is not None and origin != own) or site in ("cross-site", "same-site"):
        sender = origin if origin is not None else f"a {site} page"
        raise HttpError(403, f"refused: {sender} is not this service's origin ({own}); a web page may only "
                             "change the service from the service's own page")  # fmt: skip


def _event_id(name: str, instant: int) -> str:
    """A result event's id: its query and instant (``Q/1000``)."""
    return f"{name}/{instant}"


def _after(request) -> int | None:
    """The instant a subscriber resumes after: ``?after=`` (an event id or an instant in ms), else an
    SSE client's ``Last-Event-ID``; None for none."""
    given = request.query_params.get("after") or request.headers.get("last-event-id")
    if not given:
        return None
    instant = given.rsplit("/", 1)[-1]
    try:
        if not (instant.isascii() and instant.isdigit()):
            raise ValueError
        return int(instant)
    except ValueError:  # not digits, or more than Python reads as an int (4300)
        shown = given if len(given) <= 40 else given[:40] + "…"
        raise HttpError(400, f"after={shown}: an event id (QUERY/INSTANT) or an instant in ms") from None


def _content_type(request: Request) -> str:
    """The request's media type, lower case, without parameters ("" when none is given)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _json(text: str):
    """The JSON document of a request body; an :class:`RspError` at its line and column if it is not."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise RspError(f"not JSON: {err.msg}", Position("<request>", err.lineno, err.colno)) from None
    except RecursionError:
        raise RspError("not JSON this service reads: nested too deeply", Position("<request>")) from None


def _bare_iri(iri: str) -> str:
    return iri[1:-1] if iri.startswith("<") and iri.endswith(">") else iri
