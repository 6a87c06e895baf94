"""The docs say what is so (issue 45, item 14): every file a command in a doc names is in the repository,
every page a doc cites exists, every output a doc shows under a command is what rsp prints now (an
excerpt's lines in order, ``…`` standing for the lines left out), docs/cli.md counts and lists every
command, examples/README.md lists every example, and docs/comparison.md describes the rsp that ships."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

from rsp.cli import build_parser

PAGES = sorted(
    {
        ROOT / "README.md",
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("queries/README.md"),
        *ROOT.glob("examples/**/README.md"),
        *ROOT.glob("benchmarks/README.md"),
        *ROOT.glob("tests/**/README.md"),
    }
)
BLOCK = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```\n", re.S | re.M)
EXAMPLE = re.compile(r"<!-- example: (?P<command>.+?) -->")
COMMAND_START = re.compile(r"^(?:\$ )?(?P<command>(?:rsp|python3?|\.venv/bin/python|\.venv/bin/rsp) .*)$")
SPAN = re.compile(r"(?<!`)`((?:rsp|python3?|\.venv/bin/python) [^`]+)`(?!`)")
INDENTED = re.compile(r"^(?: {4}|\t)((?:rsp|python3?|\.venv/bin/python) .*)$", re.M)
SUFFIXES = {".rq", ".lars", ".nt", ".ttl", ".stream", ".txt", ".mtl", ".py", ".ipynb", ".json", ".md", ".owl"}


def rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else str(page)


def commands_in(text: str) -> list[str]:
    """The commands a page shows: lines of its code blocks (continuation lines joined), code spans and
    example markers that start with ``rsp``, ``python`` or ``.venv/bin/…``."""
    found = [m["command"] for m in EXAMPLE.finditer(text)]
    outside = BLOCK.sub("", text)
    found += [m[1] for m in SPAN.finditer(outside)]
    found += [m[1] for m in INDENTED.finditer(outside)]
    for block in BLOCK.finditer(text):
        if block["lang"] not in ("", "sh", "console", "bash", "shell"):
            continue
        for line in re.sub(r"\\\n\s*", " ", block["body"]).splitlines():
            match = COMMAND_START.match(line.strip())
            if match:
                found.append(match["command"].split("  #")[0].split(" # ")[0])
    return found


def named_files(command: str) -> list[str]:
    """The repository paths a command names: its words (or the FILE of ``IRI=FILE``) that hold a ``/``
    or end in a known suffix, except placeholders (``PROGRAM.lars``, ``FILE``, ``…``) and URLs."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    paths = []
    for word in words[1:]:
        if word.startswith("-") or "://" in word and "=" not in word:
            continue
        word = word.rpartition("=")[2] if "=" in word else word
        if not word or "://" in word or any(c in word for c in "…*<>$|{}[]'\"()"):
            continue
        stem = Path(word).stem
        if stem.isupper() or stem.upper() == stem.replace("-", "_").upper() and stem[:1].isupper():
            continue  # a placeholder: PROGRAM.lars, QUERY.rq
        if "/" in word or Path(word).suffix in SUFFIXES:
            paths.append(word)
    return paths


def page_commands() -> list[tuple[str, str]]:
    return [
        (rel(page), command) for page in PAGES for command in commands_in(page.read_text(encoding="utf-8"))
    ]


def test_the_pages_show_commands() -> None:
    pages = {page for page, _command in page_commands()}
    assert {"README.md", "docs/cli.md", "queries/README.md", "examples/README.md"} <= pages


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_file_a_command_names_is_in_the_repository(page: Path) -> None:
    """A command a user copies from a doc and runs finds its files. A command is taken as runnable when
    it names a file of the repository (from the root, or from the page's folder); a sketch that names
    none (``rsp run a.rq b.rq``) is not. Files the command writes (``-o``, ``--output``, ``--reject``),
    folders it reads or fills as they come (``incoming/``: Spark sources, sinks, checkpoints) and
    absolute paths are not looked for."""
    missing = []
    for command in commands_in(page.read_text(encoding="utf-8")):
        written = set()
        words = command.split()
        for option, value in zip(words, words[1:], strict=False):
            if option in ("-o", "--output", "--reject", "--sink", "--checkpoint", ">"):
                written.add(value)
        paths = [p for p in named_files(command) if p not in written and not p.endswith("/") and p[0] != "/"]
        found = [p for p in paths if (ROOT / p).exists() or (page.parent / p).exists()]
        if not any("/" in p for p in found):
            continue  # a sketch
        missing += [f"{p} (in `{command}`)" for p in paths if p not in found]
    assert not missing, f"{rel(page)} names files the repository does not have: {missing}"


