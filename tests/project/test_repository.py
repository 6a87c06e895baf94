"""The repository is self-contained: a clone in any folder, with nothing beside it, has every file its
tests, docs and examples use. No tracked file refers to a path outside the repository (a shared folder
next to it, an absolute path of one machine, ``__file__`` climbing above the root), and the vendored
third-party data says where it comes from and under which licence."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

SCANNED = ("tests", "rsp", "docs", "benchmarks", "examples", "queries", "ontologies", ".ci")
SCANNED_FILES = ("Makefile", "README.md", "pyproject.toml")
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()  # it names the patterns it looks for

OUTSIDE = [
    (re.compile(r"/work/"), "an absolute path of the machine the project was written on"),
    (re.compile(r"\.\./shared\b"), "a folder beside the repository"),
    (re.compile(r"\bshared/csrbench\b"), "the shared CSRBench folder (now tests/data/csrbench)"),
    (re.compile(r"\bROOT\.parent\b"), "the folder that holds the repository"),
]
CLIMB = re.compile(
    r"__file__\)(?:\.resolve\(\))?(?P<parents>(?:\.parent\b)*)(?:\.parents\[(?P<index>\d+)\])?"
)


def _tracked() -> list[str]:
    """The repository's tracked files under the scanned folders (every file there outside a git clone)."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--", *SCANNED, *SCANNED_FILES],
            cwd=ROOT, capture_output=True, check=True,
        )  # fmt: skip
        names = [name for name in done.stdout.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if names:
        return names
    found = [ROOT / name for name in SCANNED_FILES if (ROOT / name).is_file()]
    for folder in SCANNED:
        found.extend(p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [p.relative_to(ROOT).as_posix() for p in found]


def outside_references(path: str, text: str) -> list[str]:
    """``path:line: reason`` for every reference in ``text`` (the file at ``path``, relative to the
    repository root) to a place outside the repository."""
    found = []
    depth = len(Path(path).parts)  # steps from the file up to the root: .parent is one, .parents[i] i + 1
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, reason in OUTSIDE:
            if pattern.search(line):
                found.append(f"{path}:{number}: {reason}: {line.strip()}")
        if path.endswith(".py"):
            for match in CLIMB.finditer(line):
                level = match["parents"].count(".parent")
                if match["index"] is not None:
                    level += int(match["index"]) + 1
                if level > depth:
                    found.append(
                        f"{path}:{number}: __file__ climbs above the repository root: {line.strip()}"
                    )
    return found


def test_the_scanner_finds_each_kind_of_outside_reference() -> None:
    # the sample lines get the outside folder's name at run time: written out here, they would read to
    # any other scanner as this file's own references to a folder beside the repository
    shared = "sha" + "red"
    text = "\n".join(
        [
            f'STREAM = Path("/work/{shared}/csrbench/stream.nt")',
            f'DATA = ROOT.parent / "{shared}"',
            f"see ../{shared}/csrbench/README.md",
            'A = Path(__file__).resolve().parents[2] / "x"',
            'B = Path(__file__).parent.parent.parent / "x"',
            'C = Path(__file__).resolve().parents[1] / "data"',  # the root: fine
            'D = Path(__file__).parent / "data"',  # fine
        ]
    )
    found = outside_references("tests/test_x.py", text)
    assert [hit.split(":")[1] for hit in found] == ["1", "1", "2", "3", "3", "4", "5"]
    assert outside_references("docs/figures/make_figures.py", "R = Path(__file__).resolve().parents[2]") == []
    assert outside_references("docs/figures/make_figures.py", "R = Path(__file__).resolve().parents[3]")


def test_no_tracked_file_refers_to_a_path_outside_the_repository() -> None:
    names = [name for name in _tracked() if name != THIS]
    assert len(names) > 100 and "tests/query/test_csrbench.py" in names and "README.md" in names
    found = []
    for name in names:
        data = (ROOT / name).read_bytes()
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found.extend(outside_references(name, text))
    assert not found, "paths outside the repository:\n" + "\n".join(found)


CSRBENCH = ROOT / "tests" / "data" / "csrbench"


@pytest.mark.parametrize(
    "path",
    ["stream.nt", "README.md"]
    + [f"queries/q{n}.rq" for n in range(1, 8)]
    + [f"expected/q{n}.jsonl" for n in range(1, 8)],
)
def test_the_csrbench_data_is_in_the_repository(path: str) -> None:
    assert (CSRBENCH / path).is_file()
    if ROOT.joinpath(".git").exists():
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", f"tests/data/csrbench/{path}"], cwd=ROOT,
                                 capture_output=True)  # fmt: skip
        assert tracked.returncode == 0, f"tests/data/csrbench/{path} is not tracked by git"


def test_the_csrbench_data_states_its_provenance_and_licence() -> None:
    readme = (CSRBENCH / "README.md").read_text(encoding="utf-8")
    for needed in [
        "**Licence.**",
        "Apache License 2.0",
        "dellaglio/csrbench-oracle",  # the oracle the expected answers were checked against
        "On Correctness in RDF Stream Processor Benchmarking",  # the benchmark's paper
        "SRBench",
        "LinkedSensorData",  # where the triples come from
    ]:
        assert needed in readme, f"tests/data/csrbench/README.md lacks {needed!r}"


def test_test_helpers_are_imported_once() -> None:
    """The helper modules of tests/ (references, generators) hold state (query_oracle registers
    f:timestamp with rdflib): pytest's doctest collection must not import them a second time under
    another name (tests/conftest.py keeps them out of collection)."""
    import query_oracle

    here = Path(query_oracle.__file__).resolve()
    loaded = [
        name
        for name, module in list(sys.modules.items())
        if getattr(module, "__file__", None) and Path(module.__file__).resolve() == here
    ]
    assert loaded == ["query_oracle"]
