"""The examples in examples/: every README's command runs from the repository root and shows results,
and every example's answers equal an independent reference — the owlrl + rdflib re-materialisation
oracle (tests/oracles/query_oracle.py) for queries, the naive LARS evaluator for programs — and are not empty.
The Spark example runs once, through its own script, and must print what ``rsp run`` prints."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import query_oracle
from lars_naive import evaluate
from paths import ROOT

from rsp.background import load_ontology
from rsp.cli import main
from rsp.io.atoms import read_atom_stream
from rsp.io.ntriples import parse_line
from rsp.lars import load
from rsp.query.syntax.parser import parse_query

EXAMPLES = ROOT / "examples"
FOLDERS = sorted(p.name for p in EXAMPLES.iterdir() if (p / "README.md").exists())
SPARK = {"spark-building"}

# what the README command must print: a piece of a real answer, not a header
SHOWS = {
    "building": re.compile(r"ex:r10\d\s+\d+\.\d\s+\d+"),
    "smart-building": re.compile(r"sensors#hasAlert> <http://example.org/sensors#overheatingAlert> \. # \d+"),
    "commuters": re.compile(r"ex:milano\s+[1-9]"),
    "traffic": re.compile(r"shortStop\(tr:\w+,[1-4]\)"),
    "cooling": re.compile(r"\|.*\balarm\b"),
    "caching": re.compile(r"\|.*\bfifo\b"),
    "content-retrieval": re.compile(r"\|.*\bgetFrom\(i\d,\w+,\w+\)"),
    "spark-building": re.compile(r"ex:r10\d\s+\d+\.\d\s+\d+"),
}


# -- the README commands --------------------------------------------------------------------------------


def readme_command(name: str) -> str:
    """The first ```sh block of an example's README, continuation lines joined."""
    text = (EXAMPLES / name / "README.md").read_text()
    match = re.search(r"^```sh\n(.*?)^```", text, re.S | re.M)
    assert match, f"examples/{name}/README.md has no ```sh block"
    return match.group(1).replace("\\\n", " ").strip()


def run_shell(command: str, timeout: float) -> subprocess.CompletedProcess:
    """``command`` in a shell at the repository root, with this interpreter's rsp and python first on PATH."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(
        command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_every_example_is_checked_and_listed() -> None:
    assert set(FOLDERS) == set(SHOWS)
    index = (EXAMPLES / "README.md").read_text()
    for name in FOLDERS:
        command = readme_command(name)
        assert "\n" not in command
        assert f"[{name}]({name})" in index
        assert f"`{' '.join(command.split())}`" in index, f"examples/README.md: the command of {name}"


@pytest.mark.parametrize("name", sorted(set(FOLDERS) - SPARK))
def test_readme_command_runs_and_shows_results(name: str) -> None:
    result = run_shell(readme_command(name), timeout=180)
    assert result.returncode == 0, result.stderr
    assert SHOWS[name].search(result.stdout), result.stdout[:2000]


@pytest.mark.parametrize(
    "generator, output, expected",
    [
        ("traffic/generate.py", "traffic/positions.nt", 596),
        ("commuters/generate.py", "commuters/stream.nt", 123),
        ("smart-building/generate.py", "smart-building/detections.nt", 122),
    ],
)
def test_generators_rebuild_the_bundled_streams(generator: str, output: str, expected: int) -> None:
    """The generators are deterministic: with their defaults they write the bundled file again."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / generator)], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout == (EXAMPLES / output).read_text()
    assert len(result.stdout.splitlines()) == expected


# -- answers of the query examples against the owlrl + rdflib oracle --------------------------------------


def _command_args(name: str, fmt: str) -> list[str]:
    """The README command's arguments after ``rsp``, with the output format replaced by ``fmt``."""
    args = shlex.split(readme_command(name))
    assert args[0] == "rsp"
    args = args[1:]
    at = args.index("--format")
    args[at + 1] = fmt
    return args


def _option(args: list[str], option: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == option]


