"""The messages a new user reads first (issue 45, item 12): argument errors under the usage of the command
that was given, with the closest names suggested; a help text for every option; LARS syntax errors that
say why; an ontology's syntax error at its line, in plain text; a directory given as a stream; stream
summaries that name what they count."""

from __future__ import annotations

import argparse
import json

import pytest
from paths import ROOT

from rsp.cli import build_parser, main


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    parser = build_parser()
    return [("rsp", parser), *((f"rsp {name}", sub) for name, sub in parser.commands.items())]


def test_every_command_is_walked() -> None:
    names = {name for name, _parser in parsers()}
    assert names == {"rsp", "rsp run", "rsp lars", "rsp mtl", "rsp explain", "rsp serve", "rsp spark"}


@pytest.mark.parametrize("name, parser", parsers(), ids=[name for name, _ in parsers()])
def test_every_option_has_a_help_text(name: str, parser) -> None:
    """Each argument of each command says what it does in ``--help`` (argparse.SUPPRESS: deliberately
    hidden)."""
    assert parser.arguments, name
    for action in parser.arguments:
        label = "/".join(action.option_strings) or action.dest
        assert action.help, f"{name} {label} has no help text"


def error_of(argv: list[str], capsys) -> list[str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.strip().splitlines()


@pytest.mark.parametrize(
    "argv, usage, message",
    [
        (["rn", "q.rq"], "usage: rsp [", "rsp: error: argument COMMAND: invalid choice: 'rn' "),
        (["run", "q.rq", "--stream", "s.nt", "--strem", "x"], "usage: rsp run ", "rsp run: error: "
         "unrecognized arguments: --strem x (--strem: did you mean --stream?)"),
        (["lars", "p.lars", "--stream", "s", "--formt=csv"], "usage: rsp lars ", "rsp lars: error: "
         "unrecognized arguments: --formt=csv (--formt: did you mean --format?)"),
        (["mtl", "p.mtl", "--horizn", "3"], "usage: rsp mtl ", "did you mean --horizon?"),
        (["run", "q.rq", "--format", "jsn"], "usage: rsp run ", "invalid choice: 'jsn'"),
        (["run", "q.rq", "--strem", "s.nt"], "usage: rsp run ", "rsp run: error: the following arguments "
         "are required: --stream (--strem: did you mean --stream?)"),
        (["--vresion"], "usage: rsp [", "rsp: error: unrecognized arguments: --vresion (--vresion: did you "
         "mean --version?)"),
    ],
)  # fmt: skip
def test_argument_errors_show_the_commands_usage_and_close_matches(capsys, argv, usage, message) -> None:
    err = error_of(argv, capsys)
    assert err[0].startswith(usage), err
    assert message in err[-1], err


def test_an_invalid_choice_suggests_the_closest(capsys) -> None:
    assert error_of(["rn", "q.rq"], capsys)[-1].endswith("(did you mean run?)")
    assert error_of(["run", "q.rq", "--stream", "s", "--format", "jsn"], capsys)[-1].endswith(
        "(did you mean jsonl?)"
    )
    assert error_of(["lars", "p", "--stream", "s", "--mode", "clingoo"], capsys)[-1].endswith(
        "(did you mean clingo?)"
    )


def test_nothing_close_suggests_nothing(capsys) -> None:
    err = error_of(["frobnicate"], capsys)
    assert "did you mean" not in err[-1]
    assert error_of(["run", "q.rq", "--stream", "s", "--zzzz"], capsys)[-1].endswith(
        "unrecognized arguments: --zzzz (no option --zzzz)"
    )


def test_an_abbreviated_option_is_not_called_unknown(capsys) -> None:
    err = error_of(["run", "q.rq", "--strea"], capsys)
    assert "no option" not in err[-1] and "did you mean" not in err[-1], err


# -- LARS syntax errors that say why -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, where, why",
    [
        ("Hot :- temp(X), X > 3.", "1:1", "Hot starts in upper case, which makes it a variable; predicates "
         "and constants start in lower case: hot"),
        ("hot(X) :- [3] <> Temp(X).", "1:18", "Temp starts in upper case"),
        ("hot(X) :- Temp(X).", "1:15", "Temp starts in upper case, which makes it a variable"),
        ("q.\n@T Alarm :- [5] @T q.", "2:4", "Alarm starts in upper case"),
        ("hot(X) :- [3s] <> temp(X).", "1:13", "a LARS window counts time points and has no unit: [3] spans "
         "the time points t-3 to t"),
        ("hot(X) :- [ 10 sec ] [] temp(X).", "1:16", "[10] spans the time points t-10 to t"),
        ("hot(X) :- [#3 s] <> temp(X).", "1:15", "a tuple window counts stream atoms and has no unit: "
         "write [#3]"),
    ],
)  # fmt: skip
def test_lars_syntax_errors_say_what_was_meant(text: str, where: str, why: str) -> None:
    from rsp.errors import ProgramError
    from rsp.lars.parser import parse_program

    with pytest.raises(ProgramError) as err:
        parse_program(text, "p.lars")
    assert str(err.value).startswith(f"p.lars:{where}: unexpected "), str(err.value)
    assert why in str(err.value)


