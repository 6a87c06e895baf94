"""``rsp lars``'s output choices (issue 45, item 13): ``--output-predicates`` keeps the derived predicates
asked for (the same atoms as the full output, filtered; an error with the closest names for one the
program does not derive), and ``--format csv`` writes the atoms of the jsonl output as rows."""

from __future__ import annotations

import csv
import io
import json

import pytest
from paths import ROOT

from rsp.cli import main

COOLING = ROOT / "examples" / "cooling"
COOLING_ARGS = [str(COOLING / "cooling.lars"), "--stream", str(COOLING / "temps.stream")]

PROGRAM = """@prefix ex: <http://ex.org/> .
near(X, Y) :- [2] <> at(X, Y).
ex:seen(X) :- [2] <> at(X, Y).
label(X, "a \\"b\\", c") :- [1] <> at(X, Y).
pair :- near(X, Y), near(Y, X).
"""
STREAM = "0 at(a, b)\n1 at(b, a)\n1 at(c, 2.5)\n3\n4 at(d, <http://ex.org/x>)\n"


def lars(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["lars", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def program(tmp_path) -> list[str]:
    (tmp_path / "p.lars").write_text(PROGRAM)
    (tmp_path / "s.stream").write_text(STREAM)
    return [str(tmp_path / "p.lars"), "--stream", str(tmp_path / "s.stream")]


def records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def name_of(atom: str) -> str:
    return atom[: atom.index(">") + 1] if atom.startswith("<") else atom.partition("(")[0]


@pytest.mark.parametrize(
    "case, keep",
    [
        ("cooling", None),
        ("cooling", "liquid,alarm"),
        ("cooling", " veryHot , normal "),
        ("program", None),
        ("program", "near,ex:seen"),
        ("program", "<http://ex.org/seen>,pair"),
    ],
)
def test_output_predicates_keep_the_full_outputs_atoms_of_those_predicates(
    capsys, program, case, keep
) -> None:
    argv = COOLING_ARGS if case == "cooling" else program
    code, full, _err = lars(capsys, *argv)
    assert code == 0
    expected_names = None
    if keep is not None:
        expected_names = {"ex:seen": "<http://ex.org/seen>"}
        expected_names = {expected_names.get(n.strip(), n.strip()) for n in keep.split(",")}
        code, out, _err = lars(capsys, *argv, "--output-predicates", keep)
        assert code == 0
    else:
        out = full
    expected = [
        {
            "time": r["time"],
            "atoms": [a for a in r["atoms"] if expected_names is None or name_of(a) in expected_names],
        }
        for r in records(full)
    ]
    assert records(out) == expected
    assert any(r["atoms"] for r in expected)
    counts = lars(capsys, *argv, "--format", "count", *(["--output-predicates", keep] if keep else []))[1]
    assert records(counts) == [{"time": r["time"], "count": len(r["atoms"])} for r in expected]
    text = lars(capsys, *argv, "--format", "text", *(["--output-predicates", keep] if keep else []))[1]
    assert len(text.splitlines()) == len(expected)
    explained = lars(capsys, *argv, "--explain", *(["--output-predicates", keep] if keep else []))[1]
    assert [{"time": r["time"], "atoms": r["atoms"]} for r in records(explained)] == expected
    assert all(len(r["explanations"]) == len(r["atoms"]) for r in records(explained))


@pytest.mark.parametrize("case", ["cooling", "program"])
def test_csv_rows_are_the_jsonl_atoms(capsys, program, case) -> None:
    argv = COOLING_ARGS if case == "cooling" else program
    jsonl = records(lars(capsys, *argv)[1])
    code, out, _err = lars(capsys, *argv, "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    width = 1 if case == "cooling" else 2  # veryHot(V); near(X, Y) and label(X, S)
    assert rows[0] == ["time", "predicate", *(f"arg{i}" for i in range(1, width + 1))]
    assert all(len(row) == 2 + width for row in rows[1:])
    as_atoms = [(int(row[0]), row[1], tuple(a for a in row[2:] if a)) for row in rows[1:]]
    expected = []
    for record in jsonl:
        for atom in record["atoms"]:
            name = name_of(atom)
            rest = atom[len(name) :]
            args = tuple(_csv_term(a) for a in _split_args(rest[1:-1])) if rest else ()
            expected.append((record["time"], name.strip("<>"), args))
    assert as_atoms == expected
    assert expected


def _split_args(text: str) -> list[str]:
    """The arguments of an atom's text (commas inside strings kept)."""
    parts, current, quoted, escaped = [], "", False, False
    for char in text:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            current, escaped = current + char, True
        elif char == '"':
            current, quoted = current + char, not quoted
        elif char == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _csv_term(text: str) -> str:
    if text.startswith('"'):
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return text.strip("<>")


def test_csv_cells_hold_plain_values(capsys, program) -> None:
    out = lars(capsys, *program, "--format", "csv", "--output-predicates", "label,near")[1]
    rows = list(csv.reader(io.StringIO(out)))
    assert ["1", "label", "c", 'a "b", c'] in rows
    assert ["1", "near", "c", "2.5"] in rows
    assert ["4", "near", "d", "http://ex.org/x"] in rows
    assert {row[1] for row in rows[1:]} == {"label", "near"}


@pytest.mark.parametrize(
    "case, keep, message",
    [
        ("cooling", "liqid", "--output-predicates liqid: the program derives no predicate liqid (did you mean "
         "liquid?)"),
        ("cooling", "normal,alrm", "--output-predicates alrm: the program derives no predicate alrm (did you "
         "mean alarm?)"),
        ("cooling", "zzz", "--output-predicates zzz: the program derives no predicate zzz\n"),
        ("cooling", "temp", "--output-predicates temp: temp is read from the stream or given by facts, no rule "
         "derives it (the derived ones: alarm, freeze, liquid, normal, steam, veryHot)"),
        ("program", "ex:sen", "the program derives no predicate ex:sen"),
        ("program", ",", "--output-predicates: give the names of derived predicates"),
    ],
)  # fmt: skip
def test_a_predicate_the_program_does_not_derive_is_an_error(capsys, program, case, keep, message) -> None:
    argv = COOLING_ARGS if case == "cooling" else program
    code, out, err = lars(capsys, *argv, "--output-predicates", keep)
    assert (code, out) == (2, "")
    assert message in err and "Traceback" not in err, err


def test_answer_streams_keep_the_predicates_asked_for(capsys) -> None:
    """--models (answer streams) filters each model's atoms alike; csv is for the one answer."""
    argv = [*COOLING_ARGS, "--models", "1"]
    full = records(lars(capsys, *argv)[1])
    code, out, _err = lars(capsys, *argv, "--output-predicates", "freeze,normal")
    assert code == 0
    kept = [{"time": r["time"], "atoms": [a for a in r["atoms"] if a in ("freeze", "normal")]} for r in full]
    assert records(out) == kept and any(r["atoms"] for r in kept)
    code, out, err = lars(capsys, *argv, "--output-predicates", "frieze")
    assert code == 2 and "(did you mean freeze?)" in err
    code, out, err = lars(capsys, *argv, "--format", "csv")
    assert code == 2 and "--format csv writes the one answer of a stratified program" in err


def test_csv_refuses_explain(capsys) -> None:
    code, _out, err = lars(capsys, *COOLING_ARGS, "--format", "csv", "--explain")
    assert code == 2 and "--explain needs --format jsonl or text" in err
