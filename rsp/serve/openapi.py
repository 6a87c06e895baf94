"""The OpenAPI 3.1 description of ``rsp serve`` (``GET /openapi.json``), written out by hand: the routes
of :mod:`rsp.serve.app` are few and their bodies are RDF or query text, not JSON schemas."""

from __future__ import annotations


def _op(summary: str, body: str | None = None, changes: bool = False, **responses: str) -> dict:
    operation: dict = {"summary": summary, "responses": {code[1:]: {"description": text}
                                                         for code, text in responses.items()}}  # fmt: skip
    if body is not None:
        operation["requestBody"] = {"content": {body: {"schema": {"type": "string"}}}}
    if changes:
        operation["security"] = [{"bearer": []}]
        operation["responses"]["403"] = {"description": "refused: sent by a web page of another origin"}
    return operation


def description() -> dict:
    """The service's OpenAPI document."""
    from rsp import __version__

    name = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    stream = [{"name": "stream", "in": "query", "required": True, "schema": {"type": "string"}}]
    error = "a JSON error: {error: {message, position?, text}}"
    time = [{"name": "time", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 0}}]
    after = [{"name": "after", "in": "query", "required": False, "schema": {"type": "string"},
              "description": "resume after this event id (QUERY/INSTANT) or instant (ms): every later "
              "instant kept (rsp serve --retain), then the live ones; SSE clients may send Last-Event-ID"}]
    key = [{"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string"},
            "description": "names the request: sent again with a key already answered, nothing is added "
            "and the first answer is returned"}]
    advance = ("no element older than ?time= (ms) will come: close the instants up to it; without "
               "?time=, the end of the stream (close up to the first instant after the last element)")
    return {
        "openapi": "3.1.0",
        "info": {"title": "rsp serve", "version": __version__},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            "/health": {"get": _op("liveness: the process answers", r200="{status: ok}")},
            "/ready": {"get": _op("readiness: the log is replayed (rsp serve --data): what it gave back",
                                  r200="{ready, durable, queries, restored}")},  # fmt: skip
            "/queries": {
                "get": _op("the registered queries", r200="a JSON list"),
                "post": _op("register the queries of a text (REGISTER statements or a bare query; ?name=)",
                            "application/sparql-query", True, r201="{registered: [names]}", r400=error),
            },
            "/queries/{name}": {
                "parameters": name,
                "get": _op("one query", r200="JSON", r404=error),
                "delete": _op("delete a query", changes=True, r204="deleted", r404=error),
            },
            "/queries/{name}/results": {
                "parameters": name + after,
                "get": _op("the query's recent results (?format=jsonl|sparql-json), one JSON per line",
                           r200="JSON lines", r404=error),
            },
            "/queries/{name}/advance": {
                "parameters": name + time,
                "post": _op(advance + " for this query", changes=True, r200="{closed_until: {name: ms}}",
                            r404=error),
            },
            "/queries/{name}/events": {
                "parameters": name + after,
                "get": _op("results pushed live as Server-Sent Events, each with its id QUERY/INSTANT",
                           r200="text/event-stream"),
            },
            "/queries/{name}/ws": {
                "parameters": name + after,
                "get": _op("results pushed live over a WebSocket, one JSON text message per instant",
                           r101="switching protocols"),
            },
            "/streams": {
                "get": _op("the registered streams", r200="a JSON list of IRIs"),
                "post": _op("register a stream (its IRI as the body)", "text/plain", True, r201="registered"),
                "delete": _op("delete a stream (?iri=)", changes=True, r204="deleted", r404=error),
            },
            "/streams/elements": {
                "post": {
                    **_op("stream elements: N-Triples lines ending in '# <ms>', or JSON-LD "
                          "[{time, graph}]; all added, or none if one is bad", "application/n-triples", True,
                          r200="{stream, elements, late, late_lines}", r400=error, r404=error, r415=error,
                          r422="{error, errors: [...]}",
                          r503="rsp serve --data: the log cannot be written; nothing was added"),
                    "parameters": stream + key,
                },
            },
            "/streams/advance": {
                "parameters": time,
                "post": _op(advance + " for every query", changes=True, r200="{closed_until: {name: ms}}",
                            r400=error),
            },
            "/graphs": {
                "post": _op("load an ontology or static graph for the queries registered next",
                            "text/turtle", True, r201="{triples}", r415=error),
            },
        },
    }
