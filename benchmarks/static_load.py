"""How fast a static graph loads (issue 44, item 2): triples/s per format, rsp's loader against rdflib.

    python benchmarks/static_load.py [--triples N] [--file FILE] [--repeat K]

A CityBench-like sensor repository of ``--triples`` triples (sensors, their observed properties, features
of interest with coordinates and labels; 74,000 as CityBench's SensorRepository by default) is written
once as N-Triples, then converted by rdflib to Turtle, N3 and RDF/XML (or ``--file`` is read in its own
format). For each format the table gives triples/s of:

* ``rsp``: :func:`rsp.background.load_ontology`, what ``--ontology`` and ``FROM <g>`` run (pyoxigraph's
  parser, rsp's terms made from its triples);
* ``pyoxigraph``: its parser alone, every triple taken (the ceiling);
* ``rdflib``: ``rdflib.Graph().parse`` (what rsp used before), every triple taken.

Best of ``--repeat`` in one process; printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyoxigraph  # noqa: E402
import rdflib  # noqa: E402

from rsp.background import load_ontology  # noqa: E402
from rsp.background.ontology import FORMATS  # noqa: E402

NS = "http://www.insight-centre.org/dataset/SampleEventService#"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
GEO = "http://www.w3.org/2003/01/geo/wgs84_pos#"
DOUBLE = "<http://www.w3.org/2001/XMLSchema#double>"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
OXIGRAPH = {
    "turtle": pyoxigraph.RdfFormat.TURTLE,
    "nt": pyoxigraph.RdfFormat.N_TRIPLES,
    "n3": pyoxigraph.RdfFormat.N3,
    "xml": pyoxigraph.RdfFormat.RDF_XML,
}
EXTENSION = {"nt": ".nt", "turtle": ".ttl", "n3": ".n3", "xml": ".rdf"}


def sensor_repository(triples: int) -> str:
    """N-Triples text of about ``triples`` triples, 12 per sensor (deterministic)."""
    lines = []
    for i in range(max(1, triples // 12)):
        sensor, feature = f"<{NS}Sensor{i}>", f"<{NS}FoI-{i}>"
        lines += [
            f"{sensor} {TYPE} <{SSN}Sensor> .",
            f'{sensor} {LABEL} "sensor {i}"@en .',
            f"{feature} {TYPE} <{SSN}FeatureOfInterest> .",
            f'{feature} <{GEO}lat> "{56 + (i % 997) / 1000:.3f}"^^{DOUBLE} .',
            f'{feature} <{GEO}long> "{10 + (i % 991) / 1000:.3f}"^^{DOUBLE} .',
            f'{feature} {LABEL} "feature \\"{i}\\""@en .',
        ]
        for kind in ("a", "b", "c"):
            prop = f"<{NS}Property-{i}-{kind}>"
            lines += [f"{sensor} <{SSN}observes> {prop} .", f"{prop} <{SSN}isPropertyOf> {feature} ."]
    return "\n".join(lines) + "\n"


def best(repeat: int, read) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = read()
        times.append(time.perf_counter() - start)
    return min(times), count


def rdflib_count(path: Path, fmt: str) -> int:
    return len(rdflib.Graph().parse(str(path), format=fmt))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=int, default=74_000)
    parser.add_argument("--file", type=Path, help="read this file (its format from its extension) instead")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        if args.file is not None:
            files = {FORMATS[args.file.suffix.lower()]: args.file}
        else:
            source = Path(folder) / "repository.nt"
            source.write_text(sensor_repository(args.triples), encoding="utf-8")
            graph = rdflib.Graph().parse(str(source), format="nt")
            files = {"nt": source}
            for fmt in ("turtle", "n3", "xml"):
                files[fmt] = Path(folder) / f"repository{EXTENSION[fmt]}"
                graph.serialize(str(files[fmt]), format=fmt, encoding="utf-8")
        print(f"{'format':8} {'triples':>8} {'rsp':>14} {'pyoxigraph':>14} {'rdflib':>14}   (triples/s)")
        for fmt, path in files.items():
            ours, count = best(args.repeat, lambda p=path: len(load_ontology(p)))
            row = [f"{count / ours:>14,.0f}"]
            if fmt in OXIGRAPH:
                parse, _ = best(
                    args.repeat,
                    lambda p=path, f=fmt: sum(1 for _ in pyoxigraph.parse(path=str(p), format=OXIGRAPH[f])),
                )
                row.append(f"{count / parse:>14,.0f}")
            else:
                row.append(f"{'-':>14}")
            slow, _ = best(1, lambda p=path, f=fmt: rdflib_count(p, f))
            row.append(f"{count / slow:>14,.0f}")
            print(f"{fmt:8} {count:>8} {' '.join(row)}   rsp: {ours:.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
