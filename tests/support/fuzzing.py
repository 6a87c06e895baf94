"""Support for generated differential tests: how many cases to draw, and the record of a disagreement.

A generated test checks each case inside :func:`saved_on_failure`. Under ``make fuzz`` (the driver
``tests/fuzz.py`` sets ``RSP_FUZZ_DIR``), a case that fails is written to a pending folder named after
the test; Hypothesis runs the shrunk (minimal) failing case last, so the folder ends up holding it. The
driver then moves it, as a ready-to-add golden case, into the golden folder the test named. Outside
``make fuzz`` nothing is written.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

EXAMPLES = int(os.environ.get("RSP_EXAMPLES", "300"))
"""Generated cases per differential test (``make fuzz`` raises it)."""


def examples(default: int) -> int:
    """``default`` cases in ``make test``; scaled up with ``RSP_EXAMPLES`` (relative to 300) when fuzzing."""
    return max(1, default * EXAMPLES // 300)


def saved_cases(golden_root: Path, test: str) -> dict[str, dict[str, str]]:
    """The cases ``make fuzz`` saved from ``test`` under ``golden_root`` (``fuzz-*`` folders whose SOURCE
    names the test), for the test's replay: case name -> file name -> text (SOURCE left out)."""
    if not golden_root.is_dir():
        return {}
    found = {}
    for case in sorted(golden_root.iterdir()):
        source = case / "SOURCE"
        if source.is_file() and test in source.read_text(encoding="utf-8"):
            found[case.name] = {
                f.name: f.read_text(encoding="utf-8") for f in case.iterdir() if f.name != "SOURCE"
            }
    return found


def batches_text(batches: list[list[str]], workers: list[int] | None = None, mark: str = "#") -> str:
    """Micro-batches of stream lines as one saved file: a ``<mark> workers: …`` line when ``workers``
    are given (the worker of each step: one more than micro-batches, the last step's), then each
    micro-batch after a ``<mark> micro-batch i`` line (``(worker w)`` added when known)."""
    head = f"{mark} workers: " + " ".join(map(str, workers)) + "\n" if workers is not None else ""
    label = [f" (worker {w})" for w in workers or []]
    return head + "".join(
        f"{mark} micro-batch {i}{label[i] if i < len(label) else ''}\n"
        + "".join(line + "\n" for line in batch)
        for i, batch in enumerate(batches)
    )


def timed_triple_line(element: tuple[int, str, str, str]) -> str:
    """A stream element ``(time, s, p, o)`` as an N-Triples line with its time comment."""
    t, s, p, o = element
    return f"{s} {p} {o} . # {t}"


def read_timed_triple_line(line: str) -> tuple[int, str, str, str]:
    """:func:`timed_triple_line` read back (terms without spaces, as the generated ones are)."""
    s, p, o, _dot, _hash, t = line.split()
    return int(t), s, p, o


def read_batches_text(text: str, mark: str = "#") -> tuple[list[list[str]], list[int]]:
    """:func:`batches_text` read back: the micro-batches' lines and the workers (none: ``[]``)."""
    batches: list[list[str]] = []
    workers: list[int] = []
    for line in text.splitlines():
        if line.startswith(f"{mark} workers:"):
            workers = [int(w) for w in line.split(":", 1)[1].split()]
        elif line.startswith(f"{mark} micro-batch"):
            batches.append([])
        elif line.strip():
            batches[-1].append(line)
    return batches, workers


def _pending_dir() -> Path | None:
    root = os.environ.get("RSP_FUZZ_DIR")
    if not root:
        return None
    test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").rsplit(" ", 1)[0]
    return Path(root) / re.sub(r"[^A-Za-z0-9_.-]+", "_", test)


@contextmanager
def saved_on_failure(golden_root: Path, files: Callable[[], dict[str, str]]) -> Iterator[None]:
    """Run the check in the ``with`` body; under ``make fuzz``, a failure writes ``files()`` (file
    name -> text: a golden case whose expected output comes from the reference) to the pending folder,
    to become a golden case under ``golden_root``."""
    try:
        yield
    except Exception as error:
        pending = _pending_dir()
        if pending is not None:
            if pending.exists():
                for old in pending.iterdir():
                    old.unlink()
            pending.mkdir(parents=True, exist_ok=True)
            try:
                contents = files()
            except Exception as reference_error:  # the reference itself failed: keep the inputs at least
                contents = {"reference-error.txt": "".join(traceback.format_exception(reference_error))}
            for name, text in contents.items():
                (pending / name).write_text(text, encoding="utf-8")
            (pending / ".golden-root").write_text(str(golden_root), encoding="utf-8")
            summary = "".join(traceback.format_exception_only(type(error), error))
            (pending / ".error").write_text(summary, encoding="utf-8")
        raise
