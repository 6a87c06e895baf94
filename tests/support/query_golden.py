"""Golden continuous-query cases (tests/golden/queries/<name>/): a query, its stream files, the expected
answers computed by the reference (tests/oracles/query_oracle.py) — never by rsp — and the way to run rsp run on
them and compare.

A case folder holds:

- ``query.rq``: the registered query;
- ``case.json``: ``{"streams": [[IRI, FILE], …], "entailment": "none"|"rdfs"|"owlrl", "ontology": FILE or
  null, "late": N, "about": "…"}`` — the stream files in the order given to ``rsp run`` (a stream may
  have several files), the ontology (a file of the case, or a path from the repository root such as
  ``ontologies/transport.ttl``), and how many elements are late; optionally ``"graphs": {IRI: FILE}``,
  the static named graphs of ``FROM NAMED <IRI>`` (N-Triples files of the case, given to ``rsp run``
  with ``--graph IRI=FILE``);
- optionally ``README.md``: how the expected answers were checked by hand;
- the stream files (N-Triples lines ending in ``# <ms>``, in arrival order: lines may be out of time
  order);
- ``expected.jsonl``: one record per instant, ``{"time": t, "bindings": [...]}`` (or ``"triples"``,
  ``"boolean"``), bindings sorted (bag semantics: compared as multisets unless the query has ORDER BY).
  Blank nodes of the i-th stream file are written ``_:src<i>_<label>`` (each file is its own scope).

``python tests/support/query_golden.py tests/golden/queries/NAME …`` (re)writes ``expected.jsonl`` and the
late count of ``case.json`` from the oracle.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent  # tests/support: paths.py, beside this file
for _folder in (HERE, HERE.parent / "oracles"):  # run as a script, the references' folder is not on sys.path
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import query_oracle  # noqa: E402  (tests/oracles, importable once it is on sys.path)
from paths import GOLDEN_QUERIES, ROOT  # noqa: E402

from rsp.background import load_ontology  # noqa: E402
from rsp.io.bnodes import Scopes  # noqa: E402
from rsp.query.syntax.parser import parse_query  # noqa: E402

_TIMED = re.compile(r"^(.*\.)\s*#\s*([0-9]+)\s*$")


def case_names() -> list[str]:
    if not GOLDEN_QUERIES.is_dir():
        return []
    return sorted(p.name for p in GOLDEN_QUERIES.iterdir() if (p / "case.json").exists())


def read_elements(text: str) -> list[tuple[int, tuple[str, str, str]]]:
    """A stream file's (time, triple) in line order (the test files are plain ASCII N-Triples)."""
    from rsp.io.ntriples import parse_line

    out = []
    for line in text.splitlines():
        parsed = parse_line(line)
        if parsed is not None:
            triple, comment = parsed
            out.append((int(comment.strip()), triple))
    return out


def write_elements(elements) -> str:
    return "".join(f"{s} {p} {o} . # {time}\n" for time, (s, p, o) in elements)


def step_of(query) -> int:
    """The evaluation period: COMPUTE EVERY, else the gcd of the windows' STEPs, else 1 s."""
    steps = [w.step for w in query.windows if w.step]
    return query.compute_every or (math.gcd(*steps) if steps else 1000)


def static_triples(ontology: str | Path | None) -> list:
    return load_ontology(ontology) if ontology else []


def oracle(text: str, files: list[tuple[str, list]], regime: str, static, graphs=None) -> tuple[list, int]:
    """The reference answers [(instant, answer)] and late count of a query over stream files
    [(stream IRI, [(time, triple)] in line order)] replayed as ``rsp run`` replays them; ``graphs`` the
    static named graphs {IRI: triples}."""
    query = parse_query(text)
    windows = [(w.name, w.stream, w.range, w.triples) for w in query.windows]
    arrivals = [
        (time, files[index][0], index, triple)
        for index, time, triple in query_oracle.merged([elements for _iri, elements in files])
    ]
    return query_oracle.run_arrivals(text, windows, arrivals, static, regime, step_of(query), graphs)


def records(text: str, answers) -> list[dict]:
    """The oracle's answers as expected.jsonl records (bindings sorted, so the file reads stably; kept
    in order for ORDER BY)."""
    from rsp.query.syntax import ast

    form = parse_query(text).form
    ordered = isinstance(form, ast.Select) and bool(form.modifiers.order_by)
    out = []
    for time, value in answers:
        if isinstance(form, ast.Ask):
            out.append({"time": time, "boolean": value})
        elif isinstance(form, ast.Construct):
            out.append({"time": time, "triples": sorted(value)})
        else:
            rows = value if ordered else sorted(value, key=lambda b: json.dumps(b, sort_keys=True))
            out.append({"time": time, "bindings": rows})
    return out


