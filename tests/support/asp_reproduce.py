"""Run answer-stream cases in this process and print what every mode gives (tests/asp/test_asp_reproducible.py
starts it under several ``PYTHONHASHSEED`` values and compares the outputs byte for byte).

Input (stdin): a JSON list of ``[program text, stream lines]``. Output (stdout): a JSON list, per case,
of ``{mode/models: rows}``, a refusal as ``"refused: <message>"``. ``--warm`` first parses and runs
an unrelated program, so that the objects of the run under test land elsewhere in memory."""

from __future__ import annotations

import json
import sys

from rsp.asp import answer_streams, parse
from rsp.errors import RspError
from rsp.io.atoms import read_atom_lines


def run(program_text: str, lines: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for mode in ("tms", "clingo"):
        for models in (1, 0):
            try:
                out[f"{mode}/{models}"] = list(
                    answer_streams(parse(program_text), read_atom_lines(lines), mode=mode, models=models)
                )
            except RspError as error:
                out[f"{mode}/{models}"] = f"refused: {error}"
    return out


def main() -> None:
    if "--warm" in sys.argv:
        run("w(X) :- [3] <> v(X), not u(X).\nu(X) :- [3] <> v(X), not w(X).\n", ["0 v(k)", "1 v(l)", "2"])
    cases = json.load(sys.stdin)
    json.dump([run(text, lines) for text, lines in cases], sys.stdout)


if __name__ == "__main__":
    main()
