"""Generated robustness tests, one per command (``rsp run``, ``rsp lars``, ``rsp mtl``, ``rsp explain``):
random bytes, random truncations and random mutations of the valid inputs of examples/, queries/,
ontologies/ and tests/data/mtl (the query or program, the stream, the ontology: one of them per case)
never give a traceback. ``main`` runs in-process and returns 0, 1 or 2; any other code needs a message on
stderr, and an exception escaping ``main`` is a failure (issue 45, item 5; DESIGN.md §9: "No input,
however malformed, gives a traceback").

Marked ``generated``: ``make test`` runs a fixed set of cases (the ``ci`` Hypothesis profile is
derandomised), ``make fuzz`` runs them with fresh seeds (tests/fuzz.py), many more per round.
"""

from __future__ import annotations

import contextlib
import io
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT, TEST_DATA

from rsp.cli import main

pytestmark = pytest.mark.generated

SECONDS = 60
"""A case that runs longer is a failure too (a hang is no answer either)."""


@dataclass(frozen=True)
class Case:
    """A valid command line: ``argv`` with ``{name}`` for each input file, and the files (at most
    ``lines`` lines of each stream: the cases stay fast; a ``graph`` is a file the query names with
    FROM, beside it)."""

    argv: tuple[str, ...]
    files: tuple[tuple[str, str], ...]
    lines: int = 40

    def inputs(self) -> dict[str, bytes]:
        out = {}
        for name, path in self.files:
            data = (ROOT / path).read_bytes()
            if name == "stream":
                data = b"".join(data.splitlines(keepends=True)[: self.lines])
            out[name] = data
        return out


def case(argv: str, lines: int = 40, **files: str) -> Case:
    return Case(tuple(argv.split()), tuple(sorted(files.items())), lines)


MTL = TEST_DATA.relative_to(ROOT) / "mtl"
CASES = {
    "run": [
        case(
            "run {query} --stream {stream} --ontology {ontology} --entailment rdfs --format text --explain",
            query="examples/building/hot-rooms.rq",
            stream="examples/building/temperatures.nt",
            ontology="ontologies/building.ttl",
        ),
        case(
            "run {query} --stream {stream} --ontology {ontology} --entailment owlrl",
            query="examples/commuters/commuters-per-city.rq",
            stream="examples/commuters/stream.nt",
            ontology="ontologies/transport.ttl",
            graph="examples/commuters/network.ttl",
        ),
        case(
            "run {query} --stream {stream} --ontology {ontology} --entailment rdfs --format ntriples",
            query="examples/smart-building/overheating.rq",
            stream="examples/smart-building/detections.nt",
            ontology="ontologies/sensors.ttl",
            graph="examples/smart-building/building.ttl",
        ),
    ],
    "lars": [
        case(
            "lars {program} --stream {stream}",
            program="examples/cooling/cooling.lars",
            stream="examples/cooling/temps.stream",
        ),
        case(
            "lars {program} --stream {stream} --format text",
            program="examples/traffic/short-stops.lars",
            stream="examples/traffic/positions.nt",
        ),
        case(
            "lars {program} --stream {stream} --explain",
            program="examples/caching/caching.lars",
            stream="examples/caching/requests.stream",
        ),
        case(
            "lars {program} --stream {stream} --mode tms --format text",
            lines=20,
            program="examples/content-retrieval/content.lars",
            stream="examples/content-retrieval/requests.stream",
        ),
    ],  # fmt: skip
    "mtl": [
        case(
            "mtl {program} --stream {stream}",
            program=f"{MTL}/short_stop.txt",
            stream=f"{MTL}/monitoring-dataset.txt",
        ),
        case(
            "mtl {program} --stream {stream} --format jsonl --points 0:20",
            program=f"{MTL}/meteor_recursive.txt",
            stream=f"{MTL}/S1-head.txt",
        ),
        case(
            "mtl {program} --stream {stream} --output-predicates ShortStop",
            program=f"{MTL}/short_stop.txt",
            stream=f"{MTL}/S1-head.txt",
        ),
    ],  # fmt: skip
    "explain": [
        case(
            "explain {query} --ontology {ontology} --entailment rdfs",
            query="queries/delayed-trains.rq",
            ontology="ontologies/transport.ttl",
        ),
        case(
            "explain {query} --ontology {ontology} --entailment owlrl",
            query="queries/vehicles-in-region.rq",
            ontology="ontologies/traffic.ttl",
        ),
        case(
            "explain {query} --ontology {ontology} --entailment owlrl",
            query="examples/smart-building/overheating.rq",
            ontology="ontologies/sensors.ttl",
            graph="examples/smart-building/building.ttl",
        ),
    ],
}

