"""The rsp command line: output formats, errors as file:line:column with exit code 2, bad stream lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from golden_cases import GOLDEN, expected

from rsp.cli import main


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_jsonl_has_every_time_point(capsys) -> None:
    code, out, _ = run_cli(
        capsys,
        "lars",
        str(GOLDEN / "laser_join/program.lars"),
        "--stream",
        str(GOLDEN / "laser_join/stream.txt"),
    )
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["time"], r["atoms"]) for r in records] == expected("laser_join")


def test_count_format(capsys) -> None:
    code, out, _ = run_cli(
        capsys,
        "lars",
        str(GOLDEN / "chain/program.lars"),
        "--stream",
        str(GOLDEN / "chain/stream.txt"),
        "--format",
        "count",
    )
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"time": t, "count": len(atoms)} for t, atoms in expected("chain")
    ]


def test_text_format_and_output_file(capsys, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    code, out, _ = run_cli(
        capsys,
        "lars",
        str(GOLDEN / "chain/program.lars"),
        "--stream",
        str(GOLDEN / "chain/stream.txt"),
        "--format",
        "text",
        "-o",
        str(target),
    )
    assert code == 0 and out == ""
    lines = target.read_text().splitlines()
    assert lines[0].split() == ["0", "|", "h(a)", "i(a)"]
    assert lines[-1].split() == ["7", "|", "-"]


def test_program_error_is_reported_without_traceback(capsys, tmp_path: Path) -> None:
    program = tmp_path / "bad.lars"
    program.write_text("q(X) :- p(X).\nr(X) :- [3] <> p(X)\n")
    stream = tmp_path / "s.txt"
    stream.write_text("0 p(a)\n")
    code, out, err = run_cli(capsys, "lars", str(program), "--stream", str(stream))
    assert code == 2 and out == ""
    assert err.startswith(f"{program}:2:20: unexpected end of input")
    assert "Traceback" not in err


def test_unsafe_rule_error(capsys, tmp_path: Path) -> None:
    program = tmp_path / "unsafe.lars"
    program.write_text("\n  q(X) :- p(Y).\n")
    stream = tmp_path / "s.txt"
    stream.write_text("0 p(a)\n")
    code, _, err = run_cli(capsys, "lars", str(program), "--stream", str(stream))
    assert code == 2
    assert err.startswith(f"{program}:2:3: unsafe rule 'q(X) :- p(Y).'")


def test_missing_files_are_errors(capsys, tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "lars", str(tmp_path / "none.lars"), "--stream", "x")
    assert code == 2 and "cannot read program" in err


def test_malformed_lines_are_reported_counted_and_skipped(capsys, tmp_path: Path) -> None:
    stream = tmp_path / "s.txt"
    stream.write_text('0 p(a)\n1 p(b\n<a> <b> "open . # 2\n3 p(c)\n')
    code, out, err = run_cli(capsys, "lars", str(GOLDEN / "chain/program.lars"), "--stream", str(stream))
    assert code == 0
    assert f"{stream}:2: " in err and f"{stream}:3: unterminated string literal" in err
    assert "2 malformed line(s) skipped" in err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["time"] for r in records] == [0, 1, 2, 3]
    assert records[3]["atoms"] == ["h(c)", "i(c)"]


def test_late_elements_are_counted_and_dropped(capsys, tmp_path: Path) -> None:
    stream = tmp_path / "s.txt"
    stream.write_text("0 p(a)\n3 p(b)\n1 p(late)\n4\n")
    code, out, err = run_cli(capsys, "lars", str(GOLDEN / "chain/program.lars"), "--stream", str(stream))
    assert code == 0
    assert "late element p(late) at 1 dropped" in err and "1 late element(s)" in err
    assert all("late" not in line for line in out.splitlines())


def test_warnings_go_to_stderr(capsys) -> None:
    _, _, err = run_cli(
        capsys,
        "lars",
        str(GOLDEN / "plain_window/program.lars"),
        "--stream",
        str(GOLDEN / "plain_window/stream.txt"),
    )
    assert "warning: window [3] over 'i'" in err


def test_help_shows_an_example(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["lars", "--help"])
    assert "example:" in capsys.readouterr().out


def test_console_script_and_version() -> None:
    rsp = Path(sys.executable).parent / "rsp"  # installed by `pip install -e .` (make test does it)
    result = subprocess.run([str(rsp), "--version"], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("rsp ")
    result = subprocess.run(
        [sys.executable, "-m", "rsp", "--version"], capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith("rsp ")


def test_a_closed_output_pipe_ends_quietly(tmp_path: Path) -> None:
    """`rsp lars … | head -1`: exit code 0 and nothing on stderr once the reader goes away (the output,
    ≈1 MB, is far larger than a pipe's buffer, so the writer does meet the closed pipe)."""
    rsp = Path(sys.executable).parent / "rsp"
    stream = tmp_path / "long.txt"
    stream.write_text("".join(f"{t} temp({100 + t % 50})\n" for t in range(30000)))
    proc = subprocess.Popen(
        [str(rsp), "lars", str(GOLDEN / "cooling" / "program.lars"), "--stream", str(stream)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
    )
    assert proc.stdout.readline().startswith(b'{"time": 0')
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"Broken pipe" not in err and b"Traceback" not in err


def test_stream_atoms_of_another_arity_are_reported(capsys, tmp_path) -> None:
    """A predicate is its name and its arity: s(x1) is not read by ``h0 :- s.``, and the run says so."""
    program = tmp_path / "p.lars"
    program.write_text("h0 :- s.\nq(X) :- p(X, Y).\n")
    stream = tmp_path / "s.txt"
    stream.write_text("11 s(x1)\n11 s(x2)\n12 p(a)\n12 p(a,b)\n")
    code, out, err = run_cli(capsys, "lars", str(program), "--stream", str(stream))
    assert code == 0
    assert [json.loads(line)["atoms"] for line in out.splitlines()] == [[], ["q(a)"]]
    assert "2 stream atom(s) of s/1 matched no rule: the program uses s as s/0" in err
    assert "1 stream atom(s) of p/1 matched no rule: the program uses p as p/2" in err
    code, _out, err = run_cli(capsys, "lars", str(program), "--stream", str(stream), "--quiet")
    assert code == 0 and err == ""
