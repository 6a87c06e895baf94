"""rsp mtl on datasets as MeTeoR writes them (issue 41, item 4): a regular file given to --stream is a
finite dataset, reasoned over whatever the order of its facts, with the output of the same facts sorted by
their left ends; standard input and pipes stay a stream in time order, whose late facts are dropped and
reported with their line (or stop the run under --late fail)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from fuzzing import examples, saved_on_failure
from hypothesis import given, settings
from hypothesis import strategies as st
from mtl_naive import least_model
from mtl_strategies import facts, programs
from paths import GOLDEN_MTL, ROOT, TEST_DATA

from rsp.cli import main
from rsp.mtl import format_fact
from rsp.mtl.facts import parse_fact
from rsp.mtl.intervals import fmt_time
from rsp.mtl.model import format_atom
from rsp.mtl.syntax import parse_program

GOLDEN = GOLDEN_MTL
DATA = TEST_DATA / "mtl"


def _mtl(program: Path, stream: Path | str, *options: str, stdin: str | None = None) -> tuple[int, str, str]:
    """``rsp mtl PROGRAM --stream STREAM OPTIONS`` in process: exit code, output, standard error. With
    ``stdin``, the stream is ``-`` read from a pipe holding that text."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out.txt"
        err = io.StringIO()
        saved = sys.stdin
        read = None
        if stdin is not None:
            read, write = os.pipe()
            os.write(write, stdin.encode("utf-8"))  # (small: the pipe's buffer holds it)
            os.close(write)
            sys.stdin = os.fdopen(read, encoding="utf-8")
        try:
            with contextlib.redirect_stderr(err):
                code = main(["mtl", str(program), "--stream", str(stream), "-o", str(out), *options])
        finally:
            if stdin is not None:
                sys.stdin.close()
                sys.stdin = saved
        text = out.read_text(encoding="utf-8") if out.exists() else ""
    return code, text, err.getvalue()


def _files(tmp_path: Path, program: str, stream: str) -> tuple[Path, Path]:
    (tmp_path / "p.txt").write_text(program + "\n", encoding="utf-8")
    (tmp_path / "s.txt").write_text(stream, encoding="utf-8")
    return tmp_path / "p.txt", tmp_path / "s.txt"


# ------------------------------------------------------------------ datasets in MeTeoR's style
def test_a_file_out_of_order_is_a_dataset(tmp_path: Path) -> None:
    """The file that used to lose B(b)@1 as late: both facts are read, A(b)@[1,1] leaves first (final
    once the sorted facts reach 2), nothing is reported late."""
    program, stream = _files(tmp_path, "A(X):-B(X)", "B(a)@2\nB(b)@1\n")
    for late in ("drop", "fail"):  # --late is the policy of live input: a dataset has no late fact
        code, out, err = _mtl(program, stream, "--late", late)
        assert (code, out, err) == (0, "A(b)@[1,1]\nA(a)@[2,2]\n", "")