@pytest.mark.parametrize("text", ["hot(X) :- temp(X) X.", "hot(X) :- temp(X), X > 3, Y.", "hot(X :- p."])
def test_other_lars_syntax_errors_get_no_such_hint(text: str) -> None:
    from rsp.errors import ProgramError
    from rsp.lars.parser import parse_program

    with pytest.raises(ProgramError) as err:
        parse_program(text, "p.lars")
    assert "upper case" not in str(err.value) and "window" not in str(err.value)


# -- an ontology's syntax error ------------------------------------------------------------------------


def test_a_turtle_error_names_its_line_and_column_in_plain_text(capsys, tmp_path) -> None:
    """After a multi-line string and non-ASCII text (which rdflib miscounted, showing its excerpt as
    Python bytes literals), the message names the line and column of the file and the reason only."""
    bad = tmp_path / "bad.ttl"
    bad.write_text(
        '@prefix ex: <http://ex.org/> .\nex:a ex:b """one\ntwo\nthree""" .\n# é\nex:é ex:b ex:c .\nex:a ex:b .\n'
    )
    code = main(["explain", str(ROOT / "examples" / "building" / "hot-rooms.rq"), "--ontology", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"{bad}:7:11: cannot parse as turtle: . is not a valid RDF object ("), err
    assert "b'" not in err and "\\n" not in err and "Traceback" not in err


def test_an_ontology_text_error_names_its_line(tmp_path) -> None:
    from rsp.background.ontology import OntologyError, parse_ontology_text

    with pytest.raises(OntologyError) as err:
        parse_ontology_text("@prefix ex: <http://ex.org/> .\n\nex:a ex:b ex:c ;\n  ex:d .\n")
    assert str(err.value) == "<string>:4:8: cannot parse as turtle: . is not a valid RDF object"


# -- a directory given as a stream ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["run", str(ROOT / "examples" / "building" / "hot-rooms.rq")],
        ["run", str(ROOT / "examples" / "building" / "hot-rooms.rq"), "--follow"],
        ["lars", str(ROOT / "examples" / "cooling" / "cooling.lars")],
        ["lars", str(ROOT / "examples" / "cooling" / "cooling.lars"), "--models", "1"],
        ["mtl", str(ROOT / "tests" / "golden" / "mtl" / "boxminus-punctual" / "program.txt")],
    ],
    ids=["run", "run-follow", "lars", "lars-models", "mtl"],
)
def test_a_directory_given_as_a_stream_is_called_a_directory(capsys, tmp_path, argv) -> None:
    folder = tmp_path / "incoming"
    folder.mkdir()
    code = main([*argv, "--stream", str(folder)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"{folder}: is a directory, not a stream file (give --stream a file; rsp spark reads a " \
        "directory that receives stream files)\n"  # fmt: skip


# -- summaries name what they count --------------------------------------------------------------------

RANGE_QUERY = """REGISTER QUERY q AS SELECT ?s FROM STREAM <http://s> [RANGE 10s STEP 10s]
WHERE { ?s <http://p> ?o }
"""


def test_a_stream_summary_counts_timestamps_not_instants(capsys, tmp_path) -> None:
    """20 timestamps 1 s apart, a query evaluated every 10 s: the summary says 20 timestamps (the
    query's instants are another count)."""
    query = tmp_path / "q.rq"
    query.write_text(RANGE_QUERY)
    stream = tmp_path / "s.nt"
    lines = [f"<http://a{t}> <http://p> <http://b> . # {t * 1000}\n" for t in range(20)]
    stream.write_text("".join(lines) + "not a triple . # 20000\n")
    assert main(["run", str(query), "--stream", str(stream)]) == 0
    captured = capsys.readouterr()
    instants = [line for line in captured.out.splitlines() if line.startswith("{")]
    assert len(instants) < 20
    assert captured.err.splitlines()[-1].startswith(
        f"{stream}: 21 lines, 20 triples at 20 timestamps, 1 rejected, 0 late"
    ), captured.err


def test_a_stopped_live_run_counts_each_instant_once_for_several_queries(tmp_path) -> None:
    """Two queries over one live stream: the summary counts the instants written, not the results (one
    per query per instant)."""
    import os
    import signal
    import subprocess
    import sys

    building = ROOT / "examples" / "building"
    second = tmp_path / "again.rq"
    second.write_text((building / "hot-rooms.rq").read_text().replace("QUERY HotRooms", "QUERY Again"))
    lines = (building / "temperatures.nt").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if int(line.rsplit("# ", 1)[1]) >= 10_000) + 1
    ontology = ["--ontology", str(ROOT / "ontologies" / "building.ttl"), "--entailment", "rdfs"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rsp", "run", str(building / "hot-rooms.rq"), str(second), "--stream", "-",
         *ontology],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        start_new_session=True,
    )  # fmt: skip
    try:
        proc.stdin.write("".join(lines[:cut]))
        proc.stdin.flush()
        written = [proc.stdout.readline() for _ in range(4)]  # instants 5000 and 10000, each query's
        os.killpg(proc.pid, signal.SIGTERM)
        rest, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    records = [json.loads(line) for line in written + rest.splitlines(keepends=True)]
    times = {record["time"] for record in records}
    assert {record["query"] for record in records} == {"HotRooms", "Again"}
    assert len(records) == 2 * len(times)
    assert stderr == f"rsp run: stopped by SIGTERM: {len(times)} instants written, {cut} triples read\n"
