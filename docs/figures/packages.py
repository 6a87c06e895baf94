"""The packages of rsp, what each owns and what it may import: the one table of docs/architecture.md and
its picture (docs/img/packages.svg), both made from :data:`PACKAGES`. tests/project/test_structure.py
holds the table against the code's imports and the picture against this data.

    python docs/figures/packages.py          # write docs/img/packages.svg and print the table
"""

from __future__ import annotations

from html import escape
from pathlib import Path

# (package, what it owns, what it may import), top layer first; a layer's packages import only packages
# of the layers below it
LAYERS: list[list[tuple[str, str, tuple[str, ...]]]] = [
    [
        ("cli", "the command line, never imported by the library: one module per command (`run`, `lars` "
         "with `models` for answer streams, `mtl`, `explain`, `serve`, `spark` with `spark_run`), `common` "
         "(what they share) and `main` (also `python -m rsp`: `rsp/__main__.py`)", ("*",)),
    ],
    [
        ("serve", "`rsp serve`'s state, its write-ahead log (`--data`) and routes (HTTP, SSE, WebSocket), "
         "MQTT subscriptions, over the runtime's API",
         ("runtime", "background", "mqtt", "io", "errors", "rsp")),
        ("spark", "the only package that imports PySpark: `reason` and `reason_program` (a streaming "
         "DataFrame in, one out), an engine per key bucket in Spark's stateful operator, its state in the "
         "state store; sources, the session, the command's driving and writers",
         ("runtime", "query.compile", "query.answers", "query.translation", "query.syntax", "mtl", "engine",
          "lars", "io", "errors", "extras", "lazy", "rsp")),
        ("live", "live input: standard input, pipes, FIFOs, MQTT topics and `--follow`, read as they grow",
         ("mqtt", "io", "errors")),
    ],
    [
        ("runtime", "the one way in for every surface: `Engine` registers compiled queries and takes "
         "elements; each `QueryHandle` has a public `Clock`, subscribers, and hands out `Result` values",
         ("query.compile", "query.answers", "query.syntax", "background", "engine", "lars", "io",
          "errors")),
        ("mqtt", "MQTT in and out over paho-mqtt (the extra `mqtt`): a topic as a live stream source "
         "(N-Triples or JSON-LD messages, QoS 1, reconnection), results published to a topic",
         ("background", "io", "extras", "errors")),
    ],
    [
        ("query.compile", "the compile pipeline (`query/compile.py`): parse, validate, translate, add the "
         "background rules and static graphs, check; the query package's face (`query/__init__.py`)",
         ("query.answers", "query.translation", "query.syntax", "background", "lars", "errors")),
    ],
    [
        ("query.answers", "a query's answers at each instant: the algebra over the engine's tables, "
         "expressions and their values, built-in functions and their evaluation context, aggregates, "
         "property paths, maintained answers, their order, explanations",
         ("query.translation", "query.syntax", "background", "engine", "lars", "io", "errors")),
    ],
    [
        ("query.translation", "a validated query as LARS rules over triple predicates; reflexive RDFS "
         "triples; whether a query partitions by a variable",
         ("query.syntax", "background", "lars", "errors")),
    ],
    [
        ("background", "RDFS and OWL 2 RL rules named by W3C rule id, ontologies and static graphs read "
         "through pyoxigraph (JSON-LD through rdflib), the static closure computed once and the rules "
         "specialised to it",
         ("engine", "lars", "io", "errors", "lazy")),
        ("query.syntax", "a query's text: grammar, parser and RSP dialects, AST, lexical forms, syntax "
         "errors, the AST as text, validation", ("io", "errors")),
        ("asp", "answer streams of non-stratified LARS programs (Ticker): mode clingo and mode tms",
         ("lars", "io", "errors")),
        ("mtl", "DatalogMTL over the rationals (MeTeoR-Str): syntax, normal form, plans, the engine",
         ("io", "lark_errors", "programcache", "errors")),
    ],
    [
        ("engine", "the incremental evaluator: annotated tables, expiry by horizon, semi-naive plans, "
         "windows, explanations, its output stream as text; `run`",
         ("lars", "io", "errors")),
    ],
    [
        ("io", "streams in (N-Triples with times, atoms), late lines, N-Triples terms, the `Result` model "
         "and its writers, results in a notebook", ("lars", "errors", "extras")),
    ],
    [
        ("lars", "the rule model, the `.lars` syntax, one pass per module (safety, windows, strata), the "
         "program cache", ("lark_errors", "programcache", "errors")),
    ],
    [
        ("lark_errors", "lark's parse errors as positioned rsp errors", ("errors",)),
        ("programcache", "checked programs kept on disk, keyed by their text", ("rsp",)),
    ],
    [
        ("rsp", "the package's face: `rsp.Engine` (imported on first use), the version, the collector's "
         "thresholds", ("lazy",)),
    ],
    [
        ("lazy", "names a package exports but imports on first use", ("extras",)),
    ],
    [
        ("extras", "the distribution's name on PyPI and its extras: the error naming the extra a feature "
         "needs (`MissingExtraError`)", ("errors",)),
    ],
    [
        ("errors", "one error hierarchy: `RspError` → `QuerySyntaxError`, `ProgramError`, `StreamError`", ()),
    ],
]
PACKAGES = [package for layer in LAYERS for package in layer]

HERE = Path(__file__).resolve().parent
SVG = HERE.parent / "img" / "packages.svg"


def table() -> str:
    """The Markdown table of docs/architecture.md."""
    rows = ["| package | owns | may import |", "|---|---|---|"]
    for name, owns, may in PACKAGES:
        path = "rsp/" + name.replace(".", "/") if name != "rsp" else "rsp/__init__.py"
        allowed = "everything" if may == ("*",) else (", ".join(f"`{m}`" for m in may) or "nothing")
        rows.append(f"| `{path}` | {owns} | {allowed} |")
    return "\n".join(rows) + "\n"


def svg() -> str:
    """The layers as rows of boxes, the top layer first: each imports only what lies below it."""
    width, box_h, gap, pad = 980, 34, 16, 14
    rows = []
    y = pad
    for layer in LAYERS:
        n = len(layer)
        box_w = (width - 2 * pad - (n - 1) * gap) / n
        for i, (name, _owns, _may) in enumerate(layer):
            x = pad + i * (box_w + gap)
            rows.append(
                f'<rect x="{x:.0f}" y="{y}" width="{box_w:.0f}" height="{box_h}" rx="6" '
                f'fill="#eef3fb" stroke="#4a6fa5"/>'
                f'<text x="{x + box_w / 2:.0f}" y="{y + 22}" text-anchor="middle" '
                f'font-family="sans-serif" font-size="14">rsp/{escape(name.replace(".", "/"))}</text>'
            )
        y += box_h + gap
    height = y - gap + pad
    arrow = (
        f'<text x="{width - pad}" y="{height - 4}" text-anchor="end" font-family="sans-serif" '
        'font-size="11" fill="#555">each package imports only packages of the rows below it</text>'
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 12}" '
        f'viewBox="0 0 {width} {height + 12}">' + "".join(rows) + arrow + "</svg>\n"
    )


if __name__ == "__main__":
    SVG.write_text(svg(), encoding="utf-8")
    print(table())
