"""Per-instant time of a GROUP BY query and an OPTIONAL query, maintained from the engine's changes
(rsp/query/answers/maintained_ops.py) against recomputed from the window (rsp/query/answers/algebra.py),
issue 15.

    python benchmarks/maintained_ops.py [--rate N] [--range S] [--seconds S] [--repeat K] [--queries Q ...]

A stream of vehicles (``ex:kind`` among 20 kinds, ``ex:speed`` integers, ``ex:tag`` strings) arrives
at ``--rate`` triples per second into a ``[RANGE --range s STEP 1s]`` window, so the window holds
about rate × range triples. Each query runs in both modes — ``maintained`` (the default) and
``recompute`` (the same engine with ``query.maintained = None``: the algebra over the patterns'
solutions) — under RSTREAM and ISTREAM, with a ``jsonl`` writer subscribed (writing to memory), all
in this process, round robin, ``--repeat`` times. Reported per case: the median ms per instant over
the instants after the window filled, µs per stream triple over the whole run, and the ratio
recompute / maintained. The answers of both modes are compared as bags at every instant; the exit
status is 1 if they differ. Timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsp.io.results import make_writer  # noqa: E402
from rsp.runtime import Engine  # noqa: E402

EX = "http://example.org/t#"
STREAM = "<http://example.org/stream>"
KINDS = 20
VEHICLES = 2000
QUERIES = {
    "group-count": (
        "SELECT ?k (COUNT(?v) AS ?n) (SUM(?sp) AS ?total) (MAX(?sp) AS ?top)",
        "?v ex:kind ?k . ?v ex:speed ?sp",
        " GROUP BY ?k",
    ),
    "optional": ("SELECT ?v ?k ?t", "?v ex:kind ?k OPTIONAL { ?v ex:tag ?t }", ""),
}


def query_text(name: str, policy: str, range_s: int) -> str:
    head, body, tail = QUERIES[name]
    return (
        f"REGISTER {policy} Q AS\nPREFIX ex: <{EX}>\n{head}\n"
        f"FROM STREAM {STREAM} [RANGE {range_s}s STEP 1s]\nWHERE {{ {body} }}{tail}"
    )


def stream(rate: int, seconds: int, seed: int) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """One batch per 100 ms: (time, triples)."""
    rng = random.Random(seed)
    batches = []
    per = rate // 10
    for tick in range(seconds * 10):
        triples = []
        for _ in range(per):
            v = f"<{EX}v{rng.randrange(VEHICLES)}>"
            kind = rng.randrange(3)
            if kind == 0:
                triples.append((v, f"<{EX}kind>", f"<{EX}k{rng.randrange(KINDS)}>"))
            elif kind == 1:
                triples.append(
                    (v, f"<{EX}speed>", f'"{rng.randrange(120)}"^^<http://www.w3.org/2001/XMLSchema#integer>')
                )
            else:
                triples.append((v, f"<{EX}tag>", f'"t{rng.randrange(50)}"'))
        batches.append((tick * 100 + 50, triples))
    return batches


def run(name: str, policy: str, mode: str, batches, range_s: int) -> tuple[list[float], float, list]:
    """Per-instant seconds (instants after the window filled), total seconds, answers as bags."""
    engine = Engine()
    query = engine.register(query_text(name, policy, range_s))
    if mode == "recompute":
        query.maintained = None
    assert (query.maintained is not None) == (mode == "maintained"), "the query should be maintained"
    query.keep = False
    buffer = io.StringIO()
    writer = make_writer("jsonl", buffer, variables=query.variables, query_name="Q")
    stamps: list[tuple[int, float]] = []
    answers: list = []

    def on_result(result) -> None:
        writer.select(result.time, result.bindings)
        stamps.append((result.time, time.perf_counter()))
        answers.append(Counter(tuple(sorted(b.items())) for b in result.bindings))

    query.subscribe(on_result)
    began = time.perf_counter()
    for t, triples in batches:
        engine.push(triples, t, STREAM)
    engine.close()
    total = time.perf_counter() - began
    per_instant = [b - a for (_, a), (t, b) in zip(stamps, stamps[1:], strict=False) if t > range_s * 1000]
    return per_instant, total, answers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=500, help="stream triples per second")
    parser.add_argument("--range", type=int, default=10, help="window RANGE in seconds")
    parser.add_argument("--seconds", type=int, default=25, help="stream length in seconds")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--queries", nargs="+", choices=sorted(QUERIES), default=sorted(QUERIES))
    args = parser.parse_args(argv)
    batches = stream(args.rate, args.seconds, 7)
    elements = sum(len(b) for _, b in batches)
    modes = ("maintained", "recompute")
    cases = [(n, p, m) for n in args.queries for p in ("RSTREAM", "ISTREAM") for m in modes]
    medians: dict[tuple, list[float]] = {c: [] for c in cases}
    totals: dict[tuple, list[float]] = {c: [] for c in cases}
    answers: dict[tuple, list] = {}
    for _ in range(args.repeat):
        for case in cases:  # round robin
            per_instant, total, got = run(*case, batches, args.range)
            medians[case].append(statistics.median(per_instant))
            totals[case].append(total)
            answers[case] = got
    print(
        f"window about {args.rate * args.range} triples ({args.rate}/s, RANGE {args.range}s STEP 1s), "
        f"{elements} triples, {args.repeat} rounds; medians of per-round figures"
    )
    print(f"{'query':<12} {'policy':<8} {'mode':<10} {'ms/instant':>10} {'µs/triple':>10} {'ratio':>7}")
    status = 0
    for name, policy, mode in cases:
        ms = statistics.median(medians[(name, policy, mode)]) * 1000
        us = statistics.median(totals[(name, policy, mode)]) / elements * 1e6
        base = statistics.median(medians[(name, policy, "maintained")]) * 1000
        ratio = f"{ms / base:7.2f}" if mode == "recompute" else ""
        print(f"{name:<12} {policy:<8} {mode:<10} {ms:10.2f} {us:10.2f} {ratio:>7}")
        if mode == "recompute" and answers[(name, policy, mode)] != answers[(name, policy, "maintained")]:
            print(f"  answers differ: {name} {policy}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
