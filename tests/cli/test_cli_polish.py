"""The command line for people: every example shown by ``--help`` runs, ``--format text`` tables with
prefixed names and colour only on a terminal, progress on stderr, and errors as ``file:line:col: message``
that say what to do (exit code 2, no traceback)."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

from rsp.cli import Progress, build_parser, main

BUILDING = ROOT / "examples" / "building"


def help_texts() -> dict[str, str]:
    parser = build_parser()
    texts = {"rsp": parser.format_help()}
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, subparser in sub.choices.items():
        texts[name] = subparser.format_help()
    return texts


def help_examples() -> list[tuple[str, str]]:
    """Every ``rsp …`` command line shown in a help text (continuation lines joined), except Spark's,
    which needs a Spark session and a source directory (tests/spark/test_spark.py runs Spark), and the
    service's, which runs until stopped (tests/serve/test_serve.py starts it)."""
    found = []
    for where, text in help_texts().items():
        joined = re.sub(r"\\\n\s*", " ", text)
        for line in joined.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("rsp ") and not line.startswith(("rsp spark", "rsp serve")) and "COMMAND" not in line:
                found.append((where, line))
    return found


def test_every_help_text_shows_an_example() -> None:
    for where, text in help_texts().items():
        assert re.search(r"^examples?:$", text, re.MULTILINE), where
        assert re.search(r"^  rsp ", text, re.MULTILINE), where


@pytest.mark.parametrize("where, command", help_examples())
def test_help_examples_run_from_the_repository_root(monkeypatch, capsys, where: str, command: str) -> None:
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[1:]
    assert main(argv) == 0, (where, command, capsys.readouterr().err)
    assert capsys.readouterr().out


# -- text tables ---------------------------------------------------------------------------------------


def test_text_table_uses_the_query_prefixes_and_no_colour_in_a_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    code = main(
        [
            "run", str(BUILDING / "hot-rooms.rq"), "--stream", str(BUILDING / "temperatures.nt"),
            "--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs",
            "--format", "text", "-o", str(target),
        ]
    )  # fmt: skip
    text = target.read_text()
    assert code == 0 and "\033[" not in text
    assert (
        "HotRooms @ 15000 ms: 1 solution\n"
        "  room     max   readings\n"
        "  -------  ----  --------\n"
        "  ex:r102  30.8  4\n"
    ) in text


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch) -> None:
    from rsp.io.results import AskResult, make_writer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = Terminal()
    make_writer("text", terminal, prefixes={}).write(AskResult("Q", 1000, True))
    assert "\033[1m" in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = Terminal()
    make_writer("text", terminal, prefixes={}).write(AskResult("Q", 1000, True))
    assert "\033[" not in terminal.getvalue()


def test_prefixed_names_and_turtle_numbers() -> None:
    from rsp.io.results import SelectResult, make_writer

    out = io.StringIO()
    writer = make_writer("text", out, prefixes={"ex": "http://ex.org/", "": "http://base.org/"})
    rows = [
        {"x": "<http://ex.org/a>", "n": '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'},
        {"x": "<http://base.org/b>", "n": '"7.5"^^<http://www.w3.org/2001/XMLSchema#float>'},
        {"x": "<http://ex.org/a/b#c>", "n": '"hi"@en'},
    ]
    writer.write(SelectResult("Q", 2000, ("x", "n"), rows))
    assert out.getvalue() == (
        "Q @ 2000 ms: 3 solutions\n"
        "  x                      n\n"
        "  ---------------------  ----------------\n"
        "  ex:a                   7\n"
        '  :b                     "7.5"^^xsd:float\n'
        '  <http://ex.org/a/b#c>  "hi"@en\n'
        "\n"
    )


# -- progress ------------------------------------------------------------------------------------------