def _rsp(args: list[str], tmp_path: Path, monkeypatch) -> str:
    monkeypatch.chdir(ROOT)
    output = tmp_path / "out.txt"
    assert main([*args, "--quiet", "--output", str(output)]) == 0
    return output.read_text()


def _elements(path: Path) -> list[tuple[int, tuple[str, str, str]]]:
    out = []
    for line in path.read_text().splitlines():
        triple, comment = parse_line(line)
        out.append((int(comment), triple))
    return out


def _static(query_path: Path, ontologies: list[str]) -> list:
    """The ontologies and the query's FROM graphs (paths relative to the query), as triples."""
    triples = [t for path in ontologies for t in load_ontology(ROOT / path)]
    for graph in re.findall(r"^FROM\s+<([^>]+)>", query_path.read_text(), re.M):
        triples.extend(load_ontology(query_path.parent / graph))
    return triples


def _plain(text: str) -> str:
    """The query without its FROM <graph> lines: the oracle gets those triples as the static graph."""
    return re.sub(r"(?m)^FROM\s+<[^>]+>\s*\n", "", text)


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def _bag(bindings: list[dict]) -> Counter:
    return Counter(tuple(sorted(b.items())) for b in bindings)


def _query_case(name: str, tmp_path: Path, monkeypatch):
    args = _command_args(name, "jsonl")
    assert args[0] == "run"
    query_path = ROOT / args[1]
    (stream,) = _option(args, "--stream")
    (regime,) = _option(args, "--entailment")
    records = _records(_rsp(args, tmp_path, monkeypatch))
    return (
        query_path,
        _elements(ROOT / stream),
        _static(query_path, _option(args, "--ontology")),
        regime,
        records,
    )


@pytest.mark.parametrize("name", ["building", "commuters"])
def test_select_examples_match_rematerialisation(name: str, tmp_path: Path, monkeypatch) -> None:
    query_path, elements, static, regime, records = _query_case(name, tmp_path, monkeypatch)
    text = query_path.read_text()
    query = parse_query(text)
    windows = [(w.name, w.range, w.triples) for w in query.windows]
    step = query.compute_every or min(w.step for w in query.windows)
    reference = query_oracle.run(_plain(text), windows, elements, static, regime, step)
    assert [r["time"] for r in records] == [t for t, _ in reference]
    ordered = "ORDER BY" in text
    for record, (time, expected) in zip(records, reference, strict=True):
        if ordered:
            assert record["bindings"] == expected, f"at {time}"
        else:
            assert _bag(record["bindings"]) == _bag(expected), f"at {time}"
    answered = [r for r in records if r["bindings"]]
    assert len(answered) >= len(records) // 2, "most instants of the example have answers"


def test_smart_building_alerts_match_rematerialisation(tmp_path: Path, monkeypatch) -> None:
    """BOX over 1 s slots, per-slot RDFS, CONSTRUCT, ISTREAM: the block's solutions from the oracle's
    slot-by-slot evaluation, the CONSTRUCT template instantiated by rdflib, then only what is new."""
    query_path, elements, static, regime, records = _query_case("smart-building", tmp_path, monkeypatch)
    text = query_path.read_text()
    query = parse_query(text)
    (window,) = query.windows
    prefixes = "".join(f"{line}\n" for line in re.findall(r"(?m)^PREFIX .*$", text))
    block = re.search(r"BOX\s*\{(.*?)\n  \}", text, re.S).group(1)
    template = re.search(r"CONSTRUCT\s*(\{.*?\})", text, re.S).group(1)
    assert "REGISTER ISTREAM" in text
    slot = window.step  # gcd of RANGE 10s and STEP 1s
    solutions = query_oracle.run_slots(
        f"{prefixes}SELECT * WHERE {{ {block}\n}}",
        window.range,
        slot,
        elements,
        static,
        regime,
        window.step,
        "box",
    )
    previous: set[str] = set()
    expected = []
    for time, rows in solutions:
        graph = set()
        for row in rows:  # the template over one solution: a one-row VALUES
            names = sorted(row)
            construct = (
                f"{prefixes}CONSTRUCT {template} WHERE {{ VALUES ({' '.join('?' + k for k in names)}) "
                f"{{ ({' '.join(row[k] for k in names)}) }} }}"
            )
            graph.update(query_oracle.answer(construct, set(), {}))
        expected.append((time, sorted(graph - previous)))
        previous = graph
    assert [r["time"] for r in records] == [t for t, _ in expected]
    for record, (time, triples) in zip(records, expected, strict=True):
        assert sorted(record["triples"]) == triples, f"at {time}"
    alerts = [t for r in records for t in r["triples"] if "#hasAlert>" in t]
    assert len({a.split()[0] for a in alerts}) >= 2, "alerts for more than one room"
    assert not any("corridor" in t for r in records for t in r["triples"]), "a corridor is not a room"