# (program, dataset lines as written, options, expected output): each reckoned by hand
METEOR_STYLE = [
    # docs/mtl.md's MeTeoR comparison: C(b) on [2,2.5] gives A(b) there (0 ∈ ρ); at t in (2.5,4.5] the
    # open interval (t', t) after a witness t' in [2,2.5] meets (2.5,3) where B(b) does not hold
    ("A(X):-B(X)Since[0,2]C(X)", ["B(b)@[3,4]", "C(b)@[2,2.5]"], ["--horizon", "6"], ["A(b)@[2,2.5]"]),
    # docs/mtl.md: ◇[0,1]B = [0,2] ∪ [2.5,3.5] ∪ [4,∞); ⊟[1,2] of it: t in [2,3], t = 4.5, t ≥ 6 (horizon 9)
    (
        "A(X):-Boxminus[1,2]Diamondminus[0,1]B(X)",
        ["B(a)@[4,inf)", "B(a)@2.5", "B(a)@1", "B(a)@0"],
        ["--horizon", "9"],
        ["A(a)@[2,3]", "A(a)@[4.5,4.5]", "A(a)@[6,9]"],
    ),
    # tests/cli/test_mtl_cli.py's stream, shuffled: the same facts leave at the same times
    (
        "A(X):-Diamondminus[0,1]B(X)",
        ["B(d)@10", "B(c)@[3,inf)", "B(a)@0", "B(b)@3"],
        ["--format", "jsonl"],
        [
            '{"time": 3, "facts": ["A(a)@[0,1]"]}',
            '{"time": 10, "facts": ["A(b)@[3,4]"]}',
            '{"time": 10, "facts": ["A(c)@[3,10]", "A(d)@[10,10]"]}',
        ],
    ),
    (
        "A(X):-Diamondminus[0,1]B(X)",
        ["B(d)@10", "B(c)@[3,inf)", "B(a)@0", "B(b)@3"],
        ["--horizon", "5"],
        ["A(a)@[0,1]", "A(b)@[3,4]", "A(c)@[3,5]"],
    ),
    # timed N-Triples lines are facts <p>(<s>,<o>)@t, read in any order too: ◇[0,1] of the points 1 and 3
    (
        "Near(X,Y):-Diamondminus[0,1]<http://ex/near>(X,Y)",
        [
            "<http://ex/a> <http://ex/near> <http://ex/b> . # 3",
            "<http://ex/a> <http://ex/near> <http://ex/b> . # 1",
        ],
        ["--horizon", "10"],
        ["Near(<http://ex/a>,<http://ex/b>)@[1,2]", "Near(<http://ex/a>,<http://ex/b>)@[3,4]"],
    ),
    # propositional facts, written P and P(): Go on [0,1] and at 2.5; On while ◇[0,1]Go holds
    ("On:-Diamondminus[0,1]Go", ["Go()@2.5", "Go@[0,1]"], ["--horizon", "5"], ["On@[0,2]", "On@[2.5,3.5]"]),
]


@pytest.mark.parametrize(("program", "lines", "options", "expected"), METEOR_STYLE)
def test_meteor_style_datasets(tmp_path: Path, program: str, lines: list[str], options, expected) -> None:
    program_file, stream = _files(tmp_path, program, "".join(line + "\n" for line in lines))
    code, out, err = _mtl(program_file, stream, *options)
    assert (code, err) == (0, "")
    assert out.splitlines() == expected
    in_order = tmp_path / "sorted.txt"  # the same facts sorted by hand give the same output
    in_order.write_text("".join(f + "\n" for f in sorted(lines, key=lambda f: parse_fact(f)[2][0])))
    assert _mtl(program_file, in_order, *options) == (0, out, "")


def test_the_papers_monitoring_dataset_grouped_by_predicate() -> None:
    """tests/golden/mtl/paper-monitoring (reckoned by hand in its README) written as a dataset often is:
    one predicate after another, the signal readings last to first."""
    case = GOLDEN / "paper-monitoring"
    lines = (case / "stream.txt").read_text().split()
    stream = DATA / "monitoring-dataset.txt"  # (docs/mtl.md shows it)
    grouped = stream.read_text().split()
    assert grouped == [
        f for pred in ("Signal", "Monit", "Connect") for f in reversed(lines) if f.startswith(pred)
    ]
    horizon = (case / "horizon.txt").read_text().strip()
    code, out, err = _mtl(case / "program.txt", stream, "--horizon", horizon)
    assert (code, err) == (0, "")
    assert sorted(out.split()) == (case / "expected.txt").read_text().split()


def test_shortstop_points_on_a_shuffled_dataset(tmp_path: Path) -> None:
    """docs/mtl.md's --points example (tests/golden/mtl/shortstop-hand, by hand in its README) on the
    stream's facts last to first."""
    lines = (GOLDEN / "shortstop-hand" / "stream.txt").read_text().split()
    stream = tmp_path / "reversed.txt"
    stream.write_text("".join(f + "\n" for f in reversed(lines)))
    options = ["--output-predicates", "ShortStop", "--points", "2:4", "--format", "jsonl"]
    code, out, err = _mtl(DATA / "short_stop.txt", stream, *options)
    assert (code, err) == (0, "")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"time": 2, "atoms": []},
        {"time": 3, "atoms": ["ShortStop(veh1)", "ShortStop(veh2)"]},
        {"time": 4, "atoms": []},
    ]


