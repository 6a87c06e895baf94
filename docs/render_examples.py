"""Keep the examples in the docs true: run every example command and write (or check) its output.

An example is a block in a page (``docs/*.md``, ``README.md``, ``queries/README.md``,
``examples/*/README.md``) between two markers::

    <!-- example: rsp run docs/examples/select.rq --stream docs/examples/sensors.nt --format csv -->
    ... generated: the query or program file, the command and what rsp prints ...
    <!-- end example -->

The generated part shows the query (or ``.lars`` program) named on the command line, the command, and
its standard output (with standard error and the exit status when the command fails). Commands run from
the repository root as ``python -m rsp …`` with ``PYTHONHASHSEED=0``.

    python docs/render_examples.py            # rewrite the example blocks of every page
    python docs/render_examples.py --check    # exit 1 and show the first difference if a block is stale
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARK = re.compile(r"<!-- example: (?P<command>.+?) -->\n(?P<body>.*?)<!-- end example -->", re.S)
FILE = re.compile(r"<!-- file: (?P<path>\S+) -->\n(?P<body>.*?)<!-- end file -->", re.S)
LANGUAGE = {".rq": "sparql", ".lars": "prolog"}


def run_example(command: str) -> str:
    """The text rsp prints for ``command`` (a line starting with ``rsp``), run from the repository root."""
    words = shlex.split(command)
    if not words or words[0] != "rsp":
        raise ValueError(f"an example command starts with 'rsp': {command!r}")
    env = dict(os.environ, PYTHONHASHSEED="0", RSP_CACHE_DIR="")
    done = subprocess.run(
        [sys.executable, "-m", "rsp", *words[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode == 0:
        return done.stdout
    return done.stdout + done.stderr + f"(exit status {done.returncode})\n"


def render(command: str) -> str:
    """The generated body of one example block."""
    parts = []
    for word in shlex.split(command):
        suffix = Path(word).suffix
        if suffix in LANGUAGE and (ROOT / word).is_file():
            parts.append(
                f"```{LANGUAGE[suffix]}\n{(ROOT / word).read_text(encoding='utf-8').rstrip()}\n```\n"
            )
    output = run_example(command)
    parts.append(f"```console\n$ {command}\n{output.rstrip()}\n```\n")
    return "\n" + "\n".join(parts)


def examples(text: str) -> list[tuple[str, str]]:
    """(command, current body) of every example block of a page."""
    return [(m["command"], m["body"]) for m in MARK.finditer(text)]


def rendered(text: str) -> str:
    """The page with every example block (and every copy of a file, ``<!-- file: PATH -->``) regenerated."""
    text = MARK.sub(
        lambda m: f"<!-- example: {m['command']} -->\n{render(m['command'])}<!-- end example -->", text
    )
    return FILE.sub(lambda m: f"<!-- file: {m['path']} -->\n{render_file(m['path'])}<!-- end file -->", text)


def render_file(path: str) -> str:
    """A copy of a file of the repository, as a code block."""
    language = LANGUAGE.get(Path(path).suffix, "")
    return f"```{language}\n{(ROOT / path).read_text(encoding='utf-8').rstrip()}\n```\n"


def pages() -> list[Path]:
    """The pages with example or file blocks: docs/*.md, the README and the READMEs of queries/ and
    examples/."""
    candidates = [*DOCS.glob("*.md"), ROOT / "README.md", *ROOT.glob("queries/README.md")]
    candidates += ROOT.glob("examples/**/README.md")
    return sorted(
        p
        for p in candidates
        if MARK.search(p.read_text(encoding="utf-8")) or FILE.search(p.read_text(encoding="utf-8"))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a block is stale")
    args = parser.parse_args(argv)
    stale = 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = rendered(text)
        if new == text:
            continue
        stale += 1
        if args.check:
            diff = difflib.unified_diff(
                text.splitlines(), new.splitlines(), str(page), "rsp now", lineterm=""
            )
            print("\n".join(list(diff)[:40]))
        else:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
