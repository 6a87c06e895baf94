"""CityBench's CSV sensor streams as rsp stream files: N-Triples lines ending in their time in ms.

    python benchmarks/citybench/convert.py [--source DIR] [--out DIR] [--seconds N] [--frequency F]
    python benchmarks/citybench/convert.py --slice CHECKOUT    # rebuild the bundled slice from a checkout

The triples are the ones CityBench's C-SPARQL stream classes emit
(``src/org/insight_centre/aceis/io/streams/csparql/CSPARQL*Stream.java``, CityBench/Benchmark at 8884af6):
one observation per payload of the sensor service, its payloads read from SensorRepository.n3 as
``RDFFileManager.extractEventPayloads`` reads them (``<service> ssn:observes ?x . ?x a ?type ;
ssn:isPropertyOf ?foi``), and per observation::

    <obs> rdf:type ssn:Observation ; ssn:observedBy <service> ; ssn:observedProperty ?x ;
          sao:hasValue VALUE .

VALUE is chosen the way the Java classes choose it: by a substring of the payload (``AvgSpeed``,
``VehicleCount``, ``MeasuredTime``, ``EstimatedTime``, ``CongestionLevel`` for traffic; ``Temperature``,
``Humidity``, ``WindSpeed`` for weather), so a payload no test matches (traffic's ``ct:MeasureTime``)
gets no ``hasValue``, as in CityBench. Java doubles become ``xsd:double`` in Java's ``Double.toString``
form and ints ``xsd:long`` (Jena's ``addLiteral``). Congestion is vehicleCount / distance and estimated
time distance / avgSpeed (-1.0 when the divisor is 0), the distance being the report's
``DISTANCE_IN_METERS`` in trafficMetaData.csv. A parking observation's value is totalspaces −
vehiclecount, a pollution observation's the largest of its five indexes (``PollutionObservation.getApi``),
a user location's a blank node with ``ct:hasLatitude`` / ``ct:hasLongitude``.

Two things differ on purpose: CityBench names an observation ``SampleEventService#<obId><random UUID>``;
here the UUID is a name-based one (uuid5 of the stream, the record and the payload), so that a
conversion is reproducible. And time: CityBench stamps a triple with the wall clock when it is sent.
With ``rate=1.0`` (its default, and its published runs) a stream sends one record per ``1/frequency``
seconds from ``startDate`` on, whatever the records' own times; so the record i of a stream (counting
from the first at or after ``--start``) gets the time ``i * 1000 / frequency`` ms. The user location
stream sends every line of its file, in order, the same way.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import io
import math
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUNDLED = HERE / "data"
"""The bundled slice, laid out as a CityBench checkout: ``streams/*.stream``, ``dataset/``."""

SES = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"
LOCATION_FOI = (
    "http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
    "culturalEvents_aarhus#context_do63jk2t8c3bjkfb119ojgkhs7"
)

STREAMS = (
    "AarhusTrafficData182955",
    "AarhusTrafficData158505",
    "AarhusTrafficData186979",
    "AarhusWeatherData0",
    "AarhusParkingDataKALKVAERKSVEJ",
    "AarhusParkingDataSKOLEBAKKEN",
    "AarhusPollutionData201399",
    "AarhusPollutionData184892",
    "AarhusPollutionData197626",
    "UserLocationService",
)
"""The streams CityBench's Q1–Q12 read (both dialects)."""
STATIC = ("SensorRepository.n3", "AarhusCulturalEvents.n3", "AarhusLibraryEvents.n3")
"""The static data the queries read: the sensor repository and the two event graphs."""
START = "2014-08-11T11:00:00"
"""The ``startDate`` of CityBench's sample experiment scripts."""
SLICE_RECORDS = 600
"""Records bundled per stream: 300 s at frequency 2 (what Q12 needs to answer), 600 s at 1."""


def java_double(value: float) -> str:
    """``Double.toString``: plain decimal for 10^-3 <= |x| < 10^7, else ``d.dddE±n``; the shortest digits."""
    from decimal import Decimal

    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    minus = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        plain = format(Decimal(repr(abs(value))).normalize(), "f")
        return minus + (plain if "." in plain else plain + ".0")
    power = len(text) - 1 + int(exponent)
    return f"{minus}{text[0]}.{text[1:] or '0'}E{power}"


def double(value: float) -> str:
    return f'"{java_double(value)}"^^<{XSD}double>'


def long(value: int) -> str:
    return f'"{value}"^^<{XSD}long>'


def _read_text(path: Path) -> str:
    if path.exists():
        return path.read_text(encoding="utf-8")
    with gzip.open(path.with_name(path.name + ".gz"), "rt", encoding="utf-8") as handle:
        return handle.read()


def payloads(
    repository_text: str, services: tuple[str, ...] = STREAMS
) -> dict[str, list[tuple[str, str, str]]]:
    """Each service's payloads ``(type, foi, property)``, as ``extractEventPayloads`` finds them."""
    import rdflib

    graph = rdflib.Graph()
    graph.parse(data=repository_text, format="n3")
    ssn = rdflib.Namespace(SSN)
    found: dict[str, list[tuple[str, str, str]]] = {}
    for name in services:
        service = rdflib.URIRef(SES + name)
        rows = []
        for prop in graph.objects(service, ssn.observes):
            for kind in graph.objects(prop, rdflib.RDF.type):
                for foi in graph.objects(prop, ssn.isPropertyOf):
                    rows.append((str(kind), str(foi), str(prop)))
        found[name] = sorted(rows)
    return found


def _records(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def _time_of(name: str, row: dict[str, str]) -> dt.datetime:
    if name.startswith("AarhusTrafficData") or name.startswith("AarhusWeatherData"):
        return dt.datetime.strptime(row["TIMESTAMP"], "%Y-%m-%dT%H:%M:%S")
    if name.startswith("AarhusParkingData"):
        return dt.datetime.strptime(row["updatetime"][:19], "%Y-%m-%d %H:%M:%S")
    return dt.datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")


def _node(name: str, index: int, payload: str, ob_id: str) -> str:
    tag = uuid.uuid5(uuid.NAMESPACE_URL, f"{name}/{index}/{payload}")
    return f"<{SES}{ob_id}{tag}>"


def _observation(node: str, service: str, prop: str, value: str | None) -> list[str]:
    lines = [
        f"{node} <{RDF_TYPE}> <{SSN}Observation> .",
        f"{node} <{SSN}observedBy> <{SES}{service}> .",
        f"{node} <{SSN}observedProperty> <{prop}> .",
    ]
    if value is not None:
        lines.append(f"{node} <{SAO}hasValue> {value} .")
    return lines


def _traffic(name: str, row: dict[str, str], distance: float, loads, index: int) -> list[str]:
    speed = float(row["avgSpeed"])
    count = float(row["vehicleCount"])
    measured = float(row["avgMeasuredTime"])
    estimated = distance / speed if speed != 0 else -1.0
    congestion = count / distance if distance != 0 else -1.0
    ob_id = "AarhusTrafficObservation-" + row["_id"]
    lines: list[str] = []
    for kind, foi, prop in loads:
        text = f"{kind}|{foi}|{prop}"
        value = None
        if "AvgSpeed" in text:
            value = double(speed)
        elif "VehicleCount" in text:
            value = double(count)
        elif "MeasuredTime" in text:
            value = double(measured)
        elif "EstimatedTime" in text:
            value = double(estimated)
        elif "CongestionLevel" in text:
            value = double(congestion)
        lines += _observation(_node(name, index, text, ob_id), name, prop, value)
    return lines


def _weather(name: str, row: dict[str, str], loads, index: int) -> list[str]:
    lines: list[str] = []
    for kind, foi, prop in loads:
        text = f"{kind}|{foi}|{prop}"
        value = None
        if "Temperature" in text:
            value = double(float(row["tempm"]))
        elif "Humidity" in text:
            value = long(int(row["hum"]))
        elif "WindSpeed" in text:
            value = double(float(row["wspdm"]))
        lines += _observation(_node(name, index, text, "AarhusWeatherObservation-0"), name, prop, value)
    return lines


def _parking(name: str, row: dict[str, str], loads, index: int) -> list[str]:
    vacancies = int(row["totalspaces"]) - int(row["vehiclecount"])
    text = "|".join(loads[0])
    node = _node(name, index, text, "AarhusParkingObservation-" + row["_id"])
    return _observation(node, name, loads[0][2], long(vacancies))


def _pollution(name: str, row: dict[str, str], loads, index: int) -> list[str]:
    indexes = [
        int(row[k])
        for k in ("ozone", "particullate_matter", "carbon_monoxide", "sulfure_dioxide", "nitrogen_dioxide")
    ]
    lines: list[str] = []
    for kind, foi, prop in loads:
        text = f"{kind}|{foi}|{prop}"
        node = _node(name, index, text, "AarhusPollutionObservation-0")
        lines += _observation(node, name, prop, long(max(indexes)))
    return lines


def _location(name: str, line: str, loads, index: int) -> list[str]:
    _user, coordinates = line.split("|")
    lat, lon = (float(x) for x in coordinates.split(","))
    text = "|".join(loads[0])
    node = _node(name, index, text, "UserLocationObservation-0")
    point = f"_:loc{index}"
    return [
        f"{node} <{RDF_TYPE}> <{SSN}Observation> .",
        f"{point} <{CT}hasLatitude> {double(lat)} .",
        f"{point} <{CT}hasLongitude> {double(lon)} .",
        f"{node} <{SSN}observedProperty> <{loads[0][2]}> .",
        f"{node} <{SSN}observedBy> <{SES}{name}> .",
        f"{node} <{SSN}featureOfInterest> <{LOCATION_FOI}> .",
        f"{node} <{SAO}hasValue> {point} .",
    ]


def _distances(source: Path) -> dict[str, float]:
    with (source / "dataset" / "MetaData" / "trafficMetaData.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        return {row["REPORT_ID"]: float(int(row["DISTANCE_IN_METERS"])) for row in csv.DictReader(handle)}


def selected(source: Path, name: str, start: str = START) -> Iterator[tuple[int, str | dict[str, str]]]:
    """The records a stream sends, in order, numbered from 0: CSV rows at or after ``start``, or the
    location file's lines."""
    path = source / "streams" / f"{name}.stream"
    if name == "UserLocationService":
        lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        yield from enumerate(lines)
        return
    begin = dt.datetime.strptime(start, "%Y-%m-%dT%H:%M:%S")
    header, rows = _records(path)
    index = 0
    for values in rows:
        row = dict(zip(header, values, strict=False))
        if _time_of(name, row) < begin:
            continue
        yield index, row
        index += 1


def convert_stream(
    source: Path, name: str, loads, *, seconds: float, frequency: float = 1.0, start: str = START
) -> Iterator[tuple[int, list[str]]]:
    """``(time in ms, N-Triples lines)`` per record the stream sends in its first ``seconds``."""
    period = 1000.0 / frequency
    distance = 0.0
    if name.startswith("AarhusTrafficData"):
        distance = _distances(source)[name.removeprefix("AarhusTrafficData")]
    for index, record in selected(source, name, start):
        time = int(index * period)
        if time >= seconds * 1000:
            return
        if name.startswith("AarhusTrafficData"):
            if index >= 999:  # CSPARQLAarhusTrafficStream stops sending after 999 records
                return
            yield time, _traffic(name, record, distance, loads, index)
        elif name.startswith("AarhusWeatherData"):
            yield time, _weather(name, record, loads, index)
        elif name.startswith("AarhusParkingData"):
            yield time, _parking(name, record, loads, index)
        elif name.startswith("AarhusPollutionData"):
            yield time, _pollution(name, record, loads, index)
        else:
            yield time, _location(name, record, loads, index)


def convert(
    source: Path = BUNDLED,
    out: Path | None = None,
    *,
    seconds: float = 300,
    frequency: float | dict[str, float] = 1.0,
    start: str = START,
    streams: tuple[str, ...] = STREAMS,
) -> dict[str, Path]:
    """Write ``OUT/<stream>.nt`` for each stream and the static graphs ``OUT/<name>.n3``; returns the
    paths by stream name and static file name. ``frequency`` may differ per stream (a dict)."""
    out = out or HERE / "work"
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for static in STATIC:
        target = out / static
        target.write_text(_read_text(source / "dataset" / static), encoding="utf-8")
        written[static] = target
    loads = payloads((out / "SensorRepository.n3").read_text(encoding="utf-8"), streams)
    for name in streams:
        rate = frequency.get(name, 1.0) if isinstance(frequency, dict) else frequency
        buffer = io.StringIO()
        for time, lines in convert_stream(
            source, name, loads[name], seconds=seconds, frequency=rate, start=start
        ):
            for line in lines:
                buffer.write(f"{line} # {time}\n")
        target = out / f"{name}.nt"
        target.write_text(buffer.getvalue(), encoding="utf-8")
        written[name] = target
    return written


def make_slice(checkout: Path, records: int = SLICE_RECORDS, start: str = START) -> None:
    """Rebuild the bundled slice (``data/``) from a CityBench checkout: per stream, the header and the
    first ``records`` records at or after ``start``; the static data gzipped; the traffic metadata of the
    three traffic reports the queries read."""
    (BUNDLED / "streams").mkdir(parents=True, exist_ok=True)
    (BUNDLED / "dataset" / "MetaData").mkdir(parents=True, exist_ok=True)
    for name in STREAMS:
        source = checkout / "streams" / f"{name}.stream"
        target = BUNDLED / "streams" / f"{name}.stream"
        if name == "UserLocationService":
            target.write_bytes(source.read_bytes())
            continue
        begin = dt.datetime.strptime(start, "%Y-%m-%dT%H:%M:%S")
        text = source.read_text(encoding="utf-8").splitlines(keepends=True)
        header = next(csv.reader([text[0]]))
        kept = [text[0]]
        for line in text[1:]:
            row = dict(zip(header, next(csv.reader([line])), strict=False))
            if _time_of(name, row) >= begin:
                kept.append(line)
            if len(kept) > records:
                break
        target.write_text("".join(kept), encoding="utf-8")
    for static in STATIC:
        data = (checkout / "dataset" / static).read_bytes()
        with gzip.GzipFile(BUNDLED / "dataset" / f"{static}.gz", "wb", compresslevel=9, mtime=0) as handle:
            handle.write(data)
    reports = {
        name.removeprefix("AarhusTrafficData") for name in STREAMS if name.startswith("AarhusTrafficData")
    }
    lines = (
        (checkout / "dataset" / "MetaData" / "trafficMetaData.csv").read_text(encoding="utf-8").splitlines()
    )
    header = next(csv.reader([lines[0]]))
    column = header.index("REPORT_ID")
    kept = [lines[0]] + [x for x in lines[1:] if next(csv.reader([x]))[column] in reports]
    (BUNDLED / "dataset" / "MetaData" / "trafficMetaData.csv").write_text(
        "\n".join(kept) + "\n", encoding="utf-8"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source", type=Path, default=BUNDLED, help="a CityBench checkout (default: the bundled slice)"
    )
    parser.add_argument(
        "--out", type=Path, default=HERE / "work", help="where to write (default: citybench/work)"
    )
    parser.add_argument("--seconds", type=float, default=300, help="stream seconds to convert (default 300)")
    parser.add_argument(
        "--frequency", type=float, default=1.0, help="records per second per stream (CityBench's)"
    )
    parser.add_argument("--start", default=START, help=f"CityBench's startDate (default {START})")
    parser.add_argument(
        "--slice", type=Path, metavar="CHECKOUT", help="rebuild the bundled slice from a checkout"
    )
    args = parser.parse_args(argv)
    if args.slice:
        make_slice(args.slice, start=args.start)
        print(f"bundled slice rebuilt in {BUNDLED}")
        return 0
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", args.start):
        parser.error(f"--start {args.start}: expected yyyy-MM-ddTHH:mm:ss")
    written = convert(args.source, args.out, seconds=args.seconds, frequency=args.frequency, start=args.start)
    for name, path in written.items():
        count = sum(1 for _ in path.open(encoding="utf-8"))
        print(f"{name}: {count} lines -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