def test_progress_on_stderr_when_forced_and_silent_when_quiet(monkeypatch, capsys) -> None:
    monkeypatch.setenv("RSP_PROGRESS", "1")
    monkeypatch.setenv("RSP_PROGRESS_INTERVAL", "0")
    args = ["run", str(BUILDING / "hot-rooms.rq"), "--stream", str(BUILDING / "temperatures.nt")]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("rsp: 1 instant done (at 5000 ms), ")
    assert err[-1].startswith("rsp: 8 instants done (at 40000 ms), 320 triples, ")
    assert all(line.endswith(" triples/s") for line in err)
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    lars = ["lars", "examples/cooling/cooling.lars", "--stream", "examples/cooling/temps.stream"]
    monkeypatch.chdir(ROOT)
    assert main([*lars, "--format", "count"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("rsp: 20 time points done (at 19), 20 atoms, ")
    assert main([*lars, "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_progress_is_throttled_and_off_when_not_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("RSP_PROGRESS", raising=False)
    stream = io.StringIO()
    progress = Progress(False, "instant", "triples", stream=stream)
    assert not progress.enabled  # not a terminal, not forced
    monkeypatch.setenv("RSP_PROGRESS", "1")
    progress = Progress(False, "instant", "triples", stream=stream)
    for k in range(1000):
        progress.update(k, k)
    assert stream.getvalue().count("\n") <= 1  # at most one line per 0.5 s
    assert progress.done == 1000


# -- errors ----------------------------------------------------------------------------------------------


QUERY = "REGISTER QUERY Q AS\nSELECT ?x\nFROM STREAM <http://s> [RANGE 1s STEP 1s]\nWHERE { %s }\n"


@pytest.mark.parametrize(
    "body, where, message",
    [
        ("?x ex:p ?y", ":4:12: ", "undeclared prefix 'ex:' (declare it with PREFIX ex: <…>)"),
        ("?x <http://p> ?y", ":4:", "expected"),
        ("?x <http://p> ?y FILTER(foo(?y))", ":4:33: ", "unknown function foo"),
        ("SERVICE <http://x> { ?x <http://p> ?y }", ":4:9: ", "load the data with FROM <file> or --ontology"),
        ("GRAPH ?g { ?x <http://p> ?y }", ":4:9: ", "ranges over the named graphs, but the query declares none"),
    ],
)
def test_query_errors_say_where_and_what_to_do(
    capsys, tmp_path: Path, body: str, where: str, message: str
) -> None:
    query = tmp_path / "q.rq"
    text = QUERY % body
    query.write_text(text if body != "?x <http://p> ?y" else text.replace("}", ""))
    stream = tmp_path / "s.nt"
    stream.write_text("<http://a> <http://p> <http://b> . # 0\n")
    code = main(["run", str(query), "--stream", str(stream)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"{query}{where}") and message in err, err
    assert "Traceback" not in err


def test_file_errors_name_the_file_and_the_option(capsys, tmp_path: Path) -> None:
    query = tmp_path / "q.rq"
    query.write_text(QUERY % "?x <http://p> ?y")
    stream = tmp_path / "s.nt"
    stream.write_text("<http://a> <http://p> <http://b> . # 0\n<http://a> <http://p> . # 5\n")
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://e/> .\nex:a ex:b .\n")
    cases = [
        (["run", str(tmp_path / "none.rq"), "--stream", str(stream)], f"{tmp_path / 'none.rq'}: no such query file"),
        (["run", str(query), "--stream", str(tmp_path / "none.nt")], "check the path given to --stream"),
        (["run", str(query), "--stream", f"http://other={stream}"], "name one of its FROM STREAM IRIs: <http://s>"),
        (["run", str(query), "--stream", str(stream), "--ontology", str(bad)], f"{bad}:2:11: cannot parse as turtle"),
        (["run", str(query), "--stream", str(stream), "--ontology", str(tmp_path / "x.ttl")], "--ontology"),
        (["lars", str(tmp_path / "none.lars"), "--stream", str(stream)], "cannot read program: no such file"),
        (["explain", str(tmp_path / "none.rq")], "no such query file"),
    ]  # fmt: skip
    for argv, message in cases:
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err, (argv, err)
        assert err.startswith(str(tmp_path)), err
    assert main(["run", str(query), "--stream", str(stream)]) == 0
    err = capsys.readouterr().err
    assert f"{stream}:2:23: missing object" in err and "--reject FILE keeps them" in err


def test_errors_from_the_console_script_have_no_traceback(tmp_path: Path) -> None:
    query = tmp_path / "q.rq"
    query.write_text(QUERY % "?x ex:p ?y")
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(query), "--stream", "x.nt"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"{query}:4:12: undeclared prefix") and "Traceback" not in done.stderr


def test_lars_text_output_uses_the_programs_prefixes(capsys) -> None:
    program = ROOT / "examples" / "traffic" / "short-stops.lars"
    stream = ROOT / "examples" / "traffic" / "positions.nt"
    assert main(["lars", str(program), "--stream", str(stream), "--format", "text", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "    24 | shortStop(tr:car3,2)  shortStop(tr:car4,2)  still(tr:van)  stillFor(tr:van,6)" in lines
    assert not any("<http://example.org/traffic#" in line for line in lines)
    # jsonl keeps the atoms as rsp writes them everywhere else (full IRIs)
    assert main(["lars", str(program), "--stream", str(stream), "-q"]) == 0
    assert "shortStop(<http://example.org/traffic#car3>,2)" in capsys.readouterr().out