def test_the_file_check_finds_a_missing_file() -> None:
    assert named_files("rsp run queries/vehicles-in-region.rq --stream positions.nt --ontology x/y.ttl") == [
        "queries/vehicles-in-region.rq",
        "positions.nt",
        "x/y.ttl",
    ]
    assert named_files("rsp lars PROGRAM.lars --stream FILE --format jsonl") == []
    assert named_files("rsp spark q.rq --stream http://ex.org/s=stream.nt") == ["q.rq", "stream.nt"]


def test_the_file_check_takes_a_command_with_a_repository_file_as_runnable(tmp_path, monkeypatch) -> None:
    """queries/README.md used to show ``rsp run queries/vehicles-in-region.rq --stream positions.nt``:
    a runnable command (it names a file of the repository) with a file that did not ship."""
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\nrsp run queries/vehicles-in-region.rq --stream nowhere.nt\nrsp run a.rq b.rq\n```\n"
    )
    with pytest.raises(AssertionError, match=r"nowhere\.nt \(in `rsp run queries/vehicles-in-region.rq"):
        test_every_file_a_command_names_is_in_the_repository(page)
    page.write_text("```sh\nrsp run a.rq --stream nowhere.nt\n```\n")
    test_every_file_a_command_names_is_in_the_repository(page)


MENTIONED_PAGE = re.compile(r"(?<![\w./-])(?P<name>[\w./-]+\.md)\b")


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_page_a_doc_cites_exists(page: Path) -> None:
    """``DESIGN.md``, ``docs/lars.md``, ``README.md`` … named in a page's text are files of the
    repository (relative to the page or to the root); the other projects' files that
    docs/comparison.md's Sources name, with their repository and commit, are not ours."""
    text = page.read_text(encoding="utf-8")
    if page.name == "comparison.md":
        text = text.split("\n## Sources", 1)[0]
    missing = sorted(
        {
            m["name"]
            for m in MENTIONED_PAGE.finditer(text)
            if not (page.parent / m["name"]).exists() and not (ROOT / m["name"]).exists()
        }
    )
    assert not missing, f"{rel(page)} cites pages the repository does not have: {missing}"


# -- outputs shown under a command ---------------------------------------------------------------------


def shown_outputs() -> list[tuple[str, str, str]]:
    """(page, command, output shown) for every code block of output that follows a block holding one
    ``rsp`` command, or a console block that starts with ``$ rsp`` (example markers are checked by
    docs/render_examples.py and tests/project/test_docs.py)."""
    found = []
    for page in PAGES:
        text = EXAMPLE.sub(
            "", re.sub(r"<!-- example: .*?<!-- end example -->", "", page.read_text("utf-8"), flags=re.S)
        )
        blocks = list(BLOCK.finditer(text))
        for block in blocks:
            lines = block["body"].splitlines()
            if lines and lines[0].startswith("$ rsp "):
                found.append((rel(page), lines[0][2:], "\n".join(lines[1:])))
        for first, second in zip(blocks, blocks[1:], strict=False):
            if text[first.end() : second.start()].strip() or second["lang"] not in ("", "console", "text"):
                continue
            commands = [c for c in commands_in(first.group(0)) if c.startswith("rsp ")]
            if first["lang"] == "sh" and len(commands) == 1:
                found.append((rel(page), commands[0], second["body"].rstrip("\n")))
    return found