# -- answers of the LARS examples against the naive evaluator --------------------------------------------


@pytest.mark.parametrize(
    "name, wanted",
    [
        ("traffic", {"shortStop", "stillFor", "still"}),
        ("cooling", {"alarm", "normal", "freeze", "veryHot"}),
        ("caching", {"lfu", "lru", "fifo", "random"}),
    ],
)
def test_lars_examples_match_the_naive_evaluator(name: str, wanted: set, tmp_path: Path, monkeypatch) -> None:
    args = _command_args(name, "jsonl")
    assert args[0] == "lars"
    program, (stream,) = args[1], _option(args, "--stream")
    got = [(r["time"], r["atoms"]) for r in _records(_rsp(args, tmp_path, monkeypatch))]
    reference = evaluate(load(ROOT / program), read_atom_stream(ROOT / stream))
    assert got == reference
    derived = {atom.split("(")[0] for _t, atoms in got for atom in atoms}
    assert wanted <= derived


def test_traffic_short_stops_are_short(tmp_path: Path, monkeypatch) -> None:
    """Every short stop lasted 1–4 s and follows a run of stillFor counts ending in that duration; the
    long stops of the stream (the van, a wait at a red light) are not among them."""
    args = _command_args("traffic", "jsonl")
    got = {r["time"]: r["atoms"] for r in _records(_rsp(args, tmp_path, monkeypatch))}
    stops = [
        (t, m.group(1), int(m.group(2)))
        for t, atoms in got.items()
        for atom in atoms
        if (m := re.fullmatch(r"shortStop\((<[^>]+>),(\d+)\)", atom))
    ]
    assert len(stops) >= 5
    for time, vehicle, duration in stops:
        assert 1 <= duration <= 4
        assert f"stillFor({vehicle},{duration})" in got[time - 1]
        assert f"still({vehicle})" not in got[time]
    longest = max(
        int(m.group(1))
        for atoms in got.values()
        for atom in atoms
        if (m := re.fullmatch(r"stillFor\(<[^>]+#van>,(\d+)\)", atom))
    )
    assert longest >= 5
    assert not any(v.endswith("#van>") and d >= 5 for _t, v, d in stops)


# -- the Spark example -----------------------------------------------------------------------------------


@pytest.mark.spark
def test_spark_example_prints_what_rsp_run_prints(tmp_path: Path, monkeypatch) -> None:
    """One Spark start: the README command (feeder + ``rsp spark`` on a directory, stopped with Ctrl-C)
    prints exactly what ``rsp run`` prints for the building example's query, stream and ontology."""
    result = run_shell(readme_command("spark-building"), timeout=300)
    assert result.returncode == 0, result.stderr
    building = _command_args("building", "text")
    expected = _rsp(building, tmp_path, monkeypatch)
    assert result.stdout == expected
    assert SHOWS["spark-building"].search(result.stdout)
    batches = re.search(r"rsp spark: (\d+) micro-batch\(es\)", result.stderr)
    assert batches and int(batches.group(1)) >= 2, result.stderr  # files came one by one
    assert "0 rejected, 0 late" in result.stderr
