"""``rsp serve``: continuous queries as an HTTP service (Starlette on uvicorn; docs/serve.md) — routes in
:mod:`rsp.serve.app`, the command in :mod:`rsp.cli.serve`. Needs the ``serve`` extra."""