def test_malformed_lines_of_a_dataset_keep_their_line_numbers(tmp_path: Path) -> None:
    program, stream = _files(tmp_path, "A(X):-B(X)", "B(a)@3\noops\nB(b)@1\nB(c)@[2\n")
    code, out, err = _mtl(program, stream)
    assert (code, out) == (0, "A(b)@[1,1]\nA(a)@[3,3]\n")
    assert err.splitlines() == [
        f"{stream}:2: not a fact (write P(a,b)@[1,3) or P(a)@2): oops",
        f"{stream}:4: bad interval '[2' (write [1,3), (0.5,inf) or a time point 2): B(c)@[2",
        f"{stream}: 2 malformed line(s) skipped, 0 late fact(s) dropped",
    ]


# ------------------------------------------------------------------ live input keeps the streaming policy
def test_late_facts_on_stdin_are_reported_with_their_lines(tmp_path: Path) -> None:
    """A pipe is a stream in time order: a fact starting before one already read is dropped and reported
    by its line, as rsp run reports a late element; the output is that of the facts kept."""
    program, _ = _files(tmp_path, "A(X):-B(X)", "")
    text = "B(a)@2\nB(c)@3\nB(b)@1\noops\nB(d)@[2.5,4)\n<http://s> <http://p> <http://o> . # 1/2\nB(e)@3\n"
    code, out, err = _mtl(program, "-", stdin=text)
    assert (code, out) == (0, "A(a)@[2,2]\nA(c)@[3,3]\nA(e)@[3,3]\n")
    assert err.splitlines() == [
        "<stdin>:3: late fact B(b)@[1,1] starting at 1: the stream had reached 3, dropped",
        "<stdin>:4: not a fact (write P(a,b)@[1,3) or P(a)@2): oops",
        "<stdin>:5: late fact B(d)@[2.5,4) starting at 2.5: the stream had reached 3, dropped",
        "<stdin>:6: late fact <http://p>(<http://s>,<http://o>)@[0.5,0.5] starting at 0.5: the stream had "
        "reached 3, dropped",
        "<stdin>: 1 malformed line(s) skipped, 3 late fact(s) dropped",
    ]
    code, out, err = _mtl(program, "-", "--quiet", stdin=text)
    assert (code, err) == (0, "") and out == "A(a)@[2,2]\nA(c)@[3,3]\nA(e)@[3,3]\n"


def test_late_fail_on_stdin_names_the_line(tmp_path: Path) -> None:
    program, _ = _files(tmp_path, "A(X):-B(X)", "")
    code, out, err = _mtl(program, "-", "--late", "fail", stdin="B(a)@2\nB(c)@3\nB(b)@1\nB(e)@4\n")
    assert code == 2
    assert out == "A(a)@[2,2]\n"  # what was final before the late fact
    assert err.startswith("<stdin>:3: late fact B(b) starting at 1: the stream had reached 3")


