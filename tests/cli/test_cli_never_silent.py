"""A run is never silently empty or silently wrong (issue 45, items 6 and 7): a stream whose every line is
rejected is an error, an empty stream and ``--entailment`` with nothing to reason with are warnings, a
file given twice for one stream is refused, a LARS body atom nothing can make true is a warning at its
position, and numeric options that make no sense are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import ROOT, TEST_DATA

from rsp.cli import build_parser, main

QUERY = ROOT / "examples" / "building" / "hot-rooms.rq"
STREAM = ROOT / "examples" / "building" / "temperatures.nt"
ONTOLOGY = ROOT / "ontologies" / "building.ttl"
COOLING = ROOT / "examples" / "cooling"
MTL_PROGRAM = TEST_DATA / "mtl" / "short_stop.txt"
MTL_STREAM = TEST_DATA / "mtl" / "monitoring-dataset.txt"


def test_a_run_that_read_no_element_because_every_line_was_rejected_is_an_error(capsys) -> None:
    """``--stream onto.ttl`` (an ontology given as the stream) exited 0 with no output."""
    for argv in (
        ["run", str(QUERY), "--stream", str(ONTOLOGY)],
        ["lars", str(COOLING / "cooling.lars"), "--stream", str(ONTOLOGY)],
        ["lars", str(COOLING / "cooling.lars"), "--stream", str(ONTOLOGY), "--models", "1"],
        ["mtl", str(MTL_PROGRAM), "--stream", str(ONTOLOGY)],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "no element was read: every line was rejected" in err or "no fact was read" in err, err
        assert "Traceback" not in err


def test_an_empty_stream_is_a_warning(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty.nt"
    empty.write_text("# nothing yet\n")
    for argv, warning in (
        (["run", str(QUERY)], "the stream is empty: no element was read from it"),
        (["lars", str(COOLING / "cooling.lars")], "the stream is empty: no time point was read from it"),
        (["mtl", str(MTL_PROGRAM)], "the stream is empty: no fact was read from it"),
    ):
        assert main([*argv, "--stream", str(empty)]) == 0
        assert f"{empty}: warning: {warning}" in capsys.readouterr().err
        assert main([*argv, "--stream", str(empty), "--quiet"]) == 0
        assert capsys.readouterr().err == ""


def test_entailment_with_nothing_to_reason_with_is_a_warning(capsys, tmp_path: Path) -> None:
    warning = "rsp run: warning: --entailment rdfs had nothing to reason with"
    assert main(["run", str(QUERY), "--stream", str(STREAM), "--entailment", "rdfs"]) == 0
    assert warning in capsys.readouterr().err
    assert main(["run", str(QUERY), "--stream", str(STREAM), "--entailment", "rdfs", "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert (
        main(
            ["run", str(QUERY), "--stream", str(STREAM), "--entailment", "rdfs", "--ontology", str(ONTOLOGY)]
        )
        == 0
    )
    assert capsys.readouterr().err == ""
    schema = tmp_path / "with-schema.nt"  # the schema comes in the stream itself
    schema.write_bytes(
        b"<http://example.org/building#Office> <http://www.w3.org/2000/01/rdf-schema#subClassOf> "
        b"<http://example.org/building#Room> . # 0\n" + STREAM.read_bytes()
    )
    assert main(["run", str(QUERY), "--stream", str(schema), "--entailment", "owlrl"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["run", str(QUERY), "--stream", str(STREAM)]) == 0  # --entailment none: nothing to say
    assert capsys.readouterr().err == ""


def test_one_file_given_twice_for_one_stream_is_refused(capsys, monkeypatch) -> None:
    """Each element would be read twice (a [TRIPLES n] window, COUNT: other answers)."""
    monkeypatch.chdir(STREAM.parent)
    for twice in (
        ["temperatures.nt", "temperatures.nt"],
        ["temperatures.nt", f"./{STREAM.name}"],
        ["-", "-"],
    ):
        argv = ["run", str(QUERY)]
        for path in twice:
            argv += ["--stream", path]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "given twice" in err and "Traceback" not in err, err
    iri = "http://example.org/building/temperatures"
    assert main(["run", str(QUERY), "--stream", f"{iri}={STREAM}", "--stream", str(STREAM)]) == 2
    assert f"the file is given twice for the stream <{iri}>" in capsys.readouterr().err


def test_a_lars_body_atom_nothing_gives_is_a_warning_at_its_position(capsys, tmp_path: Path) -> None:
    """``tmp`` for ``temp``: no rule derives it, no fact gives it, no stream line carries it."""
    program = tmp_path / "typo.lars"
    text = (COOLING / "cooling.lars").read_text(encoding="utf-8")
    line, column = next(
        (number, row.index("temp(V)") + 1)
        for number, row in enumerate(text.splitlines(), 1)
        if "temp(V)" in row and ":-" in row
    )
    rows = text.splitlines(keepends=True)
    rows[line - 1] = rows[line - 1].replace("temp(V)", "tmp(V)", 1)
    program.write_text("".join(rows))
    stream = COOLING / "temps.stream"
    assert main(["lars", str(program), "--stream", str(stream)]) == 0
    err = capsys.readouterr().err
    where = f"{program}:{line}:"
    assert err.startswith(where) and "warning: tmp/1 is read here, but no rule derives it" in err, err
    assert "(a typo? the stream has temp/1)" in err
    start = int(err[len(where) :].split(":")[0])
    assert start <= column  # the extended atom ([n] @T tmp(V) …) starts at or before the name
    assert main(["lars", str(program), "--stream", str(stream), "--models", "1"]) == 0  # answer streams too
    assert "warning: tmp/1 is read here" in capsys.readouterr().err
    assert main(["lars", str(COOLING / "cooling.lars"), "--stream", str(stream)]) == 0  # the original
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", str(QUERY), "--stream", str(STREAM), "--idle-close", "-1"], "greater than 0, not '-1'"),
        (["run", str(QUERY), "--stream", str(STREAM), "--idle-close", "nan"], "greater than 0, not 'nan'"),
        (["lars", "p.lars", "--stream", "s", "--idle-close", "0"], "greater than 0, not '0'"),
        (["spark", "q.rq", "--stream", "d", "--max-files-per-trigger", "0"], "at least 1, not '0'"),
    ],
)
def test_numeric_options_that_make_no_sense_are_refused(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_idle_close_on_files_read_to_their_end_is_a_warning(capsys) -> None:
    """--idle-close changes nothing when the input is files (it is for live input): said, not ignored."""
    warning = "rsp: warning: --idle-close has no effect on files read to their end"
    for argv in (
        ["run", str(QUERY), "--stream", str(STREAM)],
        ["lars", str(COOLING / "cooling.lars"), "--stream", str(COOLING / "temps.stream")],
        ["lars", str(COOLING / "cooling.lars"), "--stream", str(COOLING / "temps.stream"), "--models", "1"],
    ):
        assert main([*argv, "--idle-close", "2"]) == 0
        assert warning in capsys.readouterr().err
        assert main([*argv, "--idle-close", "2", "--quiet"]) == 0
        assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "option, message",
    [
        (["--points", "5:1"], "--points:1:1: '5:1': the range is empty"),
        (["--points", "1,2,8:3"], "--points:1:5: '8:3': the range is empty"),
        (["--points", "0:1e7:1/1000"], "more than 1,000,000 points"),
        (["--horizon", "-3"], "--horizon -3: every fact of the stream starts after it"),
        (["--horizon", "inf"], "--horizon inf: the horizon must be finite"),
    ],
)
def test_mtl_options_that_give_nothing_are_refused(capsys, option: list[str], message: str) -> None:
    assert main(["mtl", str(MTL_PROGRAM), "--stream", str(MTL_STREAM), *option]) == 2
    out, err = capsys.readouterr()
    assert message in err and out == "", err