def run_rsp(command: str) -> str:
    words = shlex.split(command)
    env = dict(os.environ, PYTHONHASHSEED="0", RSP_CACHE_DIR="", COLUMNS="100")
    done = subprocess.run(
        [sys.executable, "-m", "rsp", *words[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (command, done.stderr)
    return done.stdout


def is_excerpt(shown: str, printed: str) -> bool:
    """``shown`` is ``printed``, or (with ``…`` lines) its lines in order with the ``…`` lines standing
    for any lines between: the first shown line is the first printed and the last the last, unless a
    ``…`` comes before or after them."""
    shown_lines = [line.rstrip() for line in shown.splitlines()]
    printed_lines = [line.rstrip() for line in printed.rstrip("\n").splitlines()]
    if "…" not in [line.strip() for line in shown_lines]:
        return shown_lines == printed_lines
    pattern = []
    for line in shown_lines:
        pattern.append(r"(?:.*\n)*?" if line.strip() == "…" else re.escape(line) + r"\n")
    return re.fullmatch("".join(pattern), "\n".join(printed_lines) + "\n") is not None


def test_the_excerpt_check() -> None:
    printed = "a\nb\nc\nd\n"
    assert (
        is_excerpt("a\n…\nd", printed)
        and is_excerpt("a\nb\nc\nd", printed)
        and is_excerpt("…\nc\n…", printed)
    )
    assert not is_excerpt("a\n…\nb\nd", "a\nc\nd\n") and not is_excerpt("a\nb", printed)
    assert not is_excerpt("b\n…", printed) and not is_excerpt("…\nc", printed)


SHOWN = shown_outputs()


def test_outputs_under_commands_are_found() -> None:
    pages = {page for page, _command, _shown in SHOWN}
    assert {"examples/caching/README.md", "examples/traffic/README.md", "docs/lars.md"} <= pages


@pytest.mark.parametrize("page, command, shown", SHOWN, ids=[f"{p}:{c[:50]}" for p, c, _ in SHOWN])
def test_an_output_a_doc_shows_is_what_rsp_prints(page: str, command: str, shown: str) -> None:
    printed = run_rsp(command)
    assert is_excerpt(shown, printed), f"{page}: `{command}` prints\n{printed}"


# -- the pages that list commands and examples ---------------------------------------------------------

NUMBERS = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def test_the_cli_page_counts_and_lists_every_command() -> None:
    commands = sorted(build_parser().commands)
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    count = re.search(r"`rsp COMMAND …` with (\w+) commands", cli)
    assert count and count.group(1) == NUMBERS[len(commands)], count and count.group(0)
    table = cli.split("| command | does |", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"\[`rsp (\w+)`\]\(#rsp-\1\)", table)
    assert sorted(listed) == commands


def test_the_readme_shows_the_query_the_demo_runs() -> None:
    """README's query block is a copy of the query file ``make demo`` runs (kept by
    docs/render_examples.py, checked by tests/project/test_docs.py)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    queries = re.findall(r"\brsp run (\S+\.rq)", demo)
    assert queries, demo
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for query in queries:
        assert f"<!-- file: {query} -->" in readme, query


def test_examples_readme_lists_every_example() -> None:
    readme = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    folders = sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir() and p.name != "__pycache__")
    listed = re.findall(r"^\| \[([\w-]+)\]\(\1\) \|", readme, re.M)
    assert sorted(listed) == folders


def test_the_comparison_describes_what_rsp_has() -> None:
    """Each command of rsp is in the comparison page, with the page that documents it; answer sets are
    claimed (rsp lars --models) and not denied."""
    comparison = (ROOT / "docs" / "comparison.md").read_text(encoding="utf-8").split("\n## Sources", 1)[0]
    for page in ("mtl.md", "serve.md", "answer-streams.md", "spark.md", "lars.md", "reference.md"):
        assert f"]({page}" in comparison, page
    for command in ("rsp mtl", "rsp serve", "rsp lars --models"):
        assert command in comparison, command
    assert "does not do Ticker's answer-set semantics" not in comparison
    assert "| multiple models / non-determinism | no" not in comparison


def test_the_content_retrieval_readme_says_what_clingo_prints() -> None:
    """examples/content-retrieval said ``--mode clingo`` computes the same as mode tms; it prints
    another answer where there are several (mode tms keeps its choices)."""
    base = (
        "rsp lars examples/content-retrieval/content.lars --stream examples/content-retrieval/requests.stream"
    )
    tms, clingo = run_rsp(f"{base} --mode tms"), run_rsp(f"{base} --mode clingo")
    assert tms != clingo and len(tms.splitlines()) == len(clingo.splitlines())
    readme = (ROOT / "examples" / "content-retrieval" / "README.md").read_text(encoding="utf-8")
    assert "computes the same" not in readme
    assert "another one than mode tms's" in readme