def case_files(
    text: str, files: list[tuple[str, list]], regime: str, ontology: str | None, about: str
) -> dict[str, str]:
    """A whole case folder as {file name: text}, its expected answers from the oracle."""
    static = static_triples(ROOT / ontology if ontology else None)
    answers, late = oracle(text, files, regime, static)
    names = [f"stream{i}.nt" for i in range(len(files))]
    case = {
        "streams": [[iri, name] for (iri, _elements), name in zip(files, names, strict=True)],
        "entailment": regime,
        "ontology": ontology,
        "late": late,
        "about": about,
    }
    out = {
        "query.rq": text if text.endswith("\n") else text + "\n",
        "case.json": json.dumps(case, indent=2) + "\n",
    }
    for name, (_iri, elements) in zip(names, files, strict=True):
        out[name] = write_elements(elements)
    out["expected.jsonl"] = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(text, answers))
    return out


def load_case(folder: Path) -> tuple[str, dict, list[tuple[str, list]], Path | None]:
    case = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    files = [
        (iri, read_elements((folder / name).read_text(encoding="utf-8"))) for iri, name in case["streams"]
    ]
    ontology = case.get("ontology")
    path = None
    if ontology:
        path = folder / ontology if (folder / ontology).exists() else ROOT / ontology
    return (folder / "query.rq").read_text(encoding="utf-8"), case, files, path


def named_graphs(folder: Path, case: dict) -> dict[str, list]:
    """The case's static named graphs {IRI (in brackets): triples}."""
    from rsp.background import load_ontology as load_graph

    return {f"<{iri}>": load_graph(folder / file) for iri, file in case.get("graphs", {}).items()}


def rewrite_expected(folder: Path) -> None:
    """Write ``expected.jsonl`` and the late count of ``case.json`` from the oracle."""
    text, case, files, ontology = load_case(folder)
    graphs = named_graphs(folder, case)
    answers, late = oracle(text, files, case["entailment"], static_triples(ontology), graphs)
    case["late"] = late
    (folder / "case.json").write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(text, answers))
    (folder / "expected.jsonl").write_text(lines, encoding="utf-8")


# -- comparing rsp's answers with the reference's ---------------------------------------------------------


def label_map(sources: list[str]) -> dict[str, str]:
    """rsp's blank-node label prefix of each source -> the reference's (``_:src<i>_``); the prefixes
    must be distinct (one scope per source)."""
    scopes = Scopes()
    prefixes = {scopes.prefix(source): f"_:src{i}_" for i, source in enumerate(sources)}
    assert len(prefixes) == len(sources), "two sources share a blank-node scope"
    return prefixes


_BNODE = re.compile(r"_:s[0-9a-f]+_")


def relabel(value, prefixes: dict[str, str]):
    """rsp's blank nodes written with the reference's labels (a label of no known source stays)."""
    if isinstance(value, str):
        return _BNODE.sub(lambda m: prefixes.get(m.group(), m.group()), value)
    if isinstance(value, list):
        return [relabel(v, prefixes) for v in value]
    if isinstance(value, dict):
        return {k: relabel(v, prefixes) for k, v in value.items()}
    return value


def bag(value):
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return Counter(tuple(sorted(b.items())) for b in value)
    if isinstance(value, list):
        return Counter(value)
    return value


def same_answers(ours: list[dict], expected: list[dict], ordered: bool) -> None:
    """rsp's records equal the reference's: the same instants, the same answers at each (as bags)."""
    assert [r["time"] for r in ours] == [r["time"] for r in expected]
    for got, want in zip(ours, expected, strict=True):
        for key in ("bindings", "triples", "boolean"):
            if key in want:
                if ordered:
                    assert got[key] == want[key], f"at {want['time']}"
                else:
                    assert bag(got[key]) == bag(want[key]), f"at {want['time']}"


def in_answer_order(records: list[dict], variables, order_by: bool) -> None:
    """Each instant's answers come in the order rsp fixes (docs/reference.md, "The order of answers"),
    checked from its definition: without ORDER BY, solutions sorted by their values' N-Triples text,
    variable by variable in the written order, an unbound variable first; CONSTRUCT triples sorted by
    their lines. ``records``: {"time", "bindings" | "triples" | "boolean"}."""
    for record in records:
        if record.get("bindings") is not None and not order_by:
            keys = [tuple(b.get(v, "") for v in variables) for b in record["bindings"]]
            assert keys == sorted(keys), f"at {record['time']}: answers out of order"
        if record.get("triples") is not None:
            assert record["triples"] == sorted(record["triples"]), (
                f"at {record['time']}: triples out of order"
            )


def handle_in_answer_order(handle) -> None:
    """:func:`in_answer_order` over a registered query's results (rsp.runtime.QueryHandle)."""
    form = handle.query.form
    order_by = bool(getattr(form, "modifiers", None) and form.modifiers.order_by)
    in_answer_order([{"time": r.time, "bindings": r.bindings, "triples": r.triples} for r in handle],
                    handle.variables, order_by)  # fmt: skip


if __name__ == "__main__":  # a maintenance command, not a test: rewrite cases' expected answers
    for argument in sys.argv[1:]:
        rewrite_expected(Path(argument))
        print(f"{argument}: expected.jsonl written by the oracle")