def test_a_pipe_to_the_rsp_command(tmp_path: Path) -> None:
    """The same through a real process reading its standard input."""
    program, _ = _files(tmp_path, "A(X):-Diamondminus[0,1]B(X)", "")
    proc = subprocess.run(
        [sys.executable, "-m", "rsp", "mtl", str(program), "--stream", "-"],
        input="B(a)@0\nB(b)@3\nB(c)@2\n", capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0
    assert proc.stdout == "A(a)@[0,1]\nA(b)@[3,3]\n"
    assert proc.stderr.splitlines() == [
        "<stdin>:3: late fact B(c)@[2,2] starting at 2: the stream had reached 3, dropped",
        "<stdin>: 0 malformed line(s) skipped, 1 late fact(s) dropped",
    ]


def test_late_facts_of_a_followed_file_are_reported_with_their_lines(tmp_path: Path) -> None:
    """--follow reads a regular file as a live stream (issue 45, item 8): its facts in the order they
    come, a late one dropped and reported with its line as on standard input, not read as a dataset."""
    import select
    import signal

    program, stream = _files(tmp_path, "A(X):-B(X)", "B(a)@2\nB(c)@3\nB(b)@1\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rsp", "mtl", str(program), "--stream", str(stream), "--follow"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    try:
        ready, _w, _x = select.select([proc.stderr], [], [], 60)
        assert ready, "rsp mtl --follow said nothing about the late fact within 60 s"
        late = proc.stderr.readline()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert late == f"{stream}:3: late fact B(b)@[1,1] starting at 1: the stream had reached 3, dropped\n"
    assert proc.returncode == 0 and out == "A(a)@[2,2]\nA(c)@[3,3]\n"
    assert err.splitlines()[-1] == f"{stream}: 0 malformed line(s) skipped, 1 late fact(s) dropped"


# ------------------------------------------------------------------ generated datasets
def _reference(program: str, lines: list[str], horizon) -> list[str]:
    model = least_model(parse_program(program), [parse_fact(f) for f in lines], horizon)
    return sorted(format_fact(*fact) for fact in model)


def _reference_points(program: str, lines: list[str], horizon, points: list) -> list[str]:
    model = least_model(parse_program(program), [parse_fact(f) for f in lines], horizon)

    def holds(t, iv) -> bool:
        lo, hi, lc, hc = iv
        return (lo < t or (lc and lo == t)) and (t < hi or (hc and t == hi))

    records = []
    for t in points:
        atoms = sorted(format_atom(p, a) for p, a, iv in model if holds(t, iv))
        shown = t.numerator if t.denominator == 1 else fmt_time(t)
        records.append(json.dumps({"time": shown, "atoms": atoms}))
    return records


def test_saved_shuffled_datasets(tmp_path: Path) -> None:
    """Cases make fuzz saved from the test below (a shuffled.txt beside the golden case's sorted stream):
    rsp mtl on the shuffled file gives the expected model."""
    for case in sorted(p for p in GOLDEN.iterdir() if (p / "shuffled.txt").is_file()):
        horizon = (case / "horizon.txt").read_text().strip()
        code, out, err = _mtl(case / "program.txt", case / "shuffled.txt", "--horizon", horizon)
        assert (code, err) == (0, ""), case.name
        assert sorted(out.split()) == (case / "expected.txt").read_text().split(), case.name


HORIZON = 5
POINTS = [Fraction(k, 4) for k in range(0, 4 * HORIZON + 1)]


@pytest.mark.generated
@settings(max_examples=examples(80), deadline=None)
@given(programs(), facts(), st.sampled_from(["intervals", "jsonl", "points"]), st.data())
def test_generated_datasets_in_any_order(program: str, drawn: list, shown: str, data) -> None:
    """Random programs over random facts written in a shuffled order: rsp mtl gives the output of the
    same facts sorted by their left ends, and that output is the naive evaluator's least model."""
    shuffled = [f for _, f in data.draw(st.permutations(drawn))]
    in_order = [f for _, f in sorted(drawn, key=lambda f: f[0])]
    options = ["--horizon", str(HORIZON)]
    if shown == "jsonl":
        options += ["--format", "jsonl"]
    elif shown == "points":
        options += ["--format", "jsonl", "--points", f"0:{HORIZON}:0.25"]

    def files() -> dict[str, str]:
        return {
            "program.txt": program + "\n",
            "stream.txt": "\n".join(in_order) + "\n",
            "shuffled.txt": "\n".join(shuffled) + "\n",
            "horizon.txt": f"{HORIZON}\n",
            "expected.txt": "\n".join(_reference(program, in_order, HORIZON)) + "\n",
        }

    with saved_on_failure(GOLDEN, files), tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "p.txt").write_text(program + "\n", encoding="utf-8")
        (folder / "shuffled.txt").write_text("".join(f + "\n" for f in shuffled), encoding="utf-8")
        (folder / "sorted.txt").write_text("".join(f + "\n" for f in in_order), encoding="utf-8")
        got = _mtl(folder / "p.txt", folder / "shuffled.txt", *options)
        assert got == _mtl(folder / "p.txt", folder / "sorted.txt", *options)
        code, out, err = got
        assert (code, err) == (0, "")
        if shown == "intervals":
            assert sorted(out.splitlines()) == _reference(program, in_order, HORIZON)
        elif shown == "points":
            assert out.splitlines() == _reference_points(program, in_order, HORIZON, POINTS)