# bytes a mutation inserts: the syntax of the inputs, numbers and bytes that are not UTF-8
TOKENS = [b"#", b"# ", b"%", b"(", b")", b"[", b"]", b"{", b"}", b"<", b">", b'"', b"\\", b".", b",", b"\n",
          b"@", b":-", b" not ", b"?x", b"0", b"-1", b"99999999999999999999", b"1e999", b"/0", b"inf", b"nan",
          b"\x00", b"\xff", b"\xc3", b"\xe2\x80\xa8", b"\r", b"\t", b"_:b", b"^^", b"FILTER(", b"COUNT(",
          b"[RANGE 0s STEP 0s]", b"Boxminus[", b"Since[", b"<>", b"[]", b"@T"]  # fmt: skip


@st.composite
def changed(draw, data: bytes) -> bytes:
    """``data`` replaced by random bytes, truncated, or mutated in one to four places."""
    kind = draw(st.sampled_from(["bytes", "truncate", "mutate", "mutate", "mutate"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(out)))
        edit = draw(st.sampled_from(["insert", "delete", "replace", "copy"]))
        if edit == "insert":
            out[at:at] = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=4))
        elif edit == "delete":
            del out[at : at + draw(st.integers(1, 40))]
        elif edit == "replace" and at < len(out):
            out[at] = draw(st.integers(0, 255))
        elif edit == "copy" and out:
            start = draw(st.integers(0, len(out) - 1))
            out[at:at] = out[start : start + draw(st.integers(1, 80))]
    return bytes(out)


@st.composite
def inputs(draw, command: str) -> tuple[Case, str, bytes]:
    """A case of ``command``, which of its files to change and its new bytes."""
    chosen = draw(st.sampled_from(CASES[command]))
    which = draw(st.sampled_from([name for name, _path in chosen.files]))
    return chosen, which, draw(changed(chosen.inputs()[which]))


class _TooLong(Exception):
    pass


def _alarm(_number, _frame) -> None:
    raise _TooLong


def run_case(chosen: Case, which: str, data: bytes) -> tuple[int, str]:
    """Run the command over the changed input; fail on an exception escaping ``main``, another exit code
    than 0, 1 or 2, a failing exit without a message, or a traceback printed."""
    with tempfile.TemporaryDirectory(prefix="rsp-robust-") as folder:
        paths = {}
        for name, content in chosen.inputs().items():
            path = Path(folder) / Path(dict(chosen.files)[name]).name  # FROM <network.ttl> finds its file
            path.write_bytes(data if name == which else content)
            paths[name] = str(path)
        argv = [part.format(**paths) for part in chosen.argv]
        out, err = io.StringIO(), io.StringIO()
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(SECONDS)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exit_:  # argparse
                    code = exit_.code
        except _TooLong:
            pytest.fail(f"rsp {' '.join(argv)} ran longer than {SECONDS} s ({which}: {data[:200]!r})")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        message = err.getvalue()
        assert code in (0, 1, 2), (code, message)
        assert code == 0 or message.strip(), f"exit {code} without a message"
        assert "Traceback" not in message, message
        return code, message


@settings(max_examples=examples(30), deadline=None)
@given(inputs("run"))
def test_generated_rsp_run_never_gives_a_traceback(drawn) -> None:
    run_case(*drawn)


@settings(max_examples=examples(30), deadline=None)
@given(inputs("lars"))
def test_generated_rsp_lars_never_gives_a_traceback(drawn) -> None:
    run_case(*drawn)


@settings(max_examples=examples(30), deadline=None)
@given(inputs("mtl"))
def test_generated_rsp_mtl_never_gives_a_traceback(drawn) -> None:
    run_case(*drawn)


@settings(max_examples=examples(30), deadline=None)
@given(inputs("explain"))
def test_generated_rsp_explain_never_gives_a_traceback(drawn) -> None:
    run_case(*drawn)


def test_every_case_is_valid_before_it_is_changed() -> None:
    """The seeds are valid inputs: each case runs as it is, exit 0 (so that a mutation is what fails)."""
    for command, cases in CASES.items():
        for chosen in cases:
            inputs_ = chosen.inputs()
            first = chosen.files[0][0]
            assert command == chosen.argv[0]
            assert run_case(chosen, first, inputs_[first])[0] == 0, chosen
